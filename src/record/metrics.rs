//! What the machine, the server and the client did while a run ran,
//! sampled beside it (`metrics::sampler`): a time series of samples, the
//! totals of the warmup and of the measured window, the figures derived
//! from the window's totals, and what could not be measured, with why.
//!
//! Every quantity of a [`Usage`] is what happened *during* its interval
//! (a difference of two readings of a counter), except the few marked as
//! a level at the interval's end (memory, running processes, RSS).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use std::borrow::Cow;

use super::map::OrderedMap;
use super::series::Series;

/// The machine, the server and the client beside one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Metrics {
    /// Seconds between samples (`--metrics-interval`).
    pub interval_s: f64,
    /// What sampling cost: how many readings were taken, and how long one
    /// took on average and at most, ms (reading `/proc` for a server with
    /// many processes, and the server's counters).
    pub readings: u64,
    pub reading_ms_avg: f64,
    pub reading_ms_max: f64,
    /// CPU the readings used (every reading and wait sample, on whichever
    /// thread took it), seconds: what sampling cost the machine, apart from
    /// the wall time a loaded machine stretches readings to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub sampling_cpu_s: Option<f64>,
    /// The server's processes, as found.
    pub server_process: ServerProcess,
    /// Totals over the warmup; absent without one.
    pub warmup: Option<Usage>,
    /// Totals over the measured window (from a reading at its start to one
    /// at its end).
    pub window: Usage,
    /// Figures derived from the window's totals and the run's counts.
    pub figures: Figures,
    /// One per interval, warmup included: the time series.
    pub samples: Series<Sample>,
    /// What could not be measured, and why: a figure that is absent is
    /// named here, never reported as 0.
    pub gaps: Vec<Gap>,
    /// InnoDB's SEMAPHORES section as the server printed it, at the
    /// window's start and at its end (MariaDB/MySQL only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub innodb_semaphores: Vec<String>,
    /// Counts the workload read from the database itself at the window's
    /// start and end, on a connection of their own (TPC-C:
    /// `sum(d_next_o_id)`, the New-Orders the database committed); a count
    /// that could not be read is absent, and named in `gaps`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub window_counts: Vec<WindowCount>,
    /// A run merged from shards (`result.shards`): which shard's sampler
    /// the server's and the machine's readings are from. Absent for one
    /// process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<MergedFrom>,
    /// On-CPU profiles of the measured window (`run --profile`): the
    /// server's process tree and the client's; absent without one (why is
    /// in `gaps`, under `profile`, when one was asked for).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<super::profile::Profile>,
}

/// Where a merged run's metrics come from.
///
/// The server is one: every shard's sampler read the same server over the
/// same window, so one shard's reading is the server's — that of the
/// lowest-numbered shard that measured the most of it (its processes and
/// its counters). Its per-transaction and per-query figures are computed
/// against the merged run's transactions and queries, and the other
/// shards' monitoring statements are taken out of the counters that count
/// statements (`monitor_statements` is then every sampler's).
///
/// The machine is one only when every shard ran on it (one hostname): then
/// that shard's machine readings are the machine's, with the client's
/// (dbsweep's) CPU summed over every shard. Otherwise the machine's parts
/// of `window`, `warmup` and `samples` (CPU, per CPU, context switches,
/// processes, memory, disks, network, client) are empty, not zero: not
/// measured for the run as a whole. Its figures are absent, a gap says
/// why, and each shard's machine is in its row of `result.shards`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergedFrom {
    /// The shard whose reading of the server this is; absent when no shard
    /// measured the server (neither its processes nor its counters).
    pub server_shard: Option<u64>,
    /// The shard whose machine readings are the machine's, when every
    /// shard ran on one host; absent otherwise.
    pub machine_shard: Option<u64>,
    /// Why the machine's figures are absent (shards on several machines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_why_not: Option<String>,
}

/// One count read from the database at the measured window's start and
/// end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WindowCount {
    /// What is counted, e.g. `sum(d_next_o_id)`.
    pub name: String,
    /// The query that counts it.
    pub sql: String,
    /// Its value at the window's start.
    pub start: f64,
    /// Its value at the window's end.
    pub end: f64,
}

impl WindowCount {
    /// What the window added.
    pub fn delta(&self) -> f64 {
        self.end - self.start
    }
}

/// Where the server's processes were found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerProcess {
    /// The server's main process (mysqld, the PostgreSQL postmaster);
    /// absent when it was not found.
    pub pid: Option<u32>,
    /// How: `managed` (started by dbsweep), `listening on 127.0.0.1:PORT`
    /// or `listening on SOCKET`, `embedded` (SQLite runs in the client), or
    /// why it was not found.
    pub how: String,
}

/// One interval of the time series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sample {
    /// Seconds since the clients were released, at the interval's end.
    pub t_s: f64,
    /// The interval lies (at least partly) in the warmup.
    pub warmup: bool,
    pub usage: Usage,
}

impl Metrics {
    /// The measured window's samples that lasted at least half an
    /// interval, for drawing over time: the window's last, partial sample
    /// can be a few ticks of /proc/stat (10 ms each), too short to say
    /// anything.
    pub fn window_samples(&self) -> impl Iterator<Item = Cow<'_, Sample>> + '_ {
        let min = self.interval_s / 2.0;
        self.samples
            .iter()
            .filter(move |s| !s.warmup && s.usage.duration_s >= min && s.usage.duration_s > 0.0)
    }
}

/// What happened during one interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    /// Length of the interval, seconds.
    pub duration_s: f64,
    /// CPU time of every CPU together, by kind (`/proc/stat`), seconds.
    pub cpu: CpuTime,
    /// The same per CPU, indexed by CPU number (`cpu0`, `cpu1`, …; an
    /// offline CPU's entry is all zero).
    pub per_cpu: Vec<CpuTime>,
    /// Context switches on the machine.
    pub context_switches: u64,
    /// Processes running, and blocked on IO, at the interval's end.
    pub procs_running: u64,
    pub procs_blocked: u64,
    /// Memory at the interval's end, bytes (`/proc/meminfo`).
    pub memory: Memory,
    /// Per block device that did any IO.
    pub disks: Vec<Disk>,
    /// Per network interface that moved any bytes (`lo` is the loopback
    /// the clients talk to a local server over).
    pub network: Vec<Net>,
    /// The server's processes together; absent when not found.
    pub server: Option<Process>,
    /// dbsweep itself.
    pub client: Process,
    /// The server's own counters over SQL, the monitoring connection's
    /// statements taken out where they count: differences for counters,
    /// levels at the end for gauges (e.g. `Threads_running`).
    pub sql: OrderedMap<f64>,
    /// Wait events of the active sessions, sampled: PostgreSQL's
    /// `wait_event_type:wait_event` (or `running`), MariaDB's
    /// `InnoDB:lock wait`, `stage:STATE` (its processlist state) or
    /// `running` → sessions seen so.
    #[serde(default, skip_serializing_if = "OrderedMap::is_empty")]
    pub waits: OrderedMap<u64>,
    /// How many backends were looked at for `waits` (the denominator of a
    /// wait's share).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub wait_samples: u64,
    /// InnoDB (builds that print them: MySQL ≤ 5.7, MariaDB ≤ 10.5):
    /// threads seen waiting for a latch in the SEMAPHORES section, by
    /// latch (mode, where created, where waited), summed over the
    /// readings.
    #[serde(default, skip_serializing_if = "OrderedMap::is_empty")]
    pub semaphore_waits: OrderedMap<u64>,
    /// How many SEMAPHORES readings `semaphore_waits` sums (its
    /// denominator: the mean number of threads waiting).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub semaphore_readings: u64,
    /// Statements the monitoring connection ran, not part of the workload
    /// (in a merged run, every shard's monitoring connection's).
    pub monitor_statements: u64,
}

impl Usage {
    /// Each wait event with the sessions seen in it and its share of all
    /// sampled, most seen first; none without samples.
    pub fn wait_shares(&self) -> Vec<(&str, u64, f64)> {
        per(&self.waits, self.wait_samples)
    }

    /// Each latch with the threads seen waiting for it over the readings
    /// and the mean number waiting at a reading, most first.
    pub fn latch_means(&self) -> Vec<(&str, u64, f64)> {
        per(&self.semaphore_waits, self.semaphore_readings)
    }
}

/// Each count with itself over `of`, most first; none when `of` is 0.
fn per(counts: &OrderedMap<u64>, of: u64) -> Vec<(&str, u64, f64)> {
    if of == 0 {
        return Vec::new();
    }
    let mut v: Vec<(&str, u64, f64)> = (counts.iter())
        .map(|(k, &n)| (k, n, n as f64 / of as f64))
        .collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// CPU time by kind, seconds (the kernel's accounting, `/proc/stat`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CpuTime {
    pub user_s: f64,
    pub nice_s: f64,
    pub system_s: f64,
    pub idle_s: f64,
    pub iowait_s: f64,
    pub irq_s: f64,
    pub softirq_s: f64,
    pub steal_s: f64,
}

impl CpuTime {
    /// Every kind together.
    pub fn total_s(&self) -> f64 {
        self.user_s
            + self.nice_s
            + self.system_s
            + self.idle_s
            + self.iowait_s
            + self.irq_s
            + self.softirq_s
            + self.steal_s
    }

    /// Busy: everything but idle and iowait (waiting for IO is idle time
    /// with IO outstanding).
    pub fn busy_s(&self) -> f64 {
        self.total_s() - self.idle_s - self.iowait_s
    }
}

/// Memory levels, bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Memory {
    pub available_bytes: u64,
    pub dirty_bytes: u64,
    pub swap_used_bytes: u64,
}

/// One block device's IO during an interval (`/proc/diskstats`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Disk {
    pub name: String,
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Time the device had IO in flight, seconds (its utilisation is this
    /// over the interval).
    pub busy_s: f64,
    /// Time requests spent queued and served, seconds (its average wait is
    /// this over reads + writes).
    pub wait_s: f64,
}

/// One network interface's traffic during an interval (`/proc/net/dev`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Net {
    pub name: String,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
}

/// A process tree's use of the machine during an interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Process {
    pub cpu_user_s: f64,
    pub cpu_system_s: f64,
    /// Resident memory at the interval's end, bytes.
    pub rss_bytes: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// Bytes read from and written to storage (`/proc/PID/io`; needs the
    /// same user or root).
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Processes in the tree at the interval's end.
    pub processes: u64,
}

impl Process {
    pub fn cpu_s(&self) -> f64 {
        self.cpu_user_s + self.cpu_system_s
    }
}

/// A derived figure, with what it was computed from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Figure {
    pub value: f64,
    /// Its inputs, e.g. `server CPU 12.4 s / 10,000 transactions`.
    pub from: String,
}

/// What the window's totals say about the run. Each is absent when it
/// could not be computed; [`Metrics::gaps`] says why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Figures {
    /// Busy share of every CPU of the machine, %.
    pub cpu_busy_pct: Option<Figure>,
    /// User, system and iowait shares of every CPU, %.
    pub cpu_user_pct: Option<Figure>,
    pub cpu_system_pct: Option<Figure>,
    pub iowait_pct: Option<Figure>,
    /// The server's, the client's and everything else's share of the
    /// machine's CPU, %.
    pub server_cpu_pct: Option<Figure>,
    pub client_cpu_pct: Option<Figure>,
    pub other_cpu_pct: Option<Figure>,
    /// The server's CPU per transaction and per query, µs.
    pub server_cpu_us_per_transaction: Option<Figure>,
    pub server_cpu_us_per_query: Option<Figure>,
    /// Context switches on the machine per transaction.
    pub context_switches_per_transaction: Option<Figure>,
    /// MB read and written on every disk per transaction.
    pub disk_mb_per_transaction: Option<Figure>,
    /// Share of page reads served from the server's cache, %.
    pub buffer_pool_hit_pct: Option<Figure>,
    /// Row lock waits and deadlocks per second, as the server counts them.
    pub row_lock_waits_per_s: Option<Figure>,
    pub deadlocks_per_s: Option<Figure>,
    /// InnoDB semaphore OS waits per transaction.
    pub semaphore_os_waits_per_transaction: Option<Figure>,
    /// PostgreSQL: the most frequent wait events of the window, with their
    /// share of the backends looked at, %.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top_waits: Vec<Wait>,
}

/// One wait event and how often backends were seen waiting on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Wait {
    /// `wait_event_type:wait_event`, e.g. `Lock:transactionid`.
    pub event: String,
    pub samples: u64,
    /// Share of the backends looked at, %.
    pub pct: f64,
}

/// Something that could not be measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Gap {
    /// What: a figure's name, or a source (`server process`, `disk`, …).
    pub what: String,
    pub why: String,
}
