//! When a cell has enough blocks: a workload's `repeats = { min, max,
//! precision }` adds a block beyond `min` only while one of the cell's
//! comparisons is less precise than asked. The figures are the stored
//! points' (this session's and an earlier one's), so a resumed study
//! decides as the first run would have.

use std::collections::HashMap;

use super::model::Study;
use super::plan::{Cell, Plan};
use crate::server::format_cpu_list;
use crate::stats::paired::Ratio;
use crate::store::{PointStatus, Store, StudyId};

/// Whether `cell`'s first `done` blocks (this session's and an earlier
/// one's) measure each of its comparisons within `precision` already:
/// the line that says so, else None. A comparison is a series'
/// throughput (a paced cell's mean latency) against the baseline's,
/// block by block (or the first series', where the baseline is not in
/// the cell), and the control's against itself; a cell of one series
/// compares its repeats' mean with its interval. A search's cell
/// compares each block's answer, the highest rate that held.
pub(super) fn precise(
    store: &Store,
    study_id: StudyId,
    study: &Study,
    plan: &Plan,
    cell: &Cell,
    done: usize,
    precision: f64,
) -> anyhow::Result<Option<String>> {
    let mut members: Vec<usize> = Vec::new();
    let mut wanted: HashMap<String, (usize, u32)> = HashMap::new();
    for i in cell.blocks[..done].iter().flat_map(|b| b.clone()) {
        let p = &plan.points[i];
        if !members.contains(&p.series) {
            members.push(p.series);
        }
        wanted.insert(p.key.to_string(), (p.series, p.repeat));
    }
    let stored = store.point_figures(Some(study_id))?;
    let mut values: HashMap<usize, HashMap<u32, f64>> = HashMap::new();
    let pacing = &study.workloads[cell.workload].pacing;
    if let (Some(precision), Some(goal)) = (pacing.search, pacing.p99_goal) {
        // A search: each block's answer, the highest rate that held —
        // once per series and block, from its calibration point's key.
        let probes = pacing.levels.len() as u32;
        let calibrations = cell.blocks[..done].iter().flat_map(|b| b.clone());
        for p in calibrations
            .map(|i| &plan.points[i])
            .filter(|p| p.level.is_none())
        {
            let held = super::search::Stored::of(&stored, &p.key, probes)
                .held(precision, goal.as_secs_f64() * 1e3);
            if let Some(v) = held {
                values.entry(p.series).or_default().insert(p.repeat, v);
            }
        }
    } else {
        for sp in &stored {
            let Some(&(series, block)) = wanted.get(&sp.row.key) else {
                continue;
            };
            let figure = match (&sp.metrics, sp.row.status) {
                (Some(m), PointStatus::Finished) if sp.row.load_level.is_some() => m.lat_avg_us,
                (Some(m), PointStatus::Finished) => Some(m.tps),
                _ => None,
            };
            if let Some(v) = figure {
                values.entry(series).or_default().insert(block, v);
            }
        }
    }
    let Some(widest) = widest_half_width(study, plan, &members, &values) else {
        return Ok(None);
    };
    if widest > precision {
        return Ok(None);
    }
    let p = &plan.points[cell.points().start];
    Ok(Some(format!(
        "{} clients={}{}{}: every comparison within ±{:.2} % after {done} blocks (precision ±{} %): no more blocks",
        study.workloads[p.workload].label,
        p.clients,
        p.level.map_or(String::new(), |l| format!(" {}", l.key())),
        p.cpus
            .as_deref()
            .map_or(String::new(), |c| format!(" cpus={}", format_cpu_list(c))),
        widest * 100.0,
        precision * 100.0
    )))
}

/// The widest interval half-width (a share) among a cell's comparisons
/// (see [`Session::precise`]); None while one has no interval yet.
fn widest_half_width(
    study: &Study,
    plan: &Plan,
    members: &[usize],
    values: &HashMap<usize, HashMap<u32, f64>>,
) -> Option<f64> {
    let empty = HashMap::new();
    let of = |s: usize| values.get(&s).unwrap_or(&empty);
    if let [only] = members {
        let xs: Vec<f64> = of(*only).values().copied().collect();
        let (mean, half) = crate::stats::mean_ci95(&xs)?;
        return (mean > 0.0).then(|| half / mean);
    }
    let mut widest: f64 = 0.0;
    for &s in members {
        let se = &plan.series[s];
        // The control's second measurement against its first; every other
        // series against its baseline (or the cell's first series, where
        // that is not in the cell).
        let against = if se.again {
            members
                .iter()
                .copied()
                .find(|&o| !plan.series[o].again && plan.series[o].variant == se.variant)?
        } else {
            let wanted = study.baseline_for(se.variant);
            let b = members
                .iter()
                .copied()
                .find(|&o| plan.series[o].variant == wanted && !plan.series[o].again)
                .or(members.first().copied())?;
            if b == s {
                continue;
            }
            b
        };
        let pairs: Vec<(f64, f64)> = of(s)
            .iter()
            .filter_map(|(b, v)| Some((*v, *of(against).get(b)?)))
            .collect();
        widest = widest.max(Ratio::of(&pairs)?.half_width()?);
    }
    Some(widest)
}
