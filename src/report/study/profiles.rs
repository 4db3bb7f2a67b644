//! The study report's profiles (`profile = true`): per panel (workload ×
//! CPU set) and series, the server's and the client's on-CPU profile at
//! the series' peak, and for each series against its baseline (the one the
//! comparisons judge it against), at the client count where the paired
//! comparison found their throughputs furthest apart: the functions whose
//! CPU time per transaction grew or shrank most, a differential flame
//! graph, and where the sessions waited in each.
//!
//! A cell's blocks are pooled: their stacks summed and divided by their
//! transactions summed, so every block counts by the work it did.
//!
//! Per transaction, not per sample: a build that is faster does less per
//! transaction but as much per second, so shares of samples would show it
//! doing the same work; CPU nanoseconds per transaction (a function's CPU
//! time in the window over the window's transactions) show what each
//! transaction cost it.

use std::collections::HashMap;

use super::compared::verdict_sentence;
use super::paired::{panels, Paired, PanelBlocks};
use super::servers::AGAIN;
use super::StudyData;
use crate::metrics::profile::fold;
use crate::metrics::sql::mariadb::stage_case;
use crate::record::metrics::Usage;
use crate::report::doc::{Block, Cell, Flame, Row, Section, Table};
use crate::report::plot;
use crate::store::{PointStatus, StoredPoint};

/// How many functions, and wait events, a table names.
const TOP: usize = 10;

/// One series' profiled points at one client count, pooled over blocks.
struct Pooled {
    clients: u32,
    blocks: usize,
    /// Mean throughput over the blocks.
    tps: f64,
    transactions: u64,
    /// Per role, the blocks' folded stacks summed, and their sampling.
    folded: Vec<(String, String, String)>,
    /// The blocks' wait samples summed.
    waits: Usage,
}

impl Pooled {
    fn of(&self, role: &str) -> Option<(&str, &str)> {
        let (_, f, how) = self.folded.iter().find(|(r, _, _)| r == role)?;
        Some((f, how))
    }
}

/// The profiled, finished points of `cell` pooled; None without one.
fn pool(clients: u32, points: &[&StoredPoint]) -> Option<Pooled> {
    let mut p = Pooled {
        clients,
        blocks: 0,
        tps: 0.0,
        transactions: 0,
        folded: Vec::new(),
        waits: Usage::default(),
    };
    // Per role: its sampling and every block's stacks.
    let mut stacks: Vec<(String, String, Vec<&str>)> = Vec::new();
    for point in points
        .iter()
        .filter(|x| x.row.status == PointStatus::Finished)
    {
        let Some(run) = &point.row.run else { continue };
        let Some(m) = &run.result.metrics else {
            continue;
        };
        if run.result.transactions == 0 || !m.profiles.iter().any(|x| x.folded.is_some()) {
            continue;
        }
        p.blocks += 1;
        p.tps += run.result.tps;
        p.transactions += run.result.transactions;
        add_waits(&mut p.waits, &m.window);
        for prof in &m.profiles {
            let Some(folded) = prof.folded.as_deref() else {
                continue;
            };
            match stacks.iter_mut().find(|(r, _, _)| *r == prof.role) {
                Some((_, _, all)) => all.push(folded),
                None => stacks.push((
                    prof.role.clone(),
                    format!("{} Hz, {} stacks", prof.hz, prof.call_graph),
                    vec![folded],
                )),
            }
        }
    }
    if p.blocks == 0 {
        return None;
    }
    p.tps /= p.blocks as f64;
    p.folded = (stacks.into_iter())
        .map(|(role, how, all)| (role, fold::summed(&all), how))
        .collect();
    Some(p)
}

fn add_waits(to: &mut Usage, w: &Usage) {
    to.wait_samples += w.wait_samples;
    // Stages as the newer versions spell them (records made before
    // dbsweep did so hold 10.2's lower case).
    for (e, n) in w.waits.iter() {
        to.waits.add(&stage_case(e), *n);
    }
    to.semaphore_readings += w.semaphore_readings;
    for (l, n) in w.semaphore_waits.iter() {
        to.semaphore_waits.add(l, *n);
    }
}

/// A series' profiled cells, pooled, by clients (the closed loop's).
fn cells(pb: &PanelBlocks<'_>, series: &str) -> Vec<Pooled> {
    let of = pb
        .cells
        .iter()
        .filter(|((s, _, level), _)| s == series && level.is_none());
    of.filter_map(|((_, c, _), blocks)| pool(*c, &blocks.values().copied().collect::<Vec<_>>()))
        .collect()
}

/// Each function's own CPU nanoseconds per transaction in `folded`.
fn per_transaction(folded: &str, transactions: u64) -> HashMap<String, f64> {
    let n = transactions.max(1) as f64;
    let own = fold::own(folded).into_iter();
    own.map(|(f, ns)| (f.to_string(), ns as f64 / n)).collect()
}

fn cell(text: String) -> Cell {
    Cell {
        text,
        ..Cell::default()
    }
}

fn blocks_text(n: usize) -> String {
    if n == 1 {
        "1 block".into()
    } else {
        format!("{n} blocks pooled")
    }
}

/// A series' profiles at its peak: top functions per transaction and
/// flame graphs.
fn at_peak(blocks: &mut Vec<Block>, id: &str, series: &str, cells: &[Pooled]) {
    let Some(peak) = cells.iter().max_by(|a, b| a.tps.total_cmp(&b.tps)) else {
        return;
    };
    for role in ["server", "client"] {
        let Some((folded, how)) = peak.of(role) else {
            continue;
        };
        let title = format!(
            "{series}: the {role} at {} clients ({:.0} tps, its peak; {})",
            peak.clients,
            peak.tps,
            blocks_text(peak.blocks)
        );
        let s = fold::summary(folded, 0);
        let mut own: Vec<(String, f64)> = per_transaction(folded, peak.transactions)
            .into_iter()
            .collect();
        own.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        blocks.push(Block::Table(Table {
            caption: format!(
                "{title}: {:.0} CPU µs per transaction sampled, kernel {:.1} %; the functions most on the CPU",
                s.ns as f64 / 1e3 / peak.transactions.max(1) as f64,
                s.kernel_share * 100.0
            ),
            corner: "function".into(),
            columns: vec!["CPU ns per transaction".into()],
            rows: (own.into_iter().take(TOP))
                .map(|(f, ns)| Row {
                    label: f,
                    cells: vec![cell(format!("{ns:.0}"))],
                })
                .collect(),
            ..Table::default()
        }));
        if let Ok(svg) = plot::flame::svg(folded, &title, Some(how)) {
            blocks.push(Block::Flame(Flame {
                id: format!("{id}-{role}"),
                title,
                svg,
            }));
        }
    }
}

/// The cell `b` is judged against `a` at: the paired comparison of
/// throughput at a client count whose ratio is furthest from 1, with its
/// words; else (a study without comparisons there) the client count whose
/// pooled means differ most.
fn judged_cell<'x>(
    pb: &PanelBlocks<'_>,
    (na, a): (&str, &'x [Pooled]),
    (nb, b): (&str, &'x [Pooled]),
    paired: &Paired,
) -> Option<(&'x Pooled, &'x Pooled, String)> {
    let at = |c: u32| {
        Some((
            a.iter().find(|x| x.clients == c)?,
            b.iter().find(|x| x.clients == c)?,
        ))
    };
    let spread = |r: f64| r.ln().abs();
    let judged = (paired.comparisons.iter())
        .filter(|c| c.workload == pb.workload && c.cpus == pb.cpus && c.metric == "tps")
        .filter(|c| c.series == nb && c.baseline == na && c.rate.is_none())
        .filter_map(|c| Some((c, c.ratio.filter(|r| *r > 0.0)?, at(c.clients?)?)))
        .max_by(|x, y| spread(x.1).total_cmp(&spread(y.1)));
    if let Some((c, _, (pa, pb_))) = judged {
        let words = format!(
            "the cell where the paired comparison found the throughputs furthest apart: {}",
            verdict_sentence(c, "throughput", paired.equivalence)
        );
        return Some((pa, pb_, words));
    }
    let pairs = a
        .iter()
        .filter_map(|pa| Some((pa, b.iter().find(|x| x.clients == pa.clients)?)));
    let (pa, pb_) = pairs
        .filter(|(pa, pb)| pa.tps > 0.0 && pb.tps > 0.0)
        .max_by(|x, y| spread(x.1.tps / x.0.tps).total_cmp(&spread(y.1.tps / y.0.tps)))?;
    Some((
        pa,
        pb_,
        "the client count where the mean throughputs differ most (no paired comparison there)."
            .into(),
    ))
}

/// `b` against `a` at the judged cell: the functions whose CPU time per
/// transaction changed most, the differential flame graph, and the wait
/// events side by side.
fn against(
    blocks: &mut Vec<Block>,
    id: &str,
    (na, pa): (&str, &Pooled),
    (nb, pb): (&str, &Pooled),
    why: &str,
) {
    let role = if pa.of("server").is_some() && pb.of("server").is_some() {
        "server"
    } else {
        "client"
    };
    let (Some((fa, _)), Some((fb, _))) = (pa.of(role), pb.of(role)) else {
        return;
    };
    let (ta, tb) = (
        per_transaction(fa, pa.transactions),
        per_transaction(fb, pb.transactions),
    );
    let mut names: Vec<&String> = ta.keys().chain(tb.keys()).collect();
    names.sort();
    names.dedup();
    let get = |t: &HashMap<String, f64>, f: &String| t.get(f).copied().unwrap_or(0.0);
    let mut moved: Vec<(&String, f64, f64)> = names
        .into_iter()
        .map(|f| (f, get(&ta, f), get(&tb, f)))
        .collect();
    moved.sort_by(|x, y| {
        (y.2 - y.1)
            .abs()
            .total_cmp(&(x.2 - x.1).abs())
            .then(x.0.cmp(y.0))
    });
    let title = format!(
        "The {role}'s CPU per transaction, {nb} against {na}, at {} clients ({:.0} against {:.0} tps)",
        pa.clients, pb.tps, pa.tps
    );
    blocks.push(Block::Paragraph(format!(
        "{nb} against {na} at {} clients, {why}",
        pa.clients
    )));
    let (sum_a, sum_b): (f64, f64) = (ta.values().sum(), tb.values().sum());
    blocks.push(Block::Table(Table {
        caption: format!(
            "{title}: {sum_b:.0} against {sum_a:.0} CPU ns per transaction in all; the functions that moved most"
        ),
        corner: "function".into(),
        columns: vec![format!("{na}, ns"), format!("{nb}, ns"), "change, ns".into()],
        rows: (moved.into_iter().take(TOP))
            .map(|(f, x, y)| Row {
                label: f.clone(),
                cells: vec![cell(format!("{x:.0}")), cell(format!("{y:.0}")), cell(format!("{:+.0}", y - x))],
            })
            .collect(),
        ..Table::default()
    }));
    match plot::flame::diff_svg((fa, pa.transactions), (fb, pb.transactions), &title) {
        Ok(svg) => blocks.push(Block::Flame(Flame {
            id: format!("{id}-diff"),
            title,
            svg,
        })),
        Err(why) => blocks.push(Block::Note(why)),
    }
    blocks.extend(waits_side_by_side(
        (na, &pa.waits),
        (nb, &pb.waits),
        pa.clients,
    ));
}

/// The wait events' shares (and InnoDB's latches) of two series at one
/// cell, side by side; none where neither sampled its sessions.
fn waits_side_by_side(
    (na, a): (&str, &Usage),
    (nb, b): (&str, &Usage),
    clients: u32,
) -> Vec<Block> {
    let mut out = Vec::new();
    let share = |u: &Usage| -> Vec<(String, f64)> {
        (u.wait_shares().into_iter())
            .map(|(e, _, share)| (e.to_string(), 100.0 * share))
            .collect()
    };
    let mean = |u: &Usage| -> Vec<(String, f64)> {
        (u.latch_means().into_iter())
            .map(|(l, _, mean)| (l.to_string(), mean))
            .collect()
    };
    if a.wait_samples + b.wait_samples > 0 {
        out.push(side_table(
            format!("Where the sessions waited at {clients} clients: sessions by wait event, % of those sampled"),
            "wait event",
            (na, share(a), a.wait_samples > 0),
            (nb, share(b), b.wait_samples > 0),
            1,
        ));
    }
    if a.semaphore_readings + b.semaphore_readings > 0 {
        out.push(side_table(
            format!("Where the sessions waited at {clients} clients: InnoDB latches, mean threads seen waiting at a reading"),
            "latch",
            (na, mean(a), a.semaphore_readings > 0),
            (nb, mean(b), b.semaphore_readings > 0),
            2,
        ));
    }
    out
}

/// One table of two series' values by name, the largest first; a series
/// that did not measure them (`false`) shows "—", one that did and saw
/// none shows 0.
fn side_table(
    caption: String,
    corner: &str,
    (na, a, a_measured): (&str, Vec<(String, f64)>, bool),
    (nb, b, b_measured): (&str, Vec<(String, f64)>, bool),
    decimals: usize,
) -> Block {
    let get =
        |v: &[(String, f64)], k: &str| v.iter().find(|(n, _)| n == k).map_or(0.0, |(_, x)| *x);
    let mut names: Vec<&String> = a.iter().chain(&b).map(|(n, _)| n).collect();
    names.sort();
    names.dedup();
    let weight = |k: &str| get(&a, k).max(get(&b, k));
    names.sort_by(|x, y| weight(y).total_cmp(&weight(x)).then(x.cmp(y)));
    let text = |v: &[(String, f64)], measured: bool, k: &str| {
        if measured {
            format!("{:.decimals$}", get(v, k))
        } else {
            "—".to_string()
        }
    };
    Block::Table(Table {
        caption,
        corner: corner.into(),
        columns: vec![na.to_string(), nb.to_string()],
        rows: (names.into_iter().take(TOP))
            .map(|k| Row {
                label: k.clone(),
                cells: vec![cell(text(&a, a_measured, k)), cell(text(&b, b_measured, k))],
            })
            .collect(),
        ..Table::default()
    })
}

/// The section; None when no point has a profile.
pub fn section(data: &StudyData, paired: &Paired) -> Option<Section> {
    let mut blocks = vec![Block::Note(
        "CPU per transaction: each function's CPU time as the innermost frame over the measured window, \
         divided by the window's transactions, a cell's blocks pooled (docs/profiles.md). A differential \
         flame graph is drawn as the second series' stacks, red where a function takes more CPU per \
         transaction than in the first, blue where less."
            .into(),
    )];
    let mut any = false;
    for (w, pb) in panels(data).iter().enumerate() {
        let series: Vec<(usize, &String, Vec<Pooled>)> = (pb.series.iter().enumerate())
            .filter(|(_, s)| !s.ends_with(AGAIN))
            .map(|(i, s)| (i, s, cells(pb, s)))
            .filter(|(_, _, c)| !c.is_empty())
            .collect();
        if series.is_empty() {
            continue;
        }
        any = true;
        let cpus = pb
            .cpus
            .as_ref()
            .map(|c| format!(", CPUs {c}"))
            .unwrap_or_default();
        blocks.push(Block::Paragraph(format!("{}{cpus}:", pb.workload)));
        for (s, name, c) in &series {
            at_peak(&mut blocks, &format!("w{w}-s{s}"), name, c);
        }
        for (s, name, c) in &series {
            let Some(base) = pb.baselines.get(*name).filter(|b| b != name) else {
                continue;
            };
            let Some((i, _, bc)) = series.iter().find(|(_, n, _)| *n == base) else {
                continue;
            };
            if let Some((pa, pb_, why)) = judged_cell(pb, (base, bc), (name, c), paired) {
                against(
                    &mut blocks,
                    &format!("w{w}-s{s}-vs-s{i}"),
                    (base, pa),
                    (name, pb_),
                    &why,
                );
            }
        }
    }
    any.then(|| Section {
        title: "Profiles".into(),
        blocks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::OrderedMap;

    #[test]
    fn blocks_pool_by_summing_their_stacks() {
        let a = "mysqld;do_command;row_search 30\nmysqld;do_command 5\n";
        let b = "mysqld;do_command;row_search 10\nmysqld;log_write 7\n";
        assert_eq!(
            fold::summed(&[a, b]),
            "mysqld;do_command 5\nmysqld;do_command;row_search 40\nmysqld;log_write 7\n"
        );
        // Per transaction over both blocks: 40 ns of row_search in 4 transactions.
        assert_eq!(
            per_transaction(&fold::summed(&[a, b]), 4)["row_search"],
            10.0
        );
    }

    #[test]
    fn waits_side_by_side_with_a_dash_where_a_series_did_not_sample() {
        let a = Usage {
            waits: OrderedMap(vec![
                ("running".into(), 30),
                ("InnoDB:lock wait".into(), 10),
            ]),
            wait_samples: 40,
            semaphore_waits: OrderedMap(vec![(
                "Mutex LOG_SYS log0log.cc:711, waited at mtr0mtr.cc:837".into(),
                3,
            )]),
            semaphore_readings: 2,
            ..Usage::default()
        };
        let b = Usage {
            waits: OrderedMap(vec![("running".into(), 20)]),
            wait_samples: 20,
            ..Usage::default()
        };
        let t = waits_side_by_side(("10.2", &a), ("10.11", &b), 64);
        let rows = |b: &Block| match b {
            Block::Table(t) => (t.rows.iter())
                .map(|r| {
                    (
                        r.label.clone(),
                        r.cells.iter().map(|c| c.text.clone()).collect::<Vec<_>>(),
                    )
                })
                .collect::<Vec<_>>(),
            _ => panic!("not a table"),
        };
        let s = |x: &str| x.to_string();
        assert_eq!(
            rows(&t[0]),
            [
                (s("running"), vec![s("75.0"), s("100.0")]),
                (s("InnoDB:lock wait"), vec![s("25.0"), s("0.0")]),
            ]
        );
        assert_eq!(
            rows(&t[1]),
            [(
                s("Mutex LOG_SYS log0log.cc:711, waited at mtr0mtr.cc:837"),
                vec![s("1.50"), s("—")]
            )]
        );
    }
}
