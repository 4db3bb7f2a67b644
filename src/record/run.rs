//! The run record's parts. Field docs become the descriptions of the
//! generated JSON Schema (`schema/run.schema.json`); units are in the
//! field names (`_s` seconds, `_us` microseconds, `_ns` nanoseconds) and
//! rates are per second of the measured window.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::histogram::Histogram;
use super::map::Pairs;
use super::outcome::Outcome;

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
    #[schemars(extend("const" = "dbsweep-run/3"))]
    pub schema: String,
    pub tool: Tool,
    /// When the run started, seconds since 1970 (UTC).
    pub started_unix_s: u64,
    /// When the clients were released (the start of the run's timeline;
    /// the measured window begins `run.warmup_s` later), microseconds since
    /// 1970 (UTC): what sets the windows of a run's shards side by side
    /// (version 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub released_unix_us: Option<u64>,
    pub workload: WorkloadInfo,
    pub target: TargetInfo,
    pub random: Random,
    pub run: Settings,
    pub machine: Machine,
    pub result: Outcome,
}

impl Run {
    /// Its on-CPU profiles (none without metrics).
    pub fn profiles(&self) -> impl Iterator<Item = &super::profile::Profile> {
        (self.result.metrics.iter()).flat_map(|m| m.profiles.iter())
    }

    pub fn profiles_mut(&mut self) -> impl Iterator<Item = &mut super::profile::Profile> {
        (self.result.metrics.iter_mut()).flat_map(|m| m.profiles.iter_mut())
    }

    /// Writes each profile's folded stacks beside the record's file
    /// `json`, gzipped, as `json` with `.ROLE.folded.gz` for its
    /// extension, and names the file in the profile (before the record is
    /// written).
    pub fn write_folded_beside(&mut self, json: &std::path::Path) -> anyhow::Result<()> {
        for profile in self.profiles_mut() {
            let Some(gz) = profile.folded_gz() else {
                continue;
            };
            let path = json.with_extension(format!("{}.folded.gz", profile.role));
            crate::util::paths::write_atomically(&path, &gz?)?;
            profile.file = path.file_name().map(|f| f.to_string_lossy().into_owned());
        }
        Ok(())
    }

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
    /// Open loop, users, think time, latency limit (version 2; absent: a
    /// closed loop, one user per connection).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing: Option<super::PacingSettings>,
    /// The percentiles of every latency summary, as asked for
    /// (`--percentiles`; version 3): what a summary is derived with again
    /// when shards are merged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub percentiles: Vec<f64>,
    /// This record is one shard of a run split across processes
    /// (`--shard I/N`; version 3): `threads`, `events`, users and the rate
    /// are this shard's share; absent: the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardOf>,
    /// The clients ran on this many event-loop threads (`--client-threads`);
    /// absent: a thread per client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_threads: Option<u64>,
    /// A transaction's statements were sent in groups of up to this many,
    /// each one pipeline (`--pipeline`); absent: one at a time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<u64>,
}

/// Which shard of a run a record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShardOf {
    /// 0-based; shard 0 prepares and checks the data.
    pub index: u64,
    /// Shards in the run.
    #[schemars(range(min = 1))]
    pub count: u64,
    /// Clients in the whole run (all shards).
    #[schemars(range(min = 1))]
    pub threads: u64,
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
