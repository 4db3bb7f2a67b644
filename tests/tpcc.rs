//! TPC-C on SQLite and the fake driver: the loaded data (exact row counts
//! per table at a scale, every key resolved, the spec's shares of
//! ORIGINAL and bad credit, a consistent database), NURand's distribution
//! and the C-delta rule, determinism by seed, the mix over a million
//! transactions through the engine, keying and think times with their
//! means and caps, and bad input. The transactions' rows on every engine
//! are in `tpcc_servers.rs`.

mod util;

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use dbsweep::driver::{self, Connection, Dialect, Target, Value};
use dbsweep::engine::pacing::Mode;
use dbsweep::engine::{self, RunConfig};
use dbsweep::rand::Rng;
use dbsweep::workload::loader::RowSource;
use dbsweep::workload::tpcc::random::{self, delta_ok, nurand, Constants};
use dbsweep::workload::tpcc::rows::Data;
use dbsweep::workload::tpcc::schema::{self, TABLES};
use dbsweep::workload::tpcc::terminal::{Txn, Waits, DEFAULT_WEIGHTS};
use dbsweep::workload::tpcc::{expected_rows, Tpcc};
use dbsweep::workload::{ClientScript, OptionValues};
use util::{dbsweep, Dir};

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
        "tpcc",
        "--db",
        &url,
        "--warehouses",
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
fn data_has_the_scales_rows_resolved_keys_and_the_spec_shares() {
    let dir = Dir::new();
    let url = prepare(&dir, "a.db", "7");
    let mut c = open(&url);
    let c = c.as_mut();
    // Exact counts: the spec's per-warehouse sizes, and the generator's
    // own line count.
    let data = Data::new(1, 7, 0);
    let expected = expected_rows(1, &data);
    assert_eq!(
        expected[..8],
        [1, 10, 30_000, 30_000, 100_000, 100_000, 30_000, 9_000]
    );
    for (t, n) in TABLES.iter().zip(expected) {
        assert_eq!(
            int(c, &format!("SELECT COUNT(*) FROM {t}")) as u64,
            n,
            "{t}"
        );
    }
    // 5 to 15 lines an order: about 10 on average.
    assert!((290_000..310_000).contains(&expected[8]), "{}", expected[8]);
    assert_eq!(
        rows(c, "SELECT warehouses FROM tpcc_scale")[0][0].as_deref(),
        Some("1")
    );
    // Every key points at a row.
    for (what, sql) in [
        ("district's warehouse", "SELECT COUNT(*) FROM district WHERE d_w_id NOT IN (SELECT w_id FROM warehouse)"),
        ("history's customer", "SELECT COUNT(*) FROM history WHERE NOT EXISTS (SELECT 1 FROM customer WHERE c_w_id = h_c_w_id AND c_d_id = h_c_d_id AND c_id = h_c_id)"),
        ("order's customer", "SELECT COUNT(*) FROM orders WHERE NOT EXISTS (SELECT 1 FROM customer WHERE c_w_id = o_w_id AND c_d_id = o_d_id AND c_id = o_c_id)"),
        ("new order's order", "SELECT COUNT(*) FROM new_order WHERE NOT EXISTS (SELECT 1 FROM orders WHERE o_w_id = no_w_id AND o_d_id = no_d_id AND o_id = no_o_id)"),
        ("line's order", "SELECT COUNT(*) FROM order_line WHERE NOT EXISTS (SELECT 1 FROM orders WHERE o_w_id = ol_w_id AND o_d_id = ol_d_id AND o_id = ol_o_id)"),
        ("line's item", "SELECT COUNT(*) FROM order_line WHERE ol_i_id NOT IN (SELECT i_id FROM item)"),
        ("line's stock", "SELECT COUNT(*) FROM order_line WHERE NOT EXISTS (SELECT 1 FROM stock WHERE s_w_id = ol_supply_w_id AND s_i_id = ol_i_id)"),
        ("stock's item", "SELECT COUNT(*) FROM stock WHERE s_i_id NOT IN (SELECT i_id FROM item)"),
        ("undelivered with a carrier", "SELECT COUNT(*) FROM orders WHERE o_id >= 2101 AND o_carrier_id IS NOT NULL"),
        ("delivered without a carrier", "SELECT COUNT(*) FROM orders WHERE o_id < 2101 AND o_carrier_id IS NULL"),
        ("delivered line with an amount", "SELECT COUNT(*) FROM order_line WHERE ol_o_id < 2101 AND ol_amount <> 0"),
        ("quantity out of range", "SELECT COUNT(*) FROM stock WHERE s_quantity < 10 OR s_quantity > 100"),
        ("line count out of range", "SELECT COUNT(*) FROM orders WHERE o_ol_cnt < 5 OR o_ol_cnt > 15"),
    ] {
        assert_eq!(int(c, sql), 0, "{what}");
    }
    // Each district's orders take every customer once (a permutation).
    for r in rows(
        c,
        "SELECT COUNT(DISTINCT o_c_id) FROM orders GROUP BY o_w_id, o_d_id",
    ) {
        assert_eq!(r[0].as_deref(), Some("3000"));
    }
    // The first 1000 customers of a district have the names 0..=999.
    assert_eq!(
        int(
            c,
            "SELECT COUNT(DISTINCT c_last) FROM customer WHERE c_d_id = 1 AND c_id <= 1000"
        ),
        1000
    );
    let name = random::last_name_string(371);
    assert_eq!(
        int(
            c,
            &format!(
                "SELECT c_id FROM customer WHERE c_d_id = 4 AND c_id <= 1000 AND c_last = '{name}'"
            )
        ),
        372
    );
    // 10 % ORIGINAL and 10 % bad credit, at random (clause 4.3.3.1).
    let share = |c: &mut dyn Connection, sql: &str, of: f64| 100.0 * int(c, sql) as f64 / of;
    let original = share(
        c,
        "SELECT COUNT(*) FROM item WHERE i_data LIKE '%ORIGINAL%'",
        100_000.0,
    );
    assert!(
        (9.5..10.5).contains(&original),
        "items ORIGINAL: {original} %"
    );
    let original = share(
        c,
        "SELECT COUNT(*) FROM stock WHERE s_data LIKE '%ORIGINAL%'",
        100_000.0,
    );
    assert!(
        (9.5..10.5).contains(&original),
        "stock ORIGINAL: {original} %"
    );
    let bad = share(
        c,
        "SELECT COUNT(*) FROM customer WHERE c_credit = 'BC'",
        30_000.0,
    );
    assert!((9.0..11.0).contains(&bad), "bad credit: {bad} %");
    // The load is consistent (clause 3.3.2).
    let r = dbsweep(&["check", "tpcc", "--db", &url]);
    r.ok();
    assert!(
        r.stdout.contains("12 of 12 conditions hold"),
        "{}",
        r.stdout
    );
}

/// The exact distribution of NURand(A, x, y) with constant c, by
/// enumerating its two uniform draws.
fn nurand_exact(a: u32, c: u32, x: u32, y: u32) -> Vec<f64> {
    let n = (y - x + 1) as usize;
    let mut p = vec![0.0; n];
    let w = 1.0 / (f64::from(a + 1) * n as f64);
    for r1 in 0..=a {
        for r2 in x..=y {
            p[(((r1 | r2) + c) % (y - x + 1)) as usize] += w;
        }
    }
    p
}

#[test]
fn nurand_draws_its_exact_distribution() {
    for (a, c, x, y) in [
        (255, 123, 0, 999),
        (1023, 259, 1, 3000),
        (8191, 7911, 1, 100_000),
    ] {
        let exact = nurand_exact(a, c, x, y);
        let n = 3_000_000;
        let mut got = vec![0u32; exact.len()];
        let mut rng = Rng::new(u64::from(a));
        for _ in 0..n {
            let v = nurand(&mut rng, a, c, x, y);
            assert!((x..=y).contains(&v));
            got[(v - x) as usize] += 1;
        }
        // Total variation distance from the exact law: sampling noise
        // only (a uniform law would be ≥ 0.2 away for these A).
        let tv: f64 = exact
            .iter()
            .zip(&got)
            .map(|(p, g)| (p - f64::from(*g) / n as f64).abs())
            .sum::<f64>()
            / 2.0;
        let uniform: f64 = exact
            .iter()
            .map(|p| (p - 1.0 / exact.len() as f64).abs())
            .sum::<f64>()
            / 2.0;
        let noise = (exact.len() as f64 / n as f64).sqrt();
        assert!(
            tv < noise,
            "NURand({a}, {x}, {y}): distance {tv} (noise {noise})"
        );
        assert!(
            uniform > 3.0 * tv,
            "NURand({a}, {x}, {y}) looks uniform: {uniform}"
        );
    }
}

#[test]
fn run_constants_obey_the_delta_rule() {
    let mut seen = std::collections::BTreeSet::new();
    for c_load in 0..=255 {
        for seed in 0..40u64 {
            let run = Constants::run(seed, c_load);
            let delta = (i64::from(run.c_last) - i64::from(c_load)).abs();
            assert!(
                (65..=119).contains(&delta) && delta != 96 && delta != 112,
                "load {c_load}, run {}",
                run.c_last
            );
            assert!(delta_ok(c_load, run.c_last));
            assert!(run.c_id <= 1023 && run.ol_i_id <= 8191);
            seen.insert(run.c_last);
        }
    }
    assert!(
        seen.len() > 200,
        "run values spread over [0, 255]: {}",
        seen.len()
    );
    // The load's constants are a function of the seed.
    assert_eq!(Constants::load(5), Constants::load(5));
    assert_ne!(Constants::load(5), Constants::load(6));
    // The run picks its constant from the loaded database's.
    let w = Tpcc::spec(1, Dialect::Sqlite, 3);
    for c_load in [0, 100, 255] {
        w.terminals().set_load_c_last(c_load);
        assert!(delta_ok(c_load, w.terminals().constants().c_last));
    }
}

/// Rows `first..=last` of table `t`, cut into ranges of `step` rows.
fn table_rows(d: &Data, t: usize, first: u32, last: u32, step: u32) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    let mut from = first;
    while from <= last {
        let to = (from + step - 1).min(last);
        let mut gen = d.rows(t, from, to);
        loop {
            let mut row = Vec::new();
            if !gen(&mut row) {
                break;
            }
            out.push(row);
        }
        from = to + 1;
    }
    out
}

#[test]
fn data_is_a_function_of_the_seed_however_it_is_cut() {
    let a = Data::new(2, 42, 1_700_000_000);
    let b = Data::new(2, 42, 1_700_000_000);
    let other = Data::new(2, 43, 1_700_000_000);
    for (t, name) in TABLES.iter().enumerate() {
        let n = schema::row_numbers(2)[t].min(9_000);
        let whole = table_rows(&a, t, 1, n, n);
        assert_eq!(whole, table_rows(&b, t, 1, n, 997), "{name}");
        if t != schema::NEW_ORDER {
            assert_ne!(whole, table_rows(&other, t, 1, n, n), "{name}");
        }
    }
    // Orders and their lines agree on the line counts across warehouses.
    let orders = table_rows(&a, schema::ORDER, 30_001, 30_100, 7);
    let lines = table_rows(&a, schema::ORDER_LINE, 30_000 * 15 + 1, 30_100 * 15, 41);
    let counted: u32 = orders
        .iter()
        .map(|r| match r[6] {
            Value::Int(n) => n as u32,
            _ => panic!("o_ol_cnt {:?}", r[6]),
        })
        .sum();
    assert_eq!(lines.len() as u32, counted);
    assert!(
        lines.iter().all(|r| r[2] == Value::Int(2)),
        "warehouse 2's lines"
    );
}

#[test]
fn the_mix_over_a_million_transactions_meets_the_minimums() {
    let w = Tpcc::new(
        2,
        DEFAULT_WEIGHTS,
        None,
        Dialect::Sqlite,
        3,
        OptionValues::default(),
    );
    let target = Target::parse("fake://?rows=5").unwrap();
    let connect: engine::Connect = Arc::new(move || driver::connect(&target));
    let events = 1_000_000;
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
        shard: None,
        client_threads: None,
        pipeline: None,
        release: None,
        pacing: Mode::Users {
            users: 20,
            think_time: None,
            ramp_up: None,
        }
        .into(),
    };
    let res = engine::run(&w, connect, &cfg, &AtomicBool::new(false), &mut |_| {}).unwrap();
    let total: u64 = res.types.iter().map(|t| t.latency.count()).sum();
    assert!(total >= events, "{total} transactions");
    // 1 % of New-Orders roll back: 0.45 % of the mix.
    let rolled_back = res.types[5].latency.count() as f64 / total as f64 * 100.0;
    assert_eq!(res.types[5].t.name, "new_order_rollback");
    assert!(
        (rolled_back - 0.45).abs() < 0.03,
        "{rolled_back} % rolled back"
    );
    let shares: BTreeMap<&str, f64> = res
        .types
        .iter()
        .map(|t| (t.t.name, 100.0 * t.latency.count() as f64 / total as f64))
        .collect();
    for t in Txn::ALL {
        // A rolled-back New-Order is a New-Order, counted apart.
        let got = shares[t.name()]
            + if t == Txn::NewOrder {
                shares["new_order_rollback"]
            } else {
                0.0
            };
        let deck = f64::from(DEFAULT_WEIGHTS[t.index()]);
        // Each terminal's deck of 100 is played out in turn: only the
        // decks in progress at the end stray from it.
        assert!((got - deck).abs() < 0.01, "{}: {got} %", t.name());
        // The minimum holds for every deck played out; the 20 decks in
        // progress at the end may hold back a few cards of a type each.
        let count = got * total as f64 / 100.0;
        let played = (total - 20 * 100) as f64;
        assert!(
            count >= t.min_pct() / 100.0 * played,
            "{}: {got} % below the minimum",
            t.name()
        );
    }
}

#[test]
fn a_terminals_deck_holds_the_weights_in_every_hundred() {
    let w = Tpcc::spec(1, Dialect::Sqlite, 9);
    let mut s = w.script();
    s.user(4);
    assert_eq!(s.home(), Some((1, 5)), "terminal 4 is district 5's");
    let mut counts = [0u32; 5];
    for k in 0..1_000_000u32 {
        s.start();
        let kind = s.kind().unwrap() as usize;
        // The sixth type is a New-Order that rolls back.
        counts[if kind == 5 { 0 } else { kind }] += 1;
        s.end(true);
        let pause = s.pause().expect("waits on by default");
        assert!(pause >= Duration::from_secs(2), "at least a keying time");
        if k % 100 == 99 {
            let seen: u32 = counts.iter().sum();
            assert_eq!(seen, k + 1);
            for t in Txn::ALL {
                assert_eq!(
                    counts[t.index()],
                    DEFAULT_WEIGHTS[t.index()] * (k + 1) / 100
                );
            }
        }
    }
}

#[test]
fn keying_and_think_times_have_the_spec_means_and_caps() {
    let waits = Waits::SPEC;
    let mut rng = Rng::new(5);
    for (t, keying, mean) in [
        (Txn::NewOrder, 18.0, 12.0),
        (Txn::Payment, 3.0, 12.0),
        (Txn::OrderStatus, 2.0, 10.0),
        (Txn::Delivery, 2.0, 5.0),
        (Txn::StockLevel, 2.0, 5.0),
    ] {
        assert_eq!(waits.keying(t).as_secs_f64(), keying);
        let n = 400_000;
        let draws: Vec<f64> = (0..n)
            .map(|_| waits.think(t, &mut rng).as_secs_f64())
            .collect();
        let avg = draws.iter().sum::<f64>() / n as f64;
        let max = draws.iter().cloned().fold(0.0, f64::max);
        assert!((avg - mean).abs() < 0.01 * mean, "{t:?}: mean {avg}");
        assert!(max <= 10.0 * mean + 1e-9, "{t:?}: cap {max}");
        let capped = draws.iter().filter(|&&d| d == 10.0 * mean).count();
        // e^-10 of the draws reach the cap: about 18 in 400,000.
        assert!((3..60).contains(&capped), "{t:?}: {capped} at the cap");
        // A negative exponential: a third of draws above ln(3) means.
        let above = draws.iter().filter(|&&d| d > mean * 3f64.ln()).count() as f64 / n as f64;
        assert!((above - 1.0 / 3.0).abs() < 0.005, "{t:?}: {above}");
    }
    let scaled = Waits {
        keying_scale: 0.5,
        think_scale: 0.1,
    };
    assert_eq!(scaled.keying(Txn::NewOrder), Duration::from_secs(9));
    assert!(scaled.think(Txn::NewOrder, &mut rng) <= Duration::from_secs(12));
}

#[test]
fn bad_input_is_refused_with_the_fix_named() {
    let dir = Dir::new();
    let url = prepare(&dir, "b.db", "1");
    let fresh = dir.sqlite_url("c.db");
    for (args, words) in [
        (
            vec!["prepare", "tpcc", "--db", &fresh, "--warehouses", "0"],
            "invalid --warehouses 0",
        ),
        (
            vec![
                "run",
                "tpcc",
                "--db",
                &url,
                "--warehouses",
                "2",
                "--time",
                "1",
            ],
            "prepared with --warehouses 1, not --warehouses 2: run with --warehouses 1",
        ),
        (
            vec![
                "run",
                "tpcc",
                "--db",
                &url,
                "--no-wait",
                "--keying-time-scale",
                "0.5",
                "--time",
                "1",
            ],
            "--no-wait runs without keying and think times",
        ),
        (
            vec![
                "run",
                "tpcc",
                "--db",
                &url,
                "--no-wait",
                "--think-time-scale",
                "2",
                "--time",
                "1",
            ],
            "drop --keying-time-scale and --think-time-scale",
        ),
        (
            vec![
                "run",
                "tpcc",
                "--db",
                &url,
                "--weights",
                "45,43,4,4",
                "--time",
                "1",
            ],
            "invalid --weights '45,43,4,4'",
        ),
        (
            vec![
                "run",
                "tpcc",
                "--db",
                &url,
                "--threads",
                "11",
                "--time",
                "1",
            ],
            "--threads 11 is more than tpcc's 10 users",
        ),
        (
            vec![
                "run",
                "tpcc",
                "--db",
                &url,
                "--all-warehouses",
                "--time",
                "1",
            ],
            "--all-warehouses is for --no-wait runs",
        ),
        (vec!["check", "tpcc", "--db", &fresh], "does not exist"),
    ] {
        let r = dbsweep(&args);
        r.expect_status(2);
        assert!(r.stderr.contains(words), "{args:?}: {}", r.stderr);
        assert_eq!(
            r.stderr.lines().filter(|l| l.starts_with("error")).count(),
            1,
            "{}",
            r.stderr
        );
    }
}

#[test]
fn ramp_up_starts_the_terminals_without_users_given() {
    // TPC-C's terminals are the run's users (ten per warehouse), so
    // `--ramp-up` needs no `--users`: the ten start 20 a second and the
    // window opens once the last has started (0.45 s).
    let dir = Dir::new();
    let url = prepare(&dir, "r.db", "3");
    let json = dir.join("r.json");
    dbsweep(&[
        "run",
        "tpcc",
        "--db",
        &url,
        "--threads",
        "2",
        "--keying-time-scale",
        "0.01",
        "--think-time-scale",
        "0.01",
        "--ramp-up",
        "20",
        "--time",
        "1",
        "--json",
        json.to_str().unwrap(),
    ])
    .ok();
    let doc = util::read_json(&json);
    let pacing = &doc["run"]["pacing"];
    assert_eq!(pacing["ramp_up_per_s"], 20.0, "{pacing}");
    assert_eq!(pacing["users"], 10, "{pacing}");
    assert!(
        doc["run"]["warmup_s"].as_f64().unwrap() >= 0.45,
        "{}",
        doc["run"]
    );
    assert!(doc["result"]["transactions"].as_u64().unwrap() > 0);
    // A workload without users of its own still needs --users.
    let r = dbsweep(&[
        "run",
        "oltp_point_select",
        "--db",
        &dir.sqlite_url("o.db"),
        "--ramp-up",
        "20",
        "--time",
        "1",
    ]);
    r.expect_status(2);
    assert!(r.stderr.contains("add --users N"), "{}", r.stderr);
}

/// Transactions of 10 terminals over `secs` seconds on the fake driver,
/// keying and think times at 1/100 of the spec's, on `threads`
/// connections.
fn paced_run(threads: usize, secs: u64) -> u64 {
    let w = Tpcc::new(
        1,
        DEFAULT_WEIGHTS,
        Some(Waits {
            keying_scale: 0.01,
            think_scale: 0.01,
        }),
        Dialect::Sqlite,
        5,
        OptionValues::default(),
    );
    let target = Target::parse("fake://?rows=5").unwrap();
    let connect: engine::Connect = Arc::new(move || driver::connect(&target));
    let cfg = RunConfig {
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
        seed: 5,
        reconnect_every: None,
        timeout: None,
        shard: None,
        client_threads: None,
        pipeline: None,
        release: None,
        pacing: Mode::Users {
            users: 10,
            think_time: None,
            ramp_up: None,
        }
        .into(),
    };
    let res = engine::run(&w, connect, &cfg, &AtomicBool::new(false), &mut |_| {}).unwrap();
    res.types.iter().map(|t| t.latency.count()).sum()
}

#[test]
fn the_engine_waits_each_terminals_keying_and_think_times() {
    // A terminal's mean cycle at the deck's mix: keying + mean think,
    // 0.45 × 30 s + 0.43 × 15 s + 0.04 × (12 + 7 + 7) s = 20.99 s; at
    // 1/100, 0.21 s, so 10 terminals run about 48 transactions a second
    // (the fake driver's own time is negligible), the first of each at
    // once.
    let cycle = 0.2099;
    for (threads, secs) in [(10, 4), (3, 4)] {
        let n = paced_run(threads, secs) as f64;
        let want = 10.0 * (1.0 + secs as f64 / cycle);
        assert!(
            (n - want).abs() < 0.2 * want,
            "{threads} connections: {n} transactions, about {want} expected"
        );
    }
}

#[test]
fn all_warehouses_spreads_a_terminals_transactions() {
    let seen = |all: bool| {
        let w = Tpcc::new(
            3,
            DEFAULT_WEIGHTS,
            None,
            Dialect::Sqlite,
            2,
            OptionValues::default(),
        )
        .with_all_warehouses(all);
        let mut s = w.script();
        s.user(0);
        let mut homes = std::collections::BTreeSet::new();
        for _ in 0..2000 {
            s.start();
            homes.insert(s.inputs().w);
            s.end(true);
            s.user(0);
        }
        homes
    };
    assert_eq!(seen(false), [1].into());
    assert_eq!(seen(true), [1, 2, 3].into());
}
