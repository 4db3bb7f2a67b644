//! Renderers of results. A run is rendered from its record
//! ([`crate::record::Run`]), where every figure was derived once when it
//! was measured, so the formats cannot disagree; one file per format
//! behind one [`Exporter`] trait.
//!
//! - [`text`]: the human report in sysbench's sections, and interval lines.
//! - [`json`]: the record itself, in the format of
//!   `schema/run.schema.json`.
//! - [`dist`]: what `dbsweep dist` prints.
//! - [`smack`]: Super Smack's query barrel report (`dbsweep smack`).
//! - [`doc`]: the format-neutral document a study report is built as.
//! - [`analysis`]: the study report's derived figures (pure functions).
//! - [`study`]: the study report, built as a [`doc::Doc`] from stored results.
//! - [`markdown`], [`html`], [`csv`] and [`report_json`]: the study
//!   report's formats.
//! - [`plot`]: charts of a [`doc::Chart`] as SVG (and PNG).
//! - [`html`]: a [`doc::Doc`] as one self-contained HTML page.
//! - [`run_doc`]: the [`doc::Doc`] of one run (`dbsweep run --report`).
//! - [`metrics`]: the machine-and-server part of a run's text and HTML
//!   reports.
//! - [`results`]: what `dbsweep results` prints: every stored point and
//!   the summaries of repeats, as a table or CSV.
//! - [`table_text`]: aligned text tables (also the study report as text).

pub mod analysis;
pub mod csv;
pub mod dist;
pub mod doc;
pub mod html;
pub mod json;
pub mod live;
pub mod markdown;
pub mod metrics;
pub mod pacing;
pub mod plot;
pub mod report_json;
pub mod results;
pub mod run_doc;
pub mod shards;
pub mod smack;
pub mod study;
pub mod table_text;
pub mod text;
pub mod tpcc;
pub mod types;

use crate::record::Run;

/// One output format of a run record.
pub trait Exporter {
    fn render(&self, record: &Run) -> anyhow::Result<Vec<u8>>;
}

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
