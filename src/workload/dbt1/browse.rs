//! The interactions that read: Home, the pages of items (New Products,
//! Best Sellers, the three searches), Product Detail, Order Inquiry and
//! Order Display, and the two admin interactions, one step at a time
//! (see [`Script`]).
//!
//! The reading ones run in autocommit, one statement after another, as a
//! web page's queries do: DBT-1 made each interaction one stored-procedure
//! call, and around client-side statements a BEGIN and a COMMIT would add
//! two round trips to every page (a third of a browsing interaction's).

use super::mix;
use super::session::{now, round2, Script, Step, PAGE};
use super::sql::Stmt;
use super::text::{self, SUBJECTS};
use crate::driver::{Col, Value};

impl Script {
    pub(super) fn home(&mut self, pc: u32) -> Step {
        match pc {
            0 => Step::Skip,
            1 => {
                if self.s().first && self.rng().next_f64() < 0.8 {
                    let (a, n) = (self.shared.a, self.shared.scale.customers);
                    let c = i64::from(mix::nurand(self.rng(), a, 1, n));
                    self.fx.c_id = Some(c);
                }
                match self.fx.c_id.or(self.s().c_id) {
                    Some(c) => {
                        self.set([Value::Int(c)]);
                        Step::Exec(Stmt::CustomerName)
                    }
                    None => Step::Skip,
                }
            }
            2 => self.promotions(),
            3 => Step::Skip,
            _ => Step::Done,
        }
    }

    /// New Products, Best Sellers and the three searches: a page of items.
    pub(super) fn page(&mut self, pc: u32, stmt: Stmt) -> Step {
        match pc {
            0 => Step::Skip,
            1 => {
                let v = match stmt {
                    Stmt::SearchAuthor | Stmt::SearchTitle => {
                        let (a, items) = (self.shared.a, self.shared.scale.items);
                        let span = if stmt == Stmt::SearchAuthor {
                            items / 10
                        } else {
                            items / 5
                        };
                        let n = mix::nurand(self.rng(), a, 1, span.max(1));
                        format!("%{}%", text::digsyl_string(u64::from(n), 7))
                    }
                    _ => SUBJECTS[self.rng().uniform(0, SUBJECTS.len() as u32 - 1) as usize]
                        .to_string(),
                };
                self.set([Value::Text(v)]);
                Step::Fetch(stmt, &[Col::Int], PAGE)
            }
            2 => {
                let page = (0..self.fetch.rows())
                    .filter_map(|r| self.fetch.int(r, 0))
                    .collect();
                self.fx.page = Some(page);
                self.promotions()
            }
            3 => Step::Skip,
            _ => Step::Done,
        }
    }

    pub(super) fn product_detail(&mut self, pc: u32) -> Step {
        match pc {
            0 => Step::Skip,
            1 => {
                let n = self.s().page.len();
                let item = if n > 0 {
                    let i = self.rng().uniform(0, n as u32 - 1) as usize;
                    self.s().page[i]
                } else {
                    self.random_item()
                };
                self.fx.item = Some(item);
                self.set([Value::Int(item)]);
                Step::Exec(Stmt::ProductDetail)
            }
            2 => Step::Skip,
            _ => Step::Done,
        }
    }

    pub(super) fn order_inquiry(&mut self, pc: u32) -> Step {
        let Some(c) = self.s().c_id else {
            // An anonymous user is asked to log in: no query (DBT-1).
            return Step::Done;
        };
        match pc {
            0 => Step::Skip,
            1 => {
                self.set([Value::Int(c)]);
                Step::Exec(Stmt::CustomerUname)
            }
            2 => Step::Skip,
            _ => Step::Done,
        }
    }

    pub(super) fn order_display(&mut self, pc: u32) -> Step {
        match pc {
            0 => Step::Skip,
            1 => {
                // Known or not, the user logs in as a customer (DBT-1 picks
                // one by NURand for an anonymous user).
                let c = match self.s().c_id {
                    Some(c) => c,
                    None => {
                        let (a, n) = (self.shared.a, self.shared.scale.customers);
                        i64::from(mix::nurand(self.rng(), a, 1, n))
                    }
                };
                let uname = text::digsyl_string(c as u64, 0);
                let passwd = uname.to_lowercase();
                self.set([Value::Text(uname), Value::Text(passwd)]);
                Step::Fetch(Stmt::LastOrder, &[Col::Int, Col::Int, Col::Int], 1)
            }
            2..=4 => {
                if self.fetch.types.len() == 3 {
                    self.lines = (0..3)
                        .map(|i| (self.fetch.int(0, i).unwrap_or(0), 0))
                        .collect();
                }
                let Some(&(o, _)) = self.lines.first().filter(|l| l.0 > 0) else {
                    self.pc = 5;
                    return Step::Skip;
                };
                let v = match pc {
                    2 => self.lines[1].0,
                    3 => self.lines[2].0,
                    _ => o,
                };
                self.set([Value::Int(v)]);
                Step::Exec(if pc == 4 {
                    Stmt::OrderLines
                } else {
                    Stmt::OrderAddress
                })
            }
            5 => Step::Skip,
            _ => Step::Done,
        }
    }

    pub(super) fn admin_request(&mut self, pc: u32) -> Step {
        match pc {
            0 => Step::Skip,
            1 => {
                let item = self.s().item;
                self.set([Value::Int(item)]);
                Step::Fetch(Stmt::AdminItem, &[Col::Float], 1)
            }
            2 => {
                self.fx.srp = self.fetch.float(0, 0);
                Step::Skip
            }
            _ => Step::Done,
        }
    }

    pub(super) fn admin_confirm(&mut self, pc: u32) -> Step {
        match pc {
            0 => Step::Begin(true),
            1 => {
                let item = self.s().item;
                let srp = self.s().srp.unwrap_or(10.0);
                let cost = round2((1.0 - f64::from(self.rng().uniform(0, 5)) / 10.0) * srp);
                let (image, thumb) = (self.random_item(), self.random_item());
                self.set([
                    Value::Int(image),
                    Value::Int(thumb),
                    Value::Float(cost),
                    Value::Text(now()[..10].into()),
                    Value::Int(item),
                ]);
                Step::Exec(Stmt::AdminUpdate)
            }
            2 => {
                let item = self.s().item;
                self.set([Value::Int(item)]);
                Step::Exec(Stmt::ProductDetail)
            }
            3 => Step::Commit,
            _ => Step::Done,
        }
    }
}
