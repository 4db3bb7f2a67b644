//! TPC-H's rows, from the `tpchgen` crate: dbgen's generator ported row
//! for row (its tests compare every table's output with dbgen's files),
//! so a table loaded here holds the rows dbgen would have written, at any
//! scale factor, and the spec's published answers apply at SF 1.
//!
//! The loader asks for any range of a table's rows; `tpchgen` generates a
//! table in equal parts. Each table is cut into parts of about
//! [`GROUPS_PER_PART`] rows (orders for `lineitem`, parts for
//! `partsupp`), a range starts at the part holding its first row, and
//! the few rows before it are generated and dropped. `lineitem` is
//! numbered by slots, seven per order (an order has one to seven lines),
//! and `partsupp` four per part, so a row's number follows from its keys.
//!
//! The refresh functions' rows ([`Refresh`]): RF1's new orders are the
//! base population's orders of one thousandth of the table (set `n`
//! takes part `n` of 1,000, as dbgen's update sets are SF × 1,500 orders
//! each) with new keys after the largest; RF2 deletes the oldest orders
//! still there, one thousandth at a time. dbgen's own update sets draw
//! fresh values for their new orders: these repeat base rows' values
//! (same distributions, not the same rows).

use crate::driver::Value;
use crate::workload::loader::{RowSource, Rows};
use tpchgen::generators::{
    CustomerGenerator, LineItem, LineItemGenerator, NationGenerator, Order, OrderGenerator,
    PartGenerator, PartSuppGenerator, RegionGenerator, SupplierGenerator,
};

/// Rows (groups of rows) per generator part: a range's start wastes at
/// most this many, and a part's generator is set up in microseconds.
const GROUPS_PER_PART: i64 = 128;

/// Slots per order in `lineitem`, per part in `partsupp`.
pub const LINE_SLOTS: i64 = 7;
pub const SUPPLIERS_PER_PART: i64 = 4;

/// The refresh sets' size: 1/1,000 of the orders.
pub const REFRESH_SETS: i64 = 1000;

/// Every table's row source at one scale factor.
pub struct Source {
    pub sf: f64,
}

impl Source {
    /// Rows (slots) of each table in `schema::TABLES` order.
    pub fn counts(&self) -> [u32; 8] {
        let sf = self.sf;
        let n = |r: i64| u32::try_from(r).unwrap_or(u32::MAX);
        [
            5,
            25,
            n(SupplierGenerator::calculate_row_count(sf, 1, 1)),
            n(CustomerGenerator::calculate_row_count(sf, 1, 1)),
            n(PartGenerator::calculate_row_count(sf, 1, 1)),
            n(PartGenerator::calculate_row_count(sf, 1, 1) * SUPPLIERS_PER_PART),
            n(orders(sf)),
            n(orders(sf) * LINE_SLOTS),
        ]
    }
}

/// Orders of the base population.
pub fn orders(sf: f64) -> i64 {
    OrderGenerator::calculate_row_count(sf, 1, 1)
}

/// The number (from 1) of the order with key `key`: the inverse of dbgen's
/// sparse keys (`OrderGenerator::make_order_key`), which leave bits 3 and 4
/// of every key clear.
pub fn order_index(key: i64) -> i64 {
    ((key >> 5) << 3) | (key & 7)
}

impl RowSource for Source {
    fn rows(&self, table: usize, first: u32, last: u32) -> Rows<'_> {
        let sf = self.sf;
        let (first, last) = (i64::from(first), i64::from(last));
        match table {
            0 => simple(
                5,
                first,
                last,
                move |_, _| RegionGenerator::new(sf, 1, 1).iter(),
                |r, o| {
                    o.extend([int(r.r_regionkey), text(r.r_name), text(r.r_comment)]);
                },
            ),
            1 => simple(
                25,
                first,
                last,
                move |_, _| NationGenerator::new(sf, 1, 1).iter(),
                |r, o| {
                    o.extend([
                        int(r.n_nationkey),
                        text(r.n_name),
                        int(r.n_regionkey),
                        text(r.n_comment),
                    ]);
                },
            ),
            2 => {
                let total = SupplierGenerator::calculate_row_count(sf, 1, 1);
                simple(
                    total,
                    first,
                    last,
                    move |p, n| SupplierGenerator::new(sf, p, n).iter(),
                    |r, o| {
                        o.extend([
                            int(r.s_suppkey),
                            shown(&r.s_name),
                            shown(&r.s_address),
                            int(r.s_nationkey),
                            shown(&r.s_phone),
                            money(r.s_acctbal.0),
                            text(&r.s_comment),
                        ]);
                    },
                )
            }
            3 => {
                let total = CustomerGenerator::calculate_row_count(sf, 1, 1);
                simple(
                    total,
                    first,
                    last,
                    move |p, n| CustomerGenerator::new(sf, p, n).iter(),
                    |r, o| {
                        o.extend([
                            int(r.c_custkey),
                            shown(&r.c_name),
                            shown(&r.c_address),
                            int(r.c_nationkey),
                            shown(&r.c_phone),
                            money(r.c_acctbal.0),
                            text(r.c_mktsegment),
                            text(r.c_comment),
                        ]);
                    },
                )
            }
            4 => {
                let total = PartGenerator::calculate_row_count(sf, 1, 1);
                simple(
                    total,
                    first,
                    last,
                    move |p, n| PartGenerator::new(sf, p, n).iter(),
                    |r, o| {
                        o.extend([
                            int(r.p_partkey),
                            shown(&r.p_name),
                            shown(&r.p_mfgr),
                            shown(&r.p_brand),
                            text(r.p_type),
                            int(r.p_size.into()),
                            text(r.p_container),
                            money(r.p_retailprice.0),
                            text(r.p_comment),
                        ]);
                    },
                )
            }
            5 => {
                let groups = PartGenerator::calculate_row_count(sf, 1, 1);
                let layout = Layout {
                    groups,
                    slots: SUPPLIERS_PER_PART,
                };
                layout.range(
                    first,
                    last,
                    move |p, n| PartSuppGenerator::new(sf, p, n).iter(),
                    // Four suppliers per part, in order: the slot is the count.
                    |_, start, k| start * SUPPLIERS_PER_PART + k + 1,
                    |r, o| {
                        o.extend([
                            int(r.ps_partkey),
                            int(r.ps_suppkey),
                            int(r.ps_availqty.into()),
                            money(r.ps_supplycost.0),
                            text(r.ps_comment),
                        ]);
                    },
                )
            }
            6 => simple(
                orders(sf),
                first,
                last,
                move |p, n| OrderGenerator::new(sf, p, n).iter(),
                |r, o| {
                    order_row(r, r.o_orderkey, o);
                },
            ),
            7 => {
                let layout = Layout {
                    groups: orders(sf),
                    slots: LINE_SLOTS,
                };
                layout.range(
                    first,
                    last,
                    move |p, n| LineItemGenerator::new(sf, p, n).iter(),
                    |l: &LineItem<'_>, _, _| {
                        (order_index(l.l_orderkey) - 1) * LINE_SLOTS + i64::from(l.l_linenumber)
                    },
                    |l, o| line_row(l, l.l_orderkey, o),
                )
            }
            _ => unreachable!("TPC-H has eight tables"),
        }
    }
}

/// An order's values in `schema::ORDERS` order, under key `key`.
pub fn order_row(r: &Order<'_>, key: i64, o: &mut Vec<Value>) {
    o.extend([
        int(key),
        int(r.o_custkey),
        shown(&r.o_orderstatus),
        money(r.o_totalprice.0),
        shown(&r.o_orderdate),
        text(r.o_orderpriority),
        shown(&r.o_clerk),
        int(r.o_shippriority.into()),
        text(r.o_comment),
    ]);
}

/// A line's values in `schema::LINEITEM` order, under order key `key`.
pub fn line_row(l: &LineItem<'_>, key: i64, o: &mut Vec<Value>) {
    o.extend([
        int(key),
        int(l.l_partkey),
        int(l.l_suppkey),
        int(l.l_linenumber.into()),
        // dbgen's quantities are whole; the column is DECIMAL(15,2).
        int(l.l_quantity),
        money(l.l_extendedprice.0),
        money(l.l_discount.0),
        money(l.l_tax.0),
        text(l.l_returnflag),
        text(l.l_linestatus),
        shown(&l.l_shipdate),
        shown(&l.l_commitdate),
        shown(&l.l_receiptdate),
        text(l.l_shipinstruct),
        text(l.l_shipmode),
        text(l.l_comment),
    ]);
}

fn int(v: i64) -> Value {
    Value::Int(v)
}

fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

fn shown(v: &impl std::fmt::Display) -> Value {
    Value::Text(v.to_string())
}

/// Hundredths as a number: the shortest decimal that reads back as the
/// same double is the two-place one, so every engine stores it exactly.
fn money(cents: i64) -> Value {
    Value::Float(cents as f64 / 100.0)
}

/// A table of `total` rows, one slot each.
fn simple<T, I: Iterator<Item = T> + 'static>(
    total: i64,
    first: i64,
    last: i64,
    make: impl Fn(i32, i32) -> I + 'static,
    fill: impl Fn(&T, &mut Vec<Value>) + 'static,
) -> Rows<'static> {
    let layout = Layout {
        groups: total,
        slots: 1,
    };
    layout.range(first, last, make, |_, start, k| start + k + 1, fill)
}

/// How a table's rows are numbered: `slots` numbers per group (an order's
/// lines, a part's suppliers), `groups` groups.
#[derive(Clone, Copy)]
struct Layout {
    groups: i64,
    slots: i64,
}

impl Layout {
    /// Rows numbered `first..=last`: parts of the generator in turn,
    /// starting with the one holding `first`, each row kept when its
    /// slot (`slot(row, part's first group, count in the part)`) is in
    /// the range.
    fn range<T, I: Iterator<Item = T> + 'static>(
        self,
        first: i64,
        last: i64,
        make: impl Fn(i32, i32) -> I + 'static,
        slot: impl Fn(&T, i64, i64) -> i64 + 'static,
        fill: impl Fn(&T, &mut Vec<Value>) + 'static,
    ) -> Rows<'static> {
        let parts = (self.groups / GROUPS_PER_PART).clamp(1, i64::from(i32::MAX));
        let per = self.groups / parts;
        let part_of = |slot: i64| ((slot - 1) / self.slots / per).min(parts - 1);
        let mut part = part_of(first.max(1));
        let end_part = part_of(last.max(1));
        let mut it: Option<I> = None;
        let mut count = 0i64;
        Box::new(move |out| loop {
            if first > last {
                return false;
            }
            let current = match &mut it {
                Some(i) => i,
                None => {
                    if part > end_part {
                        return false;
                    }
                    count = 0;
                    it.insert(make(part as i32 + 1, parts as i32))
                }
            };
            match current.next() {
                Some(row) => {
                    let s = slot(&row, part * per, count);
                    count += 1;
                    if s < first {
                        continue;
                    }
                    if s > last {
                        part = end_part + 1;
                        it = None;
                        return false;
                    }
                    fill(&row, out);
                    return true;
                }
                None => {
                    it = None;
                    part += 1;
                }
            }
        })
    }
}

/// The rows of refresh set `n` (from 1): RF1's orders and lines, and
/// RF2's keys.
pub struct Refresh {
    pub orders: Vec<Value>,
    pub order_rows: usize,
    pub lines: Vec<Value>,
    pub line_rows: usize,
}

impl Refresh {
    /// RF1 of set `n`: part `n` of 1,000 of the orders with their lines,
    /// keyed after the base population and every earlier set.
    pub fn inserts(sf: f64, n: i64) -> Refresh {
        let base = orders(sf);
        let per = base / REFRESH_SETS;
        let part = ((n - 1) % REFRESH_SETS + 1) as i32;
        let from = i64::from(part - 1) * per;
        let new_key = |old: i64| {
            let index = base + (n - 1) * per + (order_index(old) - from);
            OrderGenerator::make_order_key(index)
        };
        let mut r = Refresh {
            orders: Vec::new(),
            order_rows: 0,
            lines: Vec::new(),
            line_rows: 0,
        };
        for o in OrderGenerator::new(sf, part, REFRESH_SETS as i32)
            .iter()
            .take(per as usize)
        {
            order_row(&o, new_key(o.o_orderkey), &mut r.orders);
            r.order_rows += 1;
        }
        for l in LineItemGenerator::new(sf, part, REFRESH_SETS as i32).iter() {
            if order_index(l.l_orderkey) - from > per {
                break;
            }
            line_row(&l, new_key(l.l_orderkey), &mut r.lines);
            r.line_rows += 1;
        }
        r
    }

    /// RF2 of set `n`: the keys of the orders numbered
    /// `(n - 1) × per + 1 ..= n × per`, the oldest after the earlier sets.
    pub fn deletes(sf: f64, n: i64) -> Vec<Value> {
        let per = orders(sf) / REFRESH_SETS;
        ((n - 1) * per + 1..=n * per)
            .map(|i| Value::Int(OrderGenerator::make_order_key(i)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(s: &Source, table: usize, first: u32, last: u32) -> Vec<Vec<Value>> {
        let mut gen = s.rows(table, first, last);
        let mut out = Vec::new();
        loop {
            let mut row = Vec::new();
            if !gen(&mut row) {
                return out;
            }
            out.push(row);
        }
    }

    #[test]
    fn order_keys_invert() {
        for i in 1..5000 {
            assert_eq!(order_index(OrderGenerator::make_order_key(i)), i);
        }
    }

    #[test]
    fn any_split_of_a_table_gives_the_same_rows() {
        let s = Source { sf: 0.01 };
        let rows = s.counts();
        assert_eq!(rows[6], 15_000);
        for table in [3, 5, 6, 7] {
            let whole = collect(&s, table, 1, rows[table]);
            let mut parts = Vec::new();
            let cuts = [1, 2, 999, 1000, 1001, 5003, 17_777, rows[table] + 1];
            for w in cuts.windows(2) {
                if w[0] <= rows[table] {
                    parts.extend(collect(&s, table, w[0], (w[1] - 1).min(rows[table])));
                }
            }
            assert_eq!(parts.len(), whole.len(), "table {table}");
            assert!(parts == whole, "table {table} differs when split");
        }
        // The first lineitem is dbgen's.
        let l = collect(&s, 7, 1, 1);
        assert_eq!(l[0][0], Value::Int(1));
        assert_eq!(l[0][3], Value::Int(1));
    }

    #[test]
    fn a_table_has_the_specs_row_count() {
        let s = Source { sf: 0.01 };
        let rows = s.counts();
        assert_eq!(collect(&s, 2, 1, rows[2]).len(), 100);
        assert_eq!(collect(&s, 3, 1, rows[3]).len(), 1500);
        assert_eq!(collect(&s, 5, 1, rows[5]).len(), 8000);
        let lines = collect(&s, 7, 1, rows[7]).len();
        // About 4 lines per order (60,175 at SF 0.01 by dbgen).
        assert!((55_000..65_000).contains(&lines), "{lines}");
    }

    #[test]
    fn refresh_sets_are_new_keys_and_the_oldest_orders() {
        let sf = 0.01;
        let r = Refresh::inserts(sf, 1);
        assert_eq!(r.order_rows, 15);
        assert_eq!(r.orders.len(), 15 * 9);
        assert!(r.line_rows >= 15 && r.line_rows <= 15 * 7);
        let first_key = match r.orders[0] {
            Value::Int(k) => k,
            _ => panic!(),
        };
        assert_eq!(order_index(first_key), 15_001);
        let r2 = Refresh::inserts(sf, 2);
        assert_eq!(
            r2.orders[0],
            Value::Int(OrderGenerator::make_order_key(15_016))
        );
        let d = Refresh::deletes(sf, 2);
        assert_eq!(d.len(), 15);
        assert_eq!(d[0], Value::Int(OrderGenerator::make_order_key(16)));
    }
}
