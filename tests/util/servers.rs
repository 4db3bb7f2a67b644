//! Scratch database servers for the driver tests, which start the installed
//! `mariadbd` or `postgres` directly (not through dbsweep's server layer, so
//! that a driver test depends on nothing but the driver): a free port, a
//! directory the server's OS user can reach, waiting until the server takes
//! logins, and stopping it (and removing its directory) when the test
//! binary exits.

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A loopback port nobody listens on (at the moment of asking).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// uid and gid to run a server as: OS user `name` when we are root (the
/// servers refuse to run as root), else ourselves.
pub fn os_user(name: &str) -> (u32, u32) {
    // SAFETY: geteuid has no preconditions; getpwnam gets a NUL-terminated
    // name and its result is read at once, before any other getpw* call.
    unsafe {
        if libc::geteuid() != 0 {
            return (libc::geteuid(), libc::getegid());
        }
        let c = std::ffi::CString::new(name).unwrap();
        let pw = libc::getpwnam(c.as_ptr());
        assert!(!pw.is_null(), "running as root and there is no {name} user");
        ((*pw).pw_uid, (*pw).pw_gid)
    }
}

/// A new directory under the temporary directory, owned by `owner` and
/// readable by everyone, so the server's OS user reaches its files and
/// socket.
pub fn scratch_dir(prefix: &str, owner: (u32, u32)) -> PathBuf {
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .unwrap()
        .keep();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::chown(&dir, Some(owner.0), Some(owner.1)).unwrap();
    dir
}

/// Servers to stop when the binary exits: (process, directory, signal).
static RUNNING: Mutex<Vec<(Child, PathBuf, i32)>> = Mutex::new(Vec::new());

/// Keeps `child` running until the test binary exits, then sends it
/// `signal` (its clean, fast shutdown: SIGTERM for MariaDB, SIGINT for
/// PostgreSQL), kills it if it is not gone within 30 s, and removes `dir`.
pub fn stop_at_exit(child: Child, dir: PathBuf, signal: i32) {
    let mut running = RUNNING.lock().unwrap();
    if running.is_empty() {
        // SAFETY: registers a plain extern "C" function.
        unsafe { libc::atexit(stop_all) };
    }
    running.push((child, dir, signal));
}

/// Whether the server started last has exited (it failed to start).
pub fn exited() -> bool {
    RUNNING
        .lock()
        .unwrap()
        .last_mut()
        .is_some_and(|(c, _, _)| c.try_wait().unwrap().is_some())
}

extern "C" fn stop_all() {
    let Ok(mut running) = RUNNING.lock() else {
        return;
    };
    for (mut child, dir, signal) in running.drain(..) {
        // SAFETY: a signal to our own child.
        unsafe { libc::kill(child.id() as i32, signal) };
        let t = Instant::now();
        while child.try_wait().ok().flatten().is_none() {
            if t.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Calls `attempt` until it returns a value (the server takes logins).
/// Panics with the server's `log` when the server exited or `timeout`
/// passed, or at once when `attempt` says the failure is final.
pub fn wait_for<T>(
    what: &str,
    log: &Path,
    timeout: Duration,
    mut attempt: impl FnMut() -> Result<Option<T>, String>,
) -> T {
    let started = Instant::now();
    loop {
        let failure = match attempt() {
            Ok(Some(v)) => return v,
            Ok(None) if exited() => Some("it exited".to_string()),
            Ok(None) if started.elapsed() > timeout => Some(format!("not within {timeout:?}")),
            Ok(None) => None,
            Err(e) => Some(e),
        };
        if let Some(why) = failure {
            panic!(
                "{what} did not start ({why}); its log:\n{}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
