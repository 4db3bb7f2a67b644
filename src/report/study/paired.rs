//! A study's series compared block by block: for every panel (workload
//! entry × CPU set), every cell (client count, or offered load) and every
//! series against the baseline, the per-block ratio of each metric, its
//! geometric mean and 95 % interval, and the verdict the interval allows
//! (`stats::paired`); the same for the whole curve (the ratio of the two
//! series' peaks in each block); the control's comparisons with itself
//! (the study's noise floors: floor.rs); how far the machine drifted while it ran; and
//! the machines it ran on — two of which are never paired.
//!
//! A block is a repeat number: in an interleaved study the points of one
//! block ran back to back, so the machine's drift falls on both sides of a
//! ratio alike; in a sequential one they did not, and the report says so.

use std::collections::{BTreeMap, BTreeSet};

use super::floor;
use super::names::{
    distinct, finished, machine_of, panel_key, point_label, show_variant, workload_title,
};
use super::pairs::{judge, MetricFn};
pub use super::pairs::{
    BlockValue, Drift, MachineUse, NoiseFloor, Paired, PairedComparison, SagJudged,
};
use super::searched::{is_probe, BlockSearch};
use super::servers::AGAIN;
use super::StudyData;
use crate::stats::paired::{Ratio, Verdict};
use crate::store::{PointStatus, StoredPoint};
use crate::study::DEFAULT_EQUIVALENCE;

/// A panel's series as paired comparisons see them: per series label,
/// cell and block, the point's figures.
pub struct PanelBlocks<'a> {
    pub workload: String,
    pub cpus: Option<String>,
    /// Series labels in order of appearance; the baseline's, the control's
    /// and its twin's among them where the panel has them.
    pub series: Vec<String>,
    pub baseline: String,
    /// Each series' own baseline (its server kind's, where the study gives
    /// one per kind; else `baseline`).
    pub baselines: BTreeMap<String, String>,
    pub control: Option<(String, String)>,
    /// (series, clients, level) → block → point.
    pub cells: BTreeMap<(String, u32, Option<String>), BTreeMap<u32, &'a StoredPoint>>,
    /// (series, clients, block) of the closed-loop points a stop rule
    /// skipped.
    pub skipped: BTreeSet<(String, u32, u32)>,
    /// (series, clients) → block → a search for the highest sustained
    /// rate (`rates = "find"`).
    pub searches: BTreeMap<(String, u32), BTreeMap<u32, BlockSearch>>,
}

/// The metrics compared: name, the figure, and whether more is better.
const METRICS: [(&str, MetricFn, bool); 4] = [
    ("tps", |m| Some(m.tps), true),
    ("p95", |m| m.lat_p95_us, false),
    ("p99", |m| m.lat_p99_us, false),
    ("server_cpu", |m| m.server_cpu_us_per_txn, false),
];

/// The study's panels seen block by block.
pub fn panels(data: &StudyData) -> Vec<PanelBlocks<'_>> {
    let all: Vec<&StoredPoint> = data.points.iter().chain(&data.paced).collect();
    // Over every point: a study of offered loads only (DBT-1's users, say)
    // has its variants there, and each must be a series of its own.
    let with_variant = show_variant(all.iter().copied());
    let label = |p: &StoredPoint| point_label(data, p, with_variant);
    let design = data.design.as_ref();
    let named = |(t, v): &(String, String)| {
        all.iter()
            .find(|p| &p.row.target == t && &p.row.variant == v)
            .map(|p| label(p))
    };
    let baseline = design.and_then(|d| named(&d.baseline));
    // One baseline per server kind: (kind, label).
    let kind_of = |label: &str| {
        all.iter()
            .find(|p| point_label(data, p, with_variant) == *label)
            .map(|p| p.row.target_kind.clone())
    };
    let per_kind: Vec<(String, String)> = design
        .map(|d| {
            d.baselines
                .iter()
                .filter_map(&named)
                .collect::<Vec<String>>()
        })
        .unwrap_or_default()
        .into_iter()
        .filter_map(|l| Some((kind_of(&l)?, l)))
        .collect();
    let control = design.and_then(|d| {
        let c = named(d.control.as_ref()?)?;
        let twin = (
            format!("{}{AGAIN}", d.control.as_ref()?.0),
            d.control.as_ref()?.1.clone(),
        );
        Some((c, named(&twin)?))
    });
    let keys = distinct(all.iter().map(|p| panel_key(p)));
    keys.into_iter()
        .map(|key| {
            let mine: Vec<&StoredPoint> = all
                .iter()
                .copied()
                .filter(|p| panel_key(p) == key)
                .collect();
            let series = distinct(mine.iter().map(|p| label(p)));
            let mut cells: BTreeMap<_, BTreeMap<u32, &StoredPoint>> = BTreeMap::new();
            // A search's probes are judged by their block's answer
            // (`searches`), not rate by rate: each series probes its own.
            for p in mine
                .iter()
                .filter(|p| finished(p).is_some() && !is_probe(p))
            {
                cells
                    .entry((label(p), p.row.clients, p.row.load_level.clone()))
                    .or_default()
                    .insert(p.row.repeat, *p);
            }
            let probes: Vec<&StoredPoint> = mine.iter().copied().filter(|p| is_probe(p)).collect();
            let closed: Vec<&StoredPoint> = mine
                .iter()
                .copied()
                .filter(|p| p.row.load_level.is_none())
                .collect();
            let searches = super::searched::searches(&probes, &closed, &label);
            let skipped = mine
                .iter()
                .filter(|p| p.row.status == PointStatus::Skipped && p.row.load_level.is_none())
                .map(|p| (label(p), p.row.clients, p.row.repeat))
                .collect();
            let first_own = series.iter().find(|s| !s.ends_with(AGAIN)).cloned();
            let baseline = baseline
                .clone()
                .filter(|b| series.contains(b))
                .or(first_own)
                .unwrap_or_default();
            let baselines: BTreeMap<String, String> = series
                .iter()
                .map(|s| {
                    let kind = mine
                        .iter()
                        .find(|p| &label(p) == s)
                        .map(|p| p.row.target_kind.clone());
                    let own = per_kind
                        .iter()
                        .find(|(k, l)| Some(k) == kind.as_ref() && series.contains(l))
                        .map(|(_, l)| l.clone());
                    (s.clone(), own.unwrap_or_else(|| baseline.clone()))
                })
                .collect();
            let (label, options, cpus) = key;
            PanelBlocks {
                workload: workload_title(&label, &options),
                cpus,
                control: control
                    .clone()
                    .filter(|(c, t)| series.contains(c) && series.contains(t)),
                series,
                baseline,
                baselines,
                cells,
                skipped,
                searches,
            }
        })
        .collect()
}

/// The paired analysis of `data`.
pub fn analyze(data: &StudyData) -> Paired {
    let margin = data
        .design
        .as_ref()
        .map_or(DEFAULT_EQUIVALENCE, |d| d.equivalence);
    let mut out = Paired {
        order: data.design.as_ref().map(|d| d.order.clone()),
        equivalence: margin,
        machines: machines(data),
        ..Paired::default()
    };
    let mut floor: Vec<PairedComparison> = Vec::new();
    for pb in panels(data) {
        let mut panel_comparisons = Vec::new();
        for s in &pb.series {
            // The control's twin against its first measurement; every
            // other series against the baseline.
            let own = pb.baselines.get(s).unwrap_or(&pb.baseline);
            let against = match &pb.control {
                Some((c, twin)) if s == twin => c.clone(),
                _ if s == own || s.ends_with(AGAIN) => continue,
                _ => own.clone(),
            };
            let mut cs = compare(&pb, s, &against, margin);
            if pb.control.as_ref().is_some_and(|(_, t)| t == s) {
                floor.extend(cs.iter().cloned());
            }
            panel_comparisons.append(&mut cs);
        }
        out.drift.extend(drift(&pb, &panel_comparisons));
        out.sags.extend(sags(&pb, margin));
        out.comparisons.extend(panel_comparisons);
    }
    if data.design.as_ref().is_some_and(|d| d.control.is_some()) {
        out.noise_floor = floor::noise_floor(&floor, "tps");
        out.latency_noise_floor = floor::noise_floor(&floor, "p99");
    }
    out
}

/// Pairs block by block the figures of `a` and `b` at every cell both
/// measured, and their peaks.
fn compare(pb: &PanelBlocks<'_>, a: &str, b: &str, margin: f64) -> Vec<PairedComparison> {
    let mut out = Vec::new();
    let cells: BTreeSet<(u32, Option<String>)> = pb
        .cells
        .keys()
        .filter(|(s, _, _)| s == a)
        .map(|(_, c, l)| (*c, l.clone()))
        .collect();
    let base =
        |cell: String, clients: Option<u32>, rate: Option<String>, metric| PairedComparison {
            series: a.to_string(),
            baseline: b.to_string(),
            workload: pb.workload.clone(),
            cpus: pb.cpus.clone(),
            clients,
            rate,
            cell,
            metric,
            ratio: None,
            ci_low: None,
            ci_high: None,
            blocks: 0,
            verdict: Verdict::TooFewRepeats,
            per_block: Vec::new(),
        };
    for (clients, level) in &cells {
        let (Some(mine), Some(theirs)) = (
            pb.cells.get(&(a.to_string(), *clients, level.clone())),
            pb.cells.get(&(b.to_string(), *clients, level.clone())),
        ) else {
            continue;
        };
        let cell = match level {
            Some(l) => format!("{l} at clients={clients}"),
            None => format!("clients={clients}"),
        };
        // At an offered rate the throughput is the rate (while sustained):
        // not compared. A level of users is a closed loop whose throughput
        // is the server's answer, as at a client count — with think time
        // too, where the users offer a load (`offered_per_s`) that the
        // server may not keep up with (DBT-1's peak is exactly that).
        let users = level.as_deref().is_some_and(|l| l.starts_with("users="));
        let at_rate = !users
            && [mine, theirs]
                .iter()
                .flat_map(|c| c.values())
                .any(|p| finished(p).is_some_and(|m| m.offered_per_s.is_some()));
        for (name, f, higher) in METRICS {
            if at_rate && name == "tps" {
                continue;
            }
            let pairs: Vec<(u32, BlockValue, BlockValue)> = mine
                .iter()
                .filter_map(|(k, p)| {
                    let q = theirs.get(k)?;
                    Some((*k, value(p, f)?, value(q, f)?))
                })
                .collect();
            if pairs.is_empty() {
                continue;
            }
            out.push(judge(
                base(cell.clone(), Some(*clients), level.clone(), name),
                &pairs,
                margin,
                higher,
            ));
        }
    }
    // A search's answer, block by block: its highest rate that held,
    // where both blocks' searches ran to their end.
    for ((_, clients), mine) in pb.searches.iter().filter(|((s, _), _)| s == a) {
        let Some(theirs) = pb.searches.get(&(b.to_string(), *clients)) else {
            continue;
        };
        let answer = |s: &BlockSearch| {
            Some(BlockValue {
                value: s.held_per_s.filter(|_| s.complete)?,
                machine: s.machine.clone(),
                at_us: s.at_us,
            })
        };
        let pairs: Vec<(u32, BlockValue, BlockValue)> = mine
            .iter()
            .filter_map(|(k, x)| Some((*k, answer(x)?, answer(theirs.get(k)?)?)))
            .collect();
        let cell = format!("find at clients={clients}");
        let c = base(cell, Some(*clients), Some("find".into()), "sustained_rate");
        out.push(judge(c, &pairs, margin, true));
    }
    // The whole curve: each block's peak (closed loop) over the client
    // counts it measured (with one count, its value). A count a stop rule
    // skipped (the curve had collapsed, or errors had stopped it) is not
    // the peak and leaves the block its peak; one not run or failed
    // leaves the block out.
    let closed: Vec<u32> = cells
        .iter()
        .filter(|(_, l)| l.is_none())
        .map(|(c, _)| *c)
        .collect();
    if !closed.is_empty() {
        let peak = |s: &str, k: u32| -> Option<BlockValue> {
            let mut best: Option<BlockValue> = None;
            for c in &closed {
                let key = (s.to_string(), *c, None);
                let Some(p) = pb.cells.get(&key).and_then(|b| b.get(&k)) else {
                    if pb.skipped.contains(&(key.0, key.1, k)) {
                        continue;
                    }
                    return None;
                };
                let v = value(p, |m| Some(m.tps))?;
                if best.as_ref().is_none_or(|b| v.value > b.value) {
                    best = Some(v);
                }
            }
            best
        };
        let blocks: BTreeSet<u32> = pb
            .cells
            .iter()
            .filter(|((s, _, l), _)| s == a && l.is_none())
            .flat_map(|(_, m)| m.keys().copied())
            .collect();
        let pairs: Vec<(u32, BlockValue, BlockValue)> = blocks
            .into_iter()
            .filter_map(|k| Some((k, peak(a, k)?, peak(b, k)?)))
            .collect();
        if !pairs.is_empty() {
            out.push(judge(
                base("peak".into(), None, None, "tps"),
                &pairs,
                margin,
                true,
            ));
        }
    }
    out
}

fn value(p: &StoredPoint, f: MetricFn) -> Option<BlockValue> {
    let m = finished(p)?;
    Some(BlockValue {
        value: f(m)?,
        machine: machine_of(p),
        at_us: m.started_unix_us,
    })
}

/// The panel's drift: the reference series' widest block-to-block spread
/// in a closed-loop cell, beside the spread of that cell's paired ratios.
fn drift(pb: &PanelBlocks<'_>, comparisons: &[PairedComparison]) -> Option<Drift> {
    let reference = pb
        .control
        .as_ref()
        .map_or(pb.baseline.clone(), |(c, _)| c.clone());
    let spread = |v: &[f64]| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(0.0, f64::max);
        (lo > 0.0).then(|| (lo, hi, (hi / lo - 1.0) * 100.0))
    };
    let mut best: Option<Drift> = None;
    for ((s, clients, level), blocks) in &pb.cells {
        if s != &reference || level.is_some() || blocks.len() < 2 {
            continue;
        }
        let v: Vec<f64> = blocks
            .values()
            .filter_map(|p| Some(finished(p)?.tps))
            .collect();
        let Some((lo, hi, pct)) = spread(&v) else {
            continue;
        };
        if best.as_ref().is_some_and(|b| b.drift_pct >= pct) {
            continue;
        }
        let cell = format!("clients={clients}");
        let paired = comparisons
            .iter()
            .filter(|c| c.cell == cell && c.metric == "tps" && c.per_block.len() >= 2)
            .filter_map(|c| {
                let r: Vec<f64> = c.per_block.iter().map(|x| x.1).collect();
                spread(&r).map(|x| x.2)
            })
            .fold(None, |w: Option<f64>, x| Some(w.map_or(x, |w| w.max(x))));
        best = Some(Drift {
            workload: pb.workload.clone(),
            cpus: pb.cpus.clone(),
            series: reference.clone(),
            cell,
            lowest: lo,
            highest: hi,
            drift_pct: pct,
            paired_spread_pct: paired,
        });
    }
    best
}

/// Each series' sag: its highest client count against its peak (the
/// count with the highest mean throughput), block by block.
fn sags(pb: &PanelBlocks<'_>, margin: f64) -> Vec<SagJudged> {
    let mut out = Vec::new();
    for s in &pb.series {
        let cells: Vec<(u32, &BTreeMap<u32, &StoredPoint>)> = pb
            .cells
            .iter()
            .filter(|((x, _, l), _)| x == s && l.is_none())
            .map(|((_, c, _), b)| (*c, b))
            .collect();
        let mean = |b: &BTreeMap<u32, &StoredPoint>| {
            let v: Vec<f64> = b.values().filter_map(|p| Some(finished(p)?.tps)).collect();
            crate::stats::mean(&v)
        };
        let Some(&(peak, peak_blocks)) =
            cells
                .iter()
                .filter(|(_, b)| mean(b).is_some())
                .max_by(|x, y| {
                    mean(x.1)
                        .unwrap_or(0.0)
                        .total_cmp(&mean(y.1).unwrap_or(0.0))
                })
        else {
            continue;
        };
        let Some(&(last, last_blocks)) = cells.last() else {
            continue;
        };
        if last == peak {
            continue;
        }
        let pairs: Vec<(f64, f64)> = last_blocks
            .iter()
            .filter_map(|(k, p)| {
                let q = peak_blocks.get(k)?;
                (machine_of(p) == machine_of(q)).then_some((finished(p)?.tps, finished(q)?.tps))
            })
            .collect();
        let ratio = Ratio::of(&pairs);
        out.push(SagJudged {
            workload: pb.workload.clone(),
            cpus: pb.cpus.clone(),
            series: s.clone(),
            peak_clients: peak,
            last_clients: last,
            verdict: ratio.map_or(Verdict::TooFewRepeats, |r| r.verdict(margin, true)),
            ratio,
        });
    }
    out
}

fn machines(data: &StudyData) -> Vec<MachineUse> {
    let mut out: Vec<MachineUse> = Vec::new();
    for p in data.points.iter().chain(&data.paced) {
        let Some(m) = finished(p) else { continue };
        let name = machine_of(p);
        let at = m.started_unix_s;
        match out.iter_mut().find(|u| u.machine == name) {
            Some(u) => {
                u.points += 1;
                u.first_unix_s = u.first_unix_s.min(Some(at));
                u.last_unix_s = u.last_unix_s.max(Some(at));
            }
            None => out.push(MachineUse {
                machine: name,
                points: 1,
                first_unix_s: Some(at),
                last_unix_s: Some(at),
            }),
        }
    }
    out
}
