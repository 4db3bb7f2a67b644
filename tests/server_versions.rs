//! Server builds of other versions, for real: PostgreSQL 9.6 and MariaDB
//! 10.1 and 10.2 installed from the registry (`dbsweep server install`),
//! started managed (`server start --version`), loaded and run with
//! `oltp_read_write` with metrics on. The run record names the version; the
//! old MariaDBs report InnoDB's semaphore counters (seed 004's figure),
//! PostgreSQL 9.6 its wait events.
//!
//! The builds are cached under target/ (CARGO_TARGET_TMPDIR), so one test
//! run downloads each once and later runs not at all.

mod util;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use serde_json::Value;
use util::{dbsweep_env, read_json, Dir, Run};

/// The cache every test here shares.
fn cache() -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("server-builds");
    std::fs::create_dir_all(&dir).unwrap();
    dir.display().to_string()
}

fn run(args: &[&str]) -> Run {
    dbsweep_env(args, &[("XDG_CACHE_HOME", &cache())])
}

/// A managed server of a cached version, stopped when dropped.
struct Managed {
    dir: Dir,
    url: String,
}

impl Managed {
    fn start(kind: &str, version: &str, extra: &[&str]) -> Managed {
        let dir = Dir::new();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let sdir = dir.join("server").display().to_string();
        let mut args = vec![
            "server",
            "start",
            kind,
            "--version",
            version,
            "--dir",
            &sdir,
        ];
        args.extend_from_slice(extra);
        let r = run(&args);
        r.ok();
        Managed {
            url: r.stdout.trim().to_string(),
            dir,
        }
    }
}

impl Drop for Managed {
    fn drop(&mut self) {
        let sdir = self.dir.join("server").display().to_string();
        let _ = run(&["server", "stop", "--dir", &sdir]);
    }
}

/// Installs `kind@version` (or finds it cached) and returns its directory.
fn install(what: &str) -> PathBuf {
    let r = run(&["server", "install", what]);
    r.ok();
    PathBuf::from(r.stdout.trim())
}

/// Prepares a small oltp_read_write data set and runs it for 3 s with 4
/// clients and metrics every half second; returns the run's record.
fn oltp_read_write(m: &Managed) -> Value {
    let common = ["--db", &m.url, "--tables", "2", "--table-size", "2000"];
    let mut prepare = vec!["prepare", "oltp_read_write"];
    prepare.extend_from_slice(&common);
    run(&prepare).ok();
    let json = m.dir.join("run.json").display().to_string();
    let mut args = vec!["run", "oltp_read_write"];
    args.extend_from_slice(&common);
    args.extend_from_slice(&[
        "--threads",
        "4",
        "--time",
        "3",
        "--metrics-interval",
        "0.5",
        "--json",
        &json,
    ]);
    run(&args).ok();
    read_json(&PathBuf::from(json))
}

fn transactions(doc: &Value) -> u64 {
    let t = &doc["result"]["transactions"];
    t.as_u64()
        .or_else(|| t["count"].as_u64())
        .or_else(|| doc["result"]["counts"]["transactions"].as_u64())
        .unwrap_or(1)
}

#[test]
fn postgres_9_6_installs_starts_and_runs_with_its_wait_events() {
    let dir = install("postgres@9.6");
    assert!(dir.ends_with("postgres-9.6.24") || dir.to_string_lossy().contains("postgres-9.6."));
    let m = Managed::start("postgres", "9.6", &[]);
    let doc = oltp_read_write(&m);
    let version = doc["target"]["server_version"].as_str().unwrap();
    assert!(version.starts_with("PostgreSQL 9.6."), "{version}");
    let metrics = &doc["result"]["metrics"];
    // Every counter this version has is read: the one gap is PostgreSQL's
    // own (it counts no row lock waits), not 9.6's.
    let gaps: Vec<&str> = metrics["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["what"].as_str().unwrap())
        .collect();
    assert_eq!(gaps, ["row lock waits"], "{metrics:#}");
    assert!(transactions(&doc) > 0);

    // A setting 9.6 does not know fails with the server's own words.
    let other = Dir::new();
    std::fs::set_permissions(other.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let sdir = other.join("server").display().to_string();
    let r = run(&[
        "server",
        "start",
        "postgres",
        "--version",
        "9.6",
        "--dir",
        &sdir,
        "--set",
        "wal_recycle=off",
    ]);
    r.expect_status(2);
    assert!(
        r.stderr
            .contains("unrecognized configuration parameter \"wal_recycle\""),
        "{}",
        r.stderr
    );
}

/// Installs, starts and runs one MariaDB version; checks its semaphore
/// counters and figure.
fn mariadb_with_semaphores(what: &str, version: &str, expect: &str) {
    install(what);
    let m = Managed::start("mariadb", version, &[]);
    let doc = oltp_read_write(&m);
    let server_version = doc["target"]["server_version"].as_str().unwrap();
    assert!(server_version.starts_with(expect), "{server_version}");
    let metrics = &doc["result"]["metrics"];
    let sections = metrics["innodb_semaphores"].as_array().unwrap();
    assert!(
        sections.iter().any(|s| s
            .as_str()
            .unwrap()
            .contains("OS WAIT ARRAY INFO: reservation count")),
        "{sections:?}"
    );
    // The sessions sampled by what they were doing, and the SEMAPHORES
    // readings whose waiting threads are counted by latch.
    let window = &metrics["window"];
    assert!(window["wait_samples"].as_u64().unwrap() > 0, "{window:#}");
    assert!(
        window["semaphore_readings"].as_u64().unwrap() > 0,
        "{window:#}"
    );
    let figure = &metrics["figures"]["semaphore_os_waits_per_transaction"];
    assert!(figure["value"].as_f64().is_some(), "{metrics:#}");
    assert!(
        figure["from"]
            .as_str()
            .unwrap()
            .starts_with("InnoDB semaphore OS waits"),
        "{figure}"
    );
}

#[test]
fn mariadb_10_2_reports_innodb_semaphores() {
    mariadb_with_semaphores("mariadb@10.2", "10.2", "10.2.");
}

/// TPC-H's power test at SF 0.01 and CH-benCHmark's load and a short run
/// on the old builds the analytics study compares: MariaDB 10.2 cannot
/// prepare a placeholder inside Q15's `WITH` (its dates go through user
/// variables) nor run RF2's DELETE in bulk (one by one after its refusal);
/// PostgreSQL 9.6 analyzes one table per ANALYZE.
fn old_build_runs_the_analytical_workloads(kind: &str, version: &str) {
    install(&format!("{kind}@{version}"));
    let m = Managed::start(kind, version, &[]);
    run(&["prepare", "tpch", "--scale", "0.01", "--db", &m.url]).ok();
    let json = m.dir.join("tpch.json").display().to_string();
    run(&[
        "run", "tpch", "--scale", "0.01", "--db", &m.url, "--json", &json,
    ])
    .ok();
    let doc = read_json(&PathBuf::from(&json));
    let tpch = &doc["result"]["tpch"];
    assert!(tpch["power"].as_f64().unwrap() > 0.0, "{tpch:#}");
    run(&["cleanup", "tpch", "--db", &m.url]).ok();
    run(&["prepare", "chbench", "--warehouses", "1", "--db", &m.url]).ok();
    let r = run(&[
        "run",
        "chbench",
        "--warehouses",
        "1",
        "--threads",
        "2",
        "--time",
        "3",
        "--check",
        "--db",
        &m.url,
    ]);
    r.ok();
    assert!(r.stdout.contains("tpmC"), "{}", r.stdout);
}

#[test]
fn mariadb_10_2_runs_tpch_and_chbench() {
    old_build_runs_the_analytical_workloads("mariadb", "10.2");
}

#[test]
fn postgres_9_6_runs_tpch_and_chbench() {
    old_build_runs_the_analytical_workloads("postgres", "9.6");
}

#[test]
fn mariadb_10_1_reports_xtradb_semaphores() {
    mariadb_with_semaphores("mariadb@10.1", "10.1", "10.1.");
}

#[test]
fn versions_lists_the_cached_builds() {
    install("postgres@9.6");
    let r = run(&["server", "versions"]);
    r.ok();
    assert!(
        r.stdout
            .contains("postgres  9.6  postgres (PostgreSQL) 9.6."),
        "{}",
        r.stdout
    );
}

/// Runs dbsweep in `dir` with the shared cache.
fn run_in(dir: &Dir, args: &[&str]) -> Run {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dbsweep"))
        .args(args)
        .current_dir(dir.path())
        .env("XDG_CACHE_HOME", cache())
        .output()
        .unwrap();
    Run {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        elapsed: std::time::Duration::ZERO,
    }
}

#[test]
fn a_study_of_two_versions_of_each_server_names_them_in_every_format() {
    let dir = Dir::new();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        dir.join("versions.toml"),
        r#"
name = "two-versions"
out = "out"
clients = [2]

[[target]]
server = "mariadb"
version = "10.2"

[[target]]
name = "mariadb-system"
server = "mariadb"

[[target]]
server = "postgres"
version = "9.6"

[[target]]
name = "postgres-system"
server = "postgres"

[[workload]]
name = "oltp_point_select"
options = { table-size = 1000 }
time = 0.5
"#,
    )
    .unwrap();
    run_in(&dir, &["study", "versions.toml"]).ok();
    for format in ["text", "md", "html", "csv", "json"] {
        let r = run_in(&dir, &["report", "out", "--format", format, "--out", "-"]);
        r.ok();
        // Every format names the registry builds by the release their
        // servers reported.
        for name in ["mariadb 10.2.11", "postgres 9.6.24"] {
            assert!(
                r.stdout.contains(name),
                "{format}: no {name} in\n{}",
                r.stdout
            );
        }
        if ["text", "md", "html"].contains(&format) {
            // The header lists each target's server version.
            for version in [
                "(target mariadb-10.2): 10.2.11-MariaDB",
                "(target postgres-9.6): PostgreSQL 9.6.",
            ] {
                assert!(
                    r.stdout.contains(version),
                    "{format}: no '{version}' in\n{}",
                    r.stdout
                );
            }
        }
    }
}
