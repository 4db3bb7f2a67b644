//! Where the server waited during a run's measured window, as one table
//! beside its on-CPU profile: the share of sampled sessions per wait
//! event (PostgreSQL's `pg_stat_activity`, MariaDB's lock waits and
//! processlist stages), and on InnoDB builds that print them the latches
//! threads were seen waiting for. CPU time and waiting read together: a
//! session that waits is not on the CPU the profile shows.

use std::fmt::Write;

use crate::record::metrics::Usage;
use crate::report::doc::{Block, Cell, Row, Section, Table};

/// How many latches the text report names.
const TEXT_LATCHES: usize = 8;

fn sampled(w: &Usage) -> String {
    format!(
        "{} sessions sampled from {} in the measured window",
        w.wait_samples,
        if w.semaphore_readings > 0 || w.waits.iter().any(|(e, _)| e.starts_with("stage:")) {
            "information_schema.PROCESSLIST and INNODB_TRX"
        } else {
            "pg_stat_activity"
        }
    )
}

/// The text report's section; empty without sampled sessions.
pub fn text_section(w: &Usage) -> String {
    let mut s = String::new();
    let rows = w.wait_shares();
    if rows.is_empty() {
        return s;
    }
    let _ = writeln!(s, "Where the server waited ({}):", sampled(w));
    for (e, n, share) in rows {
        let _ = writeln!(
            s,
            "    {:<48}{:>6.1} %  ({n})",
            format!("{e}:"),
            share * 100.0
        );
    }
    let l = w.latch_means();
    if w.semaphore_readings > 0 {
        let _ = writeln!(
            s,
            "  InnoDB latches waited for ({} readings of the SEMAPHORES section; mean threads waiting):",
            w.semaphore_readings
        );
        if l.is_empty() {
            let _ = writeln!(s, "    none seen");
        }
        for (latch, _, mean) in l.into_iter().take(TEXT_LATCHES) {
            let _ = writeln!(s, "    {mean:>7.2}  {latch}");
        }
    }
    s
}

/// The run report's section of `r`'s sampled sessions, if it has any.
pub fn run_section(r: &crate::record::Run) -> Option<Section> {
    doc_section(&r.result.metrics.as_ref()?.window)
}

/// The HTML and Markdown report's section, if sessions were sampled.
pub fn doc_section(w: &Usage) -> Option<Section> {
    let rows = w.wait_shares();
    if rows.is_empty() {
        return None;
    }
    let cell = |text: String| Cell {
        text,
        ..Cell::default()
    };
    let mut blocks = vec![
        Block::Paragraph(format!(
            "What the server's sessions were doing when sampled, several times a second: {}. \
             `running` is a session on the CPU or ready for it (the profile's share); the rest wait.",
            sampled(w)
        )),
        Block::Table(Table {
            caption: "Sessions by wait event".into(),
            corner: "wait event".into(),
            columns: vec!["sessions seen".into(), "share".into()],
            rows: (rows.into_iter())
                .map(|(e, n, share)| Row {
                    label: e.to_string(),
                    cells: vec![
                        cell(n.to_string()),
                        cell(format!("{:.1} %", share * 100.0)),
                    ],
                })
                .collect(),
            ..Table::default()
        }),
    ];
    if w.semaphore_readings > 0 {
        let l = w.latch_means();
        blocks.push(Block::Table(Table {
            caption: format!(
                "InnoDB latches waited for ({} readings of the SEMAPHORES section)",
                w.semaphore_readings
            ),
            corner: "latch, where created, where waited".into(),
            columns: vec!["threads seen".into(), "mean waiting".into()],
            rows: (l.into_iter())
                .map(|(latch, n, mean)| Row {
                    label: latch.to_string(),
                    cells: vec![cell(n.to_string()), cell(format!("{mean:.2}"))],
                })
                .collect(),
            ..Table::default()
        }));
    }
    Some(Section {
        title: "Where the server waited".into(),
        blocks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::OrderedMap;

    fn window() -> Usage {
        Usage {
            waits: OrderedMap(vec![
                ("stage:update".into(), 30),
                ("InnoDB:lock wait".into(), 10),
                ("running".into(), 60),
            ]),
            wait_samples: 100,
            semaphore_waits: OrderedMap(vec![
                (
                    "S-lock on RW-latch buf0buf.cc:1471, waited at row0sel.cc:4559".into(),
                    9,
                ),
                ("Mutex '&kernel_mutex', waited at trx0trx.c:1093".into(), 12),
            ]),
            semaphore_readings: 6,
            ..Usage::default()
        }
    }

    #[test]
    fn every_event_with_its_share_and_the_latches_by_mean() {
        let text = text_section(&window());
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].contains("100 sessions sampled from information_schema.PROCESSLIST"));
        assert!(lines[1].starts_with("    running:") && lines[1].contains("60.0 %  (60)"));
        assert!(lines[2].contains("stage:update:") && lines[2].contains("30.0 %"));
        assert!(lines[3].contains("InnoDB:lock wait:") && lines[3].contains("10.0 %"));
        assert!(lines[4].contains("6 readings"));
        assert_eq!(
            lines[5],
            "       2.00  Mutex '&kernel_mutex', waited at trx0trx.c:1093"
        );
        assert_eq!(
            lines[6],
            "       1.50  S-lock on RW-latch buf0buf.cc:1471, waited at row0sel.cc:4559"
        );
        let s = doc_section(&window()).unwrap();
        let Block::Table(t) = &s.blocks[1] else {
            panic!("no table")
        };
        assert_eq!(t.rows[0].label, "running");
        assert_eq!(t.rows[0].cells[1].text, "60.0 %");
        let Block::Table(l) = &s.blocks[2] else {
            panic!("no latch table")
        };
        assert_eq!(l.rows[0].cells[1].text, "2.00");
    }

    #[test]
    fn nothing_without_samples() {
        assert_eq!(text_section(&Usage::default()), "");
        assert!(doc_section(&Usage::default()).is_none());
    }
}
