//! `select_random_points` and `select_random_ranges` (sysbench 1.0.20),
//! written to test MariaDB's segmented key cache: one SELECT per event on
//! sbtest1, by `k`.
//!
//! sysbench splits `[0, table-size]` into one slice per thread so that the
//! threads' lookups do not overlap: thread `i` of `n` draws from
//! `[size·i/n, size·(i+1)/n]` with the configured distribution.

use super::schema::{render, usage, Schema};
use crate::driver::{Connection, Dialect, Value};
use crate::rand::dist::Dist;
use crate::rand::RandConfig;
use crate::rand::Rng;
use crate::util::progress::Progress;
use crate::workload::{ClientScript, Connector, Op, OptionValues, StatementDef, Workload};

/// Which of the two scripts.
#[derive(Debug, Clone, Copy)]
enum Mode {
    /// `WHERE k IN (?, …)` with `points` values.
    Points { points: u32 },
    /// `WHERE k BETWEEN ? AND ? OR …`, `ranges` ranges of `delta`.
    Ranges { ranges: u32, delta: u32 },
}

pub struct SelectRandom {
    name: &'static str,
    options: OptionValues,
    schema: Schema,
    mode: Mode,
    statements: Vec<StatementDef>,
}

pub fn build_points(
    _name: &'static str,
    o: &OptionValues,
    d: Dialect,
    r: RandConfig,
) -> anyhow::Result<Box<dyn Workload>> {
    let points = o.u32("random-points");
    if points == 0 {
        return Err(usage("--random-points must be at least 1".to_string()));
    }
    SelectRandom::build("select_random_points", Mode::Points { points }, o, d, r)
}

pub fn build_ranges(
    _name: &'static str,
    o: &OptionValues,
    d: Dialect,
    r: RandConfig,
) -> anyhow::Result<Box<dyn Workload>> {
    let ranges = o.u32("number-of-ranges");
    if ranges == 0 {
        return Err(usage("--number-of-ranges must be at least 1".to_string()));
    }
    let delta = o.u32("delta");
    SelectRandom::build(
        "select_random_ranges",
        Mode::Ranges { ranges, delta },
        o,
        d,
        r,
    )
}

impl SelectRandom {
    fn build(
        name: &'static str,
        mode: Mode,
        o: &OptionValues,
        dialect: Dialect,
        rand: RandConfig,
    ) -> anyhow::Result<Box<dyn Workload>> {
        let schema = Schema::from_options(name, o, dialect, rand, None)?;
        let table = schema.offset + 1;
        // sysbench's text, on one line instead of its indented block.
        let (kind, sql) = match mode {
            Mode::Points { points } => (
                "random_points",
                format!(
                    "SELECT id, k, c, pad FROM sbtest{table} WHERE k IN ({})",
                    vec!["?"; points as usize].join(", ")
                ),
            ),
            Mode::Ranges { ranges, .. } => (
                "random_ranges",
                format!(
                    "SELECT count(k) FROM sbtest{table} WHERE {}",
                    vec!["k BETWEEN ? AND ?"; ranges as usize].join(" OR ")
                ),
            ),
        };
        Ok(Box::new(SelectRandom {
            name,
            options: o.clone(),
            schema,
            mode,
            statements: vec![StatementDef {
                kind: kind.into(),
                sql: render(dialect, &sql),
            }],
        }))
    }
}

impl Workload for SelectRandom {
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
        self.schema.check(conn, true)
    }

    fn client(&self, id: usize, clients: usize, rng: Rng) -> Box<dyn ClientScript> {
        let n = match self.mode {
            Mode::Points { points } => points as usize,
            Mode::Ranges { ranges, .. } => 2 * ranges as usize,
        };
        Box::new(SelectRandomScript {
            mode: self.mode,
            slice: slice(u64::from(self.schema.table_size), id, clients.max(1)),
            rng,
            dist: Dist::new(self.schema.rand.kind, self.schema.rand.params),
            params: vec![Value::Int(0); n],
            done: false,
        })
    }

    fn options(&self) -> &OptionValues {
        &self.options
    }

    fn retry_also(&self) -> &'static [crate::driver::ErrorKind] {
        super::retry_also(self.schema.dialect)
    }
}

struct SelectRandomScript {
    mode: Mode,
    /// The slice of `k` this client reads: `[lo, hi]`.
    slice: (u32, u32),
    rng: Rng,
    dist: Dist,
    params: Vec<Value>,
    /// The statement of this transaction has been yielded.
    done: bool,
}

/// sysbench's slice for thread `i` of `n`: `[size·i/n, size·(i+1)/n]`
/// (its `rlen · thread_id` truncated to an integer).
fn slice(table_size: u64, i: usize, n: usize) -> (u32, u32) {
    let (i, n) = (i as u64 % n as u64, n as u64);
    let lo = table_size * i / n;
    let hi = table_size * (i + 1) / n;
    (lo as u32, hi as u32)
}

impl ClientScript for SelectRandomScript {
    fn start(&mut self) {
        self.done = false;
        let (lo, hi) = self.slice;
        match self.mode {
            Mode::Points { .. } => {
                for p in &mut self.params {
                    *p = Value::Int(i64::from(self.dist.draw(&mut self.rng, lo, hi)));
                }
            }
            Mode::Ranges { delta, .. } => {
                for pair in self.params.chunks_exact_mut(2) {
                    let v = i64::from(self.dist.draw(&mut self.rng, lo, hi));
                    pair[0] = Value::Int(v);
                    pair[1] = Value::Int(v + i64::from(delta));
                }
            }
        }
    }

    fn next(&mut self) -> Option<Op<'_>> {
        if self.done {
            return None;
        }
        self.done = true;
        Some(Op::Exec(0, &self.params))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::sysbench::testutil::{
        assert_all, build, client, drive, run_txn, try_build, Counts, TestDb,
    };

    #[test]
    fn slices_partition_the_table() {
        assert_eq!(slice(10_000, 0, 1), (0, 10_000));
        assert_eq!(slice(10_000, 0, 3), (0, 3333));
        assert_eq!(slice(10_000, 1, 3), (3333, 6666));
        assert_eq!(slice(10_000, 2, 3), (6666, 10_000));
        // An id beyond the count wraps instead of reading past the table.
        assert_eq!(slice(10_000, 4, 3), (3333, 6666));
    }

    #[test]
    fn points_counts_and_text() {
        let w = build("select_random_points", &[("random-points", "3")]);
        assert_eq!(
            w.statements()[0].sql,
            "SELECT id, k, c, pad FROM sbtest1 WHERE k IN (?, ?, ?)"
        );
        let c = drive("select_random_points", &[("table-size", "100")], 20);
        assert_all(&c, Counts::new(1, 0, 0));
    }

    #[test]
    fn ranges_counts_and_text() {
        let w = build("select_random_ranges", &[("number-of-ranges", "2")]);
        assert_eq!(
            w.statements()[0].sql,
            "SELECT count(k) FROM sbtest1 WHERE k BETWEEN ? AND ? OR k BETWEEN ? AND ?"
        );
        let c = drive("select_random_ranges", &[("table-size", "100")], 20);
        assert_all(&c, Counts::new(1, 0, 0));
    }

    #[test]
    fn each_client_stays_in_its_slice() {
        let db = TestDb::new();
        let w = build(
            "select_random_ranges",
            &[("table-size", "1000"), ("delta", "3")],
        );
        db.prepare(w.as_ref(), 1).unwrap();
        let mut conn = db.connect();
        let mut scripts: Vec<_> = (0..4)
            .map(|i| client(w.as_ref(), &mut conn, i, 4))
            .collect();
        for (i, s) in scripts.iter_mut().enumerate() {
            for _ in 0..20 {
                s.start();
                let Some(Op::Exec(0, p)) = s.next() else {
                    panic!()
                };
                for pair in p.chunks(2) {
                    let (Value::Int(a), Value::Int(b)) = (&pair[0], &pair[1]) else {
                        panic!()
                    };
                    let lo = 250 * i as i64;
                    assert!((lo..=lo + 250).contains(a), "client {i}: {a}");
                    assert_eq!(b - a, 3);
                }
                assert!(s.next().is_none());
            }
            assert_eq!(run_txn(s.as_mut(), &mut conn), Counts::new(1, 0, 0));
        }
        drop(scripts);
        // A run with a single client reads the whole table.
        let mut s = w.client(0, 1, Rng::new(1));
        s.start();
        let Some(Op::Exec(_, p)) = s.next() else {
            panic!()
        };
        assert!(p
            .iter()
            .all(|v| matches!(v, Value::Int(x) if (0..=1000).contains(x))));
    }

    #[test]
    fn zero_points_is_a_usage_error() {
        assert!(try_build("select_random_points", &[("random-points", "0")]).is_err());
        assert!(try_build("select_random_ranges", &[("number-of-ranges", "0")]).is_err());
        // sysbench refuses --tables here; so does the option table.
        assert!(try_build("select_random_points", &[("tables", "2")]).is_err());
    }
}
