//! The derived figures of a study: [`analyze`] groups the stored points
//! into panels (workload entry × CPU set), series (target/variant) and
//! cells (client count), summarises the repeats of each cell and derives
//! peaks, sag, collapse points, rankings, the parameter sweep, CPU
//! scalability and the comparison with a baseline study — the [`Report`]
//! that CSV and JSON export and the document is laid out from.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use super::conclusions::conclusions;
use super::{Metric, Options, StudyData};
use crate::report::analysis::{self, Change, Peak, Rank, Sag, Scaling};
use crate::stats::histogram::Histogram;
use crate::store::{Metrics, PointStatus, StoredPoint};

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
    fn of(values: Vec<f64>) -> Option<Stat> {
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

pub(super) fn finished(p: &StoredPoint) -> Option<&Metrics> {
    (p.row.status == PointStatus::Finished)
        .then_some(p.metrics.as_ref())
        .flatten()
}

/// `(workload label, options, cpus)`: what a panel is.
type PanelKey = (String, Vec<(String, String)>, Option<String>);

pub(super) fn panel_key(p: &StoredPoint) -> PanelKey {
    (
        p.row.workload_label.clone(),
        p.row.workload_options.clone(),
        p.row.cpus.clone(),
    )
}

/// Distinct values in order of first appearance.
pub(super) fn distinct<T: PartialEq + Clone>(items: impl IntoIterator<Item = T>) -> Vec<T> {
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

pub(super) fn cpus_label(cpus: &Option<String>) -> String {
    match cpus {
        None => "all CPUs".to_string(),
        Some(set) => match analysis::cpu_count(set) {
            Some(1) => format!("1 CPU ({set})"),
            Some(n) => format!("{n} CPUs ({set})"),
            None => format!("CPUs {set}"),
        },
    }
}

pub(super) fn workload_title(label: &str, options: &[(String, String)]) -> String {
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
            let f = &p.row.run.as_ref()?.result.fairness;
            analysis::fairness_cv(f.events_avg, f.events_stddev)
        }),
    }
}

/// The histograms called `name` of the finished `points`, merged.
pub(super) fn merged(points: &[&StoredPoint], name: &str) -> Option<Histogram> {
    let mut out: Option<Histogram> = None;
    for p in points.iter().filter(|p| finished(p).is_some()) {
        if let Some(h) = p.row.histogram(name) {
            out.get_or_insert_with(Histogram::new).merge(&h);
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
            .flat_map(|p| p.row.histogram_names()),
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

pub(super) fn panel_title(p: &Panel, several_cpus: bool) -> String {
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

pub(super) fn several_cpus(panels: &[Panel]) -> bool {
    distinct(panels.iter().map(|p| p.cpus.clone())).len() > 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_labels() {
        assert_eq!(
            slug("oltp_read_only tables=1 cpus 0-1"),
            "oltp-read-only-tables-1-cpus-0-1"
        );
        assert_eq!(cpus_label(&Some("0".into())), "1 CPU (0)");
        assert_eq!(cpus_label(&Some("0-3".into())), "4 CPUs (0-3)");
        assert_eq!(cpus_label(&None), "all CPUs");
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
