//! A reproduction's verdicts and deviations as document blocks: the
//! publication's conclusions, each beside its own words and where they
//! are; our own observations in a table of their own after them, never
//! among the publication's; and the table of how the study differs from
//! the publication, which opens the reproduction.

use super::model::{ConclusionRow, Reproduction};
use super::statement::Verdict;
use crate::report::doc::{Block, Cell, Mark, Row, Table};
use crate::study::repro::Deviation;

fn mark(v: &Verdict) -> Mark {
    match v {
        Verdict::Holds(_) => Mark::Better,
        Verdict::DoesNotHold(_) => Mark::Worse,
        Verdict::Inconclusive(_) => Mark::None,
        Verdict::NotMeasurable(_) => Mark::Missing,
    }
}

/// A verdict's cell: its label, the numbers (and, where the verdict is
/// decided, the margin) as detail.
fn cell(v: &Verdict, margin: Option<&super::statement::Margin>) -> Cell {
    let mut detail = v.why().to_string();
    if let Some(m) = margin {
        let word = match v {
            Verdict::Holds(_) => "holds",
            Verdict::DoesNotHold(_) => "fails",
            _ => "",
        };
        if !word.is_empty() {
            detail.push_str(&format!("; {word} {}", m.describe()));
        }
    }
    Cell {
        text: v.label().to_string(),
        detail: Some(detail),
        mark: mark(v),
    }
}

fn words(c: &ConclusionRow) -> String {
    match (&c.quote, &c.source) {
        (Some(q), Some(s)) => format!("“{q}” ({s})"),
        (Some(q), None) => format!("“{q}”"),
        _ => String::new(),
    }
}

/// The statement on one line (a study file may break a long one).
fn statement_cell(c: &ConclusionRow) -> Cell {
    Cell::plain(c.check.as_deref().map_or("—".into(), |s| {
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    }))
}

/// The conclusions table and the observations table.
pub fn tables(r: &Reproduction) -> Vec<Block> {
    let mut out = Vec::new();
    if !r.conclusions.is_empty() {
        out.push(Block::Table(Table {
            caption: format!(
                "{}: every conclusion it states, in its words, checked on its own numbers and on this study's",
                r.label
            ),
            corner: "conclusion".into(),
            columns: ["its words (where)", "statement", "published", "here"]
                .map(String::from)
                .to_vec(),
            rows: r
                .conclusions
                .iter()
                .map(|c| Row {
                    label: c.text.clone(),
                    cells: vec![
                        Cell::plain(words(c)),
                        statement_cell(c),
                        cell(&c.seed, c.seed_margin.as_ref()),
                        cell(&c.here, c.here_margin.as_ref()),
                    ],
                })
                .collect(),
            prose: true,
            ..Table::default()
        }));
    }
    if !r.observations.is_empty() {
        out.push(Block::Table(Table {
            caption: format!(
                "Our observations (not the publication's conclusions: {} did not state them)",
                r.label
            ),
            corner: "observation".into(),
            columns: ["statement", "published", "here"]
                .map(String::from)
                .to_vec(),
            rows: r
                .observations
                .iter()
                .map(|c| Row {
                    label: c.text.clone(),
                    cells: vec![
                        statement_cell(c),
                        cell(&c.seed, c.seed_margin.as_ref()),
                        cell(&c.here, c.here_margin.as_ref()),
                    ],
                })
                .collect(),
            prose: true,
            ..Table::default()
        }));
    }
    out
}

/// The deviations table, first in a reproduction.
pub fn deviations(label: &str, d: &[Deviation]) -> Vec<Block> {
    if d.is_empty() {
        return Vec::new();
    }
    vec![Block::Table(Table {
        caption: format!("How this study differs from {label}"),
        corner: "what".into(),
        columns: ["the publication", "this study", "why"]
            .map(String::from)
            .to_vec(),
        rows: d
            .iter()
            .map(|d| Row {
                label: d.what.clone(),
                cells: vec![
                    Cell::plain(d.seed.clone()),
                    Cell::plain(d.ours.clone()),
                    Cell::plain(d.why.clone()),
                ],
            })
            .collect(),
        prose: true,
        ..Table::default()
    })]
}

/// One sentence per conclusion and observation for the report's summary.
pub fn sentences(r: &Reproduction) -> Vec<String> {
    let one = |c: &ConclusionRow, whose: &str| {
        let here = c.here.label();
        format!(
            "{}{whose}: \"{}\"{} — published: {}; here: {here} ({}).",
            r.label,
            c.text,
            c.source
                .as_deref()
                .map_or(String::new(), |s| format!(" ({s})")),
            c.seed.label(),
            c.here.why()
        )
    };
    r.conclusions
        .iter()
        .map(|c| one(c, ""))
        .chain(r.observations.iter().map(|c| one(c, ", our observation")))
        .collect()
}

/// `dbsweep study --check-statements`: every conclusion evaluated on the
/// publication's own numbers (its first reference), with the numbers it
/// compares with and the margin by which it holds or fails — the
/// publication's conclusions first, then our observations.
pub fn check_listing(spec: &crate::study::repro::ReproSpec) -> String {
    use super::published::RefCurves;
    use super::statement;
    let theirs = spec.references.first().map(|r| RefCurves {
        data: &r.data,
        metric: r.metric.clone(),
    });
    let mut out = String::new();
    let mut tally = std::collections::BTreeMap::new();
    let (seeds, ours): (Vec<_>, Vec<_>) = spec.conclusions.iter().partition(|c| c.is_seeds());
    for (title, list) in [
        ("The publication's conclusions", seeds),
        ("Our observations (not the publication's)", ours),
    ] {
        if list.is_empty() {
            continue;
        }
        out.push_str(&format!("{title}:\n"));
        for (i, c) in list.iter().enumerate() {
            out.push_str(&format!("\n{:>3}. {}\n", i + 1, c.text));
            if let (Some(q), Some(s)) = (&c.quote, &c.source) {
                out.push_str(&format!("     words:     “{q}” ({s})\n"));
            }
            let Some(check) = &c.check else {
                let why = c.unmeasurable.as_deref().unwrap_or("");
                out.push_str(&format!("     not measurable: {why}\n"));
                *tally.entry("not measurable (reason given)").or_insert(0) += 1;
                continue;
            };
            out.push_str(&format!("     statement: {check}\n"));
            let Ok(st) = statement::parse(check) else {
                continue;
            };
            let nums = st.numbers();
            out.push_str(&format!(
                "     numbers:   {}\n",
                if nums.is_empty() {
                    "none (a plain comparison)".to_string()
                } else {
                    let foreign = c
                        .quote
                        .as_deref()
                        .map(|q| crate::study::repro::foreign_numbers(&st, q));
                    nums.iter()
                        .map(|n| {
                            let whose = match &foreign {
                                Some(f) if !f.contains(n) => " (the publication's)",
                                Some(_) => " (not the publication's!)",
                                None => " (ours)",
                            };
                            format!("{n}{whose}")
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ));
            let (v, m) = match &theirs {
                Some(t) => statement::check(&st, t),
                None => (
                    Verdict::NotMeasurable("no published numbers (no [[reference]])".into()),
                    None,
                ),
            };
            let margin = match (&v, m) {
                (Verdict::Holds(_), Some(m)) => format!(" {}", m.describe()),
                (Verdict::DoesNotHold(_), Some(m)) => format!(", short {}", m.describe()),
                _ => String::new(),
            };
            out.push_str(&format!(
                "     published: {}{margin} — {}\n",
                v.label(),
                v.why()
            ));
            *tally.entry(v.label()).or_insert(0) += 1;
        }
        out.push('\n');
    }
    let counts: Vec<String> = tally.iter().map(|(k, n)| format!("{n} {k}")).collect();
    out.push_str(&format!(
        "{} statement(s) on the published numbers: {}\n",
        spec.conclusions.len(),
        if counts.is_empty() {
            "none".to_string()
        } else {
            counts.join(", ")
        }
    ));
    out
}
