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
}

impl TxnBuffer {
    pub fn clear(&mut self) {
        self.statements.clear();
        self.counters = Counters::default();
    }
}

/// Measurements of the current reporting interval (warmup included).
#[derive(Debug, Default, Clone)]
pub struct IntervalAcc {
    pub counters: Counters,
    pub latency: Histogram,
}

/// One shard's accumulated measurements.
#[derive(Debug)]
pub struct ShardData {
    /// Measured window only.
    pub counters: Counters,
    pub txn_latency: Histogram,
    /// Per statement kind (index into the run's kind names).
    pub stmt_latency: Vec<Histogram>,
    pub interval: IntervalAcc,
}

pub struct Recorder {
    shards: Vec<Mutex<ShardData>>,
}

impl Recorder {
    pub fn new(clients: usize, statement_kinds: usize) -> Recorder {
        let n = clients.clamp(1, 16);
        let shards = (0..n)
            .map(|_| {
                Mutex::new(ShardData {
                    counters: Counters::default(),
                    txn_latency: Histogram::new(),
                    stmt_latency: vec![Histogram::new(); statement_kinds],
                    interval: IntervalAcc::default(),
                })
            })
            .collect();
        Recorder { shards }
    }

    /// Flushes one finished transaction. `latency` is None for a failed one.
    pub fn flush(&self, client: usize, buf: &TxnBuffer, latency: Option<u64>, measured: bool) {
        let mut s = self.shards[client % self.shards.len()]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        s.interval.counters.add(&buf.counters);
        if let Some(ns) = latency {
            s.interval.latency.record(ns);
        }
        if measured {
            s.counters.add(&buf.counters);
            if let Some(ns) = latency {
                s.txn_latency.record(ns);
            }
            for &(kind, ns) in &buf.statements {
                s.stmt_latency[kind as usize].record(ns);
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
            s.interval.counters = Counters::default();
            s.interval.latency.reset();
        }
        acc
    }

    /// Merges every shard's measured-window data.
    pub fn totals(&self, statement_kinds: usize) -> (Counters, Histogram, Vec<Histogram>) {
        let mut counters = Counters::default();
        let mut txn = Histogram::new();
        let mut stmts = vec![Histogram::new(); statement_kinds];
        for shard in &self.shards {
            let s = shard.lock().unwrap_or_else(|e| e.into_inner());
            counters.add(&s.counters);
            txn.merge(&s.txn_latency);
            for (a, b) in stmts.iter_mut().zip(&s.stmt_latency) {
                a.merge(b);
            }
        }
        (counters, txn, stmts)
    }
}
