//! The offered-load sweeps of a study (workloads with a `rates` or `users`
//! axis): per workload entry and CPU set, each series' levels with the
//! offered and achieved rates, latency from the intended start, late,
//! skipped and unstarted shares; the highest load each series sustained
//! within the p99 goal; and the document blocks that show them — the
//! "hockey stick" of latency against achieved rate (log latency), achieved
//! against offered rate, and the table.

use super::figures;
use super::model::{LoadLevel, LoadPanel, LoadSeries, Sweep};
use super::names::{
    cpus_label, distinct, finished, panel_key, series_label, show_variant, slug, workload_title,
};
use super::{Metric, StudyData};
use crate::report::doc::{Axis, Block, Cell, Chart, ChartKind, Mark, Row, Series, Table};
use crate::store::StoredPoint;
// The share of a level's offered load that may go unserved for it to
// count as sustained: the rule a search's probes are judged by too.
use crate::study::search::MAX_UNSERVED_PCT;
use crate::util::units::ms_ms;

/// The goal when the study gives neither `p99_goal` nor `latency_limit`.
pub const DEFAULT_GOAL_MS: f64 = 100.0;

/// One figure of a level.
type Figure = fn(&LoadLevel) -> Option<f64>;

/// The offered-load panels of `data`'s paced points.
pub(super) fn load_panels(data: &StudyData) -> Vec<LoadPanel> {
    // A search's probes are each series' own rates: `searched` shows them.
    let paced: Vec<&StoredPoint> = data
        .paced
        .iter()
        .filter(|p| !super::searched::is_probe(p))
        .collect();
    let with_variant = show_variant(paced.iter().copied());
    let keys = distinct(paced.iter().copied().map(panel_key));
    let several_cpus = distinct(keys.iter().map(|k| &k.2)).len() > 1;
    keys.into_iter()
        .map(|key| {
            let points: Vec<&StoredPoint> = paced
                .iter()
                .copied()
                .filter(|p| panel_key(p) == key)
                .collect();
            let (label, options, cpus) = key;
            let axis = if points.iter().any(|p| {
                p.row
                    .load_level
                    .as_deref()
                    .is_some_and(|l| l.starts_with("users="))
            }) {
                "users"
            } else {
                "rate"
            };
            let (goal_ms, goal_from) = goal(&points);
            let names = distinct(points.iter().map(|p| {
                (
                    p.row.target.clone(),
                    p.row.variant.clone(),
                    p.row.instances,
                    p.row.clients,
                )
            }));
            let several_clients = distinct(names.iter().map(|n| n.3)).len() > 1;
            let series = names
                .iter()
                .map(|(t, v, i, c)| {
                    let mine: Vec<&StoredPoint> = points
                        .iter()
                        .copied()
                        .filter(|p| {
                            &p.row.target == t
                                && &p.row.variant == v
                                && p.row.instances == *i
                                && p.row.clients == *c
                        })
                        .collect();
                    let mut label = series_label(data.target_label(t), v, *i, with_variant);
                    if several_clients {
                        label = format!("{label} on {c} connections");
                    }
                    let levels: Vec<LoadLevel> =
                        distinct(mine.iter().filter_map(|p| p.row.load_level.clone()))
                            .into_iter()
                            .map(|l| level(&l, &mine))
                            .collect();
                    let sustained = sustained(&levels, goal_ms);
                    LoadSeries {
                        label,
                        clients: *c,
                        levels,
                        sustained,
                    }
                })
                .collect();
            let mut title = workload_title(&label, &options);
            if several_cpus {
                title = format!("{title}, {}", cpus_label(&cpus));
            }
            let sweeps = sweeps(data, &points, with_variant);
            LoadPanel {
                sweeps,
                id: format!(
                    "{}-offered",
                    slug(&format!("{label}-{}", cpus.as_deref().unwrap_or("all")))
                ),
                workload: title,
                cpus,
                axis: axis.into(),
                unit: super::unit(&points[0].row.workload),
                series,
                goal_ms,
                goal_from,
            }
        })
        .collect()
}

/// A parameter sweep measured on a load axis (seed 003's table on DBT-1
/// at one number of users): one table per level, as the closed-loop sweep
/// compares the variants at the sweep's client count.
fn sweeps(data: &StudyData, points: &[&StoredPoint], with_variant: bool) -> Vec<Sweep> {
    let Some(spec) = data.sweep.clone() else {
        return Vec::new();
    };
    distinct(points.iter().filter_map(|p| p.row.load_level.clone()))
        .into_iter()
        .filter_map(|level| {
            let at: Vec<&StoredPoint> = points
                .iter()
                .copied()
                .filter(|p| p.row.load_level.as_deref() == Some(level.as_str()))
                .collect();
            let names = distinct(
                at.iter()
                    .map(|p| (p.row.target.clone(), p.row.variant.clone(), p.row.instances)),
            );
            let series: Vec<_> = names
                .iter()
                .map(|(t, v, i)| {
                    let mine: Vec<&StoredPoint> = at
                        .iter()
                        .copied()
                        .filter(|p| {
                            &p.row.target == t && &p.row.variant == v && p.row.instances == *i
                        })
                        .collect();
                    figures::series(
                        series_label(data.target_label(t), v, *i, with_variant),
                        &mine,
                        &[spec.clients],
                        Metric::Tps,
                    )
                })
                .collect();
            let mut sweep = figures::sweep_table(&spec, &series, data, Some(&level))?;
            sweep.level = Some(level);
            Some(sweep)
        })
        .collect()
}

/// The p99 goal of a panel and where it comes from: the study's
/// `p99_goal`, else its `latency_limit`, else [`DEFAULT_GOAL_MS`].
fn goal(points: &[&StoredPoint]) -> (f64, String) {
    let settings = points
        .iter()
        .filter_map(|p| p.row.run.as_ref()?.run.pacing.as_ref());
    let mut limit = None;
    for s in settings {
        if let Some(g) = s.p99_goal_ms {
            return (g, "the study's p99_goal".into());
        }
        limit = limit.or(s.latency_limit_ms);
    }
    match limit {
        Some(l) => (l, "the study's latency_limit".into()),
        None => (
            DEFAULT_GOAL_MS,
            "the default (no p99_goal or latency_limit given)".into(),
        ),
    }
}

/// The mean figures of level `level`'s finished repeats among `points`.
fn level(level: &str, points: &[&StoredPoint]) -> LoadLevel {
    let mine: Vec<&StoredPoint> = points
        .iter()
        .copied()
        .filter(|p| p.row.load_level.as_deref() == Some(level))
        .collect();
    let done: Vec<_> = mine.iter().filter_map(|p| finished(p)).collect();
    let mean = |f: &dyn Fn(&crate::store::Metrics) -> Option<f64>| -> Option<f64> {
        let v: Vec<f64> = done.iter().filter_map(|m| f(m)).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let share = |f: &dyn Fn(&crate::store::Metrics) -> Option<u64>| {
        mean(&|m| {
            let offered = m.offered_per_s? * m.measured_s;
            (offered > 0.0).then(|| f(m).unwrap_or(0) as f64 / offered * 100.0)
        })
    };
    let runs: Vec<&crate::record::Run> = mine
        .iter()
        .filter(|p| finished(p).is_some())
        .filter_map(|p| p.row.run.as_ref())
        .collect();
    let mut l = LoadLevel {
        level: level.to_string(),
        repeats: done.len(),
        missing: done.is_empty().then(|| {
            mine.iter()
                .find_map(|p| p.row.reason.clone())
                .unwrap_or_else(|| "no finished repeat".into())
        }),
        offered_per_s: mean(&|m| m.offered_per_s),
        achieved_per_s: mean(&|m| m.achieved_per_s.or(Some(m.tps))),
        p50_ms: mean(&|m| m.lat_p50_us.map(|u| u / 1e3)),
        p95_ms: mean(&|m| m.lat_p95_us.map(|u| u / 1e3)),
        p99_ms: mean(&|m| m.lat_p99_us.map(|u| u / 1e3)),
        max_ms: mean(&|m| m.lat_max_us.map(|u| u / 1e3)),
        late_pct: share(&|m| m.late),
        skipped_pct: share(&|m| m.skipped),
        unstarted_pct: share(&|m| m.unstarted),
        lag_p99_ms: mean(&|m| m.lag_p99_us.map(|u| u / 1e3)),
        users: None,
        cpu_busy_pct: None,
        server_cpu_pct: None,
        types: Vec::new(),
    };
    super::users::extras(&mut l, &runs);
    l
}

/// Was `l` sustained: p99 within the goal, and at most [`MAX_UNSERVED_PCT`] of
/// its offered load skipped or never started?
pub(super) fn kept_up(l: &LoadLevel, goal_ms: f64) -> bool {
    let unserved = l.skipped_pct.unwrap_or(0.0) + l.unstarted_pct.unwrap_or(0.0);
    l.p99_ms.is_some_and(|p| p <= goal_ms) && unserved <= MAX_UNSERVED_PCT
}

/// The sustained level with the highest achieved rate.
fn sustained(levels: &[LoadLevel], goal_ms: f64) -> Option<usize> {
    levels
        .iter()
        .enumerate()
        .filter(|(_, l)| kept_up(l, goal_ms))
        .max_by(|a, b| {
            let r = |l: &LoadLevel| l.achieved_per_s.unwrap_or(0.0);
            r(a.1).total_cmp(&r(b.1))
        })
        .map(|(i, _)| i)
}

/// The panel's sentences: the highest load each series sustained.
pub(super) fn conclusions(p: &LoadPanel) -> Vec<String> {
    let goal = ms_ms(p.goal_ms);
    p.series
        .iter()
        .map(|s| {
            let first_over = |from: usize| {
                s.levels[from..]
                    .iter()
                    .find(|l| l.repeats > 0 && !kept_up(l, p.goal_ms))
                    .map(|l| {
                        format!(
                            "; at {} it {}",
                            l.level,
                            match l.p99_ms {
                                Some(p99) if p99 > p.goal_ms => format!("reaches p99 {} ms", ms_ms(p99)),
                                _ => format!(
                                    "leaves {:.1} % of its offered load unserved",
                                    l.skipped_pct.unwrap_or(0.0) + l.unstarted_pct.unwrap_or(0.0)
                                ),
                            }
                        )
                    })
                    .unwrap_or_default()
            };
            match s.sustained {
                Some(i) => {
                    let l = &s.levels[i];
                    format!(
                        "{}: {} sustains at most {:.0} {} ({}{}) with p99 ≤ {goal} ms (p99 {} ms){}.",
                        p.workload,
                        s.label,
                        l.achieved_per_s.unwrap_or(0.0),
                        p.unit.per_s,
                        l.level,
                        l.offered_per_s.map_or(String::new(), |o| format!(", offered {o:.0}/s")),
                        l.p99_ms.map_or("-".into(), ms_ms),
                        first_over(i + 1)
                    )
                }
                None => format!(
                    "{}: {} sustains none of its offered loads with p99 ≤ {goal} ms{}.",
                    p.workload,
                    s.label,
                    first_over(0)
                ),
            }
        })
        .collect()
}

/// The document blocks of one panel.
pub(super) fn blocks(p: &LoadPanel) -> Vec<Block> {
    let mut blocks = Vec::new();
    blocks.push(Block::Table(table(p)));
    for sw in &p.sweeps {
        blocks.extend(super::sections::sweep_blocks(sw, p.unit));
    }
    if p.axis == "users" {
        blocks.extend(super::users::blocks(p));
    }
    blocks.push(Block::Note(format!(
        "Latency runs from each transaction's intended start (its scheduled arrival, or when its user finished thinking), so queueing behind a slow server counts. Sustained: p99 ≤ {} ms ({}) with at most {MAX_UNSERVED_PCT} % of the offered load skipped or never started.",
        ms_ms(p.goal_ms),
        p.goal_from
    )));
    for s in &p.series {
        let pts = |f: Figure| -> Vec<(f64, f64)> {
            s.levels
                .iter()
                .filter_map(|l| Some((l.achieved_per_s?, f(l)?)))
                .filter(|&(_, y)| y > 0.0)
                .collect()
        };
        let lines: [(&str, Figure); 4] = [
            ("p50", |l| l.p50_ms),
            ("p95", |l| l.p95_ms),
            ("p99", |l| l.p99_ms),
            ("max", |l| l.max_ms),
        ];
        blocks.push(Block::Chart(Chart {
            id: format!("{}-{}-latency", p.id, slug(&s.label)),
            title: format!("{}: {}: latency against achieved rate", p.workload, s.label),
            x: Axis::linear(format!("achieved {}", p.unit.per_s)),
            y: Axis::log("latency (ms)"),
            kind: ChartKind::Line,
            series: lines
                .iter()
                .map(|(name, f)| Series {
                    name: name.to_string(),
                    points: pts(*f),
                    spread: None,
                    reference: false,
                })
                .filter(|s| !s.points.is_empty())
                .collect(),
        }));
    }
    let mut series: Vec<Series> = p
        .series
        .iter()
        .map(|s| Series {
            name: s.label.clone(),
            points: s
                .levels
                .iter()
                .filter_map(|l| Some((l.offered_per_s?, l.achieved_per_s?)))
                .collect(),
            spread: None,
            reference: false,
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    let top = series
        .iter()
        .flat_map(|s| s.points.iter().map(|&(x, _)| x))
        .fold(0.0, f64::max);
    if top > 0.0 {
        series.push(Series {
            name: "offered = achieved".into(),
            points: vec![(0.0, 0.0), (top, top)],
            spread: None,
            reference: false,
        });
        blocks.push(Block::Chart(Chart {
            id: format!("{}-achieved", p.id),
            title: format!("{}: achieved against offered rate", p.workload),
            x: Axis::linear(format!("offered {}", p.unit.per_s)),
            y: Axis::linear(format!("achieved {}", p.unit.per_s)),
            kind: ChartKind::Line,
            series,
        }));
    }
    blocks
}

fn table(p: &LoadPanel) -> Table {
    let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("-".to_string(), f);
    let rate = |v: f64| format!("{v:.0}");
    let pct = |v: f64| format!("{v:.2}");
    let rows = p
        .series
        .iter()
        .flat_map(|s| {
            s.levels.iter().enumerate().map(move |(i, l)| {
                let mut cells: Vec<Cell> = match &l.missing {
                    Some(why) => vec![Cell::plain(why.clone())],
                    None => [
                        opt(l.offered_per_s, &rate),
                        opt(l.achieved_per_s, &rate),
                        opt(l.p50_ms, &ms_ms),
                        opt(l.p95_ms, &ms_ms),
                        opt(l.p99_ms, &ms_ms),
                        opt(l.max_ms, &ms_ms),
                        opt(l.lag_p99_ms, &ms_ms),
                        opt(l.late_pct, &pct),
                        opt(l.skipped_pct, &pct),
                        opt(l.unstarted_pct, &pct),
                    ]
                    .into_iter()
                    .map(Cell::plain)
                    .collect(),
                };
                if s.sustained == Some(i) {
                    cells[1].mark = Mark::Best;
                }
                Row {
                    label: format!("{} {}", s.label, l.level),
                    cells,
                }
            })
        })
        .collect();
    Table {
        caption: format!(
            "{}: offered load (mean of repeats; * the highest load sustained with p99 ≤ {} ms)",
            p.workload,
            ms_ms(p.goal_ms)
        ),
        corner: "series and level".into(),
        columns: [
            "offered/s",
            "achieved/s",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "max ms",
            "lag p99 ms",
            "late %",
            "skipped %",
            "unstarted %",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        ..Table::default()
    }
}
