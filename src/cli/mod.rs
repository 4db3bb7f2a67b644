//! The command line: parsing into raw values ([`args`], clap), single
//! values into their types ([`values`]), and the whole into a validated
//! [`crate::commands::Request`] ([`resolve`]; `dbsweep k8s`'s in `k8s`,
//! which resolves the run's options into the point its coordinator Pod
//! runs). Nothing here touches a database; the only I/O is checking that
//! paths named on the command line can be written, and reading `run
//! --spec`'s point file.

pub mod args;
mod find_rate_args;
mod k8s;
mod k8s_args;
mod nodes_args;
pub mod resolve;
mod results_args;
mod run_checks;
mod server_args;
mod smack_args;
pub mod values;

pub use args::{parse, Cli, Command};
pub use resolve::request;
