//! Terminals: ten per warehouse, each with its home warehouse and district
//! (clause 2.8.1.1 gives Stock-Level the terminal's district), its deck of
//! transaction types and its random stream; and the script that runs the
//! terminal's next transaction on whichever connection serves it.
//!
//! Terminals are users of the engine's pacing layer, not connections: with
//! `--threads` below the terminal count a terminal whose wait ends queues
//! for a free connection. Its state lives in [`Terminals`], one slot per
//! terminal; a connection's [`Script`] takes it up when the engine names
//! the terminal and hands it back when the transaction ends.
//!
//! The cycle of a terminal (clause 5.2.5): the type of the next
//! transaction is chosen when the last one ends, from a shuffled deck in
//! which each type has its weight's cards (clause 5.2.4.2: 45/43/4/4/4 by
//! default, so every 100 transactions of a terminal meet the minimum mix of
//! clause 5.2.3); then come the think time of the transaction just done
//! and the keying time of the next ([`Waits`]), which the script hands the
//! engine as the terminal's pause ([`ClientScript::pause`]). The
//! transaction's response time runs from the end of that pause.
//!
//! Delivery runs inline (the terminal waits for all ten districts) or,
//! with `--delivery deferred`, is queued (clause 2.7.2): the terminal's
//! transaction only queues the request and the terminal goes on to its
//! think time; the engine then runs the request on the same connection as
//! a transaction of its own ([`ClientScript::deferred`],
//! [`DEFERRED_DELIVERY`]), timed from the queueing, while the terminal
//! (back with the pacing) may already run its next transaction on another
//! connection.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::random::Constants;
use super::schema::DISTRICTS;
use crate::driver::{Col, Fetch, Value};
use crate::rand::Rng;
use crate::workload::slots::UserSlots;
use crate::workload::{ClientScript, Op};

/// The five transaction types, in the order of their clauses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Txn {
    NewOrder,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
}

impl Txn {
    pub const ALL: [Txn; 5] = [
        Txn::NewOrder,
        Txn::Payment,
        Txn::OrderStatus,
        Txn::Delivery,
        Txn::StockLevel,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            Txn::NewOrder => "new_order",
            Txn::Payment => "payment",
            Txn::OrderStatus => "order_status",
            Txn::Delivery => "delivery",
            Txn::StockLevel => "stock_level",
        }
    }

    /// The minimum keying time (clause 5.2.5.7).
    pub fn keying(self) -> Duration {
        Duration::from_secs(match self {
            Txn::NewOrder => 18,
            Txn::Payment => 3,
            _ => 2,
        })
    }

    /// The minimum mean think time (clause 5.2.5.7).
    pub fn think_mean(self) -> Duration {
        Duration::from_secs(match self {
            Txn::NewOrder | Txn::Payment => 12,
            Txn::OrderStatus => 10,
            _ => 5,
        })
    }

    /// The limit on the 90th percentile of the response time (clause
    /// 5.2.5.3); for Delivery run inline, the limit on a deferred
    /// Delivery's completion (80 s), since the terminal waits for all ten
    /// districts.
    pub fn p90_limit(self) -> Duration {
        Duration::from_secs(match self {
            Txn::StockLevel => 20,
            Txn::Delivery => 80,
            _ => 5,
        })
    }

    /// The minimum share of the mix in percent (clause 5.2.3); New-Order
    /// has none.
    pub fn min_pct(self) -> f64 {
        match self {
            Txn::NewOrder => 0.0,
            Txn::Payment => 43.0,
            _ => 4.0,
        }
    }
}

/// The transaction type of a New-Order that rolls back on its unused
/// item: a completed New-Order, counted apart from the committed ones.
pub const ROLLED_BACK_NEW_ORDER: u16 = 5;

/// Its name in the run's types.
pub const ROLLED_BACK_NAME: &str = "new_order_rollback";

/// The transaction type of a queued Delivery's execution
/// (`--delivery deferred`, clause 2.7.2): after the five and the
/// rolled-back New-Order. Its response time is the deferred completion
/// time, from the queueing to the end of the tenth district.
pub const DEFERRED_DELIVERY: u16 = 6;

/// Its name in the run's types.
pub const DEFERRED_NAME: &str = "delivery_deferred";

/// The limit on the 90th percentile of a deferred Delivery's response
/// time, the time to queue it (clause 5.2.5.3: 5 s, as the other
/// interactive types).
pub const DELIVERY_QUEUED_LIMIT: Duration = Duration::from_secs(5);

/// How Delivery runs (`--delivery`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Delivery {
    /// The terminal waits for all ten districts (every other kit's way).
    #[default]
    Inline,
    /// The terminal's transaction only queues the request; the connection
    /// that served it then executes it as a transaction of its own
    /// ([`DEFERRED_DELIVERY`]) while the terminal thinks (clause 2.7.2).
    Deferred,
}

impl Delivery {
    pub fn parse(s: &str) -> Option<Delivery> {
        match s {
            "inline" => Some(Delivery::Inline),
            "deferred" => Some(Delivery::Deferred),
            _ => None,
        }
    }
}

/// The spec's mix as a deck: 45 New-Order, 43 Payment, 4 of each other.
pub const DEFAULT_WEIGHTS: [u32; 5] = [45, 43, 4, 4, 4];

/// Keying and think times, each scaled from the spec's minimums.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Waits {
    pub keying_scale: f64,
    pub think_scale: f64,
}

impl Waits {
    pub const SPEC: Waits = Waits {
        keying_scale: 1.0,
        think_scale: 1.0,
    };

    /// The think time after `done`: negative exponential of its mean,
    /// truncated at ten times the mean (clause 5.2.5.4).
    pub fn think(&self, done: Txn, rng: &mut Rng) -> Duration {
        let mean = done.think_mean().as_secs_f64() * self.think_scale;
        let x = -(1.0 - rng.next_f64()).ln() * mean;
        Duration::from_secs_f64(x.min(10.0 * mean))
    }

    /// The keying time of `next`.
    pub fn keying(&self, next: Txn) -> Duration {
        next.keying().mul_f64(self.keying_scale)
    }

    /// The pause between `done` and `next`: the one's think time and the
    /// other's keying time.
    pub fn pause(&self, done: Txn, next: Txn, rng: &mut Rng) -> Duration {
        self.think(done, rng) + self.keying(next)
    }
}

/// One terminal's state between transactions.
pub struct Terminal {
    pub(super) rng: Rng,
    /// Home warehouse and district.
    pub w: u32,
    pub d: u32,
    deck: Vec<Txn>,
    pos: usize,
    /// The type of the terminal's next transaction.
    pub(super) next: Txn,
}

impl Terminal {
    fn new(seed: u64, user: u32, warehouses: u32, weights: &[u32; 5]) -> Terminal {
        let mut deck = Vec::new();
        for t in Txn::ALL {
            deck.extend(std::iter::repeat_n(t, weights[t.index()] as usize));
        }
        let mut t = Terminal {
            rng: Rng::for_client(seed ^ 0x7465_726d_696e_616c, u64::from(user)),
            w: (user / DISTRICTS) % warehouses + 1,
            d: user % DISTRICTS + 1,
            pos: deck.len(),
            deck,
            next: Txn::NewOrder,
        };
        t.next = t.draw();
        t
    }

    /// The next card, shuffling the deck when it is used up.
    pub fn draw(&mut self) -> Txn {
        if self.pos >= self.deck.len() {
            for i in (1..self.deck.len()).rev() {
                let j = self.rng.uniform(0, i as u32) as usize;
                self.deck.swap(i, j);
            }
            self.pos = 0;
        }
        self.pos += 1;
        self.deck[self.pos - 1]
    }
}

/// What the terminals of one workload instance share.
pub struct Terminals {
    pub warehouses: u32,
    pub weights: [u32; 5],
    /// None: `--no-wait`.
    pub waits: Option<Waits>,
    /// Each transaction on a random warehouse and district instead of
    /// the terminal's (`--all-warehouses`, a no-wait run's option).
    pub all_warehouses: bool,
    /// Delivery inline or queued for deferred execution (`--delivery`).
    pub delivery: Delivery,
    seed: u64,
    /// The run's C for C_LAST, set from the load's once it is read.
    c_last: AtomicU32,
    c: Constants,
    slots: UserSlots<Terminal>,
}

impl Terminals {
    pub fn new(warehouses: u32, weights: [u32; 5], waits: Option<Waits>, seed: u64) -> Terminals {
        // Until `check_prepared` reads the load's constant from the
        // database, the run's obeys the delta rule against the constant a
        // load with the run's seed draws (a study prepares with it).
        let c = Constants::run(seed, Constants::load(seed).c_last);
        Terminals {
            warehouses,
            weights,
            waits,
            all_warehouses: false,
            delivery: Delivery::Inline,
            seed,
            c_last: AtomicU32::new(c.c_last),
            c,
            slots: UserSlots::default(),
        }
    }

    /// Sets the run's C for C_LAST from the load's, by the delta rule.
    pub fn set_load_c_last(&self, c_load: u32) {
        let c = Constants::run(self.seed, c_load);
        self.c_last.store(c.c_last, Ordering::Relaxed);
    }

    /// The run's C constants.
    pub fn constants(&self) -> Constants {
        Constants {
            c_last: self.c_last.load(Ordering::Relaxed),
            ..self.c
        }
    }

    /// Forgets every terminal: a new run's terminals start afresh.
    pub fn reset(&self) {
        self.slots.reset();
    }

    /// Room for `users` terminals' slots, made before the window opens.
    pub fn reserve(&self, users: usize) {
        self.slots.reserve(users);
    }

    fn take(&self, user: u32) -> Box<Terminal> {
        self.slots.take(user, || {
            Box::new(Terminal::new(
                self.seed,
                user,
                self.warehouses,
                &self.weights,
            ))
        })
    }

    fn give_back(&self, user: u32, t: Box<Terminal>) {
        self.slots.give_back(user, t);
    }
}

/// A connection's script: runs the transactions of whichever terminal the
/// engine names.
pub struct Script {
    pub(super) shared: Arc<Terminals>,
    pub(super) user: u32,
    pub(super) t: Option<Box<Terminal>>,
    pub(super) txn: Txn,
    pub(super) pc: u32,
    pub(super) params: Vec<Value>,
    pub(super) fetch: Fetch,
    pub(super) pause: Option<Duration>,
    /// The last transaction queued a Delivery (`--delivery deferred`),
    /// not yet handed to the engine.
    queued: bool,
    /// The running transaction is a queued Delivery's execution: it
    /// belongs to no terminal (the terminal is thinking meanwhile, maybe
    /// on another connection) and runs on the inputs the queueing drew.
    pub(super) executing: bool,
    /// The running transaction's inputs and what it read so far.
    pub(super) x: Inputs,
    /// Inputs tests pin instead of drawing.
    pub force: Force,
}

/// Inputs a test pins (None: drawn as the spec says).
#[derive(Debug, Clone, Default)]
pub struct Force {
    /// New-Order: roll back on an unused item, or not.
    pub rollback: Option<bool>,
    /// Payment and Order-Status: select the customer by last name
    /// (`Some(n)`: the name of number n), or by id (`None` in the inner).
    pub by_name: Option<Option<u32>>,
    /// The district of New-Order, Payment and Order-Status.
    pub district: Option<u32>,
}

impl Script {
    pub fn new(shared: Arc<Terminals>) -> Script {
        Script {
            shared,
            user: 0,
            t: None,
            txn: Txn::NewOrder,
            pc: 0,
            params: Vec::with_capacity(16),
            fetch: Fetch::default(),
            pause: None,
            queued: false,
            executing: false,
            x: Inputs::default(),
            force: Force::default(),
        }
    }

    /// A script that always runs terminal `user` (numbered from 0), for a
    /// connection that is its terminal's own, with no pacing to name it
    /// (CH-benCHmark's transactional clients).
    pub fn for_terminal(shared: Arc<Terminals>, user: u32) -> Script {
        Script {
            user,
            ..Script::new(shared)
        }
    }

    pub(super) fn term(&mut self) -> &mut Terminal {
        self.t
            .as_mut()
            .expect("a terminal is taken up before start")
    }

    pub(super) fn rng(&mut self) -> &mut Rng {
        &mut self.term().rng
    }

    pub(super) fn set(&mut self, values: impl IntoIterator<Item = Value>) {
        self.params.clear();
        self.params.extend(values);
    }

    /// Makes `txn` the terminal's next transaction (instead of the deck's
    /// card): for tests of what one transaction reads and writes.
    pub fn force_next(&mut self, txn: Txn) {
        if self.t.is_none() {
            self.user(self.user);
        }
        self.term().next = txn;
    }

    /// What the last transaction found (for tests).
    pub fn inputs(&self) -> &Inputs {
        &self.x
    }

    /// The terminal's home (warehouse, district), once taken up.
    pub fn home(&self) -> Option<(u32, u32)> {
        self.t.as_ref().map(|t| (t.w, t.d))
    }
}

impl ClientScript for Script {
    fn user(&mut self, user: u32) {
        if let Some(t) = self.t.take() {
            self.shared.give_back(self.user, t);
        }
        self.user = user;
        self.t = Some(self.shared.take(user));
    }

    fn start(&mut self) {
        self.pc = 0;
        self.fetch.reset(&[], 0);
        if self.executing {
            // The queued request's warehouse and carrier stay, on a retry too.
            self.txn = Txn::Delivery;
            self.restart_delivery();
            return;
        }
        if self.t.is_none() {
            self.user(self.user);
        }
        self.txn = self.term().next;
        self.draw_inputs();
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
                Step::Rollback => return Some(Op::Rollback),
                Step::Exec(s) => return Some(Op::Exec(s, &self.params)),
                Step::Batch(s, rows) => return Some(Op::Batch(s, &self.params, rows)),
                Step::Fetch(s, cols, max) => {
                    self.fetch.reset(cols, max);
                    return Some(Op::Fetch(s, &self.params, &mut self.fetch));
                }
            }
        }
    }

    fn kind(&self) -> Option<u16> {
        // A New-Order that rolls back is counted apart, after the five
        // types, so the report can tell committed New-Orders (NOPM) from
        // all of them (tpmC).
        if self.txn == Txn::NewOrder && self.x.rollback {
            return Some(ROLLED_BACK_NEW_ORDER);
        }
        if self.executing {
            return Some(DEFERRED_DELIVERY);
        }
        Some(self.txn.index() as u16)
    }

    fn end(&mut self, done: bool) {
        if self.executing {
            // A queued Delivery's execution: no terminal to move on.
            self.executing = false;
            return;
        }
        let Some(mut t) = self.t.take() else {
            return;
        };
        self.queued = done && self.queues_delivery();
        // Completed or given up, the terminal goes on to its next card.
        let next = t.draw();
        t.next = next;
        self.pause = self
            .shared
            .waits
            .map(|w| w.pause(self.txn, next, &mut t.rng));
        self.shared.give_back(self.user, t);
    }

    fn pause(&mut self) -> Option<Duration> {
        self.pause.take()
    }

    fn deferred(&mut self) -> bool {
        // The engine runs the queued Delivery next, on this connection:
        // `start` then takes up the request instead of a terminal.
        self.executing = std::mem::take(&mut self.queued);
        self.executing
    }
}

impl Script {
    /// Is the running transaction a Delivery that only queues its request?
    pub(super) fn queues_delivery(&self) -> bool {
        self.txn == Txn::Delivery && self.shared.delivery == Delivery::Deferred && !self.executing
    }
}

/// One step of a transaction.
pub(super) enum Step {
    Begin(bool),
    Commit,
    Rollback,
    Exec(usize),
    /// The statement once for each of this many rows of parameters.
    Batch(usize, usize),
    Fetch(usize, &'static [Col], usize),
    /// Nothing at this step; go on to the next.
    Skip,
    Done,
}

/// One New-Order line: item, supplying warehouse, quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line {
    pub item: u32,
    pub supply_w: u32,
    pub qty: u32,
}

/// The running transaction's inputs, and what it has read (public for the
/// tests that check each transaction's rows).
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    pub w: u32,
    pub d: u32,
    /// The customer's warehouse and district (Payment's may be remote).
    pub c_w: u32,
    pub c_d: u32,
    /// The customer's id, drawn or found by name.
    pub c_id: i64,
    /// The last name looked up, if by name.
    pub last: Option<String>,
    /// How many customers had that name.
    pub named: usize,
    pub lines: Vec<Line>,
    pub rollback: bool,
    /// The order New-Order inserted (or Order-Status found).
    pub o_id: i64,
    pub amount: f64,
    pub carrier: u32,
    /// Delivery: the order delivered in each district (0: none).
    pub delivered: [i64; DISTRICTS as usize],
    pub threshold: u32,
    /// Stock-Level's count of distinct items below the threshold.
    pub low_stock: i64,
    pub(super) now: String,
    pub(super) price: f64,
    /// New-Order's stock updates and order lines, one row of parameters
    /// per line, for their batches.
    pub(super) stock_rows: Vec<Value>,
    pub(super) line_rows: Vec<Value>,
    pub(super) w_name: String,
    pub(super) d_name: String,
    pub(super) bad_credit: bool,
}
