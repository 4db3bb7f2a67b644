//! A process tree's cumulative use of the machine: CPU, resident memory,
//! context switches and storage IO of a process and all its descendants
//! (`/proc/PID/stat`, `status`, `io`), and the difference of two readings.
//!
//! mysqld is one process with many threads; PostgreSQL is a postmaster with
//! one backend process per connection, so the tree is what measures it.
//! Descendants that ended between two readings are not lost: their parent
//! reaped them, and the kernel added their CPU to the parent's
//! children-times (`cutime`, `cstime`), which the root's reading includes.

use std::collections::HashMap;
use std::path::Path;

use crate::record::metrics::Process;

/// One process's line of `/proc/PID/stat`: the fields the tree needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PidStat {
    pub pid: u32,
    pub ppid: u32,
    /// CPU in user and kernel mode, and of reaped children, clock ticks.
    pub utime: u64,
    pub stime: u64,
    pub cutime: u64,
    pub cstime: u64,
    /// Resident set, pages.
    pub rss_pages: u64,
    /// Threads of the process.
    pub threads: u64,
}

/// Parses a `/proc/PID/stat` line. The command name is in parentheses and
/// may itself hold spaces and parentheses, so the fields are counted from
/// the last `)`.
pub fn parse_pid_stat(line: &str) -> Result<PidStat, String> {
    let bad = || format!("/proc/PID/stat: cannot read '{}'", line.trim());
    let open = line.find('(').ok_or_else(bad)?;
    let close = line.rfind(')').ok_or_else(bad)?;
    let pid = line[..open].trim().parse().map_err(|_| bad())?;
    // After the name: state (field 3), ppid (4), … utime (14), stime (15),
    // cutime (16), cstime (17), … rss (24), numbered as in proc(5).
    let f: Vec<&str> = line[close + 1..].split_ascii_whitespace().collect();
    let n = |field: usize| -> Result<u64, String> {
        let s = f.get(field - 3).ok_or_else(bad)?;
        // cutime and cstime are signed in the kernel's declaration.
        s.parse::<i64>().map(|v| v.max(0) as u64).map_err(|_| bad())
    };
    Ok(PidStat {
        pid,
        ppid: n(4)? as u32,
        utime: n(14)?,
        stime: n(15)?,
        cutime: n(16)?,
        cstime: n(17)?,
        rss_pages: n(24)?,
        threads: n(20)?,
    })
}

/// Voluntary and involuntary context switches from `/proc/PID/status`.
pub fn parse_status_switches(text: &str) -> (u64, u64) {
    let get = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    (
        get("voluntary_ctxt_switches"),
        get("nonvoluntary_ctxt_switches"),
    )
}

/// Bytes read from and written to storage, from `/proc/PID/io`; `None`
/// when the file could not be read (another user's process).
pub fn parse_io(text: &str) -> Option<(u64, u64)> {
    let get = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.trim().parse().ok())
    };
    Some((get("read_bytes")?, get("write_bytes")?))
}

/// The tree's cumulative counters at one reading.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TreeSnap {
    /// User and system CPU, clock ticks (the root's reaped children
    /// included); fractional where a precise reading was available.
    pub user_ticks: f64,
    pub system_ticks: f64,
    pub rss_bytes: u64,
    pub voluntary: u64,
    pub involuntary: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub processes: u64,
    /// Some process's `/proc/PID/io` could not be read.
    pub io_unreadable: bool,
}

impl TreeSnap {
    /// Adds another tree's reading: two processes read as one side (a
    /// pooler and the database behind it).
    pub fn add(&mut self, o: &TreeSnap) {
        self.user_ticks += o.user_ticks;
        self.system_ticks += o.system_ticks;
        self.rss_bytes += o.rss_bytes;
        self.voluntary += o.voluntary;
        self.involuntary += o.involuntary;
        self.read_bytes += o.read_bytes;
        self.write_bytes += o.write_bytes;
        self.processes += o.processes;
        self.io_unreadable |= o.io_unreadable;
    }
}

/// Every process's stat line under `proc` (normally `/proc`), by pid.
/// Processes that end while being read are skipped.
pub fn all_stats(proc: &Path) -> HashMap<u32, PidStat> {
    let mut out = HashMap::new();
    let Ok(dir) = std::fs::read_dir(proc) else {
        return out;
    };
    for e in dir.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if let Some(s) = read_stat(&e.path()) {
            out.insert(pid, s);
        }
    }
    out
}

/// The stat line of the process whose directory is `dir`, if it still runs.
fn read_stat(dir: &Path) -> Option<PidStat> {
    let text = std::fs::read_to_string(dir.join("stat")).ok()?;
    parse_pid_stat(&text).ok()
}

/// `root` and all its descendants in `stats`, but not the subtrees of
/// `apart` (a server dbsweep started is its child, and is measured as a
/// tree of its own, not as part of the client's).
pub fn tree(root: u32, stats: &HashMap<u32, PidStat>, apart: &[u32]) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for s in stats.values() {
        children.entry(s.ppid).or_default().push(s.pid);
    }
    let mut out = Vec::new();
    let mut todo = vec![root];
    while let Some(p) = todo.pop() {
        if !stats.contains_key(&p) || out.contains(&p) || (p != root && apart.contains(&p)) {
            continue;
        }
        out.push(p);
        if let Some(c) = children.get(&p) {
            todo.extend(c);
        }
    }
    out
}

/// Reads the tree of `root` under `proc`: `None` when `root` is gone.
pub fn read_tree(proc: &Path, root: u32, page_bytes: u64, tick_s: f64) -> Option<TreeSnap> {
    read_trees(proc, &[root], page_bytes, tick_s)
        .pop()
        .flatten()
}

/// How many times a reading scans `/proc` at most while the roots' children
/// end during its scans: enough to outlast a thousand backends exiting
/// (each scan of them takes tens of milliseconds), few enough that a
/// server that forks without end cannot stall the sampler.
const SCANS: usize = 8;

/// Reads the trees of several roots (the server's and the client's) from
/// one pass over `/proc`: the scan of every process's stat line is most of
/// a reading's cost when a server runs a thousand backends.
pub fn read_trees(
    proc: &Path,
    roots: &[u32],
    page_bytes: u64,
    tick_s: f64,
) -> Vec<Option<TreeSnap>> {
    // The roots first: a child that is reaped while the scan runs is then
    // either in its own line or in neither, never in both. In neither, its
    // CPU is missing from this reading — at a run's last reading, while
    // another shard's thousand backends exit, nearly all the window's —
    // so the roots are read again after the scan, and the scan repeated
    // while a root's children-times moved during it (a child was reaped):
    // the reading kept is one during which no child of a root ended. /proc
    // lists in pid order, and pids wrap (pid_max is often 32768), so a scan
    // alone may read a child before its parent.
    let roots_now = || -> Vec<(u32, PidStat)> {
        roots
            .iter()
            .filter_map(|&r| Some((r, read_stat(&proc.join(r.to_string()))?)))
            .collect()
    };
    let reaped = |s: &PidStat| (s.pid, s.cutime, s.cstime);
    let mut first = roots_now();
    let mut stats = all_stats(proc);
    for _ in 1..SCANS {
        let again = roots_now();
        if again
            .iter()
            .map(|(_, s)| reaped(s))
            .eq(first.iter().map(|(_, s)| reaped(s)))
        {
            break;
        }
        first = again;
        stats = all_stats(proc);
    }
    stats.extend(first);
    roots
        .iter()
        .map(|&root| {
            let root_stat = stats.get(&root)?;
            let mut snap = TreeSnap {
                user_ticks: root_stat.cutime as f64,
                system_ticks: root_stat.cstime as f64,
                ..TreeSnap::default()
            };
            for pid in tree(root, &stats, roots) {
                let s = &stats[&pid];
                let dir = proc.join(pid.to_string());
                let (user, system) = precise_cpu(&dir, s, tick_s);
                snap.user_ticks += user;
                snap.system_ticks += system;
                snap.rss_bytes += s.rss_pages * page_bytes;
                snap.processes += 1;
                let (v, i) = switches(&dir, s.threads);
                snap.voluntary += v;
                snap.involuntary += i;
                match std::fs::read_to_string(dir.join("io"))
                    .ok()
                    .and_then(|t| parse_io(&t))
                {
                    Some((r, w)) => {
                        snap.read_bytes += r;
                        snap.write_bytes += w;
                    }
                    None => snap.io_unreadable = true,
                }
            }
            Some(snap)
        })
        .collect()
}

/// The CPU of the process at `dir`, user and system, in (fractional)
/// clock ticks. Its stat line counts whole ticks, each process truncated on
/// its own: a thousand PostgreSQL backends that each use a few ms a second
/// lose most of their CPU to the truncation, and gain it back all at once
/// when they exit (the parent's children-times are summed before they are
/// truncated). So a single-threaded process's total comes from the
/// scheduler's exact runtime (`schedstat`, ns), split between user and
/// system as its ticks are (all user when it has none, as the kernel's own
/// adjustment does). A multi-threaded process (mysqld) is one truncation
/// in thousands of ticks: its stat line is kept.
fn precise_cpu(dir: &Path, s: &PidStat, tick_s: f64) -> (f64, f64) {
    let ticks = (s.utime as f64, s.stime as f64);
    if s.threads > 1 || tick_s <= 0.0 {
        return ticks;
    }
    let Some(ns) = std::fs::read_to_string(dir.join("schedstat"))
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse::<u64>().ok())
    else {
        return ticks;
    };
    let total = ns as f64 / 1e9 / tick_s;
    if total < ticks.0 + ticks.1 {
        // Never below what the stat line already showed.
        return ticks;
    }
    if s.stime == 0 {
        (total, 0.0)
    } else {
        let user = total * ticks.0 / (ticks.0 + ticks.1);
        (user, total - user)
    }
}

/// Context switches of the process at `dir` with `threads` threads: its
/// own `status` when it has one thread (a PostgreSQL backend), else every
/// thread's (mysqld's are in its tasks; the process's `status` counts its
/// first thread only).
fn switches(dir: &Path, threads: u64) -> (u64, u64) {
    if threads <= 1 {
        return std::fs::read_to_string(dir.join("status"))
            .map(|t| parse_status_switches(&t))
            .unwrap_or((0, 0));
    }
    task_switches(dir)
}

/// Context switches of every thread of the process at `dir`
/// (`task/*/status`; the process's own `status` counts its first thread
/// only).
fn task_switches(dir: &Path) -> (u64, u64) {
    let Ok(tasks) = std::fs::read_dir(dir.join("task")) else {
        return std::fs::read_to_string(dir.join("status"))
            .map(|t| parse_status_switches(&t))
            .unwrap_or((0, 0));
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("status")).ok())
        .map(|t| parse_status_switches(&t))
        .fold((0, 0), |(a, b), (v, i)| (a + v, b + i))
}

/// What the tree used between two readings (levels from `now`).
pub fn delta(before: &TreeSnap, now: &TreeSnap, tick_s: f64) -> Process {
    Process {
        cpu_user_s: (now.user_ticks - before.user_ticks).max(0.0) * tick_s,
        cpu_system_s: (now.system_ticks - before.system_ticks).max(0.0) * tick_s,
        rss_bytes: now.rss_bytes,
        voluntary_switches: now.voluntary.saturating_sub(before.voluntary),
        involuntary_switches: now.involuntary.saturating_sub(before.involuntary),
        read_bytes: now.read_bytes.saturating_sub(before.read_bytes),
        write_bytes: now.write_bytes.saturating_sub(before.write_bytes),
        processes: now.processes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let p = format!("{}/tests/fixtures/proc/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
    }

    #[test]
    fn reads_stat_lines_whatever_the_command_name() {
        let s = parse_pid_stat(&fixture("pid-stat-odd")).unwrap();
        assert_eq!(
            (
                s.pid,
                s.ppid,
                s.utime,
                s.stime,
                s.cutime,
                s.cstime,
                s.rss_pages
            ),
            (12345, 1, 250, 75, 10, 5, 2500)
        );
        let s = parse_pid_stat(&fixture("pid-stat")).unwrap();
        assert!(s.pid > 0 && s.ppid > 0, "{s:?}");
        assert!(parse_pid_stat("12 (x) S 1").is_err());
    }

    #[test]
    fn reads_status_and_io() {
        assert_eq!(parse_status_switches(&fixture("pid-status")), (0, 0));
        assert_eq!(
            parse_status_switches("voluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n"),
            (12, 3)
        );
        assert_eq!(parse_io(&fixture("pid-io")), Some((0, 0)));
        assert_eq!(parse_io("rchar: 5\n"), None);
    }

    #[test]
    fn a_tree_is_its_root_and_every_descendant() {
        let stat = |pid, ppid| PidStat {
            pid,
            ppid,
            ..PidStat::default()
        };
        let stats: HashMap<u32, PidStat> = [
            stat(1, 0),
            stat(10, 1),
            stat(11, 10),
            stat(12, 10),
            stat(20, 1),
        ]
        .into_iter()
        .map(|s| (s.pid, s))
        .collect();
        let mut t = tree(10, &stats, &[]);
        t.sort();
        assert_eq!(t, [10, 11, 12]);
        assert!(tree(99, &stats, &[]).is_empty());
        // Another root's subtree is its own.
        let mut t = tree(1, &stats, &[1, 10]);
        t.sort();
        assert_eq!(t, [1, 20]);
    }

    #[test]
    fn children_that_end_during_a_reading_are_not_lost_from_it() {
        // A shell that keeps starting short busy children (~60 ms of CPU
        // each) and reaping them: readings taken back to back keep meeting
        // a child reaped mid-scan. A tree's CPU only grows (a reaped child's
        // moves into its parent's children-times), but in whole ticks: the
        // children-times and an exited child's own line are each truncated,
        // so a reading may fall below the one before by up to two ticks.
        // Below that by more has lost a child (one scan, the children-times
        // read before it only, lost one in about 70 readings here, 3 to 10
        // ticks each).
        let tick = 1.0 / 100.0;
        let busy = "i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done";
        let script = format!("while :; do for k in 1 2 3; do ({busy}) & done; wait; done");
        let mut shell = std::process::Command::new("sh")
            .args(["-c", &script])
            .spawn()
            .unwrap();
        let root = shell.id();
        let t = std::time::Instant::now();
        let (mut readings, mut lost) = (0, Vec::new());
        let mut before = read_tree(Path::new("/proc"), root, 4096, tick).unwrap();
        // Three seconds, and on a busy machine on until the tree has had a
        // tenth of a second of CPU and 20 readings were taken (a minute is
        // a hang's bound).
        let enough = |readings: u32, ticks: f64| readings > 20 && ticks > 10.0;
        while t.elapsed() < std::time::Duration::from_secs(3)
            || (!enough(readings, before.user_ticks + before.system_ticks)
                && t.elapsed() < std::time::Duration::from_secs(60))
        {
            let now = read_tree(Path::new("/proc"), root, 4096, tick).unwrap();
            let (b, n) = (
                before.user_ticks + before.system_ticks,
                now.user_ticks + now.system_ticks,
            );
            if n < b - 2.0 {
                lost.push((b, n));
            }
            readings += 1;
            before = now;
        }
        shell.kill().unwrap();
        shell.wait().unwrap();
        assert!(readings > 20, "{readings} readings");
        assert!(
            lost.is_empty(),
            "{} of {readings} readings fell below the one before (ticks before, after): {:?}",
            lost.len(),
            &lost[..lost.len().min(5)]
        );
        assert!(before.user_ticks + before.system_ticks > 10.0, "{before:?}");
    }

    #[test]
    fn this_process_is_a_tree_of_one_that_uses_cpu() {
        let tick = 1.0 / 100.0;
        let page = 4096;
        let me = std::process::id();
        let before = read_tree(Path::new("/proc"), me, page, tick).unwrap();
        // 200 ms of this thread's own CPU, however long a busy machine
        // takes to give it (a minute is a hang's bound).
        let thread_cpu = || {
            let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
            // SAFETY: writes the calling thread's CPU time into `ts`.
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
            std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
        };
        let (t, cpu0) = (std::time::Instant::now(), thread_cpu());
        let mut x = 0u64;
        while thread_cpu() - cpu0 < std::time::Duration::from_millis(200)
            && t.elapsed() < std::time::Duration::from_secs(60)
        {
            for _ in 0..10_000 {
                x = x.wrapping_mul(31).wrapping_add(7);
            }
        }
        std::hint::black_box(x);
        let now = read_tree(Path::new("/proc"), me, page, tick).unwrap();
        let d = delta(&before, &now, tick);
        assert!(d.cpu_s() > 0.05, "{d:?}");
        assert!(d.rss_bytes > 0 && d.processes >= 1);
    }
}
