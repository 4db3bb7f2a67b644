//! Command-line parsing into raw values ([`args`]) and their resolution into
//! validated, typed configuration ([`resolve`]). Nothing here touches a
//! database; files named on the command line are the only I/O.

pub mod args;
pub mod progress;
pub mod resolve;

pub use args::{parse, Cli, Command};
