//! Validation of `nodes` and `launcher`: a point on several load machines.
//!
//! `nodes = N` (and `launcher = "local" | "slurm"`) may be given at the
//! top of the study, in a `[[target]]` or in a `[[workload]]`; a point
//! takes its workload's, else its target's, else the study's
//! ([`Study::nodes`]). Such a point runs as one coordinated run of N
//! workers, the code `dbsweep run --nodes N` runs, and is stored as their
//! merged record. What makes that impossible is refused here, at the
//! `nodes` that asked for it: an SQLite target (a file of this machine),
//! several instances (a coordinated run runs one), a client count or a
//! number of users that cannot be split N ways.

use toml::Spanned;

use super::load::{Loader, R};
use super::model::{Level, NodesSpec, Study, TargetKind};
use super::raw::RawStudy;
use crate::driver::TargetKind as UrlKind;
use crate::engine::Shard;
use crate::nodes::Launcher;

impl Loader<'_> {
    /// One level's `nodes` and `launcher`; `prefix` is its field path with
    /// the dot (`""`, `"target[0]."`, `"workload[1]."`).
    pub(super) fn nodes_spec(
        &self,
        nodes: Option<&Spanned<i64>>,
        launcher: Option<&Spanned<String>>,
        prefix: &str,
    ) -> R<NodesSpec> {
        let count = match nodes {
            Some(n) => match u32::try_from(*n.get_ref()) {
                Ok(c) if c >= 1 => Some(c as usize),
                _ => {
                    return Err(self.src.at(
                        n,
                        &format!("{prefix}nodes"),
                        format!(
                            "{} is not a number of load machines: give at least 1 (nodes = 2 runs each point on 2 workers), or leave nodes out to run the points in this process",
                            n.get_ref()
                        ),
                    ))
                }
            },
            None => None,
        };
        let launcher = match launcher {
            Some(l) => Some(match l.get_ref().as_str() {
                "local" => Launcher::Local,
                "slurm" => Launcher::Slurm,
                "external" => return Err(self.src.at(
                    l,
                    &format!("{prefix}launcher"),
                    "launcher 'external' waits for workers someone else starts, which a study cannot ask for at each point: use local or slurm",
                )),
                other => return Err(self.src.at(
                    l,
                    &format!("{prefix}launcher"),
                    format!("unknown launcher '{other}': use local (worker processes on this machine) or slurm (one per node of an allocation, through srun)"),
                )),
            }),
            None => None,
        };
        Ok(NodesSpec { count, launcher })
    }

    /// Every target × workload that runs on several nodes can: checked
    /// once the study is whole (client counts depend on the sweep).
    pub(super) fn check_nodes(&self, raw: &RawStudy, study: &Study) -> R<()> {
        let any = study.targets.iter().any(|t| t.nodes.count.is_some())
            || study.workloads.iter().any(|w| w.nodes.count.is_some());
        if !any {
            // A launcher with nothing to launch is a mistake, not a default.
            let given = raw.launcher.as_ref().map(|l| (l, "launcher".to_string()));
            let given = given
                .or_else(|| {
                    raw.targets.iter().enumerate().find_map(|(i, t)| {
                        t.get_ref()
                            .launcher
                            .as_ref()
                            .map(|l| (l, format!("target[{i}].launcher")))
                    })
                })
                .or_else(|| {
                    raw.workloads.iter().enumerate().find_map(|(i, w)| {
                        w.get_ref()
                            .launcher
                            .as_ref()
                            .map(|l| (l, format!("workload[{i}].launcher")))
                    })
                });
            if let Some((l, field)) = given {
                return Err(self.src.at(l, &field, "launcher starts the workers of points with nodes = N, and the study gives nodes nowhere: add nodes = N beside it, or drop launcher"));
            }
            return Ok(());
        }
        for (t, target) in study.targets.iter().enumerate() {
            for (w, wl) in study.workloads.iter().enumerate() {
                let Some(nodes) = study.nodes(t, w) else {
                    continue;
                };
                // Where the count came from: the error points there.
                let (span, field) = match (
                    &raw.workloads[w].get_ref().nodes,
                    raw.targets.get(t).and_then(|r| r.get_ref().nodes.as_ref()),
                ) {
                    (Some(n), _) => (n, format!("workload[{w}].nodes")),
                    (None, Some(n)) => (n, format!("target[{t}].nodes")),
                    (None, None) => (
                        raw.nodes.as_ref().expect("a count comes from some level"),
                        "nodes".to_string(),
                    ),
                };
                let n = nodes.count;
                let refuse = |msg: String| Err(self.src.at(span, &field, msg));
                let sqlite = match &target.kind {
                    TargetKind::Sqlite(_) => true,
                    TargetKind::Url(u) => matches!(u.kind, UrlKind::Sqlite { .. }),
                    TargetKind::Managed(_) => false,
                };
                if sqlite {
                    return refuse(format!(
                        "{n} nodes share one database, and target '{}' is an SQLite file of this machine: give nodes to a server target (url = \"postgres://…\" or \"mysql://…\", or server = \"postgres\" or \"mariadb\")",
                        target.name
                    ));
                }
                if wl.instances > 1 {
                    return refuse(format!(
                        "a point on {n} nodes is one coordinated run of one instance, and workload[{w}] has instances = {}: give it instances = 1, or leave nodes out for it",
                        wl.instances
                    ));
                }
                let clients = study
                    .variants_of(t)
                    .flat_map(|(v, _)| study.clients_for(v, w))
                    .min();
                if let Some(c) = clients.filter(|&c| (c as usize) < n) {
                    return refuse(format!(
                        "{n} nodes split each point's clients between them, and workload[{w}] ({}) runs a point at {c} client{}: give every client count at least {n} (clients), or nodes = {c} or fewer",
                        wl.label,
                        if c == 1 { "" } else { "s" }
                    ));
                }
                self.check_users(study, t, w, n, span, &field)?;
            }
        }
        Ok(())
    }

    /// Every node of a users level needs at least as many users as
    /// connections, as `run --nodes` requires.
    fn check_users(
        &self,
        study: &Study,
        t: usize,
        w: usize,
        n: usize,
        span: &Spanned<i64>,
        field: &str,
    ) -> R<()> {
        let wl = &study.workloads[w];
        for (v, _) in study.variants_of(t) {
            for c in study.clients_for(v, w) {
                for level in &wl.pacing.levels {
                    let Level::Users(u) = *level else { continue };
                    for i in 0..n {
                        let s = Shard { index: i, count: n };
                        if s.check(c as usize, Some(u as usize)).is_err() {
                            return Err(self.src.at(
                                span,
                                field,
                                format!(
                                    "{u} users on {c} connections split over {n} nodes leave node {i} fewer users than connections: give workload[{w}] more users (users), or fewer nodes"
                                ),
                            ));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}
