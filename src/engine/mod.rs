//! The run engine: N clients, each on its own connection, driving a
//! workload's transactions until a stop condition, with warmup, retries,
//! per-interval reporting, a hard deadline and client CPU accounting.
//!
//! The engine knows neither the workload nor the database: it asks the
//! workload for [`ClientScript`]s and executes their operations on
//! [`Connection`]s, timing each one with a monotonic clock (see docs/architecture.md,
//! "Contracts that keep the numbers honest").
//!
//! Timeline of one run (`t0` = all clients connected and released):
//! ```text
//! t0 ── warmup ──► measure_start ── time ──► end ── grace ──► deadline
//! ```
//! A transaction counts in the measured window if it *started* at or after
//! `measure_start`. After `end` no client starts a transaction; in-flight ones
//! may finish until the deadline, after which hung clients are interrupted,
//! their transactions counted as abandoned, and the run reported as it stands.
//!
//! Here are the types the parts share; `run.rs` drives one run (`Run`: its
//! set-up, release, timekeeping and result), `client.rs` decides for one
//! client (when its transactions start, what is recorded, what an error
//! leads to), `threaded.rs` runs each client on a thread of its own and
//! `transaction.rs` one transaction of it,
//! `evloop.rs` many clients on a few event-loop threads (`evclient.rs` one
//! of them, the same decisions as a state machine that never waits), `kinds.rs` names the
//! statement kinds their latencies are kept under, `point.rs` runs a
//! resolved point through them into its record, and `live.rs` is what a
//! live feed is told of a point as it runs.

mod client;
mod connect;
pub mod derive;
mod evclient;
mod evloop;
mod kinds;
pub mod live;
pub mod merge;
pub mod pacing;
pub mod point;
pub mod recorder;
pub mod recover;
pub mod release;
mod result;
mod run;
pub mod shard;
pub mod spec;
mod threaded;
mod transaction;
pub mod users;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::driver::DbResult;
use crate::driver::{Connection, ErrorSet, Interrupter};
use crate::metrics::sampler::Sampler;
use crate::workload::Workload;

/// Opens a new connection to the run's target. Owned and shareable, because
/// clients call it again to re-establish a lost connection.
pub type Connect = Arc<dyn Fn() -> DbResult<Box<dyn Connection>> + Send + Sync>;

use self::kinds::Kinds;
use self::recorder::Recorder;

/// How a run is driven. Built by the CLI (or a study runner) from options;
/// serialisable, because a distributed run's coordinator (`nodes`) sends it to its
/// workers.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RunConfig {
    /// Number of clients, each with its own connection.
    pub threads: usize,
    /// Length of the measured window; None = no time limit.
    pub time: Option<Duration>,
    /// Total transactions to run in the measured window, across clients.
    pub events: Option<u64>,
    /// Transactions per client in the measured window (Super Smack's model).
    pub rounds: Option<u64>,
    /// Time before the measured window whose samples are discarded.
    pub warmup: Duration,
    /// Emit one interval sample this often.
    pub report_interval: Option<Duration>,
    /// The latency percentile each interval sample carries as its headline.
    pub interval_percentile: f64,
    /// Retries of one transaction after retryable errors; None = unlimited.
    pub max_retries: Option<u64>,
    /// Non-retryable error kinds that fail the transaction instead of the run.
    pub ignore_errors: ErrorSet,
    /// How long in-flight transactions may take to finish after the end
    /// (or after an interrupt) before they are abandoned.
    pub grace: Duration,
    /// Seed of the run; client `i` draws from `Rng::for_client(seed, i)`.
    pub seed: u64,
    /// Close and re-open each client's connection every N transactions
    /// (sysbench's `--reconnect`).
    pub reconnect_every: Option<u64>,
    /// A hard limit on the whole run from its start (connecting, warmup and
    /// measured window): at it, no client starts another transaction, and
    /// what is still in flight after `grace` is abandoned (a study's
    /// `point_timeout`). None: no limit beyond the stop condition's.
    pub timeout: Option<Duration>,
    /// Closed loop (the default), open loop at a rate, or users on a pool
    /// of connections; think time and the latency limit.
    pub pacing: Pacing,
    /// Run only this shard of the clients, users, events and rate
    /// (`--shard I/N`); None: the whole run.
    pub shard: Option<Shard>,
    /// Run the clients on this many event-loop threads (`--client-threads`,
    /// pgbench's `-j`), their connections non-blocking; None: a thread per
    /// client. Network drivers only.
    #[serde(default)]
    pub client_threads: Option<usize>,
    /// A transaction's statements sent in groups of up to this many on
    /// each connection (`--pipeline`), each group one pipeline, a group
    /// ending early at a statement whose rows the script reads; None: one
    /// at a time.
    /// Clients on event loops, on connections that pipeline (PostgreSQL).
    #[serde(default)]
    pub pipeline: Option<usize>,
    /// Release the clients, once connected, at the instant this hook
    /// returns (a coordinated start, `release.rs`); None: at once.
    #[serde(skip)]
    pub release: Option<release::Release>,
}

/// A run's event-loop threads: as many as asked (`--client-threads`), one
/// per CPU when only a pipeline asks for loops, and one per connection at
/// most; None: a thread per connection.
pub fn event_loops(asked: Option<usize>, pipeline: Option<usize>, conns: usize) -> Option<usize> {
    let cpus = || std::thread::available_parallelism().map_or(1, |n| n.get());
    (asked.or_else(|| pipeline.map(|_| cpus()))).map(|n| n.min(conns.max(1)))
}

pub use crate::record::StopReason;
pub use pacing::Pacing;
pub use result::{ConnectStats, IntervalSample, PacedSample, RunResult, TypeResult};
use run::Run;
pub use shard::Shard;

/// One client's state and counters, as the timekeeper reads them.
#[repr(align(128))]
struct Slot {
    /// IDLE, IN_TXN, IN_ARRIVAL, DONE or RECONNECTING.
    state: AtomicU8,
    /// Transactions in the measured window.
    txns: AtomicU64,
    /// Nanoseconds spent in them.
    busy_ns: AtomicU64,
}

const IDLE: u8 = 0;
const IN_TXN: u8 = 1;
const DONE: u8 = 2;
/// Re-establishing a lost connection: not a transaction, never abandoned.
const RECONNECTING: u8 = 3;
/// In a transaction that is one of the measured window's arrivals (a
/// queued run): abandoned at the deadline, it is still offered load.
const IN_ARRIVAL: u8 = 4;

/// Points in time shared by the clients, fixed when they are released.
struct Timeline {
    /// When the clients were released.
    t0: Instant,
    measure_start: Instant,
    end: Option<Instant>,
}

/// The clients that have finished, and when their work ended: the run's
/// end is read from what the clients did, not from when the timekeeper
/// woke to see it (late on a busy machine).
#[derive(Default, Clone, Copy)]
struct Done {
    count: usize,
    /// The latest end of a finished client's last transaction.
    last: Option<Instant>,
    /// A client stopped because the run's time was up (not its rounds,
    /// events, a stop or an error).
    by_end: bool,
}

/// State shared between the clients and the timekeeper. What
/// every client touches each transaction (the recorder, its slot, the
/// event count, the lifecycle's `stop`) is held here, not behind a pointer.
struct Shared {
    recorder: Recorder,
    timeline: OnceLock<Timeline>,
    /// Per client: what it is doing and what it measured, each on its own
    /// cache line (clients on different cores store to these every
    /// transaction).
    slots: Vec<Slot>,
    /// Events taken so far by measured transactions (`rules.events` caps
    /// them).
    tickets: AtomicU64,
    lifecycle: Lifecycle,
    rules: Rules,
    kinds: Kinds,
    connections: Connections,
    /// Clients per instance: client `i` belongs to instance `i / per_instance`.
    per_instance: usize,
    /// The run-wide number of this process's client 0 (a shard's first).
    first_client: usize,
    pacing: Pacing,
    /// The queue of a queued run, from the clients' release on.
    dispatch: OnceLock<pacing::Dispatch>,
    /// With a rate and a latency limit: skip arrivals this far behind.
    skip_after: Option<Duration>,
    seed: u64,
}

/// Where the run is in its life: what the timekeeper tells the clients
/// (stop, abandon, close) and what they tell it (a fatal error, done).
struct Lifecycle {
    /// Set when clients must not start another transaction.
    stop: AtomicBool,
    /// Set at the deadline: whatever is in flight is abandoned.
    abandon: AtomicBool,
    /// The first error that stopped the run.
    fatal: Mutex<Option<String>>,
    done: Mutex<Done>,
    done_cv: Condvar,
    /// Set (under `done`) once the run's last reading of the machine and
    /// the server is taken: until then finished clients keep their
    /// connections, so the server's sessions do not end inside the window.
    closing: AtomicBool,
}

impl Lifecycle {
    /// The run stops for `why` (kept if it is the first reason given).
    fn fail(&self, why: impl FnOnce() -> String) {
        let mut f = self.fatal.lock().unwrap_or_else(|p| p.into_inner());
        if f.is_none() {
            *f = Some(why());
        }
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    fn new() -> Lifecycle {
        Lifecycle {
            stop: AtomicBool::new(false),
            abandon: AtomicBool::new(false),
            fatal: Mutex::new(None),
            done: Mutex::new(Done::default()),
            done_cv: Condvar::new(),
            closing: AtomicBool::new(false),
        }
    }
}

/// What the run's configuration (and its workload) tell every client: how
/// much to run, which errors to retry or ignore, when to reconnect.
struct Rules {
    /// This process's share of the run's events.
    events: Option<u64>,
    rounds: Option<u64>,
    max_retries: Option<u64>,
    ignore: ErrorSet,
    /// Per instance: error kinds its workload retries besides the usual ones.
    retry_also: Vec<ErrorSet>,
    reconnect_every: Option<u64>,
    /// Statements of a transaction a client may have in flight at once
    /// (`--pipeline`; 1: one at a time).
    pipeline: usize,
}

impl Rules {
    fn new(cfg: &RunConfig, events: Option<u64>, instances: &[&dyn Workload]) -> Rules {
        // Error kinds each workload retries besides the usual ones.
        let retry_also = |w: &dyn Workload| {
            let mut set = ErrorSet::NONE;
            for &k in w.retry_also() {
                set.insert(k);
            }
            set
        };
        Rules {
            events,
            rounds: cfg.rounds,
            max_retries: cfg.max_retries,
            ignore: cfg.ignore_errors,
            retry_also: instances.iter().map(|w| retry_also(*w)).collect(),
            reconnect_every: cfg.reconnect_every,
            pipeline: cfg.pipeline.unwrap_or(1).max(1),
        }
    }
}

/// How a client's connection is opened again (and what is prepared on it,
/// per instance), and how the timekeeper interrupts it at the deadline.
struct Connections {
    connect: Connect,
    sql: Vec<Vec<String>>,
    /// Per client: how to interrupt its current connection.
    interrupters: Vec<Mutex<Option<Box<dyn Interrupter>>>>,
}

/// Runs `workload` on connections from `connect` as `cfg` says. `cancel` is
/// polled to stop early (Ctrl-C); `on_interval` receives each interval sample.
pub fn run(
    workload: &dyn Workload,
    connect: Connect,
    cfg: &RunConfig,
    cancel: &AtomicBool,
    on_interval: &mut dyn FnMut(&IntervalSample),
) -> anyhow::Result<RunResult> {
    run_instances(&[workload], connect, cfg, cancel, on_interval, None)
}

/// Runs several instances of a workload at once (each on its own tables, as
/// seed 001 ran 8 sysbench processes), `cfg.threads` clients each, measured
/// as one run: one timeline, merged counters and histograms. A `sampler`
/// is told when the clients are released, when the measured window
/// begins and when the run ends.
pub fn run_instances(
    instances: &[&dyn Workload],
    connect: Connect,
    cfg: &RunConfig,
    cancel: &AtomicBool,
    on_interval: &mut dyn FnMut(&IntervalSample),
    sampler: Option<&Sampler>,
) -> anyhow::Result<RunResult> {
    let mut run = Run::connect(instances, connect, cfg, sampler)?;
    let mut clock = run.release()?;
    let ended = run.keep_time(&mut clock, cancel, on_interval);
    Ok(run.finish(clock, ended, on_interval))
}

#[cfg(test)]
mod pacing_tests;
#[cfg(test)]
mod series_tests;
#[cfg(test)]
mod shard_tests;
#[cfg(test)]
mod tests;
