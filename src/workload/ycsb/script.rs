//! One YCSB client's operations (`CoreWorkload.doTransaction`), and the
//! rows the loader writes (`doInsert` of the load phase).
//!
//! The parameters live in one buffer laid out `[field0 … field{n-1}, key,
//! scan length]`, so that every statement's parameters are one slice of
//! it: a read or a scan's `[key(, length)]`, an update of every field or
//! an insert `[fields…, key]` (the statements list the key last), an
//! update of one field `[value, key]` with the value written just before
//! the key.

use std::sync::Arc;

use super::keys::{Chooser, InsertKeys};
use super::{Config, Operation, Statements};
use crate::driver::Value;
use crate::rand::ycsb::{uniform_below, SkewedLatest, Zipfian};
use crate::rand::Rng;
use crate::workload::loader::{RowSource, Rows as LoadRows};
use crate::workload::{ClientScript, Op};

/// YCSB's field values: `RandomByteIterator`'s printable characters,
/// from space to `~` (here uniformly over the 95).
fn fill_value(rng: &mut Rng, len: usize, out: &mut String) {
    out.clear();
    let mut left = len;
    while left > 0 {
        let mut bits = rng.next_u64();
        for _ in 0..left.min(8) {
            out.push(char::from(b' ' + (bits & 0xff) as u8 % 95));
            bits >>= 8;
        }
        left = left.saturating_sub(8);
    }
}

/// The operation chooser (YCSB's `DiscreteGenerator` over the shares).
#[derive(Debug, Clone)]
struct Mix {
    /// Cumulative shares and the type index each ends at.
    steps: Vec<(f64, Operation, u16)>,
}

impl Mix {
    fn new(types: &[(Operation, &'static str, f64)]) -> Mix {
        let mut sum = 0.0;
        let steps = types
            .iter()
            .enumerate()
            .map(|(i, (op, _, p))| {
                sum += p;
                (sum, *op, i as u16)
            })
            .collect();
        Mix { steps }
    }

    fn draw(&self, rng: &mut Rng) -> (Operation, u16) {
        let total = self.steps.last().map_or(1.0, |s| s.0);
        let u = rng.next_f64() * total;
        let s = self
            .steps
            .iter()
            .find(|s| u < s.0)
            .unwrap_or_else(|| self.steps.last().expect("a share above zero"));
        (s.1, s.2)
    }
}

/// The scan length chooser (`scanlengthdistribution`).
#[derive(Debug, Clone)]
enum ScanLength {
    Uniform { min: u32, span: u32 },
    Zipfian(Zipfian),
}

impl ScanLength {
    fn next(&mut self, rng: &mut Rng) -> i64 {
        match self {
            ScanLength::Uniform { min, span } => {
                i64::from(*min) + uniform_below(rng, i64::from(*span))
            }
            ScanLength::Zipfian(z) => z.next(rng),
        }
    }
}

pub struct Script {
    config: Config,
    ids: Statements,
    mix: Mix,
    chooser: Chooser,
    scan: ScanLength,
    inserts: Arc<InsertKeys>,
    rng: Rng,
    /// `[fields…, key, scan length]`.
    params: Vec<Value>,
    op: Operation,
    kind: u16,
    /// The field a one-field read or update names.
    field: usize,
    /// Operations of the current one yielded (a read-modify-write has two).
    step: u8,
    /// The insert number taken and not yet acknowledged.
    pending: Option<i64>,
}

impl Script {
    pub fn new(
        config: &Config,
        ids: &Statements,
        types: &[(Operation, &'static str, f64)],
        inserts: Arc<InsertKeys>,
        latest: &SkewedLatest,
        rng: Rng,
    ) -> Script {
        let n = config.fields as usize;
        let records = i64::from(config.records);
        let scan = if config.scan_zipfian {
            ScanLength::Zipfian(Zipfian::new(
                i64::from(config.min_scan),
                i64::from(config.max_scan),
                crate::rand::ycsb::ZIPFIAN_CONSTANT,
            ))
        } else {
            ScanLength::Uniform {
                min: config.min_scan,
                span: config.max_scan - config.min_scan + 1,
            }
        };
        let mut params = vec![Value::Text(String::with_capacity(config.field_length as usize)); n];
        params.push(Value::Text(String::with_capacity(32)));
        params.push(Value::Int(0));
        Script {
            chooser: Chooser::new(config.request, records, config.expected_new_keys(), latest),
            config: config.clone(),
            ids: ids.clone(),
            mix: Mix::new(types),
            scan,
            inserts,
            rng,
            params,
            op: Operation::Read,
            kind: 0,
            field: 0,
            step: 0,
            pending: None,
        }
    }

    fn fields(&self) -> usize {
        self.config.fields as usize
    }

    /// Fills field `i`'s value with fresh characters.
    fn fill(&mut self, i: usize) {
        let len = self.config.field_length as usize;
        fill_value(&mut self.rng, len, self.params[i].text_mut());
    }

    fn acknowledge(&mut self) {
        if let Some(k) = self.pending.take() {
            self.inserts.ack(k);
        }
    }

    /// The statement and parameters of step `step` of the operation.
    fn statement(&self, step: u8) -> Option<(usize, std::ops::Range<usize>)> {
        let n = self.fields();
        let key = n..n + 1;
        let ids = &self.ids;
        let read = || match ids.read_all {
            Some(id) => (id, key.clone()),
            None => (ids.read_field[self.field], key.clone()),
        };
        let update = || match ids.update_all {
            Some(id) => (id, 0..n + 1),
            None => (ids.update_field[self.field], n - 1..n + 1),
        };
        Some(match (self.op, step) {
            (Operation::Read, 0) => read(),
            (Operation::Update, 0) => update(),
            (Operation::Insert, 0) => (ids.insert.expect("insert prepared"), 0..n + 1),
            (Operation::Scan, 0) => match ids.scan_all {
                Some(id) => (id, n..n + 2),
                None => (ids.scan_field[self.field], n..n + 2),
            },
            (Operation::ReadModifyWrite, 0) => read(),
            (Operation::ReadModifyWrite, 1) => update(),
            _ => return None,
        })
    }
}

impl ClientScript for Script {
    fn start(&mut self) {
        // A retry starts over with fresh values: an insert's number is
        // given up (acknowledged), as YCSB's `finally` does.
        self.acknowledge();
        self.step = 0;
        let (op, kind) = self.mix.draw(&mut self.rng);
        self.op = op;
        self.kind = kind;
        let n = self.fields();
        let keynum = match op {
            Operation::Insert => {
                let k = self.inserts.take();
                self.pending = Some(k);
                k
            }
            _ => self.chooser.next(self.inserts.last(), &mut self.rng),
        };
        self.config.names.write(keynum, self.params[n].text_mut());
        self.field = uniform_below(&mut self.rng, n as i64) as usize;
        match op {
            Operation::Insert => (0..n).for_each(|i| self.fill(i)),
            Operation::Update | Operation::ReadModifyWrite if self.config.write_all => {
                (0..n).for_each(|i| self.fill(i))
            }
            // One field's new value sits just before the key.
            Operation::Update | Operation::ReadModifyWrite => self.fill(n - 1),
            Operation::Scan => self.params[n + 1] = Value::Int(self.scan.next(&mut self.rng)),
            Operation::Read => {}
        }
    }

    fn next(&mut self) -> Option<Op<'_>> {
        let (id, range) = self.statement(self.step)?;
        self.step += 1;
        Some(Op::Exec(id, &self.params[range]))
    }

    fn kind(&self) -> Option<u16> {
        Some(self.kind)
    }

    fn end(&mut self, _done: bool) {
        self.acknowledge();
    }
}

impl Drop for Script {
    fn drop(&mut self) {
        // A run stopped mid-insert: its number must not hold back `last`
        // for the clients still running.
        self.acknowledge();
    }
}

/// The load's rows: row `r` (from 1) is the record whose key is the r-th
/// in key order, its fields drawn from a stream of its own number, so the
/// data do not depend on how many loaders wrote them.
pub struct Rows {
    order: Vec<u32>,
    config: Config,
    seed: u64,
}

/// Above this many records the load writes them in number order: the
/// sort would hold 20 bytes a record.
const MOST_SORTED: u32 = 50_000_000;

impl Rows {
    pub fn new(config: &Config, seed: u64) -> Rows {
        let order = if config.records <= MOST_SORTED {
            config.names.sorted(config.records)
        } else {
            Vec::new()
        };
        Rows {
            order,
            config: config.clone(),
            seed: seed ^ 0x5943_5342_4c4f_4144, // "YCSBLOAD"
        }
    }

    /// The record number of row `r` (from 1).
    fn record(&self, r: u32) -> u32 {
        self.order.get(r as usize - 1).copied().unwrap_or(r - 1)
    }
}

impl RowSource for Rows {
    fn rows(&self, _table: usize, first: u32, last: u32) -> LoadRows<'_> {
        let mut r = first;
        let len = self.config.field_length as usize;
        Box::new(move |row| {
            if r > last {
                return false;
            }
            let k = self.record(r);
            let mut rng = Rng::for_client(self.seed, u64::from(k));
            for _ in 0..self.config.fields {
                let mut value = String::with_capacity(len);
                fill_value(&mut rng, len, &mut value);
                row.push(Value::Text(value));
            }
            row.push(Value::Text(self.config.names.name(i64::from(k))));
            r += 1;
            true
        })
    }
}
