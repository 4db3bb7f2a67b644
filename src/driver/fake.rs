//! The fake driver: scripted latencies and errors, no database.
//!
//! It exists so the engine, statistics and reports can be tested exactly:
//! every statement sleeps for the next scripted latency, every N-th statement
//! fails with a scripted error kind, and the connection can be told to hang
//! (until interrupted) to prove the engine's deadline. Statements whose text
//! starts with SELECT return `rows` rows; others affect one row; BEGIN,
//! COMMIT and ROLLBACK affect none — so sysbench's read/write/other
//! classification runs through the same code path as with a real engine.
//!
//! Reached with the URL
//! `fake://?latency=100us,2ms&error_every=10:deadlock&hang_after=50&rows=1&collapse_at=8&stall_at=2s:1s&drift=2x/30s`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{
    Connection, DbError, DbResult, Dialect, ErrorKind, Fetch, Interrupter, Outcome, ServerInfo,
    StmtId, Value,
};

/// What the fake connection does; shared by every connection of a run.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct FakeScript {
    /// Latency of successive statements, cycled. Empty = no delay.
    pub latencies: Vec<Duration>,
    /// Every N-th statement (counted per connection) fails with this kind.
    pub error_every: Option<(u64, ErrorKind)>,
    /// After this many statements the connection stops answering until interrupted.
    pub hang_after: Option<u64>,
    /// Rows returned by a SELECT.
    pub rows: u64,
    /// Scripted collapse: while at least this many fake connections are
    /// open in the process, every latency is 20 times longer (a server past
    /// its saturation point, as in seed 000).
    pub collapse_at: Option<usize>,
    /// Scripted stall (AT, LENGTH): a statement that begins between AT and
    /// AT + LENGTH after the first statement of any connection of this
    /// script waits until AT + LENGTH (a server that stops answering for a
    /// while, as in a checkpoint).
    pub stall: Option<(Duration, Duration)>,
    /// Scripted drift (FACTOR, OVER): latencies grow linearly from ×1 at
    /// the process's first fake statement to ×FACTOR OVER later, and stay
    /// there — a machine slowing down under a study, the same for every
    /// target of it (`drift=2x/30s`).
    pub drift: Option<(f64, Duration)>,
    /// When the first statement ran, shared by every connection cloned
    /// from this script.
    #[serde(skip)]
    pub epoch: Epoch,
}

/// The process's first fake statement: where a drift starts.
static PROCESS_EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

/// The latency factor of `drift` now.
fn drift_factor((factor, over): (f64, Duration)) -> f64 {
    let t = PROCESS_EPOCH.get_or_init(Instant::now).elapsed();
    let share = if over.is_zero() {
        1.0
    } else {
        (t.as_secs_f64() / over.as_secs_f64()).min(1.0)
    };
    1.0 + (factor - 1.0) * share
}

/// The moment a script's first statement ran; every clone of a script
/// shares it. Equal to every other (it is state, not configuration).
#[derive(Debug, Clone, Default)]
pub struct Epoch(Arc<std::sync::OnceLock<Instant>>);

impl PartialEq for Epoch {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// Tables dropped (and not created again) through fake connections, so that
/// prepare and cleanup behave as on a database: a table exists unless
/// dropped.
static DROPPED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Applies the table effect of a DDL statement to [`DROPPED`].
fn track_ddl(sql: &str) {
    let words: Vec<String> = sql
        .split_whitespace()
        .map(|w| w.trim_end_matches('(').to_ascii_lowercase())
        .collect();
    let mut dropped = DROPPED.lock().unwrap_or_else(|p| p.into_inner());
    match words.as_slice() {
        [drop, table, if_, exists, name, ..]
            if drop == "drop" && table == "table" && if_ == "if" && exists == "exists" =>
        {
            dropped.push(name.clone())
        }
        [drop, table, name, ..] if drop == "drop" && table == "table" => dropped.push(name.clone()),
        [create, table, name, ..] if create == "create" && table == "table" => {
            dropped.retain(|t| t != name)
        }
        _ => {}
    }
}

/// Fake connections open in this process, for `collapse_at`.
static OPEN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

pub struct FakeConnection {
    script: FakeScript,
    statements: Vec<bool>,
    executed: u64,
    interrupted: Arc<AtomicBool>,
}

impl FakeConnection {
    pub fn new(mut script: FakeScript) -> Self {
        if script.rows == 0 {
            script.rows = 1;
        }
        OPEN.fetch_add(1, Ordering::Relaxed);
        FakeConnection {
            script,
            statements: Vec::new(),
            executed: 0,
            interrupted: Arc::new(AtomicBool::new(false)),
        }
    }

    fn step(&mut self, is_select: bool, is_control: bool) -> DbResult<Outcome> {
        let n = self.executed;
        self.executed += 1;
        if let Some(limit) = self.script.hang_after {
            if n >= limit {
                // A server that stops answering: only an interrupt gets us out.
                while !self.interrupted.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(5));
                }
                return Err(DbError::new(ErrorKind::ConnectionLost, "", "interrupted"));
            }
        }
        let epoch = *self.script.epoch.0.get_or_init(Instant::now);
        if let Some((at, len)) = self.script.stall {
            let (from, to) = (epoch + at, epoch + at + len);
            let now = Instant::now();
            if now >= from && now < to {
                while Instant::now() < to && !self.interrupted.load(Ordering::Relaxed) {
                    std::thread::sleep((to - Instant::now()).min(Duration::from_millis(5)));
                }
            }
        }
        if !self.script.latencies.is_empty() {
            let mut d = self.script.latencies[(n % self.script.latencies.len() as u64) as usize];
            if self
                .script
                .collapse_at
                .is_some_and(|c| OPEN.load(Ordering::Relaxed) >= c)
            {
                d *= 20;
            }
            if let Some(drift) = self.script.drift {
                d = d.mul_f64(drift_factor(drift));
            }
            // A unit test's client in virtual time takes exactly `d`.
            if !crate::util::clock::advance(d) {
                sleep_precise(d);
            }
        }
        if let Some((every, kind)) = self.script.error_every {
            if every > 0 && (n + 1) % every == 0 {
                return Err(DbError::new(kind, "FAKE", format!("scripted {kind}")));
            }
        }
        Ok(if is_select {
            Outcome {
                result_set: true,
                rows: self.script.rows,
                affected: 0,
            }
        } else if is_control {
            Outcome::default()
        } else {
            Outcome {
                result_set: false,
                rows: 0,
                affected: 1,
            }
        })
    }
}

/// Sleeps for `d`, spinning for the last stretch so short scripted latencies
/// are not rounded up by the scheduler's timer slack.
fn sleep_precise(d: Duration) {
    let end = Instant::now() + d;
    if d > Duration::from_micros(200) {
        std::thread::sleep(d - Duration::from_micros(100));
    }
    while Instant::now() < end {
        std::hint::spin_loop();
    }
}

fn is_select(sql: &str) -> bool {
    sql.trim_start()
        .get(..6)
        .is_some_and(|s| s.eq_ignore_ascii_case("select"))
}

impl Drop for FakeConnection {
    fn drop(&mut self) {
        OPEN.fetch_sub(1, Ordering::Relaxed);
    }
}

struct FakeInterrupter(Arc<AtomicBool>);

impl Interrupter for FakeInterrupter {
    fn interrupt(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl Connection for FakeConnection {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn prepare_all(&mut self, sql: &[String]) -> DbResult<()> {
        self.statements = sql.iter().map(|s| is_select(s)).collect();
        Ok(())
    }

    fn execute(&mut self, id: StmtId, _params: &[Value]) -> DbResult<Outcome> {
        let select = self.statements[id];
        self.step(select, false)
    }

    fn execute_fetch(
        &mut self,
        id: StmtId,
        _params: &[Value],
        fetch: &mut Fetch,
    ) -> DbResult<Outcome> {
        let out = self.execute(id, _params)?;
        fill(fetch, out.rows);
        Ok(out)
    }

    fn execute_sql(&mut self, sql: &str) -> DbResult<Outcome> {
        track_ddl(sql);
        self.step(is_select(sql), false)
    }

    fn begin(&mut self, _writes: bool) -> DbResult<Outcome> {
        self.step(false, true)
    }

    fn commit(&mut self) -> DbResult<Outcome> {
        self.step(false, true)
    }

    fn rollback(&mut self) -> DbResult<Outcome> {
        // Rollback never fails or hangs: it is the engine's recovery path.
        Ok(Outcome::default())
    }

    fn table_exists(&mut self, table: &str) -> DbResult<bool> {
        let dropped = DROPPED.lock().unwrap_or_else(|p| p.into_inner());
        Ok(!dropped.iter().any(|t| t.eq_ignore_ascii_case(table)))
    }

    fn count_rows(&mut self, table: &str) -> DbResult<u64> {
        // An existing fake table is never empty, so read workloads accept it.
        Ok(u64::from(self.table_exists(table)?))
    }

    fn bulk_load(
        &mut self,
        _table: &str,
        _columns: &[&str],
        rows: &mut dyn FnMut(&mut Vec<Value>) -> bool,
    ) -> DbResult<u64> {
        let mut buf = Vec::new();
        let mut n = 0;
        while rows(&mut buf) {
            n += 1;
        }
        Ok(n)
    }

    fn query_text(&mut self, _sql: &str) -> DbResult<super::Rows> {
        Ok(Vec::new())
    }

    fn server_info(&mut self) -> DbResult<ServerInfo> {
        Ok(ServerInfo {
            version: "fake".into(),
            settings: vec![],
        })
    }

    fn interrupter(&self) -> Option<Box<dyn Interrupter>> {
        Some(Box::new(FakeInterrupter(self.interrupted.clone())))
    }
    fn into_evented(
        self: Box<Self>,
    ) -> Result<Box<dyn crate::driver::evented::Evented>, Box<dyn Connection>> {
        // SAFETY: eventfd takes no pointers; the fd it returns is ours.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(self);
        }
        // SAFETY: a new fd nothing else owns.
        let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
        Ok(Box::new(FakeEvented {
            conn: *self,
            fd,
            answers: std::collections::VecDeque::new(),
        }))
    }
}

/// The fake connection on an event loop: it answers every request when it
/// is started (its scripted latency slept there, on the loop's thread), so
/// `advance` is always done — the loop's worst case, a server whose every
/// answer is in before the client looks (see `engine::evclient`'s chain).
/// Its socket is an eventfd that never becomes readable.
struct FakeEvented {
    conn: FakeConnection,
    fd: std::os::fd::OwnedFd,
    /// Each started request's answer, and a `Fetch`'s rows to hand over.
    answers: std::collections::VecDeque<(DbResult<Outcome>, Option<u64>)>,
}

use std::os::fd::{AsRawFd, FromRawFd};

impl crate::driver::evented::Evented for FakeEvented {
    fn fd(&self) -> std::os::fd::RawFd {
        self.fd.as_raw_fd()
    }

    fn start(&mut self, req: crate::driver::evented::Request<'_>) -> DbResult<()> {
        use crate::driver::evented::Request;
        let c = &mut self.conn;
        let answer = match req {
            Request::Begin { writes } => (c.begin(writes), None),
            Request::Commit => (c.commit(), None),
            Request::Rollback => (c.rollback(), None),
            Request::Exec(id, p) => (c.execute(id, p), None),
            Request::Batch(id, p, rows) => (c.execute_batch(id, p, rows), None),
            Request::Fetch(id, p) => {
                let out = c.execute(id, p);
                let rows = out.as_ref().map_or(0, |o| o.rows);
                (out, Some(rows))
            }
        };
        self.answers.push_back(answer);
        Ok(())
    }

    fn advance(&mut self, fetch: Option<&mut Fetch>) -> crate::driver::evented::Progress {
        let (out, rows) = (self.answers.pop_front()).unwrap_or_else(|| (Err(not_started()), None));
        if let (Some(fetch), Some(rows)) = (fetch, rows) {
            fill(fetch, rows);
        }
        crate::driver::evented::Progress::Done(out)
    }

    fn cancel(&self) {
        self.conn.interrupted.store(true, Ordering::Relaxed);
    }
}

fn not_started() -> DbError {
    DbError::new(ErrorKind::Other, "", "advance without a request started")
}

/// Row i (from 0) holds i + 1 in its integer columns, so ids handed back
/// are valid ids of any table.
fn fill(fetch: &mut Fetch, rows: u64) {
    fetch.values.clear();
    for i in 0..rows {
        fetch.push_row(|_| Value::Int(i as i64 + 1));
    }
}
