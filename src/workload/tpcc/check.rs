//! TPC-C's consistency conditions (clause 3.3.2.1–12), checked on a
//! database: `dbsweep check tpcc`. Each condition is one or a few
//! aggregate queries compared in the client; a condition that fails names
//! itself, the first warehouses/districts/rows that break it with their
//! numbers, and how many do.
//!
//! Condition 11 (count(ORDER) − count(NEW-ORDER) = 2100 per district) holds
//! as the spec states it only until the first Delivery, which removes
//! NEW-ORDER rows; it is checked with the orders delivered since the load
//! (O_ID > 2100 with a carrier) added to the 2100.

use std::collections::BTreeMap;

use anyhow::Context as _;

use crate::driver::Connection;

/// One condition's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    /// Its number in clause 3.3.2 (1–12).
    pub number: u8,
    pub title: &'static str,
    /// What breaks it, first few first; empty when it holds.
    pub failures: Vec<String>,
    /// How many warehouses, districts, customers or rows break it.
    pub count: u64,
}

impl Condition {
    pub fn holds(&self) -> bool {
        self.count == 0
    }
}

/// Failures named in full; the rest are counted.
const SHOWN: usize = 5;

type Key = (i64, i64, i64);

fn query(conn: &mut dyn Connection, sql: &str) -> anyhow::Result<Vec<Vec<f64>>> {
    let rows = conn
        .query_text(sql)
        .with_context(|| format!("could not check the tpcc tables: {sql}"))?;
    Ok(rows
        .into_iter()
        .map(|r| {
            r.into_iter()
                .map(|v| {
                    v.and_then(|s| s.trim().parse::<f64>().ok())
                        .unwrap_or(f64::NAN)
                })
                .collect()
        })
        .collect())
}

/// Rows keyed by their first `n` columns (warehouse, district, id), the
/// rest as values.
fn keyed(rows: Vec<Vec<f64>>, n: usize) -> BTreeMap<Key, Vec<f64>> {
    rows.into_iter()
        .map(|r| {
            let k = |i: usize| if i < n { r[i] as i64 } else { 0 };
            ((k(0), k(1), k(2)), r[n..].to_vec())
        })
        .collect()
}

/// Money amounts equal to the cent (SQLite sums binary fractions).
fn same(a: f64, b: f64) -> bool {
    (a - b).abs() < 0.005 + 1e-12 * a.abs().max(b.abs())
}

fn nz(x: f64) -> f64 {
    if x.is_nan() {
        0.0
    } else {
        x
    }
}

struct Acc {
    c: Condition,
}

impl Acc {
    fn new(number: u8, title: &'static str) -> Acc {
        Acc {
            c: Condition {
                number,
                title,
                failures: Vec::new(),
                count: 0,
            },
        }
    }

    fn fail(&mut self, what: impl FnOnce() -> String) {
        self.c.count += 1;
        if self.c.failures.len() < SHOWN {
            self.c.failures.push(what());
        }
    }
}

fn district(k: &Key) -> String {
    format!("warehouse {} district {}", k.0, k.1)
}

/// Checks the twelve conditions on `conn`'s tpcc tables.
pub fn check(conn: &mut dyn Connection) -> anyhow::Result<Vec<Condition>> {
    let t = Totals::read(conn)?;
    let mut out = vec![
        warehouse_ytd_of_districts(&t),
        next_order_ids(&t),
        new_orders_contiguous(&t),
        order_line_counts(&t),
    ];
    out.push(each_row_fails(
        conn,
        5,
        "O_CARRIER_ID is null exactly for orders in NEW-ORDER",
        "SELECT o_w_id, o_d_id, o_id, o_carrier_id FROM orders LEFT JOIN new_order \
         ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id \
         WHERE (o_carrier_id IS NULL AND no_o_id IS NULL) \
         OR (o_carrier_id IS NOT NULL AND no_o_id IS NOT NULL)",
        |r| {
            let state = if r[3].is_nan() {
                "has no carrier and no NEW-ORDER row"
            } else {
                "has a carrier and a NEW-ORDER row"
            };
            format!(
                "warehouse {} district {} order {}: {state}",
                r[0], r[1], r[2]
            )
        },
    )?);
    out.push(each_row_fails(
        conn,
        6,
        "O_OL_CNT = the order's ORDER-LINE rows",
        "SELECT o_w_id, o_d_id, o_id, o_ol_cnt, COUNT(ol_o_id) FROM orders LEFT JOIN order_line \
         ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
         GROUP BY o_w_id, o_d_id, o_id, o_ol_cnt HAVING o_ol_cnt <> COUNT(ol_o_id)",
        |r| {
            format!(
                "warehouse {} district {} order {}: O_OL_CNT {}, {} lines",
                r[0], r[1], r[2], r[3], r[4]
            )
        },
    )?);
    out.push(each_row_fails(
        conn,
        7,
        "OL_DELIVERY_D is null exactly when O_CARRIER_ID is",
        "SELECT ol_w_id, ol_d_id, ol_o_id, ol_number FROM order_line JOIN orders \
         ON o_w_id = ol_w_id AND o_d_id = ol_d_id AND o_id = ol_o_id \
         WHERE (ol_delivery_d IS NULL AND o_carrier_id IS NOT NULL) \
         OR (ol_delivery_d IS NOT NULL AND o_carrier_id IS NULL)",
        |r| {
            format!(
                "warehouse {} district {} order {} line {}: delivery date and carrier disagree",
                r[0], r[1], r[2], r[3]
            )
        },
    )?);
    out.push(warehouse_ytd_of_history(&t));
    out.push(district_ytd_of_history(&t));
    let (c10, c12) = customer_balances(conn)?;
    out.push(c10);
    out.push(orders_delivered_since_load(&t));
    out.push(c12);
    Ok(out)
}

/// The per-warehouse and per-district sums and counts most conditions
/// compare, keyed by warehouse (and district).
struct Totals {
    /// W_YTD.
    warehouses: BTreeMap<Key, Vec<f64>>,
    /// D_YTD, D_NEXT_O_ID.
    districts: BTreeMap<Key, Vec<f64>>,
    /// Per warehouse: sum(D_YTD).
    d_ytd_sum: BTreeMap<Key, Vec<f64>>,
    /// sum(H_AMOUNT) per warehouse, and per district.
    h_by_w: BTreeMap<Key, Vec<f64>>,
    h_by_d: BTreeMap<Key, Vec<f64>>,
    /// Per district: max(O_ID), sum(O_OL_CNT), count, the orders delivered
    /// since the load.
    orders: BTreeMap<Key, Vec<f64>>,
    /// Per district: max(NO_O_ID), min(NO_O_ID), count.
    new_orders: BTreeMap<Key, Vec<f64>>,
    /// Per district: count(ORDER-LINE).
    lines: BTreeMap<Key, Vec<f64>>,
}

impl Totals {
    fn read(conn: &mut dyn Connection) -> anyhow::Result<Totals> {
        Ok(Totals {
            warehouses: keyed(query(conn, "SELECT w_id, w_ytd FROM warehouse")?, 1),
            districts: keyed(
                query(
                    conn,
                    "SELECT d_w_id, d_id, d_ytd, d_next_o_id FROM district",
                )?,
                2,
            ),
            d_ytd_sum: keyed(
                query(
                    conn,
                    "SELECT d_w_id, SUM(d_ytd) FROM district GROUP BY d_w_id",
                )?,
                1,
            ),
            h_by_w: keyed(
                query(
                    conn,
                    "SELECT h_w_id, SUM(h_amount) FROM history GROUP BY h_w_id",
                )?,
                1,
            ),
            h_by_d: keyed(
                query(
                    conn,
                    "SELECT h_w_id, h_d_id, SUM(h_amount) FROM history GROUP BY h_w_id, h_d_id",
                )?,
                2,
            ),
            orders: keyed(
                query(
                    conn,
                    "SELECT o_w_id, o_d_id, MAX(o_id), SUM(o_ol_cnt), COUNT(*), \
                     SUM(CASE WHEN o_id > 2100 AND o_carrier_id IS NOT NULL THEN 1 ELSE 0 END) \
                     FROM orders GROUP BY o_w_id, o_d_id",
                )?,
                2,
            ),
            new_orders: keyed(
                query(
                    conn,
                    "SELECT no_w_id, no_d_id, MAX(no_o_id), MIN(no_o_id), COUNT(*) FROM new_order \
                     GROUP BY no_w_id, no_d_id",
                )?,
                2,
            ),
            lines: keyed(
                query(
                    conn,
                    "SELECT ol_w_id, ol_d_id, COUNT(*) FROM order_line GROUP BY ol_w_id, ol_d_id",
                )?,
                2,
            ),
        })
    }
}

/// Value `i` of the row at `k`; NaN when there is none.
fn get(m: &BTreeMap<Key, Vec<f64>>, k: &Key, i: usize) -> f64 {
    m.get(k).and_then(|v| v.get(i)).copied().unwrap_or(f64::NAN)
}

/// Condition 1: a warehouse's year-to-date balance is its districts'.
fn warehouse_ytd_of_districts(t: &Totals) -> Condition {
    let mut c = Acc::new(1, "W_YTD = sum(D_YTD)");
    for (k, v) in &t.warehouses {
        let sum = get(&t.d_ytd_sum, k, 0);
        if !same(v[0], sum) {
            c.fail(|| {
                format!(
                    "warehouse {}: W_YTD {:.2}, sum(D_YTD) {:.2}",
                    k.0, v[0], sum
                )
            });
        }
    }
    c.c
}

/// Condition 2: a district's next order id follows its last order and
/// its last new order.
fn next_order_ids(t: &Totals) -> Condition {
    let mut c = Acc::new(2, "D_NEXT_O_ID − 1 = max(O_ID) = max(NO_O_ID)");
    for (k, v) in &t.districts {
        let next = v[1] - 1.0;
        let max_o = get(&t.orders, k, 0);
        let max_no = get(&t.new_orders, k, 0);
        // A district whose every order is delivered has no NEW-ORDER row.
        if next != max_o || !(max_no.is_nan() || max_no == next) {
            c.fail(|| {
                format!(
                    "{}: D_NEXT_O_ID − 1 = {next}, max(O_ID) = {max_o}, max(NO_O_ID) = {max_no}",
                    district(k)
                )
            });
        }
    }
    c.c
}

/// Condition 3: a district's new orders have consecutive ids.
fn new_orders_contiguous(t: &Totals) -> Condition {
    let mut c = Acc::new(3, "max(NO_O_ID) − min(NO_O_ID) + 1 = count(NEW-ORDER)");
    for (k, v) in &t.new_orders {
        if v[0] - v[1] + 1.0 != v[2] {
            c.fail(|| {
                format!(
                    "{}: max {} − min {} + 1 ≠ {} rows",
                    district(k),
                    v[0],
                    v[1],
                    v[2]
                )
            });
        }
    }
    c.c
}

/// Condition 4: a district's orders count as many lines as it has.
fn order_line_counts(t: &Totals) -> Condition {
    let mut c = Acc::new(4, "sum(O_OL_CNT) = count(ORDER-LINE)");
    for (k, v) in &t.orders {
        let n = get(&t.lines, k, 0);
        if v[1] != n {
            c.fail(|| format!("{}: sum(O_OL_CNT) {}, order lines {n}", district(k), v[1]));
        }
    }
    c.c
}

/// A condition (5, 6, 7) whose query returns the rows that break it, each
/// a failure as `describe` words it.
fn each_row_fails(
    conn: &mut dyn Connection,
    number: u8,
    title: &'static str,
    sql: &str,
    describe: impl Fn(&[f64]) -> String,
) -> anyhow::Result<Condition> {
    let mut c = Acc::new(number, title);
    for r in query(conn, sql)? {
        c.fail(|| describe(&r));
    }
    Ok(c.c)
}

/// Condition 8: a warehouse's year-to-date balance is what its history
/// says was paid.
fn warehouse_ytd_of_history(t: &Totals) -> Condition {
    let mut c = Acc::new(8, "W_YTD = sum(H_AMOUNT)");
    for (k, v) in &t.warehouses {
        let sum = get(&t.h_by_w, k, 0);
        if !same(v[0], sum) {
            c.fail(|| {
                format!(
                    "warehouse {}: W_YTD {:.2}, sum(H_AMOUNT) {:.2}",
                    k.0, v[0], sum
                )
            });
        }
    }
    c.c
}

/// Condition 9: a district's likewise.
fn district_ytd_of_history(t: &Totals) -> Condition {
    let mut c = Acc::new(9, "D_YTD = sum(H_AMOUNT)");
    for (k, v) in &t.districts {
        let sum = get(&t.h_by_d, k, 0);
        if !same(v[0], sum) {
            c.fail(|| {
                format!(
                    "{}: D_YTD {:.2}, sum(H_AMOUNT) {:.2}",
                    district(k),
                    v[0],
                    sum
                )
            });
        }
    }
    c.c
}

/// Conditions 10 and 12, both on each customer's balance against what was
/// delivered to and paid by it (one pass over the customers).
fn customer_balances(conn: &mut dyn Connection) -> anyhow::Result<(Condition, Condition)> {
    let customers = keyed(
        query(
            conn,
            "SELECT c_w_id, c_d_id, c_id, c_balance, c_ytd_payment FROM customer",
        )?,
        3,
    );
    let delivered = keyed(
        query(
            conn,
            "SELECT o_w_id, o_d_id, o_c_id, SUM(ol_amount) FROM orders JOIN order_line \
             ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
             WHERE ol_delivery_d IS NOT NULL GROUP BY o_w_id, o_d_id, o_c_id",
        )?,
        3,
    );
    let paid = keyed(
        query(
            conn,
            "SELECT h_c_w_id, h_c_d_id, h_c_id, SUM(h_amount) FROM history \
             GROUP BY h_c_w_id, h_c_d_id, h_c_id",
        )?,
        3,
    );
    let mut c10 = Acc::new(10, "C_BALANCE = sum(delivered OL_AMOUNT) − sum(H_AMOUNT)");
    let mut c12 = Acc::new(12, "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)");
    for (k, v) in &customers {
        let ol = nz(get(&delivered, k, 0));
        let h = nz(get(&paid, k, 0));
        let who = || format!("warehouse {} district {} customer {}", k.0, k.1, k.2);
        if !same(v[0], ol - h) {
            c10.fail(|| {
                format!(
                    "{}: C_BALANCE {:.2}, delivered {ol:.2} − paid {h:.2} = {:.2}",
                    who(),
                    v[0],
                    ol - h
                )
            });
        }
        if !same(v[0] + v[1], ol) {
            c12.fail(|| {
                format!(
                    "{}: C_BALANCE {:.2} + C_YTD_PAYMENT {:.2} = {:.2}, delivered {ol:.2}",
                    who(),
                    v[0],
                    v[1],
                    v[0] + v[1]
                )
            });
        }
    }
    Ok((c10.c, c12.c))
}

/// Condition 11, with the orders delivered since the load added to the
/// spec's 2100 (see the module's doc).
fn orders_delivered_since_load(t: &Totals) -> Condition {
    let mut c = Acc::new(
        11,
        "count(ORDER) − count(NEW-ORDER) = 2100 (+ orders delivered since the load)",
    );
    for (k, v) in &t.orders {
        let no = nz(get(&t.new_orders, k, 2));
        let want = 2100.0 + v[3];
        if v[2] - no != want {
            c.fail(|| {
                format!(
                    "{}: {} orders − {no} new orders = {}, expected {want}",
                    district(k),
                    v[2],
                    v[2] - no
                )
            });
        }
    }
    c.c
}
