//! Runs a study's plan: for each point, (re)starts the managed server when
//! its settings or CPU set change, (re)loads the workload's data when the
//! plan says so, runs the engine, and commits the point to the results
//! database the moment it ends — so nothing finished is ever lost, and
//! `--resume` continues with the first point not yet stored.
//!
//! Stop rules end a series (one target × variant × CPU set × workload over
//! its client counts) early; its remaining points are stored as skipped with
//! the reason. On resume the rules are replayed from the stored points, so a
//! resumed study skips exactly what an uninterrupted one would have.

use std::collections::{HashMap, HashSet};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::model::{Study, TargetKind};
use super::plan::{Plan, Point};
use crate::driver::{self, Target};
use crate::engine::point;
use crate::engine::StopReason;
use crate::report::text::ms_us;
use crate::server::{format_cpu_list, ServerGuard};
use crate::stats::summary::DEFAULT_PERCENTILES;
use crate::store::{PointRow, PointStatus, Store, StudyId};
use crate::util::progress::Bar;
use crate::workload;
use crate::UsageError;

/// How `dbsweep study` was asked to run.
pub struct Options {
    /// Output directory; None = the study's own.
    pub out: Option<PathBuf>,
    /// Continue a study whose results already exist.
    pub resume: bool,
}

/// What a study run did, for the closing message.
#[derive(Debug, Default)]
pub struct Outcome {
    pub out: PathBuf,
    pub finished: usize,
    pub skipped: usize,
    pub failed: usize,
    /// Points stored by an earlier session and not run again.
    pub already: usize,
    pub interrupted: bool,
    pub wall: Duration,
}

/// What the stop rules judge a finished point by.
struct PointFigures {
    tps: f64,
    /// Transactions given up.
    failed: u64,
    /// Transactions completed or given up.
    attempted: u64,
    /// Errors by kind ([`crate::driver::ErrorKind::index`]), retried ones
    /// included.
    errors: [u64; 6],
}

/// Per series: the stop rules' memory.
#[derive(Default)]
struct SeriesState {
    /// Throughput of each repeat at the client count being measured.
    current: Vec<f64>,
    current_clients: u32,
    /// Highest mean throughput so far, and at how many clients.
    peak: Option<(f64, u32)>,
    /// Set once a rule ends the series.
    stopped: Option<String>,
}

impl SeriesState {
    /// Feeds one finished point; applies the rules when a client count's
    /// repeats are complete.
    fn feed(&mut self, study: &Study, p: &Point, repeats: u32, f: &PointFigures) {
        if self.stopped.is_some() {
            return;
        }
        let PointFigures {
            tps,
            failed,
            attempted,
            ref errors,
        } = *f;
        let failed_rate = if attempted > 0 {
            failed as f64 / attempted as f64
        } else {
            0.0
        };
        if let Some(reason) = study
            .stop
            .max_error_rate
            .exceeded(errors, attempted, p.clients)
        {
            self.stopped = Some(reason);
            return;
        }
        if let Some(limit) = study.stop.max_failed_rate {
            if failed_rate > limit {
                self.stopped = Some(format!(
                    "stopped: {:.1} % of transactions failed at {} clients (limit {:.1} %)",
                    failed_rate * 100.0,
                    p.clients,
                    limit * 100.0
                ));
                return;
            }
        }
        if p.clients != self.current_clients {
            self.current.clear();
            self.current_clients = p.clients;
        }
        self.current.push(tps);
        if self.current.len() < repeats as usize {
            return;
        }
        let mean = self.current.iter().sum::<f64>() / self.current.len() as f64;
        match self.peak {
            Some((peak, at)) if mean <= peak => {
                if let Some(frac) = study.stop.below_peak {
                    if mean < frac * peak {
                        self.stopped = Some(format!(
                            "stopped: {mean:.0} tps at {} clients is below {:.0} % of the peak ({peak:.0} tps at {at} clients)",
                            p.clients,
                            frac * 100.0
                        ));
                    }
                }
            }
            _ => self.peak = Some((mean, p.clients)),
        }
    }
}

/// The managed server currently running, and what it was started with.
struct Running {
    target: usize,
    settings: Vec<(String, String)>,
    cpus: Option<Vec<usize>>,
    guard: ServerGuard,
}

/// Live progress: an overall bar on a terminal, plain lines otherwise.
struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    fn new(total: usize, done: usize) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("[{bar:30}] {pos}/{len} points, eta {eta}  {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.set_position(done as u64);
        Progress { bar: Some(bar) }
    }

    fn current(&self, what: &str) {
        if let Some(b) = &self.bar {
            b.set_message(what.to_string());
        }
    }

    fn live(&self, what: &str, tps: f64) {
        if let Some(b) = &self.bar {
            b.set_message(format!("{what}: {tps:.0} tps"));
        }
    }

    /// One point is done: a line above the bar, or a plain log line.
    fn done(&self, line: &str) {
        match &self.bar {
            Some(b) => {
                b.println(line);
                b.inc(1);
            }
            None => eprintln!("{line}"),
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

fn describe_point(study: &Study, p: &Point) -> String {
    format!(
        "{} {} cpus={} {} clients={}{} repeat {}",
        study.targets[p.target].name,
        study.variants[p.variant].name,
        p.cpus.as_deref().map_or("all".into(), format_cpu_list),
        study.workloads[p.workload].label,
        p.clients,
        if p.instances > 1 {
            format!("×{}", p.instances)
        } else {
            String::new()
        },
        p.repeat
    )
}

/// Runs `plan` of `study`, storing every point. `cancel` (Ctrl-C) stops the
/// current point; it is not stored, so `--resume` runs it again.
pub fn run(
    study: &Study,
    plan: &Plan,
    opts: &Options,
    cancel: &AtomicBool,
) -> anyhow::Result<Outcome> {
    let started = Instant::now();
    let out = opts.out.clone().unwrap_or_else(|| study.out.clone());
    std::fs::create_dir_all(&out)
        .with_context(|| format!("Could not create the output directory '{}'", out.display()))?;
    let mut store = Store::create_or_open(&out.join(crate::store::FILE_NAME))?;
    let file_text = std::fs::read_to_string(&study.source).unwrap_or_default();
    let existing = store.find_study(&study.name)?;
    let mut finished: HashSet<String> = HashSet::new();
    if let Some(id) = existing {
        finished = store.finished_keys(id)?;
        if !opts.resume && !finished.is_empty() {
            return Err(UsageError(format!(
                "study '{}' already has {} stored point(s) in {}: add --resume to continue it, or --out DIR to start afresh elsewhere",
                study.name,
                finished.len(),
                out.display()
            ))
            .into());
        }
        let first = store.studies()?.into_iter().find(|s| s.id == id);
        if first.is_some_and(|s| s.file_text != file_text) {
            eprintln!("Note: the study file changed since the study began; points already stored are kept as they are.");
        }
    }
    let machine = crate::metrics::machine::describe();
    let study_id = store.begin_study(&study.name, &study.description, &file_text, &machine)?;

    let mut series: HashMap<usize, SeriesState> = HashMap::new();
    replay_stop_rules(study, plan, &store, study_id, &mut series)?;

    let mut outcome = Outcome {
        out: out.clone(),
        ..Outcome::default()
    };
    let progress = Progress::new(
        plan.points.len(),
        plan.points
            .iter()
            .filter(|p| finished.contains(&p.key.to_string()))
            .count(),
    );
    let mut running: Option<Running> = None;
    // Targets whose data this session has not checked yet (resume, or a
    // data directory left by an earlier study).
    let mut checked: HashSet<(usize, usize)> = HashSet::new();
    let mut server_broken: HashMap<(usize, usize, Option<Vec<usize>>), String> = HashMap::new();

    for p in &plan.points {
        if cancel.load(Ordering::Relaxed) {
            outcome.interrupted = true;
            break;
        }
        let key = p.key.to_string();
        if finished.contains(&key) {
            outcome.already += 1;
            continue;
        }
        let what = describe_point(study, p);
        progress.current(&what);
        let wl = &study.workloads[p.workload];
        let state = series.entry(p.series).or_default();
        let base_row = |status: PointStatus, reason: Option<String>| PointRow {
            key: key.clone(),
            target: study.targets[p.target].name.clone(),
            target_kind: target_kind(study, p.target),
            target_url: String::new(),
            variant: study.variants[p.variant].name.clone(),
            variant_settings: study.variants[p.variant].overrides.clone(),
            cpus: p.cpus.as_deref().map(format_cpu_list),
            workload: wl.name.clone(),
            workload_label: wl.label.clone(),
            workload_options: wl.options.clone(),
            clients: p.clients,
            instances: p.instances,
            repeat: p.repeat,
            status,
            reason,
            run: None,
            settings: Vec::new(),
        };
        if let Some(reason) = &state.stopped {
            store_unfinished(
                &mut store,
                study_id,
                &base_row(PointStatus::Skipped, Some(reason.clone())),
                &mut outcome,
                &progress,
                &what,
            )?;
            continue;
        }
        let config_key = (p.target, p.variant, p.cpus.clone());
        if let Some(reason) = server_broken.get(&config_key) {
            store_unfinished(
                &mut store,
                study_id,
                &base_row(PointStatus::Failed, Some(reason.clone())),
                &mut outcome,
                &progress,
                &what,
            )?;
            continue;
        }

        // The target: start or restart its managed server as needed.
        let target = match ensure_server(study, p, &mut running, &mut checked) {
            Ok(t) => t,
            Err(e) => {
                let reason = format!("the server did not start: {e:#}");
                server_broken.insert(config_key, reason.clone());
                store_unfinished(
                    &mut store,
                    study_id,
                    &base_row(PointStatus::Failed, Some(reason.clone())),
                    &mut outcome,
                    &progress,
                    &what,
                )?;
                continue;
            }
        };
        let target = match target {
            Some(t) => t,
            None => target_of(study, p.target, &out)?,
        };

        let seed = wl.rand_seed.unwrap_or_else(crate::rand::seed_from_time);
        let rand = wl.rand_config(seed);
        let instances = build_instances(wl, target.dialect(), rand)?;
        let connect_fn = {
            let t = target.clone();
            move || driver::connect(&t)
        };
        if let Err(e) = load_data(&instances, &connect_fn, p, &mut checked) {
            let reason = format!("preparing the data failed: {e:#}");
            store_unfinished(
                &mut store,
                study_id,
                &base_row(PointStatus::Failed, Some(reason.clone())),
                &mut outcome,
                &progress,
                &what,
            )?;
            continue;
        }

        // Run; the point's hard timeout is part of the run's own deadline.
        let mut cfg = wl.run_config(p.clients, seed);
        cfg.timeout = study.stop.point_timeout;
        let refs: Vec<&dyn workload::Workload> = instances.iter().map(|w| w.as_ref()).collect();
        let point = point::Point::new(&target, &refs, &cfg, rand, &DEFAULT_PERCENTILES);
        let run = match point::execute(&point, cancel, &mut |s| {
            if s.duration_s > 0.0 {
                progress.live(&what, s.counters.transactions as f64 / s.duration_s);
            }
        }) {
            Ok(r) => r,
            Err(e) => {
                let reason = format!("the run could not start: {e:#}");
                store_unfinished(
                    &mut store,
                    study_id,
                    &base_row(PointStatus::Failed, Some(reason.clone())),
                    &mut outcome,
                    &progress,
                    &what,
                )?;
                continue;
            }
        };
        let res = &run.result;
        if res.stop_reason == StopReason::Interrupted {
            // Interrupted: not stored, so a resume measures it again.
            outcome.interrupted = true;
            break;
        }
        let figures = PointFigures {
            tps: res.tps,
            failed: res.failed_transactions,
            attempted: res.transactions + res.failed_transactions,
            errors: res.errors.to_array(),
        };
        let summary = format!(
            "{:.1} tps, p95 {}{}",
            res.tps,
            res.latency
                .as_ref()
                .and_then(|l| l.percentiles.iter().find(|p| p.p == 95.0))
                .map_or("-".into(), |p| format!("{} ms", ms_us(p.us))),
            if res.failed_transactions > 0 {
                format!(", {} failed", res.failed_transactions)
            } else {
                String::new()
            }
        );
        let failure = match res.stop_reason {
            StopReason::Timeout => Some(format!(
                "exceeded its hard timeout of {}",
                humantime(study.stop.point_timeout.unwrap_or_default())
            )),
            StopReason::Aborted => Some(format!(
                "aborted: {}",
                res.fatal_error.clone().unwrap_or_else(|| "error".into())
            )),
            _ => None,
        };
        let timed_out = res.stop_reason == StopReason::Timeout;
        let mut row = base_row(PointStatus::Finished, None);
        row.target_url = target.display.clone();
        row.settings = run.target.settings.0.clone();
        row.run = Some(run);
        if let Some(reason) = failure {
            row.status = PointStatus::Failed;
            row.reason = Some(reason.clone());
            store_unfinished(&mut store, study_id, &row, &mut outcome, &progress, &what)?;
            if timed_out {
                state.stopped = Some(format!("stopped: a point {reason}"));
            }
            continue;
        }
        store.commit_point(study_id, &row)?;
        outcome.finished += 1;
        progress.done(&format!("{what}: {summary}"));
        state.feed(study, p, wl.repeats, &figures);
    }
    progress.finish();
    drop(running);
    outcome.wall = started.elapsed();
    Ok(outcome)
}

/// Stores a skipped or failed point, counts it, and says why.
fn store_unfinished(
    store: &mut Store,
    study: StudyId,
    row: &PointRow,
    outcome: &mut Outcome,
    progress: &Progress,
    what: &str,
) -> anyhow::Result<()> {
    store.commit_point(study, row)?;
    let status = match row.status {
        PointStatus::Skipped => {
            outcome.skipped += 1;
            "skipped"
        }
        _ => {
            outcome.failed += 1;
            "failed"
        }
    };
    let reason = row.reason.as_deref().unwrap_or("");
    progress.done(&format!("{what}: {status} ({reason})"));
    Ok(())
}

fn humantime(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 && s % 60 == 0 {
        format!("{} min", s / 60)
    } else {
        format!("{:.0} s", d.as_secs_f64())
    }
}

fn target_kind(study: &Study, t: usize) -> String {
    match &study.targets[t].kind {
        TargetKind::Managed(m) => m.kind.name().to_string(),
        TargetKind::Sqlite(_) => "sqlite".into(),
        TargetKind::Url(t) => t.dialect().name().to_string(),
    }
}

/// The connection target of an unmanaged target.
fn target_of(study: &Study, t: usize, out: &Path) -> anyhow::Result<Target> {
    Ok(match &study.targets[t].kind {
        TargetKind::Url(target) => target.clone(),
        TargetKind::Sqlite(path) => Target::sqlite(
            path.clone()
                .unwrap_or_else(|| out.join(format!("{}.db", study.targets[t].name))),
        ),
        TargetKind::Managed(_) => unreachable!("managed targets come from their server"),
    })
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
    instances: &[Box<dyn workload::Workload>],
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
    wl: &super::model::WorkloadSpec,
    dialect: driver::Dialect,
    rand: workload::RandConfig,
) -> anyhow::Result<Vec<Box<dyn workload::Workload>>> {
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

/// Rebuilds the stop rules' state from the points an earlier session stored.
fn replay_stop_rules(
    study: &Study,
    plan: &Plan,
    store: &Store,
    id: StudyId,
    series: &mut HashMap<usize, SeriesState>,
) -> anyhow::Result<()> {
    let stored: HashMap<String, _> = store
        .point_figures(Some(id))?
        .into_iter()
        .map(|sp| (sp.row.key.clone(), sp))
        .collect();
    for p in &plan.points {
        let Some(sp) = stored.get(&p.key.to_string()) else {
            continue;
        };
        let state = series.entry(p.series).or_default();
        match (sp.row.status, &sp.metrics) {
            (PointStatus::Skipped, _) if state.stopped.is_none() => {
                state.stopped = sp.row.reason.clone();
            }
            (PointStatus::Finished, Some(m)) => {
                let figures = PointFigures {
                    tps: m.tps,
                    failed: m.failed_transactions,
                    attempted: m.transactions + m.failed_transactions,
                    errors: super::ErrorRates::counts(
                        sp.errors.iter().map(|(k, n)| (k.as_str(), *n)),
                    ),
                };
                state.feed(study, p, study.workloads[p.workload].repeats, &figures);
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(humantime(Duration::from_secs(600)), "10 min");
        assert_eq!(humantime(Duration::from_secs(90)), "90 s");
    }
}
