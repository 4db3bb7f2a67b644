//! The study report's charts: a metric against clients, throughput and
//! latency over time at one point, the latency distribution.

use super::figures::merged;
use super::names::{finished, panel_key};
use super::{CellData, Metric, Panel, Stat, StudyData};
use crate::report::doc::{Axis, Chart, ChartKind, Scale, Series};
use crate::report::study::analysis::{self};
use crate::store::StoredPoint;

/// Points of a latency CDF drawn at most.
pub(super) const CDF_POINTS: usize = 200;

pub(super) fn log_clients(clients: &[u32]) -> bool {
    match (clients.first(), clients.last()) {
        (Some(&a), Some(&b)) => a > 0 && b / a >= 16,
        _ => false,
    }
}

pub(super) fn metric_chart(p: &Panel, metric: Metric, id: &str, title: String) -> Chart {
    Chart {
        id: format!("{}-{id}", p.id),
        title,
        x: Axis::new("clients", Scale::log_if(log_clients(&p.clients))),
        y: Axis::linear(metric.axis_in(super::unit(&p.workload_name))),
        kind: ChartKind::Line,
        series: p
            .series
            .iter()
            .map(|s| {
                let pts: Vec<(&CellData, &Stat)> = s
                    .cells
                    .iter()
                    .filter_map(|c| metric.stat(c).map(|st| (c, st)))
                    .collect();
                Series {
                    name: s.label.clone(),
                    points: pts
                        .iter()
                        .map(|(c, st)| (c.clients as f64, st.mean))
                        .collect(),
                    spread: pts
                        .iter()
                        .any(|(_, st)| st.n > 1)
                        .then(|| pts.iter().map(|(_, st)| (st.min, st.max)).collect()),
                    reference: false,
                }
            })
            .filter(|s| !s.points.is_empty())
            .collect(),
    }
}

/// Interval throughput and p95 of the first finished repeat of each series
/// at `clients`.
pub(super) fn time_series(p: &Panel, data: &StudyData, clients: u32) -> (Vec<Series>, Vec<Series>) {
    let (mut tps, mut p95) = (Vec::new(), Vec::new());
    for s in &p.series {
        let Some(point) = data.points.iter().find(|x| {
            panel_key(x)
                == (
                    p.workload.clone(),
                    p.options.clone().into_iter().collect(),
                    p.cpus.clone(),
                )
                && x.row.target == s.target
                && x.row.variant == s.variant
                && x.row.instances == s.instances
                && x.row.clients == clients
                && finished(x).is_some()
        }) else {
            continue;
        };
        let Some(run) = &point.row.run else { continue };
        let intervals: Vec<_> = run.result.intervals.iter().filter(|i| !i.warmup).collect();
        if intervals.is_empty() {
            continue;
        }
        let name = format!("{} (repeat {})", s.label, point.row.repeat);
        tps.push(Series {
            name: name.clone(),
            points: intervals
                .iter()
                .filter(|i| i.duration_s > 0.0)
                .map(|i| (i.t_s, i.transactions as f64 / i.duration_s))
                .collect(),
            spread: None,
            reference: false,
        });
        p95.push(Series {
            name,
            points: intervals
                .iter()
                .filter_map(|i| i.p95_us.map(|us| (i.t_s, us / 1e3)))
                .collect(),
            spread: None,
            reference: false,
        });
    }
    (tps, p95)
}

pub(super) fn cdf_series(p: &Panel, data: &StudyData, clients: u32) -> Vec<Series> {
    p.series
        .iter()
        .filter_map(|s| {
            let points: Vec<&StoredPoint> = data
                .points
                .iter()
                .filter(|x| {
                    x.row.workload_label == p.workload
                        && x.row.workload_options
                            == p.options.clone().into_iter().collect::<Vec<_>>()
                        && x.row.cpus == p.cpus
                        && x.row.target == s.target
                        && x.row.variant == s.variant
                        && x.row.instances == s.instances
                        && x.row.clients == clients
                })
                .collect();
            let h = merged(&points, "transaction")?;
            Some(Series {
                name: s.label.clone(),
                points: analysis::thin(analysis::cdf(&h), CDF_POINTS),
                spread: None,
                reference: false,
            })
        })
        .collect()
}
