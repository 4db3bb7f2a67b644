//! Charts as SVG. A minimal drawing (axes, one polyline per series) so the
//! study report works end to end; the full plotting replaces it.

use std::fmt::Write;

use super::doc::Chart;

/// The chart as a standalone `<svg>` element.
pub fn svg(chart: &Chart) -> String {
    let (w, h, m) = (640.0, 360.0, 48.0);
    let pts: Vec<(f64, f64)> = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .collect();
    let tx = |x: f64| if chart.x.log && x > 0.0 { x.log10() } else { x };
    let ty = |y: f64| if chart.y.log && y > 0.0 { y.log10() } else { y };
    let (x0, x1) = pts
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(tx(p.0)), b.max(tx(p.0)))
        });
    let (y0, y1) = pts.iter().fold((0f64, f64::NEG_INFINITY), |(a, b), p| {
        (a.min(ty(p.1)), b.max(ty(p.1)))
    });
    let sx = |x: f64| m + (tx(x) - x0) / (x1 - x0).max(f64::MIN_POSITIVE) * (w - 2.0 * m);
    let sy = |y: f64| h - m - (ty(y) - y0) / (y1 - y0).max(f64::MIN_POSITIVE) * (h - 2.0 * m);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\">\
         <title>{}</title><text x=\"{m}\" y=\"20\">{}</text>\
         <line x1=\"{m}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\
         <line x1=\"{m}\" y1=\"{m}\" x2=\"{m}\" y2=\"{}\" stroke=\"black\"/>\
         <text x=\"{}\" y=\"{}\">{}</text><text x=\"4\" y=\"{}\">{}</text>",
        esc(&chart.title),
        esc(&chart.title),
        h - m,
        w - m,
        h - m,
        h - m,
        w / 2.0,
        h - 8.0,
        esc(&chart.x.label),
        m - 8.0,
        esc(&chart.y.label)
    );
    const COLORS: [&str; 6] = [
        "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf",
    ];
    for (i, s) in chart.series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let line: Vec<String> = s
            .points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
            .collect();
        let _ = write!(
            out,
            "<polyline fill=\"none\" stroke=\"{color}\" points=\"{}\"/>\
             <text x=\"{}\" y=\"{}\" fill=\"{color}\">{}</text>",
            line.join(" "),
            w - m - 150.0,
            m + 14.0 * i as f64,
            esc(&s.name)
        );
    }
    out.push_str("</svg>\n");
    out
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
