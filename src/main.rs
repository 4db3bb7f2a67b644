//! The `dbsweep` command: parse → resolve → run → export.

use std::process::ExitCode;

use dbsweep::cli::{self, Command};
use dbsweep::commands::{self, RunStatus};
use dbsweep::UsageError;

fn main() -> ExitCode {
    let cli = cli::parse();
    let result = match &cli.command {
        Command::Prepare(t) => commands::prepare(t).map(|_| RunStatus::Ok),
        Command::Run(r) => commands::run(r),
        Command::Cleanup(t) => commands::cleanup(t).map(|_| RunStatus::Ok),
        Command::Workloads => commands::workloads().map(|_| RunStatus::Ok),
        Command::Dist(d) => commands::dist(d).map(|_| RunStatus::Ok),
        Command::Server(s) => commands::server(s).map(|_| RunStatus::Ok),
        Command::Study(s) => commands::study(s),
        Command::Results(r) => commands::results(r).map(|_| RunStatus::Ok),
        Command::Smack(s) => commands::smack(s),
        Command::GenData(g) => commands::gen_data(g).map(|_| RunStatus::Ok),
        Command::Report(r) => commands::report(r).map(|_| RunStatus::Ok),
    };
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
