//! `dbsweep study`, `results`, `report` and `merge`: the commands that
//! run a study or read finished results, as clap parses them (re-exported
//! by `args`).

use clap::Args;

use crate::commands::report::Format;
use crate::report::study::Metric;

use super::values;

#[derive(Debug, Args)]
pub struct StudyArgs {
    /// The study file (see docs/study.md).
    pub file: std::path::PathBuf,
    /// Output directory (default: the study's `out`, else results/NAME).
    #[arg(long, value_name = "DIR")]
    pub out: Option<std::path::PathBuf>,
    /// Continue a study: run only the points not yet finished or skipped.
    #[arg(long)]
    pub resume: bool,
    /// Print the plan (points, server restarts, estimated duration) and exit.
    #[arg(long)]
    pub dry_run: bool,
    /// Evaluate every [[conclusion]] on the published numbers, print each
    /// with the numbers it compares with and its margin, and exit.
    #[arg(long, conflicts_with_all = ["dry_run", "resume"])]
    pub check_statements: bool,
}

#[derive(Debug, Args)]
pub struct ResultsArgs {
    /// A study's output directory or its results.db.
    #[arg(default_value = ".")]
    pub path: std::path::PathBuf,
    /// Print every point as CSV instead of a table.
    #[arg(long)]
    pub csv: bool,
}

pub const REPORT_EXAMPLES: &str = "\
Examples:
  dbsweep report results/quickstart                  # results/quickstart/report.html
  dbsweep report results/quickstart --format md      # report.md with its charts as SVG files
  dbsweep report results/quickstart --format text    # the tables on the terminal
  dbsweep report results/seed002-cpus --metric p95 --point 16
  dbsweep report results/new --baseline results/old --out compare.html
  dbsweep report run.json --format text              # one run's record
  dbsweep report run.series.jsonl.gz --format text   # a run killed before it ended";

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A study's output directory or its results.db; a run's record
    /// (RUN.json); or the series file of a run that never finished
    /// (RUN.series.jsonl.gz, rebuilt from the intervals it had closed).
    #[arg(default_value = ".")]
    pub path: std::path::PathBuf,
    /// Output format (default: from --out's extension, else html).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Output file; `-` for standard output (default: report.FORMAT in the
    /// study's directory; text goes to standard output).
    #[arg(long, value_name = "PATH")]
    pub out: Option<std::path::PathBuf>,
    /// Compare with another study: its directory or results.db, or the name
    /// of another study in the same results.db.
    #[arg(long, value_name = "OTHER")]
    pub baseline: Option<String>,
    /// Which study of the results.db (needed when it holds several).
    #[arg(long, value_name = "NAME")]
    pub study: Option<String>,
    /// The figure of the tables.
    #[arg(long, default_value = "tps", value_parser = values::metric)]
    pub metric: Metric,
    /// The client count of the time series, latency distribution and
    /// statement sections (default: where the best series peaks).
    #[arg(long, value_name = "CLIENTS")]
    pub point: Option<u32>,
    /// Published figures to show beside the study's series (CSV: series,
    /// metric, value and clients/users/cpus/workload columns; see
    /// docs/reproductions.md). Replaces the study's `[[reference]]` of the
    /// same file name, or adds one mapped to no series.
    #[arg(long, value_name = "FILE.csv")]
    pub reference: Vec<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The records of every shard of one run (`run --shard I/N --json FILE`).
    #[arg(required = true, value_name = "RUN.json")]
    pub files: Vec<std::path::PathBuf>,
    /// Write the merged record as JSON to FILE (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Write a self-contained HTML report of the merged run to FILE.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<std::path::PathBuf>,
}
