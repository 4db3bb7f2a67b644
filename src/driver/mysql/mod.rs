//! MySQL and MariaDB over their client/server protocol, implemented here
//! (no client library), on a blocking socket or an event loop's.
//!
//! Layout:
//! - [`frame`]: packet framing (length + sequence id, ≥16 MiB
//!   continuations) read without the socket: payloads whole where they lie,
//!   or passed over as they stream by.
//! - [`packet`]: the socket (TCP or unix), with one reusable read and one
//!   reusable write buffer; reads fill the buffer for the framing.
//! - [`auth`]: the greeting, the login packet, and the password scrambles of
//!   `mysql_native_password` and `caching_sha2_password`.
//! - [`text`]: `?` placeholders, SQL literals and `LOAD DATA` fields.
//! - [`load`]: bulk loading with `LOAD DATA LOCAL INFILE` (or INSERTs).
//! - [`response`]: a command's response read without the socket (fed
//!   bytes, it says when the response is complete and what it did): OK and
//!   ERR packets, result sets of both protocols, rows counted or kept. The
//!   same code under the blocking reader and the tests.
//! - [`result`]: the blocking reader that fills the buffer and feeds a
//!   response.
//! - [`stmt`]: prepared and text statements (the hot path).
//! - [`evented`]: the connection on an event loop (its socket
//!   non-blocking), on the same encoders and the same [`response`].
//! - this file: the connection, its commands, behind [`Connection`].
//!
//! Statements run either as server-side prepared statements with the binary
//! protocol (COM_STMT_PREPARE / COM_STMT_EXECUTE, the default), or as text
//! with client-formatted literals (COM_QUERY, [`PsMode::Disable`]), the two
//! modes of sysbench's `--db-ps-mode`.
//!
//! The hot path (one `execute`): the command is built in the write buffer
//! and sent with one `write`; the response is read in chunks of up to the
//! read buffer's size (usually one `read`) and parsed in place. Rows are
//! never decoded: fetch-and-discard counts row packets, as they stream by,
//! until the packet that ends the result set. Nothing is allocated once the
//! buffers have grown to the workload's sizes.

mod auth;
mod binary;
mod evented;
mod frame;
mod load;
mod packet;
mod response;
mod result;
mod rsa_key;
mod stmt;
mod text;

use std::io;
use std::net::{TcpStream, ToSocketAddrs};
use std::ops::Range;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use self::auth::CLIENT_DEPRECATE_EOF;
use self::packet::{lenenc, lenenc_str, put_lenenc, u16_at, u32_at, Io, Stream};
use self::response::parse_err;
use super::{
    Connection, DbError, DbResult, Dialect, ErrorKind, Fetch, Interrupter, Outcome, PsMode, Rows,
    ServerAddr, ServerInfo, StmtId, Value,
};

// Commands.
const COM_QUIT: u8 = 0x01;
const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;
const COM_STMT_CLOSE: u8 = 0x19;

// Server status flags (in OK and EOF packets).
const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;
const SERVER_STATUS_NO_BACKSLASH_ESCAPES: u16 = 0x0200;

// Column types of bound parameters (binary protocol).
const TYPE_DOUBLE: u8 = 0x05;
const TYPE_NULL: u8 = 0x06;
const TYPE_LONGLONG: u8 = 0x08;
const TYPE_VAR_STRING: u8 = 0xFD;

/// How long to wait for a TCP connection before giving up on an address
/// (the OS default, minutes for an unroutable one, is too long for a tool),
/// and for each of the server's answers while logging in (a server that
/// accepts connections but never greets must not hang dbsweep).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Client-side error codes, as libmysqlclient numbers them.
const CR_CONN_HOST_ERROR: &str = "2003";
const CR_CONNECTION_ERROR: &str = "2002";
const CR_SERVER_GONE: &str = "2006";
const CR_SERVER_LOST: &str = "2013";
const CR_MALFORMED_PACKET: &str = "2027";

/// A server-side prepared statement.
struct Prepared {
    /// The server's statement id.
    id: u32,
    /// Number of `?` placeholders the server counted.
    params: usize,
    /// The parameter types the server last received for the statement
    /// (empty before the first execution): an execution with the same
    /// types omits them, as MariaDB's and MySQL's C clients do, and the
    /// server keeps its conversions instead of setting them up again.
    bound: Vec<u8>,
    /// The result's columns, as the prepare (or the last execution that
    /// sent them) described them: a binary row decodes by them.
    columns: Vec<binary::ColumnType>,
    /// The server refused the statement in bulk (ER_UNSUPPORTED_PS: MariaDB
    /// 10.2 runs no DELETE so): its batches run one execution per row.
    no_bulk: bool,
}

/// A statement for the text protocol: its SQL and where its `?` are.
struct TextStmt {
    sql: String,
    holes: Vec<usize>,
}

/// One connection to a MySQL or MariaDB server.
pub struct MyConnection {
    io: Io,
    /// Capabilities in effect: what dbsweep asked for and the server offers.
    caps: u32,
    /// Status flags from the last OK or EOF packet (the backslash-escapes
    /// mode decides how strings are quoted in text mode).
    status: u16,
    ps_mode: PsMode,
    /// Prepared statements by [`StmtId`] (prepared mode).
    prepared: Vec<Prepared>,
    /// Statement texts by [`StmtId`] (text mode).
    texts: Vec<TextStmt>,
    /// Set after an I/O or protocol error: where the stream stands in the
    /// protocol is unknown, so every later call fails as ConnectionLost.
    broken: bool,
    /// Reused row buffer for `bulk_load`.
    row: Vec<Value>,
    /// MariaDB extended capabilities in effect.
    ext_caps: u32,
}

impl MyConnection {
    /// Connects and logs in; the connection dispatcher's entry point.
    pub fn connect(a: &ServerAddr) -> DbResult<Box<dyn Connection>> {
        Ok(Box::new(MyConnection::open(a)?))
    }

    /// Connects and logs in. Errors name the server, user and database and
    /// carry the OS's or the server's reason.
    pub fn open(a: &ServerAddr) -> DbResult<MyConnection> {
        let context = |e: DbError| {
            DbError::new(
                e.kind,
                e.code,
                format!(
                    "cannot connect to MySQL/MariaDB as {} (database '{}'): {}",
                    a.describe(),
                    a.database,
                    e.message
                ),
            )
        };
        let stream = match &a.socket {
            Some(path) => UnixStream::connect(path).map(Stream::Unix).map_err(|e| {
                DbError::new(
                    ErrorKind::ConnectionLost,
                    CR_CONNECTION_ERROR,
                    e.to_string(),
                )
            }),
            None => tcp_connect(&a.host, a.port).map(Stream::Tcp),
        }
        .map_err(context)?;
        let mut conn = MyConnection {
            io: Io::new(stream),
            caps: 0,
            status: 0,
            ps_mode: a.ps_mode,
            prepared: Vec::new(),
            texts: Vec::new(),
            broken: false,
            row: Vec::new(),
            ext_caps: 0,
        };
        let timeout = |c: &MyConnection, t| {
            c.io.stream()
                .set_read_timeout(t)
                .map_err(|e| DbError::new(ErrorKind::ConnectionLost, CR_SERVER_LOST, e.to_string()))
        };
        timeout(&conn, Some(CONNECT_TIMEOUT)).map_err(context)?;
        if let Err(e) = conn.login(a) {
            // No COM_QUIT in the middle of a login.
            conn.broken = true;
            return Err(context(e));
        }
        // Statements may run as long as they like: the engine's deadline
        // and the interrupter bound them.
        timeout(&conn, None).map_err(context)?;
        Ok(conn)
    }

    /// Reads one packet; an I/O error breaks the connection.
    #[inline]
    fn read(&mut self) -> DbResult<Range<usize>> {
        match self.io.read_packet() {
            Ok(r) => Ok(r),
            Err(e) => Err(self.lost(CR_SERVER_LOST, e)),
        }
    }

    /// Sends the packet in the write buffer; an I/O error breaks the connection.
    #[inline]
    fn send(&mut self) -> DbResult<()> {
        match self.io.send() {
            Ok(()) => Ok(()),
            Err(e) => Err(self.lost(CR_SERVER_GONE, e)),
        }
    }

    /// Starts a command, unless the connection is known to be broken.
    #[inline]
    fn command(&mut self, cmd: u8) -> DbResult<()> {
        if self.broken {
            return Err(DbError::new(
                ErrorKind::ConnectionLost,
                CR_SERVER_GONE,
                "the connection to the server was lost earlier",
            ));
        }
        self.io.begin_command(cmd);
        Ok(())
    }

    #[cold]
    fn lost(&mut self, code: &str, e: io::Error) -> DbError {
        self.broken = true;
        let message = match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => format!(
                "the server did not answer within {} s",
                CONNECT_TIMEOUT.as_secs()
            ),
            _ => format!("lost the connection to the server: {e}"),
        };
        DbError::new(ErrorKind::ConnectionLost, code, message)
    }

    #[cold]
    fn malformed(&mut self, what: &str) -> DbError {
        self.broken = true;
        DbError::new(
            ErrorKind::Other,
            CR_MALFORMED_PACKET,
            format!("malformed packet from the server: {what}"),
        )
    }

    /// The error in the ERR packet at `r`, classified.
    #[cold]
    fn server_error(&mut self, r: Range<usize>) -> DbError {
        let e = parse_err(self.io.payload(r));
        if e.kind == ErrorKind::ConnectionLost {
            self.broken = true;
        }
        e
    }
}

/// Connects over TCP to the first of `host`'s addresses that answers.
fn tcp_connect(host: &str, port: u16) -> DbResult<TcpStream> {
    let err =
        |e: io::Error| DbError::new(ErrorKind::ConnectionLost, CR_CONN_HOST_ERROR, e.to_string());
    let mut last = None;
    for addr in (host, port).to_socket_addrs().map_err(err)? {
        match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
            Ok(s) => {
                // Requests are single writes and responses are awaited:
                // Nagle's algorithm would only add delay.
                s.set_nodelay(true).map_err(err)?;
                return Ok(s);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(err(last.unwrap_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("host '{host}' has no address"),
        )
    })))
}

/// Maps a server error number onto the engine's error kinds.
fn classify(code: u16) -> ErrorKind {
    match code {
        1213 => ErrorKind::Deadlock,
        // Lock wait timeout; MySQL's NOWAIT lock failure.
        1205 | 3572 => ErrorKind::LockTimeout,
        // ER_DUP_ENTRY, ER_DUP_ENTRY_WITH_KEY_NAME.
        1062 | 1586 => ErrorKind::DuplicateKey,
        // ER_CHECKREAD, "record has changed since last read": a write
        // conflict under snapshot isolation, which sysbench ignores with
        // deadlocks by default.
        1020 => ErrorKind::Serialization,
        // MariaDB's max_statement_time, MySQL's max_execution_time.
        1969 | 3024 => ErrorKind::Timeout,
        // Server shutdown, connection killed (MariaDB), disconnected for
        // inactivity (MySQL), and the client codes for a lost server.
        1053 | 1927 | 4031 | 2006 | 2013 => ErrorKind::ConnectionLost,
        _ => ErrorKind::Other,
    }
}

/// Unblocks a call waiting on the socket by shutting the socket down; the
/// blocked call then fails as ConnectionLost and the connection is dead.
struct MyInterrupter(Stream);

impl Interrupter for MyInterrupter {
    fn interrupt(&self) {
        let _ = self.0.shutdown();
    }
}

impl Connection for MyConnection {
    fn dialect(&self) -> Dialect {
        Dialect::Mysql
    }

    fn prepare_all(&mut self, sql: &[String]) -> DbResult<()> {
        self.close_prepared()?;
        self.texts.clear();
        if self.ps_mode == PsMode::Prepared {
            for s in sql {
                let p = self.prepare(s)?;
                self.prepared.push(p);
            }
        }
        // Kept in both modes: fetching runs through the text protocol.
        self.texts = sql
            .iter()
            .map(|s| TextStmt {
                sql: s.clone(),
                holes: text::placeholders(s),
            })
            .collect();
        Ok(())
    }

    #[inline]
    fn execute(&mut self, id: StmtId, params: &[Value]) -> DbResult<Outcome> {
        match self.ps_mode {
            PsMode::Prepared => self.execute_prepared(id, params),
            PsMode::Disable => self.execute_text(id, params),
        }
    }

    fn execute_batch(&mut self, id: StmtId, params: &[Value], rows: usize) -> DbResult<Outcome> {
        match self.ps_mode {
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
        if self.ps_mode == PsMode::Prepared {
            return self.execute_prepared_fetch(id, params, fetch);
        }
        let mut rows = Vec::new();
        let out = self.execute_text_into(id, params, Some(&mut rows))?;
        fetch.values.clear();
        for r in &rows {
            fetch.push_text_row(r);
        }
        Ok(out)
    }

    fn execute_sql(&mut self, sql: &str) -> DbResult<Outcome> {
        self.query(sql)
    }

    fn begin(&mut self, _writes: bool) -> DbResult<Outcome> {
        self.query("BEGIN")
    }

    fn commit(&mut self) -> DbResult<Outcome> {
        self.query("COMMIT")
    }

    fn rollback(&mut self) -> DbResult<Outcome> {
        self.query("ROLLBACK")
    }

    fn table_exists(&mut self, table: &str) -> DbResult<bool> {
        let rows = self.query_rows(&format!(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = {}",
            text::quote(table)
        ))?;
        Ok(!rows.is_empty())
    }

    fn count_rows(&mut self, table: &str) -> DbResult<u64> {
        let rows = self.query_rows(&format!("SELECT COUNT(*) FROM {table}"))?;
        rows.first()
            .and_then(|r| r.first())
            .and_then(|v| v.as_deref())
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| {
                DbError::new(
                    ErrorKind::Other,
                    "",
                    format!("COUNT(*) of {table} returned no number"),
                )
            })
    }

    /// See [`load`]: LOAD DATA LOCAL INFILE, or INSERTs if the server
    /// refuses it.
    fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &mut dyn FnMut(&mut Vec<Value>) -> bool,
    ) -> DbResult<u64> {
        self.load(table, columns, rows)
    }

    fn server_info(&mut self) -> DbResult<ServerInfo> {
        let version = self
            .query_rows("SELECT VERSION()")?
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten())
            .unwrap_or_default();
        let mut settings: Vec<(String, String)> = self
            .query_rows("SHOW GLOBAL VARIABLES")?
            .into_iter()
            .filter_map(|mut r| {
                let value = r.pop()?.unwrap_or_default();
                Some((r.pop()??, value))
            })
            .collect();
        let mode = match self.ps_mode {
            PsMode::Prepared => "prepared",
            PsMode::Disable => "disable",
        };
        settings.push(("ps_mode".to_string(), mode.to_string()));
        // So is the encryption: TLS's version and cipher, or "off".
        settings.push((
            "tls".to_string(),
            crate::driver::tls::describe(self.io.stream()),
        ));
        Ok(ServerInfo { version, settings })
    }

    fn query_text(&mut self, sql: &str) -> DbResult<Rows> {
        self.query_rows(sql)
    }

    fn interrupter(&self) -> Option<Box<dyn Interrupter>> {
        let s = self.io.stream().try_clone().ok()?;
        Some(Box::new(MyInterrupter(s)))
    }

    fn into_evented(
        self: Box<Self>,
    ) -> Result<Box<dyn crate::driver::evented::Evented>, Box<dyn Connection>> {
        if self.broken || self.io.stream().set_nonblocking(true).is_err() {
            return Err(self);
        }
        Ok(Box::new(evented::MyEvented::new(*self)))
    }
}

impl Drop for MyConnection {
    /// Says goodbye (COM_QUIT) so the server ends the session at once
    /// instead of noticing a dropped socket later.
    fn drop(&mut self) {
        if self.command(COM_QUIT).is_ok() {
            let _ = self.io.send();
        }
    }
}

#[cfg(test)]
mod tests;
