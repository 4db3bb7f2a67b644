//! dbsweep: a database benchmark laboratory.
//!
//! # Layout
//!
//! One folder per layer; a module uses only its own layer and those below
//! (docs/architecture.md describes them, tests/layers.rs holds the rule).
//! From the top:
//! - [`cli`]: the command line into a typed [`commands::Request`].
//! - [`commands`]: one file per verb, gluing the layers below.
//! - [`study`]: study files, plans, stop rules and the runner.
//! - [`report`]: analysis of results and the renderers (text, JSON,
//!   Markdown, CSV, HTML with SVG charts, Super Smack's report).
//! - [`nodes`]: the distributed runtime: one point on several worker
//!   processes (the coordinator, its protocol, launchers and sessions, and
//!   the worker's loop).
//! - [`store`]: the results database.
//! - [`engine`]: clients, stop conditions, warmup, retries, the deadline,
//!   interval reporting and client CPU; [`engine::point`] runs one point and
//!   builds its record.
//! - [`workload`]: schemas, data loading and transaction bodies (sysbench's
//!   OLTP family, Super Smack files and seed 000's tests), as per-client
//!   scripts of operations. [`server`]: managed local MariaDB and
//!   PostgreSQL servers.
//! - [`driver`]: one file per database engine behind the
//!   [`driver::Connection`] trait; error classification. [`rand`]: seeded
//!   per-client random streams and sysbench's distributions. [`stats`]:
//!   histograms, latency summaries, fairness, spreads (pure). [`metrics`]:
//!   the machine and this process's CPU.
//! - [`record`]: the run record every layer above writes, stores or renders,
//!   and its JSON Schema. [`util`]: dates, durations, progress bars.
//!
//! `main.rs` is the pipeline: parse → resolve → run → export.

pub mod cli;
pub mod commands;
pub mod driver;
pub mod engine;
pub mod metrics;
pub mod nodes;
pub mod rand;
pub mod record;
pub mod report;
pub mod server;
pub mod stats;
pub mod store;
pub mod study;
pub mod util;
pub mod workload;

/// Bad input from the user: printed as one message, exit status 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);
