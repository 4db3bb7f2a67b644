//! Shared helpers for the integration tests: a scratch directory and a
//! builder that runs the real `dbsweep` binary and captures its output.

#![allow(dead_code)]

pub mod alloc;
pub mod evented;
pub mod nodes;
pub mod record;
pub mod servers;
pub mod tpcc;
pub mod tpch;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A scratch directory, removed when dropped.
pub struct Dir {
    dir: tempfile::TempDir,
}

impl Dir {
    pub fn new() -> Dir {
        Dir {
            dir: tempfile::Builder::new()
                .prefix("dbsweep-test-")
                .tempdir()
                .expect("temp dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A `sqlite://` URL for a database file in this directory.
    pub fn sqlite_url(&self, name: &str) -> String {
        format!("sqlite://{}", self.join(name).display())
    }

    /// Names of the files in the directory.
    pub fn files(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

/// One finished invocation of the binary.
pub struct Run {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Run {
    fn from(out: Output, elapsed: Duration) -> Run {
        Run {
            status: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            elapsed,
        }
    }

    /// Panics with both streams unless the exit status is `code`.
    pub fn expect_status(&self, code: i32) -> &Run {
        assert_eq!(
            self.status, code,
            "exit status {} (expected {code})\n--- stdout\n{}\n--- stderr\n{}",
            self.status, self.stdout, self.stderr
        );
        self
    }

    pub fn ok(&self) -> &Run {
        self.expect_status(0)
    }

    /// The value of a sysbench-style report line `label: VALUE ...` (first token).
    pub fn field(&self, label: &str) -> String {
        let prefix = format!("{label}:");
        self.stdout
            .lines()
            .map(str::trim)
            .find_map(|l| l.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no '{label}:' line in\n{}", self.stdout))
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_string()
    }

    pub fn count(&self, label: &str) -> u64 {
        self.field(label)
            .parse()
            .unwrap_or_else(|_| panic!("'{label}' is not a count in\n{}", self.stdout))
    }
}

/// Runs `dbsweep` with `args` in `cwd`.
pub fn dbsweep_in(cwd: &Path, args: &[&str]) -> Run {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_dbsweep"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run dbsweep");
    Run::from(out, start.elapsed())
}

/// Runs `dbsweep` with `args` and the environment variables `env` added
/// (and PostgreSQL's and MySQL's password variables removed unless given).
pub fn dbsweep_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    let start = Instant::now();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dbsweep"));
    cmd.args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("PGPASSWORD")
        .env_remove("PGPASSFILE")
        .env_remove("MYSQL_PWD");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run dbsweep");
    Run::from(out, start.elapsed())
}

pub fn dbsweep(args: &[&str]) -> Run {
    dbsweep_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

/// `../shared/<sub>` beside the repository: files that are not the
/// project's (the stock Super Smack files, the seed texts), which CI puts
/// there. Where it is missing, as in a fresh clone, prints one line saying
/// that `what` is skipped and why, and returns None.
pub fn shared_dir(sub: &str, what: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(sub);
    if dir.is_dir() {
        return Some(dir);
    }
    eprintln!(
        "skipping {what}: ../shared/{sub} is not beside the repository (CI has it; a clone alone does not)"
    );
    None
}

/// Every `.rs` file under `dir`, recursively, appended to `out`.
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Parses a JSON file written by `--json`.
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).expect("valid JSON")
}

/// Validates `doc` against the committed run schema; panics listing errors.
pub fn assert_valid_run_json(doc: &serde_json::Value) {
    assert_valid_against("schema/run.schema.json", doc);
}

/// Validates `doc` (`dbsweep report --format json`) against the committed
/// report schema; panics listing errors.
pub fn assert_valid_report_json(doc: &serde_json::Value) {
    assert_valid_against("schema/report.schema.json", doc);
}

fn assert_valid_against(schema: &str, doc: &serde_json::Value) {
    let schema = read_json(&Path::new(env!("CARGO_MANIFEST_DIR")).join(schema));
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "JSON does not match schema:\n{}",
        errors.join("\n")
    );
}

/// A server started with `dbsweep server start` in a scratch directory,
/// stopped (with `dbsweep server stop`) when dropped.
pub struct Server {
    pub dir: Dir,
    pub url: String,
    pub kind: &'static str,
}

impl Server {
    /// Starts a `kind` (mariadb or postgres) server with extra arguments
    /// such as `--set name=value`.
    pub fn start(kind: &'static str, extra: &[&str]) -> Server {
        let dir = Dir::new();
        // The servers run as their own OS users: the path must be traversable.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let sdir = dir.join("server").display().to_string();
        let mut args = vec!["server", "start", kind, "--dir", &sdir];
        args.extend_from_slice(extra);
        let r = dbsweep(&args);
        r.ok();
        let url = r.stdout.trim().to_string();
        assert!(url.contains("://"), "no URL printed: {}", r.stdout);
        Server { dir, url, kind }
    }

    pub fn server_dir(&self) -> PathBuf {
        self.dir.join("server")
    }

    /// The server's main process id, from `dbsweep server status`.
    pub fn pid(&self) -> u32 {
        let sdir = self.server_dir().display().to_string();
        let r = dbsweep(&["server", "status", "--dir", &sdir]);
        r.ok();
        let line = r.stdout.lines().next().unwrap_or("");
        line.split("pid ")
            .nth(1)
            .and_then(|s| s.split(',').next())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or_else(|| panic!("no pid in status: {}", r.stdout))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let sdir = self.server_dir().display().to_string();
        let _ = Command::new(env!("CARGO_BIN_EXE_dbsweep"))
            .args(["server", "stop", "--dir", &sdir])
            .output();
    }
}

/// True if process `pid` exists and has not exited (zombies count as gone).
pub fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit(')')
                .next()
                .and_then(|s| s.split_whitespace().next());
            !matches!(state, Some("Z") | Some("X"))
        }
        Err(_) => false,
    }
}
