//! Managed servers against the real, installed MariaDB and PostgreSQL: start
//! in a scratch directory with a setting, connect with the servers' own
//! client programs through the returned URL, status, stop (no process left),
//! restart reusing the data, a rejected setting reported promptly with the
//! server's message, CPU pinning, guards and stop-all.

use std::path::Path;
use std::process::Command;
use std::sync::RwLock;
use std::time::{Duration, Instant};

use dbsweep::driver::{ServerAddr, Target, TargetKind};
use dbsweep::server::{self, RunningServer, ServerError, ServerGuard, ServerKind, ServerSpec};

/// Tests hold it for reading; the stop-all test, which stops every server
/// this process started, holds it for writing.
static SERVERS: RwLock<()> = RwLock::new(());

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("dbsweep-srv-")
        .tempdir()
        .expect("temp dir")
}

/// The address in a server's URL.
fn addr(url: &str) -> ServerAddr {
    match Target::parse(url).expect("the URL parses as a target").kind {
        TargetKind::Mysql(a) | TargetKind::Postgres(a) => a,
        _ => panic!("not a server URL: {url}"),
    }
}

/// Runs SQL as the benchmark user through `server`'s URL (TCP) with the
/// server's own client program; returns the output, trimmed.
fn query(server: &RunningServer, sql: &str) -> String {
    let a = addr(&server.url);
    let mut cmd = match server.kind {
        ServerKind::Mariadb => {
            let mut c = Command::new("mariadb");
            c.arg("--no-defaults")
                .arg("--protocol=tcp")
                .arg(format!("--host={}", a.host))
                .arg(format!("--port={}", a.port))
                .arg(format!("--user={}", a.user))
                .arg(format!("--password={}", a.password.as_deref().unwrap()))
                .args(["--batch", "--skip-column-names", "-e", sql])
                .arg(&a.database);
            c
        }
        ServerKind::Postgres => {
            let mut c = Command::new(server.binary.with_file_name("psql"));
            c.env("PGPASSWORD", a.password.as_deref().unwrap())
                .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
                .args(["-h", &a.host, "-p", &a.port.to_string()])
                .args(["-U", &a.user, "-d", &a.database, "-c", sql]);
            c
        }
    };
    let out = cmd.output().expect("run the client");
    assert!(
        out.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// True if the process exists and is not a zombie.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(')')
            .is_some_and(|(_, r)| !r.trim_start().starts_with('Z'))
    })
}

/// Live processes whose command line names `dir`: none may outlive a stop.
fn processes_in(dir: &Path) -> Vec<u32> {
    let needle = dir.as_os_str().as_encoded_bytes();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.windows(needle.len()).any(|w| w == needle))
                && alive(pid)
        })
        .collect()
}

fn cpus_allowed_list(pid: u32) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string()
}

fn setting<'a>(server: &'a RunningServer, name: &str) -> Option<&'a str> {
    server
        .settings
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// Stops the server in `dir` and checks that nothing of it is left.
fn stop_and_check(server: &RunningServer) {
    let begun = Instant::now();
    assert!(server::stop(&server.dir).unwrap(), "it was running");
    eprintln!("{} stopped in {:?}", server.kind, begun.elapsed());
    assert!(!alive(server.pid), "pid {} is still alive", server.pid);
    assert_eq!(processes_in(&server.dir), Vec::<u32>::new());
    assert_eq!(server::status(&server.dir).unwrap(), None);
    assert!(
        !server::stop(&server.dir).unwrap(),
        "a second stop is a no-op"
    );
}

/// A rejected setting fails fast with the server's own words, as bad input,
/// leaving no process and a stopped status.
fn check_rejected(spec: &ServerSpec, expected: &str) {
    let begun = Instant::now();
    let e = server::start(spec).unwrap_err();
    let took = begun.elapsed();
    assert!(
        matches!(e, ServerError::BadSetting { .. }),
        "expected BadSetting, got {e}"
    );
    assert!(e.is_bad_input());
    assert!(e.to_string().contains(expected), "{e}");
    // At once, not after the start's timeout (60 s): half of it is a busy
    // machine's room.
    assert!(took < Duration::from_secs(30), "took {took:?}");
    assert_eq!(processes_in(&spec.dir), Vec::<u32>::new());
    assert_eq!(server::status(&spec.dir).unwrap(), None);
}

#[test]
fn mariadb_starts_stops_restarts_and_rejects_bad_settings() {
    let _serial = SERVERS.read().unwrap_or_else(|e| e.into_inner());
    let tmp = scratch();
    let dir = tmp.path().join("m");
    let spec = ServerSpec::new(ServerKind::Mariadb, &dir).set("max_connections", "321");

    let begun = Instant::now();
    let s = server::start(&spec).unwrap();
    eprintln!("mariadb initialised and started in {:?}", begun.elapsed());
    assert_eq!(
        s.url,
        format!("mysql://sbtest:sbtest@127.0.0.1:{}/sbtest", s.port)
    );
    assert!(s.version.contains("MariaDB"), "{}", s.version);
    assert!(alive(s.pid));
    assert_eq!(query(&s, "SELECT @@max_connections"), "321");
    assert_eq!(query(&s, "SELECT @@innodb_buffer_pool_size"), "1073741824");
    assert_eq!(query(&s, "SELECT @@log_bin"), "0");
    assert_eq!(
        query(&s, "SELECT plugin FROM mysql.user WHERE user = 'sbtest'"),
        "mysql_native_password"
    );
    // The recorded settings: the base ones not overridden, then --set.
    assert_eq!(setting(&s, "max_connections"), Some("321"));
    assert_eq!(
        s.settings
            .iter()
            .filter(|(n, _)| n == "max_connections")
            .count(),
        1
    );
    assert_eq!(setting(&s, "innodb_buffer_pool_size"), Some("1G"));
    // The socket URL works too.
    let via_socket = RunningServer {
        url: s.socket_url(),
        ..s.clone()
    };
    assert_eq!(
        addr(&via_socket.url).socket.as_deref(),
        Some(s.socket.as_path())
    );
    let out = Command::new("mariadb")
        .args([
            "--no-defaults",
            "-u",
            "sbtest",
            "-psbtest",
            "-N",
            "-e",
            "SELECT 1",
        ])
        .arg(format!("--socket={}", s.socket.display()))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1");
    query(
        &s,
        "CREATE TABLE kept (x INT); INSERT INTO kept VALUES (42)",
    );

    assert_eq!(server::status(&dir).unwrap().as_ref(), Some(&s));
    let e = server::start(&spec).unwrap_err();
    assert!(
        matches!(e, ServerError::AlreadyRunning { pid, .. } if pid == s.pid),
        "{e}"
    );
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        ["data", "dbsweep-server.json", "my.cnf", "run", "server.log"]
    );
    // Plain unless TLS is asked for: MariaDB 11.4 and later would serve
    // TLS with a certificate of their own, and a client preferring TLS
    // would then encrypt where an older build it is compared with does not.
    let cnf = std::fs::read_to_string(dir.join("my.cnf")).unwrap();
    assert!(cnf.lines().any(|l| l.trim() == "skip-ssl"), "{cnf}");
    assert_eq!(query(&s, "SELECT @@have_ssl"), "DISABLED");
    stop_and_check(&s);

    // Restart on the same directory with other settings, pinned to CPU 0:
    // the data (and the port) are kept.
    let again = ServerSpec {
        cpus: Some(vec![0]),
        ..ServerSpec::new(ServerKind::Mariadb, &dir).set("max-connections", "123")
    };
    let begun = Instant::now();
    let s2 = server::start(&again).unwrap();
    eprintln!("mariadb restarted in {:?}", begun.elapsed());
    assert_eq!(s2.port, s.port);
    assert_eq!(query(&s2, "SELECT @@max_connections"), "123");
    assert_eq!(query(&s2, "SELECT x FROM kept"), "42");
    assert_eq!(cpus_allowed_list(s2.pid), "0");
    assert_eq!(s2.cpus, Some(vec![0]));
    stop_and_check(&s2);

    check_rejected(
        &ServerSpec::new(ServerKind::Mariadb, &dir).set("no_such_setting", "1"),
        "unknown variable 'no_such_setting=1'",
    );
    // The directory is still good after a rejected start.
    let s3 = server::start(&ServerSpec::new(ServerKind::Mariadb, &dir)).unwrap();
    assert_eq!(query(&s3, "SELECT @@max_connections"), "2000");
    stop_and_check(&s3);
}

#[test]
fn postgres_starts_stops_restarts_and_rejects_bad_settings() {
    let _serial = SERVERS.read().unwrap_or_else(|e| e.into_inner());
    let tmp = scratch();
    let dir = tmp.path().join("p");
    let spec = ServerSpec {
        cpus: Some(vec![0]),
        ..ServerSpec::new(ServerKind::Postgres, &dir).set("work_mem", "7MB")
    };

    let begun = Instant::now();
    let s = server::start(&spec).unwrap();
    eprintln!("postgres initialised and started in {:?}", begun.elapsed());
    assert_eq!(
        s.url,
        format!("postgres://sbtest:sbtest@127.0.0.1:{}/sbtest", s.port)
    );
    assert!(s.version.contains("PostgreSQL"), "{}", s.version);
    assert_eq!(query(&s, "SHOW work_mem"), "7MB");
    assert_eq!(query(&s, "SHOW max_connections"), "1100");
    assert_eq!(query(&s, "SHOW shared_buffers"), "1GB");
    assert_eq!(query(&s, "SHOW listen_addresses"), "127.0.0.1");
    assert_eq!(
        query(
            &s,
            "SELECT left(rolpassword, 14) FROM pg_authid WHERE rolname = 'sbtest'"
        ),
        "SCRAM-SHA-256$"
    );
    assert_eq!(cpus_allowed_list(s.pid), "0");
    assert_eq!(setting(&s, "work_mem"), Some("7MB"));
    assert_eq!(
        s.socket,
        dir.canonicalize()
            .unwrap()
            .join(format!("run/.s.PGSQL.{}", s.port))
    );
    query(
        &s,
        "CREATE TABLE kept (x int); INSERT INTO kept VALUES (42)",
    );
    assert_eq!(server::status(&dir).unwrap().map(|r| r.pid), Some(s.pid));
    stop_and_check(&s);

    // Restart with a config file and a --set that overrides one of its
    // settings: the file is applied, --set wins, the data is kept.
    let conf = tmp.path().join("mine.conf");
    std::fs::write(&conf, "work_mem = '5MB'\nmaintenance_work_mem = '99MB'\n").unwrap();
    let again = ServerSpec {
        config_file: Some(conf),
        ..ServerSpec::new(ServerKind::Postgres, &dir).set("work_mem", "9MB")
    };
    let begun = Instant::now();
    let s2 = server::start(&again).unwrap();
    eprintln!("postgres restarted in {:?}", begun.elapsed());
    assert_eq!(s2.port, s.port);
    assert_eq!(query(&s2, "SHOW work_mem"), "9MB");
    assert_eq!(query(&s2, "SHOW maintenance_work_mem"), "99MB");
    assert_eq!(query(&s2, "SELECT x FROM kept"), "42");
    assert_eq!(s2.config_file, Some(s2.dir.join("user.conf")));
    assert_ne!(cpus_allowed_list(s2.pid), "", "unpinned");
    stop_and_check(&s2);

    check_rejected(
        &ServerSpec::new(ServerKind::Postgres, &dir).set("no_such_setting", "1"),
        "unrecognized configuration parameter \"no_such_setting\"",
    );
    check_rejected(
        &ServerSpec::new(ServerKind::Postgres, &dir).set("work_mem", "lots"),
        "invalid value for parameter \"work_mem\": \"lots\"",
    );

    // A server that is not ready in time is killed, with its log's tail.
    let e = server::start(&ServerSpec {
        start_timeout: Duration::from_millis(1),
        ..ServerSpec::new(ServerKind::Postgres, &dir)
    })
    .unwrap_err();
    assert!(
        matches!(e, ServerError::Failed { .. }) && !e.is_bad_input(),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("did not accept connections within 1ms"),
        "{e}"
    );
    assert!(e.to_string().contains("--- last lines of"), "{e}");
    assert_eq!(processes_in(&dir), Vec::<u32>::new());
    assert_eq!(server::status(&dir).unwrap(), None);
}

#[test]
fn guards_and_stop_all_leave_nothing_running() {
    let _serial = SERVERS.write().unwrap_or_else(|e| e.into_inner());
    let tmp = scratch();

    let guard =
        ServerGuard::start(&ServerSpec::new(ServerKind::Postgres, tmp.path().join("g"))).unwrap();
    let pid = guard.pid;
    assert_eq!(query(&guard, "SELECT 1"), "1");
    drop(guard);
    assert!(!alive(pid));
    assert_eq!(processes_in(&tmp.path().join("g")), Vec::<u32>::new());

    let m = server::start(&ServerSpec::new(ServerKind::Mariadb, tmp.path().join("m"))).unwrap();
    let p = server::start(&ServerSpec::new(ServerKind::Postgres, tmp.path().join("g"))).unwrap();
    let failures = server::stop_all_started();
    assert!(failures.is_empty(), "{failures:?}");
    for s in [&m, &p] {
        assert!(!alive(s.pid), "{} still alive", s.kind);
        assert_eq!(processes_in(&s.dir), Vec::<u32>::new());
        assert_eq!(server::status(&s.dir).unwrap(), None);
    }
    assert!(
        server::stop_all_started().is_empty(),
        "nothing left to stop"
    );
}

#[test]
fn bad_input_is_refused_before_anything_starts() {
    let tmp = scratch();
    let dir = tmp.path().join("x");

    let e = server::start(&ServerSpec {
        cpus: Some(vec![4096]),
        ..ServerSpec::new(ServerKind::Postgres, &dir)
    })
    .unwrap_err();
    assert!(
        e.is_bad_input() && e.to_string().contains("CPU 4096 does not exist"),
        "{e}"
    );
    assert!(!dir.exists(), "nothing was created");

    let e =
        server::start(&ServerSpec::new(ServerKind::Mariadb, &dir).set("port", "1")).unwrap_err();
    assert!(
        e.is_bad_input() && e.to_string().contains("chosen by dbsweep"),
        "{e}"
    );

    let e = server::start(&ServerSpec {
        binaries: Some(tmp.path().to_path_buf()),
        ..ServerSpec::new(ServerKind::Postgres, &dir)
    })
    .unwrap_err();
    assert!(
        e.is_bad_input() && e.to_string().contains("not found"),
        "{e}"
    );

    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("precious.txt"), "x").unwrap();
    let e = server::start(&ServerSpec::new(ServerKind::Mariadb, &dir)).unwrap_err();
    assert!(
        e.is_bad_input() && e.to_string().contains("not made by dbsweep"),
        "{e}"
    );
    assert!(server::status(&dir).unwrap_err().is_bad_input());
    assert!(server::stop(&tmp.path().join("nowhere"))
        .unwrap_err()
        .is_bad_input());
}
