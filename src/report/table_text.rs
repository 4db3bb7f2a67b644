//! The study report as plain text for a terminal (`dbsweep report
//! --format text`): the facts, conclusions and tables of the [`Doc`] as
//! aligned columns; wide tables wrap into parts like seed 000's halves.
//! Charts are named, not drawn.
//!
//! Marks: `*` the best value of a row, `+`/`-` better/worse than the
//! baseline beyond the noise; a point not measured shows its reason.

use std::fmt::Write;

use super::doc::{Block, Cell, Doc, Mark, Table};

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
    let per = t.wrap.filter(|&w| w > 0).unwrap_or(t.columns.len().max(1));
    let label_w = std::iter::once(&t.corner)
        .chain(t.rows.iter().map(|r| &r.label))
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0);
    let mut start = 0;
    loop {
        let end = (start + per).min(t.columns.len());
        let widths: Vec<usize> = (start..end)
            .map(|i| {
                std::iter::once(t.columns[i].chars().count())
                    .chain(
                        t.rows
                            .iter()
                            .map(|r| r.cells.get(i).map_or(0, |c| cell(c).chars().count())),
                    )
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |label: &str, cells: Vec<String>| {
            let mut l = format!("{label:<label_w$}");
            for (c, w) in cells.iter().zip(&widths) {
                let _ = write!(l, "  {c:>w$}");
            }
            l.trim_end().to_string()
        };
        let _ = writeln!(out, "{}", line(&t.corner, t.columns[start..end].to_vec()));
        for r in &t.rows {
            let cells = (start..end)
                .map(|i| r.cells.get(i).map_or(String::new(), cell))
                .collect();
            let _ = writeln!(out, "{}", line(&r.label, cells));
        }
        start = end;
        if start >= t.columns.len() {
            break;
        }
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
