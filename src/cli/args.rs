//! The raw command line, as clap parses it. Option names follow sysbench's
//! where sysbench has the option. Workload options are not spelled out here:
//! they are added from the workload option table (`workload::options::ALL`),
//! so each is declared once.

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::driver::{ErrorSet, PsMode};
use crate::rand::dist::DistKind;
use crate::rand::pacing::{Arrival, ThinkTime};
use crate::workload::options::{self, OptKind};

use super::values;

pub use super::k8s_args::*;
pub use super::nodes_args::*;
pub use super::results_args::*;
pub use super::server_args::*;
pub use super::smack_args::*;

const EXAMPLES: &str = "\
Examples:
  sysbench's OLTP workloads (SQLite by default; --db mysql://… or postgres://…):
    dbsweep run oltp_read_only                      # temporary SQLite database, prepared for you
    dbsweep run oltp_point_select --db postgres://u@127.0.0.1/db --rate 5000 --time 30
    dbsweep run oltp_read_only --db 'postgres://u@db.example.com/app?sslmode=verify-full'
    dbsweep prepare oltp_read_write --db sqlite://bench.db --tables 4
    dbsweep run oltp_read_write --db sqlite://bench.db --tables 4 --threads 8 --json out.json
  Super Smack (seed 000's tests built in, or .smack files as they are):
    dbsweep run smack_select --threads 4
    dbsweep smack select-key.smack 10 1000 --db mysql://root@127.0.0.1/test
  DBT-1's online bookstore with emulated users:
    dbsweep prepare dbt1 --db sqlite://shop.db --items 1000 --ebs 1
    dbsweep run dbt1 --db sqlite://shop.db --items 1000 --ebs 1 --eus 100 --threads 4 --time 60
  Studies (servers, settings, CPU sets and client sweeps from one file, resumable):
    dbsweep study studies/quickstart.toml --out results/quickstart
    dbsweep report results/quickstart --format md
  Reproductions (a publication's figures and conclusions beside the measured ones):
    dbsweep study studies/seed002-cpus.toml --out results/seed002
  And:
    dbsweep workloads                               # what can run, with every option and default
    dbsweep server start postgres --dir /tmp/pg     # a managed server to run against
    dbsweep dist special --min 1 --max 10000 --n 100000";

const PREPARE_EXAMPLES: &str = "\
Examples:
  dbsweep prepare oltp_read_write --db sqlite://bench.db
  dbsweep prepare oltp_read_write --db sqlite://bench.db --tables 8 --table-size 1000000 --threads 2";

const RUN_EXAMPLES: &str = "\
Examples:
  dbsweep run oltp_read_only                      # temporary SQLite database, prepared for you
  dbsweep run oltp_point_select --threads 8 --time 60 --warmup 10 --report-interval 1
  dbsweep run oltp_read_write --db sqlite://bench.db --events 100000 --json result.json
  dbsweep run oltp_read_write --threads 4 --time 30 --report run.html
  dbsweep run oltp_point_select --threads 8 --time 60 --hdr-log run.hlog  # HdrHistogram .hlog
  dbsweep run oltp_point_select --threads 8 --time 600 --prometheus 127.0.0.1:9187  # live feed
  dbsweep run oltp_read_write --db 'sqlite://bench.db?begin=deferred' --threads 4 --max-retries 10
  dbsweep run oltp_read_only --db \"$URL\" --threads 96 --time 60 --rand-seed 7 --shard 1/3 --json s1.json
  dbsweep run oltp_read_only --db \"$URL\" --threads 96 --time 60 --nodes 3 --launcher slurm --listen 0.0.0.0:7070
  dbsweep run oltp_point_select --db \"$URL\" --threads 8 --client-threads 2 --rate 20000 --time 30
  dbsweep run oltp_point_select --db \"$URL\" --threads 8 --time 10 --find-rate --slo p99=10ms --json probes.json";

const MERGE_EXAMPLES: &str = "\
Examples:
  dbsweep merge s0.json s1.json s2.json                 # the shards of one --shard I/3 run
  dbsweep merge shards/*.json --json run.json --report run.html";

const CHECK_EXAMPLES: &str = "\
Examples:
  dbsweep check tpcc --db postgres://bench@127.0.0.1/bench";

const CLEANUP_EXAMPLES: &str = "\
Examples:
  dbsweep cleanup oltp_read_write --db sqlite://bench.db --tables 8";

#[derive(Debug, Parser)]
#[command(
    name = "dbsweep",
    version,
    about = "A database benchmark laboratory for SQLite, MariaDB/MySQL and PostgreSQL: \
             sysbench's OLTP workloads, Super Smack and DBT-1's online bookstore (emulated users), \
             closed loops or offered rates with honest latency, and studies — sweeps of servers, \
             settings, CPUs and clients stored point by point — that reproduce published comparisons.",
    after_help = EXAMPLES
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create the workload's tables and load its data.
    #[command(after_help = PREPARE_EXAMPLES)]
    Prepare(TargetArgs),
    /// Run a workload and report throughput, latency and errors.
    #[command(after_help = RUN_EXAMPLES)]
    Run(Box<RunArgs>),
    /// Drop what `prepare` created.
    #[command(after_help = CLEANUP_EXAMPLES)]
    Cleanup(TargetArgs),
    /// Check a workload's consistency conditions on its database (TPC-C's
    /// clause 3.3.2): exit status 1 when one fails.
    #[command(after_help = CHECK_EXAMPLES)]
    Check(TargetArgs),
    /// Add the records of a run's shards (`run --shard I/N --json`) into
    /// the record of the whole run, and report it with a per-shard table.
    #[command(after_help = MERGE_EXAMPLES)]
    Merge(MergeArgs),
    /// Run one shard of a coordinated run (`run --nodes N`): started by
    /// the coordinator's launcher, or by a scheduler for `--launcher
    /// external`.
    Worker(WorkerArgs),
    /// List the built-in workloads with their options and defaults.
    Workloads,
    /// Draw numbers from a distribution and show the access pattern it produces.
    Dist(DistArgs),
    /// Run a whole benchmark campaign described by a study file (TOML).
    #[command(after_help = STUDY_EXAMPLES)]
    Study(StudyArgs),
    /// Print the points stored in a study's results database.
    Results(ResultsArgs),
    /// Make a study's report: tables, charts and conclusions as HTML,
    /// Markdown, text, CSV or JSON.
    #[command(after_help = REPORT_EXAMPLES)]
    Report(ReportArgs),
    /// Start, stop or describe a local MariaDB or PostgreSQL server that
    /// dbsweep runs in a scratch directory.
    #[command(subcommand)]
    Server(ServerCommand),
    /// Run a Super Smack .smack file (client, table, dictionary, query and
    /// main blocks) and print Super Smack's report.
    #[command(after_help = SMACK_EXAMPLES)]
    Smack(SmackArgs),
    /// Print rows of random data in Super Smack's gen-data format.
    #[command(after_help = GEN_DATA_EXAMPLES)]
    GenData(GenDataArgs),
    /// Write Kubernetes manifests for a run on N worker pods: an Indexed
    /// Job of workers, a headless Service and the coordinator Pod that
    /// merges their shards (YAML; nothing is applied). Takes every option
    /// of `run`.
    #[command(after_help = K8S_EXAMPLES)]
    K8s(Box<K8sCommand>),
}

const STUDY_EXAMPLES: &str = "\
Examples:
  dbsweep study studies/quickstart.toml --dry-run   # the plan: points, restarts, estimated time
  dbsweep study studies/quickstart.toml             # results in results/quickstart/results.db
  dbsweep study studies/quickstart.toml --resume    # after Ctrl-C: continue with the first unfinished point
  dbsweep study --check-statements studies/seed002-cpus.toml   # each conclusion on the published numbers, with its margin
  dbsweep results results/quickstart";

/// The workload and where it runs; shared by prepare, run and cleanup.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// Workload name (see `dbsweep workloads`); `run --spec` takes it from
    /// the point file instead.
    #[arg(required = true)]
    pub workload: Option<String>,

    /// Database URL, e.g. sqlite://bench.db. `run` without it uses a
    /// temporary SQLite database that it prepares and removes. TLS as the
    /// engines' clients spell it: ?sslmode=verify-full&sslrootcert=FILE
    /// (PostgreSQL), ?ssl-mode=VERIFY_IDENTITY&ssl-ca=FILE (MySQL, MariaDB).
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,

    /// Number of client connections (for prepare: parallel loaders, at least
    /// one per CPU; on MySQL/MariaDB each table takes one at a time).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub threads: usize,

    /// Statement protocol for PostgreSQL and MySQL: `auto` uses server-side
    /// prepared statements, `disable` sends SQL text with literals (sysbench's).
    #[arg(long, default_value = "auto", value_name = "MODE", value_parser = values::ps_mode)]
    pub db_ps_mode: PsMode,

    #[command(flatten)]
    pub rand: RandArgs,

    /// Workload options given on the command line (name, value); filled from
    /// the dynamically added arguments, not by clap's derive.
    #[arg(skip)]
    pub options: Vec<(String, String)>,
}

/// sysbench's random number options.
#[derive(Debug, Clone, Args)]
pub struct RandArgs {
    /// Distribution of random ids: uniform, gaussian, special, pareto, zipfian.
    #[arg(long, default_value = "uniform", value_name = "TYPE", value_parser = values::dist_kind)]
    pub rand_type: DistKind,
    /// Seed of the random streams; 0 = from the current time.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub rand_seed: u64,
    /// Number of iterations for the special and gaussian distributions.
    #[arg(long, default_value_t = 12, value_name = "N")]
    pub rand_spec_iter: u32,
    /// Percentage of the range treated as 'special' (special distribution).
    #[arg(long, default_value_t = 1.0, value_name = "PCT")]
    pub rand_spec_pct: f64,
    /// Percentage of 'special' values to use (special distribution).
    #[arg(long, default_value_t = 75.0, value_name = "PCT")]
    pub rand_spec_res: f64,
    /// Parameter h of the pareto distribution.
    #[arg(long, default_value_t = 0.2, value_name = "H")]
    pub rand_pareto_h: f64,
    /// Exponent of the zipfian distribution.
    #[arg(long, default_value_t = 0.8, value_name = "S")]
    pub rand_zipfian_exp: f64,
}

/// `dbsweep k8s`: its own options, and the run's read with `run`'s
/// definition from the same matches (filled by `parse_from`).
#[derive(Debug, Args)]
pub struct K8sCommand {
    #[command(flatten)]
    pub k8s: K8sArgs,
    #[arg(skip)]
    pub run: Option<Box<RunArgs>>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    /// Length of the measured run in seconds (0 = no limit). Defaults to 10
    /// unless --events or --rounds is given.
    #[arg(long, value_name = "SECONDS")]
    pub time: Option<f64>,
    /// Total number of transactions to run, across all clients.
    #[arg(long, value_name = "N")]
    pub events: Option<u64>,
    /// Transactions per client (Super Smack's model). The smack_* workloads
    /// default to their seed's count per client (1000 / 1000 / 100) when
    /// none of --time, --events and --rounds is given.
    #[arg(long, value_name = "N")]
    pub rounds: Option<u64>,
    /// Seconds of load before measuring; their samples are discarded.
    #[arg(
        long,
        alias = "warmup-time",
        default_value_t = 0.0,
        value_name = "SECONDS"
    )]
    pub warmup: f64,
    /// Print a progress line every N seconds (0 = off).
    #[arg(long, default_value_t = 0.0, value_name = "SECONDS")]
    pub report_interval: f64,
    /// The percentile shown in interval lines and as the headline latency.
    #[arg(long, default_value_t = 95.0, value_name = "P")]
    pub percentile: f64,
    /// Percentiles reported in the latency sections, comma-separated.
    #[arg(long, default_value = "50,90,95,99,99.9", value_name = "LIST")]
    pub percentiles: String,
    /// Retries of a transaction after deadlocks, lock timeouts or
    /// serialization failures before it counts as failed (default: unlimited).
    #[arg(long, value_name = "N")]
    pub max_retries: Option<u64>,
    /// Error kinds that fail the transaction instead of aborting the run:
    /// a comma-separated list of deadlock, lock_timeout, serialization,
    /// duplicate_key, connection_lost, other — or `all`.
    #[arg(long, value_name = "KINDS", value_parser = values::error_kinds)]
    pub ignore_errors: Option<ErrorSet>,
    /// Seconds in-flight transactions may take to finish after the end
    /// before they are abandoned (the run's deadline is time + grace).
    #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
    pub grace: f64,
    /// Re-open each client's connection every N transactions (0 = never).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub reconnect: u64,
    /// Run the --threads connections on N event-loop threads, each serving
    /// every ready connection per wake-up (pgbench's -j); PostgreSQL and
    /// MySQL/MariaDB.
    /// Without it each connection has a thread of its own, the default so
    /// that a command measures what it measured before. Measured here
    /// (bench/README.md): under --rate use it (p99 at 60 % of the peak a
    /// tenth of pgbench's, where threads missed 10 ms in half the pairs),
    /// and on thousands of connections for memory (half at 10,000); a
    /// closed loop's throughput on loops against threads depends on the
    /// host (0.71 to 1.03 at 1,024 MariaDB connections): measure both.
    #[arg(long, value_name = "N")]
    pub client_threads: Option<usize>,
    /// Send a transaction's statements in groups of up to K, each one
    /// pipeline (pgbench's \startpipeline … \endpipeline), a group ending
    /// early at a statement whose rows the transaction reads; PostgreSQL.
    /// The clients run on event loops: --client-threads, by default one per
    /// CPU.
    #[arg(long, value_name = "K")]
    pub pipeline: Option<usize>,
    /// Open loop: start R transactions per second in total, on a schedule
    /// fixed from the run's start whatever the server's pace; latency is
    /// measured from each transaction's intended start, and the report
    /// adds the service time, the schedule lag and the achieved rate.
    #[arg(long, value_name = "R", help_heading = "Pacing")]
    pub rate: Option<f64>,
    /// How --rate's arrivals are spaced: poisson (random, the default) or
    /// uniform (evenly).
    #[arg(long, default_value = "poisson", value_name = "poisson|uniform", value_parser = values::arrival, help_heading = "Pacing")]
    pub arrival: Arrival,
    /// Count transactions slower than this (from their intended start,
    /// with a unit: 10ms, 1s) as late; with --rate, skip those already this
    /// far behind schedule when a connection is free (pgbench's
    /// --latency-limit).
    #[arg(long, value_name = "DURATION", value_parser = values::duration_with_unit, help_heading = "Pacing")]
    pub latency_limit: Option<std::time::Duration>,
    /// Pause between one user's transactions, never part of any latency:
    /// fixed:100ms, uniform:1s:3s or exp:7.2s[:cap=72s].
    #[arg(long, value_name = "DIST", value_parser = values::think_time, help_heading = "Pacing")]
    pub think_time: Option<ThinkTime>,
    /// Emulated users sharing the --threads connections (at least as many):
    /// a user whose think time ends queues for a free connection, and its
    /// latency includes the wait. Users are timers, not threads.
    /// `--eus` is the same option in DBT-1's words (emulated users).
    #[arg(long, alias = "eus", value_name = "U", help_heading = "Pacing")]
    pub users: Option<usize>,
    /// Start the users one after another, R per second (DBT-1's ramp-up);
    /// the measured window begins once the last one has started.
    #[arg(long, value_name = "R", help_heading = "Pacing")]
    pub ramp_up: Option<f64>,
    /// After the run, check the workload's consistency conditions (TPC-C's
    /// clause 3.3.2, as `dbsweep check`): the report says whether they
    /// hold, and the exit status is 1 if one does not.
    #[arg(long)]
    pub check: bool,
    /// Write the full result as JSON to FILE (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Write a self-contained HTML report of the run to FILE: summary,
    /// latency per statement type and by percentile, throughput and latency
    /// over time (collects intervals even without --report-interval).
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<std::path::PathBuf>,
    /// Write the latency of each interval to FILE as an HdrHistogram
    /// interval log (the `.hlog` format HistogramLogProcessor, wrk2's and
    /// YCSB's users' scripts read): values in nanoseconds, the max column
    /// in milliseconds, warmup intervals tagged `warmup`. Intervals are
    /// --report-interval long (1 s when not given); e.g. `--hdr-log
    /// run.hlog`, then `HistogramLogProcessor -i run.hlog -o run`.
    #[arg(long, value_name = "FILE.hlog")]
    pub hdr_log: Option<std::path::PathBuf>,
    /// Serve the run live at http://HOST:PORT/metrics, for Prometheus to
    /// scrape (OpenMetrics, or Prometheus's text format): offered and
    /// achieved transactions per second, transactions, errors by kind and
    /// retries, the last interval's latency quantiles, the phase, clients,
    /// and the machine's and the server's CPU. Intervals are
    /// --report-interval long (1 s when not given); e.g. `--prometheus
    /// 127.0.0.1:9187` (`:9187` for every interface). A port already
    /// taken is refused before the run. docs/json.md describes the
    /// metrics; docs/grafana/dbsweep.json is a dashboard for them.
    #[arg(long, value_name = "HOST:PORT", value_parser = values::listen)]
    pub prometheus: Option<std::net::SocketAddr>,
    /// Sample the machine (CPU, IO, memory, network), the server's
    /// processes and its counters beside the run: `on` (default) or `off`.
    #[arg(long, default_value = "on", value_name = "on|off", value_parser = values::on_off, action = ArgAction::Set)]
    pub metrics: bool,
    /// Seconds between the samples of --metrics.
    #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
    pub metrics_interval: f64,
    /// Profile the server's processes and dbsweep's own on the CPU over
    /// the measured window with Linux perf (with --metrics on): the top
    /// functions in the summary, folded stacks beside --json, flame
    /// graphs in --report (docs/profiles.md).
    #[arg(long)]
    pub profile: bool,
    /// --profile's samples per second of each thread's CPU time.
    #[arg(long, default_value = "99", value_name = "HZ", value_parser = values::profile_hz)]
    pub profile_frequency: u32,
    /// How --profile walks stacks: `fp` (frame pointers; cheap) or `dwarf`
    /// (whole stacks of builds without frame pointers; dearer).
    #[arg(long, default_value = "fp", value_name = "fp|dwarf", value_parser = values::call_graph)]
    pub call_graph: crate::metrics::profile::CallGraph,
    /// Run shard I of N (0-based) of a run split across machines: this
    /// process's share of --threads, --users, --events and --rate, with
    /// random streams derived from --rand-seed (give the same one to every
    /// shard) and I; only shard 0 checks the data. Add the shards' --json
    /// records with `dbsweep merge`.
    #[arg(long, value_name = "I/N", value_parser = values::shard)]
    pub shard: Option<crate::engine::Shard>,
    #[command(flatten)]
    pub nodes: NodesArgs,
    #[command(flatten)]
    pub find_rate: super::find_rate_args::FindRateArgs,
    /// Run the point FILE describes instead of one from the options: its
    /// workload and options, --db (without a password: PGPASSWORD or
    /// MYSQL_PWD give it), clients, stop condition, pacing, seed,
    /// percentiles and metrics, resolved. `dbsweep k8s` writes one into its
    /// ConfigMap for the coordinator Pod. Beside it only --json, --report,
    /// --check and the options of --nodes.
    #[arg(long, value_name = "POINT.json")]
    pub spec: Option<std::path::PathBuf>,
    /// The ids of the options given on the command line (not defaults),
    /// filled from the matches by `parse_from`: what `--spec` and `dbsweep
    /// k8s` refuse beside them.
    #[arg(skip)]
    pub given: Vec<String>,
}

#[derive(Debug, Args)]
pub struct DistArgs {
    /// uniform, gaussian, special, pareto or zipfian.
    #[arg(value_parser = values::dist_kind)]
    pub distribution: DistKind,
    #[arg(long, default_value_t = 1)]
    pub min: u32,
    #[arg(long, default_value_t = 10000)]
    pub max: u32,
    /// Number of draws.
    #[arg(long, default_value_t = 100_000)]
    pub n: u64,
    /// Seed (0 = from the current time).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print the draws, one per line, instead of the summary.
    #[arg(long)]
    pub raw: bool,
    /// Histogram bins.
    #[arg(long, default_value_t = 20)]
    pub bins: usize,
    #[command(flatten)]
    pub rand: RandArgs,
}

/// The full clap command, with the workload options attached to the
/// subcommands that take them.
pub fn command() -> clap::Command {
    Cli::command()
        .mut_subcommand("prepare", with_workload_options)
        .mut_subcommand("run", |run| {
            // A point file names its own workload.
            with_workload_options(run)
                .mut_arg("workload", |w| {
                    w.required(false).required_unless_present("spec")
                })
                .override_usage(
                    "dbsweep run [OPTIONS] <WORKLOAD>\n       dbsweep run --spec <POINT.json> [--json FILE] [--report FILE.html] [--nodes N …]",
                )
        })
        .mut_subcommand("cleanup", with_workload_options)
        .mut_subcommand("check", with_workload_options)
        // `k8s` takes every option of `run`, for the coordinator's run
        // (keeping its own description, which `RunArgs`' would replace).
        .mut_subcommand("k8s", |k8s| {
            let about = k8s.get_about().cloned().unwrap_or_default();
            with_workload_options(RunArgs::augment_args(k8s)).about(about)
        })
}

fn with_workload_options(cmd: clap::Command) -> clap::Command {
    let args = options::ALL.iter().map(|spec| {
        let arg = Arg::new(arg_id(spec.name))
            .long(spec.name)
            .value_name(match spec.kind {
                OptKind::Int => "N",
                OptKind::Bool => "on|off",
                OptKind::Str => "STRING",
                OptKind::Float => "X",
            })
            .help(if spec.default.is_empty() || spec.states_default() {
                spec.help.to_string()
            } else {
                format!("{} [default: {}]", spec.help, spec.default)
            })
            .help_heading("Workload options")
            .action(ArgAction::Set);
        match spec.kind {
            // `--skip-trx` alone means on, as in sysbench.
            OptKind::Bool => arg.num_args(0..=1).default_missing_value("on"),
            _ => arg,
        }
    });
    cmd.args(args)
}

/// The clap id of workload option `name`: its name, but for YCSB's
/// `--workload`, whose name is the positional WORKLOAD's id.
fn arg_id(name: &'static str) -> &'static str {
    match name {
        "workload" => "ycsb-workload",
        n => n,
    }
}

/// Parses the process arguments (exits with clap's message on bad syntax).
pub fn parse() -> Cli {
    parse_from(std::env::args_os())
}

pub fn parse_from<I, T>(it: I) -> Cli
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    try_parse_from(it).unwrap_or_else(|e| e.exit())
}

/// As [`parse_from`], with clap's error (or help) returned, not printed.
pub fn try_parse_from<I, T>(it: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = command().try_get_matches_from(it)?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    if let Some((name, sub)) = matches.subcommand() {
        let given = workload_options(sub);
        let def = command();
        let def = def
            .find_subcommand(name)
            .expect("a subcommand of the command");
        match &mut cli.command {
            Command::Prepare(t) | Command::Cleanup(t) | Command::Check(t) => t.options = given,
            Command::Run(r) => {
                r.target.options = given;
                r.given = given_ids(def, sub);
            }
            // `run`'s options, read against `run`'s own definition.
            Command::K8s(k) => {
                let mut run = RunArgs::from_arg_matches(sub)?;
                run.target.options = given;
                run.given = given_ids(def, sub);
                k.run = Some(Box::new(run));
            }
            _ => {}
        }
    }
    Ok(cli)
}

/// The ids of `def`'s arguments given on the command line (not defaults,
/// not the groups clap's derive adds).
fn given_ids(def: &clap::Command, m: &ArgMatches) -> Vec<String> {
    def.get_arguments()
        .map(|a| a.get_id().as_str())
        .filter(|id| {
            m.try_contains_id(id).unwrap_or(false)
                && m.value_source(id) == Some(ValueSource::CommandLine)
        })
        .map(str::to_string)
        .collect()
}

/// The workload options the user actually typed, in table order.
fn workload_options(m: &ArgMatches) -> Vec<(String, String)> {
    options::ALL
        .iter()
        .filter(|s| {
            let id = arg_id(s.name);
            m.try_contains_id(id).unwrap_or(false)
                && m.value_source(id) == Some(ValueSource::CommandLine)
        })
        .filter_map(|s| {
            m.get_one::<String>(arg_id(s.name))
                .map(|v| (s.name.to_string(), v.clone()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_definition_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn collects_workload_options() {
        let cli = parse_from([
            "dbsweep",
            "run",
            "oltp_read_only",
            "--table-size=500",
            "--skip-trx",
            "--threads",
            "4",
        ]);
        let Command::Run(r) = cli.command else {
            panic!()
        };
        assert_eq!(r.target.threads, 4);
        assert_eq!(
            r.target.options,
            vec![
                ("table-size".to_string(), "500".to_string()),
                ("skip-trx".to_string(), "on".to_string())
            ]
        );
    }
}
