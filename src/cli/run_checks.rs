//! `run`'s options checked against the request they resolved into: the
//! ones whose meaning depends on others and on the target — `--nodes`
//! (with its launcher, address and records), `--client-threads`,
//! `--pipeline` and `--find-rate` (with the options its probes set
//! themselves).

use crate::commands::find_rate::FindRate;
use crate::commands::run::RunRequest;
use crate::driver::TargetKind;
use crate::nodes::{Coordinator, Launcher, Nodes};
use crate::UsageError;

use super::args::RunArgs;

/// `--client-threads N`: at least one loop, no more loops than
/// connections, and a target whose connections have sockets to wait on.
pub fn client_threads(a: &RunArgs, req: &RunRequest) -> Result<(), UsageError> {
    let Some(n) = a.client_threads else {
        return Ok(());
    };
    if n == 0 {
        return Err(UsageError(
            "--client-threads 0: give at least one event-loop thread (or leave the option out)"
                .into(),
        ));
    }
    if n > a.target.threads {
        return Err(UsageError(format!(
            "--client-threads {n} is more than --threads {}: each event-loop thread serves at least one connection (lower --client-threads)",
            a.target.threads
        )));
    }
    match req.target.db.as_ref().map(|t| &t.kind) {
        Some(TargetKind::Postgres(_) | TargetKind::Mysql(_)) => Ok(()),
        _ => Err(UsageError(
            "--client-threads runs network connections on event loops, and SQLite has no socket to wait on: leave --client-threads out".into(),
        )),
    }
}

/// `--pipeline K`: at least one statement, on PostgreSQL (the only driver
/// whose connections send ahead).
pub fn pipeline(a: &RunArgs, req: &RunRequest) -> Result<(), UsageError> {
    let Some(k) = a.pipeline else {
        return Ok(());
    };
    if k == 0 {
        return Err(UsageError(
            "--pipeline 0: give at least 1 statement in flight (1 is no pipelining; or leave the option out)".into(),
        ));
    }
    match req.target.db.as_ref().map(|t| &t.kind) {
        Some(TargetKind::Postgres(_)) => Ok(()),
        Some(TargetKind::Mysql(_)) => Err(UsageError(format!(
            "--pipeline {k}: only PostgreSQL connections send statements ahead (pgbench's pipeline mode); MySQL and MariaDB run one at a time: leave --pipeline out"
        ))),
        _ => Err(UsageError(format!(
            "--pipeline {k}: SQLite runs in this process, with no protocol to send ahead on: leave --pipeline out"
        ))),
    }
}

/// `--nodes N` with its launcher and address, checked: the split must be
/// possible, and the workers need a database they can all reach.
pub fn nodes(a: &RunArgs, req: &RunRequest) -> Result<Option<Coordinator>, UsageError> {
    let n = &a.nodes;
    let Some(count) = n.nodes else {
        if n.launcher.is_some() || n.listen.is_some() || n.shard_records.is_some() {
            return Err(UsageError(
                "--launcher, --listen and --shard-records coordinate workers: add --nodes N".into(),
            ));
        }
        return Ok(None);
    };
    let refuse = |why: String| Err(UsageError(format!("--nodes {count}: {why}")));
    if count == 0 {
        return refuse("give at least 1 worker".into());
    }
    if let Some(a) = req.prometheus {
        return refuse(format!(
            "--prometheus {a} serves the intervals of a run in this process, and the workers' reach the coordinator only when they end; drop --prometheus, or run without --nodes"
        ));
    }
    if req.config.shard.is_some() {
        return refuse("the coordinator splits the run itself; drop --shard".into());
    }
    if req.target.db.is_none() {
        return refuse(
            "needs --db URL, a database every worker reaches (prepare it first with `dbsweep prepare`)"
                .into(),
        );
    }
    if req.check {
        return refuse(
            "--check is not done for a coordinated run; run `dbsweep check` after it".into(),
        );
    }
    for i in 0..count {
        let s = crate::engine::Shard { index: i, count };
        if let Err(e) = s.check(req.target.threads, req.config.pacing.users()) {
            // The shard's message without its `--shard I/N:` prefix.
            return refuse(
                e.split_once(": ")
                    .map_or(e.clone(), |(_, why)| why.to_string()),
            );
        }
    }
    if let Some(dir) = &n.shard_records {
        if dir.exists() && !dir.is_dir() {
            return refuse(format!(
                "--shard-records {}: not a directory (give a directory, or a path to create one at)",
                dir.display()
            ));
        }
    }
    Ok(Some(Coordinator {
        nodes: Nodes {
            count,
            launcher: n.launcher.unwrap_or(Launcher::Local),
        },
        listen: n.listen.clone().unwrap_or_else(|| "127.0.0.1:0".into()),
        shard_records: n.shard_records.clone(),
    }))
}

/// The search `a` asks for, checked; None without --find-rate.
pub fn find_rate(a: &RunArgs) -> Result<Option<FindRate>, UsageError> {
    let f = &a.find_rate;
    if !f.find_rate {
        for (given, name) in [
            (f.slo.is_some(), "--slo"),
            (f.max_unserved.is_some(), "--max-unserved"),
            (f.precision.is_some(), "--precision"),
        ] {
            if given {
                return Err(UsageError(format!(
                    "{name} sets the search of --find-rate: add --find-rate, or drop {name}"
                )));
            }
        }
        return Ok(None);
    }
    // The search sets the pacing and runs its own probes.
    for (id, why) in [
        ("rate", "the search chooses the rates it probes"),
        (
            "users",
            "the probes are open loops, whose arrivals are no user's",
        ),
        (
            "think_time",
            "the probes are open loops, with no think time",
        ),
        ("ramp_up", "the probes are open loops, started at once"),
        ("events", "each probe runs for --time"),
        ("nodes", "the search runs on this machine"),
        ("spec", "the search runs from the options, not a point file"),
        ("report", "the probes are written with --json"),
        ("hdr_log", "the probes are written with --json"),
    ] {
        if a.given.iter().any(|g| g == id) {
            let option = format!("--{}", id.replace('_', "-"));
            return Err(UsageError(format!(
                "{option} cannot be given with --find-rate: {why}; drop {option}"
            )));
        }
    }
    let (percentile, limit) = super::find_rate_args::slo(f.slo.as_deref().unwrap_or("p99=10ms"))?;
    let max_unserved_pct = f.max_unserved.unwrap_or(1.0);
    if !(0.0..100.0).contains(&max_unserved_pct) {
        return Err(UsageError(format!(
            "--max-unserved {max_unserved_pct}: give a share from 0 to below 100 (%)"
        )));
    }
    let precision_pct = f.precision.unwrap_or(2.0);
    if !(precision_pct > 0.0 && precision_pct <= 50.0) {
        return Err(UsageError(format!(
            "--precision {precision_pct}: give a share of the peak above 0 and at most 50 (%)"
        )));
    }
    Ok(Some(FindRate {
        percentile,
        limit,
        max_unserved_pct,
        precision_pct,
        arrival: a.arrival,
    }))
}
