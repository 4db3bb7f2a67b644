//! `--client-threads N`: a run's connections on N event-loop threads,
//! against a real PostgreSQL and a real MariaDB. The record means what it means with a thread
//! per connection: the same transactions, statements and error counts for
//! the same work; an open loop's latency from each arrival's intended
//! start; a frozen server still ends the run at its deadline (time +
//! grace) with what was in flight counted as abandoned, and a freeze in
//! the middle of a paced run shows in its tail; workloads that read
//! results back (TPC-C) and users on a pool of connections (DBT-1) run
//! as they do on threads. Bad input is refused with the fix.

mod util;

use std::time::{Duration, Instant};

use dbsweep::driver::{self, Target};
use util::{dbsweep, read_json, Dir, Server};

/// Prepares sysbench's table on `s`.
fn prepare(s: &Server, rows: &str) {
    dbsweep(&[
        "prepare",
        "oltp_point_select",
        "--db",
        &s.url,
        "--table-size",
        rows,
    ])
    .ok();
}

/// `dbsweep run` with `args`, its record read back.
fn run(dir: &Dir, name: &str, args: &[&str]) -> serde_json::Value {
    let json = dir.join(name);
    let mut all: Vec<&str> = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", json.to_str().unwrap()]);
    dbsweep(&all).ok();
    read_json(&json)
}

fn count(doc: &serde_json::Value, path: &[&str]) -> u64 {
    let mut v = doc;
    for p in path {
        v = &v[*p];
    }
    v.as_u64()
        .unwrap_or_else(|| panic!("{path:?}: {}", doc["result"]["stop_reason"]))
}

#[test]
fn a_closed_loop_on_postgres_records_what_a_threaded_one_does() {
    a_closed_loop_records_what_a_threaded_one_does("postgres");
}

#[test]
fn a_closed_loop_on_mariadb_records_what_a_threaded_one_does() {
    a_closed_loop_records_what_a_threaded_one_does("mariadb");
}

fn a_closed_loop_records_what_a_threaded_one_does(server: &'static str) {
    let s = Server::start(server, &[]);
    prepare(&s, "10000");
    let dir = Dir::new();
    let base = [
        "oltp_read_write",
        "--db",
        &s.url,
        "--table-size",
        "10000",
        "--threads",
        "8",
        "--events",
        "400",
        "--rand-seed",
        "5",
    ];
    let threaded = run(&dir, "t.json", &base);
    let evented = run(
        &dir,
        "e.json",
        &[&base[..], &["--client-threads", "2"]].concat(),
    );
    for doc in [&threaded, &evented] {
        assert_eq!(count(doc, &["result", "transactions"]), 400);
        // sysbench's read/write mix: 20 queries a transaction (BEGIN and
        // COMMIT among them), each timed under its statement's kind.
        assert_eq!(count(doc, &["result", "queries", "total"]), 400 * 20);
    }
    let kinds = |doc: &serde_json::Value| -> Vec<(String, u64)> {
        doc["result"]["statements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["type"].as_str().unwrap().to_string(),
                    s["latency"]["count"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(kinds(&evented), kinds(&threaded));
    assert_eq!(evented["run"]["client_threads"], 2, "{}", evented["run"]);
}

#[test]
fn an_open_loop_on_postgres_holds_its_rate_and_times_from_the_intended_start() {
    an_open_loop_holds_its_rate_and_times_from_the_intended_start("postgres");
}

#[test]
fn an_open_loop_on_mariadb_holds_its_rate_and_times_from_the_intended_start() {
    an_open_loop_holds_its_rate_and_times_from_the_intended_start("mariadb");
}

fn an_open_loop_holds_its_rate_and_times_from_the_intended_start(server: &'static str) {
    let s = Server::start(server, &[]);
    prepare(&s, "10000");
    let dir = Dir::new();
    let doc = run(
        &dir,
        "r.json",
        &[
            "oltp_point_select",
            "--db",
            &s.url,
            "--table-size",
            "10000",
            "--threads",
            "8",
            "--client-threads",
            "2",
            "--rate",
            "1000",
            "--arrival",
            "uniform",
            "--time",
            "3",
        ],
    );
    let pacing = &doc["result"]["pacing"];
    let achieved = pacing["achieved_per_s"].as_f64().unwrap();
    assert!((950.0..=1050.0).contains(&achieved), "{pacing}");
    // Every arrival of the window is accounted for.
    let offered = count(&doc, &["result", "pacing", "offered"]);
    let done = count(&doc, &["result", "transactions"]);
    assert!(offered >= done && offered - done <= 8, "{pacing}");
    // Latency from the intended start: never below the service time.
    let lat = &doc["result"]["latency"];
    let svc = &pacing["service"];
    assert!(
        lat["max_us"].as_f64().unwrap() >= svc["max_us"].as_f64().unwrap(),
        "{lat} {svc}"
    );
    assert!(
        lat["sum_us"].as_f64().unwrap() >= svc["sum_us"].as_f64().unwrap(),
        "{lat} {svc}"
    );
}

/// Holds an exclusive lock on sbtest1 from `from` for `hold`, on a
/// connection of its own: every statement on the table waits.
fn freeze(server: &str, url: &str, from: Duration, hold: Duration) -> std::thread::JoinHandle<()> {
    let url = url.to_string();
    let (lock, unlock) = match server {
        "postgres" => (
            "BEGIN; LOCK TABLE sbtest1 IN ACCESS EXCLUSIVE MODE",
            "COMMIT",
        ),
        _ => ("LOCK TABLES sbtest1 WRITE", "UNLOCK TABLES"),
    };
    std::thread::spawn(move || {
        let mut c = driver::connect(&Target::parse(&url).unwrap()).unwrap();
        std::thread::sleep(from);
        c.execute_sql(lock).unwrap();
        std::thread::sleep(hold);
        c.execute_sql(unlock).unwrap();
    })
}

#[test]
fn a_frozen_postgres_ends_the_run_at_its_deadline_and_a_freeze_shows_in_the_tail() {
    a_frozen_server_ends_the_run_at_its_deadline_and_a_freeze_shows_in_the_tail("postgres");
}

#[test]
fn a_frozen_mariadb_ends_the_run_at_its_deadline_and_a_freeze_shows_in_the_tail() {
    a_frozen_server_ends_the_run_at_its_deadline_and_a_freeze_shows_in_the_tail("mariadb");
}

fn a_frozen_server_ends_the_run_at_its_deadline_and_a_freeze_shows_in_the_tail(
    server: &'static str,
) {
    let s = Server::start(server, &[]);
    prepare(&s, "10000");
    let dir = Dir::new();
    // Frozen from 0.5 s on, past the end (2 s) and the grace (0.5 s).
    let hold = freeze(
        server,
        &s.url,
        Duration::from_millis(500),
        Duration::from_secs(6),
    );
    let t = Instant::now();
    let doc = run(
        &dir,
        "f.json",
        &[
            "oltp_point_select",
            "--db",
            &s.url,
            "--table-size",
            "10000",
            "--threads",
            "4",
            "--client-threads",
            "2",
            "--time",
            "2",
            "--grace",
            "0.5",
            "--metrics",
            "off",
        ],
    );
    let took = t.elapsed();
    assert!(took < Duration::from_secs(5), "the run took {took:?}");
    assert_eq!(
        count(&doc, &["result", "abandoned"]),
        4,
        "{}",
        doc["result"]
    );
    hold.join().unwrap();

    // Frozen for 1 s in the middle of a 3 s run at 500/s: the freeze is
    // in the tail (a third of the arrivals waited up to a second).
    let hold = freeze(
        server,
        &s.url,
        Duration::from_millis(1000),
        Duration::from_secs(1),
    );
    let doc = run(
        &dir,
        "g.json",
        &[
            "oltp_point_select",
            "--db",
            &s.url,
            "--table-size",
            "10000",
            "--threads",
            "4",
            "--client-threads",
            "1",
            "--rate",
            "500",
            "--time",
            "3",
            "--metrics",
            "off",
        ],
    );
    hold.join().unwrap();
    let lat = &doc["result"]["latency"];
    let p99 = lat["percentiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["p"] == 99.0)
        .map(|p| p["us"].as_f64().unwrap())
        .unwrap();
    assert!(lat["max_us"].as_f64().unwrap() >= 900_000.0, "{lat}");
    assert!(p99 >= 500_000.0, "{lat}");
}

#[test]
fn tpcc_and_users_on_a_pool_run_on_event_loops_on_postgres() {
    tpcc_and_users_on_a_pool_run_on_event_loops("postgres");
}

#[test]
fn tpcc_and_users_on_a_pool_run_on_event_loops_on_mariadb() {
    tpcc_and_users_on_a_pool_run_on_event_loops("mariadb");
}

fn tpcc_and_users_on_a_pool_run_on_event_loops(server: &'static str) {
    let s = Server::start(server, &[]);
    let dir = Dir::new();
    dbsweep(&["prepare", "tpcc", "--db", &s.url, "--warehouses", "1"]).ok();
    let doc = run(
        &dir,
        "c.json",
        &[
            "tpcc",
            "--db",
            &s.url,
            "--warehouses",
            "1",
            "--threads",
            "4",
            "--client-threads",
            "2",
            "--no-wait",
            "--time",
            "3",
            "--check",
        ],
    );
    // Its terminals read results back (Fetch) and write in batches.
    assert!(
        count(&doc, &["result", "transactions"]) > 50,
        "{}",
        doc["result"]["transactions"]
    );
    assert_eq!(count(&doc, &["result", "errors", "other"]), 0);
    assert_eq!(
        doc["result"]["tpcc"]["consistency"]["holds"], true,
        "{}",
        doc["result"]["tpcc"]["consistency"]
    );

    // DBT-1 has an `item` table too.
    dbsweep(&["cleanup", "tpcc", "--db", &s.url, "--warehouses", "1"]).ok();
    dbsweep(&[
        "prepare", "dbt1", "--db", &s.url, "--items", "1000", "--ebs", "1",
    ])
    .ok();
    // A long grace: connections idle on the queue at the end leave then,
    // not at the deadline. Returns the record of a 3-s run of `eus` users
    // on 4 connections, checked to have ended well before the deadline.
    let pool = |name: &str, eus: &str, think: &str| {
        let t = Instant::now();
        let doc = run(
            &dir,
            name,
            &[
                "dbt1",
                "--db",
                &s.url,
                "--items",
                "1000",
                "--ebs",
                "1",
                "--threads",
                "4",
                "--client-threads",
                "2",
                "--eus",
                eus,
                "--think-time",
                think,
                "--time",
                "3",
                "--grace",
                "20",
            ],
        );
        let took = t.elapsed();
        assert!(took < Duration::from_secs(12), "a 3 s run took {took:?}");
        assert_eq!(count(&doc, &["result", "abandoned"]), 0);
        doc
    };
    let doc = pool("d.json", "40", "fixed:10ms");
    assert!(
        count(&doc, &["result", "transactions"]) > 100,
        "{}",
        doc["result"]
    );
    assert_eq!(doc["run"]["pacing"]["users"], 40);

    // Every user thinking past the end: no transaction ends on any loop
    // after it, so nothing but the queue's closing lets the idle
    // connections go (without it they waited for the deadline, 23 s).
    let doc = pool("e.json", "8", "fixed:1700ms");
    assert!(
        count(&doc, &["result", "transactions"]) >= 8,
        "{}",
        doc["result"]
    );
}

#[test]
fn bad_client_threads_are_refused_with_the_fix() {
    let dir = Dir::new();
    let sqlite = dir.sqlite_url("x.db");
    for (args, words) in [
        (
            vec!["--client-threads", "0"],
            "--client-threads 0: give at least one",
        ),
        (
            vec!["--threads", "2", "--client-threads", "3"],
            "is more than --threads 2",
        ),
        (
            vec!["--client-threads", "1", "--db", &sqlite],
            "SQLite has no socket to wait on",
        ),
    ] {
        let mut all = vec!["run", "oltp_point_select"];
        all.extend(args);
        let r = dbsweep(&all);
        r.expect_status(2);
        assert!(r.stderr.contains(words), "{all:?}: {}", r.stderr);
    }
}
