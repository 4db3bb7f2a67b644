//! Bulk loading, three ways, the fastest the server offers first:
//!
//! - MariaDB (10.2+): an `INSERT … VALUES (?, …)` prepared once and run
//!   for thousands of rows per command with COM_STMT_BULK_EXECUTE (the
//!   array binding of MariaDB's connectors): binary values, nothing for the
//!   server to parse. It costs MariaDB about 40% less CPU than LOAD DATA
//!   (whose field reader goes byte by byte), and, being an INSERT, takes
//!   InnoDB's auto-increment lock per row rather than for the whole
//!   statement, so that several connections can load one table at once
//!   (with the default `innodb_autoinc_lock_mode=1`, concurrent LOAD DATA
//!   into an AUTO_INCREMENT table run one after another).
//! - `LOAD DATA LOCAL INFILE` fed from the row generator: the client names
//!   a made-up file in the statement; the server answers with a request
//!   for that file (a 0xFB packet), and the client streams the rows as
//!   tab-separated lines in ~512 KiB packets, ends the "file" with an empty
//!   packet, and reads the OK packet with the number of rows loaded.
//!   Nothing touches the disk on the client side.
//! - multi-row INSERTs, when the server does not allow LOCAL.

use super::auth::{CLIENT_LOCAL_FILES, MARIADB_CLIENT_STMT_BULK_OPERATIONS};
use super::packet::put_lenenc;
use super::response::Keep;
use super::{
    text, MyConnection, COM_QUERY, COM_STMT_CLOSE, SERVER_STATUS_NO_BACKSLASH_ESCAPES, TYPE_DOUBLE,
    TYPE_LONGLONG, TYPE_NULL, TYPE_VAR_STRING,
};
use crate::driver::{DbError, DbResult, ErrorKind, Value};

/// The file name `bulk_load` asks the server to request; any other name the
/// server asks for is refused, so a server can never read a client file.
const LOAD_FILE: &str = "dbsweep-stream";

/// Payload size at which `bulk_load` sends a packet: large enough that the
/// per-packet costs vanish, well below the smallest `max_allowed_packet`
/// (1 MiB on old servers) plus one row.
const LOAD_CHUNK: usize = 512 * 1024;

// COM_STMT_BULK_EXECUTE: the command, its flag "parameter types follow",
// the indicators that precede each value, and the type sent for text that
// needs no conversion (see `bulk_types`).
pub(super) const COM_STMT_BULK_EXECUTE: u8 = 0xFA;
pub(super) const BULK_SEND_TYPES: u16 = 128;
const INDICATOR_NONE: u8 = 0;
const INDICATOR_NULL: u8 = 1;
const TYPE_BLOB: u8 = 0xFC;

/// Payload size at which `bulk_insert` ends a command: large enough that
/// the per-command costs vanish (about 20,000 sbtest rows), well below
/// MariaDB's default `max_allowed_packet` (16 MiB); halved if the server's
/// is smaller.
const BULK_CHUNK: usize = 4 << 20;

/// Character sets in which ASCII text is not the same bytes; every other
/// one MariaDB has is ASCII-compatible.
const NOT_ASCII_COMPATIBLE: [&str; 4] = ["ucs2", "utf16", "utf16le", "utf32"];

/// Rows per INSERT statement, and statements per transaction, when
/// `bulk_load` falls back to INSERTs.
const INSERT_ROWS: u64 = 1000;
const INSERTS_PER_TXN: u32 = 100;

impl MyConnection {
    /// Loads with COM_STMT_BULK_EXECUTE if the server offers it (MariaDB,
    /// see [`MyConnection::bulk_insert`]); otherwise with `LOAD DATA LOCAL
    /// INFILE`, streaming the rows as the file the server asks for (nothing
    /// touches the disk), or, if the server refuses that (its `local_infile`
    /// is off), with multi-row INSERTs, which are several times slower.
    /// Fails if the server skipped any row (LOCAL turns duplicate keys and
    /// bad values into warnings).
    pub(super) fn load(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &mut dyn FnMut(&mut Vec<Value>) -> bool,
    ) -> DbResult<u64> {
        if self.ext_caps & MARIADB_CLIENT_STMT_BULK_OPERATIONS != 0 {
            return self.bulk_insert(table, columns, rows);
        }
        if self.caps & CLIENT_LOCAL_FILES == 0 {
            return self.insert_rows(table, columns, rows);
        }
        self.command(COM_QUERY)?;
        self.io.wbuf.extend_from_slice(
            format!(
                "LOAD DATA LOCAL INFILE '{LOAD_FILE}' INTO TABLE {table} CHARACTER SET utf8mb4 \
                 FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' ({})",
                columns.join(", ")
            )
            .as_bytes(),
        );
        self.send()?;
        let r = self.read()?;
        let p = self.io.payload(r.clone());
        match p.first() {
            Some(0xFB) if &p[1..] == LOAD_FILE.as_bytes() => {}
            Some(0xFF) => {
                let e = self.server_error(r);
                if refuses_local_infile(&e.code) {
                    return self.insert_rows(table, columns, rows);
                }
                return Err(e);
            }
            _ => return Err(self.malformed("LOAD DATA LOCAL got no file request")),
        }
        let sent = self.stream_rows(columns.len(), rows)?;
        let loaded = self.read_result(&mut Keep::Count)?.affected;
        if loaded != sent {
            return Err(DbError::new(
                ErrorKind::Other,
                "",
                format!(
                    "the server loaded {loaded} of the {sent} rows sent into {table}; it skipped the others \
                     (duplicate keys or values it could not convert)"
                ),
            ));
        }
        Ok(sent)
    }

    /// Streams the rows to the server's LOCAL INFILE request as
    /// tab-separated lines in packets of about [`LOAD_CHUNK`] bytes, then
    /// the empty packet that ends the file. Returns the rows sent.
    fn stream_rows(
        &mut self,
        columns: usize,
        rows: &mut dyn FnMut(&mut Vec<Value>) -> bool,
    ) -> DbResult<u64> {
        let mut row = std::mem::take(&mut self.row);
        let mut sent = 0u64;
        self.io.begin_packet();
        let result = loop {
            row.clear();
            if !rows(&mut row) {
                break Ok(());
            }
            if row.len() != columns {
                break Err(format!(
                    "row {} has {} values for {columns} columns",
                    sent + 1,
                    row.len()
                ));
            }
            let w = &mut self.io.wbuf;
            let mut bad = None;
            for (i, v) in row.iter().enumerate() {
                if i > 0 {
                    w.push(b'\t');
                }
                if let Err(m) = text::put_load_field(w, v) {
                    bad = Some(m);
                }
            }
            if let Some(m) = bad {
                break Err(format!("row {}: {m}", sent + 1));
            }
            w.push(b'\n');
            sent += 1;
            if w.len() >= LOAD_CHUNK {
                self.send()?;
                self.io.begin_packet();
            }
        };
        self.row = row;
        if let Err(m) = result {
            // The rows already sent must not be committed: cutting the
            // connection makes the server abort (and roll back) the load.
            let _ = self.io.stream().shutdown();
            self.broken = true;
            return Err(DbError::new(
                ErrorKind::Other,
                "",
                format!("cannot load: {m}"),
            ));
        }
        if self.io.wbuf.len() > 4 {
            self.send()?;
        }
        self.io.begin_packet();
        self.send()?;
        Ok(sent)
    }

    /// Loads with COM_STMT_BULK_EXECUTE (MariaDB): `INSERT INTO table
    /// (columns) VALUES (?, …)` prepared once, then run for the rows in
    /// commands of about [`BULK_CHUNK`] bytes, in one transaction. Each
    /// command is sent before the previous one's answer is read, so that
    /// the next rows are generated while the server inserts the last ones.
    ///
    /// A command declares each parameter's type once, from its first row
    /// (see [`bulk_types`]); a row whose values do not fit those types
    /// starts a new command.
    fn bulk_insert(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &mut dyn FnMut(&mut Vec<Value>) -> bool,
    ) -> DbResult<u64> {
        let marks = vec!["?"; columns.len()].join(", ");
        let stmt = self.prepare(&format!(
            "INSERT INTO {table} ({}) VALUES ({marks})",
            columns.join(", ")
        ))?;
        let result = if stmt.params == columns.len() {
            self.bulk_rows(table, columns, stmt.id, rows)
        } else {
            Err(DbError::new(
                ErrorKind::Other,
                "",
                format!("{} columns gave {} parameters", columns.len(), stmt.params),
            ))
        };
        self.command(COM_STMT_CLOSE)?;
        self.io.wbuf.extend_from_slice(&stmt.id.to_le_bytes());
        self.send()?;
        result
    }

    /// The transaction and the commands of [`MyConnection::bulk_insert`].
    fn bulk_rows(
        &mut self,
        table: &str,
        columns: &[&str],
        stmt: u32,
        rows: &mut dyn FnMut(&mut Vec<Value>) -> bool,
    ) -> DbResult<u64> {
        let ascii_ok = self.ascii_columns(table, columns)?;
        let limit = self
            .query_rows("SELECT @@max_allowed_packet")?
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .and_then(|v| v.parse::<usize>().ok())
            .map_or(BULK_CHUNK, |max| BULK_CHUNK.min(max / 2));
        let mut row = std::mem::take(&mut self.row);
        row.clear();
        let mut more = rows(&mut row);
        let mut sent = 0u64;
        let mut loaded = 0u64;
        // A command sent whose answer is not read yet.
        let mut waiting = false;
        let result = (|| {
            self.query("BEGIN")?;
            while more {
                if row.len() != columns.len() {
                    return Err(DbError::new(
                        ErrorKind::Other,
                        "",
                        format!(
                            "row {} has {} values for {} columns",
                            sent + 1,
                            row.len(),
                            columns.len()
                        ),
                    ));
                }
                let types = bulk_types(&row, &ascii_ok);
                self.command(COM_STMT_BULK_EXECUTE)?;
                let w = &mut self.io.wbuf;
                w.extend_from_slice(&stmt.to_le_bytes());
                w.extend_from_slice(&BULK_SEND_TYPES.to_le_bytes());
                for &t in &types {
                    w.extend_from_slice(&[t, 0]);
                }
                loop {
                    put_bulk_row(w, &row);
                    sent += 1;
                    row.clear();
                    more = rows(&mut row);
                    if !more || w.len() >= limit || !fits(&row, &types) {
                        break;
                    }
                }
                self.send()?;
                if waiting {
                    loaded += self.read_result(&mut Keep::Count)?.affected;
                }
                waiting = true;
            }
            if waiting {
                waiting = false;
                loaded += self.read_result(&mut Keep::Count)?.affected;
            }
            self.query("COMMIT")?;
            Ok(())
        })();
        self.row = row;
        if let Err(mut e) = result {
            if waiting && !self.broken {
                // The answer to the last command is still to come.
                let _ = self.read_result(&mut Keep::Count);
            }
            if !self.broken {
                let _ = self.query("ROLLBACK");
                e.message = format!(
                    "the server loaded 0 of the {sent} rows sent into {table} (it rolled back): {}",
                    e.message
                );
            }
            return Err(e);
        }
        if loaded != sent {
            return Err(DbError::new(
                ErrorKind::Other,
                "",
                format!("the server inserted {loaded} of the {sent} rows sent into {table}"),
            ));
        }
        Ok(sent)
    }

    /// For each of `columns` of `table`, whether ASCII text can be sent to
    /// it as bytes, without a character set (the column's is ASCII
    /// compatible, or it is not a text column). False where unknown.
    fn ascii_columns(&mut self, table: &str, columns: &[&str]) -> DbResult<Vec<bool>> {
        let (schema, name) = match table.split_once('.') {
            Some((s, n)) => (format!("'{}'", unquote(s)), unquote(n)),
            None => ("DATABASE()".to_string(), unquote(table)),
        };
        let found = self.query_rows(&format!(
            "SELECT COLUMN_NAME, CHARACTER_SET_NAME FROM information_schema.COLUMNS \
             WHERE TABLE_SCHEMA = {schema} AND TABLE_NAME = '{name}'"
        ))?;
        Ok(columns
            .iter()
            .map(|c| {
                let c = unquote(c);
                found.iter().any(|r| match r.as_slice() {
                    [Some(n), cs] if n.eq_ignore_ascii_case(&c) => cs
                        .as_deref()
                        .is_none_or(|cs| !NOT_ASCII_COMPATIBLE.contains(&cs)),
                    _ => false,
                })
            })
            .collect())
    }

    /// The fallback of `bulk_load` for servers that refuse LOAD DATA LOCAL
    /// INFILE: multi-row INSERTs of up to [`INSERT_ROWS`] rows, committed
    /// every [`INSERTS_PER_TXN`] statements.
    fn insert_rows(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &mut dyn FnMut(&mut Vec<Value>) -> bool,
    ) -> DbResult<u64> {
        let head = format!("INSERT INTO {table} ({}) VALUES ", columns.join(", "));
        let mut row = std::mem::take(&mut self.row);
        let mut total = 0u64;
        let result = (|| {
            self.query("BEGIN")?;
            let mut statements = 0;
            loop {
                self.command(COM_QUERY)?;
                let no_backslash = self.status & SERVER_STATUS_NO_BACKSLASH_ESCAPES != 0;
                let w = &mut self.io.wbuf;
                w.extend_from_slice(head.as_bytes());
                let mut n = 0;
                while n < INSERT_ROWS && w.len() < LOAD_CHUNK {
                    row.clear();
                    if !rows(&mut row) {
                        break;
                    }
                    if row.len() != columns.len() {
                        return Err(DbError::new(
                            ErrorKind::Other,
                            "",
                            format!(
                                "row {} has {} values for {} columns",
                                total + n + 1,
                                row.len(),
                                columns.len()
                            ),
                        ));
                    }
                    w.extend_from_slice(if n == 0 { b"(" } else { b",(" });
                    for (i, v) in row.iter().enumerate() {
                        if i > 0 {
                            w.push(b',');
                        }
                        text::put_literal(w, v, no_backslash)
                            .map_err(|m| DbError::new(ErrorKind::Other, "", m))?;
                    }
                    w.push(b')');
                    n += 1;
                }
                if n == 0 {
                    break;
                }
                self.send()?;
                self.read_result(&mut Keep::Count)?;
                total += n;
                statements += 1;
                if statements % INSERTS_PER_TXN == 0 {
                    self.query("COMMIT")?;
                    self.query("BEGIN")?;
                }
            }
            self.query("COMMIT")
        })();
        self.row = row;
        if let Err(e) = result {
            let _ = self.query("ROLLBACK");
            return Err(e);
        }
        Ok(total)
    }
}

/// An identifier as information_schema spells it: without backquotes, and
/// safe inside a quoted literal.
fn unquote(name: &str) -> String {
    name.trim_matches('`')
        .replace('\'', "''")
        .replace('\\', "\\\\")
}

/// The parameter types a bulk command declares for rows like `row`:
/// integers as BIGINT, floats as DOUBLE, and text as a string in the
/// connection's character set, which the server converts to the column's,
/// one character at a time, or, when it is ASCII and the column's character
/// set is ASCII-compatible (`ascii_ok`), as BLOB: bytes stored as they are,
/// which are the same characters and spare the conversion (a fifth of the
/// server's cost of inserting sbtest rows into a latin1 table).
fn bulk_types(row: &[Value], ascii_ok: &[bool]) -> Vec<u8> {
    row.iter()
        .zip(ascii_ok)
        .map(|(v, &ok)| match v {
            Value::Null => TYPE_NULL,
            Value::Int(_) => TYPE_LONGLONG,
            Value::Float(_) => TYPE_DOUBLE,
            Value::Text(s) if ok && s.is_ascii() => TYPE_BLOB,
            Value::Text(_) => TYPE_VAR_STRING,
        })
        .collect()
}

/// Whether `row` can be sent in a bulk command declared with `types`.
fn fits(row: &[Value], types: &[u8]) -> bool {
    row.len() == types.len()
        && row.iter().zip(types).all(|(v, &t)| match v {
            Value::Null => true,
            Value::Int(_) => t == TYPE_LONGLONG,
            Value::Float(_) => t == TYPE_DOUBLE,
            Value::Text(s) => t == TYPE_VAR_STRING || (t == TYPE_BLOB && s.is_ascii()),
        })
}

/// Appends one row of a bulk command: per value, its indicator, then the
/// value in the binary protocol (none for NULL).
pub(super) fn put_bulk_row(w: &mut Vec<u8>, row: &[Value]) {
    for v in row {
        match v {
            Value::Null => w.push(INDICATOR_NULL),
            Value::Int(i) => {
                w.push(INDICATOR_NONE);
                w.extend_from_slice(&i.to_le_bytes());
            }
            Value::Float(f) => {
                w.push(INDICATOR_NONE);
                w.extend_from_slice(&f.to_le_bytes());
            }
            Value::Text(s) => {
                w.push(INDICATOR_NONE);
                put_lenenc(w, s.len() as u64);
                w.extend_from_slice(s.as_bytes());
            }
        }
    }
}

/// Whether an error answering LOAD DATA LOCAL means the server does not
/// allow it (local_infile off), as opposed to a problem with the statement.
fn refuses_local_infile(code: &str) -> bool {
    // ER_NOT_ALLOWED_COMMAND, MySQL's ER_CLIENT_LOCAL_FILES_DISABLED,
    // MariaDB's ER_LOAD_INFILE_CAPABILITY_DISABLED.
    matches!(code, "1148" | "3948" | "4166")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Value {
        Value::Text(s.to_string())
    }

    #[test]
    fn bulk_types_send_ascii_as_bytes_where_the_column_allows() {
        let row = [
            Value::Int(1),
            text("12-34"),
            text("ünï"),
            text("ab"),
            Value::Null,
        ];
        let types = bulk_types(&row, &[true, true, true, false, true]);
        assert_eq!(
            types,
            [
                TYPE_LONGLONG,
                TYPE_BLOB,
                TYPE_VAR_STRING,
                TYPE_VAR_STRING,
                TYPE_NULL
            ]
        );
        assert!(fits(&row, &types));
        // NULL always fits; non-ASCII text does not go as bytes; a value of
        // another kind, or another width, needs a new command.
        let nulls = [
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
        ];
        assert!(fits(&nulls, &types));
        let ascii = [
            Value::Int(2),
            text("x"),
            text("plain"),
            text("é"),
            Value::Null,
        ];
        assert!(fits(&ascii, &types));
        let not_ascii = [Value::Int(2), text("é"), text("x"), text("x"), Value::Null];
        assert!(!fits(&not_ascii, &types));
        let not_null = [
            Value::Int(2),
            text("x"),
            text("x"),
            text("x"),
            Value::Int(3),
        ];
        assert!(!fits(&not_null, &types));
        assert!(!fits(&row[..4], &types));
        assert!(!fits(&[Value::Float(1.0)], &[TYPE_LONGLONG]));
    }

    #[test]
    fn bulk_rows_are_indicator_then_binary_value() {
        let mut w = Vec::new();
        put_bulk_row(
            &mut w,
            &[Value::Int(-1), Value::Null, text("ab"), Value::Float(0.5)],
        );
        let mut want = vec![INDICATOR_NONE];
        want.extend_from_slice(&(-1i64).to_le_bytes());
        want.extend_from_slice(&[
            INDICATOR_NULL,
            INDICATOR_NONE,
            2,
            b'a',
            b'b',
            INDICATOR_NONE,
        ]);
        want.extend_from_slice(&0.5f64.to_le_bytes());
        assert_eq!(w, want);
        assert_eq!(unquote("`sb'x`"), "sb''x");
    }
}
