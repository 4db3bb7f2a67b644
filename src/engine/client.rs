//! One client: a connection and a workload script, run in a loop until the
//! stop condition. This is the hot path, with `transaction.rs`: per
//! statement it reads the clock twice, calls the driver, and pushes one
//! sample into a reused buffer.
//!
//! Each transaction has an intended start: when the client is ready (a
//! closed loop, after its think time), or when the pacing's schedule or
//! user says (`pacing.rs`). Its latency runs from the intended start, its
//! service time from when the client began it.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::driver::{Connection, DbError};
use crate::workload::{ClientScript, Workload};

use super::pacing::{sleep_until, Ticket};
use super::recorder::{Timing, TxnBuffer};
use super::shard::Part;
use super::transaction::{transaction, TxnEnd};
use super::{Shared, Timeline, DONE, IDLE, IN_ARRIVAL, IN_TXN, RECONNECTING};
use crate::driver::ErrorSet;
use crate::rand::Rng;
use crate::util::clock;

/// One client's loop: waits for each transaction's start, runs it, records
/// it, until the stop condition; then says it is done.
pub(super) fn run(
    id: usize,
    mut conn: Box<dyn Connection>,
    mut script: Box<dyn ClientScript>,
    shared: &Shared,
) {
    let mut c = Client::new(id, shared);
    let timeline = c.timeline;
    loop {
        if shared.lifecycle.stop.load(Ordering::Relaxed) {
            break;
        }
        let deferred = c.deferred_from.take();
        // When this transaction should start, and for which user.
        let ticket = match shared.dispatch.get() {
            _ if deferred.is_some() => None,
            Some(d) => match d.next(timeline.end) {
                Some(t) => Some(t),
                None => break,
            },
            None => {
                if !c.closed_loop_wait() {
                    break;
                }
                None
            }
        };
        c.first = false;
        let start = clock::now();
        let intended = deferred.or(ticket.map(|t| t.intended)).unwrap_or(start);
        let measured = intended >= timeline.measure_start;
        c.clear_buffer(ticket);
        if c.past_end(start, ticket, measured) {
            break;
        }
        // Deferred work is part of the transaction that queued it: it takes
        // no round and no event of its own.
        if measured && deferred.is_none() && c.count_exhausted() {
            break;
        }
        if c.skip_late(ticket, start, intended, measured) {
            continue;
        }
        if c.reconnect_due() {
            drop(conn);
            match reconnect(id, shared, &mut c.buf) {
                Some(new) => conn = new,
                None => break,
            }
            c.on_this_connection = 0;
            c.clear_buffer(ticket);
        }
        let in_txn = if ticket.is_some() && measured {
            IN_ARRIVAL
        } else {
            IN_TXN
        };
        shared.slots[id].state.store(in_txn, Ordering::Release);
        if deferred.is_none() {
            // An open loop's arrival is run by the connection's own user,
            // as in a closed loop: the workload keeps one user's state per
            // connection, not one per arrival.
            let own = (c.g % shared.per_instance) as u32;
            script.user(ticket.and_then(|t| t.user).unwrap_or(own));
        }
        let end = transaction(
            conn.as_mut(),
            script.as_mut(),
            shared,
            c.stmt_kind,
            c.retry_also,
            &mut c.buf,
        );
        let finished = clock::now();
        c.last_finish = Some(finished);
        let mut timing = Timing::default();
        if ticket.is_some() {
            timing.lag = Some((start - intended).as_nanos() as u64);
        }
        let completed = matches!(end, TxnEnd::Done);
        c.script_ended(script.as_mut(), completed, finished, deferred.is_some());
        match end {
            TxnEnd::Abandoned => return, // state stays in the transaction: counted by the timekeeper
            TxnEnd::Done => c.record_done(timing, start, intended, finished, measured),
            TxnEnd::Failed => c.record_failed(timing, measured),
            TxnEnd::Lost => {
                c.record_failed(timing, measured);
                drop(conn);
                match reconnect(id, shared, &mut c.buf) {
                    Some(new) => conn = new,
                    None => break,
                }
                c.on_this_connection = 0;
            }
            TxnEnd::Fatal(e) => {
                c.record_fatal(&e, timing, measured);
                break;
            }
        }
        c.transaction_done(ticket, finished, measured && deferred.is_none());
    }
    c.leave();
    // The connection closes (dropped here), and its server session ends,
    // only once `leave` returns: after the run's last reading of the server.
}

/// One client as its loop sees it: who it is, what it reads of the shared
/// state, and what one transaction leaves for the next.
struct Client<'a> {
    /// This process's number of the client (its slot, its recorder shard).
    id: usize,
    /// The client's number in the whole run, which decides its instance,
    /// its streams and its user, so a shard's client behaves as it would in
    /// one process.
    g: usize,
    shared: &'a Shared,
    timeline: &'a Timeline,
    /// Its instance's statement kinds, and the error kinds its workload
    /// retries besides the usual ones.
    stmt_kind: &'a [u16],
    retry_also: ErrorSet,
    /// A closed loop's think times come from a stream of the client's own.
    think_rng: Rng,
    buf: TxnBuffer,
    measured_txns: u64,
    on_this_connection: u64,
    first: bool,
    /// The workload's pause after the last transaction.
    pause: Option<Duration>,
    /// Work the last transaction queued (TPC-C's deferred Delivery): it
    /// runs next on this connection, timed from its queueing (the clock
    /// reading); a closed loop's user counts its pause from then too (the
    /// real clock, which its sleep reads).
    deferred_from: Option<Instant>,
    pause_from: Option<Instant>,
    /// When this client's last transaction ended (the run's end is the
    /// latest of these, or the time limit).
    last_finish: Option<Instant>,
    /// It stopped because its rounds or the run's events were done.
    counted_out: bool,
}

impl<'a> Client<'a> {
    fn new(id: usize, shared: &'a Shared) -> Client<'a> {
        let g = shared.first_client + id;
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
        }
    }

    /// A closed loop's wait before its next transaction: a ramped-up
    /// user's start, then the workload's pause or the run's think time.
    /// False when the run stops meanwhile.
    fn closed_loop_wait(&mut self) -> bool {
        let shared = self.shared;
        if let (Some(rate), true) = (shared.pacing.ramp_up(), self.first) {
            // Users start one after another, `rate` per second.
            let at = self.timeline.t0
                + Duration::from_secs_f64((self.g % shared.per_instance) as f64 / rate);
            if !sleep_until(at, &shared.lifecycle.stop) {
                return false;
            }
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
        // The clock is read only for a pause: a closed loop without
        // think time reads none here.
        // A user thinks from its transaction's end.
        let from = self.pause_from.take().or(self.last_finish);
        if let Some(pause) = pause {
            let from = from.unwrap_or_else(clock::now);
            if !sleep_until(from + pause, &shared.lifecycle.stop) {
                return false;
            }
        }
        true
    }

    /// Empties the buffer for the next transaction; an arrival counts as
    /// one in it.
    #[inline]
    fn clear_buffer(&mut self, ticket: Option<Ticket>) {
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
        if shared.rules.rounds.is_some_and(|r| self.measured_txns >= r) {
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

    /// The connection has served its `--reconnect` count of transactions.
    #[inline]
    fn reconnect_due(&self) -> bool {
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
    fn record_fatal(&mut self, e: &DbError, timing: Timing, measured: bool) {
        self.flush(timing, measured);
        let life = &self.shared.lifecycle;
        let mut f = life.fatal.lock().unwrap_or_else(|p| p.into_inner());
        if f.is_none() {
            *f = Some(format!("client {}: {e}", self.g));
        }
        life.stop.store(true, Ordering::Relaxed);
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
    fn transaction_done(&mut self, ticket: Option<Ticket>, finished: Instant, a_round: bool) {
        if let (Some(d), Some(user)) = (self.shared.dispatch.get(), ticket.and_then(|t| t.user)) {
            // The user thinks from its transaction's end, not from when
            // this connection got round to telling the queue.
            d.user_done(user, finished, self.pause.take());
        }
        if a_round {
            self.measured_txns += 1;
        }
        self.on_this_connection += 1;
        self.shared.slots[self.id]
            .state
            .store(IDLE, Ordering::Release);
    }

    /// The client is done: it says so, and when its work ended, then keeps
    /// its connection until the timekeeper has taken the run's last
    /// reading of the server (bounded, should the timekeeper be gone).
    fn leave(&self) {
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
        let _ = life
            .done_cv
            .wait_timeout_while(done, Duration::from_secs(60), |_| {
                !life.closing.load(Ordering::Acquire)
            });
    }
}

/// Opens a new connection for client `id` and prepares the workload's
/// statements on it, trying again every 100 ms while the server is away.
/// Gives up (None) when the run stops. Each success counts as a reconnect.
fn reconnect(id: usize, shared: &Shared, buf: &mut TxnBuffer) -> Option<Box<dyn Connection>> {
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
                *shared.connections.interrupters[id]
                    .lock()
                    .unwrap_or_else(|p| p.into_inner()) = c.interrupter();
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

/// Starts one thread per client, each waiting at `gate` for the release.
pub(super) fn spawn(
    instances: &[&dyn Workload],
    conns: Vec<Box<dyn Connection>>,
    part: &Part,
    seed: u64,
    shared: &Arc<Shared>,
    gate: &Arc<Barrier>,
) -> anyhow::Result<Vec<JoinHandle<()>>> {
    let per_instance = part.per_instance;
    let mut handles = Vec::with_capacity(conns.len());
    for (id, conn) in conns.into_iter().enumerate() {
        let g = part.clients.start + id;
        let script = instances[g / per_instance].client(
            g % per_instance,
            per_instance,
            Rng::for_client(seed, g as u64),
        );
        let shared = shared.clone();
        let gate = gate.clone();
        let h = std::thread::Builder::new()
            .name(format!("client-{g}"))
            .stack_size(512 * 1024)
            .spawn(move || {
                gate.wait();
                run(id, conn, script, &shared);
            })
            .context("could not start a client thread")?;
        handles.push(h);
    }
    Ok(handles)
}
