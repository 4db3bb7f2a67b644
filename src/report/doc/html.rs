//! A [`Doc`] as one self-contained HTML page: inline CSS and SVG, no
//! scripts, no web fonts, nothing fetched — the file can be mailed,
//! published or opened offline as it is.
//!
//! Layout choices: a header with the facts; a table of contents when there
//! are enough sections to need one; numbers right-aligned in tabular
//! figures; a cell's detail (its spread) on hover, and as a second line
//! when "Show spread" is ticked (plain CSS, no JavaScript) or when printed;
//! marks carry a symbol as well as a colour, so they survive grey print and
//! colour blindness.

use std::fmt::Write;

use super::{Block, Cell, Doc, Mark, Table};
use crate::report::plot::{self, escape};

/// From this many sections on, the page starts with a table of contents.
const TOC_MIN_SECTIONS: usize = 3;

const CSS: &str = r#"
:root { --fg: #1f2328; --muted: #59636e; --line: #d0d7de; --head: #f6f8fa;
  --best: #dafbe1; --better: #1a7f37; --worse: #cf222e; --missing: #8c959f; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0 auto; max-width: 1100px; padding: 24px 20px 48px; color: var(--fg);
  background: #fff; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto,
  "Helvetica Neue", Arial, "Noto Sans", "DejaVu Sans", sans-serif; }
h1 { font-size: 26px; line-height: 1.25; margin: 0 0 12px; }
h2 { font-size: 20px; margin: 36px 0 12px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
header { border-bottom: 2px solid var(--fg); padding-bottom: 12px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 0; font-size: 14px; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
nav.toc { margin: 16px 0 0; font-size: 14px; }
nav.toc ol { margin: 4px 0 0; padding-left: 22px; columns: 2 220px; }
.controls { margin: 12px 0 0; font-size: 13px; color: var(--muted); }
p { margin: 8px 0; max-width: 75ch; }
p.note { font-size: 13px; color: var(--muted); }
figure { margin: 16px 0 20px; }
figcaption { font-weight: 600; margin-bottom: 6px; }
.part { font-weight: normal; color: var(--muted); }
.scroll { overflow-x: auto; margin-bottom: 10px; }
table { border-collapse: collapse; font-size: 14px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid var(--line); padding: 4px 8px; vertical-align: top; }
thead th { background: var(--head); text-align: right; white-space: nowrap; }
thead th.corner, tbody th { text-align: left; }
tbody th { font-weight: 600; background: #fbfcfd; white-space: nowrap; }
td { text-align: right; white-space: nowrap; }
table.prose th, table.prose td { text-align: left; white-space: normal; vertical-align: top; min-width: 8em; max-width: 32em; }
tbody tr:nth-child(even) td { background: #fcfcfd; }
td[title] { cursor: help; }
.detail { display: none; font-size: 11px; color: var(--muted); }
#show-detail:checked ~ main .detail { display: block; }
td.best { background: var(--best) !important; font-weight: 700; }
td.best::after { content: " \2605"; font-size: 11px; }
td.better { color: var(--better); font-weight: 600; }
td.better::before { content: "\25B2 "; font-size: 10px; }
td.worse { color: var(--worse); font-weight: 600; }
td.worse::before { content: "\25BC "; font-size: 10px; }
td.missing { color: var(--missing); font-style: italic; text-align: left; white-space: normal;
  min-width: 10ch; max-width: 16ch; background: repeating-linear-gradient(135deg, #fff, #fff 4px, #f3f4f6 4px, #f3f4f6 8px) !important; }
.legend { font-size: 12px; color: var(--muted); margin: 0; }
figure.chart svg { display: block; width: 100%; max-width: 920px; height: auto; }
footer { margin-top: 40px; font-size: 12px; color: var(--muted); border-top: 1px solid var(--line); padding-top: 8px; }
@media (max-width: 600px) {
  body { padding: 12px 10px 32px; font-size: 14px; }
  h1 { font-size: 21px; }
  dl.facts { grid-template-columns: 1fr; }
  dl.facts dd { margin-bottom: 4px; }
  tbody th { white-space: normal; min-width: 12ch; }
}
@media print {
  body { max-width: none; padding: 0; font-size: 11pt; }
  .controls, nav.toc { display: none; }
  .detail { display: block; }
  h2 { break-after: avoid; }
  figure { break-inside: avoid; }
  .scroll { overflow: visible; }
}
"#;

/// Section anchors: stable, readable, unique.
fn anchor(i: usize, title: &str) -> String {
    let slug: String = title
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let slug: Vec<&str> = slug.split('-').filter(|s| !s.is_empty()).collect();
    format!("s{}-{}", i + 1, slug.join("-"))
}

fn cell(out: &mut String, c: &Cell) {
    let mut classes = Vec::new();
    let mark_word = match c.mark {
        Mark::None => None,
        Mark::Best => Some("best"),
        Mark::Better => Some("better"),
        Mark::Worse => Some("worse"),
        Mark::Missing => Some("missing"),
    };
    classes.extend(mark_word);
    out.push_str("<td");
    if !classes.is_empty() {
        let _ = write!(out, " class=\"{}\"", classes.join(" "));
    }
    // The hover text names the mark too, for readers who cannot tell the colours.
    let title = match (mark_word, c.detail.as_deref()) {
        (Some(m), Some(d)) if c.mark != Mark::Missing => Some(format!("{d} ({m})")),
        (Some(m), None) if c.mark != Mark::Missing => Some(m.to_string()),
        (_, d) => d.map(str::to_string),
    };
    if let Some(t) = &title {
        let _ = write!(out, " title=\"{}\"", escape(t));
    }
    out.push('>');
    out.push_str(&escape(&c.text));
    if let Some(d) = &c.detail {
        let _ = write!(out, "<span class=\"detail\">{}</span>", escape(d));
    }
    out.push_str("</td>");
}

fn table(out: &mut String, t: &Table) {
    let n = t.columns.len();
    let part_width = t.wrap.filter(|&w| w > 0 && w < n).unwrap_or(n.max(1));
    let parts: Vec<(usize, usize)> = (0..n.max(1))
        .step_by(part_width)
        .map(|a| (a, (a + part_width).min(n)))
        .collect();
    out.push_str("<figure class=\"table\">");
    if !t.caption.is_empty() {
        let _ = write!(out, "<figcaption>{}</figcaption>", escape(&t.caption));
    }
    for (k, &(a, b)) in parts.iter().enumerate() {
        out.push_str(if t.prose {
            "<div class=\"scroll\"><table class=\"prose\">"
        } else {
            "<div class=\"scroll\"><table>"
        });
        if parts.len() > 1 {
            // Seed 000's halves: each part says which part it is.
            let _ = write!(
                out,
                "<caption class=\"part\" style=\"text-align:left\">part {} of {}: {} … {}</caption>",
                k + 1,
                parts.len(),
                escape(t.columns.get(a).map_or("", String::as_str)),
                escape(t.columns.get(b.saturating_sub(1)).map_or("", String::as_str))
            );
        }
        let _ = write!(
            out,
            "<thead><tr><th class=\"corner\" scope=\"col\">{}</th>",
            escape(&t.corner)
        );
        for c in &t.columns[a..b] {
            let _ = write!(out, "<th scope=\"col\">{}</th>", escape(c));
        }
        out.push_str("</tr></thead><tbody>");
        for r in &t.rows {
            let _ = write!(out, "<tr><th scope=\"row\">{}</th>", escape(&r.label));
            for i in a..b {
                match r.cells.get(i) {
                    Some(c) => cell(out, c),
                    None => out.push_str("<td></td>"),
                }
            }
            out.push_str("</tr>");
        }
        out.push_str("</tbody></table></div>");
    }
    let marks: Vec<Mark> = t
        .rows
        .iter()
        .flat_map(|r| r.cells.iter().map(|c| c.mark))
        .collect();
    let mut legend = Vec::new();
    if marks.contains(&Mark::Best) {
        legend.push("★ bold, green: best");
    }
    if marks.contains(&Mark::Better) {
        legend.push("▲ green: better than the baseline by more than the noise");
    }
    if marks.contains(&Mark::Worse) {
        legend.push("▼ red: worse than the baseline by more than the noise");
    }
    if marks.contains(&Mark::Missing) {
        legend.push("hatched, italic: not measured (the reason is given)");
    }
    if t.rows
        .iter()
        .flat_map(|r| &r.cells)
        .any(|c| c.detail.is_some())
    {
        legend.push("hover a value for its spread");
    }
    if !legend.is_empty() {
        let _ = write!(
            out,
            "<p class=\"legend\">{}</p>",
            escape(&legend.join(" · "))
        );
    }
    out.push_str("</figure>");
}

/// The whole page.
pub fn render(doc: &Doc) -> String {
    let mut o = String::new();
    let title = if doc.title.is_empty() {
        "dbsweep report"
    } else {
        &doc.title
    };
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"generator\" content=\"dbsweep {}\">\
         <title>{}</title><style>{CSS}</style></head>\n<body>\n",
        env!("CARGO_PKG_VERSION"),
        escape(title)
    );
    let _ = write!(o, "<header><h1>{}</h1>", escape(title));
    if !doc.facts.is_empty() {
        o.push_str("<dl class=\"facts\">");
        for (k, v) in &doc.facts {
            let _ = write!(o, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(v));
        }
        o.push_str("</dl>");
    }
    o.push_str("</header>\n");
    if doc.sections.len() >= TOC_MIN_SECTIONS {
        o.push_str("<nav class=\"toc\" aria-label=\"Contents\"><strong>Contents</strong><ol>");
        for (i, s) in doc.sections.iter().enumerate() {
            let _ = write!(
                o,
                "<li><a href=\"#{}\">{}</a></li>",
                anchor(i, &s.title),
                escape(&s.title)
            );
        }
        o.push_str("</ol></nav>\n");
    }
    let has_detail = doc.sections.iter().flat_map(|s| &s.blocks).any(|b| {
        matches!(b, Block::Table(t) if t.rows.iter().flat_map(|r| &r.cells).any(|c| c.detail.is_some()))
    });
    if has_detail {
        // Before <main>: the CSS shows the details with `:checked ~ main`.
        o.push_str(
            "<input type=\"checkbox\" id=\"show-detail\" class=\"controls\">\
             <label for=\"show-detail\" class=\"controls\"> Show spread under each value</label>\n",
        );
    }
    o.push_str("<main>\n");
    for (i, s) in doc.sections.iter().enumerate() {
        let _ = writeln!(
            o,
            "<section id=\"{}\"><h2>{}</h2>",
            anchor(i, &s.title),
            escape(&s.title)
        );
        for b in &s.blocks {
            match b {
                Block::Paragraph(p) => {
                    let _ = write!(o, "<p>{}</p>", escape(p));
                }
                Block::Note(p) => {
                    let _ = write!(o, "<p class=\"note\">{}</p>", escape(p));
                }
                Block::Table(t) => table(&mut o, t),
                Block::Chart(c) => {
                    let _ = write!(
                        o,
                        "<figure class=\"chart\" id=\"chart-{}\">{}</figure>",
                        escape(&c.id),
                        plot::svg(c)
                    );
                }
                // An SVG document of its own (a data URL: the report stays
                // one file), so the graph's script (search, zoom) runs and
                // its ids meet no other graph's.
                Block::Flame(f) => {
                    use base64::Engine;
                    let _ = write!(
                        o,
                        "<figure class=\"flame\" id=\"flame-{}\"><iframe style=\"display: block; width: 100%; max-width: 1220px; border: 0\" title=\"{}\" height=\"{}\" src=\"data:image/svg+xml;base64,{}\"></iframe></figure>",
                        escape(&f.id),
                        escape(&f.title),
                        plot::flame::height(&f.svg).unwrap_or(600) + 8,
                        base64::engine::general_purpose::STANDARD.encode(&f.svg)
                    );
                }
            }
            o.push('\n');
        }
        o.push_str("</section>\n");
    }
    let _ = write!(
        o,
        "</main>\n<footer>Generated by dbsweep {}. Self-contained: no scripts, fonts or images are loaded from elsewhere.</footer>\n</body></html>\n",
        env!("CARGO_PKG_VERSION")
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::doc::{Axis, Chart, ChartKind, Row, Section, Series};

    fn c(text: &str, mark: Mark, detail: Option<&str>) -> Cell {
        Cell {
            text: text.into(),
            detail: detail.map(Into::into),
            mark,
        }
    }

    fn doc() -> Doc {
        let columns: Vec<String> = [1, 2, 4, 8, 16, 32].iter().map(|n| n.to_string()).collect();
        let row = |label: &str, base: f64| Row {
            label: label.into(),
            cells: (0..6)
                .map(|i| {
                    c(
                        &format!("{:.1}", base * (i + 1) as f64),
                        Mark::None,
                        Some("± 1.0 (sd, 3 repeats)"),
                    )
                })
                .collect(),
        };
        let mut r1 = row("MariaDB <11>", 100.0);
        r1.cells[5] = c("1234.5", Mark::Best, Some("± 3.2"));
        let mut r2 = row("PostgreSQL 16", 90.0);
        r2.cells[4] = c("stopped: below 20 % of peak", Mark::Missing, None);
        r2.cells[3] = c("+12 %", Mark::Better, None);
        r2.cells[2] = c("-9 %", Mark::Worse, None);
        Doc {
            title: "Study \"quickstart\" & more".into(),
            facts: vec![("machine".into(), "4 × Xeon".into())],
            sections: vec![
                Section {
                    title: "Throughput".into(),
                    blocks: vec![
                        Block::Paragraph("PostgreSQL is slower than the best by 10 %".into()),
                        Block::Table(Table {
                            caption: "transactions/s by clients".into(),
                            corner: "target".into(),
                            columns,
                            rows: vec![r1, r2],
                            wrap: Some(4),
                            prose: false,
                        }),
                        Block::Note("mean of 3 repeats".into()),
                    ],
                },
                Section {
                    title: "Plots".into(),
                    blocks: vec![Block::Chart(Chart {
                        id: "tps".into(),
                        title: "tps".into(),
                        x: Axis::log("clients"),
                        y: Axis::linear("tps"),
                        kind: ChartKind::Line,
                        series: vec![Series {
                            name: "a".into(),
                            points: vec![(1.0, 1.0), (2.0, 2.0)],
                            spread: None,
                            reference: false,
                        }],
                    })],
                },
                Section {
                    title: "Conclusions".into(),
                    blocks: vec![],
                },
            ],
        }
    }

    #[test]
    fn renders_a_self_contained_page() {
        let h = render(&doc());
        assert!(h.starts_with("<!DOCTYPE html>"));
        assert!(h.trim_end().ends_with("</html>"));
        for banned in ["<script", "http://", "https://", "@import", "url("] {
            // The SVG namespace is the one URL allowed: it is a name, not fetched.
            let n = h.matches(banned).count();
            let allowed = if banned == "http://" {
                h.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
            } else {
                0
            };
            assert_eq!(n, allowed, "{banned}");
        }
        assert_eq!(h.matches("<svg").count(), 1);
        assert_eq!(h.matches("<section").count(), 3);
        // Three sections: a table of contents linking each.
        assert!(h.contains("<a href=\"#s1-throughput\">Throughput</a>"));
        assert!(h.contains("<section id=\"s1-throughput\">"));
    }

    #[test]
    fn wraps_tables_into_parts() {
        let h = render(&doc());
        assert_eq!(h.matches("<table>").count(), 2);
        assert!(h.contains("part 1 of 2: 1 … 8"));
        assert!(h.contains("part 2 of 2: 16 … 32"));
        // Each part repeats the row labels; 2 rows × 2 parts.
        assert_eq!(h.matches("<th scope=\"row\">").count(), 4);
        assert_eq!(h.matches("<td").count(), 12);
    }

    #[test]
    fn marks_cells_with_class_symbol_legend_and_detail() {
        let h = render(&doc());
        assert!(h.contains("<td class=\"best\" title=\"± 3.2 (best)\">1234.5<span class=\"detail\">± 3.2</span></td>"));
        assert!(h.contains("<td class=\"missing\">stopped: below 20 % of peak</td>"));
        assert!(h.contains("<td class=\"better\" title=\"better\">+12 %</td>"));
        assert!(h.contains("<td class=\"worse\" title=\"worse\">-9 %</td>"));
        assert!(h.contains("★ bold, green: best"));
        assert!(h.contains("hatched, italic: not measured"));
        assert!(h.contains("id=\"show-detail\""));
    }

    #[test]
    fn escapes_all_text() {
        let h = render(&doc());
        assert!(h.contains("<title>Study &quot;quickstart&quot; &amp; more</title>"));
        assert!(h.contains("MariaDB &lt;11&gt;"));
        assert!(!h.contains("<11>"));
    }

    #[test]
    fn short_reports_have_no_contents_and_no_spread_toggle() {
        let mut d = doc();
        d.sections.truncate(2);
        d.sections[0]
            .blocks
            .retain(|b| !matches!(b, Block::Table(_)));
        let h = render(&d);
        assert!(!h.contains("nav class=\"toc\""));
        assert!(!h.contains("show-detail\""));
    }
}
