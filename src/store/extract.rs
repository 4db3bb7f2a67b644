//! The metric columns of a point, copied from its run record (see
//! `docs/json.md`). The record is the one source of truth: every number in
//! the `point`, `point_error` and `point_interval` tables is copied from it
//! here, never recomputed from other data.
//!
//! The one exception is a latency percentile the record does not list
//! (the run's `--percentiles` left it out): it is then read from the
//! record's `transaction` histogram, the very histogram its percentiles
//! come from, with the same definition and unit conversion.

use crate::record::metrics::{Figure, Figures};
use crate::record::Run;
use crate::stats::histogram::Histogram;

/// The figures of one run that get a column of their own in `point`.
/// Units as in the run document: seconds, microseconds, per second.
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    /// When the run started, seconds since 1970 (`started_unix_s`).
    pub started_unix_s: u64,
    /// When its clients were released, µs since 1970; None in a record
    /// from before dbsweep kept the instant.
    pub started_unix_us: Option<u64>,
    /// When its measured window ended (the release, the warmup and the
    /// window), µs since 1970; None as `started_unix_us`.
    pub ended_unix_us: Option<u64>,
    /// The machine it ran on, as [`machine_fingerprint`] writes it.
    pub machine: String,
    /// The run's random seed (`--rand-seed` repeats its random choices).
    pub seed: u64,
    /// `time`, `events`, `rounds`, `interrupted` or `aborted`.
    pub stop_reason: String,
    /// Length of the measured window, seconds.
    pub measured_s: f64,
    /// Completed transactions in the window.
    pub transactions: u64,
    /// Transactions per second of the window.
    pub tps: f64,
    /// Queries (read + write + other) per second of the window.
    pub qps: f64,
    /// Statements that returned a result set.
    pub reads: u64,
    /// Statements without a result set that changed rows.
    pub writes: u64,
    /// Everything else (BEGIN, COMMIT, DML that changed nothing).
    pub others: u64,
    /// Transactions given up (retries exhausted, or an ignored error).
    pub failed_transactions: u64,
    /// Re-runs after deadlocks, lock timeouts and serialization failures.
    pub retries: u64,
    /// Errors that did not abort the run.
    pub ignored_errors: u64,
    /// All errors, every kind (the sum of `point_error.count`).
    pub errors: u64,
    /// Connections re-established.
    pub reconnects: u64,
    /// Transactions still running at the deadline.
    pub abandoned: u64,
    /// Transaction latency, µs; `None` when no transaction completed (or the
    /// percentile is neither in the document nor in a stored histogram).
    pub lat_min_us: Option<f64>,
    pub lat_avg_us: Option<f64>,
    pub lat_p50_us: Option<f64>,
    pub lat_p95_us: Option<f64>,
    pub lat_p99_us: Option<f64>,
    pub lat_max_us: Option<f64>,
    /// The client's CPU over the window (user + system), seconds.
    pub client_cpu_s: f64,
    /// The server's product and version as the connection reported it.
    pub server_version: String,
    /// The machine's and the server's figures (`result.metrics.figures`);
    /// `None` where not measured, or without metrics.
    /// Busy share of every CPU of the machine over the window, %.
    pub cpu_busy_pct: Option<f64>,
    /// User, system and iowait shares of every CPU, %.
    pub cpu_user_pct: Option<f64>,
    pub cpu_system_pct: Option<f64>,
    pub iowait_pct: Option<f64>,
    /// The server's processes' and the client's share of the machine's CPU, %.
    pub server_cpu_pct: Option<f64>,
    pub client_cpu_pct: Option<f64>,
    /// The server's CPU per transaction, µs.
    pub server_cpu_us_per_txn: Option<f64>,
    /// MB read and written on every disk per transaction.
    pub disk_mb_per_txn: Option<f64>,
    /// Share of page reads served from the server's cache, %.
    pub buffer_pool_hit_pct: Option<f64>,
    /// Row lock waits and deadlocks per second, as the server counts them.
    pub row_lock_waits_per_s: Option<f64>,
    pub deadlocks_per_s: Option<f64>,
    /// InnoDB semaphore OS waits per transaction.
    pub semaphore_os_waits_per_txn: Option<f64>,
    /// Paced runs (`result.pacing`): the offered and achieved rates per
    /// second, late, skipped and never-started transactions, and the p99
    /// schedule lag, µs; `None` for a plain closed loop.
    pub offered_per_s: Option<f64>,
    pub achieved_per_s: Option<f64>,
    pub late: Option<u64>,
    pub skipped: Option<u64>,
    pub unstarted: Option<u64>,
    pub lag_p99_us: Option<f64>,
}

impl Metrics {
    /// Errors per second of the measured window; None without a window.
    pub fn errors_per_s(&self) -> Option<f64> {
        (self.measured_s > 0.0).then(|| self.errors as f64 / self.measured_s)
    }

    /// The 95th percentile latency in milliseconds.
    pub fn p95_ms(&self) -> Option<f64> {
        self.lat_p95_us.map(|us| us / 1e3)
    }

    /// The 99th percentile latency in milliseconds.
    pub fn p99_ms(&self) -> Option<f64> {
        self.lat_p99_us.map(|us| us / 1e3)
    }
}

/// One `result.intervals` entry, as stored in `point_interval`.
pub use crate::record::Interval;

/// Everything a commit copies out of a run document.
#[derive(Debug, Clone, PartialEq)]
pub struct Extracted {
    pub metrics: Metrics,
    /// `(kind, count)` for every kind in `result.errors`, zeros included, so
    /// a query for deadlocks finds 0 rather than nothing.
    pub errors: Vec<(String, u64)>,
    pub intervals: crate::record::Series<Interval>,
}

/// Copies the stored figures out of a run record. Never fails: every
/// figure is a field of the record's type.
pub fn extract(run: &Run) -> Extracted {
    let result = &run.result;
    let txn_hist = run
        .histogram(None)
        .and_then(|h| Histogram::try_from(h).ok());
    let pct = |p: f64| -> Option<f64> {
        let l = result.latency.as_ref()?;
        match l.percentiles.iter().find(|e| e.p == p) {
            Some(e) => Some(e.us),
            // Same conversion as the record's: ns / 1e3.
            None => txn_hist
                .as_ref()
                .and_then(|h| h.value_at_percentile(p))
                .map(|ns| ns as f64 / 1e3),
        }
    };
    let lat = result.latency.as_ref();
    let fig = |f: fn(&Figures) -> &Option<Figure>| {
        result
            .metrics
            .as_ref()
            .and_then(|m| f(&m.figures).as_ref())
            .map(|f| f.value)
    };
    let errors: Vec<(String, u64)> = result
        .errors
        .iter()
        .map(|(k, n)| (k.to_string(), n))
        .collect();
    let started_unix_us = run.released_unix_us;
    let metrics = Metrics {
        started_unix_s: run.started_unix_s,
        started_unix_us,
        ended_unix_us: started_unix_us
            .map(|s| s + ((run.run.warmup_s + result.measured_s) * 1e6) as u64),
        machine: machine_fingerprint(&run.machine),
        seed: run.random.seed,
        stop_reason: result.stop_reason.name().to_string(),
        measured_s: result.measured_s,
        transactions: result.transactions,
        tps: result.tps,
        qps: result.qps,
        reads: result.queries.read,
        writes: result.queries.write,
        others: result.queries.other,
        failed_transactions: result.failed_transactions,
        retries: result.retries,
        ignored_errors: result.ignored_errors,
        errors: result.errors.total(),
        reconnects: result.reconnects,
        abandoned: result.abandoned,
        lat_min_us: lat.map(|l| l.min_us),
        lat_avg_us: lat.map(|l| l.avg_us),
        lat_p50_us: pct(50.0),
        lat_p95_us: pct(95.0),
        lat_p99_us: pct(99.0),
        lat_max_us: lat.map(|l| l.max_us),
        client_cpu_s: result.client_cpu.total_s(),
        server_version: run.target.server_version.clone(),
        cpu_busy_pct: fig(|f| &f.cpu_busy_pct),
        cpu_user_pct: fig(|f| &f.cpu_user_pct),
        cpu_system_pct: fig(|f| &f.cpu_system_pct),
        iowait_pct: fig(|f| &f.iowait_pct),
        server_cpu_pct: fig(|f| &f.server_cpu_pct),
        client_cpu_pct: fig(|f| &f.client_cpu_pct),
        server_cpu_us_per_txn: fig(|f| &f.server_cpu_us_per_transaction),
        disk_mb_per_txn: fig(|f| &f.disk_mb_per_transaction),
        buffer_pool_hit_pct: fig(|f| &f.buffer_pool_hit_pct),
        row_lock_waits_per_s: fig(|f| &f.row_lock_waits_per_s),
        deadlocks_per_s: fig(|f| &f.deadlocks_per_s),
        semaphore_os_waits_per_txn: fig(|f| &f.semaphore_os_waits_per_transaction),
        offered_per_s: result.pacing.as_ref().and_then(|p| p.offered_per_s),
        achieved_per_s: result.pacing.as_ref().map(|p| p.achieved_per_s),
        late: result.pacing.as_ref().and_then(|p| p.late),
        skipped: result.pacing.as_ref().and_then(|p| p.skipped),
        unstarted: result.pacing.as_ref().and_then(|p| p.unstarted),
        lag_p99_us: result
            .pacing
            .as_ref()
            .and_then(|p| p.lag.as_ref())
            .and_then(|l| l.percentiles.iter().find(|e| e.p == 99.0))
            .map(|e| e.us),
    };
    Extracted {
        metrics,
        errors,
        intervals: result.intervals.clone(),
    }
}

/// What tells two machines apart in a comparison: the CPU model, the CPUs
/// online, the memory and the kernel (the report header's fields), e.g.
/// `AMD EPYC 7B13; 2 CPUs; 23.5 GiB; 6.1.0-28-cloud-amd64`.
pub fn machine_fingerprint(m: &crate::record::Machine) -> String {
    format!(
        "{}; {} CPUs; {:.1} GiB; {}",
        m.cpu_model,
        m.cpus_online,
        m.memory_bytes as f64 / (1u64 << 30) as f64,
        m.kernel
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Latency, Percentile};

    fn latency(percentiles: &[(f64, f64)]) -> Latency {
        Latency {
            count: 1000,
            min_us: 1.0,
            avg_us: 5.0,
            max_us: 90.0,
            sum_us: 5000.0,
            percentiles: percentiles
                .iter()
                .map(|&(p, us)| Percentile { p, us })
                .collect(),
        }
    }

    #[test]
    fn reads_every_column_from_the_record() {
        let mut run = Run::sample();
        run.result.latency = Some(latency(&[(50.0, 4.0), (95.0, 20.0), (99.0, 60.0)]));
        let x = extract(&run);
        let m = &x.metrics;
        assert_eq!((m.tps, m.qps, m.transactions), (100.0, 2000.0, 1000));
        assert_eq!((m.reads, m.writes, m.others), (14000, 4000, 2000));
        assert_eq!(m.errors, 4);
        assert_eq!(m.seed, 18_000_000_000_000_000_000);
        assert_eq!(m.client_cpu_s, 1.75);
        assert_eq!(
            (m.lat_p50_us, m.lat_p95_us, m.lat_p99_us),
            (Some(4.0), Some(20.0), Some(60.0))
        );
        assert_eq!(x.errors.len(), 7, "every kind, zeros included");
        assert!(x.errors.contains(&("deadlock".into(), 3)));
        assert!(x.errors.contains(&("other".into(), 1)));
        let intervals = x.intervals.to_vec();
        assert_eq!(intervals.len(), 1);
        assert!(intervals[0].warmup);
        assert_eq!(intervals[0].p95_us, None);
    }

    #[test]
    fn unlisted_percentiles_come_from_the_transaction_histogram() {
        let mut run = Run::sample();
        run.result.latency = Some(latency(&[(50.0, 1.0)]));
        let mut h = Histogram::new();
        h.record(1_000);
        h.record(2_000);
        run.result.histograms = Some(crate::record::Histograms {
            transaction: (&h).into(),
            statements: Default::default(),
            service: None,
            lag: None,
            types: Default::default(),
        });
        let x = extract(&run);
        assert_eq!(x.metrics.lat_p50_us, Some(1.0)); // the record's
        assert_eq!(x.metrics.lat_p95_us, Some(2.0)); // the histogram's
        run.result.histograms = None;
        let x = extract(&run);
        assert_eq!(x.metrics.lat_p95_us, None); // nothing made up
    }

    #[test]
    fn no_latency_means_null_latency_columns() {
        let x = extract(&Run::sample());
        assert_eq!(x.metrics.lat_min_us, None);
        assert_eq!(x.metrics.lat_p95_us, None);
    }
}
