//! Long runs in flat memory, as a user meets them on the fake driver: a
//! run's intervals and metrics samples leave memory as they close (into
//! the series file beside `--json`), so a run of 20,000 intervals holds no
//! more than one of 200 of the same length; its record still holds every
//! interval, their counts adding up to the run's; and a run killed
//! mid-way leaves its closed intervals for `dbsweep report`.

mod util;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use util::{assert_valid_run_json, dbsweep, read_json, Dir};

const DB: &str = "fake://?latency=200us";

/// The resident set of process `pid` now, bytes (`VmRSS`); None once it
/// has exited.
fn rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_dbsweep"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start dbsweep")
}

/// Runs `dbsweep run` for `seconds` with intervals of `interval` s and
/// metrics samples every `metrics` s, writing `json`; returns the peak of
/// its resident set, sampled every 20 ms, over the run's second half (after
/// its start-up and its histograms have settled).
fn peak_rss(json: &Path, seconds: u64, interval: &str, metrics: &str) -> u64 {
    let time = seconds.to_string();
    let mut child = spawn(&[
        "run",
        "oltp_point_select",
        "--db",
        DB,
        "--threads",
        "4",
        "--time",
        &time,
        "--report-interval",
        interval,
        "--metrics-interval",
        metrics,
        "--json",
        json.to_str().unwrap(),
    ]);
    let start = Instant::now();
    let half = Duration::from_secs(seconds) / 2;
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() >= half {
            if let Some(r) = rss(child.id()) {
                peak = peak.max(r);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "dbsweep run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(peak > 0, "no reading of the run's memory");
    peak
}

#[test]
fn twenty_thousand_intervals_cost_what_two_hundred_do_and_all_are_kept() {
    let dir = Dir::new();
    let (few, many) = (dir.join("few.json"), dir.join("many.json"));
    // The same run, 30 s: 1 ms intervals and 10 ms samples against 150 ms
    // and 1 s ones.
    let small = peak_rss(&few, 30, "0.15", "1");
    let large = peak_rss(&many, 30, "0.001", "0.01");
    let doc = read_json(&many);
    assert_valid_run_json(&doc);
    let r = &doc["result"];
    let few_doc = read_json(&few);
    let few_intervals = few_doc["result"]["intervals"].as_array().unwrap().len();
    let few_samples = few_doc["result"]["metrics"]["samples"]
        .as_array()
        .unwrap()
        .len();
    let intervals = r["intervals"].as_array().unwrap();
    // About 30,000 and 200; a tick a busy machine delays makes an interval
    // longer and the count smaller, so the runs are held to the ratio that
    // makes the comparison of their memory mean something.
    assert!(
        intervals.len() >= 40 * few_intervals,
        "{} intervals in 30 s of 1 ms, {few_intervals} of 150 ms",
        intervals.len()
    );
    let sum = |k: &str| {
        intervals
            .iter()
            .map(|i| i[k].as_u64().unwrap())
            .sum::<u64>()
    };
    assert_eq!(sum("transactions"), r["transactions"].as_u64().unwrap());
    assert_eq!(sum("reads"), r["queries"]["read"].as_u64().unwrap());
    let counted: u64 = intervals
        .iter()
        .map(|i| i["histogram"]["count"].as_u64().unwrap())
        .sum();
    assert_eq!(counted, r["transactions"].as_u64().unwrap());
    let samples = r["metrics"]["samples"].as_array().unwrap().len();
    assert!(
        samples >= 20 * few_samples,
        "{samples} metrics samples in 30 s of 10 ms, {few_samples} of 1 s"
    );
    assert!(few_intervals < 250, "{few_intervals}");
    // The series files served their runs and are gone.
    assert!(!dir.join("many.series.jsonl.gz").exists());
    assert!(!dir.join("few.series.jsonl.gz").exists());
    let grew = large as f64 - small as f64;
    assert!(
        grew < 2.0 * 1024.0 * 1024.0,
        "{} intervals peaked at {:.1} MB, {few_intervals} at {:.1} MB",
        intervals.len(),
        large as f64 / 1e6,
        small as f64 / 1e6
    );
}

#[test]
fn a_killed_run_leaves_its_closed_intervals_for_report() {
    let dir = Dir::new();
    let json = dir.join("run.json");
    let series = dir.join("run.series.jsonl.gz");
    let mut child = spawn(&[
        "run",
        "oltp_point_select",
        "--db",
        DB,
        "--threads",
        "2",
        "--time",
        "120",
        "--report-interval",
        "0.05",
        "--metrics-interval",
        "0.1",
        "--json",
        json.to_str().unwrap(),
    ]);
    // Until the series file holds 20 intervals, then SIGKILL.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = unzip(&std::fs::read(&series).unwrap_or_default());
        if text.matches("{\"interval\":").count() >= 20 {
            break;
        }
        assert!(Instant::now() < deadline, "no intervals written: {text}");
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!json.exists(), "a killed run wrote no record");
    let path = series.to_str().unwrap();
    let doc = reported(path, &dir);
    let r = &doc["result"];
    assert_eq!(r["stop_reason"], "incomplete");
    let intervals = r["intervals"].as_array().unwrap();
    assert!(intervals.len() >= 20, "{} intervals", intervals.len());
    let sum: u64 = intervals
        .iter()
        .map(|i| i["transactions"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, r["transactions"].as_u64().unwrap());
    assert!(sum > 0);
    let why = r["fatal_error"].as_str().unwrap();
    assert!(why.contains("errors by kind"), "{why}");
    assert!(r["latency"]["percentiles"].is_array(), "{r}");
    // The text report says so up front.
    let text = dbsweep(&["report", path, "--format", "text"]);
    text.expect_status(0);
    assert!(text.stdout.contains("INCOMPLETE"), "{}", text.stdout);
    // A file that is not a series file is refused with its name.
    let bad = dir.join("bad.jsonl");
    std::fs::write(&bad, "{\"nope\":1}\n").unwrap();
    let r = dbsweep(&["report", bad.to_str().unwrap()]);
    r.expect_status(2);
    assert!(r.stderr.contains("not a series file"), "{}", r.stderr);
}

#[test]
fn a_series_file_of_format_1_still_reports() {
    // A killed run's series file as dbsweep wrote it before format /2:
    // plain JSON lines, histogram buckets as pairs.
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/series/v1.series.jsonl");
    let text = std::fs::read_to_string(&fixture).unwrap();
    assert!(text.starts_with("{\"header\":{\"format\":\"dbsweep-series/1\""));
    let dir = Dir::new();
    let doc = reported(fixture.to_str().unwrap(), &dir);
    let r = &doc["result"];
    assert_eq!(r["stop_reason"], "incomplete");
    let intervals = r["intervals"].as_array().unwrap();
    let lines = text
        .lines()
        .filter(|l| l.starts_with("{\"interval\":"))
        .count();
    assert_eq!(intervals.len(), lines);
    let sum: u64 = intervals
        .iter()
        .filter(|i| i["warmup"] == false)
        .map(|i| i["transactions"].as_u64().unwrap())
        .sum();
    assert!(sum > 0);
    assert_eq!(sum, r["transactions"].as_u64().unwrap());
    // The intervals' histograms, added bucket for bucket, are the run's.
    let count: u64 = intervals
        .iter()
        .filter(|i| i["warmup"] == false)
        .map(|i| i["histogram"]["count"].as_u64().unwrap())
        .sum();
    assert_eq!(
        count,
        r["histograms"]["transaction"]["count"].as_u64().unwrap()
    );
}

/// The text of a series file as it is being written: its gzip stream
/// decompressed as far as it goes (no trailer until the run ends).
/// `dbsweep report FILE --format json` into `dir`, read back and checked
/// against the run schema.
fn reported(file: &str, dir: &Dir) -> serde_json::Value {
    let out = dir.join("report.json");
    dbsweep(&[
        "report",
        file,
        "--format",
        "json",
        "--out",
        out.to_str().unwrap(),
    ])
    .expect_status(0);
    let doc = read_json(&out);
    assert_valid_run_json(&doc);
    doc
}

fn unzip(bytes: &[u8]) -> String {
    use std::io::Read;
    let mut out = Vec::new();
    let _ = flate2::read::GzDecoder::new(bytes).read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}
