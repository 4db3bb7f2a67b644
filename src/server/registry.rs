//! The servers this process started: stopped together by the CLI's Ctrl-C
//! handler ([`stop_all_started`]), or one by one by a [`ServerGuard`].

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::lifecycle::{kill, terminate};
use super::state::{Layout, State};
use super::{process, start, stop, RunningServer, ServerError, ServerKind, ServerSpec};

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

/// One server started by this process and not yet stopped.
struct Started {
    kind: ServerKind,
    dir: PathBuf,
    pid: u32,
    /// Accepting connections. Until then a stop kills it: MariaDB ignores
    /// SIGTERM during startup (and then never becomes ready).
    ready: bool,
}

/// Servers this process started, for [`stop_all_started`].
struct Registry {
    servers: Vec<Started>,
    /// Bumped by every [`stop_all_started`], so that a start already under
    /// way when it ran gives up instead of leaving a server behind.
    epoch: u64,
}

static STARTED: Mutex<Registry> = Mutex::new(Registry {
    servers: Vec::new(),
    epoch: 0,
});

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    // A panic elsewhere must not stop the Ctrl-C handler from stopping servers.
    STARTED.lock().unwrap_or_else(|e| e.into_inner())
}

pub(super) fn registry_epoch() -> u64 {
    registry().epoch
}

/// Registers a just-spawned server; false (and not registered) if
/// [`stop_all_started`] ran since the start began at `epoch`.
pub(super) fn registry_add(kind: ServerKind, dir: &Path, pid: u32, epoch: u64) -> bool {
    let mut r = registry();
    if r.epoch != epoch {
        return false;
    }
    r.servers.push(Started {
        kind,
        dir: dir.to_path_buf(),
        pid,
        ready: false,
    });
    true
}

pub(super) fn registry_set_ready(pid: u32) {
    for s in registry().servers.iter_mut().filter(|s| s.pid == pid) {
        s.ready = true;
    }
}

pub(super) fn registry_remove(pid: u32) {
    registry().servers.retain(|s| s.pid != pid);
}

pub(super) fn registry_has(pid: u32) -> bool {
    registry().servers.iter().any(|s| s.pid == pid)
}

/// Stops every server this process started and has not stopped (or
/// detached), including those still starting, which are killed and whose
/// `start` returns [`ServerError::Interrupted`]: for the CLI's Ctrl-C
/// handler. Returns the failures, by directory.
pub fn stop_all_started() -> Vec<(PathBuf, ServerError)> {
    let started = {
        let mut r = registry();
        r.epoch += 1;
        std::mem::take(&mut r.servers)
    };
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
