//! The servers this process started and has not stopped yet, and the
//! epoch that lets a start under way notice a stop-everything. Starting
//! and stopping (`lifecycle`) keep it current; `guard` stops what it holds.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::ServerKind;

/// One server started by this process and not yet stopped.
pub(super) struct Started {
    pub(super) kind: ServerKind,
    pub(super) dir: PathBuf,
    pub(super) pid: u32,
    /// Accepting connections. Until then a stop kills it: MariaDB ignores
    /// SIGTERM during startup (and then never becomes ready).
    pub(super) ready: bool,
}

/// Servers this process started, for `stop_all_started`.
struct Registry {
    servers: Vec<Started>,
    /// Bumped by every [`take_all`], so that a start already under
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
/// [`take_all`] ran since the start began at `epoch`.
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

/// Forgets every registered server and returns them, and makes starts
/// under way give up (see [`registry_add`]).
pub(super) fn take_all() -> Vec<Started> {
    let mut r = registry();
    r.epoch += 1;
    std::mem::take(&mut r.servers)
}
