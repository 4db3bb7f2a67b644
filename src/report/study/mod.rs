//! The study report: stored results → derived figures ([`Report`]) →
//! document ([`Doc`](crate::report::doc::Doc)).
//!
//! [`load()`] reads a study from its results database ([`StudyData`]).
//! [`analyze`] groups a study's points into the seeds' shape — one panel
//! per workload entry and CPU set, one series per target/variant, one
//! column per client count — summarises the repeats of each cell and
//! derives peaks, sag, collapse points, rankings, CPU scalability, the
//! parameter sweep and the comparison with a baseline study, using the pure
//! functions of [`analysis`], and words them as conclusions.
//! [`document`] lays that out as a [`Doc`](crate::report::doc::Doc) with
//! tables, charts and conclusions; every format (HTML, Markdown, text)
//! renders that one document, and CSV and JSON serialise the [`Report`]
//! itself, so no two formats can disagree on a number.
//!
//! Skipped and failed points are shown with their reason, never as zero.
//!
//! The parts, one file each, each using only those listed before it:
//! - `analysis`: the pure functions every figure is derived with (peak,
//!   sag, collapse, ranking, scalability, change beyond the noise).
//! - `servers`: each target's server — its release, the `--version`
//!   lines of its programs, the name the report gives it.
//! - `load`: [`StudyData`] and [`load()`], reading from the results store.
//! - `model`: what a report is made of ([`Report`], [`Panel`],
//!   [`SeriesData`], [`CellData`], …).
//! - `names`: which points count, how panels, series and CPU sets are
//!   grouped and named.
//! - `usage`: the machine's and the server's figures of one point (CPU
//!   over its CPU set, server counters, waits) and what bounded a peak.
//! - `figures`: panels, series and cells from the stored points.
//! - `comparisons`: the parameter sweep, CPU scalability, the baseline.
//! - `conclusions`: the report's sentences and the header facts.
//! - `offered`: the offered-load sweeps (paced points): levels, the
//!   sustained load, their sentences and blocks; `searched`: the searches
//!   for the highest sustained rate (`rates = "find"`), block by block.
//! - `analyze`: [`analyze`], all of the above into a [`Report`].
//! - `tables`, `charts`, `sections`, `machine`: the blocks of the document.
//! - `sharded`: the coordinated points (`nodes = N`) beside their shards.
//! - `layout`: [`document`], the blocks in the order a reader wants them.
//! - `csv` and `json`: the study's own CSV records and its JSON
//!   (`dbsweep-report/1`), both serialising the [`Report`].
//!
//! This file holds what they all speak of: the [`Metric`] a report shows
//! and the [`Options`] it is asked with.

pub mod analysis;
mod analyze;
mod charts;
mod compared;
mod comparisons;
mod conclusions;
pub mod csv;
mod figures;
mod floor;
pub mod json;
mod judged;
mod layout;
mod load;
mod machine;
mod measured;
mod model;
mod names;
pub use crate::workload::unit::{unit, Unit};
mod chbench;
mod offered;
pub mod paired;
mod pairs;
mod profiles;
pub mod published;
pub mod reproduce;
mod searched;
mod sections;
mod servers;
pub mod sharded;
pub mod statement;
mod tables;
mod tpcc;
mod tpch;
mod usage;
mod users;
mod verdicts;

pub use analyze::analyze;
pub use layout::document;
pub use load::{load, StudyData};
pub use model::{
    CellData, ComparedCell, ComparedPanel, ComparedSeries, Comparison, KindLatency, Panel, Report,
    Scalability, ScalingSeries, SeriesData, Stat, StatementLatency, StudyFacts, Sweep, SweepRow,
    COLLAPSE_FRACTION, SCHEMA_ID,
};
pub use servers::{TargetServer, AGAIN};

use serde::Serialize;

use crate::store::Metrics;
use crate::util::units::ms_ms;
use crate::UsageError;

/// The figure a report's tables show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    Tps,
    Qps,
    P95,
    P99,
    Errors,
    /// The server's CPU per transaction, µs.
    ServerCpu,
}

impl Metric {
    pub const ALL: [Metric; 6] = [
        Metric::Tps,
        Metric::Qps,
        Metric::P95,
        Metric::P99,
        Metric::Errors,
        Metric::ServerCpu,
    ];

    /// The name `--metric` takes.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Tps => "tps",
            Metric::Qps => "qps",
            Metric::P95 => "p95",
            Metric::P99 => "p99",
            Metric::Errors => "errors",
            Metric::ServerCpu => "server-cpu",
        }
    }

    pub fn parse(s: &str) -> Result<Metric, UsageError> {
        Metric::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                UsageError(format!(
                    "unknown metric '{s}': use one of {}",
                    Metric::ALL.map(Metric::name).join(", ")
                ))
            })
    }

    /// What the table cells are, with the unit.
    pub fn title(self) -> &'static str {
        match self {
            Metric::Tps => "transactions per second",
            Metric::Qps => "queries per second",
            Metric::P95 => "95th percentile transaction latency (ms)",
            Metric::P99 => "99th percentile transaction latency (ms)",
            Metric::Errors => "errors per second",
            Metric::ServerCpu => "server CPU per transaction (µs)",
        }
    }

    /// An axis label with its unit.
    pub fn axis(self) -> &'static str {
        match self {
            Metric::Tps => "transactions/s",
            Metric::Qps => "queries/s",
            Metric::P95 => "p95 latency (ms)",
            Metric::P99 => "p99 latency (ms)",
            Metric::Errors => "errors/s",
            Metric::ServerCpu => "server CPU per transaction (µs)",
        }
    }

    /// [`Metric::title`] for a workload of `unit`: throughput in its own
    /// words.
    pub fn title_in(self, unit: Unit) -> &'static str {
        match self {
            Metric::Tps => unit.per_second,
            m => m.title(),
        }
    }

    /// [`Metric::axis`] for a workload of `unit`.
    pub fn axis_in(self, unit: Unit) -> &'static str {
        match self {
            Metric::Tps => unit.per_s,
            m => m.axis(),
        }
    }

    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::Tps | Metric::Qps)
    }

    /// The metric of one finished run.
    pub fn of(self, m: &Metrics) -> Option<f64> {
        match self {
            Metric::Tps => Some(m.tps),
            Metric::Qps => Some(m.qps),
            Metric::P95 => m.p95_ms(),
            Metric::P99 => m.p99_ms(),
            Metric::Errors => m.errors_per_s(),
            Metric::ServerCpu => m.server_cpu_us_per_txn,
        }
    }

    /// A value as the tables show it.
    pub fn format(self, v: f64) -> String {
        match self {
            Metric::P95 | Metric::P99 => ms_ms(v),
            Metric::ServerCpu => format!("{v:.0}"),
            _ => format!("{v:.2}"),
        }
    }

    fn stat(self, c: &CellData) -> Option<&Stat> {
        match self {
            Metric::Tps => c.tps.as_ref(),
            Metric::Qps => c.qps.as_ref(),
            Metric::P95 => c.p95_ms.as_ref(),
            Metric::P99 => c.p99_ms.as_ref(),
            Metric::Errors => c.errors_ps.as_ref(),
            Metric::ServerCpu => c.server_cpu_us_per_txn.as_ref(),
        }
    }
}

/// What the report is asked for.
#[derive(Debug, Clone)]
pub struct Options {
    /// The figure of the main tables.
    pub metric: Metric,
    /// The client count of the per-point sections (time series, latency
    /// distribution, statements); default: where the best series peaks.
    pub point: Option<u32>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            metric: Metric::Tps,
            point: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_parse_by_name() {
        assert_eq!(Metric::parse("p99").unwrap(), Metric::P99);
        let e = Metric::parse("tpm").unwrap_err().to_string();
        assert!(e.contains("tps, qps, p95, p99, errors, server-cpu"), "{e}");
        assert_eq!(Metric::parse("server-cpu").unwrap(), Metric::ServerCpu);
        assert!(!Metric::ServerCpu.higher_is_better());
    }
}
