//! What a point needs in place before it runs: its managed server started
//! with the point's settings and CPUs (restarted only when they change),
//! its target, its workload instances, and their data loaded.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::model::{Study, TargetKind, WorkloadSpec};
use super::plan::Point;
use crate::driver::{self, Target};
use crate::engine::point::ServerRef;
use crate::rand::RandConfig;
use crate::server::ServerGuard;
use crate::util::progress::Bar;
use crate::workload::{self, Workload};

/// The managed server currently running, and what it was started with.
struct Running {
    target: usize,
    settings: Vec<(String, String)>,
    cpus: Option<Vec<usize>>,
    guard: ServerGuard,
    /// Whether its `--version` line was handed to the store
    /// ([`Setup::new_build`]).
    announced: bool,
}

/// The servers and data of a study run, kept from point to point.
#[derive(Default)]
pub(super) struct Setup {
    /// The managed server running now.
    running: Option<Running>,
    /// (target, workload) whose data this session has checked or loaded
    /// (not yet: resume, or a data directory left by an earlier study).
    checked: HashSet<(usize, usize)>,
    /// Server configurations that failed to start, with the reason: their
    /// points fail without another attempt.
    broken: HashMap<(usize, usize, Option<Vec<usize>>), String>,
}

impl Setup {
    /// The target of point `p` of `study`, its managed server started as
    /// the point needs; `Err` is the reason the point fails.
    pub(super) fn target(
        &mut self,
        study: &Study,
        p: &Point,
        out: &Path,
    ) -> Result<Target, String> {
        let config = (p.target, p.variant, p.cpus.clone());
        if let Some(reason) = self.broken.get(&config) {
            return Err(reason.clone());
        }
        match ensure_server(study, p, &mut self.running, &mut self.checked) {
            Ok(Some(t)) => Ok(t),
            Ok(None) => Ok(target_of(study, p.target, out)),
            Err(e) => {
                let reason = format!("the server did not start: {e:#}");
                self.broken.insert(config, reason.clone());
                Err(reason)
            }
        }
    }

    /// Where the server of the running point's target is, for sampling:
    /// the managed server's process, or SQLite's (the client), or the
    /// process listening at the target's URL.
    pub(super) fn server_ref(&self, study: &Study, p: &Point) -> ServerRef {
        match (&study.targets[p.target].kind, &self.running) {
            (TargetKind::Managed(_), Some(r)) if r.target == p.target => {
                ServerRef::Pid(r.guard.pid)
            }
            (TargetKind::Sqlite(_), _) => ServerRef::Embedded,
            _ => ServerRef::Listening,
        }
    }

    /// The `--version` line of the server point `p`'s target was just
    /// started on, once per start (None: not started since the last call,
    /// or not a managed target): what the store keeps for the report's
    /// header.
    pub(super) fn new_build(&mut self, p: &Point) -> Option<String> {
        let r = self.running.as_mut().filter(|r| r.target == p.target)?;
        if r.announced || r.guard.version.is_empty() {
            return None;
        }
        r.announced = true;
        Some(r.guard.version.clone())
    }

    /// The instances of point `p`'s workload on `target`, their data
    /// loaded where the plan says so (or not yet seen in place); `Err` is
    /// the reason the point fails.
    pub(super) fn workload(
        &mut self,
        wl: &WorkloadSpec,
        p: &Point,
        target: &Target,
        rand: RandConfig,
    ) -> Result<Vec<Box<dyn Workload>>, String> {
        let instances = build_instances(wl, target.dialect(), rand)
            .map_err(|e| format!("the workload could not be built: {e:#}"))?;
        let connect = || driver::connect(target);
        load_data(&instances, &connect, p, &mut self.checked)
            .map_err(|e| format!("preparing the data failed: {e:#}"))?;
        Ok(instances)
    }
}

/// What the results store calls the target's kind.
pub(super) fn target_kind(study: &Study, t: usize) -> String {
    match &study.targets[t].kind {
        TargetKind::Managed(m) => m.kind.name().to_string(),
        TargetKind::Sqlite(_) => "sqlite".into(),
        TargetKind::Url(t) => t.dialect().name().to_string(),
    }
}

/// The connection target of an unmanaged target.
fn target_of(study: &Study, t: usize, out: &Path) -> Target {
    match &study.targets[t].kind {
        TargetKind::Url(target) => target.clone(),
        TargetKind::Sqlite(path) => Target::sqlite(
            path.clone()
                .unwrap_or_else(|| out.join(format!("{}.db", study.targets[t].name))),
        ),
        TargetKind::Managed(_) => unreachable!("managed targets come from their server"),
    }
}

/// Makes sure the point's managed server runs with the point's settings and
/// CPUs, restarting it when they differ or the plan asks. Returns its
/// target, or None for unmanaged targets.
fn ensure_server(
    study: &Study,
    p: &Point,
    running: &mut Option<Running>,
    checked: &mut HashSet<(usize, usize)>,
) -> anyhow::Result<Option<Target>> {
    let Some(spec) = study.server_spec(p) else {
        *running = None; // another target: stop the managed one
        return Ok(None);
    };
    let m = study.targets[p.target].managed().expect("managed");
    let same = running.as_ref().is_some_and(|r| {
        r.target == p.target && r.settings == spec.settings && r.cpus == spec.cpus
    });
    if !same || p.start_server {
        // Stop first: the same directory cannot hold two servers.
        if let Some(r) = running.take() {
            r.guard.stop().map_err(|e| anyhow::anyhow!(e))?;
        }
        if spec.version.is_some() {
            // A version not in the cache yet is installed before its first
            // start (a bad one was refused when the study was loaded).
            let done = crate::server::install::ensure(&spec).map_err(|e| anyhow::anyhow!(e))?;
            if let Some(d) = done.filter(|d| d.fresh) {
                eprintln!(
                    "Installed {} {} from {}",
                    spec.kind, d.build.version, d.source
                );
            }
        }
        let guard = ServerGuard::start(&spec).map_err(|e| anyhow::anyhow!(e))?;
        if !same {
            // Data may differ after a server change of target.
            checked.retain(|(t, _)| *t != p.target);
        }
        *running = Some(Running {
            target: p.target,
            settings: spec.settings.clone(),
            cpus: spec.cpus.clone(),
            guard,
            announced: false,
        });
    }
    let r = running.as_ref().expect("just started");
    let mut target = Target::parse(&r.guard.url).map_err(|e| anyhow::anyhow!(e))?;
    target.set_ps_mode(m.ps_mode);
    Ok(Some(target))
}

/// Loads the workload's data (every instance's tables) when the plan says
/// so, or when this session has not yet seen it in place (first point after
/// a resume).
fn load_data(
    instances: &[Box<dyn Workload>],
    connect: &(dyn Fn() -> driver::DbResult<Box<dyn driver::Connection>> + Sync),
    p: &Point,
    checked: &mut HashSet<(usize, usize)>,
) -> anyhow::Result<()> {
    let first_look = !checked.contains(&(p.target, p.workload));
    for w in instances {
        let mut conn = connect().map_err(|e| anyhow::anyhow!("{}", e.message))?;
        let ready = !p.prepare && (!first_look || w.check_prepared(conn.as_mut()).is_ok());
        if !ready {
            w.cleanup(conn.as_mut())?;
            drop(conn);
            let threads = crate::metrics::cpu::available_cpus();
            w.prepare(connect, threads, &Bar::new())?;
        }
    }
    checked.retain(|(t, _)| *t != p.target);
    checked.insert((p.target, p.workload));
    Ok(())
}

/// The workload's instances: instance `k` uses its own tables, starting
/// after the `tables` of the instances before it (`table-offset`).
fn build_instances(
    wl: &WorkloadSpec,
    dialect: driver::Dialect,
    rand: RandConfig,
) -> anyhow::Result<Vec<Box<dyn Workload>>> {
    let tables: u32 = wl
        .values
        .iter()
        .find(|(k, _)| *k == "tables")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(1);
    (0..wl.instances)
        .map(|k| {
            let mut options = wl.options.clone();
            if wl.instances > 1 {
                options.retain(|(name, _)| name != "table-offset");
                options.push(("table-offset".to_string(), (k * tables).to_string()));
            }
            workload::build(&wl.name, &options, dialect, rand)
        })
        .collect()
}
