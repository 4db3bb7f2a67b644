//! A reference's published curves as statements read them: the seed's
//! series, metric, workload and CPU configuration picked from
//! [`RefData`] (`study::repro::published` reads the CSV).

use std::collections::BTreeSet;

use super::statement::Curves;
use crate::study::repro::published::{RefData, RefPoint};

/// A reference's curves under the seed's names, for statements.
pub struct RefCurves<'a> {
    pub data: &'a RefData,
    /// The metric a statement compares unless it names another.
    pub metric: String,
}

impl Curves for RefCurves<'_> {
    fn curve(
        &self,
        series: &str,
        metric: &str,
        workload: Option<&str>,
        cpus: Option<&str>,
    ) -> Result<Vec<(u32, f64)>, String> {
        let mine: Vec<&RefPoint> = self
            .data
            .points
            .iter()
            .filter(|p| p.series == series)
            .collect();
        if mine.is_empty() {
            return Err(format!("{series}: not in {}", self.data.file));
        }
        let workloads: BTreeSet<&str> = mine.iter().filter_map(|p| p.workload.as_deref()).collect();
        let workload = match workload {
            Some(w) => Some(w),
            None if workloads.len() > 1 => {
                return Err(format!(
                    "{series} has several workloads ({}): give workload=",
                    workloads.into_iter().collect::<Vec<_>>().join(", ")
                ))
            }
            None => workloads.into_iter().next(),
        };
        let cpus = match cpus {
            Some(c) => Some(c.to_string()),
            None => self.cpus(series).pop(),
        };
        let mut c: Vec<(u32, f64)> = mine
            .iter()
            .filter(|p| p.metric == metric)
            .filter(|p| workload.is_none() || p.workload.as_deref() == workload)
            .filter(|p| cpus.is_none() || p.cpus == cpus)
            .filter_map(|p| Some((p.x()?, p.value)))
            .collect();
        c.sort_by_key(|p| p.0);
        if c.is_empty() {
            return Err(format!(
                "{series}: no {metric}{}{}",
                workload.map_or(String::new(), |w| format!(" for {w}")),
                cpus.map_or(String::new(), |c| format!(" on {c}"))
            ));
        }
        Ok(c)
    }

    fn cpus(&self, series: &str) -> Vec<String> {
        let order = self.data.cpus();
        let mine: BTreeSet<&str> = self
            .data
            .points
            .iter()
            .filter(|p| p.series == series)
            .filter_map(|p| p.cpus.as_deref())
            .collect();
        order
            .into_iter()
            .filter(|c| mine.contains(c))
            .map(String::from)
            .collect()
    }

    fn series(&self) -> Vec<String> {
        self.data.series().into_iter().map(String::from).collect()
    }

    fn metric(&self) -> &str {
        &self.metric
    }
}
