//! `run --nodes N` and `worker`: the glue between their requests and the
//! distributed runtime (`crate::nodes`) — what the coordinator prints
//! before and after its workers run, and a worker's exit status.

use std::io::Write;

use super::run::RunRequest;
use super::{cancel_flag, emit_run, status_of, RunStatus};
use crate::nodes::{self, worker::WorkerRequest, Coordinator, Launcher};
use crate::report;
use crate::UsageError;

/// `dbsweep run … --nodes N`: the coordinator.
pub fn coordinate(req: RunRequest, c: Coordinator) -> anyhow::Result<RunStatus> {
    let target = req.target.db.clone().ok_or_else(|| {
        UsageError("--nodes needs --db URL: every worker runs against the same database".into())
    })?;
    // The workers' point, resolved once here so every worker runs exactly
    // this; the coordinator writes, reports and checks.
    let spec = req.spec(target)?;
    let (w, info) = nodes::check_data(&spec)?;
    let (listener, addr) = nodes::listen(&c)?;
    print!(
        "{}",
        report::run::live::preamble(
            w.name(),
            &spec.target.display,
            &info.version,
            &spec.config,
            spec.rand.seed
        )
    );
    println!(
        "Coordinator at {addr}: {} workers, started by the {} launcher",
        c.nodes.count,
        c.nodes.launcher.name()
    );
    if c.nodes.launcher == Launcher::External {
        println!(
            "Waiting for {} workers: start each with `dbsweep worker --coordinator {addr}` (--shard-index I, or JOB_COMPLETION_INDEX)",
            c.nodes.count
        );
    }
    let _ = std::io::stdout().flush();
    let cancel = cancel_flag();
    match nodes::run_workers(&spec, &c, listener, &addr, &cancel, true)? {
        nodes::Coordinated::Merged(mut merged) => {
            let outputs = super::run::Outputs {
                json: req.json.clone(),
                report: req.report.clone(),
                hdr_log: req.hdr_log.clone(),
            };
            emit_run(&mut merged, &outputs)?;
            Ok(status_of([&merged.result.stop_reason]))
        }
        nodes::Coordinated::Partial { report, lost } => {
            print!("{report}");
            if req.json.is_some() || req.report.is_some() || req.hdr_log.is_some() {
                println!("(--json, --report and --hdr-log not written: the run is partial)");
            }
            if c.shard_records.is_none() {
                println!("(--shard-records DIR keeps the records of the shards that finished)");
            }
            let names: Vec<&str> = lost.iter().map(|(name, _)| name.as_str()).collect();
            eprintln!("error: partial run: {} without a record", names.join(", "));
            Ok(RunStatus::Aborted)
        }
    }
}

/// `dbsweep worker`: one shard of a coordinated run, its exit status the
/// shard's.
pub fn worker(req: &WorkerRequest) -> anyhow::Result<RunStatus> {
    let stop = nodes::worker::work(req, cancel_flag)?;
    Ok(status_of([&stop]))
}
