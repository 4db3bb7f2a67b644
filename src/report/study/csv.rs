//! The study report as CSV (the tidy table of `report::csv`): every point
//! and every derived figure, one figure per line:
//!
//! `record,panel,workload,cpus,series,clients,repeat,shard,figure,value,n,stddev,ci95,min,max,note`
//!
//! - `point`: one stored point (`repeat` set); figures `tps`, `qps`,
//!   `p95_ms`, `p99_ms`, `errors_per_s`; a point without figures has one
//!   `status` line whose note says why (never a zero). A coordinated
//!   point's (`nodes = N`) are its merged figures.
//! - `shard`: right under a coordinated point's lines, each of its shards
//!   (`shard` set, its node in `note`): `transactions`, `tps`,
//!   `start_skew_ms`, `clock_offset_ms`, and its machine's
//!   `cpu_busy_pct` and the client's `client_cpu_pct` (empty when not
//!   measured).
//! - on a TPC-C point, also its results (`result.tpcc`, as the record's
//!   JSON carries them): `tpmc`, `efficiency_pct`, `nopm`, `nopm_server`,
//!   `tpm`, `tpm_server`, `warehouses`, `terminals`, per type
//!   `TYPE:p90_ms` (its limit and verdict in `note`) and `TYPE:share_pct`
//!   (its minimum and verdict in `note`), and `consistency_failed` (the
//!   failing conditions; the verdict in `note`). An absent figure has an
//!   empty value and its reason in `note`.
//! - `cell`: the repeats of a point summarised (`n`, `stddev`, `ci95`,
//!   `min`, `max`), including `client_cpu_pct` and `fairness_cv_pct`.
//! - `peak`, `sag`, `collapse`, `rank`: per series of a panel.
//! - `statement`: latency by statement type at the panel's focus point.
//! - `scalability`: peak and factors per CPU set (`cpus` is the set).
//! - `sustained`: per offered-load series, the highest achieved rate
//!   sustained within the p99 goal (the level in `note`); paced points'
//!   `series` end in their level and carry `offered_per_s` and
//!   `achieved_per_s`.
//! - on every finished point, when and where it ran: `started_unix_s`
//!   (its clients' release), `ended_unix_s` (its window's end),
//!   `restart_s` (a server start just before it), and `machine` (in
//!   `note`).
//! - `paired`: each series against the baseline block by block (`series`
//!   is `SERIES / BASELINE`, `clients` empty for the peak): figure
//!   `METRIC_ratio`, `value` the geometric mean ratio, `n` the blocks,
//!   `min` and `max` the 95 % interval, the cell and verdict in `note`.
//! - `sweep`, `compare`: changes against a baseline, the verdict in `note`.
//! - `conclusion`: each sentence of the conclusions, in `note`.
//! - `server`: per target (`series` is the report's name for it), its
//!   `release` (`mariadb 10.2.11`), the `server_version` it reported and
//!   each `version_line` of the program that served it, in `note`.
//!
//! Empty fields are absent values. RFC 4180 quoting.

use super::{sharded, Report, Stat, StudyData};
use crate::report::csv::{num, opt, point_lines, to_csv, Line, Spread};
use crate::report::study::analysis::{Change, Verdict};
use crate::store::PointStatus;

/// The spread columns of a cell's repeats.
fn spread(s: &Stat) -> Spread {
    Spread {
        n: s.n,
        stddev: s.stddev,
        ci95: s.ci95,
        min: s.min,
        max: s.max,
    }
}

fn verdict(c: &Change) -> &'static str {
    match c.verdict {
        Verdict::Better => "better beyond the noise",
        Verdict::Worse => "worse beyond the noise",
        Verdict::Within => "within the noise",
        Verdict::TooFewRepeats => "too few repeats to judge",
    }
}

pub fn render(data: &StudyData, r: &Report) -> String {
    let mut lines: Vec<Line> = Vec::new();
    point_records(data, &mut lines);
    offered_records(r, &mut lines);
    panel_records(r, &mut lines);
    scalability_records(r, &mut lines);
    comparison_records(r, &mut lines);
    paired_records(r, &mut lines);
    conclusion_records(r, &mut lines);
    server_records(r, &mut lines);
    to_csv(lines)
}

/// Lines of every stored point, with its shards and TPC-C results, and when and where it ran.
fn point_records(data: &StudyData, lines: &mut Vec<Line>) {
    for p in data.points.iter().chain(&data.paced) {
        let row = &p.row;
        let target = data.target_label(&row.target);
        let base = Line {
            record: "point",
            panel: String::new(),
            workload: row.workload_label.clone(),
            cpus: row.cpus.clone().unwrap_or_default(),
            series: match &row.load_level {
                Some(l) => format!("{target} / {} {l}", row.variant),
                None => format!("{target} / {}", row.variant),
            },
            clients: row.clients.to_string(),
            repeat: row.repeat.to_string(),
            note: row
                .reason
                .as_ref()
                .map_or(row.status.as_str().to_string(), |why| {
                    format!("{}: {why}", row.status.as_str())
                }),
            ..Line::default()
        };
        match (&p.metrics, row.status) {
            (Some(m), PointStatus::Finished) => {
                point_lines(&base, m, row.load_level.is_some(), row.run.as_ref(), lines);
                // When and where it ran, where the point recorded it (a
                // point stored before dbsweep kept it has no such lines).
                for (figure, v) in [
                    ("started_unix_s", m.started_unix_us.map(|u| u as f64 / 1e6)),
                    ("ended_unix_s", m.ended_unix_us.map(|u| u as f64 / 1e6)),
                    ("restart_s", row.restart_s),
                ] {
                    if v.is_some() {
                        lines.push(Line {
                            figure: figure.into(),
                            value: opt(v),
                            ..base.clone()
                        });
                    }
                }
                let machine = super::names::machine_of(p);
                if !machine.is_empty() {
                    lines.push(Line {
                        figure: "machine".into(),
                        note: machine,
                        ..base.clone()
                    });
                }
            }
            _ => lines.push(Line {
                figure: "status".into(),
                ..base.clone()
            }),
        }
        // A coordinated point's shards, under its merged lines.
        for x in sharded::of(p, "").map(|s| s.shards).unwrap_or_default() {
            for (figure, v) in [
                ("transactions", Some(x.transactions as f64)),
                ("tps", Some(x.tps)),
                ("start_skew_ms", x.start_skew_ms),
                ("clock_offset_ms", x.clock_offset_ms),
                ("cpu_busy_pct", x.cpu_busy_pct),
                ("client_cpu_pct", x.client_cpu_pct),
            ] {
                lines.push(Line {
                    record: "shard",
                    shard: x.index.to_string(),
                    figure: figure.into(),
                    value: opt(v),
                    note: x.node.clone(),
                    ..base.clone()
                });
            }
        }
    }
}

/// Lines of the offered-load sweeps.
fn offered_records(r: &Report, lines: &mut Vec<Line>) {
    for o in &r.offered {
        for s in &o.series {
            let l = s.sustained.map(|i| &s.levels[i]);
            lines.push(Line {
                record: "sustained",
                panel: o.id.clone(),
                workload: o.workload.clone(),
                cpus: o.cpus.clone().unwrap_or_default(),
                series: s.label.clone(),
                clients: s.clients.to_string(),
                figure: "achieved_per_s".into(),
                value: opt(l.and_then(|l| l.achieved_per_s)),
                note: match l {
                    Some(l) => format!("{} with p99 ≤ {} ms", l.level, o.goal_ms),
                    None => format!("no offered load sustained with p99 ≤ {} ms", o.goal_ms),
                },
                ..Line::default()
            });
        }
    }
}

/// Lines of each panel: its cells, peaks, sag, collapse, ranks and statements.
fn panel_records(r: &Report, lines: &mut Vec<Line>) {
    for p in &r.panels {
        let panel = Line {
            panel: p.id.clone(),
            workload: p.workload.clone(),
            cpus: p.cpus.clone().unwrap_or_default(),
            ..Line::default()
        };
        for s in &p.series {
            let series = Line {
                series: s.label.clone(),
                ..panel.clone()
            };
            for c in &s.cells {
                let at = Line {
                    record: "cell",
                    clients: c.clients.to_string(),
                    ..series.clone()
                };
                if c.finished == 0 {
                    if !c.reasons.is_empty() {
                        lines.push(Line {
                            figure: "status".into(),
                            note: c.reasons.join("; "),
                            ..at
                        });
                    }
                    continue;
                }
                for (figure, st) in [
                    ("tps", &c.tps),
                    ("qps", &c.qps),
                    ("p95_ms", &c.p95_ms),
                    ("p99_ms", &c.p99_ms),
                    ("errors_per_s", &c.errors_ps),
                    ("client_cpu_pct", &c.client_cpu_pct),
                    ("fairness_cv_pct", &c.fairness_cv_pct),
                ] {
                    if let Some(st) = st {
                        lines.push(Line {
                            figure: figure.into(),
                            value: num(st.mean),
                            stat: Some(spread(st)),
                            note: c.reasons.join("; "),
                            ..at.clone()
                        });
                    }
                }
            }
            if let Some(pk) = s.peak {
                lines.push(Line {
                    record: "peak",
                    clients: pk.clients.to_string(),
                    figure: r.metric_throughput().into(),
                    value: num(pk.value),
                    ..series.clone()
                });
            }
            if let Some(g) = s.sag {
                lines.push(Line {
                    record: "sag",
                    clients: g.last.clients.to_string(),
                    figure: "sag_pct".into(),
                    value: num(g.pct),
                    note: format!(
                        "peak {} at {} clients; {} at {} clients",
                        g.peak.value, g.peak.clients, g.last.value, g.last.clients
                    ),
                    ..series.clone()
                });
            }
            if let Some(c) = s.collapse {
                lines.push(Line {
                    record: "collapse",
                    clients: c.clients.to_string(),
                    figure: r.metric_throughput().into(),
                    value: num(c.value),
                    note: "first client count past the peak below half of it".into(),
                    ..series.clone()
                });
            }
        }
        for rank in &p.ranking {
            lines.push(Line {
                record: "rank",
                series: rank.label.clone(),
                figure: "behind_best_pct".into(),
                value: num(rank.behind_pct),
                note: format!("peak {}", rank.value),
                ..panel.clone()
            });
        }
        for st in &p.statements {
            for k in &st.kinds {
                for (figure, v) in [
                    ("avg_ms", k.avg_ms),
                    ("p95_ms", k.p95_ms),
                    ("p99_ms", k.p99_ms),
                    ("max_ms", k.max_ms),
                ] {
                    lines.push(Line {
                        record: "statement",
                        series: st.series.clone(),
                        clients: st.clients.to_string(),
                        figure: format!("{}:{figure}", k.kind),
                        value: num(v),
                        note: format!("{} executions", k.count),
                        ..panel.clone()
                    });
                }
            }
        }
        if let Some(sw) = &p.sweep {
            for row in &sw.rows {
                let l = Line {
                    record: "sweep",
                    series: format!("{} / {}", row.target_label, row.variant),
                    clients: sw.clients.to_string(),
                    ..panel.clone()
                };
                if let Some(t) = &row.tps {
                    lines.push(Line {
                        figure: "tps".into(),
                        value: num(t.mean),
                        stat: Some(spread(t)),
                        note: if row.setting.is_empty() {
                            "baseline".into()
                        } else {
                            String::new()
                        },
                        ..l.clone()
                    });
                }
                if let Some(c) = &row.change {
                    lines.push(Line {
                        figure: "change_pct".into(),
                        value: opt(c.pct),
                        note: verdict(c).into(),
                        ..l
                    });
                }
            }
        }
    }
}

/// Lines of CPU scalability per CPU set.
fn scalability_records(r: &Report, lines: &mut Vec<Line>) {
    for sc in &r.scalability {
        for s in &sc.series {
            for c in &s.configs {
                let l = Line {
                    record: "scalability",
                    workload: sc.workload.clone(),
                    cpus: c.label.clone(),
                    series: s.label.clone(),
                    note: format!("{} CPUs", c.cpus),
                    ..Line::default()
                };
                lines.push(Line {
                    figure: "peak".into(),
                    value: num(c.peak),
                    ..l.clone()
                });
                lines.push(Line {
                    figure: "vs_half".into(),
                    value: opt(c.vs_half),
                    ..l.clone()
                });
                lines.push(Line {
                    figure: "vs_fewest".into(),
                    value: opt(c.vs_fewest),
                    ..l
                });
            }
        }
    }
}

/// Lines of the comparison with a baseline study.
fn comparison_records(r: &Report, lines: &mut Vec<Line>) {
    if let Some(cmp) = &r.comparison {
        for p in &cmp.panels {
            for s in &p.series {
                for c in &s.cells {
                    let Some(ch) = &c.change else { continue };
                    lines.push(Line {
                        record: "compare",
                        panel: p.id.clone(),
                        workload: p.workload.clone(),
                        cpus: p.cpus.clone().unwrap_or_default(),
                        series: s.label.clone(),
                        clients: c.clients.to_string(),
                        figure: format!("{}_change_pct", cmp.metric.name()),
                        value: opt(ch.pct),
                        note: format!(
                            "{} against {} in '{}': {}",
                            ch.value,
                            ch.baseline,
                            cmp.baseline,
                            verdict(ch)
                        ),
                        ..Line::default()
                    });
                }
            }
        }
    }
}

/// Lines of the paired comparisons, block by block.
fn paired_records(r: &Report, lines: &mut Vec<Line>) {
    for c in &r.paired.comparisons {
        lines.push(Line {
            record: "paired",
            workload: c.workload.clone(),
            cpus: c.cpus.clone().unwrap_or_default(),
            series: format!("{} / {}", c.series, c.baseline),
            clients: c.clients.map_or(String::new(), |n| n.to_string()),
            figure: format!("{}_ratio", c.metric),
            value: opt(c.ratio),
            stat: c.ratio.map(|_| Spread {
                n: c.blocks,
                stddev: None,
                ci95: None,
                min: c.ci_low.unwrap_or(f64::NAN),
                max: c.ci_high.unwrap_or(f64::NAN),
            }),
            note: format!("{}: {}", c.cell, c.verdict.name()),
            ..Line::default()
        });
    }
}

/// Lines of the conclusions, one sentence a line.
fn conclusion_records(r: &Report, lines: &mut Vec<Line>) {
    for c in &r.conclusions {
        lines.push(Line {
            record: "conclusion",
            note: c.clone(),
            ..Line::default()
        });
    }
}

/// Lines of each target's server.
fn server_records(r: &Report, lines: &mut Vec<Line>) {
    for s in &r.study.servers {
        let texts = s
            .release
            .iter()
            .map(|v| ("release", v))
            .chain(s.server_version.iter().map(|v| ("server_version", v)))
            .chain(s.version_lines.iter().map(|v| ("version_line", v)));
        for (figure, text) in texts {
            lines.push(Line {
                record: "server",
                series: s.label.clone(),
                figure: figure.into(),
                note: text.clone(),
                ..Line::default()
            });
        }
    }
}
