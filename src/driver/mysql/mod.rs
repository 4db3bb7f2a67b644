//! MySQL and MariaDB over their client/server protocol, implemented here on
//! a blocking socket (no client library).
//!
//! Layout:
//! - [`packet`]: framing (length + sequence id, ≥16 MiB continuations) over
//!   TCP or a unix socket, with one reusable read and one reusable write
//!   buffer.
//! - [`auth`]: the greeting, the login packet, and the password scrambles of
//!   `mysql_native_password` and `caching_sha2_password`.
//! - [`text`]: `?` placeholders, SQL literals and `LOAD DATA` fields.
//! - [`load`]: bulk loading with `LOAD DATA LOCAL INFILE` (or INSERTs).
//! - this file: commands and their responses, behind [`Connection`].
//!
//! Statements run either as server-side prepared statements with the binary
//! protocol (COM_STMT_PREPARE / COM_STMT_EXECUTE, the default), or as text
//! with client-formatted literals (COM_QUERY, [`PsMode::Disable`]), the two
//! modes of sysbench's `--db-ps-mode`.
//!
//! The hot path (one `execute`): the command is built in the write buffer
//! and sent with one `write`; the response is read in chunks of up to the
//! read buffer's size (usually one `read`) and parsed in place. Rows are
//! never decoded: fetch-and-discard counts row packets until the packet that
//! ends the result set. Nothing is allocated once the buffers have grown to
//! the workload's sizes.

mod auth;
mod load;
mod packet;
mod text;

use std::io;
use std::net::{TcpStream, ToSocketAddrs};
use std::ops::Range;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use self::auth::{Handshake, CACHING_SHA2, CLIENT_DEPRECATE_EOF, NATIVE};
use self::packet::{lenenc, lenenc_str, put_lenenc, u16_at, u32_at, Io, Stream, MAX_PAYLOAD};
use super::{
    Connection, DbError, DbResult, Dialect, ErrorKind, Interrupter, Outcome, PsMode, ServerAddr,
    ServerInfo, StmtId, Value,
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

    /// The connection phase: greeting, login packet, then as many rounds of
    /// plugin switching or extra authentication data as the server wants.
    fn login(&mut self, a: &ServerAddr) -> DbResult<()> {
        let r = self.read()?;
        let p = self.io.payload(r.clone());
        if p.first() == Some(&0xFF) {
            return Err(self.server_error(r));
        }
        let hs = Handshake::parse(p).map_err(|m| self.malformed(&m))?;
        let needed = auth::CLIENT_PROTOCOL_41 | auth::CLIENT_SECURE_CONNECTION;
        if hs.capabilities & needed != needed {
            return Err(DbError::new(
                ErrorKind::Other,
                "",
                format!(
                    "server {} is too old: it does not speak the 4.1 protocol",
                    hs.server_version
                ),
            ));
        }
        self.caps = auth::WANTED & hs.capabilities;
        self.ext_caps = (auth::MARIADB_CLIENT_STMT_BULK_OPERATIONS
            | auth::MARIADB_CLIENT_CACHE_METADATA)
            & hs.ext_capabilities;
        if a.database.is_empty() {
            self.caps &= !auth::CLIENT_CONNECT_WITH_DB;
        }
        let password = a.password.as_deref().unwrap_or("");
        let unsupported = |plugin: &str| {
            DbError::new(
                ErrorKind::Other,
                "2059",
                format!(
                    "the account uses the authentication plugin '{plugin}', which dbsweep does not speak; \
                     use mysql_native_password, e.g. ALTER USER '{}'@'%' IDENTIFIED WITH mysql_native_password BY '…' \
                     (MariaDB: IDENTIFIED VIA mysql_native_password USING PASSWORD('…'))",
                    a.user
                ),
            )
        };
        // Answer the server's plugin if dbsweep speaks it; otherwise answer
        // as mysql_native_password and let the server switch.
        let mut plugin = hs.plugin.clone();
        let data = match auth::scramble(&plugin, password, &hs.nonce) {
            Some(d) => d,
            None => {
                plugin = NATIVE.to_string();
                auth::scramble(NATIVE, password, &hs.nonce).expect("native is supported")
            }
        };
        self.io.begin_packet();
        auth::put_response(
            &mut self.io.wbuf,
            self.caps,
            self.ext_caps,
            &a.user,
            &data,
            &a.database,
            &plugin,
        );
        self.send()?;
        loop {
            let r = self.read()?;
            let p = self.io.payload(r.clone());
            match p.first() {
                Some(0x00) => {
                    if let Some((_, status)) = parse_ok(p) {
                        self.status = status;
                    }
                    return Ok(());
                }
                Some(0xFF) => return Err(self.server_error(r)),
                Some(0xFE) if p.len() == 1 => return Err(unsupported("mysql_old_password")),
                Some(0xFE) => {
                    // AuthSwitchRequest: plugin name, NUL, the new nonce.
                    let body = &p[1..];
                    let nul = body.iter().position(|&b| b == 0).unwrap_or(body.len());
                    plugin = String::from_utf8_lossy(&body[..nul]).into_owned();
                    let nonce = body.get(nul + 1..).unwrap_or(&[]);
                    let data = auth::scramble(&plugin, password, nonce)
                        .ok_or_else(|| unsupported(&plugin))?;
                    self.io.begin_packet();
                    self.io.wbuf.extend_from_slice(&data);
                    self.send()?;
                }
                Some(0x01) if plugin == CACHING_SHA2 => match p.get(1) {
                    // Fast authentication succeeded; the OK packet follows.
                    Some(3) => {}
                    // Full authentication: the server wants the password
                    // itself, safe to send only over a local socket.
                    Some(4) if matches!(self.io.stream(), Stream::Unix(_)) => {
                        self.io.begin_packet();
                        self.io.wbuf.extend_from_slice(password.as_bytes());
                        self.io.wbuf.push(0);
                        self.send()?;
                    }
                    Some(4) => {
                        return Err(DbError::new(
                            ErrorKind::Other,
                            "2061",
                            "the server wants a full caching_sha2_password exchange (the password is not \
                             in its cache), which needs TLS or an RSA key exchange that dbsweep does not \
                             implement: connect once through the unix socket (?socket=/path/mysqld.sock) \
                             to fill the cache, or give the account mysql_native_password"
                                .to_string(),
                        ))
                    }
                    _ => return Err(self.malformed("unexpected caching_sha2_password message")),
                },
                _ => return Err(self.malformed("unexpected packet during authentication")),
            }
        }
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

    /// Reads a command's response to its end: an OK packet, an ERR packet,
    /// or result sets (counted, or decoded into `sink` when given), as many
    /// as the server announces with SERVER_MORE_RESULTS_EXISTS.
    fn read_result(
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
                    let mut pos = 0;
                    let count = lenenc(p, &mut pos);
                    // With CACHE_METADATA a flag follows the count: 0 means
                    // the server skipped the column definitions (unchanged
                    // since the statement's prepare or last execution),
                    // which this driver never decodes anyway.
                    let flag = p.get(pos).copied();
                    let columns = count.ok_or_else(|| self.malformed("bad column count"))?;
                    let definitions = self.ext_caps & auth::MARIADB_CLIENT_CACHE_METADATA == 0
                        || flag.is_none_or(|f| f != 0);
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

    /// Skips `n` column (or parameter) definitions and, without
    /// DEPRECATE_EOF, the EOF packet after them.
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

    /// Counts row packets (text or binary) until the packet ending the
    /// result set: EOF, or with DEPRECATE_EOF an OK packet with the 0xFE
    /// header. A row never starts with 0xFE unless it is 16 MiB or longer,
    /// hence the length test.
    #[inline]
    fn read_rows(
        &mut self,
        mut sink: Option<&mut Vec<Vec<Option<String>>>>,
        columns: u64,
    ) -> DbResult<u64> {
        let mut rows = 0u64;
        loop {
            let r = self.read()?;
            let p = self.io.payload(r.clone());
            match p.first() {
                Some(0xFE) if p.len() < MAX_PAYLOAD => {
                    self.status = if self.caps & CLIENT_DEPRECATE_EOF != 0 {
                        parse_ok(p).map_or(0, |(_, s)| s)
                    } else {
                        u16_at(p, 3)
                    };
                    return Ok(rows);
                }
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

    /// Runs one SQL text and returns its rows as strings (NULL as None).
    /// For the driver's own bookkeeping queries, never the hot path.
    fn query_rows(&mut self, sql: &str) -> DbResult<Vec<Vec<Option<String>>>> {
        self.command(COM_QUERY)?;
        self.io.wbuf.extend_from_slice(sql.as_bytes());
        self.send()?;
        let mut rows = Vec::new();
        self.read_result(Some(&mut rows))?;
        Ok(rows)
    }

    /// Runs a statement without parameters through COM_QUERY.
    fn query(&mut self, sql: &str) -> DbResult<Outcome> {
        self.command(COM_QUERY)?;
        self.io.wbuf.extend_from_slice(sql.as_bytes());
        self.send()?;
        self.read_result(None)
    }

    /// COM_STMT_PREPARE: the statement id and parameter count; the column
    /// and parameter definitions are skipped (execution never decodes rows).
    fn prepare(&mut self, sql: &str) -> DbResult<Prepared> {
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
    fn close_prepared(&mut self) -> DbResult<()> {
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
    fn execute_prepared(&mut self, id: StmtId, params: &[Value]) -> DbResult<Outcome> {
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
    fn execute_text(&mut self, id: StmtId, params: &[Value]) -> DbResult<Outcome> {
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
        self.read_result(None)
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

/// Affected rows and status flags of an OK packet (header 0x00 or 0xFE).
#[inline]
fn parse_ok(p: &[u8]) -> Option<(u64, u16)> {
    let mut pos = 1;
    let affected = lenenc(p, &mut pos)?;
    lenenc(p, &mut pos)?; // last insert id
    Some((affected, u16_at(p, pos)))
}

/// An ERR packet: error number, `#` and SQLSTATE (protocol 4.1), message.
fn parse_err(p: &[u8]) -> DbError {
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
        // Server shutdown, connection killed (MariaDB), disconnected for
        // inactivity (MySQL), and the client codes for a lost server.
        1053 | 1927 | 4031 | 2006 | 2013 => ErrorKind::ConnectionLost,
        _ => ErrorKind::Other,
    }
}

/// A text-protocol row's values as strings.
fn decode_text_row(p: &[u8], columns: u64) -> Option<Vec<Option<String>>> {
    let mut pos = 0;
    (0..columns)
        .map(|_| {
            lenenc_str(p, &mut pos).map(|v| v.map(|b| String::from_utf8_lossy(b).into_owned()))
        })
        .collect()
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

/// Unblocks a call waiting on the socket by shutting the socket down; the
/// blocked call then fails as ConnectionLost and the connection is dead.
struct MyInterrupter(Stream);

impl Interrupter for MyInterrupter {
    fn interrupt(&self) {
        self.0.shutdown();
    }
}

impl Connection for MyConnection {
    fn dialect(&self) -> Dialect {
        Dialect::Mysql
    }

    fn prepare_all(&mut self, sql: &[String]) -> DbResult<()> {
        self.close_prepared()?;
        self.texts.clear();
        match self.ps_mode {
            PsMode::Prepared => {
                for s in sql {
                    let p = self.prepare(s)?;
                    self.prepared.push(p);
                }
            }
            PsMode::Disable => {
                self.texts = sql
                    .iter()
                    .map(|s| TextStmt {
                        sql: s.clone(),
                        holes: text::placeholders(s),
                    })
                    .collect();
            }
        }
        Ok(())
    }

    #[inline]
    fn execute(&mut self, id: StmtId, params: &[Value]) -> DbResult<Outcome> {
        match self.ps_mode {
            PsMode::Prepared => self.execute_prepared(id, params),
            PsMode::Disable => self.execute_text(id, params),
        }
    }

    fn execute_sql(&mut self, sql: &str) -> DbResult<Outcome> {
        self.query(sql)
    }

    fn begin(&mut self) -> DbResult<Outcome> {
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
        Ok(ServerInfo { version, settings })
    }

    fn interrupter(&self) -> Option<Box<dyn Interrupter>> {
        let s = self.io.stream().try_clone().ok()?;
        Some(Box::new(MyInterrupter(s)))
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
mod tests {
    use super::*;

    #[test]
    fn classifies_server_errors() {
        let mut p = vec![0xFF];
        p.extend_from_slice(&1213u16.to_le_bytes());
        p.extend_from_slice(b"#40001Deadlock found when trying to get lock");
        let e = parse_err(&p);
        assert_eq!(e.kind, ErrorKind::Deadlock);
        assert_eq!(e.code, "1213");
        assert_eq!(e.message, "Deadlock found when trying to get lock");
        for (code, kind) in [
            (1205, ErrorKind::LockTimeout),
            (1062, ErrorKind::DuplicateKey),
            (1020, ErrorKind::Serialization),
            (2013, ErrorKind::ConnectionLost),
            (1146, ErrorKind::Other),
        ] {
            assert_eq!(classify(code), kind, "{code}");
        }
    }

    #[test]
    fn parses_ok_packets() {
        // Affected 300 (0xFC prefix), insert id 0, status 0x0002.
        assert_eq!(
            parse_ok(&[0, 0xFC, 0x2C, 0x01, 0, 2, 0, 0, 0]),
            Some((300, 2))
        );
        assert_eq!(parse_ok(&[0]), None);
    }

    #[test]
    fn decodes_text_rows() {
        let row = decode_text_row(&[2, b'4', b'2', 0xFB, 0], 3).unwrap();
        assert_eq!(row, [Some("42".to_string()), None, Some(String::new())]);
        assert!(decode_text_row(&[5, b'x'], 1).is_none());
    }

    /// A scripted server on a unix socket or TCP port: `script` runs on the
    /// server's end of the first connection.
    fn fake_server(
        tcp: bool,
        script: impl FnOnce(&mut Io) + Send + 'static,
    ) -> (ServerAddr, std::thread::JoinHandle<()>, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let mut addr = ServerAddr {
            host: "127.0.0.1".into(),
            port: 0,
            user: "bench".into(),
            password: Some("pw".into()),
            database: "db".into(),
            socket: None,
            ps_mode: PsMode::Prepared,
        };
        let accept: Box<dyn FnOnce() -> Stream + Send> = if tcp {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            addr.port = l.local_addr().unwrap().port();
            Box::new(move || Stream::Tcp(l.accept().unwrap().0))
        } else {
            let path = dir.path().join("fake.sock");
            let l = std::os::unix::net::UnixListener::bind(&path).unwrap();
            addr.socket = Some(path);
            Box::new(move || Stream::Unix(l.accept().unwrap().0))
        };
        let h = std::thread::spawn(move || script(&mut Io::new(accept())));
        (addr, h, dir)
    }

    fn put(io: &mut Io, payload: &[u8]) {
        io.begin_packet();
        io.wbuf.extend_from_slice(payload);
        io.send().unwrap();
    }

    fn get(io: &mut Io) -> Vec<u8> {
        let r = io.read_packet().unwrap();
        io.payload(r).to_vec()
    }

    /// A Handshake v10 offering `caps` and `plugin`.
    fn greeting(caps: u32, plugin: &str, nonce: &[u8; 20]) -> Vec<u8> {
        mariadb_greeting(caps, 0, plugin, nonce)
    }

    /// A Handshake v10 offering `caps`, MariaDB's extended capabilities
    /// `ext` (read only when `caps` lacks CLIENT_LONG_PASSWORD), and `plugin`.
    fn mariadb_greeting(caps: u32, ext: u32, plugin: &str, nonce: &[u8; 20]) -> Vec<u8> {
        let mut p = vec![10];
        p.extend_from_slice(b"8.0.36-fake\0");
        p.extend_from_slice(&1u32.to_le_bytes());
        p.extend_from_slice(&nonce[..8]);
        p.push(0);
        p.extend_from_slice(&(caps as u16).to_le_bytes());
        p.push(45);
        p.extend_from_slice(&2u16.to_le_bytes());
        p.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
        p.push(21);
        p.extend_from_slice(&[0; 6]);
        p.extend_from_slice(&ext.to_le_bytes());
        p.extend_from_slice(&nonce[8..]);
        p.push(0);
        p.extend_from_slice(plugin.as_bytes());
        p.push(0);
        p
    }

    /// The auth data and plugin name of a HandshakeResponse41 (with
    /// length-encoded auth data and a database).
    fn login_fields(p: &[u8]) -> (u32, Vec<u8>, String) {
        let caps = u32_at(p, 0);
        let mut pos = 32 + p[32..].iter().position(|&b| b == 0).unwrap() + 1;
        let auth = lenenc_str(p, &mut pos).unwrap().unwrap().to_vec();
        pos += p[pos..].iter().position(|&b| b == 0).unwrap() + 1;
        let end = pos + p[pos..].iter().position(|&b| b == 0).unwrap();
        (
            caps,
            auth,
            String::from_utf8_lossy(&p[pos..end]).into_owned(),
        )
    }

    const EOF: &[u8] = &[0xFE, 0, 0, 2, 0];
    const OK: &[u8] = &[0, 0, 0, 2, 0, 0, 0];

    /// Without DEPRECATE_EOF (old servers), through an auth switch to
    /// caching_sha2_password and its full authentication over a socket:
    /// what MariaDB 10.11 cannot exercise.
    #[test]
    fn speaks_to_a_server_without_deprecate_eof_and_with_caching_sha2() {
        // The server offers CLIENT_FOUND_ROWS, which the client must decline.
        let caps = (auth::WANTED | 1 << 1) & !CLIENT_DEPRECATE_EOF;
        let (addr, server, _dir) = fake_server(false, move |io| {
            let n1 = [1u8; 20];
            put(io, &greeting(caps, CACHING_SHA2, &n1));
            let (client_caps, data, plugin) = login_fields(&get(io));
            assert_eq!(client_caps & CLIENT_DEPRECATE_EOF, 0);
            assert_eq!(client_caps & 1 << 1, 0, "CLIENT_FOUND_ROWS");
            assert_eq!(plugin, CACHING_SHA2);
            assert_eq!(data, auth::sha2_scramble(b"pw", &n1));
            // Switch plugins (same one, new nonce), then ask for the
            // password itself.
            let n2 = [2u8; 20];
            let mut switch = vec![0xFE];
            switch.extend_from_slice(b"caching_sha2_password\0");
            switch.extend_from_slice(&n2);
            switch.push(0);
            put(io, &switch);
            assert_eq!(get(io), auth::sha2_scramble(b"pw", &n2));
            put(io, &[1, 4]);
            assert_eq!(get(io), b"pw\0");
            put(io, OK);

            // A text result set: 2 columns, 3 rows.
            assert_eq!(get(io), b"\x03SELECT a, b FROM t");
            for p in [
                &[2][..],
                b"def-a",
                b"def-b",
                EOF,
                b"\x011\xFB",
                b"\x012\x01x",
                b"\x013\x00",
                EOF,
            ] {
                put(io, p);
            }
            assert_eq!(get(io), b"\x03UPDATE t SET a = 1");
            put(io, &[0, 5, 0, 2, 0, 0, 0]);

            // Prepare (1 parameter, 1 column) and execute: 2 binary rows.
            assert_eq!(get(io), b"\x16SELECT ?");
            for p in [
                &[0, 7, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0][..],
                b"param",
                EOF,
                b"col",
                EOF,
            ] {
                put(io, p);
            }
            let mut exec = vec![0x17, 7, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, TYPE_LONGLONG, 0];
            exec.extend_from_slice(&5i64.to_le_bytes());
            assert_eq!(get(io), exec);
            for p in [&[1][..], b"col", EOF, &[0, 0, 1], &[0, 0, 2], EOF] {
                put(io, p);
            }
            assert_eq!(get(io), [COM_QUIT]);
        });
        let mut c = MyConnection::open(&addr).unwrap();
        assert_eq!(c.caps & CLIENT_DEPRECATE_EOF, 0);
        let o = c.execute_sql("SELECT a, b FROM t").unwrap();
        assert_eq!((o.result_set, o.rows), (true, 3));
        assert_eq!(c.execute_sql("UPDATE t SET a = 1").unwrap().affected, 5);
        c.prepare_all(&["SELECT ?".to_string()]).unwrap();
        let o = c.execute(0, &[Value::Int(5)]).unwrap();
        assert_eq!((o.result_set, o.rows), (true, 2));
        drop(c);
        server.join().unwrap();
    }

    /// MariaDB 10.6+: result-set metadata skipped while unchanged
    /// (CACHE_METADATA), parameter types sent only when they change.
    #[test]
    fn skips_cached_metadata_and_unchanged_parameter_types() {
        let caps = auth::WANTED & !auth::CLIENT_LONG_PASSWORD;
        let ext = auth::MARIADB_CLIENT_CACHE_METADATA | auth::MARIADB_CLIENT_STMT_BULK_OPERATIONS;
        let (addr, server, _dir) = fake_server(false, move |io| {
            put(io, &mariadb_greeting(caps, ext, NATIVE, &[5; 20]));
            let login = get(io);
            // MariaDB's extended capabilities: the last 4 of the 23 filler
            // bytes after capabilities, max packet size and charset.
            assert_eq!(u32_at(&login, 28), ext);
            put(io, OK);
            const DONE: &[u8] = &[0xFE, 0, 0, 2, 0, 0, 0];

            // Prepare: 1 parameter, 1 column (DEPRECATE_EOF: no EOFs).
            assert_eq!(get(io), b"\x16SELECT ?");
            for p in [&[0, 7, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0][..], b"param", b"col"] {
                put(io, p);
            }
            let head = [0x17, 7, 0, 0, 0, 0, 1, 0, 0, 0];
            // First execution: types follow; the server sends metadata.
            let mut exec = head.to_vec();
            exec.extend_from_slice(&[0, 1, TYPE_LONGLONG, 0]);
            exec.extend_from_slice(&5i64.to_le_bytes());
            assert_eq!(get(io), exec);
            for p in [&[1, 1][..], b"col", &[0, 0, 1], DONE] {
                put(io, p);
            }
            // Same type: no types, and the server skips the metadata.
            let mut exec = head.to_vec();
            exec.extend_from_slice(&[0, 0]);
            exec.extend_from_slice(&6i64.to_le_bytes());
            assert_eq!(get(io), exec);
            for p in [&[1, 0][..], &[0, 0, 1], &[0, 0, 2], DONE] {
                put(io, p);
            }
            // NULL: the null bitmap, and types again.
            let mut exec = head.to_vec();
            exec.extend_from_slice(&[1, 1, TYPE_NULL, 0]);
            assert_eq!(get(io), exec);
            for p in [&[1, 0][..], &[0, 2], DONE] {
                put(io, p);
            }
            assert_eq!(get(io), [COM_QUIT]);
        });
        let mut c = MyConnection::open(&addr).unwrap();
        assert_eq!(c.ext_caps, ext);
        c.prepare_all(&["SELECT ?".to_string()]).unwrap();
        let rows = |c: &mut MyConnection, v: Value| {
            let o = c.execute(0, &[v]).unwrap();
            assert!(o.result_set);
            o.rows
        };
        assert_eq!(rows(&mut c, Value::Int(5)), 1);
        assert_eq!(rows(&mut c, Value::Int(6)), 2);
        assert_eq!(rows(&mut c, Value::Null), 1);
        drop(c);
        server.join().unwrap();
    }

    #[test]
    fn full_caching_sha2_authentication_over_tcp_fails_with_advice() {
        let (addr, server, _dir) = fake_server(true, |io| {
            put(io, &greeting(auth::WANTED, CACHING_SHA2, &[3; 20]));
            get(io);
            put(io, &[1, 4]);
            // The client hangs up instead of sending the password in clear.
            assert!(io.read_packet().is_err());
        });
        let e = MyConnection::open(&addr).err().unwrap();
        assert!(e.message.contains("caching_sha2_password"), "{e}");
        assert!(e.message.contains("unix socket"), "{e}");
        assert!(e.message.contains("mysql_native_password"), "{e}");
        assert!(e.message.contains("user 'bench' at 127.0.0.1:"), "{e}");
        server.join().unwrap();
    }

    #[test]
    fn unknown_plugins_are_named() {
        let (addr, server, _dir) = fake_server(false, |io| {
            put(io, &greeting(auth::WANTED, "client_ed25519", &[4; 20]));
            let (_, data, plugin) = login_fields(&get(io));
            // The client answers as mysql_native_password instead.
            assert_eq!(plugin, NATIVE);
            assert_eq!(data, auth::native_scramble(b"pw", &[4; 20]));
            put(io, b"\xFEclient_ed25519\0abcdefghijklmnopqrst\0");
            let _ = io.read_packet();
        });
        let e = MyConnection::open(&addr).err().unwrap();
        assert!(e.message.contains("'client_ed25519'"), "{e}");
        server.join().unwrap();
    }
}
