//! DBT-1's interactions on SQLite and on real MariaDB and PostgreSQL
//! servers: the rows each one reads and writes are exactly the expected
//! ones (a cart of k lines becomes one order of k lines, the stock goes
//! down by TPC-W's rule, one card transaction; Admin Confirm changes its
//! item only), and a shopping run leaves the database consistent.

mod util;

use dbsweep::driver::{self, Connection, Dialect, Target};
use dbsweep::workload::dbt1::mix::{Interaction, Mix};
use dbsweep::workload::dbt1::schema::Scale;
use dbsweep::workload::dbt1::session::Script;
use dbsweep::workload::dbt1::Dbt1;
use dbsweep::workload::{ClientScript, Op, OptionValues, Workload};
use util::{dbsweep, read_json, Dir, Server};

use Interaction::*;

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
    num(c, sql) as i64
}

/// Runs interaction `it` of the script's user to its end.
fn interact(s: &mut Script, c: &mut dyn Connection, it: Interaction) {
    s.force(it);
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
        .unwrap_or_else(|e| panic!("{it:?}: {e}"));
    }
    s.end(true);
}

/// (item, quantity) of cart `sc`'s lines, by item.
fn cart(c: &mut dyn Connection, sc: i64) -> Vec<(i64, i64)> {
    rows(
        c,
        &format!("SELECT scl_i_id, scl_qty FROM shopping_cart_line WHERE scl_sc_id = {sc} ORDER BY scl_i_id"),
    )
    .iter()
    .map(|r| {
        let f = |i: usize| r[i].as_deref().unwrap().parse::<i64>().unwrap();
        (f(0), f(1))
    })
    .collect()
}

fn stock(c: &mut dyn Connection, item: i64) -> i64 {
    int(c, &format!("SELECT i_stock FROM item WHERE i_id = {item}"))
}

/// The interactions' rows on the database at `url`, prepared at 1,000
/// items and 1 EB.
fn interactions_write_exactly_their_rows(url: &str, dialect: Dialect) {
    dbsweep(&[
        "prepare", "dbt1", "--db", url, "--items", "1000", "--ebs", "1",
    ])
    .ok();
    let w = Dbt1::new(
        Scale::new(1000, 1),
        Mix::Shopping,
        dialect,
        9,
        OptionValues::default(),
    );
    let mut conn = driver::connect(&Target::parse(url).unwrap()).unwrap();
    let sql: Vec<String> = w.statements().iter().map(|s| s.sql.clone()).collect();
    conn.prepare_all(&sql).unwrap();
    let c = conn.as_mut();
    let mut s = w.script();
    s.user(0);
    let orders = int(c, "SELECT COUNT(*) FROM orders");

    // Browse, then put two items in a new cart.
    interact(&mut s, c, Home);
    interact(&mut s, c, ProductDetail);
    assert_eq!(int(c, "SELECT COUNT(*) FROM shopping_cart"), 0);
    interact(&mut s, c, ShoppingCart);
    let sc = int(c, "SELECT MAX(sc_id) FROM shopping_cart");
    assert!(
        sc > orders,
        "a cart's id ({sc}) is above every order's ({orders})"
    );
    let first = cart(c, sc);
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(first[0].1, 1);
    interact(&mut s, c, ProductDetail);
    interact(&mut s, c, ShoppingCart);
    let two = cart(c, sc);
    assert_eq!(two.iter().map(|l| l.1).sum::<i64>(), 2, "{two:?}");
    // From the cart page: quantities change, no line is added.
    interact(&mut s, c, ShoppingCart);
    let changed = cart(c, sc);
    assert_eq!(changed.len(), two.len());
    assert!(
        changed.iter().all(|l| (1..=10).contains(&l.1)),
        "{changed:?}"
    );
    assert_eq!(int(c, "SELECT COUNT(*) FROM shopping_cart"), 1);

    // Checkout: the cart gets its customer and its totals.
    interact(&mut s, c, CustomerRegistration);
    interact(&mut s, c, BuyRequest);
    let customer = s.customer().expect("a customer after Buy Request");
    assert_eq!(
        int(
            c,
            &format!("SELECT sc_c_id FROM shopping_cart WHERE sc_id = {sc}")
        ),
        customer
    );
    let total = num(
        c,
        &format!("SELECT sc_total FROM shopping_cart WHERE sc_id = {sc}"),
    );
    let parts = num(
        c,
        &format!(
            "SELECT sc_sub_total + sc_tax + sc_ship_cost FROM shopping_cart WHERE sc_id = {sc}"
        ),
    );
    assert!(
        total > 0.0 && (total - parts).abs() < 0.011,
        "{total} vs {parts}"
    );
    let lines = cart(c, sc);
    let before: Vec<i64> = lines.iter().map(|l| stock(c, l.0)).collect();
    let cards = int(c, "SELECT COUNT(*) FROM cc_xacts");

    // Buy Confirm: one order of the cart's k lines, the stock, one card row.
    interact(&mut s, c, BuyConfirm);
    assert_eq!(int(c, "SELECT COUNT(*) FROM orders"), orders + 1);
    assert_eq!(
        int(c, &format!("SELECT o_c_id FROM orders WHERE o_id = {sc}")),
        customer
    );
    let ordered: Vec<(i64, i64)> = rows(
        c,
        &format!("SELECT ol_i_id, ol_qty FROM order_line WHERE ol_o_id = {sc} ORDER BY ol_i_id"),
    )
    .iter()
    .map(|r| {
        (
            r[0].as_deref().unwrap().parse().unwrap(),
            r[1].as_deref().unwrap().parse().unwrap(),
        )
    })
    .collect();
    assert_eq!(ordered, lines, "the order's lines are the cart's");
    for ((item, qty), old) in lines.iter().zip(before) {
        let want = if old - qty >= 10 {
            old - qty
        } else {
            old - qty + 21
        };
        assert_eq!(stock(c, *item), want, "item {item}: {old} less {qty}");
    }
    assert_eq!(int(c, "SELECT COUNT(*) FROM cc_xacts"), cards + 1);
    let amount = num(
        c,
        &format!("SELECT cx_xact_amt FROM cc_xacts WHERE cx_o_id = {sc}"),
    );
    assert!(
        (amount - total).abs() < 0.011,
        "card {amount}, cart {total}"
    );
    // The next cart is a new one.
    interact(&mut s, c, ShoppingCart);
    assert!(int(c, "SELECT MAX(sc_id) FROM shopping_cart") > sc);

    // Order Display reads the order back; Order Inquiry names the user.
    interact(&mut s, c, OrderInquiry);
    interact(&mut s, c, OrderDisplay);

    // Admin Confirm changes its item and no other row.
    let items_sql = "SELECT i_id, i_cost, i_image, i_thumbnail, i_pub_date, i_title, i_stock FROM item ORDER BY i_id";
    interact(&mut s, c, ProductDetail);
    let before = rows(c, items_sql);
    interact(&mut s, c, AdminRequest);
    interact(&mut s, c, AdminConfirm);
    let after = rows(c, items_sql);
    let changed: Vec<usize> = (0..before.len())
        .filter(|&i| before[i] != after[i])
        .collect();
    assert!(
        changed.len() <= 1,
        "Admin Confirm changed {} items",
        changed.len()
    );
    if let Some(&i) = changed.first() {
        let srp = num(c, &format!("SELECT i_srp FROM item WHERE i_id = {}", i + 1));
        let cost: f64 = after[i][1].as_deref().unwrap().parse().unwrap();
        assert!(
            cost >= 0.5 * srp - 0.01 && cost <= srp + 0.01,
            "cost {cost}, srp {srp}"
        );
    }

    // Pages and searches read without writing.
    let counts = |c: &mut dyn Connection| {
        [
            "orders",
            "order_line",
            "shopping_cart",
            "shopping_cart_line",
            "customer",
            "address",
        ]
        .map(|t| int(c, &format!("SELECT COUNT(*) FROM {t}")))
    };
    let quiet = counts(c);
    for it in [
        Home,
        NewProducts,
        BestSellers,
        SearchRequest,
        SearchResults,
        SearchResults,
        SearchResults,
    ] {
        interact(&mut s, c, it);
    }
    assert_eq!(counts(c), quiet);
}

/// After a shopping run at zero think time: no order without lines, no
/// negative stock, every order of the run has its cart's lines, errors
/// only of the kinds a benchmark expects.
fn a_shopping_run_leaves_the_database_consistent(url: &str, seconds: &str) {
    let dir = Dir::new();
    let json = dir.join("run.json");
    let r = dbsweep(&[
        "run",
        "dbt1",
        "--db",
        url,
        "--items",
        "1000",
        "--ebs",
        "1",
        "--eus",
        "32",
        "--threads",
        "8",
        "--think-time",
        "fixed:0s",
        "--time",
        seconds,
        "--json",
        json.to_str().unwrap(),
    ]);
    r.ok();
    let doc = read_json(&json);
    let res = &doc["result"];
    let bought = res["transaction_types"][9]["count"].as_u64().unwrap();
    assert!(bought > 10, "{bought} Buy Confirms");
    assert_eq!(res["errors"]["other"], 0, "{}", res["errors"]);
    assert_eq!(res["failed_transactions"], 0);
    let mut c = driver::connect(&Target::parse(url).unwrap()).unwrap();
    let c = c.as_mut();
    assert_eq!(
        int(
            c,
            "SELECT COUNT(*) FROM orders WHERE o_id NOT IN (SELECT ol_o_id FROM order_line)"
        ),
        0,
        "orders without lines"
    );
    assert_eq!(int(c, "SELECT COUNT(*) FROM item WHERE i_stock < 0"), 0);
    // Orders of the run carry their cart's id and its lines.
    let mismatched = int(
        c,
        "SELECT COUNT(*) FROM order_line WHERE ol_o_id > 2592 AND NOT EXISTS \
         (SELECT 1 FROM shopping_cart_line WHERE scl_sc_id = ol_o_id AND scl_i_id = ol_i_id \
          AND scl_qty = ol_qty)",
    );
    assert_eq!(mismatched, 0, "order lines that are not their cart's");
    let new_orders = int(c, "SELECT COUNT(*) FROM orders WHERE o_id > 2592");
    assert!(
        new_orders as u64 >= bought,
        "{new_orders} orders for {bought} Buy Confirms"
    );
    assert_eq!(
        int(c, "SELECT COUNT(*) FROM orders WHERE o_id > 2592 AND o_id NOT IN (SELECT cx_o_id FROM cc_xacts)"),
        0
    );
}

#[test]
fn interactions_on_sqlite() {
    let dir = Dir::new();
    let url = dir.sqlite_url("i.db");
    interactions_write_exactly_their_rows(&url, Dialect::Sqlite);
    a_shopping_run_leaves_the_database_consistent(&url, "5");
}

#[test]
fn interactions_on_mariadb() {
    let s = Server::start("mariadb", &[]);
    interactions_write_exactly_their_rows(&s.url, Dialect::Mysql);
    a_shopping_run_leaves_the_database_consistent(&s.url, "30");
}

#[test]
fn interactions_on_postgres() {
    let s = Server::start("postgres", &[]);
    interactions_write_exactly_their_rows(&s.url, Dialect::Postgres);
    a_shopping_run_leaves_the_database_consistent(&s.url, "30");
}
