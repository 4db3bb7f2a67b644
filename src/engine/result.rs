//! What a run measured, as the engine hands it over: the interval samples
//! taken while it ran (and how they are taken from the recorder and the
//! pacing's queue) and the run's result, pure data for `point` to turn
//! into the record.

use std::time::{Duration, Instant};

use super::pacing::Dispatch;
use super::recorder::{Counters, IntervalAcc};
use super::StopReason;
use crate::driver::ServerInfo;
use crate::metrics::cpu::CpuTimes;
use crate::stats::histogram::Histogram;

/// One `--report-interval` line's worth of data.
#[derive(Debug, Clone, serde::Serialize)]
pub struct IntervalSample {
    /// Seconds since the clients were released, at the end of the interval.
    pub t_s: f64,
    pub duration_s: f64,
    /// The interval lies (at least partly) in the warmup.
    pub warmup: bool,
    pub threads: usize,
    pub counters: Counters,
    /// The headline percentile (`RunConfig::interval_percentile`) and its value, ns.
    pub pct: f64,
    pub pct_ns: Option<u64>,
    /// Transaction latency in this interval (p50, p95, p99, max), ns.
    pub p50_ns: Option<u64>,
    pub p95_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub max_ns: Option<u64>,
    /// Queued runs: what the interval offered and its queue.
    pub paced: Option<PacedSample>,
    /// The interval's transaction latency, and (queued runs) its schedule
    /// lag: what the record keeps, so intervals merge.
    #[serde(skip)]
    pub latency: Histogram,
    #[serde(skip)]
    pub lag: Histogram,
}

/// An interval of a queued run (open loop, or users on a pool).
#[derive(Debug, Clone, serde::Serialize)]
pub struct PacedSample {
    /// Transactions due in the interval (handed out, or waiting), per second.
    pub offered_per_s: f64,
    /// Transactions due and not yet taken by a connection at its end.
    pub queue: u64,
    /// Schedule lag (intended → actual start) of the interval's
    /// transactions, p99 and max, ns.
    pub lag_p99_ns: Option<u64>,
    pub lag_max_ns: Option<u64>,
}

/// Everything a run measured. Pure data; rendering is the report layer's.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub threads: usize,
    /// Statement type names; `stmt_latency[i]` belongs to `statement_kinds[i]`.
    pub statement_kinds: Vec<String>,
    pub warmup: Duration,
    /// Length of the measured window (until the last client stopped, or the deadline).
    pub measured: Duration,
    pub counters: Counters,
    /// Transactions in flight when the deadline hit.
    pub abandoned: u64,
    /// From each transaction's intended start (its start, in a closed loop).
    pub txn_latency: Histogram,
    /// Queued runs: from when a connection began each transaction, and the
    /// schedule lag before it; None in a closed loop.
    pub service: Option<Histogram>,
    pub lag: Option<Histogram>,
    /// Queued runs: transactions intended in the measured window (handed
    /// out, or still waiting when it ended).
    pub offered: Option<u64>,
    pub stmt_latency: Vec<Histogram>,
    /// Per transaction type of a workload with several.
    pub types: Vec<TypeResult>,
    /// Per client: (transactions in the measured window, seconds spent in them).
    pub clients: Vec<(u64, f64)>,
    /// Client CPU used during the measured window.
    pub cpu: CpuTimes,
    /// CPUs available to this process.
    pub cpus: usize,
    pub stop: StopReason,
    /// Opening and preparing the clients' connections before the run.
    pub connect: ConnectStats,
    /// Queued runs: building the queue — the users' timers and streams,
    /// and what the workload keeps per user — before the clients were
    /// released.
    pub setup: Option<Duration>,
    /// The error that aborted the run, if one did.
    pub fatal: Option<String>,
    pub server: ServerInfo,
    /// When the clients were released, µs since 1970 (UTC): the start of
    /// the run's timeline, by which shards' windows are set side by side.
    pub released_unix_us: u64,
}

/// One transaction type's measurements.
#[derive(Debug, Clone)]
pub struct TypeResult {
    pub t: crate::workload::TxnType,
    /// Latency of its completed transactions (their count is its count).
    pub latency: Histogram,
    pub failed: u64,
}

/// How long the clients took to connect (and prepare their statements)
/// before they were released; Super Smack's `connect:` line.
#[derive(Debug, Clone, Default)]
pub struct ConnectStats {
    /// From the first connection attempt until every client was connected.
    pub wall: Duration,
    /// Per client: connect plus prepare, ns.
    pub latency: Histogram,
}

pub(super) fn sample(
    pct: f64,
    acc: &IntervalAcc,
    t0: Instant,
    span: std::ops::Range<Instant>,
    measure_start: Instant,
    threads: usize,
    queue: Option<(&Dispatch, &mut u64)>,
) -> IntervalSample {
    let (from, to) = (span.start, span.end);
    let h = &acc.latency;
    let duration_s = to.duration_since(from).as_secs_f64();
    IntervalSample {
        t_s: to.duration_since(t0).as_secs_f64(),
        duration_s,
        warmup: from < measure_start,
        threads,
        counters: acc.counters.clone(),
        pct,
        pct_ns: h.value_at_percentile(pct),
        p50_ns: h.value_at_percentile(50.0),
        p95_ns: h.value_at_percentile(95.0),
        p99_ns: h.value_at_percentile(99.0),
        max_ns: h.max(),
        paced: queue.map(|(d, before)| paced_sample(d, acc, to, before, duration_s)),
        latency: acc.latency.clone(),
        lag: acc.lag.clone(),
    }
}

/// The queue's side of an interval ending at `now`: the offered rate is what
/// was handed out plus how much the queue grew; `before` carries the
/// previous interval's queue length.
fn paced_sample(
    d: &Dispatch,
    acc: &IntervalAcc,
    now: Instant,
    before: &mut u64,
    duration_s: f64,
) -> PacedSample {
    let queue = d.pending(now);
    let offered = (acc.counters.arrivals + queue) as f64 - *before as f64;
    *before = queue;
    PacedSample {
        offered_per_s: if duration_s > 0.0 {
            offered.max(0.0) / duration_s
        } else {
            0.0
        },
        queue,
        lag_p99_ns: acc.lag.value_at_percentile(99.0),
        lag_max_ns: acc.lag.max(),
    }
}
