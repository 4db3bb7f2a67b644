//! Every figure of a run record that is derived from others: rates per
//! second of the window, latency summaries read from the histograms beside
//! them, transaction types' shares, client CPU per transaction, the
//! intervals' percentiles, and a workload's own results page (TPC-C's,
//! `workload::tpcc::figures`).
//!
//! [`derive`] reads only the record, never the engine's `RunResult`: the
//! record of one process (`point::record`) and the merge of shards'
//! records (`merge`) both fill in the measured parts — counters, windows,
//! histograms — and then call it, so a merged run's figures are computed
//! by the same code as one process's, from the same kind of data.

use crate::record::{self, Histogram as RecordHistogram};
use crate::stats::histogram::Histogram;
use crate::stats::summary::{summarize, LatencySummary};

/// The percentiles of each transaction type's summary: TPC-W's 90th
/// (its limits are on it) between the median and the 99th.
pub const TYPE_PERCENTILES: &[f64] = &[50.0, 90.0, 99.0];

/// Fills in every derived figure of `run` from its measured parts. Fails
/// (naming it) on a histogram whose parts disagree.
pub fn derive(run: &mut record::Run) -> Result<(), String> {
    let percentiles = run.run.percentiles.clone();
    let r = &mut run.result;
    let seconds = r.measured_s;
    let per_s = |n: u64| {
        if seconds > 0.0 {
            n as f64 / seconds
        } else {
            0.0
        }
    };
    r.queries.total = r.queries.read + r.queries.write + r.queries.other;
    r.tps = per_s(r.transactions);
    r.qps = per_s(r.queries.total);
    let cpu_s = r.client_cpu.total_s();
    let cpu_per = |n: u64| (n > 0).then(|| cpu_s * 1e6 / n as f64);
    r.client_cpu.us_per_transaction = cpu_per(r.transactions);
    r.client_cpu.us_per_query = cpu_per(r.queries.total);
    r.client_cpu.share_of_machine = if seconds > 0.0 {
        cpu_s / (seconds * r.client_cpu.cpus as f64)
    } else {
        0.0
    };
    if let Some(hs) = &r.histograms {
        r.latency = summary(&hs.transaction, &percentiles)?;
        r.statements = Vec::new();
        for (kind, h) in hs.statements.iter() {
            if let Some(latency) = summary(h, &percentiles)? {
                r.statements.push(record::StatementLatency {
                    kind: kind.to_string(),
                    latency,
                });
            }
        }
        let total: u64 = hs.types.iter().map(|(_, h)| h.count).sum();
        for t in &mut r.transaction_types {
            let h = match hs.types.get(&t.name) {
                Some(h) => stats(h)?,
                None => Histogram::new(),
            };
            t.count = h.count();
            t.per_s = per_s(t.count);
            t.share_pct = if total > 0 {
                100.0 * t.count as f64 / total as f64
            } else {
                0.0
            };
            t.latency = summarize(&h, TYPE_PERCENTILES).map(|s| latency(&s));
            let p90 = h.value_at_percentile(90.0);
            t.p90_exceeded = match (t.p90_limit_s, p90) {
                (Some(l), Some(p)) => Some(p > (l * 1e9).round() as u64),
                _ => None,
            };
        }
        if let Some(p) = &mut r.pacing {
            p.service = opt_summary(hs.service.as_ref(), &percentiles)?;
            p.lag = opt_summary(hs.lag.as_ref(), &percentiles)?;
        }
    }
    if let Some(p) = &mut r.pacing {
        p.achieved_per_s = r.tps;
        p.offered_per_s = p.offered.map(per_s);
    }
    if let Some(intervals) = r.intervals.as_mut_slice() {
        for i in intervals {
            interval(i)?;
        }
    }
    workload_figures(run);
    Ok(())
}

/// The workload's own results page from the derived figures, the server's
/// metrics and the consistency check: TPC-C's, TPC-H's.
fn workload_figures(run: &mut record::Run) {
    run.result.tpcc = crate::workload::tpcc::figures::of(run);
    run.result.tpch = crate::workload::tpch::figures::of(run);
    run.result.chbench = crate::workload::chbench::figures::of(run);
}

/// Puts the consistency conditions checked after the run into its record,
/// with the figures that state them (TPC-C's verdict).
pub fn checked(run: &mut record::Run, conditions: Vec<record::ConditionResult>) {
    run.result.consistency = Some(conditions);
    workload_figures(run);
}

/// Puts the workload's statements' plans, read after the run, into its
/// record.
pub fn planned(run: &mut record::Run, plans: Vec<(String, String)>) {
    run.result.plans = plans
        .into_iter()
        .map(|(name, plan)| record::QueryPlan { name, plan })
        .collect();
}

/// Puts the server's and the machine's metrics into the run's record, with
/// the figures read from them (TPC-C's NOPM and TPM by the database).
pub fn measured(run: &mut record::Run, metrics: record::Metrics) {
    run.result.metrics = Some(metrics);
    workload_figures(run);
}

/// A record written before a workload's figures were derived into it (a
/// results database or a run file of an older version) gets them from the
/// rest of the record; one that has them keeps them.
pub fn older(run: &mut record::Run) {
    if run.result.tpcc.is_none() && run.result.tpch.is_none() && run.result.chbench.is_none() {
        workload_figures(run);
    }
}

/// Fills in one interval's percentiles from its histograms: done as each
/// interval closes (a run's series goes to its file complete), and again
/// here for intervals held in memory (a merge).
pub fn interval(i: &mut record::Interval) -> Result<(), String> {
    if let Some(h) = &i.histogram {
        let h = stats(h)?;
        i.p50_us = h.value_at_percentile(50.0).map(us);
        i.p95_us = h.value_at_percentile(95.0).map(us);
        i.p99_us = h.value_at_percentile(99.0).map(us);
        i.max_us = h.max().map(us);
    }
    if let Some(h) = &i.lag_histogram {
        let h = stats(h)?;
        i.lag_p99_us = h.value_at_percentile(99.0).map(us);
        i.lag_max_us = h.max().map(us);
    }
    Ok(())
}

/// The stats module's histogram of a recorded one, checked.
pub fn stats(h: &RecordHistogram) -> Result<Histogram, String> {
    Histogram::try_from(h)
}

fn summary(h: &RecordHistogram, percentiles: &[f64]) -> Result<Option<record::Latency>, String> {
    Ok(summarize(&stats(h)?, percentiles).map(|s| latency(&s)))
}

fn opt_summary(
    h: Option<&RecordHistogram>,
    percentiles: &[f64],
) -> Result<Option<record::Latency>, String> {
    h.map_or(Ok(None), |h| summary(h, percentiles))
}

pub(super) fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

/// A latency summary in the record's unit (µs, measured in ns).
fn latency(l: &LatencySummary) -> record::Latency {
    record::Latency {
        count: l.count,
        min_us: us(l.min_ns),
        avg_us: l.avg_ns / 1e3,
        max_us: us(l.max_ns),
        sum_us: l.sum_ns as f64 / 1e3,
        percentiles: l
            .percentiles
            .iter()
            .map(|p| record::Percentile {
                p: p.p,
                us: us(p.ns),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::tpcc::figures::tests::run;

    #[test]
    fn a_tpcc_record_carries_its_results_page_and_keeps_it_current() {
        let mut r = run("off", [88, 86, 8, 8, 8, 2]);
        derive(&mut r).unwrap();
        let t = r.result.tpcc.clone().expect("derived with the record");
        assert_eq!((t.tpmc, t.nopm), (45.0, 44.0));
        assert!(!t.consistency.checked);
        // The check after the run changes the verdict it carries.
        let failed = record::ConditionResult {
            name: "3.3.2.9".into(),
            holds: false,
            broken: 1,
            detail: Vec::new(),
        };
        checked(&mut r, vec![failed]);
        let c = &r.result.tpcc.as_ref().unwrap().consistency;
        assert_eq!((c.checked, c.holds), (true, Some(false)));
        // A record of an older version, without them, gets them; one that
        // has them keeps its own.
        let mut old = r.clone();
        old.result.tpcc = None;
        older(&mut old);
        assert_eq!(old.result.tpcc, r.result.tpcc);
        let mut kept = r.clone();
        kept.result.tpcc.as_mut().unwrap().tpmc = 1.0;
        older(&mut kept);
        assert_eq!(kept.result.tpcc.unwrap().tpmc, 1.0);
        // Not TPC-C: nothing.
        let mut other = record::Run::sample();
        derive(&mut other).unwrap();
        assert_eq!(other.result.tpcc, None);
    }
}
