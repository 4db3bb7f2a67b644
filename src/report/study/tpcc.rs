//! The TPC-C section of a study report, read like a results page: for
//! each configuration (series and connections, or terminals) its tpmC,
//! NOPM and TPM as the client and as the database counted them, the
//! efficiency (only meaningful with keying and think times, and labelled
//! so), each type's 90th-percentile response time against the spec's
//! limit, the mix against its minimums, and the consistency verdict of
//! the runs that were checked. Means over the finished repeats; every
//! figure is the record's (`result.tpcc`), the run report's.

use super::load::StudyData;
use crate::record::tpcc::Tpcc;
use crate::record::{consistency, Run};
use crate::report::doc::{Block, Cell, Mark, Row, Section, Table};
use crate::store::{PointStatus, StoredPoint};
use crate::util::units::ms_ms;
use crate::workload::tpcc::figures::NO_EFFICIENCY;
use crate::workload::tpcc::terminal::{Txn, DEFERRED_NAME, ROLLED_BACK_NAME};

/// One configuration's finished repeats.
struct Level<'a> {
    label: String,
    runs: Vec<(&'a Run, &'a Tpcc)>,
}

/// The configurations of the study's TPC-C points, in the order they
/// were first committed.
fn levels(data: &StudyData) -> Vec<Level<'_>> {
    let mut out: Vec<(String, Level<'_>)> = Vec::new();
    let points = data.points.iter().chain(&data.paced);
    for p in points.filter(|p| matches!(p.row.status, PointStatus::Finished)) {
        let Some(run) = p.row.run.as_ref() else {
            continue;
        };
        let Some(f) = run.result.tpcc.as_ref() else {
            continue;
        };
        let key = label(p);
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, l)) => l.runs.push((run, f)),
            None => out.push((
                key.clone(),
                Level {
                    label: key,
                    runs: vec![(run, f)],
                },
            )),
        }
    }
    out.into_iter().map(|(_, l)| l).collect()
}

/// A point's series as a results page names it: target / variant, its
/// CPUs and its workload's label where they say something (TPC-H's
/// section adds the scale, this one the connections).
pub(super) fn series_name(p: &StoredPoint) -> String {
    let r = &p.row;
    let mut s = format!("{} / {}", r.target, r.variant);
    if let Some(c) = &r.cpus {
        s.push_str(&format!(", CPUs {c}"));
    }
    if r.workload_label != r.workload {
        s.push_str(&format!(", {}", r.workload_label));
    }
    s
}

/// How a configuration is named in the section's tables.
fn label(p: &StoredPoint) -> String {
    let r = &p.row;
    let mut s = series_name(p);
    s.push_str(&format!(", {} connections", r.clients));
    if let Some(l) = &r.load_level {
        s.push_str(&format!(", {l}"));
    }
    s
}

pub(super) fn mean(v: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = v.collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn num(v: Option<f64>) -> Cell {
    Cell::plain(v.map_or("-".to_string(), |v| format!("{v:.2}")))
}

/// The section; None for a study without TPC-C points.
pub(super) fn section(data: &StudyData) -> Option<Section> {
    let levels = levels(data);
    if levels.is_empty() {
        return None;
    }
    let mut blocks = vec![Block::Table(results(&levels))];
    blocks.push(Block::Note(
        "tpmC counts the New-Orders completed in the measured window, rolled-back ones \
         included (clause 5.4); NOPM the committed ones, as the client counted them and as \
         the database did (the window's change of sum(D_NEXT_O_ID)); TPM every transaction, \
         as the client counted them and as the server did (its commits and rollbacks). \
         Efficiency is tpmC against the spec's ceiling of 12.86 per warehouse: only \
         meaningful with keying and think times, so not given for a --no-wait run. \
         Terminals are the emulated users (10 per warehouse unless the workload's users \
         say otherwise), sharing the configuration's connections. The JSON and CSV \
         reports give each point's figures."
            .into(),
    ));
    blocks.push(Block::Table(limits(&levels)));
    blocks.push(Block::Table(mix(&levels)));
    blocks.push(Block::Table(verdicts(&levels)));
    Some(Section {
        title: "TPC-C results".into(),
        blocks,
    })
}

fn results(levels: &[Level<'_>]) -> Table {
    let rows = levels
        .iter()
        .map(|l| {
            let of =
                |f: &dyn Fn(&Tpcc) -> Option<f64>| mean(l.runs.iter().filter_map(|(_, x)| f(x)));
            let efficiency = of(&|f| f.efficiency_pct);
            let (w, t) = l
                .runs
                .first()
                .map_or((0, 0), |(_, f)| (f.warehouses, f.terminals));
            Row {
                label: l.label.clone(),
                cells: vec![
                    Cell::plain(w.to_string()),
                    Cell::plain(t.to_string()),
                    num(of(&|f| Some(f.tpmc))),
                    num(of(&|f| Some(f.nopm))),
                    num(of(&|f| f.server_nopm)),
                    num(of(&|f| Some(f.tpm))),
                    num(of(&|f| f.server_tpm)),
                    match efficiency {
                        Some(e) => Cell::plain(format!("{e:.1}")),
                        None => Cell {
                            text: "n/m".into(),
                            detail: Some(
                                l.runs
                                    .iter()
                                    .find_map(|(_, f)| f.efficiency_absent.clone())
                                    .unwrap_or_else(|| NO_EFFICIENCY.into()),
                            ),
                            mark: Mark::None,
                        },
                    },
                    Cell::plain(l.runs.len().to_string()),
                ],
            }
        })
        .collect();
    Table {
        caption: "TPC-C: New-Orders and transactions per minute, as the client and as the \
                  database counted them (means of the repeats)"
            .into(),
        corner: "configuration".into(),
        columns: [
            "warehouses",
            "terminals",
            "tpmC",
            "NOPM",
            "NOPM (database)",
            "TPM",
            "TPM (server)",
            "efficiency % (waits only)",
            "repeats",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        ..Table::default()
    }
}

/// The types of the limits table: the five, and the deferred Delivery's
/// completion where a run had one.
fn limit_types(levels: &[Level<'_>]) -> Vec<String> {
    let mut names: Vec<String> = Txn::ALL.iter().map(|t| t.name().to_string()).collect();
    let deferred = levels.iter().any(|l| {
        l.runs.iter().any(|(r, _)| {
            r.result
                .transaction_types
                .iter()
                .any(|t| t.name == DEFERRED_NAME)
        })
    });
    if deferred {
        names.push(DEFERRED_NAME.to_string());
    }
    names
}

/// The limits `name` had in the runs, e.g. `80 s`, or `5 s / 80 s` where
/// runs differ (Delivery inline and deferred).
fn limits_text<'a>(runs: impl Iterator<Item = &'a Tpcc>, name: &str) -> String {
    let mut v: Vec<f64> = runs
        .flat_map(|f| &f.types)
        .filter(|t| t.name == name)
        .filter_map(|t| t.limit_s)
        .collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    if v.is_empty() {
        return "-".into();
    }
    v.iter()
        .map(|s| format!("{s:.0} s"))
        .collect::<Vec<_>>()
        .join(" / ")
}

fn limits(levels: &[Level<'_>]) -> Table {
    let names = limit_types(levels);
    let every = || levels.iter().flat_map(|l| l.runs.iter().map(|(_, f)| *f));
    let mut rows = vec![Row {
        label: "limit (clause 5.2.5.3)".into(),
        cells: names
            .iter()
            .map(|n| Cell::plain(limits_text(every(), n)))
            .collect(),
    }];
    rows.extend(levels.iter().map(|l| {
        Row {
            label: l.label.clone(),
            cells: names
                .iter()
                .map(|n| {
                    let types: Vec<_> = l
                        .runs
                        .iter()
                        .filter_map(|(_, f)| f.types.iter().find(|t| &t.name == n))
                        .collect();
                    let p90 = mean(types.iter().filter_map(|t| t.p90_ms));
                    // Each repeat as its record judged it, from its histogram.
                    let above = types.iter().filter(|t| t.within == Some(false)).count();
                    Cell {
                        text: p90.map_or("-".into(), ms_ms),
                        detail: (above > 0).then(|| {
                            format!(
                                "above TPC-C's 90th-percentile limit ({}) in {above} of {} repeats",
                                limits_text(l.runs.iter().map(|(_, f)| *f), n),
                                l.runs.len()
                            )
                        }),
                        mark: if above > 0 { Mark::Worse } else { Mark::None },
                    }
                })
                .collect(),
        }
    }));
    Table {
        caption: "TPC-C: each type's 90th-percentile response time (ms, from the end of its \
                  keying time; mean of the repeats) against its limit, marked where a repeat \
                  was above it"
            .into(),
        corner: "configuration".into(),
        columns: names,
        rows,
        ..Table::default()
    }
}

fn mix(levels: &[Level<'_>]) -> Table {
    let types: Vec<Txn> = Txn::ALL.into_iter().filter(|t| t.min_pct() > 0.0).collect();
    let mut rows = vec![Row {
        label: "minimum (clause 5.2.3)".into(),
        cells: types
            .iter()
            .map(|t| Cell::plain(format!("{:.0}", t.min_pct())))
            .collect(),
    }];
    rows.extend(levels.iter().map(|l| {
        Row {
            label: l.label.clone(),
            cells: types
                .iter()
                .map(|t| {
                    let share = mean(l.runs.iter().filter_map(|(_, f)| {
                        f.mix
                            .iter()
                            .find(|m| m.name == t.name())
                            .map(|m| m.share_pct)
                    }));
                    let short = share.is_some_and(|s| s < t.min_pct());
                    Cell {
                        text: share.map_or("-".into(), |s| format!("{s:.2}")),
                        detail: short.then(|| "below the spec's minimum".to_string()),
                        mark: if short { Mark::Worse } else { Mark::None },
                    }
                })
                .collect(),
        }
    }));
    Table {
        caption: format!(
            "TPC-C: the mix, each type's share of the terminals' transactions (%, New-Order's \
             {ROLLED_BACK_NAME} included in its count, a deferred Delivery's execution not a \
             card of its own) against the minimum"
        ),
        corner: "configuration".into(),
        columns: types.iter().map(|t| t.name().to_string()).collect(),
        rows,
        ..Table::default()
    }
}

fn verdicts(levels: &[Level<'_>]) -> Table {
    let rows = levels
        .iter()
        .map(|l| {
            let checked: Vec<_> = l
                .runs
                .iter()
                .filter_map(|(r, _)| r.result.consistency.as_ref())
                .collect();
            let failing: Vec<String> = checked
                .iter()
                .filter(|c| !consistency::all_hold(c))
                .map(|c| consistency::verdict(c))
                .collect();
            let (text, mark) = if checked.is_empty() {
                (
                    "not checked (`check = true` in the study's workload)".to_string(),
                    Mark::None,
                )
            } else if failing.is_empty() {
                (
                    format!(
                        "{} in {} of {} repeats",
                        consistency::verdict(checked[0]),
                        checked.len(),
                        l.runs.len()
                    ),
                    Mark::Better,
                )
            } else {
                (failing.join("; "), Mark::Worse)
            };
            Row {
                label: l.label.clone(),
                cells: vec![Cell {
                    text,
                    detail: None,
                    mark,
                }],
            }
        })
        .collect();
    Table {
        caption: "TPC-C: the consistency conditions of clause 3.3.2 after each run".into(),
        corner: "configuration".into(),
        columns: vec!["consistency".into()],
        rows,
        prose: true,
        ..Table::default()
    }
}
