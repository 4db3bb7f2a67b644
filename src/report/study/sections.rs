//! The study report's sections across series: the parameter sweep, CPU
//! scalability and the comparison with a baseline study.

use super::tables::{text_cell, wrap};

use super::names::{cpus_label, distinct};
use super::{Comparison, Scalability, Sweep, Unit};
use crate::report::doc::{Block, Cell, Mark, Row, Table};
use crate::report::study::analysis::{Scaling, Verdict};
use crate::util::units::ms_ms;

/// The parameter sweep's table and note; throughput in `unit`.
pub(super) fn sweep_blocks(sw: &Sweep, unit: Unit) -> Vec<Block> {
    let rows = sw
        .rows
        .iter()
        .map(|r| {
            let name = if r.setting.is_empty() {
                format!("{} / {} (baseline)", r.target_label, r.variant)
            } else {
                format!("{} / {} = {}", r.target_label, r.setting, r.value)
            };
            let tps = r.tps.as_ref();
            let (change, mark) = match (r.change, r.paired) {
                (None, _) => (String::new(), Mark::None),
                // Block by block: the ratio and its interval, marked where
                // the interval decides.
                (Some(c), Some(p)) => {
                    let text = match p.ci {
                        Some((lo, hi)) => format!("{:.3} [{lo:.3}, {hi:.3}]", p.ratio),
                        None => format!("{:.3}", p.ratio),
                    };
                    match c.verdict {
                        Verdict::Better => (text, Mark::Better),
                        Verdict::Worse => (text, Mark::Worse),
                        _ => (text, Mark::None),
                    }
                }
                (Some(c), None) => {
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
                    text_cell(r.p95_ms.as_ref().map_or("-".into(), |l| ms_ms(l.mean))),
                ],
            }
        })
        .collect();
    let mut blocks = vec![Block::Table(Table {
        caption: format!(
            "Parameter sweep at {} clients{}: each setting changed alone from '{}'",
            sw.clients,
            sw.level
                .as_ref()
                .map_or(String::new(), |l| format!(", {l}")),
            sw.baseline
        ),
        corner: "variant".into(),
        columns: [
            unit.short,
            "± 95 %",
            "repeats",
            "change vs baseline",
            "p95 ms",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        wrap: None,
        prose: false,
    })];
    blocks.push(Block::Note(if sw.rows.iter().any(|r| r.paired.is_some()) {
        "The change is the throughput's ratio to the baseline's block by block (geometric mean, [95 % interval], over the blocks both ran), marked only where the interval excludes 1; the means beside it are of repeats that ran at different times.".into()
    } else {
        "A change is marked only when it exceeds the repeat noise: when the 95 % confidence intervals of the two means do not overlap (the repeats did not run in blocks, so they are not paired).".into()
    }));
    if sw.too_few_repeats {
        blocks.push(Block::Note(
            "Some values were measured fewer than two times: their noise is unknown and their change is not judged. Set `repeats = 3` or more for the sweep.".into(),
        ));
    }
    blocks
}

pub(super) fn scalability_blocks(sc: &Scalability) -> Vec<Block> {
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
        prose: false,
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

pub(super) fn comparison_blocks(c: &Comparison) -> Vec<Block> {
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
            prose: false,
        }));
    }
    blocks
}
