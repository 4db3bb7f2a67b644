//! A format-neutral report document: a title, facts about what was measured,
//! and sections of paragraphs, tables and charts.
//!
//! The study report is built once as a [`Doc`] from stored results and the
//! analysis functions; the HTML and Markdown exporters only lay it out, so
//! the formats cannot disagree on a number. Charts are data (series of
//! points); the `plot` module draws them as SVG.

use serde::Serialize;

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

/// A chart: series of (x, y) points on two labelled axes.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Chart {
    /// File stem when the chart is written next to a Markdown report.
    pub id: String,
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub kind: ChartKind,
    pub series: Vec<Series>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Axis {
    /// Label with its unit, e.g. "clients", "transactions/s", "latency (ms)".
    pub label: String,
    pub scale: Scale,
}

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    #[default]
    Linear,
    /// Logarithmic (e.g. clients 1…1024, latencies over decades).
    Log,
    /// Percentiles of a distribution (HdrHistogram's): 0, 90, 99, 99.9 …
    /// equally spaced, so the tail is visible.
    Percentile,
}

impl Scale {
    /// Logarithmic when `log`, else linear.
    pub fn log_if(log: bool) -> Scale {
        if log {
            Scale::Log
        } else {
            Scale::Linear
        }
    }
}

impl Axis {
    pub fn new(label: impl Into<String>, scale: Scale) -> Axis {
        Axis {
            label: label.into(),
            scale,
        }
    }

    pub fn linear(label: impl Into<String>) -> Axis {
        Axis::new(label, Scale::Linear)
    }

    pub fn log(label: impl Into<String>) -> Axis {
        Axis::new(label, Scale::Log)
    }

    pub fn percentile(label: impl Into<String>) -> Axis {
        Axis::new(label, Scale::Percentile)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChartKind {
    /// Points joined by lines, with markers (throughput vs clients).
    #[default]
    Line,
    /// A step function (a latency distribution / CDF).
    Step,
    /// Filled areas stacked in series order: each series' y is added to
    /// the ones before it at the same x (CPU time by kind adding up to
    /// 100 %). Every series has the same x values.
    Stacked,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Optional spread per point (low, high), same order as `points`, drawn
    /// as an error bar or band.
    pub spread: Option<Vec<(f64, f64)>>,
    /// Another source's published figures, not a measurement: drawn dashed
    /// and labelled with its source.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reference: bool,
}
