//! Emulated users: each user's session (who they are, their cart, the
//! page they last saw), and the script that turns the user's next
//! interaction into statements on whichever connection serves it.
//!
//! Users are not connections: with `--users` above `--threads` a user's
//! interactions run on whatever connection is free. So a user's state
//! lives here, in [`Sessions`], one slot per user; the connection's
//! [`Script`] takes it up when the engine names the user
//! ([`ClientScript::user`]) and hands it back when the interaction ends
//! ([`ClientScript::end`]), before the user can queue again.
//!
//! A session follows DBT-1's user (`eu.c`): it starts at Home, where 80 %
//! of users are returning customers (NURand over the customers) and the
//! rest anonymous; it walks the mix's matrix; after its minimum duration
//! (negative exponential, mean 15 minutes, capped at 60) it ends on its
//! next Home, and a new session begins. What an interaction changes in
//! the session (a new cart, the customer the user became, the items on
//! the page) takes effect only when it completes; a failed one is retried
//! with fresh values, as DBT-1 does.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::mix::{self, Interaction, Interaction::*, N};
use super::schema::Scale;
use super::sql::Stmt;
use super::text;
use crate::driver::{Col, Fetch, Value};
use crate::rand::Rng;
use crate::util::civil::sql_datetime;
use crate::workload::slots::UserSlots;
use crate::workload::{ClientScript, Op};

/// The mean and the cap of a session's minimum duration (TPC-W clause
/// 6.2.1.2; DBT-1's USMD).
const SESSION_MEAN: Duration = Duration::from_secs(15 * 60);
const SESSION_CAP: Duration = Duration::from_secs(60 * 60);

/// Items on a page of search results, new products or best sellers.
pub(super) const PAGE: usize = 50;

/// Books a cart holds at most (DBT-1 stops adding past 100).
pub(super) const CART_MAX: i64 = 100;

/// What the users of one workload instance share.
pub struct Sessions {
    pub scale: Scale,
    /// NURand's A for customers and search strings.
    pub a: u32,
    pub matrix: [[u16; N]; N],
    pub(super) seed: u64,
    pub(super) slots: UserSlots<Session>,
    pub(super) ids: Ids,
}

/// The next ids of new rows: set from the tables' highest ids by the
/// first interaction that inserts (any connection), then handed out.
#[derive(Default)]
pub(super) struct Ids {
    pub(super) ready: AtomicBool,
    pub(super) init: Mutex<()>,
    /// Carts; a bought cart's order takes its id (as DBT-1's), so both
    /// start above the highest order and cart.
    pub(super) cart: AtomicI64,
    pub(super) customer: AtomicI64,
    pub(super) address: AtomicI64,
}

impl Sessions {
    pub fn new(scale: Scale, matrix: [[u16; N]; N], seed: u64) -> Sessions {
        Sessions {
            a: mix::nurand_a(u64::from(scale.customers)),
            scale,
            matrix,
            seed,
            slots: UserSlots::default(),
            ids: Ids::default(),
        }
    }

    /// Forgets every session: a new run's users start at Home.
    pub fn reset(&self) {
        self.slots.reset();
    }

    /// Room for `users` users' sessions, made before the window opens.
    pub fn reserve(&self, users: usize) {
        self.slots.reserve(users);
    }

    fn take(&self, user: u32) -> Box<Session> {
        self.slots.take(user, || {
            Box::new(Session::new(Rng::for_client(
                self.seed ^ 0x6575_7365_7373_696f,
                u64::from(user),
            )))
        })
    }

    fn give_back(&self, user: u32, s: Box<Session>) {
        self.slots.give_back(user, s);
    }
}

/// What a user's session may take once the user has run: its slot, the
/// session (boxed: the allocator's 16 bytes), a page of results, a cart of
/// a dozen lines and the customer's names.
pub const BYTES_PER_SESSION: u64 = (std::mem::size_of::<Option<Box<Session>>>()
    + std::mem::size_of::<Session>()
    + 16
    + PAGE * std::mem::size_of::<i64>()
    + 12 * std::mem::size_of::<(i64, i64)>()
    + 32) as u64;

/// One user's state between interactions.
pub struct Session {
    pub(super) rng: Rng,
    /// The last interaction completed.
    pub(super) cur: Interaction,
    /// The interaction chosen and not yet completed.
    pub(super) next: Option<Interaction>,
    pub(super) started: bool,
    /// The next Home is its session's first (it picks the customer).
    pub(super) first: bool,
    pub(super) ends: Instant,
    pub(super) c_id: Option<i64>,
    pub(super) sc_id: Option<i64>,
    /// (item, quantity) of the cart's lines, as last read.
    pub(super) cart: Vec<(i64, i64)>,
    /// The items of the last page of results.
    pub(super) page: Vec<i64>,
    /// The item of the last Product Detail, and its price as Admin
    /// Request read it.
    pub(super) item: i64,
    pub(super) srp: Option<f64>,
    pub(super) fname: String,
    pub(super) lname: String,
    pub(super) discount: f64,
}

impl Session {
    fn new(rng: Rng) -> Session {
        Session {
            rng,
            cur: Home,
            next: None,
            started: false,
            first: true,
            ends: Instant::now(),
            c_id: None,
            sc_id: None,
            cart: Vec::new(),
            page: Vec::new(),
            item: 1,
            srp: None,
            fname: String::new(),
            lname: String::new(),
            discount: 0.0,
        }
    }

    /// A negative exponential duration of mean `mean`, capped at `cap`.
    fn duration(&mut self, mean: Duration, cap: Duration) -> Duration {
        let x = -(1.0 - self.rng.next_f64()).ln() * mean.as_secs_f64();
        Duration::from_secs_f64(x).min(cap)
    }
}

/// What the running interaction will change in the session when it
/// completes.
#[derive(Default)]
pub(super) struct Effects {
    pub(super) c_id: Option<i64>,
    pub(super) sc_id: Option<i64>,
    pub(super) cart: Option<Vec<(i64, i64)>>,
    pub(super) page: Option<Vec<i64>>,
    pub(super) item: Option<i64>,
    pub(super) srp: Option<f64>,
    pub(super) names: Option<(String, String, f64)>,
    pub(super) bought: bool,
}

/// One step of an interaction.
pub(super) enum Step {
    Begin(bool),
    Commit,
    Exec(Stmt),
    Fetch(Stmt, &'static [Col], usize),
    /// Nothing at this step; go on to the next.
    Skip,
    Done,
}

/// A connection's script: runs the interactions of whichever user the
/// engine names.
pub struct Script {
    pub(super) shared: Arc<Sessions>,
    pub(super) user: u32,
    pub(super) s: Option<Box<Session>>,
    pub(super) it: Interaction,
    pub(super) pc: u32,
    pub(super) k: usize,
    pub(super) params: Vec<Value>,
    pub(super) fetch: Fetch,
    pub(super) fx: Effects,
    /// Values read by earlier steps of the interaction.
    pub(super) sc: i64,
    pub(super) lines: Vec<(i64, i64)>,
    pub(super) totals: [f64; 4],
    /// (billing address, its country) of the buying customer.
    pub(super) addr: (i64, i64),
    pub(super) ship: i64,
    pub(super) discount_read: f64,
}

impl Script {
    pub fn new(shared: Arc<Sessions>) -> Script {
        Script {
            shared,
            user: 0,
            s: None,
            it: Home,
            pc: 0,
            k: 0,
            params: Vec::with_capacity(20),
            fetch: Fetch::default(),
            fx: Effects::default(),
            sc: 0,
            lines: Vec::new(),
            totals: [0.0; 4],
            addr: (0, 0),
            ship: 0,
            discount_read: 0.0,
        }
    }

    pub(super) fn s(&mut self) -> &mut Session {
        self.s.as_mut().expect("a session is taken up before start")
    }

    pub(super) fn rng(&mut self) -> &mut Rng {
        &mut self.s().rng
    }

    pub(super) fn set(&mut self, values: impl IntoIterator<Item = Value>) {
        self.params.clear();
        self.params.extend(values);
    }

    pub(super) fn random_item(&mut self) -> i64 {
        let items = self.shared.scale.items;
        i64::from(self.rng().uniform(1, items))
    }

    pub(super) fn a_string(&mut self, min: u32, max: u32) -> Value {
        let mut out = String::new();
        text::a_string(self.rng(), min, max, &mut out);
        Value::Text(out)
    }

    /// The promotional items shown beside most pages.
    pub(super) fn promotions(&mut self) -> Step {
        let i = self.random_item();
        self.set([Value::Int(i)]);
        Step::Fetch(Stmt::Promotions, &[Col::Int], 5)
    }

    /// The first step of a writing interaction: the next ids, if no
    /// interaction has read them yet.
    pub(super) fn ids(&mut self) -> Step {
        if self.shared.ids.ready.load(Ordering::Acquire) {
            return Step::Skip;
        }
        self.params.clear();
        Step::Fetch(Stmt::NextIds, &[Col::Int, Col::Int, Col::Int, Col::Int], 1)
    }

    /// Takes the ids the [`ids`](Self::ids) step read, if it ran.
    pub(super) fn take_ids(&mut self) {
        let ids = &self.shared.ids;
        if ids.ready.load(Ordering::Acquire) || self.fetch.types.len() != 4 {
            return;
        }
        let _g = ids.init.lock().unwrap_or_else(|p| p.into_inner());
        if !ids.ready.load(Ordering::Acquire) {
            let max = |c| self.fetch.int(0, c).unwrap_or(0);
            ids.cart.store(max(0).max(max(1)), Ordering::Relaxed);
            ids.customer.store(max(2), Ordering::Relaxed);
            ids.address.store(max(3), Ordering::Relaxed);
            ids.ready.store(true, Ordering::Release);
        }
    }

    pub(super) fn next_id(counter: &AtomicI64) -> i64 {
        counter.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn step(&mut self) -> Step {
        let pc = self.pc;
        self.pc += 1;
        match self.it {
            Home => self.home(pc),
            NewProducts => self.page(pc, Stmt::NewProducts),
            BestSellers => self.page(pc, Stmt::BestSellers),
            ProductDetail => self.product_detail(pc),
            SearchRequest | CustomerRegistration => Step::Done,
            SearchResults => {
                if pc == 1 {
                    self.k = self.rng().uniform(0, 2) as usize;
                }
                let stmt = [Stmt::SearchAuthor, Stmt::SearchTitle, Stmt::SearchSubject][self.k];
                self.page(pc, stmt)
            }
            ShoppingCart => self.shopping_cart(pc),
            BuyRequest => self.buy_request(pc),
            BuyConfirm => self.buy_confirm(pc),
            OrderInquiry => self.order_inquiry(pc),
            OrderDisplay => self.order_display(pc),
            AdminRequest => self.admin_request(pc),
            AdminConfirm => self.admin_confirm(pc),
        }
    }
}

impl Script {
    /// Makes `it` the user's next interaction (instead of the matrix's
    /// draw): for tests that check what one interaction reads and writes.
    pub fn force(&mut self, it: Interaction) {
        if self.s.is_none() {
            self.user(self.user);
        }
        let s = self.s();
        if !s.started {
            s.started = true;
            s.ends = Instant::now() + SESSION_MEAN;
        }
        s.next = Some(it);
    }

    /// The user's customer id, once known.
    pub fn customer(&self) -> Option<i64> {
        if let Some(s) = &self.s {
            return s.c_id;
        }
        self.shared.slots.peek(self.user, |s| s.c_id).flatten()
    }
}

impl ClientScript for Script {
    fn user(&mut self, user: u32) {
        if let Some(s) = self.s.take() {
            self.shared.give_back(self.user, s);
        }
        self.user = user;
        self.s = Some(self.shared.take(user));
    }

    fn start(&mut self) {
        if self.s.is_none() {
            self.user(self.user);
        }
        let matrix = self.shared.matrix;
        let s = self.s();
        let it = match s.next {
            Some(it) => it,
            None => {
                let now = Instant::now();
                let it = if !s.started || (s.cur == Home && now >= s.ends) {
                    // A new session: who the user is comes at its Home.
                    let length = s.duration(SESSION_MEAN, SESSION_CAP);
                    s.started = true;
                    s.first = true;
                    s.ends = now + length;
                    s.c_id = None;
                    s.sc_id = None;
                    s.cart.clear();
                    s.page.clear();
                    s.srp = None;
                    Home
                } else {
                    mix::next(&matrix, s.cur, &mut s.rng)
                };
                s.next = Some(it);
                it
            }
        };
        self.it = it;
        self.pc = 0;
        self.k = 0;
        self.fx = Effects::default();
        self.fetch.reset(&[], 0);
        self.lines.clear();
    }

    fn fetch_buffer(&mut self) -> Option<&mut Fetch> {
        Some(&mut self.fetch)
    }

    fn next(&mut self) -> Option<Op<'_>> {
        loop {
            match self.step() {
                Step::Skip => continue,
                Step::Done => return None,
                Step::Begin(writes) => return Some(Op::Begin { writes }),
                Step::Commit => return Some(Op::Commit),
                Step::Exec(s) => return Some(Op::Exec(s as usize, &self.params)),
                Step::Fetch(s, cols, max) => {
                    self.fetch.reset(cols, max);
                    return Some(Op::Fetch(s as usize, &self.params, &mut self.fetch));
                }
            }
        }
    }

    fn kind(&self) -> Option<u16> {
        Some(self.it.index() as u16)
    }

    fn end(&mut self, done: bool) {
        let Some(mut s) = self.s.take() else {
            return;
        };
        if done {
            let fx = std::mem::take(&mut self.fx);
            s.cur = self.it;
            if self.it == Home {
                s.first = false;
            }
            if let Some(c) = fx.c_id {
                s.c_id = Some(c);
            }
            if let Some(sc) = fx.sc_id {
                s.sc_id = Some(sc);
            }
            if let Some(cart) = fx.cart {
                s.cart = cart;
            }
            if let Some(page) = fx.page {
                s.page = page;
            }
            if let Some(item) = fx.item {
                s.item = item;
            }
            if fx.srp.is_some() {
                s.srp = fx.srp;
            }
            if let Some((f, l, d)) = fx.names {
                s.fname = f;
                s.lname = l;
                s.discount = d;
            }
            if fx.bought {
                s.sc_id = None;
                s.cart.clear();
            }
        }
        // Completed or given up, the next interaction is drawn afresh.
        s.next = None;
        self.shared.give_back(self.user, s);
    }
}

pub(super) fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

pub(super) fn now() -> String {
    sql_datetime(unix_now())
}

pub(super) fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
