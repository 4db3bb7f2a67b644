//! One client: a connection and a workload script, run in a loop until the
//! stop condition. This is the hot path: per statement it reads the clock
//! twice, calls the driver, and pushes one sample into a reused buffer.
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

use crate::driver::{Connection, DbError, ErrorKind};
use crate::workload::{ClientScript, Op, Workload};

use super::pacing::sleep_until;
use super::recorder::{Timing, TxnBuffer};
use super::shard::Part;
use super::{Shared, DONE, IDLE, IN_ARRIVAL, IN_TXN, RECONNECTING};
use crate::driver::ErrorSet;
use crate::rand::Rng;
use crate::util::clock;

/// How one transaction ended.
enum TxnEnd {
    Done,
    Failed,
    /// The deadline passed while it ran: abandoned, not recorded.
    Abandoned,
    /// The connection was lost: the transaction failed; reconnect.
    Lost,
    /// An error that is neither retryable nor ignored: the run stops.
    Fatal(DbError),
}

pub(super) fn run(
    id: usize,
    mut conn: Box<dyn Connection>,
    mut script: Box<dyn ClientScript>,
    shared: &Shared,
) {
    let timeline = shared.timeline.get().expect("timeline set before release");
    // `id` numbers this process's clients (slots, shards of the recorder);
    // `g` is the client's number in the whole run, which decides its
    // instance, its streams and its user, so a shard's client behaves as
    // it would in one process.
    let g = shared.first_client + id;
    let stmt_kind = shared.stmt_kind[g / shared.per_instance].as_slice();
    let retry_also = shared.retry_also[g / shared.per_instance];
    let pacing = &shared.pacing;
    // A closed loop's think times come from a stream of the client's own.
    let mut think_rng = Rng::for_client(shared.seed ^ 0x7468_696e_6b74_696d, g as u64);
    let mut buf = TxnBuffer::default();
    let mut measured_txns = 0u64;
    let mut on_this_connection = 0u64;
    let mut first = true;
    let mut pause = None;
    // Work the last transaction queued (TPC-C's deferred Delivery): it
    // runs next on this connection, timed from its queueing (the clock
    // reading); a closed loop's user counts its pause from then too (the
    // real clock, which its sleep reads).
    let mut deferred_from: Option<Instant> = None;
    let mut pause_from: Option<Instant> = None;
    // When this client's last transaction ended (the run's end is the
    // latest of these, or the time limit).
    let mut last_finish: Option<Instant> = None;
    // It stopped because its rounds or the run's events were done.
    let mut counted_out = false;
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            break;
        }
        let deferred = deferred_from.take();
        // When this transaction should start, and for which user.
        let ticket = match shared.dispatch.get() {
            _ if deferred.is_some() => None,
            Some(d) => match d.next(timeline.end) {
                Some(t) => Some(t),
                None => break,
            },
            None => {
                if let (Some(rate), true) = (pacing.ramp_up, first) {
                    // Users start one after another, `rate` per second.
                    let at = timeline.t0
                        + Duration::from_secs_f64((g % shared.per_instance) as f64 / rate);
                    if !sleep_until(at, &shared.stop) {
                        break;
                    }
                }
                // The workload's pause for this user, or the run's think time.
                let pause = match (pause.take(), first) {
                    (_, true) => None,
                    (Some(p), false) => Some(p),
                    (None, false) => pacing.think_time.map(|t| t.draw(&mut think_rng)),
                };
                // The clock is read only for a pause: a closed loop without
                // think time reads none here.
                // A user thinks from its transaction's end.
                let from = pause_from.take().or(last_finish);
                if let Some(pause) = pause {
                    let from = from.unwrap_or_else(clock::now);
                    if !sleep_until(from + pause, &shared.stop) {
                        break;
                    }
                }
                None
            }
        };
        first = false;
        let start = clock::now();
        let intended = deferred.or(ticket.map(|t| t.intended)).unwrap_or(start);
        let measured = intended >= timeline.measure_start;
        buf.clear();
        if ticket.is_some() {
            buf.counters.arrivals = 1;
        }
        if timeline.end.is_some_and(|end| start >= end) {
            if ticket.is_some() {
                buf.counters.unstarted = 1;
                shared.recorder.flush(id, &buf, Timing::default(), measured);
            }
            break;
        }
        // Deferred work is part of the transaction that queued it: it takes
        // no round and no event of its own.
        if measured && deferred.is_none() {
            if shared.rounds.is_some_and(|r| measured_txns >= r) {
                counted_out = true;
                break;
            }
            if let Some(max) = shared.events {
                if shared.tickets.fetch_add(1, Ordering::Relaxed) >= max {
                    counted_out = true;
                    break;
                }
            }
        }
        if let (Some(limit), Some(_)) = (shared.skip_after, ticket) {
            if start - intended > limit {
                buf.counters.skipped = 1;
                shared.recorder.flush(id, &buf, Timing::default(), measured);
                continue;
            }
        }
        if shared
            .reconnect_every
            .is_some_and(|n| on_this_connection >= n)
        {
            drop(conn);
            match reconnect(id, shared, &mut buf) {
                Some(c) => conn = c,
                None => break,
            }
            on_this_connection = 0;
            buf.clear();
            if ticket.is_some() {
                buf.counters.arrivals = 1;
            }
        }
        let in_txn = if ticket.is_some() && measured {
            IN_ARRIVAL
        } else {
            IN_TXN
        };
        shared.slots[id].state.store(in_txn, Ordering::Release);
        if deferred.is_none() {
            script.user(ticket.map_or((g % shared.per_instance) as u32, |t| t.user));
        }
        let end = transaction(
            conn.as_mut(),
            script.as_mut(),
            shared,
            stmt_kind,
            retry_also,
            &mut buf,
        );
        let finished = clock::now();
        last_finish = Some(finished);
        let mut timing = Timing::default();
        if ticket.is_some() {
            timing.lag = Some((start - intended).as_nanos() as u64);
        }
        script.end(matches!(end, TxnEnd::Done));
        if deferred.is_none() {
            pause = script.pause();
            if matches!(end, TxnEnd::Done) && script.deferred() {
                deferred_from = Some(finished);
                pause_from = Some(clock::now());
            }
        }
        match end {
            TxnEnd::Abandoned => return, // state stays in the transaction: counted by the coordinator
            TxnEnd::Done => {
                let service = (finished - start).as_nanos() as u64;
                let latency = (finished - intended).as_nanos() as u64;
                timing.latency = Some(latency);
                timing.service = Some(service);
                buf.counters.transactions = 1;
                if pacing
                    .latency_limit
                    .is_some_and(|l| latency > l.as_nanos() as u64)
                {
                    buf.counters.late = 1;
                }
                shared.recorder.flush(id, &buf, timing, measured);
                if measured {
                    let slot = &shared.slots[id];
                    slot.txns.fetch_add(1, Ordering::Relaxed);
                    slot.busy_ns.fetch_add(service, Ordering::Relaxed);
                }
            }
            TxnEnd::Failed => {
                buf.counters.failed = 1;
                shared.recorder.flush(id, &buf, timing, measured);
            }
            TxnEnd::Lost => {
                buf.counters.failed = 1;
                shared.recorder.flush(id, &buf, timing, measured);
                drop(conn);
                match reconnect(id, shared, &mut buf) {
                    Some(c) => conn = c,
                    None => break,
                }
                on_this_connection = 0;
            }
            TxnEnd::Fatal(e) => {
                shared.recorder.flush(id, &buf, timing, measured);
                let mut f = shared.fatal.lock().unwrap_or_else(|p| p.into_inner());
                if f.is_none() {
                    *f = Some(format!("client {g}: {e}"));
                }
                shared.stop.store(true, Ordering::Relaxed);
                break;
            }
        }
        if let (Some(d), Some(t)) = (shared.dispatch.get(), ticket) {
            // The user thinks from its transaction's end, not from when
            // this connection got round to telling the queue.
            d.user_done(t.user, finished, pause.take());
        }
        if measured && deferred.is_none() {
            measured_txns += 1;
        }
        on_this_connection += 1;
        shared.slots[id].state.store(IDLE, Ordering::Release);
    }
    shared.slots[id].state.store(DONE, Ordering::Release);
    // Not stopped, not done with its count: the client left because the
    // run's time was up (its next transaction would start after the end,
    // or the queue had nothing more before it).
    let by_end = !shared.stop.load(Ordering::Relaxed) && !counted_out && timeline.end.is_some();
    let mut done = shared.done.lock().unwrap_or_else(|p| p.into_inner());
    done.count += 1;
    done.last = done.last.max(last_finish);
    done.by_end |= by_end;
    shared.done_cv.notify_all();
    // The connection (dropped on return) closes, and its server session
    // ends, only after the run's last reading of the server; bounded,
    // should the coordinator be gone.
    let _ = shared
        .done_cv
        .wait_timeout_while(done, Duration::from_secs(60), |_| {
            !shared.closing.load(Ordering::Acquire)
        });
}

/// Runs one transaction to its end, retrying after retryable errors (and
/// the workload's `retry_also` kinds) with fresh random values (the script's `start`), as an application would.
fn transaction(
    conn: &mut dyn Connection,
    script: &mut dyn ClientScript,
    shared: &Shared,
    stmt_kind: &[u16],
    retry_also: ErrorSet,
    buf: &mut TxnBuffer,
) -> TxnEnd {
    let mut retries = 0u64;
    loop {
        script.start();
        buf.kind = script.kind();
        let err = match attempt(conn, script, shared, stmt_kind, buf) {
            Ok(()) => return TxnEnd::Done,
            Err(e) => e,
        };
        if shared.abandon.load(Ordering::Acquire) {
            return TxnEnd::Abandoned;
        }
        buf.counters.count_error(err.kind);
        if err.kind == ErrorKind::ConnectionLost {
            return TxnEnd::Lost;
        }
        // Best effort: the statement that failed may have ended the
        // transaction already, and a dead connection cannot roll back.
        let _ = conn.rollback();
        if err.kind.is_retryable() || retry_also.contains(err.kind) {
            // Retrying continues past the end of the run: the transaction is
            // in flight, and the deadline (which abandons it) bounds the wait.
            if shared.max_retries.is_some_and(|m| retries >= m) {
                return TxnEnd::Failed;
            }
            retries += 1;
            buf.counters.retries += 1;
            continue;
        }
        if shared.ignore.contains(err.kind) {
            return TxnEnd::Failed;
        }
        return TxnEnd::Fatal(err);
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
        if shared.stop.load(Ordering::Relaxed) || timeline.end.is_some_and(|e| Instant::now() >= e)
        {
            return None;
        }
        let sql = &shared.sql[(shared.first_client + id) / shared.per_instance];
        let attempt = (shared.connect)().and_then(|mut c| c.prepare_all(sql).map(|_| c));
        match attempt {
            Ok(c) => {
                *shared.interrupters[id]
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

/// Executes the script's operations once, timing each.
fn attempt(
    conn: &mut dyn Connection,
    script: &mut dyn ClientScript,
    shared: &Shared,
    stmt_kind: &[u16],
    buf: &mut TxnBuffer,
) -> Result<(), DbError> {
    while let Some(op) = script.next() {
        let t = clock::now();
        // `executions`: a batch's rows are each one execution of its
        // statement, as sysbench counts queries; the batch is one entry of
        // its statement's times.
        let (result, kind, executions) = match op {
            Op::Begin { writes } => (conn.begin(writes), shared.begin_kind, 1),
            Op::Commit => (conn.commit(), shared.commit_kind, 1),
            Op::Rollback => (conn.rollback(), shared.commit_kind, 1),
            Op::Exec(stmt, params) => (conn.execute(stmt, params), stmt_kind[stmt], 1),
            Op::Fetch(stmt, params, fetch) => {
                (conn.execute_fetch(stmt, params, fetch), stmt_kind[stmt], 1)
            }
            Op::Batch(stmt, params, rows) => (
                conn.execute_batch(stmt, params, rows),
                stmt_kind[stmt],
                rows as u64,
            ),
        };
        let ns = (clock::now() - t).as_nanos() as u64;
        let outcome = result?;
        buf.counters.count_queries(outcome.class(), executions);
        buf.statements.push((kind, ns));
    }
    Ok(())
}

/// At the deadline: counts the transactions still in flight (and, of
/// them, the measured window's arrivals, which their clients never
/// record), tells their clients to give up, and interrupts their
/// statements.
pub(super) fn abandon(shared: &Shared) -> (u64, u64) {
    shared.stop.store(true, Ordering::Relaxed);
    shared.abandon.store(true, Ordering::Release);
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
            if let Some(i) = &*shared.interrupters[id]
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
