//! The study file as written: serde structs that mirror the TOML one to one,
//! with spans kept wherever validation may later need to point at a value.
//!
//! Every table denies unknown keys, so a typo is an error rather than a
//! silently ignored setting. The small value types (`values.rs`) accept the
//! forms a person writes (a duration as `30` or `"10m"`, a CPU set as
//! `[0, 1]` or `"0-1"`, …) and say which forms they accept when given
//! something else.
//! Meaning (defaults, references, the workload registry) is checked in
//! `load.rs`; `model.rs` holds the validated result.

use serde::Deserialize;
use toml::Spanned;

use super::model::{Reprepare, Restart};
pub(super) use super::values::*;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawStudy {
    pub name: Option<Spanned<String>>,
    #[serde(default)]
    pub description: String,
    pub out: Option<Spanned<String>>,
    pub restart: Option<Restart>,
    /// `interleaved` or `sequential` (default: interleaved with two or
    /// more series).
    pub order: Option<Spanned<String>>,
    /// The series others are compared with: one, or one per server kind.
    pub baseline: Option<Spanned<Names>>,
    /// The series measured twice per block (the noise floor).
    pub control: Option<Spanned<String>>,
    /// The margin of "no difference", e.g. "2%".
    pub equivalence: Option<Spanned<Percent>>,
    /// Seeds the order of each block.
    pub seed: Option<u64>,
    /// Every workload's repeats, unless it gives its own.
    pub repeats: Option<Spanned<RawRepeats>>,
    /// Sample the machine and the server beside each point (default true).
    pub metrics: Option<bool>,
    pub metrics_interval: Option<Spanned<Dur>>,
    /// Serve each point live at this address's /metrics (`HOST:PORT`).
    pub prometheus: Option<Spanned<String>>,
    /// On-CPU profiles of each point (`run --profile`), unless a workload
    /// says otherwise.
    pub profile: Option<bool>,
    pub clients: Option<Spanned<ClientList>>,
    pub cpus: Option<Spanned<Vec<Spanned<CpuSet>>>>,
    /// Every point on this many load machines (a coordinated run), unless
    /// a target or workload says otherwise.
    pub nodes: Option<Spanned<i64>>,
    /// Who starts their workers: `local` or `slurm`.
    pub launcher: Option<Spanned<String>>,
    #[serde(default, rename = "target")]
    pub targets: Vec<Spanned<RawTarget>>,
    #[serde(default, rename = "variant")]
    pub variants: Vec<Spanned<RawVariant>>,
    #[serde(default, rename = "workload")]
    pub workloads: Vec<Spanned<RawWorkload>>,
    #[serde(default)]
    pub stop: RawStop,
    #[serde(default)]
    pub sweep: RawSweep,
    #[serde(default, rename = "reference")]
    pub references: Vec<Spanned<RawReference>>,
    #[serde(default, rename = "conclusion")]
    pub conclusions: Vec<Spanned<RawConclusion>>,
    #[serde(default, rename = "deviation")]
    pub deviations: Vec<Spanned<RawDeviation>>,
}

/// Another source's published figures (`[[reference]]`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawReference {
    /// The CSV file, relative to the study file; none for a publication
    /// that printed no numbers (its series still named through `map`).
    pub file: Option<Spanned<String>>,
    /// How the report names the source.
    pub label: Option<String>,
    /// The metric compared (default `tps`).
    pub metric: Option<Spanned<String>>,
    /// `"target/variant"` = the published series it is compared with.
    pub map: Option<Spanned<Ordered<String>>>,
    /// The study's CPU set (`"0-1"`) = the published CPU configuration.
    pub cpus: Option<Spanned<Ordered<String>>>,
}

/// A conclusion of the publication (or, without `quote`, our own
/// observation), as a statement to check or a reason it cannot be.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawConclusion {
    /// The row's short wording.
    pub text: String,
    /// The publication's sentence, verbatim.
    pub quote: Option<Spanned<String>>,
    /// Where it is: `FILE:LINE`.
    pub source: Option<Spanned<String>>,
    pub check: Option<Spanned<String>>,
    /// `false`: cannot be checked here, for `reason`.
    pub measurable: Option<Spanned<bool>>,
    pub reason: Option<Spanned<String>>,
}

/// How the study differs from the publication (`[[deviation]]`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDeviation {
    pub what: Spanned<String>,
    pub seed: Spanned<String>,
    pub ours: Spanned<String>,
    pub why: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTarget {
    pub name: Option<Spanned<String>>,
    pub url: Option<Spanned<String>>,
    pub server: Option<Spanned<String>>,
    pub sqlite: Option<Spanned<SqliteSpec>>,
    pub settings: Option<Spanned<Ordered<SettingValue>>>,
    pub binaries: Option<Spanned<String>>,
    pub version: Option<Spanned<String>>,
    pub config_file: Option<Spanned<String>>,
    pub tls: Option<Spanned<bool>>,
    pub pooler: Option<Spanned<String>>,
    pub pooler_settings: Option<Spanned<Ordered<SettingValue>>>,
    pub dir: Option<Spanned<String>>,
    pub cpus: Option<Spanned<Vec<Spanned<CpuSet>>>>,
    pub ps_mode: Option<Spanned<PsModeName>>,
    pub password_env: Option<Spanned<String>>,
    pub password_file: Option<Spanned<String>>,
    pub nodes: Option<Spanned<i64>>,
    pub launcher: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawVariant {
    pub name: Spanned<String>,
    #[serde(default)]
    pub settings: Ordered<SettingValue>,
    pub targets: Option<Spanned<Vec<Spanned<String>>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawWorkload {
    pub name: Spanned<String>,
    pub label: Option<Spanned<String>>,
    pub options: Option<Spanned<Ordered<OptValue>>>,
    pub time: Option<Dur>,
    pub events: Option<u64>,
    pub rounds: Option<u64>,
    pub warmup: Option<Dur>,
    pub repeats: Option<Spanned<RawRepeats>>,
    pub clients: Option<Spanned<ClientList>>,
    pub rand_type: Option<Spanned<String>>,
    pub rand_seed: Option<u64>,
    pub report_interval: Option<Dur>,
    pub max_retries: Option<u64>,
    pub ignore_errors: Option<Spanned<NameList>>,
    pub grace: Option<Dur>,
    pub instances: Option<Spanned<u32>>,
    pub reprepare: Option<Reprepare>,
    /// Check the workload's consistency conditions after each point.
    pub check: Option<bool>,
    pub rates: Option<Spanned<RateList>>,
    /// `eus` is DBT-1's word for the same axis.
    #[serde(alias = "eus")]
    pub users: Option<Spanned<ClientList>>,
    pub ramp_up: Option<Spanned<f64>>,
    pub arrival: Option<Spanned<String>>,
    pub latency_limit: Option<Spanned<Dur>>,
    pub think_time: Option<Spanned<String>>,
    pub p99_goal: Option<Spanned<Dur>>,
    pub nodes: Option<Spanned<i64>>,
    pub launcher: Option<Spanned<String>>,
    /// The run's `--client-threads`: its connections on this many event
    /// loops (at most one per client).
    pub client_threads: Option<Spanned<i64>>,
    /// The run's `--pipeline`: statements in flight per connection.
    pub pipeline: Option<Spanned<i64>>,
    /// The run's `--profile`, over the study's.
    pub profile: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawStop {
    pub below_peak: Option<Spanned<f64>>,
    pub max_failed_rate: Option<Spanned<f64>>,
    pub max_error_rate: Option<Spanned<Ordered<f64>>>,
    pub point_timeout: Option<Spanned<Dur>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSweep {
    pub parameter: Option<Spanned<RawParameterSweep>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawParameterSweep {
    pub clients: Spanned<u32>,
    pub baseline: Option<Spanned<String>>,
    pub targets: Option<Spanned<Vec<Spanned<String>>>>,
    pub values: Spanned<Ordered<Vec<Spanned<SettingValue>>>>,
}
