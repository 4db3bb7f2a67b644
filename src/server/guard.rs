//! Stopping what this process started: one server when its
//! [`ServerGuard`] is dropped, or all of them at once for the CLI's Ctrl-C
//! handler ([`stop_all_started`]).

use std::path::PathBuf;

use super::lifecycle::{kill, terminate};
use super::registry::{self, registry_remove};
use super::state::{Layout, State};
use super::{process, start, stop, RunningServer, ServerError, ServerSpec};

/// A started server that is stopped when the guard is dropped: for the study
/// runner and tests, so that a panic or an early return stops it too.
#[derive(Debug)]
pub struct ServerGuard {
    server: Option<RunningServer>,
}

impl ServerGuard {
    /// Starts a server (see [`start`]) under a guard.
    pub fn start(spec: &ServerSpec) -> Result<ServerGuard, ServerError> {
        start(spec).map(|server| ServerGuard {
            server: Some(server),
        })
    }

    /// Stops the server now, reporting failure (Drop can only print it).
    pub fn stop(mut self) -> Result<(), ServerError> {
        let server = self
            .server
            .take()
            .expect("a guard holds its server until stopped");
        stop(&server.dir).map(|_| ())
    }

    /// Leaves the server running and forgets it (as `dbsweep server start`
    /// does).
    pub fn detach(mut self) -> RunningServer {
        let server = self
            .server
            .take()
            .expect("a guard holds its server until stopped");
        registry_remove(server.pid);
        server
    }
}

impl std::ops::Deref for ServerGuard {
    type Target = RunningServer;

    fn deref(&self) -> &RunningServer {
        self.server
            .as_ref()
            .expect("a guard holds its server until stopped")
    }
}

impl Drop for ServerGuard {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            if let Err(e) = stop(&server.dir) {
                eprintln!(
                    "warning: could not stop the {} server in {}: {e}",
                    server.kind,
                    server.dir.display()
                );
            }
        }
    }
}

/// Stops every server this process started and has not stopped (or
/// detached), including those still starting, which are killed and whose
/// `start` returns [`ServerError::Interrupted`]: for the CLI's Ctrl-C
/// handler. Returns the failures, by directory.
pub fn stop_all_started() -> Vec<(PathBuf, ServerError)> {
    let started = registry::take_all();
    let mut failures = Vec::new();
    for s in started {
        let result = if !process::is_server_process(s.pid, &s.kind.process_marker(&s.dir)) {
            process::is_gone(s.pid); // reaps it if it died on its own
            Ok(())
        } else if s.ready {
            terminate(s.kind, s.pid, &s.dir)
        } else {
            kill(s.kind, s.pid, &s.dir)
        };
        // Record it as stopped if the state file still names this process.
        let layout = Layout::new(s.dir.clone());
        if let Ok(Some(mut state)) = State::read(&layout) {
            if state.server.as_ref().is_some_and(|r| r.pid == s.pid) {
                if let Some(p) = state.server.as_ref().and_then(|r| r.pooler.as_ref()) {
                    super::pgbouncer::stop(p.pid, &p.ini);
                }
                state.server = None;
                let _ = state.write(&layout);
            }
        }
        if let Err(e) = result {
            failures.push((s.dir, e));
        }
    }
    failures
}
