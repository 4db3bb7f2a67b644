//! Statements: server-side prepared statements with the binary protocol
//! (COM_STMT_PREPARE / COM_STMT_EXECUTE), or text with client-formatted
//! literals (COM_QUERY): the two modes of sysbench's `--db-ps-mode`. The
//! hot path: `execute_prepared` builds the command in the write buffer,
//! sends it with one write and reads the answer in place.

use super::binary::{self, ColumnType};
use super::load::{put_bulk_row, BULK_SEND_TYPES, COM_STMT_BULK_EXECUTE};
use super::response::Keep;
use super::*;
use crate::driver::{batch_one_by_one, batch_width};

/// "This command is not supported in the prepared statement protocol
/// yet": a bulk execution of a command the server runs only one by one.
pub(super) const ER_UNSUPPORTED_PS: &str = "1295";

impl MyConnection {
    /// COM_STMT_PREPARE: the statement id, its parameter count and its
    /// result's column types (for fetching binary rows); the parameter
    /// definitions are skipped.
    pub(super) fn prepare(&mut self, sql: &str) -> DbResult<Prepared> {
        self.command(COM_STMT_PREPARE)?;
        self.io.wbuf.extend_from_slice(sql.as_bytes());
        self.send()?;
        let r = self.read()?;
        let p = self.io.payload(r.clone());
        match p.first() {
            Some(0x00) if p.len() >= 9 => {}
            Some(0xFF) => return Err(self.server_error(r)),
            _ => return Err(self.malformed("bad COM_STMT_PREPARE response")),
        }
        let id = u32_at(p, 1);
        let columns = u16_at(p, 5);
        let params = u16_at(p, 7);
        self.skip_definitions(u64::from(params))?;
        let mut types = Vec::new();
        self.read_definitions(u64::from(columns), &mut types)?;
        Ok(Prepared {
            id,
            params: usize::from(params),
            bound: Vec::new(),
            no_bulk: false,
            columns: types,
        })
    }

    /// Skips `n` parameter definitions and, without DEPRECATE_EOF, the EOF
    /// packet after them.
    fn skip_definitions(&mut self, n: u64) -> DbResult<()> {
        if n == 0 {
            return Ok(());
        }
        for _ in 0..n {
            self.read()?;
        }
        if self.caps & CLIENT_DEPRECATE_EOF == 0 {
            self.read()?;
        }
        Ok(())
    }

    /// Reads `n` column definitions into `types` and, without
    /// DEPRECATE_EOF, the EOF packet after them.
    fn read_definitions(&mut self, n: u64, types: &mut Vec<ColumnType>) -> DbResult<()> {
        types.clear();
        if n == 0 {
            return Ok(());
        }
        for _ in 0..n {
            let r = self.read()?;
            match binary::column_type(self.io.payload(r)) {
                Some(t) => types.push(t),
                None => return Err(self.malformed("bad column definition")),
            }
        }
        if self.caps & CLIENT_DEPRECATE_EOF == 0 {
            self.read()?;
        }
        Ok(())
    }

    /// Frees the server-side statements (COM_STMT_CLOSE has no response).
    pub(super) fn close_prepared(&mut self) -> DbResult<()> {
        for i in 0..self.prepared.len() {
            let id = self.prepared[i].id;
            self.command(COM_STMT_CLOSE)?;
            self.io.wbuf.extend_from_slice(&id.to_le_bytes());
            self.send()?;
        }
        self.prepared.clear();
        Ok(())
    }

    /// COM_STMT_EXECUTE, with the parameters' types when they differ from
    /// those the server last received for the statement (values may change
    /// type between executions, e.g. to NULL).
    pub(super) fn execute_prepared(&mut self, id: StmtId, params: &[Value]) -> DbResult<Outcome> {
        self.send_execute(id, params)?;
        self.read_prepared_result(id, None)
    }

    /// [`execute_prepared`](Self::execute_prepared), keeping what `fetch`
    /// asks for of the binary rows.
    pub(super) fn execute_prepared_fetch(
        &mut self,
        id: StmtId,
        params: &[Value],
        fetch: &mut Fetch,
    ) -> DbResult<Outcome> {
        self.send_execute(id, params)?;
        fetch.values.clear();
        self.read_prepared_result(id, Some(fetch))
    }

    /// A batch: with MariaDB's COM_STMT_BULK_EXECUTE, one command for
    /// all rows, the parameters' types declared once from the first row
    /// (as MariaDB's connectors do for JDBC's `executeBatch`); rows whose
    /// values are not of those types (a NULL after a value is), text mode
    /// and servers without bulk operations run one execution per row. The
    /// rows go in one packet: a batch is a transaction's few rows, not a
    /// load (that is `bulk_load`).
    pub(super) fn execute_batch_prepared(
        &mut self,
        id: StmtId,
        params: &[Value],
        rows: usize,
    ) -> DbResult<Outcome> {
        if rows == 0 {
            batch_width(params.len(), rows)?;
            return Ok(Outcome::default());
        }
        if !self.encode_bulk(id, params, rows)? {
            return batch_one_by_one(self, id, params, rows);
        }
        self.send()?;
        match self.read_result(&mut Keep::Count) {
            // Refused before running anything: the same rows one by one,
            // and this statement so from now on.
            Err(e) if e.code == ER_UNSUPPORTED_PS => {
                self.prepared[id].no_bulk = true;
                batch_one_by_one(self, id, params, rows)
            }
            done => done,
        }
    }

    /// Builds the COM_STMT_BULK_EXECUTE of a batch of `rows` (at least
    /// one) in the write buffer; false, having built nothing, when the
    /// batch must run one execution per row instead (see
    /// [`execute_batch_prepared`](Self::execute_batch_prepared)).
    pub(super) fn encode_bulk(
        &mut self,
        id: StmtId,
        params: &[Value],
        rows: usize,
    ) -> DbResult<bool> {
        let width = batch_width(params.len(), rows)?;
        let Some(p) = self.prepared.get(id) else {
            return Err(no_statement(id, self.prepared.len()));
        };
        if p.params != width {
            return Err(param_count(id, p.params, width));
        }
        let bulk = self.ext_caps & auth::MARIADB_CLIENT_STMT_BULK_OPERATIONS != 0;
        if !bulk || p.no_bulk || rows < 2 || width == 0 {
            return Ok(false);
        }
        let first = &params[..width];
        let fits = params.chunks(width).all(|row| {
            row.iter()
                .zip(first)
                .all(|(v, f)| matches!(v, Value::Null) || param_type(v) == param_type(f))
        });
        if !fits {
            return Ok(false);
        }
        let stmt = self.prepared[id].id;
        // The server now holds the bulk's types; the next COM_STMT_EXECUTE
        // sends its own.
        self.prepared[id].bound.clear();
        self.command(COM_STMT_BULK_EXECUTE)?;
        let w = &mut self.io.wbuf;
        w.extend_from_slice(&stmt.to_le_bytes());
        w.extend_from_slice(&BULK_SEND_TYPES.to_le_bytes());
        for v in first {
            w.extend_from_slice(&[param_type(v), 0]);
        }
        for row in params.chunks(width) {
            put_bulk_row(w, row);
        }
        Ok(true)
    }

    /// Builds and sends the COM_STMT_EXECUTE of statement `id`.
    #[inline]
    fn send_execute(&mut self, id: StmtId, params: &[Value]) -> DbResult<()> {
        self.encode_execute(id, params)?;
        self.send()
    }

    /// Builds the COM_STMT_EXECUTE of statement `id` in the write buffer.
    pub(super) fn encode_execute(&mut self, id: StmtId, params: &[Value]) -> DbResult<()> {
        let Some(&Prepared {
            id: stmt,
            params: n,
            ..
        }) = self.prepared.get(id)
        else {
            return Err(no_statement(id, self.prepared.len()));
        };
        if n != params.len() {
            return Err(param_count(id, n, params.len()));
        }
        self.command(COM_STMT_EXECUTE)?;
        let w = &mut self.io.wbuf;
        w.extend_from_slice(&stmt.to_le_bytes());
        w.push(0); // no cursor
        w.extend_from_slice(&1u32.to_le_bytes()); // iteration count
        if n > 0 {
            let bitmap = w.len();
            w.resize(bitmap + n.div_ceil(8), 0);
            let bound = &mut self.prepared[id].bound;
            // One pass for the null bitmap and whether the types changed.
            let mut same = bound.len() == n;
            for (i, v) in params.iter().enumerate() {
                let t = param_type(v);
                if t == TYPE_NULL {
                    w[bitmap + i / 8] |= 1 << (i % 8);
                }
                same &= bound.get(i) == Some(&t);
            }
            if same {
                w.push(0); // types as last sent
            } else {
                w.push(1); // types follow
                bound.clear();
                for v in params {
                    let t = param_type(v);
                    bound.push(t);
                    w.extend_from_slice(&[t, 0]);
                }
            }
            for v in params {
                match v {
                    Value::Null => {}
                    Value::Int(i) => w.extend_from_slice(&i.to_le_bytes()),
                    Value::Float(f) => w.extend_from_slice(&f.to_le_bytes()),
                    Value::Text(s) => {
                        put_lenenc(w, s.len() as u64);
                        w.extend_from_slice(s.as_bytes());
                    }
                }
            }
        }
        Ok(())
    }

    /// Reads the answer to statement `id`'s execution: an OK or ERR packet,
    /// or a binary result set whose rows `fetch`, if given, keeps as it
    /// asks. The column definitions the server sends replace the
    /// prepare's ([`Keep::Binary`]).
    #[inline]
    fn read_prepared_result(&mut self, id: StmtId, fetch: Option<&mut Fetch>) -> DbResult<Outcome> {
        let mut columns = std::mem::take(&mut self.prepared[id].columns);
        let read = self.read_result(&mut Keep::Binary {
            columns: &mut columns,
            fetch,
        });
        self.prepared[id].columns = columns;
        read
    }

    /// COM_QUERY with the statement's text and each `?` replaced by its
    /// parameter as a literal.
    pub(super) fn execute_text(&mut self, id: StmtId, params: &[Value]) -> DbResult<Outcome> {
        self.execute_text_into(id, params, None)
    }

    /// [`execute_text`](Self::execute_text), decoding the rows into `rows`
    /// when given.
    pub(super) fn execute_text_into(
        &mut self,
        id: StmtId,
        params: &[Value],
        rows: Option<&mut Rows>,
    ) -> DbResult<Outcome> {
        self.encode_text(id, params)?;
        self.send()?;
        match rows {
            Some(rows) => self.read_result(&mut Keep::Text(rows)),
            None => self.read_result(&mut Keep::Count),
        }
    }

    /// Builds the COM_QUERY of statement `id` in the write buffer, each
    /// `?` replaced by its parameter as a literal.
    pub(super) fn encode_text(&mut self, id: StmtId, params: &[Value]) -> DbResult<()> {
        let Some(n) = self.texts.get(id).map(|t| t.holes.len()) else {
            return Err(no_statement(id, self.texts.len()));
        };
        if n != params.len() {
            return Err(param_count(id, n, params.len()));
        }
        self.command(COM_QUERY)?;
        let no_backslash = self.status & SERVER_STATUS_NO_BACKSLASH_ESCAPES != 0;
        let t = &self.texts[id];
        let w = &mut self.io.wbuf;
        let sql = t.sql.as_bytes();
        let mut from = 0;
        for (&at, v) in t.holes.iter().zip(params) {
            w.extend_from_slice(&sql[from..at]);
            text::put_literal(w, v, no_backslash)
                .map_err(|m| DbError::new(ErrorKind::Other, "", m))?;
            from = at + 1;
        }
        w.extend_from_slice(&sql[from..]);
        Ok(())
    }
}

/// The binary-protocol type a parameter is sent as.
#[inline]
fn param_type(v: &Value) -> u8 {
    match v {
        Value::Null => TYPE_NULL,
        Value::Int(_) => TYPE_LONGLONG,
        Value::Float(_) => TYPE_DOUBLE,
        Value::Text(_) => TYPE_VAR_STRING,
    }
}

#[cold]
fn no_statement(id: StmtId, n: usize) -> DbError {
    DbError::new(
        ErrorKind::Other,
        "",
        format!("statement {id} was not prepared ({n} statements are)"),
    )
}

#[cold]
fn param_count(id: StmtId, want: usize, got: usize) -> DbError {
    DbError::new(
        ErrorKind::Other,
        "",
        format!("statement {id} takes {want} parameters, {got} given"),
    )
}
