//! What a study report is made of: the figures of each cell (the repeats
//! of one series at one client count), series, panels, the sweep, CPU
//! scalability and the comparison with a baseline — the [`Report`] that
//! `figures` derives, `conclusions` words, `layout` lays out and CSV and
//! JSON serialise.

use crate::workload::unit::Unit;
use std::collections::BTreeMap;

use serde::Serialize;

use super::Metric;
use crate::report::study::analysis::{Change, Peak, Rank, Sag, Scaling};

/// Identifies the JSON format of a report and its version.
pub const SCHEMA_ID: &str = "dbsweep-report/1";

/// A curve collapses where it falls below this share of its peak.
pub const COLLAPSE_FRACTION: f64 = 0.5;

/// One figure over the finished repeats of a cell.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stat {
    /// Repeats with a value.
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation; `None` below two repeats.
    pub stddev: Option<f64>,
    /// Half-width of the 95 % confidence interval of the mean.
    pub ci95: Option<f64>,
    pub min: f64,
    pub max: f64,
    /// The repeats' values, for comparisons.
    #[serde(skip)]
    pub values: Vec<f64>,
}

impl Stat {
    pub(super) fn of(values: Vec<f64>) -> Option<Stat> {
        let s = crate::stats::Spread::of(&values)?;
        Some(Stat {
            n: s.n,
            mean: s.mean,
            stddev: s.stddev,
            ci95: s.ci95,
            min: s.min,
            max: s.max,
            values,
        })
    }

    /// The spread as a cell's detail.
    pub(super) fn detail(&self, fmt: impl Fn(f64) -> String) -> String {
        match (self.stddev, self.ci95) {
            (Some(sd), Some(ci)) => format!(
                "mean of {} repeats: ± {} sd, ± {} (95 % CI), range {} – {}",
                self.n,
                fmt(sd),
                fmt(ci),
                fmt(self.min),
                fmt(self.max)
            ),
            _ => "1 repeat: no spread".to_string(),
        }
    }
}

/// The repeats of one point (one series at one client count).
#[derive(Debug, Clone, Default, Serialize)]
pub struct CellData {
    pub clients: u32,
    /// Finished repeats (the ones the figures are over).
    pub finished: usize,
    pub skipped: usize,
    pub failed: usize,
    /// "skipped: …" / "failed: …", each distinct one once.
    pub reasons: Vec<String>,
    pub tps: Option<Stat>,
    pub qps: Option<Stat>,
    pub p95_ms: Option<Stat>,
    pub p99_ms: Option<Stat>,
    pub errors_ps: Option<Stat>,
    /// The client's CPU in percent of one core.
    pub client_cpu_pct: Option<Stat>,
    /// Events per client: coefficient of variation in percent (0: every
    /// client did the same work).
    pub fairness_cv_pct: Option<Stat>,
    /// Present only where measured (a run's `result.metrics`).
    /// The panel's CPU set (or the machine) over the window: busy, user
    /// (nice included), system (irq, softirq and steal included) and
    /// iowait shares, %.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_busy_pct: Option<Stat>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_user_pct: Option<Stat>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_system_pct: Option<Stat>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iowait_pct: Option<Stat>,
    /// The server's processes' and dbsweep's shares of the machine's CPU, %.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_machine_pct: Option<Stat>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_machine_pct: Option<Stat>,
    /// The server's CPU per transaction, µs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_cpu_us_per_txn: Option<Stat>,
    /// As the server counts them, per second of the window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadlocks_ps: Option<Stat>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row_lock_waits_ps: Option<Stat>,
    /// InnoDB semaphore OS waits per transaction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub semaphore_waits_per_txn: Option<Stat>,
}

/// One target/variant of a panel: a row of its tables, a line of its charts.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SeriesData {
    /// How the report names it ("mariadb / base").
    pub label: String,
    pub target: String,
    pub variant: String,
    pub instances: u32,
    /// The server version the runs reported (the first one).
    pub server_version: Option<String>,
    /// One per client count of the panel, same order (a client count this
    /// series was not planned at has no repeats and no reasons).
    pub cells: Vec<CellData>,
    /// Over the throughput metric (tps, or qps when the report shows qps).
    pub peak: Option<Peak>,
    pub sag: Option<Sag>,
    /// The first client count past the peak below [`COLLAPSE_FRACTION`] of it.
    pub collapse: Option<Peak>,
    /// Errors by kind over every finished repeat of the series.
    pub errors: BTreeMap<String, u64>,
    pub failed_transactions: u64,
    pub retries: u64,
    pub reconnects: u64,
    pub abandoned: u64,
}

/// Transaction and statement latency at one point of a series, from its
/// histograms merged over the repeats.
#[derive(Debug, Clone, Serialize)]
pub struct StatementLatency {
    pub series: String,
    pub clients: u32,
    /// `transaction` first, then each statement type.
    pub kinds: Vec<KindLatency>,
}

#[derive(Debug, Clone, Serialize)]
pub struct KindLatency {
    pub kind: String,
    pub count: u64,
    pub avg_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// One setting's value of a parameter sweep against the baseline variant.
#[derive(Debug, Clone, Serialize)]
pub struct SweepRow {
    pub target: String,
    /// What the report calls the target (see `StudyData::target_label`).
    #[serde(skip)]
    pub target_label: String,
    pub variant: String,
    /// What the variant changes (empty for the baseline itself).
    pub setting: String,
    pub value: String,
    pub tps: Option<Stat>,
    pub p95_ms: Option<Stat>,
    /// Throughput against the baseline's; `None` for the baseline.
    pub change: Option<Change>,
    /// Throughput against the baseline's block by block, where the
    /// repeats pair (an interleaved study): the ratio's geometric mean and
    /// its 95 % interval; it decides `change`'s verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paired: Option<crate::stats::paired::Ratio>,
}

/// `[sweep.parameter]`: each variant at the sweep's client count.
#[derive(Debug, Clone, Serialize)]
pub struct Sweep {
    pub baseline: String,
    pub clients: u32,
    /// The offered load it was measured at (a `users` or `rates` axis).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
    pub rows: Vec<SweepRow>,
    /// Some value has fewer than two repeats: its change cannot be judged.
    pub too_few_repeats: bool,
}

/// The figures of one workload entry on one CPU set.
#[derive(Debug, Clone, Serialize)]
pub struct Panel {
    /// A stable identifier (file names of its charts).
    pub id: String,
    /// The workload entry's label and workload.
    pub workload: String,
    pub workload_name: String,
    /// The options the study gives it.
    pub options: BTreeMap<String, String>,
    /// The CPU set of the servers; `None`: not pinned.
    pub cpus: Option<String>,
    pub clients: Vec<u32>,
    pub series: Vec<SeriesData>,
    /// The series by peak throughput, best first.
    pub ranking: Vec<Rank>,
    /// The client count of the per-point figures.
    pub focus_clients: Option<u32>,
    pub statements: Vec<StatementLatency>,
    pub sweep: Option<Sweep>,
}

/// A workload entry's offered-load sweep on one CPU set (its `rates` or
/// `users` axis): per series and client count, what each level brought.
#[derive(Debug, Clone, Serialize)]
pub struct LoadPanel {
    /// A stable identifier (file names of its charts).
    pub id: String,
    pub workload: String,
    pub cpus: Option<String>,
    /// `rate` or `users`: what the levels are.
    pub axis: String,
    /// What its throughput counts (the workload's, so not repeated in
    /// the JSON).
    #[serde(skip)]
    pub unit: Unit,
    pub series: Vec<LoadSeries>,
    /// The p99 latency an offered load must keep to count as sustained, ms.
    pub goal_ms: f64,
    /// Where the goal comes from (`p99_goal`, `latency_limit`, default).
    pub goal_from: String,
    /// A parameter sweep measured on this axis: one per level.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sweeps: Vec<Sweep>,
}

/// One target/variant at one client count (connections) over the levels.
#[derive(Debug, Clone, Serialize)]
pub struct LoadSeries {
    pub label: String,
    pub clients: u32,
    /// Levels in the plan's order (rising load).
    pub levels: Vec<LoadLevel>,
    /// The level with the highest achieved rate that was sustained: p99
    /// within the goal and at most 1 % of its offered load skipped or left
    /// unstarted. `None`: no level was.
    pub sustained: Option<usize>,
}

/// The repeats of one level, averaged.
#[derive(Debug, Clone, Serialize)]
pub struct LoadLevel {
    /// As the plan writes it: `rate=5000`, `rate=50%`, `users=1000`.
    pub level: String,
    /// Finished repeats (the figures are their means).
    pub repeats: usize,
    /// Why the level has no figures (skipped or failed), when it has none.
    pub missing: Option<String>,
    pub offered_per_s: Option<f64>,
    pub achieved_per_s: Option<f64>,
    /// Latency from the intended start, ms.
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub max_ms: Option<f64>,
    /// Shares of the offered transactions, %.
    pub late_pct: Option<f64>,
    pub skipped_pct: Option<f64>,
    pub unstarted_pct: Option<f64>,
    /// Schedule lag (or users' queue wait) p99, ms.
    pub lag_p99_ms: Option<f64>,
    /// A users level's users.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub users: Option<u32>,
    /// The machine's busy share and the server's share of it, %.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_busy_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_cpu_pct: Option<f64>,
    /// Per transaction type (DBT-1's interactions), means of the repeats.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub types: Vec<TypeLevel>,
}

/// One transaction type at one level.
#[derive(Debug, Clone, Serialize)]
pub struct TypeLevel {
    pub name: String,
    pub share_pct: f64,
    pub expected_pct: Option<f64>,
    pub per_s: f64,
    pub avg_ms: Option<f64>,
    pub p90_ms: Option<f64>,
    pub p90_limit_ms: Option<f64>,
    pub queries: bool,
}

/// CPU scalability of one workload entry: per series, its peak on each
/// CPU set and the factors.
#[derive(Debug, Clone, Serialize)]
pub struct Scalability {
    pub workload: String,
    pub series: Vec<ScalingSeries>,
}

/// One series' peaks by CPU set, fewest CPUs first.
#[derive(Debug, Clone, Serialize)]
pub struct ScalingSeries {
    pub label: String,
    pub configs: Vec<Scaling>,
}

/// One cell against the baseline study's.
#[derive(Debug, Clone, Serialize)]
pub struct ComparedCell {
    pub clients: u32,
    pub baseline: Option<f64>,
    pub value: Option<f64>,
    pub change: Option<Change>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ComparedSeries {
    pub label: String,
    pub cells: Vec<ComparedCell>,
}

/// A panel of this study next to the same panel of the baseline.
#[derive(Debug, Clone, Serialize)]
pub struct ComparedPanel {
    pub id: String,
    pub workload: String,
    pub cpus: Option<String>,
    pub clients: Vec<u32>,
    pub series: Vec<ComparedSeries>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The baseline study's name and where it was read from.
    pub baseline: String,
    pub source: String,
    pub metric: Metric,
    pub panels: Vec<ComparedPanel>,
}

/// What the study is, for headers.
#[derive(Debug, Clone, Serialize)]
pub struct StudyFacts {
    pub name: String,
    pub description: String,
    pub source: String,
    pub started_unix_s: u64,
    pub tool_version: String,
    pub sessions: u64,
    pub machine: serde_json::Value,
    pub points_finished: usize,
    pub points_skipped: usize,
    pub points_failed: usize,
    /// Each target's server: its release, the `--version` lines of the
    /// programs that served it, and the name the report gives it.
    pub servers: Vec<super::servers::TargetServer>,
}

/// Every derived figure of a study: what CSV and JSON export and what the
/// document is laid out from.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub study: StudyFacts,
    pub metric: Metric,
    pub panels: Vec<Panel>,
    /// The offered-load sweeps (paced points), if any.
    pub offered: Vec<LoadPanel>,
    /// The searches for the highest sustained rate (`rates = "find"`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub searched: Vec<SearchPanel>,
    pub scalability: Vec<Scalability>,
    pub comparison: Option<Comparison>,
    /// The series compared block by block: `order`, `equivalence`,
    /// `comparisons`, `noise_floor`, `drift`, `machines` (paired.rs).
    #[serde(flatten)]
    pub paired: super::pairs::Paired,
    /// The report's conclusions, as sentences.
    pub conclusions: Vec<String>,
    /// The publication the study reproduces: its figures beside ours, its
    /// conclusions' verdicts, the deviations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reproduction: Option<Reproduction>,
}

impl Report {
    /// The name of the figure peaks and rankings are over.
    pub fn metric_throughput(&self) -> &'static str {
        if self.metric == Metric::Qps {
            "qps"
        } else {
            "tps"
        }
    }
}

pub use crate::study::repro::RefSpec;

/// One conclusion's verdicts.
#[derive(Debug, Clone, Serialize)]
pub struct ConclusionRow {
    pub text: String,
    /// The publication's words (None: our own observation).
    pub quote: Option<String>,
    /// Where they are: `FILE:LINE`.
    pub source: Option<String>,
    /// The statement (None: not measurable here, for `seed`'s reason).
    pub check: Option<String>,
    /// On the publication's own numbers (a check of the transcription).
    pub seed: super::statement::Verdict,
    /// How far from failing on the publication's numbers.
    pub seed_margin: Option<super::statement::Margin>,
    /// On this study's measured series: judged on its blocks (see
    /// `judged.rs`), holding or failing only where their interval decides.
    pub here: super::statement::Verdict,
    /// How far from failing on the means of the repeats.
    pub here_margin: Option<super::statement::Margin>,
}

/// The study as a reproduction: the published figures it is compared with
/// (one entry per reference file; none for a publication that printed
/// only charts), the publication's conclusions and our own observations
/// with their verdicts, and how the study differs from the publication.
#[derive(Debug, Clone, Serialize)]
pub struct Reproduction {
    /// The publication, as the first reference names it (else the study).
    pub label: String,
    pub references: Vec<RefCompared>,
    /// The publication's conclusions, each with its words.
    pub conclusions: Vec<ConclusionRow>,
    /// Statements of ours, not the publication's.
    pub observations: Vec<ConclusionRow>,
    pub deviations: Vec<crate::study::repro::Deviation>,
}

/// One reference file compared with the study.
#[derive(Debug, Clone, Serialize)]
pub struct RefCompared {
    pub file: String,
    pub label: String,
    pub metric: String,
    pub map: Vec<(String, String)>,
    pub data: crate::study::repro::published::RefData,
    #[serde(skip)]
    pub spec: RefSpec,
}

/// One block's search as stored.
#[derive(Debug, Clone, Serialize)]
pub struct BlockSearch {
    pub block: u32,
    /// The closed-loop calibration's throughput, whole arrivals per second.
    pub peak_per_s: f64,
    /// The highest probed rate that held; None when none did.
    pub held_per_s: Option<f64>,
    /// The lowest probed rate that failed; None when the peak held.
    pub failed_per_s: Option<f64>,
    pub probes: usize,
    /// Every probe ran to its end (none failed, none skipped).
    pub complete: bool,
    /// Where and when it ran, for pairing.
    #[serde(skip)]
    pub machine: String,
    #[serde(skip)]
    pub at_us: Option<u64>,
}

/// One series' searches at one client count.
#[derive(Debug, Clone, Serialize)]
pub struct SeriesSearch {
    pub series: String,
    pub clients: u32,
    pub blocks: Vec<BlockSearch>,
    /// The mean of the complete blocks' answers and its 95 % half-width.
    pub held_mean_per_s: Option<f64>,
    pub held_ci95_per_s: Option<f64>,
}

/// A panel's searches: one workload entry at one CPU set.
#[derive(Debug, Clone, Serialize)]
pub struct SearchPanel {
    pub workload: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpus: Option<String>,
    /// The p99 goal the probes were judged against, ms.
    pub p99_goal_ms: Option<f64>,
    pub series: Vec<SeriesSearch>,
}
