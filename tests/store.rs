//! The results database: points survive reopening (and SIGKILL) with exact
//! values, resume semantics, summaries of repeats, versioning, and what
//! `dbsweep results` renders.

mod util;

use std::collections::HashSet;
use std::path::Path;

use dbsweep::record::Machine;
use dbsweep::report::results::{csv as results_csv, table as results_table};
use dbsweep::stats::histogram::Histogram;
use dbsweep::store::{self, PointRow, PointStatus, Store, StoredPoint, StudyId};
use dbsweep::UsageError;
use serde_json::{json, Value};

use util::record::{histogram, with_histograms};
use util::Dir;

/// A complete, schema-valid run document with round numbers
/// (exact in binary, so they survive the JSON text unchanged).
fn run_doc(tps: f64, p95_us: f64, deadlocks: u64, stop: &str) -> Value {
    let n = (tps * 10.0) as u64;
    let intervals = json!([
        {"t_s": 1.0, "duration_s": 1.0, "warmup": true, "threads": 4,
         "transactions": 90, "failed": 0, "reads": 1260, "writes": 360, "others": 180,
         "errors": 0, "reconnects": 0,
         "p50_us": 810.0, "p95_us": null, "p99_us": 5100.0, "max_us": 9000.0},
        {"t_s": 2.0, "duration_s": 1.0, "warmup": false, "threads": 4,
         "transactions": 100, "failed": 0, "reads": 1400, "writes": 400, "others": 200,
         "errors": deadlocks, "reconnects": 0,
         "p50_us": 800.0, "p95_us": p95_us, "p99_us": 5000.0, "max_us": 25000.0,
         "histogram": {"count": 3, "min": 5000, "max": 25000000, "sum": 25010005,
                       "buckets": [[5000, 1], [5004, 1], [24985600, 1]]}}
    ]);
    let result = json!({
        "stop_reason": stop, "fatal_error": null, "measured_s": 10.0,
        "transactions": n, "tps": tps,
        "queries": {"read": n * 14, "write": n * 4, "other": n * 2, "total": n * 20},
        "qps": tps * 20.0,
        "failed_transactions": 0, "retries": deadlocks, "ignored_errors": deadlocks,
        "reconnects": 0, "abandoned": 0,
        "errors": {"deadlock": deadlocks, "lock_timeout": 0, "serialization": 0,
                   "duplicate_key": 0, "connection_lost": 0, "other": 0, "timeout": 0},
        "latency": {"count": n, "min_us": 100.0, "avg_us": 900.5, "max_us": 25000.0,
                    "sum_us": n as f64 * 900.5,
                    "percentiles": [{"p": 50, "us": 800.0}, {"p": 95, "us": p95_us},
                                    {"p": 99, "us": 5000.0}]},
        "statements": [],
        "fairness": {"events_avg": n as f64 / 4.0, "events_stddev": 0.0,
                     "time_avg_s": 9.75, "time_stddev_s": 0.0},
        "client_cpu": {"user_s": 1.25, "system_s": 0.5, "us_per_transaction": 10.0,
                       "us_per_query": 0.5, "share_of_machine": 0.125, "cpus": 2},
        "intervals": intervals
    });
    json!({
        "schema": "dbsweep-run/3",
        "tool": {"name": "dbsweep", "version": "0.1.0"},
        "started_unix_s": 1_700_000_000u64,
        "workload": {"name": "oltp_read_write", "options": {"table-size": "1000", "tables": "1"}},
        "target": {
            "url": "sqlite:///tmp/t.db", "dialect": "sqlite",
            "server_version": "SQLite 3.46.0", "settings": {"journal_mode": "wal"}
        },
        "random": {"type": "uniform", "seed": 18_000_000_000_000_000_042u64, "spec_iter": 12, "spec_pct": 1.0,
                   "spec_res": 75.0, "pareto_h": 0.2, "zipfian_exp": 0.8},
        "run": {"threads": 4, "time_s": 10.0, "events": null, "rounds": null, "warmup_s": 1.0,
                "report_interval_s": 1.0, "max_retries": null, "ignore_errors": [], "grace_s": 5.0},
        "machine": {"hostname": "h", "cpu_model": "cpu", "cpus_online": 2, "cpus_available": 2,
                    "memory_bytes": 1024, "kernel": "6.1", "os": "linux"},
        "result": result,
    })
}

/// The plan part of a point; status and outcome set by the callers.
fn plan(key: &str, clients: u32, repeat: u32) -> PointRow {
    PointRow {
        key: key.to_string(),
        target: "lite".into(),
        target_kind: "sqlite".into(),
        target_url: "sqlite:///tmp/t.db".into(),
        variant: "wal".into(),
        variant_settings: vec![
            ("journal_mode".into(), "wal".into()),
            ("synchronous".into(), "1".into()),
        ],
        cpus: Some("0-1".into()),
        workload: "oltp_read_write".into(),
        workload_label: "oltp_read_write".into(),
        workload_options: vec![("table-size".into(), "1000".into())],
        clients,
        instances: 1,
        load_level: None,
        repeat,
        status: PointStatus::Skipped,
        reason: None,
        run: None,
        settings: Vec::new(),
        restart_s: None,
    }
}

fn finished(key: &str, clients: u32, repeat: u32, tps: f64) -> PointRow {
    PointRow {
        status: PointStatus::Finished,
        run: Some(with_histograms(
            run_doc(tps, 2000.0 + tps, 3, "time"),
            &[
                ("transaction", histogram(&[100_000, 900_000, 25_000_000])),
                ("point_select", histogram(&[5_000, 7_000])),
            ],
        )),
        settings: vec![
            ("journal_mode".into(), "wal".into()),
            ("cache_size".into(), "-2000".into()),
        ],
        ..plan(key, clients, repeat)
    }
}

fn skipped(key: &str, clients: u32, repeat: u32, reason: &str) -> PointRow {
    PointRow {
        status: PointStatus::Skipped,
        reason: Some(reason.into()),
        ..plan(key, clients, repeat)
    }
}

fn failed(key: &str, clients: u32, repeat: u32, reason: &str) -> PointRow {
    PointRow {
        status: PointStatus::Failed,
        reason: Some(reason.into()),
        ..plan(key, clients, repeat)
    }
}

fn machine() -> Machine {
    Machine {
        hostname: "h".into(),
        cpu_model: "cpu".into(),
        cpus_online: 2,
        ..Machine::default()
    }
}

/// A new store in `dir` with a begun study called "sweep".
fn new_store(dir: &Dir) -> (Store, StudyId) {
    let mut s = Store::create_or_open(&dir.join(store::FILE_NAME)).unwrap();
    let id = s
        .begin_study("sweep", "a test sweep", "name = \"sweep\"\n", &machine())
        .unwrap();
    (s, id)
}

fn rows(points: &[StoredPoint]) -> Vec<&PointRow> {
    points.iter().map(|p| &p.row).collect()
}

#[test]
fn committed_points_come_back_exactly_after_reopening() {
    util::assert_valid_run_json(&run_doc(100.0, 2100.0, 3, "time"));
    let dir = Dir::new();
    let (mut s, study) = new_store(&dir);
    let committed = vec![
        finished("c1-r1", 1, 1, 100.0),
        skipped("c64-r1", 64, 1, "stopped: below 20 % of peak"),
        failed("c8-r1", 8, 1, "server did not start: port in use"),
    ];
    for p in &committed {
        s.commit_point(study, p).unwrap();
    }
    drop(s);

    let s = Store::open_existing(&dir.join(store::FILE_NAME)).unwrap();
    let points = s.points(Some(study)).unwrap();
    assert_eq!(rows(&points), committed.iter().collect::<Vec<_>>());
    assert_eq!(points, s.points(None).unwrap());
    // The light read has everything but documents, histograms and settings.
    let light = s.point_figures(Some(study)).unwrap();
    for (l, p) in light.iter().zip(&points) {
        assert_eq!(
            (l.row.run.as_ref(), l.row.histogram_names().len()),
            (None, 0)
        );
        assert!(l.row.settings.is_empty());
        let mut p = p.clone();
        p.row.run = None;
        p.row.settings.clear();
        assert_eq!(*l, p);
    }

    let f = &points[0];
    assert_eq!(f.study_name, "sweep");
    let m = f.metrics.as_ref().expect("a finished point has metrics");
    assert_eq!(m.tps, 100.0);
    assert_eq!(m.qps, 2000.0);
    assert_eq!(m.transactions, 1000);
    assert_eq!((m.reads, m.writes, m.others), (14000, 4000, 2000));
    assert_eq!(m.lat_p95_us, Some(2100.0));
    assert_eq!((m.lat_min_us, m.lat_max_us), (Some(100.0), Some(25000.0)));
    assert_eq!(m.errors, 3);
    assert_eq!(m.client_cpu_s, 1.75);
    assert_eq!(m.server_version, "SQLite 3.46.0");
    assert_eq!(m.stop_reason, "time");
    assert_eq!(m.seed, 18_000_000_000_000_000_042);
    let seed: String = s
        .connection()
        .query_row("SELECT seed FROM point WHERE id = ?1", [f.id], |r| r.get(0))
        .unwrap();
    assert_eq!(seed, "18000000000000000042");
    // The read-back metrics are exactly what extraction gives.
    let x = store::extract(committed[0].run.as_ref().unwrap());
    assert_eq!(&x.metrics, m);
    assert_eq!(f.errors_of("deadlock"), 3);

    // Not finished: no figures at all, not zeros.
    for p in &points[1..] {
        assert_eq!(p.metrics, None);
        assert!(p.errors.is_empty());
    }
    let nulls: i64 = s
        .connection()
        .query_row(
            "SELECT count(*) FROM point WHERE status <> 'finished' AND tps IS NULL AND qps IS NULL
               AND lat_p95_us IS NULL AND transactions IS NULL AND result_json IS NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(nulls, 2);

    assert_eq!(
        s.finished_keys(study).unwrap(),
        HashSet::from(["c1-r1".to_string(), "c64-r1".to_string()])
    );
    let studies = s.studies().unwrap();
    assert_eq!(studies.len(), 1);
    assert_eq!(studies[0].name, "sweep");
    assert_eq!(studies[0].description, "a test sweep");
    assert_eq!(studies[0].machine, serde_json::to_value(machine()).unwrap());
    assert_eq!(studies[0].tool_version, env!("CARGO_PKG_VERSION"));
    assert_eq!(s.find_study("sweep").unwrap(), Some(study));
    assert_eq!(s.find_study("other").unwrap(), None);
}

#[test]
fn errors_intervals_histograms_and_settings_are_stored() {
    let dir = Dir::new();
    let (mut s, study) = new_store(&dir);
    let p = finished("c4-r1", 4, 1, 250.0);
    s.commit_point(study, &p).unwrap();
    let c = s.connection();

    let errors: Vec<(String, i64)> = c
        .prepare("SELECT kind, count FROM point_error ORDER BY kind")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        errors,
        [
            ("connection_lost".into(), 0),
            ("deadlock".into(), 3),
            ("duplicate_key".into(), 0),
            ("lock_timeout".into(), 0),
            ("other".into(), 0),
            ("serialization".into(), 0),
            ("timeout".into(), 0),
        ]
    );

    type IntervalRow = (i64, f64, bool, i64, i64, Option<f64>, Option<f64>);
    let intervals: Vec<IntervalRow> = c
        .prepare(
            "SELECT seq, t_s, warmup, transactions, errors, p95_us, max_us
             FROM point_interval ORDER BY seq",
        )
        .unwrap()
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        intervals,
        [
            (0, 1.0, true, 90, 0, None, Some(9000.0)),
            (1, 2.0, false, 100, 3, Some(2250.0), Some(25000.0)),
        ]
    );

    // An interval's histogram keeps its buckets as compact text.
    let interval: String = c
        .query_row(
            "SELECT interval_json FROM point_interval WHERE seq = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        interval.contains(r#""histogram":{"count":3,"min":5000,"max":25000000,"sum":25010005,"buckets":"5000,1,6245149"}"#),
        "{interval}"
    );

    // Histograms round-trip equal, through SQL and through the API.
    let json: String = c
        .query_row(
            "SELECT histogram_json FROM point_histogram WHERE name = 'transaction'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let back: Histogram = serde_json::from_str(&json).unwrap();
    assert_eq!(back, p.histogram("transaction").unwrap());
    let stored = &s.points(Some(study)).unwrap()[0];
    assert_eq!(stored.row.run, p.run);

    let settings: Vec<(String, String)> = c
        .prepare("SELECT name, value FROM point_setting ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(settings, p.settings);

    let (variant, target): (String, String) = c
        .query_row(
            "SELECT v.settings_json, t.kind || ' ' || t.url_redacted
             FROM variant v JOIN target t ON t.study_id = v.study_id AND t.name = v.target",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(variant, r#"{"journal_mode":"wal","synchronous":"1"}"#);
    assert_eq!(target, "sqlite sqlite:///tmp/t.db");
}

/// Set in the child process of the SIGKILL test: the database to commit to.
const CHILD_ENV: &str = "DBSWEEP_STORE_TEST_CHILD_DB";

#[test]
fn a_committed_point_survives_sigkill() {
    if let Some(path) = std::env::var_os(CHILD_ENV) {
        // Child: commit one point, leave a transaction open, and die
        // without any cleanup (no drop, no checkpoint).
        let mut s = Store::create_or_open(Path::new(&path)).unwrap();
        let study = s.begin_study("sweep", "", "", &machine()).unwrap();
        s.commit_point(study, &finished("c2-r1", 2, 1, 123.5))
            .unwrap();
        s.connection()
            .execute_batch(
                "BEGIN IMMEDIATE;
                 INSERT INTO study (name, description, file_text, started_unix_s, tool_version, machine_json)
                 VALUES ('half-written', '', '', 0, '', '{}');",
            )
            .unwrap();
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
        unreachable!("SIGKILL returned");
    }

    let dir = Dir::new();
    let path = dir.join(store::FILE_NAME);
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "a_committed_point_survives_sigkill",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, &path)
        .output()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGKILL),
        "the child did not reach its SIGKILL: {:?}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    let s = Store::open_existing(&path).unwrap();
    let study = s.find_study("sweep").unwrap().expect("the study survived");
    let points = s.points(Some(study)).unwrap();
    assert_eq!(points.len(), 1);
    assert_eq!(points[0].row, finished("c2-r1", 2, 1, 123.5));
    assert_eq!(points[0].metrics.as_ref().unwrap().tps, 123.5);
    assert_eq!(s.find_study("half-written").unwrap(), None);
    assert_eq!(
        s.finished_keys(study).unwrap(),
        HashSet::from(["c2-r1".to_string()])
    );
}

#[test]
fn the_file_is_wal_with_full_sync_and_versioned() {
    let dir = Dir::new();
    let (s, _) = new_store(&dir);
    let c = s.connection();
    let mode: String = c
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let sync: i64 = c
        .pragma_query_value(None, "synchronous", |r| r.get(0))
        .unwrap();
    assert_eq!(sync, 2, "synchronous=FULL");
    let version: i64 = c
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, store::SCHEMA_VERSION);
    let app: i32 = c
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .unwrap();
    assert_eq!(app, store::APPLICATION_ID);
}

#[test]
fn summaries_of_literal_repeats() {
    let dir = Dir::new();
    let (mut s, study) = new_store(&dir);
    for (r, tps) in [(1, 100.0), (2, 110.0), (3, 120.0)] {
        s.commit_point(study, &finished(&format!("c4-r{r}"), 4, r, tps))
            .unwrap();
    }
    s.commit_point(study, &skipped("c4-r4", 4, 4, "time budget spent"))
        .unwrap();
    s.commit_point(study, &finished("c8-r1", 8, 1, 300.0))
        .unwrap();
    for r in 1..=2 {
        let reason = "stopped: below 20 % of peak";
        s.commit_point(study, &skipped(&format!("c16-r{r}"), 16, r, reason))
            .unwrap();
    }

    let sums = s.summaries(study).unwrap();
    assert_eq!(sums.len(), 3);

    let four = &sums[0];
    assert_eq!(four.group.clients, 4);
    assert_eq!((four.finished, four.skipped, four.failed), (3, 1, 0));
    assert_eq!(four.reasons, ["skipped: time budget spent"]);
    let tps = four.tps.as_ref().unwrap();
    assert_eq!(
        (tps.n, tps.mean, tps.min, tps.max),
        (3, 110.0, 100.0, 120.0)
    );
    assert!((tps.stddev.unwrap() - 10.0).abs() < 1e-9);
    // t(0.975, 2) = 4.302653; 4.302653 · 10 / sqrt(3) = 24.841379
    assert!((tps.ci95.unwrap() - 24.841379).abs() < 1e-6, "{tps:?}");
    let qps = four.qps.as_ref().unwrap();
    assert_eq!(qps.mean, 2200.0);
    let p95 = four.lat_p95_us.as_ref().unwrap();
    assert_eq!((p95.mean, p95.min, p95.max), (2110.0, 2100.0, 2120.0));

    let eight = &sums[1];
    let tps = eight.tps.as_ref().unwrap();
    assert_eq!(
        (tps.n, tps.mean, tps.stddev, tps.ci95),
        (1, 300.0, None, None)
    );

    // All repeats skipped: nothing to average, the reason instead.
    let sixteen = &sums[2];
    assert_eq!((sixteen.finished, sixteen.skipped), (0, 2));
    assert_eq!(sixteen.tps, None);
    assert_eq!(sixteen.reasons, ["skipped: stopped: below 20 % of peak"]);

    // The SQL view agrees (and gives the variance, not the stddev).
    type ViewRow = (
        i64,
        i64,
        i64,
        Option<f64>,
        Option<f64>,
        Option<f64>,
        Option<f64>,
    );
    let view: Vec<ViewRow> = s
        .connection()
        .prepare(
            "SELECT clients, n, skipped, tps_avg, tps_min, tps_max, tps_variance
             FROM point_summary WHERE study_id = ?1",
        )
        .unwrap()
        .query_map([study.0], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        view,
        [
            (4, 3, 1, Some(110.0), Some(100.0), Some(120.0), Some(100.0)),
            (8, 1, 0, Some(300.0), Some(300.0), Some(300.0), None),
            (16, 0, 2, None, None, None, None),
        ]
    );
}

#[test]
fn repeats_group_by_every_plan_dimension_but_repeat() {
    let dir = Dir::new();
    let (mut s, study) = new_store(&dir);
    let base = finished("base", 4, 1, 100.0);
    let mut label = finished("label", 4, 1, 100.0);
    label.workload_label = "special".into();
    let mut options = finished("options", 4, 1, 100.0);
    options.workload_options = vec![("table-size".into(), "99".into())];
    let mut cpus = finished("cpus", 4, 1, 100.0);
    cpus.cpus = None;
    let mut instances = finished("instances", 4, 1, 100.0);
    instances.instances = 8;
    let repeat = finished("repeat", 4, 2, 200.0);
    for p in [&base, &label, &options, &cpus, &instances, &repeat] {
        s.commit_point(study, p).unwrap();
    }
    let sums = s.summaries(study).unwrap();
    let sizes: Vec<usize> = sums.iter().map(|s| s.finished).collect();
    assert_eq!(sizes, [2, 1, 1, 1, 1]);
    assert_eq!(sums[0].tps.as_ref().unwrap().mean, 150.0);
    assert_eq!(sums[1].group.workload_label, "special");
    let view: Vec<i64> = s
        .connection()
        .prepare("SELECT n FROM point_summary")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(view, [2, 1, 1, 1, 1]);
}

#[test]
fn a_newer_file_is_refused_untouched() {
    let dir = Dir::new();
    let path = dir.join(store::FILE_NAME);
    drop(new_store(&dir));
    let c = rusqlite::Connection::open(&path).unwrap();
    c.pragma_update(None, "user_version", 99).unwrap();
    drop(c);

    for e in [
        Store::open_existing(&path).err().unwrap(),
        Store::create_or_open(&path).err().unwrap(),
    ] {
        let msg = e.to_string();
        assert!(e.downcast_ref::<UsageError>().is_some(), "{msg}");
        assert!(msg.contains("version 99"), "{msg}");
        assert!(msg.contains("newer than this dbsweep"), "{msg}");
        assert!(
            msg.contains(&format!("up to version {}", store::SCHEMA_VERSION)),
            "{msg}"
        );
    }
    let c = rusqlite::Connection::open(&path).unwrap();
    let v: i64 = c
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, 99);
}

#[test]
fn missing_and_foreign_files_are_usage_errors() {
    let dir = Dir::new();
    let missing = dir.join("results.db");
    let e = Store::open_existing(&missing).err().unwrap();
    assert!(e.downcast_ref::<UsageError>().is_some());
    assert!(e.to_string().contains("no results database at"), "{e}");
    assert!(!missing.exists(), "open_existing created a file");

    let foreign = dir.join("app.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE users (id INTEGER)")
        .unwrap();
    let e = Store::create_or_open(&foreign).err().unwrap();
    assert!(e.downcast_ref::<UsageError>().is_some());
    assert!(
        e.to_string().contains("not a dbsweep results database"),
        "{e}"
    );

    let text = dir.join("notes.txt");
    std::fs::write(&text, "x".repeat(4096)).unwrap();
    let e = Store::open_existing(&text).err().unwrap();
    assert!(
        e.to_string().contains("not a dbsweep results database"),
        "{e}"
    );

    assert_eq!(
        store::resolve_path(dir.path()),
        dir.path().join(store::FILE_NAME)
    );
    assert_eq!(store::resolve_path(&text), text);
}

#[test]
fn resume_appends_to_the_same_study_and_never_repeats_a_done_point() {
    let dir = Dir::new();
    let path = dir.join(store::FILE_NAME);
    let (mut s, study) = new_store(&dir);
    s.commit_point(study, &finished("c1-r1", 1, 1, 100.0))
        .unwrap();
    s.commit_point(study, &failed("c2-r1", 2, 1, "aborted: connection lost"))
        .unwrap();
    drop(s);

    // A later process resumes the study by name.
    let mut s = Store::create_or_open(&path).unwrap();
    let again = s
        .begin_study("sweep", "edited", "name = \"sweep\" # v2\n", &machine())
        .unwrap();
    assert_eq!(again, study);
    let done = s.finished_keys(study).unwrap();
    assert_eq!(done, HashSet::from(["c1-r1".to_string()]));

    // The failed point is attempted again; the finished one is refused.
    s.commit_point(study, &finished("c2-r1", 2, 1, 180.0))
        .unwrap();
    let e = s
        .commit_point(study, &finished("c1-r1", 1, 1, 101.0))
        .unwrap_err();
    assert!(e.to_string().contains("already stored as finished"), "{e}");
    let e = s
        .commit_point(study, &skipped("c2-r1", 2, 1, "late"))
        .unwrap_err();
    assert!(e.to_string().contains("already stored as finished"), "{e}");

    let points = s.points(Some(study)).unwrap();
    let summary: Vec<(&str, PointStatus)> = points
        .iter()
        .map(|p| (p.row.key.as_str(), p.row.status))
        .collect();
    assert_eq!(
        summary,
        [
            ("c1-r1", PointStatus::Finished),
            ("c2-r1", PointStatus::Failed),
            ("c2-r1", PointStatus::Finished),
        ]
    );

    let info = &s.studies().unwrap()[0];
    assert_eq!(
        (info.sessions, info.description.as_str()),
        (2, "a test sweep")
    );
    let sessions: Vec<(i64, String)> = s
        .connection()
        .prepare("SELECT p.session_id, x.file_text FROM point p JOIN session x ON x.id = p.session_id ORDER BY p.id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(sessions[0].0, sessions[1].0);
    assert_ne!(sessions[1].0, sessions[2].0);
    assert_eq!(sessions[2].1, "name = \"sweep\" # v2\n");

    // Another study in the same file has its own keys.
    let other = s.begin_study("other", "", "", &machine()).unwrap();
    assert_ne!(other, study);
    s.commit_point(other, &finished("c1-r1", 1, 1, 100.0))
        .unwrap();
    assert_eq!(s.points(Some(other)).unwrap().len(), 1);
    assert_eq!(s.points(None).unwrap().len(), 4);
}

#[test]
fn refused_points_leave_nothing_behind() {
    let dir = Dir::new();
    let (mut s, study) = new_store(&dir);
    s.commit_point(study, &finished("ok", 1, 1, 100.0)).unwrap();

    let mut no_doc = finished("a", 1, 2, 100.0);
    no_doc.run = None;
    let mut no_reason = skipped("b", 1, 3, "x");
    no_reason.reason = None;
    let mut finished_with_reason = finished("c", 1, 4, 100.0);
    finished_with_reason.reason = Some("why".into());
    let mut interrupted = finished("d", 1, 5, 100.0);
    interrupted.run = Some(with_histograms(
        run_doc(100.0, 2100.0, 0, "interrupted"),
        &[],
    ));
    let mut other_settings = finished("f", 1, 7, 100.0);
    other_settings.variant_settings[1].1 = "2".into();
    let mut other_kind = finished("g", 1, 8, 100.0);
    other_kind.target_kind = "postgres".into();
    let mut skipped_with_run = finished("h", 1, 9, 100.0);
    skipped_with_run.status = PointStatus::Skipped;
    skipped_with_run.reason = Some("x".into());
    let mut twice = finished("i", 1, 10, 100.0);
    let hs = twice
        .run
        .as_mut()
        .unwrap()
        .result
        .histograms
        .as_mut()
        .unwrap();
    hs.statements
        .0
        .push(("transaction".into(), hs.transaction.clone()));

    for (p, expected) in [
        (no_doc, "has no run document"),
        (no_reason, "without a reason"),
        (finished_with_reason, "has a reason"),
        (interrupted, "was interrupted"),
        (other_settings, "is stored with settings"),
        (other_kind, "is stored as a sqlite target"),
        (skipped_with_run, "never ran"),
        (twice, "two histograms called 'transaction'"),
    ] {
        let e = s.commit_point(study, &p).unwrap_err();
        assert!(format!("{e:#}").contains(expected), "{}: {e:#}", p.key);
    }
    let c = s.connection();
    for table in [
        "point",
        "point_error",
        "point_interval",
        "point_histogram",
        "point_setting",
    ] {
        let n: i64 = c
            .query_row(
                &format!(
                    "SELECT count(DISTINCT {}) FROM {table}",
                    if table == "point" { "id" } else { "point_id" }
                ),
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 1, "{table}");
    }

    let mut unbegun = Store::create_or_open(&dir.join("other.db")).unwrap();
    let e = unbegun
        .commit_point(study, &finished("x", 1, 1, 1.0))
        .unwrap_err();
    assert!(e.to_string().contains("without begin_study"), "{e}");
}

/// A stored run document that lost a figure (edited by hand, say) is
/// refused when read, naming the figure: nothing is made up.
#[test]
fn a_damaged_stored_document_is_refused_naming_the_figure() {
    let dir = Dir::new();
    let (mut s, study) = new_store(&dir);
    s.commit_point(study, &finished("ok", 1, 1, 100.0)).unwrap();
    s.connection()
        .execute(
            "UPDATE point SET result_json = json_remove(result_json, '$.result.qps')",
            [],
        )
        .unwrap();
    let e = s.points(Some(study)).unwrap_err();
    assert!(format!("{e:#}").contains("qps"), "{e:#}");
}

#[test]
fn passwords_never_reach_the_file() {
    let dir = Dir::new();
    let (mut s, study) = new_store(&dir);
    let mut p = finished("pg", 1, 1, 100.0);
    p.target = "pg".into();
    p.target_kind = "postgres".into();
    p.target_url = "postgres://sbtest:s3cret@127.0.0.1:5433/sbtest".into();
    s.commit_point(study, &p).unwrap();
    drop(s);
    let bytes = std::fs::read(dir.join(store::FILE_NAME)).unwrap();
    let wal = std::fs::read(dir.join("results.db-wal")).unwrap_or_default();
    let hay = [bytes, wal].concat();
    assert!(!hay.windows(6).any(|w| w == b"s3cret"));
    let s = Store::open_existing(&dir.join(store::FILE_NAME)).unwrap();
    assert_eq!(
        s.points(None).unwrap()[0].row.target_url,
        "postgres://sbtest@127.0.0.1:5433/sbtest"
    );
}

#[test]
fn csv_has_a_header_every_column_and_rfc4180_quoting() {
    let dir = Dir::new();
    let (mut s, study) = new_store(&dir);
    s.commit_point(study, &finished("c1-r1", 1, 1, 100.0))
        .unwrap();
    s.commit_point(
        study,
        &skipped("c2-r1", 2, 1, "stopped: below 20 % of peak, \"tps\""),
    )
    .unwrap();
    let points = s.points(Some(study)).unwrap();
    let csv = results_csv(&points);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "study,key,target,target_kind,variant,cpus,workload,workload_label,workload_options_json,clients,\
         instances,repeat,status,reason,committed_unix_s,started_unix_s,seed,stop_reason,measured_s,\
         transactions,tps,qps,reads,writes,others,failed_transactions,retries,ignored_errors,\
         errors,errors_deadlock,errors_lock_timeout,errors_serialization,errors_duplicate_key,\
         errors_connection_lost,errors_other,errors_timeout,reconnects,abandoned,lat_min_us,lat_avg_us,\
         lat_p50_us,lat_p95_us,lat_p99_us,lat_max_us,client_cpu_s,server_version"
    );
    assert_eq!(lines.len(), 3);
    let header: Vec<&str> = lines[0].split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();

    // JSON options are quoted (they contain quotes), quotes doubled.
    assert!(
        lines[1].starts_with(
            "sweep,c1-r1,lite,sqlite,wal,0-1,oltp_read_write,oltp_read_write,\"{\"\"table-size\"\":\"\"1000\"\"}\",1,1,1,finished,,"
        ),
        "{}",
        lines[1]
    );
    assert!(lines[1].ends_with(
        ",1000,100,2000,14000,4000,2000,0,3,3,3,3,0,0,0,0,0,0,0,0,100,900.5,800,2100,5000,25000,1.75,SQLite 3.46.0"
    ), "{}", lines[1]);
    assert!(
        lines[2].contains(",skipped,\"stopped: below 20 % of peak, \"\"tps\"\"\","),
        "{}",
        lines[2]
    );
    // A skipped point has empty figures, never zeros: every field after
    // committed_unix_s is empty.
    let figures = header.len() - 1 - col("committed_unix_s");
    assert!(
        lines[2].ends_with(&format!(
            ",{}{}",
            points[1].committed_unix_s,
            ",".repeat(figures)
        )),
        "{}",
        lines[2]
    );
}

#[test]
fn the_table_shows_skipped_points_with_their_reason_and_no_zero() {
    let dir = Dir::new();
    let (mut s, study) = new_store(&dir);
    for (r, tps) in [(1, 100.0), (2, 110.0), (3, 120.0)] {
        s.commit_point(study, &finished(&format!("c4-r{r}"), 4, r, tps))
            .unwrap();
    }
    s.commit_point(
        study,
        &skipped("c64-r1", 64, 1, "stopped: below 20 % of peak"),
    )
    .unwrap();
    s.commit_point(study, &failed("c8-r1", 8, 1, "server did not start"))
        .unwrap();
    let points = s.points(Some(study)).unwrap();
    let table = results_table(&points, &s.summaries(study).unwrap());
    println!("{table}");

    let skipped_line = table
        .lines()
        .find(|l| l.contains("skipped: stopped: below 20 % of peak") && l.contains(" 64 "))
        .unwrap_or_else(|| panic!("no skipped line in\n{table}"));
    assert!(!skipped_line.contains("0.00"), "{skipped_line}");
    assert!(skipped_line.contains(" - "), "{skipped_line}");
    assert!(table.contains("failed: server did not start"), "{table}");
    let first = table.lines().nth(2).unwrap();
    assert!(
        first.contains("100.00") && first.contains("2000.00"),
        "{first}"
    );
    assert!(first.contains("2.10"), "p95 in ms: {first}"); // 2100 µs
    let summary = table
        .lines()
        .skip_while(|l| !l.starts_with("Summaries"))
        .find(|l| l.contains("oltp_read_write") && l.contains("110.00"))
        .unwrap_or_else(|| panic!("no summary line in\n{table}"));
    assert!(
        summary.contains("24.84") && summary.contains("10.00"),
        "{summary}"
    );
}

/// A real run's document (from the `dbsweep` binary) commits, and the
/// columns equal its fields.
#[test]
fn a_real_run_document_commits() {
    let dir = Dir::new();
    let json = dir.join("run.json");
    util::dbsweep_in(
        dir.path(),
        &[
            "run",
            "oltp_read_write",
            "--table-size",
            "100",
            "--time",
            "1",
            "--report-interval",
            "1",
            "--percentiles",
            "50,99",
            "--json",
            json.to_str().unwrap(),
        ],
    )
    .ok();
    let doc = util::read_json(&json);
    let (mut s, study) = new_store(&dir);
    let mut p = finished("real", 1, 1, 0.0);
    // No transaction histogram: p95 is not in the document.
    p.run = Some(with_histograms(doc.clone(), &[]));
    s.commit_point(study, &p).unwrap();
    let stored = &s.points(Some(study)).unwrap()[0];
    let m = stored.metrics.as_ref().unwrap();
    let r = &doc["result"];
    assert_eq!(m.tps, r["tps"].as_f64().unwrap());
    assert_eq!(m.qps, r["qps"].as_f64().unwrap());
    assert_eq!(m.transactions, r["transactions"].as_u64().unwrap());
    assert_eq!(m.reads, r["queries"]["read"].as_u64().unwrap());
    assert_eq!(m.lat_max_us, r["latency"]["max_us"].as_f64());
    assert_eq!(m.lat_p50_us, r["latency"]["percentiles"][0]["us"].as_f64());
    assert_eq!(
        m.lat_p95_us, None,
        "not in the document, no histogram: NULL"
    );
    assert_eq!(
        m.server_version,
        doc["target"]["server_version"].as_str().unwrap()
    );
    let n: i64 = s
        .connection()
        .query_row("SELECT count(*) FROM point_interval", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n as usize, r["intervals"].as_array().unwrap().len());
    assert!(n >= 1);
    // The machine's figures are copied from the run's metrics; SQLite has
    // no server process, so its figures are NULL, as in the document.
    let fig = |name: &str| r["metrics"]["figures"][name]["value"].as_f64();
    assert!(fig("cpu_busy_pct").is_some(), "{}", r["metrics"]);
    assert_eq!(m.cpu_busy_pct, fig("cpu_busy_pct"));
    assert_eq!(m.cpu_user_pct, fig("cpu_user_pct"));
    assert_eq!(m.client_cpu_pct, fig("client_cpu_pct"));
    assert_eq!(m.server_cpu_us_per_txn, None);
    assert_eq!(m.deadlocks_per_s, None);
}

/// A file of version 1 whose points carry metrics in their documents (as
/// builds between metrics and schema version 2 wrote) gets the figures'
/// columns filled from those documents when it is upgraded.
#[test]
fn upgrading_a_version_1_file_fills_the_figures_from_the_documents() {
    let dir = Dir::new();
    let json = dir.join("run.json");
    util::dbsweep_in(
        dir.path(),
        &[
            "run",
            "oltp_point_select",
            "--table-size",
            "100",
            "--time",
            "1",
            "--json",
            json.to_str().unwrap(),
        ],
    )
    .ok();
    let doc = util::read_json(&json);
    let busy = doc["result"]["metrics"]["figures"]["cpu_busy_pct"]["value"]
        .as_f64()
        .expect("a measured machine");
    let path = dir.join(store::FILE_NAME);
    {
        let (mut s, study) = new_store(&dir);
        let mut p = finished("real", 1, 1, 0.0);
        p.run = Some(with_histograms(doc.clone(), &[]));
        s.commit_point(study, &p).unwrap();
    }
    // Back to version 1: the columns versions 2, 3 and 8 added are dropped
    // (the summary view, which version 3 recreates, first).
    let c = rusqlite::Connection::open(&path).unwrap();
    c.execute_batch("DROP VIEW point_summary").unwrap();
    let added: Vec<String> = {
        let mut st = c
            .prepare("SELECT name FROM pragma_table_info('point') WHERE cid > 40")
            .unwrap();
        st.query_map([], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    };
    assert_eq!(added.len(), 12 + 7 + 4, "{added:?}");
    for col in &added {
        c.execute_batch(&format!("ALTER TABLE point DROP COLUMN {col}"))
            .unwrap();
    }
    c.execute_batch(
        "CREATE VIEW point_summary AS SELECT 1; DROP TABLE reference; DROP TABLE reproduction; DROP TABLE design;
         DROP TABLE server_build; DROP TABLE point_sample; DROP TABLE point_profile;
         ALTER TABLE point_interval DROP COLUMN interval_json",
    )
    .unwrap();
    c.pragma_update(None, "user_version", 1).unwrap();
    drop(c);
    let s = Store::open_existing(&path).unwrap();
    let p = &s.points(None).unwrap()[0];
    let m = p.metrics.as_ref().unwrap();
    assert_eq!(m.cpu_busy_pct, Some(busy));
    // When and where it ran, from the document.
    let released = doc["released_unix_us"].as_u64().unwrap();
    assert_eq!(m.started_unix_us, Some(released));
    let window =
        doc["run"]["warmup_s"].as_f64().unwrap() + doc["result"]["measured_s"].as_f64().unwrap();
    let ended = m.ended_unix_us.unwrap() as f64;
    assert!(
        (ended - (released as f64 + window * 1e6)).abs() <= 1.0,
        "{ended}"
    );
    let cpu = doc["machine"]["cpu_model"].as_str().unwrap();
    assert!(
        m.machine.starts_with(cpu) && m.machine.contains(" CPUs; "),
        "{}",
        m.machine
    );
    assert_eq!(p.row.restart_s, None);
    // A closed-loop run: no level, no pacing figures.
    assert_eq!(p.row.load_level, None);
    assert_eq!(p.metrics.as_ref().unwrap().offered_per_s, None);
    let version: i64 = s
        .connection()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, dbsweep::store::SCHEMA_VERSION);
    // The summary view is version 3's, grouping by the level.
    let n: i64 = s
        .connection()
        .query_row(
            "SELECT count(*) FROM point_summary WHERE load_level IS NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 1);
}

/// A paced run's document committed before version 3 (the columns empty)
/// has its pacing figures filled from the document by the upgrade.
#[test]
fn upgrading_a_version_2_file_fills_the_pacing_figures() {
    let dir = Dir::new();
    let json = dir.join("run.json");
    util::dbsweep_in(
        dir.path(),
        &[
            "run",
            "oltp_point_select",
            "--table-size",
            "100",
            "--time",
            "1",
            "--rate",
            "200",
            "--json",
            json.to_str().unwrap(),
        ],
    )
    .ok();
    let doc = util::read_json(&json);
    let pacing = doc["result"]["pacing"].clone();
    let lag_p99 = pacing["lag"]["percentiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["p"] == 99.0)
        .unwrap()["us"]
        .as_f64()
        .unwrap();
    let path = dir.join(store::FILE_NAME);
    {
        let (mut s, study) = new_store(&dir);
        let mut p = finished("paced", 1, 1, 0.0);
        p.run = Some(with_histograms(doc, &[]));
        s.commit_point(study, &p).unwrap();
    }
    // Back to version 2: the columns version 3 added are dropped (the
    // summary view, which version 3 recreates, first).
    let c = rusqlite::Connection::open(&path).unwrap();
    c.execute_batch("DROP VIEW point_summary").unwrap();
    for col in [
        "load_level",
        "offered_per_s",
        "achieved_per_s",
        "late",
        "skipped",
        "unstarted",
        "lag_p99_us",
        "started_unix_us",
        "ended_unix_us",
        "machine",
        "restart_s",
    ] {
        c.execute_batch(&format!("ALTER TABLE point DROP COLUMN {col}"))
            .unwrap();
    }
    c.execute_batch(
        "CREATE VIEW point_summary AS SELECT 1; DROP TABLE reference; DROP TABLE reproduction; DROP TABLE design;
         DROP TABLE server_build; DROP TABLE point_sample; DROP TABLE point_profile;
         ALTER TABLE point_interval DROP COLUMN interval_json",
    )
    .unwrap();
    c.pragma_update(None, "user_version", 2).unwrap();
    drop(c);
    let s = Store::open_existing(&path).unwrap();
    let m = s.points(None).unwrap()[0].metrics.clone().unwrap();
    assert_eq!(m.offered_per_s, pacing["offered_per_s"].as_f64());
    assert_eq!(m.achieved_per_s, pacing["achieved_per_s"].as_f64());
    assert_eq!(m.unstarted, pacing["unstarted"].as_u64());
    assert_eq!(m.lag_p99_us, Some(lag_p99));
}
