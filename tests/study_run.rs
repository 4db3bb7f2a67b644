//! `dbsweep study` end to end: every point committed as it ends, resume
//! after Ctrl-C without losing or repeating a point, stop rules that store
//! skipped points with their reason, variants that restart a managed server
//! with their settings, and bad study files rejected before anything runs.

mod util;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use util::{dbsweep_in, Dir};

fn write(dir: &Dir, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// (key, status, reason, tps) of every stored point, in commit order.
fn points(dir: &Dir, out: &str) -> Vec<(String, String, Option<String>, Option<f64>)> {
    let path = dir.join(out).join("results.db");
    let conn = rusqlite::Connection::open(path).unwrap();
    // Before the study created its tables there is nothing to read.
    let Ok(mut stmt) = conn.prepare("SELECT key, status, reason, tps FROM point ORDER BY id")
    else {
        return Vec::new();
    };
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    rows
}

const FAKE_STUDY: &str = r#"
name = "fake"
out = "out"
clients = [1, 2, 3]

[[target]]
name = "fake"
url = "fake://?latency=200us"

[[workload]]
name = "oltp_point_select"
time = 0.6
repeats = 2
"#;

#[test]
fn resume_after_ctrl_c_loses_and_repeats_nothing() {
    let dir = Dir::new();
    let file = write(&dir, "fake.toml", FAKE_STUDY);
    let mut child = Command::new(env!("CARGO_BIN_EXE_dbsweep"))
        .args(["study", &file])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once two points are stored (a minute is a hang's bound).
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if dir.join("out").exists() && points(&dir, "out").len() >= 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    let before = points(&dir, "out");
    assert!(before.len() >= 2 && before.len() < 6, "{before:?}");
    assert!(before.iter().all(|p| p.1 == "finished"));

    // Resume: only the missing points run; the stored ones are untouched.
    let r = dbsweep_in(dir.path(), &["study", &file, "--resume"]);
    r.ok();
    let after = points(&dir, "out");
    assert_eq!(after.len(), 6, "{after:?}");
    assert_eq!(&after[..before.len()], &before[..], "stored points changed");
    let mut keys: Vec<_> = after.iter().map(|p| p.0.clone()).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 6, "a point was measured twice");
    assert!(r.stderr.contains("stored earlier"), "{}", r.stderr);

    // Without --resume, a study with results is refused (exit 2).
    let r = dbsweep_in(dir.path(), &["study", &file]);
    r.expect_status(2);
    assert!(r.stderr.contains("--resume"), "{}", r.stderr);

    // The results command shows them.
    let r = dbsweep_in(dir.path(), &["results", "out"]);
    r.ok();
    assert!(r.stdout.contains("oltp_point_select"));
    let rows = r
        .stdout
        .lines()
        .filter(|l| l.trim_end().ends_with("finished"))
        .count();
    assert_eq!(rows, 6, "{}", r.stdout);
}

#[test]
fn stop_rules_store_skipped_points_with_their_reason() {
    let dir = Dir::new();
    // Throughput collapses from 4 open connections on: the sweep stops there.
    let file = write(
        &dir,
        "collapse.toml",
        r#"
name = "collapse"
out = "out"
clients = [1, 2, 4, 8, 16]

[[target]]
name = "fake"
url = "fake://?latency=300us&collapse_at=4"

[[workload]]
name = "oltp_point_select"
time = 0.5

[stop]
below_peak = 0.5
"#,
    );
    dbsweep_in(dir.path(), &["study", &file]).ok();
    let pts = points(&dir, "out");
    let status: Vec<_> = pts.iter().map(|p| p.1.as_str()).collect();
    assert_eq!(
        status,
        ["finished", "finished", "finished", "skipped", "skipped"],
        "{pts:?}"
    );
    let reason = pts[3].2.as_deref().unwrap();
    assert!(reason.contains("below 50 % of the peak"), "{reason}");
    assert_eq!(pts[3].3, None, "a skipped point has no throughput, never 0");
    // The study ends with its HTML report, which shows why points are missing.
    let html = std::fs::read_to_string(dir.join("out/report.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("below 50 % of the peak"));

    // Failed transactions above the limit stop a sweep too.
    let file = write(
        &dir,
        "failing.toml",
        r#"
name = "failing"
out = "out2"
clients = [1, 2, 4]

[[target]]
name = "fake"
url = "fake://?error_every=3:lock_timeout"

[[workload]]
name = "oltp_point_select"
events = 300
max_retries = 0

[stop]
max_failed_rate = 0.1
"#,
    );
    dbsweep_in(dir.path(), &["study", &file]).ok();
    let pts = points(&dir, "out2");
    let status: Vec<_> = pts.iter().map(|p| p.1.as_str()).collect();
    assert_eq!(status, ["finished", "skipped", "skipped"], "{pts:?}");
    assert!(pts[1].2.as_deref().unwrap().contains("failed"));
}

/// A point that exceeds `point_timeout` is stored as failed, with the run
/// it measured until then, and ends its series; the study goes on with
/// the next series and ends when the timeouts say, not when the points'
/// own time would.
#[test]
fn a_point_over_its_hard_timeout_fails_and_stops_its_series() {
    let dir = Dir::new();
    let file = write(
        &dir,
        "timeout.toml",
        r#"
name = "timeout"
out = "out"
clients = [1, 2, 4]

[[target]]
name = "hangs"
url = "fake://?latency=1ms&hang_after=50"

[[workload]]
name = "oltp_point_select"
time = 600
grace = 0.5

[stop]
point_timeout = "1s"
"#,
    );
    let started = std::time::Instant::now();
    dbsweep_in(dir.path(), &["study", &file]).ok();
    let took = started.elapsed();
    // Ten minutes if the timeout did not hold; a minute is a busy
    // machine's room.
    assert!(
        took < std::time::Duration::from_secs(60),
        "the study took {took:?}: the timeout did not hold"
    );
    let pts = points(&dir, "out");
    let status: Vec<_> = pts.iter().map(|p| p.1.as_str()).collect();
    assert_eq!(status, ["failed", "skipped", "skipped"], "{pts:?}");
    let reason = pts[0].2.as_deref().unwrap();
    assert_eq!(reason, "exceeded its hard timeout of 1s");
    let skipped = pts[1].2.as_deref().unwrap();
    assert!(
        skipped.contains("stopped: a point exceeded its hard timeout"),
        "{skipped}"
    );
    // The failed point keeps what it measured, marked as timed out.
    let store = dbsweep::store::Store::open_existing(&dir.join("out/results.db")).unwrap();
    let stored = store.points(None).unwrap();
    let run = stored[0]
        .row
        .run
        .as_ref()
        .expect("the run's record is kept");
    assert_eq!(run.result.stop_reason, dbsweep::record::StopReason::Timeout);
    assert_eq!(run.run.timeout_s, Some(1.0));
    assert!(run.result.abandoned >= 1, "the hung client was abandoned");
}

#[test]
fn bad_study_files_are_rejected_before_anything_runs() {
    let dir = Dir::new();
    for (name, text, expected) in [
        ("unknown.toml", "bogus = 1\nclients = [1]\n", "bogus"),
        ("type.toml", "clients = \"many\"\n", "clients"),
        ("empty.toml", "clients = []\n", "clients"),
        (
            "workload.toml",
            "clients = [1]\n[[workload]]\nname = \"no_such\"\n",
            "no_such",
        ),
    ] {
        let body = if name == "workload.toml" {
            text.to_string()
        } else {
            format!("{text}[[workload]]\nname = \"oltp_read_only\"\n")
        };
        let file = write(&dir, name, &body);
        let r = dbsweep_in(dir.path(), &["study", &file]);
        r.expect_status(2);
        assert!(
            r.stderr.contains(name) && r.stderr.contains(expected),
            "{}",
            r.stderr
        );
        assert!(
            !dir.join("results").exists(),
            "{name}: something was written"
        );
    }
}

#[test]
fn variants_restart_a_managed_server_with_their_settings() {
    let dir = Dir::new();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = write(
        &dir,
        "maria.toml",
        r#"
name = "maria"
out = "out"
clients = [2]

[[target]]
name = "maria"
server = "mariadb"
dir = "server"
settings = { max_connections = 200 }

[[variant]]
name = "mc321"
settings = { max_connections = 321 }

[[workload]]
name = "oltp_point_select"
options = { table-size = 1000 }
time = 0.5
"#,
    );
    let r = dbsweep_in(dir.path(), &["study", &file]);
    r.ok();
    let conn = rusqlite::Connection::open(dir.join("out/results.db")).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT p.variant, s.value FROM point p JOIN point_setting s ON s.point_id = p.id
             WHERE s.name = 'max_connections' ORDER BY p.id",
        )
        .unwrap();
    let got: Vec<(String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        got,
        [
            ("base".to_string(), "200".to_string()),
            ("mc321".to_string(), "321".to_string())
        ]
    );
    // The server is the study's child process, but its CPU is the server's
    // alone: the client's excludes it, and the two fit in the machine's.
    let mut stmt = conn
        .prepare("SELECT client_cpu_pct, server_cpu_pct, cpu_busy_pct FROM point")
        .unwrap();
    let shares: Vec<(f64, f64, f64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(shares.len(), 2);
    for (client, server, busy) in shares {
        assert!(server > 0.0, "server {server} %");
        assert!(
            client + server <= busy * 1.1 + 2.0,
            "client {client} % + server {server} % > busy {busy} %"
        );
    }
    // The study stopped its server.
    let r = dbsweep_in(dir.path(), &["server", "status", "--dir", "server"]);
    assert!(r.stdout.contains("not running"), "{}", r.stdout);
}

#[test]
fn real_deadlocks_stop_a_sweep() {
    // 8 writers on 10 rows with no retries: deadlocks fail transactions and
    // the failed-transaction rule stops the sweep after its first point.
    let dir = Dir::new();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = write(
        &dir,
        "deadlocks.toml",
        r#"
name = "deadlocks"
out = "out"
clients = [8, 16]

[[target]]
name = "maria"
server = "mariadb"
dir = "server"

[[workload]]
name = "oltp_write_only"
options = { table-size = 10, index-updates = 4, non-index-updates = 4 }
time = 2
max_retries = 0

[stop]
max_failed_rate = 0.001
"#,
    );
    dbsweep_in(dir.path(), &["study", &file]).ok();
    let pts = points(&dir, "out");
    let status: Vec<_> = pts.iter().map(|p| p.1.as_str()).collect();
    assert_eq!(status, ["finished", "skipped"], "{pts:?}");
    assert!(pts[1].2.as_deref().unwrap().contains("failed"), "{pts:?}");
    let conn = rusqlite::Connection::open(dir.join("out/results.db")).unwrap();
    let deadlocks: i64 = conn
        .query_row(
            "SELECT count FROM point_error e JOIN point p ON p.id = e.point_id WHERE e.kind = 'deadlock'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(deadlocks > 0);
}

#[test]
fn instances_run_side_by_side_on_their_own_tables() {
    let dir = Dir::new();
    let file = write(
        &dir,
        "inst.toml",
        r#"
name = "inst"
out = "out"
clients = [2]

[[target]]
name = "lite"
sqlite = "inst.db"

[[workload]]
name = "oltp_point_select"
options = { tables = 2, table-size = 100 }
instances = 3
time = 0.5
"#,
    );
    dbsweep_in(dir.path(), &["study", &file]).ok();
    let db = rusqlite::Connection::open(dir.join("inst.db")).unwrap();
    let tables: Vec<String> = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    // 3 instances × 2 tables: sbtest1..sbtest6.
    assert_eq!(
        tables,
        ["sbtest1", "sbtest2", "sbtest3", "sbtest4", "sbtest5", "sbtest6"]
    );
    let res = rusqlite::Connection::open(dir.join("out/results.db")).unwrap();
    let (instances, threads): (i64, i64) = res
        .query_row(
            "SELECT instances, json_extract(result_json, '$.run.threads') FROM point",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((instances, threads), (3, 6));
    // The report counts connections: 3 instances of 2 clients are 6, in
    // its points, its tables and its sentences.
    let r = dbsweep_in(
        dir.path(),
        &["report", "out", "--format", "json", "--out", "-"],
    );
    let doc: serde_json::Value = serde_json::from_str(&r.ok().stdout).unwrap();
    assert_eq!(doc["points"][0]["clients"], 6, "{}", doc["points"][0]);
    assert_eq!(doc["points"][0]["instances"], 3);
    let md = dbsweep_in(
        dir.path(),
        &["report", "out", "--format", "md", "--out", "-"],
    );
    let md = &md.ok().stdout;
    assert!(md.contains("with 6 clients"), "{md}");
    assert!(!md.contains("with 2 clients"), "{md}");
}

#[test]
fn a_rate_sweep_takes_shares_of_its_calibration_peak_and_concludes() {
    // 2 connections to a server answering in 250 µs: about 8000 a second
    // closed loop. A quarter of it is sustained within a goal (300 ms) no
    // busy machine's timers miss by; four times it is not: its backlog
    // grows for the whole second, three quarters of a second behind by the
    // end, and only longer on a slow machine.
    let dir = Dir::new();
    let file = write(
        &dir,
        "rates.toml",
        r#"
name = "rates"
out = "out"
clients = [2]

[[target]]
name = "fake"
url = "fake://?latency=250us"

[[workload]]
name = "oltp_point_select"
rates = ["25%", "400%"]
p99_goal = "300ms"
time = 1
"#,
    );
    dbsweep_in(dir.path(), &["study", &file]).ok();
    let conn = rusqlite::Connection::open(dir.join("out/results.db")).unwrap();
    let mut stmt = conn
        .prepare("SELECT load_level, tps, offered_per_s, unstarted FROM point ORDER BY id")
        .unwrap();
    type Row = (Option<String>, f64, Option<f64>, Option<i64>);
    let rows: Vec<Row> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let levels: Vec<Option<&str>> = rows.iter().map(|r| r.0.as_deref()).collect();
    assert_eq!(levels, [None, Some("rate=25%"), Some("rate=400%")]);
    let peak = rows[0].1;
    assert!(peak > 1000.0 && rows[0].2.is_none(), "{rows:?}");
    // The shares are of the calibration point's measured throughput.
    let quarter = rows[1].2.unwrap();
    assert!(
        (quarter / (peak * 0.25) - 1.0).abs() < 0.1,
        "{quarter} of {peak}"
    );
    // Achieved: never above what was offered, and most of it (how close
    // to all of it is bench/pacing.py's figure).
    assert!(
        rows[1].1 <= quarter * 1.01 && rows[1].1 >= quarter * 0.5,
        "{rows:?}"
    );
    // Above capacity: a backlog the server never saw, not a crash.
    assert!(
        rows[2].2.unwrap() > peak * 1.3 && rows[2].3.unwrap() > 0,
        "{rows:?}"
    );

    // Whether a quarter of the peak counted as sustained depends on what
    // the run measured: its p99 within the goal, and at most 1 % of the
    // offered load not started — the arrivals of its last moments, which
    // a busy machine's schedule lag leaves waiting when the window closes.
    // The report must say what the stored figures say.
    let level = |k: usize| {
        let conn = rusqlite::Connection::open(dir.join("out/results.db")).unwrap();
        conn.query_row(
            "SELECT lat_p99_us, unstarted, offered_per_s * measured_s FROM point ORDER BY id LIMIT 1 OFFSET ?1",
            [k as i64],
            |r| Ok((r.get::<_, f64>(0)?, r.get::<_, f64>(1)?, r.get::<_, f64>(2)?)),
        )
        .unwrap()
    };
    let (p99_us, unstarted, offered) = level(1);
    let quarter_sustained = p99_us <= 300_000.0 && unstarted <= 0.01 * offered;
    let r = dbsweep_in(dir.path(), &["report", "out", "--format", "text"]);
    r.ok();
    let out = &r.stdout;
    // The sentence names the first level past the sustained one: 400 %
    // after a sustained quarter, else the quarter itself (a busy machine
    // may not keep up even with that).
    if quarter_sustained {
        assert!(
            out.contains("fake sustains at most") && out.contains("(rate=25%, offered"),
            "{out}"
        );
        assert!(out.contains("at rate=400% it reaches p99"), "{out}");
    } else {
        assert!(
            out.contains("fake sustains none of its offered loads"),
            "{out}"
        );
        assert!(out.contains("at rate=25% it "), "{out}");
    }
    assert!(out.contains("with p99 ≤ 300.00 ms"), "{out}");
    assert!(out.contains("latency against achieved rate"), "{out}");
    assert!(out.contains("achieved against offered rate"), "{out}");
    assert!(out.contains("(the study's p99_goal)"), "{out}");
    // The calibration point is the closed-loop panel's; the paced points
    // are not in it.
    assert!(
        out.lines()
            .any(|l| l.starts_with("Clients ") && l.trim_end().ends_with(" 2")),
        "{out}"
    );
    assert!(out.contains("Load levels  rate=25%, rate=400%"), "{out}");
    let closed = out
        .split("Transactions per second by clients")
        .nth(1)
        .and_then(|t| t.split(": offered load").next())
        .unwrap();
    assert!(!closed.contains("rate="), "{closed}");

    // JSON: the offered-load panel, valid against the report's schema.
    let json = dir.join("r.json");
    dbsweep_in(
        dir.path(),
        &["report", "out", "--out", json.to_str().unwrap()],
    )
    .ok();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/report.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let errors: Vec<String> = jsonschema::validator_for(&schema)
        .unwrap()
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let series = &doc["offered"][0]["series"][0];
    let sustained = if quarter_sustained {
        serde_json::json!(0)
    } else {
        serde_json::Value::Null
    };
    assert_eq!(series["sustained"], sustained, "{series}");
    assert_eq!(series["levels"][1]["level"], "rate=400%");
    assert_eq!(doc["points"].as_array().unwrap().len(), 3);
    // CSV: the sustained rate, and the paced points with their level.
    dbsweep_in(dir.path(), &["report", "out", "--format", "csv"]).ok();
    let csv = std::fs::read_to_string(dir.join("out/report.csv")).unwrap();
    assert!(csv.contains("fake / base rate=400%"), "{csv}");
    assert_eq!(
        csv.lines()
            .any(|l| l.starts_with("sustained,") && l.contains("rate=25% with p99 ≤ 300 ms")),
        quarter_sustained,
        "{csv}"
    );
}

#[test]
fn a_password_in_the_study_file_is_not_stored_or_printed() {
    // A server that refuses (nothing listens on port 1): the point fails,
    // and the study's text, the failure and the output are all kept.
    let dir = Dir::new();
    let secret = "S3cretPw9";
    let file = write(
        &dir,
        "secret.toml",
        &format!(
            r#"
name = "secret"
out = "out"
clients = [1]
# The same server as postgres://sec:{secret}@127.0.0.1:1/sbtest

[[target]]
name = "pg"
url = "postgres://sec:{secret}@127.0.0.1:1/sbtest"

[[workload]]
name = "oltp_point_select"
time = 1
"#
        ),
    );
    let r = dbsweep_in(dir.path(), &["study", &file]);
    assert!(!r.stdout.contains(secret), "{}", r.stdout);
    assert!(!r.stderr.contains(secret), "{}", r.stderr);
    // Every byte of the results database (and its WAL, if any).
    let mut stored = 0;
    for entry in std::fs::read_dir(dir.join("out")).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "{} holds the password",
            path.display()
        );
        stored += bytes.len();
    }
    assert!(stored > 0);
    // The text is kept as written otherwise.
    let conn = rusqlite::Connection::open(dir.join("out/results.db")).unwrap();
    let text: String = conn
        .query_row("SELECT file_text FROM study", [], |r| r.get(0))
        .unwrap();
    assert!(
        text.contains("url = \"postgres://sec:***@127.0.0.1:1/sbtest\""),
        "{text}"
    );
    assert!(
        text.contains("# The same server as postgres://sec:***@127.0.0.1:1/sbtest"),
        "{text}"
    );
    let failed: String = conn
        .query_row("SELECT status FROM point", [], |r| r.get(0))
        .unwrap();
    assert_eq!(failed, "failed");
}
