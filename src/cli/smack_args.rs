//! `dbsweep smack` and `dbsweep gen-data`: Super Smack's command line, as
//! clap parses it (re-exported by `args`).

use clap::{ArgAction, Args};

use crate::driver::{Dialect, ErrorSet, PsMode};

use super::values;

pub const SMACK_EXAMPLES: &str = "\
Examples:
  dbsweep smack select-key.smack 10 1000 -d sqlite                 # temporary SQLite database
  dbsweep smack select-key.smack 10 1000 --db mysql://root@127.0.0.1:3306/test
  dbsweep smack update-select.smack 4 500 -d pg --db postgres://postgres@127.0.0.1/test
  dbsweep smack select-key.smack 10 1000 --db \"$URL\" --datadir /var/smack-data --json out.json
See docs/smack.md.";

pub const GEN_DATA_EXAMPLES: &str = "\
Examples:
  dbsweep gen-data -n 90000 -f '%12-12s%n,%25-25s,%n,%d' > words.dat
Format: %[MIN-]MAX followed by s (letters a-y), n (row number) or d (random integer); %% is a percent sign.";

#[derive(Debug, Args)]
pub struct SmackArgs {
    /// The .smack file.
    pub file: std::path::PathBuf,
    /// Arguments of the file: $1, $2, … (the stock files take the number of
    /// clients, then the rounds per client).
    #[arg(value_name = "ARGS", allow_hyphen_values = false)]
    pub args: Vec<String>,
    /// Database type for clients built from the file's client blocks:
    /// mysql (also mariadb), pg (also postgres) or sqlite. Default: the
    /// --db URL's, else mysql (Super Smack's default).
    #[arg(short = 'd', long = "db-type", value_name = "TYPE", value_parser = values::dialect)]
    pub db_type: Option<Dialect>,
    /// Database URL replacing every client block's host, user, pass, db,
    /// port and socket, e.g. mysql://root@127.0.0.1:3306/test.
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// Directory that relative data_file and dictionary source paths are
    /// resolved against (Super Smack's -D/--datadir; it defaulted to
    /// /var/smack-data). Default: ./smack-data.
    #[arg(short = 'D', long, value_name = "DIR")]
    pub datadir: Option<std::path::PathBuf>,
    /// Statement protocol: `disable` sends SQL text with literals quoted by
    /// the client, as Super Smack did; `auto` uses prepared statements.
    #[arg(long, default_value = "disable", value_name = "MODE", value_parser = values::ps_mode)]
    pub db_ps_mode: PsMode,
    /// Percentiles in the per-query-type latency table, comma-separated.
    #[arg(long, default_value = "50,95,99", value_name = "LIST")]
    pub percentiles: String,
    /// Error kinds that fail a round instead of aborting the run (see
    /// `dbsweep run --help`); by default any error stops the client, as in
    /// Super Smack.
    #[arg(long, value_name = "KINDS", value_parser = values::error_kinds)]
    pub ignore_errors: Option<ErrorSet>,
    /// Seed of the dictionaries' random draws and of generated data files
    /// (0 = from the current time; data files then still use seed 1).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub rand_seed: u64,
    /// Write the full result as JSON to FILE (`-` for standard output); one
    /// record per client run, an array when the file runs several clients.
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Sample the machine (CPU, IO, memory, network), the server's
    /// processes and its counters beside the run: `on` (default) or `off`.
    #[arg(long, default_value = "on", value_name = "on|off", value_parser = values::on_off, action = ArgAction::Set)]
    pub metrics: bool,
    /// Seconds between the samples of --metrics.
    #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
    pub metrics_interval: f64,
}

#[derive(Debug, Args)]
pub struct GenDataArgs {
    /// Number of rows.
    #[arg(short = 'n', long = "num-rows", value_name = "N")]
    pub rows: u64,
    /// Row format, e.g. '%12-12s%n,%25-25s,%n,%d'.
    #[arg(short = 'f', long, value_name = "FORMAT", allow_hyphen_values = true)]
    pub format: String,
    /// Seed of the random values (the same seed gives the same rows).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,
}
