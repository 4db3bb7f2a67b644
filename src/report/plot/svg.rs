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
    let thinned;
    let chart = match super::thin::thin(chart) {
        Some(c) => {
            thinned = c;
            &thinned
        }
        None => chart,
    };
    let cumulated;
    let chart = if chart.kind == ChartKind::Stacked {
        cumulated = cumulate(chart);
        &cumulated
    } else {
        chart
    };
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
    if chart.kind == ChartKind::Stacked {
        // Each layer fills down to the one below it (or the axis).
        for (i, s) in chart.series.iter().enumerate() {
            let top: Vec<(f64, f64)> = s
                .points
                .iter()
                .filter_map(|&(x, y)| Some((xs_scale.px(x)?, ys_scale.px(y)?)))
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
                if let (Some(px), Some(py)) = (xs_scale.px(x), ys_scale.px(below(x))) {
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
            ChartKind::Line | ChartKind::Stacked => {
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
            "<path class=\"series{}\" data-series=\"{}\" d=\"{d}\" fill=\"none\" {} stroke-width=\"2\" stroke-linejoin=\"round\"/>",
            if s.reference { " reference" } else { "" },
            escape(&s.name),
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
            if chart.kind == ChartKind::Stacked {
                let _ = write!(
                    o,
                    "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"26\" height=\"10\" fill=\"{}\" fill-opacity=\"0.55\"/>",
                    y - 5.0,
                    colour(*i)
                );
            }
            let _ = write!(
                o,
                "<path d=\"M{x:.1} {y:.1}h26\" fill=\"none\" {} stroke-width=\"2\"/>",
                style_attrs_of(*i, chart.series[*i].reference)
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
