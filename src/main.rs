//! The `dbsweep` command: parse → resolve → run → export.

use std::process::ExitCode;

use dbsweep::commands::{self, RunStatus};
use dbsweep::{cli, UsageError};

fn main() -> ExitCode {
    // Every connection holds descriptors; the soft limit is often 1024.
    dbsweep::util::fds::raise();
    let result = cli::request(cli::parse())
        .map_err(anyhow::Error::from)
        .and_then(commands::execute);
    match result {
        Ok(RunStatus::Ok) => ExitCode::SUCCESS,
        Ok(RunStatus::Aborted) => ExitCode::from(1),
        Ok(RunStatus::Interrupted) => ExitCode::from(130),
        Err(e) => {
            // Bad input is exit status 2 with one message; anything else 1.
            if let Some(u) = e.downcast_ref::<UsageError>() {
                eprintln!("error: {u}");
                ExitCode::from(2)
            } else {
                eprintln!("error: {e:#}");
                ExitCode::from(1)
            }
        }
    }
}
