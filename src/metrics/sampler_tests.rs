//! The sampler beside real processes: a spinning process tree's CPU is
//! attributed to it, an unreadable `/proc` and a refused monitoring
//! connection are gaps, never failures.

use super::sampler::*;
use super::timeline::saturated;
use crate::driver::Target;
use std::path::Path;
use std::time::Duration;

fn options(server: ServerRef, target: &str, proc: &Path) -> Options {
    Options {
        interval: Duration::from_millis(200),
        server,
        target: Target::parse(target).unwrap(),
        proc: proc.to_path_buf(),
        counts: Vec::new(),
        tap: None,
        profile: None,
    }
}

/// A process tree whose child does a fixed amount of work: the sampler
/// gives the server's tree the CPU the kernel accounts to it, within 10 %.
/// The test paces the tree through pipes, not sleeps, so the window spans
/// the child's whole life however slowly a busy machine runs it.
#[test]
// The child is reaped with wait4, which also returns its rusage.
#[allow(clippy::zombie_processes)]
fn attributes_a_spinning_process_tree_its_cpu() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    // The root waits for "go", runs a child that counts to 200,000 (about
    // half a second of CPU), says "done" once it has reaped it, and waits
    // for its input to close.
    let mut root = std::process::Command::new("sh")
        .args([
            "-c",
            "read go; sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'; \
             echo done; read stop",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = root.id();
    let s = Sampler::start(
        &options(ServerRef::Pid(pid), "fake://", Path::new("/proc")),
        None,
    );
    s.released(true);
    let mut stdin = root.stdin.take().unwrap();
    writeln!(stdin, "go").unwrap();
    let mut line = String::new();
    BufReader::new(root.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "done");
    s.end();
    let m = s.finish(100, 100);
    let measured = m.window.server.expect("the tree was measured").cpu_s();
    drop(stdin);
    // The kernel's account of the root and every child it reaped.
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, writing into local variables.
    unsafe { libc::wait4(pid as i32, &mut status, 0, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let total = secs(usage.ru_utime) + secs(usage.ru_stime);
    assert!(total > 0.1, "the child got {total} s of CPU");
    assert!(
        (measured - total).abs() <= 0.1 * total,
        "the sampler measured {measured:.3} s, the kernel accounts {total:.3} s"
    );
    assert_eq!(m.server_process.pid, Some(pid));
}

#[test]
fn an_unreadable_proc_is_a_gap_not_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let s = Sampler::start(&options(ServerRef::Pid(1), "fake://", dir.path()), None);
    s.released(true);
    s.end();
    let m = s.finish(10, 10);
    let machine = m.gaps.iter().find(|g| g.what == "machine");
    assert!(
        machine.is_some_and(|g| g.why.contains("cannot read")),
        "{:?}",
        m.gaps
    );
    assert!(m.figures.cpu_busy_pct.is_none());
    assert!(m.window.server.is_none());
}

#[test]
fn a_refused_monitoring_connection_is_a_gap() {
    // Nothing listens on port 1.
    let s = Sampler::start(
        &options(
            ServerRef::Listening,
            "mysql://u:p@127.0.0.1:1/db",
            Path::new("/proc"),
        ),
        None,
    );
    s.released(true);
    std::thread::sleep(Duration::from_millis(300));
    s.end();
    let m = s.finish(10, 10);
    let gap = |w: &str| m.gaps.iter().find(|g| g.what == w).map(|g| g.why.clone());
    assert!(
        gap("server counters")
            .unwrap()
            .contains("monitoring connection failed"),
        "{:?}",
        m.gaps
    );
    assert!(gap("server process")
        .unwrap()
        .contains("no listening socket"));
    assert!(
        m.figures.cpu_busy_pct.is_some(),
        "the machine is still measured"
    );
}

#[test]
fn the_machine_is_saturated_with_no_idle_cpu_or_a_queue() {
    use super::proc::MachineSnap;
    let snap = |busy: u64, idle: u64, running: u64| MachineSnap {
        // user, nice, system, idle, iowait, …
        cpu: [busy, 0, 0, idle, 0, 0, 0, 0],
        per_cpu: vec![[0; 8]; 2],
        procs_running: running,
        ..MachineSnap::default()
    };
    let before = snap(1000, 1000, 1);
    // 10 % of the load's time busy (the rate sweep's low level): room.
    assert!(!saturated(&before, &snap(1020, 1180, 2)));
    // Every tick busy, or more runnable threads than two CPUs and the reader.
    assert!(saturated(&before, &snap(1200, 1000, 1)));
    assert!(saturated(&before, &snap(1190, 1010, 2)));
    assert!(saturated(&before, &snap(1020, 1180, 4)));
    // No time passed: nothing to judge by but the queue.
    assert!(!saturated(&before, &before));
}
