//! The emulated-users sweeps of a study (a `users`, or DBT-1's `eus`,
//! axis), as seed 003 drew them: throughput (DBT-1's BT/s) against users
//! per CPU set, the machine's and the server's CPU against users, and for
//! a workload with transaction types (DBT-1's interactions) each one's
//! 90th-percentile response time against users and the mix at the most
//! users.

use super::model::{LoadLevel, LoadPanel, TypeLevel};
use super::names::slug;
use crate::record::Run;
use crate::report::doc::{Axis, Block, Cell, Chart, ChartKind, Mark, Row, Series, Table};
use crate::util::units::ms_ms;

/// The users of a level written `users=N`.
pub(super) fn users_of(level: &str) -> Option<u32> {
    level.strip_prefix("users=")?.parse().ok()
}

/// The machine's and the server's CPU, and each transaction type's
/// figures, of a level: means over its finished repeats' records.
pub(super) fn extras(l: &mut LoadLevel, runs: &[&Run]) {
    l.users = users_of(&l.level);
    let mean = |v: Vec<f64>| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    let figure = |f: fn(&crate::record::metrics::Figures) -> Option<f64>| {
        mean(
            runs.iter()
                .filter_map(|r| f(&r.result.metrics.as_ref()?.figures))
                .collect(),
        )
    };
    l.cpu_busy_pct = figure(|f| f.cpu_busy_pct.as_ref().map(|x| x.value));
    l.server_cpu_pct = figure(|f| f.server_cpu_pct.as_ref().map(|x| x.value));
    let Some(first) = runs.first() else {
        return;
    };
    l.types = first
        .result
        .transaction_types
        .iter()
        .map(|t| {
            let of = |f: &dyn Fn(&crate::record::TransactionType) -> Option<f64>| {
                mean(
                    runs.iter()
                        .filter_map(|r| {
                            r.result.transaction_types.iter().find(|x| x.name == t.name)
                        })
                        .filter_map(f)
                        .collect(),
                )
            };
            let pct = |p: f64| {
                move |x: &crate::record::TransactionType| {
                    x.latency
                        .as_ref()?
                        .percentiles
                        .iter()
                        .find(|q| q.p == p)
                        .map(|q| q.us / 1e3)
                }
            };
            TypeLevel {
                name: t.name.clone(),
                share_pct: of(&|x| Some(x.share_pct)).unwrap_or(0.0),
                expected_pct: t.expected_pct,
                per_s: of(&|x| Some(x.per_s)).unwrap_or(0.0),
                avg_ms: of(&|x| x.latency.as_ref().map(|l| l.avg_us / 1e3)),
                p90_ms: of(&pct(90.0)),
                p90_limit_ms: t.p90_limit_s.map(|s| s * 1e3),
                queries: t.queries,
            }
        })
        .collect();
}

/// The blocks a users panel adds to the offered-load ones.
pub(super) fn blocks(p: &LoadPanel) -> Vec<Block> {
    let mut blocks = Vec::new();
    let line = |f: fn(&LoadLevel) -> Option<f64>| -> Vec<Series> {
        p.series
            .iter()
            .map(|s| Series {
                name: s.label.clone(),
                points: s
                    .levels
                    .iter()
                    .filter_map(|l| Some((f64::from(l.users?), f(l)?)))
                    .collect(),
                spread: None,
                reference: false,
            })
            .filter(|s| !s.points.is_empty())
            .collect()
    };
    let throughput = line(|l| l.achieved_per_s);
    if !throughput.is_empty() {
        blocks.push(Block::Chart(Chart {
            id: format!("{}-users-throughput", p.id),
            title: format!("{}: throughput against users", p.workload),
            x: Axis::linear("users"),
            y: Axis::linear(format!("completed {}", p.unit.per_s)),
            kind: ChartKind::Line,
            series: throughput,
        }));
    }
    let mut cpu = line(|l| l.cpu_busy_pct);
    for s in &mut cpu {
        s.name = format!("{}: machine busy", s.name);
    }
    let mut server = line(|l| l.server_cpu_pct);
    for s in &mut server {
        s.name = format!("{}: server", s.name);
    }
    cpu.extend(server);
    if !cpu.is_empty() {
        blocks.push(Block::Chart(Chart {
            id: format!("{}-users-cpu", p.id),
            title: format!("{}: CPU utilisation against users", p.workload),
            x: Axis::linear("users"),
            y: Axis::linear("CPU (% of the machine)"),
            kind: ChartKind::Line,
            series: cpu,
        }));
    }
    for s in &p.series {
        let names: Vec<&str> = s
            .levels
            .iter()
            .flat_map(|l| {
                l.types
                    .iter()
                    .filter(|t| t.queries)
                    .map(|t| t.name.as_str())
            })
            .fold(Vec::new(), |mut v, n| {
                if !v.contains(&n) {
                    v.push(n);
                }
                v
            });
        if names.is_empty() {
            continue;
        }
        let series = names
            .iter()
            .map(|n| Series {
                name: n.to_string(),
                points: s
                    .levels
                    .iter()
                    .filter_map(|l| {
                        let t = l.types.iter().find(|t| t.name == *n)?;
                        Some((f64::from(l.users?), t.p90_ms?))
                    })
                    .filter(|&(_, y)| y > 0.0)
                    .collect(),
                spread: None,
                reference: false,
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        blocks.push(Block::Chart(Chart {
            id: format!("{}-{}-types", p.id, slug(&s.label)),
            title: format!(
                "{}: {}: 90th-percentile response time of each interaction against users",
                p.workload, s.label
            ),
            x: Axis::linear("users"),
            y: Axis::log("p90 response time (ms)"),
            kind: ChartKind::Line,
            series,
        }));
        if let Some(top) = s.levels.iter().rev().find(|l| !l.types.is_empty()) {
            blocks.push(Block::Table(mix_table(p, &s.label, top)));
        }
    }
    blocks
}

/// The mix of one level: each type's share beside the expected one, its
/// rate and response times, the limit marked where exceeded.
fn mix_table(p: &LoadPanel, label: &str, l: &LoadLevel) -> Table {
    let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("-".to_string(), f);
    let rows = l
        .types
        .iter()
        .map(|t| {
            let over = matches!((t.p90_ms, t.p90_limit_ms), (Some(a), Some(b)) if a > b);
            let mut p90 = Cell::plain(opt(t.p90_ms, &ms_ms));
            if over {
                p90.mark = Mark::Worse;
                p90.detail = Some("above TPC-W's 90th-percentile limit".into());
            }
            Row {
                label: if t.queries {
                    t.name.clone()
                } else {
                    format!("{} (no query)", t.name)
                },
                cells: vec![
                    Cell::plain(format!("{:.2}", t.share_pct)),
                    Cell::plain(opt(t.expected_pct, &|v| format!("{v:.2}"))),
                    Cell::plain(format!("{:.2}", t.per_s)),
                    Cell::plain(opt(t.avg_ms, &ms_ms)),
                    p90,
                    Cell::plain(opt(t.p90_limit_ms, &|v| format!("{:.0}", v / 1e3))),
                ],
            }
        })
        .collect();
    Table {
        caption: format!(
            "{}: {label} at {}: the mix (share of completed transactions, %, beside the matrix's stationary share) and response times",
            p.workload, l.level
        ),
        corner: "interaction".into(),
        columns: ["share %", "expected %", "per s", "avg ms", "p90 ms", "p90 limit s"]
            .map(String::from)
            .to_vec(),
        rows,
        ..Table::default()
    }
}
