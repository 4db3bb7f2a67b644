//! Every sysbench workload against real MariaDB and PostgreSQL servers that
//! the test starts itself with `dbsweep server start`, plus the failure
//! modes a benchmark meets on real servers: deadlocks, a server that dies
//! mid-run, wrong credentials, closed ports and rejected settings.

mod util;

use std::path::Path;
use std::time::{Duration, Instant};

use util::{dbsweep, process_alive, read_json, Dir, Server};

/// Reads, writes and other queries per transaction.
type Mix = (f64, f64, f64);

/// (workload, extra options, expected mix).
const MIXES: &[(&str, &[&str], Mix)] = &[
    ("oltp_read_write", &[], (14.0, 4.0, 2.0)),
    ("oltp_read_only", &[], (14.0, 0.0, 2.0)),
    ("oltp_write_only", &[], (0.0, 4.0, 2.0)),
    ("oltp_point_select", &[], (1.0, 0.0, 0.0)),
    ("oltp_update_index", &[], (0.0, 1.0, 0.0)),
    ("oltp_update_non_index", &[], (0.0, 1.0, 0.0)),
    ("oltp_insert", &[], (0.0, 1.0, 0.0)),
    ("oltp_simple", &[], (1.0, 1.0, 2.0)),
    ("oltp_simple", &["--skip-trx"], (1.0, 1.0, 0.0)),
    ("select_random_points", &[], (1.0, 0.0, 0.0)),
    ("select_random_ranges", &[], (1.0, 0.0, 0.0)),
    ("bulk_insert", &["--bulk-rows", "50"], (0.0, 1.0, 0.0)),
];

fn mix(doc: &serde_json::Value) -> Mix {
    let r = &doc["result"];
    let t = r["transactions"].as_u64().unwrap() as f64;
    assert!(t > 0.0, "no transactions: {r}");
    let q = &r["queries"];
    let per = |k: &str| q[k].as_u64().unwrap() as f64 / t;
    (per("read"), per("write"), per("other"))
}

/// prepare → run → cleanup of one workload; returns the run's JSON.
fn cycle(
    s: &Server,
    workload: &str,
    opts: &[&str],
    run_opts: &[&str],
    json: &Path,
) -> serde_json::Value {
    let mut common = vec!["--db", s.url.as_str()];
    if workload != "bulk_insert" {
        common.extend_from_slice(&["--table-size", "1000"]);
    }
    common.extend_from_slice(opts);
    let with = |verb: &str, extra: &[&str]| {
        let mut a = vec![verb, workload];
        a.extend_from_slice(&common);
        a.extend_from_slice(extra);
        dbsweep(&a).ok();
    };
    with("prepare", &[]);
    let js = json.display().to_string();
    let mut extra = vec!["--json", js.as_str()];
    extra.extend_from_slice(run_opts);
    with("run", &extra);
    with("cleanup", &[]);
    read_json(json)
}

/// Runs every workload in both statement protocols and checks sysbench's
/// query mix (the same as on SQLite), then provokes deadlocks.
fn workloads_and_deadlocks(kind: &'static str, settings: &[&str]) {
    let s = Server::start(kind, settings);
    let dir = Dir::new();
    for (i, (w, opts, expected)) in MIXES.iter().enumerate() {
        let mode = if i % 2 == 0 { "auto" } else { "disable" };
        let json = dir.join(&format!("{w}-{i}.json"));
        let doc = cycle(
            &s,
            w,
            opts,
            // Two clients can delete and re-insert the same id at once: on
            // PostgreSQL one of them may then hit a duplicate key (as with
            // sysbench). That fails the transaction, not the run.
            &[
                "--events",
                "60",
                "--threads",
                "2",
                "--db-ps-mode",
                mode,
                "--ignore-errors",
                "duplicate_key",
            ],
            &json,
        );
        let r = &doc["result"];
        assert_eq!(r["fatal_error"], serde_json::Value::Null, "{kind} {w}");
        assert_eq!(
            r["transactions"].as_u64().unwrap() + r["failed_transactions"].as_u64().unwrap(),
            60,
            "{kind} {w}"
        );
        if r["retries"] == 0 && r["failed_transactions"] == 0 {
            // Reads and the number of statements per transaction are exact.
            // Two clients may hit the same row (a DELETE of a row the other
            // just deleted and re-inserted affects 0 rows): sysbench's rule
            // counts such a statement as "other", so writes may fall short
            // by a few.
            let (r_, w_, o_) = mix(&doc);
            let (er, ew, eo) = *expected;
            assert_eq!(r_, er, "{kind} {w} ({mode}) reads");
            assert!(
                (r_ + w_ + o_ - (er + ew + eo)).abs() < 1e-9,
                "{kind} {w} ({mode}) total"
            );
            assert!(
                w_ <= ew && w_ >= ew - 0.05 * ew.max(1.0),
                "{kind} {w} ({mode}) writes {w_}"
            );
        }
        assert_eq!(
            doc["target"]["dialect"],
            if kind == "mariadb" {
                "mysql"
            } else {
                "postgres"
            }
        );
        assert!(!doc["target"]["settings"].as_object().unwrap().is_empty());
    }

    // oltp_delete drains: 200 deletes over 100 rows leave fewer rows.
    let json = dir.join("delete.json");
    let url = s.url.as_str();
    dbsweep(&["prepare", "oltp_delete", "--db", url, "--table-size", "100"]).ok();
    dbsweep(&[
        "run",
        "oltp_delete",
        "--db",
        url,
        "--table-size",
        "100",
        "--events",
        "200",
        "--json",
        &json.display().to_string(),
    ])
    .ok();
    let deleted = read_json(&json)["result"]["queries"]["write"]
        .as_u64()
        .unwrap();
    assert!((50..=100).contains(&deleted), "{kind}: deleted {deleted}");
    dbsweep(&["cleanup", "oltp_delete", "--db", url]).ok();

    // Deadlocks on purpose: 8 clients update 10 rows in random order inside
    // transactions. Each deadlock is classified, rolled back and retried.
    let json = dir.join("deadlock.json");
    dbsweep(&[
        "prepare",
        "oltp_write_only",
        "--db",
        url,
        "--table-size",
        "10",
    ])
    .ok();
    let r = dbsweep(&[
        "run",
        "oltp_write_only",
        "--db",
        url,
        "--table-size",
        "10",
        "--threads",
        "8",
        "--time",
        "3",
        "--index-updates",
        "4",
        "--non-index-updates",
        "4",
        "--json",
        &json.display().to_string(),
    ]);
    r.ok();
    let doc = read_json(&json);
    let res = &doc["result"];
    let deadlocks = res["errors"]["deadlock"].as_u64().unwrap();
    assert!(deadlocks > 0, "{kind}: no deadlock in\n{}", r.stdout);
    assert!(res["retries"].as_u64().unwrap() >= deadlocks);
    assert_eq!(res["failed_transactions"], 0);
    assert_eq!(res["fatal_error"], serde_json::Value::Null);
    assert!(r.stdout.contains("deadlock:"), "{}", r.stdout);
    dbsweep(&["cleanup", "oltp_write_only", "--db", url]).ok();

    ycsb_letters(&s, &dir, kind);
}

/// YCSB's six core workloads on one load of usertable, in both statement
/// protocols and on event loops: every operation type counted, none
/// failed; d and e insert after the records the runs before them added.
fn ycsb_letters(s: &Server, dir: &Dir, kind: &str) {
    let url = s.url.as_str();
    let common = ["--db", url, "--recordcount", "2000"];
    let with = |verb: &str, extra: &[&str]| {
        let mut a = vec![verb, "ycsb"];
        a.extend_from_slice(&common);
        a.extend_from_slice(extra);
        dbsweep(&a)
    };
    with("prepare", &[]).ok();
    let letters = ["a", "b", "c", "d", "e", "f", "d", "e"];
    for (i, letter) in letters.iter().enumerate() {
        let json = dir.join(&format!("ycsb-{letter}-{i}.json"));
        let js = json.display().to_string();
        let mode = if i % 2 == 0 { "auto" } else { "disable" };
        let mut run = vec![
            "--workload",
            letter,
            "--events",
            "400",
            "--threads",
            "4",
            "--db-ps-mode",
            mode,
            "--json",
            &js,
        ];
        if i >= 6 {
            run.extend_from_slice(&["--client-threads", "1"]);
        }
        with("run", &run).ok();
        let r = &read_json(&json)["result"];
        assert_eq!(r["transactions"], 400, "{kind} {letter} ({i})");
        assert_eq!(r["failed_transactions"], 0, "{kind} {letter} ({i})");
        let types = r["transaction_types"].as_array().unwrap();
        let counted: u64 = types.iter().map(|t| t["count"].as_u64().unwrap()).sum();
        assert_eq!(counted, 400, "{kind} {letter} ({i})");
        let errors = util::record::errors_total(r);
        assert_eq!(errors, 0, "{kind} {letter} ({i}): {}", r["errors"]);
    }
    with("cleanup", &[]).ok();
}

#[test]
fn mariadb_runs_every_workload_and_retries_deadlocks() {
    workloads_and_deadlocks("mariadb", &[]);
}

#[test]
fn postgres_runs_every_workload_and_retries_deadlocks() {
    // PostgreSQL looks for deadlocks after deadlock_timeout (1 s by default).
    workloads_and_deadlocks("postgres", &["--set", "deadlock_timeout=50ms"]);
}

/// Kills the server with SIGKILL once a run has reported its first
/// interval: the run still ends by its deadline (its time, 3 s, plus the
/// grace, 1 s), counts the lost connections and reports what it measured.
fn server_killed_mid_run(kind: &'static str) {
    let s = Server::start(kind, &[]);
    let dir = Dir::new();
    let url = s.url.clone();
    dbsweep(&[
        "prepare",
        "oltp_point_select",
        "--db",
        &url,
        "--table-size",
        "1000",
    ])
    .ok();
    let pid = s.pid();
    let json = dir.join("killed.json");
    let mut run = util::nodes::Watched::spawn(&[
        "run",
        "oltp_point_select",
        "--db",
        &url,
        "--table-size",
        "1000",
        "--threads",
        "4",
        "--time",
        "3",
        "--report-interval",
        "0.5",
        "--json",
        &json.display().to_string(),
    ]);
    // Mid-run, however slowly a busy machine got it there.
    run.wait_for(" thds: ", Duration::from_secs(60));
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    let r = run.finish();
    r.ok();
    // A minute is only a hang's bound; the run's own window is the proof.
    assert!(
        r.elapsed < Duration::from_secs(60),
        "{kind}: took {:?}",
        r.elapsed
    );
    let doc = read_json(&json);
    let res = &doc["result"];
    let measured = res["measured_s"].as_f64().unwrap();
    assert!(
        (3.0..=4.0).contains(&measured),
        "{kind}: measured {measured} s"
    );
    assert!(res["transactions"].as_u64().unwrap() > 0);
    assert!(
        res["errors"]["connection_lost"].as_u64().unwrap() >= 1,
        "{res}"
    );
    assert_eq!(
        res["reconnects"], 0,
        "the server is gone: nothing to reconnect to"
    );
    assert_eq!(res["stop_reason"], "time");
    assert!(r.stdout.contains("connection_lost:"), "{}", r.stdout);
}

#[test]
fn killing_mariadb_mid_run_ends_the_run_by_its_deadline() {
    server_killed_mid_run("mariadb");
}

#[test]
fn killing_postgres_mid_run_ends_the_run_by_its_deadline() {
    server_killed_mid_run("postgres");
}

/// Asserts a usage error (exit 2) whose message contains every part.
fn usage_error(args: &[&str], parts: &[&str]) {
    let r = dbsweep(args);
    r.expect_status(2);
    for p in parts {
        assert!(r.stderr.contains(p), "message lacks {p:?}:\n{}", r.stderr);
    }
}

#[test]
fn wrong_password_closed_port_and_unknown_setting_are_usage_errors() {
    for kind in ["mariadb", "postgres"] {
        let s = Server::start(kind, &[]);
        let bad = s.url.replacen("sbtest:sbtest@", "sbtest:wrong@", 1);
        let expected = if kind == "mariadb" {
            "Access denied"
        } else {
            "password authentication failed"
        };
        usage_error(
            &["run", "oltp_point_select", "--db", &bad, "--time", "1"],
            &[expected, "sbtest"],
        );

        // A port nobody listens on.
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let scheme = if kind == "mariadb" {
            "mysql"
        } else {
            "postgres"
        };
        let closed = format!("{scheme}://sbtest:sbtest@127.0.0.1:{port}/sbtest");
        usage_error(
            &["run", "oltp_point_select", "--db", &closed, "--time", "1"],
            &[&format!("127.0.0.1:{port}"), "refused"],
        );

        // A setting the server does not know: its own words, no hang.
        let dir = Dir::new();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let sdir = dir.join("s").display().to_string();
        let start = Instant::now();
        usage_error(
            &[
                "server",
                "start",
                kind,
                "--dir",
                &sdir,
                "--set",
                "no_such_setting=1",
            ],
            &["no_such_setting"],
        );
        // A bad setting fails at once, not after the start's timeout
        // (60 s): half of it is a busy machine's room.
        assert!(start.elapsed() < Duration::from_secs(30));
    }
}

#[test]
fn server_stop_leaves_no_process_behind() {
    for kind in ["mariadb", "postgres"] {
        let s = Server::start(kind, &[]);
        let pid = s.pid();
        assert!(process_alive(pid));
        let sdir = s.server_dir().display().to_string();
        dbsweep(&["server", "stop", "--dir", &sdir]).ok();
        // `server stop` waits for the server; half a minute is a hang's
        // bound.
        let deadline = Instant::now() + Duration::from_secs(30);
        while process_alive(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(!process_alive(pid), "{kind} server {pid} still running");
        // No process of the server's OS user is running from its directory.
        let leftovers: Vec<_> = std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok())
            .filter_map(|e| std::fs::read_to_string(e.path().join("cmdline")).ok())
            .filter(|c| c.contains(&sdir))
            .collect();
        assert!(leftovers.is_empty(), "{kind}: {leftovers:?}");
        let r = dbsweep(&["server", "status", "--dir", &sdir]);
        assert!(r.stdout.contains("not running"), "{}", r.stdout);
    }
}
