//! The study report's profiles (`profile = true`): per workload and
//! series, the server's and the client's on-CPU profile at the series'
//! peak, and for each series against the workload's first, the functions
//! whose CPU time per transaction grew or shrank most at the client count
//! where their throughputs differ most, with a differential flame graph.
//!
//! Per transaction, not per sample: a build that is faster does less per
//! transaction but as much per second, so shares of samples would show it
//! doing the same work; CPU nanoseconds per transaction (a function's CPU
//! time in the window over the window's transactions) show what each
//! transaction cost it.

use std::collections::HashMap;

use super::load::StudyData;
use super::tpcc::series_name;
use crate::metrics::profile::fold;
use crate::record::profile::Profile;
use crate::report::doc::{Block, Cell, Flame, Row, Section, Table};
use crate::report::plot;
use crate::store::{PointStatus, StoredPoint};

/// How many functions a table names.
const TOP: usize = 10;

/// A profiled point: its clients, throughput, transactions and profiles
/// with their stacks.
struct Profiled<'a> {
    clients: u32,
    tps: f64,
    transactions: u64,
    profiles: &'a [Profile],
}

impl Profiled<'_> {
    /// The profile of `role` with its stacks.
    fn of(&self, role: &str) -> Option<(&Profile, &str)> {
        let p = self.profiles.iter().find(|p| p.role == role)?;
        Some((p, p.folded.as_deref()?))
    }
}

/// The workloads in order, each with its series in order, each with its
/// profiled points.
type Grouped<'a> = Vec<(String, Vec<(String, Vec<Profiled<'a>>)>)>;

fn grouped(points: &[StoredPoint]) -> Grouped<'_> {
    let mut out: Grouped<'_> = Vec::new();
    for p in points
        .iter()
        .filter(|p| p.row.status == PointStatus::Finished)
    {
        let Some(run) = &p.row.run else { continue };
        let Some(m) = &run.result.metrics else {
            continue;
        };
        if !m.profiles.iter().any(|p| p.folded.is_some()) || run.result.transactions == 0 {
            continue;
        }
        let point = Profiled {
            clients: p.row.clients,
            tps: run.result.tps,
            transactions: run.result.transactions,
            profiles: &m.profiles,
        };
        let w = match out.iter().position(|(w, _)| *w == p.row.workload_label) {
            Some(i) => i,
            None => {
                out.push((p.row.workload_label.clone(), Vec::new()));
                out.len() - 1
            }
        };
        let name = series_name(p);
        let series = &mut out[w].1;
        match series.iter_mut().find(|(s, _)| *s == name) {
            Some((_, pts)) => pts.push(point),
            None => series.push((name, vec![point])),
        }
    }
    out
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

/// A series' profiles at its peak: top functions per transaction and
/// flame graphs.
fn at_peak(blocks: &mut Vec<Block>, id: &str, series: &str, points: &[Profiled<'_>]) {
    let Some(peak) = points.iter().max_by(|a, b| a.tps.total_cmp(&b.tps)) else {
        return;
    };
    for role in ["server", "client"] {
        let Some((p, folded)) = peak.of(role) else {
            continue;
        };
        let title = format!(
            "{series}: the {role} at {} clients ({:.0} tps, its peak)",
            peak.clients, peak.tps
        );
        let mut own: Vec<(String, f64)> = per_transaction(folded, peak.transactions)
            .into_iter()
            .collect();
        own.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        blocks.push(Block::Table(Table {
            caption: format!(
                "{title}: {:.2} CPU-s sampled, kernel {:.1} %; the functions most on the CPU",
                p.cpu_s,
                p.kernel_share * 100.0
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
        if let Ok(svg) = plot::flame::svg(
            folded,
            &title,
            Some(&format!("{} Hz, {} stacks", p.hz, p.call_graph)),
        ) {
            blocks.push(Block::Flame(Flame {
                id: format!("{id}-{role}"),
                title,
                svg,
            }));
        }
    }
}

/// The client count at which `a` and `b` differ most in throughput (their
/// first profiled points there), among those both profiled.
fn widest<'x, 'a>(
    a: &'x [Profiled<'a>],
    b: &'x [Profiled<'a>],
) -> Option<(&'x Profiled<'a>, &'x Profiled<'a>)> {
    let pairs = a
        .iter()
        .filter_map(|pa| Some((pa, b.iter().find(|pb| pb.clients == pa.clients)?)));
    let spread = |(pa, pb): &(&Profiled<'_>, &Profiled<'_>)| (pb.tps / pa.tps).ln().abs();
    pairs
        .filter(|(pa, pb)| pa.tps > 0.0 && pb.tps > 0.0)
        .max_by(|x, y| spread(x).total_cmp(&spread(y)))
}

/// `b` against `a` (the workload's first series): the functions whose CPU
/// time per transaction changed most, and the differential flame graph.
fn against(
    blocks: &mut Vec<Block>,
    id: &str,
    (na, a): (&str, &[Profiled<'_>]),
    (nb, b): (&str, &[Profiled<'_>]),
) {
    let Some((pa, pb)) = widest(a, b) else { return };
    let role = if pa.of("server").is_some() && pb.of("server").is_some() {
        "server"
    } else {
        "client"
    };
    let (Some((_, fa)), Some((_, fb))) = (pa.of(role), pb.of(role)) else {
        return;
    };
    let (ta, tb) = (
        per_transaction(fa, pa.transactions),
        per_transaction(fb, pb.transactions),
    );
    let mut names: Vec<&String> = ta.keys().chain(tb.keys()).collect();
    names.sort();
    names.dedup();
    let mut moved: Vec<(&String, f64, f64)> = names
        .into_iter()
        .map(|f| {
            (
                f,
                ta.get(f).copied().unwrap_or(0.0),
                tb.get(f).copied().unwrap_or(0.0),
            )
        })
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
}

/// The section; None when no point has a profile.
pub fn section(data: &StudyData) -> Option<Section> {
    let groups = grouped(&data.points);
    if groups.is_empty() {
        return None;
    }
    let mut blocks = vec![Block::Note(
        "CPU per transaction: each function's CPU time as the innermost frame over the measured window, \
         divided by the window's transactions (docs/profiles.md). A differential flame graph is drawn \
         as the second series' stacks, red where a function takes more CPU per transaction than in the \
         first, blue where less."
            .into(),
    )];
    for (w, (workload, series)) in groups.iter().enumerate() {
        blocks.push(Block::Paragraph(format!("{workload}:")));
        for (s, (name, points)) in series.iter().enumerate() {
            at_peak(&mut blocks, &format!("w{w}-s{s}"), name, points);
        }
        let Some((first, rest)) = series.split_first() else {
            continue;
        };
        for (s, (name, points)) in rest.iter().enumerate() {
            let id = format!("w{w}-s{}-vs-s0", s + 1);
            against(&mut blocks, &id, (&first.0, &first.1), (name, points));
        }
    }
    Some(Section {
        title: "Profiles".into(),
        blocks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_cost_per_transaction() {
        let folded = "postgres;main;ExecScan 3000\npostgres;main;ExecScan;heap_getnext 6000\npostgres;[postgres] 1000\n";
        let t = per_transaction(folded, 10);
        assert_eq!(t["ExecScan"], 300.0);
        assert_eq!(t["heap_getnext"], 600.0);
        assert_eq!(t["[postgres]"], 100.0);
        assert_eq!(t.len(), 3);
    }
}
