//! Tests of the charts: scales, ticks, markers and the SVG's structure.

use super::chart::{self as doc, Axis, Chart, ChartKind, Series};
use super::marks::*;
use super::scale::*;
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
        reference: false,
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

#[test]
fn stacked_areas_add_up_and_fill_down_to_the_layer_below() {
    // CPU time by kind at 1, 2 and 4 clients: each column adds up to 100.
    let c = chart(
        ChartKind::Stacked,
        Axis::log("clients"),
        Axis::linear("CPU time (%)"),
        vec![
            series("user", &[(1.0, 20.0), (2.0, 40.0), (4.0, 60.0)]),
            series("system", &[(1.0, 10.0), (2.0, 20.0), (4.0, 30.0)]),
            series("idle", &[(1.0, 70.0), (2.0, 40.0), (4.0, 10.0)]),
        ],
    );
    let s = svg(&c);
    let areas = path_data(&s, "area");
    assert_eq!(areas.len(), 3, "one filled area per layer");
    // The top layer's upper edge is the total: every point at 100 %, the
    // top tick; no marker is drawn on a stacked chart.
    assert_eq!(tick_labels(&s, "y").last().map(String::as_str), Some("100"));
    let lines = path_data(&s, "series");
    let top_y: Vec<&str> = lines[2]
        .split(['M', 'L'])
        .filter(|p| !p.is_empty())
        .map(|p| p.split(' ').nth(1).unwrap())
        .collect();
    assert!(top_y.windows(2).all(|w| w[0] == w[1]), "{top_y:?}");
    assert_eq!(count(&s, "class=\"marker\""), 0);
    // The lowest layer closes on the axis (y = 0), the next on the first
    // layer's edge: its closing path passes through the user line's points.
    let user_edge: Vec<&str> = lines[0]
        .split(['M', 'L'])
        .filter(|p| !p.is_empty())
        .collect();
    for p in &user_edge {
        assert!(
            areas[1].contains(&format!("L{p}")),
            "{p} not in {}",
            areas[1]
        );
    }
    // Legend entries are filled boxes.
    assert_eq!(count(&s, "<rect x="), 3);
}

#[test]
fn long_titles_wrap_between_words_and_long_words_break() {
    let width = 600.0;
    let title = "oltp_read_only table-size=2000 tables=1: throughput over time at 2 clients, \
                 and more words than one line holds";
    let lines = wrap(title, 15.0, width);
    assert!(lines.len() >= 2, "{lines:?}");
    assert_eq!(
        lines.join(" "),
        title.split_whitespace().collect::<Vec<_>>().join(" ")
    );
    for l in &lines {
        assert!(bold_width(l, 15.0) * 1.03 <= width, "{l}");
    }
    // A word wider than a line is cut where the line ends, nothing lost.
    let w = "W".repeat(72);
    let lines = wrap(&w, 15.0, width);
    assert!(lines.len() >= 2);
    assert_eq!(lines.concat(), w);
    // A title that fits is one line, as written.
    assert_eq!(
        wrap("Throughput by clients", 15.0, width),
        ["Throughput by clients"]
    );
    let s = svg(&chart(
        ChartKind::Line,
        Axis::linear("x"),
        Axis::linear("y"),
        vec![series("a", &[(1.0, 1.0)])],
    ));
    assert!(s.contains(">Throughput by clients</text>") && !s.contains("<tspan"));
    // Wide letters are measured as wide: 40 W's do not fit where 40 i's do.
    assert!(bold_width(&"W".repeat(40), 15.0) > 3.0 * bold_width(&"i".repeat(40), 15.0));
}

#[test]
fn a_day_of_one_second_intervals_draws_at_the_plots_width_with_its_stall() {
    // 86,400 one-second points around 1,000/s and one stall second of
    // 20,000 in the middle of the day.
    let mut pts: Vec<(f64, f64)> = (1..=86_400)
        .map(|t| (t as f64, 1000.0 + (t % 7) as f64))
        .collect();
    pts[43_200].1 = 20_000.0;
    let s = svg(&chart(
        ChartKind::Line,
        Axis::linear("time (s)"),
        Axis::linear("transactions/s"),
        vec![series("tps", &pts)],
    ));
    // One point per pixel column or so, not 86,400: a small file.
    assert!(s.len() < 40_000, "{} bytes", s.len());
    let d = path_data(&s, "series");
    assert_eq!(d.len(), 1);
    let drawn = count(d[0], "M") + count(d[0], "L");
    assert!(
        (500..=super::thin::MAX_POINTS).contains(&drawn),
        "{drawn} points"
    );
    // The stall is kept (each bucket's largest y): it sets the y axis.
    let top = tick_labels(&s, "y").last().unwrap().clone();
    let k: f64 = top.strip_suffix('k').unwrap_or(&top).parse().unwrap();
    assert!(k >= 20.0, "top tick {top}");
    assert_eq!(count(&s, "class=\"marker\""), 0);
}

#[test]
fn bars_stand_side_by_side_from_the_axis_with_heights_by_value() {
    let c = bars(
        "b",
        "Time by query".into(),
        "query",
        "ms",
        vec![
            ("a".into(), vec![(1.0, 10.0), (2.0, 100.0), (3.0, 1000.0)]),
            ("b".into(), vec![(1.0, 10.0), (2.0, 10.0), (3.0, 10.0)]),
        ],
    );
    let s = svg(&c);
    assert_eq!(count(&s, "<rect x="), 6 + 2, "six bars and two legend keys");
    let rects: Vec<(f64, f64, f64, f64)> = s
        .split("<rect x=\"")
        .skip(1)
        .filter(|r| r.contains("<title>"))
        .map(|r| {
            let num = |key: &str| -> f64 {
                let at = r.find(key).map_or(0, |i| i + key.len());
                let end = at + r[at..].find('"').unwrap();
                r[at..end].parse().unwrap()
            };
            (num(""), num("y=\""), num("width=\""), num("height=\""))
        })
        .collect();
    assert_eq!(rects.len(), 6);
    // Every bar ends on the axis: its top plus its height is the bottom.
    let bottom = rects[0].1 + rects[0].3;
    assert!(
        rects.iter().all(|r| (r.1 + r.3 - bottom).abs() < 0.2),
        "{rects:?}"
    );
    // On a log axis, each tenfold is the same height; the second series'
    // bar stands right of the first's at the same x.
    let (h1, h2, h3) = (rects[0].3, rects[1].3, rects[2].3);
    assert!(((h2 - h1) - (h3 - h2)).abs() < 0.5, "{h1} {h2} {h3}");
    assert!(rects[3].0 > rects[0].0 && rects[3].0 < rects[1].0);
    assert!((rects[3].3 - h1).abs() < 0.2);
}
