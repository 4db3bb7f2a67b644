//! Turns the raw command line into a [`Request`]: validated, typed values
//! for the command to run. Every problem becomes a [`UsageError`] that
//! names the option and the fix.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::commands::dist::DistRequest;
use crate::commands::merge::MergeRequest;
use crate::commands::report::{Format, ReportRequest, ResultsRequest};
use crate::commands::run::{Outputs, RunRequest, TargetRequest};
use crate::commands::server::{ServerRequest, SERVERS_DIR};
use crate::commands::smack::{GenDataRequest, SmackRequest};
use crate::commands::study::StudyRequest;
use crate::commands::{JsonOut, Request};
use crate::driver::{Dialect, ErrorSet, PsMode, Target};
use crate::engine::{pacing, Pacing, RunConfig};
use crate::metrics::profile::Settings as ProfileSettings;
use crate::nodes::worker::WorkerRequest;
use crate::rand::dist::DistParams;
use crate::rand::RandConfig;
use crate::server::{self, ServerSpec};
use crate::util::paths::dir_of;
use crate::workload::smack::gen_data;
use crate::UsageError;

use super::args::{
    Cli, Command, DistArgs, GenDataArgs, RandArgs, ReportArgs, RunArgs, ServerCommand,
    ServerStartArgs, SmackArgs, TargetArgs,
};
use super::run_checks;

/// Default measured time when no stop condition is given (sysbench's).
pub const DEFAULT_TIME_S: f64 = 10.0;

/// The request of a parsed command line.
pub fn request(cli: Cli) -> Result<Request, UsageError> {
    Ok(match cli.command {
        Command::Prepare(t) => Request::Prepare(target_request(&t)?),
        Command::Run(r) => {
            let req = Box::new(match &r.spec {
                Some(file) => point_request(&r, file)?,
                None => run_request(&r)?,
            });
            run_checks::client_threads(&r, &req)?;
            run_checks::pipeline(&r, &req)?;
            if let Some(f) = run_checks::find_rate(&r)? {
                return Ok(Request::FindRate(req, f));
            }
            match run_checks::nodes(&r, &req)? {
                Some(n) => Request::Coordinate(req, n),
                None => Request::Run(req),
            }
        }
        Command::Cleanup(t) => Request::Cleanup(target_request(&t)?),
        Command::Check(t) => Request::Check(target_request(&t)?),
        Command::Worker(w) => Request::Worker(WorkerRequest {
            coordinator: w.coordinator,
            shard_index: w.shard_index,
        }),
        Command::Merge(m) => Request::Merge(MergeRequest {
            json: json_out(m.json.as_deref())?,
            report: m.report.as_deref().map(report_path).transpose()?,
            files: m.files,
        }),
        Command::Workloads => Request::Workloads,
        Command::Dist(d) => Request::Dist(dist_request(&d)?),
        Command::Server(s) => Request::Server(server_request(s)?),
        Command::Study(s) => Request::Study(StudyRequest {
            file: s.file,
            out: s.out,
            resume: s.resume,
            dry_run: s.dry_run,
            check_statements: s.check_statements,
        }),
        Command::Results(r) => Request::Results(ResultsRequest {
            path: r.path,
            csv: r.csv,
        }),
        Command::Report(r) => Request::Report(report_request(r)?),
        Command::Smack(s) => Request::Smack(smack_request(&s)?),
        Command::GenData(g) => Request::GenData(gen_data_request(&g)?),
        Command::K8s(k) => Request::K8s(Box::new(super::k8s::request(&k, run_request)?)),
    })
}

/// The target named by `--db` (None: the command picks the default), with
/// `--db-ps-mode` applied.
pub fn target(db: Option<&str>, mode: PsMode) -> Result<Option<Target>, UsageError> {
    let t = db
        .map(|u| Target::parse_with(u, mode).map_err(UsageError))
        .transpose()?;
    if db.is_some_and(has_password) {
        warn_password_on_command_line();
    }
    Ok(t)
}

/// Does the URL hold a password (`scheme://user:password@…`)?
fn has_password(url: &str) -> bool {
    crate::util::secrets::redact_text(url) != url
}

/// Once per process, on stderr: a password on the command line is visible
/// to every user of the machine (`ps`), as sysbench's are.
fn warn_password_on_command_line() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        eprintln!("warning: the password in --db is visible to every user of this machine (ps); give it with PGPASSWORD or ~/.pgpass (PostgreSQL), MYSQL_PWD or ?defaults-file=PATH (MySQL) instead");
    });
}

/// The random configuration of `--rand-*`, with `seed` (0: from the clock).
pub fn rand_config(a: &RandArgs, seed: u64) -> Result<RandConfig, UsageError> {
    let seed = if seed == 0 {
        crate::rand::seed_from_time()
    } else {
        seed
    };
    let params = DistParams {
        spec_iter: a.rand_spec_iter,
        spec_pct: a.rand_spec_pct,
        spec_res: a.rand_spec_res,
        pareto_h: a.rand_pareto_h,
        zipf_exp: a.rand_zipfian_exp,
    };
    params.validate().map_err(|e| UsageError(e.to_string()))?;
    Ok(RandConfig {
        kind: a.rand_type,
        params,
        seed,
    })
}

fn seconds(name: &str, v: f64) -> Result<Duration, UsageError> {
    if !v.is_finite() || v < 0.0 {
        return Err(UsageError(format!(
            "invalid --{name} {v}: expected a number of seconds ≥ 0"
        )));
    }
    Ok(Duration::from_secs_f64(v))
}

pub fn percentiles(list: &str) -> Result<Vec<f64>, UsageError> {
    list.split(',')
        .map(|p| {
            let p = p.trim();
            match p.parse::<f64>() {
                Ok(x) if x > 0.0 && x <= 100.0 => Ok(x),
                _ => Err(UsageError(format!(
                    "invalid percentile '{p}' in --percentiles: expected numbers in (0, 100], e.g. 50,95,99.9"
                ))),
            }
        })
        .collect()
}

/// Where `--json` goes, checked before the run so a bad path fails early.
pub fn json_out(arg: Option<&str>) -> Result<Option<JsonOut>, UsageError> {
    match arg {
        None => Ok(None),
        Some("-") => Ok(Some(JsonOut::Stdout)),
        Some(p) => {
            let path = Path::new(p);
            let dir = dir_of(path);
            if !dir.is_dir() {
                return Err(UsageError(format!(
                    "cannot write --json '{p}': directory '{}' does not exist (create it first)",
                    dir.display()
                )));
            }
            if path.is_dir() {
                return Err(UsageError(format!(
                    "cannot write --json '{p}': it is a directory; name a file"
                )));
            }
            Ok(Some(JsonOut::File(path.to_path_buf())))
        }
    }
}

/// A report path must be writable before the run starts, so a typo does
/// not cost the run.
fn report_path(p: &Path) -> Result<PathBuf, UsageError> {
    let dir = dir_of(p);
    if !dir.is_dir() {
        return Err(UsageError(format!(
            "cannot write --report {}: directory '{}' does not exist (create it, or fix the path)",
            p.display(),
            dir.display()
        )));
    }
    if p.is_dir() {
        return Err(UsageError(format!(
            "--report {} is a directory: give a file name, e.g. {}/run.html",
            p.display(),
            p.display()
        )));
    }
    Ok(p.to_path_buf())
}

/// `--hdr-log FILE` must be writable before the run starts: a file name
/// (not a directory) in a directory that takes a new file (the log is
/// written beside it and renamed into place at the end).
fn hdr_log_path(p: &Path) -> Result<PathBuf, UsageError> {
    let shown = p.display();
    if p.is_dir() {
        return Err(UsageError(format!(
            "cannot write --hdr-log {shown}: it is a directory; name a file in it, e.g. --hdr-log {}",
            p.join("run.hlog").display()
        )));
    }
    let dir = dir_of(p);
    if !dir.is_dir() {
        return Err(UsageError(format!(
            "cannot write --hdr-log {shown}: directory '{}' does not exist (create it, or fix the path)",
            dir.display()
        )));
    }
    if let Err(e) = tempfile::Builder::new()
        .prefix(".dbsweep-hdr-log-")
        .tempfile_in(dir)
    {
        return Err(UsageError(format!(
            "cannot write --hdr-log {shown}: directory '{}' takes no new file ({e}); name a file in a directory you can write",
            dir.display()
        )));
    }
    Ok(p.to_path_buf())
}

/// `--metrics` and `--metrics-interval`: the sampling interval, or `None`
/// for no sampling.
fn metrics(on: bool, interval: f64) -> Result<Option<Duration>, UsageError> {
    let i = seconds("metrics-interval", interval)?;
    if on && i.is_zero() {
        return Err(UsageError(
            "invalid --metrics-interval 0: give the seconds between samples (e.g. 1), or --metrics off".into(),
        ));
    }
    Ok(on.then_some(i))
}

/// `--profile`, `--profile-frequency` and `--call-graph`.
fn profile(a: &RunArgs) -> Result<Option<ProfileSettings>, UsageError> {
    if a.profile && !a.metrics {
        return Err(UsageError(
            "--profile with --metrics off: profiles are taken beside the metrics; drop --metrics off".into(),
        ));
    }
    Ok(a.profile.then_some(ProfileSettings {
        hz: a.profile_frequency,
        call_graph: a.call_graph,
    }))
}

fn target_request(t: &TargetArgs) -> Result<TargetRequest, UsageError> {
    Ok(TargetRequest {
        // clap requires it, unless `run --spec` (which does not come here).
        workload: t.workload.clone().unwrap_or_default(),
        options: t.options.clone(),
        db: target(t.db.as_deref(), t.db_ps_mode)?,
        threads: t.threads,
        rand: rand_config(&t.rand, t.rand.rand_seed)?,
    })
}

fn run_request(a: &RunArgs) -> Result<RunRequest, UsageError> {
    let target = target_request(&a.target)?;
    let (config, open_ended) = run_config(a, target.rand.seed)?;
    Ok(RunRequest {
        config,
        open_ended,
        percentiles: percentiles(&a.percentiles)?,
        json: json_out(a.json.as_deref())?,
        report: a.report.as_deref().map(report_path).transpose()?,
        hdr_log: a.hdr_log.as_deref().map(hdr_log_path).transpose()?,
        metrics: metrics(a.metrics, a.metrics_interval)?,
        profile: profile(a)?,
        check: a.check,
        prometheus: a.prometheus,
        target,
    })
}

/// What may be given beside `run --spec`: what this process does with the
/// point's record, and how it coordinates workers.
const BESIDE_SPEC: &[&str] = &[
    "spec",
    "json",
    "report",
    "hdr_log",
    "prometheus",
    "check",
    "nodes",
    "launcher",
    "listen",
    "shard_records",
];

/// `run --spec FILE`: the point the file describes, with the outputs of
/// the command line.
fn point_request(a: &RunArgs, file: &Path) -> Result<RunRequest, UsageError> {
    if let Some(id) = a
        .given
        .iter()
        .find(|id| !BESIDE_SPEC.contains(&id.as_str()))
    {
        let option = match id.as_str() {
            "workload" => "WORKLOAD".to_string(),
            id => format!("--{}", id.replace('_', "-")),
        };
        return Err(UsageError(format!(
            "{option} cannot be given with --spec {}: the point file gives the run (its workload, database, clients, stop condition, pacing and seed); drop one of them",
            file.display()
        )));
    }
    let text = std::fs::read_to_string(file).map_err(|e| {
        UsageError(format!(
            "cannot read --spec {}: {e} (give the point file `dbsweep k8s` writes into its ConfigMap)",
            file.display()
        ))
    })?;
    let spec: crate::engine::spec::PointSpec = serde_json::from_str(&text).map_err(|e| {
        UsageError(format!(
            "--spec {} is not a point dbsweep {} runs: {e} (write it again with this version's `dbsweep k8s`)",
            file.display(),
            env!("CARGO_PKG_VERSION")
        ))
    })?;
    let outputs = Outputs {
        json: json_out(a.json.as_deref())?,
        report: a.report.as_deref().map(report_path).transpose()?,
        hdr_log: a.hdr_log.as_deref().map(hdr_log_path).transpose()?,
    };
    let mut req = RunRequest::of_point(spec, outputs, a.check);
    req.prometheus = a.prometheus;
    Ok(req)
}

/// How `run` is driven, and whether the command line left it without a
/// stop condition (then it runs for [`DEFAULT_TIME_S`], unless the
/// workload has rounds of its own).
pub fn run_config(a: &RunArgs, seed: u64) -> Result<(RunConfig, bool), UsageError> {
    let open = a.time.is_none() && a.events.is_none() && a.rounds.is_none();
    if a.target.threads == 0 {
        return Err(UsageError(
            "invalid --threads 0: expected at least 1 client".into(),
        ));
    }
    let time = match a.time {
        Some(t) => seconds("time", t)?,
        None if a.events.is_some() || a.rounds.is_some() => Duration::ZERO,
        None => Duration::from_secs_f64(DEFAULT_TIME_S),
    };
    let time = (!time.is_zero()).then_some(time);
    let events = a.events.filter(|&e| e > 0);
    let rounds = a.rounds.filter(|&r| r > 0);
    if time.is_none() && events.is_none() && rounds.is_none() {
        return Err(UsageError(
            "the run has no end: give --time SECONDS, --events N or --rounds N".into(),
        ));
    }
    if !(a.percentile > 0.0 && a.percentile <= 100.0) {
        return Err(UsageError(format!(
            "invalid --percentile {}: expected a number in (0, 100]",
            a.percentile
        )));
    }
    let interval = seconds("report-interval", a.report_interval)?;
    if a.users == Some(0) {
        return Err(UsageError(
            "invalid --users (--eus) 0: give at least 1 emulated user".into(),
        ));
    }
    // One mode of the options given, or why they do not make one.
    let pacing = Pacing::try_from(pacing::Options {
        rate: a.rate.map(|r| (r, a.arrival)),
        users: a.users,
        think_time: a.think_time,
        latency_limit: a.latency_limit,
        ramp_up: a.ramp_up,
    })
    .map_err(UsageError)?;
    // --ramp-up without --users is checked once the workload is known:
    // TPC-C's terminals are users of its own (engine::point::check_ramp_up).
    pacing.check(a.target.threads).map_err(UsageError)?;
    if let Some(s) = a.shard {
        s.check(a.target.threads, a.users).map_err(UsageError)?;
        if a.target.db.is_none() {
            return Err(UsageError(format!(
                "--shard {}/{} needs --db URL: every shard runs against the same database, which shard 0's machine cannot prepare for the others as a temporary file",
                s.index, s.count
            )));
        }
        if a.target.rand.rand_seed == 0 {
            return Err(UsageError(format!(
                "--shard {}/{} needs --rand-seed N, the same on every shard: their random streams derive from it, so the merged run is reproducible",
                s.index, s.count
            )));
        }
    }
    let cfg = RunConfig {
        threads: a.target.threads,
        time,
        events,
        rounds,
        warmup: seconds("warmup", a.warmup)?,
        report_interval: (!interval.is_zero()).then_some(interval),
        interval_percentile: a.percentile,
        max_retries: a.max_retries,
        ignore_errors: a.ignore_errors.unwrap_or(ErrorSet::NONE),
        grace: seconds("grace", a.grace)?,
        seed,
        reconnect_every: (a.reconnect > 0).then_some(a.reconnect),
        timeout: None,
        pacing,
        shard: a.shard,
        client_threads: crate::engine::event_loops(a.client_threads, a.pipeline, a.target.threads),
        pipeline: a.pipeline,
        release: None,
    };
    Ok((cfg, open))
}

fn dist_request(a: &DistArgs) -> Result<DistRequest, UsageError> {
    let mut rand = rand_config(&a.rand, a.seed)?;
    rand.kind = a.distribution;
    Ok(DistRequest {
        rand,
        min: a.min,
        max: a.max,
        n: a.n,
        bins: a.bins,
        raw: a.raw,
    })
}

fn server_request(cmd: ServerCommand) -> Result<ServerRequest, UsageError> {
    Ok(match cmd {
        ServerCommand::Start(a) => ServerRequest::Start(server_spec(&a)?),
        ServerCommand::Stop(a) => ServerRequest::Stop(a.dir),
        ServerCommand::Status(a) => ServerRequest::Status(a.dir),
        ServerCommand::Install(a) => {
            let (kind, wanted) =
                server::install::parse_request(&a.what).map_err(|e| UsageError(e.to_string()))?;
            ServerRequest::Install {
                kind,
                wanted,
                from: a.from,
            }
        }
        ServerCommand::Versions => ServerRequest::Versions,
    })
}

fn server_spec(a: &ServerStartArgs) -> Result<ServerSpec, UsageError> {
    let bad = |e: server::ServerError| UsageError(e.to_string());
    let dir = a
        .dir
        .clone()
        // A version has a directory of its own: a data directory is
        // tied to the major version that made it.
        .unwrap_or_else(|| {
            let name = match &a.version {
                Some(v) => format!("{}-{v}", a.kind.name()),
                None => a.kind.name().to_string(),
            };
            Path::new(SERVERS_DIR).join(name)
        });
    let mut spec = ServerSpec::new(a.kind, dir);
    spec.port = a.port;
    if let Some(name) = &a.password_env {
        spec.password = std::env::var(name).map_err(|_| {
            UsageError(format!(
                "--password-env {name}: the environment variable is not set: export it first"
            ))
        })?;
    }
    spec.config_file = a.config_file.clone();
    spec.binaries = a.binaries.clone();
    spec.tls = a.tls;
    if a.pooler.is_some() {
        let mut p = server::PoolerSpec::default();
        for s in &a.pooler_settings {
            p.settings.push(server::parse_setting(s).map_err(bad)?);
        }
        spec.pooler = Some(p);
    }
    if let Some(v) = &a.version {
        server::install::parse_wanted(a.kind, v).map_err(bad)?;
        spec.version = Some(v.clone());
    }
    for s in &a.settings {
        spec.settings.push(server::parse_setting(s).map_err(bad)?);
    }
    if let Some(list) = &a.cpus {
        spec.cpus = Some(server::parse_cpu_list(list).map_err(bad)?);
    }
    Ok(spec)
}

fn report_request(a: ReportArgs) -> Result<ReportRequest, UsageError> {
    let format = match (a.format, &a.out) {
        (Some(f), _) => f,
        (None, Some(out)) if out.as_os_str() == "-" => Format::Text,
        (None, Some(out)) => Format::of_path(out).ok_or_else(|| {
            UsageError(format!(
                "cannot tell the format of '{}': give --format html|md|text|csv|json",
                out.display()
            ))
        })?,
        // A run file's report is read on the terminal; a study's is a page.
        (None, None) if a.path.extension().is_some_and(|e| e == "json") => Format::Text,
        (None, None) => Format::Html,
    };
    Ok(ReportRequest {
        path: a.path,
        format,
        out: a.out,
        baseline: a.baseline,
        study: a.study,
        metric: a.metric,
        point: a.point,
        references: a.reference,
    })
}

fn smack_request(a: &SmackArgs) -> Result<SmackRequest, UsageError> {
    let db = target(a.db.as_deref(), a.db_ps_mode)?;
    let dialect = match (a.db_type, &db) {
        (None, db) => db.as_ref().map_or(Dialect::Mysql, |t| t.dialect()),
        (Some(d), Some(t)) if t.dialect() != d => {
            return Err(UsageError(format!(
                "-d {} does not match --db {}: drop -d, or give a URL of that type",
                d.name(),
                t.display
            )))
        }
        (Some(d), _) => d,
    };
    Ok(SmackRequest {
        file: a.file.clone(),
        args: a.args.clone(),
        dialect,
        db,
        datadir: a
            .datadir
            .clone()
            .unwrap_or_else(|| PathBuf::from("smack-data")),
        ps_mode: a.db_ps_mode,
        percentiles: percentiles(&a.percentiles)?,
        ignore_errors: a.ignore_errors.unwrap_or(ErrorSet::NONE),
        seed: a.rand_seed,
        json: json_out(a.json.as_deref())?,
        metrics: metrics(a.metrics, a.metrics_interval)?,
    })
}

fn gen_data_request(a: &GenDataArgs) -> Result<GenDataRequest, UsageError> {
    if a.rows == 0 {
        return Err(UsageError(
            "-n 0: give the number of rows to print (at least 1)".into(),
        ));
    }
    Ok(GenDataRequest {
        rows: a.rows,
        format: gen_data::Format::parse(&a.format).map_err(UsageError)?,
        seed: a.seed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_percentile_lists() {
        assert_eq!(percentiles("50, 99.9").unwrap(), vec![50.0, 99.9]);
        assert!(percentiles("0").is_err());
        assert!(percentiles("101").is_err());
        assert!(percentiles("p95").unwrap_err().0.contains("'p95'"));
    }

    #[test]
    fn json_path_must_be_writable() {
        assert_eq!(json_out(Some("-")).unwrap(), Some(JsonOut::Stdout));
        assert!(json_out(Some("/no/such/dir/out.json"))
            .unwrap_err()
            .0
            .contains("does not exist"));
    }
}
