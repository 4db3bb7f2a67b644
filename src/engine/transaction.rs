//! One transaction on a client's connection: the script's operations
//! executed and each timed into the client's buffer, the whole retried
//! after retryable errors with fresh values, as an application would.

use std::sync::atomic::Ordering;

use crate::driver::{Connection, DbError, ErrorKind, ErrorSet};
use crate::util::clock;
use crate::workload::{ClientScript, Op};

use super::recorder::TxnBuffer;
use super::Shared;

/// How one transaction ended.
pub(super) enum TxnEnd {
    Done,
    Failed,
    /// The deadline passed while it ran: abandoned, not recorded.
    Abandoned,
    /// The connection was lost: the transaction failed; reconnect.
    Lost,
    /// An error that is neither retryable nor ignored: the run stops.
    Fatal(DbError),
}

/// Runs one transaction to its end, retrying after retryable errors (and
/// the workload's `retry_also` kinds) with fresh random values (the
/// script's `start`), as an application would.
pub(super) fn transaction(
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
        if let Some(end) = on_error(&err, shared, buf) {
            return end;
        }
        // Best effort: the statement that failed may have ended the
        // transaction already, and a dead connection cannot roll back.
        let _ = conn.rollback();
        if let Some(end) = after_rollback(err, &mut retries, shared, retry_also, buf) {
            return end;
        }
    }
}

/// A statement failed: counts the error, and ends the transaction when
/// the run abandoned it or the connection is gone; None: roll back, then
/// ask [`after_rollback`].
pub(super) fn on_error(err: &DbError, shared: &Shared, buf: &mut TxnBuffer) -> Option<TxnEnd> {
    if shared.lifecycle.abandon.load(Ordering::Acquire) {
        return Some(TxnEnd::Abandoned);
    }
    buf.counters.count_error(err.kind);
    (err.kind == ErrorKind::ConnectionLost).then_some(TxnEnd::Lost)
}

/// After the rollback of a failed attempt: None to try again with fresh
/// values, or how the transaction ends.
pub(super) fn after_rollback(
    err: DbError,
    retries: &mut u64,
    shared: &Shared,
    retry_also: ErrorSet,
    buf: &mut TxnBuffer,
) -> Option<TxnEnd> {
    if err.kind.is_retryable() || retry_also.contains(err.kind) {
        // Retrying continues past the end of the run: the transaction is
        // in flight, and the deadline (which abandons it) bounds the wait.
        if shared.rules.max_retries.is_some_and(|m| *retries >= m) {
            return Some(TxnEnd::Failed);
        }
        *retries += 1;
        buf.counters.retries += 1;
        return None;
    }
    if shared.rules.ignore.contains(err.kind) || err.kind.fails_transaction_only() {
        return Some(TxnEnd::Failed);
    }
    Some(TxnEnd::Fatal(err))
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
            Op::Begin { writes } => (conn.begin(writes), shared.kinds.begin, 1),
            Op::Commit => (conn.commit(), shared.kinds.commit, 1),
            Op::Rollback => (conn.rollback(), shared.kinds.commit, 1),
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
