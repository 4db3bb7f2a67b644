//! A format-neutral report document: a title, facts about what was measured,
//! and sections of paragraphs, tables and charts.
//!
//! The study report is built once as a [`Doc`] from stored results and the
//! analysis functions; the HTML and Markdown exporters only lay it out, so
//! the formats cannot disagree on a number. Charts are data (series of
//! points); the `plot` module draws them as SVG.

use serde::Serialize;

pub mod html;
pub mod markdown;
pub mod text;

pub use super::plot::chart::{Axis, Chart, ChartKind, Scale, Series};

/// A whole report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Doc {
    pub title: String,
    /// What was measured, shown in the header: study, machine, server
    /// versions, settings that differ between variants (label, value).
    pub facts: Vec<(String, String)>,
    pub sections: Vec<Section>,
}

/// A titled part of the report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Section {
    pub title: String,
    pub blocks: Vec<Block>,
}

/// One element of a section, in reading order.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    /// Running text; conclusions are paragraphs ("X is slower than the best by Y %").
    Paragraph(String),
    /// A remark in smaller type (how a figure was computed, a caveat).
    Note(String),
    Table(Table),
    Chart(Chart),
    /// A flame graph, drawn (`plot::flame`).
    Flame(Flame),
}

/// A flame graph as SVG (with inferno's script), under an id for its file
/// and its anchor.
#[derive(Debug, Clone, Serialize)]
pub struct Flame {
    pub id: String,
    pub title: String,
    /// The drawing; kept out of a serialized document (the JSON export
    /// names the graph; the folded stacks are the data).
    #[serde(skip)]
    pub svg: String,
}

/// A table in the seeds' shape: one row per series, one column per value
/// of the swept dimension (usually clients).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Table {
    pub caption: String,
    /// Header of the row-label column (e.g. "target / variant").
    pub corner: String,
    /// Column headers (e.g. "1", "2", "4" clients).
    pub columns: Vec<String>,
    pub rows: Vec<Row>,
    /// Wrap into parts of at most this many columns (seed 000's halves);
    /// None = one part.
    pub wrap: Option<usize>,
    /// The cells are sentences, not figures (a reproduction's words and
    /// deviations): left-aligned and wrapped in HTML, one record per row
    /// in text.
    pub prose: bool,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Row {
    pub label: String,
    pub cells: Vec<Cell>,
}

/// One table cell: the shown value, its spread, and a mark.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Cell {
    /// The value as shown ("1234.5", "stopped: below 20 % of peak", "").
    pub text: String,
    /// The spread or other detail: a tooltip in HTML, a second line or
    /// footnote elsewhere (e.g. "± 12.3 (sd, 3 repeats)").
    pub detail: Option<String>,
    pub mark: Mark,
}

impl Cell {
    /// A cell with only its text: no detail, no mark.
    pub fn plain(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            ..Cell::default()
        }
    }
}

/// How a cell is highlighted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    #[default]
    None,
    /// The best value of its row or column (e.g. the peak).
    Best,
    /// Better than the baseline by more than the noise.
    Better,
    /// Worse than the baseline by more than the noise.
    Worse,
    /// Not measured: skipped by a stop rule or failed; `text` says why.
    Missing,
}
