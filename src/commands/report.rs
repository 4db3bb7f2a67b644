//! `dbsweep report` and `dbsweep results`: what a results database holds,
//! as a study report in one of the formats, or as the plain table of its
//! points. `dbsweep report RUN.json` renders a run file (`--json`) instead.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::write_atomically;
use crate::record;
use crate::report;
pub use crate::report::export::Format;
use crate::report::export::{exporter, Study};
use crate::report::study::{self, Metric};
use crate::util::paths::dir_of;
use crate::UsageError;

/// `dbsweep report [DIR|results.db|RUN.json]`.
pub struct ReportRequest {
    pub path: PathBuf,
    pub format: Format,
    /// `--out PATH`; None: `report.FORMAT` next to the results database
    /// (text: standard output); `-`: standard output.
    pub out: Option<PathBuf>,
    /// `--baseline OTHER`: another results database or study.
    pub baseline: Option<String>,
    /// `--study NAME`.
    pub study: Option<String>,
    pub metric: Metric,
    /// `--point CLIENTS`.
    pub point: Option<u32>,
    /// `--reference FILE.csv`: published figures to show beside.
    pub references: Vec<PathBuf>,
}

/// `dbsweep results [DIR|results.db]`.
pub struct ResultsRequest {
    pub path: PathBuf,
    /// `--csv`: CSV instead of the table.
    pub csv: bool,
}

pub fn results(a: &ResultsRequest) -> anyhow::Result<()> {
    let path = crate::store::resolve_path(&a.path);
    let store = crate::store::Store::open_existing(&path)?;
    let points = store.point_figures(None)?;
    let out = if a.csv {
        report::results::csv(&points)
    } else {
        let mut summaries = Vec::new();
        for s in store.studies()? {
            summaries.extend(store.summaries(s.id)?);
        }
        report::results::table(&points, &summaries)
    };
    std::io::stdout().write_all(out.as_bytes())?;
    Ok(())
}

/// Where the report goes: None is standard output.
fn destination(a: &ReportRequest, dir: &Path) -> Result<Option<PathBuf>, UsageError> {
    let out = match &a.out {
        Some(o) if o.as_os_str() == "-" => None,
        Some(o) => Some(o.clone()),
        None if a.format == Format::Text => None,
        None => Some(dir.join(format!("report.{}", a.format.name()))),
    };
    // A bad path fails before anything (a chart file) is written.
    if let Some(parent) = out.as_deref().map(dir_of) {
        if !parent.is_dir() {
            return Err(UsageError(format!(
                "cannot write the report into '{}': the directory does not exist",
                parent.display()
            )));
        }
    }
    Ok(out)
}

/// The exporter of the format asked for, naming the files it writes
/// beside the report after the report's.
fn exporter_for(a: &ReportRequest, out: Option<&Path>) -> Box<dyn report::export::Exporter> {
    let stem = out
        .and_then(|o| o.file_stem())
        .map(|s| s.to_string_lossy().into_owned());
    exporter(a.format, stem.as_deref())
}

/// Writes the report there (None: standard output), with the files that
/// go beside it (Markdown's charts) next to it.
fn emit(out: Option<PathBuf>, o: report::export::Output) -> anyhow::Result<()> {
    match out {
        None => std::io::stdout().write_all(&o.report)?,
        Some(path) => {
            let dir = dir_of(&path);
            for (name, bytes) in &o.beside {
                write_atomically(&dir.join(name), bytes)?;
            }
            write_atomically(&path, &o.report)?;
            eprintln!("Report written to {}", path.display());
        }
    }
    Ok(())
}

/// `dbsweep report RUN.json`: the report of one run file.
fn run_file(a: &ReportRequest) -> anyhow::Result<()> {
    let file = std::fs::File::open(&a.path)
        .map_err(|e| UsageError(format!("cannot read '{}': {e}", a.path.display())))?;
    let mut run = record::read(std::io::BufReader::new(file)).map_err(|e| {
        UsageError(format!(
            "'{}' is not a run file dbsweep can read: {e:#}",
            a.path.display()
        ))
    })?;
    crate::engine::derive::older(&mut run);
    folded_beside(&mut run, &a.path);
    render_run(a, &run)
}

/// Reads the folded stacks a run's profiles name (`FILE.ROLE.folded.gz`,
/// written beside its `--json FILE`) back into them, so its report draws
/// the flame graphs; a file that is gone or unreadable leaves the report
/// naming it instead, and says why on standard error.
pub(super) fn folded_beside(run: &mut record::Run, json: &Path) {
    let dir = json.parent().unwrap_or(Path::new(""));
    for p in run.profiles_mut().filter(|p| p.folded.is_none()) {
        let Some(file) = p.file.clone() else { continue };
        let path = dir.join(&file);
        let read = std::fs::read(&path).and_then(|gz| p.set_folded_gz(&gz));
        if let Err(e) = read {
            eprintln!(
                "The {}'s folded stacks could not be read from {}: {e}; the report names the file instead of drawing them.",
                p.role,
                path.display()
            );
        }
    }
}

/// `dbsweep report RUN.series.jsonl.gz`: the report of a run that never
/// finished, rebuilt from the intervals its series file had closed.
fn series_file(a: &ReportRequest) -> anyhow::Result<()> {
    let run = crate::engine::recover::recover(&a.path).map_err(|e| {
        UsageError(format!(
            "'{}' is not a series file dbsweep can read: {e:#}",
            a.path.display()
        ))
    })?;
    render_run(a, &run)
}

/// One run's report in the format asked for.
fn render_run(a: &ReportRequest, run: &record::Run) -> anyhow::Result<()> {
    let dir = a.path.parent().map(Path::to_path_buf).unwrap_or_default();
    let out = destination(a, &dir)?;
    let o = exporter_for(a, out.as_deref()).run(run)?;
    emit(out, o)
}

/// What the study reproduces, with `--reference` files in place of the
/// stored ones of the same name (or beside them, unmapped); read through
/// the study loader for a study stored before its reproduction was.
fn references(a: &ReportRequest, data: &mut crate::report::study::StudyData) -> anyhow::Result<()> {
    use crate::study::repro::published as reference;
    use crate::study::repro::RefSpec;
    let mut given = Vec::new();
    for f in &a.references {
        let text = std::fs::read_to_string(f)
            .map_err(|e| UsageError(format!("--reference {}: cannot read it: {e}", f.display())))?;
        let parsed = reference::parse(&f.display().to_string(), &text).map_err(UsageError)?;
        let name = f.file_name().map(|n| n.to_string_lossy().into_owned());
        given.push((f.display().to_string(), name, text, parsed));
    }
    let same = |stored: &str, name: &Option<String>| {
        Path::new(stored)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            == *name
    };
    if data.reproduction.is_none() && !data.info.file_text.is_empty() {
        // An older results database: its stored study file, with the
        // given files standing for the stored ones of the same name.
        for (shown, name, text, _) in &given {
            let file = data
                .references
                .iter()
                .map(|(f, _)| f.clone())
                .find(|f| same(f, name))
                .unwrap_or_else(|| shown.clone());
            data.references.retain(|(n, _)| *n != file);
            data.references.push((file, text.clone()));
        }
        data.reproduction = Some(crate::study::stored_reproduction(
            &data.info.file_text,
            &data.references,
        )?);
    }
    let spec = data.reproduction.get_or_insert_with(Default::default);
    for (shown, name, _, parsed) in given {
        match spec.references.iter_mut().find(|r| same(&r.file, &name)) {
            Some(r) => {
                let series = parsed.series();
                if let Some((_, missing)) =
                    r.map.iter().find(|(_, t)| !series.contains(&t.as_str()))
                {
                    return Err(UsageError(format!(
                        "--reference {shown}: the study compares a series with '{missing}', which the file does not have (its series: {}): give the file the study was made with",
                        series.join(", ")
                    ))
                    .into());
                }
                r.data = parsed;
            }
            None => {
                let metric = if parsed.metrics().contains("tps") {
                    "tps".to_string()
                } else {
                    parsed
                        .metrics()
                        .into_iter()
                        .next()
                        .unwrap_or("tps")
                        .to_string()
                };
                spec.references.push(RefSpec {
                    file: shown,
                    metric,
                    data: parsed,
                    ..RefSpec::default()
                });
            }
        }
    }
    Ok(())
}

/// `dbsweep report [DIR|results.db]`: a study's tables, charts and
/// conclusions in one of the report formats.
pub fn report(a: &ReportRequest) -> anyhow::Result<()> {
    if a.path.extension().is_some_and(|e| e == "json") && a.path.is_file() {
        return run_file(a);
    }
    let name = a.path.file_name().unwrap_or_default().to_string_lossy();
    if (name.ends_with(".jsonl") || name.ends_with(".jsonl.gz")) && a.path.is_file() {
        return series_file(a);
    }
    let mut data = study::load(&a.path, a.study.as_deref())?;
    references(a, &mut data)?;
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
        metric: a.metric,
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
    let out = destination(a, &dir)?;
    let study = Study {
        data: &data,
        report: &report,
        doc: &doc,
    };
    let o = exporter_for(a, out.as_deref()).study(&study)?;
    emit(out, o)
}
