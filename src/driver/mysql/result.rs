//! Reading what the server answers: OK and ERR packets, result sets
//! (column definitions, rows counted and discarded, or decoded for the few
//! queries that need their values).

use super::*;

impl MyConnection {
    /// Reads a command's response to its end: an OK packet, an ERR packet,
    /// or result sets (counted, or decoded into `sink` when given), as many
    /// as the server announces with SERVER_MORE_RESULTS_EXISTS.
    pub(super) fn read_result(
        &mut self,
        mut sink: Option<&mut Vec<Vec<Option<String>>>>,
    ) -> DbResult<Outcome> {
        let mut out = Outcome::default();
        loop {
            let r = self.read()?;
            let p = self.io.payload(r.clone());
            match p.first() {
                Some(0x00) => {
                    let (affected, status) =
                        parse_ok(p).ok_or_else(|| self.malformed("bad OK packet"))?;
                    out.affected += affected;
                    self.status = status;
                }
                Some(0xFF) => return Err(self.server_error(r)),
                Some(0xFB) => {
                    // LOAD DATA LOCAL we did not start (e.g. in execute_sql):
                    // send an empty file; the server's OK or ERR follows.
                    self.io.begin_packet();
                    self.send()?;
                    continue;
                }
                Some(_) => {
                    let (columns, definitions) = self
                        .result_header(p)
                        .ok_or_else(|| self.malformed("bad column count"))?;
                    if definitions {
                        self.skip_definitions(columns)?;
                    } else if self.caps & CLIENT_DEPRECATE_EOF == 0 {
                        self.read()?;
                    }
                    out.rows += self.read_rows(sink.as_deref_mut(), columns)?;
                    out.result_set = true;
                }
                None => return Err(self.malformed("empty packet")),
            }
            if self.status & SERVER_MORE_RESULTS_EXISTS == 0 {
                return Ok(out);
            }
        }
    }

    /// A result set's first packet: its number of columns, and whether
    /// their definitions follow. With CACHE_METADATA a flag follows the
    /// count: 0 means the server skipped the definitions (unchanged since
    /// the statement's prepare or last execution).
    #[inline]
    pub(super) fn result_header(&self, p: &[u8]) -> Option<(u64, bool)> {
        let mut pos = 0;
        let columns = lenenc(p, &mut pos)?;
        let flag = p.get(pos).copied();
        let definitions =
            self.ext_caps & auth::MARIADB_CLIENT_CACHE_METADATA == 0 || flag.is_none_or(|f| f != 0);
        Some((columns, definitions))
    }

    /// Skips `n` column (or parameter) definitions and, without
    /// DEPRECATE_EOF, the EOF packet after them.
    pub(super) fn skip_definitions(&mut self, n: u64) -> DbResult<()> {
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

    /// Counts row packets (text or binary) until the packet ending the
    /// result set ([`end_of_rows`](Self::end_of_rows)).
    #[inline]
    pub(super) fn read_rows(
        &mut self,
        mut sink: Option<&mut Vec<Vec<Option<String>>>>,
        columns: u64,
    ) -> DbResult<u64> {
        let mut rows = 0u64;
        loop {
            let r = self.read()?;
            let p = self.io.payload(r.clone());
            if let Some(status) = self.end_of_rows(p) {
                self.status = status;
                return Ok(rows);
            }
            match p.first() {
                Some(0xFF) => return Err(self.server_error(r)),
                _ => {
                    rows += 1;
                    if let Some(sink) = sink.as_deref_mut() {
                        let row =
                            decode_text_row(p, columns).ok_or_else(|| self.malformed("bad row"))?;
                        sink.push(row);
                    }
                }
            }
        }
    }

    /// The server status of the packet ending a result set's rows (EOF,
    /// or with DEPRECATE_EOF an OK packet with the 0xFE header), or None
    /// for any other packet. A row never starts with 0xFE unless it is
    /// 16 MiB or longer, hence the length test.
    #[inline]
    pub(super) fn end_of_rows(&self, p: &[u8]) -> Option<u16> {
        match p.first() {
            Some(0xFE) if p.len() < MAX_PAYLOAD => Some(if self.caps & CLIENT_DEPRECATE_EOF != 0 {
                parse_ok(p).map_or(0, |(_, s)| s)
            } else {
                u16_at(p, 3)
            }),
            _ => None,
        }
    }

    /// Runs one SQL text and returns its rows as strings (NULL as None).
    /// For the driver's own bookkeeping queries, never the hot path.
    pub(super) fn query_rows(&mut self, sql: &str) -> DbResult<Vec<Vec<Option<String>>>> {
        self.command(COM_QUERY)?;
        self.io.wbuf.extend_from_slice(sql.as_bytes());
        self.send()?;
        let mut rows = Vec::new();
        self.read_result(Some(&mut rows))?;
        Ok(rows)
    }

    /// Runs a statement without parameters through COM_QUERY.
    pub(super) fn query(&mut self, sql: &str) -> DbResult<Outcome> {
        self.command(COM_QUERY)?;
        self.io.wbuf.extend_from_slice(sql.as_bytes());
        self.send()?;
        self.read_result(None)
    }
}

/// Affected rows and status flags of an OK packet (header 0x00 or 0xFE).
#[inline]
pub(super) fn parse_ok(p: &[u8]) -> Option<(u64, u16)> {
    let mut pos = 1;
    let affected = lenenc(p, &mut pos)?;
    lenenc(p, &mut pos)?; // last insert id
    Some((affected, u16_at(p, pos)))
}

/// An ERR packet: error number, `#` and SQLSTATE (protocol 4.1), message.
pub(super) fn parse_err(p: &[u8]) -> DbError {
    let code = u16_at(p, 1);
    let message = match p.get(3) {
        Some(b'#') => p.get(9..).unwrap_or(&[]),
        _ => p.get(3..).unwrap_or(&[]),
    };
    DbError::new(
        classify(code),
        code.to_string(),
        String::from_utf8_lossy(message).into_owned(),
    )
}

/// A text-protocol row's values as strings.
pub(super) fn decode_text_row(p: &[u8], columns: u64) -> Option<Vec<Option<String>>> {
    let mut pos = 0;
    (0..columns)
        .map(|_| {
            lenenc_str(p, &mut pos).map(|v| v.map(|b| String::from_utf8_lossy(b).into_owned()))
        })
        .collect()
}
