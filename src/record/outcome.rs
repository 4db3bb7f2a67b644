//! What a run measured: counters, errors by kind, latency summaries and
//! the histograms they come from, fairness, the client's CPU, intervals.
//! Field docs become the schema's descriptions (see `run.rs`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::histogram::Histogram;
use super::map::OrderedMap;
use super::metrics::Metrics;
use super::series::Series;

/// What the run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Outcome {
    pub stop_reason: StopReason,
    /// The error that aborted the run, if one did.
    pub fatal_error: Option<String>,
    /// Length of the measured window (until the last client stopped, or
    /// the deadline).
    #[schemars(range(min = 0))]
    pub measured_s: f64,
    /// Transactions completed in the window.
    pub transactions: u64,
    #[schemars(range(min = 0))]
    pub tps: f64,
    pub queries: Queries,
    #[schemars(range(min = 0))]
    pub qps: f64,
    /// Transactions given up (retries exhausted, or an ignored error).
    pub failed_transactions: u64,
    /// Re-runs after deadlocks, lock timeouts and serialization failures.
    pub retries: u64,
    /// Errors that did not abort the run (retried or ignored).
    pub ignored_errors: u64,
    /// Connections re-established.
    pub reconnects: u64,
    /// Transactions still running at the deadline.
    pub abandoned: u64,
    /// Errors of each kind, retried ones included.
    pub errors: ErrorCounts,
    /// Transaction latency; null when no transaction completed.
    pub latency: Option<Latency>,
    /// Latency per statement type, for every type that ran.
    pub statements: Vec<StatementLatency>,
    pub fairness: Fairness,
    pub client_cpu: ClientCpu,
    /// One entry per `--report-interval` (or report time-series step).
    pub intervals: Series<Interval>,
    /// Connecting the clients before they were released (version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<Connect>,
    /// The latency histograms the summaries come from (version 2; in a
    /// results database they are kept in `point_histogram` instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histograms: Option<Histograms>,
    /// The machine, the server and the client beside the run (version 2;
    /// absent with `--metrics off`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Metrics>,
    /// What the pacing measured (version 2; absent for a plain closed loop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing: Option<super::PacingOutcome>,
    /// Per transaction type, for a workload with several (DBT-1's
    /// interactions; version 4; absent otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transaction_types: Vec<TransactionType>,
    /// A run merged from shards (`dbsweep merge`; version 3): one row per
    /// shard and the window they had in common. Absent for one process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<Shards>,
    /// The workload's consistency conditions, checked after the run
    /// (`--check`; TPC-C's clause 3.3.2). Absent when not checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistency: Option<Vec<super::ConditionResult>>,
    /// TPC-C's results (tpmC, efficiency, NOPM and TPM by the client and
    /// by the database, each type's p90 against its limit, the mix against
    /// its minimums, the consistency verdict), derived from the rest of
    /// the record as it is written. Absent for other workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpcc: Option<super::Tpcc>,
    /// TPC-H's results (the test, each query's timing, Power@Size or
    /// Throughput@Size), derived from the rest of the record as it is
    /// written. Absent for other workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpch: Option<super::Tpch>,
    /// CH-benCHmark's results (terminals and streams, tpmC and QphH,
    /// each query's timing), derived from the rest of the record as it
    /// is written. Absent for other workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chbench: Option<super::Chbench>,
    /// The workload's statements' plans as the server chose them, read
    /// after the run (TPC-H's 22 queries). Absent for workloads that
    /// read none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plans: Vec<super::QueryPlan>,
}

/// The shards a merged run was made of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Shards {
    /// The length of the span every shard's measured window covers, s
    /// (`measured_s` spans from the first shard's window start to the last
    /// one's end, as one process's window runs until its last client).
    #[schemars(range(min = 0))]
    pub common_s: f64,
    /// The latest release minus the earliest, s: how far apart the shards
    /// started.
    #[schemars(range(min = 0))]
    pub start_skew_s: f64,
    pub rows: Vec<ShardRow>,
    /// How a coordinator started the shards together (`run --nodes N`);
    /// absent when they were run and merged by hand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordinator: Option<Coordination>,
}

/// A coordinated start: one instant, sent to every worker once all were
/// connected and ready, each releasing its clients at it by its own clock
/// corrected by its measured offset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Coordination {
    /// How the workers were started: `local`, `slurm` or `external`.
    pub launcher: String,
    /// The start instant, µs since the Unix epoch by the coordinator's
    /// clock.
    pub start_unix_us: u64,
    /// The largest start skew of any shard (see each row's
    /// `start_skew_s`), in absolute value, s.
    #[schemars(range(min = 0))]
    pub max_start_skew_s: f64,
}

/// One shard of a merged run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShardRow {
    pub index: u64,
    /// The machine it ran on.
    pub hostname: String,
    /// Its clients.
    pub clients: u64,
    pub transactions: u64,
    #[schemars(range(min = 0))]
    pub tps: f64,
    #[schemars(range(min = 0))]
    pub measured_s: f64,
    /// Its release after the earliest shard's, s, by the shards' own
    /// clocks (so it includes their clock offsets).
    #[schemars(range(min = 0))]
    pub start_offset_s: f64,
    /// Its clock minus the coordinator's, s; null when nobody measured it
    /// (records made by hand and merged).
    pub clock_offset_s: Option<f64>,
    /// The round trip of the ping its clock offset was read from, s: the
    /// offset is known to within half of it; absent when nobody measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub clock_rtt_s: Option<f64>,
    /// Its release minus the coordinator's start instant, s, by the
    /// coordinator's clock (its own release corrected by its clock
    /// offset); absent when no coordinator started it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_skew_s: Option<f64>,
    /// The scheduler's name for the node it ran on (Slurm's node name, a
    /// Kubernetes pod's), as its worker reported it; absent when merged by
    /// hand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Its client CPU (user + system) over its window, s.
    #[schemars(range(min = 0))]
    pub client_cpu_s: f64,
    /// Busy share of every CPU of the machine it ran on over its window, %
    /// (its sampler's `cpu_busy_pct`); absent when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub cpu_busy_pct: Option<f64>,
    /// Its client's (dbsweep's) share of that machine's CPU, % (its
    /// sampler's `client_cpu_pct`); absent when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub client_cpu_pct: Option<f64>,
    /// Its transaction latency at `run.percentile`, µs; null when none
    /// completed.
    #[schemars(range(min = 0))]
    pub latency_us: Option<f64>,
}

/// One transaction type of a workload with several (DBT-1's interactions):
/// its count and share of the mix, and its response times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TransactionType {
    pub name: String,
    /// Completed in the measured window.
    pub count: u64,
    /// Given up in the measured window.
    pub failed: u64,
    /// Completed per second of the window.
    #[schemars(range(min = 0))]
    pub per_s: f64,
    /// Share of all completed transactions, percent.
    #[schemars(range(min = 0, max = 100))]
    pub share_pct: f64,
    /// The share the workload's design gives it (a mix's stationary
    /// distribution), percent.
    pub expected_pct: Option<f64>,
    /// Response time from each transaction's intended start, with its
    /// 50th, 90th and 99th percentiles; null when none completed.
    pub latency: Option<Latency>,
    /// The limit its 90th percentile should meet (TPC-W's), seconds.
    pub p90_limit_s: Option<f64>,
    /// Whether the 90th percentile exceeded that limit (null without a
    /// limit or a latency).
    pub p90_exceeded: Option<bool>,
    /// False for a type that sends no statement to the database (counted
    /// all the same, as DBT-1 counts them).
    pub queries: bool,
}

/// Statements by sysbench's classes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Queries {
    /// Statements that returned a result set.
    pub read: u64,
    /// Statements without a result set that changed rows.
    pub write: u64,
    /// Everything else (BEGIN, COMMIT, DML that changed nothing).
    pub other: u64,
    /// `read + write + other`.
    pub total: u64,
}

/// Errors by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorCounts {
    pub deadlock: u64,
    /// Lock wait timeouts (SQLite: busy).
    pub lock_timeout: u64,
    pub serialization: u64,
    pub duplicate_key: u64,
    pub connection_lost: u64,
    pub other: u64,
    /// Statements ended by their time limit (TPC-H's `--query-timeout`);
    /// absent from records written before the kind existed.
    #[serde(default)]
    pub timeout: u64,
}

impl ErrorCounts {
    /// The kinds' names in their fixed order (the driver's `ErrorKind::ALL`).
    pub const NAMES: [&'static str; 7] = [
        "deadlock",
        "lock_timeout",
        "serialization",
        "duplicate_key",
        "connection_lost",
        "other",
        "timeout",
    ];

    /// Counts in the order of [`ErrorCounts::NAMES`].
    pub fn from_array(n: [u64; 7]) -> ErrorCounts {
        ErrorCounts {
            deadlock: n[0],
            lock_timeout: n[1],
            serialization: n[2],
            duplicate_key: n[3],
            connection_lost: n[4],
            other: n[5],
            timeout: n[6],
        }
    }

    /// Counts in the order of [`ErrorCounts::NAMES`].
    pub fn to_array(self) -> [u64; 7] {
        [
            self.deadlock,
            self.lock_timeout,
            self.serialization,
            self.duplicate_key,
            self.connection_lost,
            self.other,
            self.timeout,
        ]
    }

    /// `(name, count)` of every kind, in the fixed order.
    pub fn iter(self) -> impl Iterator<Item = (&'static str, u64)> {
        Self::NAMES.into_iter().zip(self.to_array())
    }

    /// Every kind together.
    pub fn total(self) -> u64 {
        self.to_array().iter().sum()
    }
}

/// Latency figures of one histogram, µs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Latency {
    #[schemars(range(min = 1))]
    pub count: u64,
    /// Exact.
    #[schemars(range(min = 0))]
    pub min_us: f64,
    /// Exact (sum / count).
    #[schemars(range(min = 0))]
    pub avg_us: f64,
    /// Exact.
    #[schemars(range(min = 0))]
    pub max_us: f64,
    #[schemars(range(min = 0))]
    pub sum_us: f64,
    /// The requested percentiles, read from the histogram, in the order
    /// asked for.
    pub percentiles: Vec<Percentile>,
}

/// One percentile of a latency distribution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Percentile {
    /// 0 to 100, e.g. 99.9.
    #[schemars(range(min = 0, max = 100))]
    pub p: f64,
    #[schemars(range(min = 0))]
    pub us: f64,
}

/// The latency of one statement type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatementLatency {
    #[serde(rename = "type")]
    pub kind: String,
    pub latency: Latency,
}

/// sysbench's "Threads fairness": mean and population standard deviation
/// of the events each client ran and of the time it spent in them. Null
/// (NaN in memory) when there were no clients to average over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fairness {
    #[serde(deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>", range(min = 0))]
    pub events_avg: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>", range(min = 0))]
    pub events_stddev: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>", range(min = 0))]
    pub time_avg_s: f64,
    #[serde(deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>", range(min = 0))]
    pub time_stddev_s: f64,
}

/// serde_json writes NaN as null; this reads it back as NaN.
fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// The client's own CPU over the measured window (every thread of this
/// process, so an embedded engine's work counts here).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClientCpu {
    #[schemars(range(min = 0))]
    pub user_s: f64,
    #[schemars(range(min = 0))]
    pub system_s: f64,
    /// Null when no transaction completed.
    #[schemars(range(min = 0))]
    pub us_per_transaction: Option<f64>,
    /// Null when no query ran.
    #[schemars(range(min = 0))]
    pub us_per_query: Option<f64>,
    /// User + system time as a share of all usable CPUs over the window.
    #[schemars(range(min = 0))]
    pub share_of_machine: f64,
    /// CPUs this process could use.
    #[schemars(range(min = 1))]
    pub cpus: u64,
}

impl ClientCpu {
    /// User + system, seconds.
    pub fn total_s(&self) -> f64 {
        self.user_s + self.system_s
    }
}

/// One interval of the run's time series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Interval {
    /// Seconds since the clients were released, at the interval's end.
    #[schemars(range(min = 0))]
    pub t_s: f64,
    #[schemars(range(min = 0))]
    pub duration_s: f64,
    /// The interval lies (at least partly) in the warmup.
    pub warmup: bool,
    #[schemars(range(min = 1))]
    pub threads: u64,
    pub transactions: u64,
    pub failed: u64,
    pub reads: u64,
    pub writes: u64,
    pub others: u64,
    pub errors: u64,
    pub reconnects: u64,
    /// Transaction latency in this interval; null when none completed.
    #[schemars(range(min = 0))]
    pub p50_us: Option<f64>,
    #[schemars(range(min = 0))]
    pub p95_us: Option<f64>,
    #[schemars(range(min = 0))]
    pub p99_us: Option<f64>,
    #[schemars(range(min = 0))]
    pub max_us: Option<f64>,
    /// Queued runs: transactions due in the interval, per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub offered_per_s: Option<f64>,
    /// Queued runs: transactions due and waiting for a connection at the
    /// interval's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<u64>,
    /// Queued runs: schedule lag of the interval's transactions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub lag_p99_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub lag_max_us: Option<f64>,
    /// With a latency limit: late and skipped transactions in the interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<u64>,
    /// The interval's transaction latency, ns: what its percentiles are
    /// read from (version 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<Histogram>,
    /// Queued runs: the interval's schedule lag, ns (version 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_histogram: Option<Histogram>,
}

/// Opening (and preparing) every client's connection before the clients
/// were released: Super Smack's `connect:` line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Connect {
    /// From the first attempt until every client was connected.
    #[schemars(range(min = 0))]
    pub wall_s: f64,
    /// One value per client: connect plus prepare, ns.
    pub histogram: Histogram,
}

/// The full latency histograms of a run, ns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Histograms {
    /// Every transaction of the measured window.
    pub transaction: Histogram,
    /// Statement type → its histogram, for every type that ran.
    pub statements: OrderedMap<Histogram>,
    /// Queued runs: service time and schedule lag (version 2, pacing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<Histogram>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag: Option<Histogram>,
    /// Transaction type → its histogram, for a workload with several
    /// (version 3).
    #[serde(default, skip_serializing_if = "OrderedMap::is_empty")]
    pub types: OrderedMap<Histogram>,
}

/// Why the run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The measured time was over.
    Time,
    /// The `--events` transactions were done.
    Events,
    /// Every client ran its rounds.
    Rounds,
    /// Ctrl-C or SIGTERM.
    Interrupted,
    /// A client hit an error that is neither retryable nor ignored.
    Aborted,
    /// The run's hard timeout (a study's `point_timeout`) was reached.
    Timeout,
    /// The process ended before the run did (it was killed): the record
    /// was rebuilt from the intervals its series file had closed.
    Incomplete,
}

impl StopReason {
    /// The name written in the record.
    pub fn name(self) -> &'static str {
        match self {
            StopReason::Time => "time",
            StopReason::Events => "events",
            StopReason::Rounds => "rounds",
            StopReason::Interrupted => "interrupted",
            StopReason::Aborted => "aborted",
            StopReason::Timeout => "timeout",
            StopReason::Incomplete => "incomplete",
        }
    }
}
