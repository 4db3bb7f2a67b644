//! The study report as one self-contained HTML file. A minimal layout (a
//! `<table>` per table, the charts inline) so the report works end to end;
//! the full layout replaces it.

use std::fmt::Write;

use super::doc::{Block, Doc, Mark};
use super::plot;

pub fn render(doc: &Doc) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}</title></head><body>\n<h1>{}</h1>\n<dl>",
        esc(&doc.title),
        esc(&doc.title)
    );
    for (k, v) in &doc.facts {
        let _ = write!(out, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v));
    }
    out.push_str("</dl>\n");
    for s in &doc.sections {
        let _ = writeln!(out, "<section><h2>{}</h2>", esc(&s.title));
        for b in &s.blocks {
            match b {
                Block::Paragraph(p) => {
                    let _ = writeln!(out, "<p>{}</p>", esc(p));
                }
                Block::Note(n) => {
                    let _ = writeln!(out, "<p><small>{}</small></p>", esc(n));
                }
                Block::Table(t) => {
                    let _ = write!(
                        out,
                        "<table><caption>{}</caption><tr><th>{}</th>",
                        esc(&t.caption),
                        esc(&t.corner)
                    );
                    for c in &t.columns {
                        let _ = write!(out, "<th>{}</th>", esc(c));
                    }
                    out.push_str("</tr>");
                    for r in &t.rows {
                        let _ = write!(out, "<tr><th>{}</th>", esc(&r.label));
                        for c in &r.cells {
                            let style = match c.mark {
                                Mark::Best => " style=\"font-weight:bold\"",
                                Mark::Better => " style=\"color:green\"",
                                Mark::Worse => " style=\"color:red\"",
                                Mark::Missing => " style=\"color:gray\"",
                                Mark::None => "",
                            };
                            let title = c
                                .detail
                                .as_ref()
                                .map_or(String::new(), |d| format!(" title=\"{}\"", esc(d)));
                            let _ = write!(out, "<td{style}{title}>{}</td>", esc(&c.text));
                        }
                        out.push_str("</tr>");
                    }
                    out.push_str("</table>\n");
                }
                Block::Chart(c) => {
                    if !c.series.is_empty() {
                        out.push_str(&plot::svg(c));
                    }
                }
            }
        }
        out.push_str("</section>\n");
    }
    out.push_str("</body></html>\n");
    out
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
