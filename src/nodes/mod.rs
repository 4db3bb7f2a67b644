//! The distributed runtime: one point on several worker processes, started
//! together and merged. The process of `dbsweep run … --nodes N --launcher
//! local|slurm|external` (or of `dbsweep study`, for a point with `nodes =
//! N`) is the coordinator, `dbsweep worker --coordinator HOST:PORT` a
//! worker (docs/distributed.md). What they exchange is the point's
//! [`PointSpec`]; the commands layer only parses, prints and writes.
//!
//! - [`protocol`]: the messages, JSON lines over TCP, and the clock
//!   arithmetic of the pings.
//! - [`launcher`]: how the workers are started (local processes, `srun`,
//!   or by someone else) and stopped.
//! - [`session`]: the coordinator's side of the protocol, from the first
//!   hello to the last record.
//! - [`worker`]: a worker's side.
//!
//! The coordinator checks the data and resolves the options once, like
//! `run`; every worker runs its shard of that one point (`--shard I/N`
//! under the coordinator's split), and the records are merged by
//! `engine::merge`, the code `dbsweep merge` uses, then reported, stored
//! with `--json` and rendered with `--report` like one process's. A shard
//! without a record (its worker failed, was killed, or lost its node)
//! makes the run **partial**: no merged figures at all, the shards named
//! with why, exit status 1 — a merge of fewer shards is never the run.
//!
//! Ctrl-C at the coordinator stops the run early on every worker (the
//! protocol's `Interrupt`); their records are merged and reported as one
//! process's interrupted run is. A second Ctrl-C exits at once, stopping
//! the launcher's processes first (`launcher::stop_all`).
//!
//! A study's `nodes = N` point comes through [`run_point`]: the same
//! workers, session and merge, without the printing (`dbsweep study`
//! reports its points), its merged record stored as the point.

pub mod launcher;
pub mod protocol;
pub mod session;
pub mod worker;

use std::net::TcpListener;
use std::sync::atomic::AtomicBool;

use crate::driver::{self, check_sqlite_path};
use crate::engine::merge::{self, Input};
use crate::engine::spec::PointSpec;
use crate::record;
use crate::util::paths::write_atomically;
use crate::UsageError;
pub use launcher::Launcher;
use session::End;

/// How a point runs on several load machines: `count` workers that
/// `launcher` starts (`run --nodes N --launcher L`, a study's `nodes` and
/// `launcher`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nodes {
    pub count: usize,
    pub launcher: Launcher,
}

/// A coordinator: the workers it starts, where it waits for them, and
/// what it keeps of them.
#[derive(Debug, Clone)]
pub struct Coordinator {
    pub nodes: Nodes,
    /// Where to listen (`127.0.0.1:0`: a free port on the loopback).
    pub listen: String,
    /// Where to keep every shard's own record (`--shard-records DIR`).
    pub shard_records: Option<std::path::PathBuf>,
}

/// What a coordinated run came to, once it started.
pub enum Coordinated {
    /// Every shard's record, merged.
    Merged(Box<record::Run>),
    /// A shard sent no record: no merged figures. `report`: every shard
    /// with what it measured or why it has none; `lost`: each shard
    /// without a record, named (`shard 1 (node)`), with why.
    Partial {
        report: String,
        lost: Vec<(String, String)>,
    },
}

/// A study's point on `nodes` workers (`nodes = N`): `req` resolved by
/// the study (its data loaded, its stop condition and seed set), nothing
/// printed — the study reports its points itself. `Err`: the run did not
/// start.
pub fn run_point(
    spec: &PointSpec,
    c: &Coordinator,
    cancel: &AtomicBool,
) -> anyhow::Result<Coordinated> {
    check_data(spec)?;
    let (listener, addr) = listen(c)?;
    run_workers(spec, c, listener, &addr, cancel, false)
}

/// Checks, as shard 0 would, that the data of `spec` is in place, once for
/// every worker; the workload it checked with and the server's description.
pub fn check_data(
    spec: &PointSpec,
) -> anyhow::Result<(
    Box<dyn crate::workload::Workload>,
    crate::driver::ServerInfo,
)> {
    let target = &spec.target;
    let w = spec.build()?;
    crate::engine::point::check_ramp_up(&spec.config, w.as_ref())?;
    check_sqlite_path(target, false, w.name())?;
    let mut probe = driver::connect(target).map_err(|e| UsageError(e.message))?;
    w.check_prepared(probe.as_mut())?;
    // A pooler that would lose prepared statements is refused here.
    let info = probe
        .server_info()
        .map_err(|e| UsageError(format!("{}: {}", target.display, e.message)))?;
    Ok((w, info))
}

/// The listening socket and the address workers are told.
pub fn listen(c: &Coordinator) -> anyhow::Result<(TcpListener, String)> {
    let listener = TcpListener::bind(&c.listen).map_err(|e| {
        UsageError(format!(
            "cannot listen on {}: {e} (give --listen HOST:PORT with an address of this machine and a free port)",
            c.listen
        ))
    })?;
    let addr = advertised(&listener)?;
    Ok((listener, addr))
}

/// Starts the workers of `spec`, releases them together and merges their
/// records — on Ctrl-C (`cancel`) after asking them to stop early;
/// `announce`: say when the start is sent. `Err` when the run did not
/// start (a usage error when a worker refused the options).
pub fn run_workers(
    spec: &PointSpec,
    c: &Coordinator,
    listener: TcpListener,
    addr: &str,
    cancel: &AtomicBool,
    announce: bool,
) -> anyhow::Result<Coordinated> {
    let Nodes {
        count,
        launcher: how,
    } = c.nodes;
    let mut launched = launcher::launch(how, count, addr)?;
    let outcome = session::run(
        listener,
        spec.clone(),
        count,
        &mut launched,
        cancel,
        announce,
    );
    launched.finish(std::time::Duration::from_secs(5));

    let Some(start_us) = outcome.start_us else {
        let why = outcome.why_not.unwrap_or_default();
        // A worker that refused the options refused bad input.
        let usage = outcome
            .shards
            .iter()
            .any(|s| matches!(s.end, Some(End::Failed { usage: true, .. })));
        if usage {
            return Err(UsageError(format!("the run did not start: {why}")).into());
        }
        anyhow::bail!("the run did not start: {why}");
    };
    if let Some(dir) = &c.shard_records {
        keep_shard_records(&outcome, dir)?;
    }
    if let Some(merged) = merge_shards(&outcome, start_us, how)? {
        return Ok(Coordinated::Merged(Box::new(merged)));
    }
    let lost = outcome
        .shards
        .iter()
        .enumerate()
        .filter(|(_, s)| !matches!(s.end, Some(End::Done(_))))
        .map(|(i, s)| {
            let why = match &s.end {
                Some(End::Failed { why, .. }) => why.clone(),
                _ => "no word from it".to_string(),
            };
            (
                format!("shard {i} ({})", s.node.as_deref().unwrap_or("?")),
                why,
            )
        })
        .collect();
    Ok(Coordinated::Partial {
        report: partial_report(&outcome.shards),
        lost,
    })
}

/// The address workers are told: the listening one, or this machine's
/// name when it listens on every address (0.0.0.0).
fn advertised(listener: &TcpListener) -> anyhow::Result<String> {
    let local = listener.local_addr()?;
    if !local.ip().is_unspecified() {
        return Ok(local.to_string());
    }
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    if host.is_empty() {
        return Err(UsageError(format!(
            "--listen {local}: this machine has no hostname to give the workers; listen on one of its addresses instead"
        ))
        .into());
    }
    Ok(format!("{host}:{}", local.port()))
}

/// Writes every shard's record that came back to `dir`/shard-I.json, with
/// its node and clock as the coordinator saw them left to the merge.
fn keep_shard_records(outcome: &session::Outcome, dir: &std::path::Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("--shard-records {}: cannot create it: {e}", dir.display()))?;
    let mut kept = 0;
    for (i, s) in outcome.shards.iter().enumerate() {
        if let Some(End::Done(run)) = &s.end {
            let path = dir.join(format!("shard-{i}.json"));
            // Its profiles' stacks beside it, as `run --json` writes them,
            // so `dbsweep merge` of the kept records sums them again.
            let mut run = run.clone();
            run.write_folded_beside(&path)?;
            write_atomically(&path, &record::to_vec(&run)?)?;
            kept += 1;
        }
    }
    eprintln!(
        "{kept} of {} shard records kept in {}",
        outcome.shards.len(),
        dir.display()
    );
    Ok(())
}

/// The merged record, with each shard's node, clock offset and start skew
/// and the coordinated start; None when a shard has no record.
fn merge_shards(
    outcome: &session::Outcome,
    start_us: i64,
    launcher: Launcher,
) -> anyhow::Result<Option<record::Run>> {
    let mut runs = Vec::new();
    for (i, s) in outcome.shards.iter().enumerate() {
        let Some(End::Done(run)) = &s.end else {
            return Ok(None);
        };
        let name = format!("shard {i} ({})", s.node.as_deref().unwrap_or("?"));
        runs.push((name, run));
    }
    let inputs: Vec<Input<'_>> = runs.iter().map(|(name, run)| Input { name, run }).collect();
    let mut m = merge::merge(&inputs)
        .map_err(|e| anyhow::anyhow!("the workers' records do not merge: {e}"))?;
    if let Some(shards) = m.result.shards.as_mut() {
        let mut max_skew: f64 = 0.0;
        for row in &mut shards.rows {
            let s = &outcome.shards[row.index as usize];
            let Some(End::Done(run)) = &s.end else {
                continue;
            };
            row.node = s.node.clone();
            if let Some((offset_us, rtt_us)) = s.clock {
                row.clock_offset_s = Some(offset_us as f64 / 1e6);
                row.clock_rtt_s = Some(rtt_us as f64 / 1e6);
                if let Some(released) = run.released_unix_us {
                    let skew = (released as i64 - offset_us - start_us) as f64 / 1e6;
                    max_skew = max_skew.max(skew.abs());
                    row.start_skew_s = Some(skew);
                }
            }
        }
        shards.coordinator = Some(record::Coordination {
            launcher: launcher.name().into(),
            start_unix_us: start_us.max(0) as u64,
            max_start_skew_s: max_skew,
        });
    }
    Ok(Some(m))
}

/// What a partial run prints instead of merged figures: every shard, with
/// what it measured or why it has no record.
fn partial_report(shards: &[session::ShardState]) -> String {
    let missing = shards
        .iter()
        .filter(|s| !matches!(s.end, Some(End::Done(_))))
        .count();
    let mut out = format!(
        "\nPARTIAL RUN: {missing} of {} shards sent no record, so there are no merged figures \
         (a merge of fewer shards would not be the run).\n",
        shards.len()
    );
    for (i, s) in shards.iter().enumerate() {
        let node = s.node.as_deref().unwrap_or("?");
        let what = match &s.end {
            Some(End::Done(run)) => format!(
                "finished: {} transactions in {:.3} s ({:.2} per s)",
                run.result.transactions, run.result.measured_s, run.result.tps
            ),
            Some(End::Failed { why, .. }) => format!("FAILED: {why}"),
            None => "FAILED: no word from it".into(),
        };
        out.push_str(&format!("    shard {i}  {node}  {what}\n"));
    }
    out
}
