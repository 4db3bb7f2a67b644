//! A point, described so that it travels: the workload and its options,
//! the target, the random configuration, the run's configuration, the
//! percentiles and the metrics' interval — everything a process needs to
//! run the point (or its shard of it), and nothing about who asked or
//! where its outputs go. The distributed runtime (`nodes`) sends it to its
//! workers as JSON; `dbsweep run --nodes` and a study's `nodes = N` point
//! each describe their point as one.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::point::{self, Point};
use super::RunConfig;
use crate::driver::Target;
use crate::rand::RandConfig;
use crate::workload::{self, Workload};

/// One resolved point: every process that runs it (a shard each, when
/// `config.shard` says so) runs exactly this.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PointSpec {
    /// The built-in workload's name.
    pub workload: String,
    /// Its options (name without dashes, raw value), as `workload::build`
    /// takes them.
    pub options: Vec<(String, String)>,
    /// The database the clients connect to (its data loaded).
    pub target: Target,
    /// The random configuration the workload is built with.
    pub rand: RandConfig,
    /// Clients, stop condition, pacing, seed and hard timeout, resolved:
    /// no default is left for the process that runs it to pick.
    pub config: RunConfig,
    /// The percentiles of the record's latency summaries.
    pub percentiles: Vec<f64>,
    /// The interval of the machine and server sampling beside the run;
    /// `None`: none.
    pub metrics: Option<Duration>,
    /// Profiles beside the metrics (`--profile`); `None`: none. Each
    /// shard profiles its own process, and the one that reads the server
    /// its processes too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<crate::metrics::profile::Settings>,
}

impl PointSpec {
    /// The workload, built for the target's dialect.
    pub fn build(&self) -> anyhow::Result<Box<dyn Workload>> {
        workload::build(
            &self.workload,
            &self.options,
            self.target.dialect(),
            self.rand,
        )
    }

    /// The point of `instances` (built by [`PointSpec::build`]) that this
    /// describes; with sampling, the server's left to shard 0 when the
    /// config runs a shard ([`point::server_ref`]).
    pub fn point<'a>(&'a self, instances: &'a [&'a dyn Workload]) -> Point<'a> {
        let mut p = Point::new(
            &self.target,
            instances,
            &self.config,
            self.rand,
            &self.percentiles,
        );
        p.metrics = self.metrics.map(|interval| point::Metrics {
            interval,
            server: point::server_ref(&self.target, self.config.shard),
            profile: self.profile.clone(),
        });
        p
    }
}
