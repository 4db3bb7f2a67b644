//! dbsweep: a database benchmark laboratory.
//!
//! # Layout
//!
//! One folder per layer (see DESIGN.md):
//! - [`civil`]: calendar dates of Unix times (UTC).
//! - [`cli`]: argument parsing into raw values, then resolution into typed
//!   configuration.
//! - [`commands`]: one function per verb, gluing the layers together.
//! - [`driver`]: one file per database engine behind the
//!   [`driver::Connection`] trait; error classification.
//! - [`workload`]: schemas, data loading and transaction bodies (sysbench's
//!   OLTP family, Super Smack files and seed 000's tests), as per-client
//!   scripts of operations.
//! - [`rand`]: seeded per-client random streams and sysbench's distributions.
//! - [`engine`]: clients, stop conditions, warmup, retries, the deadline,
//!   interval reporting and client CPU accounting.
//! - [`metrics`]: the machine a result was measured on.
//! - [`stats`]: histograms, latency summaries, fairness (pure).
//! - [`report`]: analysis of stored results and the renderers (text, JSON,
//!   Markdown, CSV, HTML with SVG charts, Super Smack's report).
//! - [`server`]: managed local MariaDB and PostgreSQL servers.
//! - [`study`]: study files, plans, stop rules and the runner.
//! - [`store`]: the results database.
//!
//! `main.rs` is the pipeline: parse → resolve → run → export.

pub mod cli;
pub mod commands;
pub mod driver;
pub mod engine;
pub mod metrics;
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
