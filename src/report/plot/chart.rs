//! A chart as data: series of (x, y) points on two labelled axes, the
//! model every report builds its charts in and [`super::svg`] draws.

use serde::Serialize;

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
    /// Bars grouped at each x, one per series side by side, from the
    /// axis up (TPC-H's time by query: x is the query's number).
    Bars,
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
