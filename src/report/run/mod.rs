//! One run's reports, from its record ([`crate::record::Run`]), where
//! every figure was derived once when it was measured, so they cannot
//! disagree:
//!
//! - [`text`]: the human report in sysbench's sections.
//! - [`live`]: the preamble and the interval lines printed as it runs.
//! - [`feed`]: what the live feed knows of the point being run, and
//!   [`openmetrics`] that as a Prometheus scrape reads it.
//! - [`document`]: the run's [`crate::report::doc::Doc`] (HTML, Markdown),
//!   with its sections from [`pacing`], [`types`], [`shards`] and
//!   [`metrics`] (the machine-and-server part, also of the text report).
//! - [`waits`]: where the server's sessions waited, beside [`profile`]:
//!   the on-CPU profiles, their top functions and flame graphs.
//! - [`tpcc`]: TPC-C's results page in sentences.
//! - [`tpch`]: TPC-H's test and metric in sentences.
//! - [`csv`]: the run in the study report's CSV columns.
//! - [`smack`]: Super Smack's query barrel report (`dbsweep smack`).

pub mod csv;
pub mod document;
pub mod feed;
pub mod live;
pub mod metrics;
pub mod openmetrics;
pub mod pacing;
pub mod profile;
pub mod shards;
pub mod smack;
pub mod text;
pub mod tpcc;
pub mod tpch;
pub mod types;
pub mod waits;

use crate::record::Run;

/// The share of the machine's CPU above which the client may be the bottleneck.
pub const CPU_WARN_SHARE: f64 = 0.25;

/// Per second of the record's measured window (0 for an empty window).
pub fn per_second(run: &Run, n: u64) -> f64 {
    let seconds = run.result.measured_s;
    if seconds > 0.0 {
        n as f64 / seconds
    } else {
        0.0
    }
}
