//! Bulk loading: `LOAD DATA LOCAL INFILE` fed from the row generator, or
//! multi-row INSERTs when the server does not allow LOCAL.
//!
//! The client names a made-up file in the statement; the server answers
//! with a request for that file (a 0xFB packet), and the client streams the
//! rows as tab-separated lines in ~512 KiB packets, ends the "file" with an
//! empty packet, and reads the OK packet with the number of rows loaded.
//! Nothing touches the disk on the client side.

use super::auth::CLIENT_LOCAL_FILES;
use super::{text, MyConnection, COM_QUERY, SERVER_STATUS_NO_BACKSLASH_ESCAPES};
use crate::driver::{DbError, DbResult, ErrorKind, Value};

/// The file name `bulk_load` asks the server to request; any other name the
/// server asks for is refused, so a server can never read a client file.
const LOAD_FILE: &str = "dbsweep-stream";

/// Payload size at which `bulk_load` sends a packet: large enough that the
/// per-packet costs vanish, well below the smallest `max_allowed_packet`
/// (1 MiB on old servers) plus one row.
const LOAD_CHUNK: usize = 512 * 1024;

/// Rows per INSERT statement, and statements per transaction, when
/// `bulk_load` falls back to INSERTs.
const INSERT_ROWS: u64 = 1000;
const INSERTS_PER_TXN: u32 = 100;

impl MyConnection {
    /// Loads with `LOAD DATA LOCAL INFILE`, streaming the rows as the file
    /// the server asks for (nothing touches the disk). If the server refuses
    /// (its `local_infile` is off), falls back to multi-row INSERTs, which
    /// are several times slower. Fails if the server skipped any row (LOCAL
    /// turns duplicate keys and bad values into warnings).
    pub(super) fn load(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &mut dyn FnMut(&mut Vec<Value>) -> bool,
    ) -> DbResult<u64> {
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
        let loaded = self.read_result(None)?.affected;
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
            self.io.stream().shutdown();
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
                self.read_result(None)?;
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

/// Whether an error answering LOAD DATA LOCAL means the server does not
/// allow it (local_infile off), as opposed to a problem with the statement.
fn refuses_local_infile(code: &str) -> bool {
    // ER_NOT_ALLOWED_COMMAND, MySQL's ER_CLIENT_LOCAL_FILES_DISABLED,
    // MariaDB's ER_LOAD_INFILE_CAPABILITY_DISABLED.
    matches!(code, "1148" | "3948" | "4166")
}
