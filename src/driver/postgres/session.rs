//! A session's protocol state without its socket: the statements prepared
//! on the server (or, in text mode, their templates), and each execution
//! encoded into bytes together with the [`Response`] that will answer it.
//! The blocking connection (mod.rs) sends the bytes and reads the response
//! through its wire; a connection on an event loop does both when its
//! socket is ready. Either way the encoding is this code.

use bytes::BytesMut;
use postgres_protocol::message::frontend;
use postgres_protocol::IsNull;

use super::response::Response;
use super::text::{self, Template};
use crate::driver::{DbError, DbResult, ErrorKind, PsMode, StmtId, Value};

/// A statement prepared on the server.
pub(super) struct Prepared {
    /// Its name on the server, `s{index}`.
    pub(super) name: String,
    /// Whether it returns rows (its Describe answered RowDescription, not
    /// NoData): Execute sends no RowDescription, so `result_set` comes from here.
    pub(super) returns_rows: bool,
}

/// What a session has prepared, and how it sends statements.
pub(super) struct Session {
    /// Server-side prepared statements, or literals in the text.
    pub(super) mode: PsMode,
    /// Prepared mode: the statements on the server, by [`StmtId`].
    pub(super) prepared: Vec<Prepared>,
    /// Text mode: the statements' text with their placeholders located.
    pub(super) templates: Vec<Template>,
    /// Text mode: where a statement's SQL is rendered; reused so that
    /// execution allocates nothing once it has grown.
    sql: String,
}

impl Session {
    pub(super) fn new(mode: PsMode) -> Session {
        Session {
            mode,
            prepared: Vec::new(),
            templates: Vec::new(),
            sql: String::new(),
        }
    }

    /// Text mode: keeps the statements' templates, with room in the
    /// rendering buffer for their text and typical literals, so that the
    /// first executions do not grow it step by step.
    pub(super) fn keep_templates(&mut self, sql: &[String]) {
        self.templates = sql.iter().map(|s| Template::new(s)).collect();
        let longest = sql.iter().map(String::len).max().unwrap_or(0);
        self.sql.reserve(2 * longest + 256);
    }

    /// Statement `id` with `params` into `out`, run for each of its `n`
    /// (≥ 1) rows of parameters, and the response that will answer it.
    ///
    /// Prepared mode: Bind and Execute for each row, all in the unnamed
    /// portal, then one Sync, which ends them (and the implicit
    /// transaction outside BEGIN) and asks for ReadyForQuery; the server
    /// runs the rows in order and, at an error, skips the rest up to the
    /// Sync. Text mode: the statement rendered with each row's parameters
    /// as literals, the rows one after another as one simple Query, which
    /// the server runs the same way (one implicit transaction outside
    /// BEGIN, the rest skipped at an error).
    pub(super) fn execute(
        &mut self,
        id: StmtId,
        params: &[Value],
        n: usize,
        out: &mut BytesMut,
    ) -> DbResult<Response> {
        match self.mode {
            PsMode::Prepared => {
                let returns_rows = self.bind_execute(id, params, n, out)?;
                frontend::sync(out);
                Ok(Response::new(returns_rows))
            }
            PsMode::Disable => {
                let t = self.templates.get(id).ok_or_else(|| unknown(id))?;
                let width = params.len() / n;
                self.sql.clear();
                for row in 0..n {
                    if row > 0 {
                        self.sql.push_str(";\n");
                    }
                    let p = &params[row * width..(row + 1) * width];
                    t.render(p, &mut self.sql).map_err(|k| {
                        DbError::new(
                            ErrorKind::Other,
                            "",
                            format!(
                                "statement {id} uses ${k} but only {} parameters were given",
                                p.len()
                            ),
                        )
                    })?;
                }
                simple(&self.sql, out)
            }
        }
    }

    /// Prepared mode: statement `id` with `params` into `out` as one
    /// statement of a pipeline's group (no Sync: the group's last request
    /// or [`sync`] ends it), and its response.
    pub(super) fn execute_in_group(
        &mut self,
        id: StmtId,
        params: &[Value],
        out: &mut BytesMut,
    ) -> DbResult<Response> {
        let returns_rows = self.bind_execute(id, params, 1, out)?;
        Ok(Response::new(returns_rows).in_group())
    }

    /// Prepared mode: a Bind and an Execute of statement `id` into `out`
    /// for each of `params`' `n` rows; whether the statement returns rows.
    /// At an error `out` is cut back to where they began: requests sent
    /// ahead may be waiting in it.
    fn bind_execute(
        &self,
        id: StmtId,
        params: &[Value],
        n: usize,
        out: &mut BytesMut,
    ) -> DbResult<bool> {
        let mark = out.len();
        let st = self.prepared.get(id).ok_or_else(|| unknown(id))?;
        let width = params.len() / n;
        for row in 0..n {
            let p = &params[row * width..(row + 1) * width];
            push_bind(out, mark, &st.name, id, p)?;
            frontend::execute("", 0, out).map_err(|e| other(out, mark, e))?;
        }
        Ok(st.returns_rows)
    }
}

/// `sql` (a statement without parameters: BEGIN, COMMIT) into `out` as one
/// statement of a pipeline's group, in the unnamed statement (Parse, Bind,
/// Execute, no Sync): a simple Query there would be skipped unanswered
/// after an error, as the server skips everything up to the Sync.
pub(super) fn simple_in_group(sql: &str, out: &mut BytesMut) -> DbResult<Response> {
    let mark = out.len();
    frontend::parse("", sql, std::iter::empty(), out).map_err(|e| other(out, mark, e))?;
    push_bind(out, mark, "", 0, &[])?;
    frontend::execute("", 0, out).map_err(|e| other(out, mark, e))?;
    Ok(Response::new(false).in_group())
}

/// Ends a pipeline's group: the server answers its statements, then one
/// ReadyForQuery.
pub(super) fn sync(out: &mut BytesMut) {
    frontend::sync(out);
}

/// `sql` as one simple Query into `out`, and the response that will
/// answer it (several statements' results add up).
pub(super) fn simple(sql: &str, out: &mut BytesMut) -> DbResult<Response> {
    let mark = out.len();
    frontend::query(sql, out).map_err(|e| other(out, mark, e))?;
    Ok(Response::new(false))
}

/// Appends the Bind of prepared statement `name` (number `id`) to the
/// unnamed portal, with `params` as text; at an error, `out` is cut back
/// to `mark`.
fn push_bind(
    out: &mut BytesMut,
    mark: usize,
    name: &str,
    id: StmtId,
    params: &[Value],
) -> DbResult<()> {
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
        out.truncate(mark);
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

fn unknown(id: StmtId) -> DbError {
    DbError::new(
        ErrorKind::Other,
        "",
        format!("statement {id} was not prepared on this connection"),
    )
}

/// An encoding error: nothing half-encoded is left to be sent (`out` cut
/// back to `mark`, where the request began).
fn other(out: &mut BytesMut, mark: usize, e: std::io::Error) -> DbError {
    out.truncate(mark);
    DbError::new(ErrorKind::Other, "", e.to_string())
}
