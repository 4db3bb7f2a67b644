//! TPC-C: the wholesale supplier of the TPC's benchmark C — warehouses,
//! their districts, customers, orders and stock; ten terminals per
//! warehouse running New-Order, Payment, Order-Status, Delivery and
//! Stock-Level with keying and think times; throughput in New-Orders per
//! minute (tpmC).
//!
//! The [`schema`] (nine tables, the spec's keys, secondary indexes after
//! the load) and its rows ([`rows`], clause 4.3, with NURand's constants
//! in [`random`]) load warehouse after warehouse through the shared
//! loader, resumably ([`load`]: a warehouse loaded is kept when a load
//! stops, and `prepare` again finishes it); the five transactions ([`txn`], statements in [`sql`]) run on
//! the terminals ([`terminal`]) as users of the engine's pacing layer:
//! `--warehouses W` gives 10 × W terminals on `--threads` connections, each
//! choosing its next transaction from its deck and pausing for that
//! type's keying time and the last one's think time (`--no-wait` runs
//! without them). [`check`] tests the consistency conditions of clause
//! 3.3.2 (`dbsweep check tpcc`).

pub mod check;
pub mod figures;
pub mod load;
pub mod random;
pub mod rows;
pub mod schema;
pub mod sql;
pub mod terminal;
pub mod txn;

use std::sync::Arc;

use self::rows::Data;
use self::schema::{MAX_WAREHOUSES, SCALE_TABLE, TABLES};
use self::terminal::{Delivery, Script, Terminals, Txn, Waits, DEFAULT_WEIGHTS};
use crate::driver::{Connection, Dialect};
use crate::rand::{RandConfig, Rng};
use crate::util::progress::Progress;
use crate::workload::loader::{self, drop_tables, usage};
use crate::workload::{
    ClientScript, Connector, OptionValues, StatementDef, TxnType, Workload, WorkloadInfo,
};

/// New-Orders per minute per warehouse at most with the spec's waits
/// (clause 5.2.5 / the tpmC ceiling of 12.86 × W).
pub const MAX_TPMC_PER_WAREHOUSE: f64 = 12.86;

/// The name of the database's own count of committed New-Orders in a
/// run's record (`metrics.window_counts`).
pub const SERVER_NEW_ORDERS: &str = "sum(d_next_o_id)";

/// Terminals per warehouse (clause 4.2.2).
pub const TERMINALS_PER_WAREHOUSE: u32 = 10;

pub static WORKLOADS: &[WorkloadInfo] = &[WorkloadInfo {
    name: "tpcc",
    description: "TPC-C: 10 terminals per warehouse (--warehouses), New-Order/Payment/Order-Status/Delivery/Stock-Level with keying and think times, tpmC",
    options: &[
        "warehouses",
        "no-wait",
        "all-warehouses",
        "keying-time-scale",
        "think-time-scale",
        "weights",
        "delivery",
    ],
    build,
}];

/// Parses `--weights`: five non-negative integers, New-Order, Payment,
/// Order-Status, Delivery, Stock-Level, not all zero.
pub fn parse_weights(s: &str) -> Option<[u32; 5]> {
    let v: Vec<u32> = s
        .split(',')
        .map(|p| p.trim().parse().ok())
        .collect::<Option<_>>()?;
    let w: [u32; 5] = v.try_into().ok()?;
    (w.iter().sum::<u32>() > 0 && w.iter().sum::<u32>() <= 10_000).then_some(w)
}

fn build(
    _name: &'static str,
    o: &OptionValues,
    dialect: Dialect,
    rand: RandConfig,
) -> anyhow::Result<Box<dyn Workload>> {
    let w = o.u32("warehouses");
    if w == 0 || w > MAX_WAREHOUSES {
        return Err(usage(format!(
            "invalid --warehouses {w}: give 1 to {MAX_WAREHOUSES} warehouses"
        )));
    }
    let weights = parse_weights(o.str("weights")).ok_or_else(|| {
        usage(format!(
            "invalid --weights '{}': give five whole numbers, New-Order,Payment,Order-Status,Delivery,Stock-Level (the spec's mix: 45,43,4,4,4)",
            o.str("weights")
        ))
    })?;
    let (k, t) = (o.f64("keying-time-scale"), o.f64("think-time-scale"));
    let waits = if o.bool("no-wait") {
        if k != 1.0 || t != 1.0 {
            return Err(usage(
                "--no-wait runs without keying and think times: drop --keying-time-scale and --think-time-scale, or --no-wait".into(),
            ));
        }
        None
    } else {
        if o.bool("all-warehouses") {
            return Err(usage(
                "--all-warehouses is for --no-wait runs: with keying and think times each terminal keeps its home warehouse (clause 2.8.1.1); add --no-wait or drop --all-warehouses".into(),
            ));
        }
        Some(Waits {
            keying_scale: k,
            think_scale: t,
        })
    };
    let delivery = Delivery::parse(o.str("delivery")).ok_or_else(|| {
        usage(format!(
            "invalid --delivery '{}': give inline (the terminal waits for the ten districts) or deferred (queued, executed after the terminal's response, clause 2.7)",
            o.str("delivery")
        ))
    })?;
    Ok(Box::new(
        Tpcc::new(w, weights, waits, dialect, rand.seed, o.clone())
            .with_all_warehouses(o.bool("all-warehouses"))
            .with_delivery(delivery),
    ))
}

/// The workload at one scale.
pub struct Tpcc {
    options: OptionValues,
    dialect: Dialect,
    seed: u64,
    pub warehouses: u32,
    statements: Vec<StatementDef>,
    terminals: Arc<Terminals>,
}

impl Tpcc {
    /// The workload at `warehouses` (what `build` makes from the options;
    /// tests build one directly). `waits` None: `--no-wait`.
    pub fn new(
        warehouses: u32,
        weights: [u32; 5],
        waits: Option<Waits>,
        dialect: Dialect,
        seed: u64,
        options: OptionValues,
    ) -> Tpcc {
        Tpcc {
            options,
            dialect,
            seed,
            warehouses,
            statements: sql::statements(dialect),
            terminals: Arc::new(Terminals::new(warehouses, weights, waits, seed)),
        }
    }

    /// The spec's mix and waits at `warehouses`.
    pub fn spec(warehouses: u32, dialect: Dialect, seed: u64) -> Tpcc {
        Tpcc::new(
            warehouses,
            DEFAULT_WEIGHTS,
            Some(Waits::SPEC),
            dialect,
            seed,
            OptionValues::default(),
        )
    }

    /// Puts every transaction on a random warehouse and district instead
    /// of its terminal's (`--all-warehouses`).
    pub fn with_all_warehouses(mut self, on: bool) -> Tpcc {
        Arc::get_mut(&mut self.terminals)
            .expect("no script shares the terminals yet")
            .all_warehouses = on;
        self
    }

    /// Runs Delivery inline or queued for deferred execution (`--delivery`).
    pub fn with_delivery(mut self, delivery: Delivery) -> Tpcc {
        Arc::get_mut(&mut self.terminals)
            .expect("no script shares the terminals yet")
            .delivery = delivery;
        self
    }

    /// A script to drive by hand (tests of each transaction's rows).
    pub fn script(&self) -> Script {
        Script::new(self.terminals.clone())
    }

    pub fn terminals(&self) -> &Arc<Terminals> {
        &self.terminals
    }

    fn names() -> Vec<String> {
        TABLES
            .iter()
            .chain(std::iter::once(&SCALE_TABLE))
            .map(|t| t.to_string())
            .collect()
    }

    /// Reads (warehouses, the load's C for C_LAST) from the scale table.
    pub fn read_scale(conn: &mut dyn Connection) -> anyhow::Result<Option<(u32, u32)>> {
        let rows = conn.query_text(&format!("SELECT warehouses, c_last FROM {SCALE_TABLE}"))?;
        let at = |i: usize| -> Option<u32> { rows.first()?.get(i)?.as_deref()?.parse().ok() };
        Ok(at(0).zip(at(1)))
    }

    /// Checks each table's rows against the load's: the rows the server
    /// said it stored (`stored`, in [`TABLES`] order) when one load made
    /// every table from empty, else each table counted.
    pub(crate) fn verify_counts(
        &self,
        conn: &mut dyn Connection,
        data: &Data,
        stored: Option<&[u64]>,
    ) -> anyhow::Result<()> {
        let expected = expected_rows(self.warehouses, data);
        for (i, (t, want)) in TABLES.iter().zip(expected).enumerate() {
            let got = match stored {
                Some(s) => s.get(i).copied().unwrap_or(0),
                None => conn.count_rows(t)?,
            };
            if got != want {
                anyhow::bail!("table {t} holds {got} rows after the load, not {want}: run `dbsweep cleanup tpcc` and prepare again");
            }
        }
        Ok(())
    }
}

/// The rows each table holds after the load, in [`TABLES`] order.
pub fn expected_rows(warehouses: u32, data: &Data) -> [u64; 9] {
    let mut n = schema::row_numbers(warehouses).map(u64::from);
    n[schema::ORDER_LINE] = data.order_lines();
    n
}

impl Workload for Tpcc {
    fn name(&self) -> &'static str {
        "tpcc"
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
        load::prepare(self, connect, threads, progress)
    }

    fn cleanup(&self, conn: &mut dyn Connection) -> anyhow::Result<()> {
        drop_tables(conn, &Self::names())?;
        drop_tables(conn, &[load::LOAD_TABLE.to_string()])
    }

    fn check_prepared(&self, conn: &mut dyn Connection) -> anyhow::Result<()> {
        let fake = conn.server_info()?.version == "fake";
        if let Some((done, of)) = load::stopped(conn)?.filter(|_| !fake) {
            return Err(usage(format!(
                "the tpcc load was stopped part-way ({done} of {of} warehouses loaded): \
                 run `dbsweep prepare tpcc --warehouses {of}` with the same --db to finish it"
            )));
        }
        loader::check_tables(
            conn,
            &Self::names(),
            "tpcc",
            "with the same --db and --warehouses",
            false,
        )?;
        let scale = Self::read_scale(conn)?;
        if scale.is_none() && fake {
            // The fake driver holds no data to read the scale from.
            return Ok(());
        }
        match scale {
            Some((w, c_last)) if w == self.warehouses => {
                self.terminals.set_load_c_last(c_last);
                Ok(())
            }
            Some((w, _)) => Err(usage(format!(
                "the tpcc tables were prepared with --warehouses {w}, not --warehouses {}: \
                 run with --warehouses {w}, or `dbsweep cleanup tpcc` and prepare again",
                self.warehouses
            ))),
            None => Err(usage(format!(
                "table {SCALE_TABLE} holds no scale: run `dbsweep cleanup tpcc` and prepare again"
            ))),
        }
    }

    fn client(&self, id: usize, _clients: usize, _rng: Rng) -> Box<dyn ClientScript> {
        if id == 0 {
            // Clients are made once per run: a new run's terminals start afresh.
            self.terminals.reset();
        }
        Box::new(Script::new(self.terminals.clone()))
    }

    fn options(&self) -> &OptionValues {
        &self.options
    }

    fn transaction_types(&self) -> Vec<TxnType> {
        let weights = self.terminals.weights;
        let deferred = self.terminals.delivery == Delivery::Deferred;
        // A queued Delivery is executed too: one more transaction of the
        // run per Delivery card.
        let executions = if deferred {
            weights[Txn::Delivery.index()]
        } else {
            0
        };
        let total = f64::from(weights.iter().sum::<u32>() + executions);
        let share = |t: Txn| 100.0 * f64::from(weights[t.index()]) / total;
        // 1 % of New-Orders roll back (clause 2.4.1.4): a type of their
        // own, after the five (see `terminal::ROLLED_BACK_NEW_ORDER`).
        let mut types: Vec<TxnType> = Txn::ALL
            .iter()
            .map(|&t| TxnType {
                name: t.name(),
                expected_pct: Some(if t == Txn::NewOrder {
                    0.99 * share(t)
                } else {
                    share(t)
                }),
                p90_limit: Some(if t == Txn::Delivery && deferred {
                    terminal::DELIVERY_QUEUED_LIMIT
                } else {
                    t.p90_limit()
                }),
                // A queued Delivery sends nothing.
                queries: !(t == Txn::Delivery && deferred),
            })
            .collect();
        types.push(TxnType {
            name: terminal::ROLLED_BACK_NAME,
            expected_pct: Some(0.01 * share(Txn::NewOrder)),
            p90_limit: Some(Txn::NewOrder.p90_limit()),
            queries: true,
        });
        if deferred {
            // Its response time is the deferred completion time, held to
            // clause 5.2.5.3's 80 s.
            types.push(TxnType {
                name: terminal::DEFERRED_NAME,
                expected_pct: Some(share(Txn::Delivery)),
                p90_limit: Some(Txn::Delivery.p90_limit()),
                queries: true,
            });
        }
        types
    }

    fn users(&self, users: usize) {
        self.terminals.reserve(users);
    }

    fn window_counts(&self) -> Vec<(String, String)> {
        // D_NEXT_O_ID grows by one for each committed New-Order (a
        // rolled-back one gives its number back): the database's NOPM.
        vec![(
            SERVER_NEW_ORDERS.to_string(),
            "SELECT sum(d_next_o_id) FROM district".to_string(),
        )]
    }

    fn default_users(&self) -> Option<usize> {
        Some((self.warehouses * TERMINALS_PER_WAREHOUSE) as usize)
    }

    fn consistency(
        &self,
        conn: &mut dyn Connection,
    ) -> anyhow::Result<Option<Vec<crate::workload::Condition>>> {
        loader::check_tables(
            conn,
            &Self::names(),
            "tpcc",
            "with the same --db and --warehouses",
            false,
        )?;
        let conditions = check::check(conn)?;
        Ok(Some(
            conditions
                .into_iter()
                .map(|c| crate::workload::Condition {
                    name: format!("3.3.2.{} {}", c.number, c.title),
                    holds: c.holds(),
                    count: c.count,
                    failures: c.failures,
                })
                .collect(),
        ))
    }
}
