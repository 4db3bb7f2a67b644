//! TPC-H's figures of a run as the record's JSON carries them (clause
//! 5.4): which test the run was, each query's and refresh function's
//! timing, and the test's metric at its scale. Derived once from the rest
//! of the record (`workload::tpch::figures`, called by `engine::derive`)
//! and read by every report. A figure that could not be computed is null
//! beside the reason.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A TPC-H run's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tpch {
    /// The scale factor (`--scale`).
    #[schemars(range(min = 0))]
    pub scale_factor: f64,
    /// `power` (one stream) or `throughput` (S query streams and, with
    /// the refresh functions, the refresh stream).
    pub test: String,
    /// Query streams (S): 1 in a power test.
    #[schemars(range(min = 1))]
    pub streams: u64,
    /// Whether RF1 and RF2 ran (`--refresh`).
    pub refresh: bool,
    /// Whether the queries took the spec's validation parameters
    /// (`--qualification`).
    pub qualification: bool,
    /// Each query's and refresh function's timing interval, in the order
    /// Q1–Q22, RF1, RF2.
    pub timings: Vec<TpchTiming>,
    /// The geometric mean of the 22 queries' timing intervals, seconds
    /// (each query's mean over the streams in a throughput test); null
    /// when a query did not complete.
    #[schemars(range(min = 0))]
    pub query_geomean_s: Option<f64>,
    /// Power@Size (clause 5.4.1): 3600 × SF over the geometric mean of
    /// the power test's 22 query and 2 refresh intervals, each at least
    /// the longest over 1,000; null for a throughput test or when an
    /// interval is missing (`power_absent` says why).
    #[schemars(range(min = 0))]
    pub power: Option<f64>,
    pub power_absent: Option<String>,
    /// Throughput@Size (clause 5.4.2): S × 22 × 3600 / Ts × SF; null for
    /// a power test or when a query failed (`throughput_absent` says why).
    #[schemars(range(min = 0))]
    pub throughput: Option<f64>,
    pub throughput_absent: Option<String>,
    /// The test's measurement interval (Ts in a throughput test),
    /// seconds: from the first stream's start to the last one's end.
    #[schemars(range(min = 0))]
    pub elapsed_s: f64,
    /// Where the run departs from the spec's test, so its metric is not
    /// a TPC-H result (refresh functions off, validation parameters,
    /// fewer streams than the scale's minimum); empty when none.
    pub departures: Vec<String>,
}

/// One query's or refresh function's timing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TpchTiming {
    /// `Q1` … `Q22`, `RF1`, `RF2`.
    pub name: String,
    /// Executions completed (one per stream).
    pub count: u64,
    /// Executions that failed (a timeout, an error).
    pub failed: u64,
    /// Mean, shortest and longest interval, seconds; null when none
    /// completed.
    #[schemars(range(min = 0))]
    pub mean_s: Option<f64>,
    #[schemars(range(min = 0))]
    pub min_s: Option<f64>,
    #[schemars(range(min = 0))]
    pub max_s: Option<f64>,
}

impl Tpch {
    /// The axes of a chart of [`Tpch::numbered_ms`].
    pub const NUMBER_AXIS: &'static str = "query (23 = RF1, 24 = RF2)";
    pub const MS_AXIS: &'static str = "timing interval (ms)";

    /// Each timing's mean as (its number, ms): Q1–Q22 are 1–22, RF1 and
    /// RF2 23 and 24, as the reports' bar charts draw them.
    pub fn numbered_ms(&self) -> Vec<(f64, f64)> {
        let each = self.timings.iter().enumerate();
        each.filter_map(|(i, t)| t.mean_s.map(|s| ((i + 1) as f64, s * 1000.0)))
            .collect()
    }
}
