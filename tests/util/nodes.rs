//! Helpers for the coordinated runs' tests (`run --nodes N`): a `dbsweep`
//! left running while the test acts on its workers, the workers found in
//! `/proc`, and the checks every merged record of a coordinated run must
//! pass.

use std::process::{Child, Command, Stdio};
use std::time::Instant;

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
/// every shard's clock offset and start skew measured, the skew under
/// `max_skew_s`; returns the shards' rows.
pub fn check_merged(doc: &Value, n: usize, launcher: &str, max_skew_s: f64) -> Vec<Value> {
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
    assert!(max < max_skew_s, "{shards}");
    rows
}
