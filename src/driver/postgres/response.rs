//! A response of protocol 3.0 read without its socket (the sans-I/O shape):
//! a [`Response`] is fed whatever bytes have arrived and consumes the whole
//! messages among them, up to the ReadyForQuery that ends the response. It
//! never reads or waits, so the blocking [`Wire`](super::wire::Wire) feeds
//! it from its reads, an event loop from a ready socket, and the tests
//! byte by byte — the same code.
//!
//! As the blocking reader did before it, it looks only at the few messages
//! whose content matters (CommandComplete, ErrorResponse, ReadyForQuery,
//! and DataRow when rows are kept): a DataRow that is only counted is
//! skipped as it streams by, so a row larger than the buffer never has to
//! fit in it, and nothing is allocated unless the server reports an error
//! or rows are kept.

use std::io;

use bytes::BytesMut;
use postgres_protocol::message::frontend;

use super::text::tag_affected;
use crate::driver::{DbError, ErrorKind, Outcome};

/// Rows of a response decoded as text, for the few administrative queries
/// whose values matter (settings, counts) and the workloads that read
/// results back (DBT-1, TPC-C); never on sysbench's path. One buffer of
/// text and one of cells, reused from response to response: a row of
/// Strings was an allocation a value, with its free nearly a tenth of the
/// client's samples at 20,000 DBT-1 users on event loops.
#[derive(Debug, Default)]
pub(super) struct TextRows {
    text: String,
    /// Each value's byte range in `text`; None for NULL.
    cells: Vec<Option<(u32, u32)>>,
    /// Where each row's cells start in `cells`.
    rows: Vec<u32>,
}

impl TextRows {
    pub fn new() -> TextRows {
        TextRows::default()
    }

    pub fn clear(&mut self) {
        self.text.clear();
        self.cells.clear();
        self.rows.clear();
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Row `r`'s cells.
    fn row(&self, r: usize) -> &[Option<(u32, u32)>] {
        let start = self.rows[r] as usize;
        let end = self
            .rows
            .get(r + 1)
            .map_or(self.cells.len(), |&e| e as usize);
        &self.cells[start..end]
    }

    fn text_of(&self, cell: Option<(u32, u32)>) -> Option<&str> {
        cell.map(|(a, b)| &self.text[a as usize..b as usize])
    }

    /// Row `r`'s value `c` (None for NULL or past the row's end).
    pub fn cell(&self, r: usize, c: usize) -> Option<&str> {
        self.text_of(*self.row(r).get(c)?)
    }

    /// The rows as owned strings, for callers off the hot path.
    pub fn into_strings(self) -> Vec<Vec<Option<String>>> {
        (0..self.len())
            .map(|r| {
                self.row(r)
                    .iter()
                    .map(|&c| self.text_of(c).map(str::to_string))
                    .collect()
            })
            .collect()
    }

    /// Adds a DataRow's values (a value not in UTF-8 kept with its bad
    /// bytes replaced, as `String::from_utf8_lossy` does).
    fn push(&mut self, mut b: &[u8]) -> io::Result<()> {
        let bad = || io::Error::new(io::ErrorKind::InvalidData, "malformed DataRow");
        let n = u16::from_be_bytes(b.get(..2).ok_or_else(bad)?.try_into().map_err(|_| bad())?);
        b = &b[2..];
        self.rows.push(self.cells.len() as u32);
        for _ in 0..n {
            let len =
                i32::from_be_bytes(b.get(..4).ok_or_else(bad)?.try_into().map_err(|_| bad())?);
            b = &b[4..];
            if len < 0 {
                self.cells.push(None);
                continue;
            }
            let v = b.get(..len as usize).ok_or_else(bad)?;
            let start = self.text.len() as u32;
            match std::str::from_utf8(v) {
                Ok(v) => self.text.push_str(v),
                Err(_) => self.text.push_str(&String::from_utf8_lossy(v)),
            }
            self.cells.push(Some((start, self.text.len() as u32)));
            b = &b[len as usize..];
        }
        Ok(())
    }
}

/// Where feeding a response stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fed {
    /// `used` bytes were consumed; to go on, at least `need` bytes must be
    /// buffered after them (more than are: a message not complete yet).
    More { used: usize, need: usize },
    /// ReadyForQuery was consumed, the `used`-th byte its last: the
    /// response is complete ([`Response::end`]).
    Done { used: usize },
}

/// One response as it arrives: what it said so far.
#[derive(Debug)]
pub(super) struct Response {
    outcome: Outcome,
    /// Whether the command now completing returned rows, for SELECT's
    /// CommandComplete tag (a SELECT's count is rows, not rows affected).
    described: bool,
    /// Execute sends no RowDescription: whether the prepared statement
    /// returns rows is known from its Describe.
    returns_rows: bool,
    /// The first ErrorResponse: returned once ReadyForQuery has arrived,
    /// so that the connection is in step for the next command.
    error: Option<DbError>,
    /// Body bytes of the current message still to pass over.
    skipping: usize,
    /// The transaction status of the ReadyForQuery, once it came.
    status: Option<u8>,
    /// One statement of several before one Sync (a pipeline's group): it
    /// ends at its CommandComplete or ErrorResponse, not at a ReadyForQuery.
    part: bool,
}

impl Response {
    /// A response to come; `returns_rows` for an Execute of a prepared
    /// statement that returns rows.
    pub(super) fn new(returns_rows: bool) -> Response {
        Response {
            outcome: Outcome {
                result_set: returns_rows,
                ..Outcome::default()
            },
            described: returns_rows,
            returns_rows,
            error: None,
            skipping: 0,
            status: None,
            part: false,
        }
    }

    /// As a statement of a group that a later Sync ends: see `part`.
    pub(super) fn in_group(mut self) -> Response {
        self.part = true;
        self
    }

    /// Whether it is a group's statement that ends before the group's
    /// ReadyForQuery.
    pub(super) fn in_group_before_last(&self) -> bool {
        self.part
    }

    /// The group's last statement: it ends at the group's ReadyForQuery.
    pub(super) fn last_of_group(&mut self) {
        self.part = false;
    }

    /// Consumes the messages wholly in `input` (and any part of a message
    /// it passes over), up to the end of the response. With `rows`, DataRow
    /// values are decoded into it. A CopyInResponse (a `COPY … FROM STDIN`
    /// outside bulk loading) is answered by a CopyFail appended to `reply`,
    /// which the caller sends before it waits for more. An error means the
    /// stream is not protocol 3.0 any more: the connection is unusable.
    pub(super) fn feed(
        &mut self,
        input: &[u8],
        rows: &mut Option<&mut TextRows>,
        reply: &mut BytesMut,
    ) -> io::Result<Fed> {
        let mut pos = 0;
        loop {
            if self.skipping > 0 {
                let take = self.skipping.min(input.len() - pos);
                pos += take;
                self.skipping -= take;
                if self.skipping > 0 {
                    return Ok(Fed::More { used: pos, need: 1 });
                }
            }
            let rest = &input[pos..];
            let Some(h) = rest.get(..5) else {
                return Ok(Fed::More { used: pos, need: 5 });
            };
            let (tag, body_len) = header(h)?;
            let whole = match tag {
                b'D' => rows.is_some(),
                b'C' | b'E' | b'Z' => true,
                _ => false,
            };
            if !whole {
                // Passed over as it streams by.
                match tag {
                    b'D' => self.outcome.rows += 1,
                    b'T' => {
                        self.outcome.result_set = true;
                        self.described = true;
                    }
                    // COPY FROM STDIN outside bulk_load: refuse it, which
                    // ends the command with an error and a ReadyForQuery.
                    b'G' => frontend::copy_fail(
                        "COPY FROM STDIN is only supported by bulk_load",
                        reply,
                    )?,
                    // ParseComplete, BindComplete, NoData, ParameterDescription,
                    // notices, parameter changes, COPY TO STDOUT data.
                    _ => {}
                }
                pos += 5;
                self.skipping = body_len;
                continue;
            }
            let Some(body) = rest.get(5..5 + body_len) else {
                return Ok(Fed::More {
                    used: pos,
                    need: 5 + body_len,
                });
            };
            pos += 5 + body_len;
            match tag {
                b'D' => {
                    self.outcome.rows += 1;
                    if let Some(rows) = rows {
                        rows.push(body)?;
                    }
                }
                b'C' => {
                    let tag = body.strip_suffix(&[0]).unwrap_or(body);
                    self.outcome.affected += tag_affected(tag, self.described);
                    self.described = self.returns_rows;
                    if self.part {
                        return Ok(Fed::Done { used: pos });
                    }
                }
                b'E' => {
                    let e = parse_error(body);
                    self.error.get_or_insert(e);
                    if self.part {
                        return Ok(Fed::Done { used: pos });
                    }
                }
                _ => {
                    self.status = Some(body.first().copied().unwrap_or(b'I'));
                    return Ok(Fed::Done { used: pos });
                }
            }
        }
    }

    /// The transaction status the ReadyForQuery gave (`I` idle, `T` in a
    /// transaction, `E` in a failed one); None before it came.
    pub(super) fn status(&self) -> Option<u8> {
        self.status
    }

    /// The first error the server reported so far.
    pub(super) fn error(&mut self) -> Option<DbError> {
        self.error.take()
    }

    /// The complete response: what it did, or the first error it reported.
    pub(super) fn end(self) -> Result<Outcome, DbError> {
        self.error.map_or(Ok(self.outcome), Err)
    }
}

/// A backend message's header (its first 5 bytes): the tag and the body's
/// length.
pub(super) fn header(h: &[u8]) -> io::Result<(u8, usize)> {
    let tag = h[0];
    let len = u32::from_be_bytes([h[1], h[2], h[3], h[4]]) as usize;
    if len < 4 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("malformed message from the server (tag {tag}, length {len})"),
        ));
    }
    Ok((tag, len - 4))
}

/// Turns an ErrorResponse body (fields of a type byte and a C string, up to
/// a zero byte) into a classified error: SQLSTATE as the code, the message
/// with its detail and hint.
pub(super) fn parse_error(mut b: &[u8]) -> DbError {
    let (mut severity, mut code, mut message, mut detail, mut hint) =
        (&b""[..], &b""[..], &b""[..], &b""[..], &b""[..]);
    while let Some((&field, rest)) = b.split_first() {
        if field == 0 {
            break;
        }
        let end = rest.iter().position(|&c| c == 0).unwrap_or(rest.len());
        let value = &rest[..end];
        match field {
            // 'V' is never localised; 'S' is, so it only stands in.
            b'V' => severity = value,
            b'S' if severity.is_empty() => severity = value,
            b'C' => code = value,
            b'M' => message = value,
            b'D' => detail = value,
            b'H' => hint = value,
            _ => {}
        }
        b = rest.get(end + 1..).unwrap_or_default();
    }
    let text = |s: &[u8]| String::from_utf8_lossy(s).into_owned();
    let mut msg = text(message);
    if !detail.is_empty() {
        msg.push_str(" (");
        msg.push_str(&String::from_utf8_lossy(detail));
        msg.push(')');
    }
    if !hint.is_empty() {
        msg.push_str("; hint: ");
        msg.push_str(&String::from_utf8_lossy(hint));
    }
    let code = text(code);
    // A statement dbsweep prepared is gone: the classic sign of a pooler
    // moving the session between server connections.
    if code == "26000" && hint.is_empty() && msg.starts_with("prepared statement") {
        msg.push_str(
            "; hint: a pooler in transaction mode loses prepared statements unless it carries them over \
             (PgBouncer: max_prepared_statements); or run with --db-ps-mode=disable",
        );
    }
    let fatal = matches!(severity, b"FATAL" | b"PANIC");
    DbError::new(classify(&code, fatal), code, msg)
}

/// Maps a SQLSTATE onto the engine's error kinds. `fatal` (severity FATAL
/// or PANIC) means the server is closing the session.
pub(super) fn classify(sqlstate: &str, fatal: bool) -> ErrorKind {
    match sqlstate {
        "40P01" => ErrorKind::Deadlock,
        "40001" => ErrorKind::Serialization,
        // lock_not_available: lock_timeout expired (or NOWAIT).
        "55P03" => ErrorKind::LockTimeout,
        // query_canceled: statement_timeout, or a cancel request. The
        // engine's own cancel at the deadline shuts the socket first and
        // abandons the transaction uncounted, so what is counted here is
        // the time limit (or another session's pg_cancel_backend).
        "57014" => ErrorKind::Timeout,
        "23505" => ErrorKind::DuplicateKey,
        // admin_shutdown, crash_shutdown, cannot_connect_now,
        // database_dropped; class 08 is connection_exception.
        "57P01" | "57P02" | "57P03" | "57P04" => ErrorKind::ConnectionLost,
        s if s.starts_with("08") => ErrorKind::ConnectionLost,
        _ if fatal => ErrorKind::ConnectionLost,
        _ => ErrorKind::Other,
    }
}

#[cfg(test)]
#[path = "response_tests.rs"]
mod tests;
