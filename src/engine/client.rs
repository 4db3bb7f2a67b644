//! What one client decides, whichever way it runs (a thread of its own,
//! threaded.rs, or an event loop, evclient.rs): when its next transaction
//! may start and for whom, whether it starts at all (past the end, past
//! the count, too late to send), what is recorded when it ends, what the
//! client does next, and how it leaves. This is the hot path, with
//! `transaction.rs`: per transaction nothing here allocates, and the locks
//! it takes are the recorder's shard and, for users on a pool, the queue.
//!
//! Each transaction has an intended start: when the client is ready (a
//! closed loop, after its think time), or when the pacing's schedule or
//! user says (`pacing.rs`). Its latency runs from the intended start, its
//! service time from when the client began it.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::driver::{Connection, DbError};
use crate::workload::ClientScript;

use super::pacing::Ticket;
use super::recorder::{Timing, TxnBuffer};
use super::transaction::TxnEnd;
use super::{Shared, Timeline, DONE, IDLE, IN_ARRIVAL, IN_TXN, RECONNECTING};
use crate::driver::ErrorSet;
use crate::rand::Rng;
use crate::util::clock;

/// One transaction of a client, as [`Client::open`] started it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Txn {
    /// The queue's ticket (a queued run).
    pub ticket: Option<Ticket>,
    /// Deferred work: when it was queued.
    pub deferred: Option<Instant>,
    pub start: Instant,
    /// Its latency runs from here.
    pub intended: Instant,
    /// It counts in the measured window.
    pub measured: bool,
}

/// Whether a transaction starts.
pub(super) enum Open {
    Go(Txn),
    /// An arrival too late to send (recorded as skipped): take the next.
    Skip,
    /// Nothing more to start: the client leaves.
    Leave,
}

/// What a client does once a transaction is recorded.
pub(super) enum Closed {
    Next,
    /// The connection was lost: open another, then go on.
    Reconnect,
    /// The run stops (a fatal error).
    Leave,
    /// The deadline abandoned it: unrecorded, the client leaves at once.
    Abandoned,
}

/// One client as its loop sees it: who it is, what it reads of the shared
/// state, and what one transaction leaves for the next.
pub(super) struct Client<'a> {
    /// This process's number of the client (its slot, its recorder shard).
    pub id: usize,
    /// The client's number in the whole run, which decides its instance,
    /// its streams and its user, so a shard's client behaves as it would in
    /// one process.
    g: usize,
    pub shared: &'a Shared,
    pub timeline: &'a Timeline,
    /// Its instance's statement kinds, and the error kinds its workload
    /// retries besides the usual ones.
    pub stmt_kind: &'a [u16],
    pub retry_also: ErrorSet,
    /// A closed loop's think times come from a stream of the client's own.
    think_rng: Rng,
    pub buf: TxnBuffer,
    measured_txns: u64,
    on_this_connection: u64,
    first: bool,
    /// The workload's pause after the last transaction.
    pause: Option<Duration>,
    /// Work the last transaction queued (TPC-C's deferred Delivery): it
    /// runs next on this connection, timed from its queueing (the clock
    /// reading); a closed loop's user counts its pause from then too (the
    /// real clock, which its sleep reads).
    pub deferred_from: Option<Instant>,
    pause_from: Option<Instant>,
    /// When this client's last transaction ended (the run's end is the
    /// latest of these, or the time limit).
    last_finish: Option<Instant>,
    /// It stopped because its rounds or the run's events were done.
    counted_out: bool,
    /// The transactions it runs when the run counts rounds: its script's
    /// own count, else the run's.
    rounds: Option<u64>,
}

impl<'a> Client<'a> {
    pub fn new(id: usize, shared: &'a Shared, script: &dyn ClientScript) -> Client<'a> {
        let g = shared.first_client + id;
        let rounds = shared.rules.rounds.map(|r| script.rounds().unwrap_or(r));
        Client {
            id,
            g,
            shared,
            timeline: shared.timeline.get().expect("timeline set before release"),
            stmt_kind: shared.kinds.of_statement[g / shared.per_instance].as_slice(),
            retry_also: shared.rules.retry_also[g / shared.per_instance],
            think_rng: Rng::for_client(shared.seed ^ 0x7468_696e_6b74_696d, g as u64),
            buf: TxnBuffer::default(),
            measured_txns: 0,
            on_this_connection: 0,
            first: true,
            pause: None,
            deferred_from: None,
            pause_from: None,
            last_finish: None,
            counted_out: false,
            rounds,
        }
    }

    /// When a closed loop's next transaction may start: a ramped-up
    /// user's start, or the end of the workload's pause or the run's think
    /// time; None: at once.
    pub fn closed_loop_due(&mut self) -> Option<Instant> {
        let shared = self.shared;
        if let (Some(rate), true) = (shared.pacing.ramp_up(), self.first) {
            // Users start one after another, `rate` per second.
            return Some(
                self.timeline.t0
                    + Duration::from_secs_f64((self.g % shared.per_instance) as f64 / rate),
            );
        }
        // The workload's pause for this user, or the run's think time.
        let pause = match (self.pause.take(), self.first) {
            (_, true) => None,
            (Some(p), false) => Some(p),
            (None, false) => shared
                .pacing
                .think_time()
                .map(|t| t.draw(&mut self.think_rng)),
        };
        // A user thinks from its transaction's end. The clock is read
        // only for a pause: a closed loop without think time reads none.
        let from = self.pause_from.take().or(self.last_finish);
        pause.map(|p| from.unwrap_or_else(clock::now) + p)
    }

    /// Starts the transaction of `ticket` (or the deferred work queued
    /// at `deferred`) now, unless the run has passed its end or its
    /// count, or the arrival is too late to send.
    #[inline]
    pub fn open(&mut self, ticket: Option<Ticket>, deferred: Option<Instant>) -> Open {
        self.first = false;
        let start = clock::now();
        let intended = deferred.or(ticket.map(|t| t.intended)).unwrap_or(start);
        let measured = intended >= self.timeline.measure_start;
        self.clear_buffer(ticket);
        if self.past_end(start, ticket, measured) {
            return Open::Leave;
        }
        // Deferred work is part of the transaction that queued it: it takes
        // no round and no event of its own.
        if measured && deferred.is_none() && self.count_exhausted() {
            return Open::Leave;
        }
        if self.skip_late(ticket, start, intended, measured) {
            return Open::Skip;
        }
        Open::Go(Txn {
            ticket,
            deferred,
            start,
            intended,
            measured,
        })
    }

    /// The transaction goes to its connection: the client's slot says so,
    /// and the script learns whose it is (an open loop's arrival is run
    /// by the connection's own user, as in a closed loop: the workload
    /// keeps one user's state per connection, not one per arrival).
    #[inline]
    pub fn begin(&mut self, script: &mut dyn ClientScript, txn: &Txn) {
        let in_txn = if txn.ticket.is_some() && txn.measured {
            IN_ARRIVAL
        } else {
            IN_TXN
        };
        self.shared.slots[self.id]
            .state
            .store(in_txn, Ordering::Release);
        if txn.deferred.is_none() {
            let own = (self.g % self.shared.per_instance) as u32;
            script.user(txn.ticket.and_then(|t| t.user).unwrap_or(own));
        }
    }

    /// Records how the transaction ended, tells the script, and says what
    /// the client does next. After [`Closed::Next`] the client is idle
    /// again; after `Reconnect`, once reconnected, the caller calls
    /// [`Client::transaction_done`].
    pub fn close(&mut self, script: &mut dyn ClientScript, end: TxnEnd, txn: &Txn) -> Closed {
        let finished = clock::now();
        self.last_finish = Some(finished);
        let mut timing = Timing::default();
        if txn.ticket.is_some() {
            timing.lag = Some((txn.start - txn.intended).as_nanos() as u64);
        }
        let completed = matches!(end, TxnEnd::Done);
        self.script_ended(script, completed, finished, txn.deferred.is_some());
        match end {
            TxnEnd::Abandoned => return Closed::Abandoned,
            TxnEnd::Done => {
                self.record_done(timing, txn.start, txn.intended, finished, txn.measured)
            }
            TxnEnd::Failed => self.record_failed(timing, txn.measured),
            TxnEnd::Lost => {
                self.record_failed(timing, txn.measured);
                return Closed::Reconnect;
            }
            TxnEnd::Fatal(e) => {
                self.record_fatal(&e, timing, txn.measured);
                return Closed::Leave;
            }
        }
        self.transaction_done(txn);
        Closed::Next
    }

    /// Empties the buffer for the next transaction; an arrival counts as
    /// one in it.
    #[inline]
    pub fn clear_buffer(&mut self, ticket: Option<Ticket>) {
        self.buf.clear();
        if ticket.is_some() {
            self.buf.counters.arrivals = 1;
        }
    }

    /// Past the run's end no transaction starts: true when the client is
    /// to leave (an arrival it took is recorded as never started).
    #[inline]
    fn past_end(&mut self, start: Instant, ticket: Option<Ticket>, measured: bool) -> bool {
        let past = self.timeline.end.is_some_and(|end| start >= end);
        if past && ticket.is_some() {
            self.buf.counters.unstarted = 1;
            self.flush(Timing::default(), measured);
        }
        past
    }

    /// Takes a round of the client's, and an event of the run's, for a
    /// measured transaction: true when none is left (the client leaves).
    #[inline]
    fn count_exhausted(&mut self) -> bool {
        let shared = self.shared;
        if self.rounds.is_some_and(|r| self.measured_txns >= r) {
            self.counted_out = true;
            return true;
        }
        if let Some(max) = shared.rules.events {
            if shared.tickets.fetch_add(1, Ordering::Relaxed) >= max {
                self.counted_out = true;
                return true;
            }
        }
        false
    }

    /// An arrival further behind schedule than the latency limit allows
    /// (a rate with one) is skipped: recorded as such, not sent.
    #[inline]
    fn skip_late(
        &mut self,
        ticket: Option<Ticket>,
        start: Instant,
        intended: Instant,
        measured: bool,
    ) -> bool {
        if let (Some(limit), Some(_)) = (self.shared.skip_after, ticket) {
            if start - intended > limit {
                self.buf.counters.skipped = 1;
                self.flush(Timing::default(), measured);
                return true;
            }
        }
        false
    }

    /// A new connection: the `--reconnect` count starts again.
    pub fn reconnected(&mut self) {
        self.on_this_connection = 0;
    }

    /// The connection has served its `--reconnect` count of transactions.
    #[inline]
    pub fn reconnect_due(&self) -> bool {
        self.shared
            .rules
            .reconnect_every
            .is_some_and(|n| self.on_this_connection >= n)
    }

    /// Tells the script how its transaction ended and, unless it was
    /// deferred work, takes what the script asks of the next: a pause, or
    /// work deferred to run next on this connection.
    #[inline]
    fn script_ended(
        &mut self,
        script: &mut dyn ClientScript,
        completed: bool,
        finished: Instant,
        deferred: bool,
    ) {
        script.end(completed);
        if !deferred {
            self.pause = script.pause();
            if completed && script.deferred() {
                self.deferred_from = Some(finished);
                self.pause_from = Some(clock::now());
            }
        }
    }

    /// A completed transaction: its latency from the intended start, its
    /// service time from the actual one, late or not; a measured one also
    /// counts in the client's slot.
    #[inline]
    fn record_done(
        &mut self,
        mut timing: Timing,
        start: Instant,
        intended: Instant,
        finished: Instant,
        measured: bool,
    ) {
        let service = (finished - start).as_nanos() as u64;
        let latency = (finished - intended).as_nanos() as u64;
        timing.latency = Some(latency);
        timing.service = Some(service);
        self.buf.counters.transactions = 1;
        if self
            .shared
            .pacing
            .latency_limit
            .is_some_and(|l| latency > l.as_nanos() as u64)
        {
            self.buf.counters.late = 1;
        }
        self.flush(timing, measured);
        if measured {
            let slot = &self.shared.slots[self.id];
            slot.txns.fetch_add(1, Ordering::Relaxed);
            slot.busy_ns.fetch_add(service, Ordering::Relaxed);
        }
    }

    #[inline]
    fn record_failed(&mut self, timing: Timing, measured: bool) {
        self.buf.counters.failed = 1;
        self.flush(timing, measured);
    }

    /// An error that stops the run: recorded, kept as the run's first
    /// fatal error (if it is), and every client told to stop.
    pub fn record_fatal(&mut self, e: &DbError, timing: Timing, measured: bool) {
        self.flush(timing, measured);
        self.shared
            .lifecycle
            .fail(|| format!("client {}: {e}", self.g));
    }

    #[inline]
    fn flush(&self, timing: Timing, measured: bool) {
        self.shared
            .recorder
            .flush(self.id, &self.buf, timing, measured);
    }

    /// After a transaction is recorded: a queued user goes back to the
    /// queue, a round is counted, and the client is idle again.
    #[inline]
    pub fn transaction_done(&mut self, txn: &Txn) {
        let finished = self.last_finish.unwrap_or(txn.start);
        let user = txn.ticket.and_then(|t| t.user);
        if let (Some(d), Some(user)) = (self.shared.dispatch.get(), user) {
            // The user thinks from its transaction's end, not from when
            // this connection got round to telling the queue.
            d.user_done(user, finished, self.pause.take());
        }
        if txn.measured && txn.deferred.is_none() {
            self.measured_txns += 1;
        }
        self.on_this_connection += 1;
        self.shared.slots[self.id]
            .state
            .store(IDLE, Ordering::Release);
    }

    /// The client is done: it says so, and when its work ended.
    pub fn leave(&self) {
        let shared = self.shared;
        let life = &shared.lifecycle;
        shared.slots[self.id].state.store(DONE, Ordering::Release);
        // Not stopped, not done with its count: the client left because the
        // run's time was up (its next transaction would start after the end,
        // or the queue had nothing more before it).
        let by_end =
            !life.stop.load(Ordering::Relaxed) && !self.counted_out && self.timeline.end.is_some();
        let mut done = life.done.lock().unwrap_or_else(|p| p.into_inner());
        done.count += 1;
        done.last = done.last.max(self.last_finish);
        done.by_end |= by_end;
        life.done_cv.notify_all();
    }

    /// Once done, the client keeps its connection until the timekeeper
    /// has taken the run's last reading of the server (bounded, should the
    /// timekeeper be gone).
    pub fn wait_closing(&self) {
        wait_closing(self.shared);
    }
}

/// Waits until the timekeeper has taken the run's last reading of the
/// server (at most a minute, should it be gone).
pub(super) fn wait_closing(shared: &Shared) {
    let life = &shared.lifecycle;
    let done = life.done.lock().unwrap_or_else(|p| p.into_inner());
    let _ = life
        .done_cv
        .wait_timeout_while(done, Duration::from_secs(60), |_| {
            !life.closing.load(Ordering::Acquire)
        });
}

/// Opens a new connection for client `id` and prepares the workload's
/// statements on it, trying again every 100 ms while the server is away.
/// Gives up (None) when the run stops. Each success counts as a reconnect.
/// The caller installs the connection's interrupter (a threaded client
/// its own, an event loop's client its loop's waker).
pub(super) fn reconnect_as(
    id: usize,
    shared: &Shared,
    buf: &mut TxnBuffer,
) -> Option<Box<dyn Connection>> {
    shared.slots[id]
        .state
        .store(RECONNECTING, Ordering::Release);
    let timeline = shared.timeline.get().expect("timeline set before release");
    loop {
        if shared.lifecycle.stop.load(Ordering::Relaxed)
            || timeline.end.is_some_and(|e| Instant::now() >= e)
        {
            return None;
        }
        let sql = &shared.connections.sql[(shared.first_client + id) / shared.per_instance];
        let attempt =
            (shared.connections.connect)().and_then(|mut c| c.prepare_all(sql).map(|_| c));
        match attempt {
            Ok(c) => {
                buf.clear();
                buf.counters.reconnects = 1;
                let measured = Instant::now() >= timeline.measure_start;
                shared.recorder.flush(id, buf, Timing::default(), measured);
                shared.slots[id].state.store(IDLE, Ordering::Release);
                return Some(c);
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// At the deadline: counts the transactions still in flight (and, of
/// them, the measured window's arrivals, which their clients never
/// record), tells their clients to give up, and interrupts their
/// statements.
pub(super) fn abandon(shared: &Shared) -> (u64, u64) {
    shared.lifecycle.stop.store(true, Ordering::Relaxed);
    shared.lifecycle.abandon.store(true, Ordering::Release);
    let (mut n, mut arrivals) = (0, 0);
    for (id, slot) in shared.slots.iter().enumerate() {
        let s = slot.state.load(Ordering::Acquire);
        if s == IN_TXN || s == IN_ARRIVAL {
            n += 1;
        }
        if s == IN_ARRIVAL {
            arrivals += 1;
        }
        if s == IN_TXN || s == IN_ARRIVAL || s == RECONNECTING {
            if let Some(i) = &*shared.connections.interrupters[id]
                .lock()
                .unwrap_or_else(|p| p.into_inner())
            {
                i.interrupt();
            }
        }
    }
    (n, arrivals)
}
