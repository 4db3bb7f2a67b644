//! The study report as Markdown, for pasting into a blog post or an issue:
//! the facts, conclusions and tables of the [`Doc`], with each chart
//! written as an SVG file next to the `.md` and referenced by name.
//!
//! Markdown tables have no hover: cells show the mean, and a note under
//! each table says where the spread is (the HTML, CSV and JSON reports).
//! The best value of a row is bold; a change beyond the noise carries ▲
//! (better) or ▼ (worse); a point not measured shows its reason in italics.

use std::fmt::Write;

use super::{Block, Cell, Chart, Doc, Mark, Table};
use crate::report::plot;

/// The file name of `chart` next to a report whose file stem is `stem`.
pub fn chart_file(stem: &str, chart: &Chart) -> String {
    format!("{stem}-{}.svg", chart.id)
}

/// The file name of flame graph `id` next to a report whose file stem is
/// `stem`.
pub fn flame_file(stem: &str, id: &str) -> String {
    format!("{stem}-flame-{id}.svg")
}

/// Every chart and flame graph of `doc` as `(file name, SVG text)`.
pub fn charts(doc: &Doc, stem: &str) -> Vec<(String, String)> {
    doc.sections
        .iter()
        .flat_map(|s| &s.blocks)
        .filter_map(|b| match b {
            Block::Chart(c) if !c.series.is_empty() => Some((chart_file(stem, c), plot::svg(c))),
            Block::Flame(f) => Some((flame_file(stem, &f.id), f.svg.clone())),
            _ => None,
        })
        .collect()
}

/// The document as Markdown; charts are images named by [`chart_file`]
/// with `stem`, or left out when `stem` is `None` (output to a terminal).
pub fn render(doc: &Doc, stem: Option<&str>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", escape_text(&doc.title));
    for (k, v) in &doc.facts {
        let _ = writeln!(out, "- **{}**: {}", escape_text(k), escape_text(v));
    }
    for s in &doc.sections {
        let _ = writeln!(out, "\n## {}", escape_text(&s.title));
        for b in &s.blocks {
            out.push('\n');
            match b {
                Block::Paragraph(p) => {
                    let _ = writeln!(out, "{}", escape_text(p));
                }
                Block::Note(n) => {
                    let _ = writeln!(out, "_{}_", escape_text(n).replace('_', "\\_"));
                }
                Block::Table(t) => table(&mut out, t),
                Block::Chart(c) => match stem {
                    Some(stem) if !c.series.is_empty() => {
                        let _ =
                            writeln!(out, "![{}]({})", escape_text(&c.title), chart_file(stem, c));
                    }
                    _ => {
                        let _ = writeln!(out, "_(chart: {})_", escape_text(&c.title));
                    }
                },
                Block::Flame(f) => match stem {
                    Some(stem) => {
                        let file = flame_file(stem, &f.id);
                        let _ = writeln!(out, "![{}]({file})", escape_text(&f.title));
                    }
                    None => {
                        let _ = writeln!(out, "_(flame graph: {})_", escape_text(&f.title));
                    }
                },
            }
        }
    }
    out
}

fn table(out: &mut String, t: &Table) {
    let _ = writeln!(out, "**{}**", escape_text(&t.caption));
    let parts = t.wrap.filter(|&w| w > 0).unwrap_or(t.columns.len().max(1));
    let mut start = 0;
    loop {
        let end = (start + parts).min(t.columns.len());
        out.push('\n');
        let _ = write!(out, "| {} |", escape_cell(&t.corner));
        for c in &t.columns[start..end] {
            let _ = write!(out, " {} |", escape_cell(c));
        }
        out.push_str("\n|---|");
        // Figures right-aligned; sentences (a reproduction's words) left.
        let align = if t.prose { "---|" } else { "--:|" };
        for _ in start..end {
            out.push_str(align);
        }
        out.push('\n');
        for r in &t.rows {
            let _ = write!(out, "| {} |", escape_cell(&r.label));
            for c in r.cells.iter().skip(start).take(end - start) {
                let _ = write!(out, " {} |", cell(c));
            }
            out.push('\n');
        }
        start = end;
        if start >= t.columns.len() {
            break;
        }
    }
    if t.rows
        .iter()
        .flat_map(|r| &r.cells)
        .any(|c| c.detail.is_some())
    {
        let _ = writeln!(
            out,
            "\n_Means of repeats; the spreads (sd, 95 % CI, range) are in the HTML, CSV and JSON reports._"
        );
    }
}

fn cell(c: &Cell) -> String {
    let t = escape_cell(&c.text);
    if t.is_empty() {
        return t;
    }
    match c.mark {
        Mark::None => t,
        Mark::Best => format!("**{t}**"),
        Mark::Better => format!("{t} ▲"),
        Mark::Worse => format!("{t} ▼"),
        Mark::Missing => format!("_{t}_"),
    }
}

/// Text outside tables: only what would start Markdown syntax is escaped.
fn escape_text(s: &str) -> String {
    let mut out = String::new();
    for ch in s.chars() {
        if matches!(ch, '*' | '`' | '<' | '>' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

fn escape_cell(s: &str) -> String {
    escape_text(s).replace('|', "\\|").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::doc::{Row, Section};

    #[test]
    fn wide_tables_wrap_and_marks_show() {
        let t = Table {
            caption: "tps".into(),
            corner: "clients".into(),
            columns: vec!["1".into(), "2".into(), "4".into()],
            rows: vec![Row {
                label: "a|b".into(),
                cells: vec![
                    Cell {
                        text: "10".into(),
                        detail: None,
                        mark: Mark::Best,
                    },
                    Cell {
                        text: "9".into(),
                        detail: None,
                        mark: Mark::Worse,
                    },
                    Cell {
                        text: "skipped: below 20 % of peak".into(),
                        detail: None,
                        mark: Mark::Missing,
                    },
                ],
            }],
            wrap: Some(2),
            prose: false,
        };
        let doc = Doc {
            title: "T".into(),
            facts: vec![],
            sections: vec![Section {
                title: "S".into(),
                blocks: vec![Block::Table(t)],
            }],
        };
        assert_eq!(
            render(&doc, None),
            "# T\n\n\n## S\n\n**tps**\n\n| clients | 1 | 2 |\n|---|--:|--:|\n| a\\|b | **10** | 9 ▼ |\n\n\
             | clients | 4 |\n|---|--:|\n| a\\|b | _skipped: below 20 % of peak_ |\n"
        );
    }
}
