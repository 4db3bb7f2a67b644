//! What the paired analysis (paired.rs) gives a study report: the
//! comparisons with their intervals and verdicts, the control's noise
//! floor, the drift and the machines. A module of its own so the report's
//! model can hold these without reaching into the analysis.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::stats::paired::{Ratio, Verdict};
use crate::store::Metrics;

/// One series' value in one block, where it ran.
#[derive(Debug, Clone)]
pub struct BlockValue {
    pub value: f64,
    pub machine: String,
    /// The clients' release, µs since 1970.
    pub at_us: Option<u64>,
}

/// A compared figure of a point's metrics.
pub(super) type MetricFn = fn(&Metrics) -> Option<f64>;

/// One comparison: a series against the baseline on one metric, at one
/// cell or over the whole curve (`peak`).
#[derive(Debug, Clone, Serialize)]
pub struct PairedComparison {
    pub series: String,
    pub baseline: String,
    pub workload: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpus: Option<String>,
    /// The cell's clients (connections of each instance); None for `peak`.
    pub clients: Option<u32>,
    /// The cell's offered load (`rate=50%`, `users=1000`); None in the
    /// closed loop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<String>,
    /// `clients=N`, `rate=…` / `users=…` at N clients, `find at
    /// clients=N` (a search), or `peak`.
    pub cell: String,
    /// `tps`, `p95`, `p99`, `server_cpu` (µs per transaction) or
    /// `sustained_rate` (a search's highest rate that held, per second).
    pub metric: &'static str,
    /// Geometric mean of the per-block ratios (series / baseline); None
    /// where no block paired.
    pub ratio: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// Blocks that paired.
    pub blocks: usize,
    pub verdict: Verdict,
    /// The per-block ratios, by block.
    #[serde(skip)]
    pub per_block: Vec<(u32, f64)>,
}

/// Orders a cell's offered load by its number (`users=2500` before
/// `users=10000`, which text order puts first), then by name; the closed
/// loop (None) first.
pub fn level_key(l: &Option<String>) -> Option<(String, f64, String)> {
    let l = l.as_ref()?;
    let (name, value) = l.split_once('=').unwrap_or((l, ""));
    let digits: String = value
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let n = digits.parse().unwrap_or(f64::INFINITY);
    Some((name.to_string(), n, l.clone()))
}

impl PairedComparison {
    /// "0.93 [0.90, 0.96]", or "0.93 (1 block)".
    pub fn interval_text(&self) -> String {
        match (self.ratio, self.ci_low, self.ci_high) {
            (Some(r), Some(lo), Some(hi)) => format!("{r:.3} [{lo:.3}, {hi:.3}]"),
            (Some(r), _, _) => format!("{r:.3} ({} block)", self.blocks),
            _ => "—".into(),
        }
    }

    /// The difference in percent, with its interval: "−7.0 % [−10.1,
    /// −3.9]".
    pub fn difference_text(&self) -> String {
        let pct = |x: f64| signed((x - 1.0) * 100.0);
        match (self.ratio, self.ci_low, self.ci_high) {
            (Some(r), Some(lo), Some(hi)) => {
                format!("{} % [{}, {}]", pct(r), pct(lo), pct(hi))
            }
            (Some(r), _, _) => format!("{} % (one block, no interval)", pct(r)),
            _ => "not compared".into(),
        }
    }
}

/// `+1.5` / `−1.5` (a minus sign, as the report's tables write it).
fn signed(x: f64) -> String {
    let s = format!("{x:+.1}");
    s.replace('-', "−")
}

impl PairedComparison {
    /// How the cell is named in a sentence: "at 4 clients", "at its peak".
    pub fn where_text(&self) -> String {
        match (self.clients, &self.rate) {
            (None, _) => "at its peak".into(),
            (Some(c), None) => format!("at {c} clients"),
            (Some(c), Some(l)) => format!("at {l} on {c} clients"),
        }
    }
}

/// The control measured against itself: the study's noise floor.
#[derive(Debug, Clone, Serialize)]
pub struct NoiseFloor {
    /// The metric compared: `tps` (throughput, cells and peak) or `p99`.
    pub metric: &'static str,
    /// The control's series, and its second measurement's.
    pub series: String,
    pub again: String,
    /// Its comparisons of the metric (for throughput, cells and peak).
    pub comparisons: usize,
    /// The widest interval half-width among them (a share: 0.02 = ±2 %).
    pub widest_half_width: Option<f64>,
    /// How many came out each way.
    pub verdicts: BTreeMap<&'static str, usize>,
    /// Where the control came out better or worse than itself.
    pub failed_at: Vec<String>,
    /// The comparisons with an interval (two blocks or more).
    pub tested: usize,
    /// How often chance alone makes that many or more of them differ, each
    /// 95 % interval missing 1 time in 20 (cells taken as independent).
    pub by_chance: f64,
    /// More differed than chance makes in 1 % of studies: order effects or
    /// a server warming up, and every other verdict is unreliable.
    pub failed: bool,
}

/// Below this chance, the control's differing cells are more than noise.
pub const CONTROL_FAILS_BELOW: f64 = 0.01;

/// How far the machine drifted under a panel: the reference series' (the
/// control's, else the baseline's) highest block over its lowest in one
/// cell, against what the paired ratios of that cell kept of it.
#[derive(Debug, Clone, Serialize)]
pub struct Drift {
    pub workload: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpus: Option<String>,
    pub series: String,
    pub cell: String,
    /// Its lowest and highest block's throughput.
    pub lowest: f64,
    pub highest: f64,
    /// highest / lowest − 1, %.
    pub drift_pct: f64,
    /// The widest spread (highest / lowest − 1, %) of the per-block
    /// ratios of that cell's comparisons: what pairing left of the drift.
    pub paired_spread_pct: Option<f64>,
}

/// One machine the study ran on and its points.
#[derive(Debug, Clone, Serialize)]
pub struct MachineUse {
    /// CPU model, CPUs, memory, kernel.
    pub machine: String,
    pub points: usize,
    pub first_unix_s: Option<u64>,
    pub last_unix_s: Option<u64>,
}

/// Everything the paired analysis gives a report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Paired {
    /// `interleaved` or `sequential`, as the study ran; None for a study
    /// stored before dbsweep kept it.
    pub order: Option<String>,
    pub equivalence: f64,
    pub comparisons: Vec<PairedComparison>,
    /// The control against itself in throughput: whether the design
    /// holds.
    pub noise_floor: Option<NoiseFloor>,
    /// The same in p99 latency: whether the p99 verdicts can be trusted
    /// (a tail is more sensitive than a mean to a server warming up).
    pub latency_noise_floor: Option<NoiseFloor>,
    pub drift: Vec<Drift>,
    pub machines: Vec<MachineUse>,
    /// Each series' fall from its peak to its highest client count, as a
    /// block-paired ratio (for the sentences; the tables show the means).
    #[serde(skip)]
    pub sags: Vec<SagJudged>,
}

/// A series' throughput at its highest client count over its peak's,
/// block by block: a sag is only said where the interval decides it.
#[derive(Debug, Clone)]
pub struct SagJudged {
    pub workload: String,
    pub cpus: Option<String>,
    pub series: String,
    pub peak_clients: u32,
    pub last_clients: u32,
    pub ratio: Option<Ratio>,
    pub verdict: Verdict,
}

/// The comparison's ratio, interval and verdict from the pairs that ran
/// on one machine; none from two.
pub(super) fn judge(
    mut c: PairedComparison,
    pairs: &[(u32, BlockValue, BlockValue)],
    margin: f64,
    higher: bool,
) -> PairedComparison {
    let same: Vec<&(u32, BlockValue, BlockValue)> = pairs
        .iter()
        .filter(|(_, x, y)| x.machine == y.machine)
        .collect();
    if same.is_empty() {
        c.verdict = Verdict::DifferentMachines;
        return c;
    }
    let values: Vec<(f64, f64)> = same.iter().map(|(_, x, y)| (x.value, y.value)).collect();
    c.per_block = same
        .iter()
        .filter(|(_, x, y)| x.value > 0.0 && y.value > 0.0)
        .map(|(k, x, y)| (*k, x.value / y.value))
        .collect();
    if let Some(r) = Ratio::of(&values) {
        c.ratio = Some(r.ratio);
        c.ci_low = r.ci.map(|x| x.0);
        c.ci_high = r.ci.map(|x| x.1);
        c.blocks = r.blocks;
        c.verdict = r.verdict(margin, higher);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offered_loads_order_by_their_number() {
        let mut levels: Vec<Option<String>> =
            ["users=20000", "users=2500", "rate=50%", "users=10000"]
                .iter()
                .map(|s| Some(s.to_string()))
                .chain([None])
                .collect();
        levels.sort_by(|a, b| level_key(a).partial_cmp(&level_key(b)).unwrap());
        let names: Vec<_> = levels
            .iter()
            .map(|l| l.as_deref().unwrap_or("closed"))
            .collect();
        assert_eq!(
            names,
            [
                "closed",
                "rate=50%",
                "users=2500",
                "users=10000",
                "users=20000"
            ]
        );
    }
}
