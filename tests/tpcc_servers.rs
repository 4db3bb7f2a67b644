//! TPC-C's transactions on SQLite and on real MariaDB and PostgreSQL
//! servers: a rolled-back New-Order leaves nothing, a committed one its
//! order, lines and stock; Payment by last name picks the spec's middle
//! customer; Delivery delivers the oldest undelivered order of each
//! district; Stock-Level counts distinct items. After a zero-think run
//! with more terminals than connections `check tpcc` finds every
//! condition holding (the record's TPC-C results derived from its counts
//! and the server's), and a broken row makes its condition fail.
//! PostgreSQL's primary keys, built after the load, are in place.

mod util;

use std::collections::BTreeMap;

use dbsweep::driver::{self, Connection, Dialect, Target};
use dbsweep::workload::tpcc::random::last_name_string;
use dbsweep::workload::tpcc::terminal::{Script, Txn};
use dbsweep::workload::tpcc::Tpcc;
use dbsweep::workload::{ClientScript, Op, Workload};
use util::{dbsweep, read_json, Dir, Server};

type Rows = Vec<Vec<Option<String>>>;

fn rows(c: &mut dyn Connection, sql: &str) -> Rows {
    c.query_text(sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn num(c: &mut dyn Connection, sql: &str) -> f64 {
    rows(c, sql)[0][0]
        .as_deref()
        .unwrap_or("0")
        .parse()
        .unwrap_or_else(|_| panic!("{sql}: not a number"))
}

fn int(c: &mut dyn Connection, sql: &str) -> i64 {
    num(c, sql).round() as i64
}

fn ints(c: &mut dyn Connection, sql: &str) -> Vec<i64> {
    rows(c, sql)
        .iter()
        .map(|r| r[0].as_deref().unwrap().parse::<f64>().unwrap() as i64)
        .collect()
}

/// Runs transaction `t` of the script's terminal to its end.
fn run_txn(s: &mut Script, c: &mut dyn Connection, t: Txn) {
    s.force_next(t);
    s.start();
    while let Some(op) = s.next() {
        match op {
            Op::Begin { writes } => c.begin(writes),
            Op::Commit => c.commit(),
            Op::Rollback => c.rollback(),
            Op::Exec(id, p) => c.execute(id, p),
            Op::Batch(id, p, n) => c.execute_batch(id, p, n),
            Op::Fetch(id, p, f) => c.execute_fetch(id, p, f),
        }
        .unwrap_or_else(|e| panic!("{t:?}: {e}"));
    }
    s.end(true);
}

fn counts(c: &mut dyn Connection) -> [i64; 5] {
    [
        int(c, "SELECT COUNT(*) FROM orders"),
        int(c, "SELECT COUNT(*) FROM new_order"),
        int(c, "SELECT COUNT(*) FROM order_line"),
        int(c, "SELECT SUM(s_ytd) FROM stock"),
        int(c, "SELECT SUM(d_next_o_id) FROM district"),
    ]
}

/// Each transaction's rows on the database at `url`, prepared at one
/// warehouse.
fn transactions_write_exactly_their_rows(url: &str, dialect: Dialect) {
    dbsweep(&["prepare", "tpcc", "--db", url, "--warehouses", "1"]).ok();
    let w = Tpcc::spec(1, dialect, 9);
    let mut conn = driver::connect(&Target::parse(url).unwrap()).unwrap();
    w.check_prepared(conn.as_mut()).unwrap();
    let sql: Vec<String> = w.statements().iter().map(|s| s.sql.clone()).collect();
    conn.prepare_all(&sql).unwrap();
    let c = conn.as_mut();
    let mut s = w.script();
    s.user(2);

    // New-Order on an unused item: rolled back, nothing left.
    let before = counts(c);
    s.force.rollback = Some(true);
    run_txn(&mut s, c, Txn::NewOrder);
    assert!(s.inputs().rollback);
    assert_eq!(counts(c), before, "a rolled-back New-Order left rows");

    // A committed New-Order: one order, its lines, its stock.
    s.force.rollback = Some(false);
    s.force.district = Some(6);
    let stock_sql = "SELECT s_i_id, s_quantity, s_ytd, s_order_cnt FROM stock WHERE s_w_id = 1";
    let stock = |c: &mut dyn Connection| -> BTreeMap<i64, (i64, i64, i64)> {
        rows(c, stock_sql)
            .iter()
            .map(|r| {
                let f = |i: usize| r[i].as_deref().unwrap().parse::<f64>().unwrap() as i64;
                (f(0), (f(1), f(2), f(3)))
            })
            .collect()
    };
    let stock_before = stock(c);
    run_txn(&mut s, c, Txn::NewOrder);
    let x = s.inputs().clone();
    let n = x.lines.len() as i64;
    let after = counts(c);
    assert_eq!(after[0], before[0] + 1);
    assert_eq!(after[1], before[1] + 1);
    assert_eq!(after[2], before[2] + n);
    assert_eq!(after[4], before[4] + 1);
    assert_eq!(x.o_id, 3001, "district 6's first new order");
    let lines = ints(
        c,
        &format!("SELECT ol_i_id FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 6 AND ol_o_id = {} ORDER BY ol_number", x.o_id),
    );
    let items: Vec<i64> = x.lines.iter().map(|l| i64::from(l.item)).collect();
    assert_eq!(lines, items);
    let stock_after = stock(c);
    let mut want = stock_before.clone();
    for l in &x.lines {
        let e = want.get_mut(&i64::from(l.item)).unwrap();
        let q = i64::from(l.qty);
        e.0 = if e.0 - q >= 10 { e.0 - q } else { e.0 - q + 91 };
        e.1 += q;
        e.2 += 1;
    }
    assert_eq!(
        stock_after, want,
        "the stock of the order's items, and no other"
    );

    // Payment by last name: the middle of those named so, by first name.
    let mut by_name = BTreeMap::new();
    for k in 0..1000 {
        by_name.insert(last_name_string(k), k);
    }
    let (name, k) = rows(
        c,
        "SELECT c_last FROM customer WHERE c_w_id = 1 AND c_d_id = 3 GROUP BY c_last \
         HAVING COUNT(*) >= 4 ORDER BY c_last",
    )
    .iter()
    .map(|r| r[0].clone().unwrap())
    .map(|n| {
        let k = by_name[&n];
        (n, k)
    })
    .next()
    .expect("a name shared by four customers");
    let named = ints(
        c,
        &format!("SELECT c_id FROM customer WHERE c_w_id = 1 AND c_d_id = 3 AND c_last = '{name}' ORDER BY c_first"),
    );
    let middle = named[(named.len() - 1) / 2];
    let cust = |c: &mut dyn Connection, id: i64| {
        num(
            c,
            &format!(
                "SELECT c_balance FROM customer WHERE c_w_id = 1 AND c_d_id = 3 AND c_id = {id}"
            ),
        )
    };
    let balance = cust(c, middle);
    let w_ytd = num(c, "SELECT w_ytd FROM warehouse WHERE w_id = 1");
    let history = int(c, "SELECT COUNT(*) FROM history");
    s.force.district = Some(3);
    s.force.by_name = Some(Some(k));
    run_txn(&mut s, c, Txn::Payment);
    let x = s.inputs().clone();
    assert_eq!(x.named, named.len());
    assert_eq!(x.c_id, middle, "position ⌈n/2⌉ of {named:?}");
    assert!((cust(c, middle) - (balance - x.amount)).abs() < 0.005);
    assert!(
        (num(c, "SELECT w_ytd FROM warehouse WHERE w_id = 1") - (w_ytd + x.amount)).abs() < 0.005
    );
    assert_eq!(int(c, "SELECT COUNT(*) FROM history"), history + 1);
    assert_eq!(
        int(c, &format!("SELECT COUNT(*) FROM history WHERE h_c_id = {middle} AND h_c_d_id = 3 AND h_amount > 10")),
        1
    );

    // Order-Status by id finds the customer's latest order.
    s.force.by_name = Some(None);
    run_txn(&mut s, c, Txn::OrderStatus);
    let x = s.inputs().clone();
    let latest = int(
        c,
        &format!(
            "SELECT MAX(o_id) FROM orders WHERE o_w_id = 1 AND o_d_id = {} AND o_c_id = {}",
            x.d, x.c_id
        ),
    );
    assert_eq!(x.o_id, latest);

    // Delivery: the oldest undelivered order of every district.
    let oldest = ints(
        c,
        "SELECT MIN(no_o_id) FROM new_order WHERE no_w_id = 1 GROUP BY no_d_id ORDER BY no_d_id",
    );
    let undelivered = int(c, "SELECT COUNT(*) FROM new_order");
    run_txn(&mut s, c, Txn::Delivery);
    let x = s.inputs().clone();
    assert_eq!(x.delivered.to_vec(), oldest);
    assert_eq!(int(c, "SELECT COUNT(*) FROM new_order"), undelivered - 10);
    for (d, o) in (1..=10).zip(&oldest) {
        let carrier = int(
            c,
            &format!(
                "SELECT o_carrier_id FROM orders WHERE o_w_id = 1 AND o_d_id = {d} AND o_id = {o}"
            ),
        );
        assert_eq!(carrier, i64::from(x.carrier));
        assert_eq!(
            int(c, &format!("SELECT COUNT(*) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = {d} AND ol_o_id = {o} AND ol_delivery_d IS NULL")),
            0
        );
    }

    // Stock-Level: distinct items of the district's last 20 orders below
    // the threshold, counted here another way.
    run_txn(&mut s, c, Txn::StockLevel);
    let x = s.inputs().clone();
    assert_eq!((x.w, x.d), (1, 3), "terminal 2 is district 3's");
    let next = int(
        c,
        &format!(
            "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = {}",
            x.d
        ),
    );
    let want = int(
        c,
        &format!(
            "SELECT COUNT(*) FROM stock WHERE s_w_id = 1 AND s_quantity < {} AND s_i_id IN \
             (SELECT ol_i_id FROM order_line WHERE ol_w_id = 1 AND ol_d_id = {} \
              AND ol_o_id >= {} AND ol_o_id < {next})",
            x.threshold,
            x.d,
            next - 20
        ),
    );
    assert_eq!(x.low_stock, want);
    assert!(want > 0, "some items below {} among 20 orders", x.threshold);
}

/// A zero-think run of 10 terminals on 4 connections, Delivery deferred,
/// then the check; the record holds the verdict and the database's own
/// count of New-Orders beside the client's.
fn a_run_leaves_the_database_consistent(url: &str, seconds: &str) {
    let dir = Dir::new();
    let json = dir.join("run.json");
    let run = dbsweep(&[
        "run",
        "tpcc",
        "--db",
        url,
        "--warehouses",
        "1",
        "--no-wait",
        "--delivery",
        "deferred",
        "--threads",
        "4",
        "--time",
        seconds,
        "--json",
        json.to_str().unwrap(),
        "--check",
    ]);
    run.ok();
    let after = run
        .stdout
        .split("Consistency after the run:")
        .nth(1)
        .unwrap_or("");
    assert!(after.contains("12 of 12 conditions hold"), "{}", run.stdout);
    assert!(run.stdout.contains("tpmC: "), "{}", run.stdout);
    assert!(run.stdout.contains("NOPM: "), "{}", run.stdout);
    let doc = read_json(&json);
    let res = &doc["result"];
    let new_orders = res["transaction_types"][0]["count"].as_u64().unwrap();
    let deliveries = res["transaction_types"][3]["count"].as_u64().unwrap();
    assert!(
        new_orders > 20 && deliveries > 0,
        "{new_orders} New-Orders, {deliveries} Deliveries"
    );
    assert_eq!(res["errors"]["other"], 0, "{}", res["errors"]);
    assert_eq!(res["failed_transactions"], 0);
    // Each queued Delivery ran, but those queued as the window closed.
    let types = res["transaction_types"].as_array().unwrap();
    let executed = types
        .iter()
        .find(|t| t["name"] == "delivery_deferred")
        .map_or(0, |t| t["count"].as_u64().unwrap());
    assert!(
        executed <= deliveries && executed + 4 >= deliveries,
        "{deliveries} queued, {executed} executed"
    );
    // The verdict is in the record.
    let conditions = res["consistency"].as_array().unwrap();
    assert_eq!(conditions.len(), 12);
    assert!(
        conditions.iter().all(|c| c["holds"] == true),
        "{conditions:?}"
    );
    // The database's count of New-Orders beside the client's: they differ
    // by at most the transactions in flight at the window's edges — those
    // begun before it opened and committed inside it count only in the
    // database, those begun inside it and committed after its last reading
    // only in the client — each up to the 4 terminals.
    let count = &res["metrics"]["window_counts"][0];
    assert_eq!(
        count["name"], "sum(d_next_o_id)",
        "{}",
        res["metrics"]["gaps"]
    );
    let db = count["end"].as_f64().unwrap() - count["start"].as_f64().unwrap();
    assert!(
        (db - new_orders as f64).abs() <= 8.0,
        "database {db}, client {new_orders}"
    );
    // TPC-C's results in the record: tpmC, NOPM and TPM from its counts,
    // the database's NOPM from its window count, the server's TPM from its
    // counters, the verdicts.
    let t = util::tpcc::check_record(&doc);
    assert!(t["server_nopm"].as_f64().unwrap() > 0.0, "{t}");
    assert_eq!(t["consistency"]["holds"], true);
    if !url.starts_with("sqlite") {
        assert!(t["server_tpm"].as_f64().unwrap() > 0.0, "{t}");
        // The server's commits, read by the sampler: at least the
        // New-Orders the client saw committed (PostgreSQL's counters may
        // lag their last second).
        let sql = &res["metrics"]["window"]["sql"];
        let commits = sql["Com_commit"]
            .as_f64()
            .or(sql["pg_stat_database.xact_commit"].as_f64())
            .unwrap();
        assert!(commits >= 0.5 * new_orders as f64, "{commits} commits");
        assert!(
            run.stdout.contains("the server's: ")
                && !run.stdout.contains("the server's: not measured"),
            "{}",
            run.stdout
        );
    }
    let r = dbsweep(&["check", "tpcc", "--db", url]);
    r.ok();
    assert!(
        r.stdout.contains("12 of 12 conditions hold"),
        "{}",
        r.stdout
    );
}

/// A broken row fails its condition, naming it.
fn a_broken_row_fails_its_condition(url: &str) {
    let mut c = driver::connect(&Target::parse(url).unwrap()).unwrap();
    let c = c.as_mut();
    c.execute_sql("UPDATE district SET d_ytd = d_ytd + 1 WHERE d_w_id = 1 AND d_id = 7")
        .unwrap();
    let r = dbsweep(&["check", "tpcc", "--db", url]);
    r.expect_status(1);
    assert!(
        r.stdout.contains("FAIL  3.3.2.1 W_YTD = sum(D_YTD)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("FAIL  3.3.2.9 D_YTD = sum(H_AMOUNT)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("warehouse 1 district 7: D_YTD"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("10 of 12 conditions hold"),
        "{}",
        r.stdout
    );
    c.execute_sql("UPDATE district SET d_ytd = d_ytd - 1 WHERE d_w_id = 1 AND d_id = 7")
        .unwrap();
    c.execute_sql("DELETE FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id = 17 AND ol_number = 1")
        .unwrap();
    let r = dbsweep(&["check", "tpcc", "--db", url]);
    r.expect_status(1);
    assert!(r.stdout.contains("FAIL  3.3.2.4"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("warehouse 1 district 2 order 17: O_OL_CNT"),
        "{}",
        r.stdout
    );
}

#[test]
fn transactions_on_sqlite() {
    let dir = Dir::new();
    let url = dir.sqlite_url("t.db");
    transactions_write_exactly_their_rows(&url, Dialect::Sqlite);
    a_run_leaves_the_database_consistent(&url, "5");
    a_broken_row_fails_its_condition(&url);
}

#[test]
fn transactions_on_mariadb() {
    let s = Server::start("mariadb", &[]);
    transactions_write_exactly_their_rows(&s.url, Dialect::Mysql);
    a_run_leaves_the_database_consistent(&s.url, "10");
    a_broken_row_fails_its_condition(&s.url);
}

/// PostgreSQL's primary keys are built after the data, under the names a
/// declared key takes; a load stopped while they were being built resumes
/// by building them again.
fn keys_built_after_the_load(url: &str) {
    dbsweep(&["prepare", "tpcc", "--db", url, "--warehouses", "1"]).ok();
    let keys_sql = "SELECT conname FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid \
                    WHERE c.contype = 'p' AND t.relname IN ('warehouse', 'district', 'customer', \
                    'history', 'item', 'stock', 'orders', 'new_order', 'order_line') ORDER BY 1";
    let expected: Vec<String> = [
        "customer",
        "district",
        "item",
        "new_order",
        "order_line",
        "orders",
        "stock",
        "warehouse",
    ]
    .iter()
    .map(|t| format!("{t}_pkey"))
    .collect();
    let keys = |c: &mut dyn Connection| -> Vec<String> {
        rows(c, keys_sql)
            .into_iter()
            .map(|r| r[0].clone().unwrap())
            .collect()
    };
    let mut conn = driver::connect(&Target::parse(url).unwrap()).unwrap();
    let c = conn.as_mut();
    assert_eq!(keys(c), expected);
    // The key is the table's: a duplicate is refused.
    let dup = c.execute_sql("INSERT INTO warehouse (w_id) VALUES (1)");
    assert!(dup.is_err(), "a second warehouse 1 was accepted");
    // Stopped while building the indexes: every warehouse marked, some
    // keys built. `prepare` finishes it.
    c.execute_sql("CREATE TABLE tpcc_load (warehouse INTEGER)")
        .unwrap();
    c.execute_sql("INSERT INTO tpcc_load VALUES (0), (1)")
        .unwrap();
    c.execute_sql("ALTER TABLE stock DROP CONSTRAINT stock_pkey")
        .unwrap();
    dbsweep(&["prepare", "tpcc", "--db", url, "--warehouses", "1"]).ok();
    assert_eq!(keys(c), expected);
    assert!(!c.table_exists("tpcc_load").unwrap());
    dbsweep(&["cleanup", "tpcc", "--db", url]).ok();
}

#[test]
fn transactions_on_postgres() {
    let s = Server::start("postgres", &[]);
    keys_built_after_the_load(&s.url);
    transactions_write_exactly_their_rows(&s.url, Dialect::Postgres);
    a_run_leaves_the_database_consistent(&s.url, "10");
    a_broken_row_fails_its_condition(&s.url);
}
