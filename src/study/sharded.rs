//! A study point on several load machines (`nodes = N`): what the runner
//! hands over ([`Sharded`]) and who runs it ([`Coordinator`]).
//!
//! The coordinator of `dbsweep run --nodes N` lives in the commands layer
//! (`commands::nodes`), above this one, and stays there: what it sends its
//! workers is the `run` command's own request, serialised, and what it
//! starts are `dbsweep worker` processes — a command line, a launcher, a
//! protocol, none of which a study should know. Moving it down would move
//! `run`'s request with it. So the study layer says only what a point is —
//! workload, options, target, run configuration with its pacing, seed —
//! and `dbsweep study` (commands/study.rs) gives the runner a
//! [`Coordinator`] that turns that into the request and runs it through
//! the same code `run --nodes` uses. The merged record it returns is
//! stored as the point, so resume, repeats, stop rules and reports treat
//! it as any other.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::model::Nodes;
use crate::driver::Target;
use crate::engine::RunConfig;
use crate::rand::RandConfig;
use crate::record::Run;

/// One point, resolved, as a coordinated run needs it: every worker runs
/// its shard of exactly this.
pub struct Sharded<'a> {
    /// The built-in workload's name and the options the study gives it
    /// (as `workload::build` takes them).
    pub workload: &'a str,
    pub options: &'a [(String, String)],
    /// The database every worker connects to (its data loaded).
    pub target: &'a Target,
    pub rand: RandConfig,
    /// The whole point's clients, stop condition, pacing, seed and hard
    /// timeout: each worker takes its share (docs/distributed.md).
    pub config: &'a RunConfig,
    pub percentiles: &'a [f64],
    /// Machine and server sampling beside each shard; None: off.
    pub metrics: Option<Duration>,
    pub nodes: Nodes,
}

/// Runs a [`Sharded`] point on its nodes.
pub trait Coordinator {
    /// The merged record of every shard's; `Err` is why the point has
    /// none (the run did not start, or a shard sent no record: a merge of
    /// fewer shards is never the point), stored as the failed point's
    /// reason. A run interrupted by `cancel` (Ctrl-C) ends with its
    /// record's stop reason saying so, as a point in this process does.
    fn run(&self, point: &Sharded<'_>, cancel: &AtomicBool) -> Result<Run, String>;
}
