//! `dbsweep run --hdr-log FILE`: the interval log read back by an
//! independent reader (the `hdrhistogram` crate's log iterator and V2
//! deserializer) agrees with the run's `--json` record interval by
//! interval; a path that cannot be written is refused before the run, and
//! Ctrl-C leaves the intervals that closed.

mod util;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use base64::Engine;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use serde_json::Value;
use util::{dbsweep_in, read_json, Dir};

/// One interval line of the log, decoded.
struct Line {
    tag: Option<String>,
    start_s: f64,
    length_s: f64,
    max_ms: f64,
    histogram: Histogram<u64>,
}

/// The log's StartTime and BaseTime (seconds since 1970) and its lines.
fn read_log(path: &Path) -> (f64, f64, Vec<Line>) {
    let text = std::fs::read(path).expect("the log is written");
    let (mut start, mut base) = (f64::NAN, f64::NAN);
    let mut lines = Vec::new();
    for entry in IntervalLogIterator::new(&text) {
        match entry.expect("a line the reader parses") {
            LogEntry::StartTime(d) => start = d.as_secs_f64(),
            LogEntry::BaseTime(d) => base = d.as_secs_f64(),
            LogEntry::Interval(i) => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(i.encoded_histogram())
                    .expect("base64");
                let histogram = Deserializer::new()
                    .deserialize(&mut &bytes[..])
                    .expect("an HdrHistogram V2 compressed histogram");
                lines.push(Line {
                    tag: i.tag().map(|t| t.as_str().to_string()),
                    start_s: i.start_timestamp().as_secs_f64(),
                    length_s: i.duration().as_secs_f64(),
                    max_ms: i.max(),
                    histogram,
                });
            }
        }
    }
    (start, base, lines)
}

/// Asserts the log's lines are the record's intervals, one for one.
fn assert_log_matches_record(log: &Path, record: &Value) {
    let (start, base, lines) = read_log(log);
    let released_s = record["released_unix_us"].as_u64().unwrap() as f64 / 1e6;
    assert!(
        (start - released_s).abs() < 0.001,
        "{start} vs {released_s}"
    );
    assert!((base - released_s).abs() < 0.001, "{base} vs {released_s}");
    let intervals = record["result"]["intervals"].as_array().unwrap();
    assert!(!intervals.is_empty(), "the run recorded no interval");
    assert_eq!(lines.len(), intervals.len());
    for (n, (line, i)) in lines.iter().zip(intervals).enumerate() {
        let t_s = i["t_s"].as_f64().unwrap();
        let duration_s = i["duration_s"].as_f64().unwrap();
        let warmup = i["warmup"].as_bool().unwrap();
        assert_eq!(line.tag.as_deref(), warmup.then_some("warmup"), "{n}");
        assert!((line.start_s - (t_s - duration_s)).abs() < 0.001, "{n}");
        assert!((line.length_s - duration_s).abs() < 0.001, "{n}");
        let h = &i["histogram"];
        let count = h["count"].as_u64().unwrap();
        assert_eq!(line.histogram.len(), count, "interval {n}'s count");
        // Every bucket of the record is one bucket of the log, its count
        // the same: no other bucket holds anything.
        for pair in h["buckets"].as_array().unwrap() {
            let (low, c) = (pair[0].as_u64().unwrap(), pair[1].as_u64().unwrap());
            assert_eq!(
                line.histogram.count_at(low),
                c,
                "interval {n}, bucket {low}"
            );
            assert_eq!(line.histogram.lowest_equivalent(low), low, "{n}: {low}");
        }
        match h["max"].as_u64() {
            Some(max) => {
                // The line's max is the exact one in ms (to the µs); the
                // histogram's is its bucket's highest value.
                let line_ns = line.max_ms * 1e6;
                assert!(
                    (line_ns - max as f64).abs() <= 500.5,
                    "{n}: {line_ns} vs {max}"
                );
                let top = line.histogram.max();
                assert!(
                    line.histogram.lowest_equivalent(top) <= max && max <= top,
                    "{n}"
                );
            }
            None => assert_eq!((line.max_ms, count), (0.0, 0), "{n}"),
        }
    }
}

#[test]
fn the_log_has_the_records_intervals_with_their_buckets() {
    let dir = Dir::new();
    let r = dbsweep_in(
        dir.path(),
        &[
            "run",
            "oltp_point_select",
            "--table-size",
            "200",
            "--time",
            "3",
            "--warmup",
            "1",
            "--hdr-log",
            "run.hlog",
            "--json",
            "run.json",
        ],
    );
    r.ok();
    assert!(
        r.stderr.contains("HdrHistogram log written to run.hlog"),
        "{}",
        r.stderr
    );
    let record = read_json(&dir.join("run.json"));
    assert_log_matches_record(&dir.join("run.hlog"), &record);
    let (_, _, lines) = read_log(&dir.join("run.hlog"));
    // 1 s intervals without --report-interval: the warmup's is tagged, the
    // measured ones hold the run's latency.
    assert!(lines.iter().any(|l| l.tag.is_some()) && lines.iter().any(|l| l.tag.is_none()));
    let measured: u64 = lines
        .iter()
        .filter(|l| l.tag.is_none())
        .map(|l| l.histogram.len())
        .sum();
    assert!(measured > 0);
    assert_eq!(record["run"]["report_interval_s"], 1.0, "1 s intervals");
    let text = std::fs::read_to_string(dir.join("run.hlog")).unwrap();
    assert!(
        text.contains("#[Histogram log format version 1.3]\n"),
        "{text}"
    );
    assert!(text.contains("values in nanoseconds"), "{text}");
    // Written beside and renamed: nothing else is left.
    assert_eq!(dir.files(), ["run.hlog", "run.json"]);
}

#[test]
fn an_open_loop_logs_the_latency_from_the_intended_start() {
    let dir = Dir::new();
    let r = dbsweep_in(
        dir.path(),
        &[
            "run",
            "oltp_point_select",
            "--table-size",
            "200",
            "--time",
            "2",
            "--rate",
            "500",
            "--report-interval",
            "0.5",
            "--hdr-log",
            "rate.hlog",
            "--json",
            "rate.json",
        ],
    );
    r.ok();
    let record = read_json(&dir.join("rate.json"));
    assert!(record["result"]["pacing"]["offered"].as_u64().unwrap() > 0);
    // The lines hold the intervals' histograms, the run's latency: from
    // the intended start, schedule lag included (not the service time).
    assert_log_matches_record(&dir.join("rate.hlog"), &record);
    let text = std::fs::read_to_string(dir.join("rate.hlog")).unwrap();
    assert!(
        text.contains("from each transaction's intended start"),
        "{text}"
    );
    let (_, _, lines) = read_log(&dir.join("rate.hlog"));
    assert!(lines.iter().all(|l| l.tag.is_none()), "no warmup, no tag");
    assert_eq!(record["run"]["report_interval_s"], 0.5);
}

/// Asserts a usage error: status 2, one `error:` line naming `--hdr-log`
/// and each of `parts`, found well before the run's 10 minutes.
fn assert_refused(dir: &Dir, hdr_log: &str, parts: &[&str]) {
    let r = dbsweep_in(
        dir.path(),
        &[
            "run",
            "oltp_point_select",
            "--table-size",
            "200",
            "--time",
            "600",
            "--hdr-log",
            hdr_log,
        ],
    );
    r.expect_status(2);
    let errors: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("error:"))
        .collect();
    assert_eq!(errors.len(), 1, "{}", r.stderr);
    for p in ["--hdr-log"].iter().chain(parts) {
        assert!(errors[0].contains(p), "{p:?} not in {}", errors[0]);
    }
    assert!(
        r.elapsed < Duration::from_secs(60),
        "checked before the run"
    );
}

#[test]
fn a_directory_or_an_unwritable_path_is_refused_before_the_run() {
    let dir = Dir::new();
    std::fs::create_dir(dir.join("logs")).unwrap();
    assert_refused(&dir, "logs", &["is a directory", "logs/run.hlog"]);
    assert_refused(&dir, "missing/run.hlog", &["'missing' does not exist"]);
    // /proc takes no new file, not even root's.
    assert_refused(
        &dir,
        "/proc/dbsweep-run.hlog",
        &["'/proc'", "takes no new file"],
    );
    assert!(!Path::new("/proc/dbsweep-run.hlog").exists());
    assert_eq!(dir.files(), ["logs"], "nothing half-written");
    assert!(std::fs::read_dir(dir.join("logs"))
        .unwrap()
        .next()
        .is_none());
}

#[test]
fn ctrl_c_leaves_the_intervals_that_closed() {
    let dir = Dir::new();
    let mut child = Command::new(env!("CARGO_BIN_EXE_dbsweep"))
        .args([
            "run",
            "oltp_point_select",
            "--table-size",
            "200",
            "--time",
            "600",
            "--report-interval",
            "0.5",
            "--hdr-log",
            "run.hlog",
            "--json",
            "run.json",
        ])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn dbsweep");
    // Signal once two interval lines were printed (the handler is
    // installed before the preamble); a minute is only a hang's bound.
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let _ = tx.send(line.unwrap_or_default());
        }
    });
    let started = Instant::now();
    let mut printed = 0;
    while printed < 2 && started.elapsed() < Duration::from_secs(60) {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(l) if l.starts_with('[') => printed += 1,
            Ok(_) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: plain kill(2) on our own child, which has not been reaped yet.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let signalled = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if signalled.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running 60 s after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    reader.join().unwrap();
    assert!(printed >= 2, "no interval lines within a minute");
    assert_eq!(status.code(), Some(130), "an interrupted run's status");
    let record = read_json(&dir.join("run.json"));
    assert_eq!(record["result"]["stop_reason"], "interrupted");
    assert_log_matches_record(&dir.join("run.hlog"), &record);
    assert!(read_log(&dir.join("run.hlog")).2.len() >= 2);
}

#[test]
fn run_help_names_the_format_with_an_example() {
    let r = util::dbsweep(&["run", "--help"]);
    r.ok();
    for part in [
        "--hdr-log",
        "HdrHistogram",
        "HistogramLogProcessor",
        "--hdr-log run.hlog",
    ] {
        assert!(r.stdout.contains(part), "{part:?} not in run --help");
    }
}
