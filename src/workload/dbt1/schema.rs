//! DBT-1's ten tables: their DDL per dialect, their sizes at a scale, and
//! their rows, each a function of the seed, its table and its row number,
//! generated in ranges for the shared parallel [`loader`].
//!
//! Sizes as DBT-1 (TPC-W clause 4.3): `items` ∈ {1k, 10k, 100k, 1M, 10M},
//! authors = items / 4, customers = 2880 × EBs, addresses = 2 × customers,
//! orders = 0.9 × customers with 1–5 lines each and one cc_xacts row, 92
//! countries; the two shopping-cart tables start empty. A table
//! `dbt1_scale` keeps the scale, so a run can tell a database prepared at
//! another one.
//!
//! Deviations from DBT-1's generator, each a bug there:
//! - an order ships 0–7 days *after* it was placed (DBT-1 writes the order
//!   date twice: its ship date is computed and then not printed);
//! - birth dates start in 1880 and author birth dates in 1800 as TPC-W
//!   says (DBT-1 starts both in 1900, a limit of the C library it used);
//! - an order's totals are those of its lines (sub-total of quantity ×
//!   cost less the line discount, 8.25 % tax, $3 + $1 per book shipping),
//!   not independent random numbers, so orders and lines agree;
//! - the subject RELIGION is spelled right.
//!
//! Dates are relative to a fixed day (2026-01-01), not the load's clock,
//! so the same seed gives the same rows whenever it is loaded.

use crate::driver::{Dialect, Value};
use crate::rand::Rng;
use crate::util::civil::sql_datetime;
use crate::workload::loader::{self, TablePlan};

use super::text::{self, BACKINGS, CARD_TYPES, COUNTRIES, SHIP_TYPES, STATUSES, SUBJECTS};

/// The allowed item counts (TPC-W clause 4.3).
pub const ITEM_SCALES: [u32; 5] = [1_000, 10_000, 100_000, 1_000_000, 10_000_000];

/// Customers per emulated browser (EB) of the scale.
pub const CUSTOMERS_PER_EB: u32 = 2880;

/// The day the data's dates count back from: 2026-01-01 00:00:00 UTC.
pub const EPOCH: i64 = 1_767_225_600;
const DAY: i64 = 86_400;
/// 1880-01-01 and 1800-01-01, as Unix times.
const Y1880: i64 = -2_840_140_800;
const Y1800: i64 = -5_364_662_400;
const Y1930: i64 = -1_262_304_000;

/// Mixed into the seed of the data, apart from every client's stream.
const LOAD_SALT: u64 = 0x6462_7431_6c6f_6164;

/// The tables, in load order; the last two start empty.
pub const TABLES: [&str; 10] = [
    "country",
    "author",
    "item",
    "customer",
    "address",
    "orders",
    "order_line",
    "cc_xacts",
    "shopping_cart",
    "shopping_cart_line",
];

/// The table that records the scale the data was prepared at.
pub const SCALE_TABLE: &str = "dbt1_scale";

const COLUMNS: [&[&str]; 8] = [
    &["co_id", "co_name", "co_exchange", "co_currency"],
    &["a_id", "a_fname", "a_lname", "a_mname", "a_dob", "a_bio"],
    &[
        "i_id",
        "i_title",
        "i_a_id",
        "i_pub_date",
        "i_publisher",
        "i_subject",
        "i_desc",
        "i_related1",
        "i_related2",
        "i_related3",
        "i_related4",
        "i_related5",
        "i_thumbnail",
        "i_image",
        "i_srp",
        "i_cost",
        "i_avail",
        "i_stock",
        "i_isbn",
        "i_page",
        "i_backing",
        "i_dimensions",
    ],
    &[
        "c_id",
        "c_uname",
        "c_passwd",
        "c_fname",
        "c_lname",
        "c_addr_id",
        "c_phone",
        "c_email",
        "c_since",
        "c_last_visit",
        "c_login",
        "c_expiration",
        "c_discount",
        "c_balance",
        "c_ytd_pmt",
        "c_birthdate",
        "c_data",
    ],
    &[
        "addr_id",
        "addr_street1",
        "addr_street2",
        "addr_city",
        "addr_state",
        "addr_zip",
        "addr_co_id",
    ],
    &[
        "o_id",
        "o_c_id",
        "o_date",
        "o_sub_total",
        "o_tax",
        "o_total",
        "o_ship_type",
        "o_ship_date",
        "o_bill_addr_id",
        "o_ship_addr_id",
        "o_status",
    ],
    &[
        "ol_id",
        "ol_o_id",
        "ol_i_id",
        "ol_qty",
        "ol_discount",
        "ol_comments",
    ],
    &[
        "cx_o_id",
        "cx_type",
        "cx_num",
        "cx_name",
        "cx_expiry",
        "cx_auth_id",
        "cx_xact_amt",
        "cx_xact_date",
        "cx_co_id",
    ],
];

/// The scale and the rows it gives.
#[derive(Debug, Clone)]
pub struct Scale {
    pub items: u32,
    pub ebs: u32,
    pub customers: u32,
    pub orders: u32,
}

impl Scale {
    pub fn new(items: u32, ebs: u32) -> Scale {
        let customers = CUSTOMERS_PER_EB * ebs;
        Scale {
            items,
            ebs,
            customers,
            orders: (u64::from(customers) * 9 / 10) as u32,
        }
    }

    pub fn authors(&self) -> u32 {
        (self.items / 4).max(1)
    }

    pub fn addresses(&self) -> u32 {
        2 * self.customers
    }
}

/// The rows of every table for one seed and scale.
pub struct Data {
    pub scale: Scale,
    pub dialect: Dialect,
    seed: u64,
    /// Order `o`'s first line is order line number `line_start[o - 1] + 1`;
    /// the last entry is the total.
    line_start: Vec<u32>,
}

/// The lines of one order, replayed from its own stream.
struct OrderLines {
    rng: Rng,
    count: u32,
}

impl Data {
    pub fn new(scale: Scale, dialect: Dialect, seed: u64) -> Data {
        let seed = seed ^ LOAD_SALT;
        let mut line_start = Vec::with_capacity(scale.orders as usize + 1);
        let mut total = 0u32;
        line_start.push(0);
        for o in 1..=scale.orders {
            total += order_lines(seed, o).count;
            line_start.push(total);
        }
        Data {
            scale,
            dialect,
            seed,
            line_start,
        }
    }

    pub fn order_lines_total(&self) -> u32 {
        *self.line_start.last().unwrap_or(&0)
    }

    /// Rows of each loaded table, in [`TABLES`] order.
    pub fn rows(&self) -> [u32; 8] {
        let s = &self.scale;
        [
            COUNTRIES.len() as u32,
            s.authors(),
            s.items,
            s.customers,
            s.addresses(),
            s.orders,
            self.order_lines_total(),
            s.orders,
        ]
    }

    /// How the loader builds each loaded table.
    pub fn plans(&self) -> Vec<TablePlan> {
        let rows = self.rows();
        (0..8)
            .map(|t| TablePlan {
                name: TABLES[t].to_string(),
                create: self.create(t),
                columns: COLUMNS[t].to_vec(),
                rows: rows[t],
                indexes: self.indexes(t),
                finish: self.finish(t),
            })
            .collect()
    }

    /// The CREATE TABLE of table `t` (any of the ten) with its primary key.
    pub fn create(&self, t: usize) -> String {
        let ts = if self.dialect == Dialect::Mysql {
            "DATETIME"
        } else {
            "TIMESTAMP"
        };
        let money = "DECIMAL(17,2)";
        let body = match t {
            0 => "co_id INTEGER NOT NULL, co_name VARCHAR(50), co_exchange DECIMAL(12,6), \
                  co_currency VARCHAR(18), PRIMARY KEY (co_id)"
                .to_string(),
            1 => "a_id INTEGER NOT NULL, a_fname VARCHAR(20), a_lname VARCHAR(20), \
                  a_mname VARCHAR(20), a_dob DATE, a_bio VARCHAR(500), PRIMARY KEY (a_id)"
                .to_string(),
            2 => format!(
                "i_id INTEGER NOT NULL, i_title VARCHAR(60), i_a_id INTEGER, i_pub_date DATE, \
                 i_publisher VARCHAR(60), i_subject VARCHAR(60), i_desc VARCHAR(500), \
                 i_related1 INTEGER, i_related2 INTEGER, i_related3 INTEGER, i_related4 INTEGER, \
                 i_related5 INTEGER, i_thumbnail INTEGER, i_image INTEGER, i_srp {money}, \
                 i_cost {money}, i_avail DATE, i_stock INTEGER, i_isbn CHAR(13), i_page INTEGER, \
                 i_backing VARCHAR(15), i_dimensions VARCHAR(25), PRIMARY KEY (i_id)"
            ),
            3 => format!(
                "c_id INTEGER NOT NULL, c_uname VARCHAR(20), c_passwd VARCHAR(20), \
                 c_fname VARCHAR(15), c_lname VARCHAR(15), c_addr_id INTEGER, c_phone VARCHAR(16), \
                 c_email VARCHAR(50), c_since DATE, c_last_visit DATE, c_login {ts}, \
                 c_expiration {ts}, c_discount DECIMAL(5,2), c_balance {money}, c_ytd_pmt {money}, \
                 c_birthdate DATE, c_data VARCHAR(500), PRIMARY KEY (c_id)"
            ),
            4 => "addr_id INTEGER NOT NULL, addr_street1 VARCHAR(40), addr_street2 VARCHAR(40), \
                  addr_city VARCHAR(30), addr_state VARCHAR(20), addr_zip VARCHAR(10), \
                  addr_co_id INTEGER, PRIMARY KEY (addr_id)"
                .to_string(),
            5 => format!(
                "o_id INTEGER NOT NULL, o_c_id INTEGER, o_date {ts}, o_sub_total {money}, \
                 o_tax {money}, o_total {money}, o_ship_type VARCHAR(10), o_ship_date {ts}, \
                 o_bill_addr_id INTEGER, o_ship_addr_id INTEGER, o_status VARCHAR(15), \
                 PRIMARY KEY (o_id)"
            ),
            6 => "ol_id INTEGER NOT NULL, ol_o_id INTEGER NOT NULL, ol_i_id INTEGER, \
                  ol_qty INTEGER, ol_discount DECIMAL(5,2), ol_comments VARCHAR(100), \
                  PRIMARY KEY (ol_o_id, ol_id)"
                .to_string(),
            7 => format!(
                "cx_o_id INTEGER NOT NULL, cx_type VARCHAR(10), cx_num VARCHAR(16), \
                 cx_name VARCHAR(31), cx_expiry DATE, cx_auth_id CHAR(15), cx_xact_amt {money}, \
                 cx_xact_date {ts}, cx_co_id INTEGER, PRIMARY KEY (cx_o_id)"
            ),
            8 => format!(
                "sc_id INTEGER NOT NULL, sc_c_id INTEGER, sc_date {ts}, sc_sub_total {money}, \
                 sc_tax {money}, sc_ship_cost {money}, sc_total {money}, sc_c_fname VARCHAR(15), \
                 sc_c_lname VARCHAR(15), sc_c_discount DECIMAL(5,2), PRIMARY KEY (sc_id)"
            ),
            _ => format!(
                "scl_sc_id INTEGER NOT NULL, scl_i_id INTEGER NOT NULL, scl_qty INTEGER, \
                 scl_cost {money}, scl_srp {money}, scl_title VARCHAR(60), \
                 scl_backing VARCHAR(15), PRIMARY KEY (scl_sc_id, scl_i_id)"
            ),
        };
        let engine = if self.dialect == Dialect::Mysql {
            " ENGINE=InnoDB"
        } else {
            ""
        };
        format!("CREATE TABLE {} ({body}){engine}", TABLES[t])
    }

    /// The secondary indexes the interactions need, built after the load.
    fn indexes(&self, t: usize) -> Vec<String> {
        let ix: &[&str] = match t {
            // New Products and the subject search: by subject, newest first.
            2 => &[
                "CREATE INDEX item_subject ON item (i_subject, i_pub_date)",
                "CREATE INDEX item_author ON item (i_a_id)",
            ],
            // Logins by user name.
            3 => &["CREATE UNIQUE INDEX customer_uname ON customer (c_uname)"],
            // A customer's latest order.
            5 => &["CREATE INDEX orders_customer ON orders (o_c_id, o_date)"],
            _ => &[],
        };
        ix.iter().map(|s| s.to_string()).collect()
    }

    fn finish(&self, t: usize) -> Vec<String> {
        match (self.dialect, t) {
            (Dialect::Postgres, _) => vec![format!("ANALYZE {}", TABLES[t])],
            (Dialect::Sqlite, 7) => vec!["ANALYZE".to_string()],
            _ => Vec::new(),
        }
    }

    /// Appends row `n` (from 1) of loaded table `t` to `out`.
    pub fn row(&self, t: usize, n: u32, out: &mut Vec<Value>) {
        let mut rng = Rng::for_client(self.seed ^ ((t as u64 + 1) << 56), u64::from(n));
        let s = &self.scale;
        let int = |v: u32| Value::Int(i64::from(v));
        let txt = |rng: &mut Rng, min: u32, max: u32| {
            let mut x = String::new();
            text::a_string(rng, min, max, &mut x);
            Value::Text(x)
        };
        match t {
            0 => {
                let (name, currency) = COUNTRIES[n as usize - 1];
                out.extend([
                    int(n),
                    Value::Text(name.into()),
                    Value::Float(round(rng.next_f64() * 10.0 + 0.5, 6)),
                    Value::Text(currency.into()),
                ]);
            }
            1 => {
                let mut lname = String::new();
                text::author_lname(&mut rng, u64::from(n), u64::from(s.authors()), &mut lname);
                out.push(int(n));
                out.push(txt(&mut rng, 3, 20));
                out.push(Value::Text(lname));
                out.push(txt(&mut rng, 1, 20));
                out.push(date(between(&mut rng, Y1800, EPOCH - 3650 * DAY)));
                out.push(txt(&mut rng, 125, 500));
            }
            2 => self.item(&mut rng, n, out),
            3 => {
                let mut uname = String::new();
                text::digsyl(u64::from(n), 0, &mut uname);
                let since = EPOCH - DAY - between(&mut rng, 0, 730 * DAY);
                let visit = (since + between(&mut rng, 0, 60 * DAY)).min(EPOCH);
                out.push(int(n));
                out.push(Value::Text(uname.clone()));
                out.push(Value::Text(uname.to_lowercase()));
                out.push(txt(&mut rng, 8, 15));
                out.push(txt(&mut rng, 8, 15));
                out.push(int(rng.uniform(1, s.addresses())));
                let mut phone = String::new();
                text::n_string(&mut rng, 9, 16, &mut phone);
                out.push(Value::Text(phone));
                let mut email = uname;
                email.push('@');
                text::a_string(&mut rng, 2, 9, &mut email);
                email.push_str(".com");
                out.push(Value::Text(email));
                out.push(date(since));
                out.push(date(visit));
                out.push(Value::Text(sql_datetime(EPOCH)));
                out.push(Value::Text(sql_datetime(EPOCH + 7200)));
                out.push(Value::Float(f64::from(rng.uniform(0, 50)) / 100.0));
                out.push(Value::Float(0.0));
                out.push(Value::Float(f64::from(rng.uniform(0, 99_999)) / 100.0));
                out.push(date(between(&mut rng, Y1880, EPOCH)));
                out.push(txt(&mut rng, 100, 500));
            }
            4 => {
                out.push(int(n));
                out.push(txt(&mut rng, 15, 40));
                out.push(txt(&mut rng, 15, 40));
                out.push(txt(&mut rng, 4, 30));
                out.push(txt(&mut rng, 2, 20));
                out.push(txt(&mut rng, 5, 10));
                out.push(int(rng.uniform(1, COUNTRIES.len() as u32)));
            }
            5 => self.order(&mut rng, n, out),
            6 => self.order_line(n, out),
            _ => self.cc_xact(&mut rng, n, out),
        }
    }

    fn item(&self, rng: &mut Rng, n: u32, out: &mut Vec<Value>) {
        let s = &self.scale;
        let int = |v: u32| Value::Int(i64::from(v));
        let mut title = String::new();
        text::title(rng, u64::from(n), u64::from(s.items), &mut title);
        let author = if n <= s.authors() {
            n
        } else {
            rng.uniform(1, s.authors())
        };
        let pub_date = between(rng, Y1930, EPOCH);
        let mut related = [0u32; 5];
        for k in 0..5 {
            related[k] = loop {
                let r = rng.uniform(1, s.items);
                if s.items < 6 || !related[..k].contains(&r) {
                    break r;
                }
            };
        }
        let (srp, cost) = item_price(self.seed, n);
        out.push(int(n));
        out.push(Value::Text(title));
        out.push(int(author));
        out.push(date(pub_date));
        let mut x = String::new();
        text::a_string(rng, 14, 60, &mut x);
        out.push(Value::Text(x));
        out.push(Value::Text(
            SUBJECTS[rng.uniform(0, SUBJECTS.len() as u32 - 1) as usize].into(),
        ));
        let mut d = String::new();
        text::a_string(rng, 100, 500, &mut d);
        out.push(Value::Text(d));
        out.extend(related.iter().map(|&r| int(r)));
        out.push(int(n));
        out.push(int(n));
        out.push(Value::Float(srp));
        out.push(Value::Float(cost));
        out.push(date(pub_date + DAY + between(rng, 0, 29 * DAY)));
        out.push(int(rng.uniform(10, 30)));
        let mut isbn = String::new();
        text::a_string(rng, 13, 13, &mut isbn);
        out.push(Value::Text(isbn));
        out.push(int(rng.uniform(20, 9999)));
        out.push(Value::Text(
            BACKINGS[rng.uniform(0, BACKINGS.len() as u32 - 1) as usize].into(),
        ));
        let dims = format!(
            "{:.2}x{:.2}x{:.2}",
            f64::from(rng.uniform(1, 9999)) / 100.0,
            f64::from(rng.uniform(1, 9999)) / 100.0,
            f64::from(rng.uniform(1, 9999)) / 100.0
        );
        out.push(Value::Text(dims));
    }

    /// Order `o`'s date: its stream's first draw (lines come from another).
    fn order_date(&self, o: u32) -> i64 {
        let mut rng = Rng::for_client(self.seed ^ ORDER_DATE_SALT, u64::from(o));
        EPOCH - DAY - between(&mut rng, 0, 60 * DAY)
    }

    fn order(&self, rng: &mut Rng, o: u32, out: &mut Vec<Value>) {
        let s = &self.scale;
        let int = |v: u32| Value::Int(i64::from(v));
        let (sub, qty) = self.order_amount(o);
        let tax = round(sub * 0.0825, 2);
        let total = round(sub + tax + 3.0 + qty as f64, 2);
        let placed = self.order_date(o);
        out.push(int(o));
        out.push(int(rng.uniform(1, s.customers)));
        out.push(Value::Text(sql_datetime(placed)));
        out.push(Value::Float(sub));
        out.push(Value::Float(tax));
        out.push(Value::Float(total));
        out.push(Value::Text(
            SHIP_TYPES[rng.uniform(0, SHIP_TYPES.len() as u32 - 1) as usize].into(),
        ));
        out.push(Value::Text(sql_datetime(placed + between(rng, 0, 7 * DAY))));
        out.push(int(rng.uniform(1, s.addresses())));
        out.push(int(rng.uniform(1, s.addresses())));
        out.push(Value::Text(
            STATUSES[rng.uniform(0, STATUSES.len() as u32 - 1) as usize].into(),
        ));
    }

    /// Order `o`'s sub-total (its lines' quantity × cost less their
    /// discounts) and the books in it.
    fn order_amount(&self, o: u32) -> (f64, u64) {
        let mut lines = order_lines(self.seed, o);
        let (mut sub, mut qty) = (0.0, 0u64);
        for _ in 0..lines.count {
            let (item, q, discount) = line(&mut lines.rng, self.scale.items);
            let (_, cost) = item_price(self.seed, item);
            sub += f64::from(q) * cost * (1.0 - discount);
            qty += u64::from(q);
        }
        (round(sub, 2), qty)
    }

    fn order_line(&self, n: u32, out: &mut Vec<Value>) {
        // The order holding line n: the last whose first line is <= n.
        let o = self.line_start.partition_point(|&start| start < n) as u32;
        let k = n - self.line_start[o as usize - 1];
        let mut lines = order_lines(self.seed, o);
        let mut l = (0, 0, 0.0);
        for _ in 0..k {
            l = line(&mut lines.rng, self.scale.items);
        }
        let mut comment = String::new();
        let mut rng = Rng::for_client(self.seed ^ COMMENT_SALT, u64::from(n));
        text::a_string(&mut rng, 20, 100, &mut comment);
        out.extend([
            Value::Int(i64::from(k)),
            Value::Int(i64::from(o)),
            Value::Int(i64::from(l.0)),
            Value::Int(i64::from(l.1)),
            Value::Float(l.2),
            Value::Text(comment),
        ]);
    }

    fn cc_xact(&self, rng: &mut Rng, o: u32, out: &mut Vec<Value>) {
        let (sub, qty) = self.order_amount(o);
        let tax = round(sub * 0.0825, 2);
        let total = round(sub + tax + 3.0 + qty as f64, 2);
        let placed = self.order_date(o);
        let mut num = String::new();
        text::n_string(rng, 16, 16, &mut num);
        let mut name = String::new();
        text::a_string(rng, 14, 30, &mut name);
        let mut auth = String::new();
        text::a_string(rng, 15, 15, &mut auth);
        out.extend([
            Value::Int(i64::from(o)),
            Value::Text(CARD_TYPES[rng.uniform(0, CARD_TYPES.len() as u32 - 1) as usize].into()),
            Value::Text(num),
            Value::Text(name),
            date(placed + 10 * DAY + between(rng, 0, 720 * DAY)),
            Value::Text(auth),
            Value::Float(total),
            Value::Text(sql_datetime(placed)),
            Value::Int(i64::from(rng.uniform(1, COUNTRIES.len() as u32))),
        ]);
    }
}

const ORDER_DATE_SALT: u64 = 0x6f72_6465_7264_6174;
const LINES_SALT: u64 = 0x6f72_6465_726c_696e;
const COMMENT_SALT: u64 = 0x636f_6d6d_656e_7473;
const PRICE_SALT: u64 = 0x7072_6963_6573_0000;

/// Order `o`'s lines: their count (1–5) and the stream that draws them.
fn order_lines(seed: u64, o: u32) -> OrderLines {
    let mut rng = Rng::for_client(seed ^ LINES_SALT, u64::from(o));
    let count = rng.uniform(1, 5);
    OrderLines { rng, count }
}

/// One order line: (item, quantity 1–300, discount 0.00–0.03).
fn line(rng: &mut Rng, items: u32) -> (u32, u32, f64) {
    let item = rng.uniform(1, items);
    let qty = rng.uniform(1, 300);
    let discount = f64::from(rng.uniform(0, 3)) / 100.0;
    (item, qty, discount)
}

/// Item `i`'s suggested retail price ($1.00–$9,999.99) and cost (50–100 %
/// of it, in steps of 10 %), from a stream of their own so that orders can
/// price their lines without generating the item.
pub fn item_price(seed: u64, i: u32) -> (f64, f64) {
    let mut rng = Rng::for_client(seed ^ PRICE_SALT, u64::from(i));
    let srp = f64::from(rng.uniform(100, 999_999)) / 100.0;
    let cost = round((1.0 - f64::from(rng.uniform(0, 5)) / 10.0) * srp, 2);
    (srp, cost)
}

fn between(rng: &mut Rng, a: i64, b: i64) -> i64 {
    a + (rng.next_f64() * (b - a) as f64) as i64
}

fn date(secs: i64) -> Value {
    let mut s = sql_datetime(secs);
    s.truncate(10);
    Value::Text(s)
}

fn round(x: f64, places: i32) -> f64 {
    let f = 10f64.powi(places);
    (x * f).round() / f
}

impl loader::RowSource for Data {
    fn rows(&self, table: usize, first: u32, last: u32) -> loader::Rows<'_> {
        let mut next = first;
        Box::new(move |out| {
            if next > last {
                return false;
            }
            self.row(table, next, out);
            next += 1;
            true
        })
    }
}
