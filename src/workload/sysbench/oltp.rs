//! The `oltp_*` scripts of sysbench 1.0.20 (`oltp_common.lua` and one file
//! per test), plus `oltp_simple`, sysbench 0.4's simple mode.
//!
//! Every script is a [`Plan`]: optional BEGIN, statement groups in
//! sysbench's order, optional COMMIT. A group runs its statements `count`
//! times on one table drawn uniformly when the group starts, as sysbench's
//! `execute_*` functions do; each id comes from the configured distribution
//! over [1, table-size]. With the defaults, an oltp_read_write transaction is
//! BEGIN, 10 point selects, 1 each of simple/sum/order/distinct range, 1
//! index update, 1 non-index update, 1 delete + insert of the same id, COMMIT:
//! 14 reads, 4 writes, 2 other.

use std::sync::Arc;

use super::schema::{render, usage, Schema, C_TEMPLATE, PAD_TEMPLATE};
use crate::driver::{Connection, Dialect, StmtId, Value};
use crate::rand::dist::Dist;
use crate::rand::RandConfig;
use crate::rand::{Rng, UniqueSeq};
use crate::util::progress::Progress;
use crate::workload::{ClientScript, Connector, Op, OptionValues, StatementDef, Workload};

/// One statement shape (prepared once per table). Several shapes share SQL
/// but differ in where their values come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Query {
    /// `SELECT c … WHERE id=?`
    PointSelect,
    /// `SELECT id, k, c, pad … WHERE id=?` (sysbench 0.4's
    /// `--oltp-point-select-all-cols`).
    PointSelectAll,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    /// `SET k=k+1 WHERE id=?`
    IndexUpdate,
    /// `SET c=? WHERE id=?`
    NonIndexUpdate,
    /// `DELETE … WHERE id=?`; remembers the id for [`Query::ReInsert`].
    Delete,
    /// INSERT with the id just deleted (oltp_read_write's delete/insert pair).
    ReInsert,
    /// INSERT with an id from the shared unique sequence (oltp_insert,
    /// `--auto-inc=off`).
    UniqueInsert,
    /// INSERT of (k, c, pad); the database assigns id (oltp_insert).
    AutoInsert,
}

impl Query {
    /// Does the statement change rows?
    fn writes(self) -> bool {
        matches!(
            self,
            Query::IndexUpdate
                | Query::NonIndexUpdate
                | Query::Delete
                | Query::ReInsert
                | Query::UniqueInsert
                | Query::AutoInsert
        )
    }
}

const N_QUERIES: usize = 12;

impl Query {
    const ALL: [Query; N_QUERIES] = [
        Query::PointSelect,
        Query::PointSelectAll,
        Query::SimpleRange,
        Query::SumRange,
        Query::OrderRange,
        Query::DistinctRange,
        Query::IndexUpdate,
        Query::NonIndexUpdate,
        Query::Delete,
        Query::ReInsert,
        Query::UniqueInsert,
        Query::AutoInsert,
    ];

    /// The type the engine reports the statement under.
    fn kind(self) -> &'static str {
        match self {
            Query::PointSelect | Query::PointSelectAll => "point_select",
            Query::SimpleRange => "simple_range",
            Query::SumRange => "sum_range",
            Query::OrderRange => "order_range",
            Query::DistinctRange => "distinct_range",
            Query::IndexUpdate => "index_update",
            Query::NonIndexUpdate => "non_index_update",
            Query::Delete => "delete",
            Query::ReInsert | Query::UniqueInsert | Query::AutoInsert => "insert",
        }
    }

    /// sysbench's statement text for table `n`, with `?` placeholders.
    fn sql(self, n: u32) -> String {
        match self {
            Query::PointSelect => format!("SELECT c FROM sbtest{n} WHERE id=?"),
            Query::PointSelectAll => format!("SELECT id, k, c, pad FROM sbtest{n} WHERE id=?"),
            Query::SimpleRange => format!("SELECT c FROM sbtest{n} WHERE id BETWEEN ? AND ?"),
            Query::SumRange => format!("SELECT SUM(k) FROM sbtest{n} WHERE id BETWEEN ? AND ?"),
            Query::OrderRange => {
                format!("SELECT c FROM sbtest{n} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Query::DistinctRange => {
                format!("SELECT DISTINCT c FROM sbtest{n} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Query::IndexUpdate => format!("UPDATE sbtest{n} SET k=k+1 WHERE id=?"),
            Query::NonIndexUpdate => format!("UPDATE sbtest{n} SET c=? WHERE id=?"),
            Query::Delete => format!("DELETE FROM sbtest{n} WHERE id=?"),
            Query::ReInsert | Query::UniqueInsert => {
                format!("INSERT INTO sbtest{n} (id, k, c, pad) VALUES (?, ?, ?, ?)")
            }
            // sysbench sends id=0 on MySQL so that AUTO_INCREMENT assigns
            // one; that trick fails on SQLite and PostgreSQL, while leaving
            // id out works on all three.
            Query::AutoInsert => format!("INSERT INTO sbtest{n} (k, c, pad) VALUES (?, ?, ?)"),
        }
    }

    /// An empty parameter buffer of the right shape; text slots get their
    /// final capacity now, so that filling them later never allocates.
    fn buffer(self) -> Vec<Value> {
        let int = || Value::Int(0);
        let text = |n: usize| Value::Text(String::with_capacity(n));
        match self {
            Query::PointSelect | Query::PointSelectAll | Query::IndexUpdate | Query::Delete => {
                vec![int()]
            }
            Query::SimpleRange | Query::SumRange | Query::OrderRange | Query::DistinctRange => {
                vec![int(), int()]
            }
            Query::NonIndexUpdate => vec![text(C_TEMPLATE.len()), int()],
            Query::ReInsert | Query::UniqueInsert => {
                vec![
                    int(),
                    int(),
                    text(C_TEMPLATE.len()),
                    text(PAD_TEMPLATE.len()),
                ]
            }
            Query::AutoInsert => vec![int(), text(C_TEMPLATE.len()), text(PAD_TEMPLATE.len())],
        }
    }
}

/// One step of a transaction.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// `writes`: some statement of the transaction changes rows.
    Begin {
        writes: bool,
    },
    Commit,
    /// `queries` in order, `count` times, on one table drawn at the start.
    Group {
        queries: &'static [Query],
        count: u32,
    },
}

/// Which script a [`Plan`] reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    ReadOnly,
    ReadWrite,
    WriteOnly,
    PointSelect,
    UpdateIndex,
    UpdateNonIndex,
    Insert,
    Delete,
    Simple,
}

/// A transaction's shape and the numbers its draws need; shared, read-only,
/// by every client of a run.
#[derive(Debug)]
struct Plan {
    steps: Vec<Step>,
    /// Statement id of each query's table 1 (index: position in
    /// [`Query::ALL`]); table `t` (0-based) is `base + t`.
    base: [StmtId; N_QUERIES],
    tables: u32,
    /// Number of the first table (`--table-offset` + 1).
    first_table: u32,
    table_size: u32,
    range_size: u32,
}

impl Plan {
    fn new(variant: Variant, o: &OptionValues, auto_inc: bool) -> Plan {
        let opt = |name| o.u32(name);
        let trx = match variant {
            Variant::ReadOnly | Variant::ReadWrite | Variant::WriteOnly | Variant::Simple => {
                !o.bool("skip-trx")
            }
            _ => false,
        };
        let mut steps = Vec::new();
        let mut group = |queries: &'static [Query], count: u32| {
            // A group that runs nothing has no observable effect; leaving it
            // out saves its table draw.
            if count > 0 {
                steps.push(Step::Group { queries, count });
            }
        };
        let reads = |group: &mut dyn FnMut(&'static [Query], u32)| {
            group(&[Query::PointSelect], opt("point-selects"));
            if o.bool("range-selects") {
                group(&[Query::SimpleRange], opt("simple-ranges"));
                group(&[Query::SumRange], opt("sum-ranges"));
                group(&[Query::OrderRange], opt("order-ranges"));
                group(&[Query::DistinctRange], opt("distinct-ranges"));
            }
        };
        let writes = |group: &mut dyn FnMut(&'static [Query], u32)| {
            group(&[Query::IndexUpdate], opt("index-updates"));
            group(&[Query::NonIndexUpdate], opt("non-index-updates"));
            group(&[Query::Delete, Query::ReInsert], opt("delete-inserts"));
        };
        match variant {
            Variant::ReadOnly => reads(&mut group),
            Variant::ReadWrite => {
                reads(&mut group);
                writes(&mut group);
            }
            Variant::WriteOnly => writes(&mut group),
            // oltp_point_select forces point_selects=1.
            Variant::PointSelect => group(&[Query::PointSelect], 1),
            Variant::UpdateIndex => group(&[Query::IndexUpdate], opt("index-updates")),
            Variant::UpdateNonIndex => group(&[Query::NonIndexUpdate], opt("non-index-updates")),
            Variant::Insert if auto_inc => group(&[Query::AutoInsert], 1),
            Variant::Insert => group(&[Query::UniqueInsert], 1),
            Variant::Delete => group(&[Query::Delete], 1),
            // Both statements on one table (sysbench 0.4 had one table per
            // instance), each with its own id: seed 001's numbers (about two
            // random disk reads per transaction) say the rows differ.
            Variant::Simple => group(&[Query::PointSelectAll, Query::IndexUpdate], 1),
        }
        if trx && !steps.is_empty() {
            let writes = steps.iter().any(|s| match s {
                Step::Group { queries, .. } => queries.iter().any(|q| q.writes()),
                _ => false,
            });
            steps.insert(0, Step::Begin { writes });
            steps.push(Step::Commit);
        }
        let range_size = match variant {
            Variant::ReadOnly | Variant::ReadWrite => opt("range-size"),
            _ => 0,
        };
        Plan {
            steps,
            base: [usize::MAX; N_QUERIES],
            tables: opt("tables"),
            first_table: opt("table-offset") + 1,
            table_size: opt("table-size"),
            range_size,
        }
    }

    /// Lists every statement the plan executes, one per table, in order of
    /// first use, recording where each query's statements start.
    fn statements(&mut self, dialect: Dialect) -> Vec<StatementDef> {
        let mut out = Vec::new();
        for step in &self.steps {
            let Step::Group { queries, .. } = step else {
                continue;
            };
            for &q in *queries {
                let slot = &mut self.base[q as usize];
                if *slot != usize::MAX {
                    continue;
                }
                *slot = out.len();
                for n in self.first_table..self.first_table + self.tables {
                    out.push(StatementDef {
                        kind: q.kind().into(),
                        sql: render(dialect, &q.sql(n)),
                    });
                }
            }
        }
        out
    }
}

/// One of the oltp_* workloads, resolved.
pub struct Oltp {
    name: &'static str,
    options: OptionValues,
    schema: Schema,
    plan: Arc<Plan>,
    statements: Vec<StatementDef>,
    /// Whether the tables must have rows for the run to mean anything
    /// (everything but oltp_insert).
    need_rows: bool,
    /// oltp_insert with `--auto-inc=off`: the ids, unique across clients.
    unique: Option<Arc<UniqueSeq>>,
    rand: RandConfig,
}

impl Oltp {
    fn build(
        name: &'static str,
        variant: Variant,
        o: &OptionValues,
        dialect: Dialect,
        rand: RandConfig,
    ) -> anyhow::Result<Box<dyn Workload>> {
        let mut schema = Schema::from_options(name, o, dialect, rand, Some(o.u32("tables")))?;
        let mut unique = None;
        if variant == Variant::Insert {
            if !schema.auto_inc {
                // As sysbench: ids from the unique sequence could collide
                // with preloaded ones, so the tables start empty.
                schema.load_rows = 0;
                unique = Some(Arc::new(UniqueSeq::new(rand.seed)));
            } else if schema.secondary && dialect == Dialect::Sqlite {
                return Err(usage(
                    "oltp_insert with --secondary needs --auto-inc=off on SQLite: without \
                     a primary key, SQLite has no way to assign ids"
                        .to_string(),
                ));
            }
        }
        let mut plan = Plan::new(variant, o, schema.auto_inc);
        if plan.steps.is_empty() {
            return Err(usage(format!(
                "{name} would execute nothing: every statement count is 0"
            )));
        }
        let statements = plan.statements(dialect);
        Ok(Box::new(Oltp {
            name,
            options: o.clone(),
            schema,
            plan: Arc::new(plan),
            statements,
            need_rows: variant != Variant::Insert,
            unique,
            rand,
        }))
    }
}

/// The OLTP workloads and the transaction each runs.
const VARIANTS: [(&str, Variant); 9] = [
    ("oltp_read_only", Variant::ReadOnly),
    ("oltp_read_write", Variant::ReadWrite),
    ("oltp_write_only", Variant::WriteOnly),
    ("oltp_point_select", Variant::PointSelect),
    ("oltp_update_index", Variant::UpdateIndex),
    ("oltp_update_non_index", Variant::UpdateNonIndex),
    ("oltp_insert", Variant::Insert),
    ("oltp_delete", Variant::Delete),
    ("oltp_simple", Variant::Simple),
];

/// Builds the OLTP workload called `name` (one of [`VARIANTS`]).
pub fn build(
    name: &'static str,
    o: &OptionValues,
    d: Dialect,
    r: RandConfig,
) -> anyhow::Result<Box<dyn Workload>> {
    let (_, variant) = VARIANTS
        .iter()
        .find(|(n, _)| *n == name)
        .expect("the registry names OLTP workloads from VARIANTS");
    Oltp::build(name, *variant, o, d, r)
}

impl Workload for Oltp {
    fn name(&self) -> &'static str {
        self.name
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
        self.schema.prepare(connect, threads, progress)
    }

    fn cleanup(&self, conn: &mut dyn Connection) -> anyhow::Result<()> {
        self.schema.cleanup(conn)
    }

    fn check_prepared(&self, conn: &mut dyn Connection) -> anyhow::Result<()> {
        self.schema.check(conn, self.need_rows)
    }

    fn client(&self, _id: usize, _clients: usize, rng: Rng) -> Box<dyn ClientScript> {
        Box::new(OltpScript {
            plan: self.plan.clone(),
            rng,
            dist: Dist::new(self.rand.kind, self.rand.params),
            unique: self.unique.clone(),
            step: 0,
            rep: 0,
            pos: 0,
            table: 0,
            last_id: 0,
            bufs: std::array::from_fn(|i| Query::ALL[i].buffer()),
        })
    }

    fn options(&self) -> &OptionValues {
        &self.options
    }

    fn retry_also(&self) -> &'static [crate::driver::ErrorKind] {
        super::retry_also(self.schema.dialect)
    }
}

/// One client's walk through the plan. Parameter buffers live here and are
/// overwritten in place, so a steady-state transaction does not allocate.
struct OltpScript {
    plan: Arc<Plan>,
    rng: Rng,
    /// Draws ids (`--rand-type`).
    dist: Dist,
    unique: Option<Arc<UniqueSeq>>,
    /// Index of the current step in the plan.
    step: usize,
    /// Repetitions of the current group already yielded.
    rep: u32,
    /// Next query within the current repetition.
    pos: usize,
    /// Table (0-based) of the current group.
    table: usize,
    /// The id of the last DELETE, re-inserted by the INSERT that follows it.
    last_id: i64,
    /// Parameters of each query (index: position in [`Query::ALL`]).
    bufs: [Vec<Value>; N_QUERIES],
}

/// sysbench's `get_id`: an id over [1, table_size] from the distribution.
fn draw_id(rng: &mut Rng, dist: &mut Dist, table_size: u32) -> i64 {
    i64::from(dist.draw(rng, 1, table_size))
}

impl OltpScript {
    /// Draws fresh values into `q`'s buffer.
    fn fill(&mut self, q: Query) {
        let size = self.plan.table_size;
        let (rng, dist) = (&mut self.rng, &mut self.dist);
        let buf = &mut self.bufs[q as usize];
        match q {
            Query::PointSelect | Query::PointSelectAll | Query::IndexUpdate => {
                buf[0] = Value::Int(draw_id(rng, dist, size));
            }
            Query::Delete => {
                self.last_id = draw_id(rng, dist, size);
                buf[0] = Value::Int(self.last_id);
            }
            Query::SimpleRange | Query::SumRange | Query::OrderRange | Query::DistinctRange => {
                let id = draw_id(rng, dist, size);
                buf[0] = Value::Int(id);
                buf[1] = Value::Int(id + i64::from(self.plan.range_size) - 1);
            }
            Query::NonIndexUpdate => {
                rng.fill_template(C_TEMPLATE, buf[0].text_mut());
                buf[1] = Value::Int(draw_id(rng, dist, size));
            }
            Query::ReInsert | Query::UniqueInsert => {
                buf[0] = Value::Int(if q == Query::ReInsert {
                    self.last_id
                } else {
                    // sysbench: rand.unique() - 2^31, a u32 shifted into
                    // the range of a signed INTEGER column.
                    let seq = self
                        .unique
                        .as_ref()
                        .expect("UniqueInsert without a sequence");
                    i64::from(seq.next()) - (1 << 31)
                });
                buf[1] = Value::Int(draw_id(rng, dist, size));
                rng.fill_template(C_TEMPLATE, buf[2].text_mut());
                rng.fill_template(PAD_TEMPLATE, buf[3].text_mut());
            }
            Query::AutoInsert => {
                buf[0] = Value::Int(draw_id(rng, dist, size));
                rng.fill_template(C_TEMPLATE, buf[1].text_mut());
                rng.fill_template(PAD_TEMPLATE, buf[2].text_mut());
            }
        }
    }
}

impl ClientScript for OltpScript {
    fn start(&mut self) {
        self.step = 0;
        self.rep = 0;
        self.pos = 0;
    }

    fn next(&mut self) -> Option<Op<'_>> {
        loop {
            match *self.plan.steps.get(self.step)? {
                Step::Begin { writes } => {
                    self.step += 1;
                    return Some(Op::Begin { writes });
                }
                Step::Commit => {
                    self.step += 1;
                    return Some(Op::Commit);
                }
                Step::Group { queries, count } => {
                    if self.rep == count {
                        self.step += 1;
                        self.rep = 0;
                        continue;
                    }
                    if self.rep == 0 && self.pos == 0 {
                        // sysbench's get_table_num: uniform, once per group.
                        self.table = self.rng.uniform(1, self.plan.tables) as usize - 1;
                    }
                    let q = queries[self.pos];
                    self.pos += 1;
                    if self.pos == queries.len() {
                        self.pos = 0;
                        self.rep += 1;
                    }
                    self.fill(q);
                    let id = self.plan.base[q as usize] + self.table;
                    return Some(Op::Exec(id, &self.bufs[q as usize]));
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "oltp_tests.rs"]
mod tests;
