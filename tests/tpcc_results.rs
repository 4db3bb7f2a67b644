//! TPC-C's results beyond the client's counts, on the fake driver and
//! SQLite: Delivery deferred through a queue (the terminal's response at
//! the queueing, the completion timed apart), the database's own count of
//! New-Orders beside the client's, the consistency verdict in the JSON
//! record and its reports, a load that resumes where it stopped (and a
//! bar that ends at 100 %), and the study report's TPC-C section.

mod util;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use dbsweep::driver::{self, Connection, Dialect, Target};
use dbsweep::engine::pacing::Mode;
use dbsweep::engine::{self, RunConfig};
use dbsweep::rand::pacing::Arrival;
use dbsweep::util::progress::Progress;
use dbsweep::workload::tpcc::terminal::{Delivery, Txn, DEFAULT_WEIGHTS, DEFERRED_DELIVERY};
use dbsweep::workload::tpcc::Tpcc;
use dbsweep::workload::{ClientScript, Op, OptionValues, Workload};
use util::{dbsweep, read_json, Dir};

fn config(threads: usize, users: usize, secs: u64) -> RunConfig {
    RunConfig {
        threads,
        time: Some(Duration::from_secs(secs)),
        events: None,
        rounds: None,
        warmup: Duration::ZERO,
        report_interval: None,
        interval_percentile: 95.0,
        max_retries: None,
        ignore_errors: Default::default(),
        grace: Duration::from_secs(5),
        seed: 9,
        reconnect_every: None,
        timeout: None,
        shard: None,
        client_threads: None,
        pipeline: None,
        release: None,
        pacing: Mode::Users {
            users,
            think_time: None,
            ramp_up: None,
        }
        .into(),
    }
}

/// (count, p50 ms, max ms) of each type of a no-wait run on the fake
/// driver, every statement taking 1 ms.
fn delivery_run(delivery: Delivery, threads: usize, users: usize) -> Vec<(String, u64, f64, f64)> {
    let w = Tpcc::new(
        1,
        [0, 0, 0, 1, 0],
        None,
        Dialect::Sqlite,
        9,
        OptionValues::default(),
    )
    .with_delivery(delivery);
    let target = Target::parse("fake://?latency=1ms&rows=1").unwrap();
    let connect: engine::Connect = Arc::new(move || driver::connect(&target));
    let res = engine::run(
        &w,
        connect,
        &config(threads, users, 2),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    res.types
        .iter()
        .map(|t| {
            let h = &t.latency;
            let ms = |ns: Option<u64>| ns.unwrap_or(0) as f64 / 1e6;
            (
                t.t.name.to_string(),
                h.count(),
                ms(h.value_at_percentile(50.0)),
                ms(h.max()),
            )
        })
        .collect()
}

#[test]
fn a_deferred_delivery_answers_at_the_queueing_and_times_its_completion() {
    // A deck of Deliveries only: each has at least a BEGIN, ten lookups of
    // the oldest order and a COMMIT at 1 ms each.
    let inline = delivery_run(Delivery::Inline, 2, 2);
    let find = |v: &[(String, u64, f64, f64)], n: &str| v.iter().find(|t| t.0 == n).cloned();
    let d = find(&inline, "delivery").unwrap();
    assert!(d.1 > 10, "{inline:?}");
    assert!(
        d.2 >= 12.0,
        "inline: the terminal waits for the districts: {d:?}"
    );
    assert!(find(&inline, "delivery_deferred").is_none(), "{inline:?}");

    let deferred = delivery_run(Delivery::Deferred, 2, 2);
    let queued = find(&deferred, "delivery").unwrap();
    let done = find(&deferred, "delivery_deferred").unwrap();
    // The terminal's response: the queueing, no statement: most take less
    // than the least an inline Delivery can (12 statements of 1 ms).
    assert!(queued.2 < 12.0, "queueing took {queued:?}");
    // The completion, from the queueing to the tenth district.
    assert!(done.2 >= 12.0, "{done:?}");
    // Every queued Delivery is executed, but those queued as the run ended.
    assert!(
        done.1 <= queued.1 && done.1 + 2 >= queued.1,
        "{queued:?} {done:?}"
    );
    // With more terminals than connections the execution borrows the
    // connection, and the terminal goes on thinking elsewhere: the run
    // still completes the queued ones.
    let pooled = delivery_run(Delivery::Deferred, 2, 10);
    let (q, e) = (
        find(&pooled, "delivery").unwrap(),
        find(&pooled, "delivery_deferred").unwrap(),
    );
    assert!(e.1 > 10 && e.1 + 2 >= q.1, "{pooled:?}");
}

#[test]
fn a_queued_delivery_is_handed_to_the_engine_once_and_runs_on_its_inputs() {
    let w = Tpcc::new(
        1,
        DEFAULT_WEIGHTS,
        None,
        Dialect::Sqlite,
        3,
        OptionValues::default(),
    )
    .with_delivery(Delivery::Deferred);
    let mut s = w.script();
    s.user(4);
    s.force_next(Txn::Delivery);
    // The terminal's transaction: no statement, type delivery.
    s.start();
    let carrier = s.inputs().carrier;
    assert!(s.next().is_none());
    assert_eq!(s.kind(), Some(Txn::Delivery.index() as u16));
    s.end(true);
    let _ = s.pause();
    assert!(s.deferred(), "the queued request is handed over");
    // Its execution: the ten districts, type delivery_deferred, on the
    // queued carrier, again after a retry.
    for _ in 0..2 {
        s.start();
        assert_eq!(s.kind(), Some(DEFERRED_DELIVERY));
        assert_eq!(s.inputs().carrier, carrier);
        assert!(matches!(s.next(), Some(Op::Begin { writes: true })));
    }
    s.end(true);
    assert!(!s.deferred(), "handed over once");
    // Inline, the same card runs its statements in the terminal's own
    // transaction and leaves nothing behind.
    let w = Tpcc::new(
        1,
        DEFAULT_WEIGHTS,
        None,
        Dialect::Sqlite,
        3,
        OptionValues::default(),
    );
    let mut s = w.script();
    s.user(4);
    s.force_next(Txn::Delivery);
    s.start();
    assert!(matches!(s.next(), Some(Op::Begin { writes: true })));
    s.end(true);
    assert!(!s.deferred());
}

#[test]
fn delivery_mode_is_an_option_and_a_bad_one_is_refused() {
    let r = dbsweep(&["run", "tpcc", "--db", "fake://", "--delivery", "later"]);
    r.expect_status(2);
    assert!(
        r.stderr.contains("invalid --delivery 'later': give inline")
            && r.stderr.contains("or deferred"),
        "{}",
        r.stderr
    );
}

fn prepare(url: &str, warehouses: &str) -> util::Run {
    dbsweep(&[
        "prepare",
        "tpcc",
        "--db",
        url,
        "--warehouses",
        warehouses,
        "--rand-seed",
        "4",
    ])
}

fn open(url: &str) -> Box<dyn Connection> {
    driver::connect(&Target::parse(url).unwrap()).unwrap()
}

fn number(conn: &mut dyn Connection, sql: &str) -> i64 {
    conn.query_text(sql).unwrap()[0][0]
        .as_deref()
        .unwrap()
        .parse::<f64>()
        .unwrap() as i64
}

#[test]
fn a_run_records_the_databases_new_orders_and_the_consistency_verdict() {
    let dir = Dir::new();
    let url = dir.sqlite_url("r.db");
    prepare(&url, "1").ok();
    let json = dir.join("r.json");
    let r = dbsweep(&[
        "run",
        "tpcc",
        "--db",
        &url,
        "--no-wait",
        "--delivery",
        "deferred",
        "--threads",
        "2",
        "--time",
        "3",
        "--check",
        "--json",
        json.to_str().unwrap(),
    ]);
    r.ok();
    assert!(
        r.stdout.contains("12 of 12 conditions hold"),
        "{}",
        r.stdout
    );
    let doc = read_json(&json);
    util::assert_valid_run_json(&doc);
    let result = &doc["result"];
    // The verdict, condition by condition.
    let conditions = result["consistency"].as_array().unwrap();
    assert_eq!(conditions.len(), 12);
    assert!(
        conditions.iter().all(|c| c["holds"] == true),
        "{conditions:?}"
    );
    assert!(conditions[0]["name"]
        .as_str()
        .unwrap()
        .starts_with("3.3.2.1 "));
    // The database's count of New-Orders against the client's: they
    // differ at most by the transactions in flight when the window opened.
    let counts = result["metrics"]["window_counts"].as_array().unwrap();
    let c = counts
        .iter()
        .find(|c| c["name"] == "sum(d_next_o_id)")
        .unwrap();
    let db = c["end"].as_f64().unwrap() - c["start"].as_f64().unwrap();
    let types = result["transaction_types"].as_array().unwrap();
    let client = types.iter().find(|t| t["name"] == "new_order").unwrap()["count"]
        .as_f64()
        .unwrap();
    assert!(
        db > 0.0 && (db - client).abs() <= 2.0,
        "database {db}, client {client}"
    );
    assert!(types.iter().any(|t| t["name"] == "delivery_deferred"));
    assert!(r.stdout.contains("the database's: "), "{}", r.stdout);
    // The report of the file says it again.
    let again = dbsweep(&["report", json.to_str().unwrap(), "--format", "text"]);
    again.ok();
    assert!(
        again
            .stdout
            .contains("after the run: consistent: 12 of 12 conditions hold"),
        "{}",
        again.stdout
    );
    assert!(
        again.stdout.contains("Delivery: deferred"),
        "{}",
        again.stdout
    );
    // TPC-C's results in the record, derived from its counts.
    let t = util::tpcc::check_record(&doc);
    assert_eq!(t["delivery"], "deferred");
    assert_eq!(
        (t["warehouses"].as_u64(), t["terminals"].as_u64()),
        (Some(1), Some(10))
    );
    assert_eq!(t["consistency"]["passed"].as_array().unwrap().len(), 12);
    assert!(t["server_nopm"].as_f64().unwrap() > 0.0, "{t}");
    assert!(
        t["server_tpm_absent"].as_str().unwrap().contains("SQLite"),
        "{t}"
    );
    // The run report states the same tpmC.
    let tpmc = t["tpmc"].as_f64().unwrap();
    assert!(
        r.stdout.contains(&format!("tpmC: {tpmc:.2} ")),
        "tpmC {tpmc} not in\n{}",
        r.stdout
    );
    // The file's JSON report derives the same figures again.
    let json_again = dbsweep(&[
        "report",
        json.to_str().unwrap(),
        "--format",
        "json",
        "--out",
        "-",
    ]);
    json_again.ok();
    let doc_again: serde_json::Value = serde_json::from_str(&json_again.stdout).unwrap();
    assert_eq!(doc_again["result"]["tpcc"], *t);
    // Its CSV: the point's figures and TPC-C's, one per line.
    let csv = dbsweep(&[
        "report",
        json.to_str().unwrap(),
        "--format",
        "csv",
        "--out",
        "-",
    ]);
    csv.ok();
    let lines = csv_figures(&csv.stdout);
    assert_same(lines["tpmc"].0, tpmc);
    assert_same(lines["nopm"].0, t["nopm"].as_f64().unwrap());
    assert!(lines["tps"].0 > 0.0);
    assert!(lines["efficiency_pct"].0.is_nan(), "{}", csv.stdout);
    assert!(lines["efficiency_pct"].1.contains("--no-wait"));
    assert!(lines["tpm_server"].1.contains("SQLite"), "{}", csv.stdout);
    assert_eq!(lines["consistency_failed"].0, 0.0);
    assert_eq!(
        lines["consistency_failed"].1,
        "consistent: 12 of 12 conditions hold"
    );
    assert!(
        lines["new_order:p90_ms"].1.starts_with("limit 5 s: "),
        "{}",
        csv.stdout
    );
    assert!(lines["delivery_deferred:p90_ms"]
        .1
        .starts_with("limit 80 s: "));
    assert!(lines["payment:share_pct"].1.starts_with("minimum 43 %: "));
}

/// A figure of the CSV is the JSON's: the same value, written as the
/// shortest text that reads back as it (serde_json's parser may read that
/// text one unit in the last place off).
#[track_caller]
fn assert_same(csv: f64, json: f64) {
    assert!(
        (csv - json).abs() <= 1e-12 * csv.abs().max(json.abs()),
        "CSV {csv}, JSON {json}"
    );
}

/// The fields of one CSV line (RFC 4180 quoting, no line breaks).
fn csv_fields(line: &str) -> Vec<String> {
    let (mut out, mut field, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    out.push(field);
    out
}

/// `(workload, figure) → (value, note)` of a report's `point` lines (NaN
/// for an empty value), its header checked.
fn csv_points(csv: &str) -> std::collections::HashMap<(String, String), (f64, String)> {
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("record,panel,workload,cpus,series,clients,repeat,shard,figure,value,n,stddev,ci95,min,max,note")
    );
    lines
        .map(csv_fields)
        .filter(|f| f[0] == "point")
        .map(|f| {
            let value = f[9].parse().unwrap_or(f64::NAN);
            ((f[2].clone(), f[8].clone()), (value, f[15].clone()))
        })
        .collect()
}

/// `figure → (value, note)` of a report's `point` lines of one workload.
fn csv_figures(csv: &str) -> std::collections::HashMap<String, (f64, String)> {
    csv_points(csv)
        .into_iter()
        .map(|((_, figure), v)| (figure, v))
        .collect()
}

/// Counts what a load announces and what it reports done.
#[derive(Default)]
struct Counting {
    total: AtomicU64,
    done: AtomicU64,
}

impl Progress for Counting {
    fn start(&self, _what: &str, total: u64) {
        self.total.fetch_add(total, Ordering::Relaxed);
    }
    fn inc(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }
    fn finish(&self) {}
}

#[test]
fn a_stopped_load_resumes_without_loading_a_warehouse_again() {
    let dir = Dir::new();
    let url = dir.sqlite_url("s.db");
    let target = Target::parse(&url).unwrap();
    let w = Tpcc::new(
        2,
        DEFAULT_WEIGHTS,
        None,
        Dialect::Sqlite,
        4,
        OptionValues::default(),
    );
    let connect = || driver::connect(&target);
    let bar = Counting::default();
    w.prepare(&connect, 1, &bar).unwrap();
    // The bar ends at 100 %: order-line slots without a line count too.
    let total = bar.total.load(Ordering::Relaxed);
    assert!(total > 0);
    assert_eq!(bar.done.load(Ordering::Relaxed), total);

    // A load stopped while warehouse 1 was loading and warehouse 2, loaded
    // alongside it, was in: its marks say the items and warehouse 2 are
    // in, warehouse 1 holds part of its rows, and one index of an earlier
    // attempt is in place. Warehouse 2 carries a mark of its own.
    let mut c = open(&url);
    for sql in [
        "CREATE TABLE tpcc_load (warehouse INTEGER)",
        "INSERT INTO tpcc_load VALUES (0), (2)",
        "DROP INDEX customer_name",
        "DELETE FROM customer WHERE c_w_id = 1 AND c_id > 1000",
        "DELETE FROM order_line WHERE ol_w_id = 1",
        "DELETE FROM stock WHERE s_w_id = 1 AND s_i_id > 5",
        "UPDATE warehouse SET w_name = 'KEPT' WHERE w_id = 2",
    ] {
        c.execute_sql(sql).unwrap();
    }
    // Neither a run nor a load at another scale goes ahead on it.
    let r = dbsweep(&[
        "run",
        "tpcc",
        "--db",
        &url,
        "--warehouses",
        "2",
        "--time",
        "1",
    ]);
    r.expect_status(2);
    assert!(
        r.stderr
            .contains("stopped part-way (1 of 2 warehouses loaded)")
            && r.stderr.contains("dbsweep prepare tpcc --warehouses 2"),
        "{}",
        r.stderr
    );
    let r = prepare(&url, "3");
    r.expect_status(2);
    assert!(
        r.stderr
            .contains("run `dbsweep prepare tpcc --warehouses 2` to finish it"),
        "{}",
        r.stderr
    );
    // Resumed: warehouse 1 cleared and loaded again, warehouse 2 kept.
    let r = prepare(&url, "2");
    r.ok();
    let mut c = open(&url);
    assert_eq!(
        c.query_text("SELECT w_name FROM warehouse WHERE w_id = 2")
            .unwrap()[0][0]
            .as_deref(),
        Some("KEPT")
    );
    assert_eq!(number(c.as_mut(), "SELECT count(*) FROM customer"), 60_000);
    assert_eq!(number(c.as_mut(), "SELECT count(*) FROM stock"), 200_000);
    assert!(!c.table_exists("tpcc_load").unwrap());
    let check = dbsweep(&["check", "tpcc", "--db", &url]);
    check.ok();
    assert!(
        check.stdout.contains("12 of 12 conditions hold"),
        "{}",
        check.stdout
    );
    // A complete database is not loaded again.
    let r = prepare(&url, "2");
    r.expect_status(2);
    assert!(r.stderr.contains("already exists"), "{}", r.stderr);
}

#[test]
fn a_killed_load_is_finished_by_prepare_again() {
    let dir = Dir::new();
    let url = dir.sqlite_url("k.db");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_dbsweep"))
        .args(["prepare", "tpcc", "--db", &url, "--warehouses", "2"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed once warehouse 1 is marked, while warehouse 2 loads.
    let deadline = std::time::Instant::now() + Duration::from_secs(300);
    let mut marked = false;
    while std::time::Instant::now() < deadline && !marked {
        std::thread::sleep(Duration::from_millis(10));
        if let Ok(mut c) = driver::connect(&Target::parse(&url).unwrap()) {
            marked = c
                .query_text("SELECT count(*) FROM tpcc_load WHERE warehouse = 1")
                .is_ok_and(|r| r[0][0].as_deref() == Some("1"));
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(marked, "warehouse 1 was never marked loaded");
    let mut c = open(&url);
    assert!(c.table_exists("tpcc_load").unwrap());
    drop(c);
    let r = dbsweep(&["prepare", "tpcc", "--db", &url, "--warehouses", "2"]);
    r.ok();
    let mut c = open(&url);
    assert!(!c.table_exists("tpcc_load").unwrap());
    assert_eq!(number(c.as_mut(), "SELECT count(*) FROM customer"), 60_000);
    dbsweep(&["check", "tpcc", "--db", &url]).ok();
}

#[test]
fn a_study_report_has_a_tpcc_results_page() {
    let dir = Dir::new();
    let file = dir.join("t.toml");
    std::fs::write(
        &file,
        format!(
            r#"
name = "t"
clients = [2]

[[target]]
name = "lite"
url = "{}"

[[workload]]
name = "tpcc"
options = {{ warehouses = 1, no-wait = "on" }}
time = 2
check = true

[[workload]]
name = "oltp_point_select"
options = {{ table-size = 100 }}
time = 1
"#,
            dir.sqlite_url("study.db")
        ),
    )
    .unwrap();
    let out = dir.join("out");
    dbsweep(&[
        "study",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
    .ok();
    let r = dbsweep(&[
        "report",
        out.to_str().unwrap(),
        "--format",
        "text",
        "--out",
        "-",
    ]);
    r.ok();
    for words in [
        "TPC-C results",
        "tpmC",
        "NOPM (database)",
        "efficiency % (waits only)",
        "n/m",
        "limit (clause 5.2.5.3)",
        "minimum (clause 5.2.3)",
        "consistent: 12 of 12 conditions hold in 1 of 1 repeats",
        "lite / ",
        "warehouses",
        "terminals",
    ] {
        assert!(r.stdout.contains(words), "no '{words}' in\n{}", r.stdout);
    }

    // The JSON report: each TPC-C point's results, as its record's JSON
    // carries them; none for the other workload's point.
    let json = dbsweep(&[
        "report",
        out.to_str().unwrap(),
        "--format",
        "json",
        "--out",
        "-",
    ]);
    json.ok();
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let schema = read_json(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/report.schema.json"),
    );
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    let tpcc = points.iter().find(|p| p["workload"] == "tpcc").unwrap();
    let other = points.iter().find(|p| p["workload"] != "tpcc").unwrap();
    assert!(other.get("tpcc").is_none(), "{other}");
    let t = util::tpcc::check_point(tpcc);
    assert_eq!(t["consistency"]["holds"], true);
    assert_eq!(
        (t["warehouses"].as_u64(), t["terminals"].as_u64()),
        (Some(1), Some(10))
    );
    // The same tpmC as the text report's table (the mean of one repeat).
    let tpmc = t["tpmc"].as_f64().unwrap();
    assert!(
        r.stdout.contains(&format!("{tpmc:.2}")),
        "tpmC {tpmc} not in\n{}",
        r.stdout
    );

    // The CSV report: the TPC-C point's results on lines of their own, none
    // on the other point.
    let csv = dbsweep(&[
        "report",
        out.to_str().unwrap(),
        "--format",
        "csv",
        "--out",
        "-",
    ]);
    csv.ok();
    let points = csv_points(&csv.stdout);
    let at = |figure: &str| {
        points
            .get(&("tpcc".to_string(), figure.to_string()))
            .unwrap_or_else(|| panic!("no {figure} line in\n{}", csv.stdout))
            .clone()
    };
    assert_same(at("tpmc").0, tpmc);
    assert_same(at("nopm").0, t["nopm"].as_f64().unwrap());
    match t["server_nopm"].as_f64() {
        Some(v) => assert_same(at("nopm_server").0, v),
        None => assert_eq!(
            at("nopm_server").1,
            t["server_nopm_absent"].as_str().unwrap()
        ),
    }
    assert_eq!(at("warehouses").0, 1.0);
    assert_eq!(at("consistency_failed").0, 0.0);
    assert!(at("efficiency_pct").0.is_nan());
    for ty in t["types"].as_array().unwrap() {
        let (p90, note) = at(&format!("{}:p90_ms", ty["name"].as_str().unwrap()));
        match ty["p90_ms"].as_f64() {
            Some(v) => assert_same(p90, v),
            None => assert!(p90.is_nan()),
        }
        let verdict = if ty["within"] == true {
            "within"
        } else {
            "above"
        };
        assert!(
            note.ends_with(verdict) || ty["within"].is_null(),
            "{note} {ty}"
        );
    }
    let other_lines = points.keys().filter(|(w, _)| w != "tpcc").count();
    assert_eq!(
        other_lines, 8,
        "the other point has its five figures, when and where it ran (start, end, machine: it \
         restarted no server) and no TPC-C line:\n{}",
        csv.stdout
    );
}

#[test]
fn at_a_rate_each_connection_runs_the_arrivals_as_its_own_terminal() {
    // An open loop's arrivals belong to no terminal until a connection
    // takes them; its own terminal runs them (before, each arrival asked
    // for terminal u32::MAX, and the run died allocating 32 GiB).
    let w = Tpcc::new(
        1,
        DEFAULT_WEIGHTS,
        None,
        Dialect::Sqlite,
        9,
        OptionValues::default(),
    );
    let target = Target::parse("fake://?latency=1ms&rows=1").unwrap();
    let connect: engine::Connect = Arc::new(move || driver::connect(&target));
    let mut cfg = config(2, 2, 2);
    cfg.pacing = Mode::Open {
        rate: 20.0,
        arrival: Arrival::Uniform,
    }
    .into();
    let res = engine::run(&w, connect, &cfg, &AtomicBool::new(false), &mut |_| {}).unwrap();
    let n: u64 = res.types.iter().map(|t| t.latency.count()).sum();
    // 40 arrivals in two seconds, evenly spaced, each some twenty 1 ms
    // statements on 2 connections (room for ~100/s): all of them served,
    // give or take one at the edges.
    assert!((38..=41).contains(&n), "{n} transactions at 20/s for 2 s");
}
