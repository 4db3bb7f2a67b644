//! `run --nodes N` and `dbsweep worker`: the raw arguments of a run split
//! across worker processes that a coordinator starts together and merges
//! (re-exported by `args`).

use clap::Args;

use crate::nodes::Launcher;

/// `run`'s options for a coordinated run (flattened into `RunArgs`).
#[derive(Debug, Args)]
pub struct NodesArgs {
    /// Split the run into N shards, each run by a worker process that this
    /// coordinator starts (--launcher), releases at one instant and merges
    /// into one report with a per-shard table (docs/distributed.md). Needs
    /// --db, prepared beforehand.
    #[arg(long, value_name = "N", help_heading = "Many load machines")]
    pub nodes: Option<usize>,
    /// How the workers start: `local` (N processes on this machine),
    /// `slurm` (`srun -N N -n N`, one per node) or `external` (wait for N
    /// `dbsweep worker --coordinator HOST:PORT` started elsewhere, e.g. a
    /// Kubernetes Indexed Job). Default: local.
    #[arg(long, value_name = "local|slurm|external", value_parser = launcher, help_heading = "Many load machines")]
    pub launcher: Option<Launcher>,
    /// Where the coordinator listens for its workers, HOST:PORT (default
    /// 127.0.0.1 and a free port; on a cluster an address the nodes reach,
    /// or 0.0.0.0:PORT to advertise this machine's hostname).
    #[arg(long, value_name = "HOST:PORT", help_heading = "Many load machines")]
    pub listen: Option<String>,
    /// Keep every shard's own record in DIR as shard-I.json (created if
    /// missing), also when the run is partial: each shard's figures and
    /// metrics as its worker measured them, and `dbsweep merge
    /// DIR/shard-*.json` gives the merged record again.
    #[arg(long, value_name = "DIR", help_heading = "Many load machines")]
    pub shard_records: Option<std::path::PathBuf>,
}

/// `dbsweep worker`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The coordinator's address, as `run --nodes` printed it.
    #[arg(long, value_name = "HOST:PORT")]
    pub coordinator: String,
    /// The shard to run (0-based). Default: $JOB_COMPLETION_INDEX (a
    /// Kubernetes Indexed Job), else $SLURM_PROCID, else the next free one.
    #[arg(long, value_name = "I")]
    pub shard_index: Option<usize>,
}

fn launcher(s: &str) -> Result<Launcher, String> {
    Launcher::parse(s)
        .ok_or_else(|| format!("unknown launcher '{s}': use local, slurm or external"))
}
