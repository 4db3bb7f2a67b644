//! The five transactions' profiles (clauses 2.4.2, 2.5.2, 2.6.2, 2.7.4,
//! 2.8.2), one step at a time: each step consumes what the previous
//! `Fetch` kept and yields the next operation.
//!
//! Inputs are drawn as clauses 2.4.1, 2.5.1, 2.6.1, 2.7.1 and 2.8.1 say:
//! New-Order's district at random in the home warehouse, its customer
//! NURand(1023, 1, 3000), 5 to 15 lines of items NURand(8191, 1, 100000),
//! 1 % of the lines supplied by another warehouse, and in 1 % of
//! New-Orders an unused item on the last line, which rolls the transaction
//! back (a completed New-Order all the same); Payment's customer 15 % in a
//! remote warehouse, 60 % of the time by last name — the middle one,
//! position ⌈n / 2⌉, of the n customers of that name sorted by first name
//! — and an amount of 1.00 to 5,000.00; Order-Status's customer the same
//! way; Delivery's carrier 1 to 10, over all ten districts; Stock-Level's
//! threshold 10 to 20 on the terminal's own district. New-Order's lines
//! are processed in item order, so that two New-Orders lock stock rows in
//! one order (the items are random, so this changes no distribution; the
//! unused item, the highest, stays last). Its lines' item and stock rows
//! are read one after the other; their stock updates and order lines then
//! go as one batch each (one command, or one round trip, where the driver
//! can), in the same item order.

use super::random::{self, A_C_ID, A_C_LAST, A_OL_I_ID};
use super::schema::{CUSTOMERS, DISTRICTS, ITEMS, UNUSED_ITEM};
use super::sql::{self, Stmt};
use super::terminal::{Inputs, Line, Script, Step, Txn};
use crate::driver::{Col, Value};
use crate::util::civil::sql_datetime;

impl Script {
    /// Draws the inputs of the transaction `start` began.
    pub(super) fn draw_inputs(&mut self) {
        let shared = self.shared.clone();
        let c = shared.constants();
        let warehouses = shared.warehouses;
        let force = self.force.clone();
        let (w, home_d) = {
            let t = self.term();
            (t.w, t.d)
        };
        let txn = self.txn;
        let mut x = std::mem::take(&mut self.x);
        let rng = self.rng();
        // `--all-warehouses`: a home for this transaction only, at random.
        let (w, home_d) = if shared.all_warehouses {
            (rng.uniform(1, warehouses), rng.uniform(1, DISTRICTS))
        } else {
            (w, home_d)
        };
        x.w = w;
        x.d = force.district.unwrap_or_else(|| rng.uniform(1, DISTRICTS));
        x.c_w = w;
        x.c_d = x.d;
        x.last = None;
        x.c_id = 0;
        x.named = 0;
        x.lines.clear();
        x.stock_rows.clear();
        x.line_rows.clear();
        x.rollback = false;
        x.o_id = 0;
        x.now = sql_datetime(unix_now());
        x.delivered = [0; DISTRICTS as usize];
        let other = |rng: &mut crate::rand::Rng| {
            // A warehouse other than the home one, uniformly.
            let o = rng.uniform(1, warehouses - 1);
            if o >= w {
                o + 1
            } else {
                o
            }
        };
        let customer = |rng: &mut crate::rand::Rng, x: &mut Inputs| {
            let by_name = match force.by_name {
                Some(n) => n,
                None => (rng.uniform(1, 100) <= 60)
                    .then(|| random::nurand(rng, A_C_LAST, c.c_last, 0, 999)),
            };
            match by_name {
                Some(n) => x.last = Some(random::last_name_string(n)),
                None => x.c_id = i64::from(random::nurand(rng, A_C_ID, c.c_id, 1, CUSTOMERS)),
            }
        };
        match txn {
            Txn::NewOrder => {
                x.c_id = i64::from(random::nurand(rng, A_C_ID, c.c_id, 1, CUSTOMERS));
                let n = rng.uniform(5, 15);
                x.rollback = force.rollback.unwrap_or_else(|| rng.uniform(1, 100) == 1);
                for k in 0..n {
                    let item = if x.rollback && k == n - 1 {
                        UNUSED_ITEM
                    } else {
                        random::nurand(rng, A_OL_I_ID, c.ol_i_id, 1, ITEMS)
                    };
                    let supply_w = if warehouses > 1 && rng.uniform(1, 100) == 1 {
                        other(rng)
                    } else {
                        w
                    };
                    let qty = rng.uniform(1, 10);
                    x.lines.push(Line {
                        item,
                        supply_w,
                        qty,
                    });
                }
                x.lines.sort_by_key(|l| (l.item, l.supply_w));
            }
            Txn::Payment => {
                if warehouses > 1 && rng.uniform(1, 100) > 85 {
                    x.c_d = rng.uniform(1, DISTRICTS);
                    x.c_w = other(rng);
                }
                customer(rng, &mut x);
                x.amount = random::money(rng, 100, 500_000);
            }
            Txn::OrderStatus => customer(rng, &mut x),
            Txn::Delivery => x.carrier = rng.uniform(1, 10),
            Txn::StockLevel => {
                x.d = home_d;
                x.threshold = rng.uniform(10, 20);
            }
        }
        self.x = x;
    }

    pub(super) fn step(&mut self) -> Step {
        let pc = self.pc;
        self.pc += 1;
        match self.txn {
            Txn::NewOrder => self.new_order(pc),
            Txn::Payment => self.payment(pc),
            Txn::OrderStatus => self.order_status(pc),
            // `--delivery deferred`: the terminal's transaction queues the
            // request and sends nothing; the execution follows (`executing`).
            Txn::Delivery if self.queues_delivery() => Step::Done,
            Txn::Delivery => self.delivery(pc),
            Txn::StockLevel => self.stock_level(pc),
        }
    }

    /// A queued Delivery's execution starts (again, on a retry): from the
    /// first district, dated now, on the request's warehouse and carrier.
    pub(super) fn restart_delivery(&mut self) {
        self.x.delivered = [0; DISTRICTS as usize];
        self.x.now = sql_datetime(unix_now());
    }

    fn int(v: impl Into<i64>) -> Value {
        Value::Int(v.into())
    }

    fn new_order(&mut self, pc: u32) -> Step {
        let x = &self.x;
        let (w, d) = (i64::from(x.w), i64::from(x.d));
        let lines = x.lines.len() as u32;
        match pc {
            0 => Step::Begin(true),
            1 => {
                self.set([Self::int(w)]);
                Step::Fetch(Stmt::NoWarehouse as usize, &[Col::Float], 1)
            }
            2 => {
                self.set([Self::int(w), Self::int(d)]);
                Step::Exec(Stmt::NoDistrictUpdate as usize)
            }
            3 => Step::Fetch(Stmt::NoDistrict as usize, &[Col::Float, Col::Int], 1),
            4 => {
                self.x.o_id = self.fetch.int(0, 1).unwrap_or(0);
                let c = self.x.c_id;
                self.set([Self::int(w), Self::int(d), Self::int(c)]);
                Step::Fetch(Stmt::NoCustomer as usize, &[Col::Float], 1)
            }
            5 => {
                let x = &self.x;
                let local = x.lines.iter().all(|l| l.supply_w == x.w);
                let v = [
                    Self::int(x.o_id),
                    Self::int(d),
                    Self::int(w),
                    Self::int(x.c_id),
                    Value::Text(x.now.clone()),
                    Self::int(lines),
                    Self::int(i64::from(local)),
                ];
                self.set(v);
                Step::Exec(Stmt::NoOrder as usize)
            }
            6 => {
                let o = self.x.o_id;
                self.set([Self::int(o), Self::int(d), Self::int(w)]);
                Step::Exec(Stmt::NoNewOrder as usize)
            }
            _ if pc < 7 + 2 * lines => {
                let k = ((pc - 7) / 2) as usize;
                let line = self.x.lines[k];
                let (item, sw) = (i64::from(line.item), i64::from(line.supply_w));
                if (pc - 7) % 2 == 0 {
                    if k > 0 {
                        self.batch_line(k - 1);
                    }
                    self.set([Self::int(item)]);
                    return Step::Fetch(Stmt::NoItem as usize, &[Col::Float], 1);
                }
                if self.fetch.rows() == 0 {
                    // The unused item: the whole New-Order rolls back.
                    self.pc = u32::MAX - 1;
                    return Step::Rollback;
                }
                self.x.price = self.fetch.float(0, 0).unwrap_or(0.0);
                self.set([Self::int(item), Self::int(sw)]);
                Step::Fetch(sql::stock(self.x.d), &[Col::Int, Col::Text, Col::Text], 1)
            }
            // The stock updates and the order lines, each statement once
            // for all lines: one command each where the driver can.
            _ if pc == 7 + 2 * lines => {
                self.batch_line(lines as usize - 1);
                std::mem::swap(&mut self.params, &mut self.x.stock_rows);
                Step::Batch(Stmt::NoStockUpdate as usize, lines as usize)
            }
            _ if pc == 8 + 2 * lines => {
                std::mem::swap(&mut self.params, &mut self.x.line_rows);
                Step::Batch(Stmt::NoOrderLine as usize, lines as usize)
            }
            _ if pc == 9 + 2 * lines => Step::Commit,
            _ => Step::Done,
        }
    }

    /// Adds line `k`'s stock update and order line to the batches, from
    /// its item's price and the stock row just read.
    fn batch_line(&mut self, k: usize) {
        let x = &mut self.x;
        let line = x.lines[k];
        let (w, d) = (i64::from(x.w), i64::from(x.d));
        let (item, sw, qty) = (
            i64::from(line.item),
            i64::from(line.supply_w),
            i64::from(line.qty),
        );
        let remote = i64::from(sw != w);
        x.stock_rows
            .extend([qty, qty, qty, qty, remote, item, sw].map(Value::Int));
        let amount = (qty as f64 * x.price * 100.0).round() / 100.0;
        let info = self.fetch.text(0, 2).unwrap_or("").to_string();
        x.line_rows.extend([
            Value::Int(x.o_id),
            Value::Int(d),
            Value::Int(w),
            Value::Int(k as i64 + 1),
            Value::Int(item),
            Value::Int(sw),
            Value::Int(qty),
            Value::Float(amount),
            Value::Text(info),
        ]);
    }

    /// The customer found by name: the middle one, position ⌈n / 2⌉ of
    /// n sorted by first name (clause 2.5.2.2).
    fn pick_by_name(&mut self) {
        let n = self.fetch.rows();
        self.x.named = n;
        if n > 0 {
            self.x.c_id = self.fetch.int((n - 1) / 2, 0).unwrap_or(0);
        }
    }

    fn by_name(&mut self) -> Step {
        match self.x.last.clone() {
            Some(last) => {
                let x = &self.x;
                self.set([Self::int(x.c_w), Self::int(x.c_d), Value::Text(last)]);
                Step::Fetch(
                    Stmt::CustomerByName as usize,
                    &[Col::Int],
                    CUSTOMERS as usize,
                )
            }
            None => Step::Skip,
        }
    }

    fn payment(&mut self, pc: u32) -> Step {
        let x = &self.x;
        let (w, d, amount) = (i64::from(x.w), i64::from(x.d), x.amount);
        let (cw, cd) = (i64::from(x.c_w), i64::from(x.c_d));
        match pc {
            0 => Step::Begin(true),
            1 => {
                self.set([Value::Float(amount), Self::int(w)]);
                Step::Exec(Stmt::PayWarehouseUpdate as usize)
            }
            2 => {
                self.set([Self::int(w)]);
                Step::Fetch(Stmt::PayWarehouse as usize, &[Col::Text], 1)
            }
            3 => {
                self.x.w_name = self.fetch.text(0, 0).unwrap_or("").to_string();
                self.set([Value::Float(amount), Self::int(w), Self::int(d)]);
                Step::Exec(Stmt::PayDistrictUpdate as usize)
            }
            4 => {
                self.set([Self::int(w), Self::int(d)]);
                Step::Fetch(Stmt::PayDistrict as usize, &[Col::Text], 1)
            }
            5 => {
                self.x.d_name = self.fetch.text(0, 0).unwrap_or("").to_string();
                self.by_name()
            }
            6 => {
                if self.x.last.is_some() {
                    self.pick_by_name();
                }
                let c = self.x.c_id;
                self.set([Self::int(cw), Self::int(cd), Self::int(c)]);
                Step::Fetch(Stmt::PayCustomer as usize, &[Col::Text], 1)
            }
            7 => {
                self.x.bad_credit = self.fetch.text(0, 0) == Some("BC");
                let c = self.x.c_id;
                if self.x.bad_credit {
                    self.set([Self::int(cw), Self::int(cd), Self::int(c)]);
                    Step::Fetch(Stmt::PayCustomerData as usize, &[Col::Text], 1)
                } else {
                    self.set([
                        Value::Float(amount),
                        Value::Float(amount),
                        Self::int(cw),
                        Self::int(cd),
                        Self::int(c),
                    ]);
                    Step::Exec(Stmt::PayCustomerUpdate as usize)
                }
            }
            8 if self.x.bad_credit => {
                // Bad credit: the payment's particulars go in front of
                // C_DATA, which keeps its first 500 characters.
                let c = self.x.c_id;
                let mut data = format!("{c} {cd} {cw} {d} {w} {amount:.2} | ");
                data.push_str(self.fetch.text(0, 0).unwrap_or(""));
                data.truncate(500);
                self.set([
                    Value::Float(amount),
                    Value::Float(amount),
                    Value::Text(data),
                    Self::int(cw),
                    Self::int(cd),
                    Self::int(c),
                ]);
                Step::Exec(Stmt::PayCustomerUpdateBc as usize)
            }
            8 => Step::Skip,
            9 => {
                let x = &self.x;
                let h_data = format!("{}    {}", x.w_name, x.d_name);
                let v = [
                    Self::int(x.c_id),
                    Self::int(cd),
                    Self::int(cw),
                    Self::int(d),
                    Self::int(w),
                    Value::Text(x.now.clone()),
                    Value::Float(amount),
                    Value::Text(h_data),
                ];
                self.set(v);
                Step::Exec(Stmt::PayHistory as usize)
            }
            10 => Step::Commit,
            _ => Step::Done,
        }
    }

    fn order_status(&mut self, pc: u32) -> Step {
        let (w, d) = (i64::from(self.x.w), i64::from(self.x.d));
        match pc {
            0 => Step::Begin(false),
            1 => self.by_name(),
            2 => {
                if self.x.last.is_some() {
                    self.pick_by_name();
                }
                let c = self.x.c_id;
                self.set([Self::int(w), Self::int(d), Self::int(c)]);
                Step::Fetch(Stmt::OsCustomer as usize, &[Col::Float], 1)
            }
            3 => Step::Fetch(Stmt::OsOrder as usize, &[Col::Int], 1),
            4 => match self.fetch.int(0, 0) {
                Some(o) => {
                    self.x.o_id = o;
                    self.set([Self::int(w), Self::int(d), Self::int(o)]);
                    Step::Fetch(Stmt::OsLines as usize, &[Col::Int], 15)
                }
                None => Step::Skip,
            },
            5 => Step::Commit,
            _ => Step::Done,
        }
    }

    fn delivery(&mut self, pc: u32) -> Step {
        const PER: u32 = 7;
        let w = i64::from(self.x.w);
        let carrier = i64::from(self.x.carrier);
        match pc {
            0 => Step::Begin(true),
            _ if pc <= PER * DISTRICTS => {
                let d = i64::from((pc - 1) / PER + 1);
                let slot = d as usize - 1;
                let o = self.x.delivered[slot];
                match (pc - 1) % PER {
                    0 => {
                        self.set([Self::int(w), Self::int(d)]);
                        Step::Fetch(Stmt::DlOldest as usize, &[Col::Int], 1)
                    }
                    1 => match self.fetch.int(0, 0) {
                        Some(o) => {
                            self.x.delivered[slot] = o;
                            self.set([Self::int(w), Self::int(d), Self::int(o)]);
                            Step::Exec(Stmt::DlNewOrderDelete as usize)
                        }
                        None => {
                            // No undelivered order in this district: skipped.
                            self.pc = 1 + PER * d as u32;
                            Step::Skip
                        }
                    },
                    2 => {
                        self.set([Self::int(w), Self::int(d), Self::int(o)]);
                        Step::Fetch(Stmt::DlOrder as usize, &[Col::Int], 1)
                    }
                    3 => {
                        self.x.c_id = self.fetch.int(0, 0).unwrap_or(0);
                        self.set([Self::int(carrier), Self::int(w), Self::int(d), Self::int(o)]);
                        Step::Exec(Stmt::DlOrderUpdate as usize)
                    }
                    4 => {
                        let now = Value::Text(self.x.now.clone());
                        self.set([now, Self::int(w), Self::int(d), Self::int(o)]);
                        Step::Exec(Stmt::DlLinesUpdate as usize)
                    }
                    5 => {
                        self.set([Self::int(w), Self::int(d), Self::int(o)]);
                        Step::Fetch(Stmt::DlLinesSum as usize, &[Col::Float], 1)
                    }
                    _ => {
                        let sum = self.fetch.float(0, 0).unwrap_or(0.0);
                        let c = self.x.c_id;
                        self.set([Value::Float(sum), Self::int(w), Self::int(d), Self::int(c)]);
                        Step::Exec(Stmt::DlCustomerUpdate as usize)
                    }
                }
            }
            _ if pc == PER * DISTRICTS + 1 => Step::Commit,
            _ => Step::Done,
        }
    }

    fn stock_level(&mut self, pc: u32) -> Step {
        let (w, d) = (i64::from(self.x.w), i64::from(self.x.d));
        match pc {
            0 => Step::Begin(false),
            1 => {
                self.set([Self::int(w), Self::int(d)]);
                Step::Fetch(Stmt::SlDistrict as usize, &[Col::Int], 1)
            }
            2 => {
                let next = self.fetch.int(0, 0).unwrap_or(0);
                let t = i64::from(self.x.threshold);
                self.set([
                    Self::int(w),
                    Self::int(d),
                    Self::int(next),
                    Self::int(next - 20),
                    Self::int(w),
                    Self::int(t),
                ]);
                Step::Fetch(Stmt::SlCount as usize, &[Col::Int], 1)
            }
            3 => {
                self.x.low_stock = self.fetch.int(0, 0).unwrap_or(0);
                Step::Commit
            }
            _ => Step::Done,
        }
    }
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}
