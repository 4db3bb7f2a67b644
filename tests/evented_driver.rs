//! Connections an event loop drives (`driver::evented`) against a real
//! PostgreSQL and a real MariaDB: each request answers exactly as the
//! same request on a blocking connection does, in both statement modes
//! (responses larger than the read buffer, rows kept for a fetch, batches
//! in one command and one row at a time, errors, the rollback with
//! nothing to roll back, a batch MariaDB refuses in bulk); many
//! connections progress on one thread at once; a lost session is
//! `ConnectionLost` and stays so.

mod util;

use std::time::{Duration, Instant};

use dbsweep::driver::evented::{Evented, Progress, Request, Wait};
use dbsweep::driver::{Col, Connection, DbResult, ErrorKind, Fetch, Outcome, PsMode, Value};
use util::evented::{blocking, conn, evented, shape, wait};
use util::Server;

/// One request to its end, waiting for the socket between steps.
fn drive(
    e: &mut dyn Evented,
    req: Request<'_>,
    mut fetch: Option<&mut Fetch>,
) -> DbResult<Outcome> {
    e.start(req)?;
    loop {
        match e.advance(fetch.as_deref_mut()) {
            Progress::Done(r) => return r,
            Progress::Wait(w) => wait(e.fd(), w),
        }
    }
}

fn rows(from: i64, n: i64) -> Vec<Value> {
    (from..from + n)
        .flat_map(|i| [Value::Int(i), Value::Text(format!("row {i}"))])
        .collect()
}

/// The statements of these tests in one engine's dialect.
struct Dialect {
    server: &'static str,
    /// Insert, select a range, update, 20,000 rows of 100 bytes, a 1 MB
    /// value: of the table named.
    statements: fn(&str) -> Vec<String>,
    /// Sleeps as many seconds as its parameter says.
    sleep: &'static str,
    /// The session's id, and the statement that ends the session of an id.
    session: &'static str,
    kill: fn(i64) -> String,
}

const POSTGRES: Dialect = Dialect {
    server: "postgres",
    statements: pg_statements,
    sleep: "SELECT pg_sleep($1::float8)",
    session: "SELECT pg_backend_pid()",
    kill: pg_kill,
};

const MARIADB: Dialect = Dialect {
    server: "mariadb",
    statements: my_statements,
    sleep: "SELECT SLEEP(?)",
    session: "SELECT CONNECTION_ID()",
    kill: my_kill,
};

fn pg_statements(table: &str) -> Vec<String> {
    vec![
        format!("INSERT INTO {table} VALUES ($1, $2)"),
        format!("SELECT id, c FROM {table} WHERE id BETWEEN $1 AND $2 ORDER BY id"),
        format!("UPDATE {table} SET c = c || 'u' WHERE id <= $1"),
        // Responses many times the read buffer, read as they arrive.
        "SELECT g, repeat('x', 100) FROM generate_series(1, $1) g".to_string(),
        "SELECT repeat('y', 1000000), 1 UNION ALL SELECT 'z', $1".to_string(),
    ]
}

fn pg_kill(pid: i64) -> String {
    format!("SELECT pg_terminate_backend({pid})")
}

fn my_statements(table: &str) -> Vec<String> {
    vec![
        format!("INSERT INTO {table} VALUES (?, ?)"),
        format!("SELECT id, c FROM {table} WHERE id BETWEEN ? AND ? ORDER BY id"),
        format!("UPDATE {table} SET c = CONCAT(c, 'u') WHERE id <= ?"),
        "WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?) \
         SELECT n, REPEAT('x', 100) FROM g"
            .to_string(),
        "SELECT REPEAT('y', 1000000), 1 UNION ALL SELECT 'z', ?".to_string(),
    ]
}

fn my_kill(id: i64) -> String {
    format!("KILL {id}")
}

#[test]
fn each_postgres_request_answers_as_on_a_blocking_connection() {
    each_request_answers_as_on_a_blocking_connection(&POSTGRES);
}

#[test]
fn each_mariadb_request_answers_as_on_a_blocking_connection() {
    each_request_answers_as_on_a_blocking_connection(&MARIADB);
}

fn each_request_answers_as_on_a_blocking_connection(d: &Dialect) {
    let s = Server::start(d.server, &[]);
    for (mode, t) in [(PsMode::Prepared, "ev_p"), (PsMode::Disable, "ev_t")] {
        let mut setup = conn(&s.url, mode);
        for table in [format!("{t}_a"), format!("{t}_b")] {
            setup
                .execute_sql(&format!("DROP TABLE IF EXISTS {table}"))
                .unwrap();
            setup
                .execute_sql(&format!(
                    "CREATE TABLE {table} (id int PRIMARY KEY, c text)"
                ))
                .unwrap();
        }
        let sql = d.statements;
        let (a, b) = (format!("{t}_a"), format!("{t}_b"));
        let mut c = conn(&s.url, mode);
        c.prepare_all(&sql(&a)).unwrap();
        let mut e = evented(&s.url, mode, &sql(&b));
        let batch = rows(1, 15);
        let dup = [rows(16, 2), rows(3, 1), rows(18, 2)].concat();
        let (two, many, big) = (
            [Value::Int(2), Value::Int(9)],
            [Value::Int(20_000)],
            [Value::Int(7)],
        );
        let (r100, r5) = (rows(100, 1), rows(5, 1));
        let script: Vec<Request> = vec![
            Request::Rollback,
            Request::Exec(0, &r100),
            Request::Begin { writes: true },
            Request::Batch(0, &batch, 15),
            Request::Batch(0, &[], 0),
            Request::Exec(2, &big),
            Request::Commit,
            Request::Fetch(1, &two),
            Request::Exec(3, &many),
            Request::Exec(4, &big),
            Request::Begin { writes: true },
            Request::Batch(0, &dup, 5),
            Request::Rollback,
            Request::Exec(0, &r5),
            Request::Fetch(1, &two),
        ];
        for (i, &req) in script.iter().enumerate() {
            let mut fa = Fetch::new(&[Col::Int, Col::Text], 3);
            let mut fb = Fetch::new(&[Col::Int, Col::Text], 3);
            let want = blocking(&mut *c, req, Some(&mut fa));
            let got = drive(&mut *e, req, Some(&mut fb));
            assert_eq!(shape(&got), shape(&want), "{mode:?} request {i}: {req:?}");
            if let Request::Fetch(..) = req {
                assert_eq!(fb.values, fa.values, "{mode:?} request {i}");
                assert_eq!(fb.rows(), 3);
                assert_eq!(fb.int(0, 0), Some(2));
            }
        }
        // What each left behind is the same, row for row.
        let mut check = conn(&s.url, PsMode::Prepared);
        let dump = |check: &mut Box<dyn Connection>, table: &str| {
            check
                .query_text(&format!("SELECT id, c FROM {table} ORDER BY id"))
                .unwrap()
        };
        let left = dump(&mut check, &a);
        assert_eq!(left.len(), 16);
        assert_eq!(dump(&mut check, &b), left);
        // The duplicate key: the server's error, of its kind.
        let err = drive(&mut *e, Request::Exec(0, &rows(1, 1)), None).unwrap_err();
        assert_eq!(err.kind, ErrorKind::DuplicateKey, "{err}");
    }
}

#[test]
fn many_postgres_connections_progress_on_one_thread() {
    many_connections_progress_on_one_thread(&POSTGRES);
}

#[test]
fn many_mariadb_connections_progress_on_one_thread() {
    many_connections_progress_on_one_thread(&MARIADB);
}

fn many_connections_progress_on_one_thread(d: &Dialect) {
    let s = Server::start(d.server, &[]);
    let sql = vec![d.sleep.to_string()];
    let mut conns: Vec<Box<dyn Evented>> = (0..40)
        .map(|_| evented(&s.url, PsMode::Prepared, &sql))
        .collect();
    let secs = [Value::Float(0.3)];
    let t = Instant::now();
    for e in &mut conns {
        e.start(Request::Exec(0, &secs)).unwrap();
    }
    // One thread waits on every socket at once and serves each that is
    // ready: 40 sleeps of 0.3 s end together, not one after another (12 s).
    let mut open: Vec<usize> = (0..conns.len()).collect();
    while !open.is_empty() {
        let mut still = Vec::new();
        for &i in &open {
            match conns[i].advance(None) {
                Progress::Done(r) => assert_eq!(r.unwrap().rows, 1),
                Progress::Wait(w) => still.push((i, w)),
            }
        }
        if still.is_empty() {
            break;
        }
        let mut fds: Vec<libc::pollfd> = still
            .iter()
            .map(|&(i, w)| libc::pollfd {
                fd: conns[i].fd(),
                events: if w == Wait::Readable {
                    libc::POLLIN
                } else {
                    libc::POLLOUT
                },
                revents: 0,
            })
            .collect();
        // SAFETY: `fds` is a valid array of pollfds of its length.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 10_000) };
        assert!(n > 0, "no socket became ready");
        open = still.iter().map(|&(i, _)| i).collect();
    }
    let took = t.elapsed();
    assert!(
        took < Duration::from_secs(6),
        "40 sleeps of 0.3 s took {took:?}"
    );
}

#[test]
fn a_lost_postgres_session_is_connection_lost_and_stays_lost() {
    a_lost_session_is_connection_lost_and_stays_lost(&POSTGRES);
}

#[test]
fn a_lost_mariadb_session_is_connection_lost_and_stays_lost() {
    a_lost_session_is_connection_lost_and_stays_lost(&MARIADB);
}

fn a_lost_session_is_connection_lost_and_stays_lost(d: &Dialect) {
    let s = Server::start(d.server, &[]);
    let sql = vec![d.session.to_string()];
    let mut e = evented(&s.url, PsMode::Prepared, &sql);
    let mut f = Fetch::new(&[Col::Int], 1);
    drive(&mut *e, Request::Fetch(0, &[]), Some(&mut f)).unwrap();
    let pid = f.int(0, 0).unwrap();
    let mut admin = conn(&s.url, PsMode::Prepared);
    admin.execute_sql(&(d.kill)(pid)).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let err = drive(&mut *e, Request::Exec(0, &[]), None).unwrap_err();
    assert_eq!(err.kind, ErrorKind::ConnectionLost, "{err}");
    let again = drive(&mut *e, Request::Exec(0, &[]), None).unwrap_err();
    assert_eq!(again.kind, ErrorKind::ConnectionLost, "{again}");
}

#[test]
fn a_batch_mariadb_refuses_in_bulk_runs_one_row_at_a_time() {
    // MariaDB takes INSERT, UPDATE, DELETE and REPLACE in bulk; anything
    // else (here a SELECT; 10.2's DELETE) it refuses before running a row
    // (ER_UNSUPPORTED_PS). The batch then runs one execution per row, as
    // on a blocking connection, and the statement's next batches so too.
    let s = Server::start("mariadb", &[]);
    let sql = ["SELECT ?, ?".to_string()];
    let mut c = conn(&s.url, PsMode::Prepared);
    c.prepare_all(&sql).unwrap();
    let mut e = evented(&s.url, PsMode::Prepared, &sql);
    let (three, four) = (rows(1, 3), rows(10, 4));
    for (i, req) in [
        Request::Batch(0, &three, 3),
        Request::Batch(0, &four, 4),
        Request::Exec(0, &three[..2]),
    ]
    .into_iter()
    .enumerate()
    {
        let want = blocking(&mut *c, req, None);
        let got = drive(&mut *e, req, None);
        assert!(got.is_ok(), "request {i}: {got:?}");
        assert_eq!(shape(&got), shape(&want), "request {i}: {req:?}");
    }
    assert_eq!(
        drive(&mut *e, Request::Batch(0, &four, 4), None)
            .unwrap()
            .rows,
        4
    );
}
