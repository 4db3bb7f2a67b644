//! Seed 000's built-in workloads (`smack_select`, `smack_update`,
//! `smack_oltp`): each prepares the seed's tables with their keys, runs
//! exactly clients × rounds transactions (the seed's rounds by default),
//! and loads the same rows for the same seed; on SQLite here, and on
//! scratch MariaDB and PostgreSQL servers. Also the study's
//! `max_error_rate` stop rule, which acts on retried deadlocks.

mod util;

use dbsweep::driver::{self, Target};
use util::{dbsweep, dbsweep_in, read_json, Dir, Server};

/// The seed's transactions per client, by workload.
const DEFAULT_ROUNDS: [(&str, u64); 3] = [
    ("smack_select", 1000),
    ("smack_update", 1000),
    ("smack_oltp", 100),
];

/// Rows of Member, Record, Result at `--scale 0.0005`.
const SCALE: &str = "0.0005";
const ROWS: [u64; 3] = [5000, 500, 500];

/// Statements of each type per transaction, by workload.
fn statements_per_txn(workload: &str) -> Vec<(&'static str, u64)> {
    match workload {
        "smack_select" => vec![("select", 1)],
        "smack_update" => vec![("update", 1)],
        _ => vec![("select", 1), ("update", 1), ("insert", 1), ("delete", 1)],
    }
}

/// prepare → run (no stop option: the workload's default rounds) →
/// cleanup; returns the run's JSON.
fn cycle(
    db: &str,
    workload: &str,
    threads: &str,
    json: &std::path::Path,
    check: impl Fn(),
) -> serde_json::Value {
    dbsweep(&[
        "prepare",
        workload,
        "--db",
        db,
        "--scale",
        SCALE,
        "--rand-seed",
        "5",
    ])
    .ok();
    check();
    let js = json.display().to_string();
    dbsweep(&[
        "run",
        workload,
        "--db",
        db,
        "--scale",
        SCALE,
        "--threads",
        threads,
        "--json",
        &js,
    ])
    .ok();
    dbsweep(&["cleanup", workload, "--db", db]).ok();
    read_json(json)
}

/// Transactions and statement counts of a run of `threads` clients.
fn assert_counts(doc: &serde_json::Value, workload: &str, threads: u64, what: &str) {
    let r = &doc["result"];
    let rounds = DEFAULT_ROUNDS
        .iter()
        .find(|(w, _)| *w == workload)
        .unwrap()
        .1;
    assert_eq!(r["stop_reason"], "rounds", "{what}");
    assert_eq!(r["fatal_error"], serde_json::Value::Null, "{what}");
    let done = r["transactions"].as_u64().unwrap() + r["failed_transactions"].as_u64().unwrap();
    assert_eq!(done, threads * rounds, "{what}: clients × rounds");
    assert_eq!(
        r["fairness"]["events_avg"].as_f64().unwrap(),
        rounds as f64,
        "{what}"
    );
    if r["retries"] == 0 && r["failed_transactions"] == 0 {
        // Without retries each transaction ran each statement exactly once.
        for (kind, per) in statements_per_txn(workload) {
            let st = r["statements"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["type"] == kind)
                .unwrap_or_else(|| panic!("{what}: no {kind} statements"));
            assert_eq!(
                st["latency"]["count"].as_u64().unwrap(),
                per * done,
                "{what}: {kind} per transaction"
            );
        }
    }
}

fn sqlite_rows(path: &std::path::Path, sql: &str) -> Vec<Vec<String>> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut st = conn.prepare(sql).unwrap();
    let n = st.column_count();
    let rows = st
        .query_map([], |r| {
            (0..n)
                .map(|i| {
                    let v: rusqlite::types::Value = r.get(i)?;
                    Ok(format!("{v:?}"))
                })
                .collect()
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    rows
}

#[test]
fn sqlite_each_workload_runs_its_default_rounds_per_client() {
    let dir = Dir::new();
    for (workload, _) in DEFAULT_ROUNDS {
        let db = dir.sqlite_url(&format!("{workload}.db"));
        let path = dir.join(&format!("{workload}.db"));
        // SQLite has one writer: its lock errors are retried, and a single
        // client makes the statement counts exact.
        let threads = if workload == "smack_select" { 3 } else { 1 };
        let doc = cycle(
            &db,
            workload,
            &threads.to_string(),
            &dir.join(&format!("{workload}.json")),
            || {
                for (t, n) in ["Member", "Record", "Result"].iter().zip(ROWS) {
                    let c = sqlite_rows(&path, &format!("SELECT count(*) FROM {t}"));
                    assert_eq!(c[0][0], format!("Integer({n})"), "{workload}: rows of {t}");
                }
            },
        );
        assert_counts(&doc, workload, threads, workload);
        assert_eq!(doc["workload"]["options"]["scale"], SCALE);
    }
}

#[test]
fn sqlite_schema_has_the_seed_keys_and_oltp_changes_rows() {
    let dir = Dir::new();
    let db = dir.sqlite_url("s.db");
    let path = dir.join("s.db");
    dbsweep(&["prepare", "smack_oltp", "--db", &db, "--scale", SCALE]).ok();
    let indexes = sqlite_rows(
        &path,
        "SELECT tbl_name, name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name",
    );
    let cols = |index: &str| {
        sqlite_rows(
            &path,
            &format!("SELECT name FROM pragma_index_info('{index}') ORDER BY seqno"),
        )
        .into_iter()
        .map(|r| {
            r[0].trim_start_matches("Text(\"")
                .trim_end_matches("\")")
                .to_string()
        })
        .collect::<Vec<_>>()
    };
    let names: Vec<&str> = indexes.iter().map(|r| r[1].as_str()).collect();
    assert_eq!(names.len(), 7, "{indexes:?}");
    assert_eq!(cols("Member_name"), ["name"]);
    assert!(indexes
        .iter()
        .any(|r| r[2].contains("UNIQUE INDEX Member_name")));
    assert_eq!(cols("Member_count"), ["count"]);
    assert_eq!(cols("Member_line"), ["line"]);
    assert_eq!(cols("Record_gr"), ["grp", "num"]);
    assert_eq!(cols("Record_d"), ["id", "uid"]);
    assert_eq!(cols("Result_aid"), ["aid"]);
    assert_eq!(cols("Result_sid"), ["ret", "uid"]);
    // The auto-increment primary keys are the rowids.
    let pk = |t: &str| {
        sqlite_rows(
            &path,
            &format!("SELECT name FROM pragma_table_info('{t}') WHERE pk = 1"),
        )
    };
    assert_eq!(pk("Member"), [["Text(\"aid\")"]]);
    assert_eq!(pk("Result"), [["Text(\"id\")"]]);
    assert!(pk("Record").is_empty(), "Record has no primary key");
    assert_eq!(
        sqlite_rows(&path, "SELECT count(*) FROM Member WHERE bill = 2")[0][0],
        "Integer(5000)"
    );

    // One client, 100 transactions: 100 updates and inserts; a delete per
    // transaction of the drawn Record id (none if already deleted).
    dbsweep(&[
        "run",
        "smack_oltp",
        "--db",
        &db,
        "--scale",
        SCALE,
        "--rand-seed",
        "3",
    ])
    .ok();
    let n = |sql: &str| sqlite_rows(&path, sql)[0][0].clone();
    assert_eq!(n("SELECT count(*) FROM Result"), "Integer(600)");
    assert_eq!(
        n("SELECT count(*) FROM Result WHERE time1 = '2005-09-09 09:09:09' AND ret = 11"),
        "Integer(100)"
    );
    let left: i64 = n("SELECT count(*) FROM Record")
        .trim_start_matches("Integer(")
        .trim_end_matches(')')
        .parse()
        .unwrap();
    assert!((400..500).contains(&left), "{left} Record rows left");
    let billed = n("SELECT count(*) FROM Member WHERE bill = 1");
    assert_ne!(billed, "Integer(0)");

    // Another scale than the data's is refused, naming the fix.
    let r = dbsweep(&["run", "smack_select", "--db", &db, "--scale", "0.001"]);
    r.expect_status(2);
    assert!(
        r.stderr.contains("does not hold the 10000 rows"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("dbsweep cleanup smack_select"),
        "{}",
        r.stderr
    );
    // So is a second prepare.
    let r = dbsweep(&["prepare", "smack_update", "--db", &db, "--scale", SCALE]);
    r.expect_status(2);
    assert!(r.stderr.contains("already exists"), "{}", r.stderr);
}

#[test]
fn same_seed_same_rows() {
    let dir = Dir::new();
    let dump = |name: &str, seed: &str| {
        let db = dir.sqlite_url(name);
        dbsweep(&[
            "prepare",
            "smack_select",
            "--db",
            &db,
            "--scale",
            "0.0002",
            "--rand-seed",
            seed,
        ])
        .ok();
        let path = dir.join(name);
        [
            "SELECT * FROM Member ORDER BY aid",
            "SELECT * FROM Record ORDER BY id",
            "SELECT * FROM Result ORDER BY id",
        ]
        .map(|q| sqlite_rows(&path, q))
    };
    let a = dump("a.db", "11");
    let b = dump("b.db", "11");
    let c = dump("c.db", "12");
    assert_eq!(a[0].len(), 2000);
    assert_eq!(a, b);
    for t in 0..3 {
        assert_ne!(a[t], c[t], "table {t} with another seed");
    }
}

#[test]
fn explicit_stop_options_override_the_default_rounds() {
    let dir = Dir::new();
    let json = dir.join("r.json");
    let js = json.display().to_string();
    dbsweep(&[
        "run",
        "smack_select",
        "--scale",
        "0.0001",
        "--rounds",
        "7",
        "--threads",
        "2",
        "--json",
        &js,
    ])
    .ok();
    let doc = read_json(&json);
    assert_eq!(doc["result"]["transactions"], 14);
    dbsweep(&[
        "run",
        "smack_select",
        "--scale",
        "0.0001",
        "--events",
        "9",
        "--json",
        &js,
    ])
    .ok();
    let doc = read_json(&json);
    assert_eq!(doc["result"]["transactions"], 9);
    assert_eq!(doc["result"]["stop_reason"], "events");
    let r = dbsweep(&["run", "smack_select", "--scale", "0"]);
    r.expect_status(2);
    assert!(
        r.stderr.contains("expected a positive number"),
        "{}",
        r.stderr
    );
    let listing = dbsweep(&["workloads"]);
    listing.ok();
    for (w, _) in DEFAULT_ROUNDS {
        assert!(listing.stdout.contains(w), "{w} listed");
    }
    assert!(listing.stdout.contains("--scale="));
}

fn write(dir: &Dir, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// (status, reason) of every stored point, in commit order.
fn points(dir: &Dir, out: &str) -> Vec<(String, Option<String>)> {
    let conn = rusqlite::Connection::open(dir.join(out).join("results.db")).unwrap();
    let mut stmt = conn
        .prepare("SELECT status, reason FROM point ORDER BY id")
        .unwrap();
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    rows
}

/// A study on a fake target whose every third statement deadlocks: retried,
/// so no transaction fails, and only `max_error_rate` sees it.
fn deadlock_study(limit: &str) -> String {
    format!(
        r#"
name = "deadlocks"
out = "out-{limit}"
clients = [1, 2, 4]

[[target]]
name = "fake"
url = "fake://?error_every=3:deadlock"

[[workload]]
name = "oltp_point_select"
events = 300

[stop]
max_failed_rate = 0.0
max_error_rate = {{ deadlock = {limit} }}
"#
    )
}

#[test]
fn max_error_rate_stops_a_series_on_retried_deadlocks() {
    let dir = Dir::new();
    // About one deadlock per two transactions: under a limit of 5, all run.
    let file = write(&dir, "loose.toml", &deadlock_study("5"));
    dbsweep_in(dir.path(), &["study", &file]).ok();
    let pts = points(&dir, "out-5");
    assert!(pts.iter().all(|p| p.0 == "finished"), "{pts:?}");
    // Over a limit of 0.1 the first point stops the series.
    let file = write(&dir, "tight.toml", &deadlock_study("0.1"));
    let r = dbsweep_in(dir.path(), &["study", &file, "--dry-run"]);
    r.ok();
    assert!(
        r.stdout.contains("max_error_rate deadlock 0.1"),
        "{}",
        r.stdout
    );
    dbsweep_in(dir.path(), &["study", &file]).ok();
    let pts = points(&dir, "out-0.1");
    let status: Vec<_> = pts.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(status, ["finished", "skipped", "skipped"], "{pts:?}");
    let reason = pts[1].1.as_deref().unwrap();
    assert!(
        reason.contains("deadlock errors in 300 transactions"),
        "{reason}"
    );
    assert!(reason.contains("at 1 clients (limit 0.1)"), "{reason}");

    // Bad limits and kinds are rejected before anything runs.
    for (bad, expected) in [
        ("{ deadlocks = 0.1 }", "unknown error kind 'deadlocks'"),
        ("{ deadlock = -1 }", "a number ≥ 0"),
        ("{}", "an empty table"),
    ] {
        let text = deadlock_study("0.1").replace("{ deadlock = 0.1 }", bad);
        let file = write(&dir, "bad.toml", &text);
        let r = dbsweep_in(dir.path(), &["study", &file, "--dry-run"]);
        r.expect_status(2);
        assert!(r.stderr.contains("stop.max_error_rate"), "{}", r.stderr);
        assert!(r.stderr.contains(expected), "{}", r.stderr);
    }
}

/// Rows a query returns on a server.
fn server_rows(url: &str, sql: &str) -> u64 {
    let target = Target::parse(url).unwrap();
    let mut conn = driver::connect(&target).unwrap();
    conn.execute_sql(sql).unwrap().rows
}

/// The three workloads on a scratch server with 4 clients, and its keys.
fn on_server(kind: &'static str) {
    let s = Server::start(kind, &[]);
    let dir = Dir::new();
    for (workload, _) in DEFAULT_ROUNDS {
        let json = dir.join(&format!("{workload}.json"));
        let doc = cycle(&s.url, workload, "4", &json, || {
            let keys: &[(&str, &str)] = if kind == "mariadb" {
                &[
                    ("Member", "PRIMARY"),
                    ("Member", "name"),
                    ("Member", "count"),
                    ("Member", "line"),
                    ("Record", "gr"),
                    ("Record", "d"),
                    ("Result", "PRIMARY"),
                    ("Result", "aid"),
                    ("Result", "sid"),
                ]
            } else {
                &[
                    ("member", "member_pkey"),
                    ("member", "member_name"),
                    ("member", "member_count"),
                    ("member", "member_line"),
                    ("record", "record_gr"),
                    ("record", "record_d"),
                    ("result", "result_pkey"),
                    ("result", "result_aid"),
                    ("result", "result_sid"),
                ]
            };
            for (t, k) in keys {
                let sql = if kind == "mariadb" {
                    format!(
                        "SELECT 1 FROM information_schema.statistics WHERE table_schema = DATABASE() \
                         AND table_name = '{t}' AND index_name = '{k}'"
                    )
                } else {
                    format!(
                        "SELECT 1 FROM pg_indexes WHERE tablename = '{t}' AND indexname = '{k}'"
                    )
                };
                assert!(server_rows(&s.url, &sql) > 0, "{kind}: key {k} on {t}");
            }
            for (t, n) in ["Member", "Record", "Result"].iter().zip(ROWS) {
                assert_eq!(
                    server_rows(&s.url, &format!("SELECT * FROM {t}")),
                    n,
                    "{kind}: {t}"
                );
            }
            assert_eq!(
                server_rows(&s.url, "SELECT aid FROM Member WHERE aid = 5000"),
                1
            );
        });
        assert_counts(&doc, workload, 4, &format!("{kind} {workload}"));
        if workload == "smack_oltp" {
            // Deadlocks and lock timeouts, if any, are counted by kind.
            let e = &doc["result"]["errors"];
            assert!(e["deadlock"].is_u64() && e["lock_timeout"].is_u64(), "{e}");
        }
    }
}

#[test]
fn mariadb_runs_the_seed_000_workloads() {
    on_server("mariadb");
}

#[test]
fn postgres_runs_the_seed_000_workloads() {
    on_server("postgres");
}
