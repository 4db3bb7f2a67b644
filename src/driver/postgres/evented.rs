//! A PostgreSQL connection on an event loop: the session a blocking
//! [`PgConnection`](super::PgConnection) opened and prepared, its socket
//! made non-blocking. Requests are encoded by the same [`Session`] and
//! their responses read by the same [`Response`]; only the waiting is the
//! event loop's.
//!
//! Requests may be sent ahead of the answers (`run --pipeline`): each is
//! its own Sync unit (one ReadyForQuery each), so the answers come back
//! one by one, in order, and are handed out the same way. Inside a
//! transaction block an error leaves the later statements failing with
//! "current transaction is aborted" up to the ROLLBACK: none of them runs
//! after a failed one, as with pgbench's pipelines.

use std::collections::VecDeque;
use std::os::fd::RawFd;

use super::response::{Fed, Response, TextRows};
use super::session::{self, Session};
use super::wire::{lost_error, Wire};
use super::CancelKey;
use crate::driver::evented::{none_started, Evented, Progress, Request, Wait};
use crate::driver::{batch_width, DbResult, ErrorKind, Fetch, Outcome};

/// A request sent (or being sent), its answer to come.
enum Pending {
    /// Answered without the server (a batch of no rows; a ROLLBACK
    /// outside a transaction): done when its turn comes.
    Answered(Outcome),
    /// Its response, and whether its rows are kept (a `Fetch`).
    Response(Response, bool),
}

pub(super) struct PgEvented {
    wire: Wire,
    session: Session,
    cancel: Option<CancelKey>,
    /// Oldest first: what each request sent will be answered with.
    pending: VecDeque<Pending>,
    /// The kept rows of the `Fetch` being read.
    rows: TextRows,
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
        }
    }

    /// Sends and reads as far as the socket allows, until the oldest
    /// request's answer is complete.
    fn go(&mut self, mut response: Response, keep: bool) -> Progress {
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
            match self.wire.read_some(need) {
                Ok(true) => {}
                Ok(false) => {
                    // Both ways tried to the end (the socket is watched
                    // edge-triggered): whichever comes first resumes it.
                    self.pending.push_front(Pending::Response(response, keep));
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

    fn start(&mut self, req: Request<'_>) -> DbResult<()> {
        if self.wire.is_broken() {
            return Err(lost_error("the connection was lost earlier"));
        }
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
        self.pending.push_back(Pending::Response(response, keep));
        Ok(())
    }

    fn advance(&mut self, fetch: Option<&mut Fetch>) -> Progress {
        let (response, keep) = match self.pending.pop_front() {
            None => return none_started(),
            Some(Pending::Answered(o)) => return Progress::Done(Ok(o)),
            Some(Pending::Response(r, keep)) => (r, keep),
        };
        if self.wire.is_broken() {
            // An earlier answer found the socket failed: so do the rest.
            return Progress::Done(Err(lost_error("the connection was lost earlier")));
        }
        let progress = self.go(response, keep);
        if let (Progress::Done(Ok(_)), true, Some(f)) = (&progress, keep, fetch) {
            f.values.clear();
            for r in &self.rows {
                f.push_text_row(r);
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
