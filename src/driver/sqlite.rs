//! Embedded SQLite through rusqlite (bundled SQLite): the zero-setup default.
//!
//! Every connection opens the same database file in WAL mode (readers do not
//! block the writer) with a busy timeout, so several clients can share it the
//! way they would share a server. SQLite is in-process: its CPU time is the
//! client's CPU time, which the run report says.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::types::ValueRef;
use rusqlite::{ffi, ErrorCode, InterruptHandle};

use super::{
    Connection, DbError, DbResult, Dialect, ErrorKind, Fetch, Interrupter, Outcome, ServerInfo,
    StmtId, Value,
};

/// How long a writer waits for the lock before SQLITE_BUSY.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Rows per transaction when bulk loading: large enough to amortise the
/// commit, small enough to keep the WAL from growing without bound.
const LOAD_BATCH: u64 = 100_000;

pub struct SqliteConnection {
    conn: rusqlite::Connection,
    /// Statement text by id; rusqlite's statement cache holds the prepared form.
    sql: Vec<String>,
    /// The statement that starts every transaction, when the URL chose
    /// one; None: by what the transaction does (see `with_begin`).
    begin: Option<&'static str>,
    /// The statement time limit, once set.
    limit: Option<Arc<Limit>>,
}

/// A statement time limit, read by SQLite's progress handler every
/// [`Limit::EVERY`] virtual-machine steps while a statement runs.
struct Limit {
    base: Instant,
    /// When the running statement started, ns after `base`; `u64::MAX`
    /// between statements (and for the ones the limit leaves alone: BEGIN,
    /// COMMIT, loading).
    started_ns: AtomicU64,
    limit_ns: u64,
    /// The handler interrupted the statement (so an interrupt is this
    /// limit's, not the engine's at its deadline).
    fired: AtomicBool,
}

impl Limit {
    /// Steps between two looks at the clock: about a millisecond's work,
    /// so the look costs nothing measurable and the limit is exact to it.
    const EVERY: i32 = 10_000;

    fn start(&self) {
        let ns = self.base.elapsed().as_nanos() as u64;
        self.started_ns.store(ns, Ordering::Relaxed);
    }

    /// Whether the running statement has run past the limit.
    fn passed(&self) -> bool {
        let now = self.base.elapsed().as_nanos() as u64;
        let over = now.saturating_sub(self.started_ns.load(Ordering::Relaxed)) > self.limit_ns;
        if over {
            self.fired.store(true, Ordering::Relaxed);
        }
        over
    }

    /// `r`, its interrupt named a timeout when this limit caused it; the
    /// statement's timing ends.
    fn classify(&self, r: DbResult<Outcome>) -> DbResult<Outcome> {
        self.started_ns.store(u64::MAX, Ordering::Relaxed);
        r.map_err(|mut e| {
            if self.fired.swap(false, Ordering::Relaxed) && e.kind == ErrorKind::ConnectionLost {
                e.kind = ErrorKind::Timeout;
                e.message = format!(
                    "statement ended by its time limit of {} ms ({})",
                    self.limit_ns / 1_000_000,
                    e.message
                );
            }
            e
        })
    }
}

impl SqliteConnection {
    pub fn open(path: &Path, pragmas: &[(String, String)]) -> DbResult<Self> {
        let conn = rusqlite::Connection::open(path).map_err(|e| {
            DbError::new(
                ErrorKind::ConnectionLost,
                "",
                format!("cannot open SQLite database '{}': {e}", path.display()),
            )
        })?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(classify)?;
        // WAL and synchronous=NORMAL are the usual production choice for a
        // concurrent SQLite; the URL's pragmas can override both.
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(classify)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(classify)?;
        for (name, value) in pragmas {
            conn.execute_batch(&format!("PRAGMA {name}={value}"))
                .map_err(classify)?;
        }
        Ok(SqliteConnection {
            conn,
            sql: Vec::new(),
            begin: None,
            limit: None,
        })
    }

    /// Chooses how transactions start: always as `mode` says, or (None) by
    /// what each transaction does. With `deferred` a transaction that reads
    /// and then writes must upgrade its lock, and gets SQLITE_BUSY at once
    /// when another writer got there first (the busy handler cannot help
    /// inside a transaction: counted and retried); `immediate` takes the
    /// write lock at BEGIN, where the busy handler queues writers. So a
    /// writing transaction begins immediate, a reading one deferred (its
    /// reads run beside a writer under WAL).
    pub fn with_begin(mut self, mode: Option<&str>) -> Self {
        self.begin = mode.map(|m| match m {
            "immediate" => "BEGIN IMMEDIATE",
            "exclusive" => "BEGIN EXCLUSIVE",
            _ => "BEGIN DEFERRED",
        });
        self
    }

    /// [`run`](Self::run), keeping what `fetch` asks for.
    fn run_fetch(&mut self, sql: &str, params: &[Value], fetch: &mut Fetch) -> DbResult<Outcome> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(classify)?;
        bind(&mut stmt, params)?;
        if stmt.column_count() == 0 {
            let affected = stmt.raw_execute().map_err(classify)? as u64;
            return Ok(Outcome {
                result_set: false,
                rows: 0,
                affected,
            });
        }
        let mut rows = stmt.raw_query();
        let mut n = 0u64;
        while let Some(row) = rows.next().map_err(classify)? {
            n += 1;
            if fetch.wants_row() {
                fetch.push_row(|i| match row.get_ref(i) {
                    Ok(ValueRef::Integer(x)) => Value::Int(x),
                    Ok(ValueRef::Real(x)) => Value::Float(x),
                    Ok(ValueRef::Text(t)) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                    _ => Value::Null,
                });
            }
        }
        Ok(Outcome {
            result_set: true,
            rows: n,
            affected: 0,
        })
    }

    fn run(&mut self, sql: &str, params: &[Value]) -> DbResult<Outcome> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(classify)?;
        bind(&mut stmt, params)?;
        if stmt.column_count() > 0 {
            let mut rows = stmt.raw_query();
            let mut n = 0u64;
            while rows.next().map_err(classify)?.is_some() {
                n += 1;
            }
            Ok(Outcome {
                result_set: true,
                rows: n,
                affected: 0,
            })
        } else {
            let affected = stmt.raw_execute().map_err(classify)? as u64;
            Ok(Outcome {
                result_set: false,
                rows: 0,
                affected,
            })
        }
    }

    fn control(&mut self, sql: &str) -> DbResult<Outcome> {
        self.conn.execute_batch(sql).map_err(classify)?;
        Ok(Outcome::default())
    }
}

/// Binds `params` to `stmt`'s placeholders in order.
fn bind(stmt: &mut rusqlite::Statement<'_>, params: &[Value]) -> DbResult<()> {
    for (i, v) in params.iter().enumerate() {
        let r = match v {
            Value::Null => stmt.raw_bind_parameter(i + 1, rusqlite::types::Null),
            Value::Int(x) => stmt.raw_bind_parameter(i + 1, x),
            Value::Float(x) => stmt.raw_bind_parameter(i + 1, x),
            Value::Text(s) => stmt.raw_bind_parameter(i + 1, s.as_str()),
        };
        r.map_err(classify)?;
    }
    Ok(())
}

/// Maps SQLite's result codes onto the engine's error kinds.
fn classify(e: rusqlite::Error) -> DbError {
    match &e {
        rusqlite::Error::SqliteFailure(f, msg) => {
            let kind = match f.code {
                ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => ErrorKind::LockTimeout,
                ErrorCode::ConstraintViolation
                    if f.extended_code == ffi::SQLITE_CONSTRAINT_PRIMARYKEY
                        || f.extended_code == ffi::SQLITE_CONSTRAINT_UNIQUE =>
                {
                    ErrorKind::DuplicateKey
                }
                ErrorCode::OperationInterrupted => ErrorKind::ConnectionLost,
                _ => ErrorKind::Other,
            };
            let message = msg.clone().unwrap_or_else(|| f.to_string());
            DbError::new(kind, format!("SQLITE_{}", f.extended_code), message)
        }
        _ => DbError::new(ErrorKind::Other, "", e.to_string()),
    }
}

struct SqliteInterrupter(InterruptHandle);

impl Interrupter for SqliteInterrupter {
    fn interrupt(&self) {
        self.0.interrupt();
    }
}

impl Connection for SqliteConnection {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn prepare_all(&mut self, sql: &[String]) -> DbResult<()> {
        self.conn
            .set_prepared_statement_cache_capacity(sql.len() + 16);
        for s in sql {
            // Preparing now surfaces a missing table before the clock starts.
            self.conn.prepare_cached(s).map_err(classify)?;
        }
        self.sql = sql.to_vec();
        Ok(())
    }

    fn execute(&mut self, id: StmtId, params: &[Value]) -> DbResult<Outcome> {
        // Cloning the String would allocate; swap the text out instead.
        let sql = std::mem::take(&mut self.sql[id]);
        if let Some(l) = &self.limit {
            l.start();
        }
        let r = self.run(&sql, params);
        self.sql[id] = sql;
        match &self.limit {
            Some(l) => l.classify(r),
            None => r,
        }
    }

    fn execute_fetch(
        &mut self,
        id: StmtId,
        params: &[Value],
        fetch: &mut Fetch,
    ) -> DbResult<Outcome> {
        fetch.values.clear();
        let sql = std::mem::take(&mut self.sql[id]);
        if let Some(l) = &self.limit {
            l.start();
        }
        let r = self.run_fetch(&sql, params, fetch);
        self.sql[id] = sql;
        match &self.limit {
            Some(l) => l.classify(r),
            None => r,
        }
    }

    fn set_statement_timeout(&mut self, limit: Duration) -> DbResult<()> {
        let l = Arc::new(Limit {
            base: Instant::now(),
            started_ns: AtomicU64::new(u64::MAX),
            limit_ns: limit.as_nanos().max(1) as u64,
            fired: AtomicBool::new(false),
        });
        let seen = Arc::clone(&l);
        self.conn
            .progress_handler(Limit::EVERY, Some(move || seen.passed()));
        self.limit = Some(l);
        Ok(())
    }

    fn execute_sql(&mut self, sql: &str) -> DbResult<Outcome> {
        let mut stmt = self.conn.prepare(sql).map_err(classify)?;
        if stmt.column_count() > 0 {
            let mut rows = stmt.raw_query();
            let mut n = 0;
            while rows.next().map_err(classify)?.is_some() {
                n += 1;
            }
            return Ok(Outcome {
                result_set: true,
                rows: n,
                affected: 0,
            });
        }
        let affected = stmt.raw_execute().map_err(classify)? as u64;
        Ok(Outcome {
            result_set: false,
            rows: 0,
            affected,
        })
    }

    fn begin(&mut self, writes: bool) -> DbResult<Outcome> {
        let sql = match (self.begin, writes) {
            (Some(sql), _) => sql,
            (None, true) => "BEGIN IMMEDIATE",
            (None, false) => "BEGIN DEFERRED",
        };
        self.control(sql)
    }

    fn commit(&mut self) -> DbResult<Outcome> {
        self.control("COMMIT")
    }

    fn rollback(&mut self) -> DbResult<Outcome> {
        if self.conn.is_autocommit() {
            // Nothing open (SQLite may already have rolled back on error).
            return Ok(Outcome::default());
        }
        self.control("ROLLBACK")
    }

    fn table_exists(&mut self, table: &str) -> DbResult<bool> {
        let n: i64 = self
            .conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [table],
                |r| r.get(0),
            )
            .map_err(classify)?;
        Ok(n > 0)
    }

    fn count_rows(&mut self, table: &str) -> DbResult<u64> {
        let n: i64 = self
            .conn
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .map_err(classify)?;
        Ok(n as u64)
    }

    fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &mut dyn FnMut(&mut Vec<Value>) -> bool,
    ) -> DbResult<u64> {
        let placeholders = vec!["?"; columns.len()].join(", ");
        let sql = format!(
            "INSERT INTO {table} ({}) VALUES ({placeholders})",
            columns.join(", ")
        );
        let mut buf: Vec<Value> = Vec::with_capacity(columns.len());
        let mut total = 0u64;
        let mut done = false;
        while !done {
            let tx = self.conn.transaction().map_err(classify)?;
            {
                let mut stmt = tx.prepare_cached(&sql).map_err(classify)?;
                let mut in_batch = 0;
                while in_batch < LOAD_BATCH {
                    buf.clear();
                    if !rows(&mut buf) {
                        done = true;
                        break;
                    }
                    bind(&mut stmt, &buf)?;
                    stmt.raw_execute().map_err(classify)?;
                    in_batch += 1;
                }
                total += in_batch;
            }
            tx.commit().map_err(classify)?;
        }
        Ok(total)
    }

    fn server_info(&mut self) -> DbResult<ServerInfo> {
        let mut settings = Vec::new();
        for p in [
            "journal_mode",
            "synchronous",
            "busy_timeout",
            "cache_size",
            "page_size",
            "mmap_size",
            "locking_mode",
            "temp_store",
        ] {
            let v: rusqlite::types::Value = self
                .conn
                .query_row(&format!("PRAGMA {p}"), [], |r| r.get(0))
                .map_err(classify)?;
            let v = match v {
                rusqlite::types::Value::Integer(i) => i.to_string(),
                rusqlite::types::Value::Text(t) => t,
                other => format!("{other:?}"),
            };
            settings.push((p.to_string(), v));
        }
        settings.push((
            "begin".to_string(),
            match self.begin {
                Some(sql) => format!("{sql} (from the URL)"),
                None => "BEGIN IMMEDIATE for writing transactions, BEGIN DEFERRED for reading ones"
                    .to_string(),
            },
        ));
        Ok(ServerInfo {
            version: format!("SQLite {}", rusqlite::version()),
            settings,
        })
    }

    fn query_text(&mut self, sql: &str) -> DbResult<super::Rows> {
        let mut stmt = self.conn.prepare(sql).map_err(classify)?;
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                (0..n)
                    .map(|i| {
                        Ok(match r.get::<_, rusqlite::types::Value>(i)? {
                            rusqlite::types::Value::Null => None,
                            rusqlite::types::Value::Integer(v) => Some(v.to_string()),
                            rusqlite::types::Value::Real(v) => Some(v.to_string()),
                            rusqlite::types::Value::Text(t) => Some(t),
                            rusqlite::types::Value::Blob(b) => {
                                Some(String::from_utf8_lossy(&b).into_owned())
                            }
                        })
                    })
                    .collect()
            })
            .map_err(classify)?;
        rows.collect::<Result<_, _>>().map_err(classify)
    }

    fn interrupter(&self) -> Option<Box<dyn Interrupter>> {
        Some(Box::new(SqliteInterrupter(
            self.conn.get_interrupt_handle(),
        )))
    }
    fn into_evented(
        self: Box<Self>,
    ) -> Result<Box<dyn crate::driver::evented::Evented>, Box<dyn Connection>> {
        Err(self)
    }
}
