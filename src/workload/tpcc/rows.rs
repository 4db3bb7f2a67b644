//! TPC-C's initial rows (clause 4.3.3.1), each a function of the seed, its
//! table and its row number, generated in ranges for the shared parallel
//! loader ([`loader::RowSource`]).
//!
//! What is drawn for one order (its line count) comes from a stream of
//! that order's own, so the ORDER and ORDER-LINE tables agree however their
//! ranges are cut. The orders of a district take their customers from one
//! random permutation of 1..=3000 (the spec's rule), made once per district
//! a range touches. Every date of the load is one instant, the time
//! `prepare` began, as the spec's "current date and time" (rows are
//! otherwise a function of the seed alone).

use crate::driver::Value;
use crate::rand::Rng;
use crate::util::civil::sql_datetime;
use crate::workload::loader::{RowSource, Rows};

use super::random::{self, Constants, A_C_LAST};
use super::schema::*;

/// Mixed into the seed of the data, apart from every client's stream.
const LOAD_SALT: u64 = 0x7470_6363_6c6f_6164;
const LINES_SALT: u64 = 0x6f6c_5f63_6e74_0000;
const PERM_SALT: u64 = 0x7065_726d_0000_0000;

/// The rows of one scale and seed.
pub struct Data {
    pub warehouses: u32,
    seed: u64,
    /// The load's C constants.
    pub c: Constants,
    /// The load's instant, as SQL text.
    now: String,
}

impl Data {
    /// The rows for `seed` at `warehouses`, dated `unix_time`.
    pub fn new(warehouses: u32, seed: u64, unix_time: i64) -> Data {
        Data {
            warehouses,
            seed: seed ^ LOAD_SALT,
            c: Constants::load(seed),
            now: sql_datetime(unix_time),
        }
    }

    /// The line count of order `o` of district `d` of warehouse `w`.
    pub fn ol_cnt(&self, w: u32, d: u32, o: u32) -> u32 {
        Rng::for_client(self.seed ^ LINES_SALT, order_key(w, d, o)).uniform(5, 15)
    }

    /// The number of ORDER-LINE rows the load makes.
    pub fn order_lines(&self) -> u64 {
        let mut n = 0u64;
        for w in 1..=self.warehouses {
            for d in 1..=DISTRICTS {
                for o in 1..=ORDERS {
                    n += u64::from(self.ol_cnt(w, d, o));
                }
            }
        }
        n
    }

    /// The customers of district `d` of warehouse `w` in the order its
    /// orders 1..=3000 take them.
    pub fn permutation(&self, w: u32, d: u32) -> Vec<u32> {
        let mut rng = Rng::for_client(
            self.seed ^ PERM_SALT,
            u64::from((w - 1) * DISTRICTS + (d - 1)),
        );
        let mut p: Vec<u32> = (1..=CUSTOMERS).collect();
        for i in (1..p.len()).rev() {
            let j = rng.uniform(0, i as u32) as usize;
            p.swap(i, j);
        }
        p
    }

    fn rng(&self, t: usize, n: u32) -> Rng {
        Rng::for_client(self.seed ^ ((t as u64 + 1) << 56), u64::from(n))
    }

    /// Appends row `n` (from 1) of table `t` to `out`; order lines and
    /// orders go through [`RowSource::rows`], which keeps the state they
    /// share between rows.
    pub fn row(&self, t: usize, n: u32, out: &mut Vec<Value>) {
        let mut rng = self.rng(t, n);
        let rng = &mut rng;
        let int = |v: u32| Value::Int(i64::from(v));
        let txt = |rng: &mut Rng, min: u32, max: u32| Value::Text(random::a_text(rng, min, max));
        let i = n - 1;
        match t {
            WAREHOUSE => {
                out.push(int(n));
                out.push(txt(rng, 6, 10));
                address(rng, out);
                out.push(Value::Float(random::rate(rng, 2000)));
                out.push(Value::Float(300_000.0));
            }
            DISTRICT => {
                out.push(int(i % DISTRICTS + 1));
                out.push(int(i / DISTRICTS + 1));
                out.push(txt(rng, 6, 10));
                address(rng, out);
                out.push(Value::Float(random::rate(rng, 2000)));
                out.push(Value::Float(30_000.0));
                out.push(int(ORDERS + 1));
            }
            CUSTOMER => {
                let per_w = DISTRICTS * CUSTOMERS;
                let (w, d, c) = (i / per_w + 1, i % per_w / CUSTOMERS + 1, i % CUSTOMERS + 1);
                out.extend([int(c), int(d), int(w)]);
                out.push(txt(rng, 8, 16));
                out.push(Value::Text("OE".into()));
                // The first 1000 customers take the names 0..=999 in turn,
                // the rest NURand(255, 0, 999) with the load's C.
                let name = if c <= 1000 {
                    c - 1
                } else {
                    random::nurand(rng, A_C_LAST, self.c.c_last, 0, 999)
                };
                out.push(Value::Text(random::last_name_string(name)));
                address(rng, out);
                let mut phone = String::with_capacity(16);
                random::n_string(rng, 16, 16, &mut phone);
                out.push(Value::Text(phone));
                out.push(Value::Text(self.now.clone()));
                let bad = rng.uniform(1, 100) <= 10;
                out.push(Value::Text(if bad { "BC" } else { "GC" }.into()));
                out.push(Value::Float(50_000.0));
                out.push(Value::Float(random::rate(rng, 5000)));
                out.push(Value::Float(-10.0));
                out.push(Value::Float(10.0));
                out.push(int(1));
                out.push(int(0));
                out.push(txt(rng, 300, 500));
            }
            HISTORY => {
                let per_w = DISTRICTS * CUSTOMERS;
                let (w, d, c) = (i / per_w + 1, i % per_w / CUSTOMERS + 1, i % CUSTOMERS + 1);
                out.extend([int(c), int(d), int(w), int(d), int(w)]);
                out.push(Value::Text(self.now.clone()));
                out.push(Value::Float(10.0));
                out.push(txt(rng, 12, 24));
            }
            ITEM => {
                out.push(int(n));
                out.push(int(rng.uniform(1, 10_000)));
                out.push(txt(rng, 14, 24));
                out.push(Value::Float(random::money(rng, 100, 10_000)));
                out.push(Value::Text(random::data_string(rng)));
            }
            STOCK => {
                out.push(int(i % ITEMS + 1));
                out.push(int(i / ITEMS + 1));
                out.push(int(rng.uniform(10, 100)));
                for _ in 0..DISTRICTS {
                    out.push(txt(rng, 24, 24));
                }
                out.extend([int(0), int(0), int(0)]);
                out.push(Value::Text(random::data_string(rng)));
            }
            NEW_ORDER => {
                let per_w = DISTRICTS * NEW_ORDERS;
                let (w, d) = (i / per_w + 1, i % per_w / NEW_ORDERS + 1);
                out.extend([int(i % NEW_ORDERS + FIRST_NEW_ORDER), int(d), int(w)]);
            }
            _ => unreachable!("orders and order lines are made by RowSource::rows"),
        }
    }

    /// Order `o` of district `d` of warehouse `w`, its customer `c`.
    fn order(&self, n: u32, (w, d, o): (u32, u32, u32), c: u32, out: &mut Vec<Value>) {
        let mut rng = self.rng(ORDER, n);
        let int = |v: u32| Value::Int(i64::from(v));
        out.extend([int(o), int(d), int(w), int(c)]);
        out.push(Value::Text(self.now.clone()));
        out.push(if o < FIRST_NEW_ORDER {
            int(rng.uniform(1, 10))
        } else {
            Value::Null
        });
        out.push(int(self.ol_cnt(w, d, o)));
        out.push(int(1));
    }

    /// Line `l` of order `o` of district `d` of warehouse `w`.
    fn line(&self, w: u32, d: u32, o: u32, l: u32, n: u32, out: &mut Vec<Value>) {
        let mut rng = self.rng(ORDER_LINE, n);
        let int = |v: u32| Value::Int(i64::from(v));
        let delivered = o < FIRST_NEW_ORDER;
        out.extend([int(o), int(d), int(w), int(l)]);
        out.push(int(rng.uniform(1, ITEMS)));
        out.push(int(w));
        out.push(if delivered {
            Value::Text(self.now.clone())
        } else {
            Value::Null
        });
        out.push(int(5));
        out.push(Value::Float(if delivered {
            0.0
        } else {
            random::money(&mut rng, 1, 999_999)
        }));
        out.push(Value::Text(random::a_text(&mut rng, 24, 24)));
    }
}

/// A number of its own for each order of the scale.
fn order_key(w: u32, d: u32, o: u32) -> u64 {
    (u64::from(w) << 32) | (u64::from(d) << 16) | u64::from(o)
}

/// Street 1 and 2, city, state and zip (clause 4.3.2.7 for the zip).
fn address(rng: &mut Rng, out: &mut Vec<Value>) {
    for (min, max) in [(10, 20), (10, 20), (10, 20)] {
        out.push(Value::Text(random::a_text(rng, min, max)));
    }
    out.push(Value::Text(random::state(rng)));
    out.push(Value::Text(random::zip(rng)));
}

/// (warehouse, district, order) of order number `i` (from 0) in table
/// order.
fn order_at(i: u32) -> (u32, u32, u32) {
    let per_w = DISTRICTS * ORDERS;
    (i / per_w + 1, i % per_w / ORDERS + 1, i % ORDERS + 1)
}

impl RowSource for Data {
    fn rows(&self, table: usize, first: u32, last: u32) -> Rows<'_> {
        let mut n = first;
        match table {
            ORDER => {
                // The district's permutation, made again when a range
                // enters another district.
                let mut perm: (u32, u32, Vec<u32>) = (0, 0, Vec::new());
                Box::new(move |out| {
                    if n > last {
                        return false;
                    }
                    let (w, d, o) = order_at(n - 1);
                    if (perm.0, perm.1) != (w, d) {
                        perm = (w, d, self.permutation(w, d));
                    }
                    self.order(n, (w, d, o), perm.2[o as usize - 1], out);
                    n += 1;
                    true
                })
            }
            ORDER_LINE => Box::new(move |out| {
                // Slots past an order's line count hold no row.
                while n <= last {
                    let slot = n - 1;
                    let (w, d, o) = order_at(slot / LINE_SLOTS);
                    let l = slot % LINE_SLOTS + 1;
                    let this = n;
                    n += 1;
                    if l <= self.ol_cnt(w, d, o) {
                        self.line(w, d, o, l, this, out);
                        return true;
                    }
                }
                false
            }),
            t => Box::new(move |out| {
                if n > last {
                    return false;
                }
                self.row(t, n, out);
                n += 1;
                true
            }),
        }
    }
}
