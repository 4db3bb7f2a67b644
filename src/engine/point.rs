//! One point: a workload run on a target as a [`RunConfig`] says, and the
//! [`record::Run`] of it. Every command that measures — `run`, `study` and
//! `smack` — takes this one path, so a point is connected, run, timed and
//! recorded the same way whoever asked for it.
//!
//! The record is built here, once, from what the engine measured: every
//! rate, latency summary and CPU figure that any report, the JSON output or
//! the results store shows is computed in [`record`] and only read
//! afterwards, so no two of them can disagree.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{IntervalSample, RunConfig, RunResult};
use crate::driver::{self, Target};
pub use crate::metrics::sampler::ServerRef;
use crate::metrics::sampler::{self, Sampler};
use crate::rand::RandConfig;
use crate::record::spool::{Header, SeriesWriter};
use crate::record::{self, ErrorKindName, OrderedMap, Series, SeriesFile};
use crate::stats::fairness::fairness;
use crate::stats::histogram::Histogram;
use crate::workload::Workload;

/// What to run: a resolved point.
pub struct Point<'a> {
    /// Where the clients connect.
    pub target: &'a Target,
    /// The workload's instances: one normally; several run at once, each
    /// on its own tables, `config.threads` clients each, measured as one
    /// run (seed 001's eight sysbench processes).
    pub instances: &'a [&'a dyn Workload],
    pub config: &'a RunConfig,
    /// The random configuration the instances were built with.
    pub rand: RandConfig,
    /// The percentiles of the record's latency summaries.
    pub percentiles: &'a [f64],
    /// The workload's name and options as the record states them: the
    /// first instance's unless the caller knows better (a `.smack` file
    /// names its file, client and query barrel).
    pub workload: record::WorkloadInfo,
    /// How the machine and the server are sampled beside the run; `None`:
    /// not at all (`--metrics off`).
    pub metrics: Option<Metrics>,
    /// Where the run's series file goes — its intervals and metrics
    /// samples, written as they close (`--json FILE`'s sidecar, a study's
    /// spool) and kept if the run never finishes; `None`: a temporary file.
    pub series: Option<PathBuf>,
    /// Who watches the point as it runs (a live feed), and its labels.
    pub live: Option<super::live::Live>,
}

/// What to sample beside a point.
#[derive(Debug, Clone)]
pub struct Metrics {
    pub interval: Duration,
    /// Where the server's processes are.
    pub server: ServerRef,
    /// On-CPU profiles over the measured window; None: none.
    pub profile: Option<crate::metrics::profile::Settings>,
}

impl<'a> Point<'a> {
    /// A point of `instances` (at least one), recorded under the first
    /// instance's name and options.
    pub fn new(
        target: &'a Target,
        instances: &'a [&'a dyn Workload],
        config: &'a RunConfig,
        rand: RandConfig,
        percentiles: &'a [f64],
    ) -> Point<'a> {
        let first = instances.first().expect("at least one workload instance");
        Point {
            target,
            instances,
            config,
            rand,
            percentiles,
            workload: record::WorkloadInfo {
                name: first.name().to_string(),
                options: first
                    .options()
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            },
            metrics: Some(Metrics {
                interval: Duration::from_secs(1),
                server: default_server_ref(target),
                profile: None,
            }),
            series: None,
            live: None,
        }
    }
}

/// Connects the point's clients, runs it and returns its record. `cancel`
/// (Ctrl-C) stops it early; `on_interval` receives each interval sample as
/// it is taken. The run's deadline, and its hard timeout if the config has
/// one, hold even when the server stops answering.
///
/// Intervals and metrics samples go to the point's series file as they
/// close, and the record reads them from there (`record::Series`): what
/// the run holds in memory depends on its clients, not on its length.
pub fn execute(
    point: &Point<'_>,
    cancel: &AtomicBool,
    on_interval: &mut dyn FnMut(&IntervalSample),
) -> anyhow::Result<record::Run> {
    let cfg = effective(point)?;
    let point = &Point {
        config: &cfg,
        target: point.target,
        instances: point.instances,
        rand: point.rand,
        percentiles: point.percentiles,
        workload: point.workload.clone(),
        metrics: point.metrics.clone(),
        series: point.series.clone(),
        live: point.live.clone(),
    };
    let started_unix_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    check_memory(point.config, point.instances)?;
    let on_loops = point.config.client_threads.is_some();
    let (per, what) = point.target.descriptors_per_connection(on_loops);
    let connections = (point.config.threads * point.instances.len()) as u64;
    if let Some(why) = crate::util::fds::shortfall(connections, per, what) {
        return Err(crate::UsageError(why).into());
    }
    let connect: super::Connect = {
        let target = point.target.clone();
        Arc::new(move || driver::connect(&target))
    };
    let writer = Arc::new(series_writer(point, started_unix_s)?);
    let live = (point.live.as_ref()).map(|l| l.begin(&point.workload.name, point.target));
    let sampler = point.metrics.as_ref().map(|m| {
        Sampler::start(
            &sampler::Options {
                interval: m.interval,
                server: m.server.clone(),
                target: point.target.clone(),
                proc: PathBuf::from("/proc"),
                counts: point.instances[0].window_counts(),
                tap: live
                    .clone()
                    .map(|w| sampler::Tap(Arc::new(move |s| w.sample(s)))),
                profile: m.profile.clone(),
            },
            Some(writer.clone()),
        )
    });
    let pacing = &point.config.pacing;
    let result = super::run_instances(
        point.instances,
        connect,
        point.config,
        cancel,
        &mut |s| {
            writer.interval(&interval_record(s, pacing));
            if let Some(w) = &live {
                w.interval(s);
            }
            on_interval(s);
        },
        sampler.as_ref(),
    )?;
    if let Some(w) = &live {
        w.end();
    }
    let mut run = record(point, &result, started_unix_s, writer.intervals());
    if let Some(s) = sampler {
        let c = &result.counters;
        super::derive::measured(&mut run, s.finish(c.transactions, c.queries()));
    }
    if let Some(why) = writer.error() {
        eprintln!("warning: the run's time series is incomplete ({why}); its totals are whole");
    }
    Ok(run)
}

/// The point's series file, created with its header: at `point.series`
/// (kept until its record is written elsewhere), or a temporary file.
fn series_writer(point: &Point<'_>, started_unix_s: u64) -> anyhow::Result<SeriesWriter> {
    use anyhow::Context;
    let file = match &point.series {
        Some(path) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("Could not create '{}'", dir.display()))?;
            }
            SeriesFile::new(path.clone(), false)
        }
        None => {
            let path = tempfile::Builder::new()
                .prefix("dbsweep-series-")
                .suffix(".jsonl.gz")
                .tempfile()
                .context("Could not create a temporary file for the run's time series")?
                .into_temp_path()
                .keep()
                .context("Could not keep the temporary file of the run's time series")?;
            SeriesFile::new(path, true)
        }
    };
    let threads = shard_threads(point.config, point.instances.len());
    let header = header(point, started_unix_s, threads);
    SeriesWriter::create(file.clone(), &header).with_context(|| {
        format!(
            "Could not create the run's series file '{}' (its intervals and samples go there as they close)",
            file.path().display()
        )
    })
}

/// The clients this process runs: all of them, or its shard's part.
fn shard_threads(cfg: &RunConfig, instances: usize) -> usize {
    let all = cfg.threads.max(1) * instances.max(1);
    cfg.shard.map_or(all, |s| s.range(all).len())
}

/// An interval sample as the record keeps it, its percentiles read from
/// its histograms.
pub fn interval_record(s: &IntervalSample, pacing: &super::Pacing) -> record::Interval {
    let mut i = interval(s, pacing);
    super::derive::interval(&mut i).expect("the engine's own histograms are consistent");
    i
}

/// Refuses, before anything starts, a run whose users (the pool's and
/// what each instance of the workload keeps per user) would not fit in
/// the memory available.
pub fn check_memory(cfg: &RunConfig, instances: &[&dyn Workload]) -> Result<(), crate::UsageError> {
    let Some(users) = cfg.pacing.users() else {
        return Ok(());
    };
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let (bytes, what) = instances.iter().fold((0, ""), |(n, what), w| {
        let (b, w) = w.bytes_per_user();
        (n + b, if w.is_empty() { what } else { w })
    });
    match super::users::memory_shortfall(users as u64, bytes, what, &meminfo) {
        Some(why) => Err(crate::UsageError(why)),
        None => Ok(()),
    }
}

/// `--ramp-up` starts users one after another, so the run needs users:
/// given (`--users`), or the workload's own (TPC-C's ten terminals per
/// warehouse). Without them the option would pace nothing anyone asked for.
pub fn check_ramp_up(cfg: &RunConfig, w: &dyn Workload) -> Result<(), crate::UsageError> {
    match (cfg.pacing.ramp_up(), cfg.pacing.users(), w.default_users()) {
        (Some(r), None, None) => Err(crate::UsageError(format!(
            "--ramp-up {r} starts emulated users one after another, and this run has none: \
             add --users N (--eus N, at least --threads), or drop --ramp-up"
        ))),
        _ => Ok(()),
    }
}

/// The point's config with what the workload and the pacing imply: the
/// workload's think time and users when none are given (DBT-1's users
/// think; TPC-C has ten terminals per warehouse), and with a ramp-up a
/// warmup at least as long as starting every user takes, so the measured
/// window sees them all.
fn effective(point: &Point<'_>) -> anyhow::Result<RunConfig> {
    use super::pacing::Mode;
    let mut cfg = point.config.clone();
    // An open loop has no users to think: its arrivals come from the schedule.
    if let Mode::Closed { think_time, .. } | Mode::Users { think_time, .. } = &mut cfg.pacing.mode {
        if think_time.is_none() {
            *think_time = point.instances[0].default_think_time();
        }
    }
    if let Mode::Closed {
        think_time,
        ramp_up,
    } = cfg.pacing.mode
    {
        if let Some(users) = point.instances[0].default_users() {
            if users < cfg.threads {
                return Err(crate::UsageError(format!(
                    "--threads {} is more than {}'s {users} users: each connection serves at least one (lower --threads, or scale the workload up)",
                    cfg.threads,
                    point.instances[0].name()
                ))
                .into());
            }
            cfg.pacing.mode = Mode::Users {
                users,
                think_time,
                ramp_up,
            };
        }
    }
    if let Some(rate) = cfg.pacing.ramp_up() {
        let users = cfg.pacing.users().unwrap_or(cfg.threads);
        let ramp = Duration::from_secs_f64(users.saturating_sub(1) as f64 / rate);
        cfg.warmup = cfg.warmup.max(ramp);
    }
    Ok(cfg)
}

/// Where a target's server processes are when nobody says: SQLite runs
/// in the client; a server reached over the network is found by the socket
/// it listens on (if it runs on this machine).
pub fn default_server_ref(target: &Target) -> ServerRef {
    match target.dialect() {
        crate::record::Dialect::Sqlite => ServerRef::Embedded,
        _ => ServerRef::Listening,
    }
}

/// Where a run's server is sampled from: as [`default_server_ref`], but a
/// shard other than the first leaves the server to shard 0 — the server
/// is one, and N shards each reading its processes and views would cost
/// it N times (at 1,024 connections a reading walks a thousand backends).
/// Each shard still samples its own machine and client.
pub fn server_ref(target: &Target, shard: Option<super::Shard>) -> ServerRef {
    match shard {
        Some(s) if s.index > 0 => {
            ServerRef::Elsewhere("sampled by shard 0 (one server, sampled once)".into())
        }
        _ => default_server_ref(target),
    }
}

/// What the run's series file says about it before it has a result: the
/// record's parts known when it starts (the server's version comes with
/// the result).
pub fn header(point: &Point<'_>, started_unix_s: u64, threads: usize) -> Header {
    let cfg = point.config;
    let rand = &point.rand;
    Header {
        format: record::spool::SERIES_FORMAT.to_string(),
        tool: record::Tool {
            name: "dbsweep".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        started_unix_s,
        workload: point.workload.clone(),
        target: record::TargetInfo {
            url: point.target.display.clone(),
            dialect: point.target.dialect(),
            // The server says its version when the clients connect.
            server_version: String::new(),
            settings: Default::default(),
        },
        random: record::Random {
            kind: rand.kind.name().to_string(),
            seed: rand.seed,
            spec_iter: rand.params.spec_iter,
            spec_pct: rand.params.spec_pct,
            spec_res: rand.params.spec_res,
            pareto_h: rand.params.pareto_h,
            zipfian_exp: rand.params.zipf_exp,
        },
        run: record::Settings {
            threads: threads as u64,
            time_s: cfg.time.map(|t| t.as_secs_f64()),
            events: cfg.events,
            rounds: cfg.rounds,
            warmup_s: cfg.warmup.as_secs_f64(),
            report_interval_s: cfg.report_interval.map(|t| t.as_secs_f64()),
            percentile: Some(cfg.interval_percentile),
            max_retries: cfg.max_retries,
            ignore_errors: cfg
                .ignore_errors
                .kinds()
                .iter()
                .map(|k| ErrorKindName(k.name().to_string()))
                .collect(),
            grace_s: cfg.grace.as_secs_f64(),
            timeout_s: cfg.timeout.map(|t| t.as_secs_f64()),
            pacing: pacing_settings(&cfg.pacing),
            percentiles: point.percentiles.to_vec(),
            shard: cfg.shard.map(|s| record::ShardOf {
                index: s.index as u64,
                count: s.count as u64,
                threads: (cfg.threads * point.instances.len()) as u64,
            }),
            client_threads: cfg.client_threads.map(|n| n as u64),
            pipeline: cfg.pipeline.map(|n| n as u64),
        },
        machine: crate::metrics::machine::describe(),
    }
}

/// The record of `result`, measured for `point` from `started_unix_s` on,
/// with its `intervals`: the measured parts copied, every other figure
/// derived from them (`derive`), as a merge of shards derives them.
pub fn record(
    point: &Point<'_>,
    result: &RunResult,
    started_unix_s: u64,
    intervals: Series<record::Interval>,
) -> record::Run {
    let h = header(point, started_unix_s, result.threads);
    let mut run = record::Run {
        schema: record::SCHEMA_ID.to_string(),
        tool: h.tool,
        started_unix_s,
        released_unix_us: Some(result.released_unix_us),
        workload: h.workload,
        target: record::TargetInfo {
            server_version: result.server.version.clone(),
            settings: result.server.settings.iter().cloned().collect(),
            ..h.target
        },
        random: h.random,
        run: h.run,
        machine: h.machine,
        result: outcome(result, &point.config.pacing, intervals),
    };
    super::derive::derive(&mut run).expect("the engine's own histograms are consistent");
    run
}

/// The record's pacing settings; None for a plain closed loop.
fn pacing_settings(p: &super::Pacing) -> Option<record::PacingSettings> {
    if p.is_closed_loop() {
        return None;
    }
    Some(record::PacingSettings {
        rate: p.rate().map(|(r, _)| r),
        arrival: p.rate().map(|(_, a)| a.name().to_string()),
        users: p.users().map(|u| u as u64),
        think_time: p.think_time().map(|t| t.to_string()),
        think_time_mean_s: p.think_time().map(|t| t.mean().as_secs_f64()),
        latency_limit_ms: p.latency_limit.map(|l| l.as_secs_f64() * 1e3),
        p99_goal_ms: None,
        ramp_up_per_s: p.ramp_up(),
    })
}

/// What the pacing measured (its counts; `derive` adds the rates and
/// summaries); None for a plain closed loop.
fn pacing_outcome(res: &RunResult, p: &super::Pacing) -> Option<record::PacingOutcome> {
    if p.is_closed_loop() {
        return None;
    }
    let c = &res.counters;
    let queued = res.offered.is_some();
    Some(record::PacingOutcome {
        offered: res.offered,
        offered_per_s: None,
        achieved_per_s: 0.0,
        late: p.latency_limit.map(|_| c.late),
        skipped: p.skip_after().map(|_| c.skipped),
        unstarted: queued.then_some(c.unstarted),
        service: None,
        lag: None,
        setup_s: res.setup.map(|d| d.as_secs_f64()),
    })
}

/// What the run measured: counters, windows and histograms; the derived
/// figures are left for `derive`.
fn outcome(
    res: &RunResult,
    pacing: &super::Pacing,
    intervals: Series<record::Interval>,
) -> record::Outcome {
    let c = &res.counters;
    // The error that aborted the run is counted, but it did not pass by.
    let fatal_errors = u64::from(res.fatal.is_some());
    let ignored_errors = c.total_errors() - fatal_errors.min(c.total_errors());
    let named = |kinds: &[String], hs: &[Histogram]| -> OrderedMap<record::Histogram> {
        kinds
            .iter()
            .zip(hs)
            .filter(|(_, h)| !h.is_empty())
            .map(|(k, h)| (k.clone(), record::Histogram::from(h)))
            .collect()
    };
    let histograms = record::Histograms {
        transaction: record::Histogram::from(&res.txn_latency),
        statements: named(&res.statement_kinds, &res.stmt_latency),
        service: res.service.as_ref().map(record::Histogram::from),
        lag: res.lag.as_ref().map(record::Histogram::from),
        types: res
            .types
            .iter()
            .map(|t| (t.t.name.to_string(), record::Histogram::from(&t.latency)))
            .collect(),
    };
    record::Outcome {
        stop_reason: res.stop,
        fatal_error: res.fatal.clone(),
        measured_s: res.measured.as_secs_f64(),
        transactions: c.transactions,
        tps: 0.0,
        queries: record::Queries {
            read: c.reads,
            write: c.writes,
            other: c.others,
            total: c.queries(),
        },
        qps: 0.0,
        failed_transactions: c.failed,
        retries: c.retries,
        ignored_errors,
        reconnects: c.reconnects,
        abandoned: res.abandoned,
        // Counters index kinds as ErrorKind::ALL, the record's order.
        errors: record::ErrorCounts::from_array(c.errors),
        latency: None,
        statements: Vec::new(),
        fairness: fairness(&res.clients),
        client_cpu: record::ClientCpu {
            user_s: res.cpu.user.as_secs_f64(),
            system_s: res.cpu.system.as_secs_f64(),
            us_per_transaction: None,
            us_per_query: None,
            share_of_machine: 0.0,
            cpus: res.cpus as u64,
        },
        intervals,
        connect: Some(record::Connect {
            wall_s: res.connect.wall.as_secs_f64(),
            histogram: record::Histogram::from(&res.connect.latency),
        }),
        histograms: Some(histograms),
        metrics: None,
        pacing: pacing_outcome(res, pacing),
        transaction_types: res
            .types
            .iter()
            .map(|t| record::TransactionType {
                name: t.t.name.to_string(),
                count: t.latency.count(),
                failed: t.failed,
                per_s: 0.0,
                share_pct: 0.0,
                expected_pct: t.t.expected_pct,
                latency: None,
                p90_limit_s: t.t.p90_limit.map(|l| l.as_secs_f64()),
                p90_exceeded: None,
                queries: t.t.queries,
            })
            .collect(),
        shards: None,
        consistency: None,
        tpcc: None,
        tpch: None,
        chbench: None,
        plans: Vec::new(),
    }
}

fn interval(s: &IntervalSample, pacing: &super::Pacing) -> record::Interval {
    let c = &s.counters;
    record::Interval {
        t_s: s.t_s,
        duration_s: s.duration_s,
        warmup: s.warmup,
        threads: s.threads as u64,
        transactions: c.transactions,
        failed: c.failed,
        reads: c.reads,
        writes: c.writes,
        others: c.others,
        errors: c.total_errors(),
        reconnects: c.reconnects,
        p50_us: None,
        p95_us: None,
        p99_us: None,
        max_us: None,
        offered_per_s: s.paced.as_ref().map(|p| p.offered_per_s),
        queue: s.paced.as_ref().map(|p| p.queue),
        lag_p99_us: None,
        lag_max_us: None,
        late: pacing.latency_limit.map(|_| c.late),
        skipped: pacing.skip_after().map(|_| c.skipped),
        histogram: Some(record::Histogram::from(&s.latency)),
        lag_histogram: s.paced.as_ref().map(|_| record::Histogram::from(&s.lag)),
    }
}
