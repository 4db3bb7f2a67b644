//! Through PgBouncer in transaction pooling, as users of managed PostgreSQL
//! run it: a real PgBouncer (1.21 or later, which `scripts/install-servers`
//! builds from Debian's source where the package is older) that the test
//! starts in front of a PostgreSQL started with `dbsweep server start`.
//! Prepared statements carried over by `max_prepared_statements`, the
//! record naming the pooler, and the refusal of a pooler that would lose
//! them.

mod util;

use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use util::servers::{free_port, os_user};
use util::{dbsweep, read_json, Dir, Server};

/// A PgBouncer the test started, killed when dropped.
struct Bouncer {
    child: Child,
    port: u16,
    _dir: Dir,
}

impl Drop for Bouncer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The parts of a managed server's URL `postgres://USER:PW@HOST:PORT/DB`.
fn parts(url: &str) -> (String, String, u16, String) {
    let rest = url.strip_prefix("postgres://").expect("a PostgreSQL URL");
    let (cred, rest) = rest.split_once('@').unwrap();
    let (user, pw) = cred.split_once(':').unwrap();
    let (hostport, db) = rest.split_once('/').unwrap();
    let port = hostport.rsplit_once(':').unwrap().1.parse().unwrap();
    let db = db.split('?').next().unwrap();
    (user.into(), pw.into(), port, db.into())
}

/// Starts PgBouncer in front of `server` with `settings` added to its
/// `[pgbouncer]` section; `stats` lets the user read its console.
fn bouncer(server: &Server, settings: &str, stats: bool) -> Bouncer {
    let (user, pw, pg_port, _) = parts(&server.url);
    let dir = Dir::new();
    let owner = os_user("postgres");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::chown(dir.path(), Some(owner.0), Some(owner.1)).unwrap();
    let port = free_port();
    let users = dir.join("userlist.txt");
    std::fs::write(&users, format!("\"{user}\" \"{pw}\"\n")).unwrap();
    std::os::unix::fs::chown(&users, Some(owner.0), Some(owner.1)).unwrap();
    let stats_users = if stats { user.as_str() } else { "nobody" };
    let ini = dir.join("pgbouncer.ini");
    std::fs::write(
        &ini,
        format!(
            "[databases]\n* = host=127.0.0.1 port={pg_port}\n\n[pgbouncer]\n\
             listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n\
             auth_type = scram-sha-256\nauth_file = {}\nstats_users = {stats_users}\n\
             pool_mode = transaction\ndefault_pool_size = 3\nmax_client_conn = 200\n\
             logfile = {}\n{settings}\n",
            users.display(),
            dir.join("pgbouncer.log").display()
        ),
    )
    .unwrap();
    let child = Command::new(pgbouncer())
        .arg(&ini)
        .uid(owner.0)
        .gid(owner.1)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start pgbouncer");
    let b = Bouncer {
        child,
        port,
        _dir: dir,
    };
    let until = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < until, "pgbouncer did not listen on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
    b
}

fn which(name: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

/// `server`'s URL with the port of `b`.
fn through(server: &Server, b: &Bouncer) -> String {
    let (user, pw, _, db) = parts(&server.url);
    format!("postgres://{user}:{pw}@127.0.0.1:{}/{db}", b.port)
}

fn setting(doc: &serde_json::Value, name: &str) -> Option<String> {
    doc["target"]["settings"][name].as_str().map(str::to_string)
}

/// The installed PgBouncer, 1.21 or later (max_prepared_statements).
fn pgbouncer() -> std::path::PathBuf {
    let program = which("pgbouncer").unwrap_or_else(|| {
        panic!("pgbouncer is not installed: run scripts/install-servers (PgBouncer 1.21 or later)")
    });
    let out = Command::new(&program).arg("--version").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        dbsweep::server::version_numbers(&text).as_slice() >= [1, 21].as_slice(),
        "{text}: PgBouncer 1.21 or later is needed (max_prepared_statements); run scripts/install-servers"
    );
    program
}

/// A PostgreSQL started by dbsweep with oltp_point_select's 500 rows.
fn postgres_with_rows() -> Server {
    let pg = Server::start("postgres", &[]);
    dbsweep(&[
        "prepare",
        "oltp_point_select",
        "--db",
        &pg.url,
        "--table-size",
        "500",
    ])
    .ok();
    pg
}

/// Runs `workload` for 3 s over `url` at 8 clients with `extra` and returns
/// its record.
fn run(url: &str, workload: &str, extra: &[&str], json: &Path) -> serde_json::Value {
    let json_s = json.display().to_string();
    let mut args = vec![
        "run",
        workload,
        "--db",
        url,
        "--threads",
        "8",
        "--time",
        "3",
        "--table-size",
        "500",
        "--json",
        &json_s,
    ];
    args.extend_from_slice(extra);
    dbsweep(&args).ok();
    read_json(json)
}

#[test]
fn transaction_pooling_with_prepared_statements() {
    pgbouncer();
    let pg = Server::start("postgres", &[]);
    dbsweep(&[
        "prepare",
        "oltp_read_write",
        "--db",
        &pg.url,
        "--table-size",
        "500",
        "--tables",
        "2",
    ])
    .ok();
    let b = bouncer(&pg, "max_prepared_statements = 200", true);
    let url = through(&pg, &b);
    let dir = Dir::new();
    // 8 clients on 3 server connections: consecutive transactions of a
    // client land on different server connections, so every statement
    // dbsweep prepared once must be carried over by the pooler.
    for (i, extra) in [&[][..], &["--client-threads", "2"][..]].iter().enumerate() {
        let mut args = vec!["--tables", "2"];
        args.extend_from_slice(extra);
        let doc = run(
            &url,
            "oltp_read_write",
            &args,
            &dir.join(&format!("rw{i}.json")),
        );
        let r = &doc["result"];
        assert!(r["transactions"].as_u64().unwrap() > 50, "{extra:?}: {r}");
        // A statement the pooler lost would be an error of kind other;
        // a duplicate key between two clients' inserts is the workload's.
        for kind in ["other", "connection_lost"] {
            assert_eq!(r["errors"][kind], 0, "{extra:?}: {kind}: {}", r["errors"]);
        }
        assert_eq!(r["failed_transactions"], 0, "{extra:?}");
        let version = doc["target"]["server_version"].as_str().unwrap();
        assert!(
            version.starts_with("PostgreSQL ")
                && version.contains(" (through PgBouncer 1.")
                && version.ends_with(", transaction pooling)"),
            "{version}"
        );
        assert!(setting(&doc, "dbsweep.pooler")
            .unwrap()
            .starts_with("PgBouncer 1."));
        assert_eq!(
            setting(&doc, "pgbouncer.pool_mode").as_deref(),
            Some("transaction")
        );
        assert_eq!(
            setting(&doc, "pgbouncer.max_prepared_statements").as_deref(),
            Some("200")
        );
        assert_eq!(
            setting(&doc, "dbsweep.ps_mode").as_deref(),
            Some("prepared")
        );
        // The server's own settings still come from the server.
        assert!(setting(&doc, "shared_buffers").is_some());
    }
    // Directly, nothing names a pooler.
    let doc = run(&pg.url, "oltp_point_select", &[], &dir.join("direct.json"));
    assert_eq!(setting(&doc, "dbsweep.pooler"), None);
    assert!(!doc["target"]["server_version"]
        .as_str()
        .unwrap()
        .contains("through"));
}

#[test]
fn a_pooler_that_would_lose_prepared_statements_is_refused() {
    let pg = postgres_with_rows();
    let b = bouncer(&pg, "max_prepared_statements = 0", true);
    let url = through(&pg, &b);
    let dir = Dir::new();
    let json = dir.join("refused.json");
    let json_s = json.display().to_string();
    // The password from the environment, so stderr holds nothing else.
    let (_, pw, _, _) = parts(&pg.url);
    let bare = url.replacen(&format!(":{pw}@"), "@", 1);
    let r = util::dbsweep_env(
        &[
            "run",
            "oltp_point_select",
            "--db",
            &bare,
            "--threads",
            "4",
            "--time",
            "2",
            "--table-size",
            "500",
            "--json",
            &json_s,
        ],
        &[("PGPASSWORD", pw.as_str())],
    );
    r.expect_status(2);
    let msg = r.stderr.trim();
    assert_eq!(msg.lines().count(), 1, "one line: {msg}");
    assert!(msg.contains("PgBouncer 1."), "{msg}");
    assert!(
        msg.contains("transaction pooling has max_prepared_statements = 0"),
        "{msg}"
    );
    assert!(msg.contains("--db-ps-mode=disable"), "{msg}");
    // (The managed server's password is its user's name: look for it
    // where a URL would carry it.)
    assert!(!msg.contains(&format!(":{pw}@")), "no password in {msg}");
    assert!(!json.exists(), "nothing written");
    // The fix it names works: statements sent as text.
    let doc = run(
        &url,
        "oltp_point_select",
        &["--db-ps-mode", "disable"],
        &dir.join("text.json"),
    );
    assert!(doc["result"]["transactions"].as_u64().unwrap() > 100);
    assert_eq!(setting(&doc, "dbsweep.ps_mode").as_deref(), Some("disable"));
    assert_eq!(
        setting(&doc, "pgbouncer.max_prepared_statements").as_deref(),
        Some("0")
    );
}

#[test]
fn a_console_the_user_may_not_read_still_names_pgbouncer() {
    let pg = postgres_with_rows();
    let b = bouncer(&pg, "max_prepared_statements = 100", false);
    let url = through(&pg, &b);
    let dir = Dir::new();
    let doc = run(&url, "oltp_point_select", &[], &dir.join("unread.json"));
    let (user, _, _, _) = parts(&pg.url);
    assert_eq!(
        setting(&doc, "dbsweep.pooler"),
        Some(format!(
            "PgBouncer (version unread: add user '{user}' to its stats_users)"
        ))
    );
    assert!(doc["result"]["transactions"].as_u64().unwrap() > 100);
    assert!(doc["target"]["server_version"]
        .as_str()
        .unwrap()
        .ends_with(" (through PgBouncer)"));
}

#[test]
fn a_managed_server_behind_its_own_pgbouncer() {
    pgbouncer();
    let pg = Server::start(
        "postgres",
        &[
            "--pooler",
            "pgbouncer",
            "--pooler-set",
            "default_pool_size=3",
        ],
    );
    let sdir = pg.server_dir().display().to_string();
    let status = dbsweep(&["server", "status", "--dir", &sdir]);
    status.ok();
    let line = status
        .stdout
        .lines()
        .find(|l| l.contains("through PgBouncer"))
        .unwrap_or_else(|| panic!("no pooler in the status:\n{}", status.stdout));
    let pooler_pid: u32 = line
        .split("pid ")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .and_then(|s| s.trim().parse().ok())
        .unwrap();
    assert!(util::process_alive(pooler_pid));
    // The URL printed is the pooler's: 8 clients on 3 server connections.
    dbsweep(&[
        "prepare",
        "oltp_read_write",
        "--db",
        &pg.url,
        "--table-size",
        "500",
    ])
    .ok();
    let dir = Dir::new();
    let doc = run(&pg.url, "oltp_read_write", &[], &dir.join("managed.json"));
    assert_eq!(
        setting(&doc, "pgbouncer.default_pool_size").as_deref(),
        Some("3")
    );
    assert_eq!(
        setting(&doc, "pgbouncer.pool_mode").as_deref(),
        Some("transaction")
    );
    assert!(doc["result"]["transactions"].as_u64().unwrap() > 50);
    // The sampler found the database behind the pooler and read both.
    let how = doc["result"]["metrics"]["server_process"]["how"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        how.contains("PgBouncer (pid ") && how.contains("in front of PostgreSQL (pid "),
        "{how}"
    );
    dbsweep(&["server", "stop", "--dir", &sdir]).ok();
    let until = Instant::now() + Duration::from_secs(10);
    while util::process_alive(pooler_pid) {
        assert!(Instant::now() < until, "pgbouncer outlived its server");
        std::thread::sleep(Duration::from_millis(50));
    }
    // A pooler setting dbsweep chooses itself is refused before anything starts.
    let other = Dir::new();
    let odir = other.join("s").display().to_string();
    let r = dbsweep(&[
        "server",
        "start",
        "postgres",
        "--dir",
        &odir,
        "--pooler",
        "pgbouncer",
        "--pooler-set",
        "listen_port=6432",
    ]);
    r.expect_status(2);
    assert!(
        r.stderr.contains("'listen_port' is dbsweep's"),
        "{}",
        r.stderr
    );
    let r = dbsweep(&[
        "server",
        "start",
        "mariadb",
        "--dir",
        &odir,
        "--pooler",
        "pgbouncer",
    ]);
    r.expect_status(2);
    assert!(r.stderr.contains("in front of PostgreSQL"), "{}", r.stderr);
}

#[test]
fn a_study_sets_pooled_beside_direct() {
    pgbouncer();
    let dir = Dir::new();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let study = dir.join("pooled.toml");
    std::fs::write(
        &study,
        r#"name = "pooled"
description = "PostgreSQL direct and through PgBouncer"
clients = [4]

[[target]]
name = "direct"
server = "postgres"

[[target]]
name = "pooled"
server = "postgres"
pooler = "pgbouncer"
pooler_settings = { default_pool_size = 2 }

[[workload]]
name = "oltp_point_select"
options = { tables = 1, table-size = 500 }
time = 2
"#,
    )
    .unwrap();
    let out = dir.join("out").display().to_string();
    let r = dbsweep(&["study", &study.display().to_string(), "--out", &out]);
    r.ok();
    let said = format!("{}{}", r.stdout, r.stderr);
    assert!(
        said.contains("2 point(s) finished, 0 skipped, 0 failed"),
        "{said}"
    );
    let md = dir.join("report.md").display().to_string();
    dbsweep(&["report", &out, "--format", "md", "--out", &md]).ok();
    let text = std::fs::read_to_string(&md).unwrap();
    let servers = text
        .lines()
        .find(|l| l.starts_with("- **Servers**"))
        .expect("a Servers line");
    assert!(
        servers.contains("(through PgBouncer 1.") && servers.matches("through").count() == 1,
        "{servers}"
    );
    assert!(
        text.contains("behind PgBouncer 1."),
        "the pooler's program is named:\n{text}"
    );
    // A pooler in front of MariaDB is refused with the file's position.
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        "name = \"bad\"\nclients = [1]\n\n[[target]]\nserver = \"mariadb\"\npooler = \"pgbouncer\"\n\n[[workload]]\nname = \"oltp_point_select\"\ntime = 1\n",
    )
    .unwrap();
    let r = dbsweep(&[
        "study",
        &bad.display().to_string(),
        "--out",
        &dir.join("bad").display().to_string(),
    ]);
    r.expect_status(2);
    assert!(
        r.stderr
            .contains("PgBouncer goes in front of PostgreSQL, not mariadb"),
        "{}",
        r.stderr
    );
}
