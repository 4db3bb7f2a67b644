//! A server dbsweep starts for a study's target, as its file describes it.

use std::path::PathBuf;

use crate::driver::PsMode;
use crate::server::{PoolerSpec, ServerKind};

#[derive(Debug, Clone)]
pub struct ManagedServer {
    pub kind: ServerKind,
    /// The server's directory (data, config, log), kept between restarts so
    /// a new variant does not reload data. Default `<out>/servers/<target>`.
    pub dir: PathBuf,
    /// `dir` is the default: it moves with the output directory
    /// ([`Study::with_out`]).
    pub dir_is_default: bool,
    /// The target's own settings (`settings = {…}`), in file order: what the
    /// `base` variant runs and what other variants override.
    pub settings: Vec<(String, String)>,
    pub config_file: Option<PathBuf>,
    /// Another installed version's programs, instead of the system's.
    pub binaries: Option<PathBuf>,
    /// A version from the registry (`version = "9.6"`): the newest cached
    /// build of it, installed before the first start when missing.
    pub version: Option<String>,
    /// Statement protocol the clients use (`ps_mode`).
    pub ps_mode: PsMode,
    /// Serve TLS with a throw-away CA's certificate (`tls = true`).
    pub tls: bool,
    /// PgBouncer in front of it (`pooler = "pgbouncer"`).
    pub pooler: Option<PoolerSpec>,
}
