//! A PostgreSQL connection on an event loop: the session a blocking
//! [`PgConnection`](super::PgConnection) opened and prepared, its socket
//! made non-blocking. Requests are encoded by the same [`Session`] and
//! their responses read by the same [`Response`]; only the waiting is the
//! event loop's.
//!
//! Requests may be sent ahead of the answers (`run --pipeline`). One
//! started with [`Evented::start`] is a Sync unit of its own (its own
//! ReadyForQuery); those started with [`Evented::start_ahead`] in prepared
//! mode form a group that one Sync ends — at the next `start`, or when the
//! caller first waits for an answer — as pgbench's `\startpipeline` …
//! `\endpipeline`: the server answers the group's statements and flushes
//! once, not once a statement. Answers are handed out one by one, in
//! order. After an error in a group the server skips the rest of it, and
//! those statements answer "not run"; inside a transaction block the
//! statements of later groups fail with "current transaction is aborted"
//! up to the ROLLBACK. Either way none runs after a failed one.

use std::collections::VecDeque;
use std::os::fd::RawFd;

use super::response::{Fed, Response, TextRows};
use super::session::{self, Session};
use super::wire::{lost_error, Wire};
use super::CancelKey;
use crate::driver::evented::{none_started, Evented, Progress, Request, Wait};
use crate::driver::{batch_width, DbResult, ErrorKind, Fetch, Outcome, PsMode};

/// A request sent (or being sent), its answer to come.
enum Pending {
    /// Answered without the server (a batch of no rows; a ROLLBACK
    /// outside a transaction): done when its turn comes.
    Answered(Outcome),
    /// Its response, whether its rows are kept (a `Fetch`), and the group
    /// (Sync unit) it was sent in.
    Response(Response, bool, u64),
}

pub(super) struct PgEvented {
    wire: Wire,
    session: Session,
    cancel: Option<CancelKey>,
    /// Oldest first: what each request sent will be answered with.
    pending: VecDeque<Pending>,
    /// The kept rows of the `Fetch` being read.
    rows: TextRows,
    /// The group requests join: its number, and whether it has any not
    /// ended by a Sync yet.
    group: u64,
    open: bool,
    /// A group one of whose statements failed: the server skipped the
    /// rest of it.
    skipped: Option<u64>,
}

impl PgEvented {
    /// The blocking connection's parts, its socket already non-blocking.
    pub(super) fn new(wire: Wire, session: Session, cancel: Option<CancelKey>) -> PgEvented {
        PgEvented {
            wire,
            session,
            cancel,
            pending: VecDeque::new(),
            rows: TextRows::new(),
            group: 0,
            open: false,
            skipped: None,
        }
    }

    /// Ends the open group with a Sync, its last statement answering at the
    /// ReadyForQuery. An open group is the back of `pending` (only a group's
    /// statements join it, and `advance` ends it before reading).
    fn sync(&mut self) {
        if !std::mem::take(&mut self.open) {
            return;
        }
        self.group += 1;
        if let Some(Pending::Response(r, ..)) = self.pending.back_mut() {
            r.last_of_group();
        }
        session::sync(&mut self.wire.out);
    }

    /// Queues `response` (of `keep`ing rows) in the open group, or as a
    /// Sync unit of its own (`start` ended any open group first).
    fn queue(&mut self, response: Response, keep: bool, in_group: bool) {
        self.pending
            .push_back(Pending::Response(response, keep, self.group));
        if in_group {
            self.open = true;
        } else {
            self.group += 1;
        }
    }

    /// Sends and reads as far as the socket allows, until the oldest
    /// request's answer is complete.
    fn go(&mut self, mut response: Response, keep: bool, group: u64) -> Progress {
        // Whether this call sends requests: their answers are still to come.
        let mut sends = !self.wire.out.is_empty();
        loop {
            // Send what waits first: later requests, or a reply the answer
            // needs (a CopyFail) before the rest of it can come.
            let blocked = match self.wire.send_some() {
                Ok(all) => !all,
                Err(e) => return self.lost(e, &mut response),
            };
            let mut rows = keep.then_some(&mut self.rows);
            let need = match self.wire.feed(&mut response, &mut rows) {
                Ok(Fed::Done { .. }) => return Progress::Done(response.end()),
                Ok(Fed::More { need, .. }) => need,
                Err(e) => return self.lost(e, &mut response),
            };
            if !blocked && !self.wire.out.is_empty() {
                continue; // the reply the feeding wrote
            }
            if std::mem::take(&mut sends) && !blocked && self.wire.drained {
                // Sent whole onto a socket found empty with no event since:
                // the answer's arrival wakes the loop, so a read now (that
                // would almost always find nothing) is saved.
                let again = Pending::Response(response, keep, group);
                self.pending.push_front(again);
                return Progress::Wait(Wait::Readable);
            }
            match self.wire.read_some(need) {
                Ok(true) => {}
                Ok(false) => {
                    // Both ways tried to the end (the socket is watched
                    // edge-triggered): whichever comes first resumes it.
                    let again = Pending::Response(response, keep, group);
                    self.pending.push_front(again);
                    let w = if blocked {
                        Wait::Writable
                    } else {
                        Wait::Readable
                    };
                    return Progress::Wait(w);
                }
                Err(e) => return self.lost(e, &mut response),
            }
        }
    }

    /// The socket failed: the connection is lost, explained by a FATAL
    /// error the server sent before it went, if it did.
    fn lost(&mut self, e: std::io::Error, response: &mut Response) -> Progress {
        let lost = self.wire.fail(e);
        Progress::Done(Err(match response.error() {
            Some(mut err) => {
                err.kind = ErrorKind::ConnectionLost;
                err
            }
            None => lost,
        }))
    }
}

impl Evented for PgEvented {
    fn fd(&self) -> RawFd {
        self.wire.stream().raw_fd()
    }

    fn pipelines(&self) -> bool {
        true
    }

    fn woken(&mut self) {
        self.wire.drained = false;
    }

    fn start(&mut self, req: Request<'_>) -> DbResult<()> {
        if self.wire.is_broken() {
            return Err(lost_error("the connection was lost earlier"));
        }
        self.sync();
        let idle = self.pending.is_empty();
        let out = &mut self.wire.out;
        let mut keep = false;
        let response = match req {
            Request::Begin { .. } => session::simple("BEGIN", out)?,
            Request::Commit => session::simple("COMMIT", out)?,
            Request::Rollback if idle && self.wire.status == b'I' => {
                // No transaction open (e.g. the error ended an autocommit
                // statement): a ROLLBACK would only earn a warning.
                self.pending
                    .push_back(Pending::Answered(Outcome::default()));
                return Ok(());
            }
            Request::Rollback => session::simple("ROLLBACK", out)?,
            Request::Exec(id, params) => self.session.execute(id, params, 1, out)?,
            Request::Batch(id, params, rows) => {
                batch_width(params.len(), rows)?;
                if rows == 0 {
                    self.pending
                        .push_back(Pending::Answered(Outcome::default()));
                    return Ok(());
                }
                self.session.execute(id, params, rows, out)?
            }
            Request::Fetch(id, params) => {
                keep = true;
                self.session.execute(id, params, 1, out)?
            }
        };
        self.queue(response, keep, false);
        Ok(())
    }

    fn start_ahead(&mut self, req: Request<'_>) -> DbResult<()> {
        if self.session.mode != PsMode::Prepared || self.wire.is_broken() {
            // Text mode's simple Queries are each a Sync unit.
            return self.start(req);
        }
        let out = &mut self.wire.out;
        let mut keep = false;
        let response = match req {
            Request::Begin { .. } => session::simple_in_group("BEGIN", out)?,
            Request::Commit => session::simple_in_group("COMMIT", out)?,
            Request::Rollback if self.pending.is_empty() && self.wire.status == b'I' => {
                return self.start(req);
            }
            Request::Rollback => session::simple_in_group("ROLLBACK", out)?,
            Request::Exec(id, params) => self.session.execute_in_group(id, params, out)?,
            Request::Fetch(id, params) => {
                keep = true;
                self.session.execute_in_group(id, params, out)?
            }
            // A batch's rows are a Sync unit of their own, after the group.
            Request::Batch(..) => return self.start(req),
        };
        self.queue(response, keep, true);
        Ok(())
    }

    fn advance(&mut self, fetch: Option<&mut Fetch>) -> Progress {
        // Waiting for an answer: the group sent so far must be ended.
        self.sync();
        let (response, keep, group) = match self.pending.pop_front() {
            None => return none_started(),
            Some(Pending::Answered(o)) => return Progress::Done(Ok(o)),
            Some(Pending::Response(r, keep, group)) => (r, keep, group),
        };
        if self.wire.is_broken() {
            // An earlier answer found the socket failed: so do the rest.
            return Progress::Done(Err(lost_error("the connection was lost earlier")));
        }
        let (skipped, part) = (self.skipped == Some(group), response.in_group_before_last());
        if skipped && part {
            return Progress::Done(Err(not_run()));
        }
        let mut progress = self.go(response, keep, group);
        match &mut progress {
            Progress::Done(Err(e)) if part && e.kind != ErrorKind::ConnectionLost => {
                self.skipped = Some(group);
            }
            Progress::Done(r) if skipped => {
                // The group's ReadyForQuery, after the statements skipped.
                self.skipped = None;
                if r.as_ref().is_ok() {
                    *r = Err(not_run());
                }
            }
            _ => {}
        }
        if let (Progress::Done(Ok(_)), true, Some(f)) = (&progress, keep, fetch) {
            f.values.clear();
            for r in 0..self.rows.len() {
                f.push_text_cells(|c| self.rows.cell(r, c));
            }
        }
        if keep && matches!(progress, Progress::Done(_)) {
            self.rows.clear();
        }
        progress
    }

    fn cancel(&self) {
        if let Some(c) = &self.cancel {
            c.send();
        }
    }
}

/// The answer of a statement of a group that the server skipped, an
/// earlier one of the group having failed.
fn not_run() -> crate::driver::DbError {
    crate::driver::DbError::new(
        ErrorKind::Other,
        "",
        "not run: a statement before it in the same pipeline failed",
    )
}
