//! `dbsweep merge RUN.json…`: the records of a run's shards (`run --shard
//! I/N --json`) added into the record of the whole run (`engine::merge`),
//! reported as one run with a per-shard table, and written with `--json`
//! and `--report` like a run's. A shard's profiles' folded stacks are read
//! from beside its file (`FILE.ROLE.folded.gz`), so the merged client
//! profile sums them.

use std::path::PathBuf;

use super::{status_of, JsonOut, RunStatus};
use crate::engine::merge::{self, Input};
use crate::record;
use crate::UsageError;

/// `dbsweep merge`.
pub struct MergeRequest {
    pub files: Vec<PathBuf>,
    pub json: Option<JsonOut>,
    pub report: Option<PathBuf>,
}

pub fn merge(req: &MergeRequest) -> anyhow::Result<RunStatus> {
    let mut runs = Vec::with_capacity(req.files.len());
    for f in &req.files {
        let text = std::fs::read_to_string(f).map_err(|e| {
            UsageError(format!(
                "cannot read {}: {e} (name each shard's --json file)",
                f.display()
            ))
        })?;
        let mut run = record::from_str(&text).map_err(|e| {
            UsageError(format!(
                "{} is not a run record dbsweep can read: {e}",
                f.display()
            ))
        })?;
        // Its profiles' stacks, so the merged client profile can sum them.
        super::report::folded_beside(&mut run, f);
        runs.push((f.display().to_string(), run));
    }
    let inputs: Vec<Input<'_>> = runs.iter().map(|(name, run)| Input { name, run }).collect();
    let mut merged = merge::merge(&inputs).map_err(UsageError)?;
    let outputs = super::run::Outputs {
        json: req.json.clone(),
        report: req.report.clone(),
        hdr_log: None,
    };
    super::emit_run(&mut merged, &outputs)?;
    Ok(status_of([&merged.result.stop_reason]))
}
