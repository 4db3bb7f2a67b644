//! What the machine and the server were doing while a run ran, and what
//! the machine is: measured beside every run, at negligible cost, so a
//! reader can tell whether a curve flattened because the server ran out of
//! CPU, waited on IO or waited on locks.
//!
//! - [`machine`]: the machine a result was measured on.
//! - [`cpu`]: usable CPUs and this process's own CPU time.
//! - [`proc`]: reading `/proc` (machine counters, process trees, listening
//!   sockets).
//! - [`sql`]: the server's own counters over a monitoring connection.
//! - [`counts`]: a workload's counts of its own work, read from the
//!   database at the window's start and end (TPC-C's `sum(d_next_o_id)`).
//! - [`sampler`]: the thread that reads all of them beside a run;
//!   `timeline` turns its readings into samples as they come, so a long
//!   run's metrics cost no more memory than a short one's.
//! - [`figures`]: what the measured window's totals say (pure).
//! - [`merged`]: the metrics of a run merged from shards, from the
//!   shards' (the server's from one of them; the machine's when they
//!   shared one).

pub mod counts;
pub mod cpu;
pub mod figures;
pub mod machine;
pub mod merged;
mod pooled;
pub mod proc;
pub mod profile;
pub mod sampler;
#[cfg(test)]
mod sampler_tests;
pub mod sql;
mod timeline;
