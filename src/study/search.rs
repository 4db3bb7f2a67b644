//! A study's search for the highest sustained rate (`rates = "find"`):
//! each probe's rate, replayed from the stored points of its series and
//! block — the calibration point's throughput, the earlier probes'
//! verdicts (`stats::bisect`) — and each block's answer, which the cell's
//! precision compares. Replayed rather than remembered, so a study
//! resumed in another session probes the rates the first would have.

use std::collections::HashMap;

use super::plan::{Point, PointKey};
use crate::stats::bisect::Bisection;
use crate::store::{Metrics, PointStatus, StoredPoint};

/// At most this share of a probe's offered arrivals may go unserved
/// (skipped or never started), % — `run --find-rate`'s default and the
/// report's rule for a sustained level.
pub const MAX_UNSERVED_PCT: f64 = 1.0;

/// Whether a finished probe held a p99 goal of `goal_ms`: it ran to its
/// end, its p99 from the intended start is within the goal, and at most
/// [`MAX_UNSERVED_PCT`] of what was offered went unserved.
pub fn holds(m: &Metrics, goal_ms: f64) -> bool {
    let ended = matches!(m.stop_reason.as_str(), "time" | "events" | "rounds");
    let offered = m.offered_per_s.unwrap_or(0.0) * m.measured_s;
    let unserved = (m.skipped.unwrap_or(0) + m.unstarted.unwrap_or(0)) as f64;
    ended
        && m.p99_ms().is_some_and(|p| p <= goal_ms)
        && offered > 0.0
        && unserved / offered * 100.0 <= MAX_UNSERVED_PCT
}

/// What the search of one series in one block does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Probe this rate, per second.
    Probe(f64),
    /// The search has its answer: no more probes.
    Done(Bisection),
    /// The search cannot go on: why.
    Stopped(String),
}

/// A stored probe as the search sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum Probed {
    /// Finished: whether it held.
    Held(bool),
    /// Failed or skipped, with why.
    Ended(Option<String>),
    /// Not stored.
    Missing,
}

/// The next step of a search whose calibration measured `peak` and whose
/// probes so far are `probes`, in order.
pub fn next(peak: Option<f64>, probes: &[Probed], precision_pct: f64) -> Step {
    let Some(peak) = peak.filter(|&t| t >= 1.0) else {
        return Step::Stopped(
            "no peak to search below: the closed-loop calibration point did not finish".into(),
        );
    };
    let mut verdicts = Vec::new();
    let mut missing = None;
    for (i, p) in probes.iter().enumerate() {
        match p {
            Probed::Held(h) => verdicts.push(*h),
            Probed::Ended(why) => {
                return Step::Stopped(format!(
                    "the search stopped: probe {} {}",
                    i + 1,
                    why.as_deref().unwrap_or("did not finish")
                ))
            }
            // Not stored: not needed, once the probes before it answered
            // (checked below).
            Probed::Missing => {
                missing = Some(i + 1);
                break;
            }
        }
    }
    let b = Bisection::replay(peak, precision_pct, &verdicts);
    match (b.next(), missing) {
        (None, _) => Step::Done(b),
        (Some(_), Some(n)) => Step::Stopped(format!("the search stopped: probe {n} is missing")),
        (Some(rate), None) => Step::Probe(rate),
    }
}

/// A block's search as stored: its calibration point and its probes in
/// order (each the finished attempt where there is one).
pub struct Stored<'a> {
    pub calibration: Option<&'a StoredPoint>,
    pub probes: Vec<Option<&'a StoredPoint>>,
}

impl<'a> Stored<'a> {
    /// The search of `key`'s series and block (its level ignored) among
    /// `points`, probes 1 to `upto`.
    pub fn of(points: &'a [StoredPoint], key: &PointKey, upto: u32) -> Stored<'a> {
        let mut by_key: HashMap<&str, &StoredPoint> = HashMap::new();
        for sp in points {
            // A finished (or skipped) point outranks a failed attempt.
            let keep = by_key
                .get(sp.row.key.as_str())
                .is_none_or(|old| old.row.status == PointStatus::Failed);
            if keep {
                by_key.insert(&sp.row.key, sp);
            }
        }
        let at = |level: Option<String>| {
            let mut k = key.clone();
            k.level = level;
            by_key.get(k.to_string().as_str()).copied()
        };
        Stored {
            calibration: at(None),
            probes: (1..=upto).map(|n| at(Some(format!("probe={n}")))).collect(),
        }
    }

    /// The next step after the stored probes, to within `precision_pct`
    /// of the peak, against a p99 goal of `goal_ms`.
    pub fn step(&self, precision_pct: f64, goal_ms: f64) -> Step {
        let peak = self
            .calibration
            .filter(|c| c.row.status == PointStatus::Finished)
            .and_then(|c| c.metrics.as_ref())
            .map(|m| m.tps);
        let probes: Vec<Probed> = (self.probes.iter())
            .map(|p| match p {
                None => Probed::Missing,
                Some(sp) => match (sp.row.status, &sp.metrics) {
                    (PointStatus::Finished, Some(m)) => Probed::Held(holds(m, goal_ms)),
                    _ => Probed::Ended(sp.row.reason.clone()),
                },
            })
            .collect();
        next(peak, &probes, precision_pct)
    }

    /// The block's answer: the highest rate that held; None while the
    /// search is unfinished or stopped, or when no rate held.
    pub fn held(&self, precision_pct: f64, goal_ms: f64) -> Option<f64> {
        match self.step(precision_pct, goal_ms) {
            Step::Done(b) => b.held,
            _ => None,
        }
    }
}

/// The line a finished search prints.
pub fn answer(b: &Bisection) -> String {
    let pct = |r: f64| 100.0 * r / b.peak;
    match (b.held, b.failed) {
        (Some(h), None) => format!("{h:.0}/s held: the closed-loop peak itself"),
        (Some(h), Some(f)) => format!(
            "{h:.0}/s held ({:.1} % of the peak {:.0}/s), {f:.0}/s failed, after {} probes",
            pct(h),
            b.peak,
            b.probes.len()
        ),
        (None, _) => {
            let lowest = b.probes.last().map_or(0.0, |p| p.0);
            format!(
                "no rate held, down to {lowest:.0}/s ({:.1} % of the peak), after {} probes",
                pct(lowest),
                b.probes.len()
            )
        }
    }
}

/// The probe number of point `p`, if it is one.
pub fn probe_of(p: &Point) -> Option<u32> {
    match p.level {
        Some(super::model::Level::Probe(n)) => Some(n),
        _ => None,
    }
}

/// The next step of the search probe `p` belongs to, from what `store`
/// holds of its block.
pub(super) fn decide(
    store: &crate::store::Store,
    study_id: crate::store::StudyId,
    study: &super::model::Study,
    p: &Point,
    n: u32,
) -> anyhow::Result<Step> {
    let spec = &study.workloads[p.workload].pacing;
    let (Some(precision), Some(goal)) = (spec.search, spec.p99_goal) else {
        return Ok(Step::Stopped("not a search".into()));
    };
    let stored = store.point_figures(Some(study_id))?;
    let search = Stored::of(&stored, &p.key, n - 1);
    Ok(search.step(precision, goal.as_secs_f64() * 1e3))
}

/// The mean throughput of the finished repeats of `p`'s calibration point
/// (the same point, closed loop), which a share of the peak (`50%`) is
/// taken of.
pub(super) fn mean_calibration(
    store: &crate::store::Store,
    study_id: crate::store::StudyId,
    study: &super::model::Study,
    p: &Point,
) -> Result<f64, String> {
    let mut key = p.key.clone();
    key.level = None;
    let keys: std::collections::HashSet<String> = (1..=study.workloads[p.workload].repeats.max)
        .map(|r| {
            key.repeat = r;
            key.to_string()
        })
        .collect();
    let stored = store
        .point_figures(Some(study_id))
        .map_err(|e| format!("the calibration point could not be read: {e:#}"))?;
    let tps: Vec<f64> = stored
        .iter()
        .filter(|s| s.row.status == PointStatus::Finished && keys.contains(&s.row.key))
        .filter_map(|s| s.metrics.as_ref().map(|m| m.tps))
        .filter(|&t| t > 0.0)
        .collect();
    if tps.is_empty() {
        return Err(format!(
            "no peak to take a share of: the closed-loop calibration point at {} clients did not finish",
            p.clients
        ));
    }
    Ok(tps.iter().sum::<f64>() / tps.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Probed::*;

    #[test]
    fn each_probe_follows_from_the_ones_before() {
        assert_eq!(next(Some(1000.4), &[], 10.0), Step::Probe(1000.0));
        assert_eq!(next(Some(1000.0), &[Held(false)], 10.0), Step::Probe(500.0));
        assert_eq!(
            next(Some(1000.0), &[Held(false), Held(true)], 10.0),
            Step::Probe(750.0)
        );
        // The peak held: the search has its answer, and the probes after
        // it, never stored, change nothing.
        for probes in [&[Held(true)][..], &[Held(true), Missing, Missing]] {
            match next(Some(1000.0), probes, 10.0) {
                Step::Done(b) => assert_eq!((b.held, b.failed), (Some(1000.0), None)),
                other => panic!("{other:?}"),
            }
        }
        // Within the precision: done after five probes.
        let five = [Held(false), Held(true), Held(false), Held(true), Held(true)];
        match next(Some(1000.0), &five, 10.0) {
            Step::Done(b) => assert_eq!((b.held, b.failed), (Some(688.0), Some(750.0))),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_search_stops_on_what_it_cannot_read() {
        let stopped = |s: Step| match s {
            Step::Stopped(why) => why,
            other => panic!("{other:?}"),
        };
        assert!(stopped(next(None, &[], 2.0)).contains("calibration point did not finish"));
        assert!(stopped(next(Some(0.4), &[], 2.0)).contains("no peak"));
        let why = stopped(next(
            Some(1000.0),
            &[
                Held(false),
                Ended(Some("failed: connection refused".into())),
            ],
            2.0,
        ));
        assert_eq!(
            why,
            "the search stopped: probe 2 failed: connection refused"
        );
        // A probe the search still wanted is missing.
        let why = stopped(next(Some(1000.0), &[Held(false), Missing, Held(true)], 2.0));
        assert_eq!(why, "the search stopped: probe 2 is missing");
    }
}
