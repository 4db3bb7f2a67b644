//! Expanding a [`Study`] into the ordered list of points to measure.
//!
//! Two orders (`order` in the study file, [`Order`]):
//!
//! - **Interleaved** (the default with two or more series): cell by cell —
//!   CPU set → workload → client count → level — and within a cell block
//!   by block: each block runs every series (target × variant, and the
//!   control's second measurement) once, in an order shuffled per block
//!   from the study's seed, so that the machine's drift falls on every
//!   series of a block alike and a comparison can pair them. Every managed
//!   server stays up (the runner keeps them all); a variant needing other
//!   settings restarts its server inside the block. A search for the
//!   highest sustained rate (`rates = "find"`) is one cell: a block runs
//!   each series' calibration and probes back to back.
//! - **Sequential**: target → variant → CPU set → workload → client count →
//!   repeat, outermost first. Target, variant and CPU set are outermost
//!   because changing them restarts a managed server; repeats are
//!   innermost so the stop rules can judge a client count from all its
//!   repeats before the next one runs.
//!
//! Each point says whether the runner must (re)start the server and
//! (re)load the data before it, so the runner only follows the plan. A
//! [`Cell`] groups the points compared with each other, block by block:
//! the runner adds blocks beyond a workload's `repeats.min` only while a
//! cell's comparisons are less precise than its `repeats.precision`.
//!
//! A *series* is one target × variant × CPU set × workload over its client
//! counts: the curve a report draws and the unit the stop rules cut short.

use std::ops::Range;
use std::time::Duration;

pub use super::key::PointKey;
use super::model::{Level, Order, Reprepare, Restart, Study, WorkloadSpec};
use crate::rand::Rng;

/// Estimated cost of a point beyond its warmup and measured time:
/// connecting the clients, preparing statements, committing the result.
pub const POINT_OVERHEAD: Duration = Duration::from_secs(1);
/// Estimated cost of (re)starting a managed server: a clean shutdown and a
/// start that waits for connections (MariaDB and PostgreSQL take 1–3 s on a
/// small data directory; the first start also initialises it).
pub const SERVER_START: Duration = Duration::from_secs(5);
/// Estimated fixed cost of a data load (drop, create, index), on top of
/// its rows at [`LOAD_ROWS_PER_SEC`].
pub const LOAD_OVERHEAD: Duration = Duration::from_secs(1);
/// Estimated load rate of sysbench rows (SQLite inserts, MariaDB's LOAD
/// DATA and PostgreSQL's COPY all manage at least this on 2 cores).
pub const LOAD_ROWS_PER_SEC: f64 = 100_000.0;

/// The ordered points of a study, the series they form and the cells
/// that compare them.
#[derive(Debug, Clone)]
pub struct Plan {
    pub points: Vec<Point>,
    pub series: Vec<Series>,
    pub cells: Vec<Cell>,
}

/// One target × variant × CPU set × workload over its client counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub target: usize,
    pub variant: usize,
    pub cpus: Option<Vec<usize>>,
    pub workload: usize,
    /// The control's second measurement (see [`Point::again`]).
    pub again: bool,
    /// Ascending client counts.
    pub clients: Vec<u32>,
    /// Its points, indexes into [`Plan::points`] in run order.
    pub points: Vec<usize>,
}

/// The points compared with each other: one workload at one CPU set,
/// client count and level, block by block. Interleaved, a block holds
/// every series of the cell once; sequential, a cell is one series'
/// repeats, a block one repeat.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Index into [`Study::workloads`].
    pub workload: usize,
    /// Each block's points, block 1 first; together a contiguous range of
    /// [`Plan::points`].
    pub blocks: Vec<Range<usize>>,
}

impl Cell {
    /// All its points.
    pub fn points(&self) -> Range<usize> {
        let start = self.blocks.first().map_or(0, |b| b.start);
        let end = self.blocks.last().map_or(start, |b| b.end);
        start..end
    }
}

/// One measurement: a workload at a client count on one configuration of a
/// target, for one repeat.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Stable identity, for the results database and resuming.
    pub key: PointKey,
    /// Index into [`Plan::series`].
    pub series: usize,
    /// Index into [`Study::targets`].
    pub target: usize,
    /// Index into [`Study::variants`] (which belongs to `target`).
    pub variant: usize,
    /// CPUs the managed server is pinned to; None = not pinned.
    pub cpus: Option<Vec<usize>>,
    /// Index into [`Study::workloads`].
    pub workload: usize,
    /// Clients of each instance of the workload.
    pub clients: u32,
    /// Instances of the workload that run at once (total connections =
    /// `clients × instances`).
    pub instances: u32,
    /// The offered rate or users on the clients' connections; None: the
    /// closed loop (a rate series' calibration point, or a plain point).
    pub level: Option<Level>,
    /// 1-based.
    pub repeat: u32,
    /// Before this point, (re)start the managed server with the variant's
    /// settings and this CPU set: at the target's first point, whenever the
    /// settings or CPUs differ from the previous point's, and as the
    /// study's `restart` asks. Always false for unmanaged targets.
    pub start_server: bool,
    /// Before this point, drop and load the workload's data on the target:
    /// when the target does not hold this workload's data yet (another
    /// workload's differs, or a data-changing one ran since), and as the
    /// workload's `reprepare` asks.
    pub prepare: bool,
    /// The control's second measurement in its block: the same target and
    /// variant, stored as the target `NAME (again)` ([`again_name`]).
    pub again: bool,
    /// Index into [`Plan::cells`].
    pub cell: usize,
}

/// The name a control's second measurement is stored under.
pub fn again_name(target: &str) -> String {
    format!("{target}{}", super::AGAIN)
}

/// A managed server's settings and CPU set: when they change, it restarts.
type ServerConfig = (Vec<(String, String)>, Option<Vec<usize>>);

/// What a target's server and database hold while the plan is walked.
#[derive(Default)]
struct TargetState {
    /// Settings and CPUs of the running server.
    server: Option<ServerConfig>,
    /// The variant and CPU set of the target's last point.
    last: Option<(usize, Option<Vec<usize>>)>,
    /// Data signature of what is loaded.
    loaded: Option<String>,
    /// A workload that changes data ran since the load.
    changed_by: Option<usize>,
}

/// The plan as it is built: points in run order, each target's state.
struct Builder<'a> {
    study: &'a Study,
    points: Vec<Point>,
    series: Vec<Series>,
    cells: Vec<Cell>,
    states: Vec<TargetState>,
}

impl<'a> Builder<'a> {
    /// Every series of the study in canonical order (target → variant →
    /// CPU set → workload, the control's twin after its original), with
    /// no points yet.
    fn new(study: &'a Study) -> Builder<'a> {
        let mut series = Vec::new();
        for (t, target) in study.targets.iter().enumerate() {
            for (v, _) in study.variants_of(t) {
                for cpus in &target.cpus {
                    for w in 0..study.workloads.len() {
                        let clients = study.clients_for(v, w);
                        if clients.is_empty() {
                            continue;
                        }
                        let twins = if study.design.control == Some(v) {
                            &[false, true][..]
                        } else {
                            &[false][..]
                        };
                        for &again in twins {
                            series.push(Series {
                                target: t,
                                variant: v,
                                cpus: cpus.clone(),
                                workload: w,
                                again,
                                clients: clients.clone(),
                                points: Vec::new(),
                            });
                        }
                    }
                }
            }
        }
        Builder {
            study,
            points: Vec::new(),
            series,
            cells: Vec::new(),
            states: study
                .targets
                .iter()
                .map(|_| TargetState::default())
                .collect(),
        }
    }

    /// Appends series `s`'s point at `clients`, `level`, `repeat` in cell
    /// `cell`, deciding from its target's state whether the server
    /// (re)starts and the data (re)loads before it.
    fn push(&mut self, s: usize, clients: u32, level: Option<Level>, repeat: u32, cell: usize) {
        let study = self.study;
        let se = &self.series[s];
        let (t, v, w, again, cpus) = (
            se.target,
            se.variant,
            se.workload,
            se.again,
            se.cpus.clone(),
        );
        let (target, variant, wl) = (&study.targets[t], &study.variants[v], &study.workloads[w]);
        let state = &mut self.states[t];
        let server = (variant.settings.clone(), cpus.clone());
        let group_start = state.last != Some((v, cpus.clone()));
        state.last = Some((v, cpus.clone()));
        // Interleaved, the series of one target alternate within every
        // block: `per-variant` restarts only where the settings or CPUs
        // differ (a fresh server per alternation would measure starts).
        let per_variant =
            study.restart == Restart::PerVariant && study.design.order == Order::Sequential;
        let start_server = target.managed().is_some()
            && (state.server.as_ref() != Some(&server)
                || study.restart == Restart::PerPoint
                || (per_variant && group_start));
        if start_server {
            state.server = Some(server);
        }
        let sig = data_signature(wl, w);
        let prepare = state.loaded.as_ref() != Some(&sig)
            || state.changed_by.is_some_and(|o| o != w)
            || wl.reprepare == Reprepare::PerRepeat
            || (wl.reprepare == Reprepare::PerPoint && repeat == 1);
        if prepare {
            state.loaded = Some(sig);
            state.changed_by = None;
        }
        if wl.reprepare != Reprepare::Never {
            state.changed_by = Some(w);
        }
        let name = if again {
            again_name(&target.name)
        } else {
            target.name.clone()
        };
        self.series[s].points.push(self.points.len());
        self.points.push(Point {
            key: PointKey {
                target: name,
                variant: variant.name.clone(),
                cpus: cpus.clone(),
                workload_index: w,
                workload: wl.name.clone(),
                clients,
                instances: wl.instances,
                repeat,
                level: level.map(|l| l.key()),
            },
            series: s,
            target: t,
            variant: v,
            cpus,
            workload: w,
            clients,
            instances: wl.instances,
            level,
            repeat,
            start_server,
            prepare,
            again,
            cell,
        });
    }

    fn finish(self) -> Plan {
        Plan {
            points: self.points,
            series: self.series,
            cells: self.cells,
        }
    }
}

/// The levels of a workload at each client count, in groups of one cell
/// each: the closed loop, or its paced levels after the closed-loop point
/// that calibrates shares of the peak — each level a cell of its own — or
/// a search's calibration and probes, one cell, so that a block runs each
/// series' whole search back to back.
fn groups(wl: &WorkloadSpec) -> Vec<Vec<Option<Level>>> {
    if wl.pacing.levels.is_empty() {
        return vec![vec![None]];
    }
    let levels = wl.pacing.levels.iter().copied().map(Some);
    if wl.pacing.search.is_some() {
        return vec![std::iter::once(None).chain(levels).collect()];
    }
    let calibration = wl.pacing.calibrates().then_some(None);
    calibration
        .into_iter()
        .chain(levels)
        .map(|l| vec![l])
        .collect()
}

/// Expands the study into its points, in run order.
pub fn plan(study: &Study) -> Plan {
    match study.design.order {
        Order::Sequential => sequential(study),
        Order::Interleaved => interleaved(study),
    }
}

/// Target → variant → CPU set → workload → clients → level → repeat; a
/// cell is one series' repeats of one point (of a search: of its
/// calibration and probes, in order).
fn sequential(study: &Study) -> Plan {
    let mut b = Builder::new(study);
    for s in 0..b.series.len() {
        let (w, clients) = (b.series[s].workload, b.series[s].clients.clone());
        let wl = &study.workloads[w];
        for &c in &clients {
            for group in groups(wl) {
                let cell = b.cells.len();
                let mut blocks = Vec::new();
                for repeat in 1..=wl.repeats.max {
                    let start = b.points.len();
                    for &level in &group {
                        b.push(s, c, level, repeat, cell);
                    }
                    blocks.push(start..b.points.len());
                }
                b.cells.push(Cell {
                    workload: w,
                    blocks,
                });
            }
        }
    }
    b.finish()
}

/// CPU set → workload → clients → level, then block by block: every
/// series of the cell once per block, in a shuffled order.
fn interleaved(study: &Study) -> Plan {
    let mut b = Builder::new(study);
    let mut cpu_sets: Vec<Option<Vec<usize>>> = Vec::new();
    for se in &b.series {
        if !cpu_sets.contains(&se.cpus) {
            cpu_sets.push(se.cpus.clone());
        }
    }
    for cpus in &cpu_sets {
        for (w, wl) in study.workloads.iter().enumerate() {
            let members: Vec<usize> = (0..b.series.len())
                .filter(|&s| b.series[s].cpus == *cpus && b.series[s].workload == w)
                .collect();
            let mut counts: Vec<u32> = members
                .iter()
                .flat_map(|&s| b.series[s].clients.iter().copied())
                .collect();
            counts.sort_unstable();
            counts.dedup();
            for &c in &counts {
                let here: Vec<usize> = members
                    .iter()
                    .copied()
                    .filter(|&s| b.series[s].clients.contains(&c))
                    .collect();
                for group in groups(wl) {
                    let cell = b.cells.len();
                    let mut blocks = Vec::new();
                    for repeat in 1..=wl.repeats.max {
                        let order = shuffled(&here, study.design.seed, cell, repeat);
                        let start = b.points.len();
                        for s in order {
                            for &level in &group {
                                b.push(s, c, level, repeat, cell);
                            }
                        }
                        blocks.push(start..b.points.len());
                    }
                    b.cells.push(Cell {
                        workload: w,
                        blocks,
                    });
                }
            }
        }
    }
    b.finish()
}

/// `items` in the order of block `block` of cell `cell`: a Fisher–Yates
/// shuffle from a stream of its own, so a block's order depends on the
/// study's seed and its place alone.
fn shuffled(items: &[usize], seed: u64, cell: usize, block: u32) -> Vec<usize> {
    let mut out = items.to_vec();
    let stream = ((cell as u64) << 32) | u64::from(block);
    let mut rng = Rng::for_client(seed ^ 0x626c_6f63_6b73, stream);
    for i in (1..out.len()).rev() {
        let j = rng.uniform(0, i as u32) as usize;
        out.swap(i, j);
    }
    out
}

/// Options that shape the `sbtestN` tables: two workloads agreeing on them
/// (and on instances) run on the same data without a reload.
const DATA_OPTIONS: [&str; 7] = [
    "tables",
    "table-size",
    "auto-inc",
    "secondary",
    "create-secondary",
    "create-table-options",
    "mysql-storage-engine",
];

/// What a workload's data looks like, as a comparable string.
fn data_signature(wl: &WorkloadSpec, index: usize) -> String {
    // bulk_insert loads no rows; its tables are its own.
    if wl.name == "bulk_insert" {
        return format!("bulk_insert#{index}");
    }
    // Families with tables of their own: their scale options say it all.
    let get = |opt: &str| {
        wl.values
            .iter()
            .find(|(k, _)| *k == opt)
            .map(|(_, v)| v.to_string())
    };
    if wl.name == "dbt1" {
        return format!(
            "dbt1 items={} ebs={}",
            get("items").unwrap_or_default(),
            get("ebs").unwrap_or_default()
        );
    }
    if wl.name.starts_with("smack_") {
        return format!("smack scale={}", get("scale").unwrap_or_default());
    }
    let mut sig = format!("sbtest instances={}", wl.instances);
    for opt in DATA_OPTIONS {
        // select_random_* work on sbtest1 only: as if tables = 1.
        let v = wl.values.iter().find(|(k, _)| *k == opt).map(|(_, v)| v);
        sig.push_str(&format!(" {opt}={}", v.unwrap_or("1")));
    }
    sig
}

/// Rows a load of the workload's data inserts (all instances).
pub(super) fn rows(wl: &WorkloadSpec) -> u64 {
    let get = |name: &str| {
        wl.values
            .iter()
            .find(|(k, _)| *k == name)
            .and_then(|(_, v)| v.parse::<u64>().ok())
    };
    if wl.name == "dbt1" {
        // Customers and what hangs on them (2 addresses, 0.9 orders with
        // 3 lines and a card row each on average), items and authors.
        let customers = 2880 * get("ebs").unwrap_or(10);
        return customers * 75 / 10 + get("items").unwrap_or(10_000) * 5 / 4;
    }
    match (wl.name.as_str(), get("table-size")) {
        ("bulk_insert", _) | (_, None) => 0,
        (_, Some(size)) => get("tables").unwrap_or(1) * size * u64::from(wl.instances),
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
