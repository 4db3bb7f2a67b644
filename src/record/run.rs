//! The run record's parts. Field docs become the descriptions of the
//! generated JSON Schema (`schema/run.schema.json`); units are in the
//! field names (`_s` seconds, `_us` microseconds, `_ns` nanoseconds) and
//! rates are per second of the measured window.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::histogram::Histogram;
use super::map::{OrderedMap, Pairs};

/// One run of one workload at one concurrency: what produced it and
/// everything it measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "dbsweep run result",
    description = "One run of one workload at one concurrency, as written by `dbsweep run --json FILE`. Latencies are in microseconds (measured with nanosecond resolution), histograms in nanoseconds; rates are per second of the measured window. See docs/json.md."
)]
pub struct Run {
    /// The format and its version.
    #[schemars(extend("const" = "dbsweep-run/2"))]
    pub schema: String,
    pub tool: Tool,
    /// When the run started, seconds since 1970 (UTC).
    pub started_unix_s: u64,
    pub workload: WorkloadInfo,
    pub target: TargetInfo,
    pub random: Random,
    pub run: Settings,
    pub machine: Machine,
    pub result: Outcome,
}

impl Run {
    /// The histogram of the transactions (`None`) or of one statement
    /// type; `None` when the record has no histograms (version 1, or read
    /// from a results database without them) or none of that name.
    pub fn histogram(&self, statement: Option<&str>) -> Option<&Histogram> {
        let hs = self.result.histograms.as_ref()?;
        match statement {
            None => Some(&hs.transaction),
            Some(name) => hs.statements.get(name),
        }
    }
}

/// The program that measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    #[schemars(extend("const" = "dbsweep"))]
    pub name: String,
    pub version: String,
}

/// The workload and every effective option (defaults included).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadInfo {
    pub name: String,
    /// Option name → value, in the workload's order.
    pub options: Pairs,
}

/// What was measured against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TargetInfo {
    /// Target URL without password.
    pub url: String,
    pub dialect: Dialect,
    /// The server's product and version as the connection reported it.
    pub server_version: String,
    /// The server's effective settings, as it reported them.
    pub settings: Pairs,
}

/// SQL dialect of a target; workloads render DDL and statement text per
/// dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    Sqlite,
    Postgres,
    Mysql,
}

impl Dialect {
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Sqlite => "sqlite",
            Dialect::Postgres => "postgres",
            Dialect::Mysql => "mysql",
        }
    }
}

/// How random values were drawn (sysbench's `--rand-*` options).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Random {
    /// The distribution of keys.
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["uniform", "gaussian", "special", "pareto", "zipfian"]))]
    pub kind: String,
    /// The run's seed: client `i` draws from its own stream of it, so the
    /// same seed repeats the same choices.
    pub seed: u64,
    #[schemars(range(min = 1))]
    pub spec_iter: u32,
    pub spec_pct: f64,
    pub spec_res: f64,
    pub pareto_h: f64,
    pub zipfian_exp: f64,
}

/// How the run was driven.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Clients, each with its own connection (all instances together).
    #[schemars(range(min = 1))]
    pub threads: u64,
    /// Length of the measured window asked for; null: no time limit.
    pub time_s: Option<f64>,
    /// Transactions to run in the window, across clients.
    pub events: Option<u64>,
    /// Transactions per client.
    pub rounds: Option<u64>,
    /// Unmeasured load before the window.
    #[schemars(range(min = 0))]
    pub warmup_s: f64,
    pub report_interval_s: Option<f64>,
    /// The latency percentile each interval line shows and a run's report
    /// leads with (`--percentile`; version 2: unknown before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentile: Option<f64>,
    /// Retries of one transaction after retryable errors; null: unlimited.
    pub max_retries: Option<u64>,
    /// Error kinds that fail a transaction instead of the run.
    pub ignore_errors: Vec<ErrorKindName>,
    /// How long in-flight transactions may take after the end before they
    /// are abandoned.
    #[schemars(range(min = 0))]
    pub grace_s: f64,
    /// The hard limit on the whole run, warmup included (a study's
    /// `point_timeout`); absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<f64>,
}

/// The name of an error kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct ErrorKindName(
    #[schemars(extend("enum" = ["deadlock", "lock_timeout", "serialization", "duplicate_key", "connection_lost", "other"]))]
    pub String,
);

/// The machine a result was measured on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Machine {
    pub hostname: String,
    pub cpu_model: String,
    /// Logical CPUs online.
    pub cpus_online: u64,
    /// CPUs this process may use (affinity mask / quota).
    #[schemars(range(min = 1))]
    pub cpus_available: u64,
    pub memory_bytes: u64,
    pub kernel: String,
    pub os: String,
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
        }
    }
}

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
    pub intervals: Vec<Interval>,
    /// Connecting the clients before they were released (version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<Connect>,
    /// The latency histograms the summaries come from (version 2; in a
    /// results database they are kept in `point_histogram` instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histograms: Option<Histograms>,
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
}

impl ErrorCounts {
    /// The kinds' names in their fixed order (the driver's `ErrorKind::ALL`).
    pub const NAMES: [&'static str; 6] = [
        "deadlock",
        "lock_timeout",
        "serialization",
        "duplicate_key",
        "connection_lost",
        "other",
    ];

    /// Counts in the order of [`ErrorCounts::NAMES`].
    pub fn from_array(n: [u64; 6]) -> ErrorCounts {
        ErrorCounts {
            deadlock: n[0],
            lock_timeout: n[1],
            serialization: n[2],
            duplicate_key: n[3],
            connection_lost: n[4],
            other: n[5],
        }
    }

    /// Counts in the order of [`ErrorCounts::NAMES`].
    pub fn to_array(self) -> [u64; 6] {
        [
            self.deadlock,
            self.lock_timeout,
            self.serialization,
            self.duplicate_key,
            self.connection_lost,
            self.other,
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
}

impl Run {
    /// A small, complete record with round numbers: the starting point of
    /// tests and examples that need one (10 s, 1,000 transactions, 4
    /// errors, one warmup interval, no latency).
    pub fn sample() -> Run {
        Run {
            schema: super::SCHEMA_ID.into(),
            tool: Tool {
                name: "dbsweep".into(),
                version: "0.1.0".into(),
            },
            started_unix_s: 1_700_000_000,
            workload: WorkloadInfo {
                name: "oltp_read_write".into(),
                options: Pairs::default(),
            },
            target: TargetInfo {
                url: "sqlite:///tmp/x.db".into(),
                dialect: Dialect::Sqlite,
                server_version: "SQLite 3.46.0".into(),
                settings: Pairs::default(),
            },
            random: Random {
                kind: "uniform".into(),
                seed: 18_000_000_000_000_000_000,
                spec_iter: 12,
                spec_pct: 1.0,
                spec_res: 75.0,
                pareto_h: 0.2,
                zipfian_exp: 0.8,
            },
            run: Settings {
                threads: 4,
                time_s: Some(10.0),
                events: None,
                rounds: None,
                warmup_s: 0.0,
                report_interval_s: Some(1.0),
                percentile: Some(95.0),
                max_retries: None,
                ignore_errors: Vec::new(),
                grace_s: 1.0,
                timeout_s: None,
            },
            machine: Machine {
                hostname: "host".into(),
                cpu_model: "CPU".into(),
                cpus_online: 2,
                cpus_available: 2,
                memory_bytes: 1 << 30,
                kernel: "6.1".into(),
                os: "linux".into(),
            },
            result: Outcome {
                stop_reason: StopReason::Time,
                fatal_error: None,
                measured_s: 10.0,
                transactions: 1000,
                tps: 100.0,
                queries: Queries {
                    read: 14000,
                    write: 4000,
                    other: 2000,
                    total: 20000,
                },
                qps: 2000.0,
                failed_transactions: 1,
                retries: 3,
                ignored_errors: 4,
                reconnects: 0,
                abandoned: 0,
                errors: ErrorCounts {
                    deadlock: 3,
                    other: 1,
                    ..ErrorCounts::default()
                },
                latency: None,
                statements: Vec::new(),
                fairness: Fairness {
                    events_avg: 250.0,
                    events_stddev: 0.0,
                    time_avg_s: 10.0,
                    time_stddev_s: 0.0,
                },
                client_cpu: ClientCpu {
                    user_s: 1.5,
                    system_s: 0.25,
                    us_per_transaction: Some(1750.0),
                    us_per_query: Some(87.5),
                    share_of_machine: 0.0875,
                    cpus: 2,
                },
                intervals: vec![Interval {
                    t_s: 1.0,
                    duration_s: 1.0,
                    warmup: true,
                    threads: 4,
                    transactions: 90,
                    failed: 0,
                    reads: 1,
                    writes: 2,
                    others: 3,
                    errors: 0,
                    reconnects: 0,
                    p50_us: Some(10.0),
                    p95_us: None,
                    p99_us: Some(30.0),
                    max_us: Some(40.0),
                }],
                connect: None,
                histograms: None,
            },
        }
    }
}
