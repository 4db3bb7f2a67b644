//! dbsweep: a database benchmark laboratory.
//!
//! # Layout
//!
//! One folder per layer (see DESIGN.md):
//! - [`cli`]: argument parsing into raw values, then resolution into typed
//!   configuration.
//! - [`commands`]: one function per verb, gluing the layers together.
//! - [`driver`]: one file per database engine behind the
//!   [`driver::Connection`] trait; error classification.
//! - [`workload`]: schemas, data loading and transaction bodies (sysbench's
//!   OLTP family), as per-client scripts of operations.
//! - [`rand`]: seeded per-client random streams and sysbench's distributions.
//! - [`engine`]: clients, stop conditions, warmup, retries, the deadline,
//!   interval reporting and client CPU accounting.
//! - [`metrics`]: the machine a result was measured on.
//! - [`stats`]: histograms, latency summaries, fairness (pure).
//! - [`report`]: renderers of results (sysbench-style text, JSON).
//!
//! `main.rs` is the pipeline: parse → resolve → run → export.

pub mod cli;
pub mod commands;
pub mod driver;
pub mod engine;
pub mod metrics;
pub mod rand;
pub mod report;
pub mod server;
pub mod stats;
pub mod store;
pub mod study;
pub mod workload;

/// Bad input from the user: printed as one message, exit status 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);
