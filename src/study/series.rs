//! The stop rules' memory of each series (one target × variant × CPU set ×
//! workload over its client counts): the throughput of each repeat, the
//! peak so far, and the reason once a rule ends the series. Fed with each
//! finished point, and rebuilt from the stored points on resume, so a
//! resumed study skips exactly what an uninterrupted one would have.

use std::collections::HashMap;

use super::model::Study;
use super::plan::{Plan, Point};
use super::stop::ErrorRates;
use crate::record;
use crate::store::{PointStatus, Store, StudyId};

/// What the stop rules judge a finished point by.
pub(super) struct PointFigures {
    pub tps: f64,
    /// Transactions given up.
    pub failed: u64,
    /// Transactions completed or given up.
    pub attempted: u64,
    /// Errors by kind ([`crate::driver::ErrorKind::index`]), retried ones
    /// included.
    pub errors: [u64; crate::driver::ErrorKind::COUNT],
}

impl PointFigures {
    /// The figures of a run's record.
    pub(super) fn of(r: &record::Outcome) -> PointFigures {
        PointFigures {
            tps: r.tps,
            failed: r.failed_transactions,
            attempted: r.transactions + r.failed_transactions,
            errors: r.errors.to_array(),
        }
    }
}

/// Per series: the stop rules' memory.
#[derive(Default)]
pub(super) struct SeriesState {
    /// Throughput of each repeat at the client count being measured.
    current: Vec<f64>,
    current_clients: u32,
    /// Highest mean throughput so far, and at how many clients.
    peak: Option<(f64, u32)>,
    /// Set once a rule ends the series.
    pub stopped: Option<String>,
}

impl SeriesState {
    /// Feeds one finished point; applies the rules when a client count's
    /// repeats are complete.
    pub(super) fn feed(&mut self, study: &Study, p: &Point, repeats: u32, f: &PointFigures) {
        if self.stopped.is_some() {
            return;
        }
        let PointFigures {
            tps,
            failed,
            attempted,
            ref errors,
        } = *f;
        let failed_rate = if attempted > 0 {
            failed as f64 / attempted as f64
        } else {
            0.0
        };
        if let Some(reason) = study
            .stop
            .max_error_rate
            .exceeded(errors, attempted, p.clients)
        {
            self.stopped = Some(reason);
            return;
        }
        if let Some(limit) = study.stop.max_failed_rate {
            if failed_rate > limit {
                self.stopped = Some(format!(
                    "stopped: {:.1} % of transactions failed at {} clients (limit {:.1} %)",
                    failed_rate * 100.0,
                    p.clients,
                    limit * 100.0
                ));
                return;
            }
        }
        if p.clients != self.current_clients {
            self.current.clear();
            self.current_clients = p.clients;
        }
        self.current.push(tps);
        if self.current.len() < repeats as usize {
            return;
        }
        let mean = self.current.iter().sum::<f64>() / self.current.len() as f64;
        match self.peak {
            Some((peak, at)) if mean <= peak => {
                if let Some(frac) = study.stop.below_peak {
                    if mean < frac * peak {
                        self.stopped = Some(format!(
                            "stopped: {mean:.0} tps at {} clients is below {:.0} % of the peak ({peak:.0} tps at {at} clients)",
                            p.clients,
                            frac * 100.0
                        ));
                    }
                }
            }
            _ => self.peak = Some((mean, p.clients)),
        }
    }
}

/// Rebuilds the stop rules' state from the points an earlier session stored.
pub(super) fn replay_stop_rules(
    study: &Study,
    plan: &Plan,
    store: &Store,
    id: StudyId,
    series: &mut HashMap<usize, SeriesState>,
) -> anyhow::Result<()> {
    let stored: HashMap<String, _> = store
        .point_figures(Some(id))?
        .into_iter()
        .map(|sp| (sp.row.key.clone(), sp))
        .collect();
    for p in &plan.points {
        let Some(sp) = stored.get(&p.key.to_string()) else {
            continue;
        };
        let state = series.entry(p.series).or_default();
        match (sp.row.status, &sp.metrics) {
            (PointStatus::Skipped, _) if state.stopped.is_none() => {
                state.stopped = sp.row.reason.clone();
            }
            (PointStatus::Finished, Some(m)) if p.level.is_none() => {
                let figures = PointFigures {
                    tps: m.tps,
                    failed: m.failed_transactions,
                    attempted: m.transactions + m.failed_transactions,
                    errors: ErrorRates::counts(sp.errors.iter().map(|(k, n)| (k.as_str(), *n))),
                };
                state.feed(study, p, study.workloads[p.workload].repeats.min, &figures);
            }
            _ => {}
        }
    }
    Ok(())
}
