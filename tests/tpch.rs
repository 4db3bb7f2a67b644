//! TPC-H through the binary: the power and throughput tests on SQLite
//! with their figures checked against the record's own timings, the
//! refresh sets taken up where the last run left them, the 22 queries'
//! answers at scale factor 0.01 against the stored ones on SQLite,
//! MariaDB and PostgreSQL (servers started by the test), and bad input.

mod util;

use std::path::Path;

use dbsweep::driver::Dialect;
use dbsweep::workload::tpch::{order_index, orders};
use util::{dbsweep, read_json, Dir, Server};

/// A number of the record's JSON.
fn num(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Runs tpch on `db` at SF 0.01 with `extra`; the record.
fn run(dir: &Dir, db: &str, name: &str, extra: &[&str]) -> serde_json::Value {
    let json = dir.join(&format!("{name}.json")).display().to_string();
    let mut a = vec![
        "run", "tpch", "--db", db, "--scale", "0.01", "--json", &json,
    ];
    a.extend_from_slice(extra);
    dbsweep(&a).ok();
    let doc = read_json(Path::new(&json));
    util::assert_valid_run_json(&doc);
    doc
}

/// The smallest and largest order numbers in the SQLite database at `path`.
fn order_span(path: &Path) -> (i64, i64, i64) {
    let c = rusqlite::Connection::open(path).unwrap();
    let (min, max, n): (i64, i64, i64) = c
        .query_row(
            "SELECT min(o_orderkey), max(o_orderkey), count(*) FROM orders",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    (order_index(min), order_index(max), n)
}

#[test]
fn power_and_throughput_tests_on_sqlite_with_their_figures() {
    let dir = Dir::new();
    let path = dir.join("h.db");
    let db = dir.sqlite_url("h.db");
    dbsweep(&["prepare", "tpch", "--db", &db, "--scale", "0.01"]).ok();
    let base = orders(0.01);
    assert_eq!(order_span(&path), (1, base, base));

    // The power test: RF1, the 22 queries, RF2, each once.
    let doc = run(&dir, &db, "power", &[]);
    let t = &doc["result"]["tpch"];
    assert_eq!(t["test"], "power", "{t}");
    assert_eq!(t["streams"], 1);
    let timings = t["timings"].as_array().unwrap();
    let names: Vec<&str> = timings
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 24);
    assert_eq!(
        (names[0], names[21], names[22], names[23]),
        ("Q1", "Q22", "RF1", "RF2")
    );
    assert!(
        timings.iter().all(|x| x["count"] == 1 && x["failed"] == 0),
        "{t}"
    );
    // Power@Size from the 24 intervals, recomputed here (none is below
    // a thousandth of the longest at this size? then the floor applies).
    let v: Vec<f64> = timings.iter().map(|x| num(&x["mean_s"])).collect();
    let floor = v.iter().cloned().fold(0.0, f64::max) / 1000.0;
    let g = (v.iter().map(|x| x.max(floor).ln()).sum::<f64>() / 24.0).exp();
    let power = num(&t["power"]);
    assert!(
        (power - 3600.0 * 0.01 / g).abs() < 1e-6 * power,
        "{power} vs {}",
        36.0 / g
    );
    assert!(t["throughput"].is_null() && t["throughput_absent"].is_string());
    assert!(t["departures"][0]
        .as_str()
        .unwrap()
        .contains("0.01 is not one"));
    // RF1 added set 1 after the base orders, RF2 deleted the oldest set.
    let per = base / 1000;
    assert_eq!(order_span(&path), (per + 1, base + per, base));

    // The throughput test: two query streams and the refresh stream.
    let doc = run(&dir, &db, "throughput", &["--threads", "3"]);
    let t = &doc["result"]["tpch"];
    assert_eq!(
        (t["test"].as_str(), t["streams"].as_u64()),
        (Some("throughput"), Some(2))
    );
    let timings = t["timings"].as_array().unwrap();
    for x in timings {
        assert_eq!(x["count"], 2, "{x}");
    }
    let ts = num(&doc["result"]["measured_s"]);
    assert_eq!(num(&t["elapsed_s"]), ts);
    let throughput = num(&t["throughput"]);
    let want = 2.0 * 22.0 * 3600.0 / ts * 0.01;
    assert!(
        (throughput - want).abs() < 1e-9 * want,
        "{throughput} vs {want}"
    );
    assert!(t["power"].is_null());
    // Sets 2 and 3 inserted and deleted: the next run continues with 4.
    assert_eq!(order_span(&path), (3 * per + 1, base + 3 * per, base));
    let doc = run(&dir, &db, "again", &["--refresh", "off", "--qualification"]);
    let d = doc["result"]["tpch"]["departures"].as_array().unwrap();
    assert_eq!(d.len(), 3, "{d:?}");
    assert_eq!(order_span(&path), (3 * per + 1, base + 3 * per, base));
    timeouts_end_queries_not_the_run(&dir, &db, "sqlite");
}

/// A power test whose queries have 1 ms each: the slow ones end as
/// timeouts, counted as such and as failed queries, named in the reason
/// Power@Size is absent, and the stream goes on to its 22nd query.
fn timeouts_end_queries_not_the_run(dir: &Dir, db: &str, kind: &str) {
    let doc = run(
        dir,
        db,
        "timeouts",
        &["--refresh", "off", "--query-timeout", "1ms"],
    );
    let r = &doc["result"];
    let timeouts = r["errors"]["timeout"].as_u64().unwrap();
    assert!(timeouts > 0, "{kind}: no query took 1 ms? {}", r["errors"]);
    assert_eq!(util::record::errors_total(r), timeouts, "{kind}");
    let failed = r["failed_transactions"].as_u64().unwrap();
    assert_eq!(failed, timeouts, "{kind}: one timeout fails one query");
    assert_eq!(r["transactions"].as_u64().unwrap() + failed, 22, "{kind}");
    let t = &r["tpch"];
    let timings = t["timings"].as_array().unwrap();
    let failed_named: u64 = timings.iter().map(|x| x["failed"].as_u64().unwrap()).sum();
    assert_eq!(failed_named, failed, "{kind}: {t}");
    assert!(t["power"].is_null(), "{kind}: {t}");
    let why = t["power_absent"].as_str().unwrap();
    assert!(
        why.contains("failed 1 of 1 times") && why.contains("--query-timeout"),
        "{kind}: {why}"
    );
    let r = dbsweep(&[
        "run",
        "tpch",
        "--db",
        db,
        "--scale",
        "0.01",
        "--query-timeout",
        "soon",
    ]);
    r.expect_status(2);
    assert!(
        r.stderr.contains("--query-timeout soon: bad duration"),
        "{}",
        r.stderr
    );
}

#[test]
fn answers_at_scale_001_match_the_stored_ones_on_sqlite() {
    let dir = Dir::new();
    let db = dir.sqlite_url("a.db");
    dbsweep(&["prepare", "tpch", "--db", &db, "--scale", util::tpch::SCALE]).ok();
    let diffs = util::tpch::differences(&db, Dialect::Sqlite);
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

/// Loads SF 0.01 on a server, compares the answers with the stored ones,
/// then runs the power test (prepared statements) and a throughput test
/// (statements as text, on event loops).
fn on_server(kind: &'static str, dialect: Dialect) {
    let s = Server::start(kind, &[]);
    let dir = Dir::new();
    let url = s.url.as_str();
    dbsweep(&["prepare", "tpch", "--db", url, "--scale", util::tpch::SCALE]).ok();
    let diffs = util::tpch::differences(url, dialect);
    assert!(diffs.is_empty(), "{kind}:\n{}", diffs.join("\n"));
    let doc = run(&dir, url, "power", &[]);
    assert!(num(&doc["result"]["tpch"]["power"]) > 0.0, "{kind}");
    let doc = run(
        &dir,
        url,
        "throughput",
        &[
            "--threads",
            "3",
            "--db-ps-mode",
            "disable",
            "--client-threads",
            "1",
        ],
    );
    let t = &doc["result"]["tpch"];
    assert!(num(&t["throughput"]) > 0.0, "{kind}: {t}");
    assert_eq!(util::record::errors_total(&doc["result"]), 0, "{kind}");
    timeouts_end_queries_not_the_run(&dir, url, kind);
}

#[test]
fn answers_and_tests_on_mariadb() {
    on_server("mariadb", Dialect::Mysql);
}

#[test]
fn answers_and_tests_on_postgres() {
    on_server("postgres", Dialect::Postgres);
}

#[test]
fn bad_input_is_named_with_its_fix() {
    let dir = Dir::new();
    let db = dir.sqlite_url("b.db");
    let r = dbsweep(&["prepare", "tpch", "--db", &db, "--scale", "1000"]);
    r.expect_status(2);
    assert!(
        r.stderr
            .contains("--scale 1000: TPC-H's scale factor must be from"),
        "{}",
        r.stderr
    );
    assert!(!dir.join("b.db").exists() || r.stderr.contains("scale"));
    dbsweep(&["prepare", "tpch", "--db", &db, "--scale", "0.01"]).ok();
    let r = dbsweep(&["run", "tpch", "--db", &db, "--scale", "0.02"]);
    r.expect_status(2);
    assert!(
        r.stderr
            .contains("supplier holds 100 rows, and TPC-H at --scale 0.02 has 200"),
        "{}",
        r.stderr
    );
    let r = dbsweep(&["check", "tpch", "--db", &db, "--scale", "0.01"]);
    r.expect_status(2);
    assert!(
        r.stderr.contains("answers for scale factor 1 only"),
        "{}",
        r.stderr
    );
}

/// Writes the stored answers from the PostgreSQL database at
/// `DBSWEEP_TPCH_ANSWERS_FROM` (TPC-H at SF 0.01, as loaded): how
/// `tests/fixtures/tpch/sf0.01` was made.
#[test]
#[ignore]
fn write_stored_answers() {
    let url = std::env::var("DBSWEEP_TPCH_ANSWERS_FROM").expect("a PostgreSQL URL");
    util::tpch::write_answers(&url, Dialect::Postgres);
}

/// A study of a power test (1 client) and a throughput test (3): the
/// report's TPC-H section gives QphH@Size as the geometric mean of the
/// two points' figures, and the JSON report carries each point's.
#[test]
fn a_study_reports_qphh_from_its_power_and_throughput_points() {
    let dir = Dir::new();
    let study = dir.join("h.toml");
    let db = dir.join("h.db").display().to_string();
    let db2 = dir.join("h2.db").display().to_string();
    std::fs::write(
        &study,
        format!(
            "name = \"tpch-sqlite\"\nclients = [1, 3]\nrepeats = 1\n\n[[target]]\nname = \"sqlite\"\n\
             sqlite = \"{db}\"\n\n[[target]]\nname = \"sqlite2\"\nsqlite = \"{db2}\"\n\n\
             [[workload]]\nname = \"tpch\"\noptions = {{ scale = 0.01 }}\n"
        ),
    )
    .unwrap();
    let out = dir.join("out").display().to_string();
    dbsweep(&["study", &study.display().to_string(), "--out", &out]).ok();
    dbsweep(&["report", &out, "--format", "json"]).ok();
    let report = read_json(&dir.join("out/report.json"));
    util::assert_valid_report_json(&report);
    let points = report["points"].as_array().unwrap();
    let of = |clients: u64, key: &str| {
        let p = points
            .iter()
            .find(|p| p["clients"] == clients && p["target"] == "sqlite")
            .unwrap();
        num(&p["tpch"][key])
    };
    let qphh = (of(1, "power") * of(3, "throughput")).sqrt();
    let text = dbsweep(&["report", &out, "--format", "text"]);
    text.ok();
    let row = text
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("TPC-H: Power@Size"))
        .find(|l| l.starts_with("sqlite / base, SF 0.01"))
        .unwrap_or_else(|| panic!("no TPC-H row:\n{}", text.stdout));
    let cells: Vec<f64> = row
        .split_whitespace()
        .filter_map(|c| c.parse().ok())
        .collect();
    // Power, repeats, Throughput (2 streams), QphH.
    assert_eq!(cells.len(), 5, "{row}");
    assert!(
        (cells[4] - qphh).abs() <= 0.05 + 1e-9 * qphh,
        "{row}: QphH {qphh:.1}"
    );
    assert!(
        text.stdout.contains("Q14"),
        "the power test's timings by query"
    );
}
