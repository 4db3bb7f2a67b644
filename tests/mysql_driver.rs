//! The MySQL/MariaDB driver against a real MariaDB server: login over TCP
//! and the unix socket, both statement protocols, error classification,
//! bulk loading, batches, interruption, payloads over 16 MiB, a steady state
//! without allocations, and a sysbench workload through the engine.
//!
//! The binary starts one scratch server for all its tests (the installed
//! `mariadbd`, in a temporary data directory on a free loopback port, as the
//! `mysql` OS user when run as root) and stops it at exit. MariaDB must be
//! installed (Debian: `apt-get install mariadb-server`).

mod util;

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use dbsweep::driver::ErrorSet;
use dbsweep::driver::{
    connect, Col, Connection, DbError, ErrorKind, Fetch, Outcome, PsMode, ServerAddr, Target,
    TargetKind, Value,
};
use dbsweep::engine::{self, RunConfig};
use dbsweep::rand::dist::{DistKind, DistParams};
use dbsweep::rand::RandConfig;
use dbsweep::util::progress::NoProgress;
use dbsweep::workload::{self};

use util::servers;

#[global_allocator]
static GLOBAL: util::alloc::Counting = util::alloc::Counting;

/// This thread's allocations: tests run alongside each other.
fn allocations() -> u64 {
    util::alloc::thread_allocations()
}

/// The account and database the tests use.
const USER: &str = "sb";
const PASSWORD: &str = "pw";
const DATABASE: &str = "sbtest";

/// The scratch server of this test binary.
struct Server {
    port: u16,
    socket: PathBuf,
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(start_server)
}

/// Finds an installed MariaDB server binary.
fn server_binary() -> PathBuf {
    for name in ["mariadbd", "mysqld"] {
        for dir in ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"] {
            let p = Path::new(dir).join(name);
            if p.exists() {
                return p;
            }
        }
    }
    panic!("no mariadbd found: install MariaDB (Debian: apt-get install mariadb-server) to run these tests");
}

/// Creates a data directory, starts the server, waits until it accepts
/// logins, and creates the test account and database.
fn start_server() -> Server {
    let binary = server_binary();
    let root = unsafe { libc::geteuid() } == 0;
    // The server runs as `mysql` and must reach its directory.
    let dir = servers::scratch_dir("dbsweep-mysql-test-", servers::os_user("mysql"));
    let data = dir.join("data");
    let mut install = Command::new("mariadb-install-db");
    install
        .arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .args(["--auth-root-authentication-method=normal", "--skip-test-db"]);
    if root {
        install.arg("--user=mysql");
    }
    let out = install.output().expect("run mariadb-install-db");
    assert!(
        out.status.success(),
        "mariadb-install-db failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    let port = servers::free_port();
    let socket = dir.join("mysqld.sock");
    let log = dir.join("mysqld.err");
    let mut cmd = Command::new(binary);
    cmd.arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--socket={}", socket.display()))
        .arg(format!("--port={port}"))
        .args([
            "--bind-address=127.0.0.1",
            "--skip-log-bin",
            "--innodb-buffer-pool-size=128M",
            "--local-infile=1",
            // For the test of payloads of 16 MiB and more.
            "--max-allowed-packet=64M",
            // Commits need not reach the disk in tests.
            "--innodb-flush-log-at-trx-commit=0",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(fs::File::create(&log).unwrap());
    if root {
        cmd.arg("--user=mysql");
    }
    let child = cmd.spawn().expect("start mariadbd");
    servers::stop_at_exit(child, dir.clone(), libc::SIGTERM);

    let root_addr = ServerAddr {
        host: "localhost".into(),
        port,
        user: "root".into(),
        password: None,
        database: String::new(),
        socket: Some(socket.clone()),
        ps_mode: PsMode::Prepared,
        tls: Default::default(),
    };
    let mut admin = servers::wait_for("mariadbd", &log, Duration::from_secs(60), || {
        Ok(connect(&target(root_addr.clone())).ok())
    });
    for sql in [
        format!("CREATE USER '{USER}'@'%' IDENTIFIED BY '{PASSWORD}'"),
        format!("GRANT ALL ON *.* TO '{USER}'@'%'"),
        // utf8mb4, as Debian's packaged configuration has it.
        format!("CREATE DATABASE {DATABASE} CHARACTER SET utf8mb4"),
        // An account on MariaDB's ed25519 plugin (the server keeps only
        // the public key; the client signs the server's nonce).
        "INSTALL SONAME 'auth_ed25519'".to_string(),
        format!("CREATE USER 'ed'@'%' IDENTIFIED VIA ed25519 USING PASSWORD('{PASSWORD}')"),
        format!("GRANT ALL ON {DATABASE}.* TO 'ed'@'%'"),
    ] {
        admin.execute_sql(&sql).unwrap();
    }
    Server { port, socket }
}

/// The test account over TCP.
fn addr(mode: PsMode) -> ServerAddr {
    ServerAddr {
        host: "127.0.0.1".into(),
        port: server().port,
        user: USER.into(),
        password: Some(PASSWORD.into()),
        database: DATABASE.into(),
        socket: None,
        ps_mode: mode,
        tls: Default::default(),
    }
}

fn target(a: ServerAddr) -> Target {
    Target {
        display: format!("mysql://{}@{}:{}/{}", a.user, a.host, a.port, a.database),
        kind: TargetKind::Mysql(a),
    }
}

fn conn(mode: PsMode) -> Box<dyn Connection> {
    connect(&target(addr(mode))).unwrap()
}

fn connect_err(a: ServerAddr) -> DbError {
    match connect(&target(a)) {
        Ok(_) => panic!("connected, expected an error"),
        Err(e) => e,
    }
}

const MODES: [PsMode; 2] = [PsMode::Prepared, PsMode::Disable];

fn mode_name(m: PsMode) -> &'static str {
    match m {
        PsMode::Prepared => "ps",
        PsMode::Disable => "text",
    }
}

fn read(rows: u64) -> Outcome {
    Outcome {
        result_set: true,
        rows,
        affected: 0,
    }
}

fn write(affected: u64) -> Outcome {
    Outcome {
        result_set: false,
        rows: 0,
        affected,
    }
}

/// Serialises the tests that bulk load, because one of them switches the
/// server's `local_infile` off for a while.
fn load_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Uppercase hex of `s`, to compare stored strings exactly without relying
/// on the escaping under test.
fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02X}")).collect()
}

#[test]
fn connects_over_tcp_and_unix_socket() {
    let mut tcp = conn(PsMode::Prepared);
    assert_eq!(tcp.execute_sql("SELECT 1").unwrap(), read(1));
    let mut a = addr(PsMode::Prepared);
    a.socket = Some(server().socket.clone());
    let mut unix = connect(&target(a)).unwrap();
    assert_eq!(
        unix.execute_sql("SELECT 1 UNION SELECT 2").unwrap(),
        read(2)
    );
    assert_eq!(unix.execute_sql("SET @x = 1").unwrap(), Outcome::default());
}

#[test]
fn an_ed25519_account_logs_in_by_signing_the_nonce() {
    let mut a = addr(PsMode::Prepared);
    a.user = "ed".into();
    let mut c = connect(&target(a.clone())).unwrap();
    let rows = c.query_text("SELECT CURRENT_USER()").unwrap();
    assert_eq!(rows[0][0].as_deref(), Some("ed@%"));
    a.password = Some("wrong".into());
    let e = connect_err(a);
    assert_eq!(e.code, "1045", "{e}");
}

#[test]
fn wrong_password_is_access_denied_naming_the_user() {
    let mut a = addr(PsMode::Prepared);
    a.password = Some("wrong".into());
    let e = connect_err(a);
    assert_eq!(e.code, "1045", "{e}");
    assert!(e.message.contains("Access denied"), "{e}");
    assert!(e.message.contains("'sb'"), "{e}");
    assert!(
        e.message.contains(&format!("127.0.0.1:{}", server().port)),
        "{e}"
    );
    assert!(e.message.contains("database 'sbtest'"), "{e}");
}

#[test]
fn unreachable_port_names_host_and_port() {
    let mut a = addr(PsMode::Prepared);
    a.port = servers::free_port();
    let e = connect_err(a.clone());
    assert_eq!(e.kind, ErrorKind::ConnectionLost, "{e}");
    assert!(e.message.contains(&format!("127.0.0.1:{}", a.port)), "{e}");
    assert!(e.message.contains("refused"), "{e}");
    a.socket = Some(PathBuf::from("/nonexistent/mysqld.sock"));
    let e = connect_err(a);
    assert!(
        e.message.contains("/nonexistent/mysqld.sock") && e.message.contains("'sb'"),
        "{e}"
    );
}

#[test]
fn a_server_that_never_greets_times_out() {
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut a = addr(PsMode::Prepared);
    a.port = silent.local_addr().unwrap().port();
    let t = Instant::now();
    let e = connect_err(a);
    // The connect timeout's message says it ended the wait; a minute is
    // only a hang's bound.
    assert!(t.elapsed() < Duration::from_secs(60), "{:?}", t.elapsed());
    assert_eq!(e.kind, ErrorKind::ConnectionLost, "{e}");
    assert!(e.message.contains("did not answer within"), "{e}");
}

#[test]
fn executing_statements_allocates_nothing_in_steady_state() {
    for mode in MODES {
        let t = format!("alloc_{}", mode_name(mode));
        let mut c = conn(mode);
        c.execute_sql(&format!(
            "CREATE TABLE {t} (id INT PRIMARY KEY, k INT, c CHAR(120), f DOUBLE)"
        ))
        .unwrap();
        c.execute_sql(&format!(
            "INSERT INTO {t} SELECT seq, seq, REPEAT('c', 119), seq / 3 FROM seq_1_to_1000"
        ))
        .unwrap();
        c.prepare_all(&[
            format!("SELECT c FROM {t} WHERE id = ?"),
            format!("SELECT c FROM {t} WHERE id BETWEEN ? AND ? ORDER BY c"),
            format!("UPDATE {t} SET c = ?, f = ? WHERE id = ?"),
            format!("UPDATE {t} SET k = k + 1 WHERE id = ? AND ? IS NULL"),
        ])
        .unwrap();
        // One parameter array per statement, overwritten in place, as the
        // workloads do (turning an Int slot into Text would allocate).
        let mut point = [Value::Int(0)];
        let mut range = [Value::Int(0), Value::Int(0)];
        let mut set_c = [Value::Text(String::new()), Value::Float(0.0), Value::Int(0)];
        let mut bump = [Value::Int(0), Value::Null];
        // A batch of three rows of the same statement (bulk execution in
        // prepared mode, one by one in text mode).
        let mut batch: Vec<Value> = (0..3).flat_map(|_| set_c.clone()).collect();
        let mut run = |c: &mut Box<dyn Connection>, i: i64| {
            point[0] = Value::Int(i % 900 + 1);
            assert_eq!(c.execute(0, &point).unwrap().rows, 1);
            range[0] = Value::Int(i % 900 + 1);
            range[1] = Value::Int(i % 900 + 100);
            assert_eq!(c.execute(1, &range).unwrap().rows, 100);
            c.begin(true).unwrap();
            set_c[0].set_text(if i % 2 == 0 { "even" } else { "odd" });
            set_c[1] = Value::Float(i as f64 / 7.0);
            set_c[2] = Value::Int(i % 1000 + 1);
            c.execute(2, &set_c).unwrap();
            bump[0] = Value::Int(i % 1000 + 1);
            assert_eq!(c.execute(3, &bump).unwrap().affected, 1);
            for (r, row) in batch.chunks_mut(3).enumerate() {
                row[0].set_text(if (i + r as i64) % 2 == 0 {
                    "b-even"
                } else {
                    "b-odd"
                });
                row[1] = Value::Float(i as f64 / 9.0);
                row[2] = Value::Int((i + 300 * r as i64) % 1000 + 1);
            }
            assert_eq!(c.execute_batch(2, &batch, 3).unwrap().affected, 3);
            c.commit().unwrap();
        };
        for i in 0..100 {
            run(&mut c, i);
        }
        let before = allocations();
        for i in 100..1100 {
            run(&mut c, i);
        }
        let n = allocations() - before;
        assert_eq!(n, 0, "{mode:?}: {n} allocations in 1000 transactions");
        c.execute_sql(&format!("DROP TABLE {t}")).unwrap();
    }
}

#[test]
fn statements_in_both_protocols() {
    for mode in MODES {
        let t = format!("st_{}", mode_name(mode));
        let mut c = conn(mode);
        c.execute_sql(&format!(
            "CREATE TABLE {t} (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(100), f DOUBLE)"
        ))
        .unwrap();
        c.prepare_all(&[
            format!("INSERT INTO {t} (id, k, c, f) VALUES (?, ?, ?, ?)"),
            format!("SELECT c FROM {t} WHERE id BETWEEN ? AND ?"),
            format!("UPDATE {t} SET k = k + 1 WHERE id <= ?"),
            format!("UPDATE {t} SET k = k WHERE id <= ?"),
            format!("DELETE FROM {t} WHERE id > ?"),
            format!("SELECT id FROM {t} WHERE id = ? AND c IS NULL AND f = ?"),
            format!("SELECT COUNT(*) FROM {t}"),
        ])
        .unwrap();
        for id in 1..=10 {
            let row = [
                Value::Int(id),
                Value::Int(id * 10),
                Value::Text(format!("row {id}")),
                Value::Float(id as f64 / 4.0),
            ];
            assert_eq!(c.execute(0, &row).unwrap(), write(1), "{mode:?}");
        }
        // NULL parameters, and a float that is not a short decimal.
        let row = [
            Value::Int(11),
            Value::Int(0),
            Value::Null,
            Value::Float(0.1),
        ];
        assert_eq!(c.execute(0, &row).unwrap(), write(1));
        assert_eq!(
            c.execute(5, &[Value::Int(11), Value::Float(0.1)]).unwrap(),
            read(1)
        );
        assert_eq!(
            c.execute(1, &[Value::Int(3), Value::Int(7)]).unwrap(),
            read(5)
        );
        assert_eq!(
            c.execute(1, &[Value::Int(50), Value::Int(60)]).unwrap(),
            read(0)
        );
        assert_eq!(c.execute(2, &[Value::Int(4)]).unwrap(), write(4));
        // Matched but unchanged rows are not affected (no CLIENT_FOUND_ROWS).
        assert_eq!(c.execute(3, &[Value::Int(4)]).unwrap(), write(0));
        assert_eq!(c.execute(4, &[Value::Int(8)]).unwrap(), write(3));
        assert_eq!(c.count_rows(&t).unwrap(), 8);

        c.begin(true).unwrap();
        assert_eq!(c.execute(4, &[Value::Int(0)]).unwrap(), write(8));
        assert_eq!(c.rollback().unwrap(), Outcome::default());
        assert_eq!(c.count_rows(&t).unwrap(), 8);
        c.begin(true).unwrap();
        c.execute(4, &[Value::Int(5)]).unwrap();
        c.commit().unwrap();
        assert_eq!(c.execute(6, &[]).unwrap(), read(1));
        assert_eq!(c.count_rows(&t).unwrap(), 5);

        // Wrong parameter counts fail on the client; the connection goes on.
        let e = c.execute(1, &[Value::Int(1)]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Other);
        assert!(e.message.contains("takes 2 parameters"), "{e}");
        // A server error leaves the connection usable too.
        let e = c.execute_sql("SELECT nosuchcolumn FROM dual").unwrap_err();
        assert_eq!((e.kind, e.code.as_str()), (ErrorKind::Other, "1054"), "{e}");
        assert_eq!(
            c.execute(1, &[Value::Int(1), Value::Int(2)]).unwrap(),
            read(2)
        );
        assert!(c.table_exists(&t).unwrap());
        c.execute_sql(&format!("DROP TABLE {t}")).unwrap();
        assert!(!c.table_exists(&t).unwrap());
    }
}

/// MariaDB skips a prepared statement's result metadata while it is
/// unchanged and the client omits unchanged parameter types: results stay
/// exact across executions, when a parameter changes type, and when the
/// table's columns change under the statement (the server re-prepares it
/// and sends the new metadata).
#[test]
fn repeated_executions_with_cached_metadata_and_types() {
    let mut c = conn(PsMode::Prepared);
    c.execute_sql("DROP TABLE IF EXISTS meta_cache").unwrap();
    c.execute_sql("CREATE TABLE meta_cache (id INT PRIMARY KEY, c VARCHAR(20))")
        .unwrap();
    c.execute_sql("INSERT INTO meta_cache VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, NULL)")
        .unwrap();
    c.prepare_all(&["SELECT * FROM meta_cache WHERE id >= ?".to_string()])
        .unwrap();
    for (v, rows) in [
        (Value::Int(1), 4),
        (Value::Int(2), 3),
        (Value::Int(4), 1),
        (Value::Text("3".into()), 2),
        (Value::Text("5".into()), 0),
        (Value::Int(3), 2),
        (Value::Null, 0),
        (Value::Int(1), 4),
    ] {
        assert_eq!(
            c.execute(0, std::slice::from_ref(&v)).unwrap(),
            read(rows),
            "{v:?}"
        );
    }
    c.execute_sql("ALTER TABLE meta_cache ADD COLUMN d INT NOT NULL DEFAULT 7")
        .unwrap();
    for (id, rows) in [(1, 4), (3, 2), (3, 2)] {
        assert_eq!(c.execute(0, &[Value::Int(id)]).unwrap(), read(rows));
    }
    c.execute_sql("DROP TABLE meta_cache").unwrap();
}

/// New metadata that arrives with an execution whose rows are only
/// counted is the statement's from then on: the server sends it once, so
/// a later fetch without it must decode its rows by it.
#[test]
fn metadata_changed_under_a_counted_execution_decodes_later_fetches() {
    let mut c = conn(PsMode::Prepared);
    c.execute_sql("DROP TABLE IF EXISTS meta_fetch").unwrap();
    c.execute_sql("CREATE TABLE meta_fetch (id INT PRIMARY KEY, c INT)")
        .unwrap();
    c.execute_sql("INSERT INTO meta_fetch VALUES (1, 5)")
        .unwrap();
    c.prepare_all(&["SELECT c, id FROM meta_fetch WHERE id = ?".to_string()])
        .unwrap();
    let fetch = |c: &mut Box<dyn Connection>| {
        let mut f = Fetch::new(&[Col::Int, Col::Int], 1);
        assert_eq!(
            c.execute_fetch(0, &[Value::Int(1)], &mut f).unwrap(),
            read(1)
        );
        (f.int(0, 0), f.int(0, 1))
    };
    assert_eq!(fetch(&mut c), (Some(5), Some(1)));
    // c becomes a BIGINT: 8 bytes in a binary row instead of 4.
    c.execute_sql("ALTER TABLE meta_fetch MODIFY c BIGINT")
        .unwrap();
    c.execute_sql("UPDATE meta_fetch SET c = 1 << 40").unwrap();
    assert_eq!(c.execute(0, &[Value::Int(1)]).unwrap(), read(1));
    assert_eq!(fetch(&mut c), (Some(1 << 40), Some(1)));
    assert_eq!(fetch(&mut c), (Some(1 << 40), Some(1)));
    c.execute_sql("DROP TABLE meta_fetch").unwrap();
}

#[test]
fn strings_with_quotes_backslashes_and_newlines_round_trip() {
    let nasty = "it's a \\ back\nslash\r\t\"q\" \0 \u{1a} ünï 🎉 ? '?'";
    for mode in MODES {
        for no_backslash_escapes in [false, true] {
            let t = format!("esc_{}_{}", mode_name(mode), no_backslash_escapes);
            let mut c = conn(mode);
            if no_backslash_escapes {
                c.execute_sql("SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')")
                    .unwrap();
            }
            c.execute_sql(&format!(
                "CREATE TABLE {t} (id INT PRIMARY KEY, c VARCHAR(100)) CHARACTER SET utf8mb4"
            ))
            .unwrap();
            c.prepare_all(&[
                format!("INSERT INTO {t} (id, c) VALUES (?, ?)"),
                format!("SELECT id FROM {t} WHERE c = ?"),
            ])
            .unwrap();
            c.execute(0, &[Value::Int(1), Value::Text(nasty.into())])
                .unwrap();
            let check = format!("SELECT id FROM {t} WHERE HEX(c) = '{}'", hex(nasty));
            assert_eq!(c.execute_sql(&check).unwrap(), read(1), "{t}");
            assert_eq!(
                c.execute(1, &[Value::Text(nasty.into())]).unwrap(),
                read(1),
                "{t}"
            );
            c.execute_sql(&format!("DROP TABLE {t}")).unwrap();
        }
    }
}

#[test]
fn payloads_of_16_mib_and_more_in_both_directions() {
    let big = "x".repeat(17 << 20);
    for mode in MODES {
        let t = format!("big_{}", mode_name(mode));
        let mut c = conn(mode);
        c.execute_sql(&format!(
            "CREATE TABLE {t} (id INT PRIMARY KEY, c LONGTEXT)"
        ))
        .unwrap();
        c.prepare_all(&[
            format!("INSERT INTO {t} (id, c) VALUES (?, ?)"),
            format!("SELECT c, id FROM {t} WHERE LENGTH(c) = ?"),
        ])
        .unwrap();
        assert_eq!(
            c.execute(0, &[Value::Int(1), Value::Text(big.clone())])
                .unwrap(),
            write(1)
        );
        // Exactly 2^24 - 1 bytes: a full packet and an empty continuation.
        let edge = "y".repeat(0xFF_FFFF - 40);
        c.execute(0, &[Value::Int(2), Value::Text(edge)]).unwrap();
        assert_eq!(
            c.execute(1, &[Value::Int(big.len() as i64)]).unwrap(),
            read(1)
        );
        assert_eq!(
            c.execute_sql(&format!("SELECT c FROM {t} ORDER BY id"))
                .unwrap(),
            read(2)
        );
        c.execute_sql(&format!("DROP TABLE {t}")).unwrap();
    }
}

#[test]
fn multiple_result_sets_are_all_fetched() {
    let mut c = conn(PsMode::Prepared);
    c.execute_sql("CREATE PROCEDURE two_sets() BEGIN SELECT 1; SELECT 1 UNION SELECT 2; END")
        .unwrap();
    // Two result sets (3 rows), then the CALL's own OK packet.
    assert_eq!(c.execute_sql("CALL two_sets()").unwrap(), read(3));
    c.prepare_all(&["CALL two_sets()".to_string()]).unwrap();
    assert_eq!(c.execute(0, &[]).unwrap(), read(3));
    assert_eq!(c.execute_sql("SELECT 1").unwrap(), read(1));
    c.execute_sql("DROP PROCEDURE two_sets").unwrap();
}

#[test]
fn duplicate_key_is_classified_and_the_connection_survives() {
    for mode in MODES {
        let t = format!("dup_{}", mode_name(mode));
        let mut c = conn(mode);
        c.execute_sql(&format!("CREATE TABLE {t} (id INT PRIMARY KEY)"))
            .unwrap();
        c.prepare_all(&[format!("INSERT INTO {t} VALUES (?)")])
            .unwrap();
        c.execute(0, &[Value::Int(1)]).unwrap();
        let e = c.execute(0, &[Value::Int(1)]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::DuplicateKey, "{e}");
        assert_eq!(e.code, "1062");
        assert!(e.message.contains("Duplicate entry"), "{e}");
        assert_eq!(c.execute(0, &[Value::Int(2)]).unwrap(), write(1));
        c.execute_sql(&format!("DROP TABLE {t}")).unwrap();
    }
}

#[test]
fn deadlock_is_classified_and_the_victim_goes_on_after_rollback() {
    let mut a = conn(PsMode::Prepared);
    let mut b = conn(PsMode::Disable);
    a.execute_sql("CREATE TABLE dl (id INT PRIMARY KEY, v INT) ENGINE=InnoDB")
        .unwrap();
    a.execute_sql("INSERT INTO dl VALUES (1, 0), (2, 0)")
        .unwrap();
    a.begin(true).unwrap();
    a.execute_sql("UPDATE dl SET v = v + 1 WHERE id = 1")
        .unwrap();
    b.begin(true).unwrap();
    b.execute_sql("UPDATE dl SET v = v + 1 WHERE id = 2")
        .unwrap();
    // `a` waits for row 2; then `b` asks for row 1, closing the cycle.
    let waiter = thread::spawn(move || {
        let r = a.execute_sql("UPDATE dl SET v = v + 1 WHERE id = 2");
        (a, r)
    });
    thread::sleep(Duration::from_millis(300));
    let rb = b.execute_sql("UPDATE dl SET v = v + 1 WHERE id = 1");
    let (a, ra) = waiter.join().unwrap();
    let (mut victim, mut winner, e) = match (ra, rb) {
        (Err(e), Ok(_)) => (a, b, e),
        (Ok(_), Err(e)) => (b, a, e),
        other => panic!("expected exactly one deadlock, got {other:?}"),
    };
    assert_eq!(e.kind, ErrorKind::Deadlock, "{e}");
    assert_eq!(e.code, "1213");
    winner.commit().unwrap();
    victim.rollback().unwrap();
    assert_eq!(victim.execute_sql("SELECT v FROM dl").unwrap(), read(2));
    // The winner's two updates, nothing of the victim's.
    assert_eq!(
        victim.execute_sql("SELECT 1 FROM dl WHERE v = 1").unwrap(),
        read(2)
    );
    victim.execute_sql("DROP TABLE dl").unwrap();
}

/// Rows for the bulk-load tests: every 1000th has awkward text or a NULL.
fn load_rows(n: i64) -> impl FnMut(&mut Vec<Value>) -> bool {
    let mut id = 0;
    move |row| {
        if id == n {
            return false;
        }
        id += 1;
        let c = match id % 1000 {
            1 => Value::Text("tab\there\nnewline\\backslash\r\0nul 'q' ünï".into()),
            2 => Value::Null,
            3 => Value::Text("\\N".into()),
            _ => Value::Text(format!("{id:0>11}-{:0>11}", id * 7)),
        };
        row.extend([
            Value::Int(id),
            Value::Int(id % 97),
            c,
            Value::Float(id as f64 * 0.5),
        ]);
        true
    }
}

fn check_loaded(c: &mut dyn Connection, t: &str, n: u64) {
    assert_eq!(c.count_rows(t).unwrap(), n);
    let q = |c: &mut dyn Connection, cond: &str| {
        c.execute_sql(&format!("SELECT 1 FROM {t} WHERE {cond}"))
            .unwrap()
            .rows
    };
    let awkward = hex("tab\there\nnewline\\backslash\r\0nul 'q' ünï");
    assert_eq!(q(c, &format!("HEX(c) = '{awkward}'")), n.div_ceil(1000));
    assert_eq!(q(c, "c IS NULL"), (n + 998) / 1000);
    assert_eq!(q(c, "c = '\\\\N'"), (n + 997) / 1000);
    assert_eq!(q(c, "id = 1234 AND k = 1234 % 97 AND f = 617"), 1);
}

#[test]
fn bulk_load_streams_100k_rows() {
    let _g = load_lock();
    let mut c = conn(PsMode::Prepared);
    c.execute_sql("CREATE TABLE bl (id INT PRIMARY KEY, k INT, c VARCHAR(60), f DOUBLE)")
        .unwrap();
    let t = Instant::now();
    let n = c
        .bulk_load("bl", &["id", "k", "c", "f"], &mut load_rows(100_000))
        .unwrap();
    let took = t.elapsed();
    assert_eq!(n, 100_000);
    check_loaded(c.as_mut(), "bl", 100_000);
    // Loading the same ids again: LOCAL turns duplicates into warnings,
    // which the driver reports as an error instead of a short load.
    let e = c
        .bulk_load("bl", &["id", "k", "c", "f"], &mut load_rows(10))
        .unwrap_err();
    assert!(e.message.contains("loaded 0 of the 10 rows"), "{e}");
    c.execute_sql("DROP TABLE bl").unwrap();
    eprintln!("bulk_load of 100,000 rows: {took:?}");
}

#[test]
fn bulk_load_falls_back_to_inserts_when_local_infile_is_off() {
    let _g = load_lock();
    let mut c = conn(PsMode::Prepared);
    c.execute_sql("CREATE TABLE blf (id INT PRIMARY KEY, k INT, c VARCHAR(60), f DOUBLE)")
        .unwrap();
    c.execute_sql("SET GLOBAL local_infile = 0").unwrap();
    let refused =
        c.execute_sql("LOAD DATA LOCAL INFILE 'x' INTO TABLE blf FIELDS TERMINATED BY '\\t' (id)");
    let n = c.bulk_load("blf", &["id", "k", "c", "f"], &mut load_rows(2500));
    c.execute_sql("SET GLOBAL local_infile = 1").unwrap();
    let e = refused.unwrap_err();
    assert_eq!(e.code, "4166", "{e}");
    assert_eq!(n.unwrap(), 2500);
    check_loaded(c.as_mut(), "blf", 2500);
    c.execute_sql("DROP TABLE blf").unwrap();
}

#[test]
fn server_info_has_version_and_global_variables() {
    let mut c = conn(PsMode::Disable);
    let info = c.server_info().unwrap();
    assert!(info.version.contains("MariaDB"), "{}", info.version);
    let get = |name: &str| {
        info.settings
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(get("innodb_buffer_pool_size"), Some("134217728"));
    assert_eq!(get("local_infile"), Some("ON"));
    assert_eq!(get("ps_mode"), Some("disable"));
    assert!(info.settings.len() > 300, "{}", info.settings.len());
}

#[test]
fn interrupter_unblocks_a_sleeping_statement() {
    let mut c = conn(PsMode::Prepared);
    let stop = c.interrupter().expect("an interrupter");
    let sleeper = thread::spawn(move || {
        let r = c.execute_sql("SELECT SLEEP(30)");
        (c, r)
    });
    thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    stop.interrupt();
    let (mut c, r) = sleeper.join().unwrap();
    let took = t.elapsed();
    // Interrupted, not slept out: the statement ends in an error, well
    // before its 30 s (how soon is not a test's figure on a busy machine).
    assert!(took < Duration::from_secs(20), "took {took:?}");
    let e = r.unwrap_err();
    assert_eq!(e.kind, ErrorKind::ConnectionLost, "{e}");
    // The connection is dead and says so at once.
    let e = c.execute_sql("SELECT 1").unwrap_err();
    assert_eq!(e.kind, ErrorKind::ConnectionLost, "{e}");
}

fn rand_config() -> RandConfig {
    RandConfig {
        kind: DistKind::Uniform,
        params: DistParams::default(),
        seed: 7,
    }
}

#[test]
fn sysbench_oltp_read_write_through_the_engine_in_both_protocols() {
    let given = [("table-size".to_string(), "10000".to_string())];
    let w = workload::build(
        "oltp_read_write",
        &given,
        dbsweep::driver::Dialect::Mysql,
        rand_config(),
    )
    .unwrap();
    {
        let _g = load_lock();
        let t = target(addr(PsMode::Prepared));
        let connect_fn = || connect(&t);
        w.prepare(&connect_fn, 2, &NoProgress).unwrap();
    }
    for mode in MODES {
        let t = target(addr(mode));
        let connect_fn: engine::Connect = Arc::new(move || connect(&t));
        w.check_prepared(connect_fn().unwrap().as_mut()).unwrap();
        let cfg = RunConfig {
            threads: 2,
            time: None,
            events: Some(300),
            rounds: None,
            warmup: Duration::ZERO,
            report_interval: None,
            interval_percentile: 95.0,
            max_retries: None,
            ignore_errors: ErrorSet::NONE,
            grace: Duration::from_secs(5),
            // Another seed per mode: the same seed would redraw the first
            // run's strings, and updates to an equal value change no row.
            seed: mode as u64 + 1,
            reconnect_every: None,
            timeout: None,
            pacing: Default::default(),
            shard: None,
            client_threads: None,
            pipeline: None,
            release: None,
        };
        let r = engine::run(
            w.as_ref(),
            connect_fn,
            &cfg,
            &AtomicBool::new(false),
            &mut |_| {},
        )
        .unwrap();
        let c = &r.counters;
        assert!(r.fatal.is_none(), "{:?}", r.fatal);
        assert!(c.transactions > 50, "{mode:?}: {c:?}");
        assert_eq!(c.failed, 0, "{mode:?}: {c:?}");
        // Only deadlocks, each retried.
        for k in ErrorKind::ALL {
            if k != ErrorKind::Deadlock {
                assert_eq!(c.errors[k.index()], 0, "{mode:?}: {k} in {c:?}");
            }
        }
        assert_eq!(c.errors[ErrorKind::Deadlock.index()], c.retries, "{c:?}");
        // sysbench's mix: 14 reads, 4 writes, 2 others per transaction
        // (a retried attempt's statements count too, hence ≥ then).
        let t = c.transactions;
        if c.retries == 0 {
            assert_eq!(
                (c.reads, c.writes, c.others),
                (14 * t, 4 * t, 2 * t),
                "{mode:?}"
            );
        } else {
            assert!(
                c.reads >= 14 * t && c.writes >= 4 * t && c.others >= 2 * t,
                "{c:?}"
            );
        }
        assert!(r.server.version.contains("MariaDB"));
    }
    let mut c = conn(PsMode::Prepared);
    w.cleanup(c.as_mut()).unwrap();
    assert!(!c.table_exists("sbtest1").unwrap());
}

/// Not a test: how long the workload's prepare takes to load 1,000,000 rows
/// (run with `cargo test --release --test mysql_driver -- --ignored --nocapture`).
#[test]
#[ignore]
fn measure_loading_one_million_rows() {
    let _g = load_lock();
    let mut admin = conn(PsMode::Prepared);
    admin
        .execute_sql("CREATE DATABASE IF NOT EXISTS sbbig")
        .unwrap();
    let mut a = addr(PsMode::Prepared);
    a.database = "sbbig".into();
    let t = target(a);
    let connect_fn = || connect(&t);
    let given = [("table-size".to_string(), "1000000".to_string())];
    let w = workload::build(
        "oltp_read_write",
        &given,
        dbsweep::driver::Dialect::Mysql,
        rand_config(),
    )
    .unwrap();
    let start = Instant::now();
    w.prepare(&connect_fn, 1, &NoProgress).unwrap();
    let took = start.elapsed();
    let mut c = connect_fn().unwrap();
    assert_eq!(c.count_rows("sbtest1").unwrap(), 1_000_000);
    eprintln!("prepare of 1,000,000 rows (load + k index): {took:?}");
    w.cleanup(c.as_mut()).unwrap();
}
