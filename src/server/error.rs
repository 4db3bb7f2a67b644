//! Errors of the server layer, split so that the CLI can tell the user's bad
//! input (exit status 2) from failures of the machine or the server.

use std::io;
use std::path::PathBuf;

use super::ServerKind;

/// Why a server could not be started, stopped or described.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The server refused one of its settings (unknown name, invalid value),
    /// from `--set` or the user's config file. `message` is the server's own
    /// words from its log.
    #[error("{kind} rejected a setting: {message}")]
    BadSetting { kind: ServerKind, message: String },

    /// Other bad input with one clear message: a CPU that does not exist, a
    /// port in use, a directory that is not ours, binaries not installed, a
    /// missing config file, a directory with no server.
    #[error("{0}")]
    BadInput(String),

    /// `start` on a directory whose server is already running.
    #[error("the {kind} server in {dir} is already running (pid {pid}); stop it first with `dbsweep server stop --dir {dir}`", dir = .dir.display())]
    AlreadyRunning {
        kind: ServerKind,
        dir: PathBuf,
        pid: u32,
    },

    /// A step failed on the server's side: installing the data directory,
    /// the server exiting or not becoming ready in time, creating the
    /// benchmark user. `tail` holds the last lines of `log`.
    #[error("{what}\n--- last lines of {log} ---\n{tail}", log = .log.display())]
    Failed {
        what: String,
        log: PathBuf,
        tail: String,
    },

    /// The start was cut short by [`super::stop_all_started`] (Ctrl-C).
    #[error("the {kind} server in {dir} was stopped while starting", dir = .dir.display())]
    Interrupted { kind: ServerKind, dir: PathBuf },

    /// A file or process operation failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
}

impl ServerError {
    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> ServerError {
        ServerError::Io {
            context: context.into(),
            source,
        }
    }

    /// True for the user's bad input, which the CLI reports with exit
    /// status 2: a rejected setting, an unusable CPU, port or directory,
    /// missing binaries, a server already running.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            ServerError::BadSetting { .. }
                | ServerError::BadInput(_)
                | ServerError::AlreadyRunning { .. }
        )
    }

    /// Converts to `anyhow::Error`, wrapping bad input in
    /// [`crate::UsageError`] so that `main` exits with status 2.
    pub fn into_anyhow(self) -> anyhow::Error {
        if self.is_bad_input() {
            crate::UsageError(self.to_string()).into()
        } else {
            self.into()
        }
    }
}
