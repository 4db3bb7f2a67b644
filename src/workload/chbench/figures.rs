//! CH-benCHmark's figures of a run, derived once from the rest of the
//! record (`engine::derive` calls [`of`]) into `result.chbench`: the
//! terminals and streams the point ran, tpmC (New-Orders per minute, as
//! TPC-C counts them: `result.tpcc` has the rest of TPC-C's page) and the
//! queries completed per hour over every stream (QphH), with each query's
//! timing.

use crate::record::chbench::Chbench;
use crate::record::tpch::TpchTiming;
use crate::record::Run;
use crate::workload::tpch::figures::{geomean, timing};

/// The queries' transaction type names, in order.
pub const QUERY_NAMES: [&str; 22] = [
    "Q1", "Q2", "Q3", "Q4", "Q5", "Q6", "Q7", "Q8", "Q9", "Q10", "Q11", "Q12", "Q13", "Q14", "Q15",
    "Q16", "Q17", "Q18", "Q19", "Q20", "Q21", "Q22",
];

/// Whether transaction type `name` is one of the queries.
pub fn is_query(name: &str) -> bool {
    QUERY_NAMES.contains(&name)
}

/// The figures of `r`, if it is a CH-benCHmark run.
pub fn of(r: &Run) -> Option<Chbench> {
    if r.workload.name != "chbench" {
        return None;
    }
    let streams: u64 = r.workload.options.get("analytic-streams")?.parse().ok()?;
    let streams = streams.min(r.run.threads);
    let terminals = r.run.threads - streams;
    let timings: Vec<TpchTiming> = r
        .result
        .transaction_types
        .iter()
        .filter(|t| is_query(&t.name))
        .map(timing)
        .collect();
    let queries: u64 = timings.iter().map(|t| t.count).sum();
    let queries_failed = timings.iter().map(|t| t.failed).sum();
    let hours = r.result.measured_s / 3600.0;
    let qphh = (streams > 0 && hours > 0.0).then(|| queries as f64 / hours);
    let tpmc = r
        .result
        .tpcc
        .as_ref()
        .map(|t| t.tpmc)
        .filter(|_| terminals > 0);
    let complete = timings.len() == 22 && timings.iter().all(|t| t.mean_s.is_some());
    let query_geomean_s = complete.then(|| geomean(timings.iter().filter_map(|t| t.mean_s)));
    Some(Chbench {
        terminals,
        analytic_streams: streams,
        tpmc,
        qphh,
        queries,
        queries_failed,
        query_geomean_s,
        timings,
    })
}
