//! Connections an event loop drives: many on one thread, each a
//! non-blocking socket and its protocol's state, nothing in them that
//! waits. A network driver's connection opens, authenticates and prepares
//! as a blocking [`Connection`] does, then becomes an [`Evented`] one
//! ([`Connection::into_evented`]); the protocol code under both is the
//! same (PostgreSQL's `session.rs` and `response.rs`), only who waits for
//! the socket differs. Drivers without a socket (SQLite, the fake driver)
//! have none, and run on threads of their own.

use std::os::fd::RawFd;

use super::{DbError, DbResult, ErrorKind, Fetch, Outcome, StmtId, Value};

/// One operation of a transaction, as a connection on an event loop is
/// asked for it (the workload's `Op` without its borrowed result buffer).
#[derive(Debug, Clone, Copy)]
pub enum Request<'a> {
    /// Start a transaction; `writes` when it is going to change rows.
    Begin {
        writes: bool,
    },
    Commit,
    Rollback,
    /// Execute a prepared statement, fetching and discarding every row.
    Exec(StmtId, &'a [Value]),
    /// Execute once for each of `.2` rows of parameters (see
    /// [`Connection::execute_batch`](super::Connection::execute_batch)).
    Batch(StmtId, &'a [Value], usize),
    /// Execute, keeping the rows for the [`Fetch`] given when it ends.
    Fetch(StmtId, &'a [Value]),
}

/// What the socket must become before the connection can go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    Readable,
    Writable,
}

/// Where a started request stands.
#[derive(Debug)]
pub enum Progress {
    /// The response is complete: what the request did, or its error (a
    /// `ConnectionLost` one when the socket failed).
    Done(DbResult<Outcome>),
    /// Call [`Evented::advance`] again once the socket is so.
    Wait(Wait),
}

/// A connection an event loop drives.
pub trait Evented: Send {
    /// The socket the event loop waits on.
    fn fd(&self) -> RawFd;

    /// Whether requests may be started before the earlier ones are done
    /// (sent ahead, answered in order): `run --pipeline`.
    fn pipelines(&self) -> bool {
        false
    }

    /// Encodes `req`, to be sent by [`advance`](Self::advance). The last
    /// request must be done, unless the connection
    /// [`pipelines`](Self::pipelines). An error here sent nothing: the
    /// connection is as it was.
    fn start(&mut self, req: Request<'_>) -> DbResult<()>;

    /// As [`start`](Self::start), in a connection that
    /// [`pipelines`](Self::pipelines): `req` joins the requests started
    /// ahead before it, and the server answers them as one group (one Sync
    /// on PostgreSQL, sent at the next `start` or the first `advance`), so
    /// it flushes its answers once, not once a request. After an error in
    /// a group the rest of it does not run and answers with an error.
    fn start_ahead(&mut self, req: Request<'_>) -> DbResult<()> {
        self.start(req)
    }

    /// Goes on with the oldest request not done, without blocking: sends
    /// what the socket takes, reads what has arrived and decodes it. A
    /// `Fetch` request's kept values go to `fetch` when it is done; `Done`
    /// answers that request only, and the next call goes on with the next.
    fn advance(&mut self, fetch: Option<&mut Fetch>) -> Progress;

    /// The event loop took a readiness event of this connection's socket
    /// (edge-triggered: one per arrival): what arrived may not be read
    /// yet, so the next [`advance`](Self::advance) reads before it waits.
    /// Until then, a connection whose last read found the socket empty
    /// may wait for the answer to what it sends without reading first:
    /// the answer comes with an event of its own.
    fn woken(&mut self) {}

    /// Asks the server to stop what this session is running (from the
    /// event loop's thread, on a connection of its own; best effort), for
    /// a run whose deadline passed with the request still in flight.
    fn cancel(&self);
}

/// Where a driver's started request stands, for a driver that takes one
/// at a time (MySQL's); `R` is its protocol's response as it is read.
pub(super) enum Stage<R> {
    /// Nothing started, or the last request done.
    Idle,
    /// Answered without the server (a batch of no rows): done at the next
    /// `advance`.
    Answered(Outcome),
    /// Sending the request (what is left of it is in the driver's write
    /// buffer), then reading its response.
    Sending(R),
    Reading(R),
}

impl<R> Stage<R> {
    /// Refuses a new request while the last one is under way.
    pub fn ready(&self) -> DbResult<()> {
        match self {
            Stage::Idle => Ok(()),
            _ => Err(DbError::new(
                ErrorKind::Other,
                "",
                "a request was started before the last one was done",
            )),
        }
    }

    /// The stage to go on from, leaving `Idle` in its place.
    pub fn take(&mut self) -> Stage<R> {
        std::mem::replace(self, Stage::Idle)
    }
}

/// `advance` with no request started.
pub(super) fn none_started() -> Progress {
    Progress::Done(Err(DbError::new(
        ErrorKind::Other,
        "",
        "no request was started",
    )))
}
