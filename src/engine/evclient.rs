//! One client on an event loop (evloop.rs): the threaded client's loop
//! (client.rs, transaction.rs) as a state machine that never waits. Where
//! the threaded client would sleep (a think time, an arrival not yet due)
//! or block on its socket, this one says what it waits for ([`Then`]) and
//! returns; the loop resumes it when that comes. Every decision — when a
//! transaction starts and for whom, what is recorded, what an error leads
//! to — is the threaded client's own code ([`Client`], `on_error`,
//! `after_rollback`), so both paths measure the same things.
//!
//! With `--pipeline K` a client sends the statements of a transaction in
//! groups of up to K, as pgbench's `\startpipeline` … `\endpipeline`: it
//! asks the script for the next statement until the group is full, or it
//! holds a `Fetch` (whose rows the script may read to make the next one),
//! or the script has no more; the connection sends the group as one unit
//! (`Evented::start_ahead`), and the next group goes once every answer is
//! in. Each statement's time runs from when it was sent to when its answer
//! came, its wait behind the earlier ones included. At an error the
//! answers still to come are read (counted if they ran; their errors — the
//! rest of the group not run, an aborted transaction — not), then the
//! transaction rolls back as it would one statement at a time.

use std::collections::VecDeque;

use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::driver::evented::{Evented, Progress, Request, Wait};
use crate::driver::DbError;
use crate::util::clock;
use crate::workload::{ClientScript, Op};

use super::client::{Client, Closed, Open, Txn};
use super::pacing::Next;
use super::transaction::{after_rollback, on_error, TxnEnd};
use super::Shared;

/// What a client waits for after a step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Then {
    /// Its socket (it is registered for both; `Wait` says which matters).
    Socket(Wait),
    /// An instant: a think time's end, a ramped-up start, the queue's
    /// next arrival.
    Timer(Instant),
    /// Work from the queue, which has none due (every user is busy): the
    /// loop asks again when something changes.
    Queue,
    /// It has left the run.
    Gone,
}

/// Where a client stands.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// Between transactions: the next one is to be found.
    Idle,
    /// A closed loop's wait until the instant, decided once.
    Sleeping(Instant),
    /// Statements in flight.
    Statement,
    /// The rollback after a failed statement in flight.
    RollingBack,
    /// A failed attempt is to be tried again.
    Retrying,
    Gone,
}

/// How many transactions (or attempts) a client runs in one call before it
/// hands the loop an immediate timer: each one that completes without
/// waiting (its answers already in the socket, or an error before sending)
/// calls the next on the same stack, and an unbounded chain of them would
/// overflow it.
const CHAIN: u32 = 32;

/// A statement in flight: when it was sent, the kind its time is kept
/// under, and how many executions it counts for.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    at: Instant,
    kind: u16,
    executions: u64,
    fetch: bool,
}

pub(super) struct EvClient<'a> {
    c: Client<'a>,
    conn: Box<dyn Evented>,
    script: Box<dyn ClientScript>,
    phase: Phase,
    txn: Option<Txn>,
    retries: u64,
    /// Oldest first; at most `depth`.
    flights: VecDeque<InFlight>,
    /// Statements in flight at most (`--pipeline`; 1 without it).
    depth: usize,
    /// The script has no more statements for this attempt.
    script_done: bool,
    /// The first error of the attempt, while the answers still in flight
    /// are read; then the error the rollback in flight follows.
    failed: Option<DbError>,
    /// The connection was replaced: its socket is not watched yet.
    new_socket: bool,
    /// Transactions and attempts begun since the loop last called it
    /// ([`CHAIN`]).
    chain: u32,
}

impl<'a> EvClient<'a> {
    pub fn new(
        id: usize,
        conn: Box<dyn Evented>,
        script: Box<dyn ClientScript>,
        shared: &'a Shared,
    ) -> EvClient<'a> {
        let depth = if conn.pipelines() {
            shared.rules.pipeline
        } else {
            1
        };
        EvClient {
            c: Client::new(id, shared, script.as_ref()),
            conn,
            script,
            phase: Phase::Idle,
            txn: None,
            retries: 0,
            flights: VecDeque::with_capacity(depth),
            depth,
            script_done: false,
            failed: None,
            new_socket: false,
            chain: 0,
        }
    }

    /// The deadline passed. A statement in flight is cancelled on the
    /// server and the client leaves unrecorded (its slot still in the
    /// transaction, which the timekeeper counts as abandoned); a client
    /// between transactions leaves as at a stop.
    pub fn abandon(&mut self) -> Then {
        match self.phase {
            Phase::Gone => Then::Gone,
            Phase::Statement | Phase::RollingBack => {
                self.conn.cancel();
                self.phase = Phase::Gone;
                Then::Gone
            }
            // Between a failed attempt and its retry: nothing in flight.
            Phase::Retrying => {
                self.phase = Phase::Gone;
                Then::Gone
            }
            Phase::Idle | Phase::Sleeping(_) => self.leave(),
        }
    }

    /// Goes on as far as it can without waiting: after the socket it
    /// waits on became ready, its timer came, or the queue may have work.
    pub fn resume(&mut self) -> Then {
        self.chain = 0;
        match self.phase {
            Phase::Gone => Then::Gone,
            Phase::Statement => self.go(),
            Phase::RollingBack => self.advance_rollback(),
            Phase::Retrying => self.attempt(),
            Phase::Sleeping(_) if self.c.shared.lifecycle.stop.load(Ordering::Relaxed) => {
                self.leave()
            }
            Phase::Sleeping(at) if clock::now() < at => Then::Timer(at),
            Phase::Sleeping(_) => self.start_transaction(None, None),
            Phase::Idle => self.next_transaction(),
        }
    }

    /// Replaces the connection (lost, or at its `--reconnect` count) with
    /// a new one, as a threaded client does; false when the run stopped
    /// first. Connecting blocks this loop's thread meanwhile: a reconnect
    /// is rare (a server restarted), or asked for by `--reconnect`, whose
    /// cost is the point of measuring it.
    fn reconnect(&mut self) -> bool {
        let new = super::client::reconnect_as(self.c.id, self.c.shared, &mut self.c.buf)
            .and_then(|c| c.into_evented().ok());
        match new {
            Some(conn) => {
                self.conn = conn;
                self.new_socket = true;
                self.c.reconnected();
                true
            }
            None => false,
        }
    }

    /// The loop took an event of this client's socket (see
    /// [`Evented::woken`]).
    pub fn woken(&mut self) {
        self.conn.woken();
    }

    /// A new socket since the last call: the loop watches it instead.
    pub fn take_new_socket(&mut self) -> Option<std::os::fd::RawFd> {
        std::mem::take(&mut self.new_socket).then(|| self.conn.fd())
    }

    /// Leaves the run: says so to the timekeeper (the loop keeps the
    /// connection until the run's last reading of the server).
    fn leave(&mut self) -> Then {
        self.phase = Phase::Gone;
        self.c.leave();
        Then::Gone
    }

    /// Finds the next transaction: deferred work first, then the queue's
    /// ticket or the closed loop's turn.
    fn next_transaction(&mut self) -> Then {
        let shared = self.c.shared;
        loop {
            if shared.lifecycle.stop.load(Ordering::Relaxed) {
                return self.leave();
            }
            let deferred = self.c.deferred_from.take();
            if deferred.is_some() {
                return self.start_transaction(None, deferred);
            }
            match shared.dispatch.get() {
                Some(d) => match d.try_next(clock::now(), self.c.timeline.end) {
                    Next::Take(t) => match self.open(Some(t), None) {
                        Some(then) => return then,
                        None => continue,
                    },
                    Next::At(at) => return Then::Timer(at),
                    Next::Busy => return Then::Queue,
                    Next::Over => return self.leave(),
                },
                None => {
                    if let Some(at) = self.c.closed_loop_due() {
                        if clock::now() < at {
                            self.phase = Phase::Sleeping(at);
                            return Then::Timer(at);
                        }
                    }
                    return self.start_transaction(None, None);
                }
            }
        }
    }

    /// Starts a closed loop's (or deferred work's) transaction now.
    fn start_transaction(
        &mut self,
        ticket: Option<super::pacing::Ticket>,
        deferred: Option<Instant>,
    ) -> Then {
        self.phase = Phase::Idle;
        match self.open(ticket, deferred) {
            Some(then) => then,
            // A closed loop skips nothing: only a late arrival is skipped.
            None => self.next_transaction(),
        }
    }

    /// Opens the transaction and sends its first statement; None when it
    /// was skipped.
    fn open(
        &mut self,
        ticket: Option<super::pacing::Ticket>,
        deferred: Option<Instant>,
    ) -> Option<Then> {
        let txn = match self.c.open(ticket, deferred) {
            Open::Go(txn) => txn,
            Open::Skip => return None,
            Open::Leave => return Some(self.leave()),
        };
        if self.c.reconnect_due() {
            if !self.reconnect() {
                return Some(self.leave());
            }
            self.c.clear_buffer(txn.ticket);
        }
        self.c.begin(self.script.as_mut(), &txn);
        self.txn = Some(txn);
        self.retries = 0;
        Some(self.attempt())
    }

    /// A fresh attempt at the transaction.
    fn attempt(&mut self) -> Then {
        self.script.start();
        self.c.buf.kind = self.script.kind();
        self.script_done = false;
        self.phase = Phase::Statement;
        self.go()
    }

    /// Sends the script's statements while there is room in flight, reads
    /// the answers as they come, and ends the attempt once the script has
    /// no more and every answer is in (or an error's rollback begins).
    fn go(&mut self) -> Then {
        loop {
            if self.failed.is_none() {
                if let Err(e) = self.send_more() {
                    self.failed = Some(e); // nothing sent: as a failed answer
                }
            }
            if self.flights.is_empty() {
                return match self.failed.take() {
                    Some(e) => self.failed(e),
                    None => self.end(TxnEnd::Done),
                };
            }
            let fetch = if self.flights[0].fetch {
                self.script.fetch_buffer()
            } else {
                None
            };
            let done = match self.conn.advance(fetch) {
                Progress::Wait(w) => return Then::Socket(w),
                Progress::Done(r) => r,
            };
            let flight = self.flights.pop_front().expect("a statement in flight");
            let ns = (clock::now() - flight.at).as_nanos() as u64;
            match done {
                Ok(outcome) => {
                    let buf = &mut self.c.buf;
                    buf.counters
                        .count_queries(outcome.class(), flight.executions);
                    buf.statements.push((flight.kind, ns));
                }
                // Only the first error counts: those after it in a pipeline
                // are its consequence (an aborted transaction).
                Err(e) if self.failed.is_none() => self.failed = Some(e),
                Err(_) => {}
            }
        }
    }

    /// Once every answer is in, sends the script's next statements as one
    /// group: up to `depth`, ending after a `Fetch`.
    fn send_more(&mut self) -> Result<(), DbError> {
        let shared = self.c.shared;
        if !self.flights.is_empty() {
            return Ok(());
        }
        while !self.script_done
            && self.flights.len() < self.depth
            && !self.flights.back().is_some_and(|f| f.fetch)
        {
            let (req, kind, executions, fetch) = match self.script.next() {
                None => {
                    self.script_done = true;
                    break;
                }
                Some(op) => match op {
                    Op::Begin { writes } => {
                        (Request::Begin { writes }, shared.kinds.begin, 1, false)
                    }
                    Op::Commit => (Request::Commit, shared.kinds.commit, 1, false),
                    Op::Rollback => (Request::Rollback, shared.kinds.commit, 1, false),
                    Op::Exec(s, p) => (Request::Exec(s, p), self.c.stmt_kind[s], 1, false),
                    Op::Fetch(s, p, _) => (Request::Fetch(s, p), self.c.stmt_kind[s], 1, true),
                    Op::Batch(s, p, rows) => (
                        Request::Batch(s, p, rows),
                        self.c.stmt_kind[s],
                        rows as u64,
                        false,
                    ),
                },
            };
            let at = clock::now();
            if self.depth > 1 {
                self.conn.start_ahead(req)?;
            } else {
                self.conn.start(req)?;
            }
            self.flights.push_back(InFlight {
                at,
                kind,
                executions,
                fetch,
            });
        }
        Ok(())
    }

    /// Goes on with the rollback in flight.
    fn advance_rollback(&mut self) -> Then {
        match self.conn.advance(None) {
            Progress::Wait(w) => Then::Socket(w),
            // The rollback's own result does not matter (best effort, as
            // on a thread).
            Progress::Done(_) => self.rolled_back(),
        }
    }

    /// A statement failed and every answer in flight is in: the
    /// transaction ends, or is rolled back (then retried or ended by
    /// `after_rollback`).
    fn failed(&mut self, e: DbError) -> Then {
        if let Some(end) = on_error(&e, self.c.shared, &mut self.c.buf) {
            return self.end(end);
        }
        self.failed = Some(e);
        self.phase = Phase::RollingBack;
        match self.conn.start(Request::Rollback) {
            Ok(()) => self.advance_rollback(),
            // Nothing sent: decide at once.
            Err(_) => self.rolled_back(),
        }
    }

    /// The rollback after a failed attempt is over (or could not be
    /// sent): the transaction is tried again or ends.
    fn rolled_back(&mut self) -> Then {
        let err = self.failed.take().expect("a rollback follows an error");
        let c = &mut self.c;
        match after_rollback(err, &mut self.retries, c.shared, c.retry_also, &mut c.buf) {
            None if self.chained() => {
                self.phase = Phase::Retrying;
                Then::Timer(clock::now())
            }
            None => self.attempt(),
            Some(end) => self.end(end),
        }
    }

    /// Counts one more link of the chain; true when the loop should take
    /// over ([`CHAIN`]).
    fn chained(&mut self) -> bool {
        self.chain += 1;
        self.chain > CHAIN
    }

    /// The transaction ended: recorded, and the next one found.
    fn end(&mut self, end: TxnEnd) -> Then {
        let txn = self.txn.take().expect("a transaction in progress");
        self.phase = Phase::Idle;
        match self.c.close(self.script.as_mut(), end, &txn) {
            // Idle: the loop's immediate timer finds the next.
            Closed::Next if self.chained() => Then::Timer(clock::now()),
            Closed::Next => self.next_transaction(),
            Closed::Leave => self.leave(),
            Closed::Abandoned => {
                self.phase = Phase::Gone;
                Then::Gone
            }
            Closed::Reconnect => {
                if !self.reconnect() {
                    return self.leave();
                }
                self.c.transaction_done(&txn);
                self.next_transaction()
            }
        }
    }
}
