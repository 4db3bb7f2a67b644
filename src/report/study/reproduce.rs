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
use super::model::{ConclusionRow, RefCompared, RefSpec, Reproduction};
use super::published::RefCurves;
use super::statement::{self, Curves, Verdict};
use super::StudyData;
use crate::report::doc::{Axis, Block, Cell, Chart, ChartKind, Row, Scale, Series, Table};
use crate::study::repro::published::RefData;
use crate::study::repro::ConclusionSpec;

/// The study's reproduction, computed once from the spec it carries
/// (validated when the study was loaded, stored with its results): every
/// reference beside the study's series, every conclusion checked on the
/// publication's numbers and on ours. None when the study reproduces
/// nothing.
pub fn reproduction(data: &StudyData) -> Option<Reproduction> {
    let spec = data.reproduction.as_ref()?;
    if spec.is_empty() {
        return None;
    }
    let references: Vec<RefCompared> = spec
        .references
        .iter()
        .map(|r| RefCompared {
            file: r.file.clone(),
            label: r.label.clone().unwrap_or_else(|| {
                if r.file.is_empty() {
                    "the publication".to_string()
                } else {
                    format!("published figures ({})", r.file)
                }
            }),
            metric: r.metric.clone(),
            map: r.map.clone(),
            data: r.data.clone(),
            spec: r.clone(),
        })
        .collect();
    // The conclusions are the publication's: checked against the first
    // reference (its own figures); without one, on our series by their
    // own names.
    let ours_spec = spec
        .references
        .first()
        .cloned()
        .unwrap_or_else(|| identity(data));
    let theirs = spec
        .references
        .first()
        .filter(|r| !r.data.points.is_empty())
        .map(|r| RefCurves {
            data: &r.data,
            metric: r.metric.clone(),
        });
    let rows: Vec<ConclusionRow> = spec
        .conclusions
        .iter()
        .map(|c| row(c, theirs.as_ref(), &ours_spec, data))
        .collect();
    let (conclusions, observations) = rows.into_iter().partition(|r| r.quote.is_some());
    Some(Reproduction {
        label: references
            .first()
            .map(|r| r.label.clone())
            .unwrap_or_else(|| {
                if data.info.description.is_empty() {
                    data.info.name.clone()
                } else {
                    data.info.description.clone()
                }
            }),
        references,
        conclusions,
        observations,
        deviations: spec.deviations.clone(),
    })
}

/// Our series under their own names (`target/variant`), for conclusions
/// of a publication that printed no numbers.
fn identity(data: &StudyData) -> RefSpec {
    let mut map: Vec<(String, String)> = Vec::new();
    for p in data.points.iter().chain(&data.paced) {
        let name = format!("{}/{}", p.row.target, p.row.variant);
        if !map.iter().any(|(o, _)| *o == name) {
            map.push((name.clone(), name));
        }
    }
    let users = data.points.is_empty() && !data.paced.is_empty();
    RefSpec {
        metric: if users { "bts" } else { "tps" }.into(),
        map,
        ..RefSpec::default()
    }
}

fn row(
    c: &ConclusionSpec,
    theirs: Option<&RefCurves<'_>>,
    ours_spec: &RefSpec,
    data: &StudyData,
) -> ConclusionRow {
    let base = ConclusionRow {
        text: c.text.clone(),
        quote: c.quote.clone(),
        source: c.source.clone(),
        check: c.check.clone(),
        seed: Verdict::NotMeasurable(String::new()),
        seed_margin: None,
        here: Verdict::NotMeasurable(String::new()),
        here_margin: None,
    };
    let Some(check) = &c.check else {
        let why = c
            .unmeasurable
            .clone()
            .unwrap_or_else(|| "no statement checks it".into());
        return ConclusionRow {
            seed: Verdict::NotMeasurable(why.clone()),
            here: Verdict::NotMeasurable(why),
            ..base
        };
    };
    let st = match statement::parse(check) {
        Ok(st) => st,
        // Validated when the study was loaded; a stored spec of another
        // version may still say something this one cannot read.
        Err((_, e)) => {
            return ConclusionRow {
                seed: Verdict::NotMeasurable(e.clone()),
                here: Verdict::NotMeasurable(e),
                ..base
            }
        }
    };
    let (seed, seed_margin) = match theirs {
        Some(t) => statement::check(&st, t),
        None => (
            Verdict::NotMeasurable("the publication printed no numbers for it".into()),
            None,
        ),
    };
    let ours = Measured::new(data, ours_spec);
    let (_, here_margin) = statement::check(&st, &ours);
    let blocks: Vec<Measured<'_>> = (0..ours.blocks()).map(|k| ours.block(k)).collect();
    let views: Vec<&dyn Curves> = blocks.iter().map(|b| b as &dyn Curves).collect();
    let margin = data
        .design
        .as_ref()
        .map_or(crate::study::DEFAULT_EQUIVALENCE, |d| d.equivalence);
    let here = super::judged::judge(&st, &views, margin);
    ConclusionRow {
        seed,
        seed_margin,
        here,
        here_margin,
        ..base
    }
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

/// The document blocks of the reproduction: how the study differs from
/// the publication first, then each reference beside our series, then
/// the publication's conclusions and our own observations.
pub fn blocks(rep: &Reproduction, data: &StudyData) -> Vec<Block> {
    let mut blocks = Vec::new();
    blocks.extend(super::verdicts::deviations(&rep.label, &rep.deviations));
    for r in &rep.references {
        blocks.extend(reference_blocks(r, data));
    }
    blocks.extend(super::verdicts::tables(rep));
    blocks
}

/// One reference beside the study's series: the publication's layout, the
/// shape chart and the derived figures.
fn reference_blocks(r: &RefCompared, data: &StudyData) -> Vec<Block> {
    if r.data.points.is_empty() {
        return vec![Block::Paragraph(format!(
            "{} printed no numbers (its figures are charts): there is no published table to set beside this study's series, and its conclusions are checked on this study's series only. Standing for its series: {}.",
            r.label,
            r.map
                .iter()
                .map(|(o, t)| format!("{} for {t}", data.series_name(o)))
                .collect::<Vec<_>>()
                .join("; ")
        ))];
    }
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
                    .map(|(o, t)| format!("{} with {t}", data.series_name(o)))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        }
    ))];
    let theirs = RefCurves {
        data: &r.data,
        metric: r.metric.clone(),
    };
    let ours = Measured::new(data, &r.spec);
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
                    let here = format!("{} (here)", data.series_name(o));
                    columns.push(here.clone());
                    curves.push((here, false, c));
                }
            }
        }
        blocks.push(Block::Table(beside(r, &title, columns, &curves)));
        blocks.push(Block::Chart(shape_chart(r, &title, &curves)));
        // The seed's CPU configurations ours stand for, in its order: its
        // scalability is taken over these (its 2 CPU HT over its 1 CPU
        // beside our 2 over 1), not over every configuration it ran.
        let mapped: Vec<&str> = r
            .data
            .cpus()
            .into_iter()
            .filter(|c| r.spec.cpus.iter().any(|(_, t)| t == c))
            .collect();
        blocks.push(Block::Table(shape_table(
            &r.label,
            &title,
            &names,
            &mapped,
            &theirs,
            &ours,
            &r.metric,
            workload.as_deref(),
            cpus.as_deref(),
        )));
    }
    blocks
}

/// The clients of any of `curves`, in order.
fn clients_of(curves: &[Labelled]) -> BTreeSet<u32> {
    curves
        .iter()
        .flat_map(|c| c.2.iter().map(|p| p.0))
        .collect()
}

/// The published and measured curves of one slice side by side, a row
/// per client count.
fn beside(r: &RefCompared, title: &str, columns: Vec<String>, curves: &[Labelled]) -> Table {
    let rows = clients_of(curves)
        .iter()
        .map(|x| Row {
            label: x.to_string(),
            cells: curves
                .iter()
                .map(|c| Cell::plain(fmt(c.2.iter().find(|p| p.0 == *x).map(|p| p.1))))
                .collect(),
        })
        .collect();
    Table {
        caption: format!(
            "{}: {}{title}, published beside measured",
            r.label, r.metric
        ),
        corner: "clients".into(),
        columns,
        rows,
        ..Table::default()
    }
}

/// The curves' shapes: each over its own peak, published ones dashed.
fn shape_chart(r: &RefCompared, title: &str, curves: &[Labelled]) -> Chart {
    let xs = clients_of(curves);
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
    Chart {
        id: format!("ref-{}", super::names::slug(&format!("{}-{title}", r.file))),
        title: format!(
            "{}{title}: shape, each series over its own peak (published dashed)",
            r.label
        ),
        x: Axis::new("clients", Scale::log_if(wide)),
        y: Axis::linear("share of the series' peak"),
        kind: ChartKind::Line,
        series,
    }
}

/// The derived figures of each published series and its measured
/// counterpart on one slice.
#[allow(clippy::too_many_arguments)]
fn shape_table(
    label: &str,
    title: &str,
    names: &[&str],
    mapped: &[&str],
    theirs: &RefCurves<'_>,
    ours: &Measured<'_>,
    metric: &str,
    workload: Option<&str>,
    cpus: Option<&str>,
) -> Table {
    // Sag at the highest client count both sides measured, so the two
    // sags compare like with like; scalability over every CPU set.
    let value = |d: &dyn Curves, s: &str, f: statement::Func, n: Option<u32>| -> Option<f64> {
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
        statement::eval(&t, d).ok().map(|(v, _)| v)
    };
    let position = |f: statement::Func| {
        matches!(
            f,
            statement::Func::PeakClients | statement::Func::Collapse | statement::Func::Rank
        )
    };
    let shown = |f: statement::Func, v: f64| -> String {
        if v.is_infinite() {
            "never".into()
        } else if position(f) {
            format!("{v:.0}")
        } else {
            format!("{v:.2}")
        }
    };
    let figure = |d: &dyn Curves, s: &str, f: statement::Func, n: Option<u32>| -> String {
        value(d, s, f, n).map_or("-".into(), |v| shown(f, v))
    };
    // Ours over the blocks, where repeats ran interleaved: an amount as
    // its mean with a 95 % interval, a position (a rank, the clients at
    // the peak) as a range where the blocks disagree: never a rank the
    // blocks do not all give.
    let blocks: Vec<Measured<'_>> = match ours.data.design.as_ref() {
        Some(d) if d.order == "interleaved" && ours.blocks() >= 2 => {
            (0..ours.blocks()).map(|k| ours.block(k)).collect()
        }
        _ => Vec::new(),
    };
    let over_blocks = |s: &str, f: statement::Func, n: Option<u32>| -> Option<String> {
        let vs: Vec<f64> = blocks.iter().filter_map(|b| value(b, s, f, n)).collect();
        if vs.len() < 2 {
            return None;
        }
        if position(f) || vs.iter().any(|v| v.is_infinite()) {
            let (lo, hi) = vs
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                    (a.min(v), b.max(v))
                });
            return Some(if lo == hi {
                shown(f, lo)
            } else {
                format!("{}–{}", shown(f, lo), shown(f, hi))
            });
        }
        let (m, ci) = crate::stats::paired::mean_interval(&vs)?;
        Some(match ci {
            Some((lo, hi)) => format!("{m:.2} [{lo:.2}, {hi:.2}]"),
            None => format!("{m:.2}"),
        })
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
        let row = |d: &dyn Curves, published: bool| -> Vec<Cell> {
            funcs
                .iter()
                .map(|f| {
                    let n = (*f == Sag).then_some(common).flatten();
                    if *f == Sag && n.is_none() {
                        return Cell::plain("-");
                    }
                    if *f == Scalability && published && mapped.len() >= 2 {
                        return Cell::plain(their_scalability(theirs, s, metric, workload, mapped));
                    }
                    if !published {
                        if let Some(text) = over_blocks(s, *f, n) {
                            return Cell::plain(text);
                        }
                    }
                    Cell::plain(figure(d, s, *f, n))
                })
                .collect()
        };
        rows.push(Row {
            label: format!("{s} (published)"),
            cells: row(theirs, true),
        });
        if let Some(o) = mine {
            rows.push(Row {
                label: format!("{} (here)", ours.data.series_name(o)),
                cells: row(ours, false),
            });
        }
    }
    Table {
        caption: format!(
            "{label}{title}: the same figures for both — peak, clients at the peak, sag % at the highest client count both measured, collapse (below half the peak), rank and % slower than the best, CPU scalability (peak on the last CPU configuration over the first; the publication's over the configurations ours stand for){}",
            if blocks.is_empty() {
                ""
            } else {
                "; ours over the interleaved blocks: an amount as its mean [95 % interval], a position (clients at the peak, collapse, rank) as the range the blocks gave"
            }
        ),
        corner: "series".into(),
        columns: ["peak", "at", "sag %", "collapse", "rank", "slower %", "scalability"]
            .map(String::from)
            .to_vec(),
        rows,
        ..Table::default()
    }
}

/// A published series' peak on the last CPU configuration ours stand for
/// over its peak on the first; "-" where either is missing.
fn their_scalability(
    theirs: &RefCurves<'_>,
    series: &str,
    metric: &str,
    workload: Option<&str>,
    mapped: &[&str],
) -> String {
    let peak = |c: &str| -> Option<f64> {
        let curve = theirs.curve(series, metric, workload, Some(c)).ok()?;
        curve.iter().map(|p| p.1).reduce(f64::max)
    };
    match (peak(mapped[0]), peak(mapped[mapped.len() - 1])) {
        (Some(a), Some(b)) if a > 0.0 => format!("{:.2}", b / a),
        _ => "-".into(),
    }
}

pub use super::verdicts::check_listing;

/// The conclusions' sentences for the report's summary.
pub fn sentences(r: &Reproduction) -> Vec<String> {
    super::verdicts::sentences(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::repro::published::RefPoint;

    #[test]
    fn a_publications_scalability_is_over_the_configurations_ours_stand_for() {
        // Peaks 100 on 1 CPU, 210 on 2 CPU HT, 370 on 4 CPU HT.
        let mut points = Vec::new();
        for (cpus, values) in [
            ("1CPU", [80.0, 100.0]),
            ("2CPU HT", [150.0, 210.0]),
            ("4CPU HT", [300.0, 370.0]),
        ] {
            for (clients, value) in [(1, values[0]), (2, values[1])] {
                points.push(RefPoint {
                    series: "InnoDB".into(),
                    metric: "tps".into(),
                    value,
                    clients: Some(clients),
                    users: None,
                    cpus: Some(cpus.into()),
                    workload: None,
                    variant: None,
                    unit: None,
                    source: None,
                });
            }
        }
        let data = RefData {
            file: "published.csv".into(),
            points,
        };
        let theirs = RefCurves {
            data: &data,
            metric: "tps".into(),
        };
        let f = |mapped: &[&str]| their_scalability(&theirs, "InnoDB", "tps", None, mapped);
        assert_eq!(f(&["1CPU", "2CPU HT"]), "2.10");
        assert_eq!(f(&["1CPU", "4CPU HT"]), "3.70");
        assert_eq!(f(&["1CPU", "8CPU"]), "-");
    }
}
