//! The per-transaction-type section of a run report: for a workload with
//! several types (DBT-1's 14 interactions) each one's count, share of the
//! mix beside the share the mix's design gives it, rate, response times
//! and TPC-W's 90th-percentile limit, marked where exceeded. DBT-1 calls
//! the run's completed interactions per second BT/s; YCSB's types are its
//! operations. (The text report's
//! section is in `text.rs`, which this one shares its cells with.)

use super::text::{type_cells as cells, type_label as label, TYPE_COLUMNS as COLUMNS};
use crate::record::{Run, Tpch};
use crate::report::doc::{Block, Cell, Mark, Row, Section, Table};

/// The HTML and Markdown reports' section; None for a workload without
/// types.
pub fn doc_section(r: &Run) -> Option<Section> {
    let types = &r.result.transaction_types;
    if types.is_empty() {
        return None;
    }
    let spec = if r.workload.name == "tpcc" {
        "TPC-C"
    } else {
        "TPC-W"
    };
    let rows = types
        .iter()
        .map(|t| Row {
            label: label(t),
            cells: cells(t)
                .into_iter()
                .map(|(text, exceeded)| Cell {
                    text,
                    detail: exceeded.then(|| format!("above {spec}'s 90th-percentile limit")),
                    mark: if exceeded { Mark::Worse } else { Mark::None },
                })
                .collect(),
        })
        .collect();
    if let Some(f) = &r.result.tpcc {
        let mut lines = super::tpcc::lines(f, r);
        if let Some(c) = &r.result.chbench {
            lines.insert(0, format!("CH-benCHmark: {}", super::tpch::chbench_line(c)));
        }
        return Some(Section {
            title: "TPC-C".into(),
            blocks: vec![
                Block::Paragraph(lines.join(". ") + "."),
                Block::Table(Table {
                    caption: "Each transaction type: count, share of the mix beside its share \
                              of the deck, and response time (ms, from the end of its keying time)"
                        .into(),
                    corner: "transaction".into(),
                    columns: COLUMNS.iter().map(|c| c.to_string()).collect(),
                    rows,
                    wrap: None,
                    prose: false,
                }),
                Block::Note(
                    "A 90th percentile above TPC-C's limit (clause 5.2.5.3: 5 s; Stock-Level \
                     20 s; Delivery run inline over all ten districts 80 s, or queued 5 s and \
                     its deferred completion 80 s) is marked."
                        .into(),
                ),
            ],
        });
    }
    if let Some(f) = &r.result.tpch {
        let plain = |text: String| Cell {
            text,
            detail: None,
            mark: Mark::None,
        };
        return Some(Section {
            title: "TPC-H".into(),
            blocks: vec![
                Block::Paragraph(super::tpch::lines(f).join(". ") + "."),
                Block::Table(Table {
                    caption: "Each query and refresh function: executions (one per stream) and \
                              timing interval (ms)"
                        .into(),
                    corner: "query".into(),
                    columns: super::tpch::COLUMNS.iter().map(|c| c.to_string()).collect(),
                    rows: super::tpch::rows(f)
                        .into_iter()
                        .map(|(label, cells)| Row {
                            label,
                            cells: cells.into_iter().map(plain).collect(),
                        })
                        .collect(),
                    wrap: None,
                    prose: false,
                }),
                Block::Chart(crate::report::plot::bars(
                    "tpch-queries",
                    "Time by query".into(),
                    Tpch::NUMBER_AXIS,
                    Tpch::MS_AXIS,
                    vec![(String::new(), f.numbered_ms())],
                )),
            ],
        });
    }
    if r.workload.name == "ycsb" {
        return Some(Section {
            title: "Operations".into(),
            blocks: vec![
                Block::Paragraph(format!(
                    "{:.2} operations completed per second in all (YCSB's Throughput(ops/sec)).",
                    r.result.tps
                )),
                Block::Table(Table {
                    caption: "Each YCSB operation: count, share of the mix beside the share its proportion gives it, and latency (ms, from its intended start)"
                        .into(),
                    corner: "operation".into(),
                    columns: COLUMNS.iter().map(|c| c.to_string()).collect(),
                    rows,
                    wrap: None,
                    prose: false,
                }),
            ],
        });
    }
    Some(Section {
        title: "Interactions".into(),
        blocks: vec![
            Block::Paragraph(format!(
                "{:.2} interactions completed per second in all (DBT-1's BT/s).",
                r.result.tps
            )),
            Block::Table(Table {
                caption: "Each interaction: count, share of the mix beside the matrix's \
                          stationary share, and response time (ms, from its intended start)"
                    .into(),
                corner: "interaction".into(),
                columns: COLUMNS.iter().map(|c| c.to_string()).collect(),
                rows,
                wrap: None,
                prose: false,
            }),
            Block::Note(
                "A 90th percentile above TPC-W's limit (3 s; 5 s New Products, Best Sellers, \
                 Buy Confirm; 10 s Search Results; 20 s Admin Confirm) is marked. \
                 Interactions marked (no query) are answered without the database, as DBT-1 does."
                    .into(),
            ),
        ],
    })
}
