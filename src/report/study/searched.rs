//! A study's searches for the highest sustained rate (`rates = "find"`):
//! per series, client count and block, the answer its probes gave — the
//! highest offered rate that held the p99 goal (judged as the study judged
//! it, `study::search::holds`), the lowest that failed, the calibration's
//! peak — the table of them with their means and intervals, and each
//! block's answer for the paired comparisons (`sustained_rate`).

use std::collections::BTreeMap;

pub use super::model::{BlockSearch, SearchPanel, SeriesSearch};
use super::names::{distinct, finished, machine_of, panel_key, point_label, workload_title};
use super::StudyData;
use crate::report::doc::{Block, Cell, Row, Table};
use crate::store::{PointStatus, StoredPoint};
use crate::study::search::{holds, MAX_UNSERVED_PCT};

/// Whether a stored point is a search's probe (`probe=N`).
pub(super) fn is_probe(p: &StoredPoint) -> bool {
    p.row
        .load_level
        .as_deref()
        .is_some_and(|l| l.starts_with("probe="))
}

/// The searches of `data`, panel by panel.
pub(super) fn panels(data: &StudyData) -> Vec<SearchPanel> {
    let probes: Vec<&StoredPoint> = data.paced.iter().filter(|p| is_probe(p)).collect();
    let with_variant = super::names::show_variant(data.points.iter().chain(&data.paced));
    let label = |p: &StoredPoint| point_label(data, p, with_variant);
    distinct(probes.iter().map(|p| panel_key(p)))
        .into_iter()
        .map(|key| {
            let mine: Vec<&StoredPoint> = probes
                .iter()
                .copied()
                .filter(|p| panel_key(p) == key)
                .collect();
            let closed: Vec<&StoredPoint> =
                data.points.iter().filter(|p| panel_key(p) == key).collect();
            let searches = searches(&mine, &closed, &label);
            let series = searches
                .into_iter()
                .map(|((series, clients), blocks)| {
                    let blocks: Vec<BlockSearch> = blocks.into_values().collect();
                    let answers: Vec<f64> = blocks
                        .iter()
                        .filter(|b| b.complete)
                        .filter_map(|b| b.held_per_s)
                        .collect();
                    let ci = crate::stats::mean_ci95(&answers);
                    SeriesSearch {
                        series,
                        clients,
                        held_mean_per_s: crate::stats::mean(&answers),
                        held_ci95_per_s: ci.map(|c| c.1),
                        blocks,
                    }
                })
                .collect();
            let (label, options, cpus) = key;
            SearchPanel {
                workload: workload_title(&label, &options),
                cpus,
                p99_goal_ms: mine.iter().find_map(|p| goal_ms(p)),
                series,
            }
        })
        .collect()
}

/// A probe's p99 goal, ms, as its record keeps it.
fn goal_ms(p: &StoredPoint) -> Option<f64> {
    p.row.run.as_ref()?.run.pacing.as_ref()?.p99_goal_ms
}

/// (series, clients) → block → its search, from the probes and the
/// closed-loop calibration points of one panel.
pub(super) fn searches(
    probes: &[&StoredPoint],
    closed: &[&StoredPoint],
    label: &dyn Fn(&StoredPoint) -> String,
) -> BTreeMap<(String, u32), BTreeMap<u32, BlockSearch>> {
    let mut out: BTreeMap<(String, u32), BTreeMap<u32, BlockSearch>> = BTreeMap::new();
    for p in probes {
        // A failed attempt run again later is history, not a probe.
        if p.row.status == PointStatus::Failed
            && probes
                .iter()
                .any(|q| q.row.key == p.row.key && q.id != p.id)
        {
            continue;
        }
        let key = (label(p), p.row.clients);
        let calibration = closed
            .iter()
            .find(|c| label(c) == key.0 && c.row.clients == key.1 && c.row.repeat == p.row.repeat);
        let Some(peak) = calibration.and_then(|c| finished(c)).map(|m| m.tps.round()) else {
            continue;
        };
        let b = out
            .entry(key)
            .or_default()
            .entry(p.row.repeat)
            .or_insert_with(|| BlockSearch {
                block: p.row.repeat,
                peak_per_s: peak,
                held_per_s: None,
                failed_per_s: None,
                probes: 0,
                complete: true,
                machine: calibration.map(|c| machine_of(c)).unwrap_or_default(),
                at_us: calibration
                    .and_then(|c| c.metrics.as_ref())
                    .and_then(|m| m.started_unix_us),
            });
        let rate = p.row.run.as_ref().and_then(|r| r.run.pacing.as_ref()?.rate);
        match (finished(p), rate, goal_ms(p)) {
            (Some(m), Some(rate), Some(goal)) => {
                b.probes += 1;
                if holds(m, goal) {
                    b.held_per_s = Some(b.held_per_s.map_or(rate, |h: f64| h.max(rate)));
                } else {
                    b.failed_per_s = Some(b.failed_per_s.map_or(rate, |f: f64| f.min(rate)));
                }
            }
            _ => b.complete = false,
        }
    }
    out
}

/// The panel's table and how to read it.
pub(super) fn blocks(p: &SearchPanel) -> Vec<Block> {
    let rate = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{v:.0}"));
    let rows = p
        .series
        .iter()
        .map(|s| {
            let complete: Vec<&BlockSearch> = s.blocks.iter().filter(|b| b.complete).collect();
            let mean = |f: fn(&BlockSearch) -> Option<f64>| {
                crate::stats::mean(&complete.iter().filter_map(|b| f(b)).collect::<Vec<_>>())
            };
            let share = mean(|b| Some(100.0 * b.held_per_s? / b.peak_per_s));
            let per_block: Vec<String> = s
                .blocks
                .iter()
                .map(|b| {
                    format!(
                        "block {}: {} of {:.0}{}",
                        b.block,
                        rate(b.held_per_s),
                        b.peak_per_s,
                        if b.complete { "" } else { " (unfinished)" }
                    )
                })
                .collect();
            Row {
                label: format!("{} @{}", s.series, s.clients),
                cells: vec![
                    Cell::plain(complete.len().to_string()),
                    Cell {
                        text: rate(s.held_mean_per_s),
                        detail: Some(per_block.join("; ")),
                        ..Cell::default()
                    },
                    Cell::plain(s.held_ci95_per_s.map_or("—".into(), |c| format!("±{c:.0}"))),
                    Cell::plain(share.map_or("—".into(), |v| format!("{v:.1} %"))),
                    Cell::plain(rate(mean(|b| b.failed_per_s))),
                    Cell::plain(rate(mean(|b| Some(b.peak_per_s)))),
                    Cell::plain(
                        mean(|b| Some(b.probes as f64)).map_or("—".into(), |v| format!("{v:.1}")),
                    ),
                ],
            }
        })
        .collect();
    let goal = p
        .p99_goal_ms
        .map_or("its p99 goal".into(), |g| format!("p99 ≤ {g} ms"));
    vec![
        Block::Paragraph(format!(
            "Each block searched for the highest offered rate that holds {goal} (latency from each arrival's intended start) with at most {MAX_UNSERVED_PCT} % of the offered load unserved: the closed-loop peak probed first, then the rate halfway between the highest that held and the lowest that failed, until the two were within the search's precision. Series against each other: the comparisons' sustained_rate, block by block."
        )),
        Block::Table(Table {
            caption: format!("{}: highest sustained rate, by search", p.workload),
            corner: "series @ connections".into(),
            columns: [
                "blocks",
                "held /s (mean)",
                "95 % interval",
                "% of its peak",
                "lowest failed /s",
                "closed-loop peak /s",
                "probes",
            ]
            .map(String::from)
            .to_vec(),
            rows,
            ..Table::default()
        }),
    ]
}
