//! A PostgreSQL connection on an event loop: the session a blocking
//! [`PgConnection`](super::PgConnection) opened and prepared, its socket
//! made non-blocking. Requests are encoded by the same [`Session`] and
//! their responses read by the same [`Response`]; only the waiting is the
//! event loop's.

use std::os::fd::RawFd;

use super::response::{Fed, Response, TextRows};
use super::session::{self, Session};
use super::wire::{lost_error, Wire};
use super::CancelKey;
use crate::driver::evented::{none_started, Evented, Progress, Request, Stage, Wait};
use crate::driver::{batch_width, DbResult, ErrorKind, Fetch, Outcome};

type State = Stage<Response>;

pub(super) struct PgEvented {
    wire: Wire,
    session: Session,
    cancel: Option<CancelKey>,
    state: State,
    /// A `Fetch` request keeps its rows here until it ends.
    keep: bool,
    rows: TextRows,
}

impl PgEvented {
    /// The blocking connection's parts, its socket already non-blocking.
    pub(super) fn new(wire: Wire, session: Session, cancel: Option<CancelKey>) -> PgEvented {
        PgEvented {
            wire,
            session,
            cancel,
            state: State::Idle,
            keep: false,
            rows: TextRows::new(),
        }
    }

    /// Sends and reads as far as the socket allows.
    fn go(&mut self, mut response: Response, sending: bool) -> Progress {
        if sending {
            match self.wire.send_some() {
                Ok(true) => {}
                Ok(false) => {
                    self.state = State::Sending(response);
                    return Progress::Wait(Wait::Writable);
                }
                Err(e) => return self.lost(e, &mut response),
            }
        }
        loop {
            let mut rows = self.keep.then_some(&mut self.rows);
            match self.wire.feed(&mut response, &mut rows) {
                Ok(Fed::Done { .. }) => return Progress::Done(response.end()),
                Ok(Fed::More { need, .. }) => {
                    if !self.wire.out.is_empty() {
                        // A CopyFail to send before the rest can come.
                        return self.go(response, true);
                    }
                    match self.wire.read_some(need) {
                        Ok(true) => {}
                        Ok(false) => {
                            self.state = State::Reading(response);
                            return Progress::Wait(Wait::Readable);
                        }
                        Err(e) => return self.lost(e, &mut response),
                    }
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

    fn start(&mut self, req: Request<'_>) -> DbResult<()> {
        self.state.ready()?;
        if self.wire.is_broken() {
            return Err(lost_error("the connection was lost earlier"));
        }
        self.wire.out.clear();
        self.keep = false;
        let out = &mut self.wire.out;
        let response = match req {
            Request::Begin { .. } => session::simple("BEGIN", out)?,
            Request::Commit => session::simple("COMMIT", out)?,
            Request::Rollback if self.wire.status == b'I' => {
                // No transaction open (e.g. the error ended an autocommit
                // statement): a ROLLBACK would only earn a warning.
                self.state = State::Answered(Outcome::default());
                return Ok(());
            }
            Request::Rollback => session::simple("ROLLBACK", out)?,
            Request::Exec(id, params) => self.session.execute(id, params, 1, out)?,
            Request::Batch(id, params, rows) => {
                batch_width(params.len(), rows)?;
                if rows == 0 {
                    self.state = State::Answered(Outcome::default());
                    return Ok(());
                }
                self.session.execute(id, params, rows, out)?
            }
            Request::Fetch(id, params) => {
                self.keep = true;
                self.rows.clear();
                self.session.execute(id, params, 1, out)?
            }
        };
        self.state = State::Sending(response);
        Ok(())
    }

    fn advance(&mut self, fetch: Option<&mut Fetch>) -> Progress {
        let progress = match self.state.take() {
            State::Idle => none_started(),
            State::Answered(o) => Progress::Done(Ok(o)),
            State::Sending(r) => self.go(r, true),
            State::Reading(r) => self.go(r, false),
        };
        if let (Progress::Done(Ok(_)), true, Some(f)) = (&progress, self.keep, fetch) {
            f.values.clear();
            for r in &self.rows {
                f.push_text_row(r);
            }
        }
        progress
    }

    fn cancel(&self) {
        if let Some(c) = &self.cancel {
            c.send();
        }
    }
}
