//! CH-benCHmark through the binary on SQLite, MariaDB and PostgreSQL (the
//! servers started by the test): one warehouse prepared with CH's three
//! tables; a point with terminals and a stream, whose record carries tpmC
//! and QphH from its own counts, every query run without an error and
//! TPC-C's consistency holding after it; the queries alone and the
//! terminals alone; and bad input.

mod util;

use std::path::Path;

use serde_json::Value;
use util::{dbsweep, read_json, Dir, Server};

/// Runs chbench on `db` with `extra`; the record.
fn run(dir: &Dir, db: &str, name: &str, extra: &[&str]) -> Value {
    let json = dir.join(&format!("{name}.json")).display().to_string();
    let mut a = vec![
        "run",
        "chbench",
        "--db",
        db,
        "--warehouses",
        "1",
        "--query-timeout",
        "60s",
        "--json",
        &json,
    ];
    a.extend_from_slice(extra);
    dbsweep(&a).ok();
    let doc = read_json(Path::new(&json));
    util::assert_valid_run_json(&doc);
    doc
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Prepares one warehouse on `db`, then the three points and the check.
fn campaign(db: &str, kind: &str) {
    let dir = Dir::new();
    dbsweep(&["prepare", "chbench", "--db", db, "--warehouses", "1"]).ok();

    // Two terminals and one stream, long enough for the stream to run
    // every query at least once.
    let doc = run(&dir, db, "mixed", &["--threads", "3", "--time", "25"]);
    let r = &doc["result"];
    let c = &r["chbench"];
    assert_eq!((c["terminals"].as_u64(), c["analytic_streams"].as_u64()), (Some(2), Some(1)), "{kind}: {c}");
    assert_eq!(util::record::errors_total(r), 0, "{kind}: {}", r["errors"]);
    // tpmC is TPC-C's own figure of the same run; QphH the queries'
    // count over the window.
    assert_eq!(c["tpmc"], r["tpcc"]["tpmc"], "{kind}");
    assert!(num(&c["tpmc"]) > 0.0, "{kind}");
    let queries = c["queries"].as_u64().unwrap();
    let timings = c["timings"].as_array().unwrap();
    assert_eq!(timings.len(), 22, "{kind}");
    assert_eq!(queries, timings.iter().map(|t| t["count"].as_u64().unwrap()).sum::<u64>());
    let qphh = num(&c["qphh"]);
    let want = queries as f64 * 3600.0 / num(&r["measured_s"]);
    assert!((qphh - want).abs() < 1e-9 * want, "{kind}: {qphh} vs {want}");
    // TPC-C's mix is the terminals': the queries are not cards of it.
    let payment = r["tpcc"]["mix"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "payment")
        .unwrap();
    assert!(num(&payment["share_pct"]) > 30.0, "{kind}: {payment}");

    // The transactions kept TPC-C's consistency with the queries beside.
    let r = dbsweep(&["check", "chbench", "--db", db, "--warehouses", "1"]);
    r.ok();
    assert!(r.stdout.contains("3.3.2.1"), "{}", r.stdout);

    // Terminals alone: no QphH; the stream alone: no tpmC.
    let doc = run(&dir, db, "oltp", &["--threads", "2", "--analytic-streams", "0", "--time", "3"]);
    let c = &doc["result"]["chbench"];
    assert!(c["qphh"].is_null() && num(&c["tpmc"]) > 0.0, "{kind}: {c}");
    let doc = run(&dir, db, "olap", &["--threads", "1", "--time", "3"]);
    let c = &doc["result"]["chbench"];
    assert!(c["tpmc"].is_null() && c["terminals"] == 0, "{kind}: {c}");
}

#[test]
fn terminals_and_streams_on_sqlite() {
    let dir = Dir::new();
    campaign(&dir.sqlite_url("ch.db"), "sqlite");
}

#[test]
fn terminals_and_streams_on_mariadb() {
    let s = Server::start("mariadb", &[]);
    campaign(&s.url, "mariadb");
}

#[test]
fn terminals_and_streams_on_postgres() {
    let s = Server::start("postgres", &[]);
    campaign(&s.url, "postgres");
}

#[test]
fn bad_input_is_named_with_its_fix() {
    let dir = Dir::new();
    let db = dir.sqlite_url("b.db");
    let r = dbsweep(&["prepare", "chbench", "--db", &db, "--warehouses", "0"]);
    r.expect_status(2);
    assert!(r.stderr.contains("invalid --warehouses 0"), "{}", r.stderr);
    let r = dbsweep(&["run", "chbench", "--db", &db, "--warehouses", "1"]);
    r.expect_status(2);
    assert!(r.stderr.contains("prepare"), "{}", r.stderr);
    dbsweep(&["prepare", "chbench", "--db", &db, "--warehouses", "1"]).ok();
    let r = dbsweep(&[
        "run", "chbench", "--db", &db, "--threads", "2", "--analytic-streams", "3",
    ]);
    r.expect_status(2);
    assert!(
        r.stderr.contains("--analytic-streams 3 is more than the run's 2 connections"),
        "{}",
        r.stderr
    );
}
