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
//!   settings restarts its server inside the block.
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

use std::collections::BTreeSet;
use std::fmt;
use std::ops::Range;
use std::str::FromStr;
use std::time::Duration;

use super::model::{Level, Order, Reprepare, Restart, Study, WorkloadSpec};
use crate::rand::Rng;
use crate::server::{format_cpu_list, parse_cpu_list};
use crate::util::duration;

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
    format!("{target}{}", crate::report::study::AGAIN)
}

/// A point's identity, stable across runs of the same study file. Its
/// string form, e.g.
/// `target=pg/variant=base/cpus=0-1/workload=0:oltp_read_only/clients=64/instances=1/repeat=2`,
/// is what the results database stores; `cpus=all` means not pinned, and
/// `%` and `/` in names are written `%25` and `%2F`. A paced point ends in
/// its level: `…/repeat=1/rate=5000`, `…/rate=50%`, `…/users=1000`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PointKey {
    pub target: String,
    pub variant: String,
    pub cpus: Option<Vec<usize>>,
    /// Position of the workload in the file, then its name.
    pub workload_index: usize,
    pub workload: String,
    pub clients: u32,
    pub instances: u32,
    pub repeat: u32,
    /// [`Level::key`] of a paced point.
    pub level: Option<String>,
}

impl fmt::Display for PointKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cpus = self
            .cpus
            .as_deref()
            .map_or("all".to_string(), format_cpu_list);
        write!(
            f,
            "target={}/variant={}/cpus={cpus}/workload={}:{}/clients={}/instances={}/repeat={}",
            escape(&self.target),
            escape(&self.variant),
            self.workload_index,
            escape(&self.workload),
            self.clients,
            self.instances,
            self.repeat
        )?;
        match &self.level {
            Some(l) => write!(f, "/{l}"),
            None => Ok(()),
        }
    }
}

impl FromStr for PointKey {
    type Err = String;

    /// Parses the string form back; anything else is an error naming it.
    fn from_str(s: &str) -> Result<PointKey, String> {
        let bad = || {
            format!("bad point key '{s}': expected target=…/variant=…/cpus=…/workload=N:NAME/clients=N/instances=N/repeat=N")
        };
        let mut parts: Vec<&str> = s.split('/').collect();
        let level = match parts.len() {
            8 => {
                let l = parts.pop().unwrap();
                Some(Level::from_key(l).ok_or_else(bad)?.key())
            }
            _ => None,
        };
        let names = [
            "target",
            "variant",
            "cpus",
            "workload",
            "clients",
            "instances",
            "repeat",
        ];
        if parts.len() != names.len() {
            return Err(bad());
        }
        let mut values = Vec::new();
        for (part, name) in parts.iter().zip(names) {
            match part.split_once('=') {
                Some((n, v)) if n == name => values.push(v),
                _ => return Err(bad()),
            }
        }
        let num = |v: &str| v.parse::<u32>().map_err(|_| bad());
        let (wi, wname) = values[3].split_once(':').ok_or_else(bad)?;
        Ok(PointKey {
            target: unescape(values[0]).ok_or_else(bad)?,
            variant: unescape(values[1]).ok_or_else(bad)?,
            cpus: match values[2] {
                "all" => None,
                list => Some(parse_cpu_list(list).map_err(|_| bad())?),
            },
            workload_index: wi.parse().map_err(|_| bad())?,
            workload: unescape(wname).ok_or_else(bad)?,
            clients: num(values[4])?,
            instances: num(values[5])?,
            repeat: num(values[6])?,
            level,
        })
    }
}

/// Makes a name safe inside a key segment (see [`PointKey`]).
fn escape(s: &str) -> String {
    s.replace('%', "%25").replace('/', "%2F")
}

/// Reverses [`escape`]; None for a `%` that is not `%25` or `%2F`.
fn unescape(s: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        match rest.get(i..i + 3) {
            Some("%25") => out.push('%'),
            Some("%2F") => out.push('/'),
            _ => return None,
        }
        rest = &rest[i + 3..];
    }
    out.push_str(rest);
    Some(out)
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

/// The levels of a workload at each client count: the closed loop, or
/// its paced levels after the closed-loop point that calibrates shares of
/// the peak.
fn levels(wl: &WorkloadSpec) -> Vec<Option<Level>> {
    if wl.pacing.levels.is_empty() {
        vec![None]
    } else {
        let calibration = wl.pacing.calibrates().then_some(None);
        calibration
            .into_iter()
            .chain(wl.pacing.levels.iter().copied().map(Some))
            .collect()
    }
}

/// Expands the study into its points, in run order.
pub fn plan(study: &Study) -> Plan {
    match study.design.order {
        Order::Sequential => sequential(study),
        Order::Interleaved => interleaved(study),
    }
}

/// Target → variant → CPU set → workload → clients → level → repeat; a
/// cell is one series' repeats of one point.
fn sequential(study: &Study) -> Plan {
    let mut b = Builder::new(study);
    for s in 0..b.series.len() {
        let (w, clients) = (b.series[s].workload, b.series[s].clients.clone());
        let wl = &study.workloads[w];
        for &c in &clients {
            for level in levels(wl) {
                let cell = b.cells.len();
                let mut blocks = Vec::new();
                for repeat in 1..=wl.repeats.max {
                    let start = b.points.len();
                    b.push(s, c, level, repeat, cell);
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
                for level in levels(wl) {
                    let cell = b.cells.len();
                    let mut blocks = Vec::new();
                    for repeat in 1..=wl.repeats.max {
                        let order = shuffled(&here, study.design.seed, cell, repeat);
                        let start = b.points.len();
                        for s in order {
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
fn rows(wl: &WorkloadSpec) -> u64 {
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

impl Plan {
    /// Upper estimate of the study's wall time, before stop rules skip any
    /// point: per point its warmup and measured time plus
    /// [`POINT_OVERHEAD`], plus [`SERVER_START`] per server (re)start, plus
    /// per data load [`LOAD_OVERHEAD`] and its rows at [`LOAD_ROWS_PER_SEC`].
    /// Points that end on events or rounds count no run time (it is not
    /// known in advance); [`Plan::describe`] says how many there are.
    pub fn estimated_duration(&self, study: &Study) -> Duration {
        self.points.iter().map(|p| point_estimate(study, p)).sum()
    }

    /// The same estimate when every cell stops at its workload's
    /// `repeats.min` blocks: the shortest a study with a `precision` can
    /// take (equal to [`Plan::estimated_duration`] without one).
    pub fn estimated_duration_min(&self, study: &Study) -> Duration {
        self.points
            .iter()
            .filter(|p| p.repeat <= study.workloads[p.workload].repeats.min)
            .map(|p| point_estimate(study, p))
            .sum()
    }

    /// What `--dry-run` prints: the study, counts per axis, the number of
    /// points, server starts and data loads, the estimated duration, then
    /// one line per series.
    pub fn describe(&self, study: &Study) -> String {
        let mut s = String::new();
        let mut line = |l: String| {
            s.push_str(&l);
            s.push('\n');
        };
        line(format!(
            "study {} ({}) → {}",
            study.name,
            study.source.display(),
            study.out.display()
        ));
        if !study.description.is_empty() {
            for l in study.description.lines() {
                line(format!("  {l}"));
            }
        }
        let used =
            |f: fn(&Point) -> String| -> BTreeSet<String> { self.points.iter().map(f).collect() };
        // Variants by name: one variant applied to several targets is one.
        let variants: BTreeSet<&str> = self
            .points
            .iter()
            .map(|p| study.variants[p.variant].name.as_str())
            .collect();
        let variants = variants.len();
        let pairs = used(|p| format!("{}/{}", p.target, p.variant)).len();
        let cpus = used(|p| format!("{:?}", p.cpus)).len();
        let workloads = used(|p| p.workload.to_string()).len();
        let counts: BTreeSet<u32> = self.points.iter().map(|p| p.clients).collect();
        let repeats: BTreeSet<String> = self
            .series
            .iter()
            .map(|s| describe_repeats(&study.workloads[s.workload]))
            .collect();
        line(format!(
            "axes: {} target{}, {variants} variant{} ({pairs} target × variant series), {cpus} CPU set{}, {workloads} workload{}, {} client count{} ({}), repeats {}",
            study.targets.len(),
            plural(study.targets.len()),
            plural(variants),
            plural(cpus),
            plural(workloads),
            counts.len(),
            plural(counts.len()),
            compact(&counts.iter().copied().collect::<Vec<_>>()),
            repeats.into_iter().collect::<Vec<_>>().join(", "),
        ));
        let d = &study.design;
        let name = |v: usize| {
            let v = &study.variants[v];
            format!("{}/{}", study.targets[v.target].name, v.name)
        };
        line(format!(
            "order: {}{}; baseline {}{}; equivalence ±{} %",
            d.order.name(),
            if d.order == Order::Interleaved {
                format!(
                    " ({} cells, blocks shuffled from seed {})",
                    self.cells.len(),
                    d.seed
                )
            } else {
                String::new()
            },
            if d.baselines.is_empty() {
                name(d.baseline)
            } else {
                d.baselines
                    .iter()
                    .map(|&b| name(b))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            d.control.map_or(String::new(), |c| format!(
                "; control {} (twice per block)",
                name(c)
            )),
            d.equivalence * 100.0
        ));
        let starts = self.points.iter().filter(|p| p.start_server).count();
        let loads = self.points.iter().filter(|p| p.prepare).count();
        line(format!(
            "points: {} in {} series; server starts: {starts}; data loads: {loads}",
            self.points.len(),
            self.series.len()
        ));
        let open = self
            .points
            .iter()
            .filter(|p| study.workloads[p.workload].time.is_none())
            .count();
        let open = if open > 0 {
            format!(", not counting the run time of {open} points that end on events or rounds")
        } else {
            String::new()
        };
        let (least, most) = (
            self.estimated_duration_min(study),
            self.estimated_duration(study),
        );
        let range = if least == most {
            format!("{} at most", duration::format(most))
        } else {
            format!(
                "{} to {} (as the repeats' precision is reached early or late)",
                duration::format(least),
                duration::format(most)
            )
        };
        line(format!(
            "estimated duration: {range}{open} (per point {}s overhead, {}s per server start, data loads at {} rows/s)",
            POINT_OVERHEAD.as_secs(),
            SERVER_START.as_secs(),
            LOAD_ROWS_PER_SEC as u64
        ));
        let stop = &study.stop;
        let mut rules = Vec::new();
        if let Some(b) = stop.below_peak {
            rules.push(format!("below_peak {b}"));
        }
        if let Some(m) = stop.max_failed_rate {
            rules.push(format!("max_failed_rate {m}"));
        }
        if stop.max_error_rate.is_set() {
            rules.push(format!(
                "max_error_rate {}",
                stop.max_error_rate.describe().join(", ")
            ));
        }
        if let Some(t) = stop.point_timeout {
            rules.push(format!("point_timeout {}", duration::format(t)));
        }
        line(format!(
            "restart: {}; stop rules: {}",
            study.restart.name(),
            if rules.is_empty() {
                "none".to_string()
            } else {
                rules.join(", ")
            }
        ));
        line("series (target / variant / cpus / workload: clients × repeats):".into());
        for (i, se) in self.series.iter().enumerate() {
            let wl = &study.workloads[se.workload];
            let pts: Vec<&Point> = se.points.iter().map(|&i| &self.points[i]).collect();
            let mut notes = Vec::new();
            let starts = pts.iter().filter(|p| p.start_server).count();
            if starts > 0 {
                notes.push(format!("{starts} server start{}", plural(starts)));
            }
            let loads = pts.iter().filter(|p| p.prepare).count();
            if loads > 0 {
                notes.push(format!("{loads} data load{}", plural(loads)));
            }
            if wl.instances > 1 {
                notes.push(format!("{} instances", wl.instances));
            }
            if let Some(n) = study.nodes(se.target, se.workload) {
                let count = n.count;
                notes.push(format!(
                    "{count} node{} ({})",
                    plural(count),
                    n.launcher.name()
                ));
            }
            let label = if wl.label != wl.name {
                format!(" ({})", wl.label)
            } else {
                String::new()
            };
            let target = &study.targets[se.target].name;
            line(format!(
                "  [{i}] {} / {} / {} / {}:{}{label}: {} × {} = {} point{}{}",
                if se.again {
                    again_name(target)
                } else {
                    target.clone()
                },
                study.variants[se.variant].name,
                se.cpus.as_deref().map_or("all".into(), format_cpu_list),
                se.workload,
                wl.name,
                compact(&se.clients),
                describe_repeats(wl),
                pts.len(),
                plural(pts.len()),
                if notes.is_empty() {
                    String::new()
                } else {
                    format!("; {}", notes.join(", "))
                }
            ));
        }
        s
    }
}

/// One point's share of [`Plan::estimated_duration`].
fn point_estimate(study: &Study, p: &Point) -> Duration {
    let wl = &study.workloads[p.workload];
    // With a ramp-up the window opens once the last user has started.
    let warmup = match (p.level, wl.pacing.ramp_up) {
        (Some(super::model::Level::Users(u)), Some(r)) => wl
            .warmup
            .max(Duration::from_secs_f64(f64::from(u.saturating_sub(1)) / r)),
        _ => wl.warmup,
    };
    let mut d = warmup + wl.time.unwrap_or_default() + POINT_OVERHEAD;
    if p.start_server {
        d += SERVER_START;
    }
    if p.prepare {
        d += LOAD_OVERHEAD + Duration::from_secs_f64(rows(wl) as f64 / LOAD_ROWS_PER_SEC);
    }
    d
}

/// `3`, or `2–10 (until ±3 %)` for repeats with a precision.
fn describe_repeats(wl: &WorkloadSpec) -> String {
    let r = wl.repeats;
    match r.precision {
        None => r.max.to_string(),
        Some(p) => format!("{}–{} (until ±{} %)", r.min, r.max, p * 100.0),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `1,2,4,8`, or for long lists `1,2,3,4,5,…,450,500 (14 counts)`.
fn compact(counts: &[u32]) -> String {
    let join = |c: &[u32]| c.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    if counts.len() <= 12 {
        join(counts)
    } else {
        format!(
            "{},…,{} ({} counts)",
            join(&counts[..5]),
            join(&counts[counts.len() - 2..]),
            counts.len()
        )
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
