//! Renderers of results. One file per format behind one [`Exporter`] trait;
//! the figures every format shows are derived once, in [`Figures`], so the
//! formats cannot disagree.
//!
//! - [`text`]: the human report in sysbench's sections, and interval lines.
//! - [`json`]: everything, in the documented format of
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

pub mod analysis;
pub mod csv;
pub mod dist;
pub mod doc;
pub mod html;
pub mod json;
pub mod markdown;
pub mod plot;
pub mod report_json;
pub mod run_doc;
pub mod smack;
pub mod study;
pub mod table_text;
pub mod text;

use crate::driver::ErrorKind;
use crate::engine::{RunConfig, RunResult};
use crate::metrics::machine::Machine;
use crate::stats::fairness::{fairness, Fairness};
use crate::stats::summary::{summarize, LatencySummary};
use crate::workload::RandConfig;

/// A finished run and everything that produced it.
pub struct RunRecord<'a> {
    pub workload: &'a str,
    /// Effective workload options (name, value).
    pub options: Vec<(String, String)>,
    /// Target URL without password.
    pub target: String,
    pub dialect: &'static str,
    pub rand: RandConfig,
    pub config: &'a RunConfig,
    pub result: &'a RunResult,
    pub machine: Machine,
    /// Percentiles reported in the latency sections.
    pub percentiles: Vec<f64>,
    /// Seconds since the Unix epoch when the run started.
    pub started_unix_s: u64,
}

impl<'a> RunRecord<'a> {
    /// The record of `result`, measured with workload `w` on `target`.
    pub fn new(
        w: &'a dyn crate::workload::Workload,
        target: &crate::driver::Target,
        rand: RandConfig,
        config: &'a RunConfig,
        result: &'a RunResult,
        percentiles: Vec<f64>,
        started_unix_s: u64,
    ) -> RunRecord<'a> {
        RunRecord {
            workload: w.name(),
            options: w
                .options()
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            target: target.display.clone(),
            dialect: target.dialect().name(),
            rand,
            config,
            result,
            machine: Machine::describe(),
            percentiles,
            started_unix_s,
        }
    }
}

/// One output format.
pub trait Exporter {
    fn render(&self, record: &RunRecord<'_>) -> anyhow::Result<Vec<u8>>;
}

/// Figures derived from a run, shared by every format.
pub struct Figures {
    pub seconds: f64,
    pub tps: f64,
    pub qps: f64,
    pub reads_ps: f64,
    pub writes_ps: f64,
    pub others_ps: f64,
    /// Errors that did not abort the run (retried or ignored).
    pub ignored_errors: u64,
    pub errors_ps: f64,
    pub reconnects_ps: f64,
    pub latency: Option<LatencySummary>,
    /// (statement type, summary) for every type that ran.
    pub statements: Vec<(String, LatencySummary)>,
    pub fairness: Fairness,
    pub cpu_s: f64,
    pub cpu_us_per_txn: Option<f64>,
    pub cpu_us_per_query: Option<f64>,
    /// Client CPU as a share of all the machine's CPUs over the window.
    pub cpu_share: f64,
}

/// The share of the machine's CPU above which the client may be the bottleneck.
pub const CPU_WARN_SHARE: f64 = 0.25;

impl Figures {
    pub fn of(r: &RunRecord<'_>) -> Figures {
        let res = r.result;
        let c = &res.counters;
        let seconds = res.measured.as_secs_f64();
        let per_s = |n: u64| {
            if seconds > 0.0 {
                n as f64 / seconds
            } else {
                0.0
            }
        };
        let fatal_errors = u64::from(res.fatal.is_some());
        let ignored_errors = c.total_errors() - fatal_errors.min(c.total_errors());
        let cpu_s = res.cpu.total().as_secs_f64();
        let per = |n: u64| (n > 0).then(|| cpu_s * 1e6 / n as f64);
        let statements = res
            .statement_kinds
            .iter()
            .zip(&res.stmt_latency)
            .filter_map(|(k, h)| summarize(h, &r.percentiles).map(|s| (k.clone(), s)))
            .collect();
        Figures {
            seconds,
            tps: per_s(c.transactions),
            qps: per_s(c.queries()),
            reads_ps: per_s(c.reads),
            writes_ps: per_s(c.writes),
            others_ps: per_s(c.others),
            ignored_errors,
            errors_ps: per_s(ignored_errors),
            reconnects_ps: per_s(c.reconnects),
            latency: summarize(&res.txn_latency, &r.percentiles),
            statements,
            fairness: fairness(&res.clients),
            cpu_s,
            cpu_us_per_txn: per(c.transactions),
            cpu_us_per_query: per(c.queries()),
            cpu_share: if seconds > 0.0 {
                cpu_s / (seconds * res.cpus as f64)
            } else {
                0.0
            },
        }
    }

    /// Errors of each kind, in a fixed order.
    pub fn errors(r: &RunRecord<'_>) -> Vec<(ErrorKind, u64)> {
        ErrorKind::ALL
            .into_iter()
            .map(|k| (k, r.result.counters.errors[k.index()]))
            .collect()
    }
}
