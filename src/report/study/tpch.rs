//! The TPC-H section of a study report: for each series (target,
//! variant, CPUs, scale) the power test's Power@Size, each throughput
//! test's Throughput@Size by its query streams, QphH@Size where both ran
//! (clause 5.4.3: their geometric mean), and each query's power-test
//! timing side by side, so a version or setting study shows which
//! queries moved. Means over the finished repeats; every figure is the
//! record's (`result.tpch`), the run report's.

use std::collections::BTreeSet;

use super::load::StudyData;
use super::tpcc::{mean, series_name};
use crate::record::tpch::Tpch;
use crate::record::QueryPlan;
use crate::report::doc::{Block, Cell, Row, Section, Table};
use crate::store::{PointStatus, StoredPoint};
use crate::workload::tpch::figures::qphh;

/// One series' finished TPC-H points.
struct Series<'a> {
    label: String,
    runs: Vec<&'a Tpch>,
    /// Each point's plans, where they were read.
    plans: Vec<&'a [QueryPlan]>,
}

impl Series<'_> {
    fn power(&self) -> Vec<&Tpch> {
        self.runs
            .iter()
            .copied()
            .filter(|f| f.test == "power")
            .collect()
    }

    fn throughput(&self, streams: u64) -> Vec<&Tpch> {
        let t = self.runs.iter().copied();
        t.filter(|f| f.test == "throughput" && f.streams == streams)
            .collect()
    }
}

fn label(p: &StoredPoint, f: &Tpch) -> String {
    format!("{}, SF {}", series_name(p), f.scale_factor)
}

fn series(data: &StudyData) -> Vec<Series<'_>> {
    let mut out: Vec<Series<'_>> = Vec::new();
    let points = data.points.iter().chain(&data.paced);
    for p in points.filter(|p| matches!(p.row.status, PointStatus::Finished)) {
        let Some(run) = p.row.run.as_ref() else {
            continue;
        };
        let Some(f) = run.result.tpch.as_ref() else {
            continue;
        };
        let key = label(p, f);
        let plans = &run.result.plans[..];
        match out.iter_mut().find(|s| s.label == key) {
            Some(s) => {
                s.runs.push(f);
                s.plans.push(plans);
            }
            None => out.push(Series {
                label: key,
                runs: vec![f],
                plans: vec![plans],
            }),
        }
    }
    out
}

fn num(v: Option<f64>, digits: usize) -> Cell {
    Cell::plain(v.map_or("-".to_string(), |v| format!("{v:.digits$}")))
}

/// The section; None for a study without TPC-H points.
pub(super) fn section(data: &StudyData) -> Option<Section> {
    let series = series(data);
    if series.is_empty() {
        return None;
    }
    let mut blocks = vec![Block::Table(metrics(&series))];
    let departures: BTreeSet<&str> = series
        .iter()
        .flat_map(|s| &s.runs)
        .flat_map(|f| &f.departures)
        .map(String::as_str)
        .collect();
    let mut note = String::from(
        "Power@Size is 3600 × SF over the geometric mean of the power test's timing \
         intervals (RF1, the 22 queries, RF2; each at least the longest over 1,000); \
         Throughput@Size is S × 22 × 3600 over the throughput test's elapsed time, × SF; \
         QphH@Size is their geometric mean (clause 5.4). Means of the repeats.",
    );
    if !departures.is_empty() {
        note.push_str(" Not TPC-H results as the spec defines them: ");
        note.push_str(&departures.into_iter().collect::<Vec<_>>().join("; "));
        note.push('.');
    }
    blocks.push(Block::Note(note));
    // Each series' power tests as one (each timing's mean over the
    // repeats): the table and the chart of time by query.
    let means: Vec<(String, Tpch)> = series
        .iter()
        .filter_map(|s| Some((s.label.clone(), mean_power(&s.power())?)))
        .collect();
    if let Some(t) = timings(&means) {
        blocks.push(Block::Table(t));
        let points = means
            .iter()
            .map(|(label, f)| (label.clone(), f.numbered_ms()));
        blocks.push(Block::Chart(crate::report::plot::bars(
            "tpch-queries",
            "TPC-H power test: time by query".into(),
            Tpch::NUMBER_AXIS,
            Tpch::MS_AXIS,
            points.collect(),
        )));
    }
    blocks.extend(plans(&series));
    Some(Section {
        title: "TPC-H results".into(),
        blocks,
    })
}

/// The queries whose plans differ between series (each series' plans
/// from its points; a series whose points chose several plans for one
/// query shows each), side by side; a sentence when none differ.
fn plans(series: &[Series<'_>]) -> Vec<Block> {
    let with: Vec<&Series<'_>> = series
        .iter()
        .filter(|s| s.plans.iter().any(|p| !p.is_empty()))
        .collect();
    if with.len() < 2 {
        return Vec::new();
    }
    let chosen = |s: &Series<'_>, q: &str| -> Vec<String> {
        let mut v: Vec<String> = s
            .plans
            .iter()
            .flat_map(|p| p.iter().filter(|x| x.name == q).map(|x| x.plan.clone()))
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let rows: Vec<Row> = (1..=22)
        .map(|q| format!("Q{q}"))
        .filter_map(|q| {
            let each: Vec<Vec<String>> = with.iter().map(|s| chosen(s, &q)).collect();
            let differ = each.windows(2).any(|w| w[0] != w[1]);
            differ.then(|| Row {
                label: q,
                cells: each
                    .into_iter()
                    .map(|v| Cell::plain(v.join("\n— or —\n")))
                    .collect(),
            })
        })
        .collect();
    if rows.is_empty() {
        return vec![Block::Paragraph(format!(
            "Every query's plan is the same in all {} series (EXPLAIN after each point, \
             with the validation values).",
            with.len()
        ))];
    }
    vec![Block::Table(Table {
        caption: format!(
            "TPC-H: the {} queries whose plans differ between series (EXPLAIN after each \
             point, with the validation values; estimates left out)",
            rows.len()
        ),
        corner: "query".into(),
        columns: with.iter().map(|s| s.label.clone()).collect(),
        rows,
        prose: true,
        ..Table::default()
    })]
}

/// Power, each throughput test and QphH, one row per series.
fn metrics(series: &[Series<'_>]) -> Table {
    let streams: BTreeSet<u64> = series
        .iter()
        .flat_map(|s| &s.runs)
        .filter(|f| f.test == "throughput")
        .map(|f| f.streams)
        .collect();
    let mut columns = vec!["Power@Size".to_string(), "power repeats".to_string()];
    for s in &streams {
        columns.push(format!("Throughput@Size, {s} streams"));
        columns.push(format!("QphH@Size, {s} streams"));
    }
    let rows = series
        .iter()
        .map(|s| {
            let runs = s.power();
            let power = mean(runs.iter().filter_map(|f| f.power));
            let mut cells = vec![num(power, 1), Cell::plain(runs.len().to_string())];
            for &n in &streams {
                let t = mean(s.throughput(n).iter().filter_map(|f| f.throughput));
                cells.push(num(t, 1));
                cells.push(num(power.zip(t).map(|(p, t)| qphh(p, t)), 1));
            }
            Row {
                label: s.label.clone(),
                cells,
            }
        })
        .collect();
    Table {
        caption: "TPC-H: Power@Size, Throughput@Size and QphH@Size (means of the repeats)".into(),
        corner: "series".into(),
        columns,
        rows,
        ..Table::default()
    }
}

/// A series' power tests as one: each timing's mean over the repeats.
fn mean_power(runs: &[&Tpch]) -> Option<Tpch> {
    let mut f = (*runs.first()?).clone();
    for t in &mut f.timings {
        t.mean_s = mean(runs.iter().filter_map(|r| {
            r.timings
                .iter()
                .find(|x| x.name == t.name)
                .and_then(|x| x.mean_s)
        }));
    }
    Some(f)
}

/// Each query's and refresh function's power-test timing, ms, from each
/// series' mean power test (`means`, labelled): None when no series ran
/// a power test.
fn timings(means: &[(String, Tpch)]) -> Option<Table> {
    let names: Vec<String> = means
        .iter()
        .map(|(_, f)| f.timings.iter().map(|t| t.name.clone()).collect::<Vec<_>>())
        .max_by_key(Vec::len)?;
    let rows = means
        .iter()
        .map(|(label, f)| Row {
            label: label.clone(),
            cells: names
                .iter()
                .map(|n| {
                    let t = f.timings.iter().find(|t| &t.name == n);
                    num(t.and_then(|t| t.mean_s).map(|s| s * 1000.0), 1)
                })
                .collect(),
        })
        .collect();
    Some(Table {
        caption: "TPC-H power test: each query's and refresh function's timing interval (ms, \
                  means of the repeats)"
            .into(),
        corner: "series".into(),
        columns: names,
        rows,
        wrap: Some(12),
        ..Table::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(name: &str, plan: &str) -> QueryPlan {
        QueryPlan {
            name: name.into(),
            plan: plan.into(),
        }
    }

    #[test]
    fn only_the_queries_whose_plans_differ_are_shown() {
        let a = [plan("Q1", "Seq Scan"), plan("Q3", "Hash Join")];
        let b1 = [plan("Q1", "Seq Scan"), plan("Q3", "Nested Loop")];
        let b2 = [plan("Q1", "Seq Scan"), plan("Q3", "Hash Join")];
        let series = |label: &str, plans: Vec<&'static [QueryPlan]>| Series {
            label: label.into(),
            runs: Vec::new(),
            plans,
        };
        let a: &'static [QueryPlan] = Box::leak(Box::new(a));
        let b1: &'static [QueryPlan] = Box::leak(Box::new(b1));
        let b2: &'static [QueryPlan] = Box::leak(Box::new(b2));
        let blocks = plans(&[series("A", vec![a, a]), series("B", vec![b1, b2])]);
        let Block::Table(t) = &blocks[0] else {
            panic!("{blocks:?}")
        };
        assert_eq!(t.rows.len(), 1);
        assert_eq!(t.rows[0].label, "Q3");
        assert_eq!(t.rows[0].cells[0].text, "Hash Join");
        assert_eq!(t.rows[0].cells[1].text, "Hash Join\n— or —\nNested Loop");
        let same = plans(&[series("A", vec![a]), series("B", vec![b2])]);
        assert!(matches!(&same[0], Block::Paragraph(p) if p.starts_with("Every query's plan")));
    }
}
