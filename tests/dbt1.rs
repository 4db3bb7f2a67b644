//! DBT-1 on SQLite and the fake driver: the loaded data (row counts per
//! scale, keys, determinism, DigSyl logins, order totals), the mix each
//! matrix converges to through the engine, the think time, and bad input.
//! The interactions' rows on every engine are in `dbt1_servers.rs`.

mod util;

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use dbsweep::driver::{self, Connection, Dialect, Target};
use dbsweep::engine::pacing::Mode;
use dbsweep::engine::{self, RunConfig};
use dbsweep::rand::pacing::ThinkTime;
use dbsweep::rand::Rng;
use dbsweep::workload::dbt1::mix::{Interaction, Mix};
use dbsweep::workload::dbt1::schema::{Data, Scale};
use dbsweep::workload::dbt1::text::digsyl_string;
use dbsweep::workload::dbt1::{Dbt1, THINK_TIME};
use dbsweep::workload::OptionValues;
use util::{dbsweep, read_json, Dir};

fn rows(conn: &mut dyn Connection, sql: &str) -> Vec<Vec<Option<String>>> {
    conn.query_text(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn int(conn: &mut dyn Connection, sql: &str) -> i64 {
    rows(conn, sql)[0][0]
        .as_deref()
        .unwrap_or("0")
        .parse::<f64>()
        .unwrap_or_else(|_| panic!("{sql}: not a number")) as i64
}

fn prepare(dir: &Dir, name: &str, seed: &str) -> String {
    let url = dir.sqlite_url(name);
    dbsweep(&[
        "prepare",
        "dbt1",
        "--db",
        &url,
        "--items",
        "1000",
        "--ebs",
        "1",
        "--rand-seed",
        seed,
    ])
    .ok();
    url
}

fn open(url: &str) -> Box<dyn Connection> {
    driver::connect(&Target::parse(url).unwrap()).unwrap()
}

#[test]
fn data_has_the_scales_rows_consistent_keys_and_logins() {
    let dir = Dir::new();
    let url = prepare(&dir, "a.db", "7");
    let mut c = open(&url);
    let c = c.as_mut();
    // Exact counts: TPC-W's sizes, and the generator's own line count.
    let data = Data::new(Scale::new(1000, 1), Dialect::Sqlite, 7);
    let expected = data.rows();
    assert_eq!(expected[..6], [92, 250, 1000, 2880, 5760, 2592]);
    for (t, n) in [
        "country",
        "author",
        "item",
        "customer",
        "address",
        "orders",
        "order_line",
        "cc_xacts",
    ]
    .iter()
    .zip(expected)
    {
        assert_eq!(
            int(c, &format!("SELECT COUNT(*) FROM {t}")),
            i64::from(n),
            "{t}"
        );
    }
    let lines = i64::from(expected[6]);
    assert!((2592..=5 * 2592).contains(&lines));
    assert_eq!(int(c, "SELECT COUNT(*) FROM shopping_cart"), 0);
    // Every key points at a row.
    for (what, sql) in [
        ("line's item", "SELECT COUNT(*) FROM order_line WHERE ol_i_id NOT IN (SELECT i_id FROM item)"),
        ("line's order", "SELECT COUNT(*) FROM order_line WHERE ol_o_id NOT IN (SELECT o_id FROM orders)"),
        ("order's customer", "SELECT COUNT(*) FROM orders WHERE o_c_id NOT IN (SELECT c_id FROM customer)"),
        ("order without lines", "SELECT COUNT(*) FROM orders WHERE o_id NOT IN (SELECT ol_o_id FROM order_line)"),
        ("order without card", "SELECT COUNT(*) FROM orders WHERE o_id NOT IN (SELECT cx_o_id FROM cc_xacts)"),
        ("order's addresses", "SELECT COUNT(*) FROM orders WHERE o_bill_addr_id NOT IN (SELECT addr_id FROM address) OR o_ship_addr_id NOT IN (SELECT addr_id FROM address)"),
        ("customer's address", "SELECT COUNT(*) FROM customer WHERE c_addr_id NOT IN (SELECT addr_id FROM address)"),
        ("item's author", "SELECT COUNT(*) FROM item WHERE i_a_id NOT IN (SELECT a_id FROM author)"),
        ("related item", "SELECT COUNT(*) FROM item WHERE i_related5 NOT IN (SELECT i_id FROM item)"),
        ("address's country", "SELECT COUNT(*) FROM address WHERE addr_co_id NOT IN (SELECT co_id FROM country)"),
        ("shipped before placed", "SELECT COUNT(*) FROM orders WHERE o_ship_date < o_date"),
        ("card amount", "SELECT COUNT(*) FROM orders, cc_xacts WHERE cx_o_id = o_id AND cx_xact_amt <> o_total"),
    ] {
        assert_eq!(int(c, sql), 0, "{what}");
    }
    // DBT-1's bugs, fixed: ships after it is placed (not always the same
    // moment), birth dates from 1880.
    assert!(int(c, "SELECT COUNT(*) FROM orders WHERE o_ship_date > o_date") > 2000);
    assert!(
        int(
            c,
            "SELECT COUNT(*) FROM customer WHERE c_birthdate < '1900-01-01'"
        ) > 100
    );
    // An order's totals are its lines'.
    for r in rows(
        c,
        "SELECT o_sub_total, (SELECT SUM(ol_qty * i_cost * (1 - ol_discount)) FROM order_line, item \
         WHERE ol_o_id = o_id AND i_id = ol_i_id) FROM orders WHERE o_id <= 200",
    ) {
        let f = |i: usize| r[i].as_deref().unwrap().parse::<f64>().unwrap();
        assert!((f(0) - f(1)).abs() < 0.01, "{r:?}");
    }
    // Users log in by DigSyl(c_id) and its lower case.
    for id in [1u64, 77, 1000, 2880] {
        let u = digsyl_string(id, 0);
        let sql = format!(
            "SELECT c_id FROM customer WHERE c_uname = '{u}' AND c_passwd = '{}'",
            u.to_lowercase()
        );
        assert_eq!(int(c, &sql), id as i64);
    }
    // Title and author searches find the DigSyl words they look for.
    let w = digsyl_string(17, 7);
    assert!(
        int(
            c,
            &format!("SELECT COUNT(*) FROM item WHERE i_title LIKE '%{w}%'")
        ) >= 1
    );
    assert!(
        int(
            c,
            &format!("SELECT COUNT(*) FROM author WHERE a_lname LIKE '%{w}%'")
        ) >= 1
    );
}

#[test]
fn the_same_seed_loads_the_same_rows() {
    let dir = Dir::new();
    let (a, b, other) = (
        prepare(&dir, "a.db", "11"),
        prepare(&dir, "b.db", "11"),
        prepare(&dir, "c.db", "12"),
    );
    let dump = |url: &str| {
        let mut c = open(url);
        ["item", "customer", "orders", "order_line", "cc_xacts"]
            .iter()
            .map(|t| rows(c.as_mut(), &format!("SELECT * FROM {t} ORDER BY 1, 2")))
            .collect::<Vec<_>>()
    };
    let da = dump(&a);
    assert!(da == dump(&b), "same seed, different rows");
    assert!(da != dump(&other), "another seed gave the same rows");
}

/// Each interaction's share over `events` interactions of `users` users
/// with no think time on the fake driver.
fn shares(mix: Mix, events: u64) -> BTreeMap<&'static str, (f64, f64)> {
    let w = Dbt1::new(
        Scale::new(1000, 1),
        mix,
        Dialect::Sqlite,
        3,
        OptionValues::default(),
    );
    let target = Target::parse("fake://?rows=5").unwrap();
    let connect: engine::Connect = Arc::new(move || driver::connect(&target));
    let cfg = RunConfig {
        threads: 4,
        time: None,
        events: Some(events),
        rounds: None,
        warmup: Duration::ZERO,
        report_interval: None,
        interval_percentile: 95.0,
        max_retries: None,
        ignore_errors: Default::default(),
        grace: Duration::from_secs(5),
        seed: 3,
        reconnect_every: None,
        timeout: None,
        pacing: Mode::Users {
            users: 2000,
            think_time: Some(ThinkTime::Fixed(Duration::ZERO)),
            ramp_up: None,
        }
        .into(),
        shard: None,
        client_threads: None,
        pipeline: None,
        release: None,
    };
    let res = engine::run(&w, connect, &cfg, &AtomicBool::new(false), &mut |_| {}).unwrap();
    let total: u64 = res.types.iter().map(|t| t.latency.count()).sum();
    assert!(total >= events, "{total} interactions");
    res.types
        .iter()
        .map(|t| {
            let share = 100.0 * t.latency.count() as f64 / total as f64;
            (t.t.name, (share, t.t.expected_pct.unwrap()))
        })
        .collect()
}

#[test]
fn each_mix_converges_to_its_stationary_distribution() {
    for mix in [
        Mix::Browsing,
        Mix::Shopping,
        Mix::Ordering,
        Mix::OrderingDbt1,
    ] {
        let s = shares(mix, 1_000_000);
        assert_eq!(s.len(), 14);
        for (name, (got, want)) in &s {
            assert!(
                (got - want).abs() < 0.5,
                "{mix:?} {name}: {got:.3} % measured, {want:.3} % expected"
            );
        }
        let browse: f64 = Interaction::ALL
            .iter()
            .filter(|i| i.browsing())
            .map(|i| s[i.name()].0)
            .sum();
        let want = match mix {
            Mix::Browsing => 95.0,
            Mix::Shopping => 80.0,
            Mix::Ordering => 50.0,
            Mix::OrderingDbt1 => 56.2,
        };
        assert!(
            (browse - want).abs() < 0.5,
            "{mix:?}: browsing {browse:.2} %"
        );
    }
}

#[test]
fn think_times_have_dbt1s_mean_and_cap() {
    let mut rng = Rng::new(5);
    let n = 200_000;
    let draws: Vec<f64> = (0..n)
        .map(|_| THINK_TIME.draw(&mut rng).as_secs_f64())
        .collect();
    let max = draws.iter().cloned().fold(0.0, f64::max);
    let mean = draws.iter().sum::<f64>() / n as f64;
    assert!(max <= 72.0 + 1e-9, "cap: {max}");
    assert!(
        draws.iter().filter(|&&d| d == 72.0).count() > 0,
        "the cap is reached"
    );
    // The capped exponential's mean: 7.2 (1 - e^-10) s.
    let want = THINK_TIME.mean().as_secs_f64();
    assert!((want - 7.2 * (1.0 - (-10f64).exp())).abs() < 1e-9);
    assert!(
        (mean - want).abs() < 0.05,
        "mean {mean} s, expected {want} s"
    );
}

#[test]
fn users_never_start_before_their_think_time_ends() {
    // 20 users thinking 200 ms on 2 connections for 2 s: no user can run
    // more than 2 s / 200 ms + 1 interactions; with a think time the run
    // would not respect, they would run hundreds.
    let dir = Dir::new();
    let url = dir.sqlite_url("t.db");
    dbsweep(&[
        "prepare", "dbt1", "--db", &url, "--items", "1000", "--ebs", "1",
    ])
    .ok();
    let json = dir.join("t.json");
    dbsweep(&[
        "run",
        "dbt1",
        "--db",
        &url,
        "--items",
        "1000",
        "--ebs",
        "1",
        "--eus",
        "20",
        "--threads",
        "2",
        "--think-time",
        "fixed:200ms",
        "--time",
        "2",
        "--json",
        json.to_str().unwrap(),
    ])
    .ok();
    let doc = read_json(&json);
    let n = doc["result"]["transactions"].as_u64().unwrap();
    assert!(n <= 20 * 11, "{n} interactions by 20 users in 2 s");
    // Every user's first interaction is due at the start.
    assert!(n >= 20, "{n} interactions: the users barely ran");
    assert_eq!(doc["run"]["pacing"]["users"], 20);
    assert_eq!(doc["run"]["pacing"]["think_time"], "fixed:200ms");
}

#[test]
fn without_a_think_time_users_think_as_dbt1s() {
    let dir = Dir::new();
    let url = dir.sqlite_url("d.db");
    dbsweep(&[
        "prepare", "dbt1", "--db", &url, "--items", "1000", "--ebs", "1",
    ])
    .ok();
    let json = dir.join("d.json");
    let r = dbsweep(&[
        "run",
        "dbt1",
        "--db",
        &url,
        "--items",
        "1000",
        "--ebs",
        "1",
        "--eus",
        "40",
        "--threads",
        "4",
        "--ramp-up",
        "100",
        "--time",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    r.ok();
    let doc = read_json(&json);
    assert_eq!(doc["run"]["pacing"]["think_time"], "exp:7.2s:cap=72s");
    assert_eq!(doc["run"]["pacing"]["ramp_up_per_s"], 100.0);
    // The window starts once the 40th user has started (0.39 s).
    assert!(doc["run"]["warmup_s"].as_f64().unwrap() >= 0.39);
    let types = doc["result"]["transaction_types"].as_array().unwrap();
    assert_eq!(types.len(), 14);
    assert_eq!(types[0]["name"], "home");
    assert_eq!(types[4]["queries"], false);
    assert!(r.stdout.contains("DBT-1's BT/s"), "{}", r.stdout);
}

#[test]
fn at_a_rate_no_user_thinks() {
    // An open loop's arrivals come from its schedule: DBT-1's own think
    // time paces no one, so the record and the preamble do not name it.
    let dir = Dir::new();
    let url = prepare(&dir, "r.db", "1");
    let json = dir.join("r.json");
    let r = dbsweep(&[
        "run",
        "dbt1",
        "--db",
        &url,
        "--items",
        "1000",
        "--ebs",
        "1",
        "--threads",
        "2",
        "--rate",
        "200",
        "--time",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    r.ok();
    let doc = read_json(&json);
    let pacing = &doc["run"]["pacing"];
    assert_eq!(pacing["rate"], 200.0, "{pacing}");
    assert!(pacing["think_time"].is_null(), "{pacing}");
    assert!(pacing["think_time_mean_s"].is_null(), "{pacing}");
    assert!(!r.stdout.contains("Think time"), "{}", r.stdout);
    assert!(doc["result"]["transactions"].as_u64().unwrap() > 0);
}

#[test]
fn bad_input_is_refused_with_the_fix_named() {
    let dir = Dir::new();
    let url = prepare(&dir, "b.db", "1");
    let base = ["run", "dbt1", "--db", &url, "--time", "1"];
    for (extra, words) in [
        (
            &["--items", "1000", "--ebs", "1", "--mix", "window-shopping"][..],
            "unknown --mix 'window-shopping'",
        ),
        (
            &["--items", "5000", "--ebs", "1"][..],
            "invalid --items 5000",
        ),
        (&["--items", "1000", "--ebs", "0"][..], "invalid --ebs 0"),
        (
            &["--items", "1000", "--ebs", "1", "--eus", "0"][..],
            "--eus) 0",
        ),
        (
            &["--items", "10000", "--ebs", "1"][..],
            "prepared with --items 1000 --ebs 1",
        ),
        (
            &["--items", "1000", "--ebs", "2"][..],
            "run with --items 1000 --ebs 1",
        ),
    ] {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        let r = dbsweep(&args);
        r.expect_status(2);
        assert!(r.stderr.contains(words), "{extra:?}: {}", r.stderr);
        assert_eq!(
            r.stderr.lines().filter(|l| l.starts_with("error")).count(),
            1,
            "{}",
            r.stderr
        );
    }
}

#[test]
fn every_study_file_passes_a_dry_run() {
    let dir = Dir::new();
    let studies = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("studies");
    let mut n = 0;
    for e in std::fs::read_dir(&studies).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "toml") {
            let r = util::dbsweep_in(dir.path(), &["study", path.to_str().unwrap(), "--dry-run"]);
            r.ok();
            assert!(
                r.stdout.contains("points:"),
                "{}: {}",
                path.display(),
                r.stdout
            );
            n += 1;
        }
    }
    assert!(n >= 7, "{n} study files");
}

#[test]
fn a_users_study_draws_bts_against_users_and_the_mix() {
    let dir = Dir::new();
    let db = dir.join("s.db");
    let text = format!(
        r#"name = "eus"
clients = 2

[[target]]
name = "sqlite"
url = "sqlite://{}"

[[workload]]
name = "dbt1"
options = {{ items = 1000, ebs = 1 }}
eus = [4, 16]
think_time = "fixed:100ms"
ramp_up = 200
time = 1
"#,
        db.display()
    );
    std::fs::write(dir.join("eus.toml"), text).unwrap();
    util::dbsweep_in(dir.path(), &["study", "eus.toml", "--out", "out"]).ok();
    let r = util::dbsweep_in(dir.path(), &["report", "out", "--format", "text"]);
    r.ok();
    let out = &r.stdout;
    for words in [
        "Load levels  users=4, users=16",
        "throughput against users",
        "CPU utilisation against users",
        "90th-percentile response time of each interaction against users",
        "sqlite at users=16: the mix",
        "search_request (no query)",
    ] {
        assert!(out.contains(words), "{words}: {out}");
    }
    // DBT-1's throughput is web interactions (BT/s), wherever it is named.
    if out.contains("sustains at most") {
        assert!(out.contains("web interactions/s (BT/s) (users="), "{out}");
    }
    assert!(!out.contains("transactions/s"), "{out}");
    let html = dir.join("report.html");
    util::dbsweep_in(
        dir.path(),
        &[
            "report",
            "out",
            "--format",
            "html",
            "--out",
            html.to_str().unwrap(),
        ],
    )
    .ok();
    let html = std::fs::read_to_string(html).unwrap();
    assert!(
        html.contains("axis-label y\" x=\"14\"")
            && html.contains(">completed web interactions/s (BT/s)</text>"),
        "the throughput chart's y axis"
    );
    assert!(html.contains(">achieved web interactions/s (BT/s)</text>"));
    let json = dir.join("report.json");
    util::dbsweep_in(
        dir.path(),
        &[
            "report",
            "out",
            "--format",
            "json",
            "--out",
            json.to_str().unwrap(),
        ],
    )
    .ok();
    let doc = read_json(&json);
    util::assert_valid_report_json(&doc);
    let levels = &doc["offered"][0]["series"][0]["levels"];
    assert_eq!(levels[0]["users"], 4);
    assert_eq!(levels[1]["users"], 16);
    let types = levels[1]["types"].as_array().unwrap();
    assert_eq!(types.len(), 14);
    let shares: f64 = types.iter().map(|t| t["share_pct"].as_f64().unwrap()).sum();
    assert!((shares - 100.0).abs() < 0.01, "{shares}");
    // More users thinking the same: more interactions per second (four
    // times as many users thinking 100 ms offer 160 a second, which two
    // connections serve however busy the machine).
    let rate = |i: usize| levels[i]["achieved_per_s"].as_f64().unwrap();
    assert!(rate(1) > 2.0 * rate(0), "{} then {}", rate(0), rate(1));
}

#[test]
fn a_study_reloads_the_store_when_its_scale_changes() {
    let dir = Dir::new();
    let study = |second: &str| {
        format!(
            r#"name = "scales"
clients = 2

[[target]]
name = "sqlite"
url = "sqlite://{}"

[[workload]]
name = "dbt1"
options = {{ items = 1000, ebs = 1 }}
eus = [4]
time = 1

[[workload]]
name = "dbt1"
label = "second"
options = {{ {second} }}
eus = [4]
ramp_up = 1
time = 1
"#,
            dir.join("s.db").display()
        )
    };
    for (second, loads) in [
        ("items = 1000, ebs = 1", "data loads: 1"),
        ("items = 10000, ebs = 1", "data loads: 2"),
        ("items = 1000, ebs = 2", "data loads: 2"),
    ] {
        std::fs::write(dir.join("s.toml"), study(second)).unwrap();
        let r = util::dbsweep_in(dir.path(), &["study", "s.toml", "--dry-run"]);
        r.ok();
        assert!(r.stdout.contains(loads), "{second}: {}", r.stdout);
    }
}
