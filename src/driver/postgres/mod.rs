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
mod copy;
mod response;
mod startup;
mod text;
mod wire;

use std::io::Write as _;
use std::time::Duration;

use bytes::{BufMut, BytesMut};
use postgres_protocol::message::frontend;
use postgres_protocol::IsNull;

use self::binary::BinaryType;
use self::response::TextRows;
use self::startup::Place;
use self::text::Template;
use self::wire::{Stream, Wire};
use super::{
    Connection, DbError, DbResult, Dialect, ErrorKind, Fetch, Interrupter, Outcome, PsMode,
    ServerAddr, ServerInfo, StmtId, Value,
};

/// Size of one CopyData message in `bulk_load`: large enough that a message
/// costs one write per 64 KiB, small enough to notice a server error early.
const COPY_CHUNK: usize = 64 * 1024;

/// How long an interrupter may wait to deliver a CancelRequest.
const CANCEL_TIMEOUT: Duration = Duration::from_millis(500);

/// A statement prepared on the server.
struct Prepared {
    /// Its name on the server, `s{index}`.
    name: String,
    /// Whether it returns rows (its Describe answered RowDescription, not
    /// NoData): Execute sends no RowDescription, so `result_set` comes from here.
    returns_rows: bool,
}

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
    /// Server-side prepared statements, or literals in the text.
    mode: PsMode,
    /// Prepared mode: the statements on the server, by [`StmtId`].
    prepared: Vec<Prepared>,
    /// Text mode: the statements' text with their placeholders located.
    templates: Vec<Template>,
    /// Text mode: where a statement's SQL is rendered; reused so that
    /// execution allocates nothing once it has grown.
    sql: String,
    /// For the interrupter.
    cancel: Option<CancelKey>,
    /// `server_version` as reported at startup, e.g. "15.10 (Debian …)".
    version: String,
}

impl PgConnection {
    /// Opens a session to `a` (TCP, or the unix socket `a.socket`).
    pub fn connect(a: &ServerAddr) -> DbResult<Box<dyn Connection>> {
        let s = startup::connect(a)?;
        Ok(Box::new(PgConnection {
            wire: s.wire,
            mode: a.ps_mode,
            prepared: Vec::new(),
            templates: Vec::new(),
            sql: String::new(),
            cancel: s.key.map(|(pid, secret)| CancelKey {
                place: s.place,
                pid,
                secret,
            }),
            version: s.server_version,
        }))
    }

    /// Runs `sql` through the simple Query protocol; with `rows`, decodes
    /// the values into it.
    fn simple(&mut self, sql: &str, rows: Option<&mut TextRows>) -> DbResult<Outcome> {
        simple(&mut self.wire, sql, rows)
    }

    /// Runs a query whose first row's first value is wanted.
    fn scalar(&mut self, sql: &str) -> DbResult<Option<String>> {
        let mut rows = TextRows::new();
        self.simple(sql, Some(&mut rows))?;
        Ok(rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten()))
    }

    fn execute_prepared(&mut self, id: StmtId, params: &[Value]) -> DbResult<Outcome> {
        self.execute_prepared_into(id, params, None)
    }

    /// Binds and executes prepared statement `id`; with `rows`, decodes
    /// the result's values into it (text format, as every result here).
    fn execute_prepared_into(
        &mut self,
        id: StmtId,
        params: &[Value],
        rows: Option<&mut TextRows>,
    ) -> DbResult<Outcome> {
        self.pipeline(id, params, 1, rows)
    }

    /// A batch as one pipeline: Bind and Execute for each row, one Sync,
    /// one round trip; the server runs the rows in order and, at an
    /// error, skips the rest up to the Sync (the first error is returned).
    fn execute_batch_prepared(
        &mut self,
        id: StmtId,
        params: &[Value],
        rows: usize,
    ) -> DbResult<Outcome> {
        crate::driver::batch_width(params.len(), rows)?;
        if rows == 0 {
            return Ok(Outcome::default());
        }
        self.pipeline(id, params, rows, None)
    }

    /// Binds and executes statement `id` once for each of `n` (≥ 1) rows
    /// of `params`, all in the unnamed portal, then one Sync, which ends
    /// them (and the implicit transaction outside BEGIN) and asks for
    /// ReadyForQuery; sends it all in one write and reads the answers.
    fn pipeline(
        &mut self,
        id: StmtId,
        params: &[Value],
        n: usize,
        rows: Option<&mut TextRows>,
    ) -> DbResult<Outcome> {
        let st = self.prepared.get(id).ok_or_else(|| unknown(id))?;
        let returns_rows = st.returns_rows;
        let width = params.len() / n;
        self.wire.out.clear();
        for row in 0..n {
            let p = &params[row * width..(row + 1) * width];
            push_bind(&mut self.wire.out, &st.name, id, p)?;
            frontend::execute("", 0, &mut self.wire.out).map_err(other)?;
        }
        frontend::sync(&mut self.wire.out);
        self.wire.send()?;
        let mut o = Outcome::default();
        self.wire.finish(&mut o, returns_rows, rows)?;
        Ok(o)
    }

    fn execute_text(&mut self, id: StmtId, params: &[Value]) -> DbResult<Outcome> {
        self.execute_text_into(id, params, None)
    }

    /// Renders statement `id`'s template with `params` and runs it as a
    /// simple Query; with `rows`, decodes the values into it.
    fn execute_text_into(
        &mut self,
        id: StmtId,
        params: &[Value],
        rows: Option<&mut TextRows>,
    ) -> DbResult<Outcome> {
        let t = self.templates.get(id).ok_or_else(|| unknown(id))?;
        t.render(params, &mut self.sql).map_err(|n| {
            DbError::new(
                ErrorKind::Other,
                "",
                format!(
                    "statement {id} uses ${n} but only {} parameters were given",
                    params.len()
                ),
            )
        })?;
        simple(&mut self.wire, &self.sql, rows)
    }

    /// Prepared mode: Parse and Describe every statement, each followed by
    /// its own Sync so that an error names its statement; all in one write.
    fn prepare_on_server(&mut self, sql: &[String]) -> DbResult<()> {
        let out = &mut self.wire.out;
        out.clear();
        // Statements of an earlier prepare_all would clash with the new names.
        let closing = !self.prepared.is_empty();
        for old in &self.prepared {
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
        self.prepared.clear();
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
        self.prepared = prepared;
        first_error.map_or(Ok(()), Err)
    }
}

/// The simple Query protocol: one Query message, the response up to
/// ReadyForQuery (several statements' results add up).
fn simple(wire: &mut Wire, sql: &str, rows: Option<&mut TextRows>) -> DbResult<Outcome> {
    frontend::query(sql, &mut wire.out).map_err(|e| {
        wire.out.clear();
        other(e)
    })?;
    wire.send()?;
    let mut o = Outcome::default();
    wire.finish(&mut o, false, rows)?;
    Ok(o)
}

fn unknown(id: StmtId) -> DbError {
    DbError::new(
        ErrorKind::Other,
        "",
        format!("statement {id} was not prepared on this connection"),
    )
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

/// Appends the Bind of prepared statement `name` (number `id`) to the
/// unnamed portal, with `params` as text.
fn push_bind(out: &mut BytesMut, name: &str, id: StmtId, params: &[Value]) -> DbResult<()> {
    let bound = frontend::bind(
        "",
        name,
        // No format codes: every parameter and every result column is text.
        std::iter::empty(),
        params,
        |v, buf| {
            Ok(if text::push_param(buf, v) {
                IsNull::No
            } else {
                IsNull::Yes
            })
        },
        std::iter::empty(),
        out,
    );
    if bound.is_err() {
        out.clear();
        return Err(DbError::new(
            ErrorKind::Other,
            "",
            format!(
                "cannot bind {} parameters to statement {id}: too many, or a NUL byte in the statement name",
                params.len()
            ),
        ));
    }
    Ok(())
}

impl Connection for PgConnection {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn prepare_all(&mut self, sql: &[String]) -> DbResult<()> {
        match self.mode {
            PsMode::Prepared => self.prepare_on_server(sql),
            PsMode::Disable => {
                self.templates = sql.iter().map(|s| Template::new(s)).collect();
                let longest = sql.iter().map(String::len).max().unwrap_or(0);
                // Room for the text plus typical literals, so that the first
                // executions do not grow it step by step.
                self.sql.reserve(2 * longest + 256);
                Ok(())
            }
        }
    }

    fn execute(&mut self, id: StmtId, params: &[Value]) -> DbResult<Outcome> {
        match self.mode {
            PsMode::Prepared => self.execute_prepared(id, params),
            PsMode::Disable => self.execute_text(id, params),
        }
    }

    fn execute_batch(&mut self, id: StmtId, params: &[Value], rows: usize) -> DbResult<Outcome> {
        match self.mode {
            PsMode::Prepared => self.execute_batch_prepared(id, params, rows),
            PsMode::Disable => crate::driver::batch_one_by_one(self, id, params, rows),
        }
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
        let out = match self.mode {
            PsMode::Prepared => self.execute_prepared_into(id, params, Some(&mut rows))?,
            PsMode::Disable => self.execute_text_into(id, params, Some(&mut rows))?,
        };
        fetch.values.clear();
        for r in &rows {
            fetch.push_text_row(r);
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
            .into_iter()
            .filter_map(|r| {
                let mut r = r.into_iter();
                Some((r.next()??, r.next().flatten().unwrap_or_default()))
            })
            .collect();
        let mode = match self.mode {
            PsMode::Prepared => "prepared",
            PsMode::Disable => "disable",
        };
        // How statements were sent is part of what was measured.
        settings.push(("dbsweep.ps_mode".to_string(), mode.to_string()));
        Ok(ServerInfo {
            version: format!("PostgreSQL {}", self.version),
            settings,
        })
    }

    fn query_text(&mut self, sql: &str) -> DbResult<super::Rows> {
        let mut rows = TextRows::new();
        self.simple(sql, Some(&mut rows))?;
        Ok(rows)
    }

    fn interrupter(&self) -> Option<Box<dyn Interrupter>> {
        let stream = self.wire.stream().try_clone().ok()?;
        Some(Box::new(PgInterrupter {
            stream,
            cancel: self.cancel.clone(),
        }))
    }
}

impl Drop for PgConnection {
    /// Says goodbye (Terminate), so that the server ends the session
    /// cleanly instead of logging an unexpected EOF. Best effort.
    fn drop(&mut self) {
        self.wire.out.clear();
        frontend::terminate(&mut self.wire.out);
        let _ = self.wire.stream().set_write_timeout(Some(CANCEL_TIMEOUT));
        let _ = self.wire.send();
    }
}
