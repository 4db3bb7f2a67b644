//! The study report as plain text for a terminal (`dbsweep report
//! --format text`): the facts, conclusions and tables of the [`Doc`] as
//! aligned columns; wide tables wrap into parts like seed 000's halves.
//! Charts are named, not drawn.
//!
//! Marks: `*` the best value of a row, `+`/`-` better/worse than the
//! baseline beyond the noise; a point not measured shows its reason.

use std::fmt::Write;

use super::{Block, Cell, Doc, Mark, Table};

pub fn render(doc: &Doc) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", doc.title);
    let _ = writeln!(out, "{}", "=".repeat(doc.title.chars().count()));
    let width = doc
        .facts
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    for (k, v) in &doc.facts {
        let _ = writeln!(out, "{k:<width$}  {v}");
    }
    for s in &doc.sections {
        let _ = writeln!(
            out,
            "\n{}\n{}",
            s.title,
            "-".repeat(s.title.chars().count())
        );
        for b in &s.blocks {
            match b {
                Block::Paragraph(p) => {
                    let _ = writeln!(out, "{p}");
                }
                Block::Note(n) => {
                    let _ = writeln!(out, "Note: {n}");
                }
                Block::Table(t) => {
                    out.push('\n');
                    out.push_str(&table(t));
                }
                Block::Chart(c) => {
                    if !c.series.is_empty() {
                        let _ = writeln!(out, "[chart: {}]", c.title);
                    }
                }
                Block::Flame(f) => {
                    let _ = writeln!(out, "[flame graph: {} (in the HTML report)]", f.title);
                }
            }
        }
    }
    out
}

/// One table as aligned text: the label column left-aligned, the values
/// right-aligned, parts of at most `wrap` columns one under the other.
pub fn table(t: &Table) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", t.caption);
    if t.prose {
        // Sentences do not fit in columns: one record per row, each cell
        // under its column's name, its detail after it.
        for r in &t.rows {
            let _ = writeln!(out, "- {}", r.label);
            for (name, c) in t.columns.iter().zip(&r.cells) {
                if c.text.is_empty() && c.detail.is_none() {
                    continue;
                }
                let _ = write!(out, "    {name}: {}", c.text);
                match &c.detail {
                    Some(d) if !d.is_empty() => {
                        let _ = writeln!(out, " ({d})");
                    }
                    _ => out.push('\n'),
                }
            }
        }
        return out;
    }
    let per = t.wrap.filter(|&w| w > 0).unwrap_or(t.columns.len().max(1));
    let mut start = 0;
    loop {
        let end = (start + per).min(t.columns.len());
        let mut rows = vec![std::iter::once(t.corner.clone())
            .chain(t.columns[start..end].iter().cloned())
            .collect::<Vec<_>>()];
        for r in &t.rows {
            rows.push(
                std::iter::once(r.label.clone())
                    .chain((start..end).map(|i| r.cells.get(i).map_or(String::new(), cell)))
                    .collect(),
            );
        }
        let mut right = vec![true; end - start + 1];
        right[0] = false;
        // The label column is as wide as every label of the table, so the
        // parts of a wrapped table line up.
        let label_w = std::iter::once(&t.corner)
            .chain(t.rows.iter().map(|r| &r.label))
            .map(|s| s.chars().count())
            .max()
            .unwrap_or(0);
        out.push_str(&columns_min(&rows, &right, &[label_w]));
        start = end;
        if start >= t.columns.len() {
            break;
        }
        out.push('\n');
    }
    out
}

/// Rows of cells as aligned text: columns two spaces apart, each as wide
/// as its widest cell, right-aligned where `right` says (numbers), and no
/// trailing blanks. The first row is the header.
pub fn columns(rows: &[Vec<String>], right: &[bool]) -> String {
    columns_min(rows, right, &[])
}

/// [`columns`] with minimum widths for the first columns.
fn columns_min(rows: &[Vec<String>], right: &[bool], min: &[usize]) -> String {
    let n = right.len();
    let widths: Vec<usize> = (0..n)
        .map(|i| {
            rows.iter()
                .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                .chain(min.get(i).copied())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, c) in row.iter().enumerate().take(n) {
            if i > 0 {
                line.push_str("  ");
            }
            let w = widths[i];
            if right[i] {
                let _ = write!(line, "{c:>w$}");
            } else {
                let _ = write!(line, "{c:<w$}");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn cell(c: &Cell) -> String {
    if c.text.is_empty() {
        return String::new();
    }
    match c.mark {
        Mark::Best => format!("{}*", c.text),
        Mark::Better => format!("{} +", c.text),
        Mark::Worse => format!("{} -", c.text),
        Mark::None | Mark::Missing => c.text.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::doc::Row;

    /// Seed 000's SELECT table: 14 client columns wrap into two halves of
    /// 7, each with its own header line, like the published table; the
    /// rows stopped at 300 clients stay blank after it.
    #[test]
    fn seed000_select_table_wraps_into_halves() {
        let clients = [
            1, 5, 10, 20, 50, 100, 150, 200, 250, 300, 350, 400, 450, 500,
        ];
        let cells = |v: &[&str]| -> Vec<Cell> {
            v.iter()
                .map(|t| Cell {
                    text: t.to_string(),
                    ..Cell::default()
                })
                .collect()
        };
        let t = Table {
            caption: "SELECT (queries per second)".into(),
            corner: "Client(s)".into(),
            columns: clients.iter().map(|c| c.to_string()).collect(),
            rows: vec![
                Row {
                    label: "M4-F4-L".into(),
                    cells: cells(&[
                        "216.264", "409.522", "313.254", "306.7", "290.594", "300.848", "298.902",
                        "298.372", "295.694", "291.804", "289.356", "287.588", "283.786",
                        "273.736",
                    ]),
                },
                Row {
                    label: "M5-F4-L".into(),
                    cells: cells(&[
                        "170.058", "323.16", "477.446", "372.566", "339.972", "227.59", "152.85",
                        "84.964", "55.88", "37.502", "", "", "", "",
                    ]),
                },
            ],
            wrap: Some(7),
            prose: false,
        };
        assert_eq!(
            table(&t),
            "SELECT (queries per second)\n\
             Client(s)        1        5       10       20       50      100      150\n\
             M4-F4-L    216.264  409.522  313.254    306.7  290.594  300.848  298.902\n\
             M5-F4-L    170.058   323.16  477.446  372.566  339.972   227.59   152.85\n\
             \n\
             Client(s)      200      250      300      350      400      450      500\n\
             M4-F4-L    298.372  295.694  291.804  289.356  287.588  283.786  273.736\n\
             M5-F4-L     84.964    55.88   37.502\n"
        );
    }
}
