//! A MySQL or MariaDB connection on an event loop: the connection a
//! blocking [`MyConnection`] opened, logged in and prepared, its socket
//! made non-blocking. Requests are built by the same encoders
//! (`encode_execute`, `encode_text`, `encode_bulk`, in stmt.rs) and their
//! responses read by the same [`Response`]; only the waiting is the event
//! loop's.
//!
//! A batch the server cannot take as one COM_STMT_BULK_EXECUTE (text mode,
//! MySQL, rows of other types, a statement it refuses so) runs one
//! execution per row, each sent once the last one's answer came, as on a
//! blocking connection: not pipelined, because after an error (a deadlock
//! that rolled the transaction back) the later rows must not run on their
//! own.

use std::os::fd::RawFd;

use super::response::{Fed, Keep, Malformed, Response};
use super::stmt::ER_UNSUPPORTED_PS;
use super::{MyConnection, CR_SERVER_GONE, CR_SERVER_LOST};
use crate::driver::evented::{none_started, Evented, Progress, Request, Stage, Wait};
use crate::driver::{batch_width, DbResult, Fetch, Outcome, PsMode, Rows, StmtId, Value};

type State = Stage<Response>;

/// What the request keeps of its response, and what follows it.
#[derive(Clone, Copy)]
enum Kind {
    /// Rows counted (text statements, transaction control).
    Count,
    /// A batch as one COM_STMT_BULK_EXECUTE: if the server refuses it
    /// before running any row (ER_UNSUPPORTED_PS), the rows (kept until
    /// the statement's first bulk is taken) run one execution each.
    Bulk { id: StmtId, rows: usize },
    /// A prepared statement's execution: its binary rows read by the
    /// statement's columns (which the response may redefine), and with
    /// `fetch` kept.
    Prepared { id: StmtId, fetch: bool },
    /// A text statement's rows, kept for a fetch.
    TextFetch,
    /// A batch one execution per row: row `next` of `rows` is the one in
    /// flight.
    PerRow {
        id: StmtId,
        next: usize,
        rows: usize,
    },
}

pub(super) struct MyEvented {
    conn: MyConnection,
    state: State,
    kind: Kind,
    /// A text fetch's rows, until it ends.
    rows: Rows,
    /// A batch's parameters, kept for its executions one row at a time.
    batch: Vec<Value>,
    /// A batch's outcome so far.
    total: Outcome,
    /// The statements the server took a bulk of: their batches' rows are
    /// not kept for a refusal (a copy per batch saved).
    bulk_taken: Vec<bool>,
    /// A fetch whose buffer is still to be emptied (at its first advance).
    fresh: bool,
}

impl MyEvented {
    /// The blocking connection, its socket already non-blocking.
    pub(super) fn new(conn: MyConnection) -> MyEvented {
        MyEvented {
            conn,
            state: State::Idle,
            kind: Kind::Count,
            rows: Rows::new(),
            batch: Vec::new(),
            total: Outcome::default(),
            bulk_taken: Vec::new(),
            fresh: false,
        }
    }

    /// Whether the server took a bulk of statement `id` before.
    fn taken(&self, id: StmtId) -> bool {
        self.bulk_taken.get(id).copied().unwrap_or(false)
    }

    /// Builds a statement without parameters (COM_QUERY).
    fn query(&mut self, sql: &str) -> DbResult<()> {
        self.conn.encode_query(sql)?;
        self.kind = Kind::Count;
        Ok(())
    }

    /// Builds one execution of statement `id` in the connection's mode.
    fn execute(&mut self, id: StmtId, params: &[Value], fetch: bool) -> DbResult<()> {
        match self.conn.ps_mode {
            PsMode::Prepared => {
                self.conn.encode_execute(id, params)?;
                self.kind = Kind::Prepared { id, fetch };
            }
            PsMode::Disable => {
                self.conn.encode_text(id, params)?;
                self.kind = if fetch {
                    self.rows.clear();
                    Kind::TextFetch
                } else {
                    Kind::Count
                };
            }
        }
        Ok(())
    }

    /// Sends and reads as far as the socket allows.
    fn go(
        &mut self,
        mut response: Response,
        sending: bool,
        mut fetch: Option<&mut Fetch>,
    ) -> Progress {
        if sending {
            match self.conn.io.send_some() {
                Ok(true) => {}
                Ok(false) => {
                    self.state = State::Sending(response);
                    return Progress::Wait(Wait::Writable);
                }
                Err(e) => return Progress::Done(Err(self.conn.lost(CR_SERVER_GONE, e))),
            }
        }
        // Whether this call sent the request: its answer is still to come.
        let mut sent = sending;
        loop {
            let c = &mut self.conn;
            let mut keep = match self.kind {
                Kind::Count | Kind::Bulk { .. } => Keep::Count,
                Kind::TextFetch => Keep::Text(&mut self.rows),
                Kind::Prepared { id, fetch: f } => Keep::Binary {
                    columns: &mut c.prepared[id].columns,
                    fetch: if f { fetch.as_deref_mut() } else { None },
                },
                Kind::PerRow { id, .. } if c.ps_mode == PsMode::Prepared => Keep::Binary {
                    columns: &mut c.prepared[id].columns,
                    fetch: None,
                },
                Kind::PerRow { .. } => Keep::Count,
            };
            match response.feed(c.io.buffered(), &mut keep) {
                Ok(Fed::Done { used }) => {
                    c.io.consume(used);
                    return self.done(response, fetch);
                }
                Ok(Fed::More { used, need }) => {
                    c.io.consume(used);
                    if std::mem::take(&mut sent) && c.io.drained {
                        // Sent onto a socket found empty with no event
                        // since: the answer's arrival wakes the loop, so a
                        // read now (that would almost always find nothing)
                        // is saved.
                        self.state = State::Reading(response);
                        return Progress::Wait(Wait::Readable);
                    }
                    match c.io.read_some(need) {
                        Ok(true) => {}
                        Ok(false) => {
                            self.state = State::Reading(response);
                            return Progress::Wait(Wait::Readable);
                        }
                        Err(e) => return Progress::Done(Err(c.lost(CR_SERVER_LOST, e))),
                    }
                }
                Ok(Fed::Reply { used }) => {
                    // A LOAD DATA LOCAL no one asked for: an empty file.
                    c.reply(used, &response);
                    c.io.seal();
                    return self.go(response, true, fetch);
                }
                Err(Malformed(what)) => return Progress::Done(Err(c.malformed(what))),
            }
        }
    }

    /// A response is complete: the request is done, or a batch's next row
    /// goes out.
    fn done(&mut self, response: Response, fetch: Option<&mut Fetch>) -> Progress {
        let out = self.conn.finish(response);
        match self.kind {
            Kind::Bulk { id, rows } => match out {
                // Refused before running anything: the same rows one by
                // one, and this statement so from now on (as blocking).
                Err(e) if e.code == ER_UNSUPPORTED_PS && !self.taken(id) => {
                    self.conn.prepared[id].no_bulk = true;
                    let width = self.batch.len() / rows;
                    let params = std::mem::take(&mut self.batch);
                    let built = self.execute(id, &params[..width], false);
                    self.batch = params;
                    if let Err(e) = built {
                        return Progress::Done(Err(e));
                    }
                    self.total = Outcome::default();
                    self.kind = Kind::PerRow { id, next: 0, rows };
                    self.conn.io.seal();
                    let response = self.conn.response();
                    self.go(response, true, fetch)
                }
                out => {
                    if out.is_ok() {
                        if self.bulk_taken.len() <= id {
                            self.bulk_taken.resize(id + 1, false);
                        }
                        self.bulk_taken[id] = true;
                    }
                    Progress::Done(out)
                }
            },
            Kind::PerRow { id, next, rows } => {
                let o = match out {
                    Ok(o) => o,
                    Err(e) => return Progress::Done(Err(e)),
                };
                self.total.affected += o.affected;
                self.total.rows += o.rows;
                self.total.result_set |= o.result_set;
                if next + 1 == rows {
                    return Progress::Done(Ok(std::mem::take(&mut self.total)));
                }
                let width = self.batch.len() / rows;
                let params = std::mem::take(&mut self.batch);
                let built =
                    self.execute(id, &params[(next + 1) * width..(next + 2) * width], false);
                self.batch = params;
                if let Err(e) = built {
                    return Progress::Done(Err(e));
                }
                self.kind = Kind::PerRow {
                    id,
                    next: next + 1,
                    rows,
                };
                self.conn.io.seal();
                let response = self.conn.response();
                self.go(response, true, fetch)
            }
            Kind::TextFetch => {
                if let (Ok(_), Some(f)) = (&out, fetch) {
                    f.values.clear();
                    for r in &self.rows {
                        f.push_text_row(r);
                    }
                }
                Progress::Done(out)
            }
            Kind::Count | Kind::Prepared { .. } => Progress::Done(out),
        }
    }
}

impl Evented for MyEvented {
    fn fd(&self) -> RawFd {
        self.conn.io.stream().raw_fd()
    }

    fn woken(&mut self) {
        self.conn.io.drained = false;
    }

    fn start(&mut self, req: Request<'_>) -> DbResult<()> {
        self.state.ready()?;
        self.fresh = false;
        match req {
            Request::Begin { .. } => self.query("BEGIN")?,
            Request::Commit => self.query("COMMIT")?,
            Request::Rollback => self.query("ROLLBACK")?,
            Request::Exec(id, params) => self.execute(id, params, false)?,
            Request::Fetch(id, params) => {
                self.execute(id, params, true)?;
                self.fresh = true;
            }
            Request::Batch(id, params, rows) => {
                let width = batch_width(params.len(), rows)?;
                if rows == 0 {
                    self.state = State::Answered(Outcome::default());
                    return Ok(());
                }
                let bulk = self.conn.ps_mode == PsMode::Prepared
                    && self.conn.encode_bulk(id, params, rows)?;
                if !(bulk && self.taken(id)) {
                    self.batch.clear();
                    self.batch.extend_from_slice(params);
                }
                if bulk {
                    self.kind = Kind::Bulk { id, rows };
                } else {
                    self.execute(id, &params[..width], false)?;
                    self.total = Outcome::default();
                    self.kind = Kind::PerRow { id, next: 0, rows };
                }
            }
        }
        self.conn.io.seal();
        self.state = State::Sending(self.conn.response());
        Ok(())
    }

    fn advance(&mut self, mut fetch: Option<&mut Fetch>) -> Progress {
        if self.fresh {
            if let Some(f) = fetch.as_deref_mut() {
                f.values.clear();
                self.fresh = false;
            }
        }
        match self.state.take() {
            State::Idle => none_started(),
            State::Answered(o) => Progress::Done(Ok(o)),
            State::Sending(r) => self.go(r, true, fetch),
            State::Reading(r) => self.go(r, false, fetch),
        }
    }

    /// The socket shut down, as the blocking connection's interrupter
    /// does: MySQL cancels a statement only by a KILL QUERY from another
    /// session, which would need a login this loop cannot wait for. The
    /// server ends the session when it next writes to it.
    fn cancel(&self) {
        let _ = self.conn.io.stream().shutdown();
    }
}

impl Drop for MyEvented {
    /// A request left half sent or half read: no COM_QUIT after it (the
    /// server would read it as the rest of the request); the socket just
    /// closes.
    fn drop(&mut self) {
        if matches!(self.state, State::Sending(_) | State::Reading(_)) {
            self.conn.broken = true;
        }
    }
}
