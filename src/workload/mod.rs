//! Workloads: schemas, data generation and loading, and transaction bodies.
//!
//! A workload never times anything and never picks the concurrency. It hands
//! the engine two things:
//! - the list of SQL statements to prepare on every connection
//!   ([`Workload::statements`]), and
//! - one [`ClientScript`] per client: a small state machine that, for each
//!   transaction, draws fresh random values and yields its operations one at
//!   a time ([`Op`]). Because the script yields operations instead of calling
//!   the driver, the same workload runs under a blocking engine or an
//!   event-driven one, and the engine times each operation itself.
//!
//! Families live in their own folders: [`sysbench`] (sysbench 1.0.20's OLTP
//! scripts), [`smack`] (Super Smack's, with seed 000's built-ins),
//! [`dbt1`] (DBT-1's online bookstore, with emulated users) and [`tpcc`]
//! (TPC-C, with terminals that key and think), [`tpch`] (TPC-H's power
//! and throughput tests), [`chbench`] (CH-benCHmark: TPC-C's terminals
//! beside analytical streams) and [`ycsb`] (YCSB's core workloads A–F). They
//! load their data with the shared parallel [`loader`]. The [`registry`]
//! lists every built-in workload with its options.

pub mod chbench;
pub mod dbt1;
pub mod loader;
pub mod options;
pub mod slots;
pub mod smack;
pub mod sysbench;
pub mod tpcc;
pub mod tpch;
pub mod unit;
pub mod ycsb;

use std::borrow::Cow;

use crate::driver::{Connection, DbResult, Dialect, Fetch, StmtId, Value};
use crate::rand::{RandConfig, Rng};
use crate::util::progress::Progress;

pub use options::{OptionSpec, OptionValues};

/// One statement to prepare, with the type it is reported under
/// (e.g. `point_select`); several statements (one per table) may share a type.
#[derive(Debug, Clone)]
pub struct StatementDef {
    pub kind: Cow<'static, str>,
    pub sql: String,
}

/// One operation of a transaction, in order.
#[derive(Debug)]
pub enum Op<'a> {
    /// Start a transaction; `writes` when it is going to change rows (SQLite
    /// then takes the write lock at once: `BEGIN IMMEDIATE`).
    Begin {
        writes: bool,
    },
    Commit,
    /// End the transaction undoing it, as the workload means to (TPC-C's
    /// New-Order on an unused item): the transaction completed all the
    /// same, and its time counts with the commits'.
    Rollback,
    Exec(StmtId, &'a [Value]),
    /// Execute once for each of `.2` rows of parameters laid one after the
    /// other, as one command where the driver can (see
    /// [`Connection::execute_batch`](crate::driver::Connection::execute_batch)):
    /// TPC-C's order lines and stock updates.
    Batch(StmtId, &'a [Value], usize),
    /// Execute, keeping the values the [`Fetch`] asks for: the script
    /// reads them at its next [`ClientScript::next`] (for workloads whose
    /// next step depends on a result).
    Fetch(StmtId, &'a [Value], &'a mut Fetch),
}

/// A transaction type of a workload with several (DBT-1's 14
/// interactions), as the report lists them.
#[derive(Debug, Clone, PartialEq)]
pub struct TxnType {
    pub name: &'static str,
    /// The share of all transactions the workload's design gives it (e.g.
    /// a mix's stationary distribution), in percent.
    pub expected_pct: Option<f64>,
    /// A response-time limit its 90th percentile should meet (TPC-W's).
    pub p90_limit: Option<std::time::Duration>,
    /// False for a type that sends no statement (counted all the same).
    pub queries: bool,
}

/// One client's transaction generator. The engine calls [`start`] before each
/// transaction (and again for a retry, so a retried transaction draws fresh
/// values, as an application would) and then [`next`] until it returns None.
///
/// [`start`]: ClientScript::start
/// [`next`]: ClientScript::next
pub trait ClientScript: Send {
    fn start(&mut self);
    fn next(&mut self) -> Option<Op<'_>>;

    /// The type of the transaction `start` began: an index into
    /// [`Workload::transaction_types`] (None for a workload without types).
    fn kind(&self) -> Option<u16> {
        None
    }

    /// Whose transaction comes next: the queued user's number, or in a
    /// closed loop the client's own. Called before `start`, once per
    /// transaction (not per retry), so a workload that keeps state per
    /// user can take it up.
    fn user(&mut self, _user: u32) {}

    /// The transaction of the last `user` call ended: `done` when it
    /// completed, false when it failed for good. A workload that keeps
    /// state per user hands it back here, before the user can be queued
    /// again (possibly on another connection).
    fn end(&mut self, _done: bool) {}

    /// The pause before this user's next transaction, when the workload
    /// chooses it: asked once after each `end`. TPC-C's terminals choose
    /// their next transaction type at `end` and pause for the think time
    /// of the one done and the keying time of the next. None (every other
    /// workload) leaves the pause to the run's `--think-time`.
    fn pause(&mut self) -> Option<std::time::Duration> {
        None
    }

    /// The [`Fetch`] of the [`Op::Fetch`] this script yielded last. An
    /// engine that cannot hold the operation while it waits for the
    /// answer (an event loop serving many connections on one thread) hands
    /// the kept values back through it, before the next [`next`]. A script
    /// that yields `Op::Fetch` returns its buffer; None (the default): it
    /// never fetches.
    ///
    /// [`next`]: ClientScript::next
    fn fetch_buffer(&mut self) -> Option<&mut Fetch> {
        None
    }

    /// Did the transaction that just ended leave work to run deferred
    /// (TPC-C's Delivery queued by `--delivery deferred`)? Asked once
    /// after `pause`, and only after a completed transaction. When true,
    /// the engine hands the user back to the pacing at once (its pause
    /// runs meanwhile) and runs the deferred work next on the same
    /// connection, as a transaction of its own — `start`, `next`, `kind`,
    /// `end` as any, with no `user` call — timed from the moment the work
    /// was queued. False (every other workload) costs one call.
    fn deferred(&mut self) -> bool {
        false
    }

    /// This client's own count of transactions when the run counts
    /// rounds (`--rounds`, or a workload's default): TPC-H's streams
    /// differ (22 queries, the refresh stream two per query stream).
    /// None (every other workload): the run's count.
    fn rounds(&self) -> Option<u64> {
        None
    }
}

/// One consistency condition of a workload's data, as checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    pub name: String,
    pub holds: bool,
    /// How many warehouses, districts or rows break it.
    pub count: u64,
    /// The first that break it, with their numbers.
    pub failures: Vec<String>,
}

impl Condition {
    /// The condition as the run record keeps it.
    pub fn to_record(&self) -> crate::record::ConditionResult {
        let mut detail = self.failures.clone();
        if self.count > self.failures.len() as u64 {
            detail.push(format!(
                "… and {} more",
                self.count - self.failures.len() as u64
            ));
        }
        crate::record::ConditionResult {
            name: self.name.clone(),
            holds: self.holds,
            broken: self.count,
            detail,
        }
    }
}

/// Opens a new connection to the workload's target.
pub type Connector<'a> = &'a (dyn Fn() -> DbResult<Box<dyn Connection>> + Sync);

/// A workload instance, resolved from its options for one dialect.
pub trait Workload: Send + Sync {
    fn name(&self) -> &'static str;

    /// Statements to prepare on every client connection.
    fn statements(&self) -> &[StatementDef];

    /// Creates and loads the schema. `threads` connections may be used in
    /// parallel (across tables, like sysbench). Fails with a clear message if
    /// the data is already there.
    fn prepare(
        &self,
        connect: Connector<'_>,
        threads: usize,
        progress: &dyn Progress,
    ) -> anyhow::Result<()>;

    /// A run is about to start on the data as they are now: read what its
    /// clients need from them, on one of the run's connections, before the
    /// clients are released (YCSB: the record after the last one inserted,
    /// where the run's inserts go on). `shard` is this process's part of a
    /// run on several (index, count). Called once per run.
    fn ready(
        &self,
        _conn: &mut dyn Connection,
        _shard: Option<(usize, usize)>,
    ) -> anyhow::Result<()> {
        Ok(())
    }

    /// Drops everything `prepare` created.
    fn cleanup(&self, conn: &mut dyn Connection) -> anyhow::Result<()>;

    /// Checks that `prepare` was run; the error names what is missing and the
    /// command that fixes it.
    fn check_prepared(&self, conn: &mut dyn Connection) -> anyhow::Result<()>;

    /// The transaction generator for client number `id` of `clients` in
    /// the run (some workloads partition their keys per client, as sysbench).
    fn client(&self, id: usize, clients: usize, rng: Rng) -> Box<dyn ClientScript>;

    /// Effective option values, for the result record.
    fn options(&self) -> &OptionValues;

    /// Transactions per client when a run gives no `--time`, `--events` or
    /// `--rounds` (a study workload none of `time`, `events`, `rounds`):
    /// Super Smack's workloads have a fixed count per client. None (the
    /// default) means the usual default measured time.
    fn default_rounds(&self) -> Option<u64> {
        None
    }

    /// Error kinds that roll back and re-run a transaction besides
    /// deadlocks, lock wait timeouts and serialization failures (which every
    /// workload retries). sysbench on PostgreSQL also retries unique
    /// violations: two clients deleting and re-inserting the same id race
    /// into one under READ COMMITTED.
    fn retry_also(&self) -> &'static [crate::driver::ErrorKind] {
        &[]
    }

    /// Refuses a run of `clients` connections the workload cannot give a
    /// role to each (CH-benCHmark: more analytical streams than
    /// connections); the message names the fix.
    fn check_clients(&self, _clients: usize) -> Result<(), String> {
        Ok(())
    }

    /// The longest a client's statement may run before the server (or
    /// the driver) ends it as a `timeout` error, which fails its
    /// transaction and lets the run go on (TPC-H's `--query-timeout`):
    /// set on every client connection, reconnections included. None: no
    /// limit (the server's own settings stand).
    fn statement_timeout(&self) -> Option<std::time::Duration> {
        None
    }

    /// The workload's transaction types, if it has several: the run then
    /// counts and times each apart (see [`ClientScript::kind`]).
    fn transaction_types(&self) -> Vec<TxnType> {
        Vec::new()
    }

    /// A run is about to serve `users` users: make room for what the
    /// workload keeps per user now, before the clients are released, so
    /// the measured window does not pay for it (DBT-1's sessions).
    fn users(&self, _users: usize) {}

    /// The memory a user may take in the workload once it has run (its
    /// session), bytes, and what it is called: a run's users are checked
    /// against the memory available before it starts.
    fn bytes_per_user(&self) -> (u64, &'static str) {
        (0, "")
    }

    /// The think time a run of this workload uses when none is given
    /// (DBT-1's users think between interactions).
    fn default_think_time(&self) -> Option<crate::rand::pacing::ThinkTime> {
        None
    }

    /// The users a run of this workload has when none are given (TPC-C:
    /// ten terminals per warehouse).
    fn default_users(&self) -> Option<usize> {
        None
    }

    /// Counts of the workload's own work to read from the database at the
    /// measured window's start and end, on a connection apart from the
    /// clients' (TPC-C: `sum(d_next_o_id)`, the New-Orders the database
    /// committed): (name, SQL returning one number). Their differences
    /// stand beside the client's counts in the record.
    fn window_counts(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// The plans the server chose for the workload's statements, as
    /// (name, plan) pairs, read after a run to keep with it (TPC-H's
    /// queries with their validation values); empty for a workload whose
    /// plans are not worth keeping (it connects only when it reads them).
    fn plans(&self, _connect: Connector<'_>) -> anyhow::Result<Vec<(String, String)>> {
        Ok(Vec::new())
    }

    /// Checks the data's consistency conditions (`dbsweep check`); None
    /// for a workload that defines none.
    fn consistency(&self, _conn: &mut dyn Connection) -> anyhow::Result<Option<Vec<Condition>>> {
        Ok(None)
    }
}

/// Builds a workload from its name, its resolved options, the target's
/// dialect and the run's random configuration.
pub type Builder =
    fn(&'static str, &OptionValues, Dialect, RandConfig) -> anyhow::Result<Box<dyn Workload>>;

/// A built-in workload: what `dbsweep workloads` lists and how to build one.
#[derive(Clone)]
pub struct WorkloadInfo {
    pub name: &'static str,
    pub description: &'static str,
    /// Names of the options this workload takes (see [`options::ALL`]).
    pub options: &'static [&'static str],
    /// Builds the workload; it is given its own name, so that one builder
    /// can serve a family's workloads from a table.
    pub build: Builder,
}

/// Every built-in workload: each family's, in family order.
pub fn registry() -> &'static [WorkloadInfo] {
    static ALL: std::sync::OnceLock<Vec<WorkloadInfo>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        [
            sysbench::WORKLOADS,
            smack::builtin::WORKLOADS,
            dbt1::WORKLOADS,
            tpcc::WORKLOADS,
            tpch::WORKLOADS,
            chbench::WORKLOADS,
            ycsb::WORKLOADS,
        ]
        .into_iter()
        .flatten()
        .map(WorkloadInfo::clone)
        .collect()
    })
}

pub fn find(name: &str) -> Option<&'static WorkloadInfo> {
    registry().iter().find(|w| w.name == name)
}

/// Builds workload `name` from user-given option values (names without the
/// leading dashes). Unknown workloads and options that the workload does not
/// take are usage errors naming the fix.
pub fn build(
    name: &str,
    given: &[(String, String)],
    dialect: Dialect,
    rand: RandConfig,
) -> anyhow::Result<Box<dyn Workload>> {
    let info = find(name).ok_or_else(|| {
        let names: Vec<_> = registry().iter().map(|w| w.name).collect();
        crate::UsageError(format!(
            "unknown workload '{name}': built-in workloads are {} (see `dbsweep workloads`)",
            names.join(", ")
        ))
    })?;
    let values = OptionValues::resolve(info, given)?;
    (info.build)(info.name, &values, dialect, rand)
}
