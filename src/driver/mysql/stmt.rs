//! Statements: server-side prepared statements with the binary protocol
//! (COM_STMT_PREPARE / COM_STMT_EXECUTE), or text with client-formatted
//! literals (COM_QUERY): the two modes of sysbench's `--db-ps-mode`. The
//! hot path: `execute_prepared` builds the command in the write buffer,
//! sends it with one write and reads the answer in place.

use super::*;

impl MyConnection {
    /// COM_STMT_PREPARE: the statement id and parameter count; the column
    /// and parameter definitions are skipped (execution never decodes rows).
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
        self.skip_definitions(u64::from(columns))?;
        Ok(Prepared {
            id,
            params: usize::from(params),
            bound: Vec::new(),
        })
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
        self.send()?;
        self.read_result(None)
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
        rows: Option<&mut Vec<Vec<Option<String>>>>,
    ) -> DbResult<Outcome> {
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
        self.send()?;
        self.read_result(rows)
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
