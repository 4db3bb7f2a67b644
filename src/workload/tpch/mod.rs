//! TPC-H (version 3's queries, refresh functions and tests), as one
//! workload `tpch`.
//!
//! # Layout
//! - this file: the workload, its options and its data's state;
//! - [`schema`]: the eight tables per dialect, keys and indexes;
//! - [`rows`]: dbgen's rows from the `tpchgen` crate, and the refresh
//!   sets;
//! - [`queries`]: the 22 queries and the refresh statements per dialect;
//! - [`params`]: substitution parameters and the streams' orders;
//! - [`script`]: one stream;
//! - [`answers`]: the queries' answers checked against the spec's;
//! - [`figures`]: Power@Size, Throughput@Size and the timings, from the
//!   record.
//!
//! # The tests as runs
//! `--threads 1` is the power test: RF1, the 22 queries in stream 0's
//! order, RF2, one after the other on one connection. `--threads S+1` is
//! the throughput test: S query streams, each the 22 queries in its row
//! of Appendix A, beside the refresh stream's S pairs of RF1 and RF2.
//! The run's rounds are the streams' own, so a run ends when its last
//! stream does, and its measured time is the throughput test's Ts.
//! `--refresh off` leaves the refresh functions out (the power test is
//! then the 22 queries alone, and `--threads S` runs S query streams).

pub mod answers;
pub mod figures;
mod params;
mod queries;
mod rows;
mod schema;
mod script;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use crate::driver::{Connection, Dialect};
use crate::rand::{RandConfig, Rng};
use crate::util::progress::Progress;
use crate::workload::loader::{self, check_tables, drop_tables, ensure_absent, usage};
use crate::workload::{
    ClientScript, Condition, Connector, OptionValues, StatementDef, TxnType, Workload, WorkloadInfo,
};
use script::{Ids, Sets};

pub use params::ORDERS;
pub use rows::{order_index, orders};

/// The largest scale factor: `lineitem`'s slots (seven per order) are
/// numbered in 32 bits.
pub const MAX_SCALE: f64 = 400.0;

/// The smallest: a refresh set (1/1,000 of the orders) holds one order.
pub const MIN_SCALE: f64 = 0.001;

pub static WORKLOADS: &[WorkloadInfo] = &[WorkloadInfo {
    name: "tpch",
    description: "TPC-H: the 22 decision-support queries and the refresh functions on dbgen's data; --threads 1 is the power test, --threads S+1 the throughput test with S query streams",
    options: &["scale", "qualification", "refresh", "query-timeout"],
    build,
}];

fn build(
    _name: &'static str,
    o: &OptionValues,
    dialect: Dialect,
    _rand: RandConfig,
) -> anyhow::Result<Box<dyn Workload>> {
    let sf = o.f64("scale");
    if !(MIN_SCALE..=MAX_SCALE).contains(&sf) {
        return Err(crate::UsageError(format!(
            "--scale {sf}: TPC-H's scale factor must be from {MIN_SCALE} to {MAX_SCALE} \
             (1 is 6,000,000 lineitems, about 1 GB of data)"
        ))
        .into());
    }
    let timeout = query_timeout(o.str("query-timeout"))?;
    let mut w = Tpch::new(
        sf,
        o.bool("qualification"),
        o.bool("refresh"),
        o.clone(),
        dialect,
    );
    w.timeout = timeout;
    Ok(Box::new(w))
}

/// `--query-timeout`: off, or a positive duration (TPC-H's and
/// CH-benCHmark's).
pub fn query_timeout(v: &str) -> Result<Option<Duration>, crate::UsageError> {
    if v.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let bad = |why: String| {
        crate::UsageError(format!(
            "--query-timeout {v}: {why} (give e.g. 30s or 5m, or off for no limit)"
        ))
    };
    match crate::util::duration::parse(v) {
        Ok(d) if d >= Duration::from_millis(1) => Ok(Some(d)),
        Ok(_) => Err(bad("a query's limit must be at least 1 ms".into())),
        Err(e) => Err(bad(e)),
    }
}

pub struct Tpch {
    sf: f64,
    qualification: bool,
    refresh: bool,
    options: OptionValues,
    dialect: Dialect,
    defs: Vec<StatementDef>,
    ids: Ids,
    sets: Arc<Sets>,
    /// `--query-timeout`.
    timeout: Option<Duration>,
}

impl Tpch {
    fn new(
        sf: f64,
        qualification: bool,
        refresh: bool,
        options: OptionValues,
        dialect: Dialect,
    ) -> Tpch {
        let mut defs: Vec<StatementDef> = (1..=22)
            .map(|q| StatementDef {
                kind: format!("Q{q}").into(),
                sql: queries::query(q, dialect),
            })
            .collect();
        let [insert_order, insert_line, delete_lines, delete_order] = queries::refresh(dialect);
        for (kind, sql) in [
            ("RF1", insert_order),
            ("RF1", insert_line),
            ("RF2", delete_lines),
            ("RF2", delete_order),
        ] {
            defs.push(StatementDef {
                kind: kind.into(),
                sql,
            });
        }
        // MariaDB and MySQL bind Q15's dates by a statement of their own
        // (`queries::q15_bound`), the query's type's first.
        let q15_set = (dialect == Dialect::Mysql).then(|| {
            let [set, reading] = queries::q15_bound(dialect);
            defs[14].sql = reading;
            defs.push(StatementDef {
                kind: "Q15".into(),
                sql: set,
            });
            defs.len() - 1
        });
        let ids = Ids {
            query: std::array::from_fn(|i| i),
            insert_order: 22,
            insert_line: 23,
            delete_lines: 24,
            delete_order: 25,
            q15_set,
        };
        Tpch {
            sf,
            qualification,
            refresh,
            options,
            dialect,
            defs,
            ids,
            sets: Arc::new(Sets::default()),
            timeout: None,
        }
    }

    fn names() -> Vec<String> {
        schema::TABLES.iter().map(|t| t.to_string()).collect()
    }

    fn hint(&self) -> String {
        format!("with the same --scale ({})", self.sf)
    }

    /// The refresh sets earlier runs inserted and deleted: RF1 appends
    /// sets after the largest key, RF2 deletes from the smallest.
    fn refreshed(&self, conn: &mut dyn Connection) -> anyhow::Result<(i64, i64)> {
        let base = orders(self.sf);
        let per = (base / rows::REFRESH_SETS).max(1);
        let min = Self::number(conn, "SELECT min(o_orderkey) FROM orders")?.unwrap_or(1);
        let max = Self::number(conn, "SELECT max(o_orderkey) FROM orders")?.unwrap_or(0);
        Ok((
            (order_index(max) - base).max(0) / per,
            (order_index(min) - 1).max(0) / per,
        ))
    }

    /// A number the query `sql` returns, if any.
    fn number(conn: &mut dyn Connection, sql: &str) -> anyhow::Result<Option<i64>> {
        let rows = conn.query_text(sql)?;
        Ok(rows
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .and_then(|v| v.trim().parse().ok()))
    }
}

impl Workload for Tpch {
    fn name(&self) -> &'static str {
        "tpch"
    }

    fn statements(&self) -> &[StatementDef] {
        &self.defs
    }

    fn statement_timeout(&self) -> Option<Duration> {
        self.timeout
    }

    fn prepare(
        &self,
        connect: Connector<'_>,
        threads: usize,
        progress: &dyn Progress,
    ) -> anyhow::Result<()> {
        let mut first = connect().context("could not connect to prepare the TPC-H tables")?;
        ensure_absent(first.as_mut(), &Self::names(), "tpch", &self.hint())?;
        let source = rows::Source { sf: self.sf };
        let plans = schema::plans(self.dialect, source.counts());
        loader::load(
            first.as_mut(),
            connect,
            &plans,
            loader::loaders(self.dialect, threads),
            &source,
            progress,
            "tpch",
        )
    }

    fn cleanup(&self, conn: &mut dyn Connection) -> anyhow::Result<()> {
        drop_tables(conn, &Self::names())
    }

    fn check_prepared(&self, conn: &mut dyn Connection) -> anyhow::Result<()> {
        check_tables(conn, &Self::names(), "tpch", &self.hint(), true)?;
        // The supplier table's size is the scale factor's (10,000 per SF)
        // and no refresh function changes it.
        let want = tpchgen::generators::SupplierGenerator::calculate_row_count(self.sf, 1, 1);
        let have = conn.count_rows("supplier")?;
        if have as i64 != want {
            return Err(usage(format!(
                "supplier holds {have} rows, and TPC-H at --scale {} has {want}: the tables \
                 were prepared at another scale; run the benchmark with that --scale, or \
                 `dbsweep cleanup tpch` then `dbsweep prepare tpch --scale {}`",
                self.sf, self.sf
            )));
        }
        Ok(())
    }

    fn consistency(&self, conn: &mut dyn Connection) -> anyhow::Result<Option<Vec<Condition>>> {
        check_tables(conn, &Self::names(), "tpch", &self.hint(), true)?;
        if answers::published(1, self.sf).is_none() {
            return Err(usage(format!(
                "the spec publishes the queries' answers for scale factor 1 only, and this \
                 check is at --scale {}: prepare the tables with --scale 1 to check them",
                self.sf
            )));
        }
        let (inserted, deleted) = self.refreshed(conn)?;
        if inserted + deleted > 0 {
            return Err(usage(format!(
                "the refresh functions have changed orders and lineitem since the load \
                 ({inserted} set(s) inserted, {deleted} deleted), and the answers hold for \
                 the data as loaded: `dbsweep cleanup tpch`, `dbsweep prepare tpch --scale 1`, \
                 then check (or run with --refresh off before checking)"
            )));
        }
        let mut out = Vec::with_capacity(22);
        for q in 1..=22u8 {
            let expected = answers::parse(answers::published(q, self.sf).unwrap_or_default());
            let got = conn
                .query_text(&answers::sql(q, self.dialect, self.sf))
                .with_context(|| format!("Q{q} with its validation parameters failed"))?;
            let (count, failures) =
                answers::compare_published(q, &expected, &got, 5).unwrap_or_default();
            out.push(Condition {
                name: format!("Q{q} returns the spec's answer ({} rows)", expected.len()),
                holds: count == 0,
                count,
                failures,
            });
        }
        Ok(Some(out))
    }

    fn plans(&self, connect: Connector<'_>) -> anyhow::Result<Vec<(String, String)>> {
        let mut conn = connect()?;
        (1..=22u8)
            .map(|q| {
                let rows = conn
                    .query_text(&answers::explain(q, self.dialect, self.sf))
                    .with_context(|| format!("EXPLAIN of Q{q} failed"))?;
                Ok((format!("Q{q}"), answers::plan_text(self.dialect, &rows)))
            })
            .collect()
    }

    fn ready(
        &self,
        conn: &mut dyn Connection,
        shard: Option<(usize, usize)>,
    ) -> anyhow::Result<()> {
        if shard.is_some_and(|(_, n)| n > 1) && self.refresh {
            return Err(usage(
                "tpch's refresh functions take their sets in order from one process: run it \
                 unsharded, or with --refresh off"
                    .to_string(),
            ));
        }
        let (inserted, deleted) = self.refreshed(conn)?;
        self.sets.insert.store(inserted + 1, Ordering::Relaxed);
        self.sets.delete.store(deleted + 1, Ordering::Relaxed);
        Ok(())
    }

    fn client(&self, id: usize, clients: usize, rng: Rng) -> Box<dyn ClientScript> {
        Box::new(script::Script::new(
            script::plan(id, clients, self.refresh),
            self.sf,
            self.qualification,
            rng,
            self.ids,
            self.sets.clone(),
        ))
    }

    fn options(&self) -> &OptionValues {
        &self.options
    }

    fn default_rounds(&self) -> Option<u64> {
        // A flag more than a count: each stream runs its own
        // (`ClientScript::rounds`).
        Some(if self.refresh { 24 } else { 22 })
    }

    fn transaction_types(&self) -> Vec<TxnType> {
        let names: &[&'static str] = &[
            "Q1", "Q2", "Q3", "Q4", "Q5", "Q6", "Q7", "Q8", "Q9", "Q10", "Q11", "Q12", "Q13",
            "Q14", "Q15", "Q16", "Q17", "Q18", "Q19", "Q20", "Q21", "Q22", "RF1", "RF2",
        ];
        let n = if self.refresh { 24 } else { 22 };
        names[..n]
            .iter()
            .map(|name| TxnType {
                name,
                expected_pct: None,
                p90_limit: None,
                queries: true,
            })
            .collect()
    }
}
