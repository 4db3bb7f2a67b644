//! One client: a connection and a workload script, run in a loop until the
//! stop condition. This is the hot path: per statement it reads the clock
//! twice, calls the driver, and pushes one sample into a reused buffer.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::driver::{Connection, DbError, ErrorKind};
use crate::workload::{ClientScript, Op};

use super::recorder::TxnBuffer;
use super::{Shared, DONE, IDLE, IN_TXN, RECONNECTING};
use crate::driver::ErrorSet;

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
    let stmt_kind = shared.stmt_kind[id / shared.per_instance].as_slice();
    let retry_also = shared.retry_also[id / shared.per_instance];
    let mut buf = TxnBuffer::default();
    let mut measured_txns = 0u64;
    let mut on_this_connection = 0u64;
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            break;
        }
        let start = Instant::now();
        if timeline.end.is_some_and(|end| start >= end) {
            break;
        }
        let measured = start >= timeline.measure_start;
        if measured {
            if shared.rounds.is_some_and(|r| measured_txns >= r) {
                break;
            }
            if let Some(max) = shared.events {
                if shared.tickets.fetch_add(1, Ordering::Relaxed) >= max {
                    break;
                }
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
        }
        shared.slots[id].state.store(IN_TXN, Ordering::Release);
        buf.clear();
        let end = transaction(
            conn.as_mut(),
            script.as_mut(),
            shared,
            stmt_kind,
            retry_also,
            &mut buf,
        );
        match end {
            TxnEnd::Abandoned => return, // state stays IN_TXN: counted by the coordinator
            TxnEnd::Done => {
                let ns = start.elapsed().as_nanos() as u64;
                buf.counters.transactions = 1;
                shared.recorder.flush(id, &buf, Some(ns), measured);
                if measured {
                    let slot = &shared.slots[id];
                    slot.txns.fetch_add(1, Ordering::Relaxed);
                    slot.busy_ns.fetch_add(ns, Ordering::Relaxed);
                }
            }
            TxnEnd::Failed => {
                buf.counters.failed = 1;
                shared.recorder.flush(id, &buf, None, measured);
            }
            TxnEnd::Lost => {
                buf.counters.failed = 1;
                shared.recorder.flush(id, &buf, None, measured);
                drop(conn);
                match reconnect(id, shared, &mut buf) {
                    Some(c) => conn = c,
                    None => break,
                }
                on_this_connection = 0;
            }
            TxnEnd::Fatal(e) => {
                shared.recorder.flush(id, &buf, None, measured);
                let mut f = shared.fatal.lock().unwrap_or_else(|p| p.into_inner());
                if f.is_none() {
                    *f = Some(format!("client {id}: {e}"));
                }
                shared.stop.store(true, Ordering::Relaxed);
                break;
            }
        }
        if measured {
            measured_txns += 1;
        }
        on_this_connection += 1;
        shared.slots[id].state.store(IDLE, Ordering::Release);
    }
    shared.slots[id].state.store(DONE, Ordering::Release);
    let mut done = shared.done.lock().unwrap_or_else(|p| p.into_inner());
    *done += 1;
    shared.done_cv.notify_all();
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
        let sql = &shared.sql[id / shared.per_instance];
        let attempt = (shared.connect)().and_then(|mut c| c.prepare_all(sql).map(|_| c));
        match attempt {
            Ok(c) => {
                *shared.interrupters[id]
                    .lock()
                    .unwrap_or_else(|p| p.into_inner()) = c.interrupter();
                buf.clear();
                buf.counters.reconnects = 1;
                let measured = Instant::now() >= timeline.measure_start;
                shared.recorder.flush(id, buf, None, measured);
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
        let t = Instant::now();
        let (result, kind) = match op {
            Op::Begin => (conn.begin(), shared.begin_kind),
            Op::Commit => (conn.commit(), shared.commit_kind),
            Op::Exec(stmt, params) => (conn.execute(stmt, params), stmt_kind[stmt]),
        };
        let ns = t.elapsed().as_nanos() as u64;
        let outcome = result?;
        buf.counters.count_query(outcome.class());
        buf.statements.push((kind, ns));
    }
    Ok(())
}
