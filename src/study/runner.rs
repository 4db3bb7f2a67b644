//! Runs a study's plan: for each point, (re)starts the managed server when
//! its settings or CPU set change, (re)loads the workload's data when the
//! plan says so (`setup.rs`), runs the point (`engine::point`), and commits
//! it to the results database the moment it ends — so nothing finished is
//! ever lost, and `--resume` continues with the first point not yet stored.
//!
//! A point with `nodes = N` runs as one coordinated run of the `nodes`
//! layer (`sharded.rs`), and its merged record is stored like any other.
//!
//! Stop rules end a series (one target × variant × CPU set × workload over
//! its client counts) early (`series.rs`); its remaining points are stored
//! as skipped with the reason. Beyond a workload's `repeats.min`, a cell
//! gets another block only while its comparisons are less precise than
//! asked (`precision.rs`).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;

use super::model::{Level, Order, Study};
use super::plan::{Plan, Point};
use super::progress::{describe_point, Progress};
use super::search::{answer, Step};
use super::series::{replay_stop_rules, PointFigures, SeriesState};
use super::setup::{check_memory, target_kind, Setup};
use crate::engine::live::Live;
use crate::engine::pacing::Mode;
use crate::engine::point;
use crate::engine::spec::PointSpec;
use crate::engine::Pacing;
use crate::engine::StopReason;
use crate::record::Run;
use crate::server::format_cpu_list;
use crate::stats::summary::DEFAULT_PERCENTILES;
use crate::store::{PointRow, PointStatus, Store, StudyId};
use crate::util::duration;
use crate::util::units::ms_us;
use crate::workload::Workload;
use crate::UsageError;

/// How `dbsweep study` was asked to run.
pub struct Options {
    /// Output directory; None = the study's own.
    pub out: Option<PathBuf>,
    /// Continue a study whose results already exist.
    pub resume: bool,
    /// Who watches each point as it runs (`prometheus = "ADDR"`).
    pub live: Option<Live>,
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
    /// Points of blocks a cell did not need: its comparisons were as
    /// precise as its workload's `repeats.precision` asked before.
    pub not_needed: usize,
    pub interrupted: bool,
    pub wall: Duration,
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
    // `--out DIR`: results, and the servers' default directories, there.
    let moved;
    let study = match &opts.out {
        Some(o) => {
            moved = study.with_out(o);
            &moved
        }
        None => study,
    };
    let out = study.out.clone();
    let interleaved = study.design.order == Order::Interleaved;
    if interleaved {
        check_memory(study, plan)?;
    }
    std::fs::create_dir_all(&out)
        .with_context(|| format!("Could not create the output directory '{}'", out.display()))?;
    let mut store = Store::create_or_open(&out.join(crate::store::FILE_NAME))?;
    let finished = begin(study, &mut store, opts, &out)?;
    let study_id = store.begin_study(
        &study.name,
        &study.description,
        &std::fs::read_to_string(&study.source).unwrap_or_default(),
        &crate::metrics::machine::describe(),
    )?;
    let references: Vec<(String, String)> = study
        .references
        .iter()
        .map(|r| (r.file.clone(), r.text.clone()))
        .collect();
    store.save_references(study_id, &references)?;
    store.save_design(study_id, &serde_json::to_string(&study.stored_design())?)?;
    if !study.reproduction.is_empty() {
        store.save_reproduction(study_id, &serde_json::to_string(&study.reproduction)?)?;
    }
    let mut series = HashMap::new();
    replay_stop_rules(study, plan, &store, study_id, &mut series)?;
    let done_before = plan
        .points
        .iter()
        .filter(|p| finished.contains(&p.key.to_string()))
        .count();
    let mut session = Session {
        study,
        out: &out,
        store,
        study_id,
        live: opts.live.as_ref(),
        progress: Progress::new(plan.points.len(), done_before),
        setup: Setup::new(interleaved),
        series,
        outcome: Outcome {
            out: out.clone(),
            ..Outcome::default()
        },
    };
    'cells: for cell in &plan.cells {
        let repeats = study.workloads[cell.workload].repeats;
        for (b, block) in cell.blocks.iter().enumerate() {
            // Beyond the minimum, a block only while the cell's
            // comparisons are less precise than asked.
            if let (true, Some(precision)) = (b as u32 >= repeats.min, repeats.precision) {
                if let Some(line) = super::precision::precise(
                    &session.store,
                    session.study_id,
                    study,
                    plan,
                    cell,
                    b,
                    precision,
                )? {
                    let left: usize = cell.blocks[b..].iter().map(|r| r.len()).sum();
                    session.outcome.not_needed += left;
                    session.progress.not_needed(left, Some(&line));
                    break;
                }
            }
            for p in &plan.points[block.clone()] {
                if cancel.load(Ordering::Relaxed) {
                    session.outcome.interrupted = true;
                    break 'cells;
                }
                if finished.contains(&p.key.to_string()) {
                    session.outcome.already += 1;
                    continue;
                }
                if !session.point(p, cancel)? {
                    // Interrupted: not stored, so a resume measures it again.
                    session.outcome.interrupted = true;
                    break 'cells;
                }
            }
        }
    }
    session.progress.finish();
    let mut outcome = session.outcome;
    outcome.wall = started.elapsed();
    Ok(outcome)
}

/// The keys of the points an earlier session of the study stored (none for
/// a new study); refuses to add to them without `--resume`.
fn begin(
    study: &Study,
    store: &mut Store,
    opts: &Options,
    out: &Path,
) -> anyhow::Result<HashSet<String>> {
    let Some(id) = store.find_study(&study.name)? else {
        return Ok(HashSet::new());
    };
    let finished = store.finished_keys(id)?;
    if !opts.resume && !finished.is_empty() {
        return Err(UsageError(format!(
            "study '{}' already has {} stored point(s) in {}: add --resume to continue it, or --out DIR to start afresh elsewhere",
            study.name,
            finished.len(),
            out.display()
        ))
        .into());
    }
    // As stored: without its passwords.
    let file_text = crate::util::secrets::redact_text(
        &std::fs::read_to_string(&study.source).unwrap_or_default(),
    );
    let first = store.studies()?.into_iter().find(|s| s.id == id);
    if first.is_some_and(|s| s.file_text != file_text) {
        eprintln!("Note: the study file changed since the study began; points already stored are kept as they are.");
    }
    Ok(finished)
}

/// One study run's state from point to point.
struct Session<'a> {
    study: &'a Study,
    out: &'a Path,
    store: Store,
    study_id: StudyId,
    live: Option<&'a Live>,
    progress: Progress,
    setup: Setup,
    /// Per series (its index in the plan): the stop rules' memory.
    series: HashMap<usize, SeriesState>,
    outcome: Outcome,
}

impl Session<'_> {
    /// Runs point `p` and stores what became of it. False when it was
    /// interrupted (and not stored).
    fn point(&mut self, p: &Point, cancel: &AtomicBool) -> anyhow::Result<bool> {
        let what = describe_point(self.study, p);
        self.progress.current(&what);
        let row = self.row(p);
        if let Some(reason) = &self.series.entry(p.series).or_default().stopped {
            let reason = reason.clone();
            self.store(p, &what, ending(row, PointStatus::Skipped, reason))?;
            return Ok(true);
        }
        // A search's probe: its rate, or no point at all once the search
        // has its answer (not stored: a resume replays it the same way).
        let probe = match super::search::probe_of(p) {
            None => None,
            Some(n) => match super::search::decide(&self.store, self.study_id, self.study, p, n)? {
                Step::Probe(rate) => Some(rate),
                Step::Done(b) => {
                    let first = b.probes.len() + 1 == n as usize;
                    let line = format!(
                        "{what}: not needed, the search has its answer: {}",
                        answer(&b)
                    );
                    self.progress.not_needed(1, first.then_some(line.as_str()));
                    self.outcome.not_needed += 1;
                    return Ok(true);
                }
                Step::Stopped(reason) => {
                    self.store(p, &what, ending(row, PointStatus::Skipped, reason))?;
                    return Ok(true);
                }
            },
        };
        let wl = &self.study.workloads[p.workload];
        let target = match self.setup.target(self.study, p, self.out) {
            Ok(t) => t,
            Err(reason) => {
                self.store(p, &what, ending(row, PointStatus::Failed, reason))?;
                return Ok(true);
            }
        };
        let restart_s = self.setup.started_in.map(|d| d.as_secs_f64());
        if let Some(line) = self.setup.new_build(p) {
            // The program's own --version line, for the report's header.
            self.store
                .save_server_build(self.study_id, &row.target, &line)?;
        }
        let seed = wl.rand_seed.unwrap_or_else(crate::rand::seed_from_time);
        let rand = wl.rand_config(seed);
        let instances = match self.setup.workload(wl, p, &target, rand) {
            Ok(i) => i,
            Err(reason) => {
                self.store(p, &what, ending(row, PointStatus::Failed, reason))?;
                return Ok(true);
            }
        };

        // The point's hard timeout is part of the run's own deadline.
        let mut cfg = wl.run_config(p.clients, seed);
        cfg.timeout = self.study.stop.point_timeout;
        cfg.pacing = match self.pacing(p, probe) {
            Ok(pacing) => pacing,
            Err(reason) => {
                self.store(p, &what, ending(row, PointStatus::Skipped, reason))?;
                return Ok(true);
            }
        };
        let run = match self.study.nodes(p.target, p.workload) {
            Some(nodes) => {
                let spec = PointSpec {
                    workload: wl.name.clone(),
                    options: wl.options.clone(),
                    target: target.clone(),
                    rand,
                    config: cfg.clone(),
                    percentiles: DEFAULT_PERCENTILES.to_vec(),
                    metrics: self.study.metrics,
                    profile: (wl.profile.unwrap_or(self.study.profile))
                        .then(crate::metrics::profile::Settings::default),
                };
                // Its intervals are the workers': the feed says which point
                // runs, and when it ends.
                let watch = self.live(p).map(|l| l.begin(&wl.name, &target));
                let run = super::sharded::run(&spec, nodes, cancel);
                if let Some(w) = watch {
                    w.end();
                }
                run
            }
            None => {
                let refs: Vec<&dyn Workload> = instances.iter().map(|w| w.as_ref()).collect();
                self.in_process(p, &what, &target, &refs, &cfg, rand, cancel)
            }
        };
        let run = match run {
            Ok(r) => r,
            Err(reason) => {
                self.store(p, &what, ending(row, PointStatus::Failed, reason))?;
                return Ok(true);
            }
        };
        // Once the point is stored (or interrupted, to run again), its
        // series file has served.
        let series = run.result.intervals.file().cloned();
        let served = || {
            if let Some(f) = &series {
                f.remove_when_dropped(true);
            }
        };
        if run.result.stop_reason == StopReason::Interrupted {
            served();
            return Ok(false);
        }
        let mut row = match self.failure(&run) {
            Some(reason) => ending(row, PointStatus::Failed, reason),
            None => row,
        };
        row.target_url = target.display.clone();
        row.settings = run.target.settings.0.clone();
        row.restart_s = restart_s;
        let mut run = run;
        if wl.check {
            if let Some(c) = consistency(instances[0].as_ref(), &target) {
                crate::engine::derive::checked(&mut run, c);
            }
        }
        if let Some(plans) = plans(instances[0].as_ref(), &target) {
            crate::engine::derive::planned(&mut run, plans);
        }
        if let (Some(settings), Some(goal)) = (run.run.pacing.as_mut(), wl.pacing.p99_goal) {
            // A probe's goal too: the report judges it by its record.
            settings.p99_goal_ms = Some(goal.as_secs_f64() * 1e3);
        }
        row.run = Some(run);
        self.store(p, &what, row)?;
        served();
        Ok(true)
    }

    /// Runs point `p` in this process (`engine::point`), its live rate on
    /// the progress line; `Err` is why it could not start.
    #[allow(clippy::too_many_arguments)]
    fn in_process(
        &self,
        p: &Point,
        what: &str,
        target: &crate::driver::Target,
        instances: &[&dyn Workload],
        cfg: &crate::engine::RunConfig,
        rand: crate::rand::RandConfig,
        cancel: &AtomicBool,
    ) -> Result<Run, String> {
        let mut point = point::Point::new(target, instances, cfg, rand, &DEFAULT_PERCENTILES);
        let wl = &self.study.workloads[p.workload];
        let profile = wl.profile.unwrap_or(self.study.profile);
        point.metrics = self.study.metrics.map(|interval| point::Metrics {
            interval,
            server: self.setup.server_ref(self.study, p),
            profile: profile.then(crate::metrics::profile::Settings::default),
        });
        // The point's intervals and samples go to a file beside the results
        // database as they close: a point killed in its fourth hour leaves
        // them there (`dbsweep report FILE` reads it).
        point.series = Some(series_path(self.out, &p.key.to_string()));
        point.live = self.live(p);
        let progress = &self.progress;
        point::execute(&point, cancel, &mut |s| {
            if s.duration_s > 0.0 {
                progress.live(what, s.counters.transactions as f64 / s.duration_s);
            }
        })
        .map_err(|e| format!("the run could not start: {e:#}"))
    }

    /// The watcher of point `p` with the labels that say which it is
    /// (beside its workload and target): the study, the study's name of
    /// its target, its variant, CPU set, clients, load level and repeat.
    fn live(&self, p: &Point) -> Option<Live> {
        let live = self.live?;
        let mut labels = vec![
            ("study", self.study.name.clone()),
            ("study_target", p.key.target.clone()),
            ("variant", self.study.variants[p.variant].name.clone()),
        ];
        if let Some(cpus) = &p.cpus {
            labels.push(("cpus", format_cpu_list(cpus)));
        }
        labels.push(("clients", p.clients.to_string()));
        if let Some(level) = p.level {
            labels.push(("level", level.key()));
        }
        labels.push(("repeat", p.repeat.to_string()));
        Some(Live {
            watch: live.watch.clone(),
            labels: (labels.into_iter())
                .map(|(k, v)| (k.to_string(), v))
                .chain(live.labels.iter().cloned())
                .collect(),
        })
    }

    /// How point `p` is paced: its workload's settings at the point's level.
    /// A share of the peak becomes a rate from the closed-loop calibration
    /// point at the same client count (the mean of its finished repeats,
    /// this session's or a resumed one's); without one the point is
    /// skipped, with why.
    fn pacing(&self, p: &Point, probe: Option<f64>) -> Result<Pacing, String> {
        let spec = &self.study.workloads[p.workload].pacing;
        // A workload with rates has neither think time nor ramp-up: the
        // study's loader refused them (`study::pacing`).
        let open = |rate: f64| Mode::Open {
            rate,
            arrival: spec.arrival,
        };
        let mode = match p.level {
            None => Mode::Closed {
                think_time: spec.think_time,
                ramp_up: spec.ramp_up,
            },
            Some(Level::Rate(r)) => open(r),
            Some(Level::OfPeak(f)) => open(
                f * super::search::mean_calibration(&self.store, self.study_id, self.study, p)?,
            ),
            Some(Level::Probe(_)) => open(probe.ok_or("a probe without its rate")?),
            Some(Level::Users(u)) => Mode::Users {
                users: u as usize,
                think_time: spec.think_time,
                ramp_up: spec.ramp_up,
            },
        };
        Ok(Pacing {
            mode,
            latency_limit: spec.latency_limit,
        })
    }

    /// Why a run that ended is not a finished point, if it is not.
    fn failure(&self, run: &Run) -> Option<String> {
        let res = &run.result;
        match res.stop_reason {
            StopReason::Timeout => Some(format!(
                "exceeded its hard timeout of {}",
                duration::format(self.study.stop.point_timeout.unwrap_or_default())
            )),
            StopReason::Aborted => Some(format!(
                "aborted: {}",
                res.fatal_error.clone().unwrap_or_else(|| "error".into())
            )),
            _ => None,
        }
    }

    /// The plan's part of point `p`'s row, as finished; what became of it
    /// is set by the caller.
    fn row(&self, p: &Point) -> PointRow {
        let (study, wl) = (self.study, &self.study.workloads[p.workload]);
        PointRow {
            key: p.key.to_string(),
            // The control's second measurement: a series of its own.
            target: p.key.target.clone(),
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
            load_level: p.level.map(|l| l.key()),
            status: PointStatus::Finished,
            reason: None,
            run: None,
            settings: Vec::new(),
            restart_s: None,
        }
    }

    /// Commits `row`, counts it, says what became of it, and feeds the
    /// series' stop rules: a finished point's figures, or the end of the
    /// series when a point timed out.
    fn store(&mut self, p: &Point, what: &str, row: PointRow) -> anyhow::Result<()> {
        self.store.commit_point(self.study_id, &row)?;
        let state = self.series.entry(p.series).or_default();
        let line = match (row.status, &row.run) {
            (PointStatus::Finished, Some(run)) => {
                self.outcome.finished += 1;
                let res = &run.result;
                // The stop rules read a curve over client counts; a paced
                // point's throughput is its offered load.
                if p.level.is_none() {
                    state.feed(
                        self.study,
                        p,
                        self.study.workloads[p.workload].repeats.min,
                        &PointFigures::of(res),
                    );
                }
                let p95 = res
                    .latency
                    .as_ref()
                    .and_then(|l| l.percentiles.iter().find(|p| p.p == 95.0))
                    .map_or("-".into(), |p| format!("{} ms", ms_us(p.us)));
                format!(
                    "{what}: {:.1} tps, p95 {p95}{}",
                    res.tps,
                    if res.failed_transactions > 0 {
                        format!(", {} failed", res.failed_transactions)
                    } else {
                        String::new()
                    }
                )
            }
            (status, run) => {
                let reason = row.reason.as_deref().unwrap_or("");
                if status == PointStatus::Skipped {
                    self.outcome.skipped += 1;
                } else {
                    self.outcome.failed += 1;
                    if run
                        .as_ref()
                        .is_some_and(|r| r.result.stop_reason == StopReason::Timeout)
                    {
                        state.stopped = Some(format!("stopped: a point {reason}"));
                    }
                }
                format!("{what}: {} ({reason})", status.as_str())
            }
        };
        self.progress.done(&line);
        Ok(())
    }
}

/// `row` ending otherwise than finished: skipped or failed, with why.
fn ending(mut row: PointRow, status: PointStatus, reason: String) -> PointRow {
    row.status = status;
    row.reason = Some(reason);
    row
}

/// Where point `key`'s series file goes while it runs: `series/` in the
/// study's output directory, named after the key (characters a file name
/// should not hold replaced).
fn series_path(out: &std::path::Path, key: &str) -> std::path::PathBuf {
    let name: String = key
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '-' | '_' | '=' | '@' => c,
            _ => '_',
        })
        .collect();
    out.join("series").join(format!("{name}.jsonl.gz"))
}

/// The workload's statements' plans after a point; None when it reads
/// none or they could not be read (the record then keeps none).
fn plans(w: &dyn Workload, target: &crate::driver::Target) -> Option<Vec<(String, String)>> {
    let connect = || crate::driver::connect(target);
    w.plans(&connect).ok().filter(|p| !p.is_empty())
}

/// The workload's consistency conditions after a point (`check = true`),
/// as the record keeps them; None when it defines none or they could not
/// be read (the record then says nothing of consistency).
fn consistency(
    w: &dyn Workload,
    target: &crate::driver::Target,
) -> Option<Vec<crate::record::ConditionResult>> {
    let mut conn = crate::driver::connect(target).ok()?;
    let conditions = w.consistency(conn.as_mut()).ok()??;
    Some(conditions.iter().map(|c| c.to_record()).collect())
}
