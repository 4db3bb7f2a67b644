//! Summaries of repeated measurements: the repeats of one point (same
//! target, variant, CPUs, workload, label and options, clients and
//! instances) are
//! stored individually and summarised here, over the finished ones only.
//! Skipped and failed repeats are counted, never averaged in as zeros.
//!
//! Pure: works on points already read from the store, so it is tested with
//! literal numbers.

use super::{PointStatus, StoredPoint};
use crate::stats;

/// What identifies a group of repeats: every plan dimension but `repeat`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GroupKey {
    pub target: String,
    pub variant: String,
    pub cpus: Option<String>,
    pub workload: String,
    pub workload_label: String,
    /// Sorted by name, as stored.
    pub workload_options: Vec<(String, String)>,
    pub clients: u32,
    pub instances: u32,
}

/// One metric over the finished repeats of a group.
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    /// Repeats that have a value (finished ones; for latency, those in which
    /// a transaction completed).
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (divisor n − 1); `None` below two repeats.
    pub stddev: Option<f64>,
    pub min: f64,
    pub max: f64,
    /// Half-width of the 95 % confidence interval of the mean (Student's t,
    /// n − 1 degrees of freedom): the mean is `mean ± ci95`. `None` below
    /// two repeats.
    pub ci95: Option<f64>,
}

impl Spread {
    /// `None` for no values: there is nothing to summarise.
    pub fn of(xs: &[f64]) -> Option<Spread> {
        let mean = stats::mean(xs)?;
        Some(Spread {
            n: xs.len(),
            mean,
            stddev: stats::stddev(xs),
            min: xs.iter().copied().fold(f64::INFINITY, f64::min),
            max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            ci95: stats::mean_ci95(xs).map(|(_, half)| half),
        })
    }
}

/// The repeats of one point, summarised.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub group: GroupKey,
    /// Finished repeats (the ones the spreads are over).
    pub finished: usize,
    /// Skipped repeats.
    pub skipped: usize,
    /// Failed attempts (a failed point that was later run again still
    /// counts here once per failure).
    pub failed: usize,
    /// `"skipped: REASON"` / `"failed: REASON"`, each distinct one once, in
    /// order of appearance.
    pub reasons: Vec<String>,
    /// Transactions per second.
    pub tps: Option<Spread>,
    /// Queries per second.
    pub qps: Option<Spread>,
    /// 95th percentile of transaction latency, µs.
    pub lat_p95_us: Option<Spread>,
}

impl GroupKey {
    pub fn of(p: &StoredPoint) -> GroupKey {
        let r = &p.row;
        GroupKey {
            target: r.target.clone(),
            variant: r.variant.clone(),
            cpus: r.cpus.clone(),
            workload: r.workload.clone(),
            workload_label: r.workload_label.clone(),
            workload_options: r.workload_options.clone(),
            clients: r.clients,
            instances: r.instances,
        }
    }
}

/// Groups `points` by [`GroupKey`] in order of each group's first point and
/// summarises each group.
pub fn summarize(points: &[StoredPoint]) -> Vec<Summary> {
    let mut groups: Vec<(GroupKey, Vec<&StoredPoint>)> = Vec::new();
    for p in points {
        let key = GroupKey::of(p);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(p),
            None => groups.push((key, vec![p])),
        }
    }
    groups
        .into_iter()
        .map(|(group, members)| {
            let finished: Vec<_> = members
                .iter()
                .filter(|p| p.row.status == PointStatus::Finished)
                .filter_map(|p| p.metrics.as_ref())
                .collect();
            let count = |s: PointStatus| members.iter().filter(|p| p.row.status == s).count();
            let mut reasons: Vec<String> = Vec::new();
            for p in &members {
                if let Some(r) = &p.row.reason {
                    let r = format!("{}: {r}", p.row.status.as_str());
                    if !reasons.contains(&r) {
                        reasons.push(r);
                    }
                }
            }
            let values = |f: &dyn Fn(&super::Metrics) -> Option<f64>| -> Vec<f64> {
                finished.iter().filter_map(|m| f(m)).collect()
            };
            Summary {
                group,
                finished: finished.len(),
                skipped: count(PointStatus::Skipped),
                failed: count(PointStatus::Failed),
                reasons,
                tps: Spread::of(&values(&|m| Some(m.tps))),
                qps: Spread::of(&values(&|m| Some(m.qps))),
                lat_p95_us: Spread::of(&values(&|m| m.lat_p95_us)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_three_repeats() {
        // mean 110, deviations -10, 0, 10: s = sqrt(200 / 2) = 10;
        // ci95 = t(0.975, 2) · 10 / sqrt(3) = 4.302653 · 5.773503 = 24.841379.
        let s = Spread::of(&[100.0, 110.0, 120.0]).unwrap();
        assert_eq!((s.n, s.mean, s.min, s.max), (3, 110.0, 100.0, 120.0));
        assert!((s.stddev.unwrap() - 10.0).abs() < 1e-12);
        assert!((s.ci95.unwrap() - 24.841379).abs() < 1e-6, "{:?}", s.ci95);
    }

    #[test]
    fn spread_of_one_or_none() {
        let s = Spread::of(&[7.0]).unwrap();
        assert_eq!((s.n, s.mean, s.min, s.max), (1, 7.0, 7.0, 7.0));
        assert_eq!((s.stddev, s.ci95), (None, None));
        assert_eq!(Spread::of(&[]), None);
    }
}
