//! Charts drawn as self-contained SVG (and PNG on request) from a
//! [`chart::Chart`]: axes with round ticks and labelled units, linear, logarithmic
//! or percentile scales, lines with markers and spread, step functions,
//! a legend and a title.
//!
//! Drawn by hand as strings: the charts are simple, the output stays small
//! and deterministic (tests assert on its structure), and no JavaScript or
//! font is embedded — text uses the system font stack.
//!
//! The parts: `chart` (the model: series on two axes), `scale` (the three scales, round ticks and their labels),
//! `marks` (markers, line styles, what of a series can be drawn), `svg`
//! (the drawing), `png` (the SVG rasterised), `thin` (series longer than
//! the plot is wide, aggregated to its width keeping each bucket's max).
//!
//! Conventions the report builders rely on:
//! - An axis of [`chart::Scale::Percentile`] is HdrHistogram's percentile scale:
//!   0, 90, 99, 99.9 … equally spaced, so the tail of a latency
//!   distribution is visible. 100 is drawn one "nine" beyond the highest
//!   percentile below it.
//! - [`chart::ChartKind::Step`] draws a step function in which each point's y holds
//!   until the next point's x ("step after"); the last point ends the line.
//! - Points with a NaN or infinite coordinate (or ≤ 0 on a log axis) are
//!   left out: a line has a gap there rather than an invented value.
//! - Linear y axes start at zero, so bars of throughput are not exaggerated.

pub mod chart;
pub mod flame;
mod marks;
mod png;
mod scale;
mod svg;
mod thin;

use chart::{Axis, Chart, ChartKind, Series};
pub use png::png;
pub use svg::svg;

/// Okabe & Ito's colour-blind-safe palette, less its yellow (too light on
/// white paper).
pub const PALETTE: [&str; 7] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
];

/// Line dashes for the series beyond the palette, so no two of the first
/// 28 series look alike even in grey print.
const DASHES: [&str; 4] = ["", "7 4", "2 3", "9 3 2 3"];

/// The dash of every reference series (published figures).
const REFERENCE_DASH: &str = "5 5";

/// Marker shapes; six is co-prime with the palette's seven, so colour and
/// shape change together for the first 42 series.
const MARKERS: usize = 6;

/// Fonts: the platform's UI font, then common sans fonts (DejaVu Sans is on
/// every Debian machine and is what the PNG rasteriser finds).
pub const FONT_STACK: &str = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, 'Noto Sans', 'DejaVu Sans', sans-serif";

const WIDTH: f64 = 720.0;
const PLOT_HEIGHT: f64 = 280.0;
const TICK_FONT: f64 = 11.0;
/// The title's font size, and the distance between its lines when it
/// wraps.
const TITLE_FONT: f64 = 15.0;
const TITLE_LINE: f64 = 19.0;
/// Average advance of a character of the tick/legend font, for layout.
const CHAR_W: f64 = 6.4;
/// Above this many points a line series gets no markers, and its spread is
/// a band rather than error bars: markers would hide the line.
const MAX_MARKED_POINTS: usize = 40;

/// The colour of series `i`.
pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Escapes text for XML/HTML content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters are not allowed in XML 1.0.
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;

/// A bar chart: at each x (a category's number), one bar per series side
/// by side, on a logarithmic y axis (times that span decades, such as
/// TPC-H's queries).
pub fn bars(
    id: &str,
    title: String,
    x: &str,
    y: &str,
    series: Vec<(String, Vec<(f64, f64)>)>,
) -> Chart {
    Chart {
        id: id.to_string(),
        title,
        x: Axis::linear(x),
        y: Axis::log(y),
        kind: ChartKind::Bars,
        series: series
            .into_iter()
            .map(|(name, points)| Series {
                name,
                points,
                spread: None,
                reference: false,
            })
            .collect(),
    }
}
