//! The per-transaction-type section of a run report: for a workload with
//! several types (DBT-1's 14 interactions) each one's count, share of the
//! mix beside the share the mix's design gives it, rate, response times
//! and TPC-W's 90th-percentile limit, marked where exceeded. DBT-1 calls
//! the run's completed interactions per second BT/s.

use std::fmt::Write as _;

use super::doc::{Block, Cell, Mark, Row, Section, Table};
use super::text::ms_us;
use crate::record::{Run, TransactionType};

/// The table's columns.
const COLUMNS: [&str; 10] = [
    "count",
    "share",
    "expected",
    "per s",
    "avg",
    "p90",
    "p99",
    "max",
    "p90 limit",
    "failed",
];

fn cells(t: &TransactionType) -> Vec<(String, bool)> {
    let pct = |p: Option<f64>| p.map_or("-".to_string(), |x| format!("{x:.2}%"));
    let l = t.latency.as_ref();
    let at = |p: f64| {
        l.and_then(|l| l.percentiles.iter().find(|x| x.p == p))
            .map_or("-".to_string(), |x| ms_us(x.us))
    };
    let exceeded = t.p90_exceeded == Some(true);
    vec![
        (t.count.to_string(), false),
        (pct(Some(t.share_pct)), false),
        (pct(t.expected_pct), false),
        (format!("{:.2}", t.per_s), false),
        (l.map_or("-".into(), |l| ms_us(l.avg_us)), false),
        (at(90.0), exceeded),
        (at(99.0), false),
        (l.map_or("-".into(), |l| ms_us(l.max_us)), false),
        (
            t.p90_limit_s
                .map_or("-".to_string(), |s| format!("{s:.0} s")),
            false,
        ),
        (t.failed.to_string(), false),
    ]
}

fn label(t: &TransactionType) -> String {
    if t.queries {
        t.name.clone()
    } else {
        format!("{} (no query)", t.name)
    }
}

/// The text report's section; empty for a workload without types.
pub fn text_section(s: &mut String, r: &Run) {
    let types = &r.result.transaction_types;
    if types.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "Interactions ({:.2} per sec. in all, DBT-1's BT/s; response time in ms from each intended start):",
        r.result.tps
    );
    let mut head = format!("    {:<32}", "interaction");
    for c in COLUMNS {
        let _ = write!(head, "{c:>10}");
    }
    let _ = writeln!(s, "{head}");
    let mut any_exceeded = false;
    for t in types {
        let mut row = format!("    {:<32}", label(t));
        for (c, exceeded) in cells(t) {
            let c = if exceeded {
                any_exceeded = true;
                format!("{c}*")
            } else {
                c
            };
            let _ = write!(row, "{c:>10}");
        }
        let _ = writeln!(s, "{row}");
    }
    if any_exceeded {
        let _ = writeln!(
            s,
            "    * the 90th percentile exceeds the limit (TPC-W clause 5.1.1.2)"
        );
    }
    let _ = writeln!(
        s,
        "    expected: the interaction's share in the mix's stationary distribution; \
         an interaction marked (no query) is answered without the database, as DBT-1 does"
    );
    let _ = writeln!(s);
}

/// The HTML and Markdown reports' section; None for a workload without
/// types.
pub fn doc_section(r: &Run) -> Option<Section> {
    let types = &r.result.transaction_types;
    if types.is_empty() {
        return None;
    }
    let rows = types
        .iter()
        .map(|t| Row {
            label: label(t),
            cells: cells(t)
                .into_iter()
                .map(|(text, exceeded)| Cell {
                    text,
                    detail: exceeded.then(|| "above TPC-W's 90th-percentile limit".to_string()),
                    mark: if exceeded { Mark::Worse } else { Mark::None },
                })
                .collect(),
        })
        .collect();
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
