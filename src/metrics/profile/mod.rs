//! On-CPU profiles beside a run (`run --profile`): Linux perf samples the
//! server's process tree and dbsweep's own process during the measured
//! window only, and their stacks are folded for flame graphs.
//!
//! Through the `perf` program rather than a crate over perf_event_open:
//! perf walks the stacks (frame pointers, or DWARF with `--call-graph
//! dwarf` for builds without them), names kernel and user frames from the
//! symbol tables and debug links the distributions ship, and follows the
//! processes and threads a server starts after it attached — the parts a
//! crate would leave to this code. The event is the software `cpu-clock`,
//! which virtual machines without hardware counters still have.
//!
//! One `perf record` of the whole machine (`-a`), started before the
//! clients connect (attaching takes a fraction of a second, which must not
//! land in the window) with its timestamps on `CLOCK_MONOTONIC`, stopped
//! after the run. The window's bounds are read on that clock as they pass
//! (a clock read on the timekeeper's thread, nothing more). `perf script`
//! then names the frames, and [`split`] keeps the samples of the window
//! and sorts them by process: the server's tree (its main process and
//! every process forked from it, followed through perf's own fork events,
//! so a backend or a parallel worker started during the run counts) and
//! this process; [`fold`] folds each. The whole machine rather than a
//! list of processes: perf's per-thread mode opens a descriptor per thread
//! and CPU (20,000 for 10,000 connections on two CPUs), spins when one of
//! those threads exits, and does not learn the names of threads started
//! after it attached; sampling every CPU at 99 Hz costs the same whatever
//! runs.
//!
//! Nothing here fails a run: where perf is missing or not permitted, the
//! run goes on and its record says in one line why it has no profile and
//! how to allow one (see [`refusal`]).

pub mod fold;
mod split;

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::record::profile::Profile;

/// How stacks are walked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CallGraph {
    /// Frame pointers: cheap; a build compiled without them shows its
    /// innermost frame and little above it.
    Fp,
    /// DWARF unwinding from a copy of each sample's stack: whole stacks
    /// of any build with unwind tables, at more cost per sample.
    Dwarf,
}

impl CallGraph {
    pub fn name(self) -> &'static str {
        match self {
            CallGraph::Fp => "fp",
            CallGraph::Dwarf => "dwarf",
        }
    }
}

/// What to profile, and how (a run's point file carries it to the
/// workers of `--nodes`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Settings {
    /// Samples per second of a thread's CPU time.
    pub hz: u32,
    pub call_graph: CallGraph,
}

impl Default for Settings {
    /// 99 Hz: off the beat of the kernel's timer and of periodic work,
    /// and few enough samples to cost under 1 % of a CPU.
    fn default() -> Settings {
        Settings {
            hz: 99,
            call_graph: CallGraph::Fp,
        }
    }
}

/// The perf program: `$DBSWEEP_PERF`, else `perf` on the PATH.
pub fn program() -> PathBuf {
    std::env::var_os("DBSWEEP_PERF").map_or_else(|| PathBuf::from("perf"), PathBuf::from)
}

/// Why profiling cannot run here, from what is known before trying: perf's
/// `--version` (or why it would not run), `kernel.perf_event_paranoid`
/// and whether this process is root. None: try.
///
/// Sampling the whole machine needs root (or CAP_PERFMON) or
/// `perf_event_paranoid` ≤ 0.
pub fn refusal(perf: Result<&str, &str>, paranoid: Option<i64>, root: bool) -> Option<String> {
    if let Err(why) = perf {
        return Some(format!(
            "perf could not be run ({why}): install it (Debian: apt-get install linux-perf) \
             or name it with DBSWEEP_PERF"
        ));
    }
    match paranoid {
        Some(p) if !root && p > 0 => Some(format!(
            "kernel.perf_event_paranoid is {p} and dbsweep is not root: a profile samples \
             every CPU, which needs `sysctl kernel.perf_event_paranoid=0` (or root, or \
             CAP_PERFMON)"
        )),
        _ => None,
    }
}

/// [`refusal`] on this machine.
pub fn refusal_here() -> Option<String> {
    let version = Command::new(program())
        .arg("--version")
        .stdin(Stdio::null())
        .output();
    let version = match &version {
        Ok(o) if o.status.success() => Ok(std::str::from_utf8(&o.stdout).unwrap_or("")),
        Ok(o) => Err(first_line(&o.stderr).unwrap_or("it failed without a word")),
        Err(_) => Err("not found"),
    };
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|t| t.trim().parse().ok());
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    refusal(version.map(|v| v.trim()), paranoid, root)
}

fn first_line(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes)
        .ok()?
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
}

/// Now on `CLOCK_MONOTONIC` (perf's `-k monotonic`), seconds.
fn monotonic_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec, which `ts` is.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// A profile being taken; see the module docs.
pub struct Profiler {
    settings: Settings,
    child: Child,
    data: PathBuf,
    errors: PathBuf,
    /// The server's main process, if it runs here and was found.
    server: Option<u32>,
    /// The measured window on `CLOCK_MONOTONIC`: its start, and its end
    /// once it has ended.
    window: (Option<f64>, Option<f64>),
    /// perf's data, removed with the profiler.
    _dir: tempfile::TempDir,
}

impl Profiler {
    /// Starts `perf record` on every CPU and returns once it samples; Err:
    /// why not, in one line that says how to allow it.
    pub fn start(settings: &Settings, server: Option<u32>) -> Result<Profiler, String> {
        if let Some(why) = refusal_here() {
            return Err(why);
        }
        let dir = tempfile::Builder::new()
            .prefix("dbsweep-profile-")
            .tempdir()
            .map_err(|e| format!("no directory for perf's data: {e}"))?;
        let data = dir.path().join("perf.data");
        let errors = dir.path().join("perf.errors");
        let child = Command::new(program())
            .args(["record", "--quiet", "-a", "-e", "cpu-clock", "-F"])
            .arg(settings.hz.to_string())
            .args([
                "--call-graph",
                settings.call_graph.name(),
                "-k",
                "monotonic",
            ])
            .arg("-o")
            .arg(&data)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(File::create(&errors).map_err(|e| e.to_string())?)
            .spawn()
            .map_err(|e| format!("perf could not start: {e}"))?;
        let mut p = Profiler {
            settings: settings.clone(),
            child,
            data,
            errors,
            server,
            window: (None, None),
            _dir: dir,
        };
        // Ready when its data file has a header (its events are open); gone
        // with a message when it may not profile.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(Some(_)) = p.child.try_wait() {
                return Err(perf_said(&p.errors));
            }
            if std::fs::metadata(&p.data).is_ok_and(|m| m.len() > 0) {
                return Ok(p);
            }
            if Instant::now() > deadline {
                return Err("perf did not start within 10 s".into());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The measured window begins (`on`) or ends: its bound, now.
    pub fn sampling(&mut self, on: bool) {
        let now = Some(monotonic_s());
        match on {
            true if self.window.0.is_none() => self.window.0 = now,
            false if self.window.0.is_some() && self.window.1.is_none() => self.window.1 = now,
            _ => {}
        }
    }

    /// Stops perf and folds what it sampled in the window: the server's
    /// profile (where its processes were found) and the client's, and for
    /// one that could not be made, what and why.
    pub fn finish(mut self) -> (Vec<Profile>, Vec<(String, String)>) {
        self.sampling(false);
        self.stop();
        let mut notes = Vec::new();
        let Some(window) = self.window.0.zip(self.window.1) else {
            notes.push(("profile".into(), "the run had no measured window".into()));
            return (Vec::new(), notes);
        };
        match self.profiles(window) {
            Ok(profiles) => (profiles, notes),
            Err(why) => {
                notes.push(("profile".into(), why));
                (Vec::new(), notes)
            }
        }
    }

    /// SIGINT: perf writes its data and exits.
    fn stop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            // SAFETY: kill with a pid this process started and has not
            // reaped.
            unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGINT) };
            let _ = self.child.wait();
        }
    }

    /// The window's samples of the server and of this process, folded.
    fn profiles(&self, window: (f64, f64)) -> Result<Vec<Profile>, String> {
        let mut script = Command::new(program())
            .args(["script", "--show-task-events", "-F"])
            .arg("comm,pid,tid,cpu,time,period,event,ip,sym,dso")
            .arg("-i")
            .arg(&self.data)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(File::create(&self.errors).map_err(|e| e.to_string())?)
            .spawn()
            .map_err(|e| format!("perf script could not start: {e}"))?;
        let out = script.stdout.take().ok_or("perf script without output")?;
        let client = std::process::id();
        let parts = split::split(BufReader::new(out), window, self.server, client);
        let status = script.wait().map_err(|e| e.to_string())?;
        let parts = parts.map_err(|e| format!("perf script's output could not be read: {e}"))?;
        if !status.success() {
            let text = std::fs::read(&self.errors).unwrap_or_default();
            let said = first_line(&text).unwrap_or("without a word");
            return Err(format!("perf script failed ({status}): {said}"));
        }
        let mut profiles = Vec::new();
        let roles = [("server", parts.server), ("client", Some(parts.client))];
        for (role, text) in roles {
            let Some(text) = text else { continue };
            let folded = fold::fold(text.as_bytes())
                .map_err(|e| format!("the {role}'s stacks could not be folded: {e}"))?;
            let (hz, how) = (self.settings.hz, self.settings.call_graph.name());
            profiles.push(fold::profile(role, hz, how, folded));
        }
        Ok(profiles)
    }
}

impl Drop for Profiler {
    fn drop(&mut self) {
        self.stop();
    }
}

/// What perf wrote to its standard error, in one line.
fn perf_said(errors: &Path) -> String {
    let text = std::fs::read(errors).unwrap_or_default();
    match first_line(&text) {
        Some(l) => format!("perf refused: {l}"),
        None => "perf ended at once without a word".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_cause_and_the_fix() {
        let missing = refusal(Err("not found"), Some(2), true).unwrap();
        assert!(missing.contains("apt-get install linux-perf"), "{missing}");
        assert!(missing.contains("DBSWEEP_PERF"), "{missing}");
        let paranoid = refusal(Ok("perf version 6.1"), Some(2), false).unwrap();
        assert!(paranoid.contains("perf_event_paranoid is 2"), "{paranoid}");
        assert!(paranoid.contains("sysctl kernel.perf_event_paranoid=0"));
        assert!(refusal(Ok("perf version 6.1"), Some(1), false).is_some());
        assert_eq!(refusal(Ok("perf version 6.1"), Some(2), true), None);
        assert_eq!(refusal(Ok("perf version 6.1"), Some(0), false), None);
        assert_eq!(refusal(Ok("perf version 6.1"), None, false), None);
    }
}
