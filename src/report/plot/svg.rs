//! The chart as SVG: axes, gridlines, ticks, lines or steps with markers
//! and spread, legend and title.

use std::fmt::Write;

use super::chart::{Chart, ChartKind};
use super::marks::*;
use super::scale::*;
use super::*;

/// The chart as a standalone SVG document (no XML declaration, so it can
/// also be inlined into HTML).
pub fn svg(chart: &Chart) -> String {
    let thinned = super::thin::thin(chart);
    let chart = thinned.as_ref().unwrap_or(chart);
    let cumulated = (chart.kind == ChartKind::Stacked).then(|| cumulate(chart));
    let chart = cumulated.as_ref().unwrap_or(chart);
    let plot = Plot::lay_out(chart);
    let mut o = String::new();
    plot.head(&mut o);
    plot.grid(&mut o);
    plot.axes(&mut o);
    // Series: spread first (under every line), then lines, then markers.
    plot.spreads(&mut o);
    if chart.kind == ChartKind::Stacked {
        plot.areas(&mut o);
    }
    plot.lines(&mut o);
    plot.legend(&mut o);
    o.push_str("</svg>");
    o
}

/// A chart laid out: its points in scale space, its scales and ticks, and
/// where the title, the plot and the legend go.
struct Plot<'a> {
    chart: &'a Chart,
    /// Each series' drawable points: (index, x, y) in scale space.
    pts: Vec<Vec<(usize, f64, f64)>>,
    yk: Kind,
    /// The axes; each one's `cap` is where percentile 100 is drawn.
    xs: Scale,
    ys: Scale,
    xticks: Vec<Tick>,
    yticks: Vec<Tick>,
    /// The plot's edges, in pixels.
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    /// The title's lines, wrapped to the width.
    title: Vec<String>,
    legend: Vec<LegendItem>,
    legend_top: f64,
    /// The document's height.
    height: f64,
}

/// One series' entry in the legend.
struct LegendItem {
    x: f64,
    row: usize,
    /// The series' index.
    series: usize,
    text: String,
}

/// Percentile 100 sits one "nine" beyond the highest percentile below it.
fn cap_of(vals: impl Iterator<Item = f64>) -> f64 {
    let finite_max = vals.filter(|t| t.is_finite()).fold(0.0f64, f64::max);
    (finite_max + 1e-6).floor() + 1.0
}

/// `t` in scale space, with percentile 100 (infinite) at `cap`.
fn fix(t: f64, cap: f64) -> f64 {
    if t.is_infinite() {
        cap
    } else {
        t
    }
}

impl<'a> Plot<'a> {
    /// The scales from the points and spreads, then the layout from the
    /// widest y tick label, the title and the legend's rows.
    fn lay_out(chart: &'a Chart) -> Plot<'a> {
        let xk = Kind::of(&chart.x);
        let yk = Kind::of(&chart.y);
        let pts: Vec<Vec<(usize, f64, f64)>> =
            chart.series.iter().map(|s| drawable(s, xk, yk)).collect();
        let xcap = cap_of(pts.iter().flatten().map(|p| p.1));
        let ycap = cap_of(pts.iter().flatten().map(|p| p.2));
        let mut xs: Vec<f64> = pts.iter().flatten().map(|p| fix(p.1, xcap)).collect();
        if chart.kind == ChartKind::Bars {
            // Room for the outer bars: half a step beyond the first and last x.
            let (lo, hi) = xs
                .iter()
                .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
            if lo <= hi {
                xs.extend([lo - 0.5, hi + 0.5]);
            }
        }
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

        let ylabel_w = yticks
            .iter()
            .filter_map(|t| t.label.as_deref())
            .map(|l| text_width(l, TICK_FONT))
            .fold(0.0, f64::max);
        let left = 30.0 + ylabel_w + 8.0;
        let right = WIDTH - 22.0;
        // A title that would reach the chart's right edge is wrapped and the
        // plot moves down: an SVG cuts text at its edge.
        let title = if chart.title.is_empty() {
            Vec::new()
        } else {
            wrap(&chart.title, TITLE_FONT, WIDTH - 8.0 - left)
        };
        let top = match title.len() {
            0 => 14.0,
            n => 42.0 + (n - 1) as f64 * TITLE_LINE,
        };
        let bottom = top + PLOT_HEIGHT;
        let legend = legend_items(chart, &pts, left, right);
        let legend_rows = legend.last().map_or(0, |l| l.row + 1);
        let legend_top = bottom + 54.0;
        Plot {
            chart,
            pts,
            yk,
            xs: Scale {
                kind: xk,
                lo: xlo,
                hi: xhi,
                cap: xcap,
                px0: left,
                px1: right,
            },
            ys: Scale {
                kind: yk,
                lo: ylo,
                hi: yhi,
                cap: ycap,
                px0: bottom,
                px1: top,
            },
            xticks,
            yticks,
            left,
            right,
            top,
            bottom,
            title,
            legend,
            legend_top,
            height: legend_top + legend_rows as f64 * 20.0 + 6.0,
        }
    }

    /// A point's position in pixels.
    fn pos(&self, &(_, x, y): &(usize, f64, f64)) -> (f64, f64) {
        (
            self.xs.px_of_t(fix(x, self.xs.cap)),
            self.ys.px_of_t(fix(y, self.ys.cap)),
        )
    }

    /// The document's element, its background and the chart's title.
    fn head(&self, o: &mut String) {
        let (chart, title, left, height) = (self.chart, &self.title, self.left, self.height);
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
        if !title.is_empty() {
            let _ = write!(
                o,
                "<text class=\"title\" x=\"{left}\" y=\"24\" font-size=\"{TITLE_FONT}\" font-weight=\"600\" fill=\"#222\">"
            );
            if title.len() == 1 {
                // As written (wrapping rejoins words with single spaces).
                o.push_str(&escape(&chart.title));
            }
            for (i, line) in title.iter().enumerate().filter(|_| title.len() > 1) {
                let dy = if i == 0 { 0.0 } else { TITLE_LINE };
                let _ = write!(
                    o,
                    "<tspan x=\"{left}\" dy=\"{dy}\">{}</tspan>",
                    escape(line)
                );
            }
            o.push_str("</text>");
        }
    }

    /// The gridlines at the ticks, and the plot's frame.
    fn grid(&self, o: &mut String) {
        let (left, right, top, bottom) = (self.left, self.right, self.top, self.bottom);
        o.push_str("<g class=\"grid\" stroke-width=\"1\">");
        for t in &self.yticks {
            let y = self.ys.px_of_t(t.t);
            let colour = t.grid_colour();
            let _ = write!(
                o,
                "<line x1=\"{left:.1}\" x2=\"{right:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"{colour}\"/>"
            );
        }
        for t in &self.xticks {
            let x = self.xs.px_of_t(t.t);
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
    }

    /// The ticks' labels, the axes' labels, and "no data" in an empty plot.
    fn axes(&self, o: &mut String) {
        let (left, right, top, bottom) = (self.left, self.right, self.top, self.bottom);
        o.push_str("<g class=\"ticks\" fill=\"#444\">");
        for t in self.yticks.iter().filter(|t| t.label.is_some()) {
            let y = self.ys.px_of_t(t.t);
            let _ = write!(
                o,
                "<text class=\"tick y\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                left - 6.0,
                y + 4.0,
                escape(t.label.as_deref().unwrap_or(""))
            );
        }
        for t in self.xticks.iter().filter(|t| t.label.is_some()) {
            let x = self.xs.px_of_t(t.t);
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
            escape(&self.chart.x.label)
        );
        let ymid = (top + bottom) / 2.0;
        let _ = write!(
            o,
            "<text class=\"axis-label y\" x=\"14\" y=\"{ymid:.1}\" transform=\"rotate(-90 14 {ymid:.1})\" text-anchor=\"middle\" font-size=\"12\" fill=\"#222\">{}</text>",
            escape(&self.chart.y.label)
        );
        if self.pts.iter().all(|p| p.is_empty()) {
            let _ = write!(
                o,
                "<text class=\"no-data\" x=\"{:.1}\" y=\"{ymid:.1}\" text-anchor=\"middle\" font-size=\"13\" fill=\"#777\">no data</text>",
                (left + right) / 2.0
            );
        }
    }

    /// Each series' spread: error bars where a line has markers, else a
    /// band.
    fn spreads(&self, o: &mut String) {
        let (xs, ys) = (&self.xs, &self.ys);
        for (i, (s, p)) in self.chart.series.iter().zip(&self.pts).enumerate() {
            if s.spread.is_none() || p.is_empty() {
                continue;
            }
            let c = colour(i);
            let spreads: Vec<(f64, f64, f64)> = p
                .iter()
                .filter_map(|&(j, _, _)| {
                    let (lo, hi) = spread_at(s, j, self.yk)?;
                    let x = xs.px(s.points[j].0)?;
                    Some((x, ys.px_of_t(fix(lo, ys.cap)), ys.px_of_t(fix(hi, ys.cap))))
                })
                .collect();
            if spreads.is_empty() {
                continue;
            }
            if p.len() <= MAX_MARKED_POINTS && self.chart.kind == ChartKind::Line {
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
    }

    /// A stacked chart's layers, each filled down to the one below it (or
    /// the axis).
    fn areas(&self, o: &mut String) {
        let (chart, xs, ys) = (self.chart, &self.xs, &self.ys);
        for (i, s) in chart.series.iter().enumerate() {
            let top: Vec<(f64, f64)> = s
                .points
                .iter()
                .filter_map(|&(x, y)| Some((xs.px(x)?, ys.px(y)?)))
                .collect();
            if top.is_empty() {
                continue;
            }
            let below = |x: f64| -> f64 {
                i.checked_sub(1)
                    .and_then(|j| chart.series[j].points.iter().find(|p| p.0 == x))
                    .map_or(0.0, |p| p.1)
            };
            let mut d = String::new();
            for (k, (x, y)) in top.iter().enumerate() {
                let _ = write!(d, "{}{x:.1} {y:.1}", if k == 0 { "M" } else { "L" });
            }
            for &(x, _) in s.points.iter().rev() {
                if let (Some(px), Some(py)) = (xs.px(x), ys.px(below(x))) {
                    let _ = write!(d, "L{px:.1} {py:.1}");
                }
            }
            let _ = write!(
                o,
                "<path class=\"area\" data-series=\"{}\" d=\"{d}z\" fill=\"{}\" fill-opacity=\"0.55\" stroke=\"none\"/>",
                escape(&s.name),
                colour(i)
            );
        }
    }

    /// Each series' line (or steps), with markers on a line of few points.
    fn lines(&self, o: &mut String) {
        let chart = self.chart;
        if chart.kind == ChartKind::Bars {
            return self.bars(o);
        }
        for (i, (s, p)) in chart.series.iter().zip(&self.pts).enumerate() {
            if p.is_empty() {
                continue;
            }
            let _ = write!(
                o,
                "<path class=\"series{}\" data-series=\"{}\" d=\"{}\" fill=\"none\" {} stroke-width=\"2\" stroke-linejoin=\"round\"/>",
                if s.reference { " reference" } else { "" },
                escape(&s.name),
                self.line_path(p),
                style_attrs_of(i, s.reference)
            );
            let marked = chart.kind == ChartKind::Line && p.len() <= MAX_MARKED_POINTS;
            if marked {
                let _ = write!(
                    o,
                    "<g class=\"markers\" fill=\"{}\" stroke=\"#ffffff\" stroke-width=\"1\">",
                    colour(i)
                );
                for pt in p {
                    let (x, y) = self.pos(pt);
                    let _ = write!(o, "<path class=\"marker\" d=\"{}\"/>", marker_path(i, x, y));
                }
                o.push_str("</g>");
            }
        }
    }

    /// Each series' bars: at every x, 0.8 of a step shared by the series
    /// side by side, from the plot's bottom to the value.
    fn bars(&self, o: &mut String) {
        let n = self.chart.series.len().max(1) as f64;
        let width = 0.8 / n;
        for (i, (s, p)) in self.chart.series.iter().zip(&self.pts).enumerate() {
            let _ = write!(
                o,
                "<g class=\"series\" data-series=\"{}\" fill=\"{}\">",
                escape(&s.name),
                colour(i)
            );
            for &(j, x, y) in p {
                let from = x - 0.4 + i as f64 * width;
                let (x0, top) = self.pos(&(j, from, y));
                let (x1, _) = self.pos(&(j, from + width, y));
                let _ = write!(
                    o,
                    "<rect x=\"{x0:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{:.1}\"><title>{}: {}</title></rect>",
                    (x1 - x0).max(1.0),
                    (self.bottom - top).max(0.0),
                    escape(&s.name),
                    s.points.get(j).map_or(String::new(), |v| format!("{:.3}", v.1))
                );
            }
            o.push_str("</g>");
        }
    }

    /// The path of one series' points (not empty): a line broken where a
    /// point is dropped, or steps in order of x.
    fn line_path(&self, p: &[(usize, f64, f64)]) -> String {
        let mut d = String::new();
        match self.chart.kind {
            ChartKind::Line | ChartKind::Stacked | ChartKind::Bars => {
                // A dropped point breaks the line: no invented segment.
                let mut prev: Option<usize> = None;
                for pt in p {
                    let (x, y) = self.pos(pt);
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
                let xcap = self.xs.cap;
                let mut sorted = p.to_vec();
                sorted.sort_by(|a, b| {
                    fix(a.1, xcap)
                        .total_cmp(&fix(b.1, xcap))
                        .then(a.0.cmp(&b.0))
                });
                for (k, pt) in sorted.iter().enumerate() {
                    let (x, y) = self.pos(pt);
                    if k == 0 {
                        let _ = write!(d, "M{x:.1} {y:.1}");
                    } else {
                        let _ = write!(d, "H{x:.1}V{y:.1}");
                    }
                }
            }
        }
        if p.len() == 1 && self.chart.kind == ChartKind::Step {
            // A lone step is a short tick, so it is seen.
            let (x, y) = self.pos(&p[0]);
            d = format!("M{:.1} {y:.1}H{:.1}", x - 6.0, x + 6.0);
        }
        d
    }

    /// The legend: each series' line (its area in a stacked chart, its
    /// marker where the chart has them) and name.
    fn legend(&self, o: &mut String) {
        if self.legend.is_empty() {
            return;
        }
        let chart = self.chart;
        o.push_str("<g class=\"legend\" font-size=\"12\" fill=\"#222\">");
        for item in &self.legend {
            let (x, i) = (item.x, item.series);
            let y = self.legend_top + item.row as f64 * 20.0;
            let _ = write!(o, "<g class=\"legend-item\">");
            if chart.kind == ChartKind::Stacked || chart.kind == ChartKind::Bars {
                let _ = write!(
                    o,
                    "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"26\" height=\"10\" fill=\"{}\" fill-opacity=\"0.55\"/>",
                    y - 5.0,
                    colour(i)
                );
            }
            let _ = write!(
                o,
                "<path d=\"M{x:.1} {y:.1}h26\" fill=\"none\" {} stroke-width=\"2\"/>",
                style_attrs_of(i, chart.series[i].reference)
            );
            // The legend shows a marker where the chart does.
            if chart.kind == ChartKind::Line && self.pts[i].len() <= MAX_MARKED_POINTS {
                let _ = write!(
                    o,
                    "<path d=\"{}\" fill=\"{}\" stroke=\"#ffffff\" stroke-width=\"1\"/>",
                    marker_path(i, x + 13.0, y),
                    colour(i)
                );
            }
            let _ = write!(
                o,
                "<text x=\"{:.1}\" y=\"{:.1}\">{}</text></g>",
                x + 32.0,
                y + 4.0,
                escape(&item.text)
            );
        }
        o.push_str("</g>");
    }
}

/// The legend's entries, in rows as wide as the plot; none for a chart of
/// one unnamed series.
fn legend_items(
    chart: &Chart,
    pts: &[Vec<(usize, f64, f64)>],
    left: f64,
    right: f64,
) -> Vec<LegendItem> {
    let mut legend = Vec::new();
    let show_legend = chart.series.len() > 1 || chart.series.iter().any(|s| !s.name.is_empty());
    if !show_legend {
        return legend;
    }
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
        legend.push(LegendItem {
            x,
            row,
            series: i,
            text,
        });
        x += w;
    }
    legend
}

/// `chart` with each series' y added to the series before it at the same
/// x, as a stacked chart draws it (its tooltips and axis then show the
/// cumulated values: the top of the stack is the total).
fn cumulate(chart: &Chart) -> Chart {
    let mut out = chart.clone();
    for i in 1..out.series.len() {
        let (done, rest) = out.series.split_at_mut(i);
        let below = &done[i - 1];
        for p in &mut rest[0].points {
            if let Some(b) = below.points.iter().find(|b| b.0 == p.0) {
                p.1 += b.1;
            }
        }
    }
    out
}
