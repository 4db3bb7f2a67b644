//! A validated study: every name resolved, every default filled in, every
//! value checked, so the planner and the runner never meet bad input.
//! Built by [`super::load()`]; what each TOML key means is in docs/study.md.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

pub use super::managed::ManagedServer;
use crate::driver::ErrorSet;
use crate::driver::Target;
use crate::engine::{event_loops, RunConfig};
use crate::nodes::{Launcher, Nodes};
use crate::rand::dist::{DistKind, DistParams};
use crate::rand::pacing::{Arrival, ThinkTime};
use crate::rand::RandConfig;
use crate::server::{ServerKind, ServerSpec};
use crate::workload::{OptionValues, WorkloadInfo};

pub use super::level::Level;

/// A whole campaign: targets × variants × CPU sets × workloads × client
/// counts × repeats, plus how to run and when to give up on a series.
#[derive(Debug, Clone)]
pub struct Study {
    /// The file the study was loaded from, as given; error messages and the
    /// results record name it.
    pub source: PathBuf,
    /// Names the study in reports and the default output directory.
    pub name: String,
    pub description: String,
    /// Where the runner writes the results database and reports
    /// (default `results/<name>`, relative to the working directory).
    pub out: PathBuf,
    pub targets: Vec<TargetSpec>,
    /// Every (target, variant) pair, grouped by target in target order; each
    /// target's `base` comes first, then the declared variants that apply to
    /// it in file order, then the parameter sweep's generated ones.
    /// [`crate::study::Point::variant`] indexes this.
    pub variants: Vec<VariantSpec>,
    pub workloads: Vec<WorkloadSpec>,
    pub restart: Restart,
    /// The interval of the machine and server sampling beside each point;
    /// `None`: not sampled (`metrics = false`).
    pub metrics: Option<Duration>,
    /// `prometheus = "ADDR"`: every point served live there as it runs.
    pub prometheus: Option<std::net::SocketAddr>,
    /// `profile = true`: on-CPU profiles of every point, unless its
    /// workload says otherwise.
    pub profile: bool,
    pub stop: StopRules,
    /// The `[sweep.parameter]` table, if any; its variants are already
    /// expanded into `variants`.
    pub sweep: Option<ParameterSweep>,
    /// The `[[reference]]` files, as read (stored with the study).
    pub references: Vec<ReferenceFile>,
    /// What the study reproduces: references parsed, conclusions and
    /// deviations checked (stored with the study as JSON).
    pub reproduction: super::repro::ReproSpec,
    /// How points are ordered and series compared.
    pub design: Design,
}

/// How a study orders its points and compares its series (a series here:
/// one target × variant, an entry of [`Study::variants`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Design {
    pub order: Order,
    /// The series every other is compared with (`baseline = "NAME"`,
    /// default the first): an index into [`Study::variants`].
    pub baseline: usize,
    /// With `baseline = ["A", "B"]`: one baseline per server kind (each
    /// series is compared with its own kind's, `baseline` being the
    /// first); empty with one.
    pub baselines: Vec<usize>,
    /// The series measured twice in every block (`control = "NAME"`):
    /// its comparison with itself is the study's noise floor.
    pub control: Option<usize>,
    /// A ratio whose interval lies within 1 ± this counts as no
    /// difference (`equivalence = "2%"`: 0.02).
    pub equivalence: f64,
    /// Seeds each block's order (`seed`, default one derived from the
    /// study's name, so the same file gives the same order).
    pub seed: u64,
}

/// The order of a study's points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// For each cell (workload, CPU set, client count or rate), each
    /// repeat is a block that runs every series once, in an order
    /// shuffled per block; all managed servers run at once.
    Interleaved,
    /// Target after target: target → variant → CPU set → workload →
    /// clients → repeat, one managed server at a time.
    Sequential,
}

impl Order {
    /// The study file's spelling.
    pub fn name(self) -> &'static str {
        match self {
            Order::Interleaved => "interleaved",
            Order::Sequential => "sequential",
        }
    }
}

/// How often a point runs: `repeats = N` (min = max = N), or blocks added
/// until every comparison's interval is narrow enough (`repeats = { min =
/// 3, max = 10, precision = "3%" }`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Repeats {
    pub min: u32,
    pub max: u32,
    /// The interval half-width (a share: 0.03) at which a cell needs no
    /// more blocks; None: always `max` (= `min`).
    pub precision: Option<f64>,
}

impl Repeats {
    /// A fixed number of repeats.
    pub fn fixed(n: u32) -> Repeats {
        Repeats {
            min: n,
            max: n,
            precision: None,
        }
    }
}

/// One database to benchmark.
#[derive(Debug, Clone)]
pub struct TargetSpec {
    /// Unique within the study; appears in point keys and reports.
    pub name: String,
    pub kind: TargetKind,
    /// The CPU-set axis of this target: the sets to pin its server to, in
    /// order, or `[None]` (not pinned) for unmanaged targets and managed ones
    /// without `cpus`. Never empty.
    pub cpus: Vec<Option<Vec<usize>>>,
    /// `nodes` and `launcher` of this target, else the study's: the
    /// default of its workloads' points (see [`Study::nodes`]).
    pub nodes: NodesSpec,
}

impl TargetSpec {
    /// The managed server's description, if dbsweep starts this target.
    pub fn managed(&self) -> Option<&ManagedServer> {
        match &self.kind {
            TargetKind::Managed(m) => Some(m),
            _ => None,
        }
    }

    /// The SQL dialect its workloads are built for.
    pub fn dialect(&self) -> crate::driver::Dialect {
        use crate::driver::Dialect;
        match &self.kind {
            TargetKind::Url(t) => t.dialect(),
            TargetKind::Sqlite(_) => Dialect::Sqlite,
            TargetKind::Managed(m) => match m.kind {
                ServerKind::Mariadb => Dialect::Mysql,
                ServerKind::Postgres => Dialect::Postgres,
            },
        }
    }
}

#[derive(Debug, Clone)]
pub enum TargetKind {
    /// An existing database, by URL (`url = "postgres://…"`), run as it is:
    /// no settings, variants or CPU pinning apply. `ps_mode = "disable"` is
    /// already applied.
    Url(Target),
    /// An SQLite file (`sqlite = "path"`), or None for a temporary database
    /// the runner creates and removes (`sqlite = true`, or no target at all).
    Sqlite(Option<PathBuf>),
    /// A server dbsweep starts, restarts with each variant's settings, and
    /// stops (`server = "mariadb" | "postgres"`).
    Managed(ManagedServer),
}

/// One configuration of one target.
#[derive(Debug, Clone, PartialEq)]
pub struct VariantSpec {
    /// Unique per target; `base` is the target's own settings.
    pub name: String,
    /// Index into [`Study::targets`].
    pub target: usize,
    /// What this variant changes, in file order (empty for `base`).
    pub overrides: Vec<(String, String)>,
    /// The full settings the server runs with: the target's settings with
    /// the overrides replacing same-named ones in place and new ones
    /// appended. Two points whose settings are equal need no restart between
    /// them. Empty for unmanaged targets.
    pub settings: Vec<(String, String)>,
    pub origin: VariantOrigin,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VariantOrigin {
    /// The target's own settings; every target has one.
    Base,
    /// A `[[variant]]` of the file; the index is its position there.
    Declared(usize),
    /// Generated by `[sweep.parameter]`: its baseline with one setting changed.
    Sweep { setting: String, value: String },
}

/// One workload of the study with everything the engine needs to run it.
#[derive(Debug, Clone)]
pub struct WorkloadSpec {
    /// The built-in workload's name (see `dbsweep workloads`).
    pub name: String,
    /// How reports name it: `label`, default the workload name. Two entries
    /// of the same workload with different options tell apart by it.
    pub label: String,
    /// The options the file gave, as `workload::build` takes them (booleans
    /// as on/off, numbers in decimal), in file order.
    pub options: Vec<(String, String)>,
    /// The effective options: defaults overlaid with `options`, validated.
    pub values: OptionValues,
    /// Measured window; None when the run ends on events or rounds only.
    pub time: Option<Duration>,
    pub events: Option<u64>,
    pub rounds: Option<u64>,
    pub warmup: Duration,
    /// How often each point runs (min ≥ 1).
    pub repeats: Repeats,
    /// The client counts of the sweep, sorted, distinct. Empty only in a
    /// study whose points all come from `[sweep.parameter]`.
    pub clients: Vec<u32>,
    pub rand_type: DistKind,
    /// Seed of the random streams; None = a fresh one per point (from time).
    pub rand_seed: Option<u64>,
    /// Interval samples this often; None = off. Default 1 s in a study.
    pub report_interval: Option<Duration>,
    pub max_retries: Option<u64>,
    pub ignore_errors: ErrorSet,
    /// How long in-flight transactions may finish after the end.
    pub grace: Duration,
    /// Copies of the workload run at once, each with its own connections and
    /// table set; a point's `clients` is the client count of each copy.
    pub instances: u32,
    pub reprepare: Reprepare,
    /// Its connections on this many event loops (`--client-threads`), at
    /// most one per client; None: a thread per client.
    pub client_threads: Option<usize>,
    /// `pipeline = K` (`run --pipeline`): statements in flight per connection.
    pub pipeline: Option<usize>,
    /// `profile`: this workload's points profiled or not, over the study's.
    pub profile: Option<bool>,
    /// Check the workload's consistency conditions after each point
    /// (TPC-C's clause 3.3.2), into the point's record, as `run --check`.
    pub check: bool,
    /// Rates or users instead of (or beside) the closed loop.
    pub pacing: PacingSpec,
    /// `nodes` and `launcher` of this workload, over its target's.
    pub nodes: NodesSpec,
}

/// `nodes` and `launcher` as one level of the file gives them (study,
/// target or workload); a level that gives none leaves the one above.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodesSpec {
    pub count: Option<usize>,
    pub launcher: Option<Launcher>,
}

impl NodesSpec {
    /// This level's values, the `outer` level's where it gives none.
    pub fn over(self, outer: NodesSpec) -> NodesSpec {
        NodesSpec {
            count: self.count.or(outer.count),
            launcher: self.launcher.or(outer.launcher),
        }
    }
}

/// How a workload's points are paced: its load axis (`rates` or `users`)
/// and the settings every point of it shares.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PacingSpec {
    /// One point per level at each client count (connections), in order;
    /// empty: the closed loop at each client count. Levels that are shares
    /// of the peak add a closed-loop calibration point before them.
    pub levels: Vec<Level>,
    pub arrival: Arrival,
    pub latency_limit: Option<Duration>,
    pub think_time: Option<ThinkTime>,
    /// Users started per second (`ramp_up`, `--ramp-up`).
    pub ramp_up: Option<f64>,
    /// The p99 latency an offered rate must keep to count as sustained
    /// (`p99_goal`); None: the latency limit, else the report's default.
    pub p99_goal: Option<Duration>,
    /// `rates = "find"`: the search for the highest rate that holds
    /// `p99_goal` (required then), to within this % of the closed-loop
    /// peak; `levels` are its probes.
    pub search: Option<f64>,
}

impl PacingSpec {
    /// Does some level need the closed-loop peak of its series?
    pub fn calibrates(&self) -> bool {
        self.levels
            .iter()
            .any(|l| matches!(l, Level::OfPeak(_) | Level::Probe(_)))
    }
}

/// The engine's defaults that a study does not expose.
const INTERVAL_PERCENTILE: f64 = 95.0;

impl WorkloadSpec {
    /// The registry entry (validated at load, so always present).
    pub fn info(&self) -> &'static WorkloadInfo {
        crate::workload::find(&self.name).expect("validated at load")
    }

    /// The engine configuration of one instance of this workload at
    /// `clients` clients, with the given seed (the runner draws one when
    /// `rand_seed` is None).
    pub fn run_config(&self, clients: u32, seed: u64) -> RunConfig {
        RunConfig {
            threads: clients as usize,
            time: self.time,
            events: self.events,
            rounds: self.rounds,
            warmup: self.warmup,
            report_interval: self.report_interval,
            interval_percentile: INTERVAL_PERCENTILE,
            max_retries: self.max_retries,
            ignore_errors: self.ignore_errors,
            grace: self.grace,
            seed,
            reconnect_every: None,
            timeout: None,
            pacing: Default::default(),
            shard: None,
            client_threads: event_loops(self.client_threads, self.pipeline, clients as usize),
            pipeline: self.pipeline,
            release: None,
        }
    }

    /// The random configuration for `workload::build`, with sysbench's
    /// default distribution knobs.
    pub fn rand_config(&self, seed: u64) -> RandConfig {
        RandConfig {
            kind: self.rand_type,
            params: DistParams::default(),
            seed,
        }
    }
}

/// When the runner restarts a managed server. A server is always
/// (re)started when its settings or CPU set change; this says when else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Restart {
    /// Only when the settings or CPUs change (and at the first point).
    Never,
    /// Also at the start of each variant and CPU set, even when the settings
    /// equal the previous ones: every series starts from a fresh server.
    #[default]
    PerVariant,
    /// Before every point: each measurement starts cold.
    PerPoint,
}

impl Restart {
    /// The study file's spelling.
    pub fn name(self) -> &'static str {
        match self {
            Restart::Never => "never",
            Restart::PerVariant => "per-variant",
            Restart::PerPoint => "per-point",
        }
    }
}

/// When a workload's data is loaded again, for workloads that change it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reprepare {
    /// Only when the data on the target is not this workload's.
    Never,
    /// Before the first repeat of each point (client count, variant, CPUs).
    PerPoint,
    /// Before every repeat.
    PerRepeat,
}

impl Reprepare {
    /// The study file's spelling.
    pub fn name(self) -> &'static str {
        match self {
            Reprepare::Never => "never",
            Reprepare::PerPoint => "per-point",
            Reprepare::PerRepeat => "per-repeat",
        }
    }

    /// The default for a workload: per-point for those that add or remove
    /// rows (so each point starts from the same table sizes), never for the
    /// rest.
    pub fn default_for(workload: &str) -> Reprepare {
        match workload {
            "oltp_delete" | "oltp_insert" | "bulk_insert" | "smack_oltp" => Reprepare::PerPoint,
            _ => Reprepare::Never,
        }
    }
}

/// When the runner gives up on the rest of a series or on a point. Skipped
/// points are recorded as skipped with the reason, never as zeros.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StopRules {
    /// Stop a series (one target, variant, CPU set and workload over its
    /// client counts) once a point's throughput falls below this fraction of
    /// the series' peak so far. In (0, 1).
    pub below_peak: Option<f64>,
    /// Stop a series once a point's failed transactions (errors that were
    /// not retried away, e.g. deadlocks) exceed this fraction. In [0, 1].
    pub max_failed_rate: Option<f64>,
    /// Stop a series once a point's errors of a kind per transaction
    /// exceed the kind's limit (retried deadlocks included).
    pub max_error_rate: super::stop::ErrorRates,
    /// Abandon a point (server start, data load and run) after this long.
    pub point_timeout: Option<Duration>,
}

/// `[sweep.parameter]`: one setting changed at a time from a baseline, at
/// one client count.
#[derive(Debug, Clone, PartialEq)]
pub struct ParameterSweep {
    pub clients: u32,
    /// The baseline variant's name (default `base`).
    pub baseline: String,
    /// The targets it applies to.
    pub targets: Vec<usize>,
    /// Each setting with the values it takes, in file order.
    pub values: Vec<(String, Vec<String>)>,
}

impl Study {
    /// The variants of target `t`, with their indexes into `variants`.
    pub fn variants_of(&self, t: usize) -> impl Iterator<Item = (usize, &VariantSpec)> {
        self.variants
            .iter()
            .enumerate()
            .filter(move |(_, v)| v.target == t)
    }

    /// The client counts variant `v` runs workload `w` at. A generated sweep
    /// variant runs only at the sweep's count; its baseline runs at the
    /// workload's counts plus the sweep's; other variants at the workload's,
    /// or at the sweep's when the workload has none (a study that is only a
    /// parameter sweep).
    pub fn clients_for(&self, v: usize, w: usize) -> Vec<u32> {
        let variant = &self.variants[v];
        let mut counts = self.workloads[w].clients.clone();
        if let Some(sweep) = &self.sweep {
            let swept_target = sweep.targets.contains(&variant.target);
            match &variant.origin {
                VariantOrigin::Sweep { .. } => counts = vec![sweep.clients],
                _ if swept_target && variant.name == sweep.baseline => counts.push(sweep.clients),
                _ if counts.is_empty() => counts.push(sweep.clients),
                _ => {}
            }
            counts.sort_unstable();
            counts.dedup();
        }
        counts
    }

    /// How the points of target `t` and workload `w` run: on `nodes`
    /// workers (the workload's `nodes`, else the target's, else the
    /// study's), or in this process (None: no level gives `nodes`).
    pub fn nodes(&self, t: usize, w: usize) -> Option<Nodes> {
        let spec = self.workloads[w].nodes.over(self.targets[t].nodes);
        spec.count.map(|count| Nodes {
            count,
            launcher: spec.launcher.unwrap_or_default(),
        })
    }

    /// What to start for a point on a managed target: its kind, directory,
    /// the variant's full settings, config file, binaries and CPU set. None
    /// for unmanaged targets.
    /// The baseline series `v` (an index into [`Study::variants`]) is
    /// compared with: its own server kind's when the study gives one per
    /// kind, else the baseline.
    pub fn baseline_for(&self, v: usize) -> usize {
        let kind = |i: usize| self.targets[self.variants[i].target].dialect();
        self.design
            .baselines
            .iter()
            .copied()
            .find(|&b| kind(b) == kind(v))
            .unwrap_or(self.design.baseline)
    }

    /// The study written to `out` instead of its own output directory
    /// (`dbsweep study FILE --out DIR`): its results there, and the
    /// managed servers' default directories under it too.
    pub fn with_out(&self, out: &std::path::Path) -> Study {
        let mut s = self.clone();
        s.out = out.to_path_buf();
        for t in &mut s.targets {
            let name = t.name.clone();
            if let TargetKind::Managed(m) = &mut t.kind {
                if m.dir_is_default {
                    m.dir = out.join("servers").join(name);
                }
            }
        }
        s
    }

    pub fn server_spec(&self, point: &super::Point) -> Option<ServerSpec> {
        let m = self.targets[point.target].managed()?;
        let mut spec = ServerSpec::new(m.kind, &m.dir);
        spec.settings = self.variants[point.variant].settings.clone();
        spec.config_file = m.config_file.clone();
        spec.binaries = m.binaries.clone();
        spec.version = m.version.clone();
        spec.cpus = point.cpus.clone();
        spec.tls = m.tls;
        spec.pooler = m.pooler.clone();
        Some(spec)
    }
}

/// A `[[reference]]` as validated: the file as named and its text (stored
/// with the study, so reports render where the file is not).
#[derive(Debug, Clone, PartialEq)]
pub struct ReferenceFile {
    pub file: String,
    pub text: String,
}
