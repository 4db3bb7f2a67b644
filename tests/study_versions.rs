//! A study of two versions of each server, for real: MariaDB 10.2 and
//! PostgreSQL 9.6 from the registry (cached under target/, as
//! tests/server_versions.rs caches them) beside the system's MariaDB and
//! PostgreSQL, each started by the study. The results database keeps each
//! program's `--version` line as the study starts it, and the report names
//! every series by the release its server reported and lists the lines.

mod util;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use util::{dbsweep_env, read_json, Dir, Run};

/// The cache tests/server_versions.rs fills (one download per test run).
fn cache() -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("server-builds");
    std::fs::create_dir_all(&dir).unwrap();
    dir.display().to_string()
}

fn run(args: &[&str]) -> Run {
    dbsweep_env(args, &[("XDG_CACHE_HOME", &cache())])
}

#[test]
fn a_study_of_two_versions_of_each_server_names_them_in_its_report() {
    let dir = Dir::new();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = dir.join("versions.toml");
    std::fs::write(
        &file,
        r#"
name = "versions-test"
clients = [2]

[[target]]
server = "mariadb"
version = "10.2"

[[target]]
server = "mariadb"

[[target]]
server = "postgres"
version = "9.6"

[[target]]
server = "postgres"

[[workload]]
name = "oltp_point_select"
options = { table-size = 1000 }
time = 0.5
"#,
    )
    .unwrap();
    let out = dir.join("out").display().to_string();
    run(&["study", file.to_str().unwrap(), "--out", &out]).ok();

    // One line per started program, as the server printed it.
    let conn = rusqlite::Connection::open(dir.join("out/results.db")).unwrap();
    let lines: Vec<(String, String)> = conn
        .prepare("SELECT target, version_line FROM server_build ORDER BY target")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let targets: Vec<&str> = lines.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        targets,
        ["mariadb", "mariadb-10.2", "postgres", "postgres-9.6"],
        "{lines:?}"
    );
    assert!(lines[1].1.contains("Ver 10.2.11-MariaDB"), "{lines:?}");
    assert!(
        lines[3].1.starts_with("postgres (PostgreSQL) 9.6."),
        "{lines:?}"
    );

    let json = dir.join("report.json");
    run(&["report", &out, "--out", json.to_str().unwrap()]).ok();
    let doc = read_json(&json);
    let labels: Vec<String> = doc["panels"][0]["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap().to_string())
        .collect();
    // Each series by its release: two of each server, the registry's
    // builds among them.
    assert_eq!(labels.len(), 4, "{labels:?}");
    let count = |prefix: &str| labels.iter().filter(|l| l.starts_with(prefix)).count();
    assert_eq!(
        (count("mariadb 10."), count("postgres ")),
        (2, 2),
        "{labels:?}"
    );
    assert!(labels.iter().any(|l| l == "mariadb 10.2.11"), "{labels:?}");
    assert_eq!(count("postgres 9.6."), 1, "{labels:?}");
    for s in doc["study"]["servers"].as_array().unwrap() {
        assert_eq!(s["version_lines"].as_array().unwrap().len(), 1, "{s}");
    }

    let text = run(&["report", &out, "--format", "text", "--out", "-"]);
    text.ok();
    for label in &labels {
        assert!(
            text.stdout.contains(label.as_str()),
            "{label}:\n{}",
            text.stdout
        );
    }
    for (_, line) in &lines {
        assert!(
            text.stdout.contains(line.as_str()),
            "{line}:\n{}",
            text.stdout
        );
    }
}
