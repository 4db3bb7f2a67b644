//! Helpers for the family's tests: a temporary SQLite database, workload
//! construction from option pairs, and a tiny executor that runs a client
//! script's operations on a real connection and counts them the way
//! sysbench classifies queries.

use std::path::PathBuf;

use tempfile::TempDir;

use crate::driver::sqlite::SqliteConnection;
use crate::driver::{Connection, DbResult, Dialect, Outcome, QueryClass};
use crate::rand::dist::{DistKind, DistParams};
use crate::rand::RandConfig;
use crate::rand::Rng;
use crate::util::progress::NoProgress;
use crate::workload::{self, ClientScript, Op, Workload};

/// Uniform ids with `seed`.
pub fn rand_config(seed: u64) -> RandConfig {
    RandConfig {
        kind: DistKind::Uniform,
        params: DistParams::default(),
        seed,
    }
}

/// A fresh SQLite database in a temporary directory (kept alive by the
/// returned guard) and one connection to it.
pub fn sqlite() -> (TempDir, SqliteConnection) {
    let dir = tempfile::tempdir().unwrap();
    let conn = SqliteConnection::open(&dir.path().join("db.sqlite"), &[]).unwrap();
    (dir, conn)
}

/// A test database: its directory and file.
pub struct TestDb {
    _dir: TempDir,
    pub path: PathBuf,
}

impl TestDb {
    pub fn new() -> TestDb {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        TestDb { _dir: dir, path }
    }

    pub fn connect(&self) -> SqliteConnection {
        SqliteConnection::open(&self.path, &[]).unwrap()
    }

    /// Runs `w.prepare` with `threads` loaders.
    pub fn prepare(&self, w: &dyn Workload, threads: usize) -> anyhow::Result<()> {
        let connect = || -> DbResult<Box<dyn Connection>> { Ok(Box::new(self.connect())) };
        w.prepare(&connect, threads, &NoProgress)
    }
}

/// Builds workload `name` for SQLite from `--name=value` pairs.
pub fn build(name: &str, opts: &[(&str, &str)]) -> Box<dyn Workload> {
    try_build(name, opts).unwrap()
}

pub fn try_build(name: &str, opts: &[(&str, &str)]) -> anyhow::Result<Box<dyn Workload>> {
    let given: Vec<(String, String)> = opts
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    workload::build(name, &given, Dialect::Sqlite, rand_config(42))
}

/// Per-transaction query counts, as sysbench reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    pub reads: u32,
    pub writes: u32,
    pub other: u32,
}

impl Counts {
    pub fn new(reads: u32, writes: u32, other: u32) -> Counts {
        Counts {
            reads,
            writes,
            other,
        }
    }
}

/// Runs one transaction of `script` on `conn`, panicking on any error.
pub fn run_txn(script: &mut dyn ClientScript, conn: &mut dyn Connection) -> Counts {
    let mut c = Counts::default();
    script.start();
    while let Some(op) = script.next() {
        let out: Outcome = match op {
            Op::Begin { writes } => conn.begin(writes),
            Op::Commit => conn.commit(),
            Op::Rollback => conn.rollback(),
            Op::Exec(id, params) => conn.execute(id, params),
            Op::Batch(id, params, rows) => conn.execute_batch(id, params, rows),
            Op::Fetch(id, params, fetch) => conn.execute_fetch(id, params, fetch),
        }
        .unwrap_or_else(|e| panic!("{e}"));
        match out.class() {
            QueryClass::Read => c.reads += 1,
            QueryClass::Write => c.writes += 1,
            QueryClass::Other => c.other += 1,
        }
    }
    c
}

/// Prepares `conn` for `w`'s statements and returns the script of client
/// `id` of `clients`.
pub fn client(
    w: &dyn Workload,
    conn: &mut dyn Connection,
    id: usize,
    clients: usize,
) -> Box<dyn ClientScript> {
    let sql: Vec<String> = w.statements().iter().map(|s| s.sql.clone()).collect();
    conn.prepare_all(&sql).unwrap();
    w.client(id, clients, Rng::for_client(42, id as u64))
}

/// Prepares `name` with `opts` on a fresh database, runs `txns`
/// transactions of client 0, and returns the counts of each.
pub fn drive(name: &str, opts: &[(&str, &str)], txns: usize) -> Vec<Counts> {
    let db = TestDb::new();
    let w = build(name, opts);
    db.prepare(w.as_ref(), 2).unwrap();
    let mut conn = db.connect();
    w.check_prepared(&mut conn).unwrap();
    let mut script = client(w.as_ref(), &mut conn, 0, 1);
    (0..txns)
        .map(|_| run_txn(script.as_mut(), &mut conn))
        .collect()
}

/// Asserts that every transaction had exactly `expected` counts.
pub fn assert_all(counts: &[Counts], expected: Counts) {
    for (i, c) in counts.iter().enumerate() {
        assert_eq!(*c, expected, "transaction {i}");
    }
}
