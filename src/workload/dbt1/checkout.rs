//! The interactions that write the user's cart and orders: Shopping
//! Cart, Buy Request (logging in, or registering a new customer) and Buy
//! Confirm (the order, its lines, the stock and the card transaction),
//! one step at a time (see [`Script`]).

use super::mix::Interaction::*;
use super::session::{now, round2, unix_now, Script, Step, CART_MAX};
use super::sql::Stmt;
use super::text::{self, CARD_TYPES, COUNTRIES, SHIP_TYPES};
use crate::driver::{Col, Value};
use crate::util::civil::sql_datetime;

impl Script {
    /// Steps 1–4 of a writing interaction on the user's cart: the next
    /// ids, and a new cart if the user has none (a customer's carries
    /// their name and discount). `self.sc` is the cart afterwards.
    pub(super) fn cart(&mut self, pc: u32) -> Step {
        match pc {
            1 => self.ids(),
            2 => {
                self.take_ids();
                match self.s().sc_id {
                    Some(sc) => {
                        self.sc = sc;
                        self.pc = 5;
                        Step::Skip
                    }
                    None => {
                        self.sc = Self::next_id(&self.shared.ids.cart);
                        self.fx.sc_id = Some(self.sc);
                        self.fx.cart = Some(Vec::new());
                        match self.s().c_id {
                            Some(c) => {
                                self.set([Value::Int(c)]);
                                Step::Fetch(
                                    Stmt::CustomerName,
                                    &[Col::Text, Col::Text, Col::Float],
                                    1,
                                )
                            }
                            None => Step::Skip,
                        }
                    }
                }
            }
            3 => {
                let now = Value::Text(now());
                match (self.s().c_id, self.fetch.rows() > 0) {
                    (Some(c), true) => {
                        let f = &self.fetch;
                        let v = [
                            Value::Int(self.sc),
                            Value::Int(c),
                            now,
                            f.get(0, 0).clone(),
                            f.get(0, 1).clone(),
                            f.get(0, 2).clone(),
                        ];
                        self.set(v);
                        Step::Exec(Stmt::CartCreate)
                    }
                    _ => {
                        self.set([Value::Int(self.sc), now]);
                        Step::Exec(Stmt::CartCreateAnonymous)
                    }
                }
            }
            _ => Step::Skip,
        }
    }

    /// The cart's lines as the session knows them (with this
    /// interaction's changes).
    pub(super) fn cart_lines(&self) -> &[(i64, i64)] {
        match &self.fx.cart {
            Some(c) => c,
            None => &self.s.as_ref().expect("session").cart,
        }
    }

    /// Adds `item` to the cart: one more if it is in it, else a new line
    /// priced from the item (steps `pc` and `pc + 1`).
    pub(super) fn add(&mut self, item: i64, second: bool) -> Step {
        if !second {
            if self.cart_lines().iter().map(|l| l.1).sum::<i64>() >= CART_MAX {
                self.pc += 1;
                return Step::Skip;
            }
            if self.cart_lines().iter().any(|l| l.0 == item) {
                self.pc += 1;
                self.set([Value::Int(self.sc), Value::Int(item)]);
                return Step::Exec(Stmt::CartAddMore);
            }
            self.set([Value::Int(item)]);
            return Step::Fetch(
                Stmt::CartItem,
                &[Col::Float, Col::Float, Col::Text, Col::Text],
                1,
            );
        }
        if self.fetch.types.len() != 4 || self.fetch.rows() == 0 {
            return Step::Skip;
        }
        let f = &self.fetch;
        let v = [
            Value::Int(self.sc),
            Value::Int(item),
            f.get(0, 0).clone(),
            f.get(0, 1).clone(),
            f.get(0, 2).clone(),
            f.get(0, 3).clone(),
        ];
        self.set(v);
        Step::Exec(Stmt::CartAdd)
    }

    pub(super) fn shopping_cart(&mut self, pc: u32) -> Step {
        match pc {
            0 => Step::Begin(true),
            1..=4 => self.cart(pc),
            5 => {
                // From Product Detail: add its item. From Shopping Cart:
                // change quantities. An empty cart gets a random item.
                let prev = self.s().cur;
                if prev == ProductDetail {
                    self.k = self.s().item as usize;
                } else if prev == ShoppingCart && !self.cart_lines().is_empty() {
                    self.k = 0;
                    self.pc = 8;
                    return Step::Skip;
                } else if self.cart_lines().is_empty() {
                    self.k = self.random_item() as usize;
                } else {
                    self.pc = 9;
                    return Step::Skip;
                }
                self.add(self.k as i64, false)
            }
            6 => self.add(self.k as i64, true),
            7 => {
                self.pc = 9;
                Step::Skip
            }
            8 => {
                // Each line changes with even odds, at least one.
                let lines: Vec<(i64, i64)> = self.cart_lines().to_vec();
                if self.k >= lines.len() {
                    return Step::Skip;
                }
                let i = self.k;
                self.k += 1;
                self.pc = 8;
                let change = i == 0 || self.rng().uniform(0, 1) == 1;
                if !change {
                    return Step::Skip;
                }
                let q = i64::from(self.rng().uniform(1, 10));
                self.set([Value::Int(q), Value::Int(self.sc), Value::Int(lines[i].0)]);
                Step::Exec(Stmt::CartSetQty)
            }
            9 => {
                self.set([Value::Int(self.sc), Value::Text(now()), Value::Int(self.sc)]);
                Step::Exec(Stmt::CartSubtotal)
            }
            10 => {
                self.set([Value::Int(self.sc)]);
                Step::Fetch(Stmt::CartLines, &[Col::Int, Col::Int], CART_MAX as usize)
            }
            11 => {
                self.read_cart();
                self.promotions()
            }
            12 => Step::Commit,
            _ => Step::Done,
        }
    }

    /// Keeps the cart's lines the last [`Stmt::CartLines`] read.
    pub(super) fn read_cart(&mut self) {
        let f = &self.fetch;
        let lines = (0..f.rows())
            .filter_map(|r| Some((f.int(r, 0)?, f.int(r, 1)?)))
            .collect();
        self.fx.cart = Some(lines);
    }

    pub(super) fn buy_request(&mut self, pc: u32) -> Step {
        match pc {
            0 => Step::Begin(true),
            1..=4 => self.cart(pc),
            5 => {
                if self.cart_lines().is_empty() {
                    self.k = self.random_item() as usize;
                    return self.add(self.k as i64, false);
                }
                self.pc = 7;
                Step::Skip
            }
            6 => self.add(self.k as i64, true),
            7 => match self.s().c_id {
                Some(c) => {
                    // A returning customer logs in by name (DigSyl of the id).
                    self.set([Value::Text(text::digsyl_string(c as u64, 0))]);
                    Step::Fetch(
                        Stmt::Login,
                        &[Col::Int, Col::Text, Col::Text, Col::Text, Col::Float],
                        1,
                    )
                }
                None => {
                    self.pc = 20;
                    Step::Skip
                }
            },
            8 => {
                let f = &self.fetch;
                let Some(c) = f.int(0, 0) else {
                    // Not found: register as a new customer instead.
                    self.pc = 20;
                    return Step::Skip;
                };
                let names = (
                    f.text(0, 2).unwrap_or("").to_string(),
                    f.text(0, 3).unwrap_or("").to_string(),
                    f.float(0, 4).unwrap_or(0.0),
                );
                self.fx.names = Some(names);
                let t = unix_now();
                self.set([
                    Value::Text(sql_datetime(t)),
                    Value::Text(sql_datetime(t + 7200)),
                    Value::Int(c),
                ]);
                self.pc = 30;
                Step::Exec(Stmt::LoginUpdate)
            }
            20 => {
                // A new customer: an address, then the customer.
                self.addr.0 = Self::next_id(&self.shared.ids.address);
                let v = self.address(self.addr.0);
                self.set(v);
                Step::Exec(Stmt::AddressInsert)
            }
            21 => {
                let c = Self::next_id(&self.shared.ids.customer);
                self.fx.c_id = Some(c);
                let uname = text::digsyl_string(c as u64, 0);
                let (fname, lname) = (self.a_string(8, 15), self.a_string(8, 15));
                let discount = f64::from(self.rng().uniform(0, 50)) / 100.0;
                let mut phone = String::new();
                text::n_string(self.rng(), 9, 16, &mut phone);
                let (Value::Text(f), Value::Text(l)) = (&fname, &lname) else {
                    unreachable!()
                };
                self.fx.names = Some((f.clone(), l.clone(), discount));
                let email = format!("{f}@{l}.com");
                let t = unix_now();
                let birth =
                    -2_840_140_800 + (self.rng().next_f64() * (t + 2_840_140_800) as f64) as i64;
                let data = self.a_string(100, 500);
                let today = &sql_datetime(t)[..10];
                self.set([
                    Value::Int(c),
                    Value::Text(uname.clone()),
                    Value::Text(uname.to_lowercase()),
                    fname,
                    lname,
                    Value::Int(self.addr.0),
                    Value::Text(phone),
                    Value::Text(email),
                    Value::Text(today.into()),
                    Value::Text(today.into()),
                    Value::Text(sql_datetime(t)),
                    Value::Text(sql_datetime(t + 7200)),
                    Value::Float(discount),
                    Value::Text(sql_datetime(birth)[..10].into()),
                    data,
                ]);
                Step::Exec(Stmt::CustomerInsert)
            }
            22 => {
                let (f, l, d) = self.fx.names.clone().expect("set by the insert");
                let c = self.fx.c_id.expect("set by the insert");
                self.set([
                    Value::Int(c),
                    Value::Text(f),
                    Value::Text(l),
                    Value::Float(d),
                    Value::Int(self.sc),
                ]);
                self.pc = 30;
                Step::Exec(Stmt::CartOwner)
            }
            30 => {
                self.set([Value::Int(self.sc)]);
                Step::Exec(Stmt::CartReprice)
            }
            31 => {
                self.set([Value::Int(self.sc)]);
                Step::Fetch(Stmt::CartSums, &[Col::Float, Col::Int], 1)
            }
            32 => {
                // TPC-W's cart totals (clause 2.6.3): the discount off the
                // sub-total, 8.25 % tax, $3 + $1 a book shipping.
                let discount = self.fx.names.as_ref().map_or(0.0, |n| n.2);
                let sum = self.fetch.float(0, 0).unwrap_or(0.0);
                let qty = self.fetch.int(0, 1).unwrap_or(0);
                let sub = round2(sum * (1.0 - discount));
                let tax = round2(sub * 0.0825);
                let ship = 3.0 + qty as f64;
                self.set([
                    Value::Float(sub),
                    Value::Float(tax),
                    Value::Float(ship),
                    Value::Float(round2(sub + tax + ship)),
                    Value::Text(now()),
                    Value::Int(self.sc),
                ]);
                Step::Exec(Stmt::CartTotals)
            }
            33 => {
                self.set([Value::Int(self.sc)]);
                Step::Fetch(Stmt::CartLines, &[Col::Int, Col::Int], CART_MAX as usize)
            }
            34 => {
                self.read_cart();
                Step::Commit
            }
            35 => Step::Done,
            _ => Step::Skip,
        }
    }

    /// A random address's column values (TPC-W's a-strings, a random
    /// country).
    pub(super) fn address(&mut self, id: i64) -> Vec<Value> {
        let co = i64::from(self.rng().uniform(1, COUNTRIES.len() as u32));
        vec![
            Value::Int(id),
            self.a_string(15, 40),
            self.a_string(15, 40),
            self.a_string(4, 30),
            self.a_string(2, 20),
            self.a_string(5, 10),
            Value::Int(co),
        ]
    }

    pub(super) fn buy_confirm(&mut self, pc: u32) -> Step {
        let (Some(sc), Some(c)) = (self.s().sc_id, self.s().c_id) else {
            // Nothing to buy (Buy Request always comes first in a mix).
            return Step::Done;
        };
        match pc {
            0 => Step::Begin(true),
            1 => self.ids(),
            2 => {
                self.take_ids();
                self.set([Value::Int(sc)]);
                Step::Fetch(
                    Stmt::CartReadTotals,
                    &[Col::Float, Col::Float, Col::Float, Col::Float],
                    1,
                )
            }
            3 => {
                for (i, t) in self.totals.iter_mut().enumerate() {
                    *t = self.fetch.float(0, i).unwrap_or(0.0);
                }
                self.set([Value::Int(c)]);
                Step::Fetch(Stmt::CustomerAddress, &[Col::Int, Col::Float, Col::Int], 1)
            }
            4 => {
                let bill = self.fetch.int(0, 0).unwrap_or(1);
                self.discount_read = self.fetch.float(0, 1).unwrap_or(0.0);
                let co = self.fetch.int(0, 2).unwrap_or(1);
                self.addr = (bill, co);
                self.ship = bill;
                // 5 % ship to a new address.
                if self.rng().next_f64() < 0.05 {
                    self.ship = Self::next_id(&self.shared.ids.address);
                    let v = self.address(self.ship);
                    self.set(v);
                    return Step::Exec(Stmt::AddressInsert);
                }
                Step::Skip
            }
            5 => {
                self.set([Value::Int(sc)]);
                Step::Fetch(Stmt::CartLines, &[Col::Int, Col::Int], CART_MAX as usize)
            }
            6 => {
                let f = &self.fetch;
                self.lines = (0..f.rows())
                    .filter_map(|r| Some((f.int(r, 0)?, f.int(r, 1)?)))
                    .collect();
                if self.lines.is_empty() {
                    self.pc = 9;
                    return Step::Skip;
                }
                let t = unix_now();
                let days = i64::from(self.rng().uniform(1, 7));
                let ship_type = SHIP_TYPES[self.rng().uniform(0, 5) as usize];
                let [sub, tax, _, total] = self.totals;
                self.set([
                    Value::Int(sc),
                    Value::Int(c),
                    Value::Text(sql_datetime(t)),
                    Value::Float(sub),
                    Value::Float(tax),
                    Value::Float(total),
                    Value::Text(ship_type.into()),
                    Value::Text(sql_datetime(t + days * 86_400)),
                    Value::Int(self.addr.0),
                    Value::Int(self.ship),
                ]);
                self.k = 0;
                Step::Exec(Stmt::OrderInsert)
            }
            7 => {
                // Each line: the order line, then the stock.
                if self.k >= 2 * self.lines.len() {
                    return Step::Skip;
                }
                let (item, qty) = self.lines[self.k / 2];
                let line = self.k / 2 + 1;
                let first = self.k % 2 == 0;
                self.k += 1;
                self.pc = 7;
                if first {
                    let comment = self.a_string(20, 100);
                    let d = self.discount_read;
                    self.set([
                        Value::Int(line as i64),
                        Value::Int(sc),
                        Value::Int(item),
                        Value::Int(qty),
                        Value::Float(d),
                        comment,
                    ]);
                    Step::Exec(Stmt::OrderLineInsert)
                } else {
                    self.set([
                        Value::Int(qty),
                        Value::Int(qty),
                        Value::Int(qty),
                        Value::Int(item),
                    ]);
                    Step::Exec(Stmt::StockUpdate)
                }
            }
            8 => {
                let t = unix_now();
                let card = CARD_TYPES[self.rng().uniform(0, 4) as usize];
                let mut num = String::new();
                text::n_string(self.rng(), 16, 16, &mut num);
                let (f, l) = (self.s().fname.clone(), self.s().lname.clone());
                let expiry = t + 86_400 + (self.rng().next_f64() * 63_158_400.0) as i64;
                let auth = self.a_string(15, 15);
                let name = format!("{f} {l}");
                self.set([
                    Value::Int(sc),
                    Value::Text(card.into()),
                    Value::Text(num),
                    Value::Text(name.chars().take(31).collect()),
                    Value::Text(sql_datetime(expiry)[..10].into()),
                    auth,
                    Value::Float(self.totals[3]),
                    Value::Text(sql_datetime(t)),
                    Value::Int(self.addr.1),
                ]);
                self.fx.bought = true;
                Step::Exec(Stmt::CcXactInsert)
            }
            9 => Step::Commit,
            _ => Step::Done,
        }
    }
}
