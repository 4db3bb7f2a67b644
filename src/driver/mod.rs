//! The driver layer: one [`Connection`] trait, one file per engine.
//!
//! A driver connects, prepares statements, executes them with bound
//! parameters, fetches and discards every row, and classifies errors into an
//! [`ErrorKind`]. It never times anything, retries, or keeps statistics: the
//! engine does that around every call (see docs/architecture.md, "Contracts").
//!
//! Statements are prepared once per connection from the workload's list and
//! then referred to by their index ([`StmtId`]), so the hot path passes an
//! integer and a parameter slice — no SQL text, no allocation.
//!
//! A network driver's connection can also become an [`evented::Evented`]
//! one, driven with many others by an event loop (`into_evented`).
//!
//! Engines:
//! - [`sqlite`]: embedded SQLite (rusqlite, bundled), the zero-setup default.
//! - [`postgres`]: PostgreSQL over its wire protocol (extended protocol with
//!   server-side prepared statements, or the simple protocol).
//! - [`mysql`]: MySQL and MariaDB over their wire protocol (binary prepared
//!   statements, or the text protocol).
//! - [`fake`]: scripted latencies and errors, for exact engine and statistics
//!   tests without a database (URL scheme `fake://`, not advertised).

pub mod evented;
pub mod fake;
pub mod fetch;
pub mod mysql;
pub mod passwords;
pub mod postgres;
pub mod socket;
pub mod sqlite;
pub mod tls;
mod url;

use std::fmt;

pub use self::fetch::{Col, Fetch};
pub use self::url::{PsMode, ServerAddr, Target, TargetKind};

/// Rows of a [`Connection::query_text`]: every value as text, NULL as `None`.
pub type Rows = Vec<Vec<Option<String>>>;

/// Index of a prepared statement in the list given to [`Connection::prepare_all`].
pub type StmtId = usize;

/// SQL dialect of a target (defined with the run record, which names it).
pub use crate::record::Dialect;

/// A bound parameter value. Workloads keep their parameter buffers between
/// transactions and overwrite them in place, so `Text` reuses its capacity.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Float(f64),
    Text(String),
}

impl Value {
    /// Overwrites `self` with `s`, reusing the existing string buffer.
    pub fn set_text(&mut self, s: &str) {
        match self {
            Value::Text(t) => {
                t.clear();
                t.push_str(s);
            }
            other => *other = Value::Text(s.to_owned()),
        }
    }

    /// Gives mutable access to the string buffer, turning `self` into an empty
    /// `Text` first if needed. For filling random strings without allocating.
    pub fn text_mut(&mut self) -> &mut String {
        if !matches!(self, Value::Text(_)) {
            *self = Value::Text(String::new());
        }
        match self {
            Value::Text(t) => {
                t.clear();
                t
            }
            _ => unreachable!(),
        }
    }
}

/// What one statement did, as the engine needs it for sysbench's query
/// classification: read = returned a result set; write = no result set and
/// rows affected > 0; other = everything else.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The statement produced a result set (even an empty one).
    pub result_set: bool,
    /// Rows fetched (and discarded) from the result set.
    pub rows: u64,
    /// Rows inserted, updated or deleted.
    pub affected: u64,
}

/// Query class, as sysbench counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryClass {
    Read,
    Write,
    Other,
}

impl Outcome {
    pub fn class(&self) -> QueryClass {
        if self.result_set {
            QueryClass::Read
        } else if self.affected > 0 {
            QueryClass::Write
        } else {
            QueryClass::Other
        }
    }
}

/// Error kinds the engine counts separately and may retry.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    Deadlock,
    /// Lock wait timeout (MySQL 1205, PostgreSQL 55P03) or SQLite BUSY/LOCKED.
    LockTimeout,
    Serialization,
    DuplicateKey,
    ConnectionLost,
    Other,
    /// A statement ended by the server's (or the driver's) statement
    /// time limit: PostgreSQL 57014, MariaDB 1969, MySQL 3024, SQLite
    /// interrupted by the connection's own limit. Last, so the older kinds
    /// keep their places (and their bits in a stored `ErrorSet`).
    Timeout,
}

impl ErrorKind {
    /// How many kinds there are.
    pub const COUNT: usize = 7;

    pub const ALL: [ErrorKind; ErrorKind::COUNT] = [
        ErrorKind::Deadlock,
        ErrorKind::LockTimeout,
        ErrorKind::Serialization,
        ErrorKind::DuplicateKey,
        ErrorKind::ConnectionLost,
        ErrorKind::Other,
        ErrorKind::Timeout,
    ];

    /// The name used on the command line (`--ignore-errors`) and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Deadlock => "deadlock",
            ErrorKind::LockTimeout => "lock_timeout",
            ErrorKind::Serialization => "serialization",
            ErrorKind::DuplicateKey => "duplicate_key",
            ErrorKind::ConnectionLost => "connection_lost",
            ErrorKind::Other => "other",
            ErrorKind::Timeout => "timeout",
        }
    }

    pub fn from_name(s: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// Kinds where rolling back and running the transaction again is the
    /// normal response (what a real application does).
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            ErrorKind::Deadlock | ErrorKind::LockTimeout | ErrorKind::Serialization
        )
    }

    /// Kinds that fail the transaction and let the run go on without
    /// `--ignore-errors`: a statement time limit is set to end one slow
    /// statement (a TPC-H query), not the run.
    pub fn fails_transaction_only(self) -> bool {
        self == ErrorKind::Timeout
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// A set of error kinds (`--ignore-errors`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ErrorSet(u8);

impl ErrorSet {
    pub const NONE: ErrorSet = ErrorSet(0);
    pub const ALL: ErrorSet = ErrorSet(0x7f);

    pub fn insert(&mut self, k: ErrorKind) {
        self.0 |= 1 << k.index();
    }

    pub fn contains(&self, k: ErrorKind) -> bool {
        self.0 & (1 << k.index()) != 0
    }

    pub fn kinds(&self) -> Vec<ErrorKind> {
        ErrorKind::ALL
            .into_iter()
            .filter(|k| self.contains(*k))
            .collect()
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A database error, classified.
#[derive(Debug, Clone)]
pub struct DbError {
    pub kind: ErrorKind,
    /// The engine's native code (SQLSTATE, MySQL errno, SQLite extended code).
    pub code: String,
    pub message: String,
}

impl DbError {
    pub fn new(kind: ErrorKind, code: impl Into<String>, message: impl Into<String>) -> Self {
        DbError {
            kind,
            code: code.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.code.is_empty() {
            write!(f, "{} ({})", self.message, self.kind)
        } else {
            write!(f, "{} [{}] ({})", self.message, self.code, self.kind)
        }
    }
}

impl std::error::Error for DbError {}

pub type DbResult<T> = Result<T, DbError>;

/// What a server says about itself; recorded with every result.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ServerInfo {
    /// Product and version string, e.g. "SQLite 3.46.0".
    pub version: String,
    /// Effective settings that matter for the measurement (name → value).
    pub settings: Vec<(String, String)>,
}

/// Stops a statement running on another thread; used by the engine to hold
/// its deadline when a connection hangs.
pub trait Interrupter: Send + Sync {
    fn interrupt(&self);
}

/// The number of parameters in each row of a batch of `rows` rows of
/// `len` values in all; an error when they do not divide evenly.
pub fn batch_width(len: usize, rows: usize) -> DbResult<usize> {
    if rows == 0 {
        return Ok(0);
    }
    if len % rows != 0 {
        return Err(DbError::new(
            ErrorKind::Other,
            "",
            format!(
                "a batch of {rows} rows cannot hold {len} parameters: not the same number in each"
            ),
        ));
    }
    Ok(len / rows)
}

/// A batch run as one execution per row: [`Connection::execute_batch`]'s
/// default, and a driver's way when its batch command cannot take these
/// rows.
pub fn batch_one_by_one<C: Connection + ?Sized>(
    c: &mut C,
    id: StmtId,
    params: &[Value],
    rows: usize,
) -> DbResult<Outcome> {
    let width = batch_width(params.len(), rows)?;
    let mut out = Outcome::default();
    for r in 0..rows {
        let o = c.execute(id, &params[r * width..(r + 1) * width])?;
        out.affected += o.affected;
        out.rows += o.rows;
        out.result_set |= o.result_set;
    }
    Ok(out)
}

/// One client connection. Implementations must fully fetch (and discard)
/// every row of a result set before `execute` returns.
pub trait Connection: Send {
    fn dialect(&self) -> Dialect;

    /// Prepares the workload's statements; afterwards they are addressed by
    /// their index in `sql`. Drivers in text-protocol mode may just keep the
    /// text and format literals at execution.
    fn prepare_all(&mut self, sql: &[String]) -> DbResult<()>;

    /// Executes prepared statement `id` with `params`, fetching and discarding
    /// every row.
    fn execute(&mut self, id: StmtId, params: &[Value]) -> DbResult<Outcome>;

    /// Executes prepared statement `id` like [`execute`](Self::execute),
    /// keeping the values `fetch` asks for (see [`fetch`]): for workloads
    /// whose next step depends on what a query returned. Every row is
    /// still fetched and counted.
    fn execute_fetch(
        &mut self,
        id: StmtId,
        params: &[Value],
        fetch: &mut Fetch,
    ) -> DbResult<Outcome>;

    /// Executes prepared statement `id` once for each of `rows` rows of
    /// parameters, laid one after the other in `params`, fetching no rows
    /// (a batch of INSERTs or UPDATEs, as JDBC's `executeBatch`). A driver
    /// that can send the rows as one command or one round trip does
    /// (MariaDB's bulk execution, PostgreSQL's pipeline); the default runs
    /// them one by one. The outcome adds up the rows' (affected rows); the
    /// first error stops the batch.
    fn execute_batch(&mut self, id: StmtId, params: &[Value], rows: usize) -> DbResult<Outcome> {
        batch_one_by_one(self, id, params, rows)
    }

    /// Executes one SQL text without parameters (DDL, session settings),
    /// fetching and discarding every row.
    fn execute_sql(&mut self, sql: &str) -> DbResult<Outcome>;

    /// Ends any statement that runs longer than `limit` with an
    /// [`ErrorKind::Timeout`] error, the connection kept: the server's own
    /// limit where it has one (PostgreSQL's `statement_timeout`, MariaDB's
    /// `max_statement_time`, MySQL's `max_execution_time`, which covers
    /// SELECTs only), SQLite's progress handler.
    fn set_statement_timeout(&mut self, limit: std::time::Duration) -> DbResult<()> {
        let ms = limit.as_millis().max(1);
        match self.dialect() {
            Dialect::Postgres => self.execute_sql(&format!("SET statement_timeout = {ms}")),
            // MariaDB's setting is in seconds (fractions allowed); MySQL
            // has none by that name, and its own is in milliseconds.
            Dialect::Mysql => self
                .execute_sql(&format!(
                    "SET SESSION max_statement_time = {}",
                    ms as f64 / 1000.0
                ))
                .or_else(|_| self.execute_sql(&format!("SET SESSION max_execution_time = {ms}"))),
            Dialect::Sqlite => Err(DbError::new(
                ErrorKind::Other,
                "",
                "this connection has no statement time limit",
            )),
        }
        .map(|_| ())
    }

    /// Starts a transaction; `writes` when it is going to change rows (a
    /// hint: SQLite starts those with `BEGIN IMMEDIATE`).
    fn begin(&mut self, writes: bool) -> DbResult<Outcome>;
    fn commit(&mut self) -> DbResult<Outcome>;
    fn rollback(&mut self) -> DbResult<Outcome>;

    /// Whether `table` exists in the connected database.
    fn table_exists(&mut self, table: &str) -> DbResult<bool>;

    /// Number of rows in `table`.
    fn count_rows(&mut self, table: &str) -> DbResult<u64>;

    /// Loads rows into `table` (columns in order) as fast as the engine
    /// allows. `rows` yields each row's values; it is a callback so that
    /// generators need not materialise the data set.
    fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &mut dyn FnMut(&mut Vec<Value>) -> bool,
    ) -> DbResult<u64>;

    /// Version and effective settings of the server.
    fn server_info(&mut self) -> DbResult<ServerInfo>;

    /// Runs `sql` as text (no parameters) and returns its rows, every value
    /// as text (`None` for NULL): for a monitoring connection's queries of
    /// the server's counters, never a workload's.
    fn query_text(&mut self, sql: &str) -> DbResult<Rows>;

    /// A handle that can abort a statement running on this connection from
    /// another thread, if the engine supports it.
    fn interrupter(&self) -> Option<Box<dyn Interrupter>>;

    /// This connection, opened and prepared, for an event loop (its socket
    /// non-blocking: see [`evented`]); itself back when its driver has no
    /// socket to wait on (SQLite, the fake driver).
    fn into_evented(self: Box<Self>) -> Result<Box<dyn evented::Evented>, Box<dyn Connection>>;
}

/// Opens a connection to `target`.
pub fn connect(target: &Target) -> DbResult<Box<dyn Connection>> {
    match &target.kind {
        TargetKind::Sqlite {
            path,
            pragmas,
            begin,
        } => Ok(Box::new(
            sqlite::SqliteConnection::open(path, pragmas)?.with_begin(*begin),
        )),
        TargetKind::Fake(script) => Ok(Box::new(fake::FakeConnection::new(script.clone()))),
        TargetKind::Postgres(a) => postgres::PgConnection::connect(a),
        TargetKind::Mysql(a) => mysql::MyConnection::connect(a),
    }
}
/// SQLite creates a missing database file on open; only `prepare` may do
/// that, so a mistyped path elsewhere is reported instead of leaving an
/// empty database behind.
pub fn check_sqlite_path(
    target: &Target,
    creates: bool,
    workload: &str,
) -> Result<(), crate::UsageError> {
    let TargetKind::Sqlite { path, .. } = &target.kind else {
        return Ok(());
    };
    let dir = crate::util::paths::dir_of(path);
    if !dir.is_dir() {
        return Err(crate::UsageError(format!(
            "cannot use {}: directory '{}' does not exist (create it, or fix the path)",
            target.display,
            dir.display()
        )));
    }
    if !creates && !path.exists() {
        return Err(crate::UsageError(format!(
            "database file '{}' does not exist: run `dbsweep prepare {workload} --db {}` first",
            path.display(),
            target.display
        )));
    }
    Ok(())
}
