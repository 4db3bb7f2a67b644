//! The PostgreSQL driver against a real server: a scratch PostgreSQL started
//! once for this test binary (from the installed binaries, as the
//! `postgres` OS user when run as root) on a free loopback port, with users
//! for each password method, stopped and removed at exit.
//!
//! Without PostgreSQL binaries on the machine every test says so on stderr
//! and passes; set `DBSWEEP_REQUIRE_POSTGRES=1` to make that a failure.
//!
//! The 1,000,000-row load is an ignored test, to be run in release mode:
//! `cargo test --release --test postgres_driver -- --ignored --nocapture`.

mod util;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant};

use dbsweep::driver::ErrorSet;
use dbsweep::driver::{
    self, Connection, DbResult, Dialect, ErrorKind, Outcome, PsMode, Target, Value,
};
use dbsweep::engine::{self, RunConfig};
use dbsweep::rand::dist::{DistKind, DistParams};
use dbsweep::rand::RandConfig;
use dbsweep::util::progress::NoProgress;
use dbsweep::workload::{self, Workload};

use util::servers;

#[global_allocator]
static GLOBAL: util::alloc::Counting = util::alloc::Counting;

/// This thread's allocations: tests run alongside each other.
fn allocations() -> u64 {
    util::alloc::thread_allocations()
}

// ---------------------------------------------------------------------------
// The scratch server.

/// Password of the `sbtest` user (SCRAM), with a space and a quote so that
/// URL decoding and SASLprep are exercised.
const PASSWORD: &str = "sb pass'1";

/// A running scratch server (stopped when the test binary exits).
struct Server {
    /// Holds the data directory and the unix socket.
    root: PathBuf,
    port: u16,
}

static SERVER: OnceLock<Option<Server>> = OnceLock::new();

/// The shared server, started on first use; None without PostgreSQL.
fn server() -> Option<&'static Server> {
    SERVER
        .get_or_init(|| {
            let bin = find_bin()?;
            Some(start(&bin))
        })
        .as_ref()
}

/// Gets the server or skips the test (see the module doc).
macro_rules! server_or_skip {
    () => {
        match server() {
            Some(s) => s,
            None => {
                assert!(
                    std::env::var_os("DBSWEEP_REQUIRE_POSTGRES").is_none(),
                    "PostgreSQL binaries not found under /usr/lib/postgresql"
                );
                eprintln!("skipping: PostgreSQL binaries not found under /usr/lib/postgresql");
                return;
            }
        }
    };
}

/// The newest installed PostgreSQL's bin directory.
fn find_bin() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("postgres").exists().then_some((v, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b)
}

fn start(bin: &Path) -> Server {
    let (uid, gid) = servers::os_user("postgres");
    // The server user must reach its data directory and socket.
    let root = servers::scratch_dir("dbsweep-pg-", (uid, gid));
    let pwfile = root.join("pw");
    std::fs::write(&pwfile, "super secret\n").unwrap();
    std::os::unix::fs::chown(&pwfile, Some(uid), Some(gid)).unwrap();
    let data = root.join("data");
    let log = root.join("log");

    let out = Command::new(bin.join("initdb"))
        .arg("-D")
        .arg(&data)
        .args(["-U", "postgres", "-A", "scram-sha-256", "-E", "UTF8"])
        .args(["--locale=C", "--no-sync", "--no-instructions"])
        .arg(format!("--pwfile={}", pwfile.display()))
        .uid(uid)
        .gid(gid)
        .output()
        .expect("run initdb");
    assert!(
        out.status.success(),
        "initdb failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // One user per password method; everyone else SCRAM.
    std::fs::write(
        data.join("pg_hba.conf"),
        "local all all scram-sha-256\n\
         host all md5user 127.0.0.1/32 md5\n\
         host all clearuser 127.0.0.1/32 password\n\
         host all all 127.0.0.1/32 scram-sha-256\n",
    )
    .unwrap();

    let port = servers::free_port();
    let child = Command::new(bin.join("postgres"))
        .arg("-D")
        .arg(&data)
        .arg("-k")
        .arg(&root)
        .args(["-p", &port.to_string()])
        .args(["-c", "listen_addresses=127.0.0.1"])
        // Speed over durability: this is a scratch server.
        .args(["-c", "fsync=off", "-c", "synchronous_commit=off"])
        .args(["-c", "full_page_writes=off"])
        // Deadlocks are detected after this long; the default (1 s) would
        // only slow the deadlock test down.
        .args(["-c", "deadlock_timeout=100ms"])
        .args(["-c", "max_connections=60"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .uid(uid)
        .gid(gid)
        .spawn()
        .expect("start postgres");
    // SIGINT is the fast shutdown: sessions left open are ended.
    servers::stop_at_exit(child, root.clone(), libc::SIGINT);
    let server = Server { root, port };

    // Wait until it accepts the superuser, then create the test users and
    // databases.
    let admin = Target::parse(&server.url("postgres", "super secret", "postgres")).unwrap();
    let mut c = servers::wait_for("the scratch server", &log, Duration::from_secs(30), || {
        match driver::connect(&admin) {
            Ok(c) => Ok(Some(c)),
            // Not listening yet.
            Err(e) if e.kind == ErrorKind::ConnectionLost => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    });
    let quoted = PASSWORD.replace('\'', "''");
    for sql in [
        format!("CREATE ROLE sbtest LOGIN PASSWORD '{quoted}'"),
        "CREATE DATABASE sbtest OWNER sbtest".to_string(),
        "CREATE DATABASE oltp OWNER sbtest".to_string(),
        "CREATE DATABASE bigload OWNER sbtest".to_string(),
        "SET password_encryption = 'md5'".to_string(),
        "CREATE ROLE md5user LOGIN PASSWORD 'md5 pw'".to_string(),
        "RESET password_encryption".to_string(),
        "CREATE ROLE clearuser LOGIN PASSWORD 'clear pw'".to_string(),
    ] {
        c.execute_sql(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    server
}

impl Server {
    fn url(&self, user: &str, password: &str, db: &str) -> String {
        let password: String = url_encode(password);
        format!("postgres://{user}:{password}@127.0.0.1:{}/{db}", self.port)
    }

    /// The `sbtest` user on database `db` over TCP, in `mode`.
    fn target(&self, db: &str, mode: PsMode) -> Target {
        let mut t = Target::parse(&self.url("sbtest", PASSWORD, db)).unwrap();
        t.set_ps_mode(mode);
        t
    }

    fn connect(&self, mode: PsMode) -> Box<dyn Connection> {
        driver::connect(&self.target("sbtest", mode)).unwrap()
    }
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

const MODES: [PsMode; 2] = [PsMode::Prepared, PsMode::Disable];

fn mode_name(m: PsMode) -> &'static str {
    match m {
        PsMode::Prepared => "ps",
        PsMode::Disable => "txt",
    }
}

fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

fn out(result_set: bool, rows: u64, affected: u64) -> Outcome {
    Outcome {
        result_set,
        rows,
        affected,
    }
}

fn sqls(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

// ---------------------------------------------------------------------------
// Connecting.

#[test]
fn connects_over_tcp_with_scram_md5_and_cleartext_passwords() {
    let s = server_or_skip!();
    for (user, pw) in [
        ("sbtest", PASSWORD),
        ("md5user", "md5 pw"),
        ("clearuser", "clear pw"),
    ] {
        let t = Target::parse(&s.url(user, pw, "sbtest")).unwrap();
        let mut c = driver::connect(&t).unwrap_or_else(|e| panic!("{user}: {e}"));
        assert_eq!(c.dialect(), Dialect::Postgres);
        assert_eq!(
            c.execute_sql("SELECT current_user").unwrap(),
            out(true, 1, 0)
        );
    }
}

#[test]
fn connects_over_the_unix_socket_directory_or_file() {
    let s = server_or_skip!();
    let file = s.root.join(format!(".s.PGSQL.{}", s.port));
    for socket in [s.root.clone(), file] {
        let url = format!(
            "{}?socket={}",
            s.url("sbtest", PASSWORD, "sbtest"),
            socket.display()
        );
        let mut c = driver::connect(&Target::parse(&url).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", socket.display()));
        // A unix-socket session has no client address.
        let o = c
            .execute_sql("SELECT 1 WHERE inet_client_addr() IS NULL")
            .unwrap();
        assert_eq!(o.rows, 1);
    }
}

#[test]
fn wrong_or_missing_password_names_user_place_and_cause() {
    let s = server_or_skip!();
    let t = Target::parse(&s.url("sbtest", "wrong", "sbtest")).unwrap();
    let e = driver::connect(&t).err().unwrap();
    let msg = e.to_string();
    assert!(msg.contains("'sbtest'"), "{msg}");
    assert!(msg.contains(&format!("127.0.0.1:{}", s.port)), "{msg}");
    assert!(msg.contains("database 'sbtest'"), "{msg}");
    assert!(msg.contains("password authentication failed"), "{msg}");
    assert_eq!((e.kind, e.code.as_str()), (ErrorKind::Other, "28P01"));

    let t = Target::parse(&format!("postgres://sbtest@127.0.0.1:{}/sbtest", s.port)).unwrap();
    let msg = driver::connect(&t).err().unwrap().to_string();
    assert!(
        msg.contains("asks for a password") && msg.contains("'sbtest'"),
        "{msg}"
    );

    let t = Target::parse(&s.url("sbtest", PASSWORD, "no_such_db")).unwrap();
    let e = driver::connect(&t).err().unwrap();
    assert!(e.message.contains("no_such_db"), "{e}");
    assert_eq!(e.kind, ErrorKind::Other);
}

#[test]
fn unreachable_port_names_host_and_port() {
    let port = servers::free_port();
    let t = Target::parse(&format!("postgres://sbtest:x@127.0.0.1:{port}/sbtest")).unwrap();
    let e = driver::connect(&t).err().unwrap();
    assert_eq!(e.kind, ErrorKind::ConnectionLost);
    assert!(e.message.contains(&format!("127.0.0.1:{port}")), "{e}");
    assert!(e.message.contains("'sbtest'"), "{e}");
    assert!(e.message.to_lowercase().contains("refused"), "{e}");
}

// ---------------------------------------------------------------------------
// Statements.

#[test]
fn statements_report_exact_outcomes_in_both_modes() {
    let s = server_or_skip!();
    for mode in MODES {
        let t = format!("st_{}", mode_name(mode));
        let mut c = s.connect(mode);
        c.execute_sql(&format!("DROP TABLE IF EXISTS {t}")).unwrap();
        assert!(!c.table_exists(&t).unwrap());
        assert_eq!(
            c.execute_sql(&format!(
                "CREATE TABLE {t} (id int PRIMARY KEY, c text, f float8)"
            ))
            .unwrap(),
            Outcome::default()
        );
        assert!(c.table_exists(&t).unwrap());
        c.prepare_all(&sqls(&[
            &format!("INSERT INTO {t} VALUES ($1, $2, $3)"),
            &format!("SELECT c FROM {t} WHERE id BETWEEN $1 AND $2"),
            &format!("UPDATE {t} SET f = f + 1 WHERE id <= $1"),
            &format!("DELETE FROM {t} WHERE id > $1"),
            &format!("SELECT id FROM {t} WHERE c = $1 AND length(c) = $2"),
            &format!("INSERT INTO {t} VALUES ($1, NULL, 0), ($2, NULL, 0), ($3, NULL, 0)"),
            &format!("SELECT id FROM {t} WHERE f = $1"),
            &format!("SELECT id FROM {t} WHERE c IS NULL AND f IS NULL AND id = $1"),
            "SELECT 1 WHERE false",
        ]))
        .unwrap();
        for id in 1..=10 {
            let o = c
                .execute(0, &[Value::Int(id), text("x"), Value::Float(0.25)])
                .unwrap();
            assert_eq!(o, out(false, 0, 1));
        }
        assert_eq!(
            c.execute(1, &[Value::Int(3), Value::Int(7)]).unwrap(),
            out(true, 5, 0)
        );
        assert_eq!(
            c.execute(1, &[Value::Int(70), Value::Int(80)]).unwrap(),
            out(true, 0, 0)
        );
        assert_eq!(c.execute(2, &[Value::Int(4)]).unwrap(), out(false, 0, 4));
        assert_eq!(c.execute(6, &[Value::Float(1.25)]).unwrap().rows, 4);
        assert_eq!(c.execute(3, &[Value::Int(8)]).unwrap(), out(false, 0, 2));
        assert_eq!(c.execute(3, &[Value::Int(8)]).unwrap(), out(false, 0, 0));
        let three = [Value::Int(-1), Value::Int(-2), Value::Int(-3)];
        assert_eq!(c.execute(5, &three).unwrap(), out(false, 0, 3));
        // NULL parameters, and a negative one (a literal in text mode).
        c.execute(0, &[Value::Int(-4), Value::Null, Value::Null])
            .unwrap();
        assert_eq!(c.execute(7, &[Value::Int(-4)]).unwrap(), out(true, 1, 0));
        assert_eq!(c.execute(8, &[]).unwrap(), out(true, 0, 0));

        // Quotes and backslashes arrive intact (length checked server-side).
        let tricky = r"it's a \ back\slash, '' \\ and \n";
        c.execute(0, &[Value::Int(100), text(tricky), Value::Float(-0.5)])
            .unwrap();
        let len = Value::Int(tricky.chars().count() as i64);
        assert_eq!(
            c.execute(4, &[text(tricky), len.clone()]).unwrap(),
            out(true, 1, 0)
        );
        assert_eq!(c.execute(6, &[Value::Float(-0.5)]).unwrap().rows, 1);

        // Transactions: BEGIN / COMMIT / ROLLBACK are "other" statements.
        assert_eq!(c.begin(true).unwrap(), Outcome::default());
        c.execute(0, &[Value::Int(200), text("gone"), Value::Null])
            .unwrap();
        assert_eq!(c.rollback().unwrap(), Outcome::default());
        assert_eq!(c.begin(true).unwrap(), Outcome::default());
        c.execute(0, &[Value::Int(201), text("kept"), Value::Null])
            .unwrap();
        assert_eq!(c.commit().unwrap(), Outcome::default());
        assert_eq!(c.count_rows(&t).unwrap(), 8 + 3 + 1 + 1 + 1);
        // A rollback with no transaction open is harmless.
        assert_eq!(c.rollback().unwrap(), Outcome::default());

        // Simple protocol: several statements add up; large responses and a
        // row larger than the read buffer are counted and skipped.
        assert_eq!(
            c.execute_sql(&format!(
                "UPDATE {t} SET c = 'y' WHERE id = 1; UPDATE {t} SET c = 'y' WHERE id BETWEEN 1 AND 3"
            ))
            .unwrap(),
            out(false, 0, 4)
        );
        assert_eq!(
            c.execute_sql("SELECT g, repeat('x', 100) FROM generate_series(1, 20000) g")
                .unwrap(),
            out(true, 20000, 0)
        );
        assert_eq!(
            c.execute_sql("SELECT repeat('x', 1000000), 1 UNION ALL SELECT 'y', 2")
                .unwrap(),
            out(true, 2, 0)
        );
        assert_eq!(
            c.execute_sql(&format!("CREATE TABLE {t}_copy AS SELECT * FROM {t}"))
                .unwrap(),
            out(false, 0, 14)
        );
        c.execute_sql(&format!("DROP TABLE {t}, {t}_copy")).unwrap();
    }
}

#[test]
fn errors_are_classified_and_leave_the_connection_usable() {
    let s = server_or_skip!();
    for mode in MODES {
        let t = format!("er_{}", mode_name(mode));
        let mut c = s.connect(mode);
        c.execute_sql(&format!(
            "DROP TABLE IF EXISTS {t}; CREATE TABLE {t} (id int PRIMARY KEY)"
        ))
        .unwrap();
        c.prepare_all(&sqls(&[
            &format!("INSERT INTO {t} VALUES ($1)"),
            &format!("SELECT id FROM {t}"),
        ]))
        .unwrap();
        c.execute(0, &[Value::Int(1)]).unwrap();
        let e = c.execute(0, &[Value::Int(1)]).unwrap_err();
        assert_eq!(
            (e.kind, e.code.as_str()),
            (ErrorKind::DuplicateKey, "23505")
        );
        assert!(e.message.contains("duplicate key"), "{e}");
        assert_eq!(c.execute(1, &[]).unwrap(), out(true, 1, 0));

        // Inside a transaction: the error aborts it; ROLLBACK recovers.
        c.begin(true).unwrap();
        c.execute(0, &[Value::Int(2)]).unwrap();
        assert!(c.execute(0, &[Value::Int(1)]).is_err());
        let e = c.execute(1, &[]).unwrap_err();
        assert_eq!(e.code, "25P02", "{e}");
        c.rollback().unwrap();
        assert_eq!(c.execute(1, &[]).unwrap().rows, 1);

        // COPY FROM STDIN outside bulk_load is refused, cleanly.
        let e = c.execute_sql(&format!("COPY {t} FROM STDIN")).unwrap_err();
        assert!(e.message.contains("bulk_load"), "{e}");
        assert_eq!(c.execute(1, &[]).unwrap().rows, 1);
        c.execute_sql(&format!("DROP TABLE {t}")).unwrap();
    }
    // A statement that does not parse names itself at prepare (prepared
    // mode; text mode finds out at execution).
    let mut c = s.connect(PsMode::Prepared);
    let e = c
        .prepare_all(&sqls(&[
            "SELECT 1",
            "SELEKT 2",
            "SELECT * FROM no_such_table",
        ]))
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Other);
    assert!(
        e.message.contains("statement 1 (SELEKT 2)") && e.message.contains("syntax error"),
        "{e}"
    );
    c.prepare_all(&sqls(&["SELECT 1", "SELECT 2"])).unwrap();
    // Preparing again replaces the statements.
    c.prepare_all(&sqls(&["SELECT 3 UNION ALL SELECT 4"]))
        .unwrap();
    assert_eq!(c.execute(0, &[]).unwrap(), out(true, 2, 0));
    assert!(c.execute(1, &[]).is_err());
}

#[test]
fn terminated_backend_is_connection_lost_and_stays_lost() {
    let s = server_or_skip!();
    let mut victim = s.connect(PsMode::Prepared);
    victim.prepare_all(&sqls(&["SELECT 1"])).unwrap();
    let marker = "SELECT 'terminate me'";
    victim.execute_sql(marker).unwrap();
    let mut killer = s.connect(PsMode::Prepared);
    let killed = killer
        .execute_sql(&format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = '{}'",
            marker.replace('\'', "''")
        ))
        .unwrap();
    assert_eq!(killed.rows, 1);
    // The server's FATAL message (57P01) waits in the socket, then EOF.
    let e = victim.execute(0, &[]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::ConnectionLost, "{e}");
    let e = victim.execute_sql("SELECT 1").unwrap_err();
    assert_eq!(e.kind, ErrorKind::ConnectionLost, "{e}");
}

#[test]
fn deadlock_is_classified_and_survivable() {
    let s = server_or_skip!();
    let mut setup = s.connect(PsMode::Prepared);
    setup
        .execute_sql(
            "DROP TABLE IF EXISTS dl; CREATE TABLE dl (id int PRIMARY KEY, v int);\
             INSERT INTO dl VALUES (1, 0), (2, 0)",
        )
        .unwrap();
    let barrier = Arc::new(Barrier::new(2));
    let threads: Vec<_> = [(1, 2), (2, 1)]
        .into_iter()
        .map(|(first, second)| {
            let barrier = barrier.clone();
            let mut c = s.connect(PsMode::Prepared);
            std::thread::spawn(move || {
                c.prepare_all(&sqls(&["UPDATE dl SET v = v + 1 WHERE id = $1"]))
                    .unwrap();
                c.begin(true).unwrap();
                c.execute(0, &[Value::Int(first)]).unwrap();
                barrier.wait();
                match c.execute(0, &[Value::Int(second)]) {
                    Ok(o) => {
                        assert_eq!(o.affected, 1);
                        c.commit().unwrap();
                        None
                    }
                    Err(e) => {
                        c.rollback().unwrap();
                        // Still usable after the rollback.
                        assert_eq!(c.execute_sql("SELECT 1").unwrap().rows, 1);
                        Some(e)
                    }
                }
            })
        })
        .collect();
    let errors: Vec<_> = threads
        .into_iter()
        .filter_map(|h| h.join().unwrap())
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].kind, ErrorKind::Deadlock);
    assert_eq!(errors[0].code, "40P01");
    // The survivor committed both its updates.
    assert_eq!(
        setup
            .execute_sql("SELECT 1 FROM dl WHERE v = 1")
            .unwrap()
            .rows,
        2
    );
    setup.execute_sql("DROP TABLE dl").unwrap();
}

// ---------------------------------------------------------------------------
// Loading, server information, interrupting.

#[test]
fn bulk_load_streams_rows_exactly() {
    let s = server_or_skip!();
    let mut c = s.connect(PsMode::Prepared);
    c.execute_sql(
        "DROP TABLE IF EXISTS bl; CREATE TABLE bl (id int PRIMARY KEY, k int, c text, f float8)",
    )
    .unwrap();
    const N: i64 = 100_000;
    let tricky = "tab\there\nnewline\r\\N not null\\";
    let mut id = 0;
    let started = Instant::now();
    let n = c
        .bulk_load("bl", &["id", "k", "c", "f"], &mut |row| {
            if id == N {
                return false;
            }
            id += 1;
            row.push(Value::Int(id));
            row.push(if id % 10 == 0 {
                Value::Null
            } else {
                Value::Int(-id)
            });
            row.push(if id == 5 {
                text(tricky)
            } else {
                text("###########-###########-###########-###########-###########")
            });
            row.push(Value::Float(id as f64 / 4.0));
            true
        })
        .unwrap();
    eprintln!("bulk_load of {N} rows: {:?}", started.elapsed());
    assert_eq!(n, N as u64);
    assert_eq!(c.count_rows("bl").unwrap(), N as u64);
    c.prepare_all(&sqls(&[
        "SELECT 1 FROM bl WHERE id = $1 AND c = $2",
        "SELECT 1 FROM bl WHERE k IS NULL",
        "SELECT 1 FROM bl WHERE f = $1 AND k = $2",
    ]))
    .unwrap();
    assert_eq!(
        c.execute(0, &[Value::Int(5), text(tricky)]).unwrap().rows,
        1
    );
    assert_eq!(c.execute(1, &[]).unwrap().rows, (N / 10) as u64);
    assert_eq!(
        c.execute(2, &[Value::Float(0.75), Value::Int(-3)])
            .unwrap()
            .rows,
        1
    );

    // A duplicate key stops the load early with the server's error; the
    // connection stays usable.
    let mut sent = 0u64;
    let started = Instant::now();
    let e = c
        .bulk_load("bl", &["id", "k", "c", "f"], &mut |row| {
            sent += 1;
            if sent > 5_000_000 {
                return false;
            }
            row.extend([Value::Int(1), Value::Int(1), text("dup"), Value::Null]);
            true
        })
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::DuplicateKey, "{e}");
    assert!(sent < 5_000_000, "the load was not cut short");
    // Sending five million rows would take minutes; a minute is a hang's
    // bound.
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(c.count_rows("bl").unwrap(), N as u64);
    let e = c
        .bulk_load("no_such_table", &["id"], &mut |_| false)
        .unwrap_err();
    assert!(e.message.contains("no_such_table"), "{e}");
    c.execute_sql("DROP TABLE bl").unwrap();
}

/// NUMERIC, timestamp and date columns load through binary COPY and hold
/// exactly what the same values' text (text COPY's, or an INSERT's
/// literals) gives: the same digits, display scale and rounding to the
/// column's scale, the same instants.
#[test]
fn bulk_load_of_numerics_and_dates_stores_what_their_text_would() {
    let s = server_or_skip!();
    let mut c = s.connect(PsMode::Prepared);
    let columns = "id int, m numeric(12,2), r numeric(4,4), n numeric, ts timestamp, d date";
    c.execute_sql(&format!(
        "DROP TABLE IF EXISTS nb, nt; CREATE TABLE nb ({columns}); CREATE TABLE nt ({columns})"
    ))
    .unwrap();
    let floats = [
        12.34, -0.5, 0.0, -0.0, 1e20, 1e-7, 0.12345, 300_000.0, 99.999, 2.5e-5, -7.0,
    ];
    let row = |i: usize| -> Vec<Value> {
        let x = floats[i % floats.len()];
        let secs = 946_684_800 + (i as i64 - 500) * 7_777_777;
        let ts = dbsweep::util::civil::sql_datetime(secs);
        vec![
            Value::Int(i as i64),
            Value::Float((x * 100.0_f64).round() / 100.0 % 1e10),
            Value::Float(if x.abs() < 1.0 { x } else { 0.25 }),
            if i % 7 == 0 {
                Value::Int(i as i64 * -1_000_003)
            } else if i % 13 == 0 {
                Value::Null
            } else {
                Value::Float(x * (i as f64 + 0.5))
            },
            Value::Text(if i % 3 == 0 {
                format!("{ts}.{:06}", i * 977 % 1_000_000)
            } else {
                ts.clone()
            }),
            Value::Text(ts[..10].to_string()),
        ]
    };
    const N: usize = 1_000;
    let mut i = 0;
    let n = c
        .bulk_load("nb", &["id", "m", "r", "n", "ts", "d"], &mut |out| {
            if i == N {
                return false;
            }
            out.extend(row(i));
            i += 1;
            true
        })
        .unwrap();
    assert_eq!(n, N as u64);
    for i in 0..N {
        let values: Vec<String> = row(i)
            .iter()
            .map(|v| match v {
                Value::Null => "NULL".to_string(),
                Value::Int(x) => x.to_string(),
                Value::Float(x) => format!("'{x:?}'"),
                Value::Text(t) => format!("'{t}'"),
            })
            .collect();
        c.execute_sql(&format!("INSERT INTO nt VALUES ({})", values.join(", ")))
            .unwrap();
    }
    // Compared as text, so that a scale or an instant that differs shows.
    let same = "SELECT 1 FROM nb JOIN nt USING (id) WHERE nb.m::text = nt.m::text \
                AND nb.r::text = nt.r::text AND nb.n::text IS NOT DISTINCT FROM nt.n::text \
                AND nb.ts::text = nt.ts::text AND nb.d::text = nt.d::text";
    assert_eq!(c.execute_sql(same).unwrap().rows, N as u64);
    assert_eq!(
        c.execute_sql("SELECT 1 FROM nb WHERE id = 6 AND r = 0.1235 AND m = 0.12")
            .unwrap()
            .rows,
        1,
        "rounded to the columns' scales"
    );

    // Binary was the format: a later timestamp of another form is refused
    // by the client with the row and the form, where the server's text
    // input would have taken it.
    let mut i = 0;
    let e = c
        .bulk_load("nb", &["id", "m", "r", "n", "ts", "d"], &mut |out| {
            i += 1;
            out.extend(row(i));
            if i == 50 {
                out[4] = Value::Text("2024-01-01T10:00:00".into());
            }
            i <= 100
        })
        .unwrap_err();
    assert!(
        e.message.contains("row 50") && e.message.contains("not a timestamp of the form"),
        "{e}"
    );
    assert_eq!(
        c.count_rows("nb").unwrap(),
        N as u64,
        "nothing of it stored"
    );
    // A value the column's precision cannot hold fails as in text.
    let mut once = true;
    let e = c
        .bulk_load("nb", &["id", "r"], &mut |out| {
            out.extend([Value::Int(1), Value::Float(12.5)]);
            std::mem::take(&mut once)
        })
        .unwrap_err();
    assert!(e.message.contains("numeric field overflow"), "{e}");
    c.execute_sql("DROP TABLE nb, nt").unwrap();
}

#[test]
fn server_info_reports_version_and_settings() {
    let s = server_or_skip!();
    let mut c = s.connect(PsMode::Disable);
    let info = c.server_info().unwrap();
    assert!(info.version.starts_with("PostgreSQL 1"), "{}", info.version);
    let get = |name: &str| {
        info.settings
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(get("shared_buffers"), Some("128MB"));
    assert_eq!(get("fsync"), Some("off"));
    assert_eq!(get("deadlock_timeout"), Some("100ms"));
    assert_eq!(get("dbsweep.ps_mode"), Some("disable"));
    for name in [
        "work_mem",
        "max_connections",
        "synchronous_commit",
        "wal_level",
        "max_wal_size",
        "checkpoint_timeout",
        "effective_cache_size",
        "random_page_cost",
        "jit",
        "huge_pages",
        "wal_buffers",
        "commit_delay",
    ] {
        assert!(get(name).is_some_and(|v| !v.is_empty()), "{name}");
    }
}

#[test]
fn interrupter_unblocks_a_running_statement_and_cancels_it() {
    let s = server_or_skip!();
    let mut c = s.connect(PsMode::Prepared);
    let stop = c.interrupter().unwrap();
    let sql = "SELECT pg_sleep(30) /* interrupter test */";
    let h = std::thread::spawn(move || c.execute_sql(sql));
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    stop.interrupt();
    let e = h.join().unwrap().unwrap_err();
    // Interrupted, not slept out: well before its 30 s.
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    assert_eq!(e.kind, ErrorKind::ConnectionLost, "{e}");
    // The CancelRequest stopped the backend too: before the 30 s its
    // sleep would have taken.
    let mut probe = s.connect(PsMode::Prepared);
    let deadline = t + Duration::from_secs(20);
    loop {
        let running = probe
            .execute_sql(&format!(
                "SELECT 1 FROM pg_stat_activity WHERE query = '{sql}' AND state = 'active'"
            ))
            .unwrap()
            .rows;
        if running == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "the statement still runs");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Parameter buffers kept between transactions, as workloads keep theirs.
struct Params {
    one: Vec<Value>,
    two: Vec<Value>,
    text: Vec<Value>,
    batch: Vec<Value>,
}

/// One transaction of a point select, a range select and an update.
fn round(c: &mut dyn Connection, i: i64, p: &mut Params) {
    let id = i % 90 + 1;
    p.one[0] = Value::Int(id);
    p.two[0] = Value::Int(id);
    p.two[1] = Value::Int(id + 9);
    p.text[0] = Value::Int(id);
    p.text[1].set_text(if i % 2 == 0 {
        "it's \\ changed"
    } else {
        "plain"
    });
    c.begin(true).unwrap();
    assert_eq!(c.execute(0, &p.one).unwrap().rows, 1);
    assert_eq!(c.execute(1, &p.two).unwrap().rows, 10);
    assert_eq!(c.execute(2, &p.text).unwrap().affected, 1);
    // The same update as a batch of three rows (one pipeline).
    for (r, row) in p.batch.chunks_mut(2).enumerate() {
        row[0] = Value::Int((id + 30 * r as i64) % 100 + 1);
        row[1].set_text(if r == 1 { "batched" } else { "in a batch" });
    }
    assert_eq!(c.execute_batch(2, &p.batch, 3).unwrap().affected, 3);
    c.commit().unwrap();
}

#[test]
fn steady_state_execution_allocates_nothing() {
    let s = server_or_skip!();
    for mode in MODES {
        let t = format!("al_{}", mode_name(mode));
        let mut c = s.connect(mode);
        c.execute_sql(&format!(
            "DROP TABLE IF EXISTS {t}; CREATE TABLE {t} (id int PRIMARY KEY, k int, c text);\
             INSERT INTO {t} SELECT g, g, 'row ' || g FROM generate_series(1, 100) g"
        ))
        .unwrap();
        c.prepare_all(&sqls(&[
            &format!("SELECT c FROM {t} WHERE id = $1"),
            &format!("SELECT c FROM {t} WHERE id BETWEEN $1 AND $2 ORDER BY c"),
            &format!("UPDATE {t} SET k = k + 1, c = $2 WHERE id = $1"),
            &format!("UPDATE {t} SET f = 1 WHERE id = $1"),
        ]))
        .ok();
        // The last statement is wrong (no column f): an error path too.
        c.prepare_all(&sqls(&[
            &format!("SELECT c FROM {t} WHERE id = $1"),
            &format!("SELECT c FROM {t} WHERE id BETWEEN $1 AND $2 ORDER BY c"),
            &format!("UPDATE {t} SET k = k + 1, c = $2 WHERE id = $1"),
        ]))
        .unwrap();
        let mut p = Params {
            one: vec![Value::Int(0)],
            two: vec![Value::Int(0), Value::Int(0)],
            text: vec![Value::Int(0), text("")],
            batch: (0..3).flat_map(|_| [Value::Int(0), text("")]).collect(),
        };
        for i in 0..50 {
            round(c.as_mut(), i, &mut p);
        }
        // The counter itself works.
        let before = allocations();
        drop(std::hint::black_box(vec![0u8; 8]));
        assert_eq!(allocations(), before + 1);
        let before = allocations();
        for i in 0..500 {
            round(c.as_mut(), i, &mut p);
        }
        let made = allocations() - before;
        assert_eq!(made, 0, "{mode:?}: {made} allocations in 500 transactions");
        c.execute_sql(&format!("DROP TABLE {t}")).unwrap();
    }
}

// ---------------------------------------------------------------------------
// A real workload through the real engine.

fn rand_config() -> RandConfig {
    RandConfig {
        kind: DistKind::Uniform,
        params: DistParams::default(),
        seed: 1,
    }
}

fn oltp(table_size: u32, extra: &[(&str, &str)]) -> Box<dyn Workload> {
    let mut opts = vec![("table-size".to_string(), table_size.to_string())];
    opts.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    workload::build("oltp_read_write", &opts, Dialect::Postgres, rand_config()).unwrap()
}

fn connector(target: Target) -> engine::Connect {
    Arc::new(move || -> DbResult<Box<dyn Connection>> { driver::connect(&target) })
}

#[test]
fn sysbench_oltp_read_write_runs_through_the_engine_in_both_modes() {
    let s = server_or_skip!();
    let w = oltp(10_000, &[]);
    let prepared = connector(s.target("oltp", PsMode::Prepared));
    let mut admin = prepared().unwrap();
    w.cleanup(admin.as_mut()).unwrap();
    w.prepare(&*prepared, 2, &NoProgress).unwrap();
    w.check_prepared(admin.as_mut()).unwrap();
    assert_eq!(admin.count_rows("sbtest1").unwrap(), 10_000);

    for mode in MODES {
        let cfg = RunConfig {
            threads: 2,
            time: None,
            events: Some(200),
            rounds: None,
            warmup: Duration::ZERO,
            report_interval: None,
            interval_percentile: 95.0,
            max_retries: None,
            // Two clients can delete and re-insert the same id at once; the
            // loser's insert then hits a duplicate key (as with sysbench).
            ignore_errors: {
                let mut e = ErrorSet::NONE;
                e.insert(dbsweep::driver::ErrorKind::DuplicateKey);
                e
            },
            grace: Duration::from_secs(5),
            seed: 3,
            reconnect_every: None,
            timeout: None,
            pacing: Default::default(),
            shard: None,
            client_threads: None,
            pipeline: None,
            release: None,
        };
        let connect = connector(s.target("oltp", mode));
        let r = engine::run(
            w.as_ref(),
            connect,
            &cfg,
            &AtomicBool::new(false),
            &mut |_| {},
        )
        .unwrap();
        let c = &r.counters;
        let tx = c.transactions;
        eprintln!("{mode:?}: {tx} transactions in {:?}", r.measured);
        assert!(tx > 10, "{mode:?}: only {tx} transactions");
        assert_eq!(r.fatal, None);
        // Same-row races between the two clients are rare but legitimate:
        // only they may show up, and the exact mix holds without them.
        use dbsweep::driver::ErrorKind as K;
        let racy = c.errors[K::Deadlock.index()] + c.errors[K::DuplicateKey.index()];
        assert_eq!(c.total_errors(), racy, "{mode:?}: {c:?}");
        if racy == 0 {
            // A DELETE of a row the other client just deleted and re-inserted
            // affects 0 rows and counts as "other" (sysbench's rule).
            assert_eq!(c.reads, 14 * tx, "{mode:?}");
            assert_eq!(c.writes + c.others, 6 * tx, "{mode:?}");
            assert!(c.writes >= 4 * tx - tx / 20, "{mode:?}: {c:?}");
        }
        assert!(r.server.version.starts_with("PostgreSQL"));
    }
    w.cleanup(admin.as_mut()).unwrap();
    assert!(!admin.table_exists("sbtest1").unwrap());
}

/// Not a test: how long `prepare` takes to load 1,000,000 sbtest rows (and
/// build the `k` index), and the COPY alone without the index.
#[test]
#[ignore = "a measurement; run in release mode with --ignored --nocapture"]
fn load_one_million_rows() {
    let s = server_or_skip!();
    let connect = connector(s.target("bigload", PsMode::Prepared));
    let mut admin = connect().unwrap();
    for (label, extra) in [
        (
            "COPY + primary key, no k index",
            &[("create-secondary", "off")][..],
        ),
        ("COPY + primary key + k index (sysbench's prepare)", &[][..]),
    ] {
        let w = oltp(1_000_000, extra);
        w.cleanup(admin.as_mut()).unwrap();
        let t = Instant::now();
        w.prepare(&*connect, 1, &NoProgress).unwrap();
        let took = t.elapsed();
        assert_eq!(admin.count_rows("sbtest1").unwrap(), 1_000_000);
        eprintln!("1,000,000 rows, {label}: {took:.2?}");
        w.cleanup(admin.as_mut()).unwrap();
    }
}
