//! `dbsweep smack FILE ARGS…` runs a Super Smack `.smack` file's main
//! block ([`session`]), printing Super Smack's report for each client it
//! collects; `dbsweep gen-data` is Super Smack's data generator.

mod session;

use std::path::PathBuf;

use super::{cancel_flag, check_sqlite_path, status_of, JsonOut, RunStatus};
use crate::driver::{Dialect, ErrorSet, PsMode, Target};
use crate::workload::smack::{gen_data, parse, program};
use crate::UsageError;

/// `dbsweep smack FILE ARGS…`.
pub struct SmackRequest {
    pub file: PathBuf,
    /// The file's `$1`, `$2`, … .
    pub args: Vec<String>,
    /// `-d`: the dialect of clients built from client blocks (default: the
    /// `--db` URL's, else MySQL as in Super Smack).
    pub dialect: Dialect,
    /// `--db`: replaces every client block's connection.
    pub db: Option<Target>,
    /// `-D`: where relative data files are.
    pub datadir: PathBuf,
    /// Statement protocol of targets built from client blocks.
    pub ps_mode: PsMode,
    pub percentiles: Vec<f64>,
    pub ignore_errors: ErrorSet,
    /// `--rand-seed`; 0: from the clock (generated data files then stay
    /// the same from run to run).
    pub seed: u64,
    pub json: Option<JsonOut>,
    /// The interval of the machine and server sampling; `None`: off.
    pub metrics: Option<std::time::Duration>,
}

/// `dbsweep gen-data -n N -f FORMAT`.
pub struct GenDataRequest {
    pub rows: u64,
    pub format: gen_data::Format,
    pub seed: u64,
}

pub fn smack(a: &SmackRequest) -> anyhow::Result<RunStatus> {
    if let Some(t) = &a.db {
        // A SQLite --db for smack may be created, but its directory must exist.
        check_sqlite_path(t, true, "smack")?;
    }
    let src = std::fs::read_to_string(&a.file).map_err(|e| {
        UsageError(format!(
            "cannot read .smack file '{}': {e}",
            a.file.display()
        ))
    })?;
    let file = parse::parse(&a.file, &src).map_err(|e| UsageError(e.to_string()))?;
    let prog = program::check(&file, &a.args, &a.datadir).map_err(|e| UsageError(e.to_string()))?;
    let seed = if a.seed == 0 {
        crate::rand::seed_from_time()
    } else {
        a.seed
    };
    let opts = session::Options {
        dialect: a.dialect,
        db: a.db.clone(),
        ps_mode: a.ps_mode,
        seed,
        // Generated data files are the same every time unless a seed is given.
        data_seed: if a.seed == 0 { 1 } else { a.seed },
        percentiles: a.percentiles.clone(),
        ignore_errors: a.ignore_errors,
        args: a.args.clone(),
        metrics: a.metrics,
    };
    let cancel = cancel_flag();
    let runs = session::run(&prog, &opts, &cancel)?;
    if let Some(out) = &a.json {
        let docs: Vec<&crate::record::Run> = runs.iter().map(|r| &r.record).collect();
        let mut bytes = match docs.as_slice() {
            [one] => serde_json::to_vec_pretty(one)?,
            _ => serde_json::to_vec_pretty(&docs)?,
        };
        bytes.push(b'\n');
        out.write(&bytes)?;
    }
    Ok(status_of(runs.iter().map(|r| &r.record.result.stop_reason)))
}

pub fn gen_data(a: &GenDataRequest) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match gen_data::generate(&a.format, a.rows, a.seed, &mut out) {
        // A closed pipe (`| head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}
