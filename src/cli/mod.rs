//! The command line: parsing into raw values ([`args`], clap), single
//! values into their types ([`values`]), and the whole into a validated
//! [`crate::commands::Request`] ([`resolve`]; `dbsweep k8s`'s in `k8s`,
//! which renders the run's options back into arguments with [`argv`]).
//! Nothing here touches a database; the only I/O is checking that paths
//! named on the command line can be written.

pub mod args;
pub mod argv;
mod k8s;
mod k8s_args;
mod nodes_args;
pub mod resolve;
mod server_args;
mod smack_args;
pub mod values;

pub use args::{parse, Cli, Command};
pub use resolve::request;
