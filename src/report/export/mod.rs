//! Every report format behind one [`Exporter`]: HTML, Markdown, text, CSV
//! and JSON, each in a file of its own, each rendering a run (its record)
//! and a study (its analysis and document). A command picks the exporter
//! of the format it was asked for ([`exporter`]) and writes what it gives
//! ([`Output`]); it never matches on a format.

mod csv;
mod html;
mod json;
mod markdown;
mod text;

use crate::record::Run;
use crate::report::doc::Doc;
use crate::report::study::{Report, StudyData};

/// A report format (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Html,
    Md,
    Text,
    Csv,
    Json,
}

impl Format {
    /// The name `--format` takes, also the file extension it writes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Html => "html",
            Format::Md => "md",
            Format::Text => "text",
            Format::Csv => "csv",
            Format::Json => "json",
        }
    }

    /// The format a file name asks for by its extension.
    pub fn of_path(p: &std::path::Path) -> Option<Format> {
        match p.extension().and_then(|e| e.to_str())? {
            "html" | "htm" => Some(Format::Html),
            "md" | "markdown" => Some(Format::Md),
            "txt" => Some(Format::Text),
            "csv" => Some(Format::Csv),
            "json" => Some(Format::Json),
            _ => None,
        }
    }
}

/// A study's report, as the exporters read it: the stored results, the
/// figures derived from them and the document laid out from both.
pub struct Study<'a> {
    pub data: &'a StudyData,
    pub report: &'a Report,
    pub doc: &'a Doc,
}

/// What an exporter gives: the report, and the files that go beside it
/// (Markdown's charts), by file name.
#[derive(Debug, Default)]
pub struct Output {
    pub report: Vec<u8>,
    pub beside: Vec<(String, Vec<u8>)>,
}

impl From<Vec<u8>> for Output {
    fn from(report: Vec<u8>) -> Output {
        Output {
            report,
            beside: Vec::new(),
        }
    }
}

impl From<String> for Output {
    fn from(report: String) -> Output {
        report.into_bytes().into()
    }
}

/// One report format, of a run and of a study.
pub trait Exporter {
    /// One run's report, from its record.
    fn run(&self, run: &Run) -> anyhow::Result<Output>;
    /// A study's report.
    fn study(&self, study: &Study<'_>) -> anyhow::Result<Output>;
}

/// The exporter of `format`. `stem` is the file stem of the report being
/// written (Markdown names its chart files after it); None when it goes
/// to standard output.
pub fn exporter(format: Format, stem: Option<&str>) -> Box<dyn Exporter> {
    match format {
        Format::Html => Box::new(html::Html),
        Format::Md => Box::new(markdown::Markdown {
            stem: stem.map(str::to_string),
        }),
        Format::Text => Box::new(text::Text),
        Format::Csv => Box::new(csv::Csv),
        Format::Json => Box::new(json::Json),
    }
}

pub use html::Html;
pub use json::Json;
pub use text::Text;
