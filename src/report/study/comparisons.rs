//! The study report's comparisons across panels: CPU scalability (the CPU
//! sets of one series) and the comparison with a baseline study, cell by
//! cell.

use super::figures::panels;
use super::model::{
    ComparedCell, ComparedPanel, ComparedSeries, Comparison, Panel, Scalability, ScalingSeries,
    SeriesData,
};
use super::names::{cpus_label, distinct, workload_title};
use super::{Options, StudyData};
use crate::report::study::analysis::{self};

/// Per workload entry with more than one CPU set: each series' peaks by CPU
/// set and the factors.
pub(super) fn scalability(data: &StudyData, panels: &[Panel]) -> Vec<Scalability> {
    let online = data
        .info
        .machine
        .get("cpus_online")
        .and_then(|v| v.as_u64())
        .map(|n| n as usize);
    let workloads = distinct(
        panels
            .iter()
            .map(|p| (p.workload.clone(), p.options.clone())),
    );
    let mut out = Vec::new();
    for (w, o) in workloads {
        let mine: Vec<&Panel> = panels
            .iter()
            .filter(|p| p.workload == w && p.options == o)
            .collect();
        if mine.len() < 2 {
            continue;
        }
        let labels = distinct(
            mine.iter()
                .flat_map(|p| p.series.iter().map(|s| s.label.clone())),
        );
        let series = labels
            .into_iter()
            .filter_map(|label| {
                let configs: Vec<(String, usize, f64)> = mine
                    .iter()
                    .filter_map(|p| {
                        let n = match &p.cpus {
                            Some(set) => analysis::cpu_count(set)?,
                            None => online?,
                        };
                        let peak = p.series.iter().find(|s| s.label == label)?.peak?;
                        Some((cpus_label(&p.cpus), n, peak.value))
                    })
                    .collect();
                (configs.len() >= 2).then(|| ScalingSeries {
                    label,
                    configs: analysis::scalability(&configs),
                })
            })
            .collect::<Vec<_>>();
        if !series.is_empty() {
            out.push(Scalability {
                workload: workload_title(&w, &o.into_iter().collect::<Vec<_>>()),
                series,
            });
        }
    }
    out
}

pub(super) fn compare(panels: &[Panel], baseline: &StudyData, opts: &Options) -> Comparison {
    let theirs = self::panels(baseline, opts);
    let metric = opts.metric;
    let out = panels
        .iter()
        .filter_map(|p| {
            let b = theirs
                .iter()
                .find(|b| b.workload == p.workload && b.options == p.options && b.cpus == p.cpus)?;
            let mut clients = p.clients.clone();
            clients.extend(&b.clients);
            clients.sort_unstable();
            clients.dedup();
            // A series is the same target, variant and instances in both
            // studies, whatever release each ran: an upgrade is what a
            // baseline is for.
            let key = |s: &SeriesData| (s.target.clone(), s.variant.clone(), s.instances);
            let keys = distinct(p.series.iter().chain(&b.series).map(key));
            let of = |panel: &Panel, k: &(String, String, u32)| -> Option<SeriesData> {
                panel.series.iter().find(|s| key(s) == *k).cloned()
            };
            let find = |s: &Option<SeriesData>, c: u32| {
                s.as_ref()?
                    .cells
                    .iter()
                    .find(|x| x.clients == c)
                    .and_then(|x| metric.stat(x).cloned())
            };
            let series = keys
                .iter()
                .map(|k| (of(b, k), of(p, k)))
                .map(|(before, now)| ComparedSeries {
                    label: match (&before, &now) {
                        (Some(o), Some(n)) if o.label != n.label => {
                            format!("{} (baseline: {})", n.label, o.label)
                        }
                        (_, Some(n)) => n.label.clone(),
                        (Some(o), None) => o.label.clone(),
                        (None, None) => unreachable!("each key comes from a series"),
                    },
                    cells: clients
                        .iter()
                        .map(|&c| {
                            let (old, new) = (find(&before, c), find(&now, c));
                            ComparedCell {
                                clients: c,
                                baseline: old.as_ref().map(|s| s.mean),
                                value: new.as_ref().map(|s| s.mean),
                                change: match (&old, &new) {
                                    (Some(o), Some(n)) => analysis::change(
                                        &o.values,
                                        &n.values,
                                        metric.higher_is_better(),
                                    ),
                                    _ => None,
                                },
                            }
                        })
                        .collect(),
                })
                .collect();
            Some(ComparedPanel {
                id: p.id.clone(),
                workload: workload_title(
                    &p.workload,
                    &p.options.clone().into_iter().collect::<Vec<_>>(),
                ),
                cpus: p.cpus.clone(),
                clients,
                series,
            })
        })
        .collect();
    Comparison {
        baseline: baseline.info.name.clone(),
        source: baseline.source.clone(),
        metric,
        panels: out,
    }
}
