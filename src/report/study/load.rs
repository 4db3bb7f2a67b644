//! Reading a study from the results store: the study's facts, every
//! point, complete, and the servers of its targets, as [`StudyData`].

use std::path::Path;

use super::servers::{self, TargetServer};
use crate::store::{self, Store, StoredPoint, StudyInfo};
use crate::study::repro::ReproSpec;
use crate::study::{stored_sweep, stored_target_names, DesignSpec, SweepSpec, AGAIN};
use crate::UsageError;

/// A study as read from its results database.
pub struct StudyData {
    pub info: StudyInfo,
    /// Every closed-loop point of the study (a rate sweep's calibration
    /// points included), complete (run documents and histograms), failed
    /// attempts included, target by target in the study file's order
    /// and in commit order within a target: what the panels over client
    /// counts show.
    pub points: Vec<StoredPoint>,
    /// The paced points (a `rates` or `users` axis), the same way: what
    /// the offered-load sections show.
    pub paced: Vec<StoredPoint>,
    /// Where it was read from, for the header.
    pub source: String,
    /// The published figures it is compared with: (file as named in its
    /// `[[reference]]`, CSV text), as stored when it ran or given with
    /// `dbsweep report --reference`.
    pub references: Vec<(String, String)>,
    /// What the study reproduces, as validated when it ran; None for a
    /// study stored before dbsweep kept it (the report command then reads
    /// it from the stored study file through the study loader).
    pub reproduction: Option<ReproSpec>,
    /// Each target's server: its release, the `--version` lines of the
    /// programs that served it, and the name the report gives it.
    pub servers: Vec<TargetServer>,
    /// How the study compares its series (None: stored before dbsweep
    /// kept it; the first series is then the baseline, at ±2 %).
    pub design: Option<DesignSpec>,
    /// The `[sweep.parameter]` as validated when the study ran (from the
    /// stored design, or the stored file for a study stored before that).
    pub sweep: Option<SweepSpec>,
}

impl StudyData {
    /// What the report calls target `t`: its name, or its release in a
    /// study that compares releases (see [`TargetServer::label`]).
    pub fn target_label<'a>(&'a self, t: &'a str) -> &'a str {
        self.servers
            .iter()
            .find(|s| s.target == t)
            .map_or(t, |s| s.label.as_str())
    }

    /// A `target/variant` name (a reference's `map`) with its target as
    /// the report calls it.
    pub fn series_name(&self, ours: &str) -> String {
        let (t, v) = ours.split_once('/').unwrap_or((ours, ""));
        match self.target_label(t) {
            label if label == t => ours.to_string(),
            label if v.is_empty() => label.to_string(),
            label => format!("{label}/{v}"),
        }
    }
}

/// Reads the study `name` (or the only study) of the results database at
/// `path` (a directory or a results.db).
pub fn load(path: &Path, name: Option<&str>) -> anyhow::Result<StudyData> {
    let db = store::resolve_path(path);
    let store = Store::open_existing(&db)?;
    let studies = store.studies()?;
    let names = || {
        studies
            .iter()
            .map(|s| format!("'{}'", s.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let info = match name {
        Some(n) => studies.iter().find(|s| s.name == n).ok_or_else(|| {
            UsageError(format!(
                "'{}' has no study '{n}' (it has {}): give one of those to --study",
                db.display(),
                if studies.is_empty() {
                    "none".to_string()
                } else {
                    names()
                }
            ))
        })?,
        None => match studies.as_slice() {
            [one] => one,
            [] => {
                return Err(UsageError(format!(
                    "'{}' holds no study yet: run `dbsweep study FILE` first",
                    db.display()
                ))
                .into())
            }
            _ => {
                return Err(UsageError(format!(
                    "'{}' holds several studies ({}): choose one with --study NAME",
                    db.display(),
                    names()
                ))
                .into())
            }
        },
    }
    .clone();
    // A point of N instances ran N × its clients connections. The report
    // counts connections, as publications do (seed 001's 8 instances ×
    // 1..128 are its 8..1024 connections), so its tables, charts, sentences
    // and statements all read the one count; the series label keeps "×N".
    let (mut paced, mut points): (Vec<StoredPoint>, Vec<StoredPoint>) = store
        .points(Some(info.id))?
        .into_iter()
        .map(|mut p| {
            p.row.clients *= p.row.instances.max(1);
            p
        })
        .partition(|p| p.row.load_level.is_some());
    // Interleaved blocks ran the series in shuffled orders, and the first
    // block's is no order to read a table in: the series go as the study
    // file lists its targets, a control's second measurement beside it.
    if let Some(names) = stored_target_names(&info.file_text) {
        let rank = |p: &StoredPoint| {
            let t = p.row.target.as_str();
            let (base, again) = t.strip_suffix(AGAIN).map_or((t, false), |b| (b, true));
            (
                names.iter().position(|n| n == base).unwrap_or(names.len()),
                again,
            )
        };
        points.sort_by_key(rank);
        paced.sort_by_key(rank);
    }
    let references = store.references(info.id)?;
    let servers = servers::of(points.iter().chain(&paced), &store.server_builds(info.id)?);
    let reproduction = match store.reproduction(info.id)? {
        Some(json) => Some(serde_json::from_str(&json).map_err(|e| {
            anyhow::anyhow!(
                "'{}': the stored reproduction of study '{}' cannot be read ({e}): it was written by another dbsweep",
                db.display(),
                info.name
            )
        })?),
        None => None,
    };
    let design = match store.design(info.id)? {
        Some(json) => Some(serde_json::from_str(&json).map_err(|e| {
            anyhow::anyhow!(
                "'{}': the stored design of study '{}' cannot be read ({e}): it was written by another dbsweep",
                db.display(),
                info.name
            )
        })?),
        None => None,
    };
    let sweep = design
        .as_ref()
        .and_then(|d: &DesignSpec| d.sweep.clone())
        .or_else(|| stored_sweep(&info.file_text));
    Ok(StudyData {
        info,
        points,
        paced,
        source: db.display().to_string(),
        references,
        reproduction,
        servers,
        design,
        sweep,
    })
}
