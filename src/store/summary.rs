//! Summaries of repeated measurements: the repeats of one point (same
//! target, variant, CPUs, workload, label and options, clients and
//! instances) are
//! stored individually and summarised here, over the finished ones only.
//! Skipped and failed repeats are counted, never averaged in as zeros.
//!
//! Pure: works on points already read from the store, so it is tested with
//! literal numbers.

use super::{PointStatus, StoredPoint};
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
