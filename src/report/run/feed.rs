//! What the live feed knows of the point being run: its labels, its phase,
//! its counters since it began, the last closed interval's rates and
//! latency, and the sampler's last reading of the machine, the server and
//! dbsweep itself. Updated once per interval and per sample (a few field
//! copies, on the caller's thread); rendered on each scrape by
//! [`super::openmetrics`]. Pure: no clock, no I/O.

use crate::engine::recorder::Counters;
use crate::engine::IntervalSample;
use crate::record::metrics::Sample;

/// Where the point is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Phase {
    /// Begun, no interval closed yet (connecting, or the first interval).
    #[default]
    Starting,
    /// The last interval lay (at least partly) in the warmup.
    Warmup,
    /// The last interval lay in the measured window.
    Measured,
    /// The point ended; a study's next one has not begun.
    Finished,
}

impl Phase {
    pub const ALL: [Phase; 4] = [
        Phase::Starting,
        Phase::Warmup,
        Phase::Measured,
        Phase::Finished,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Phase::Starting => "starting",
            Phase::Warmup => "warmup",
            Phase::Measured => "measured",
            Phase::Finished => "finished",
        }
    }
}

/// The last closed interval's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Last {
    /// Seconds since the clients were released, at its end.
    pub t_s: f64,
    /// Clients (connections) running.
    pub clients: usize,
    /// Transactions completed per second.
    pub tps: f64,
    /// Queued runs (a rate, users): transactions due per second, and
    /// those due and not yet taken by a connection at its end.
    pub offered_per_s: Option<f64>,
    pub queue: Option<u64>,
    /// Transaction latency (p50, p95, p99, max), seconds; None without
    /// transactions.
    pub latency_s: [Option<f64>; 4],
    /// Queued runs: the schedule lag (p99, max), seconds.
    pub lag_s: [Option<f64>; 2],
}

/// The sampler's last reading, as shares of the machine's CPU time over
/// its interval (0 to 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cpu {
    /// Every CPU's busy time (all but idle and IO wait).
    pub machine: f64,
    /// dbsweep's own processes.
    pub client: f64,
    /// The server's processes; None when they were not found (a server
    /// on another machine, SQLite inside the client).
    pub server: Option<f64>,
}

/// A distribution's count and sum since the point began.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sum {
    pub count: u64,
    /// Seconds.
    pub sum_s: f64,
}

impl Sum {
    fn add(&mut self, h: &crate::stats::histogram::Histogram) {
        self.count += h.count();
        self.sum_s += h.sum() as f64 / 1e9;
    }
}

/// CPU seconds since the point began, by whom.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuSeconds {
    pub machine_busy: f64,
    pub client: f64,
    /// None while the server's processes were never measured.
    pub server: Option<f64>,
}

/// The feed's state; see the module docs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Feed {
    /// Which point: label names and values (workload and target first);
    /// empty before the first point begins.
    pub labels: Vec<(String, String)>,
    pub phase: Phase,
    /// Since the point began, its warmup included.
    pub totals: Counters,
    /// Transaction latency since the point began.
    pub latency: Sum,
    /// Queued runs: the schedule lag since the point began.
    pub lag: Option<Sum>,
    pub last: Option<Last>,
    pub cpu: Option<Cpu>,
    pub cpu_seconds: Option<CpuSeconds>,
}

/// Nanoseconds as seconds.
fn seconds(ns: Option<u64>) -> Option<f64> {
    ns.map(|n| n as f64 / 1e9)
}

impl Feed {
    /// A point begins: its labels, and nothing of the last one.
    pub fn begin(&mut self, labels: &[(String, String)]) {
        *self = Feed {
            labels: labels.to_vec(),
            ..Feed::default()
        };
    }

    /// An interval closed.
    pub fn interval(&mut self, s: &IntervalSample) {
        self.totals.add(&s.counters);
        self.latency.add(&s.latency);
        if s.paced.is_some() {
            self.lag.get_or_insert_with(Sum::default).add(&s.lag);
        }
        self.phase = if s.warmup {
            Phase::Warmup
        } else {
            Phase::Measured
        };
        let per_s = |n: u64| {
            if s.duration_s > 0.0 {
                n as f64 / s.duration_s
            } else {
                0.0
            }
        };
        self.last = Some(Last {
            t_s: s.t_s,
            clients: s.threads,
            tps: per_s(s.counters.transactions),
            offered_per_s: s.paced.as_ref().map(|p| p.offered_per_s),
            queue: s.paced.as_ref().map(|p| p.queue),
            latency_s: [s.p50_ns, s.p95_ns, s.p99_ns, s.max_ns].map(seconds),
            lag_s: match &s.paced {
                Some(p) => [seconds(p.lag_p99_ns), seconds(p.lag_max_ns)],
                None => [None, None],
            },
        });
    }

    /// The sampler read the machine.
    pub fn sample(&mut self, s: &Sample) {
        let u = &s.usage;
        let all = u.cpu.total_s();
        if all <= 0.0 {
            return;
        }
        let server = u.server.as_ref().map(|p| p.cpu_s());
        self.cpu = Some(Cpu {
            machine: u.cpu.busy_s() / all,
            client: u.client.cpu_s() / all,
            server: server.map(|s| s / all),
        });
        let mut t = self.cpu_seconds.unwrap_or_default();
        t.machine_busy += u.cpu.busy_s();
        t.client += u.client.cpu_s();
        if let Some(s) = server {
            t.server = Some(t.server.unwrap_or(0.0) + s);
        }
        self.cpu_seconds = Some(t);
    }

    /// The point ended.
    pub fn end(&mut self) {
        self.phase = Phase::Finished;
    }
}
