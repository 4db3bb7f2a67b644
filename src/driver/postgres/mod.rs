//! PostgreSQL over its wire protocol (3.0), on a blocking socket, without an
//! async runtime or a client library: the shortest path from a benchmark
//! client to the server, so that the client's own cost stays below libpq's.
//!
//! # Layout
//! - [`startup`]: the socket (TCP or unix domain), StartupMessage,
//!   authentication (trust, password, MD5, SCRAM-SHA-256).
//! - [`response`]: a response read without the socket (fed bytes, it says
//!   when ReadyForQuery ended it and what it did), ErrorResponse parsing and
//!   SQLSTATE classification: the same code under a blocking reader, an
//!   event loop and the tests.
//! - [`wire`]: the socket with its two long-lived buffers, message framing,
//!   and the blocking reader that feeds a response.
//! - [`text`]: values as Bind parameters, SQL literals and text COPY
//!   fields, and the statement templates of text mode.
//! - [`binary`]: binary COPY's column types and fields (integers, floats,
//!   text, NUMERIC, timestamps, dates).
//! - [`copy`]: `bulk_load` through COPY, binary where the types allow.
//!
//! # Statements
//! In prepared mode (the default) `prepare_all` parses every statement as a
//! named server-side statement `s0..sN` and describes it, to learn whether it
//! returns rows (Execute alone sends no RowDescription). `execute` then sends
//! Bind (parameters as text) + Execute + Sync in one write and reads the
//! response, normally in one read: one round trip, two system calls, no
//! allocation. Rows are counted and skipped where they lie in the buffer;
//! values are decoded only for `execute_fetch`, into text rows.
//!
//! In text mode (sysbench's `--db-ps-mode disable`) each execution formats
//! the parameters as literals into the statement text (into a reused string)
//! and sends it as a simple Query.
//!
//! Message encoding and authentication come from the `postgres-protocol`
//! crate; decoding is by hand (see [`wire`] for why).

mod binary;
mod binding;
mod copy;
mod evented;
mod pooler;
mod response;
mod session;
mod startup;
mod text;
mod wire;

use std::io::Write as _;
use std::time::Duration;

use bytes::{BufMut, BytesMut};
use postgres_protocol::message::frontend;

use self::binary::BinaryType;
use self::evented::PgEvented;
use self::response::TextRows;
use self::session::{Prepared, Session};
use self::startup::Place;
use self::wire::{Stream, Wire};
use super::evented::Evented;
use super::{
    Connection, DbError, DbResult, Dialect, ErrorKind, Fetch, Interrupter, Outcome, PsMode,
    ServerAddr, ServerInfo, StmtId, Value,
};

/// Size of one CopyData message in `bulk_load`: large enough that a message
/// costs one write per 64 KiB, small enough to notice a server error early.
const COPY_CHUNK: usize = 64 * 1024;

/// How long an interrupter may wait to deliver a CancelRequest.
const CANCEL_TIMEOUT: Duration = Duration::from_millis(500);

/// What a CancelRequest needs: where the server listens and which backend
/// runs this session.
#[derive(Clone)]
struct CancelKey {
    place: Place,
    pid: i32,
    secret: i32,
}

impl CancelKey {
    /// Asks the server, on a new connection, to cancel what the backend is
    /// running. Best effort: nothing is reported.
    fn send(&self) {
        let mut msg = BytesMut::with_capacity(16);
        frontend::cancel_request(self.pid, self.secret, &mut msg);
        if let Ok(mut s) = self.place.open(CANCEL_TIMEOUT) {
            let _ = s.set_write_timeout(Some(CANCEL_TIMEOUT));
            let _ = s.write_all(&msg);
        }
    }
}

/// One session with a PostgreSQL server.
pub struct PgConnection {
    /// The socket and its buffers.
    wire: Wire,
    /// The statements prepared, and how executions are encoded.
    session: Session,
    /// For the interrupter.
    cancel: Option<CancelKey>,
    /// `server_version` as reported at startup, e.g. "15.10 (Debian …)".
    version: String,
    /// Where it connected, to ask a pooler in between for its name.
    addr: ServerAddr,
}

impl PgConnection {
    /// Opens a session to `a` (TCP, or the unix socket `a.socket`).
    pub fn connect(a: &ServerAddr) -> DbResult<Box<dyn Connection>> {
        Ok(Box::new(PgConnection::from_session(
            startup::connect(a)?,
            a,
        )))
    }

    /// The connection of a session `startup` opened to `a`.
    fn from_session(mut s: startup::Session, a: &ServerAddr) -> PgConnection {
        s.wire.goodbye = true;
        PgConnection {
            wire: s.wire,
            session: Session::new(a.ps_mode),
            cancel: s.key.map(|(pid, secret)| CancelKey {
                place: s.place,
                pid,
                secret,
            }),
            version: s.server_version,
            addr: a.clone(),
        }
    }

    /// Runs `sql` through the simple Query protocol; with `rows`, decodes
    /// the values into it.
    fn simple(&mut self, sql: &str, rows: Option<&mut TextRows>) -> DbResult<Outcome> {
        let response = session::simple(sql, &mut self.wire.out)?;
        self.wire.send()?;
        self.wire.read(response, rows)
    }

    /// The pooler between this session and its server, if any.
    fn pooler(&mut self) -> DbResult<Option<pooler::Pooler>> {
        let pid = self.scalar("SELECT pg_backend_pid()")?;
        let Some(pid) = pid.and_then(|p| p.parse::<i32>().ok()) else {
            return Ok(None);
        };
        Ok(pooler::find(
            &self.addr,
            self.cancel.as_ref().map(|c| c.pid),
            pid,
        ))
    }

    /// Runs a query whose first row's first value is wanted.
    fn scalar(&mut self, sql: &str) -> DbResult<Option<String>> {
        let mut rows = TextRows::new();
        self.simple(sql, Some(&mut rows))?;
        if rows.len() == 0 {
            return Ok(None);
        }
        Ok(rows.cell(0, 0).map(str::to_string))
    }

    /// Statement `id` for each of `n` (≥ 1) rows of `params`, sent in one
    /// write and answered in one response (see [`Session::execute`]);
    /// with `rows`, the result's values decoded into it (text format, as
    /// every result here).
    fn run(
        &mut self,
        id: StmtId,
        params: &[Value],
        n: usize,
        rows: Option<&mut TextRows>,
    ) -> DbResult<Outcome> {
        self.wire.out.clear();
        let response = self.session.execute(id, params, n, &mut self.wire.out)?;
        self.wire.send()?;
        self.wire.read(response, rows)
    }

    /// Prepared mode: Parse and Describe every statement, each followed by
    /// its own Sync so that an error names its statement; all in one write.
    fn prepare_on_server(&mut self, sql: &[String]) -> DbResult<()> {
        let out = &mut self.wire.out;
        out.clear();
        // Statements of an earlier prepare_all would clash with the new names.
        let closing = !self.session.prepared.is_empty();
        for old in &self.session.prepared {
            frontend::close(b'S', &old.name, out).map_err(other)?;
        }
        if closing {
            frontend::sync(out);
        }
        let mut prepared = Vec::with_capacity(sql.len());
        for (i, s) in sql.iter().enumerate() {
            let name = format!("s{i}");
            // No parameter types: the server infers them from the context.
            let parsed = frontend::parse(&name, s, std::iter::empty(), out);
            if let Err(e) = parsed {
                out.clear();
                return Err(DbError::new(
                    ErrorKind::Other,
                    "",
                    format!("cannot prepare statement {i} ({s}): {e}"),
                ));
            }
            frontend::describe(b'S', &name, out).map_err(other)?;
            frontend::sync(out);
            prepared.push(Prepared {
                name,
                returns_rows: false,
            });
        }
        self.session.prepared.clear();
        self.wire.send()?;
        if closing {
            self.wire.finish(&mut Outcome::default(), false, None)?;
        }
        // Read every statement's answer even after an error, so that the
        // connection stays in step; report the first error.
        let mut first_error = None;
        for (i, p) in prepared.iter_mut().enumerate() {
            let mut o = Outcome::default();
            match self.wire.finish(&mut o, false, None) {
                Ok(()) => p.returns_rows = o.result_set,
                Err(e) if e.kind == ErrorKind::ConnectionLost => return Err(e),
                Err(e) => {
                    first_error.get_or_insert(DbError {
                        message: format!(
                            "cannot prepare statement {i} ({}): {}",
                            sql[i], e.message
                        ),
                        ..e
                    });
                }
            }
        }
        // Kept even after an error: the statements that did parse exist on
        // the server, and the next prepare_all must close them.
        self.session.prepared = prepared;
        first_error.map_or(Ok(()), Err)
    }
}

fn other(e: std::io::Error) -> DbError {
    DbError::new(ErrorKind::Other, "", e.to_string())
}

/// Unblocks a call on another thread: shuts the socket down (the blocked
/// read returns at once, as ConnectionLost), then asks the server to cancel
/// the running statement, so that the backend does not go on holding locks
/// and CPU for a client that has left.
struct PgInterrupter {
    /// A second handle on the connection's socket.
    stream: Stream,
    cancel: Option<CancelKey>,
}

impl Interrupter for PgInterrupter {
    fn interrupt(&self) {
        let _ = self.stream.shutdown();
        if let Some(c) = &self.cancel {
            c.send();
        }
    }
}

impl Connection for PgConnection {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn prepare_all(&mut self, sql: &[String]) -> DbResult<()> {
        match self.session.mode {
            PsMode::Prepared => self.prepare_on_server(sql),
            PsMode::Disable => {
                self.session.keep_templates(sql);
                Ok(())
            }
        }
    }

    fn execute(&mut self, id: StmtId, params: &[Value]) -> DbResult<Outcome> {
        self.run(id, params, 1, None)
    }

    fn execute_batch(&mut self, id: StmtId, params: &[Value], rows: usize) -> DbResult<Outcome> {
        // One round trip in either mode (see `Session::execute`); the
        // first error is returned.
        crate::driver::batch_width(params.len(), rows)?;
        if rows == 0 {
            return Ok(Outcome::default());
        }
        self.run(id, params, rows, None)
    }

    fn execute_fetch(
        &mut self,
        id: StmtId,
        params: &[Value],
        fetch: &mut Fetch,
    ) -> DbResult<Outcome> {
        // Rows as text, then typed: only workloads that read results back
        // take this path, and they keep a few values of a few rows.
        let mut rows = TextRows::new();
        let out = self.run(id, params, 1, Some(&mut rows))?;
        fetch.values.clear();
        for r in 0..rows.len() {
            fetch.push_text_cells(|c| rows.cell(r, c));
        }
        Ok(out)
    }

    fn execute_sql(&mut self, sql: &str) -> DbResult<Outcome> {
        self.simple(sql, None)
    }

    fn begin(&mut self, _writes: bool) -> DbResult<Outcome> {
        self.simple("BEGIN", None).map(|_| Outcome::default())
    }

    fn commit(&mut self) -> DbResult<Outcome> {
        self.simple("COMMIT", None).map(|_| Outcome::default())
    }

    fn rollback(&mut self) -> DbResult<Outcome> {
        if self.wire.status == b'I' {
            // No transaction open (e.g. the error ended an autocommit
            // statement): a ROLLBACK would only earn a warning.
            return Ok(Outcome::default());
        }
        self.simple("ROLLBACK", None).map(|_| Outcome::default())
    }

    fn table_exists(&mut self, table: &str) -> DbResult<bool> {
        // to_regclass resolves the name as a statement would (search path,
        // case folding, quotes), so "exists" means "a query on it finds it".
        let mut sql = String::from(
            "SELECT 1 FROM pg_catalog.pg_class WHERE relkind IN ('r', 'p') AND oid = to_regclass(",
        );
        text::push_literal(&mut sql, &Value::Text(table.to_string()));
        sql.push(')');
        Ok(self.simple(&sql, None)?.rows > 0)
    }

    fn count_rows(&mut self, table: &str) -> DbResult<u64> {
        let n = self.scalar(&format!("SELECT count(*) FROM {table}"))?;
        n.and_then(|n| n.parse().ok()).ok_or_else(|| {
            DbError::new(
                ErrorKind::Other,
                "",
                format!("SELECT count(*) FROM {table} returned no number"),
            )
        })
    }

    fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &mut dyn FnMut(&mut Vec<Value>) -> bool,
    ) -> DbResult<u64> {
        self.copy_in(table, columns, rows)
    }

    fn server_info(&mut self) -> DbResult<ServerInfo> {
        if self.version.is_empty() {
            self.version = self.scalar("SHOW server_version")?.unwrap_or_default();
        }
        let mut rows = TextRows::new();
        // Every setting, as SHOW renders it ("128MB", not "16384" in 8 kB
        // pages); the second argument turns a setting that vanished between
        // the two reads into NULL instead of an error.
        self.simple(
            "SELECT name, current_setting(name, true) FROM pg_catalog.pg_settings ORDER BY name",
            Some(&mut rows),
        )?;
        let mut settings: Vec<(String, String)> = rows
            .into_strings()
            .into_iter()
            .filter_map(|r| {
                let mut r = r.into_iter();
                Some((r.next()??, r.next().flatten().unwrap_or_default()))
            })
            .collect();
        let mode = match self.session.mode {
            PsMode::Prepared => "prepared",
            PsMode::Disable => "disable",
        };
        // How statements were sent is part of what was measured.
        settings.push(("dbsweep.ps_mode".to_string(), mode.to_string()));
        // So is the encryption: TLS's version and cipher, or "off".
        settings.push((
            "dbsweep.tls".to_string(),
            crate::driver::tls::describe(self.wire.stream()),
        ));
        // And a pooler in between, which a run measures as much as the server.
        let mut version = format!("PostgreSQL {}", self.version);
        if let Some(p) = self.pooler()? {
            p.check(self.session.mode)?;
            version = format!("{version} (through {})", p.describe());
            settings.push(("dbsweep.pooler".to_string(), p.recorded()));
            settings.extend(p.settings);
        }
        Ok(ServerInfo { version, settings })
    }

    fn query_text(&mut self, sql: &str) -> DbResult<super::Rows> {
        let mut rows = TextRows::new();
        self.simple(sql, Some(&mut rows))?;
        Ok(rows.into_strings())
    }

    fn interrupter(&self) -> Option<Box<dyn Interrupter>> {
        let stream = self.wire.stream().try_clone().ok()?;
        Some(Box::new(PgInterrupter {
            stream,
            cancel: self.cancel.clone(),
        }))
    }

    fn into_evented(self: Box<Self>) -> Result<Box<dyn Evented>, Box<dyn Connection>> {
        let me = *self;
        if me.wire.stream().set_nonblocking(true).is_err() {
            return Err(Box::new(me));
        }
        Ok(Box::new(PgEvented::new(me.wire, me.session, me.cancel)))
    }
}
