//! CH-benCHmark (Cole et al., DBTest 2011): TPC-C's terminals and
//! TPC-H-style analytical streams on one database at once, so a point
//! measures tpmC and the queries' throughput together and shows what each
//! load does to the other.
//!
//! The workload is TPC-C's, reused: its nine tables, loader, terminals,
//! transactions and consistency checks, with the three tables CH adds
//! ([`tables`]: REGION, NATION, SUPPLIER) and CH's 22 queries
//! ([`queries`]). `--threads N` connections: the first
//! `--analytic-streams S` are analytical streams, the other N − S are one
//! TPC-C terminal each, running back to back with no keying or think time
//! and over every warehouse (CH's transactional clients; TPC-C's
//! `--no-wait --all-warehouses`) — [`stream`]. A point with S = 0 is TPC-C
//! alone, one with N = S the queries alone: the interference is read off
//! points that differ in one of the two.
//!
//! Each query is a transaction type of its own (`Q1` … `Q22`, after
//! TPC-C's), so the record times each; `result.chbench` carries tpmC and
//! the queries per hour (QphH) together (see [`figures`]).

pub mod figures;
pub mod queries;
pub mod stream;
pub mod tables;

use std::time::Duration;

use anyhow::Context as _;

use crate::driver::{Connection, Dialect};
use crate::rand::{RandConfig, Rng};
use crate::util::progress::Progress;
use crate::workload::loader::{check_tables, drop_tables, ensure_absent, usage};
use crate::workload::tpcc::terminal::DEFAULT_WEIGHTS;
use crate::workload::tpcc::Tpcc;
use crate::workload::tpch::answers;
use crate::workload::{
    ClientScript, Condition, Connector, OptionValues, StatementDef, TxnType, Workload, WorkloadInfo,
};

pub static WORKLOADS: &[WorkloadInfo] = &[WorkloadInfo {
    name: "chbench",
    description: "CH-benCHmark: TPC-C's terminals (no waits, every warehouse) and --analytic-streams S streams of CH's 22 queries on one database at once; tpmC and QphH per point",
    options: &["warehouses", "analytic-streams", "query-timeout"],
    build,
}];

fn build(
    _name: &'static str,
    o: &OptionValues,
    dialect: Dialect,
    rand: RandConfig,
) -> anyhow::Result<Box<dyn Workload>> {
    let w = o.u32("warehouses");
    if w == 0 || w > crate::workload::tpcc::schema::MAX_WAREHOUSES {
        return Err(usage(format!(
            "invalid --warehouses {w}: give 1 to {} warehouses",
            crate::workload::tpcc::schema::MAX_WAREHOUSES
        )));
    }
    let timeout = crate::workload::tpch::query_timeout(o.str("query-timeout"))?;
    let tpcc = Tpcc::new(w, DEFAULT_WEIGHTS, None, dialect, rand.seed, o.clone())
        .with_all_warehouses(true);
    Ok(Box::new(Chbench::new(
        tpcc,
        o.u32("analytic-streams") as usize,
        timeout,
        dialect,
        rand.seed,
    )))
}

/// The workload at one scale.
pub struct Chbench {
    tpcc: Tpcc,
    streams: usize,
    timeout: Option<Duration>,
    dialect: Dialect,
    seed: u64,
    statements: Vec<StatementDef>,
    /// TPC-C's transaction types; the queries' follow.
    tpcc_types: usize,
}

impl Chbench {
    fn new(
        tpcc: Tpcc,
        streams: usize,
        timeout: Option<Duration>,
        dialect: Dialect,
        seed: u64,
    ) -> Chbench {
        let mut statements = tpcc.statements().to_vec();
        statements.extend((1..=22).map(|q| StatementDef {
            kind: format!("Q{q}").into(),
            sql: queries::query(q, dialect),
        }));
        let tpcc_types = tpcc.transaction_types().len();
        Chbench {
            tpcc,
            streams,
            timeout,
            dialect,
            seed,
            statements,
            tpcc_types,
        }
    }

    fn names() -> Vec<String> {
        tables::TABLES.iter().map(|t| t.to_string()).collect()
    }

    /// The first query's statement id.
    fn first_query(&self) -> usize {
        self.statements.len() - 22
    }
}

impl Workload for Chbench {
    fn name(&self) -> &'static str {
        "chbench"
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
        let hint = format!("with the same --warehouses ({})", self.tpcc.warehouses);
        {
            let mut c = connect()?;
            ensure_absent(c.as_mut(), &Self::names(), "chbench", &hint)?;
        }
        self.tpcc.prepare(connect, threads, progress)?;
        let mut c = connect()?;
        tables::load(c.as_mut(), self.dialect, self.seed)
    }

    fn ready(
        &self,
        conn: &mut dyn Connection,
        shard: Option<(usize, usize)>,
    ) -> anyhow::Result<()> {
        self.tpcc.ready(conn, shard)
    }

    fn cleanup(&self, conn: &mut dyn Connection) -> anyhow::Result<()> {
        drop_tables(conn, &Self::names())?;
        self.tpcc.cleanup(conn)
    }

    fn check_prepared(&self, conn: &mut dyn Connection) -> anyhow::Result<()> {
        self.tpcc.check_prepared(conn)?;
        check_tables(
            conn,
            &Self::names(),
            "chbench",
            &format!("with the same --warehouses ({})", self.tpcc.warehouses),
            false,
        )
    }

    fn client(&self, id: usize, clients: usize, _rng: Rng) -> Box<dyn ClientScript> {
        if id < self.streams {
            return Box::new(stream::Stream::new(
                self.first_query(),
                self.tpcc_types as u16,
                id,
            ));
        }
        if id == self.streams {
            // The first terminal's client: a new run's terminals start
            // afresh, one slot each.
            let terminals = self.tpcc.terminals();
            terminals.reset();
            terminals.reserve(clients.saturating_sub(self.streams));
        }
        Box::new(stream::Terminal::new(
            self.tpcc.terminals().clone(),
            (id - self.streams) as u32,
        ))
    }

    fn options(&self) -> &OptionValues {
        self.tpcc.options()
    }

    fn check_clients(&self, clients: usize) -> Result<(), String> {
        if self.streams > clients {
            return Err(format!(
                "--analytic-streams {} is more than the run's {clients} connections: give                  --threads at least {} (the streams and the TPC-C terminals together)",
                self.streams, self.streams
            ));
        }
        Ok(())
    }

    fn statement_timeout(&self) -> Option<Duration> {
        self.timeout
    }

    fn transaction_types(&self) -> Vec<TxnType> {
        let mut types = self.tpcc.transaction_types();
        // Shares of the mix are the terminals' (the queries' count
        // depends on how long each takes, not on a deck).
        for t in &mut types {
            t.expected_pct = None;
        }
        types.extend((1..=22).map(|q| TxnType {
            name: figures::QUERY_NAMES[q - 1],
            expected_pct: None,
            p90_limit: None,
            queries: true,
        }));
        types
    }

    fn window_counts(&self) -> Vec<(String, String)> {
        self.tpcc.window_counts()
    }

    fn plans(&self, connect: Connector<'_>) -> anyhow::Result<Vec<(String, String)>> {
        let mut c = connect()?;
        (1..=22u8)
            .map(|q| {
                let sql = answers::explain_sql(self.dialect, &queries::query(q, self.dialect));
                let rows = c
                    .query_text(&sql)
                    .with_context(|| format!("EXPLAIN of Q{q} failed"))?;
                Ok((format!("Q{q}"), answers::plan_text(self.dialect, &rows)))
            })
            .collect()
    }

    fn consistency(&self, conn: &mut dyn Connection) -> anyhow::Result<Option<Vec<Condition>>> {
        self.tpcc.consistency(conn)
    }
}
