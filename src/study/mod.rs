//! Studies: a whole benchmark campaign described in one TOML file.
//!
//! A study names its *targets* (existing databases by URL, SQLite files, or
//! MariaDB / PostgreSQL servers dbsweep starts itself), the *variants* of
//! each managed server (named setting overrides, e.g. `bp8` =
//! `innodb_buffer_pool_instances = 8`), the *CPU sets* to pin servers to,
//! the *workloads* with their options, run length and repeats, and the
//! *client counts* to sweep. Its points are the product
//! target × variant × CPU set × workload × clients × repeat, plus the
//! one-setting-at-a-time variants of a `[sweep.parameter]`. Stop rules say
//! when a series is not worth continuing. docs/study.md is the reference of
//! every key.
//!
//! This module reads and checks the file ([`load()`]) and expands it into an
//! ordered [`Plan`] ([`plan()`]) that says, point by point, when to restart a
//! server and when to reload data; running the plan is `runner.rs`'s job.
//!
//! # Layout
//!
//! - `raw.rs`: serde structs mirroring the file, unknown keys denied, and
//!   the value forms a person writes (durations, CPU sets, client lists).
//! - `load.rs`: [`load()`]: parsing and validation into a [`Study`]; every
//!   error names `FILE:LINE:COL`, the field and what was expected. The
//!   checks themselves are in `targets.rs`, `variants.rs` (with the
//!   parameter sweep) and `workloads.rs`.
//! - `locate.rs`: byte offsets to lines, columns and field paths;
//!   "did you mean" suggestions.
//! - `model.rs`: the validated [`Study`] and its parts; `level.rs` a step
//!   of a load axis (a rate, a share of the peak, users).
//! - `clients.rs`: client-count range expressions (`"pow2 1..1024"`).
//! - `design.rs`: how the study compares its series (`order`, `baseline`,
//!   `control`, `equivalence`, `seed`).
//! - `stop.rs`: the `max_error_rate` stop rule ([`ErrorRates`]).
//! - `plan.rs`: [`plan()`], [`Plan`], [`Point`], [`PointKey`], estimates and
//!   the dry-run description.
//! - `runner.rs`: [`runner::run`], a plan's points one by one into the
//!   results database; `setup.rs`: servers, data and workload instances a
//!   point needs; `series.rs`: the stop rules' memory per series;
//!   `progress.rs`: the live progress of a run; `search.rs`: the
//!   search for the highest sustained rate (`rates = "find"`), each probe
//!   replayed from the stored points of its block.
//! - `nodes.rs`: `nodes` and `launcher`, a point on several load machines
//!   (validation); `sharded.rs`: such a point run through the `nodes`
//!   layer.

pub mod clients;
mod describe;
mod design;
mod key;
mod level;
mod load;
mod locate;
mod managed;
mod model;
mod nodes;
mod pacing;
mod plan;
mod precision;
mod progress;
mod rates;
mod raw;
mod reference;
pub mod repro;
pub mod runner;
pub mod search;
mod series;
mod setup;
mod sharded;
mod stop;
mod targets;
mod values;
mod variants;
mod workloads;

pub use design::{resolve as resolve_series, DesignSpec, SweepSpec, AGAIN, DEFAULT_EQUIVALENCE};
pub use key::PointKey;
pub use load::{load, load_str};
pub use model::{
    Design, ManagedServer, NodesSpec, Order, ParameterSweep, Repeats, Reprepare, Restart,
    StopRules, Study, TargetKind, TargetSpec, VariantOrigin, VariantSpec, WorkloadSpec,
};
pub use plan::{
    again_name, plan, Cell, Plan, Point, Series, LOAD_OVERHEAD, LOAD_ROWS_PER_SEC, POINT_OVERHEAD,
    SERVER_START,
};
pub use reference::{stored_reproduction, stored_sweep};
pub use stop::ErrorRates;
pub use targets::stored_target_names;
