//! DBT-1: OSDL's implementation of TPC-W's online bookstore, as seed 003
//! measured MySQL with it — emulated users who browse, search and buy,
//! thinking between interactions; throughput in interactions per second
//! (BT/s) against the number of users.
//!
//! DBT-1 itself runs on PostgreSQL and SAP DB only, through stored
//! procedures, an application server and a cache daemon. Here it is one
//! workload on every dialect: the [`schema`] and its data (TPC-W's sizes
//! and DigSyl names, loaded in parallel), the 14 interactions as
//! client-side statements ([`sql`]), TPC-W's three mixes ([`mix`]), and
//! the users ([`session`]) on the engine's pacing layer: `--users` (or
//! `--eus`) users on `--threads` connections (DBT-1's application-server
//! pool; as many connections as users is DBT-1's direct mode), thinking
//! `exp:7.2s:cap=72s` unless `--think-time` says otherwise, started at
//! `--ramp-up` per second. Each interaction is a transaction type of the
//! run: its count, share of the mix (beside the matrix's stationary
//! share) and response times, against TPC-W's 90th-percentile limits.

mod browse;
mod checkout;
pub mod mix;
mod rows;
pub mod schema;
pub mod session;
pub mod sql;
pub mod text;

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use self::mix::{Interaction, Mix, MIX_NAMES};
use self::schema::{Data, Scale, ITEM_SCALES, SCALE_TABLE, TABLES};
use self::session::{Script, Sessions};
use crate::driver::{Connection, Dialect};
use crate::rand::pacing::ThinkTime;
use crate::rand::{RandConfig, Rng};
use crate::util::progress::Progress;
use crate::workload::loader::{self, drop_tables, ensure_absent, usage};
use crate::workload::{
    ClientScript, Connector, OptionValues, StatementDef, TxnType, Workload, WorkloadInfo,
};

/// DBT-1's think time: negative exponential, mean 7.2 s, capped at ten
/// times the mean (TPC-W clause 5.3.1.1).
pub const THINK_TIME: ThinkTime = ThinkTime::Exp {
    mean: Duration::from_millis(7200),
    cap: Some(Duration::from_millis(72_000)),
};

pub static WORKLOADS: &[WorkloadInfo] = &[WorkloadInfo {
    name: "dbt1",
    description: "DBT-1 / TPC-W online bookstore: 14 interactions, emulated users (--users/--eus) with think time, BT/s",
    options: &["items", "ebs", "mix"],
    build,
}];

fn build(
    _name: &'static str,
    o: &OptionValues,
    dialect: Dialect,
    rand: RandConfig,
) -> anyhow::Result<Box<dyn Workload>> {
    let items = u64::from(o.u32("items"));
    if !ITEM_SCALES.iter().any(|&s| u64::from(s) == items) {
        return Err(usage(format!(
            "invalid --items {items}: DBT-1 (TPC-W) allows 1000, 10000, 100000, 1000000 or 10000000 items"
        )));
    }
    let ebs = u64::from(o.u32("ebs"));
    if ebs == 0 || ebs > 100_000 {
        return Err(usage(format!(
            "invalid --ebs {ebs}: give 1 to 100000 emulated browsers' worth of customers (2880 each)"
        )));
    }
    let mix = Mix::parse(o.str("mix")).ok_or_else(|| {
        usage(format!(
            "unknown --mix '{}': expected {MIX_NAMES}",
            o.str("mix")
        ))
    })?;
    let scale = Scale::new(items as u32, ebs as u32);
    Ok(Box::new(Dbt1::new(
        scale,
        mix,
        dialect,
        rand.seed,
        o.clone(),
    )))
}

/// The workload at one scale and mix.
pub struct Dbt1 {
    options: OptionValues,
    dialect: Dialect,
    seed: u64,
    mix: Mix,
    scale: Scale,
    statements: Vec<StatementDef>,
    sessions: Arc<Sessions>,
}

impl Dbt1 {
    /// The workload at `scale` walking `mix` (what `build` makes from the
    /// options; tests build one directly).
    pub fn new(scale: Scale, mix: Mix, dialect: Dialect, seed: u64, options: OptionValues) -> Dbt1 {
        Dbt1 {
            options,
            dialect,
            seed,
            mix,
            statements: sql::statements(dialect),
            sessions: Arc::new(Sessions::new(scale.clone(), mix.matrix(), seed)),
            scale,
        }
    }

    /// A script to drive by hand: [`Script::force`] picks its
    /// interactions (tests of each interaction's rows).
    pub fn script(&self) -> Script {
        Script::new(self.sessions.clone())
    }

    fn names() -> Vec<String> {
        TABLES
            .iter()
            .chain(std::iter::once(&SCALE_TABLE))
            .map(|t| t.to_string())
            .collect()
    }

    fn hint(&self) -> &'static str {
        "with the same --db, --items and --ebs"
    }
}

impl Workload for Dbt1 {
    fn name(&self) -> &'static str {
        "dbt1"
    }

    fn statements(&self) -> &[StatementDef] {
        &self.statements
    }

    fn prepare(
        &self,
        connect: Connector<'_>,
        threads: usize,
        progress: &dyn Progress,
    ) -> anyhow::Result<()> {
        let mut first = connect().context("could not connect to prepare the tables")?;
        ensure_absent(first.as_mut(), &Self::names(), "dbt1", self.hint())?;
        let data = Data::new(self.scale.clone(), self.dialect, self.seed);
        loader::load(
            first.as_mut(),
            connect,
            &data.plans(),
            loader::loaders(self.dialect, threads),
            &data,
            progress,
            "dbt1",
        )?;
        let conn = first.as_mut();
        // The carts start empty: created, not loaded.
        for (t, name) in TABLES.iter().enumerate().skip(8) {
            conn.execute_sql(&data.create(t))
                .with_context(|| format!("could not create table {name}"))?;
        }
        conn.execute_sql(&format!(
            "CREATE TABLE {SCALE_TABLE} (items INTEGER, ebs INTEGER)"
        ))?;
        conn.execute_sql(&format!(
            "INSERT INTO {SCALE_TABLE} VALUES ({}, {})",
            self.scale.items, self.scale.ebs
        ))?;
        Ok(())
    }

    fn cleanup(&self, conn: &mut dyn Connection) -> anyhow::Result<()> {
        drop_tables(conn, &Self::names())
    }

    fn check_prepared(&self, conn: &mut dyn Connection) -> anyhow::Result<()> {
        loader::check_tables(conn, &Self::names(), "dbt1", self.hint(), false)?;
        let rows = conn.query_text(&format!("SELECT items, ebs FROM {SCALE_TABLE}"))?;
        if rows.is_empty() && conn.server_info()?.version == "fake" {
            // The fake driver holds no data to read the scale from.
            return Ok(());
        }
        let at = |i: usize| -> Option<u64> { rows.first()?.get(i)?.as_deref()?.parse().ok() };
        match (at(0), at(1)) {
            (Some(items), Some(ebs))
                if items == u64::from(self.scale.items) && ebs == u64::from(self.scale.ebs) =>
            {
                Ok(())
            }
            (Some(items), Some(ebs)) => Err(usage(format!(
                "the dbt1 tables were prepared with --items {items} --ebs {ebs}, not --items {} --ebs {}: \
                 run with --items {items} --ebs {ebs}, or `dbsweep cleanup dbt1` and prepare again",
                self.scale.items, self.scale.ebs
            ))),
            _ => Err(usage(format!(
                "table {SCALE_TABLE} holds no scale: run `dbsweep cleanup dbt1` and prepare again"
            ))),
        }
    }

    fn client(&self, id: usize, _clients: usize, _rng: Rng) -> Box<dyn ClientScript> {
        if id == 0 {
            // Clients are made once per run: a new run's users start afresh.
            self.sessions.reset();
        }
        Box::new(Script::new(self.sessions.clone()))
    }

    fn options(&self) -> &OptionValues {
        &self.options
    }

    fn users(&self, users: usize) {
        self.sessions.reserve(users);
    }

    fn bytes_per_user(&self) -> (u64, &'static str) {
        (session::BYTES_PER_SESSION, "its DBT-1 session")
    }

    fn transaction_types(&self) -> Vec<TxnType> {
        let share = self.mix.stationary();
        Interaction::ALL
            .iter()
            .map(|&i| TxnType {
                name: i.name(),
                expected_pct: Some(100.0 * share[i.index()]),
                p90_limit: Some(i.p90_limit()),
                queries: i.queries(),
            })
            .collect()
    }

    fn default_think_time(&self) -> Option<ThinkTime> {
        Some(THINK_TIME)
    }

    fn retry_also(&self) -> &'static [crate::driver::ErrorKind] {
        &[]
    }
}
