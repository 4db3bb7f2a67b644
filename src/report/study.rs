//! The study report: stored results → derived figures ([`Report`]) →
//! document ([`Doc`]).
//!
//! [`analyze`] groups a study's points into the seeds' shape — one panel
//! per workload entry and CPU set, one series per target/variant, one
//! column per client count — summarises the repeats of each cell and
//! derives peaks, sag, collapse points, rankings, CPU scalability, the
//! parameter sweep and the comparison with a baseline study, using the pure
//! functions of [`super::analysis`]. [`document`] lays that out as a
//! [`Doc`] with tables, charts and conclusions; every format (HTML,
//! Markdown, text) renders that one document, and CSV and JSON serialise
//! the [`Report`] itself, so no two formats can disagree on a number.
//!
//! Skipped and failed points are shown with their reason, never as zero.

use crate::civil::utc_minutes as utc;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::Path;

use serde::Serialize;

use super::analysis::{self, Change, Peak, Rank, Sag, Scaling, Verdict};
use super::doc::{Axis, Block, Cell, Chart, ChartKind, Doc, Mark, Row, Section, Series, Table};
use crate::stats::histogram::Histogram;
use crate::store::{self, Metrics, PointStatus, Store, StoredPoint, StudyInfo};
use crate::UsageError;

/// Identifies the JSON format of a report and its version.
pub const SCHEMA_ID: &str = "dbsweep-report/1";

/// A curve collapses where it falls below this share of its peak.
pub const COLLAPSE_FRACTION: f64 = 0.5;

/// Tables wider than this many client columns wrap into halves (seed 000).
const WRAP_ABOVE: usize = 8;

/// Points of a latency CDF drawn at most.
const CDF_POINTS: usize = 200;

/// A study as read from its results database.
pub struct StudyData {
    pub info: StudyInfo,
    /// Every point of the study, complete (run documents and histograms),
    /// failed attempts included, in commit order.
    pub points: Vec<StoredPoint>,
    /// Where it was read from, for the header.
    pub source: String,
}

/// Reads the study `name` (or the only study) of the results database at
/// `path` (a directory or a results.db).
pub fn load(path: &Path, name: Option<&str>) -> anyhow::Result<StudyData> {
    let db = store::resolve_path(path);
    let store = Store::open_existing(&db)?;
    let studies = store.studies()?;
    let names = || {
        studies
            .iter()
            .map(|s| format!("'{}'", s.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let info = match name {
        Some(n) => studies.iter().find(|s| s.name == n).ok_or_else(|| {
            UsageError(format!(
                "'{}' has no study '{n}' (it has {}): give one of those to --study",
                db.display(),
                if studies.is_empty() {
                    "none".to_string()
                } else {
                    names()
                }
            ))
        })?,
        None => match studies.as_slice() {
            [one] => one,
            [] => {
                return Err(UsageError(format!(
                    "'{}' holds no study yet: run `dbsweep study FILE` first",
                    db.display()
                ))
                .into())
            }
            _ => {
                return Err(UsageError(format!(
                    "'{}' holds several studies ({}): choose one with --study NAME",
                    db.display(),
                    names()
                ))
                .into())
            }
        },
    }
    .clone();
    let points = store.points(Some(info.id))?;
    Ok(StudyData {
        info,
        points,
        source: db.display().to_string(),
    })
}

/// The figure a report's tables show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    Tps,
    Qps,
    P95,
    P99,
    Errors,
}

impl Metric {
    pub const ALL: [Metric; 5] = [
        Metric::Tps,
        Metric::Qps,
        Metric::P95,
        Metric::P99,
        Metric::Errors,
    ];

    /// The name `--metric` takes.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Tps => "tps",
            Metric::Qps => "qps",
            Metric::P95 => "p95",
            Metric::P99 => "p99",
            Metric::Errors => "errors",
        }
    }

    pub fn parse(s: &str) -> Result<Metric, UsageError> {
        Metric::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                UsageError(format!(
                    "unknown metric '{s}': use one of {}",
                    Metric::ALL.map(Metric::name).join(", ")
                ))
            })
    }

    /// What the table cells are, with the unit.
    pub fn title(self) -> &'static str {
        match self {
            Metric::Tps => "transactions per second",
            Metric::Qps => "queries per second",
            Metric::P95 => "95th percentile transaction latency (ms)",
            Metric::P99 => "99th percentile transaction latency (ms)",
            Metric::Errors => "errors per second",
        }
    }

    /// An axis label with its unit.
    pub fn axis(self) -> &'static str {
        match self {
            Metric::Tps => "transactions/s",
            Metric::Qps => "queries/s",
            Metric::P95 => "p95 latency (ms)",
            Metric::P99 => "p99 latency (ms)",
            Metric::Errors => "errors/s",
        }
    }

    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::Tps | Metric::Qps)
    }

    /// The metric of one finished run.
    pub fn of(self, m: &Metrics) -> Option<f64> {
        match self {
            Metric::Tps => Some(m.tps),
            Metric::Qps => Some(m.qps),
            Metric::P95 => m.lat_p95_us.map(|us| us / 1e3),
            Metric::P99 => m.lat_p99_us.map(|us| us / 1e3),
            Metric::Errors => (m.measured_s > 0.0).then(|| m.errors as f64 / m.measured_s),
        }
    }

    /// A value as the tables show it.
    pub fn format(self, v: f64) -> String {
        match self {
            Metric::P95 | Metric::P99 => ms(v),
            _ => format!("{v:.2}"),
        }
    }

    fn stat(self, c: &CellData) -> Option<&Stat> {
        match self {
            Metric::Tps => c.tps.as_ref(),
            Metric::Qps => c.qps.as_ref(),
            Metric::P95 => c.p95_ms.as_ref(),
            Metric::P99 => c.p99_ms.as_ref(),
            Metric::Errors => c.errors_ps.as_ref(),
        }
    }
}

/// Milliseconds with as many decimals as the magnitude needs.
fn ms(v: f64) -> String {
    super::text::ms(v * 1e6)
}

/// What the report is asked for.
#[derive(Debug, Clone)]
pub struct Options {
    /// The figure of the main tables.
    pub metric: Metric,
    /// The client count of the per-point sections (time series, latency
    /// distribution, statements); default: where the best series peaks.
    pub point: Option<u32>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            metric: Metric::Tps,
            point: None,
        }
    }
}

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
    fn of(values: Vec<f64>) -> Option<Stat> {
        let s = store::Spread::of(&values)?;
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
    fn detail(&self, fmt: impl Fn(f64) -> String) -> String {
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
#[derive(Debug, Clone, Serialize)]
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
}

/// One target/variant of a panel: a row of its tables, a line of its charts.
#[derive(Debug, Clone, Serialize)]
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
    pub variant: String,
    /// What the variant changes (empty for the baseline itself).
    pub setting: String,
    pub value: String,
    pub tps: Option<Stat>,
    pub p95_ms: Option<Stat>,
    /// Throughput against the baseline's; `None` for the baseline.
    pub change: Option<Change>,
}

/// `[sweep.parameter]`: each variant at the sweep's client count.
#[derive(Debug, Clone, Serialize)]
pub struct Sweep {
    pub baseline: String,
    pub clients: u32,
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
}

/// Every derived figure of a study: what CSV and JSON export and what the
/// document is laid out from.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub study: StudyFacts,
    pub metric: Metric,
    pub panels: Vec<Panel>,
    pub scalability: Vec<Scalability>,
    pub comparison: Option<Comparison>,
    /// The report's conclusions, as sentences.
    pub conclusions: Vec<String>,
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

/// Derives every figure of `data`; with `baseline`, compares it cell by cell.
pub fn analyze(data: &StudyData, baseline: Option<&StudyData>, opts: &Options) -> Report {
    let panels = panels(data, opts);
    let scalability = scalability(data, &panels);
    let comparison = baseline.map(|b| compare(&panels, b, opts));
    let count = |s: PointStatus| data.points.iter().filter(|p| p.row.status == s).count();
    let mut report = Report {
        schema: SCHEMA_ID,
        study: StudyFacts {
            name: data.info.name.clone(),
            description: data.info.description.clone(),
            source: data.source.clone(),
            started_unix_s: data.info.started_unix_s,
            tool_version: data.info.tool_version.clone(),
            sessions: data.info.sessions,
            machine: data.info.machine.clone(),
            points_finished: count(PointStatus::Finished),
            points_skipped: count(PointStatus::Skipped),
            points_failed: count(PointStatus::Failed),
        },
        metric: opts.metric,
        panels,
        scalability,
        comparison,
        conclusions: Vec::new(),
    };
    report.conclusions = conclusions(&report);
    report
}

/// The throughput metric peaks and rankings are over.
fn throughput(opts: &Options) -> Metric {
    if opts.metric == Metric::Qps {
        Metric::Qps
    } else {
        Metric::Tps
    }
}

fn finished(p: &StoredPoint) -> Option<&Metrics> {
    (p.row.status == PointStatus::Finished)
        .then_some(p.metrics.as_ref())
        .flatten()
}

/// `(workload label, options, cpus)`: what a panel is.
type PanelKey = (String, Vec<(String, String)>, Option<String>);

fn panel_key(p: &StoredPoint) -> PanelKey {
    (
        p.row.workload_label.clone(),
        p.row.workload_options.clone(),
        p.row.cpus.clone(),
    )
}

/// Distinct values in order of first appearance.
fn distinct<T: PartialEq + Clone>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// Whether series need their variant in their label: some target of the
/// study has more than one.
fn show_variant(points: &[StoredPoint]) -> bool {
    let pairs = distinct(
        points
            .iter()
            .map(|p| (p.row.target.clone(), p.row.variant.clone())),
    );
    let targets = distinct(pairs.iter().map(|(t, _)| t.clone()));
    pairs.len() > targets.len()
}

fn series_label(target: &str, variant: &str, instances: u32, with_variant: bool) -> String {
    let mut s = if with_variant {
        format!("{target} / {variant}")
    } else {
        target.to_string()
    };
    if instances != 1 {
        let _ = write!(s, " ×{instances}");
    }
    s
}

fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

fn cpus_label(cpus: &Option<String>) -> String {
    match cpus {
        None => "all CPUs".to_string(),
        Some(set) => match analysis::cpu_count(set) {
            Some(1) => format!("1 CPU ({set})"),
            Some(n) => format!("{n} CPUs ({set})"),
            None => format!("CPUs {set}"),
        },
    }
}

fn workload_title(label: &str, options: &[(String, String)]) -> String {
    let mut s = label.to_string();
    for (k, v) in options {
        let _ = write!(s, " {k}={v}");
    }
    s
}

fn panels(data: &StudyData, opts: &Options) -> Vec<Panel> {
    let with_variant = show_variant(&data.points);
    let sweep = SweepSpec::of(&data.info.file_text);
    let keys = distinct(data.points.iter().map(panel_key));
    let several_cpus = distinct(data.points.iter().map(|p| p.row.cpus.clone())).len() > 1;
    keys.into_iter()
        .map(|key| {
            let points: Vec<&StoredPoint> =
                data.points.iter().filter(|p| panel_key(p) == key).collect();
            let (label, options, cpus) = key;
            let mut clients: Vec<u32> = distinct(points.iter().map(|p| p.row.clients));
            clients.sort_unstable();
            let names = distinct(
                points
                    .iter()
                    .map(|p| (p.row.target.clone(), p.row.variant.clone(), p.row.instances)),
            );
            let series: Vec<SeriesData> = names
                .iter()
                .map(|(t, v, i)| {
                    let mine: Vec<&StoredPoint> = points
                        .iter()
                        .copied()
                        .filter(|p| {
                            &p.row.target == t && &p.row.variant == v && p.row.instances == *i
                        })
                        .collect();
                    series(
                        series_label(t, v, *i, with_variant),
                        &mine,
                        &clients,
                        throughput(opts),
                    )
                })
                .collect();
            let ranking = analysis::ranking(
                &series
                    .iter()
                    .filter_map(|s| s.peak.map(|p| (s.label.clone(), p.value)))
                    .collect::<Vec<_>>(),
                true,
            );
            let focus = opts.point.filter(|c| clients.contains(c)).or_else(|| {
                let best = ranking.first()?;
                series
                    .iter()
                    .find(|s| s.label == best.label)?
                    .peak
                    .map(|p| p.clients)
            });
            let statements = focus
                .map(|c| {
                    names
                        .iter()
                        .zip(&series)
                        .filter_map(|((t, v, i), s)| {
                            let at: Vec<&StoredPoint> = points
                                .iter()
                                .copied()
                                .filter(|p| {
                                    &p.row.target == t
                                        && &p.row.variant == v
                                        && p.row.instances == *i
                                        && p.row.clients == c
                                })
                                .collect();
                            statement_latency(&s.label, c, &at)
                        })
                        .collect()
                })
                .unwrap_or_default();
            // Chart file names: the label alone unless two entries share it.
            let shared = distinct(data.points.iter().map(panel_key))
                .iter()
                .filter(|k| k.0 == label && k.2 == cpus)
                .count()
                > 1;
            let mut id = if shared {
                workload_title(&label, &options)
            } else {
                label.clone()
            };
            if several_cpus {
                let _ = write!(id, " cpus {}", cpus.as_deref().unwrap_or("all"));
            }
            let id = slug(&id);
            let sweep = sweep.as_ref().and_then(|sp| sweep_table(sp, &series));
            Panel {
                id,
                workload: label,
                workload_name: points[0].row.workload.clone(),
                options: options.into_iter().collect(),
                cpus,
                clients,
                series,
                ranking,
                focus_clients: focus,
                statements,
                sweep,
            }
        })
        .collect()
}

fn series(label: String, points: &[&StoredPoint], clients: &[u32], tp: Metric) -> SeriesData {
    let first = points[0];
    let cells: Vec<CellData> = clients
        .iter()
        .map(|&c| cell(c, points.iter().copied().filter(|p| p.row.clients == c)))
        .collect();
    let curve: Vec<(u32, f64)> = cells
        .iter()
        .filter_map(|c| tp.stat(c).map(|s| (c.clients, s.mean)))
        .collect();
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    let (mut failed_transactions, mut retries, mut reconnects, mut abandoned) = (0, 0, 0, 0);
    for p in points {
        if let Some(m) = finished(p) {
            for (k, n) in &p.errors {
                *errors.entry(k.clone()).or_default() += n;
            }
            failed_transactions += m.failed_transactions;
            retries += m.retries;
            reconnects += m.reconnects;
            abandoned += m.abandoned;
        }
    }
    SeriesData {
        label,
        target: first.row.target.clone(),
        variant: first.row.variant.clone(),
        instances: first.row.instances,
        server_version: points
            .iter()
            .find_map(|p| p.metrics.as_ref().map(|m| m.server_version.clone())),
        cells,
        peak: analysis::peak(&curve),
        sag: analysis::sag(&curve),
        collapse: analysis::collapse(&curve, COLLAPSE_FRACTION),
        errors,
        failed_transactions,
        retries,
        reconnects,
        abandoned,
    }
}

fn cell<'a>(clients: u32, points: impl Iterator<Item = &'a StoredPoint>) -> CellData {
    let points: Vec<&StoredPoint> = points.collect();
    let done: Vec<(&StoredPoint, &Metrics)> = points
        .iter()
        .filter_map(|p| finished(p).map(|m| (*p, m)))
        .collect();
    let count = |s: PointStatus| points.iter().filter(|p| p.row.status == s).count();
    let reasons = distinct(points.iter().filter_map(|p| {
        p.row
            .reason
            .as_ref()
            .map(|r| format!("{}: {r}", p.row.status.as_str()))
    }));
    let stat = |f: &dyn Fn(&StoredPoint, &Metrics) -> Option<f64>| {
        Stat::of(done.iter().filter_map(|(p, m)| f(p, m)).collect())
    };
    CellData {
        clients,
        finished: done.len(),
        skipped: count(PointStatus::Skipped),
        failed: count(PointStatus::Failed),
        reasons,
        tps: stat(&|_, m| Metric::Tps.of(m)),
        qps: stat(&|_, m| Metric::Qps.of(m)),
        p95_ms: stat(&|_, m| Metric::P95.of(m)),
        p99_ms: stat(&|_, m| Metric::P99.of(m)),
        errors_ps: stat(&|_, m| Metric::Errors.of(m)),
        client_cpu_pct: stat(&|_, m| {
            (m.measured_s > 0.0).then(|| m.client_cpu_s / m.measured_s * 100.0)
        }),
        fairness_cv_pct: stat(&|p, _| {
            let f = p.row.run.as_ref()?.get("result")?.get("fairness")?;
            analysis::fairness_cv(
                f.get("events_avg")?.as_f64()?,
                f.get("events_stddev")?.as_f64()?,
            )
        }),
    }
}

/// The histograms called `name` of the finished `points`, merged.
fn merged(points: &[&StoredPoint], name: &str) -> Option<Histogram> {
    let mut out: Option<Histogram> = None;
    for p in points.iter().filter(|p| finished(p).is_some()) {
        if let Some((_, h)) = p.row.histograms.iter().find(|(n, _)| n == name) {
            out.get_or_insert_with(Histogram::new).merge(h);
        }
    }
    out.filter(|h| !h.is_empty())
}

fn statement_latency(
    series: &str,
    clients: u32,
    points: &[&StoredPoint],
) -> Option<StatementLatency> {
    let names = distinct(
        points
            .iter()
            .filter(|p| finished(p).is_some())
            .flat_map(|p| p.row.histograms.iter().map(|(n, _)| n.clone())),
    );
    let mut kinds: Vec<KindLatency> = Vec::new();
    for name in names {
        let Some(h) = merged(points, &name) else {
            continue;
        };
        let pct = |p: f64| h.value_at_percentile(p).map_or(0.0, |ns| ns as f64 / 1e6);
        let k = KindLatency {
            kind: name.clone(),
            count: h.count(),
            avg_ms: h.mean().unwrap_or(0.0) / 1e6,
            p95_ms: pct(95.0),
            p99_ms: pct(99.0),
            max_ms: h.max().unwrap_or(0) as f64 / 1e6,
        };
        if name == "transaction" {
            kinds.insert(0, k);
        } else {
            kinds.push(k);
        }
    }
    (!kinds.is_empty()).then(|| StatementLatency {
        series: series.to_string(),
        clients,
        kinds,
    })
}

/// What the study file's `[sweep.parameter]` says, read from the stored
/// file text (the variants it generated are named `setting=value`).
struct SweepSpec {
    baseline: String,
    clients: u32,
}

impl SweepSpec {
    fn of(file_text: &str) -> Option<SweepSpec> {
        let v: toml::Value = toml::from_str(file_text).ok()?;
        let p = v.get("sweep")?.get("parameter")?;
        Some(SweepSpec {
            baseline: p
                .get("baseline")
                .and_then(|b| b.as_str())
                .unwrap_or("base")
                .to_string(),
            clients: p.get("clients")?.as_integer()?.try_into().ok()?,
        })
    }
}

fn sweep_table(spec: &SweepSpec, series: &[SeriesData]) -> Option<Sweep> {
    fn at_clients(s: &SeriesData, clients: u32) -> Option<&CellData> {
        s.cells.iter().find(|c| c.clients == clients)
    }
    let at = |s| at_clients(s, spec.clients);
    let mut rows = Vec::new();
    for base in series.iter().filter(|s| s.variant == spec.baseline) {
        let base_tps = at(base).and_then(|c| c.tps.clone());
        rows.push(SweepRow {
            target: base.target.clone(),
            variant: base.variant.clone(),
            setting: String::new(),
            value: String::new(),
            tps: base_tps.clone(),
            p95_ms: at(base).and_then(|c| c.p95_ms.clone()),
            change: None,
        });
        for s in series
            .iter()
            .filter(|s| s.target == base.target && s.variant != spec.baseline)
        {
            // Generated variants are "setting=value"; others are the
            // study's own and not part of the sweep.
            let Some((setting, value)) = s.variant.split_once('=') else {
                continue;
            };
            let tps = at(s).and_then(|c| c.tps.clone());
            let change = match (&base_tps, &tps) {
                (Some(b), Some(v)) => analysis::change(&b.values, &v.values, true),
                _ => None,
            };
            rows.push(SweepRow {
                target: s.target.clone(),
                variant: s.variant.clone(),
                setting: setting.to_string(),
                value: value.to_string(),
                tps,
                p95_ms: at(s).and_then(|c| c.p95_ms.clone()),
                change,
            });
        }
    }
    if rows.len() < 2 {
        return None;
    }
    let too_few_repeats = rows.iter().any(|r| r.tps.as_ref().is_none_or(|t| t.n < 2));
    Some(Sweep {
        baseline: spec.baseline.clone(),
        clients: spec.clients,
        rows,
        too_few_repeats,
    })
}

/// Per workload entry with more than one CPU set: each series' peaks by CPU
/// set and the factors.
fn scalability(data: &StudyData, panels: &[Panel]) -> Vec<Scalability> {
    let online = data
        .info
        .machine
        .get("cpus_online")
        .and_then(|v| v.as_u64())
        .map(|n| n as usize);
    let workloads = distinct(
        panels
            .iter()
            .map(|p| (p.workload.clone(), p.options.clone())),
    );
    let mut out = Vec::new();
    for (w, o) in workloads {
        let mine: Vec<&Panel> = panels
            .iter()
            .filter(|p| p.workload == w && p.options == o)
            .collect();
        if mine.len() < 2 {
            continue;
        }
        let labels = distinct(
            mine.iter()
                .flat_map(|p| p.series.iter().map(|s| s.label.clone())),
        );
        let series = labels
            .into_iter()
            .filter_map(|label| {
                let configs: Vec<(String, usize, f64)> = mine
                    .iter()
                    .filter_map(|p| {
                        let n = match &p.cpus {
                            Some(set) => analysis::cpu_count(set)?,
                            None => online?,
                        };
                        let peak = p.series.iter().find(|s| s.label == label)?.peak?;
                        Some((cpus_label(&p.cpus), n, peak.value))
                    })
                    .collect();
                (configs.len() >= 2).then(|| ScalingSeries {
                    label,
                    configs: analysis::scalability(&configs),
                })
            })
            .collect::<Vec<_>>();
        if !series.is_empty() {
            out.push(Scalability {
                workload: workload_title(&w, &o.into_iter().collect::<Vec<_>>()),
                series,
            });
        }
    }
    out
}

fn compare(panels: &[Panel], baseline: &StudyData, opts: &Options) -> Comparison {
    let theirs = self::panels(baseline, opts);
    let metric = opts.metric;
    let out = panels
        .iter()
        .filter_map(|p| {
            let b = theirs
                .iter()
                .find(|b| b.workload == p.workload && b.options == p.options && b.cpus == p.cpus)?;
            let mut clients = p.clients.clone();
            clients.extend(&b.clients);
            clients.sort_unstable();
            clients.dedup();
            let labels = distinct(p.series.iter().chain(&b.series).map(|s| s.label.clone()));
            let find = |panel: &Panel, label: &str, c: u32| {
                panel
                    .series
                    .iter()
                    .find(|s| s.label == label)?
                    .cells
                    .iter()
                    .find(|x| x.clients == c)
                    .and_then(|x| metric.stat(x).cloned())
            };
            let series = labels
                .into_iter()
                .map(|label| ComparedSeries {
                    cells: clients
                        .iter()
                        .map(|&c| {
                            let (old, new) = (find(b, &label, c), find(p, &label, c));
                            ComparedCell {
                                clients: c,
                                baseline: old.as_ref().map(|s| s.mean),
                                value: new.as_ref().map(|s| s.mean),
                                change: match (&old, &new) {
                                    (Some(o), Some(n)) => analysis::change(
                                        &o.values,
                                        &n.values,
                                        metric.higher_is_better(),
                                    ),
                                    _ => None,
                                },
                            }
                        })
                        .collect(),
                    label,
                })
                .collect();
            Some(ComparedPanel {
                id: p.id.clone(),
                workload: workload_title(
                    &p.workload,
                    &p.options.clone().into_iter().collect::<Vec<_>>(),
                ),
                cpus: p.cpus.clone(),
                clients,
                series,
            })
        })
        .collect();
    Comparison {
        baseline: baseline.info.name.clone(),
        source: baseline.source.clone(),
        metric,
        panels: out,
    }
}

fn panel_title(p: &Panel, several_cpus: bool) -> String {
    let w = workload_title(
        &p.workload,
        &p.options.clone().into_iter().collect::<Vec<_>>(),
    );
    if several_cpus {
        format!("{w}, {}", cpus_label(&p.cpus))
    } else {
        w
    }
}

fn several_cpus(panels: &[Panel]) -> bool {
    distinct(panels.iter().map(|p| p.cpus.clone())).len() > 1
}

/// The report's sentences: per panel the ranking (seed 002's "X is slower
/// than the best by Y %"), sag and collapse; the CPU scalability; the
/// parameter sweep's significant changes; the comparison's.
fn conclusions(r: &Report) -> Vec<String> {
    let tp = if r.metric == Metric::Qps {
        "qps"
    } else {
        "tps"
    };
    let several = several_cpus(&r.panels);
    let mut out = Vec::new();
    for p in &r.panels {
        // One paragraph per panel: the ranking, then each series' peak.
        let mut said: Vec<String> = Vec::new();
        if p.series.len() > 1 {
            said.extend(analysis::ranking_sentences(&p.ranking, "peak throughput"));
        }
        for s in &p.series {
            let Some(peak) = s.peak else { continue };
            let name = if p.series.len() > 1 {
                s.label.clone()
            } else {
                "It".to_string()
            };
            let mut line = format!(
                "{name} peaks at {:.2} {tp} with {} client{}",
                peak.value,
                peak.clients,
                plural(peak.clients as usize)
            );
            match s.sag {
                Some(g) if g.last.clients == peak.clients && p.clients.len() > 1 => {
                    line.push_str(", the most it was measured with: it may rise further")
                }
                Some(g) if g.last.clients != peak.clients => {
                    let _ = write!(
                        line,
                        " and sags {:.2} % by {} clients ({:.2} {tp})",
                        g.pct, g.last.clients, g.last.value
                    );
                }
                _ => {}
            }
            if let Some(c) = s.collapse {
                let _ = write!(
                    line,
                    "; it collapses below half its peak at {} clients ({:.2} {tp})",
                    c.clients, c.value
                );
            }
            line.push('.');
            said.push(line);
        }
        if let Some(sw) = &p.sweep {
            for row in sw.rows.iter() {
                let Some(c) = row.change else { continue };
                let pct = c.pct.map_or(String::new(), |p| format!(" ({p:+.2} %)"));
                let word = match c.verdict {
                    Verdict::Better => "helps",
                    Verdict::Worse => "hurts",
                    _ => continue,
                };
                said.push(format!(
                    "On {}, {} = {} {word}: {:.2} tps against {:.2}{pct}, beyond the repeat noise.",
                    row.target, row.setting, row.value, c.value, c.baseline
                ));
            }
            if !sw.rows.iter().any(|r| {
                r.change
                    .is_some_and(|c| matches!(c.verdict, Verdict::Better | Verdict::Worse))
            }) {
                said.push(format!(
                    "No setting of the parameter sweep changes throughput beyond the repeat noise{}.",
                    if sw.too_few_repeats {
                        " (some values have fewer than two repeats: their noise is unknown)"
                    } else {
                        ""
                    }
                ));
            }
        }
        if !said.is_empty() {
            out.push(format!("{}: {}", panel_title(p, several), said.join(" ")));
        }
    }
    for sc in &r.scalability {
        let mut best: Vec<(&str, f64, &Scaling, &Scaling)> = sc
            .series
            .iter()
            .filter_map(|s| {
                let last = s.configs.last()?;
                Some((s.label.as_str(), last.vs_fewest?, last, s.configs.first()?))
            })
            .collect();
        best.sort_by(|a, b| b.1.total_cmp(&a.1));
        if let Some((first, rest)) = best.split_first() {
            let mut line = format!(
                "{}: {} shows the best CPU scalability with factor {:.2} ({} against {})",
                sc.workload, first.0, first.1, first.2.label, first.3.label
            );
            for (label, f, _, _) in rest {
                let _ = write!(line, "; {label} {f:.2}");
            }
            line.push('.');
            out.push(line);
        }
    }
    if let Some(c) = &r.comparison {
        let (mut better, mut worse, mut within, mut unknown) = (0, 0, 0, 0);
        for cell in c
            .panels
            .iter()
            .flat_map(|p| &p.series)
            .flat_map(|s| &s.cells)
            .filter_map(|c| c.change)
        {
            match cell.verdict {
                Verdict::Better => better += 1,
                Verdict::Worse => worse += 1,
                Verdict::Within => within += 1,
                Verdict::TooFewRepeats => unknown += 1,
            }
        }
        out.push(format!(
            "Against {}: {better} point(s) better and {worse} worse beyond the repeat noise, {within} within it{}.",
            c.baseline,
            if unknown > 0 {
                format!(", {unknown} with too few repeats to judge")
            } else {
                String::new()
            }
        ));
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The header facts: study, machine, servers, workloads, what differs
/// between variants.
fn facts(data: &StudyData, r: &Report) -> Vec<(String, String)> {
    let mut f: Vec<(String, String)> = Vec::new();
    let s = &r.study;
    f.push((
        "Study".into(),
        if s.description.is_empty() {
            s.name.clone()
        } else {
            format!("{} — {}", s.name, s.description)
        },
    ));
    f.push((
        "Measured".into(),
        format!(
            "from {} with dbsweep {}{}",
            utc(s.started_unix_s),
            s.tool_version,
            if s.sessions > 1 {
                format!(" ({} sessions: resumed)", s.sessions)
            } else {
                String::new()
            }
        ),
    ));
    let m = &s.machine;
    let get = |k: &str| m.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
    let mut machine = get("cpu_model");
    if let Some(n) = m.get("cpus_online").and_then(|v| v.as_u64()) {
        let _ = write!(machine, ", {n} CPUs");
    }
    if let Some(b) = m
        .get("memory_bytes")
        .and_then(|v| v.as_u64())
        .filter(|&b| b > 0)
    {
        let _ = write!(machine, ", {:.1} GiB", b as f64 / (1u64 << 30) as f64);
    }
    if !get("kernel").is_empty() {
        let _ = write!(machine, ", {} {}", get("os"), get("kernel"));
    }
    f.push((
        "Machine".into(),
        machine.trim_start_matches(", ").to_string(),
    ));
    let servers = distinct(data.points.iter().filter_map(|p| {
        p.metrics
            .as_ref()
            .map(|m| format!("{}: {}", p.row.target, m.server_version))
    }));
    if !servers.is_empty() {
        f.push(("Servers".into(), servers.join("; ")));
    }
    let workloads = distinct(data.points.iter().map(|p| {
        let w = workload_title(&p.row.workload_label, &p.row.workload_options);
        if p.row.workload_label == p.row.workload {
            w
        } else {
            format!("{w} ({})", p.row.workload)
        }
    }));
    f.push(("Workloads".into(), workloads.join("; ")));
    let mut clients = distinct(data.points.iter().map(|p| p.row.clients));
    clients.sort_unstable();
    f.push((
        "Clients".into(),
        clients
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    ));
    let cpus = distinct(data.points.iter().map(|p| p.row.cpus.clone()));
    if cpus.iter().any(Option::is_some) {
        f.push((
            "Server CPU sets".into(),
            cpus.iter().map(cpus_label).collect::<Vec<_>>().join("; "),
        ));
    }
    let repeats = data.points.iter().map(|p| p.row.repeat).max().unwrap_or(0);
    let windows = distinct(
        data.points
            .iter()
            .filter_map(|p| finished(p).map(|m| format!("{:.0} s", m.measured_s))),
    );
    // Runs that end on a count (rounds, events) have windows of every
    // length: a range says it better than a list.
    let window = match windows.len() {
        0 => "-".to_string(),
        1..=3 => windows.join(", "),
        _ => {
            let secs = data
                .points
                .iter()
                .filter_map(|p| finished(p).map(|m| m.measured_s));
            let (lo, hi) = secs.fold((f64::INFINITY, 0f64), |(lo, hi), x| (lo.min(x), hi.max(x)));
            format!("{lo:.1}–{hi:.1} s")
        }
    };
    f.push((
        "Repeats".into(),
        format!("up to {repeats} per point; measured window {window}"),
    ));
    f.push((
        "Points".into(),
        format!(
            "{} finished, {} skipped, {} failed",
            s.points_finished, s.points_skipped, s.points_failed
        ),
    ));
    // Settings that differ between the variants of a target.
    let targets = distinct(data.points.iter().map(|p| p.row.target.clone()));
    for t in targets {
        let variants = distinct(
            data.points
                .iter()
                .filter(|p| p.row.target == t)
                .map(|p| (p.row.variant.clone(), p.row.variant_settings.clone())),
        );
        if variants.len() < 2 {
            continue;
        }
        let keys: BTreeSet<&String> = variants
            .iter()
            .flat_map(|(_, s)| s.iter().map(|(k, _)| k))
            .collect();
        let differing: Vec<&String> = keys
            .into_iter()
            .filter(|k| {
                distinct(
                    variants
                        .iter()
                        .map(|(_, s)| s.iter().find(|(n, _)| n == *k).map(|(_, v)| v.clone())),
                )
                .len()
                    > 1
            })
            .collect();
        let text = variants
            .iter()
            .map(|(name, s)| {
                let vals: Vec<String> = differing
                    .iter()
                    .map(|k| {
                        let v = s
                            .iter()
                            .find(|(n, _)| n == *k)
                            .map_or("(default)", |(_, v)| v.as_str());
                        format!("{k} = {v}")
                    })
                    .collect();
                format!("{name}: {}", vals.join(", "))
            })
            .collect::<Vec<_>>()
            .join("; ");
        f.push((format!("Settings that differ ({t})"), text));
    }
    f
}

/// Why a cell has no figure, short enough for a table: a skip reason
/// (stop rules write short ones), or "failed ×N" (the failure messages are
/// in the cell's detail and in a note under the table).
fn missing_text(c: &CellData) -> String {
    if c.failed > 0 {
        if c.failed == 1 {
            "failed".into()
        } else {
            format!("failed ×{}", c.failed)
        }
    } else {
        let text = c.reasons.join("; ");
        if text.chars().count() > 48 {
            format!("{}…", text.chars().take(47).collect::<String>())
        } else {
            text
        }
    }
}

/// The full reasons of the cells of `p` that have failed attempts.
fn failure_note(p: &Panel) -> Option<Block> {
    let lines: Vec<String> = p
        .series
        .iter()
        .flat_map(|s| {
            s.cells.iter().filter(|c| c.failed > 0).map(move |c| {
                format!(
                    "{} at {} clients: {}",
                    s.label,
                    c.clients,
                    c.reasons.join("; ")
                )
            })
        })
        .collect();
    (!lines.is_empty()).then(|| Block::Note(format!("Failed attempts: {}.", lines.join(" — "))))
}

/// A cell of a metric table: the mean with its spread, or why there is none.
fn metric_cell(c: &CellData, metric: Metric) -> Cell {
    match metric.stat(c) {
        Some(s) => {
            let mut detail = s.detail(|v| metric.format(v));
            if c.failed + c.skipped > 0 {
                let _ = write!(detail, "; also {}", c.reasons.join("; "));
            }
            Cell {
                text: metric.format(s.mean),
                detail: Some(detail),
                mark: Mark::None,
            }
        }
        None if c.finished > 0 => Cell {
            text: "-".into(),
            detail: Some("no transaction completed".into()),
            mark: Mark::Missing,
        },
        None if c.reasons.is_empty() => Cell::default(),
        None => Cell {
            text: missing_text(c),
            detail: Some(c.reasons.join("; ")),
            mark: Mark::Missing,
        },
    }
}

fn wrap(columns: usize) -> Option<usize> {
    (columns > WRAP_ABOVE).then(|| columns.div_ceil(2))
}

fn text_cell(text: impl Into<String>) -> Cell {
    Cell {
        text: text.into(),
        ..Cell::default()
    }
}

/// A table of `metric` by clients, one row per series.
fn metric_table(p: &Panel, metric: Metric, caption: String, mark_best: bool) -> Table {
    let rows = p
        .series
        .iter()
        .map(|s| {
            let mut cells: Vec<Cell> = s.cells.iter().map(|c| metric_cell(c, metric)).collect();
            if mark_best {
                if let Some(peak) = s.peak {
                    if let Some(i) = s.cells.iter().position(|c| c.clients == peak.clients) {
                        cells[i].mark = Mark::Best;
                    }
                }
            }
            Row {
                label: s.label.clone(),
                cells,
            }
        })
        .collect();
    Table {
        caption,
        corner: "clients".into(),
        columns: p.clients.iter().map(u32::to_string).collect(),
        rows,
        wrap: wrap(p.clients.len()),
    }
}

fn log_clients(clients: &[u32]) -> bool {
    match (clients.first(), clients.last()) {
        (Some(&a), Some(&b)) => a > 0 && b / a >= 16,
        _ => false,
    }
}

fn metric_chart(p: &Panel, metric: Metric, id: &str, title: String) -> Chart {
    Chart {
        id: format!("{}-{id}", p.id),
        title,
        x: Axis {
            label: "clients".into(),
            log: log_clients(&p.clients),
        },
        y: Axis {
            label: metric.axis().into(),
            log: false,
        },
        kind: ChartKind::Line,
        series: p
            .series
            .iter()
            .map(|s| {
                let pts: Vec<(&CellData, &Stat)> = s
                    .cells
                    .iter()
                    .filter_map(|c| metric.stat(c).map(|st| (c, st)))
                    .collect();
                Series {
                    name: s.label.clone(),
                    points: pts
                        .iter()
                        .map(|(c, st)| (c.clients as f64, st.mean))
                        .collect(),
                    spread: pts
                        .iter()
                        .any(|(_, st)| st.n > 1)
                        .then(|| pts.iter().map(|(_, st)| (st.min, st.max)).collect()),
                }
            })
            .filter(|s| !s.points.is_empty())
            .collect(),
    }
}

fn peak_table(p: &Panel, tp: Metric) -> Table {
    let rows = p
        .series
        .iter()
        .map(|s| {
            let best = p.ranking.first().is_some_and(|r| r.label == s.label) && p.series.len() > 1;
            let behind = p.ranking.iter().find(|r| r.label == s.label);
            let mut cells = vec![
                s.peak.map_or(Cell::default(), |pk| Cell {
                    text: tp.format(pk.value),
                    detail: None,
                    mark: if best { Mark::Best } else { Mark::None },
                }),
                text_cell(s.peak.map_or(String::new(), |pk| pk.clients.to_string())),
                text_cell(s.sag.map_or(String::new(), |g| g.last.clients.to_string())),
                text_cell(s.sag.map_or(String::new(), |g| tp.format(g.last.value))),
                text_cell(s.sag.map_or(String::new(), |g| format!("{:.2}", g.pct))),
                text_cell(
                    s.collapse
                        .map_or("-".to_string(), |c| c.clients.to_string()),
                ),
            ];
            if p.series.len() > 1 {
                cells.push(text_cell(behind.map_or(String::new(), |r| {
                    if r.behind_pct == 0.0 {
                        "best".to_string()
                    } else {
                        format!("−{:.2} %", r.behind_pct)
                    }
                })));
            }
            Row {
                label: s.label.clone(),
                cells,
            }
        })
        .collect();
    let mut columns: Vec<String> = [
        "peak",
        "clients at peak",
        "highest clients",
        "value there",
        "sag %",
        "collapse (< 50 % of peak) at",
    ]
    .map(String::from)
    .to_vec();
    if p.series.len() > 1 {
        columns.push("vs best".into());
    }
    Table {
        caption: format!(
            "Peak and sag ({}): sag % = (peak − value at the highest client count) / peak",
            tp.name()
        ),
        corner: "series".into(),
        columns,
        rows,
        wrap: None,
    }
}

fn errors_table(panels: &[Panel], several: bool) -> Option<Table> {
    let kinds: Vec<String> = distinct(
        panels
            .iter()
            .flat_map(|p| &p.series)
            .flat_map(|s| s.errors.keys().cloned()),
    );
    let mut rows = Vec::new();
    let mut any = false;
    for p in panels {
        for s in &p.series {
            let skipped: usize = s.cells.iter().map(|c| c.skipped).sum();
            let failed: usize = s.cells.iter().map(|c| c.failed).sum();
            let mut cells: Vec<Cell> = kinds
                .iter()
                .map(|k| text_cell(s.errors.get(k).copied().unwrap_or(0).to_string()))
                .collect();
            for n in [s.failed_transactions, s.retries, s.reconnects, s.abandoned] {
                cells.push(text_cell(n.to_string()));
            }
            cells.push(text_cell(skipped.to_string()));
            cells.push(text_cell(failed.to_string()));
            any |= s.errors.values().any(|&n| n > 0)
                || s.failed_transactions + s.retries + s.reconnects + s.abandoned > 0
                || skipped + failed > 0;
            rows.push(Row {
                label: format!("{} · {}", panel_title(p, several), s.label),
                cells,
            });
        }
    }
    if !any {
        return None;
    }
    let mut columns: Vec<String> = kinds.iter().map(|k| k.replace('_', " ")).collect();
    columns.extend(
        [
            "failed txns",
            "retries",
            "reconnects",
            "abandoned",
            "skipped points",
            "failed points",
        ]
        .map(String::from),
    );
    Some(Table {
        caption: "Errors by kind, failed and retried transactions (totals over the finished points), and points not measured".into(),
        corner: "workload · series".into(),
        columns,
        rows,
        wrap: None,
    })
}

/// Interval throughput and p95 of the first finished repeat of each series
/// at `clients`.
fn time_series(p: &Panel, data: &StudyData, clients: u32) -> (Vec<Series>, Vec<Series>) {
    let (mut tps, mut p95) = (Vec::new(), Vec::new());
    for s in &p.series {
        let Some(point) = data.points.iter().find(|x| {
            panel_key(x)
                == (
                    p.workload.clone(),
                    p.options.clone().into_iter().collect(),
                    p.cpus.clone(),
                )
                && x.row.target == s.target
                && x.row.variant == s.variant
                && x.row.instances == s.instances
                && x.row.clients == clients
                && finished(x).is_some()
        }) else {
            continue;
        };
        let Some(run) = &point.row.run else { continue };
        let Ok(x) = store::extract(run, &point.row.histograms) else {
            continue;
        };
        let intervals: Vec<&store::Interval> = x.intervals.iter().filter(|i| !i.warmup).collect();
        if intervals.is_empty() {
            continue;
        }
        let name = format!("{} (repeat {})", s.label, point.row.repeat);
        tps.push(Series {
            name: name.clone(),
            points: intervals
                .iter()
                .filter(|i| i.duration_s > 0.0)
                .map(|i| (i.t_s, i.transactions as f64 / i.duration_s))
                .collect(),
            spread: None,
        });
        p95.push(Series {
            name,
            points: intervals
                .iter()
                .filter_map(|i| i.p95_us.map(|us| (i.t_s, us / 1e3)))
                .collect(),
            spread: None,
        });
    }
    (tps, p95)
}

fn cdf_series(p: &Panel, data: &StudyData, clients: u32) -> Vec<Series> {
    p.series
        .iter()
        .filter_map(|s| {
            let points: Vec<&StoredPoint> = data
                .points
                .iter()
                .filter(|x| {
                    x.row.workload_label == p.workload
                        && x.row.workload_options
                            == p.options.clone().into_iter().collect::<Vec<_>>()
                        && x.row.cpus == p.cpus
                        && x.row.target == s.target
                        && x.row.variant == s.variant
                        && x.row.instances == s.instances
                        && x.row.clients == clients
                })
                .collect();
            let h = merged(&points, "transaction")?;
            Some(Series {
                name: s.label.clone(),
                points: analysis::thin(analysis::cdf(&h), CDF_POINTS),
                spread: None,
            })
        })
        .collect()
}

fn statements_table(p: &Panel) -> Option<Table> {
    let kinds = distinct(
        p.statements
            .iter()
            .flat_map(|s| s.kinds.iter().map(|k| k.kind.clone())),
    );
    if kinds.len() < 2 {
        return None;
    }
    let rows = p
        .statements
        .iter()
        .map(|s| Row {
            label: s.series.clone(),
            cells: kinds
                .iter()
                .map(|k| match s.kinds.iter().find(|x| &x.kind == k) {
                    Some(x) => Cell {
                        text: ms(x.p95_ms),
                        detail: Some(format!(
                            "avg {} ms, p99 {} ms, max {} ms, {} executions",
                            ms(x.avg_ms),
                            ms(x.p99_ms),
                            ms(x.max_ms),
                            x.count
                        )),
                        mark: Mark::None,
                    },
                    None => Cell::default(),
                })
                .collect(),
        })
        .collect();
    Some(Table {
        caption: format!(
            "95th percentile latency (ms) by statement type at {} clients, over every repeat",
            p.focus_clients.unwrap_or(0)
        ),
        corner: "series".into(),
        columns: kinds,
        rows,
        wrap: wrap(p.statements.first().map_or(0, |s| s.kinds.len())),
    })
}

fn fairness_table(p: &Panel) -> Option<Table> {
    let any = p
        .series
        .iter()
        .flat_map(|s| &s.cells)
        .any(|c| c.fairness_cv_pct.is_some() && c.clients > 1);
    if !any {
        return None;
    }
    let rows = p
        .series
        .iter()
        .map(|s| Row {
            label: s.label.clone(),
            cells: s
                .cells
                .iter()
                .map(|c| match &c.fairness_cv_pct {
                    Some(st) => Cell {
                        text: format!("{:.2}", st.mean),
                        detail: Some(st.detail(|v| format!("{v:.2}"))),
                        mark: Mark::None,
                    },
                    None => Cell {
                        text: missing_text(c),
                        detail: None,
                        mark: if c.reasons.is_empty() {
                            Mark::None
                        } else {
                            Mark::Missing
                        },
                    },
                })
                .collect(),
        })
        .collect();
    Some(Table {
        caption: "Threads fairness: spread of transactions per client (coefficient of variation, %; 0 = every client did the same work)".into(),
        corner: "clients".into(),
        columns: p.clients.iter().map(u32::to_string).collect(),
        rows,
        wrap: wrap(p.clients.len()),
    })
}

fn sweep_blocks(sw: &Sweep) -> Vec<Block> {
    let rows = sw
        .rows
        .iter()
        .map(|r| {
            let name = if r.setting.is_empty() {
                format!("{} / {} (baseline)", r.target, r.variant)
            } else {
                format!("{} / {} = {}", r.target, r.setting, r.value)
            };
            let tps = r.tps.as_ref();
            let (change, mark) = match r.change {
                None => (String::new(), Mark::None),
                Some(c) => {
                    let pct = c.pct.map_or("-".to_string(), |p| format!("{p:+.2} %"));
                    match c.verdict {
                        Verdict::Better => (pct, Mark::Better),
                        Verdict::Worse => (pct, Mark::Worse),
                        Verdict::Within => (format!("{pct} (noise)"), Mark::None),
                        Verdict::TooFewRepeats => (format!("{pct} (too few repeats)"), Mark::None),
                    }
                }
            };
            Row {
                label: name,
                cells: vec![
                    tps.map_or(text_cell("-"), |t| Cell {
                        text: format!("{:.2}", t.mean),
                        detail: Some(t.detail(|v| format!("{v:.2}"))),
                        mark: Mark::None,
                    }),
                    text_cell(
                        tps.and_then(|t| t.ci95)
                            .map_or("-".into(), |c| format!("{c:.2}")),
                    ),
                    text_cell(tps.map_or("0".into(), |t| t.n.to_string())),
                    Cell {
                        text: change,
                        detail: None,
                        mark,
                    },
                    text_cell(r.p95_ms.as_ref().map_or("-".into(), |l| ms(l.mean))),
                ],
            }
        })
        .collect();
    let mut blocks = vec![Block::Table(Table {
        caption: format!(
            "Parameter sweep at {} clients: each setting changed alone from '{}'",
            sw.clients, sw.baseline
        ),
        corner: "variant".into(),
        columns: ["tps", "± 95 %", "repeats", "change vs baseline", "p95 ms"]
            .map(String::from)
            .to_vec(),
        rows,
        wrap: None,
    })];
    blocks.push(Block::Note(
        "A change is marked only when it exceeds the repeat noise: when the 95 % confidence intervals of the two means do not overlap.".into(),
    ));
    if sw.too_few_repeats {
        blocks.push(Block::Note(
            "Some values were measured fewer than two times: their noise is unknown and their change is not judged. Set `repeats = 3` or more for the sweep.".into(),
        ));
    }
    blocks
}

fn scalability_blocks(sc: &Scalability) -> Vec<Block> {
    let configs = distinct(
        sc.series
            .iter()
            .flat_map(|s| s.configs.iter().map(|r| (r.cpus, r.label.clone()))),
    );
    let mut configs = configs;
    configs.sort_by_key(|c| c.0);
    let table = |caption: String, f: &dyn Fn(&Scaling) -> Option<String>| Table {
        caption,
        corner: "CPUs".into(),
        columns: sc.series.iter().map(|s| s.label.clone()).collect(),
        rows: configs
            .iter()
            .map(|(n, label)| Row {
                label: label.clone(),
                cells: sc
                    .series
                    .iter()
                    .map(|s| {
                        text_cell(
                            s.configs
                                .iter()
                                .find(|r| r.cpus == *n)
                                .map_or(String::new(), |r| f(r).unwrap_or_else(|| "X".into())),
                        )
                    })
                    .collect(),
            })
            .collect(),
        wrap: None,
    };
    let fewest = configs.first().map_or(String::new(), |c| c.1.clone());
    vec![
        Block::Table(table("Peak results".into(), &|r| {
            Some(format!("{:.2}", r.peak))
        })),
        Block::Table(table(
            "Peak result with N CPUs / peak result with N/2 CPUs".into(),
            &|r| r.vs_half.map(|v| format!("{v:.2}")),
        )),
        Block::Table(table(
            format!("Peak result with N CPUs / peak result with {fewest}"),
            &|r| r.vs_fewest.map(|v| format!("{v:.2}")),
        )),
        Block::Note(
            "X: no configuration with half as many CPUs (or the base configuration itself).".into(),
        ),
    ]
}

fn comparison_blocks(c: &Comparison) -> Vec<Block> {
    let metric = c.metric;
    let mut blocks = vec![Block::Paragraph(format!(
        "Each cell is this study's {} with its change against the baseline study '{}' ({}). Better/worse marks only where the 95 % confidence intervals of the two means do not overlap.",
        metric.title(),
        c.baseline,
        c.source
    ))];
    for p in &c.panels {
        let rows = p
            .series
            .iter()
            .map(|s| Row {
                label: s.label.clone(),
                cells: s
                    .cells
                    .iter()
                    .map(|x| match (x.value, x.baseline, x.change) {
                        (Some(v), Some(b), Some(ch)) => Cell {
                            text: format!(
                                "{} ({})",
                                metric.format(v),
                                ch.pct.map_or("-".into(), |p| format!("{p:+.1} %"))
                            ),
                            detail: Some(format!(
                                "baseline {}; {}",
                                metric.format(b),
                                match ch.verdict {
                                    Verdict::Better => "better beyond the noise",
                                    Verdict::Worse => "worse beyond the noise",
                                    Verdict::Within => "within the noise",
                                    Verdict::TooFewRepeats => "too few repeats to judge",
                                }
                            )),
                            mark: match ch.verdict {
                                Verdict::Better => Mark::Better,
                                Verdict::Worse => Mark::Worse,
                                _ => Mark::None,
                            },
                        },
                        (Some(v), None, _) => Cell {
                            text: metric.format(v),
                            detail: Some("not in the baseline".into()),
                            mark: Mark::None,
                        },
                        (None, Some(b), _) => Cell {
                            text: "not measured".into(),
                            detail: Some(format!("baseline {}", metric.format(b))),
                            mark: Mark::Missing,
                        },
                        _ => Cell::default(),
                    })
                    .collect(),
            })
            .collect();
        blocks.push(Block::Table(Table {
            caption: format!(
                "{}{}: {} against '{}'",
                p.workload,
                p.cpus
                    .as_ref()
                    .map_or(String::new(), |_| format!(", {}", cpus_label(&p.cpus))),
                metric.name(),
                c.baseline
            ),
            corner: "clients".into(),
            columns: p.clients.iter().map(u32::to_string).collect(),
            rows,
            wrap: wrap(p.clients.len()),
        }));
    }
    blocks
}

/// Lays out `r` (derived from `data`) as a document.
pub fn document(data: &StudyData, r: &Report) -> Doc {
    let metric = r.metric;
    let tp = if metric == Metric::Qps {
        Metric::Qps
    } else {
        Metric::Tps
    };
    let several = several_cpus(&r.panels);
    let mut sections = Vec::new();
    if !r.conclusions.is_empty() {
        sections.push(Section {
            title: "Conclusions".into(),
            blocks: r
                .conclusions
                .iter()
                .cloned()
                .map(Block::Paragraph)
                .collect(),
        });
    }
    for p in &r.panels {
        let title = panel_title(p, several);
        let mut blocks = Vec::new();
        let more = if metric.higher_is_better() {
            "more is better"
        } else {
            "less is better"
        };
        blocks.push(Block::Table(metric_table(
            p,
            metric,
            format!(
                "{} by clients (mean of repeats; {more})",
                capitalize(metric.title())
            ),
            metric == tp,
        )));
        blocks.extend(failure_note(p));
        blocks.push(Block::Chart(metric_chart(
            p,
            tp,
            "throughput",
            format!("{title}: {} vs clients", tp.axis()),
        )));
        if metric != tp {
            blocks.push(Block::Chart(metric_chart(
                p,
                metric,
                metric.name(),
                format!("{title}: {} vs clients", metric.axis()),
            )));
        }
        blocks.push(Block::Table(peak_table(p, tp)));
        if p.series.len() > 1 {
            blocks.push(Block::Paragraph(
                analysis::ranking_sentences(&p.ranking, "peak throughput").join(" "),
            ));
        }
        for m in [Metric::P95, Metric::P99] {
            if m != metric {
                blocks.push(Block::Chart(metric_chart(
                    p,
                    m,
                    m.name(),
                    format!("{title}: {} vs clients", m.axis()),
                )));
            }
        }
        let cpu = Chart {
            y: Axis {
                label: "client CPU (% of one core)".into(),
                log: false,
            },
            ..metric_chart(
                p,
                Metric::Tps,
                "client-cpu",
                format!("{title}: dbsweep's own CPU vs clients"),
            )
        };
        let cpu = Chart {
            series: p
                .series
                .iter()
                .map(|s| Series {
                    name: s.label.clone(),
                    points: s
                        .cells
                        .iter()
                        .filter_map(|c| {
                            c.client_cpu_pct
                                .as_ref()
                                .map(|st| (c.clients as f64, st.mean))
                        })
                        .collect(),
                    spread: None,
                })
                .filter(|s| !s.points.is_empty())
                .collect(),
            ..cpu
        };
        blocks.push(Block::Chart(cpu));
        blocks.push(Block::Note(
            "The client CPU chart is dbsweep's own use (user + system) per measured second: near 100 % per client thread means the client, not the server, may be the bottleneck. Server CPU is not recorded by this version.".into(),
        ));
        if let Some(t) = fairness_table(p) {
            blocks.push(Block::Table(t));
        }
        if let Some(sw) = &p.sweep {
            blocks.extend(sweep_blocks(sw));
        }
        sections.push(Section {
            title: title.clone(),
            blocks,
        });

        if let Some(c) = p.focus_clients {
            let mut blocks = vec![Block::Note(format!(
                "Figures at {c} clients ({}; choose another with --point N).",
                if p.ranking
                    .first()
                    .and_then(|b| p.series.iter().find(|s| s.label == b.label))
                    .and_then(|s| s.peak)
                    .map(|pk| pk.clients)
                    == Some(c)
                {
                    "where the best series peaks"
                } else {
                    "as asked"
                }
            ))];
            let (tps_ts, p95_ts) = time_series(p, data, c);
            if !tps_ts.is_empty() {
                blocks.push(Block::Chart(Chart {
                    id: format!("{}-at-{c}-tps-over-time", p.id),
                    title: format!("{title}: throughput over time at {c} clients"),
                    x: Axis {
                        label: "time (s)".into(),
                        log: false,
                    },
                    y: Axis {
                        label: "transactions/s".into(),
                        log: false,
                    },
                    kind: ChartKind::Line,
                    series: tps_ts,
                }));
                blocks.push(Block::Chart(Chart {
                    id: format!("{}-at-{c}-p95-over-time", p.id),
                    title: format!("{title}: p95 latency over time at {c} clients"),
                    x: Axis {
                        label: "time (s)".into(),
                        log: false,
                    },
                    y: Axis {
                        label: "p95 latency (ms)".into(),
                        log: false,
                    },
                    kind: ChartKind::Line,
                    series: p95_ts,
                }));
            }
            let cdf = cdf_series(p, data, c);
            if !cdf.is_empty() {
                blocks.push(Block::Chart(Chart {
                    id: format!("{}-at-{c}-latency-cdf", p.id),
                    title: format!("{title}: transaction latency distribution at {c} clients"),
                    x: Axis {
                        label: "latency (ms)".into(),
                        log: true,
                    },
                    y: Axis {
                        label: "transactions at or below (%)".into(),
                        log: false,
                    },
                    kind: ChartKind::Step,
                    series: cdf,
                }));
            }
            if let Some(t) = statements_table(p) {
                blocks.push(Block::Table(t));
            }
            if blocks.len() > 1 {
                sections.push(Section {
                    title: format!("{title}: at {c} clients"),
                    blocks,
                });
            }
        }
    }
    for sc in &r.scalability {
        sections.push(Section {
            title: format!("CPU scalability: {}", sc.workload),
            blocks: scalability_blocks(sc),
        });
    }
    if let Some(t) = errors_table(&r.panels, several) {
        sections.push(Section {
            title: "Errors and failures".into(),
            blocks: vec![Block::Table(t)],
        });
    }
    if let Some(c) = &r.comparison {
        sections.push(Section {
            title: format!("Compared with '{}'", c.baseline),
            blocks: comparison_blocks(c),
        });
    }
    Doc {
        title: match &r.comparison {
            Some(c) => format!("dbsweep report: {} vs {}", r.study.name, c.baseline),
            None => format!("dbsweep report: {}", r.study.name),
        },
        facts: facts(data, r),
        sections,
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_in_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(1_700_000_000), "2023-11-14 22:13 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00 UTC");
    }

    #[test]
    fn slugs_and_labels() {
        assert_eq!(
            slug("oltp_read_only tables=1 cpus 0-1"),
            "oltp-read-only-tables-1-cpus-0-1"
        );
        assert_eq!(cpus_label(&Some("0".into())), "1 CPU (0)");
        assert_eq!(cpus_label(&Some("0-3".into())), "4 CPUs (0-3)");
        assert_eq!(cpus_label(&None), "all CPUs");
        assert_eq!(wrap(14), Some(7));
        assert_eq!(wrap(7), None);
    }

    #[test]
    fn metrics_parse_by_name() {
        assert_eq!(Metric::parse("p99").unwrap(), Metric::P99);
        let e = Metric::parse("tpm").unwrap_err().to_string();
        assert!(e.contains("tps, qps, p95, p99, errors"), "{e}");
    }

    #[test]
    fn sweep_spec_from_the_file_text() {
        let s = SweepSpec::of("[sweep.parameter]\nclients = 16\nbaseline = \"b\"\n").unwrap();
        assert_eq!((s.baseline.as_str(), s.clients), ("b", 16));
        let s = SweepSpec::of("[sweep.parameter]\nclients = 8\n").unwrap();
        assert_eq!(s.baseline, "base");
        assert!(SweepSpec::of("name = \"x\"\n").is_none());
    }
}
