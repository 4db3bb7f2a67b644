//! Passwords kept off the command line, against the scratch servers: a URL
//! without a password connects with PostgreSQL's `PGPASSWORD` or password
//! file, or MySQL's `MYSQL_PWD` or an option file's `[client]` section;
//! without any, the server refuses, and no message shows a password.

mod util;

use util::{dbsweep_env, Dir, Server};

/// The server's URL with its password removed.
fn without_password(url: &str) -> String {
    let u = url::Url::parse(url).unwrap();
    let mut bare = u.clone();
    bare.set_password(None).unwrap();
    bare.to_string()
}

fn prepare(url: &str, env: &[(&str, &str)]) -> util::Run {
    dbsweep_env(
        &[
            "prepare",
            "oltp_point_select",
            "--db",
            url,
            "--table-size",
            "10",
        ],
        env,
    )
}

/// Prepares and cleans up with `env`: connects twice.
fn connects(url: &str, env: &[(&str, &str)]) {
    prepare(url, env).ok();
    dbsweep_env(&["cleanup", "oltp_point_select", "--db", url], env).ok();
}

#[test]
fn postgres_takes_pgpassword_or_a_private_password_file() {
    let s = Server::start("postgres", &[]);
    let bare = without_password(&s.url);
    let r = prepare(&bare, &[]);
    assert_ne!(r.status, 0, "connected without a password");
    assert!(!r.stderr.contains("sbtest:sbtest"), "{}", r.stderr);
    connects(&bare, &[("PGPASSWORD", "sbtest")]);
    assert!(!prepare(&bare, &[("PGPASSWORD", "sbtest")])
        .stderr
        .contains("warning: the password"));
    dbsweep_env(
        &["cleanup", "oltp_point_select", "--db", &bare],
        &[("PGPASSWORD", "sbtest")],
    )
    .ok();
    // A password in the URL works, with one warning.
    let r = prepare(&s.url, &[]);
    r.ok();
    assert_eq!(
        r.stderr
            .matches("warning: the password in --db is visible")
            .count(),
        1,
        "{}",
        r.stderr
    );
    dbsweep_env(
        &["cleanup", "oltp_point_select", "--db", &bare],
        &[("PGPASSWORD", "sbtest")],
    )
    .ok();
    // ~/.pgpass's format, readable by its owner only.
    let dir = Dir::new();
    let port = url::Url::parse(&s.url).unwrap().port().unwrap();
    let file = dir.join("pgpass");
    std::fs::write(
        &file,
        format!("# scratch\n127.0.0.1:{port}:sbtest:sbtest:sbtest\n"),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let f = file.display().to_string();
    connects(&bare, &[("PGPASSFILE", &f)]);
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let r = prepare(&bare, &[("PGPASSFILE", &f)]);
    r.expect_status(2);
    assert!(r.stderr.contains("chmod 0600"), "{}", r.stderr);
}

#[test]
fn mysql_takes_mysql_pwd_or_an_option_file() {
    let s = Server::start("mariadb", &[]);
    let bare = without_password(&s.url);
    let r = prepare(&bare, &[]);
    assert_ne!(r.status, 0, "connected without a password");
    connects(&bare, &[("MYSQL_PWD", "sbtest")]);
    let dir = Dir::new();
    let file = dir.join("my.cnf");
    std::fs::write(
        &file,
        "[mysqld]\npassword = wrong\n[client]\npassword = \"sbtest\"\n",
    )
    .unwrap();
    let with_file = format!("{bare}?defaults-file={}", file.display());
    connects(&with_file, &[]);
}
