//! CH-benCHmark's figures of a run as the record's JSON carries them: the
//! point's mix of loads (terminals and analytical streams), tpmC beside
//! the queries per hour, and each query's timing. Derived once from the
//! rest of the record (`workload::chbench::figures`, called by
//! `engine::derive`) beside TPC-C's own figures (`result.tpcc`), and read
//! by every report.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::tpch::TpchTiming;

/// A CH-benCHmark run's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Chbench {
    /// TPC-C terminals (connections running transactions).
    pub terminals: u64,
    /// Analytical streams (connections running the 22 queries).
    pub analytic_streams: u64,
    /// New-Orders per minute (TPC-C's tpmC, rolled-back ones included);
    /// null without terminals.
    #[schemars(range(min = 0))]
    pub tpmc: Option<f64>,
    /// Queries completed per hour of the measured window over all
    /// streams (CH-benCHmark's QphH); null without streams.
    #[schemars(range(min = 0))]
    pub qphh: Option<f64>,
    /// Queries completed in the window.
    pub queries: u64,
    /// Queries that failed (a `--query-timeout`).
    pub queries_failed: u64,
    /// The geometric mean of the 22 queries' mean times, seconds; null
    /// while a query has not completed once.
    #[schemars(range(min = 0))]
    pub query_geomean_s: Option<f64>,
    /// Each query's timing, Q1–Q22.
    pub timings: Vec<TpchTiming>,
}
