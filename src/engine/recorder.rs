//! Where clients put their measurements.
//!
//! Clients are spread over a few shards, each behind its own mutex; a client
//! takes its shard's lock once per transaction to flush what it measured.
//! Sharding keeps memory bounded (histograms per shard, not per client, so a
//! thousand clients do not need a thousand sets of histograms) while keeping
//! lock contention negligible next to a database round trip.
//!
//! A shard holds only what came in since the timekeeper last took it:
//! the current interval, and the measured window's part since the last
//! [`Recorder::collect`] (every [`COLLECT_EVERY`]), which moves it into
//! the run's totals, kept once. So what the recorder holds depends on the
//! clients and on one period's latencies, not on the run's length. The
//! chunks a period left unused go to the shard's spare, not back to the
//! allocator: the next period's tails take them, so a settled run
//! allocates nothing (see `stats::histogram`'s "Memory").

use std::sync::Mutex;

use crate::driver::{ErrorKind, QueryClass};
use crate::stats::histogram::{Histogram, Spare};

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
    pub errors: [u64; ErrorKind::COUNT],
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

    /// Counts `n` executions of one class (1, or a batch's rows).
    #[inline]
    pub fn count_queries(&mut self, class: QueryClass, n: u64) {
        match class {
            QueryClass::Read => self.reads += n,
            QueryClass::Write => self.writes += n,
            QueryClass::Other => self.others += n,
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

/// Measurements of the measured window: a shard's since the timekeeper
/// last collected them, or the run's (the recorder's totals).
#[derive(Debug, Clone)]
pub struct Totals {
    pub counters: Counters,
    /// From each transaction's intended start.
    pub latency: Histogram,
    /// Queued runs: from when a connection began each transaction, and
    /// the lag before it (both empty in a closed loop).
    pub service: Histogram,
    pub lag: Histogram,
    /// Per statement kind (index into the run's kind names).
    pub statements: Vec<Histogram>,
    /// Per transaction type (index into the workload's types): latency of
    /// the completed ones, and the failed ones.
    pub types: Vec<Histogram>,
    pub types_failed: Vec<u64>,
}

impl Totals {
    fn new(statement_kinds: usize, types: usize) -> Totals {
        Totals {
            counters: Counters::default(),
            latency: Histogram::new(),
            service: Histogram::new(),
            lag: Histogram::new(),
            statements: vec![Histogram::new(); statement_kinds],
            types: vec![Histogram::new(); types],
            types_failed: vec![0; types],
        }
    }

    /// Moves everything into `dst` and starts again from nothing, giving
    /// the histogram chunks that held no value to `spare`
    /// (`Histogram::drain_into_spare`).
    fn drain_into(&mut self, dst: &mut Totals, spare: &mut Spare) {
        dst.counters.add(&self.counters);
        self.counters = Counters::default();
        self.latency.drain_into_spare(&mut dst.latency, spare);
        self.service.drain_into_spare(&mut dst.service, spare);
        self.lag.drain_into_spare(&mut dst.lag, spare);
        for (a, b) in self.statements.iter_mut().zip(&mut dst.statements) {
            a.drain_into_spare(b, spare);
        }
        for (a, b) in self.types.iter_mut().zip(&mut dst.types) {
            a.drain_into_spare(b, spare);
        }
        for (a, b) in self.types_failed.iter_mut().zip(&mut dst.types_failed) {
            *b += std::mem::take(a);
        }
    }

    fn heap_bytes(&self) -> usize {
        [&self.latency, &self.service, &self.lag]
            .into_iter()
            .chain(&self.statements)
            .chain(&self.types)
            .map(Histogram::heap_bytes)
            .sum()
    }
}

/// One shard's measurements since the timekeeper last took them.
#[derive(Debug)]
pub struct ShardData {
    /// The measured window's part, moved into the run's totals by
    /// [`Recorder::collect`].
    pub window: Totals,
    pub interval: IntervalAcc,
    /// The chunks this shard's histograms gave back, for their next tails.
    spare: Spare,
}

/// How often the timekeeper should [`Recorder::collect`]: often enough
/// that a shard holds one short period's latencies, rarely enough that
/// moving them costs nothing next to the run (a few hundred thousand
/// additions a second, under each shard's lock in turn).
pub const COLLECT_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Where clients put their measurements; see the module docs.
///
/// The measured window's histograms are kept once for the run, not once
/// per shard: a shard's histogram that lived as long as the run would hold
/// a chunk for every power of two a rare tail latency ever reached in that
/// shard, and sixteen shards of a dozen histograms each gained megabytes
/// an hour that way. Shards hold what came in since the last
/// [`Recorder::collect`], which moves it into the totals and gives the
/// chunks that period left unused to the shard's spare.
pub struct Recorder {
    shards: Vec<Mutex<ShardData>>,
    /// The measured window up to the last collect.
    totals: Mutex<Totals>,
}

impl Recorder {
    pub fn new(clients: usize, statement_kinds: usize, types: usize) -> Recorder {
        let n = clients.clamp(1, 16);
        let shards = (0..n)
            .map(|_| {
                Mutex::new(ShardData {
                    window: Totals::new(statement_kinds, types),
                    interval: IntervalAcc::default(),
                    spare: Spare::new(),
                })
            })
            .collect();
        Recorder {
            shards,
            totals: Mutex::new(Totals::new(statement_kinds, types)),
        }
    }

    /// Flushes one finished (or failed) transaction.
    pub fn flush(&self, client: usize, buf: &TxnBuffer, t: Timing, measured: bool) {
        let mut guard = self.shards[client % self.shards.len()]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let s = &mut *guard;
        let spare = &mut s.spare;
        s.interval.counters.add(&buf.counters);
        if let Some(ns) = t.latency {
            s.interval.latency.record_spare(ns, spare);
        }
        if let Some(ns) = t.lag {
            s.interval.lag.record_spare(ns, spare);
        }
        if measured {
            let w = &mut s.window;
            w.counters.add(&buf.counters);
            if let Some(ns) = t.latency {
                w.latency.record_spare(ns, spare);
            }
            if let (Some(ns), Some(lag)) = (t.service, t.lag) {
                w.service.record_spare(ns, spare);
                w.lag.record_spare(lag, spare);
            }
            for &(kind, ns) in &buf.statements {
                w.statements[kind as usize].record_spare(ns, spare);
            }
            if let Some(k) = buf.kind.map(usize::from).filter(|&k| k < w.types.len()) {
                if let Some(ns) = t.latency {
                    w.types[k].record_spare(ns, spare);
                }
                w.types_failed[k] += buf.counters.failed;
            }
        }
    }

    /// Takes and resets the current interval's measurements of every shard.
    /// With `trim`, the shards' interval histograms give back the chunks
    /// that held no value in this interval (once per [`COLLECT_EVERY`],
    /// not every interval: intervals of a few milliseconds would otherwise
    /// free and allocate their chunks over and over).
    pub fn take_interval(&self, trim: bool) -> IntervalAcc {
        let mut acc = IntervalAcc::default();
        for shard in &self.shards {
            let mut guard = shard.lock().unwrap_or_else(|e| e.into_inner());
            let s = &mut *guard;
            acc.counters.add(&s.interval.counters);
            s.interval.counters = Counters::default();
            if trim {
                s.interval
                    .latency
                    .drain_into_spare(&mut acc.latency, &mut s.spare);
                s.interval.lag.drain_into_spare(&mut acc.lag, &mut s.spare);
            } else {
                acc.latency.merge(&s.interval.latency);
                acc.lag.merge(&s.interval.lag);
                s.interval.latency.reset();
                s.interval.lag.reset();
            }
        }
        acc
    }

    /// Moves every shard's measured-window data into the run's totals,
    /// giving back the chunks that held no value since the last collect.
    pub fn collect(&self) {
        let mut t = self.totals.lock().unwrap_or_else(|e| e.into_inner());
        for shard in &self.shards {
            let mut guard = shard.lock().unwrap_or_else(|e| e.into_inner());
            let s = &mut *guard;
            s.window.drain_into(&mut t, &mut s.spare);
            s.spare.settle();
        }
    }

    /// The measured window's data: the totals after a last collect.
    pub fn totals(&self) -> Totals {
        self.collect();
        self.totals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Chunks the shards allocated because their spares had none.
    #[cfg(test)]
    fn chunks_allocated(&self) -> u64 {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap().spare.allocated())
            .sum()
    }

    /// Heap bytes of every histogram the recorder holds (shards and
    /// totals): what its memory guarantee is about.
    pub fn heap_bytes(&self) -> usize {
        let shards: usize = self
            .shards
            .iter()
            .map(|shard| {
                let s = shard.lock().unwrap_or_else(|e| e.into_inner());
                s.window.heap_bytes()
                    + s.interval.latency.heap_bytes()
                    + s.interval.lag.heap_bytes()
                    + s.spare.heap_bytes()
            })
            .sum();
        shards
            + self
                .totals
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn txn(kind: u16, ns: u64) -> (TxnBuffer, Timing) {
        let mut buf = TxnBuffer::default();
        buf.statements.push((kind, ns / 2));
        buf.counters.transactions = 1;
        buf.counters.reads = 1;
        let t = Timing {
            latency: Some(ns),
            ..Timing::default()
        };
        (buf, t)
    }

    #[test]
    fn rare_tails_in_every_shard_cost_one_periods_chunks_not_the_runs() {
        // 16 shards, a dozen statement kinds: each period every shard sees
        // the body (1 to 3 ms) and one shard a rare tail value in a power of
        // two none saw before, as a loaded server's stalls come, ever
        // longer, over hours.
        let kinds = 12;
        let r = Recorder::new(64, kinds, 0);
        let mut direct = Histogram::new();
        let mut settled = 0;
        for period in 0..200u64 {
            for client in 0..64usize {
                let ns = (1 + (client as u64 + period) % 3) * MS;
                let (buf, t) = txn((client % kinds) as u16, ns);
                r.flush(client, &buf, t, true);
                direct.record(ns);
            }
            // 2^24 ns (17 ms) up to 2^41 (37 min), shard by shard, kind by kind.
            let tail = 1u64 << (24 + period % 18);
            let (buf, t) = txn((period % kinds as u64) as u16, tail);
            r.flush(period as usize, &buf, t, true);
            direct.record(tail);
            r.take_interval(true);
            r.collect();
            if period == 19 {
                settled = r.heap_bytes();
            }
        }
        let totals = r.totals();
        assert_eq!(totals.latency, direct);
        assert_eq!(totals.counters.transactions, 200 * 65);
        assert_eq!(
            totals.statements.iter().map(Histogram::count).sum::<u64>(),
            200 * 65
        );
        // Once the body's chunks are in place, the tails add only the
        // totals' own chunks — the statements' (each kind's tails fall in
        // three powers of two), the latency's all came in the first 18
        // periods — never one per shard and power of two (3.8 MB here when
        // the shards were never collected, as each kept its own totals).
        let grew = r.heap_bytes().saturating_sub(settled);
        assert!(
            grew <= kinds * 3 * 8192,
            "the recorder grew {grew} bytes after its first 20 periods"
        );
        // A shard holds its body's chunks (three of the latency's, one for
        // each of its three kinds) and the last period's tail.
        for shard in &r.shards {
            let s = shard.lock().unwrap();
            assert!(s.window.heap_bytes() <= 8 * 8192, "{:?}", s.window);
        }
    }

    #[test]
    fn tails_that_come_and_go_reuse_the_chunks_of_the_ones_before() {
        // Each period every shard's clients see the body (1 to 3 ms) and,
        // in turn, tails in one of six powers of two of 33 ms to 1 s: a
        // thousand clients' tails come and go like this every second.
        let kinds = 12;
        let r = Recorder::new(64, kinds, 2);
        let mut direct = Histogram::new();
        let mut settled = None;
        for period in 0..300u64 {
            for client in 0..64usize {
                let tail = client as u64 % 4 == period % 4;
                let ns = if tail {
                    1u64 << (25 + (period + client as u64) % 6)
                } else {
                    (1 + (client as u64 + period) % 3) * MS
                };
                let (mut buf, t) = txn(((client + period as usize) % kinds) as u16, ns);
                buf.kind = Some((client % 2) as u16);
                r.flush(client, &buf, t, true);
                direct.record(ns);
            }
            r.take_interval(true);
            r.collect();
            if period == 49 {
                settled = Some((r.chunks_allocated(), r.heap_bytes()));
            }
        }
        let (allocated, bytes) = settled.unwrap();
        assert_eq!(
            r.chunks_allocated(),
            allocated,
            "chunks allocated after the first 50 periods"
        );
        assert_eq!(r.heap_bytes(), bytes);
        assert_eq!(r.totals().latency, direct);
    }

    #[test]
    fn a_collected_window_adds_up_to_what_was_recorded() {
        let r = Recorder::new(4, 2, 2);
        let mut want = Histogram::new();
        for i in 0..1_000u64 {
            let (mut buf, t) = txn((i % 2) as u16, 1_000 + i * 7_919 % 100_000);
            buf.kind = Some((i % 3) as u16); // type 2 is out of range: ignored
            if i % 10 == 0 {
                buf.counters.failed = 1;
            }
            r.flush(i as usize, &buf, t, i >= 100);
            if i >= 100 {
                want.record(t.latency.unwrap());
            }
            if i % 97 == 0 {
                r.collect();
            }
        }
        let t = r.totals();
        assert_eq!(t.latency, want);
        assert_eq!(t.counters.transactions, 900);
        assert_eq!(t.counters.failed, 90);
        assert_eq!(t.types[0].count() + t.types[1].count(), 600);
        assert_eq!(t.types_failed.iter().sum::<u64>(), 60);
        // The interval saw the warmup's transactions too.
        assert_eq!(r.take_interval(false).counters.transactions, 1_000);
    }
}
