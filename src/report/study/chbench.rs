//! The CH-benCHmark section of a study report: one row per series and
//! mix of loads (TPC-C terminals beside analytical streams), with tpmC,
//! QphH and the queries' geometric mean side by side — the interference
//! table: rows of one server that differ in streams show what the queries
//! cost the transactions, rows that differ in terminals what the
//! transactions cost the queries. Means over the finished repeats of the
//! record's own figures (`result.chbench`).

use super::load::StudyData;
use super::tpcc::{mean, series_name};
use crate::record::chbench::Chbench;
use crate::report::doc::{Block, Cell, Row, Section, Table};
use crate::store::PointStatus;

/// One series at one mix of loads.
struct Mix<'a> {
    series: String,
    terminals: u64,
    streams: u64,
    runs: Vec<&'a Chbench>,
}

fn mixes(data: &StudyData) -> Vec<Mix<'_>> {
    let mut out: Vec<Mix<'_>> = Vec::new();
    let points = data.points.iter().chain(&data.paced);
    for p in points.filter(|p| matches!(p.row.status, PointStatus::Finished)) {
        let Some(f) = p.row.run.as_ref().and_then(|r| r.result.chbench.as_ref()) else {
            continue;
        };
        let series = series_name(p);
        let same = |m: &&mut Mix<'_>| {
            m.series == series && m.terminals == f.terminals && m.streams == f.analytic_streams
        };
        match out.iter_mut().find(same) {
            Some(m) => m.runs.push(f),
            None => out.push(Mix {
                series,
                terminals: f.terminals,
                streams: f.analytic_streams,
                runs: vec![f],
            }),
        }
    }
    out.sort_by(|a, b| {
        (&a.series, a.streams, a.terminals).cmp(&(&b.series, b.streams, b.terminals))
    });
    out
}

fn num(v: Option<f64>, digits: usize) -> Cell {
    Cell::plain(v.map_or("-".to_string(), |v| format!("{v:.digits$}")))
}

/// The section; None for a study without CH-benCHmark points.
pub(super) fn section(data: &StudyData) -> Option<Section> {
    let mixes = mixes(data);
    if mixes.is_empty() {
        return None;
    }
    let rows = mixes
        .iter()
        .map(|m| {
            let of = |f: fn(&Chbench) -> Option<f64>| mean(m.runs.iter().filter_map(|c| f(c)));
            let failed: u64 = m.runs.iter().map(|c| c.queries_failed).sum();
            Row {
                label: m.series.clone(),
                cells: vec![
                    Cell::plain(m.terminals.to_string()),
                    Cell::plain(m.streams.to_string()),
                    Cell::plain(m.runs.len().to_string()),
                    num(of(|c| c.tpmc), 1),
                    num(of(|c| c.qphh), 1),
                    num(of(|c| c.query_geomean_s), 3),
                    Cell::plain(failed.to_string()),
                ],
            }
        })
        .collect();
    let table = Table {
        caption: "Each series at each mix of loads: tpmC beside the analytical streams' \
                  queries per hour and their geometric mean time (means of the repeats)"
            .into(),
        corner: "series".into(),
        columns: [
            "terminals",
            "streams",
            "points",
            "tpmC",
            "QphH",
            "query geomean (s)",
            "queries failed",
        ]
        .iter()
        .map(|c| c.to_string())
        .collect(),
        rows,
        wrap: None,
        prose: false,
    };
    Some(Section {
        title: "CH-benCHmark".into(),
        blocks: vec![
            Block::Table(table),
            Block::Note(
                "The interference: rows of one series with the same terminals and more \
                 streams show what the queries cost the transactions (tpmC); rows with the \
                 same streams and more terminals what the transactions cost the queries \
                 (QphH, query time). These are means of the repeats. Each mix is a cell of \
                 its own, so two rows were not measured block by block against each other \
                 and their difference carries the machine's drift between the cells: read \
                 one smaller than the study's noise floor (its control's interval) as none. \
                 A query ended by --query-timeout counts as failed, not in QphH."
                    .into(),
            ),
        ],
    })
}
