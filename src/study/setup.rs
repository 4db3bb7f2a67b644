//! What a point needs in place before it runs: its managed server started
//! with the point's settings and CPUs (restarted only when they change),
//! its target, its workload instances, and their data loaded.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::model::{Study, TargetKind, WorkloadSpec};
use super::plan::{Plan, Point};
use crate::driver::{self, Target};
use crate::engine::point::ServerRef;
use crate::rand::RandConfig;
use crate::server::ServerGuard;
use crate::util::progress::Bar;
use crate::workload::{self, Workload};

/// A managed server running, and what it was started with.
struct Running {
    settings: Vec<(String, String)>,
    cpus: Option<Vec<usize>>,
    guard: ServerGuard,
    /// Whether its `--version` line was handed to the store
    /// ([`Setup::new_build`]).
    announced: bool,
    /// Started for the point being set up.
    fresh: bool,
}

/// The servers and data of a study run, kept from point to point.
#[derive(Default)]
pub(super) struct Setup {
    /// The managed servers running now, by target: one at a time in a
    /// sequential study, every target's at once in an interleaved one.
    running: HashMap<usize, Running>,
    /// Keep every target's server up (an interleaved study), rather than
    /// stopping one when the plan moves to another target.
    keep_all: bool,
    /// How long the last [`Setup::target`] took to (re)start its server;
    /// None when it started none.
    pub started_in: Option<std::time::Duration>,
    /// (target, workload) whose data this session has checked or loaded
    /// (not yet: resume, or a data directory left by an earlier study).
    checked: HashSet<(usize, usize)>,
    /// Server configurations that failed to start, with the reason: their
    /// points fail without another attempt.
    broken: HashMap<(usize, usize, Option<Vec<usize>>), String>,
}

impl Setup {
    /// A study run's setup; `keep_all` for an interleaved study.
    pub(super) fn new(keep_all: bool) -> Setup {
        Setup {
            keep_all,
            ..Setup::default()
        }
    }

    /// The target of point `p` of `study`, its managed server started as
    /// the point needs; `Err` is the reason the point fails.
    pub(super) fn target(
        &mut self,
        study: &Study,
        p: &Point,
        out: &Path,
    ) -> Result<Target, String> {
        let config = (p.target, p.variant, p.cpus.clone());
        self.started_in = None;
        if let Some(reason) = self.broken.get(&config) {
            return Err(reason.clone());
        }
        if !self.keep_all {
            // One at a time: another target's server stops first.
            self.running.retain(|&t, _| t == p.target);
        }
        let began = std::time::Instant::now();
        let running = self.running.remove(&p.target);
        let (running, result) = ensure_server(study, p, running, &mut self.checked);
        if let Some(r) = running {
            if r.fresh {
                self.started_in = Some(began.elapsed());
            }
            self.running.insert(p.target, r);
        }
        match result {
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
        match (&study.targets[p.target].kind, self.running.get(&p.target)) {
            // Behind its pooler, the sampler finds both from the pooler's port.
            (TargetKind::Managed(_), Some(r)) if r.guard.pooler.is_none() => {
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
        let r = self.running.get_mut(&p.target)?;
        if r.announced || r.guard.version.is_empty() {
            return None;
        }
        r.announced = true;
        Some(match &r.guard.pooler {
            // The pooler's program served the target too.
            Some(pooler) => format!("{} behind {}", r.guard.version, pooler.version),
            None => r.guard.version.clone(),
        })
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

/// The share of the machine's available memory an interleaved study's
/// servers may take together: the client, the page cache and the rest of
/// the machine keep the remainder.
pub(super) const MEMORY_SHARE: f64 = 0.8;

/// An interleaved study keeps every managed server up at once: refuses it,
/// with the numbers, when their estimated memory together
/// ([`crate::server::memory::estimate`]: each target's largest cache among
/// its variants, its process, and its most connections in the plan) is
/// more than [`MEMORY_SHARE`] of what the machine has available.
pub(super) fn check_memory(study: &Study, plan: &Plan) -> Result<(), crate::UsageError> {
    let Ok(meminfo) = std::fs::read_to_string("/proc/meminfo") else {
        return Ok(()); // cannot be judged here: the servers will tell
    };
    let available = crate::metrics::proc::machine::parse_meminfo(&meminfo).available_bytes;
    if available == 0 {
        return Ok(());
    }
    let mut parts = Vec::new();
    let mut total = 0u64;
    for (t, target) in study.targets.iter().enumerate() {
        let Some(m) = target.managed() else { continue };
        let points: Vec<&Point> = plan.points.iter().filter(|p| p.target == t).collect();
        if points.is_empty() {
            continue;
        }
        let connections = points
            .iter()
            .map(|p| u64::from(p.clients) * u64::from(p.instances))
            .max()
            .unwrap_or(0);
        let bytes = points
            .iter()
            .map(|p| {
                crate::server::memory::estimate(
                    m.kind,
                    &study.variants[p.variant].settings,
                    connections,
                )
            })
            .max()
            .unwrap_or(0);
        total += bytes;
        parts.push(format!("{} {}", target.name, mib(bytes)));
    }
    if parts.len() < 2 || total as f64 <= MEMORY_SHARE * available as f64 {
        return Ok(());
    }
    Err(crate::UsageError(format!(
        "an interleaved study keeps its {} managed servers up at once, estimated at {} together ({}: each its cache, {} for the rest of the process and {} per connection at its most connections), more than {:.0} % of the {} this machine has available: give the servers smaller caches, or set order = \"sequential\" to run them one at a time (their comparisons then do not cancel the machine's drift)",
        parts.len(),
        mib(total),
        parts.join(", "),
        mib(crate::server::memory::PROCESS_BYTES),
        mib(crate::server::memory::CONNECTION_BYTES),
        MEMORY_SHARE * 100.0,
        mib(available)
    )))
}

fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes >> 20)
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
/// CPUs, restarting it when they differ or the plan asks. Takes the
/// target's running server (if any) and gives back the one running after
/// (None for unmanaged targets, or a failed start), with its target (None
/// for unmanaged targets) or why it could not start.
fn ensure_server(
    study: &Study,
    p: &Point,
    running: Option<Running>,
    checked: &mut HashSet<(usize, usize)>,
) -> (Option<Running>, anyhow::Result<Option<Target>>) {
    let Some(spec) = study.server_spec(p) else {
        return (None, Ok(None));
    };
    let m = study.targets[p.target].managed().expect("managed");
    let same = running
        .as_ref()
        .is_some_and(|r| r.settings == spec.settings && r.cpus == spec.cpus);
    let mut running = running;
    if !same || p.start_server {
        // Stop first: the same directory cannot hold two servers.
        if let Some(r) = running.take() {
            if let Err(e) = r.guard.stop() {
                return (None, Err(anyhow::anyhow!(e)));
            }
        }
        if spec.version.is_some() {
            // A version not in the cache yet is installed before its first
            // start (a bad one was refused when the study was loaded).
            match crate::server::install::ensure(&spec) {
                Ok(done) => {
                    if let Some(d) = done.filter(|d| d.fresh) {
                        eprintln!(
                            "Installed {} {} from {}",
                            spec.kind, d.build.version, d.source
                        );
                    }
                }
                Err(e) => return (None, Err(anyhow::anyhow!(e))),
            }
        }
        let guard = match ServerGuard::start(&spec) {
            Ok(g) => g,
            Err(e) => return (None, Err(anyhow::anyhow!(e))),
        };
        if !same {
            // Data may differ after a server change of target.
            checked.retain(|(t, _)| *t != p.target);
        }
        running = Some(Running {
            settings: spec.settings.clone(),
            cpus: spec.cpus.clone(),
            guard,
            announced: false,
            fresh: true,
        });
    } else if let Some(r) = running.as_mut() {
        r.fresh = false;
    }
    let r = running.as_ref().expect("just started");
    let target = Target::parse(&r.guard.url)
        .map_err(|e| anyhow::anyhow!(e))
        .map(|mut t| {
            t.set_ps_mode(m.ps_mode);
            Some(t)
        });
    (running, target)
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
