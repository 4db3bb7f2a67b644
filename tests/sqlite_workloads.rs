//! Every built-in workload end to end on SQLite through the real binary:
//! prepare, run, cleanup, with the query mix per transaction checked against
//! sysbench's, and the run-level guarantees (time limit, exact event counts,
//! draining deletes).

mod util;

use util::{dbsweep, read_json, Dir};

/// Runs prepare → run (events) → cleanup and returns the run's JSON.
fn cycle(dir: &Dir, workload: &str, extra: &[&str], run_extra: &[&str]) -> serde_json::Value {
    let db = dir.sqlite_url("w.db");
    let json = dir.join(&format!("{workload}.json"));
    let mut prep = vec!["prepare", workload, "--db", &db];
    prep.extend_from_slice(extra);
    dbsweep(&prep).ok();
    let json_s = json.display().to_string();
    let mut run = vec!["run", workload, "--db", &db, "--json", &json_s];
    run.extend_from_slice(extra);
    run.extend_from_slice(run_extra);
    dbsweep(&run).ok();
    let mut clean = vec!["cleanup", workload, "--db", &db];
    clean.extend_from_slice(extra);
    dbsweep(&clean).ok();
    read_json(&json)
}

/// (reads, writes, others) per transaction.
fn mix(doc: &serde_json::Value) -> (f64, f64, f64) {
    let r = &doc["result"];
    let t = r["transactions"].as_u64().unwrap() as f64;
    assert!(t > 0.0, "no transactions: {r}");
    let q = &r["queries"];
    (
        q["read"].as_u64().unwrap() as f64 / t,
        q["write"].as_u64().unwrap() as f64 / t,
        q["other"].as_u64().unwrap() as f64 / t,
    )
}

const SMALL: &[&str] = &["--table-size", "500"];

#[test]
fn oltp_read_write_has_sysbench_query_mix() {
    let dir = Dir::new();
    let doc = cycle(&dir, "oltp_read_write", SMALL, &["--events", "200"]);
    assert_eq!(doc["result"]["transactions"], 200);
    assert_eq!(mix(&doc), (14.0, 4.0, 2.0));
}

/// Runs `events` transactions of `workload` on its own database at `url`
/// on `threads` connections and returns the run's JSON.
fn counted(dir: &Dir, url: &str, workload: &str, threads: u32, events: &str) -> serde_json::Value {
    let json = dir.join(&format!("{workload}-{threads}.json"));
    let threads = threads.to_string();
    dbsweep(&["prepare", workload, "--db", url, "--table-size", "500"]).ok();
    dbsweep(&[
        "run",
        workload,
        "--db",
        url,
        "--table-size",
        "500",
        "--threads",
        &threads,
        "--events",
        events,
        "--json",
        &json.display().to_string(),
    ])
    .ok();
    dbsweep(&["cleanup", workload, "--db", url]).ok();
    read_json(&json)
}

#[test]
fn writers_begin_immediate_and_do_not_collide() {
    // By default a transaction that writes starts with BEGIN IMMEDIATE:
    // writers queue on the busy handler instead of failing to upgrade a
    // read lock, so next to nothing is retried.
    let dir = Dir::new();
    for workload in [
        "oltp_read_write",
        "oltp_write_only",
        "oltp_update_index",
        "oltp_insert",
    ] {
        let url = dir.sqlite_url(&format!("{workload}.db"));
        for threads in [2, 4, 8] {
            let doc = counted(&dir, &url, workload, threads, "500");
            let r = &doc["result"];
            let (done, retries) = (
                r["transactions"].as_u64().unwrap(),
                r["retries"].as_u64().unwrap(),
            );
            assert!(done > 100, "{workload} at {threads}: {done} transactions");
            assert!(
                retries * 100 < done,
                "{workload} at {threads}: {retries} retries for {done} transactions"
            );
            assert_eq!(r["failed_transactions"], 0);
            assert_eq!(
                doc["target"]["settings"]["begin"],
                "BEGIN IMMEDIATE for writing transactions, BEGIN DEFERRED for reading ones"
            );
        }
    }
    // The run's output says so in one line.
    let url = dir.sqlite_url("say.db");
    dbsweep(&[
        "prepare",
        "oltp_point_select",
        "--db",
        &url,
        "--table-size",
        "100",
    ])
    .ok();
    let r = dbsweep(&[
        "run",
        "oltp_point_select",
        "--db",
        &url,
        "--table-size",
        "100",
        "--time",
        "0.2",
    ]);
    r.ok();
    assert!(
        r.stdout.contains("Transactions start with: BEGIN IMMEDIATE for writing transactions, BEGIN DEFERRED for reading ones\n"),
        "{}",
        r.stdout
    );
}

#[test]
fn the_url_chooses_the_begin_mode() {
    // ?begin=deferred: two writers' lock upgrades collide, SQLite says
    // BUSY, the engine counts it as lock_timeout and retries.
    let dir = Dir::new();
    let url = format!("{}?begin=deferred", dir.sqlite_url("def.db"));
    let json = dir.join("def.json").display().to_string();
    let args = ["--table-size", "500"];
    dbsweep(&["prepare", "oltp_read_write", "--db", &url, args[0], args[1]]).ok();
    dbsweep(&[
        "run",
        "oltp_read_write",
        "--db",
        &url,
        args[0],
        args[1],
        "--events",
        "300",
        "--threads",
        "2",
        "--json",
        &json,
    ])
    .ok();
    let doc = read_json(std::path::Path::new(&json));
    let r = &doc["result"];
    assert_eq!(r["transactions"], 300);
    assert_eq!(r["failed_transactions"], 0);
    assert_eq!(r["errors"]["lock_timeout"], r["retries"]);
    assert_eq!(
        doc["target"]["settings"]["begin"],
        "BEGIN DEFERRED (from the URL)"
    );
    // ?begin=immediate: every transaction, reading ones too.
    let url = format!("{}?begin=immediate", dir.sqlite_url("imm.db"));
    let json = dir.join("imm.json").display().to_string();
    dbsweep(&["prepare", "oltp_read_write", "--db", &url, args[0], args[1]]).ok();
    dbsweep(&[
        "run",
        "oltp_read_write",
        "--db",
        &url,
        args[0],
        args[1],
        "--events",
        "300",
        "--threads",
        "2",
        "--json",
        &json,
    ])
    .ok();
    let doc = read_json(std::path::Path::new(&json));
    assert_eq!(doc["result"]["retries"], 0);
    assert_eq!(
        doc["target"]["settings"]["begin"],
        "BEGIN IMMEDIATE (from the URL)"
    );
    assert_eq!(mix(&doc), (14.0, 4.0, 2.0));
}

#[test]
fn oltp_read_only_and_point_select_mixes() {
    let dir = Dir::new();
    let doc = cycle(&dir, "oltp_read_only", SMALL, &["--events", "100"]);
    assert_eq!(mix(&doc), (14.0, 0.0, 2.0));
    let doc = cycle(&dir, "oltp_point_select", SMALL, &["--events", "100"]);
    assert_eq!(mix(&doc), (1.0, 0.0, 0.0));
    let doc = cycle(
        &dir,
        "oltp_read_only",
        &[
            "--table-size",
            "500",
            "--skip-trx",
            "--range-selects",
            "off",
        ],
        &["--events", "100"],
    );
    assert_eq!(mix(&doc), (10.0, 0.0, 0.0));
}

#[test]
fn write_workload_mixes() {
    let dir = Dir::new();
    let doc = cycle(&dir, "oltp_write_only", SMALL, &["--events", "100"]);
    assert_eq!(mix(&doc), (0.0, 4.0, 2.0));
    let doc = cycle(&dir, "oltp_update_index", SMALL, &["--events", "100"]);
    assert_eq!(mix(&doc), (0.0, 1.0, 0.0));
    let doc = cycle(&dir, "oltp_update_non_index", SMALL, &["--events", "100"]);
    assert_eq!(mix(&doc), (0.0, 1.0, 0.0));
    let doc = cycle(&dir, "oltp_insert", SMALL, &["--events", "100"]);
    assert_eq!(mix(&doc), (0.0, 1.0, 0.0));
    let doc = cycle(&dir, "oltp_simple", SMALL, &["--events", "100"]);
    assert_eq!(mix(&doc), (1.0, 1.0, 2.0));
    let doc = cycle(
        &dir,
        "oltp_simple",
        &["--table-size", "500", "--skip-trx"],
        &["--events", "100"],
    );
    assert_eq!(mix(&doc), (1.0, 1.0, 0.0));
}

#[test]
fn select_random_workloads_read_one_result_set_per_transaction() {
    let dir = Dir::new();
    let doc = cycle(&dir, "select_random_points", SMALL, &["--events", "100"]);
    assert_eq!(mix(&doc), (1.0, 0.0, 0.0));
    let doc = cycle(&dir, "select_random_ranges", SMALL, &["--events", "100"]);
    assert_eq!(mix(&doc), (1.0, 0.0, 0.0));
}

#[test]
fn bulk_insert_writes_its_rows() {
    let dir = Dir::new();
    let doc = cycle(
        &dir,
        "bulk_insert",
        &["--tables", "2", "--bulk-rows", "100"],
        &["--events", "20", "--threads", "2"],
    );
    // One multi-row INSERT per transaction, no BEGIN/COMMIT.
    assert_eq!(doc["result"]["transactions"], 20);
    assert_eq!(mix(&doc), (0.0, 1.0, 0.0));
}

#[test]
fn oltp_delete_drains_rows() {
    let dir = Dir::new();
    let db = dir.sqlite_url("d.db");
    dbsweep(&["prepare", "oltp_delete", "--db", &db, "--table-size", "100"]).ok();
    let json = dir.join("d.json").display().to_string();
    dbsweep(&[
        "run",
        "oltp_delete",
        "--db",
        &db,
        "--table-size",
        "100",
        "--events",
        "300",
        "--json",
        &json,
    ])
    .ok();
    let doc = read_json(std::path::Path::new(&json));
    let q = &doc["result"]["queries"];
    // A delete that found its row is a write; one that found nothing is
    // "other" (sysbench's rule). 300 random deletes over 100 rows must empty
    // most of the table, and can never delete more than it had.
    let deleted = q["write"].as_u64().unwrap();
    assert!((60..=100).contains(&deleted), "deleted {deleted}");
    assert_eq!(deleted + q["other"].as_u64().unwrap(), 300);
    let conn = rusqlite_count(&dir.join("d.db"));
    assert_eq!(conn, 100 - deleted);
}

fn rusqlite_count(path: &std::path::Path) -> u64 {
    let out = std::process::Command::new("sqlite3")
        .arg(path)
        .arg("SELECT count(*) FROM sbtest1")
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().parse().unwrap(),
        // Without the sqlite3 shell, count through dbsweep's own driver.
        _ => {
            let mut c =
                dbsweep::driver::sqlite::SqliteConnection::open(path, &[]).expect("open sqlite");
            use dbsweep::driver::Connection;
            c.count_rows("sbtest1").unwrap()
        }
    }
}

#[test]
fn time_limit_ends_the_run_within_grace() {
    let r = dbsweep(&[
        "run",
        "oltp_read_write",
        "--table-size",
        "1000",
        "--threads",
        "2",
        "--time",
        "2",
    ]);
    r.ok();
    // The window is the time, and at most the grace (1 s) more for the
    // transactions in flight at the end: what the run measured, not when a
    // busy machine let the process exit (a minute is a hang's bound).
    assert!(r.elapsed.as_secs_f64() < 60.0, "took {:?}", r.elapsed);
    let total: f64 = r.field("total time").trim_end_matches('s').parse().unwrap();
    assert!((2.0..=3.0).contains(&total), "total time {total}");
    assert!(r.count("transactions") > 0);
}

#[test]
fn events_runs_exactly_that_many_transactions() {
    let r = dbsweep(&[
        "run",
        "oltp_point_select",
        "--table-size",
        "1000",
        "--threads",
        "4",
        "--events",
        "1000",
    ]);
    r.ok();
    assert_eq!(r.count("transactions"), 1000);
    assert_eq!(r.count("total number of events"), 1000);
}

#[test]
fn warmup_is_not_measured() {
    let dir = Dir::new();
    let json = dir.join("w.json").display().to_string();
    dbsweep(&[
        "run",
        "oltp_point_select",
        "--table-size",
        "1000",
        "--warmup",
        "1",
        "--time",
        "1",
        "--report-interval",
        "0.5",
        "--json",
        &json,
    ])
    .ok();
    let doc = read_json(std::path::Path::new(&json));
    let r = &doc["result"];
    let measured = r["measured_s"].as_f64().unwrap();
    // The window ends when the last client finishes after the 1 s mark,
    // by the deadline (the grace, 1 s, later) at the latest.
    assert!((1.0..=2.0).contains(&measured), "measured {measured}");
    let intervals = r["intervals"].as_array().unwrap();
    let sum = |keep: &dyn Fn(&serde_json::Value) -> bool| -> u64 {
        intervals
            .iter()
            .filter(|i| keep(i))
            .map(|i| i["transactions"].as_u64().unwrap())
            .sum()
    };
    let all = sum(&|_| true);
    // Intervals that ended by the warmup's end (1 s after the release)
    // hold transactions that started in it: none is measured.
    let warm = sum(&|i| i["t_s"].as_f64().unwrap() <= 1.0);
    // Intervals that begin after it hold measured transactions, but for
    // one per client that straddled the boundary (one client here).
    let after = sum(&|i| i["warmup"] == false);
    let measured_txns = r["transactions"].as_u64().unwrap();
    assert!(warm > 0, "{intervals:?}");
    assert!(
        measured_txns <= all - warm,
        "{measured_txns} measured, {all} in all, {warm} in the warmup"
    );
    assert!(
        measured_txns + 1 >= after,
        "{measured_txns} measured vs {after} in intervals after the warmup"
    );
}

#[test]
fn the_descriptor_limit_is_raised_and_an_impossible_count_is_refused() {
    let dir = Dir::new();
    let url = dir.sqlite_url("fds.db");
    dbsweep(&[
        "prepare",
        "oltp_point_select",
        "--db",
        &url,
        "--table-size",
        "100",
    ])
    .ok();
    // A soft limit of 256 (the hard one as it is): 200 SQLite connections
    // hold about 600 descriptors, so this runs only if dbsweep raises it.
    let json = dir.join("fds.json");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -Sn 256 && exec '{}' run oltp_point_select --db '{url}' --table-size 100 --threads 200 --time 0.5 --json '{}'",
            env!("CARGO_BIN_EXE_dbsweep"),
            json.display()
        ))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let doc = read_json(&json);
    assert!(doc["result"]["transactions"].as_u64().unwrap() > 0);
    // More than the hard limit allows: refused before connecting, exit 2,
    // the limit named, nothing written.
    let json = dir.join("too-many.json");
    let r = dbsweep(&[
        "run",
        "oltp_point_select",
        "--db",
        &url,
        "--table-size",
        "100",
        "--threads",
        "100000000",
        "--time",
        "1",
        "--json",
        &json.display().to_string(),
    ]);
    r.expect_status(2);
    assert!(
        r.stderr.contains("--threads 100000000: 100000000 connections need about 300000064 file descriptors (3 per SQLite connection")
            && r.stderr.contains("hard limit")
            && r.stderr.contains("ulimit -n"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(!json.exists());
}
