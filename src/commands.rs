//! The commands: glue from resolved configuration to the workload, engine
//! and exporters. Each function is one verb of the command line.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;

use crate::cli::args::{
    DistArgs, ReportArgs, ResultsArgs, RunArgs, ServerCommand, ServerStartArgs, StudyArgs,
    TargetArgs,
};
use crate::cli::progress::Bar;
use crate::cli::resolve::{self, JsonOut};
use crate::driver::{self, Connection, Dialect, Target, TargetKind};
use crate::engine;
use crate::rand::dist::Dist;
use crate::report::{self, Exporter, RunRecord};
use crate::server;
use crate::workload::{self, options, RandConfig, Workload};
use crate::UsageError;

fn connect_checked(target: &Target) -> anyhow::Result<Box<dyn Connection>> {
    // The drivers' messages name the server, user and database themselves.
    driver::connect(target).map_err(|e| UsageError(e.message).into())
}

/// SQLite creates a missing database file on open; only `prepare` may do
/// that, so a mistyped path elsewhere is reported instead of leaving an
/// empty database behind.
fn check_sqlite_path(target: &Target, verb: &str, workload: &str) -> Result<(), UsageError> {
    let TargetKind::Sqlite { path, .. } = &target.kind else {
        return Ok(());
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(UsageError(format!(
            "cannot use {}: directory '{}' does not exist (create it, or fix the path)",
            target.display,
            dir.display()
        )));
    }
    if verb != "prepare" && !path.exists() {
        return Err(UsageError(format!(
            "database file '{}' does not exist: run `dbsweep prepare {workload} --db {}` first",
            path.display(),
            target.display
        )));
    }
    Ok(())
}

fn require_target(t: &TargetArgs, verb: &str) -> anyhow::Result<Target> {
    resolve::target(t.db.as_deref(), &t.db_ps_mode)?.ok_or_else(|| {
        UsageError(format!(
            "`dbsweep {verb}` needs --db URL (e.g. --db sqlite://bench.db); \
             `dbsweep run` without --db uses a temporary SQLite database it prepares itself"
        ))
        .into()
    })
}

fn build_workload(
    t: &TargetArgs,
    dialect: Dialect,
    rand: RandConfig,
) -> anyhow::Result<Box<dyn Workload>> {
    workload::build(&t.workload, &t.options, dialect, rand)
}

pub fn prepare(t: &TargetArgs) -> anyhow::Result<()> {
    let rand = resolve::rand_config(&t.rand)?;
    let target = require_target(t, "prepare")?;
    let w = build_workload(t, target.dialect(), rand)?;
    check_sqlite_path(&target, "prepare", w.name())?;
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

pub fn cleanup(t: &TargetArgs) -> anyhow::Result<()> {
    let rand = resolve::rand_config(&t.rand)?;
    let target = require_target(t, "cleanup")?;
    let w = build_workload(t, target.dialect(), rand)?;
    check_sqlite_path(&target, "cleanup", w.name())?;
    let mut conn = connect_checked(&target)?;
    w.cleanup(conn.as_mut())?;
    eprintln!("Cleaned up {} on {}", w.name(), target.display);
    Ok(())
}

pub fn workloads() -> anyhow::Result<()> {
    let mut out = String::new();
    for w in workload::registry() {
        out.push_str(&format!("{:<24}{}\n", w.name, w.description));
        for name in w.options {
            let s = options::spec(name).expect("declared option");
            let default = if s.default.is_empty() {
                "\"\"".to_string()
            } else {
                s.default.to_string()
            };
            out.push_str(&format!(
                "    --{:<24}{} [{}]\n",
                format!("{}=", s.name),
                s.help,
                default
            ));
        }
        out.push('\n');
    }
    out.push_str("Run options (all workloads): --threads --time --events --rounds --warmup --report-interval --percentile --percentiles --max-retries --ignore-errors --grace --json --report --rand-type --rand-seed (see `dbsweep run --help`)\n");
    std::io::stdout().write_all(out.as_bytes())?;
    Ok(())
}

pub fn dist(a: &DistArgs) -> anyhow::Result<()> {
    if crate::rand::dist::DistKind::from_name(&a.distribution).is_none() {
        return Err(UsageError(format!(
            "unknown distribution '{}': expected one of {}",
            a.distribution,
            crate::rand::dist::DistKind::ALL
                .map(|k| k.name())
                .join(", ")
        ))
        .into());
    }
    let mut rand_args = a.rand.clone_with_type(&a.distribution, a.seed);
    let cfg = resolve::rand_config(&rand_args)?;
    rand_args.rand_seed = cfg.seed;
    if a.min > a.max {
        return Err(UsageError(format!("--min {} is greater than --max {}", a.min, a.max)).into());
    }
    if a.n == 0 || a.bins == 0 {
        return Err(UsageError("--n and --bins must be at least 1".into()).into());
    }
    let mut rng = crate::rand::Rng::new(cfg.seed);
    let mut d = Dist::new(cfg.kind, cfg.params);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if a.raw {
        for _ in 0..a.n {
            writeln!(out, "{}", d.draw(&mut rng, a.min, a.max))?;
        }
    } else {
        let draws: Vec<u32> = (0..a.n).map(|_| d.draw(&mut rng, a.min, a.max)).collect();
        let text =
            report::dist::render(cfg.kind.name(), a.min, a.max, cfg.seed, &draws, a.bins, 60);
        out.write_all(text.as_bytes())?;
    }
    out.flush()?;
    Ok(())
}

/// Installs the Ctrl-C / SIGTERM handler: the first signal stops the run
/// cleanly (results so far are reported), a second one exits at once.
fn cancel_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let f = flag.clone();
    let _ = ctrlc::set_handler(move || {
        if f.swap(true, Ordering::SeqCst) {
            eprintln!("\nInterrupted again: exiting now.");
            std::process::exit(130);
        }
        eprintln!("\nInterrupted: finishing in-flight transactions and reporting what was measured (Ctrl-C again to exit now).");
    });
    flag
}

/// Writes `bytes` to `path` via a temporary file and a rename, so a reader
/// never sees half a file.
fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes).with_context(|| format!("Could not write '{}'", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("Could not move '{}' to '{}'", tmp.display(), path.display()))
}

/// A report path must be writable before the run starts, so a typo does
/// not cost the run.
fn check_report_path(p: &Path) -> Result<(), UsageError> {
    let dir = p
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
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
    Ok(())
}

/// The interval of the report's time series when none was asked for:
/// about 60 points over a timed run, at a round length.
fn report_interval(time: Option<std::time::Duration>) -> std::time::Duration {
    let want = time.map_or(1.0, |t| t.as_secs_f64() / 60.0);
    let s = [
        0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0,
    ]
    .into_iter()
    .find(|&s| s >= want)
    .unwrap_or(600.0);
    std::time::Duration::from_secs_f64(s)
}

/// The exit status of a run that produced a report.
pub enum RunStatus {
    Ok,
    Aborted,
    Interrupted,
}

pub fn run(a: &RunArgs) -> anyhow::Result<RunStatus> {
    let t = &a.target;
    let rand = resolve::rand_config(&t.rand)?;
    // Checked before anything runs; the workload's own default rounds are
    // applied once it is built.
    resolve::run_config(a, rand.seed)?;
    let percentiles = resolve::percentiles(&a.percentiles)?;
    let json_out = resolve::json_out(a.json.as_deref())?;
    if let Some(p) = &a.report {
        check_report_path(p)?;
    }
    let given = resolve::target(t.db.as_deref(), &t.db_ps_mode)?;

    // No --db: a temporary SQLite database, prepared here and removed after.
    let tmp;
    let target = match given {
        Some(target) => target,
        None => {
            tmp = tempfile::Builder::new()
                .prefix("dbsweep-")
                .tempdir()
                .context("Could not create a temporary directory")?;
            Target::sqlite(tmp.path().join("dbsweep.db"))
        }
    };
    let w = build_workload(t, target.dialect(), rand)?;
    let mut cfg = resolve::run_config_for(a, rand.seed, w.default_rounds())?;
    if t.db.is_some() {
        check_sqlite_path(&target, "run", w.name())?;
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
    w.check_prepared(probe.as_mut())?;
    let server = probe.server_info().map(|s| s.version).unwrap_or_default();
    drop(probe);

    let cancel = cancel_flag();
    print!(
        "{}",
        report::text::preamble(w.name(), &target.display, &server, &cfg, rand.seed)
    );
    let _ = std::io::stdout().flush();
    let started_unix_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let connect: engine::Connect = {
        let target = target.clone();
        Arc::new(move || driver::connect(&target))
    };
    // The report's time series needs intervals; they are printed only
    // when asked for.
    let print_intervals = cfg.report_interval.is_some();
    if a.report.is_some() && cfg.report_interval.is_none() {
        cfg.report_interval = Some(report_interval(cfg.time));
    }
    let interval = cfg.report_interval.map_or(0.0, |d| d.as_secs_f64());
    let result = engine::run(w.as_ref(), connect, &cfg, &cancel, &mut |s| {
        // The tail after the last full interval is kept in the result but
        // not printed when it is too short for its rates to mean anything.
        if print_intervals && s.duration_s >= 0.5 * interval {
            println!("{}", report::text::interval_line(s));
        }
    })?;
    let record = RunRecord::new(
        w.as_ref(),
        &target,
        rand,
        &cfg,
        &result,
        percentiles,
        started_unix_s,
    );
    if print_intervals && !result.intervals.is_empty() {
        println!();
    }
    std::io::stdout().write_all(&report::text::Text.render(&record)?)?;
    match json_out {
        Some(JsonOut::Stdout) => {
            std::io::stdout().write_all(&report::json::Json.render(&record)?)?
        }
        Some(JsonOut::File(p)) => write_atomically(&p, &report::json::Json.render(&record)?)?,
        None => {}
    }
    if let Some(p) = &a.report {
        let html = report::html::render(&report::run_doc::build(&record));
        write_atomically(p, html.as_bytes())?;
        eprintln!("Report written to {}", p.display());
    }
    Ok(match result.stop {
        engine::StopReason::Aborted => RunStatus::Aborted,
        engine::StopReason::Interrupted => RunStatus::Interrupted,
        _ => RunStatus::Ok,
    })
}

/// Where `dbsweep server` keeps servers when no `--dir` is given.
const SERVERS_DIR: &str = "dbsweep-servers";

pub fn server(cmd: &ServerCommand) -> anyhow::Result<()> {
    match cmd {
        ServerCommand::Start(a) => server_start(a),
        ServerCommand::Stop(a) => {
            for dir in server_dirs(a.dir.as_deref())? {
                match server::stop(&dir).map_err(server::ServerError::into_anyhow)? {
                    true => eprintln!("Stopped the server in {}", dir.display()),
                    false => eprintln!("No server running in {}", dir.display()),
                }
            }
            Ok(())
        }
        ServerCommand::Status(a) => {
            for dir in server_dirs(a.dir.as_deref())? {
                match server::status(&dir).map_err(server::ServerError::into_anyhow)? {
                    Some(s) => println!(
                        "{}: {} running, pid {}, port {}\n    {}\n    {}",
                        dir.display(),
                        s.kind,
                        s.pid,
                        s.port,
                        s.url,
                        s.version
                    ),
                    None => println!("{}: not running", dir.display()),
                }
            }
            Ok(())
        }
    }
}

/// The server directories `stop`/`status` act on: the one given, or every
/// server directory under ./dbsweep-servers.
fn server_dirs(dir: Option<&Path>) -> anyhow::Result<Vec<std::path::PathBuf>> {
    if let Some(d) = dir {
        return Ok(vec![d.to_path_buf()]);
    }
    let mut dirs: Vec<_> = std::fs::read_dir(SERVERS_DIR)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.join(server::STATE_FILE).exists())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    if dirs.is_empty() {
        return Err(UsageError(format!(
            "no servers under ./{SERVERS_DIR}: name one with --dir DIR"
        ))
        .into());
    }
    Ok(dirs)
}

fn server_start(a: &ServerStartArgs) -> anyhow::Result<()> {
    let kind: server::ServerKind = a.kind.parse().map_err(server::ServerError::into_anyhow)?;
    let dir = a
        .dir
        .clone()
        .unwrap_or_else(|| Path::new(SERVERS_DIR).join(kind.name()));
    let mut spec = server::ServerSpec::new(kind, dir);
    spec.port = a.port;
    spec.config_file = a.config_file.clone();
    spec.binaries = a.binaries.clone();
    for s in &a.settings {
        spec.settings
            .push(server::parse_setting(s).map_err(server::ServerError::into_anyhow)?);
    }
    if let Some(list) = &a.cpus {
        spec.cpus = Some(server::parse_cpu_list(list).map_err(server::ServerError::into_anyhow)?);
    }
    // Ctrl-C while the server initialises: stop what was started.
    let _ = ctrlc::set_handler(|| {
        server::stop_all_started();
        std::process::exit(130);
    });
    eprintln!("Starting {} in {} ...", kind, spec.dir.display());
    let s = server::start(&spec).map_err(server::ServerError::into_anyhow)?;
    eprintln!(
        "{} running (pid {}, port {}{})\n  socket URL: {}\n  stop with: dbsweep server stop --dir {}",
        s.version,
        s.pid,
        s.port,
        s.cpus
            .as_ref()
            .map(|c| format!(", CPUs {}", server::format_cpu_list(c)))
            .unwrap_or_default(),
        s.socket_url(),
        s.dir.display()
    );
    println!("{}", s.url);
    Ok(())
}

/// Writes `DIR/report.html` for study `name` stored in `dir`.
fn study_report(dir: &Path, name: &str) -> anyhow::Result<std::path::PathBuf> {
    use crate::report::study;
    let data = study::load(dir, Some(name))?;
    let opts = study::Options {
        metric: study::Metric::parse("tps")?,
        point: None,
    };
    let report = study::analyze(&data, None, &opts);
    let doc = study::document(&data, &report);
    let path = dir.join("report.html");
    write_atomically(&path, crate::report::html::render(&doc).as_bytes())?;
    Ok(path)
}

/// The cancel flag of `dbsweep study`, set by the Ctrl-C handler.
static STUDY_CANCEL: AtomicBool = AtomicBool::new(false);

pub fn study(a: &StudyArgs) -> anyhow::Result<RunStatus> {
    let study = crate::study::load(&a.file)?;
    let plan = crate::study::plan(&study);
    if a.dry_run {
        print!("{}", plan.describe(&study));
        return Ok(RunStatus::Ok);
    }
    let _ = ctrlc::set_handler(|| {
        if STUDY_CANCEL.swap(true, Ordering::SeqCst) {
            eprintln!("\nInterrupted again: stopping servers and exiting now.");
            server::stop_all_started();
            std::process::exit(130);
        }
        eprintln!("\nInterrupted: stopping the current point; finished points are stored (resume with --resume).");
    });
    let opts = crate::study::runner::Options {
        out: a.out.clone(),
        resume: a.resume,
    };
    let o = crate::study::runner::run(&study, &plan, &opts, &STUDY_CANCEL)?;
    eprintln!(
        "{}: {} point(s) finished, {} skipped, {} failed{} in {:.1}s; results in {}",
        if o.interrupted { "Interrupted" } else { "Done" },
        o.finished,
        o.skipped,
        o.failed,
        if o.already > 0 {
            format!(" ({} stored earlier)", o.already)
        } else {
            String::new()
        },
        o.wall.as_secs_f64(),
        o.out.join(crate::store::FILE_NAME).display()
    );
    // The report of what is stored, also after an interruption; failing to
    // write it never loses the stored results.
    if o.finished + o.already > 0 {
        match study_report(&o.out, &study.name) {
            Ok(path) => eprintln!(
                "Report: {} (other formats: dbsweep report {} --format md|text|csv|json)",
                path.display(),
                o.out.display()
            ),
            Err(e) => eprintln!("warning: could not write the report: {e:#}"),
        }
    }
    Ok(if o.interrupted {
        RunStatus::Interrupted
    } else {
        RunStatus::Ok
    })
}

pub fn results(a: &ResultsArgs) -> anyhow::Result<()> {
    let path = crate::store::resolve_path(&a.path);
    let store = crate::store::Store::open_existing(&path)?;
    let points = store.point_figures(None)?;
    let out = if a.csv {
        crate::store::results_csv(&points)
    } else {
        let mut summaries = Vec::new();
        for s in store.studies()? {
            summaries.extend(store.summaries(s.id)?);
        }
        crate::store::results_table(&points, &summaries)
    };
    std::io::stdout().write_all(out.as_bytes())?;
    Ok(())
}

/// `dbsweep smack FILE ARGS…`: runs a Super Smack .smack file.
pub fn smack(a: &crate::cli::args::SmackArgs) -> anyhow::Result<RunStatus> {
    use crate::workload::smack::{parse, program, session};
    let json_out = resolve::json_out(a.json.as_deref())?;
    let percentiles = resolve::percentiles(&a.percentiles)?;
    let ignore_errors = resolve::ignore_errors(a.ignore_errors.as_deref())?;
    let db = resolve::target(a.db.as_deref(), &a.db_ps_mode)?;
    let ps_mode = match a.db_ps_mode.as_str() {
        "auto" => driver::PsMode::Prepared,
        _ => driver::PsMode::Disable,
    };
    let dialect = match a.db_type.as_deref() {
        None => db.as_ref().map_or(Dialect::Mysql, |t| t.dialect()),
        Some("mysql" | "mariadb") => Dialect::Mysql,
        Some("pg" | "pgsql" | "postgres" | "postgresql") => Dialect::Postgres,
        Some("sqlite" | "sqlite3") => Dialect::Sqlite,
        Some(other) => {
            return Err(UsageError(format!(
                "unknown database type '-d {other}': expected mysql, pg or sqlite"
            ))
            .into())
        }
    };
    if let Some(t) = &db {
        if t.dialect() != dialect {
            return Err(UsageError(format!(
                "-d {} does not match --db {}: drop -d, or give a URL of that type",
                a.db_type.as_deref().unwrap_or_default(),
                t.display
            ))
            .into());
        }
        check_sqlite_dir(t)?;
    }
    let src = std::fs::read_to_string(&a.file).map_err(|e| {
        UsageError(format!(
            "cannot read .smack file '{}': {e}",
            a.file.display()
        ))
    })?;
    let file = parse::parse(&a.file, &src).map_err(|e| UsageError(e.to_string()))?;
    let datadir = a
        .datadir
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from("smack-data"));
    let prog = program::check(&file, &a.args, &datadir).map_err(|e| UsageError(e.to_string()))?;
    let seed = if a.rand_seed == 0 {
        crate::rand::seed_from_time()
    } else {
        a.rand_seed
    };
    let opts = session::Options {
        dialect,
        db,
        ps_mode,
        seed,
        // Generated data files are the same every time unless a seed is given.
        data_seed: if a.rand_seed == 0 { 1 } else { a.rand_seed },
        percentiles: percentiles.clone(),
        ignore_errors,
    };
    let started_unix_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let cancel = cancel_flag();
    let outcome = session::run(&prog, &opts, &cancel)?;
    if let Some(out) = json_out {
        let rand = RandConfig {
            kind: crate::rand::dist::DistKind::Uniform,
            params: crate::rand::dist::DistParams::default(),
            seed,
        };
        let docs: Vec<serde_json::Value> = outcome
            .runs
            .iter()
            .map(|r| {
                let record = RunRecord {
                    workload: "smack",
                    options: session::options_of(&prog, &r.client, &a.args),
                    target: r.target.display.clone(),
                    dialect: r.target.dialect().name(),
                    rand,
                    config: &r.config,
                    result: &r.result,
                    machine: crate::metrics::machine::Machine::describe(),
                    percentiles: percentiles.clone(),
                    started_unix_s,
                };
                report::json::to_value(&record)
            })
            .collect();
        let doc = if docs.len() == 1 {
            docs.into_iter().next().unwrap()
        } else {
            serde_json::Value::Array(docs)
        };
        let mut bytes = serde_json::to_vec_pretty(&doc)?;
        bytes.push(b'\n');
        match out {
            JsonOut::Stdout => std::io::stdout().write_all(&bytes)?,
            JsonOut::File(p) => write_atomically(&p, &bytes)?,
        }
    }
    let stops: Vec<&engine::StopReason> = outcome.runs.iter().map(|r| &r.result.stop).collect();
    Ok(if stops.contains(&&engine::StopReason::Interrupted) {
        RunStatus::Interrupted
    } else if stops.contains(&&engine::StopReason::Aborted) {
        RunStatus::Aborted
    } else {
        RunStatus::Ok
    })
}

/// A SQLite `--db` for `smack` may be created, but its directory must exist.
fn check_sqlite_dir(target: &Target) -> Result<(), UsageError> {
    check_sqlite_path(target, "prepare", "smack")
}

/// `dbsweep gen-data -n N -f FORMAT`: Super Smack's data generator.
pub fn gen_data(a: &crate::cli::args::GenDataArgs) -> anyhow::Result<()> {
    use crate::workload::smack::gen_data;
    if a.rows == 0 {
        return Err(
            UsageError("-n 0: give the number of rows to print (at least 1)".into()).into(),
        );
    }
    let format = gen_data::Format::parse(&a.format).map_err(UsageError)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match gen_data::generate(&format, a.rows, a.seed, &mut out) {
        // A closed pipe (`| head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}

/// `dbsweep report [DIR|results.db]`: a study's tables, charts and
/// conclusions in one of the report formats.
pub fn report(a: &ReportArgs) -> anyhow::Result<()> {
    use crate::report::study::{self, Metric};
    use crate::report::{csv, html, markdown, report_json, table_text};

    let format = match (&a.format, &a.out) {
        (Some(f), _) => f.clone(),
        (None, Some(out)) => match out.extension().and_then(|e| e.to_str()) {
            Some("html" | "htm") => "html".into(),
            Some("md" | "markdown") => "md".into(),
            Some("txt") => "text".into(),
            Some("csv") => "csv".into(),
            Some("json") => "json".into(),
            _ if out.as_os_str() == "-" => "text".into(),
            _ => {
                return Err(UsageError(format!(
                    "cannot tell the format of '{}': give --format html|md|text|csv|json",
                    out.display()
                ))
                .into())
            }
        },
        (None, None) => "html".into(),
    };
    let data = study::load(&a.path, a.study.as_deref())?;
    let baseline = match &a.baseline {
        None => None,
        Some(other) => {
            let p = Path::new(other);
            Some(if p.exists() {
                // Another results database: the study of the same name if it
                // has one, else its only study.
                let db = crate::store::resolve_path(p);
                let same = crate::store::Store::open_existing(&db)?
                    .find_study(&data.info.name)?
                    .is_some();
                study::load(p, same.then_some(data.info.name.as_str()))?
            } else {
                study::load(&a.path, Some(other)).map_err(|e| match e.downcast::<UsageError>() {
                    Ok(u) => UsageError(format!(
                        "--baseline '{other}' is neither a file or directory nor a study here ({u})"
                    ))
                    .into(),
                    Err(e) => e,
                })?
            })
        }
    };
    let opts = study::Options {
        metric: Metric::parse(&a.metric)?,
        point: a.point,
    };
    if let Some(n) = a.point {
        if !data.points.iter().any(|p| p.row.clients == n) {
            let mut counts: Vec<u32> = data.points.iter().map(|p| p.row.clients).collect();
            counts.sort_unstable();
            counts.dedup();
            let counts: Vec<String> = counts.iter().map(u32::to_string).collect();
            return Err(UsageError(format!(
                "--point {n}: study '{}' has no point at {n} clients (it has {})",
                data.info.name,
                counts.join(", ")
            ))
            .into());
        }
    }
    let report = study::analyze(&data, baseline.as_ref(), &opts);
    let doc = study::document(&data, &report);
    let dir = crate::store::resolve_path(&a.path)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let out = match &a.out {
        Some(o) if o.as_os_str() == "-" => None,
        Some(o) => Some(o.clone()),
        None if format == "text" => None,
        None => Some(dir.join(format!("report.{format}"))),
    };
    // A bad path fails before anything (a chart file) is written.
    if let Some(parent) = out
        .as_ref()
        .and_then(|p| p.parent())
        .filter(|d| !d.as_os_str().is_empty())
    {
        if !parent.is_dir() {
            return Err(UsageError(format!(
                "cannot write the report into '{}': the directory does not exist",
                parent.display()
            ))
            .into());
        }
    }
    let bytes = match format.as_str() {
        "html" => html::render(&doc).into_bytes(),
        "md" => {
            let stem = out
                .as_ref()
                .and_then(|o| o.file_stem())
                .map(|s| s.to_string_lossy().into_owned());
            if let (Some(out), Some(stem)) = (&out, &stem) {
                let charts_dir = out
                    .parent()
                    .filter(|d| !d.as_os_str().is_empty())
                    .unwrap_or(Path::new("."));
                for (name, svg) in markdown::charts(&doc, stem) {
                    write_atomically(&charts_dir.join(name), svg.as_bytes())?;
                }
            }
            markdown::render(&doc, stem.as_deref()).into_bytes()
        }
        "text" => table_text::render(&doc).into_bytes(),
        "csv" => csv::render(&data, &report).into_bytes(),
        _ => report_json::render(&data, &report)?,
    };
    match out {
        None => std::io::stdout().write_all(&bytes)?,
        Some(path) => {
            write_atomically(&path, &bytes)?;
            eprintln!("Report written to {}", path.display());
        }
    }
    Ok(())
}
