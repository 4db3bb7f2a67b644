//! The commands: one file per verb of the command line, each gluing the
//! layers below into what the verb does. A command receives a typed
//! [`Request`] (the command line resolved by `cli`: no strings left to
//! match) and returns how the run ended.
//!
//! - [`run`]: `prepare`, `run` and `cleanup`, sysbench's three verbs.
//! - [`check`]: `check`, a workload's consistency conditions (TPC-C's).
//! - [`study`]: `study`, a whole campaign into a results database.
//! - [`report`]: `report` and `results`, what a results database holds.
//! - [`smack`]: `smack` (a `.smack` file's main block) and `gen-data`.
//! - [`server`]: `server start|stop|status`.
//! - [`nodes`]: `run --nodes N` (a coordinator) and `worker`: the glue to
//!   the distributed runtime (`crate::nodes`).
//! - [`dist`]: `dist`, what an access pattern looks like.
//! - [`workloads`]: `workloads`, every workload with its options.
//! - [`k8s`]: `k8s`, Kubernetes manifests for a run on many pods.
//! - [`prometheus`]: the live feed of `run --prometheus` and a study's
//!   `prometheus = "ADDR"`.

pub mod check;
pub mod dist;
pub mod find_rate;
pub mod k8s;
pub mod merge;
pub mod nodes;
pub mod prometheus;
pub mod report;
pub mod run;
pub mod server;
pub mod smack;
pub mod study;
pub mod workloads;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::Context;

use crate::driver::check_sqlite_path;
use crate::driver::{self, Connection, Target};
use crate::util::paths::write_atomically;
use crate::UsageError;

/// A command line, resolved: what to do and with which typed values.
pub enum Request {
    Prepare(run::TargetRequest),
    Run(Box<run::RunRequest>),
    /// `run … --nodes N`: the run split over N workers, coordinated here.
    Coordinate(Box<run::RunRequest>, crate::nodes::Coordinator),
    /// `run … --find-rate`: probes bisecting to the highest rate that holds.
    FindRate(Box<run::RunRequest>, find_rate::FindRate),
    Cleanup(run::TargetRequest),
    Check(run::TargetRequest),
    Merge(merge::MergeRequest),
    Worker(crate::nodes::worker::WorkerRequest),
    Workloads,
    Dist(dist::DistRequest),
    Server(server::ServerRequest),
    Study(study::StudyRequest),
    Results(report::ResultsRequest),
    Report(report::ReportRequest),
    Smack(smack::SmackRequest),
    GenData(smack::GenDataRequest),
    K8s(Box<k8s::K8sRequest>),
}

/// How a command ended, for the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    Ok,
    /// A run was aborted by an error (exit status 1).
    Aborted,
    /// Ctrl-C (exit status 130).
    Interrupted,
}

/// Does what `req` asks.
pub fn execute(req: Request) -> anyhow::Result<RunStatus> {
    let ok = |r: anyhow::Result<()>| r.map(|_| RunStatus::Ok);
    match req {
        Request::Prepare(t) => ok(run::prepare(&t)),
        Request::Run(r) => run::run(*r),
        Request::Coordinate(r, n) => nodes::coordinate(*r, n),
        Request::FindRate(r, f) => find_rate::find_rate(*r, &f),
        Request::Cleanup(t) => ok(run::cleanup(&t)),
        Request::Check(t) => check::check(&t),
        Request::Merge(m) => merge::merge(&m),
        Request::Worker(w) => nodes::worker(&w),
        Request::Workloads => ok(workloads::list()),
        Request::Dist(d) => ok(dist::dist(&d)),
        Request::Server(s) => ok(server::server(s)),
        Request::Study(s) => study::study(&s),
        Request::Results(r) => ok(report::results(&r)),
        Request::Report(r) => ok(report::report(&r)),
        Request::Smack(s) => smack::smack(&s),
        Request::GenData(g) => ok(smack::gen_data(&g)),
        Request::K8s(k) => ok(k8s::write(&k)),
    }
}

/// Where `--json` goes (checked by `cli` before anything runs).
#[derive(Debug, Clone, PartialEq)]
pub enum JsonOut {
    Stdout,
    File(PathBuf),
}

impl JsonOut {
    /// Writes a run record there, streamed (its series is read from its
    /// file as it is written, never held whole); a file atomically.
    fn write_run(&self, run: &crate::record::Run) -> anyhow::Result<()> {
        use std::io::Write;
        match self {
            JsonOut::Stdout => {
                let mut out = std::io::BufWriter::new(std::io::stdout().lock());
                crate::record::write(run, &mut out)?;
                Ok(out.flush()?)
            }
            JsonOut::File(p) => {
                let tmp = p.with_extension(format!("tmp-{}", std::process::id()));
                let written = (|| -> anyhow::Result<()> {
                    let file = std::fs::File::create(&tmp)?;
                    let mut out = std::io::BufWriter::new(file);
                    crate::record::write(run, &mut out)?;
                    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
                    Ok(())
                })();
                if let Err(e) = written {
                    let _ = std::fs::remove_file(&tmp);
                    return Err(e.context(format!("Could not write '{}'", tmp.display())));
                }
                std::fs::rename(&tmp, p).with_context(|| {
                    format!("Could not move '{}' to '{}'", tmp.display(), p.display())
                })
            }
        }
    }

    /// The series file beside a `--json FILE`: the run's intervals and
    /// samples as they close, `FILE` with `.series.jsonl.gz` for its extension.
    fn series_path(&self) -> Option<PathBuf> {
        match self {
            JsonOut::Stdout => None,
            JsonOut::File(p) => Some(p.with_extension("series.jsonl.gz")),
        }
    }

    /// Writes each profile's folded stacks beside a `--json FILE`, gzipped,
    /// as `FILE` with `.ROLE.folded.gz` for its extension, and names the
    /// file in the record (before the record is written).
    fn write_profiles(&self, run: &mut crate::record::Run) -> anyhow::Result<()> {
        match self {
            JsonOut::File(p) => run.write_folded_beside(p),
            JsonOut::Stdout => Ok(()),
        }
    }

    /// Writes `bytes` there (a file atomically).
    fn write(&self, bytes: &[u8]) -> anyhow::Result<()> {
        use std::io::Write;
        match self {
            JsonOut::Stdout => Ok(std::io::stdout().write_all(bytes)?),
            JsonOut::File(p) => write_atomically(p, bytes),
        }
    }
}

/// A merged run's outputs, as one process's: the text summary on standard
/// output, the intervals as `--hdr-log`, the record as `--json`, the HTML
/// report as `--report`.
fn emit_run(run: &mut crate::record::Run, out: &run::Outputs) -> anyhow::Result<()> {
    use crate::report::export::{Exporter, Html, Text};
    use std::io::Write;
    let (json, report) = (out.json.as_ref(), out.report.as_deref());
    std::io::stdout().write_all(&Text.run(run)?.report)?;
    if let Some(p) = &out.hdr_log {
        write_hdr_log(p, run)?;
    }
    if let Some(out) = json {
        out.write_profiles(run)?;
        out.write_run(run)?;
    }
    if let Some(p) = report {
        write_atomically(p, &Html.run(run)?.report)?;
        eprintln!("Report written to {}", p.display());
    }
    Ok(())
}

/// `--hdr-log FILE`: the record's intervals as an HdrHistogram interval
/// log (`stats::hdrlog`), written beside and renamed into place, so the
/// file is whole or absent. A run stopped by Ctrl-C has its record too,
/// with the intervals that closed before it.
fn write_hdr_log(path: &Path, run: &crate::record::Run) -> anyhow::Result<()> {
    use crate::stats::hdrlog;
    use std::io::Write;
    let queued = run
        .result
        .pacing
        .as_ref()
        .is_some_and(|p| p.offered.is_some());
    let from = if queued {
        "each transaction's intended start (its arrival, or the end of its user's think time), as the run's latency"
    } else {
        "each transaction's start, as the run's latency"
    };
    let comments = [
        format!(
            "dbsweep {}: {}, the transaction latency of each interval",
            run.tool.version, run.workload.name
        ),
        format!("values in nanoseconds from {from}; Interval_Max in milliseconds"),
        format!(
            "intervals tagged {} lie (at least partly) in the warmup",
            hdrlog::WARMUP_TAG
        ),
    ];
    let start_us = run
        .released_unix_us
        .unwrap_or(run.started_unix_s.saturating_mul(1_000_000));
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    let write = || -> anyhow::Result<()> {
        let file = std::fs::File::create(&tmp)?;
        let mut w = std::io::BufWriter::new(file);
        w.write_all(hdrlog::header(&comments, start_us).as_bytes())?;
        for i in run.result.intervals.try_iter() {
            let i = i.map_err(anyhow::Error::msg)?;
            if let Some(line) = hdrlog::interval_line(&i) {
                w.write_all(line.as_bytes())?;
            }
        }
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)?;
        Ok(())
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        e.context(format!("Could not write --hdr-log '{}'", path.display()))
    })?;
    eprintln!("HdrHistogram log written to {}", path.display());
    Ok(())
}

/// Connects once, turning a failure into one clear message (the drivers'
/// messages name the server, user and database themselves).
fn connect_checked(target: &Target) -> anyhow::Result<Box<dyn Connection>> {
    driver::connect(target).map_err(|e| UsageError(e.message).into())
}

/// Installs the Ctrl-C / SIGTERM handler: the first signal stops the run
/// cleanly (results so far are reported), a second one exits at once —
/// stopping the workers a coordinator started first, so none is left
/// running.
fn cancel_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let f = flag.clone();
    let _ = ctrlc::set_handler(move || {
        if f.swap(true, Ordering::SeqCst) {
            eprintln!("\nInterrupted again: exiting now.");
            crate::nodes::launcher::stop_all();
            std::process::exit(130);
        }
        eprintln!("\nInterrupted: finishing in-flight transactions and reporting what was measured (Ctrl-C again to exit now).");
    });
    flag
}

/// The exit status of runs that each ended as `stops` say.
fn status_of<'a>(stops: impl IntoIterator<Item = &'a crate::record::StopReason>) -> RunStatus {
    use crate::record::StopReason;
    let stops: Vec<_> = stops.into_iter().collect();
    if stops.contains(&&StopReason::Interrupted) {
        RunStatus::Interrupted
    } else if stops.contains(&&StopReason::Aborted) {
        RunStatus::Aborted
    } else {
        RunStatus::Ok
    }
}

/// Prints one line per condition (a broken one with what breaks it),
/// each after `indent`, and a summary; true when every one holds.
fn print_conditions(
    conditions: &[crate::workload::Condition],
    display: &str,
    started: std::time::Instant,
    indent: &str,
) -> bool {
    let failed = conditions.iter().filter(|c| !c.holds).count();
    for c in conditions {
        if c.holds {
            println!("{indent}ok    {}", c.name);
        } else {
            println!("{indent}FAIL  {} ({} broken)", c.name, c.count);
            for f in &c.failures {
                println!("{indent}        {f}");
            }
            if c.count > c.failures.len() as u64 {
                println!(
                    "{indent}        … and {} more",
                    c.count - c.failures.len() as u64
                );
            }
        }
    }
    println!(
        "{indent}{} of {} conditions hold on {display} ({:.2}s)",
        conditions.len() - failed,
        conditions.len(),
        started.elapsed().as_secs_f64()
    );
    failed == 0
}
