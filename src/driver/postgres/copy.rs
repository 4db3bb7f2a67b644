//! Loading rows with `COPY … FROM STDIN`: binary where every column's type
//! allows it, text otherwise (`Connection::bulk_load` of PostgreSQL).

use super::*;

impl PgConnection {
    /// The binary COPY type of each of `columns` of `table`, or None if
    /// one has none (or the table or a column cannot be found: the COPY
    /// itself then reports it).
    fn binary_types(&mut self, table: &str, columns: &[&str]) -> DbResult<Option<Vec<BinaryType>>> {
        let mut rows = TextRows::new();
        self.simple(
            &format!(
                "SELECT attname, atttypid FROM pg_attribute WHERE attrelid = to_regclass('{}') \
                 AND attnum > 0 AND NOT attisdropped",
                table.replace('\'', "''")
            ),
            Some(&mut rows),
        )?;
        let rows = rows.into_strings();
        let oid = |column: &str| {
            let name = column.trim_matches('"');
            rows.iter().find_map(|r| match (r.first(), r.get(1)) {
                (Some(Some(n)), Some(Some(oid))) if n == name || *n == name.to_lowercase() => {
                    oid.parse::<u32>().ok()
                }
                _ => None,
            })
        };
        Ok(columns
            .iter()
            .map(|c| oid(c).and_then(BinaryType::from_oid))
            .collect())
    }

    /// `COPY table (columns) FROM STDIN`, rows streamed in CopyData
    /// messages of about [`COPY_CHUNK`] bytes, one write each.
    ///
    /// Binary COPY when every column has a [`BinaryType`] and the first
    /// row's values are of those types (`binary.rs`): the server then
    /// parses no text, which takes about a quarter off its cost of loading
    /// sbtest rows. Otherwise text COPY. (A later row whose value does not fit its
    /// column's type ends the load with an error, as a server error would.)
    ///
    /// Between chunks the socket is polled: the server only speaks during
    /// COPY to report an error, which then ends the load at once instead of
    /// after the last row.
    pub(super) fn copy_in(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &mut dyn FnMut(&mut Vec<Value>) -> bool,
    ) -> DbResult<u64> {
        let types = self.binary_types(table, columns)?;
        // The first row is made before the COPY starts: it decides the format.
        let mut row = Vec::with_capacity(columns.len());
        let mut pending = rows(&mut row);
        let binary = match &types {
            Some(t) if pending => {
                t.len() == row.len() && t.iter().zip(&row).all(|(t, v)| t.takes(v))
            }
            _ => false,
        };
        let types = if binary {
            types.unwrap_or_default()
        } else {
            Vec::new()
        };
        let sql = format!(
            "COPY {table} ({}) FROM STDIN{}",
            columns.join(", "),
            if binary { " (FORMAT binary)" } else { "" }
        );
        frontend::query(&sql, &mut self.wire.out).map_err(other)?;
        self.wire.send()?;
        self.wire.start_copy()?;
        let mut header = binary;
        let mut sent = 0u64;
        loop {
            let out = &mut self.wire.out;
            out.clear();
            // CopyData header; the length is filled in once the chunk is full.
            out.put_u8(b'd');
            out.put_u32(0);
            if header {
                out.put_slice(binary::BINARY_COPY_HEADER);
                header = false;
            }
            let mut done = false;
            let mut bad = None;
            while out.len() < COPY_CHUNK {
                if pending {
                    pending = false;
                } else {
                    row.clear();
                    if !rows(&mut row) {
                        done = true;
                        break;
                    }
                }
                sent += 1;
                if binary {
                    if row.len() != types.len() {
                        bad = Some(format!(
                            "row {sent} has {} values for {} columns",
                            row.len(),
                            types.len()
                        ));
                        break;
                    }
                    out.put_i16(types.len() as i16);
                    for (v, t) in row.iter().zip(&types) {
                        if let Err(m) = binary::push_binary_field(out, *t, v) {
                            bad = Some(format!("row {sent}: {m}"));
                        }
                    }
                    if bad.is_some() {
                        break;
                    }
                } else {
                    for (i, v) in row.iter().enumerate() {
                        if i > 0 {
                            out.put_u8(b'\t');
                        }
                        text::push_copy_field(out, v);
                    }
                    out.put_u8(b'\n');
                }
            }
            if let Some(m) = bad {
                // Nothing of this chunk is sent; CopyFail makes the server
                // abort (and roll back) the COPY.
                out.clear();
                frontend::copy_fail(&m, out).map_err(other)?;
                self.wire.send()?;
                let _ = self.wire.finish(&mut Outcome::default(), false, None);
                return Err(DbError::new(
                    ErrorKind::Other,
                    "",
                    format!("cannot load {table}: {m}"),
                ));
            }
            if done && binary {
                out.put_i16(-1); // the file trailer
            }
            if out.len() == 5 {
                out.clear();
            } else {
                let len = (out.len() - 1) as u32;
                out[1..5].copy_from_slice(&len.to_be_bytes());
            }
            if done {
                frontend::copy_done(out);
            }
            self.wire.send()?;
            if done {
                break;
            }
            if let Some(e) = self.wire.copy_error()? {
                // The server has given up on the COPY and sent its
                // ReadyForQuery; whatever else it said is of no interest.
                let _ = self.wire.finish(&mut Outcome::default(), false, None);
                return Err(e);
            }
        }
        let mut o = Outcome::default();
        self.wire.finish(&mut o, false, None)?;
        Ok(o.affected)
    }
}
