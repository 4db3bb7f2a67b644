//! A study's measured series under a publication's names: the curves that
//! a reproduction's statements and tables read (`Curves`), through the
//! `[[reference]]`'s `map` (series) and `cpus` (CPU configurations).

use std::collections::BTreeSet;

use super::model::RefSpec;
use super::names::finished;
use super::statement::Curves;
use super::StudyData;
use crate::store::StoredPoint;

/// The study's measured series under the publication's names.
pub struct Measured<'a> {
    pub data: &'a StudyData,
    pub spec: &'a RefSpec,
    /// None: each point is the mean of its repeats; Some(k): block k + 1
    /// (the points of repeat k + 1, which in an interleaved study ran
    /// side by side), for statements judged block by block.
    block: Option<usize>,
}

impl<'a> Measured<'a> {
    pub fn new(data: &'a StudyData, spec: &'a RefSpec) -> Measured<'a> {
        Measured {
            data,
            spec,
            block: None,
        }
    }

    /// The same series, each point its repeat `k + 1`.
    pub fn block(&self, k: usize) -> Measured<'a> {
        Measured {
            block: Some(k),
            ..*self
        }
    }

    /// The highest repeat number any finished point of a mapped series has.
    pub fn blocks(&self) -> usize {
        self.spec
            .map
            .iter()
            .flat_map(|(ours, _)| self.points(ours))
            .filter(|p| finished(p).is_some())
            .map(|p| p.row.repeat as usize)
            .max()
            .unwrap_or(0)
    }

    pub(super) fn ours(&self, theirs: &str) -> Option<&str> {
        self.spec
            .map
            .iter()
            .find(|(_, t)| t == theirs)
            .map(|(o, _)| o.as_str())
    }

    fn points(&self, ours: &str) -> Vec<&StoredPoint> {
        let (t, v) = ours.split_once('/').unwrap_or((ours, "base"));
        self.data
            .points
            .iter()
            .chain(&self.data.paced)
            .filter(|p| p.row.target == t && p.row.variant == v)
            .collect()
    }

    /// Our CPU sets of a series, fewest CPUs first.
    fn our_cpus(&self, ours: &str) -> Vec<Option<String>> {
        let mut sets: Vec<Option<String>> = self
            .points(ours)
            .iter()
            .map(|p| p.row.cpus.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let count = |c: &Option<String>| {
            c.as_deref()
                .and_then(|c| crate::server::parse_cpu_list(c).ok())
                .map_or(usize::MAX, |v| v.len())
        };
        sets.sort_by_key(count);
        sets
    }

    fn theirs_cpus(&self, ours: &Option<String>) -> Option<String> {
        let o = ours.as_deref()?;
        self.spec
            .cpus
            .iter()
            .find(|(x, _)| x == o)
            .map(|(_, t)| t.clone())
    }
}

/// A stored point's value of `metric`.
fn metric_of(p: &StoredPoint, metric: &str) -> Option<f64> {
    let m = finished(p)?;
    Some(match metric {
        "tps" | "bts" => m.tps,
        "qps" => m.qps,
        "avg_ms" => m.lat_avg_us? / 1e3,
        "max_ms" => m.lat_max_us? / 1e3,
        "semaphore_os_waits_per_txn" => m.semaphore_os_waits_per_txn?,
        "p95_ms" => m.lat_p95_us? / 1e3,
        "deadlocks_per_s" => {
            let n = p
                .errors
                .iter()
                .find(|(k, _)| k == "deadlock")
                .map_or(0, |e| e.1);
            if m.measured_s > 0.0 {
                n as f64 / m.measured_s
            } else {
                return None;
            }
        }
        // The busy share of the CPUs the server was pinned to (the
        // machine's when not pinned), %.
        "cpu_set_busy_pct" => super::usage::point_cpu(p)?.busy(),
        "cpu_busy_pct" => {
            p.row
                .run
                .as_ref()?
                .result
                .metrics
                .as_ref()?
                .figures
                .cpu_busy_pct
                .as_ref()?
                .value
        }
        _ => return None,
    })
}

fn x_of(p: &StoredPoint) -> u32 {
    p.row
        .load_level
        .as_deref()
        .and_then(|l| l.strip_prefix("users="))
        .and_then(|u| u.parse().ok())
        // Connections in all: the loader counted every instance's.
        .unwrap_or(p.row.clients)
}

impl Curves for Measured<'_> {
    fn curve(
        &self,
        series: &str,
        metric: &str,
        workload: Option<&str>,
        cpus: Option<&str>,
    ) -> Result<Vec<(u32, f64)>, String> {
        let ours = self
            .ours(series)
            .ok_or_else(|| format!("{series}: no series of this study stands for it"))?;
        let points = self.points(ours);
        let labels: BTreeSet<&str> = points
            .iter()
            .map(|p| p.row.workload_label.as_str())
            .collect();
        let workload = match workload {
            Some(w) if labels.contains(w) => w,
            Some(w) => return Err(format!("{ours}: no workload '{w}' here")),
            None if labels.len() == 1 => labels.iter().next().copied().unwrap_or(""),
            None => return Err(format!("{ours} ran several workloads: give workload=")),
        };
        let sets = self.our_cpus(ours);
        let set: Option<String> = match cpus {
            None => sets.last().cloned().flatten(),
            Some(c) => {
                let mapped = self
                    .spec
                    .cpus
                    .iter()
                    .find(|(_, t)| t == c)
                    .map(|(o, _)| o.clone());
                match mapped.or_else(|| sets.iter().flatten().find(|s| *s == c).cloned()) {
                    Some(s) => Some(s),
                    None => return Err(format!("{ours}: no CPU set stands for '{c}' here")),
                }
            }
        };
        let mine: Vec<&StoredPoint> = points
            .into_iter()
            .filter(|p| p.row.workload_label == workload && p.row.cpus == set)
            .collect();
        let xs: BTreeSet<u32> = mine.iter().map(|p| x_of(p)).collect();
        let curve: Vec<(u32, f64)> = xs
            .into_iter()
            .filter_map(|x| {
                let at_x = mine.iter().filter(|p| x_of(p) == x);
                match self.block {
                    Some(k) => at_x
                        .filter(|p| p.row.repeat as usize == k + 1)
                        .find_map(|p| metric_of(p, metric))
                        .map(|v| (x, v)),
                    None => {
                        let v: Vec<f64> = at_x.filter_map(|p| metric_of(p, metric)).collect();
                        (!v.is_empty()).then(|| (x, v.iter().sum::<f64>() / v.len() as f64))
                    }
                }
            })
            .collect();
        if curve.is_empty() {
            return Err(format!("{ours}: no {metric} measured"));
        }
        Ok(curve)
    }

    fn cpus(&self, series: &str) -> Vec<String> {
        let Some(ours) = self.ours(series) else {
            return Vec::new();
        };
        self.our_cpus(ours)
            .iter()
            .map(|c| {
                self.theirs_cpus(c)
                    .or_else(|| c.clone())
                    .unwrap_or_else(|| "all".into())
            })
            .collect()
    }

    fn series(&self) -> Vec<String> {
        self.spec.map.iter().map(|(_, t)| t.clone()).collect()
    }

    fn metric(&self) -> &str {
        &self.spec.metric
    }
}
