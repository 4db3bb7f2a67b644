//! `prepare`, `run` and `cleanup`: one workload on one target, sysbench's
//! three verbs. `run` without `--db` prepares a temporary SQLite database
//! itself and removes it afterwards.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::prometheus::{Prometheus, FEED_INTERVAL};
use super::write_hdr_log;
use super::{cancel_flag, check_sqlite_path, connect_checked, status_of, write_atomically};
use super::{JsonOut, RunStatus};
use crate::driver::{self, Target};
use crate::engine::point::{self, Point};
use crate::engine::spec::PointSpec;
use crate::engine::RunConfig;
use crate::rand::RandConfig;
use crate::report;
use crate::report::export::{Exporter, Html, Text};
use crate::util::progress::Bar;
use crate::workload::{self, Workload};
use crate::UsageError;

/// A workload on a target: what `prepare` and `cleanup` act on, and what
/// `run` measures.
#[derive(Debug, Clone)]
pub struct TargetRequest {
    /// The workload's name.
    pub workload: String,
    /// Workload options given on the command line (name without dashes,
    /// raw value); the workload checks them.
    pub options: Vec<(String, String)>,
    /// `--db`; None: `run` uses a temporary SQLite database.
    pub db: Option<Target>,
    /// `--threads`: clients of `run`, loaders of `prepare`.
    pub threads: usize,
    pub rand: RandConfig,
}

/// `dbsweep run`. With `--nodes`, its workers get its point
/// ([`RunRequest::spec`]); what only the coordinator does (write and
/// report) stays behind.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub target: TargetRequest,
    /// How the run is driven. When the command line gave no stop condition
    /// (`open_ended`), it runs for the default time — unless the workload
    /// has a count of transactions per client of its own.
    pub config: RunConfig,
    pub open_ended: bool,
    /// `--percentiles`.
    pub percentiles: Vec<f64>,
    pub json: Option<JsonOut>,
    /// `--report FILE.html` (checked writable before the run).
    pub report: Option<PathBuf>,
    /// `--hdr-log FILE`: the intervals' latency as an HdrHistogram
    /// interval log (checked writable before the run).
    pub hdr_log: Option<PathBuf>,
    /// The interval of the machine and server sampling beside the run;
    /// `None`: `--metrics off`.
    pub metrics: Option<Duration>,
    /// `--profile`: perf's profiles beside the metrics; `None`: none.
    pub profile: Option<crate::metrics::profile::Settings>,
    /// `--check`: the workload's consistency conditions after the run.
    pub check: bool,
    /// `--prometheus ADDR`: the run served live there (bound before it
    /// starts).
    pub prometheus: Option<SocketAddr>,
}

impl RunRequest {
    /// The point this run measures on `target`, as its workers run it
    /// (`--nodes`) or a pod reads it (`dbsweep k8s`), with nothing left to
    /// resolve: an open-ended run of a workload with rounds of its own runs
    /// them, and a run with `--report` has its intervals. What only this
    /// process does (write, report, check) is left behind.
    pub fn spec(&self, target: Target) -> anyhow::Result<PointSpec> {
        let mut spec = PointSpec {
            workload: self.target.workload.clone(),
            options: self.target.options.clone(),
            target,
            rand: self.target.rand,
            config: self.config.clone(),
            percentiles: self.percentiles.clone(),
            metrics: self.metrics,
            profile: self.profile.clone(),
        };
        if self.open_ended {
            if let Some(rounds) = spec.build()?.default_rounds() {
                spec.config.time = None;
                spec.config.rounds = Some(rounds);
            }
        }
        if spec.config.report_interval.is_none() {
            spec.config.report_interval = self.outputs_interval(spec.config.time);
        }
        Ok(spec)
    }

    /// The intervals the outputs need when none were asked for: the
    /// HdrHistogram log's 1 s ones, or about 60 over the run for the
    /// report's time series; `None` when neither is written (the live
    /// feed's are [`Bench::measure`]'s, for every measurement it watches).
    fn outputs_interval(&self, time: Option<Duration>) -> Option<Duration> {
        if self.hdr_log.is_some() {
            Some(HDR_LOG_INTERVAL)
        } else {
            self.report.is_some().then(|| report_interval(time))
        }
    }

    /// The run of a point file (`run --spec`): the point as it is, and
    /// what this process does with its record.
    pub fn of_point(spec: PointSpec, outputs: Outputs, check: bool) -> RunRequest {
        RunRequest {
            target: TargetRequest {
                workload: spec.workload,
                options: spec.options,
                db: Some(spec.target),
                threads: spec.config.threads,
                rand: spec.rand,
            },
            config: spec.config,
            open_ended: false,
            percentiles: spec.percentiles,
            json: outputs.json,
            report: outputs.report,
            hdr_log: outputs.hdr_log,
            metrics: spec.metrics,
            profile: None,
            check,
            prometheus: None,
        }
    }

    /// The live feed, bound before anything else of the run starts (a
    /// port already taken is bad input); None without `--prometheus`.
    pub(super) fn feed(&self) -> Result<Option<Prometheus>, UsageError> {
        self.prometheus
            .map(|a| Prometheus::bind(a, &format!("--prometheus {a}")))
            .transpose()
    }
}

/// What `run --spec` writes of the point's record: `--json`, `--report`,
/// `--hdr-log`.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    pub json: Option<JsonOut>,
    pub report: Option<PathBuf>,
    pub hdr_log: Option<PathBuf>,
}

pub(super) fn require_target(t: &TargetRequest, verb: &str) -> Result<Target, UsageError> {
    t.db.clone().ok_or_else(|| {
        UsageError(format!(
            "`dbsweep {verb}` needs --db URL (e.g. --db sqlite://bench.db); \
             `dbsweep run` without --db uses a temporary SQLite database it prepares itself"
        ))
    })
}

pub(super) fn build(t: &TargetRequest, target: &Target) -> anyhow::Result<Box<dyn Workload>> {
    workload::build(&t.workload, &t.options, target.dialect(), t.rand)
}

pub fn prepare(t: &TargetRequest) -> anyhow::Result<()> {
    let target = require_target(t, "prepare")?;
    let w = build(t, &target)?;
    check_sqlite_path(&target, true, w.name())?;
    drop(connect_checked(&target)?);
    let started = Instant::now();
    let connect = || driver::connect(&target);
    w.prepare(&connect, t.threads.max(1), &Bar::new())?;
    eprintln!(
        "Prepared {} on {} in {:.2}s",
        w.name(),
        target.display,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

pub fn cleanup(t: &TargetRequest) -> anyhow::Result<()> {
    let target = require_target(t, "cleanup")?;
    let w = build(t, &target)?;
    check_sqlite_path(&target, false, w.name())?;
    let mut conn = connect_checked(&target)?;
    w.cleanup(conn.as_mut())?;
    eprintln!("Cleaned up {} on {}", w.name(), target.display);
    Ok(())
}

/// The intervals of `--hdr-log` when none were asked for: HdrHistogram's
/// logs are customarily kept a second at a time.
const HDR_LOG_INTERVAL: Duration = Duration::from_secs(1);

/// The interval of the report's time series when none was asked for:
/// about 60 points over a timed run, at a round length.
pub(super) fn report_interval(time: Option<Duration>) -> Duration {
    let want = time.map_or(1.0, |t| t.as_secs_f64() / 60.0);
    let s = [
        0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0,
    ]
    .into_iter()
    .find(|&s| s >= want)
    .unwrap_or(600.0);
    Duration::from_secs_f64(s)
}

pub fn run(req: RunRequest) -> anyhow::Result<RunStatus> {
    let feed = req.feed()?;
    let (mut bench, mut cfg) = Bench::open(&req)?;
    bench.live = feed.as_ref().map(|f| f.live(Vec::new()));
    let cancel = cancel_flag();
    bench.preamble(&cfg);
    // The report's time series, the HdrHistogram log and the live feed
    // need intervals; they are printed only when asked for.
    let print_intervals = cfg.report_interval.is_some();
    if cfg.report_interval.is_none() {
        cfg.report_interval = req.outputs_interval(cfg.time);
    }
    let interval = cfg.report_interval.map_or(0.0, |d| d.as_secs_f64());
    // Beside --json FILE, the run's intervals and samples are written as
    // they close; a killed run leaves them there for `dbsweep report`.
    let series = req.json.as_ref().and_then(JsonOut::series_path);
    let record = bench.measure(&req, &cfg, series, &cancel, &mut |s| {
        // The tail after the last full interval is kept in the result but
        // not printed when it is too short for its rates to mean anything.
        if print_intervals && s.duration_s >= 0.5 * interval {
            println!("{}", report::run::live::interval_line(s));
        }
    })?;
    if print_intervals && !record.result.intervals.is_empty() {
        println!();
    }
    std::io::stdout().write_all(&Text.run(&record)?.report)?;
    let mut record = record;
    let consistent = check_after(req.check, bench.w.as_ref(), &bench.target, &mut record)?;
    plans_after(bench.w.as_ref(), &bench.target, &mut record);
    if let Some(p) = &req.hdr_log {
        write_hdr_log(p, &record)?;
    }
    if let Some(out) = &req.json {
        out.write_profiles(&mut record)?;
        out.write_run(&record)?;
        // The record holds the series now; its file has served.
        if let Some(f) = record.result.intervals.file() {
            f.remove_when_dropped(true);
        }
    }
    if let Some(p) = &req.report {
        write_atomically(p, &Html.run(&record)?.report)?;
        eprintln!("Report written to {}", p.display());
    }
    let status = status_of([&record.result.stop_reason]);
    if !consistent {
        return Ok(RunStatus::Aborted);
    }
    Ok(status)
}

/// A workload on its target, checked and ready to measure, for one run or
/// several (`--find-rate`'s probes).
pub(super) struct Bench {
    pub target: Target,
    pub w: Box<dyn Workload>,
    pub info: driver::ServerInfo,
    pub rand: RandConfig,
    /// Who watches each measurement as it runs (`--prometheus`).
    pub live: Option<crate::engine::live::Live>,
    /// The temporary SQLite database of a run without --db, removed with
    /// the bench.
    _tmp: Option<tempfile::TempDir>,
}

impl Bench {
    /// Checks the request against the machine and the database (prepared
    /// here first for a run without --db), and returns the bench and the
    /// run's config as it will run.
    pub fn open(req: &RunRequest) -> anyhow::Result<(Bench, RunConfig)> {
        let t = &req.target;
        // No --db: a temporary SQLite database, prepared here and removed
        // after.
        let (target, tmp) = match &t.db {
            Some(target) => (target.clone(), None),
            None => {
                let tmp = tempfile::Builder::new()
                    .prefix("dbsweep-")
                    .tempdir()
                    .context("Could not create a temporary directory")?;
                (Target::sqlite(tmp.path().join("dbsweep.db")), Some(tmp))
            }
        };
        let on_loops = req.config.client_threads.is_some();
        let (per, what) = target.descriptors_per_connection(on_loops);
        if let Some(why) = crate::util::fds::shortfall(t.threads as u64, per, what) {
            let loops = if per == 2 {
                "; or run them on event loops (--client-threads N), where a connection needs one"
            } else {
                ""
            };
            return Err(UsageError(format!("--threads {}: {why}{loops}", t.threads)).into());
        }
        let w = build(t, &target)?;
        point::check_ramp_up(&req.config, w.as_ref())?;
        let mut cfg = req.config.clone();
        if req.open_ended {
            if let Some(rounds) = w.default_rounds() {
                cfg.time = None;
                cfg.rounds = Some(rounds);
            }
        }
        // Before anything is prepared or connected (the point checks again).
        point::check_memory(&cfg, &[w.as_ref()])?;
        if t.db.is_some() {
            check_sqlite_path(&target, false, w.name())?;
        }
        let mut probe = connect_checked(&target)?;
        if t.db.is_none() {
            eprintln!(
                "No --db given: preparing a temporary SQLite database at {}",
                target.display
            );
            let connect = || driver::connect(&target);
            w.prepare(&connect, t.threads.max(1), &Bar::new())?;
        }
        // One shard checks the data for all: the others would only repeat
        // its queries against the same database while it warms up.
        if cfg.shard.is_none_or(|s| s.index == 0) {
            w.check_prepared(probe.as_mut())?;
        }
        // A pooler that would lose prepared statements is refused here.
        let info = probe
            .server_info()
            .map_err(|e| UsageError(format!("{}: {}", target.display, e.message)))?;
        drop(probe);
        let bench = Bench {
            target,
            w,
            info,
            rand: t.rand,
            live: None,
            _tmp: tmp,
        };
        Ok((bench, cfg))
    }

    /// What is run, on what, printed before it starts.
    pub fn preamble(&self, cfg: &RunConfig) {
        print!(
            "{}",
            report::run::live::preamble(
                self.w.name(),
                &self.target.display,
                &self.info.version,
                cfg,
                self.rand.seed
            )
        );
        // SQLite: how transactions take their locks decides whether
        // writers collide (see the driver); say which it was.
        if let Some((_, begin)) = self.info.settings.iter().find(|(k, _)| k == "begin") {
            println!("Transactions start with: {begin}");
        }
        let _ = std::io::stdout().flush();
    }

    /// Runs the workload once as `cfg` says, with the request's metrics
    /// and percentiles; its series written to `series` as it closes. A
    /// watched run without intervals gets the live feed's.
    pub fn measure(
        &self,
        req: &RunRequest,
        cfg: &RunConfig,
        series: Option<PathBuf>,
        cancel: &std::sync::atomic::AtomicBool,
        on_interval: &mut dyn FnMut(&crate::engine::IntervalSample),
    ) -> anyhow::Result<crate::record::Run> {
        let instances = [self.w.as_ref()];
        let mut watched = cfg.clone();
        if self.live.is_some() && cfg.report_interval.is_none() {
            watched.report_interval = Some(FEED_INTERVAL);
        }
        let cfg = &watched;
        let mut point = Point::new(&self.target, &instances, cfg, self.rand, &req.percentiles);
        point.live = self.live.clone();
        point.metrics = req.metrics.map(|interval| point::Metrics {
            interval,
            server: point::server_ref(&self.target, cfg.shard),
            profile: req.profile.clone(),
        });
        point.series = series;
        point::execute(&point, cancel, on_interval)
    }
}

/// The workload's statements' plans after the run, into the record; a
/// plan that cannot be read is left out with a warning (the run's
/// figures stand without it).
fn plans_after(
    w: &dyn crate::workload::Workload,
    target: &Target,
    record: &mut crate::record::Run,
) {
    let connect = || crate::driver::connect(target);
    match w.plans(&connect) {
        Ok(p) if !p.is_empty() => crate::engine::derive::planned(record, p),
        Ok(_) => {}
        Err(e) => eprintln!("warning: the queries' plans could not be read: {e:#}"),
    }
}

/// `--check`: the workload's consistency conditions after the run, into
/// the record (its reports show them); false when one fails.
fn check_after(
    check: bool,
    w: &dyn crate::workload::Workload,
    target: &Target,
    record: &mut crate::record::Run,
) -> anyhow::Result<bool> {
    if !check {
        return Ok(true);
    }
    let mut conn = connect_checked(target)?;
    let started = Instant::now();
    println!("Consistency after the run:");
    match w.consistency(conn.as_mut())? {
        Some(conditions) => {
            let ok = super::print_conditions(&conditions, &target.display, started, "    ");
            crate::engine::derive::checked(
                record,
                conditions.iter().map(|c| c.to_record()).collect(),
            );
            Ok(ok)
        }
        None => {
            println!("    {} defines no consistency conditions", w.name());
            Ok(true)
        }
    }
}
