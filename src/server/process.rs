//! Operating-system plumbing for servers: OS users, spawning (as another
//! user, in a new session, pinned to CPUs), signals, waiting for a process to
//! be gone, `/proc` inspection, and free loopback ports.

use std::ffi::{CStr, CString, OsString};
use std::io::{self, Write};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use super::settings::format_cpu_list;
use super::ServerError;

/// How often startup and shutdown are polled: short next to a server's
/// startup (100 ms+), long enough not to burn a core.
pub(crate) const POLL: Duration = Duration::from_millis(25);

/// An OS account a server or helper program runs as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OsUser {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

/// True when dbsweep runs as root, where both servers refuse to run and are
/// started as their own OS users instead.
pub(crate) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Looks up an account by name (`mysql`, `postgres`).
pub(crate) fn lookup_user(name: &str) -> Option<OsUser> {
    let cname = CString::new(name).ok()?;
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer refers to live, correctly sized storage; the
    // reentrant variant writes only into `pwd` and `buf`.
    let rc = unsafe {
        libc::getpwnam_r(
            cname.as_ptr(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        )
    };
    if rc != 0 || result.is_null() {
        return None;
    }
    Some(OsUser {
        name: name.to_string(),
        uid: pwd.pw_uid,
        gid: pwd.pw_gid,
    })
}

/// The account dbsweep runs as (for MariaDB's root-by-socket login and
/// PostgreSQL's superuser name when not running as root).
pub(crate) fn current_user() -> OsUser {
    // SAFETY: as in lookup_user.
    let uid = unsafe { libc::geteuid() };
    let gid = unsafe { libc::getegid() };
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    let rc = unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut result) };
    let name = if rc == 0 && !result.is_null() {
        // SAFETY: pw_name points into `buf`, NUL-terminated by getpwuid_r.
        unsafe { CStr::from_ptr(pwd.pw_name) }
            .to_string_lossy()
            .into_owned()
    } else {
        uid.to_string()
    };
    OsUser { name, uid, gid }
}

/// A command for a server or one of its helper programs: run as `user` when
/// given, in `cwd`, with a clean environment (so no `PGPASSWORD`, `MYSQL_HOME`
/// or locale of the caller leaks into the server) and no stdin.
pub(crate) fn command(program: &Path, user: Option<&OsUser>, cwd: &Path) -> Command {
    let mut cmd = Command::new(program);
    let path = std::env::var_os("PATH")
        .unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"));
    cmd.env_clear()
        .env("PATH", path)
        .current_dir(cwd)
        .stdin(Stdio::null());
    if let Some(u) = user {
        // std drops supplementary groups (setgroups(0)) before setuid when
        // the parent is root.
        cmd.uid(u.uid).gid(u.gid);
    }
    cmd
}

/// Runs a helper program (install-db, initdb, a SQL client) whose output
/// the caller has redirected, feeding it `stdin`, and kills it after
/// `timeout`. Returns its exit status, or None on timeout.
pub(crate) fn run_logged(
    mut cmd: Command,
    stdin: Option<&str>,
    timeout: Duration,
) -> io::Result<Option<ExitStatus>> {
    if stdin.is_some() {
        cmd.stdin(Stdio::piped());
    }
    let mut child = cmd.spawn()?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // A few hundred bytes of SQL: fits the pipe, so this cannot block
        // on a child that does not read. Dropping the pipe closes it.
        let _ = pipe.write_all(text.as_bytes());
    }
    let begun = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if begun.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        thread::sleep(POLL);
    }
}

/// Spawns a server process in its own session, so that a Ctrl-C on the
/// terminal reaches dbsweep (which then stops it in order) rather than the
/// server, and closing the terminal does not hang it up. With `cpus`, the
/// process (and every thread and child it creates) is pinned to them.
pub(crate) fn spawn_server(mut cmd: Command, cpus: Option<&[usize]>) -> io::Result<Child> {
    // Built before fork: only async-signal-safe calls may run in pre_exec.
    let set = match cpus {
        Some(list) => Some(cpu_set(list)?),
        None => None,
    };
    // SAFETY: the closure only makes raw system calls (setsid, getrlimit,
    // setrlimit, sched_setaffinity) on data prepared before the fork.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            // Servers with thousands of connections need thousands of file
            // descriptors: lift the soft limit to the hard one.
            let mut lim = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
                lim.rlim_cur = lim.rlim_max;
                libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
            }
            if let Some(set) = &set {
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    cmd.spawn()
}

fn cpu_set(cpus: &[usize]) -> io::Result<libc::cpu_set_t> {
    // SAFETY: cpu_set_t is a plain bit array; all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    for &cpu in cpus {
        if cpu >= max {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("CPU {cpu} is beyond the {max} CPUs a CPU set can name"),
            ));
        }
        // SAFETY: cpu < the set's capacity, checked above.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    Ok(set)
}

/// The CPUs this process may run on (its affinity mask, which in a container
/// is also the cpuset it was given).
pub(crate) fn available_cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity writes at most size_of::<cpu_set_t>() bytes
    // into `set`.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Vec::new();
    }
    (0..8 * std::mem::size_of::<libc::cpu_set_t>())
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

/// Checks that every CPU in `cpus` exists and is available to us, before a
/// server is started on them.
pub(crate) fn check_cpus(cpus: &[usize]) -> Result<(), ServerError> {
    if cpus.is_empty() {
        return Err(ServerError::BadInput(
            "empty CPU list: name at least one CPU, e.g. --cpus 0".into(),
        ));
    }
    let available = available_cpus();
    let missing: Vec<usize> = cpus
        .iter()
        .copied()
        .filter(|c| !available.contains(c))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(ServerError::BadInput(format!(
            "CPU {} does not exist or is not available to dbsweep: this machine offers CPUs {}",
            format_cpu_list(&missing),
            format_cpu_list(&available)
        )))
    }
}

/// The CPUs a running process may use, from `/proc/PID/status`
/// (`Cpus_allowed_list`).
pub fn affinity(pid: u32) -> io::Result<Vec<usize>> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .ok_or_else(|| io::Error::other(format!("no Cpus_allowed_list in /proc/{pid}/status")))?;
    super::settings::parse_cpu_list(list.trim()).map_err(|e| io::Error::other(e.to_string()))
}

/// Sends `signal` to a process.
pub(crate) fn signal(pid: u32, signal: i32) -> io::Result<()> {
    // SAFETY: kill has no memory-safety preconditions.
    if unsafe { libc::kill(pid as libc::pid_t, signal) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Kills a server's whole process group (it leads its own session), so that
/// no worker or backend outlives a killed server.
pub(crate) fn kill_group(pid: u32) {
    // SAFETY: as in signal; a negative pid names the process group.
    unsafe {
        libc::kill(-(pid as libc::pid_t), libc::SIGKILL);
    }
}

/// True once `pid` has exited. Reaps it when it is our child (so no zombie
/// stays behind in this process), and counts a zombie of another parent as
/// gone.
pub(crate) fn is_gone(pid: u32) -> bool {
    let mut status = 0;
    // SAFETY: waitpid writes only into `status`.
    let rc = unsafe { libc::waitpid(pid as libc::pid_t, &mut status, libc::WNOHANG) };
    if rc == pid as libc::pid_t {
        return true;
    }
    if rc == 0 {
        return false; // our child, still running
    }
    // Not our child (or already reaped): ask /proc.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => proc_state(&stat) == Some('Z'),
    }
}

/// True once no live process is left in process group `pgid` (a server
/// leads its own, so this covers PostgreSQL's backends, which can outlive a
/// killed postmaster for a moment and then block the next start).
pub(crate) fn group_gone(pgid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return true;
    };
    !entries.flatten().any(|e| {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            return false;
        };
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| proc_state_and_group(&stat))
            .is_some_and(|(state, group)| group == pgid && state != 'Z')
    })
}

/// Waits until `pid` and its whole process group are gone, or `timeout`
/// passes; true if they are gone.
pub(crate) fn wait_group_gone(pid: u32, timeout: Duration) -> bool {
    let begun = Instant::now();
    loop {
        if is_gone(pid) && group_gone(pid) {
            return true;
        }
        if begun.elapsed() > timeout {
            return false;
        }
        thread::sleep(POLL);
    }
}

/// The state letter and process group of a `/proc/PID/stat` line: after the
/// parenthesised command name come state, ppid, pgrp.
fn proc_state_and_group(stat: &str) -> Option<(char, u32)> {
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    Some((state, fields.next()?.parse().ok()?))
}

/// The state letter of a `/proc/PID/stat` line (after the parenthesised
/// command name, which may itself contain spaces and parentheses).
fn proc_state(stat: &str) -> Option<char> {
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// Waits until `pid` is gone or `timeout` passes; true if it is gone.
pub(crate) fn wait_gone(pid: u32, timeout: Duration) -> bool {
    let begun = Instant::now();
    loop {
        if is_gone(pid) {
            return true;
        }
        if begun.elapsed() > timeout {
            return false;
        }
        thread::sleep(POLL);
    }
}

/// True if `pid` is alive and one of its arguments ends with `marker` (the
/// server's config file or data directory): a recorded pid may since have
/// been reused by an unrelated process. Never reaps, so that it cannot take
/// the exit status of another child of ours that reused the pid.
pub(crate) fn is_server_process(pid: u32, marker: &Path) -> bool {
    // A zombie's command line is empty.
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let marker = marker.as_os_str().as_encoded_bytes();
    !marker.is_empty() && cmdline.split(|&b| b == 0).any(|arg| arg.ends_with(marker))
}

/// A loopback port nobody listens on right now (the kernel's choice).
pub(crate) fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind(("127.0.0.1", 0))?.local_addr()?.port())
}

/// True if nothing listens on 127.0.0.1:`port`.
pub(crate) fn port_is_free(port: u16) -> bool {
    TcpListener::bind(("127.0.0.1", port)).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_state_after_odd_command_names() {
        assert_eq!(proc_state("42 (mariadbd) S 1 42 42"), Some('S'));
        assert_eq!(proc_state("42 (a) b) Z 1 42 42"), Some('Z'));
        assert_eq!(proc_state("garbage"), None);
        assert_eq!(
            proc_state_and_group("43 (postgres: walwriter) S 42 41 40"),
            Some(('S', 41))
        );
        assert_eq!(proc_state_and_group("43 (x) S"), None);
    }

    #[test]
    fn a_group_with_a_live_member_is_not_gone() {
        // SAFETY: getpgrp cannot fail.
        let ours = unsafe { libc::getpgrp() } as u32;
        assert!(!group_gone(ours));
        assert!(group_gone(u32::MAX - 1));
    }

    #[test]
    fn our_own_affinity_is_available() {
        let me = std::process::id();
        assert_eq!(affinity(me).unwrap(), available_cpus());
        assert!(check_cpus(&available_cpus()).is_ok());
        let e = check_cpus(&[100_000]).unwrap_err();
        assert!(e.is_bad_input() && e.to_string().contains("CPU 100000 does not exist"));
        assert!(check_cpus(&[]).is_err());
    }

    #[test]
    fn finds_users_and_ports() {
        let me = current_user();
        assert_eq!(lookup_user(&me.name), Some(me));
        assert_eq!(lookup_user("no-such-user-dbsweep"), None);
        let port = free_port().unwrap();
        assert!(port_is_free(port));
        let _held = TcpListener::bind(("127.0.0.1", port)).unwrap();
        assert!(!port_is_free(port));
    }
}
