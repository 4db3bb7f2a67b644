//! A known password written through every path a user gives one — a run
//! with its JSON and HTML reports, a failing connect, a `.smack` file's
//! client blocks, a study with its results database and every report
//! format — never appears in a byte dbsweep writes or prints.

mod util;

use std::path::Path;

use util::{dbsweep_in, shared_dir, Dir, Server};

const SECRET: &str = "S3cretPw9";

/// Fails if any file under `dir` holds the password.
fn scan_files(dir: &Path) -> usize {
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            n += scan_files(&path);
            continue;
        }
        let bytes = std::fs::read(&path).unwrap_or_default();
        assert!(
            !bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()),
            "{} holds the password",
            path.display()
        );
        n += 1;
    }
    n
}

fn scan(what: &str, r: &util::Run) {
    assert!(!r.stdout.contains(SECRET), "{what}: stdout\n{}", r.stdout);
    assert!(!r.stderr.contains(SECRET), "{what}: stderr\n{}", r.stderr);
}

#[test]
fn a_password_never_leaves_the_run() {
    let s = Server::start("mariadb", &[]);
    // A user of our own with a password nothing else contains, made over
    // the server's socket as its root.
    let socket = s.server_dir().join("run/mysqld.sock");
    let out = std::process::Command::new("mysql")
        .arg(format!("--socket={}", socket.display()))
        .args(["-uroot", "-e"])
        .arg(format!(
            "CREATE USER 'sec'@'%' IDENTIFIED BY '{SECRET}'; GRANT ALL ON sbtest.* TO 'sec'@'%'"
        ))
        .output()
        .expect("the mysql client (mariadb-client)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let port = url::Url::parse(&s.url).unwrap().port().unwrap();
    let url = format!("mysql://sec:{SECRET}@127.0.0.1:{port}/sbtest");
    let dir = Dir::new();
    let d = dir.path();

    let r = dbsweep_in(
        d,
        &[
            "prepare",
            "oltp_point_select",
            "--db",
            &url,
            "--table-size",
            "100",
        ],
    );
    r.ok();
    scan("prepare", &r);
    let r = dbsweep_in(
        d,
        &[
            "run",
            "oltp_point_select",
            "--db",
            &url,
            "--table-size",
            "100",
            "--time",
            "1",
            "--json",
            "run.json",
            "--report",
            "run.html",
        ],
    );
    r.ok();
    scan("run", &r);
    for format in ["text", "json", "html"] {
        let out = format!("run-again.{format}");
        let r = dbsweep_in(
            d,
            &["report", "run.json", "--format", format, "--out", &out],
        );
        r.ok();
        scan("report of the run", &r);
    }

    // A failing connect names the user, host, port and database.
    let refused = format!("mysql://sec:{SECRET}@127.0.0.1:1/sbtest");
    let r = dbsweep_in(
        d,
        &["run", "oltp_point_select", "--db", &refused, "--time", "1"],
    );
    assert_ne!(r.status, 0);
    scan("a failing connect", &r);
    assert!(
        r.stderr.contains("user 'sec'")
            && r.stderr.contains("127.0.0.1:1")
            && r.stderr.contains("'sbtest'"),
        "{}",
        r.stderr
    );

    // A .smack file's client blocks with the password (Super Smack's own
    // way of giving one), run against the server: the project's file, and
    // the stock one where `../shared` has it.
    let mut smack_files =
        vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/smack/point-select.smack")];
    smack_files.extend(
        shared_dir(
            "testdata/smack",
            "the password in the stock select-key.smack",
        )
        .map(|d| d.join("select-key.smack")),
    );
    for file in smack_files {
        let original = std::fs::read_to_string(&file).unwrap();
        let smack = original
            .replace("user \"root\";", "user \"sec\";")
            .replace("user \"test\";", "user \"sec\";")
            .replace(
                "host \"localhost\";",
                &format!("host \"127.0.0.1\"; port \"{port}\";"),
            )
            .replace("db \"test\";", "db \"sbtest\";")
            .replace("pass \"\";", &format!("pass \"{SECRET}\";"));
        assert!(smack.matches(SECRET).count() >= 2, "{smack}");
        std::fs::write(d.join("sk.smack"), &smack).unwrap();
        let r = dbsweep_in(d, &["smack", "sk.smack", "2", "50"]);
        r.ok();
        scan(&format!("smack {}", file.display()), &r);
        std::fs::remove_file(d.join("sk.smack")).unwrap();
    }

    // A study, its results database and every report format.
    std::fs::write(
        d.join("s.toml"),
        format!(
            "name = \"s\"\nout = \"out\"\nclients = [1]\n[[target]]\nname = \"m\"\nurl = \"{url}\"\n[[workload]]\nname = \"oltp_point_select\"\noptions = {{ table-size = 100 }}\ntime = 1\n"
        ),
    )
    .unwrap();
    let r = dbsweep_in(d, &["study", "s.toml"]);
    r.ok();
    scan("study", &r);
    for format in ["md", "text", "csv", "json", "html"] {
        let r = dbsweep_in(
            d,
            &[
                "report",
                "out",
                "--format",
                format,
                "--out",
                &format!("out/report-{format}.{format}"),
            ],
        );
        r.ok();
        scan("report", &r);
    }
    let r = dbsweep_in(d, &["results", "out"]);
    r.ok();
    scan("results", &r);
    // Everything written, but the study file itself (the user's own).
    std::fs::remove_file(d.join("s.toml")).unwrap();
    assert!(scan_files(d) >= 10);
    dbsweep_in(d, &["cleanup", "oltp_point_select", "--db", &s.url]).ok();
}

#[test]
fn a_managed_servers_own_password_is_never_printed() {
    let dir = Dir::new();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let sdir = dir.join("pg").display().to_string();
    let start = |args: &[&str], env: &[(&str, &str)]| util::dbsweep_env(args, env);
    let r = start(
        &[
            "server",
            "start",
            "postgres",
            "--dir",
            &sdir,
            "--password-env",
            "PW",
        ],
        &[("PW", SECRET)],
    );
    r.ok();
    scan("server start", &r);
    let url = r.stdout.trim().to_string();
    assert!(url.starts_with("postgres://sbtest@127.0.0.1:"), "{url}");
    let r = start(&["server", "status", "--dir", &sdir], &[]);
    r.ok();
    scan("server status", &r);
    // The printed URL works with the password in PGPASSWORD.
    let pw = [("PGPASSWORD", SECRET)];
    let r = start(
        &[
            "prepare",
            "oltp_point_select",
            "--db",
            &url,
            "--table-size",
            "10",
        ],
        &pw,
    );
    r.ok();
    scan("prepare", &r);
    start(&["cleanup", "oltp_point_select", "--db", &url], &pw).ok();
    // Not set: one clear message.
    let r = start(
        &[
            "server",
            "start",
            "postgres",
            "--dir",
            &sdir,
            "--password-env",
            "NO_SUCH_PW",
        ],
        &[],
    );
    r.expect_status(2);
    assert!(
        r.stderr.contains("--password-env NO_SUCH_PW"),
        "{}",
        r.stderr
    );
    start(&["server", "stop", "--dir", &sdir], &[]).ok();
}
