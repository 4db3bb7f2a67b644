//! The study's coordinated points (`nodes = N`): each ran as one run on N
//! workers and was stored as the merge of their records, so its figures
//! everywhere else in the report are the whole point's. Here each such
//! point is shown beside its shards — node, clients, throughput, start
//! skew against the coordinator's instant, clock offset — where a slow or
//! late load machine shows. One section for the HTML, Markdown and text
//! reports ([`section`]) and one object per point for the JSON export
//! ([`json`]), both read from the stored record's `result.shards`.

use serde::Serialize;

use super::unit;
use super::StudyData;
use crate::record::metrics::{Figure, Figures};
use crate::report::doc::{Block, Cell, Mark, Row, Section, Table};
use crate::store::{PointStatus, StoredPoint};

/// One finished point that ran on several workers.
#[derive(Debug, Clone)]
pub struct ShardedPoint {
    pub key: String,
    /// `target / variant`, the target as the report calls it.
    pub series: String,
    pub workload: String,
    pub clients: u32,
    pub repeat: u32,
    pub level: Option<String>,
    /// The merged figures: the point's.
    pub transactions: u64,
    pub tps: f64,
    pub launcher: Option<String>,
    /// The largest |start skew| of its shards, ms.
    pub max_start_skew_ms: Option<f64>,
    /// The merged record's machine figures, %: present only when every
    /// shard ran on one machine.
    pub cpu_busy_pct: Option<f64>,
    pub client_cpu_pct: Option<f64>,
    pub shards: Vec<ShardFigures>,
}

/// One shard of a coordinated point.
#[derive(Debug, Clone, Serialize)]
pub struct ShardFigures {
    pub index: u64,
    /// The scheduler's name for its node, else its hostname.
    pub node: String,
    pub clients: u64,
    pub transactions: u64,
    pub tps: f64,
    /// Its release minus the coordinator's instant, ms (absent when no
    /// coordinator measured it).
    pub start_skew_ms: Option<f64>,
    /// Its clock minus the coordinator's, ms.
    pub clock_offset_ms: Option<f64>,
    /// Busy share of every CPU of the machine it ran on, % (absent when
    /// not measured).
    pub cpu_busy_pct: Option<f64>,
    /// Its client's share of that machine's CPU, %.
    pub client_cpu_pct: Option<f64>,
}

/// Point `p`'s shards, when it finished as a merge of several records.
pub fn of(p: &StoredPoint, series: &str) -> Option<ShardedPoint> {
    if p.row.status != PointStatus::Finished {
        return None;
    }
    let run = p.row.run.as_ref()?;
    let s = run.result.shards.as_ref()?;
    let figure = |f: fn(&Figures) -> &Option<Figure>| {
        let m = run.result.metrics.as_ref()?;
        f(&m.figures).as_ref().map(|f| f.value)
    };
    let shards = s
        .rows
        .iter()
        .map(|x| ShardFigures {
            index: x.index,
            node: x.node.clone().unwrap_or_else(|| x.hostname.clone()),
            clients: x.clients,
            transactions: x.transactions,
            tps: x.tps,
            start_skew_ms: x.start_skew_s.map(|v| v * 1e3),
            clock_offset_ms: x.clock_offset_s.map(|v| v * 1e3),
            cpu_busy_pct: x.cpu_busy_pct,
            client_cpu_pct: x.client_cpu_pct,
        })
        .collect();
    Some(ShardedPoint {
        key: p.row.key.clone(),
        series: series.to_string(),
        workload: p.row.workload_label.clone(),
        clients: p.row.clients,
        repeat: p.row.repeat,
        level: p.row.load_level.clone(),
        transactions: run.result.transactions,
        tps: run.result.tps,
        launcher: s.coordinator.as_ref().map(|c| c.launcher.clone()),
        max_start_skew_ms: s.coordinator.as_ref().map(|c| c.max_start_skew_s * 1e3),
        cpu_busy_pct: figure(|f| &f.cpu_busy_pct),
        client_cpu_pct: figure(|f| &f.client_cpu_pct),
        shards,
    })
}

/// Every coordinated point of the study, in commit order.
pub fn all(data: &StudyData) -> Vec<ShardedPoint> {
    data.points
        .iter()
        .chain(&data.paced)
        .filter_map(|p| {
            let series = format!("{} / {}", data.target_label(&p.row.target), p.row.variant);
            of(p, &series)
        })
        .collect()
}

/// The JSON export's `shards` of point `p` (None: not coordinated).
pub fn json(p: &StoredPoint) -> Option<serde_json::Value> {
    let s = of(p, "")?;
    Some(serde_json::json!({
        "launcher": s.launcher,
        "max_start_skew_ms": s.max_start_skew_ms,
        "rows": s.shards,
    }))
}

const COLUMNS: [&str; 8] = [
    "node",
    "clients",
    "transactions",
    "per s",
    "start skew ms",
    "clock offset ms",
    "node busy %",
    "client %",
];

/// The report's section of coordinated points: per workload entry, one
/// table with each point's merged row and its shards' rows under it.
pub fn section(data: &StudyData) -> Option<Section> {
    let points = all(data);
    if points.is_empty() {
        return None;
    }
    let mut blocks = vec![Block::Note(
        "These points ran on several load machines at once (nodes = N): one coordinated run each, \
         its workers released at one instant, their records merged — counts and histograms summed, \
         percentiles read from the sum, never averaged — into the point every table and chart of \
         this report shows. Each point's first row is that merge; the rows under it are its shards. \
         Start skew: a shard's release minus the instant, by the coordinator's clock (its own \
         clock corrected by the measured offset); clock offset: its clock minus the coordinator's. \
         Node busy: how busy the machine a shard ran on was, and client: dbsweep's share of it; a \
         merged row has them only when every shard ran on one machine (the server's figures, \
         elsewhere in this report, are one shard's reading of the one server, per transaction of \
         the merge)."
            .to_string(),
    )];
    let mut workloads: Vec<&str> = Vec::new();
    for p in &points {
        if !workloads.contains(&p.workload.as_str()) {
            workloads.push(&p.workload);
        }
    }
    for w in workloads {
        let mut rows = Vec::new();
        for p in points.iter().filter(|p| p.workload == w) {
            let level = p
                .level
                .as_deref()
                .map_or(String::new(), |l| format!(", {l}"));
            let point = format!(
                "{}, {} clients{level}, repeat {}",
                p.series, p.clients, p.repeat
            );
            let ms = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.2}"));
            rows.push(Row {
                label: format!("{point}: merged"),
                cells: vec![
                    Cell::plain(format!(
                        "{} node{} ({})",
                        p.shards.len(),
                        if p.shards.len() == 1 { "" } else { "s" },
                        p.launcher.as_deref().unwrap_or("by hand")
                    )),
                    Cell::plain(p.clients.to_string()),
                    Cell::plain(p.transactions.to_string()),
                    Cell {
                        text: format!("{:.2}", p.tps),
                        detail: Some(format!("the point's {}", unit_of(data, p))),
                        mark: Mark::Best,
                    },
                    Cell {
                        text: ms(p.max_start_skew_ms),
                        detail: Some("the largest of its shards'".into()),
                        mark: Mark::None,
                    },
                    Cell::plain(""),
                    Cell::plain(pct(p.cpu_busy_pct)),
                    Cell::plain(pct(p.client_cpu_pct)),
                ],
            });
            for x in &p.shards {
                rows.push(Row {
                    label: format!("{point}: shard {}", x.index),
                    cells: vec![
                        Cell::plain(x.node.clone()),
                        Cell::plain(x.clients.to_string()),
                        Cell::plain(x.transactions.to_string()),
                        Cell::plain(format!("{:.2}", x.tps)),
                        Cell::plain(ms(x.start_skew_ms)),
                        Cell::plain(ms(x.clock_offset_ms)),
                        Cell::plain(pct(x.cpu_busy_pct)),
                        Cell::plain(pct(x.client_cpu_pct)),
                    ],
                });
            }
        }
        blocks.push(Block::Table(Table {
            caption: format!("{w}: coordinated points and their shards"),
            corner: "point".into(),
            columns: COLUMNS.iter().map(|c| c.to_string()).collect(),
            rows,
            wrap: None,
            prose: false,
        }));
    }
    Some(Section {
        title: "Coordinated points: shards".into(),
        blocks,
    })
}

/// A share of a machine's CPU, `n/a` when not measured (or, for a merged
/// row, when its shards ran on several machines).
fn pct(v: Option<f64>) -> String {
    v.map_or("n/a".into(), |v| format!("{v:.1}"))
}

/// What the point's throughput counts, in its workload's words.
fn unit_of(data: &StudyData, p: &ShardedPoint) -> &'static str {
    let name = data
        .points
        .iter()
        .chain(&data.paced)
        .find(|s| s.row.key == p.key)
        .map_or("", |s| s.row.workload.as_str());
    unit(name).per_s
}
