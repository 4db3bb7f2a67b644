//! The per-shard table of a run merged from shards (`dbsweep merge`, or a
//! coordinator's `run --nodes`): each shard's machine (its scheduler's
//! node name when a coordinator knew it), clients, throughput, window,
//! start offset, clock offset, start skew against the coordinator's
//! instant, client CPU, how busy its machine was and the client's share
//! of it, and headline latency, with the window the shards
//! had in common. The same cells serve the text report and the HTML one.

use std::fmt::Write;

use crate::record::{Run, Shards};
use crate::report::doc::{Block, Cell, Row, Section, Table};

const COLUMNS: [&str; 11] = [
    "host",
    "clients",
    "transactions",
    "per s",
    "window s",
    "start +ms",
    "clock ms",
    "skew ms",
    "client CPU s",
    "host busy %",
    "client %",
];

/// A share of the shard's machine, `n/a` when its sampler did not measure
/// it (`--metrics off`, or a record from before shards kept it).
fn pct(v: Option<f64>) -> String {
    v.map_or("n/a".into(), |v| format!("{v:.1}"))
}

/// Each shard's label and cells, with the headline latency's column name.
fn rows(r: &Run, s: &Shards) -> (Vec<String>, Vec<(String, Vec<String>)>) {
    let p = r.run.percentile.unwrap_or(95.0);
    let mut columns: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
    columns.push(format!("p{p} ms"));
    let rows = s
        .rows
        .iter()
        .map(|x| {
            (
                format!("shard {}", x.index),
                vec![
                    x.node.clone().unwrap_or_else(|| x.hostname.clone()),
                    x.clients.to_string(),
                    x.transactions.to_string(),
                    format!("{:.2}", x.tps),
                    format!("{:.3}", x.measured_s),
                    format!("{:.1}", x.start_offset_s * 1e3),
                    x.clock_offset_s
                        .map_or("n/a".into(), |c| format!("{:.1}", c * 1e3)),
                    x.start_skew_s
                        .map_or("n/a".into(), |c| format!("{:.2}", c * 1e3)),
                    format!("{:.3}", x.client_cpu_s),
                    pct(x.cpu_busy_pct),
                    pct(x.client_cpu_pct),
                    x.latency_us
                        .map_or("-".into(), |us| format!("{:.2}", us / 1e3)),
                ],
            )
        })
        .collect();
    (columns, rows)
}

/// What the table is, in one sentence; and a warning when the shards did
/// not run together, since the rates are then over a longer span than any
/// of them measured.
fn caption(r: &Run, s: &Shards) -> String {
    let apart = if s.common_s < 0.9 * r.result.measured_s {
        " WARNING: the shards did not run together; the merged rates are over the whole span."
    } else {
        ""
    };
    let start = match &s.coordinator {
        Some(c) => format!(
            "they were started by a coordinator ({} launcher) at one instant, and each released its \
             clients within {:.2} ms of it by the coordinator's clock (skew: its release corrected by \
             its clock offset, read from the shortest of its ping round trips)",
            c.launcher,
            c.max_start_skew_s * 1e3,
        ),
        None => format!(
            "they started within {:.1} ms by their own clocks (clock offsets and skew are known only \
             when a coordinator measured them)",
            s.start_skew_s * 1e3
        ),
    };
    format!(
        "Merged from {} shards: counts and histograms summed, percentiles read from the sum. \
         The shards' windows have {:.3} s in common of the {:.3} s measured; {start}.{apart}",
        s.rows.len(),
        s.common_s,
        r.result.measured_s,
    )
}

/// The text report's table; empty for a run of one process.
pub fn text(r: &Run) -> String {
    let Some(s) = &r.result.shards else {
        return String::new();
    };
    let (columns, rows) = rows(r, s);
    let mut widths: Vec<usize> = columns.iter().map(|c| c.chars().count()).collect();
    for (_, cells) in &rows {
        for (w, c) in widths.iter_mut().zip(cells) {
            *w = (*w).max(c.chars().count());
        }
    }
    let label = rows.iter().map(|(l, _)| l.len()).max().unwrap_or(0);
    let mut out = String::new();
    let _ = writeln!(out, "\nShards:\n    {}", caption(r, s));
    let mut line = format!("    {:<label$}", "");
    for (c, w) in columns.iter().zip(&widths) {
        let _ = write!(line, "  {c:>w$}");
    }
    let _ = writeln!(out, "{line}");
    for (l, cells) in &rows {
        let mut line = format!("    {l:<label$}");
        for (c, w) in cells.iter().zip(&widths) {
            let _ = write!(line, "  {c:>w$}");
        }
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out);
    out
}

/// The HTML and Markdown reports' section; None for one process.
pub fn doc_section(r: &Run) -> Option<Section> {
    let s = r.result.shards.as_ref()?;
    let (columns, rows) = rows(r, s);
    Some(Section {
        title: "Shards".into(),
        blocks: vec![
            Block::Paragraph(caption(r, s)),
            Block::Table(Table {
                caption: "Per shard".into(),
                corner: "shard".into(),
                columns,
                rows: rows
                    .into_iter()
                    .map(|(label, cells)| Row {
                        label,
                        cells: cells.into_iter().map(Cell::plain).collect(),
                    })
                    .collect(),
                wrap: None,
                prose: false,
            }),
        ],
    })
}
