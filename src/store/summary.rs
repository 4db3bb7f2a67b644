//! Summaries of repeated measurements: the repeats of one point (same
//! target, variant, CPUs, workload, label and options, clients and
//! instances) are
//! stored individually and summarised here, over the finished ones only.
//! Skipped and failed repeats are counted, never averaged in as zeros.
//!
//! Pure: works on points already read from the store, so it is tested with
//! literal numbers.

use super::{Metrics, PointStatus, StoredPoint};
use crate::stats::Spread;

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
    /// A paced point's offered load (`rate=…`, `users=…`).
    pub load_level: Option<String>,
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

/// The repeats of one group as both `dbsweep results` and `dbsweep report`
/// count them: the finished ones with their figures, how many were skipped
/// or failed, and why.
pub struct Repeats<'a> {
    /// Finished repeats that have figures, in commit order.
    pub finished: Vec<(&'a StoredPoint, &'a Metrics)>,
    pub skipped: usize,
    /// Failed attempts (a failed point that was later run again still
    /// counts once per failure).
    pub failed: usize,
    /// `"skipped: REASON"` / `"failed: REASON"`, each distinct one once, in
    /// order of appearance.
    pub reasons: Vec<String>,
}

impl<'a> Repeats<'a> {
    pub fn of(points: &[&'a StoredPoint]) -> Repeats<'a> {
        let count = |s: PointStatus| points.iter().filter(|p| p.row.status == s).count();
        let mut reasons: Vec<String> = Vec::new();
        for p in points {
            if let Some(r) = &p.row.reason {
                let r = format!("{}: {r}", p.row.status.as_str());
                if !reasons.contains(&r) {
                    reasons.push(r);
                }
            }
        }
        Repeats {
            finished: points
                .iter()
                .filter(|p| p.row.status == PointStatus::Finished)
                .filter_map(|p| p.metrics.as_ref().map(|m| (*p, m)))
                .collect(),
            skipped: count(PointStatus::Skipped),
            failed: count(PointStatus::Failed),
            reasons,
        }
    }

    /// The spread of one figure over the finished repeats that have it.
    pub fn spread(&self, f: impl Fn(&StoredPoint, &Metrics) -> Option<f64>) -> Option<Spread> {
        let values: Vec<f64> = self.finished.iter().filter_map(|(p, m)| f(p, m)).collect();
        Spread::of(&values)
    }
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
            load_level: r.load_level.clone(),
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
            let r = Repeats::of(&members);
            Summary {
                group,
                finished: r.finished.len(),
                skipped: r.skipped,
                failed: r.failed,
                tps: r.spread(|_, m| Some(m.tps)),
                qps: r.spread(|_, m| Some(m.qps)),
                lat_p95_us: r.spread(|_, m| m.lat_p95_us),
                reasons: r.reasons,
            }
        })
        .collect()
}
