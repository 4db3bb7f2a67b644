//! The figures of a study's panels: its stored points grouped into panels
//! (workload entry × CPU set), series (target/variant) and cells (client
//! count); the repeats of each cell summarised; each series' peak, sag and
//! collapse; latency per statement type from the merged histograms; the
//! one-setting-at-a-time parameter sweep of a panel's variants.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::model::{
    CellData, KindLatency, Panel, SeriesData, Stat, StatementLatency, Sweep, SweepRow,
    COLLAPSE_FRACTION,
};
use super::names::{
    distinct, finished, panel_key, series_label, show_variant, slug, throughput, workload_title,
};
use super::usage::point_cpu;
use super::{Metric, Options, StudyData};
use crate::report::study::analysis::{self};
use crate::stats::histogram::Histogram;
use crate::store::{Metrics, Repeats, StoredPoint};
use crate::study::SweepSpec;

pub(super) fn panels(data: &StudyData, opts: &Options) -> Vec<Panel> {
    let with_variant = show_variant(&data.points);
    let sweep = data.sweep.clone();
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
                        series_label(data.target_label(t), v, *i, with_variant),
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
            let sweep = sweep
                .as_ref()
                .and_then(|sp| sweep_table(sp, &series, data, None));
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

pub(super) fn series(
    label: String,
    points: &[&StoredPoint],
    clients: &[u32],
    tp: Metric,
) -> SeriesData {
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
    // Counted as `dbsweep results` counts them, so the two cannot disagree.
    let r = Repeats::of(&points);
    let stat = |f: &dyn Fn(&StoredPoint, &Metrics) -> Option<f64>| {
        Stat::of(r.finished.iter().filter_map(|(p, m)| f(p, m)).collect())
    };
    CellData {
        clients,
        finished: r.finished.len(),
        skipped: r.skipped,
        failed: r.failed,
        reasons: r.reasons.clone(),
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
        cpu_busy_pct: stat(&|p, _| point_cpu(p).map(|c| c.busy())),
        cpu_user_pct: stat(&|p, _| point_cpu(p).map(|c| c.user)),
        cpu_system_pct: stat(&|p, _| point_cpu(p).map(|c| c.system)),
        iowait_pct: stat(&|p, _| point_cpu(p).map(|c| c.iowait)),
        server_machine_pct: stat(&|_, m| m.server_cpu_pct),
        client_machine_pct: stat(&|_, m| m.client_cpu_pct),
        server_cpu_us_per_txn: stat(&|_, m| m.server_cpu_us_per_txn),
        deadlocks_ps: stat(&|_, m| m.deadlocks_per_s),
        row_lock_waits_ps: stat(&|_, m| m.row_lock_waits_per_s),
        semaphore_waits_per_txn: stat(&|_, m| m.semaphore_os_waits_per_txn),
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

/// A variant against the sweep's baseline at `clients`, throughput block
/// by block (same repeat, same machine): the analysis verdict its interval
/// allows; None with fewer than two pairs.
fn paired_verdict(
    data: &StudyData,
    target: &str,
    baseline: &str,
    variant: &str,
    (clients, level): (u32, Option<&str>),
) -> Option<(analysis::Verdict, crate::stats::paired::Ratio)> {
    let by_repeat = |v: &str| -> BTreeMap<u32, (f64, String)> {
        data.points
            .iter()
            .chain(&data.paced)
            .filter(|p| p.row.target == target && p.row.variant == v && p.row.clients == clients)
            .filter(|p| p.row.load_level.as_deref() == level)
            .filter_map(|p| {
                Some((
                    p.row.repeat,
                    (finished(p)?.tps, super::names::machine_of(p)),
                ))
            })
            .collect()
    };
    let (b, x) = (by_repeat(baseline), by_repeat(variant));
    let pairs: Vec<(f64, f64)> = x
        .iter()
        .filter_map(|(k, (v, m))| {
            let (w, n) = b.get(k)?;
            (m == n).then_some((*v, *w))
        })
        .collect();
    let r = crate::stats::paired::Ratio::of(&pairs).filter(|r| r.blocks >= 2)?;
    let margin = data
        .design
        .as_ref()
        .map_or(crate::study::DEFAULT_EQUIVALENCE, |d| d.equivalence);
    use crate::stats::paired::Verdict as V;
    let verdict = match r.verdict(margin, true) {
        V::Better => analysis::Verdict::Better,
        V::Worse => analysis::Verdict::Worse,
        V::Equivalent | V::Inconclusive => analysis::Verdict::Within,
        V::TooFewRepeats | V::DifferentMachines => analysis::Verdict::TooFewRepeats,
    };
    Some((verdict, r))
}

pub(super) fn sweep_table(
    spec: &SweepSpec,
    series: &[SeriesData],
    data: &StudyData,
    level: Option<&str>,
) -> Option<Sweep> {
    fn at_clients(s: &SeriesData, clients: u32) -> Option<&CellData> {
        s.cells.iter().find(|c| c.clients == clients)
    }
    let at = |s| at_clients(s, spec.clients);
    let mut rows = Vec::new();
    for base in series.iter().filter(|s| s.variant == spec.baseline) {
        let base_tps = at(base).and_then(|c| c.tps.clone());
        rows.push(SweepRow {
            target: base.target.clone(),
            target_label: data.target_label(&base.target).to_string(),
            variant: base.variant.clone(),
            setting: String::new(),
            value: String::new(),
            tps: base_tps.clone(),
            p95_ms: at(base).and_then(|c| c.p95_ms.clone()),
            change: None,
            paired: None,
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
            let mut change = match (&base_tps, &tps) {
                (Some(b), Some(v)) => analysis::change(&b.values, &v.values, true),
                _ => None,
            };
            // Where the repeats pair block by block, their interval
            // decides (the unpaired rule is for a study of one repeat
            // order it does not know).
            let paired = paired_verdict(
                data,
                &base.target,
                &spec.baseline,
                &s.variant,
                (spec.clients, level),
            );
            if let (Some(c), Some((v, _))) = (change.as_mut(), paired) {
                c.verdict = v;
            }
            rows.push(SweepRow {
                target: s.target.clone(),
                target_label: data.target_label(&s.target).to_string(),
                variant: s.variant.clone(),
                setting: setting.to_string(),
                value: value.to_string(),
                tps,
                p95_ms: at(s).and_then(|c| c.p95_ms.clone()),
                change,
                paired: paired.map(|(_, r)| r),
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
        level: None,
        rows,
        too_few_repeats,
    })
}
