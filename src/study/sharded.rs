//! A study point on several load machines (`nodes = N`): run as one
//! coordinated run of the `nodes` layer, the code `dbsweep run --nodes N`
//! runs, without its printing (the study reports its points). The merged
//! record is stored as the point, so resume, repeats, stop rules and
//! reports treat it as any other.

use std::sync::atomic::AtomicBool;

use crate::engine::spec::PointSpec;
use crate::nodes::{self, Coordinated, Coordinator, Launcher, Nodes};
use crate::record::Run;

/// The merged record of every shard's of `spec` on `nodes`; `Err` is why
/// the point has none (the run did not start, or a shard sent no record: a
/// merge of fewer shards is never the point), stored as the failed point's
/// reason. A run interrupted by `cancel` (Ctrl-C) ends with its record's
/// stop reason saying so, as a point in this process does.
pub(super) fn run(spec: &PointSpec, nodes: Nodes, cancel: &AtomicBool) -> Result<Run, String> {
    let listen = match nodes.launcher {
        // Workers on other nodes reach this machine by its name.
        Launcher::Slurm => "0.0.0.0:0",
        Launcher::Local | Launcher::External => "127.0.0.1:0",
    };
    let c = Coordinator {
        nodes,
        listen: listen.into(),
        shard_records: None,
    };
    match nodes::run_point(spec, &c, cancel) {
        Ok(Coordinated::Merged(run)) => Ok(*run),
        Ok(Coordinated::Partial { lost, .. }) => {
            let lost: Vec<String> = lost
                .iter()
                .map(|(name, why)| format!("{name}: {why}"))
                .collect();
            Err(format!(
                "partial run on {} nodes, no merged figures: {}",
                nodes.count,
                lost.join("; ")
            ))
        }
        Err(e) => Err(format!("the coordinated run did not start: {e:#}")),
    }
}
