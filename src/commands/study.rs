//! `dbsweep study FILE`: a whole campaign — plan, servers, points — into a
//! results database, and its report when it ends (also after Ctrl-C, of
//! what is stored).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use super::{write_atomically, RunStatus};
use crate::server;

/// `dbsweep study FILE`.
pub struct StudyRequest {
    pub file: PathBuf,
    /// `--out DIR`; None: the study's own.
    pub out: Option<PathBuf>,
    /// `--resume`: continue a study whose results exist.
    pub resume: bool,
    /// `--dry-run`: print the plan only.
    pub dry_run: bool,
    /// `--check-statements`: the conclusions on the published numbers only.
    pub check_statements: bool,
}

/// Writes `DIR/report.html` for study `name` stored in `dir`.
fn study_report(dir: &Path, name: &str) -> anyhow::Result<PathBuf> {
    use crate::report::export::{Exporter, Html, Study};
    use crate::report::study;
    let data = study::load(dir, Some(name))?;
    let report = study::analyze(&data, None, &study::Options::default());
    let doc = study::document(&data, &report);
    let path = dir.join("report.html");
    let study = Study {
        data: &data,
        report: &report,
        doc: &doc,
    };
    write_atomically(&path, &Html.study(&study)?.report)?;
    Ok(path)
}

/// The cancel flag of `dbsweep study`, set by the Ctrl-C handler.
static STUDY_CANCEL: AtomicBool = AtomicBool::new(false);

pub fn study(a: &StudyRequest) -> anyhow::Result<RunStatus> {
    let study = crate::study::load(&a.file)?;
    if a.check_statements {
        print!(
            "{}",
            crate::report::study::reproduce::check_listing(&study.reproduction)
        );
        return Ok(RunStatus::Ok);
    }
    let plan = crate::study::plan(&study);
    if a.dry_run {
        print!("{}", plan.describe(&study));
        return Ok(RunStatus::Ok);
    }
    // Bound before anything is written: a port already taken is bad input.
    let feed = study
        .prometheus
        .map(|addr| {
            let option = format!("{}: prometheus = \"{addr}\"", a.file.display());
            super::prometheus::Prometheus::bind(addr, &option)
        })
        .transpose()?;
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
        live: feed.as_ref().map(|f| f.live(Vec::new())),
    };
    let o = crate::study::runner::run(&study, &plan, &opts, &STUDY_CANCEL)?;
    eprintln!(
        "{}: {} point(s) finished, {} skipped, {} failed{}{} in {:.1}s; results in {}",
        if o.interrupted { "Interrupted" } else { "Done" },
        o.finished,
        o.skipped,
        o.failed,
        if o.already > 0 {
            format!(" ({} stored earlier)", o.already)
        } else {
            String::new()
        },
        if o.not_needed > 0 {
            format!(
                "; {} not needed (their cells' comparisons were precise enough, or their searches had their answers)",
                o.not_needed
            )
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
