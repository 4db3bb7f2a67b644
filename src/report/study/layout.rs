//! The study report's layout: [`document`] turns a [`Report`] into a
//! [`Doc`] — per panel the metric tables and charts, peaks, fairness,
//! the sweep and the per-point figures; then CPU scalability, errors and
//! the comparison — which every format (HTML, Markdown, text) renders.

use std::fmt::Write;

use super::conclusions::facts;
use super::figures::{
    cpus_label, distinct, finished, merged, panel_key, panel_title, several_cpus,
};
use super::{ms, CellData, Comparison, Metric, Panel, Report, Scalability, Stat, StudyData, Sweep};
use crate::report::analysis::{self, Scaling, Verdict};
use crate::report::doc::{
    Axis, Block, Cell, Chart, ChartKind, Doc, Mark, Row, Section, Series, Table,
};
use crate::store::{self, StoredPoint};

/// Tables wider than this many client columns wrap into halves (seed 000).
const WRAP_ABOVE: usize = 8;

/// Points of a latency CDF drawn at most.
const CDF_POINTS: usize = 200;

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
        x: Axis::new("clients", log_clients(&p.clients)),
        y: Axis::new(metric.axis(), false),
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
        let intervals: Vec<&store::Interval> =
            run.result.intervals.iter().filter(|i| !i.warmup).collect();
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
            y: Axis::new("client CPU (% of one core)", false),
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
                    x: Axis::new("time (s)", false),
                    y: Axis::new("transactions/s", false),
                    kind: ChartKind::Line,
                    series: tps_ts,
                }));
                blocks.push(Block::Chart(Chart {
                    id: format!("{}-at-{c}-p95-over-time", p.id),
                    title: format!("{title}: p95 latency over time at {c} clients"),
                    x: Axis::new("time (s)", false),
                    y: Axis::new("p95 latency (ms)", false),
                    kind: ChartKind::Line,
                    series: p95_ts,
                }));
            }
            let cdf = cdf_series(p, data, c);
            if !cdf.is_empty() {
                blocks.push(Block::Chart(Chart {
                    id: format!("{}-at-{c}-latency-cdf", p.id),
                    title: format!("{title}: transaction latency distribution at {c} clients"),
                    x: Axis::new("latency (ms)", true),
                    y: Axis::new("transactions at or below (%)", false),
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
    fn wide_tables_wrap() {
        assert_eq!(wrap(14), Some(7));
        assert_eq!(wrap(7), None);
    }
}
