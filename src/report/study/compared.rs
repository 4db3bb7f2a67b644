//! The paired comparisons in words, tables and charts: the sentences the
//! report's conclusions open with (the noise floor first, then each
//! series against the baseline), and the "Comparisons" section — how the
//! study was measured, the control, per panel the ratios with their
//! intervals and verdicts, the drift and the machines.
//!
//! No sentence here ranks two series unless their verdict is `better` or
//! `worse`: an equivalent pair is said to show no difference within the
//! margin, an inconclusive one to decide nothing.

use super::floor;
use super::names::cpus_label;
use super::paired::{self, Paired, PairedComparison, SagJudged};
use super::pairs::level_key;
use super::{Report, StudyData};
use crate::report::doc::{
    Axis, Block, Cell, Chart, ChartKind, Mark, Row, Scale, Section, Series, Table,
};
use crate::stats::paired::Verdict;

/// "workload" or "workload, 2 CPUs (0-1)".
fn place(workload: &str, cpus: &Option<String>, several: bool) -> String {
    if several {
        format!("{workload}, {}", cpus_label(cpus))
    } else {
        workload.to_string()
    }
}

fn several_cpus(p: &Paired) -> bool {
    let mut sets: Vec<&Option<String>> = p.comparisons.iter().map(|c| &c.cpus).collect();
    sets.dedup();
    sets.len() > 1
}

/// What a comparison's verdict says, in a sentence about `what` (e.g.
/// "peak throughput").
pub fn verdict_sentence(c: &PairedComparison, what: &str, margin: f64) -> String {
    let (s, b) = (&c.series, &c.baseline);
    let blocks = format!("{} block{}", c.blocks, if c.blocks == 1 { "" } else { "s" });
    match c.verdict {
        Verdict::Better | Verdict::Worse => {
            let more = c.ratio.unwrap_or(1.0) > 1.0;
            format!(
                "{s} has {} {what} than {b}: {} (95 % interval, {blocks}).",
                if more { "higher" } else { "lower" },
                c.difference_text()
            )
        }
        Verdict::Equivalent => format!(
            "{s} and {b}: no difference in {what} within ±{} % ({}, {blocks}).",
            margin * 100.0,
            c.difference_text()
        ),
        Verdict::Inconclusive => format!(
            "{s} against {b}: {what} {} ({blocks}): the interval decides nothing, no ranking.",
            c.difference_text()
        ),
        Verdict::TooFewRepeats => format!(
            "{s} against {b}: {what} measured in one block, without an interval: no ranking."
        ),
        Verdict::DifferentMachines => {
            format!("{s} against {b}: measured on different machines: not compared.")
        }
    }
}

/// The sentences the conclusions open with: the control, how the study
/// was ordered, and per panel each series' peak against the baseline.
pub fn sentences(r: &Report) -> Vec<String> {
    let p = &r.paired;
    let mut out = Vec::new();
    out.extend(floor::sentences(p));
    if p.order.as_deref() == Some("sequential") && p.comparisons.iter().any(|c| c.metric == "tps") {
        out.push("The series were measured one after another (order = \"sequential\"): the machine's drift between them is in their ratios, which their intervals do not cover.".into());
    }
    let several = several_cpus(p);
    let places = places(p);
    for (w, cpus) in places {
        let said: Vec<String> = p
            .comparisons
            .iter()
            .filter(|c| c.workload == w && c.cpus == cpus)
            .filter(|c| c.cell == "peak" || c.metric == "sustained_rate")
            .filter(|c| !c.series.ends_with(super::AGAIN))
            .map(|c| match c.clients {
                Some(n) if c.metric == "sustained_rate" => verdict_sentence(
                    c,
                    &format!("sustainable rate at {n} connections"),
                    p.equivalence,
                ),
                _ => verdict_sentence(c, "peak throughput", p.equivalence),
            })
            .collect();
        if !said.is_empty() {
            out.push(format!("{}: {}", place(&w, &cpus, several), said.join(" ")));
        }
    }
    out
}

/// The sag of a series, in the words the conclusions use: a fall only
/// where the blocks decide it.
pub fn sag_words(s: &SagJudged, margin: f64) -> String {
    let pct = s.ratio.map_or(0.0, |r| (1.0 - r.ratio) * 100.0);
    match s.verdict {
        Verdict::Worse => format!(
            " and falls {pct:.1} % by {} clients (block by block, {})",
            s.last_clients,
            interval(s)
        ),
        Verdict::Equivalent | Verdict::Inconclusive | Verdict::Better => format!(
            "; at {} clients it stays within the noise of its peak ({}{})",
            s.last_clients,
            interval(s),
            if s.verdict == Verdict::Equivalent {
                format!(", within ±{} %", margin * 100.0)
            } else {
                String::new()
            }
        ),
        _ => String::new(),
    }
}

fn interval(s: &SagJudged) -> String {
    match s.ratio.and_then(|r| r.ci.map(|ci| (r.ratio, ci))) {
        Some((r, (lo, hi))) => format!("ratio {r:.3}, interval {lo:.3}–{hi:.3}"),
        None => "one block".into(),
    }
}

/// The "Comparisons" section: None for a study of one series.
pub fn section(r: &Report, data: &StudyData) -> Option<Section> {
    let p = &r.paired;
    if p.comparisons.is_empty() {
        return None;
    }
    let mut blocks = vec![Block::Paragraph(design_text(p))];
    blocks.extend(floor::sentences(p).into_iter().map(Block::Paragraph));
    let several = several_cpus(p);
    let places = places(p);
    for (w, cpus) in &places {
        let mine: Vec<&PairedComparison> = p
            .comparisons
            .iter()
            .filter(|c| &c.workload == w && &c.cpus == cpus)
            .collect();
        let title = place(w, cpus, several);
        for (metric, what) in [
            ("tps", "throughput"),
            ("p99", "p99 latency"),
            ("sustained_rate", "highest sustained rate (search)"),
        ] {
            if let Some(t) = table(&mine, metric, &format!("{title}: {what}, block by block")) {
                blocks.push(Block::Table(t));
            }
        }
        blocks.extend(ratio_chart(&mine, &title).map(Block::Chart));
    }
    blocks.extend(heat_map(p));
    for d in &p.drift {
        blocks.push(Block::Paragraph(format!(
            "Drift, {}: {} ranged from {:.1} to {:.1} tps between the blocks at {} ({:+.1} %){}.",
            place(&d.workload, &d.cpus, several),
            d.series,
            d.lowest,
            d.highest,
            d.cell,
            d.drift_pct,
            match d.paired_spread_pct {
                Some(x) =>
                    format!("; paired block by block, the ratios to it moved by at most {x:.1} %"),
                None => String::new(),
            }
        )));
    }
    blocks.extend(drift_chart(data).map(Block::Chart));
    if p.machines.len() > 1 {
        blocks.push(Block::Note(format!(
            "This study ran on {} machines; points of two machines are never paired (those comparisons read \"different machines\"): {}.",
            p.machines.len(),
            p.machines
                .iter()
                .map(|m| format!("{} ({} points)", m.machine, m.points))
                .collect::<Vec<_>>()
                .join("; ")
        )));
    }
    Some(Section {
        title: "Comparisons".into(),
        blocks,
    })
}

fn design_text(p: &Paired) -> String {
    let how = match p.order.as_deref() {
        Some("interleaved") => "Interleaved: every block ran each series once, back to back, in a shuffled order, with every server up; a series is compared with the baseline block by block, so the machine's drift, which moves both sides of a block alike, cancels.",
        Some(_) => "Sequential: the series ran one after another; they are compared repeat by repeat, but the machine's drift between them is not cancelled.",
        None => "Stored before dbsweep recorded how a study was ordered: the series are compared repeat by repeat.",
    };
    format!(
        "{how} Each ratio is the geometric mean of the per-block ratios, with a 95 % interval (Student's t on the log ratios); equivalent means the interval lies within ±{} %, better or worse that it excludes 1, inconclusive that it does neither.",
        p.equivalence * 100.0
    )
}

/// Rows: series; columns: the cells and the peak; a cell: the ratio and
/// its interval, marked by its verdict.
fn table(cs: &[&PairedComparison], metric: &str, caption: &str) -> Option<Table> {
    let mine: Vec<&&PairedComparison> = cs.iter().filter(|c| c.metric == metric).collect();
    if mine.is_empty() {
        return None;
    }
    let mut columns: Vec<String> = Vec::new();
    let mut order: Vec<(Option<u32>, Option<String>)> = Vec::new();
    for c in &mine {
        let k = (c.clients, c.rate.clone());
        if !order.contains(&k) {
            order.push(k);
        }
    }
    order.sort_by(|(c1, l1), (c2, l2)| {
        (c1.is_none(), level_key(l1), c1)
            .partial_cmp(&(c2.is_none(), level_key(l2), c2))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    for (c, l) in &order {
        columns.push(match (c, l) {
            (None, _) => "peak".into(),
            (Some(c), None) => c.to_string(),
            (Some(c), Some(l)) => format!("{l} @{c}"),
        });
    }
    let mut series: Vec<(&str, &str)> = Vec::new();
    for c in &mine {
        let k = (c.series.as_str(), c.baseline.as_str());
        if !series.contains(&k) {
            series.push(k);
        }
    }
    let main = series.first().map(|x| x.1).unwrap_or_default();
    let rows = series
        .iter()
        .map(|(s, b)| Row {
            label: if *b == main {
                s.to_string()
            } else {
                format!("{s} (over {b})")
            },
            cells: order
                .iter()
                .map(|(cl, l)| {
                    match mine
                        .iter()
                        .find(|c| c.series == *s && c.clients == *cl && c.rate == *l)
                    {
                        Some(c) => Cell {
                            text: c.interval_text(),
                            detail: Some(format!(
                                "{}: {} over {} blocks",
                                c.verdict.name().replace('_', " "),
                                c.difference_text(),
                                c.blocks
                            )),
                            mark: match c.verdict {
                                Verdict::Better => Mark::Better,
                                Verdict::Worse => Mark::Worse,
                                Verdict::Equivalent | Verdict::Inconclusive => Mark::None,
                                _ => Mark::Missing,
                            },
                        },
                        None => Cell::plain(""),
                    }
                })
                .collect(),
        })
        .collect();
    Some(Table {
        caption: format!("{caption}: over {main} (ratio [95 % interval]; marked where the interval decides; clients across)"),
        corner: "series".into(),
        columns,
        rows,
        ..Table::default()
    })
}

/// Throughput ratio against clients, each series a line with its
/// intervals as bars.
fn ratio_chart(cs: &[&PairedComparison], title: &str) -> Option<Chart> {
    let mut names: Vec<String> = Vec::new();
    for c in cs
        .iter()
        .filter(|c| c.metric == "tps" && c.clients.is_some())
    {
        let n = format!("{} / {}", c.series, c.baseline);
        if !names.contains(&n) {
            names.push(n);
        }
    }
    let series: Vec<Series> = names
        .iter()
        .map(|n| {
            let pts: Vec<&&PairedComparison> = cs
                .iter()
                .filter(|c| {
                    c.metric == "tps"
                        && c.rate.is_none()
                        && format!("{} / {}", c.series, c.baseline) == *n
                })
                .filter(|c| c.ratio.is_some() && c.clients.is_some())
                .collect();
            Series {
                name: n.clone(),
                points: pts
                    .iter()
                    .map(|c| (f64::from(c.clients.unwrap()), c.ratio.unwrap()))
                    .collect(),
                spread: Some(pts.iter().map(|c| whiskers(c)).collect()),
                reference: false,
            }
        })
        .filter(|s| s.points.len() > 1)
        .collect();
    if series.is_empty() {
        return None;
    }
    let log = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(1.0f64, f64::max)
        >= 16.0;
    Some(Chart {
        id: format!("{}-ratio", super::names::slug(title)),
        title: format!("{title}: throughput over the baseline's, block by block (1 = the same)"),
        x: Axis::new("clients", Scale::log_if(log)),
        y: Axis::linear("ratio to the baseline (95 % interval)"),
        kind: ChartKind::Line,
        series,
    })
}

/// Each series' throughput in every block against the time it ran, over
/// its cell's mean (so cells of every client count share an axis): the
/// machine's drift moves every series alike, a real difference keeps
/// them apart.
fn drift_chart(data: &StudyData) -> Option<Chart> {
    let panels = paired::panels(data);
    let t0 = data
        .points
        .iter()
        .filter_map(|p| p.metrics.as_ref()?.started_unix_us)
        .min()?;
    let mut series: Vec<Series> = Vec::new();
    for pb in &panels {
        for s in &pb.series {
            let mut pts: Vec<(f64, f64)> = Vec::new();
            for ((x, _, level), blocks) in &pb.cells {
                if x != s || level.is_some() {
                    continue;
                }
                let values: Vec<(u64, f64)> = blocks
                    .values()
                    .filter_map(|p| {
                        let m = p.metrics.as_ref()?;
                        Some((m.started_unix_us?, m.tps))
                    })
                    .collect();
                let mean = values.iter().map(|v| v.1).sum::<f64>() / values.len().max(1) as f64;
                if mean > 0.0 {
                    pts.extend(
                        values
                            .iter()
                            .map(|(at, v)| ((at - t0) as f64 / 3.6e9, v / mean)),
                    );
                }
            }
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            if pts.len() > 2 {
                let name = if panels.len() > 1 {
                    format!("{s} ({})", pb.workload)
                } else {
                    s.clone()
                };
                series.push(Series {
                    name,
                    points: pts,
                    spread: None,
                    reference: false,
                });
            }
        }
    }
    (!series.is_empty()).then(|| Chart {
        id: "drift".into(),
        title: "Every block's throughput over its cell's mean, against when it ran".into(),
        x: Axis::linear("hours since the study's first point"),
        y: Axis::linear("throughput / the cell's mean"),
        kind: ChartKind::Line,
        series,
    })
}

/// Several workloads (a release history's microbenchmarks): per client
/// count, series down and workloads across, each series' throughput and
/// server CPU per transaction over its baseline's — a heat map, marked
/// where the interval decides — and a chart of the throughput ratios by
/// the series' order. None with fewer than three workloads.
fn heat_map(p: &Paired) -> Vec<Block> {
    let plain: Vec<&PairedComparison> = p
        .comparisons
        .iter()
        .filter(|c| c.rate.is_none() && c.clients.is_some() && !c.series.ends_with(super::AGAIN))
        .collect();
    let mut workloads: Vec<&str> = Vec::new();
    let mut series: Vec<&str> = Vec::new();
    let mut counts: Vec<u32> = Vec::new();
    for c in &plain {
        if !workloads.contains(&c.workload.as_str()) {
            workloads.push(&c.workload);
        }
        if !series.contains(&c.series.as_str()) {
            series.push(&c.series);
        }
        if !counts.contains(&c.clients.unwrap()) {
            counts.push(c.clients.unwrap());
        }
    }
    counts.sort_unstable();
    if workloads.len() < 3 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for &n in &counts {
        for (metric, what) in [
            ("tps", "throughput"),
            ("server_cpu", "server CPU per transaction"),
        ] {
            let find = |s: &str, w: &str| {
                plain.iter().find(|c| {
                    c.series == s && c.workload == w && c.clients == Some(n) && c.metric == metric
                })
            };
            if !series
                .iter()
                .any(|s| workloads.iter().any(|w| find(s, w).is_some()))
            {
                continue;
            }
            let rows = series
                .iter()
                .map(|s| Row {
                    label: match find(s, workloads[0])
                        .or_else(|| workloads.iter().find_map(|w| find(s, w)))
                    {
                        Some(c) => format!("{s} (over {})", c.baseline),
                        None => s.to_string(),
                    },
                    cells: workloads
                        .iter()
                        .map(|w| match find(s, w) {
                            Some(c) => Cell {
                                text: c.difference_text(),
                                detail: Some(format!(
                                    "{}: ratio {}",
                                    c.verdict.name().replace('_', " "),
                                    c.interval_text()
                                )),
                                mark: match c.verdict {
                                    Verdict::Better => Mark::Better,
                                    Verdict::Worse => Mark::Worse,
                                    _ => Mark::None,
                                },
                            },
                            None => Cell::plain(""),
                        })
                        .collect(),
                })
                .collect();
            out.push(Block::Table(Table {
                caption: format!(
                    "Every workload at {n} client{}: {what} over the baseline, block by block (% [95 % interval]; marked where the interval decides{})",
                    if n == 1 { "" } else { "s" },
                    if metric == "tps" { "" } else { "; less is better" }
                ),
                corner: "series".into(),
                columns: workloads.iter().map(|w| w.to_string()).collect(),
                rows,
                ..Table::default()
            }));
        }
        // The throughput ratios by the series' order (1 = the first).
        let lines: Vec<Series> = workloads
            .iter()
            .map(|w| {
                let pts: Vec<&&PairedComparison> = series
                    .iter()
                    .filter_map(|s| {
                        plain.iter().find(|c| {
                            c.series == *s
                                && c.workload == *w
                                && c.clients == Some(n)
                                && c.metric == "tps"
                        })
                    })
                    .filter(|c| c.ratio.is_some())
                    .collect();
                let x = |c: &PairedComparison| {
                    1.0 + series.iter().position(|s| *s == c.series).unwrap_or(0) as f64
                };
                Series {
                    name: w.to_string(),
                    points: pts.iter().map(|c| (x(c), c.ratio.unwrap())).collect(),
                    spread: Some(pts.iter().map(|c| whiskers(c)).collect()),
                    reference: false,
                }
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        if !lines.is_empty() {
            out.push(Block::Chart(Chart {
                id: format!("across-workloads-at-{n}"),
                title: format!(
                    "Throughput over the baseline at {n} clients, by series: {}",
                    series
                        .iter()
                        .enumerate()
                        .map(|(i, s)| format!("{} = {s}", i + 1))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                x: Axis::linear("series (see the title)"),
                y: Axis::linear("throughput ratio to the baseline (95 % interval)"),
                kind: ChartKind::Line,
                series: lines,
            }));
        }
    }
    out
}

/// A compared ratio's interval for a chart's whiskers (the ratio itself
/// where there is none).
fn whiskers(c: &PairedComparison) -> (f64, f64) {
    let r = c.ratio.unwrap_or(1.0);
    (c.ci_low.unwrap_or(r), c.ci_high.unwrap_or(r))
}

/// The (workload, CPU set) panels the comparisons cover, in their order.
fn places(p: &Paired) -> Vec<(String, Option<String>)> {
    let mut out: Vec<(String, Option<String>)> = Vec::new();
    for c in &p.comparisons {
        let k = (c.workload.clone(), c.cpus.clone());
        if !out.contains(&k) {
            out.push(k);
        }
    }
    out
}
