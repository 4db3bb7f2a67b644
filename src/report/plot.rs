//! Charts drawn as self-contained SVG (and PNG on request) from a
//! [`Chart`]: axes with round ticks and labelled units, linear, logarithmic
//! or percentile scales, lines with markers and spread, step functions,
//! a legend and a title.
//!
//! Drawn by hand as strings: the charts are simple, the output stays small
//! and deterministic (tests assert on its structure), and no JavaScript or
//! font is embedded — text uses the system font stack.
//!
//! Conventions the report builders rely on:
//! - An axis of [`doc::Scale::Percentile`] is HdrHistogram's percentile scale:
//!   0, 90, 99, 99.9 … equally spaced, so the tail of a latency
//!   distribution is visible. 100 is drawn one "nine" beyond the highest
//!   percentile below it.
//! - [`ChartKind::Step`] draws a step function in which each point's y holds
//!   until the next point's x ("step after"); the last point ends the line.
//! - Points with a NaN or infinite coordinate (or ≤ 0 on a log axis) are
//!   left out: a line has a gap there rather than an invented value.
//! - Linear y axes start at zero, so bars of throughput are not exaggerated.

use std::fmt::Write;

use super::doc::{self, Axis, Chart, ChartKind, Series};

/// Okabe & Ito's colour-blind-safe palette, less its yellow (too light on
/// white paper).
pub const PALETTE: [&str; 7] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
];

/// Line dashes for the series beyond the palette, so no two of the first
/// 28 series look alike even in grey print.
const DASHES: [&str; 4] = ["", "7 4", "2 3", "9 3 2 3"];

/// Marker shapes; six is co-prime with the palette's seven, so colour and
/// shape change together for the first 42 series.
const MARKERS: usize = 6;

/// Fonts: the platform's UI font, then common sans fonts (DejaVu Sans is on
/// every Debian machine and is what the PNG rasteriser finds).
pub const FONT_STACK: &str = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, 'Noto Sans', 'DejaVu Sans', sans-serif";

const WIDTH: f64 = 720.0;
const PLOT_HEIGHT: f64 = 280.0;
const TICK_FONT: f64 = 11.0;
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

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Linear,
    Log,
    Percentile,
}

impl Kind {
    fn of(axis: &Axis) -> Kind {
        match axis.scale {
            doc::Scale::Linear => Kind::Linear,
            doc::Scale::Log => Kind::Log,
            doc::Scale::Percentile => Kind::Percentile,
        }
    }

    /// The value in the scale's space, or None where it cannot be drawn.
    /// Percentiles of 100 and above become +inf, placed by [`Scale::cap`].
    fn transform(self, v: f64) -> Option<f64> {
        if !v.is_finite() {
            return None;
        }
        match self {
            Kind::Linear => Some(v),
            Kind::Log => (v > 0.0).then(|| v.log10()),
            Kind::Percentile => {
                if v < 0.0 {
                    None
                } else if v >= 100.0 {
                    Some(f64::INFINITY)
                } else {
                    Some(-(1.0 - v / 100.0).log10())
                }
            }
        }
    }
}

/// A tick: position in scale space, label (None for an unlabelled minor
/// gridline).
struct Tick {
    t: f64,
    label: Option<String>,
}

impl Tick {
    /// Its grid line: darker where the tick is labelled.
    fn grid_colour(&self) -> &'static str {
        if self.label.is_some() {
            "#dddddd"
        } else {
            "#f0f0f0"
        }
    }
}

/// One axis' mapping from scale space to pixels.
struct Scale {
    kind: Kind,
    lo: f64,
    hi: f64,
    /// Where the percentile 100 is drawn (scale space).
    cap: f64,
    px0: f64,
    px1: f64,
}

impl Scale {
    fn t(&self, v: f64) -> Option<f64> {
        self.kind
            .transform(v)
            .map(|t| if t.is_infinite() { self.cap } else { t })
    }

    fn px_of_t(&self, t: f64) -> f64 {
        self.px0 + (t - self.lo) / (self.hi - self.lo) * (self.px1 - self.px0)
    }

    fn px(&self, v: f64) -> Option<f64> {
        self.t(v).map(|t| self.px_of_t(t))
    }
}

/// A "nice" step (1, 2 or 5 × 10^k) that cuts `range` into about `target`
/// parts.
fn nice_step(range: f64, target: f64) -> f64 {
    let raw = (range / target).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    // The nearest of 1, 2, 5, 10 (cut at their geometric means).
    let nice = if f < 1.42 {
        1.0
    } else if f < 3.17 {
        2.0
    } else if f < 7.08 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// Decimals needed to tell ticks `step` apart.
fn decimals(step: f64) -> usize {
    (-(step.log10() + 1e-9).floor()).clamp(0.0, 9.0) as usize
}

/// A linear tick label: plain up to 9 999, then with k/M/G/T.
fn linear_label(v: f64, step: f64, magnitude: f64) -> String {
    if v.abs() < step * 1e-6 {
        return "0".into();
    }
    let (div, suffix) = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(d, _)| magnitude >= *d && magnitude >= 1e4)
        .unwrap_or((1.0, ""));
    format!("{:.*}{suffix}", decimals(step / div), v / div)
}

/// The label of 10^k.
fn power_label(k: i32) -> String {
    match k {
        0..=3 => format!("{}", 10u64.pow(k as u32)),
        4..=5 => format!("{}k", 10u64.pow(k as u32 - 3)),
        6..=8 => format!("{}M", 10u64.pow(k as u32 - 6)),
        9..=11 => format!("{}G", 10u64.pow(k as u32 - 9)),
        -3..=-1 => format!("{:.*}", (-k) as usize, 10f64.powi(k)),
        _ => format!("1e{k}"),
    }
}

/// A label for m × 10^k on a log axis.
fn log_label(m: f64, k: i32) -> String {
    if m == 1.0 {
        return power_label(k);
    }
    let v = m * 10f64.powi(k);
    if k >= 3 {
        linear_label(v, 10f64.powi(k), v)
    } else {
        format!("{:.*}", (-k).max(0) as usize, v)
    }
}

/// A percentile tick label: 0, 50, 90, 99, 99.9, …
fn percentile_label(nines: i32) -> String {
    match nines {
        0 => "0".into(),
        1 => "90".into(),
        n => format!("{:.*}", (n - 2) as usize, 100.0 - 10f64.powi(2 - n)),
    }
}

/// Axis range and ticks for the transformed values `ts` (finite, non-empty
/// unless `ts` was empty).
/// `nice_ends`: extend the range to whole ticks (y axes); otherwise the
/// range is the data's, padded by `pad` of its width.
fn ticks(kind: Kind, ts: &[f64], nice_ends: bool, pad: f64) -> (f64, f64, Vec<Tick>) {
    let (mut lo, mut hi) = ts
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &t| {
            (a.min(t), b.max(t))
        });
    if !lo.is_finite() {
        // No data: an empty frame with a unit range.
        (lo, hi) = match kind {
            Kind::Linear => (0.0, 1.0),
            Kind::Log | Kind::Percentile => (0.0, 2.0),
        };
    }
    if kind == Kind::Linear && nice_ends {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    if kind == Kind::Percentile {
        lo = lo.min(0.0);
    }
    if hi - lo <= (hi.abs().max(lo.abs())) * 1e-12 {
        // One value (or all equal): a range around it.
        let w = match kind {
            Kind::Linear if lo == 0.0 => 1.0,
            Kind::Linear => lo.abs() * 0.5,
            _ => 0.5,
        };
        (lo, hi) = match (kind, nice_ends) {
            // Zero stays an end of a linear y axis.
            (Kind::Linear, true) if lo >= 0.0 => (0.0, hi + w),
            (Kind::Linear, true) if hi <= 0.0 => (lo - w, 0.0),
            _ => (lo - w, hi + w),
        };
    }
    match kind {
        Kind::Linear => {
            let step = nice_step(hi - lo, 6.0);
            if nice_ends {
                lo = (lo / step + 1e-9).floor() * step;
                hi = (hi / step - 1e-9).ceil() * step;
            } else {
                let p = (hi - lo) * pad;
                lo -= p;
                hi += p;
            }
            let magnitude = lo.abs().max(hi.abs());
            let first = (lo / step - 1e-9).ceil() as i64;
            let last = (hi / step + 1e-9).floor() as i64;
            let ticks = (first..=last)
                .map(|i| {
                    let v = i as f64 * step;
                    Tick {
                        t: v,
                        label: Some(linear_label(v, step, magnitude)),
                    }
                })
                .collect();
            (lo, hi, ticks)
        }
        Kind::Log => {
            if nice_ends {
                lo = (lo + 1e-9).floor();
                hi = (hi - 1e-9).ceil();
            } else {
                let p = (hi - lo) * pad;
                lo -= p;
                hi += p;
            }
            let decades = hi - lo;
            // Label every decade, or every 2nd/3rd… over a huge range.
            let every = ((decades / 10.0).ceil() as i32).max(1);
            let mut out = Vec::new();
            for k in (lo - 1e-9).floor() as i32..=(hi + 1e-9).ceil() as i32 {
                for m in 1..10 {
                    let t = k as f64 + (m as f64).log10();
                    if t < lo - 1e-9 || t > hi + 1e-9 {
                        continue;
                    }
                    let label = if m == 1 {
                        (k.rem_euclid(every) == 0).then(|| power_label(k))
                    } else if decades < 3.0 && (m == 2 || m == 5) {
                        // Less than three decades: 2 and 5 are labelled too.
                        Some(log_label(m as f64, k))
                    } else {
                        None
                    };
                    if label.is_some() || decades <= 6.0 {
                        out.push(Tick { t, label });
                    }
                }
            }
            if out.iter().filter(|t| t.label.is_some()).count() < 2 {
                // Within one decade: round values, placed logarithmically.
                let (a, b) = (10f64.powf(lo), 10f64.powf(hi));
                let step = nice_step(b - a, 4.0);
                out.clear();
                let mut i = (a / step).ceil();
                while i * step <= b * (1.0 + 1e-9) {
                    let v = i * step;
                    if v > 0.0 {
                        out.push(Tick {
                            t: v.log10(),
                            label: Some(linear_label(v, step, b)),
                        });
                    }
                    i += 1.0;
                }
            }
            (lo, hi, out)
        }
        Kind::Percentile => {
            hi = hi.max(1.0).ceil();
            let mut out = vec![Tick {
                t: 0.0,
                label: Some("0".into()),
            }];
            if hi <= 4.0 {
                out.push(Tick {
                    t: 2f64.log10(),
                    label: Some("50".into()),
                });
            }
            for n in 1..=hi as i32 {
                out.push(Tick {
                    t: n as f64,
                    label: Some(percentile_label(n)),
                });
            }
            (lo, hi, out)
        }
    }
}

/// A marker of shape `shape` centred on (x, y), as path data.
fn marker_path(shape: usize, x: f64, y: f64) -> String {
    let r = 4.0;
    match shape % MARKERS {
        0 => format!(
            "M{:.1} {y:.1}a{r} {r} 0 1 0 {:.1} 0a{r} {r} 0 1 0 {:.1} 0z",
            x - r,
            2.0 * r,
            -2.0 * r
        ),
        1 => {
            let s = r * 0.85;
            format!(
                "M{:.1} {:.1}h{:.1}v{:.1}h{:.1}z",
                x - s,
                y - s,
                2.0 * s,
                2.0 * s,
                -2.0 * s
            )
        }
        2 => format!(
            "M{x:.1} {:.1}L{:.1} {:.1}L{:.1} {:.1}z",
            y - r * 1.15,
            x + r * 1.1,
            y + r * 0.8,
            x - r * 1.1,
            y + r * 0.8
        ),
        3 => format!(
            "M{x:.1} {:.1}L{:.1} {y:.1}L{x:.1} {:.1}L{:.1} {y:.1}z",
            y - r * 1.2,
            x + r * 1.2,
            y + r * 1.2,
            x - r * 1.2
        ),
        4 => format!(
            "M{x:.1} {:.1}L{:.1} {:.1}L{:.1} {:.1}z",
            y + r * 1.15,
            x + r * 1.1,
            y - r * 0.8,
            x - r * 1.1,
            y - r * 0.8
        ),
        _ => {
            // A plus, thick enough to read as a shape.
            let (a, b) = (r * 1.1, r * 0.4);
            format!(
                "M{:.1} {:.1}h{:.1}v{:.1}h{:.1}v{:.1}h{:.1}v{:.1}h{:.1}v{:.1}h{:.1}v{:.1}z",
                x - b,
                y - a,
                2.0 * b,
                a - b,
                a - b,
                2.0 * b,
                b - a,
                a - b,
                -2.0 * b,
                b - a,
                b - a,
                -2.0 * b
            )
        }
    }
}

/// The drawable points of a series: (index, x, y) in scale space.
fn drawable(s: &Series, xk: Kind, yk: Kind) -> Vec<(usize, f64, f64)> {
    s.points
        .iter()
        .enumerate()
        .filter_map(|(i, &(x, y))| Some((i, xk.transform(x)?, yk.transform(y)?)))
        .collect()
}

/// The spread of point `i`, in scale space, when both ends are drawable.
fn spread_at(s: &Series, i: usize, yk: Kind) -> Option<(f64, f64)> {
    let &(lo, hi) = s.spread.as_ref()?.get(i)?;
    Some((yk.transform(lo)?, yk.transform(hi)?))
}

fn style_attrs(i: usize) -> String {
    let dash = DASHES[(i / PALETTE.len()) % DASHES.len()];
    let mut s = format!("stroke=\"{}\"", colour(i));
    if !dash.is_empty() {
        let _ = write!(s, " stroke-dasharray=\"{dash}\"");
    }
    s
}

fn text_width(s: &str, font: f64) -> f64 {
    s.chars().count() as f64 * CHAR_W * font / TICK_FONT
}

/// The chart as a standalone SVG document (no XML declaration, so it can
/// also be inlined into HTML).
pub fn svg(chart: &Chart) -> String {
    let xk = Kind::of(&chart.x);
    let yk = Kind::of(&chart.y);
    let pts: Vec<Vec<(usize, f64, f64)>> =
        chart.series.iter().map(|s| drawable(s, xk, yk)).collect();

    // Percentile 100 sits one "nine" beyond the highest percentile below it.
    let cap_of = |vals: &mut dyn Iterator<Item = f64>| {
        let finite_max = vals.filter(|t| t.is_finite()).fold(0.0f64, f64::max);
        (finite_max + 1e-6).floor() + 1.0
    };
    let xcap = cap_of(&mut pts.iter().flatten().map(|p| p.1));
    let ycap = cap_of(&mut pts.iter().flatten().map(|p| p.2));
    let fix = |t: f64, cap: f64| if t.is_infinite() { cap } else { t };

    let xs: Vec<f64> = pts.iter().flatten().map(|p| fix(p.1, xcap)).collect();
    let mut ys: Vec<f64> = pts.iter().flatten().map(|p| fix(p.2, ycap)).collect();
    for (s, p) in chart.series.iter().zip(&pts) {
        for &(i, _, _) in p {
            if let Some((lo, hi)) = spread_at(s, i, yk) {
                ys.push(fix(lo, ycap));
                ys.push(fix(hi, ycap));
            }
        }
    }
    let x_pad = if chart.kind == ChartKind::Line && xk != Kind::Percentile {
        0.03
    } else {
        0.0
    };
    let (xlo, xhi, xticks) = ticks(xk, &xs, false, x_pad);
    let (ylo, yhi, yticks) = ticks(yk, &ys, true, 0.0);

    // Layout, from the widest y tick label and the legend's rows.
    let ylabel_w = yticks
        .iter()
        .filter_map(|t| t.label.as_deref())
        .map(|l| text_width(l, TICK_FONT))
        .fold(0.0, f64::max);
    let left = 30.0 + ylabel_w + 8.0;
    let right = WIDTH - 22.0;
    let top = if chart.title.is_empty() { 14.0 } else { 42.0 };
    let bottom = top + PLOT_HEIGHT;
    let show_legend = chart.series.len() > 1 || chart.series.iter().any(|s| !s.name.is_empty());
    let mut legend = Vec::new(); // (x, row, index, text)
    if show_legend {
        let (mut x, mut row) = (left, 0usize);
        for (i, s) in chart.series.iter().enumerate() {
            let text = if pts[i].is_empty() {
                format!("{} (no data)", s.name)
            } else {
                s.name.clone()
            };
            let w = 34.0 + text_width(&text, 12.0) + 18.0;
            if x + w > right && x > left {
                x = left;
                row += 1;
            }
            legend.push((x, row, i, text));
            x += w;
        }
    }
    let legend_rows = legend.last().map_or(0, |l| l.1 + 1);
    let legend_top = bottom + 54.0;
    let height = legend_top + legend_rows as f64 * 20.0 + 6.0;

    let xs_scale = Scale {
        kind: xk,
        lo: xlo,
        hi: xhi,
        cap: xcap,
        px0: left,
        px1: right,
    };
    let ys_scale = Scale {
        kind: yk,
        lo: ylo,
        hi: yhi,
        cap: ycap,
        px0: bottom,
        px1: top,
    };

    let mut o = String::new();
    let _ = write!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{WIDTH}\" height=\"{height}\" \
         viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" aria-label=\"{}\" font-family=\"{FONT_STACK}\" font-size=\"{TICK_FONT}\">",
        escape(&chart.title)
    );
    let _ = write!(o, "<title>{}</title>", escape(&chart.title));
    let _ = write!(
        o,
        "<rect class=\"background\" x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{height}\" fill=\"#ffffff\"/>"
    );
    if !chart.title.is_empty() {
        let _ = write!(
            o,
            "<text class=\"title\" x=\"{left}\" y=\"24\" font-size=\"15\" font-weight=\"600\" fill=\"#222\">{}</text>",
            escape(&chart.title)
        );
    }

    // Grid and ticks.
    o.push_str("<g class=\"grid\" stroke-width=\"1\">");
    for t in &yticks {
        let y = ys_scale.px_of_t(t.t);
        let colour = t.grid_colour();
        let _ = write!(
            o,
            "<line x1=\"{left:.1}\" x2=\"{right:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"{colour}\"/>"
        );
    }
    for t in &xticks {
        let x = xs_scale.px_of_t(t.t);
        let colour = t.grid_colour();
        let _ = write!(
            o,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{top:.1}\" y2=\"{bottom:.1}\" stroke=\"{colour}\"/>"
        );
    }
    o.push_str("</g>");
    let _ = write!(
        o,
        "<rect class=\"frame\" x=\"{left:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{PLOT_HEIGHT}\" fill=\"none\" stroke=\"#888888\"/>",
        right - left
    );
    o.push_str("<g class=\"ticks\" fill=\"#444\">");
    for t in yticks.iter().filter(|t| t.label.is_some()) {
        let y = ys_scale.px_of_t(t.t);
        let _ = write!(
            o,
            "<text class=\"tick y\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 6.0,
            y + 4.0,
            escape(t.label.as_deref().unwrap_or(""))
        );
    }
    for t in xticks.iter().filter(|t| t.label.is_some()) {
        let x = xs_scale.px_of_t(t.t);
        let _ = write!(
            o,
            "<text class=\"tick x\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            bottom + 16.0,
            escape(t.label.as_deref().unwrap_or(""))
        );
    }
    o.push_str("</g>");
    let _ = write!(
        o,
        "<text class=\"axis-label x\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"12\" fill=\"#222\">{}</text>",
        (left + right) / 2.0,
        bottom + 36.0,
        escape(&chart.x.label)
    );
    let ymid = (top + bottom) / 2.0;
    let _ = write!(
        o,
        "<text class=\"axis-label y\" x=\"14\" y=\"{ymid:.1}\" transform=\"rotate(-90 14 {ymid:.1})\" text-anchor=\"middle\" font-size=\"12\" fill=\"#222\">{}</text>",
        escape(&chart.y.label)
    );

    if pts.iter().all(|p| p.is_empty()) {
        let _ = write!(
            o,
            "<text class=\"no-data\" x=\"{:.1}\" y=\"{ymid:.1}\" text-anchor=\"middle\" font-size=\"13\" fill=\"#777\">no data</text>",
            (left + right) / 2.0
        );
    }

    // Series: spread first (under every line), then lines, then markers.
    for (i, (s, p)) in chart.series.iter().zip(&pts).enumerate() {
        if s.spread.is_none() || p.is_empty() {
            continue;
        }
        let c = colour(i);
        let spreads: Vec<(f64, f64, f64)> = p
            .iter()
            .filter_map(|&(j, _, _)| {
                let (lo, hi) = spread_at(s, j, yk)?;
                let x = xs_scale.px(s.points[j].0)?;
                Some((
                    x,
                    ys_scale.px_of_t(fix(lo, ycap)),
                    ys_scale.px_of_t(fix(hi, ycap)),
                ))
            })
            .collect();
        if spreads.is_empty() {
            continue;
        }
        if p.len() <= MAX_MARKED_POINTS && chart.kind == ChartKind::Line {
            let _ = write!(
                o,
                "<g class=\"errorbars\" stroke=\"{c}\" stroke-width=\"1.2\">"
            );
            for (x, lo, hi) in spreads {
                let _ = write!(
                    o,
                    "<path class=\"errorbar\" d=\"M{x:.1} {lo:.1}V{hi:.1}M{:.1} {lo:.1}h8M{:.1} {hi:.1}h8\"/>",
                    x - 4.0,
                    x - 4.0
                );
            }
            o.push_str("</g>");
        } else {
            let mut d = String::new();
            for (k, (x, _, hi)) in spreads.iter().enumerate() {
                let _ = write!(d, "{}{x:.1} {hi:.1}", if k == 0 { "M" } else { "L" });
            }
            for (x, lo, _) in spreads.iter().rev() {
                let _ = write!(d, "L{x:.1} {lo:.1}");
            }
            let _ = write!(
                o,
                "<path class=\"band\" d=\"{d}z\" fill=\"{c}\" fill-opacity=\"0.15\" stroke=\"none\"/>"
            );
        }
    }
    for (i, (s, p)) in chart.series.iter().zip(&pts).enumerate() {
        if p.is_empty() {
            continue;
        }
        let pos = |&(_, x, y): &(usize, f64, f64)| {
            (
                xs_scale.px_of_t(fix(x, xcap)),
                ys_scale.px_of_t(fix(y, ycap)),
            )
        };
        let mut d = String::new();
        match chart.kind {
            ChartKind::Line => {
                // A dropped point breaks the line: no invented segment.
                let mut prev: Option<usize> = None;
                for pt in p {
                    let (x, y) = pos(pt);
                    let cmd = if prev.is_some_and(|j| j + 1 == pt.0) {
                        "L"
                    } else {
                        "M"
                    };
                    let _ = write!(d, "{cmd}{x:.1} {y:.1}");
                    prev = Some(pt.0);
                }
            }
            ChartKind::Step => {
                let mut sorted = p.clone();
                sorted.sort_by(|a, b| {
                    fix(a.1, xcap)
                        .total_cmp(&fix(b.1, xcap))
                        .then(a.0.cmp(&b.0))
                });
                for (k, pt) in sorted.iter().enumerate() {
                    let (x, y) = pos(pt);
                    if k == 0 {
                        let _ = write!(d, "M{x:.1} {y:.1}");
                    } else {
                        let _ = write!(d, "H{x:.1}V{y:.1}");
                    }
                }
            }
        }
        if p.len() == 1 && chart.kind == ChartKind::Step {
            // A lone step is a short tick, so it is seen.
            let (x, y) = pos(&p[0]);
            d = format!("M{:.1} {y:.1}H{:.1}", x - 6.0, x + 6.0);
        }
        let _ = write!(
            o,
            "<path class=\"series\" data-series=\"{}\" d=\"{d}\" fill=\"none\" {} stroke-width=\"2\" stroke-linejoin=\"round\"/>",
            escape(&s.name),
            style_attrs(i)
        );
        let marked = chart.kind == ChartKind::Line && p.len() <= MAX_MARKED_POINTS;
        if marked {
            let _ = write!(
                o,
                "<g class=\"markers\" fill=\"{}\" stroke=\"#ffffff\" stroke-width=\"1\">",
                colour(i)
            );
            for pt in p {
                let (x, y) = pos(pt);
                let _ = write!(o, "<path class=\"marker\" d=\"{}\"/>", marker_path(i, x, y));
            }
            o.push_str("</g>");
        }
    }

    if !legend.is_empty() {
        o.push_str("<g class=\"legend\" font-size=\"12\" fill=\"#222\">");
        for (x, row, i, text) in &legend {
            let y = legend_top + *row as f64 * 20.0;
            let _ = write!(o, "<g class=\"legend-item\">");
            let _ = write!(
                o,
                "<path d=\"M{x:.1} {y:.1}h26\" fill=\"none\" {} stroke-width=\"2\"/>",
                style_attrs(*i)
            );
            // The legend shows a marker where the chart does.
            if chart.kind == ChartKind::Line && pts[*i].len() <= MAX_MARKED_POINTS {
                let _ = write!(
                    o,
                    "<path d=\"{}\" fill=\"{}\" stroke=\"#ffffff\" stroke-width=\"1\"/>",
                    marker_path(*i, x + 13.0, y),
                    colour(*i)
                );
            }
            let _ = write!(
                o,
                "<text x=\"{:.1}\" y=\"{:.1}\">{}</text></g>",
                x + 32.0,
                y + 4.0,
                escape(text)
            );
        }
        o.push_str("</g>");
    }
    o.push_str("</svg>");
    o
}

/// The chart as a PNG, rasterised at twice the SVG's size. Text is drawn
/// with the system's fonts (DejaVu Sans on Debian).
pub fn png(chart: &Chart) -> anyhow::Result<Vec<u8>> {
    use resvg::{tiny_skia, usvg};
    use std::sync::{Arc, OnceLock};
    // Scanning the system's fonts takes a while; once per process.
    static FONTS: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    let fonts = FONTS.get_or_init(|| {
        let mut db = usvg::fontdb::Database::new();
        db.load_system_fonts();
        db.set_sans_serif_family("DejaVu Sans");
        Arc::new(db)
    });
    if fonts.is_empty() {
        anyhow::bail!(
            "cannot draw '{}' as PNG: no fonts found on this system for its text \
             (install one, e.g. `apt-get install fonts-dejavu-core`), or use the SVG",
            chart.title
        );
    }
    let opt = usvg::Options {
        fontdb: fonts.clone(),
        ..Default::default()
    };
    let tree = usvg::Tree::from_str(&svg(chart), &opt)?;
    let scale = 2.0;
    let size =
        tree.size().to_int_size().scale_by(scale).ok_or_else(|| {
            anyhow::anyhow!("cannot draw '{}' as PNG: size overflow", chart.title)
        })?;
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| anyhow::anyhow!("cannot allocate a {size:?} image"))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    Ok(pixmap.encode_png()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(kind: ChartKind, x: Axis, y: Axis, series: Vec<Series>) -> Chart {
        Chart {
            id: "c".into(),
            title: "Throughput by clients".into(),
            x,
            y,
            kind,
            series,
        }
    }

    fn series(name: &str, points: &[(f64, f64)]) -> Series {
        Series {
            name: name.into(),
            points: points.to_vec(),
            spread: None,
        }
    }

    fn count(s: &str, needle: &str) -> usize {
        s.matches(needle).count()
    }

    /// The labels of the ticks of one axis ("x" or "y"), in order.
    fn tick_labels(svg: &str, axis: &str) -> Vec<String> {
        let open = format!("<text class=\"tick {axis}\"");
        svg.split(&open)
            .skip(1)
            .map(|rest| {
                let start = rest.find('>').unwrap() + 1;
                let end = rest.find("</text>").unwrap();
                rest[start..end].to_string()
            })
            .collect()
    }

    fn path_data<'a>(svg: &'a str, class: &str) -> Vec<&'a str> {
        let open = format!("<path class=\"{class}\"");
        svg.split(&open)
            .skip(1)
            .map(|rest| {
                let start = rest.find(" d=\"").unwrap() + 4;
                let end = start + rest[start..].find('"').unwrap();
                &rest[start..end]
            })
            .collect()
    }

    fn clients() -> Vec<f64> {
        (0..=10).map(|k| 2f64.powi(k)).collect()
    }

    #[test]
    fn nice_steps_are_1_2_5() {
        assert_eq!(nice_step(10.0, 5.0), 2.0);
        assert_eq!(nice_step(1000.0, 6.0), 200.0);
        assert_eq!(nice_step(0.07, 6.0), 0.01);
        assert_eq!(nice_step(37.0, 6.0), 5.0);
        assert_eq!(nice_step(61.0, 6.0), 10.0);
    }

    #[test]
    fn line_chart_has_one_path_and_marker_per_point_per_series() {
        let xs = clients();
        let a: Vec<_> = xs.iter().map(|&c| (c, 100.0 * c.sqrt())).collect();
        let b: Vec<_> = xs.iter().map(|&c| (c, 80.0 * c.sqrt())).collect();
        let c = chart(
            ChartKind::Line,
            Axis::log("clients"),
            Axis::linear("transactions/s"),
            vec![series("MariaDB 11", &a), series("PostgreSQL 16", &b)],
        );
        let s = svg(&c);
        assert!(s.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(s.ends_with("</svg>"));
        assert_eq!(path_data(&s, "series").len(), 2);
        assert_eq!(count(&s, "class=\"marker\""), 22);
        assert_eq!(count(&s, "class=\"legend-item\""), 2);
        assert!(s.contains(">MariaDB 11</text>") && s.contains(">PostgreSQL 16</text>"));
        assert!(s.contains(">clients</text>") && s.contains(">transactions/s</text>"));
        // Different colours for the two series.
        assert!(s.contains(&format!("stroke=\"{}\"", PALETTE[0])));
        assert!(s.contains(&format!("stroke=\"{}\"", PALETTE[1])));
        // Each line has 11 vertices: one move, ten line-tos.
        for d in path_data(&s, "series") {
            assert_eq!(d.matches('M').count(), 1);
            assert_eq!(d.matches('L').count(), 10);
        }
    }

    #[test]
    fn log_x_ticks_are_powers_of_ten() {
        let pts: Vec<_> = clients().iter().map(|&c| (c, c)).collect();
        let c = chart(
            ChartKind::Line,
            Axis::log("clients"),
            Axis::linear("tps"),
            vec![series("a", &pts)],
        );
        let s = svg(&c);
        assert_eq!(tick_labels(&s, "x"), ["1", "10", "100", "1000"]);
        // Linear y from zero, in round steps.
        let y = tick_labels(&s, "y");
        assert_eq!(y.first().unwrap(), "0");
        assert_eq!(y, ["0", "200", "400", "600", "800", "1000", "1200"]);
    }

    #[test]
    fn log_y_spans_whole_decades_and_huge_ranges_thin_their_labels() {
        let c = chart(
            ChartKind::Line,
            Axis::linear("clients"),
            Axis::log("latency (ms)"),
            vec![series("p99", &[(1.0, 0.02), (2.0, 3.0), (3.0, 450.0)])],
        );
        assert_eq!(
            tick_labels(&svg(&c), "y"),
            ["0.01", "0.1", "1", "10", "100", "1000"]
        );
        let c = chart(
            ChartKind::Line,
            Axis::linear("clients"),
            Axis::log("rows"),
            vec![series("a", &[(1.0, 1e-6), (2.0, 1e15)])],
        );
        let y = tick_labels(&svg(&c), "y");
        assert!(y.len() <= 11, "{y:?}");
        assert_eq!(y.first().unwrap(), "1e-6");
    }

    #[test]
    fn large_linear_values_get_suffixes() {
        let c = chart(
            ChartKind::Line,
            Axis::linear("clients"),
            Axis::linear("queries/s"),
            vec![series("a", &[(1.0, 20_000.0), (2.0, 1_250_000.0)])],
        );
        let y = tick_labels(&svg(&c), "y");
        assert_eq!(
            y,
            ["0", "0.2M", "0.4M", "0.6M", "0.8M", "1.0M", "1.2M", "1.4M"]
        );
    }

    #[test]
    fn step_chart_on_a_percentile_scale() {
        // Latency by percentile: 90 % under 1 ms, 99 % under 4 ms, max 20 ms.
        let pts = [
            (0.0, 0.5),
            (50.0, 0.8),
            (90.0, 4.0),
            (99.0, 20.0),
            (100.0, 20.0),
        ];
        let c = chart(
            ChartKind::Step,
            Axis::percentile("percentile"),
            Axis::log("latency (ms)"),
            vec![series("transaction", &pts)],
        );
        let s = svg(&c);
        assert_eq!(tick_labels(&s, "x"), ["0", "50", "90", "99", "99.9"]);
        let d = path_data(&s, "series");
        assert_eq!(d.len(), 1);
        // Four steps after the start: horizontal then vertical each.
        assert_eq!(d[0].matches('H').count(), 4);
        assert_eq!(d[0].matches('V').count(), 4);
        assert_eq!(count(&s, "class=\"marker\""), 0);
    }

    #[test]
    fn step_chart_sorts_by_x() {
        let c = chart(
            ChartKind::Step,
            Axis::linear("latency (ms)"),
            Axis::linear("share of transactions (%)"),
            vec![series("cdf", &[(3.0, 100.0), (1.0, 10.0), (2.0, 60.0)])],
        );
        let s = svg(&c);
        let d = path_data(&s, "series")[0];
        let xs: Vec<f64> = d
            .split('H')
            .skip(1)
            .map(|p| p.split('V').next().unwrap().parse().unwrap())
            .collect();
        assert!(xs.windows(2).all(|w| w[0] < w[1]), "{d}");
    }

    #[test]
    fn non_finite_points_are_dropped_and_break_the_line() {
        let pts = [
            (1.0, 10.0),
            (2.0, f64::NAN),
            (4.0, 30.0),
            (8.0, f64::INFINITY),
            (16.0, 40.0),
            (32.0, 45.0),
        ];
        let c = chart(
            ChartKind::Line,
            Axis::log("clients"),
            Axis::linear("tps"),
            vec![series("a", &pts)],
        );
        let s = svg(&c);
        assert_eq!(count(&s, "class=\"marker\""), 4);
        let d = path_data(&s, "series")[0];
        assert_eq!(d.matches('M').count(), 3, "{d}");
        assert!(!s.contains("NaN") && !s.contains("inf"));
    }

    #[test]
    fn edge_cases_draw_a_valid_frame() {
        let cases = vec![
            vec![series("one point", &[(4.0, 123.0)])],
            vec![series("zeros", &[(1.0, 0.0), (2.0, 0.0), (4.0, 0.0)])],
            vec![
                series("empty", &[]),
                series("full", &[(1.0, 1.0), (2.0, 2.0)]),
            ],
            vec![],
            vec![series(
                "all bad",
                &[(f64::NAN, 1.0), (1.0, f64::NEG_INFINITY)],
            )],
        ];
        for (i, ss) in cases.into_iter().enumerate() {
            for log in [false, true] {
                let c = chart(
                    ChartKind::Line,
                    Axis::new("clients", doc::Scale::log_if(log)),
                    Axis::new("tps", doc::Scale::log_if(log)),
                    ss.clone(),
                );
                let s = svg(&c);
                assert!(!s.contains("NaN") && !s.contains("inf"), "case {i}: {s}");
                assert!(tick_labels(&s, "y").len() >= 2, "case {i} log {log}: {s}");
                assert!(!tick_labels(&s, "x").is_empty(), "case {i} log {log}");
            }
        }
        let one = svg(&chart(
            ChartKind::Line,
            Axis::linear("clients"),
            Axis::linear("tps"),
            vec![series("one point", &[(4.0, 123.0)])],
        ));
        assert_eq!(count(&one, "class=\"marker\""), 1);
        let zeros = svg(&chart(
            ChartKind::Line,
            Axis::linear("clients"),
            Axis::linear("tps"),
            vec![series("zeros", &[(1.0, 0.0), (2.0, 0.0)])],
        ));
        assert_eq!(tick_labels(&zeros, "y").first().unwrap(), "0");
        let empty = svg(&chart(
            ChartKind::Line,
            Axis::linear("clients"),
            Axis::linear("tps"),
            vec![series("empty", &[]), series("full", &[(1.0, 1.0)])],
        ));
        assert!(empty.contains(">empty (no data)</text>"));
        assert_eq!(path_data(&empty, "series").len(), 1);
        let nothing = svg(&chart(
            ChartKind::Line,
            Axis::linear("clients"),
            Axis::linear("tps"),
            vec![],
        ));
        assert!(nothing.contains(">no data</text>"));
        assert_eq!(count(&nothing, "legend-item"), 0);
    }

    #[test]
    fn spread_is_error_bars_for_few_points_and_a_band_for_many() {
        let mut few = series("a", &[(1.0, 10.0), (2.0, 20.0), (4.0, 25.0)]);
        few.spread = Some(vec![(9.0, 11.0), (18.0, 22.0), (f64::NAN, 26.0)]);
        let s = svg(&chart(
            ChartKind::Line,
            Axis::linear("clients"),
            Axis::linear("tps"),
            vec![few],
        ));
        assert_eq!(count(&s, "class=\"errorbar\""), 2);
        assert_eq!(count(&s, "class=\"band\""), 0);
        let pts: Vec<_> = (0..100)
            .map(|i| (i as f64, 50.0 + (i % 7) as f64))
            .collect();
        let mut many = series("tps", &pts);
        many.spread = Some(pts.iter().map(|p| (p.1 - 5.0, p.1 + 5.0)).collect());
        let s = svg(&chart(
            ChartKind::Line,
            Axis::linear("time (s)"),
            Axis::linear("tps"),
            vec![many],
        ));
        assert_eq!(count(&s, "class=\"band\""), 1);
        assert_eq!(count(&s, "class=\"marker\""), 0);
        // The band widens the y range: 56 + 5 fits.
        assert_eq!(tick_labels(&s, "y").last().unwrap(), "70");
    }

    #[test]
    fn many_series_differ_in_colour_marker_or_dash() {
        let ss: Vec<Series> = (0..10)
            .map(|i| {
                series(
                    &format!("variant {i}"),
                    &[(1.0, i as f64), (2.0, i as f64 + 1.0)],
                )
            })
            .collect();
        let s = svg(&chart(
            ChartKind::Line,
            Axis::linear("clients"),
            Axis::linear("tps"),
            ss,
        ));
        assert_eq!(count(&s, "class=\"legend-item\""), 10);
        let styles: std::collections::HashSet<String> = (0..10)
            .map(|i| format!("{}{}", style_attrs(i), i % MARKERS))
            .collect();
        assert_eq!(styles.len(), 10);
        // The 8th series reuses the first colour, dashed.
        assert!(s.contains(&format!(
            "stroke=\"{}\" stroke-dasharray=\"7 4\"",
            PALETTE[0]
        )));
    }

    #[test]
    fn text_is_escaped() {
        let c = Chart {
            title: "a < b & \"c\"".into(),
            ..chart(
                ChartKind::Line,
                Axis::linear("x <1>"),
                Axis::linear("y"),
                vec![series("<script>", &[(1.0, 1.0)])],
            )
        };
        let s = svg(&c);
        assert!(!s.contains("<script>") && !s.contains("a < b"));
        assert!(s.contains("a &lt; b &amp; &quot;c&quot;"));
        assert!(s.contains("&lt;script&gt;"));
    }

    #[test]
    fn log_x_over_less_than_three_decades_labels_2_and_5() {
        let pts: Vec<_> = clients()[..10].iter().map(|&c| (c, c)).collect();
        let s = svg(&chart(
            ChartKind::Line,
            Axis::log("clients"),
            Axis::linear("tps"),
            vec![series("a", &pts)],
        ));
        assert_eq!(
            tick_labels(&s, "x"),
            ["1", "2", "5", "10", "20", "50", "100", "200", "500"]
        );
    }

    #[test]
    fn png_draws_the_series_and_the_text() {
        let pts: Vec<_> = clients().iter().map(|&c| (c, c)).collect();
        let c = chart(
            ChartKind::Line,
            Axis::log("clients"),
            Axis::linear("tps"),
            vec![series("a", &pts)],
        );
        let bytes = png(&c).unwrap();
        let mut reader = ::png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!(info.width as f64, 2.0 * WIDTH);
        let px: Vec<&[u8]> = buf.chunks(info.color_type.samples()).collect();
        // The series in its colour (#0072B2).
        let blue = px
            .iter()
            .filter(|p| p[0] < 10 && (0x6a..0x7a).contains(&p[1]) && p[2] > 0xa8)
            .count();
        assert!(blue > 2000, "{blue} series pixels");
        // Text: dark grey glyphs in the title band (y < 30 px, doubled),
        // which holds nothing else.
        let w = info.width as usize;
        let title_dark = px[..60 * w]
            .iter()
            .filter(|p| p[0] < 100 && p[1] < 100 && p[2] < 100)
            .count();
        assert!(title_dark > 500, "{title_dark} title pixels: no font?");
    }
}
