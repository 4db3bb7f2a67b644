//! Charts as the reports draw them, SVG alone and inside the HTML report:
//! a title longer than the plot wraps and renders whole, checked as
//! snapshots (insta, tests/snapshots/; after an intended change review
//! them with `cargo insta review` or `INSTA_UPDATE=always cargo test
//! --test charts`).

use dbsweep::report::doc::{Axis, Block, Chart, ChartKind, Doc, Section, Series};
use dbsweep::report::{doc::html, plot};

#[test]
fn a_chart_title_longer_than_the_plot_wraps_whole() {
    // 150 characters, the shape of a reproduction's chart titles.
    let title = "seed 002 (2005: 4 × Xeon 2 GHz with HT, MySQL 5.0.7, PostgreSQL 8) \
                 (special, 2CPU HT): shape of throughput against clients, each over its own peak (%)";
    assert_eq!(title.chars().count(), 150);
    let chart = Chart {
        id: "long".into(),
        title: title.into(),
        x: Axis::log("clients"),
        y: Axis::linear("transactions/s"),
        kind: ChartKind::Line,
        series: vec![Series {
            name: "MySQL".into(),
            points: vec![(1.0, 100.0), (2.0, 180.0), (4.0, 260.0)],
            spread: None,
            reference: false,
        }],
    };
    let svg = plot::svg(&chart);
    // Every word is drawn, in order, on lines no wider than the plot.
    let lines: Vec<&str> = svg
        .split("<tspan ")
        .skip(1)
        .map(|t| &t[t.find('>').unwrap() + 1..t.find("</tspan>").unwrap()])
        .collect();
    assert!(lines.len() >= 2, "{svg}");
    assert_eq!(lines.join(" "), title);
    let left: f64 = svg
        .split("<text class=\"title\" x=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap()
        .parse()
        .unwrap();
    for l in &lines {
        // DejaVu Sans Bold at 15 px: about 8.5 px a character on average;
        // the line must end before the chart's right edge (720 px).
        assert!(left + l.chars().count() as f64 * 8.5 <= 720.0, "{l}");
    }
    insta::assert_snapshot!("long_title_svg", svg);
    let doc = Doc {
        title: "Long titles".into(),
        facts: vec![],
        sections: vec![Section {
            title: "Charts".into(),
            blocks: vec![Block::Chart(chart)],
        }],
    };
    let page = html::render(&doc);
    assert!(page.contains(&svg), "the page draws the same chart");
    insta::assert_snapshot!("long_title_html", page);
}
