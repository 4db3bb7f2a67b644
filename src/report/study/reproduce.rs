//! A study as a reproduction: the published figures of its
//! `[[reference]]` files beside its own series — in the publication's
//! layout, and in shape (each series over its own peak, the publication's
//! dashed) — the same derived figures for both (clients at the peak, sag,
//! collapse, rank, how much slower than the best, CPU scalability), and the
//! publication's conclusions (`[[conclusion]]`) checked on its own numbers
//! and on ours. The published numbers are never mixed into the study's
//! analysis: they only appear here, labelled with their source.

use std::collections::BTreeSet;

use super::measured::Measured;
use super::model::{ConclusionRow, RefSpec, Reproduction};
use super::reference::{self, RefCurves, RefData};
use super::statement::{self, Curves, Verdict};
use super::StudyData;
use crate::report::doc::{Axis, Block, Cell, Chart, ChartKind, Mark, Row, Scale, Series, Table};

/// A `[[conclusion]]`.
#[derive(Debug, Clone)]
pub struct ConclusionSpec {
    pub text: String,
    pub check: String,
}

/// The `[[reference]]` and `[[conclusion]]` tables of a study file (as
/// the loader validated them; read leniently here).
pub fn specs(file_text: &str) -> (Vec<RefSpec>, Vec<ConclusionSpec>) {
    let Ok(v) = file_text.parse::<toml::Table>() else {
        return (Vec::new(), Vec::new());
    };
    let pairs = |t: Option<&toml::Value>| -> Vec<(String, String)> {
        t.and_then(|t| t.as_table())
            .map(|t| {
                t.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default()
    };
    let refs = v
        .get("reference")
        .and_then(|r| r.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|r| {
                    Some(RefSpec {
                        file: r.get("file")?.as_str()?.to_string(),
                        label: r.get("label").and_then(|l| l.as_str()).map(String::from),
                        metric: r
                            .get("metric")
                            .and_then(|m| m.as_str())
                            .unwrap_or("tps")
                            .to_string(),
                        map: pairs(r.get("map")),
                        cpus: pairs(r.get("cpus")),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let conclusions = v
        .get("conclusion")
        .and_then(|r| r.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|c| {
                    Some(ConclusionSpec {
                        text: c.get("text")?.as_str()?.to_string(),
                        check: c.get("check")?.as_str()?.to_string(),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    (refs, conclusions)
}

/// The study's reproductions: one per reference it carries (stored, or
/// given to `report --reference`), with the conclusions checked.
pub fn reproductions(data: &StudyData) -> Result<Vec<Reproduction>, String> {
    let (mut specs, conclusions) = specs(&data.info.file_text);
    // A reference given on the command line without a [[reference]] of
    // its own: shown, mapped to nothing.
    for (file, _) in &data.references {
        if !specs.iter().any(|s| &s.file == file) {
            specs.push(RefSpec {
                file: file.clone(),
                metric: "tps".into(),
                ..RefSpec::default()
            });
        }
    }
    let mut out = Vec::new();
    for spec in specs {
        let Some((_, text)) = data.references.iter().find(|(f, _)| *f == spec.file) else {
            return Err(format!(
                "the study names the reference {} but the results database does not hold it (a study run before dbsweep stored references): give it with --reference {}",
                spec.file, spec.file
            ));
        };
        let rdata = reference::parse(&spec.file, text)?;
        let label = spec
            .label
            .clone()
            .unwrap_or_else(|| format!("published figures ({})", spec.file));
        let theirs = RefCurves {
            data: &rdata,
            metric: spec.metric.clone(),
        };
        let ours = Measured { data, spec: &spec };
        // The conclusions are the publication's: checked against the
        // first reference (the publication's own figures).
        let rows = conclusions
            .iter()
            .filter(|_| out.is_empty())
            .map(|c| {
                let (seed, here) = match statement::parse(&c.check) {
                    Ok(st) => (
                        statement::verdict(&st, &theirs),
                        statement::verdict(&st, &ours),
                    ),
                    Err((_, e)) => (Verdict::NotMeasurable(e.clone()), Verdict::NotMeasurable(e)),
                };
                ConclusionRow {
                    text: c.text.clone(),
                    check: c.check.clone(),
                    seed,
                    here,
                }
            })
            .collect();
        out.push(Reproduction {
            file: spec.file.clone(),
            label,
            metric: spec.metric.clone(),
            map: spec.map.clone(),
            data: rdata,
            conclusions: rows,
            spec,
        });
    }
    Ok(out)
}

/// A curve with its column name and whether it is published.
type Labelled = (String, bool, Vec<(u32, f64)>);

/// A slice of a reference: one workload on one CPU configuration.
type Slice = (Option<String>, Option<String>);

fn slices(d: &RefData, metric: &str) -> Vec<Slice> {
    let mut out: Vec<Slice> = Vec::new();
    for p in d.points.iter().filter(|p| p.metric == metric) {
        let s = (p.workload.clone(), p.cpus.clone());
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

fn fmt(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.2}"))
}

/// The document blocks of one reproduction.
pub fn blocks(r: &Reproduction, data: &StudyData) -> Vec<Block> {
    let mut blocks = vec![Block::Paragraph(format!(
        "Published figures: {} ({}, {} values of {} series). They are shown beside this study's series and compared in shape; none enters the study's own analysis.{}",
        r.label,
        r.file,
        r.data.points.len(),
        r.data.series().len(),
        if r.map.is_empty() {
            String::new()
        } else {
            format!(
                " Compared: {}.",
                r.map
                    .iter()
                    .map(|(o, t)| format!("{o} with {t}"))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        }
    ))];
    let theirs = RefCurves {
        data: &r.data,
        metric: r.metric.clone(),
    };
    let ours = Measured {
        data,
        spec: &r.spec,
    };
    for (workload, cpus) in slices(&r.data, &r.metric) {
        let title = [workload.clone(), cpus.clone()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", ");
        let title = if title.is_empty() {
            String::new()
        } else {
            format!(" ({title})")
        };
        let names: Vec<&str> = r
            .data
            .series()
            .into_iter()
            .filter(|s| {
                theirs
                    .curve(s, &r.metric, workload.as_deref(), cpus.as_deref())
                    .is_ok()
            })
            .collect();
        let mut columns = Vec::new();
        let mut curves: Vec<Labelled> = Vec::new();
        for s in &names {
            let c = theirs
                .curve(s, &r.metric, workload.as_deref(), cpus.as_deref())
                .unwrap_or_default();
            columns.push(format!("{s} (published)"));
            curves.push((format!("{s} (published)"), true, c));
            if let Some(o) = ours.ours(s) {
                if let Ok(c) = ours.curve(s, &r.metric, workload.as_deref(), cpus.as_deref()) {
                    columns.push(format!("{o} (here)"));
                    curves.push((format!("{o} (here)"), false, c));
                }
            }
        }
        let xs: BTreeSet<u32> = curves
            .iter()
            .flat_map(|c| c.2.iter().map(|p| p.0))
            .collect();
        let rows = xs
            .iter()
            .map(|x| Row {
                label: x.to_string(),
                cells: curves
                    .iter()
                    .map(|c| Cell::plain(fmt(c.2.iter().find(|p| p.0 == *x).map(|p| p.1))))
                    .collect(),
            })
            .collect();
        blocks.push(Block::Table(Table {
            caption: format!(
                "{}: {}{title}, published beside measured",
                r.label, r.metric
            ),
            corner: "clients".into(),
            columns,
            rows,
            ..Table::default()
        }));
        let series = curves
            .iter()
            .map(|(name, reference, c)| {
                let peak = c.iter().map(|p| p.1).fold(0.0, f64::max);
                Series {
                    name: name.clone(),
                    points: c
                        .iter()
                        .filter(|_| peak > 0.0)
                        .map(|p| (f64::from(p.0), p.1 / peak))
                        .collect(),
                    spread: None,
                    reference: *reference,
                }
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        let wide = xs
            .first()
            .zip(xs.last())
            .is_some_and(|(a, b)| *b >= 20 * (*a).max(1));
        blocks.push(Block::Chart(Chart {
            id: format!("ref-{}", super::names::slug(&format!("{}-{title}", r.file))),
            title: format!(
                "{}{title}: shape, each series over its own peak (published dashed)",
                r.label
            ),
            x: Axis::new("clients", Scale::log_if(wide)),
            y: Axis::linear("share of the series' peak"),
            kind: ChartKind::Line,
            series,
        }));
        blocks.push(Block::Table(shape_table(
            &r.label,
            &title,
            &names,
            &theirs,
            &ours,
            &r.metric,
            workload.as_deref(),
            cpus.as_deref(),
        )));
    }
    if !r.conclusions.is_empty() {
        let mark = |v: &Verdict| match v {
            Verdict::Holds(_) => Mark::Better,
            Verdict::DoesNotHold(_) => Mark::Worse,
            Verdict::NotMeasurable(_) => Mark::Missing,
        };
        let cell = |v: &Verdict| Cell {
            text: v.label().to_string(),
            detail: Some(v.why().to_string()),
            mark: mark(v),
        };
        blocks.push(Block::Table(Table {
            caption: format!(
                "{}: its conclusions, checked on its own numbers and on this study's",
                r.label
            ),
            corner: "conclusion".into(),
            columns: ["statement", "published", "here"]
                .map(String::from)
                .to_vec(),
            rows: r
                .conclusions
                .iter()
                .map(|c| Row {
                    label: c.text.clone(),
                    cells: vec![Cell::plain(c.check.clone()), cell(&c.seed), cell(&c.here)],
                })
                .collect(),
            ..Table::default()
        }));
    }
    blocks
}

/// The derived figures of each published series and its measured
/// counterpart on one slice.
#[allow(clippy::too_many_arguments)]
fn shape_table(
    label: &str,
    title: &str,
    names: &[&str],
    theirs: &RefCurves<'_>,
    ours: &Measured<'_>,
    metric: &str,
    workload: Option<&str>,
    cpus: Option<&str>,
) -> Table {
    // Sag at the highest client count both sides measured, so the two
    // sags compare like with like; scalability over every CPU set.
    let figure = |d: &dyn Curves, s: &str, f: statement::Func, n: Option<u32>| -> String {
        let every_cpus = f == statement::Func::Scalability;
        let t = statement::Term::Call {
            func: f,
            series: s.to_string(),
            n,
            workload: workload.map(String::from),
            cpus: if every_cpus {
                None
            } else {
                cpus.map(String::from)
            },
            metric: Some(metric.to_string()),
        };
        match statement::eval(&t, d) {
            Ok((v, _)) if v.is_infinite() => "never".into(),
            Ok((v, _))
                if f == statement::Func::PeakClients
                    || f == statement::Func::Collapse
                    || f == statement::Func::Rank =>
            {
                format!("{v:.0}")
            }
            Ok((v, _)) => format!("{v:.2}"),
            Err(_) => "-".into(),
        }
    };
    use statement::Func::*;
    let funcs = [Peak, PeakClients, Sag, Collapse, Rank, Slower, Scalability];
    let xs = |d: &dyn Curves, s: &str| -> BTreeSet<u32> {
        d.curve(s, metric, workload, cpus)
            .map(|c| c.iter().map(|p| p.0).collect())
            .unwrap_or_default()
    };
    let mut rows = Vec::new();
    for s in names {
        let mine = ours.ours(s);
        let theirs_x = xs(theirs, s);
        let common = match mine {
            Some(_) => theirs_x.intersection(&xs(ours, s)).max().copied(),
            None => theirs_x.last().copied(),
        };
        let row = |d: &dyn Curves| -> Vec<Cell> {
            funcs
                .iter()
                .map(|f| {
                    let n = (*f == Sag).then_some(common).flatten();
                    if *f == Sag && n.is_none() {
                        return Cell::plain("-");
                    }
                    Cell::plain(figure(d, s, *f, n))
                })
                .collect()
        };
        rows.push(Row {
            label: format!("{s} (published)"),
            cells: row(theirs),
        });
        if let Some(o) = mine {
            rows.push(Row {
                label: format!("{o} (here)"),
                cells: row(ours),
            });
        }
    }
    Table {
        caption: format!(
            "{label}{title}: the same figures for both — peak, clients at the peak, sag % at the highest client count both measured, collapse (below half the peak), rank and % slower than the best, CPU scalability (peak on the last CPU configuration over the first)"
        ),
        corner: "series".into(),
        columns: ["peak", "at", "sag %", "collapse", "rank", "slower %", "scalability"]
            .map(String::from)
            .to_vec(),
        rows,
        ..Table::default()
    }
}

/// The conclusions' sentences for the report's summary.
pub fn sentences(r: &Reproduction) -> Vec<String> {
    r.conclusions
        .iter()
        .map(|c| {
            format!(
                "{}: \"{}\" — published: {}; here: {} ({}).",
                r.label,
                c.text,
                c.seed.label(),
                c.here.label(),
                c.here.why()
            )
        })
        .collect()
}
