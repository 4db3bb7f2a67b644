//! The study report's layout: [`document`] turns a [`Report`] into a
//! [`Doc`] — per panel the metric tables and charts, peaks, fairness,
//! the machine and server figures, the sweep and the per-point figures;
//! then the coordinated points' shards, CPU scalability, errors and the
//! comparison — which every format (HTML, Markdown, text) renders.

use super::charts::{cdf_series, metric_chart, time_series};
use super::conclusions::facts;
use super::machine::{cpu_charts, cpu_over_time, disk_over_time, lock_tables};
use super::names::{panel_title, several_cpus};
use super::sections::{comparison_blocks, scalability_blocks, sweep_blocks};
use super::tables::{errors_table, fairness_table, metric_table, peak_table, statements_table};
use super::{Metric, Panel, Report, StudyData};
use crate::report::doc::{Axis, Block, Chart, ChartKind, Doc, Section, Series};

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

/// Lays out `r` (derived from `data`) as a document.
pub fn document(data: &StudyData, r: &Report) -> Doc {
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
    sections.extend(super::compared::section(r, data));
    // A TPC-C or TPC-H study's results page comes first, after the
    // conclusions.
    sections.extend(super::tpcc::section(data));
    sections.extend(super::tpch::section(data));
    sections.extend(super::chbench::section(data));
    sections.extend(super::profiles::section(data, &r.paired));
    for p in &r.panels {
        let section = panel_section(data, r, p, several);
        let focus = p
            .focus_clients
            .and_then(|c| focus_section(data, p, c, &section.title));
        sections.push(section);
        sections.extend(focus);
    }
    for o in &r.offered {
        sections.push(Section {
            title: format!("{}: offered load", o.workload),
            blocks: super::offered::blocks(o),
        });
    }
    for s in &r.searched {
        sections.push(Section {
            title: format!("{}: highest sustained rate", s.workload),
            blocks: super::searched::blocks(s),
        });
    }
    sections.extend(super::sharded::section(data));
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
    if let Some(rep) = &r.reproduction {
        sections.push(Section {
            title: format!("Reproduction: {}", rep.label),
            blocks: super::reproduce::blocks(rep, data),
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

/// A panel's section: its metric table and charts, the peaks compared,
/// latency, the client's and the machine's CPU, locks, fairness and the
/// parameter sweep.
fn panel_section(data: &StudyData, r: &Report, p: &Panel, several: bool) -> Section {
    let metric = r.metric;
    let tp = throughput_of(metric);
    let title = panel_title(p, several);
    let unit = super::unit(&p.workload_name);
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
            capitalize(metric.title_in(unit))
        ),
        metric == tp,
    )));
    blocks.extend(failure_note(p));
    blocks.push(Block::Chart(metric_chart(
        p,
        tp,
        "throughput",
        format!("{title}: {} vs clients", tp.axis_in(unit)),
    )));
    if metric != tp {
        blocks.push(Block::Chart(metric_chart(
            p,
            metric,
            metric.name(),
            format!("{title}: {} vs clients", metric.axis_in(unit)),
        )));
    }
    let title_only = super::names::workload_title(
        &p.workload,
        &p.options.clone().into_iter().collect::<Vec<_>>(),
    );
    let peaks: Vec<&super::paired::PairedComparison> = r
        .paired
        .comparisons
        .iter()
        .filter(|c| c.cell == "peak" && c.workload == title_only && c.cpus == p.cpus)
        .collect();
    blocks.push(Block::Table(peak_table(p, tp, &peaks)));
    let said: Vec<String> = peaks
        .iter()
        .map(|c| super::compared::verdict_sentence(c, "peak throughput", r.paired.equivalence))
        .collect();
    if !said.is_empty() {
        blocks.push(Block::Paragraph(said.join(" ")));
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
    blocks.push(Block::Chart(client_cpu_chart(p, &title)));
    let machine = cpu_charts(p, &title);
    blocks.push(Block::Note(format!(
        "The client CPU chart is dbsweep's own use (user + system) per measured second: near 100 % per client thread means the client, not the server, may be the bottleneck.{}",
        if machine.is_empty() {
            " Server CPU was not recorded for these runs (--metrics off, or an earlier dbsweep)."
        } else {
            ""
        }
    )));
    blocks.extend(machine);
    blocks.extend(lock_tables(p, data));
    if let Some(t) = fairness_table(p) {
        blocks.push(Block::Table(t));
    }
    if let Some(sw) = &p.sweep {
        blocks.extend(sweep_blocks(sw, unit));
    }
    Section { title, blocks }
}

/// dbsweep's own CPU per measured second against clients, per series.
fn client_cpu_chart(p: &Panel, title: &str) -> Chart {
    let cpu = Chart {
        y: Axis::linear("client CPU (% of one core)"),
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
                reference: false,
            })
            .filter(|s| !s.points.is_empty())
            .collect(),
        ..cpu
    };
    cpu
}

/// The panel's figures at its focus client count: throughput, p95 and the
/// machine over time, the latency distribution and statements, where
/// recorded.
fn focus_section(data: &StudyData, p: &Panel, c: u32, title: &str) -> Option<Section> {
    let unit = super::unit(&p.workload_name);
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
            x: Axis::linear("time (s)"),
            y: Axis::linear(unit.per_s),
            kind: ChartKind::Line,
            series: tps_ts,
        }));
        blocks.push(Block::Chart(Chart {
            id: format!("{}-at-{c}-p95-over-time", p.id),
            title: format!("{title}: p95 latency over time at {c} clients"),
            x: Axis::linear("time (s)"),
            y: Axis::linear("p95 latency (ms)"),
            kind: ChartKind::Line,
            series: p95_ts,
        }));
    }
    blocks.extend(cpu_over_time(p, data, c, title).map(Block::Chart));
    blocks.extend(disk_over_time(p, data, c, title).map(Block::Chart));
    let cdf = cdf_series(p, data, c);
    if !cdf.is_empty() {
        blocks.push(Block::Chart(Chart {
            id: format!("{}-at-{c}-latency-cdf", p.id),
            title: format!("{title}: transaction latency distribution at {c} clients"),
            x: Axis::log("latency (ms)"),
            y: Axis::linear("transactions at or below (%)"),
            kind: ChartKind::Step,
            series: cdf,
        }));
    }
    if let Some(t) = statements_table(p) {
        blocks.push(Block::Table(t));
    }
    (blocks.len() > 1).then(|| Section {
        title: format!("{title}: at {c} clients"),
        blocks,
    })
}

/// The throughput metric a panel's peaks are over: queries where the
/// report shows queries, else transactions.
fn throughput_of(metric: Metric) -> Metric {
    if metric == Metric::Qps {
        Metric::Qps
    } else {
        Metric::Tps
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}
