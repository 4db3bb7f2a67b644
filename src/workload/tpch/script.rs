//! One TPC-H stream: the power test's (RF1, the 22 queries in stream 0's
//! order, RF2), a throughput test's query stream (the 22 queries in its
//! row of Appendix A), or its refresh stream (S pairs of RF1 and RF2).
//! Each query and each refresh function is one transaction of the run,
//! counted and timed under its own type, so a query's time is its
//! type's (one sample each in a power test: exact).
//!
//! A run measured by its rounds (the default) runs each stream once: the
//! stream's own count ([`ClientScript::rounds`]). A run with `--time`
//! goes on: a query stream takes the next row of Appendix A each pass.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use super::params::{self, ORDERS};
use super::rows::Refresh;
use crate::driver::{StmtId, Value};
use crate::rand::Rng;
use crate::workload::{ClientScript, Op};

/// The next refresh sets to insert and to delete, shared by the run's
/// streams (set by `Workload::ready` from the orders in the table).
#[derive(Debug, Default)]
pub struct Sets {
    pub insert: AtomicI64,
    pub delete: AtomicI64,
}

/// One step of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Query(u8),
    Rf1,
    Rf2,
}

/// The type index of a step in `transaction_types`: Q1–Q22, RF1, RF2.
pub fn kind(step: Step) -> u16 {
    match step {
        Step::Query(q) => u16::from(q) - 1,
        Step::Rf1 => 22,
        Step::Rf2 => 23,
    }
}

/// What stream client `id` of `clients` runs, one pass.
pub fn plan(id: usize, clients: usize, refresh: bool) -> (Vec<Step>, usize) {
    let queries = |row: usize| ORDERS[row % ORDERS.len()].iter().map(|&q| Step::Query(q));
    match (refresh, clients, id) {
        (true, 1, _) => {
            let mut steps = vec![Step::Rf1];
            steps.extend(queries(0));
            steps.push(Step::Rf2);
            (steps, 0)
        }
        (true, _, 0) => {
            let pairs = clients - 1;
            ((0..pairs).flat_map(|_| [Step::Rf1, Step::Rf2]).collect(), 0)
        }
        (true, _, s) => (queries(s).collect(), s),
        (false, 1, _) => (queries(0).collect(), 0),
        (false, _, s) => (queries(s + 1).collect(), s + 1),
    }
}

/// Statement ids: the 22 queries, then RF1's two inserts and RF2's two
/// deletes.
#[derive(Debug, Clone, Copy)]
pub struct Ids {
    pub query: [StmtId; 22],
    pub insert_order: StmtId,
    pub insert_line: StmtId,
    pub delete_lines: StmtId,
    pub delete_order: StmtId,
    /// The statement that binds Q15's dates before it, where the query
    /// reads them from user variables (`queries::q15_bound`).
    pub q15_set: Option<StmtId>,
}

pub struct Script {
    steps: Vec<Step>,
    /// Its row of Appendix A (query streams), for the next passes.
    row: usize,
    pass: usize,
    pos: usize,
    step: Step,
    phase: u8,
    /// The step's values are still to be drawn.
    fresh: bool,
    sf: f64,
    qualification: bool,
    rng: Rng,
    ids: Ids,
    sets: Arc<Sets>,
    params: Vec<Value>,
    refresh: Option<Refresh>,
    keys: Vec<Value>,
}

impl Script {
    pub fn new(
        (steps, row): (Vec<Step>, usize),
        sf: f64,
        qualification: bool,
        rng: Rng,
        ids: Ids,
        sets: Arc<Sets>,
    ) -> Script {
        let mut s = Script {
            step: steps[0],
            steps,
            row,
            pass: 0,
            pos: 0,
            phase: 0,
            fresh: true,
            sf,
            qualification,
            rng,
            ids,
            sets,
            params: Vec::new(),
            refresh: None,
            keys: Vec::new(),
        };
        // The first step's values before the run starts (the first RF1
        // builds dbgen's text pool, seconds in a debug build).
        s.set_up();
        s
    }

    /// The step at the current position: a later pass of a query stream
    /// takes the next row of Appendix A.
    fn current(&self) -> Step {
        match self.steps[self.pos] {
            Step::Query(_) if self.pass > 0 && self.steps.len() == 22 => {
                let row = (self.row + self.pass) % ORDERS.len();
                Step::Query(ORDERS[row][self.pos])
            }
            s => s,
        }
    }

    /// Draws the step's values: a query's parameters, a refresh set.
    fn set_up(&mut self) {
        self.fresh = false;
        self.step = self.current();
        match self.step {
            Step::Query(q) => {
                let rng = (!self.qualification).then_some(&mut self.rng);
                params::draw(q, self.sf, rng, &mut self.params);
            }
            Step::Rf1 => {
                let n = self.sets.insert.fetch_add(1, Ordering::Relaxed);
                self.refresh = Some(Refresh::inserts(self.sf, n));
            }
            Step::Rf2 => {
                let n = self.sets.delete.fetch_add(1, Ordering::Relaxed);
                self.keys = Refresh::deletes(self.sf, n);
            }
        }
    }
}

impl ClientScript for Script {
    fn start(&mut self) {
        // A retry runs the same step with the same values: a refresh
        // set is claimed once.
        if self.fresh {
            self.set_up();
        }
        self.phase = 0;
    }

    fn next(&mut self) -> Option<Op<'_>> {
        let phase = self.phase;
        self.phase += 1;
        let ids = self.ids;
        match self.step {
            Step::Query(15) if ids.q15_set.is_some() => match phase {
                0 => ids.q15_set.map(|set| Op::Exec(set, &self.params)),
                1 => Some(Op::Exec(ids.query[14], &[])),
                _ => None,
            },
            Step::Query(q) => {
                (phase == 0).then(|| Op::Exec(ids.query[q as usize - 1], &self.params))
            }
            Step::Rf1 => {
                let r = self.refresh.as_ref()?;
                match phase {
                    0 => Some(Op::Begin { writes: true }),
                    1 => Some(Op::Batch(ids.insert_order, &r.orders, r.order_rows)),
                    2 => Some(Op::Batch(ids.insert_line, &r.lines, r.line_rows)),
                    3 => Some(Op::Commit),
                    _ => None,
                }
            }
            Step::Rf2 => match phase {
                0 => Some(Op::Begin { writes: true }),
                1 => Some(Op::Batch(ids.delete_lines, &self.keys, self.keys.len())),
                2 => Some(Op::Batch(ids.delete_order, &self.keys, self.keys.len())),
                3 => Some(Op::Commit),
                _ => None,
            },
        }
    }

    fn kind(&self) -> Option<u16> {
        Some(kind(self.step))
    }

    fn end(&mut self, _done: bool) {
        self.refresh = None;
        self.pos += 1;
        if self.pos == self.steps.len() {
            // The pass is over: a run of one pass ends here, and the next
            // pass (`--time`) draws its first step when it starts.
            self.pos = 0;
            self.pass += 1;
            self.fresh = true;
        } else {
            // The next step's values now, outside any step's time (RF1
            // generates its orders and lines).
            self.set_up();
        }
    }

    fn rounds(&self) -> Option<u64> {
        Some(self.steps.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_the_specs() {
        let (power, _) = plan(0, 1, true);
        assert_eq!(power.len(), 24);
        assert_eq!(power[0], Step::Rf1);
        assert_eq!(power[1], Step::Query(14));
        assert_eq!(power[23], Step::Rf2);
        let (refresh, _) = plan(0, 4, true);
        assert_eq!(refresh, [Step::Rf1, Step::Rf2].repeat(3));
        let (s1, row) = plan(1, 4, true);
        assert_eq!((s1[0], row), (Step::Query(21), 1));
        let (s2, _) = plan(0, 2, false);
        assert_eq!(s2[0], Step::Query(21));
        assert_eq!(plan(0, 1, false).0.len(), 22);
    }
}
