//! Helpers for the coordinated runs' tests (`run --nodes N`): a `dbsweep`
//! left running while the test acts on its workers, the workers found in
//! `/proc`, and the checks every merged record of a coordinated run must
//! pass.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Run;

/// Starts `dbsweep` with `args` and `env` added, its output captured.
pub fn spawn(args: &[&str], env: &[(&str, &str)]) -> (Child, Instant) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dbsweep"));
    cmd.args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    (cmd.spawn().expect("start dbsweep"), Instant::now())
}

/// Waits for a process of [`spawn`] and returns what it printed.
pub fn finish((child, started): (Child, Instant)) -> Run {
    let out = child.wait_with_output().expect("wait for dbsweep");
    Run::from(out, started.elapsed())
}

/// A `dbsweep` of [`spawn`] whose standard output is read as it comes, so a
/// test can act once it has printed a line.
pub struct Watched {
    pub child: Child,
    started: Instant,
    stdout: Arc<Mutex<String>>,
    reader: std::thread::JoinHandle<()>,
}

impl Watched {
    pub fn spawn(args: &[&str]) -> Watched {
        let (mut child, started) = spawn(args, &[]);
        let out = child.stdout.take().expect("piped stdout");
        let stdout = Arc::new(Mutex::new(String::new()));
        let sink = stdout.clone();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        Watched {
            child,
            started,
            stdout,
            reader,
        }
    }

    /// Waits until a line containing `part` was printed; panics after
    /// `within`, or when the process ended first, with what it printed.
    pub fn wait_for(&mut self, part: &str, within: Duration) {
        let until = Instant::now() + within;
        loop {
            if self.stdout.lock().unwrap().contains(part) {
                return;
            }
            let ended = matches!(self.child.try_wait(), Ok(Some(_)));
            if ended || Instant::now() > until {
                let out = self.stdout.lock().unwrap().clone();
                panic!("no {part:?} printed (ended: {ended}):\n{out}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for the process and returns what it printed.
    pub fn finish(self) -> Run {
        let out = self.child.wait_with_output().expect("wait for dbsweep");
        self.reader.join().unwrap();
        let mut run = Run::from(out, self.started.elapsed());
        run.stdout = self.stdout.lock().unwrap().clone();
        run
    }
}

/// The parent pid of `pid`, from /proc.
pub fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')')
        .next()?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// The pids of the `dbsweep worker` processes whose parent is `parent`,
/// once there are `n` of them; panics after a minute (a hang's bound).
pub fn workers_of(parent: u32, n: usize) -> Vec<u32> {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let ours: Vec<u32> = workers()
            .into_iter()
            .map(|(pid, _, _)| pid)
            .filter(|pid| parent_of(*pid) == Some(parent))
            .collect();
        if ours.len() == n {
            return ours;
        }
        assert!(
            Instant::now() < until,
            "{n} workers of {parent} did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The `dbsweep worker` processes running now, with their environment:
/// (pid, command line, environment).
pub fn workers() -> Vec<(u32, String, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let read = |f: &str| {
            std::fs::read(format!("/proc/{pid}/{f}"))
                .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
                .unwrap_or_default()
        };
        let cmdline = read("cmdline");
        if cmdline.contains(" worker --coordinator ") && super::process_alive(pid) {
            found.push((pid, cmdline, read("environ")));
        }
    }
    found
}

/// Checks the merged record of a coordinated run of `n` shards: valid
/// against the schema, the shards' transactions adding up to the run's,
/// every shard's clock offset and start skew measured (the largest the
/// coordinator's), the skew under a hang's bound; returns the shards' rows.
pub fn check_merged(doc: &Value, n: usize, launcher: &str) -> Vec<Value> {
    // The shards start at the coordinator's instant, sent 200 ms ahead:
    // off it by a second only if a message hung. How close they come on an
    // idle or a busy machine is a figure, bench/nodes.py's start skew.
    let max_skew_s = 1.0;
    super::assert_valid_run_json(doc);
    let r = &doc["result"];
    let shards = &r["shards"];
    let rows = shards["rows"].as_array().expect("shard rows").clone();
    assert_eq!(rows.len(), n, "{shards}");
    let total: u64 = rows
        .iter()
        .map(|x| x["transactions"].as_u64().unwrap())
        .sum();
    assert!(total > 0, "{shards}");
    assert_eq!(r["transactions"].as_u64(), Some(total), "{shards}");
    assert_eq!(
        r["histograms"]["transaction"]["count"].as_u64(),
        Some(total)
    );
    assert_eq!(shards["coordinator"]["launcher"], launcher);
    for (i, x) in rows.iter().enumerate() {
        assert_eq!(x["index"].as_u64(), Some(i as u64));
        assert!(x["clock_offset_s"].is_f64(), "shard {i}: {x}");
        assert!(x["clock_rtt_s"].as_f64().unwrap() >= 0.0, "shard {i}: {x}");
        let skew = x["start_skew_s"].as_f64().expect("a start skew");
        assert!(
            skew.abs() < max_skew_s,
            "shard {i} started {skew} s off the instant"
        );
        assert!(x["node"].is_string(), "shard {i}: {x}");
    }
    let max = shards["coordinator"]["max_start_skew_s"].as_f64().unwrap();
    let largest = rows
        .iter()
        .map(|x| x["start_skew_s"].as_f64().unwrap().abs())
        .fold(0.0, f64::max);
    assert_eq!(max, largest, "{shards}");
    rows
}
