//! Where clients put their measurements.
//!
//! Clients are spread over a few shards, each behind its own mutex; a client
//! takes its shard's lock once per transaction to flush what it measured.
//! Sharding keeps memory bounded (histograms per shard, not per client, so a
//! thousand clients do not need a thousand sets of histograms) while keeping
//! lock contention negligible next to a database round trip.

use std::sync::Mutex;

use crate::driver::{ErrorKind, QueryClass};
use crate::stats::histogram::Histogram;

/// Event counters, summed over clients.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Counters {
    /// Transactions that completed (committed, or finished in autocommit).
    pub transactions: u64,
    /// Transactions given up: retries exhausted or an ignored error.
    pub failed: u64,
    /// Re-runs of a transaction after a retryable error.
    pub retries: u64,
    /// Statements that returned a result set.
    pub reads: u64,
    /// Statements without a result set that changed rows.
    pub writes: u64,
    /// Everything else: BEGIN, COMMIT, DML that changed nothing.
    pub others: u64,
    /// Errors by kind, indexed by [`ErrorKind::index`].
    pub errors: [u64; 6],
    /// Connections re-established during the run.
    pub reconnects: u64,
    /// Paced runs: transactions handed to a connection (from the schedule
    /// or a user's queue), by their intended start.
    pub arrivals: u64,
    /// Completed transactions slower than `--latency-limit` (from their
    /// intended start).
    pub late: u64,
    /// Arrivals already more than the latency limit behind schedule when a
    /// connection took them: not sent (pgbench's skipped transactions).
    pub skipped: u64,
    /// Arrivals a connection took after the end of the run: not sent.
    pub unstarted: u64,
}

impl Counters {
    pub fn queries(&self) -> u64 {
        self.reads + self.writes + self.others
    }

    pub fn total_errors(&self) -> u64 {
        self.errors.iter().sum()
    }

    pub fn add(&mut self, o: &Counters) {
        self.transactions += o.transactions;
        self.failed += o.failed;
        self.retries += o.retries;
        self.reads += o.reads;
        self.writes += o.writes;
        self.others += o.others;
        for (a, b) in self.errors.iter_mut().zip(o.errors) {
            *a += b;
        }
        self.reconnects += o.reconnects;
        self.arrivals += o.arrivals;
        self.late += o.late;
        self.skipped += o.skipped;
        self.unstarted += o.unstarted;
    }

    pub fn count_query(&mut self, class: QueryClass) {
        match class {
            QueryClass::Read => self.reads += 1,
            QueryClass::Write => self.writes += 1,
            QueryClass::Other => self.others += 1,
        }
    }

    pub fn count_error(&mut self, kind: ErrorKind) {
        self.errors[kind.index()] += 1;
    }
}

/// What one client measured during one transaction (all its attempts),
/// flushed to a shard when the transaction ends. Reused between transactions.
#[derive(Debug, Default)]
pub struct TxnBuffer {
    /// (statement kind index, nanoseconds) of each successful statement.
    pub statements: Vec<(u16, u64)>,
    pub counters: Counters,
    /// The transaction's type, for a workload with several.
    pub kind: Option<u16>,
}

impl TxnBuffer {
    pub fn clear(&mut self) {
        self.statements.clear();
        self.counters = Counters::default();
        self.kind = None;
    }
}

/// How long one transaction took, ns: `latency` from its intended start
/// (None for a failed one), `service` from when its connection began it,
/// and `lag` between the two (queued runs only; a closed loop's
/// transactions start when intended).
#[derive(Debug, Clone, Copy, Default)]
pub struct Timing {
    pub latency: Option<u64>,
    pub service: Option<u64>,
    pub lag: Option<u64>,
}

/// Measurements of the current reporting interval (warmup included).
#[derive(Debug, Default, Clone)]
pub struct IntervalAcc {
    pub counters: Counters,
    pub latency: Histogram,
    /// Schedule lag (queued runs).
    pub lag: Histogram,
}

/// Every shard's measured-window data, merged.
pub struct Totals {
    pub counters: Counters,
    /// From each transaction's intended start.
    pub latency: Histogram,
    /// Queued runs: from when a connection began each transaction, and
    /// the lag before it (both empty in a closed loop).
    pub service: Histogram,
    pub lag: Histogram,
    pub statements: Vec<Histogram>,
    /// Per transaction type: latency of the completed ones, and the
    /// failed ones.
    pub types: Vec<Histogram>,
    pub types_failed: Vec<u64>,
}

/// One shard's accumulated measurements.
#[derive(Debug)]
pub struct ShardData {
    /// Measured window only.
    pub counters: Counters,
    pub txn_latency: Histogram,
    pub service: Histogram,
    pub lag: Histogram,
    /// Per statement kind (index into the run's kind names).
    pub stmt_latency: Vec<Histogram>,
    /// Per transaction type (index into the workload's types).
    pub type_latency: Vec<Histogram>,
    pub type_failed: Vec<u64>,
    pub interval: IntervalAcc,
}

pub struct Recorder {
    shards: Vec<Mutex<ShardData>>,
}

impl Recorder {
    pub fn new(clients: usize, statement_kinds: usize, types: usize) -> Recorder {
        let n = clients.clamp(1, 16);
        let shards = (0..n)
            .map(|_| {
                Mutex::new(ShardData {
                    counters: Counters::default(),
                    txn_latency: Histogram::new(),
                    service: Histogram::new(),
                    lag: Histogram::new(),
                    stmt_latency: vec![Histogram::new(); statement_kinds],
                    type_latency: vec![Histogram::new(); types],
                    type_failed: vec![0; types],
                    interval: IntervalAcc::default(),
                })
            })
            .collect();
        Recorder { shards }
    }

    /// Flushes one finished (or failed) transaction.
    pub fn flush(&self, client: usize, buf: &TxnBuffer, t: Timing, measured: bool) {
        let mut s = self.shards[client % self.shards.len()]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        s.interval.counters.add(&buf.counters);
        if let Some(ns) = t.latency {
            s.interval.latency.record(ns);
        }
        if let Some(ns) = t.lag {
            s.interval.lag.record(ns);
        }
        if measured {
            s.counters.add(&buf.counters);
            if let Some(ns) = t.latency {
                s.txn_latency.record(ns);
            }
            if let (Some(ns), Some(lag)) = (t.service, t.lag) {
                s.service.record(ns);
                s.lag.record(lag);
            }
            for &(kind, ns) in &buf.statements {
                s.stmt_latency[kind as usize].record(ns);
            }
            if let Some(k) = buf
                .kind
                .map(usize::from)
                .filter(|&k| k < s.type_latency.len())
            {
                if let Some(ns) = t.latency {
                    s.type_latency[k].record(ns);
                }
                s.type_failed[k] += buf.counters.failed;
            }
        }
    }

    /// Takes and resets the current interval's measurements of every shard.
    pub fn take_interval(&self) -> IntervalAcc {
        let mut acc = IntervalAcc::default();
        for shard in &self.shards {
            let mut s = shard.lock().unwrap_or_else(|e| e.into_inner());
            acc.counters.add(&s.interval.counters);
            acc.latency.merge(&s.interval.latency);
            acc.lag.merge(&s.interval.lag);
            s.interval.counters = Counters::default();
            s.interval.latency.reset();
            s.interval.lag.reset();
        }
        acc
    }

    /// Merges every shard's measured-window data.
    pub fn totals(&self, statement_kinds: usize, types: usize) -> Totals {
        let mut t = Totals {
            counters: Counters::default(),
            latency: Histogram::new(),
            service: Histogram::new(),
            lag: Histogram::new(),
            statements: vec![Histogram::new(); statement_kinds],
            types: vec![Histogram::new(); types],
            types_failed: vec![0; types],
        };
        for shard in &self.shards {
            let s = shard.lock().unwrap_or_else(|e| e.into_inner());
            t.counters.add(&s.counters);
            t.latency.merge(&s.txn_latency);
            t.service.merge(&s.service);
            t.lag.merge(&s.lag);
            for (a, b) in t.statements.iter_mut().zip(&s.stmt_latency) {
                a.merge(b);
            }
            for (a, b) in t.types.iter_mut().zip(&s.type_latency) {
                a.merge(b);
            }
            for (a, b) in t.types_failed.iter_mut().zip(&s.type_failed) {
                *a += b;
            }
        }
        t
    }
}
