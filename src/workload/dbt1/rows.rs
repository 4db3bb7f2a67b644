//! DBT-1's rows, each a function of the seed, its table and its row
//! number, generated in ranges for the shared parallel loader
//! ([`loader::RowSource`]).
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

use crate::driver::Value;
use crate::rand::Rng;
use crate::util::civil::sql_datetime;
use crate::workload::loader;

use super::schema::{Data, Scale, DAY, EPOCH, LOAD_SALT, Y1800, Y1880, Y1930};
use super::text::{self, BACKINGS, CARD_TYPES, COUNTRIES, SHIP_TYPES, STATUSES, SUBJECTS};
use crate::driver::Dialect;

/// The lines of one order, replayed from its own stream.
pub(super) struct OrderLines {
    rng: Rng,
    pub(super) count: u32,
}

impl Data {
    /// The rows of `scale` for `seed` (each order's lines counted once,
    /// so that any order line can be found).
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
pub(super) fn order_lines(seed: u64, o: u32) -> OrderLines {
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
