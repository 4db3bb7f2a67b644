//! PgBouncer in front of a managed PostgreSQL (`server start postgres
//! --pooler pgbouncer`, `pooler = "pgbouncer"` on a study's target), so a
//! pooled target against a direct one is a comparison like any other.
//!
//! It runs as the server's OS user from the server's directory
//! (`pgbouncer/`: its ini, the user list with the benchmark user's
//! password, readable by that user alone), reaches PostgreSQL over its unix
//! socket, listens on a free loopback port, and logs into `server.log`.
//! Its defaults are what managed services run: transaction pooling with
//! protocol-level prepared statements carried between server connections
//! (`max_prepared_statements`, PgBouncer 1.21 and later), PgBouncer's own
//! pool size, and room for a sweep's thousands of clients. With the
//! server's TLS, it serves the same certificate to clients.

use std::fs;
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::engine::{find_program, search_path, Ctx};
use super::process;
use super::tls::TlsFiles;
use super::ServerError;

/// PgBouncer's settings dbsweep writes unless the pooler's own `--set`
/// gives another value.
pub const DEFAULTS: [(&str, &str); 4] = [
    // What managed PostgreSQL services put in front of their servers.
    ("pool_mode", "transaction"),
    // dbsweep prepares its statements once per connection: they must reach
    // whichever server connection runs the next transaction.
    ("max_prepared_statements", "200"),
    // PgBouncer's own default, written so the record shows it.
    ("default_pool_size", "20"),
    // A sweep's 1,024 clients and more.
    ("max_client_conn", "10000"),
];

/// Settings dbsweep decides (where it listens, who may log in, the log).
const RESERVED: [&str; 9] = [
    "listen_addr",
    "listen_port",
    "unix_socket_dir",
    "auth_type",
    "auth_file",
    "stats_users",
    "logfile",
    "pidfile",
    "syslog",
];

/// A pooler to start in front of the server.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PoolerSpec {
    /// `[pgbouncer]` settings, name=value, after [`DEFAULTS`].
    pub settings: Vec<(String, String)>,
}

/// A running PgBouncer, kept in the server's state file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunningPooler {
    pub pid: u32,
    pub port: u16,
    /// Its `--version` line's first line, e.g. `PgBouncer 1.24.1`.
    pub version: String,
    pub binary: PathBuf,
    /// Its ini file: what its command line ends with.
    pub ini: PathBuf,
    /// The `[pgbouncer]` settings written, in order.
    pub settings: Vec<(String, String)>,
}

impl PoolerSpec {
    /// Checks the settings before anything starts: names and values an ini
    /// file can hold (the servers' own rules), each with a value, none of
    /// dbsweep's own.
    pub fn check(&self) -> Result<(), ServerError> {
        for (name, value) in &self.settings {
            if RESERVED.contains(&name.as_str()) {
                return Err(ServerError::BadInput(format!(
                    "pooler setting '{name}' is dbsweep's to choose (it listens on a free loopback port with the benchmark user): leave it out"
                )));
            }
            super::settings::check_name(name)?;
            super::settings::check_value(name, value)?;
            if value.is_empty() {
                return Err(ServerError::BadInput(format!(
                    "pooler setting '{name}' has no value: expected NAME=VALUE, e.g. default_pool_size=8"
                )));
            }
        }
        Ok(())
    }
}

/// The settings written: the defaults the spec does not override, then the
/// spec's.
fn settings(spec: &PoolerSpec) -> Vec<(String, String)> {
    DEFAULTS
        .iter()
        .filter(|(n, _)| !spec.settings.iter().any(|(s, _)| s == n))
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .chain(spec.settings.iter().cloned())
        .collect()
}

/// The program and its version, refusing a PgBouncer older than 1.21 while
/// prepared statements are to be carried over.
fn program(written: &[(String, String)]) -> Result<(PathBuf, String), ServerError> {
    let dirs = search_path(&["/usr/sbin", "/usr/local/sbin"]);
    let binary = find_program(&["pgbouncer"], &dirs).ok_or_else(|| {
        ServerError::BadInput(
            "pgbouncer not found on PATH or in /usr/sbin: install PgBouncer 1.21 or later (scripts/install-servers builds Debian's 1.24.1 where the package is older)".into(),
        )
    })?;
    let out = Command::new(&binary)
        .arg("--version")
        .output()
        .map_err(|e| ServerError::io(format!("running {} --version", binary.display()), e))?;
    let version = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    let numbers = super::version_numbers(&version);
    let carries = written
        .iter()
        .rev()
        .find(|(n, _)| n == "max_prepared_statements")
        .is_some_and(|(_, v)| v != "0");
    if carries && numbers.as_slice() < [1, 21].as_slice() {
        return Err(ServerError::BadInput(format!(
            "{} ({}) has no max_prepared_statements, which carries prepared statements between server connections: install PgBouncer 1.21 or later, or set max_prepared_statements=0 and run with --db-ps-mode=disable",
            if version.is_empty() { "pgbouncer" } else { &version },
            binary.display()
        )));
    }
    Ok((binary, version))
}

/// Where PostgreSQL's socket is and who logs in.
pub(super) struct Upstream<'a> {
    /// The directory holding PostgreSQL's `.s.PGSQL.PORT`.
    pub socket_dir: &'a Path,
    pub port: u16,
    pub user: &'a str,
    pub password: &'a str,
}

/// Writes the pooler's files, starts it and waits until it accepts
/// connections. On error nothing of it runs.
pub(super) fn start(
    ctx: &Ctx,
    spec: &PoolerSpec,
    upstream: &Upstream,
    tls: Option<&TlsFiles>,
    cpus: Option<&[usize]>,
    timeout: Duration,
) -> Result<RunningPooler, ServerError> {
    let written = settings(spec);
    let (binary, version) = program(&written)?;
    let dir = ctx.layout.dir.join("pgbouncer");
    super::state::own_dir(&dir, ctx.run_as.as_ref(), 0o700)?;
    let users = dir.join("userlist.txt");
    let quoted = |s: &str| s.replace('"', "\"\"");
    write_private(
        ctx,
        &users,
        &format!(
            "\"{}\" \"{}\"\n",
            quoted(upstream.user),
            quoted(upstream.password)
        ),
    )?;
    let port =
        process::free_port().map_err(|e| ServerError::io("finding a free port on 127.0.0.1", e))?;
    let ini = dir.join("pgbouncer.ini");
    write_private(ctx, &ini, &render(upstream, port, &users, tls, &written))?;
    let offset = ctx.log_len();
    ctx.note(&format!("starting {} on port {port}", binary.display()));
    let mut cmd = process::command(&binary, ctx.run_as.as_ref(), &dir);
    cmd.arg(&ini);
    ctx.log_to(&mut cmd)?;
    let mut child = process::spawn_server(cmd, cpus)
        .map_err(|e| ServerError::io(format!("starting {}", binary.display()), e))?;
    let begun = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(ctx.failed(
                format!("pgbouncer exited while starting ({status})"),
                offset,
            ));
        }
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        if begun.elapsed() > timeout {
            stop(child.id(), &ini);
            return Err(ctx.failed(
                format!("pgbouncer did not accept connections within {timeout:?} and was stopped"),
                offset,
            ));
        }
        std::thread::sleep(process::POLL);
    }
    Ok(RunningPooler {
        pid: child.id(),
        port,
        version,
        binary,
        ini,
        settings: written,
    })
}

/// The ini file.
fn render(
    up: &Upstream,
    port: u16,
    users: &Path,
    tls: Option<&TlsFiles>,
    settings: &[(String, String)],
) -> String {
    let mut s = format!(
        "; written by dbsweep at each start\n[databases]\n* = host={} port={}\n\n[pgbouncer]\n\
         listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n\
         auth_type = scram-sha-256\nauth_file = {}\nstats_users = {}\n",
        up.socket_dir.display(),
        up.port,
        users.display(),
        up.user
    );
    if let Some(t) = tls {
        // Clients may ask for TLS (libpq's prefer): the server's certificate.
        s.push_str(&format!(
            "client_tls_sslmode = allow\nclient_tls_cert_file = {}\nclient_tls_key_file = {}\nclient_tls_ca_file = {}\n",
            t.cert.display(),
            t.key.display(),
            t.ca.display()
        ));
    }
    for (n, v) in settings {
        s.push_str(&format!("{n} = {v}\n"));
    }
    s
}

/// Writes a file only the pooler's OS user reads (the password is in it).
fn write_private(ctx: &Ctx, path: &Path, text: &str) -> Result<(), ServerError> {
    let io = |e| ServerError::io(format!("writing {}", path.display()), e);
    fs::write(path, text).map_err(io)?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o600)).map_err(io)?;
    if let Some(u) = &ctx.run_as {
        std::os::unix::fs::chown(path, Some(u.uid), Some(u.gid)).map_err(io)?;
    }
    Ok(())
}

/// Stops a pooler: SIGTERM (PgBouncer's immediate shutdown: the benchmark
/// is over), then SIGKILL after a few seconds.
pub(super) fn stop(pid: u32, ini: &Path) {
    if !process::is_server_process(pid, ini) {
        process::is_gone(pid);
        return;
    }
    let _ = process::signal(pid, libc::SIGTERM);
    if !process::wait_gone(pid, Duration::from_secs(10)) {
        process::kill_group(pid);
        process::wait_group_gone(pid, Duration::from_secs(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(pairs: &[(&str, &str)]) -> PoolerSpec {
        PoolerSpec {
            settings: pairs
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn the_spec_overrides_the_defaults() {
        let s = settings(&spec(&[
            ("default_pool_size", "4"),
            ("pool_mode", "session"),
        ]));
        assert_eq!(
            s,
            [
                ("max_prepared_statements", "200"),
                ("max_client_conn", "10000"),
                ("default_pool_size", "4"),
                ("pool_mode", "session"),
            ]
            .map(|(n, v)| (n.to_string(), v.to_string()))
        );
        let e = spec(&[("listen_port", "6432")]).check().unwrap_err();
        assert!(e.is_bad_input() && e.to_string().contains("'listen_port' is dbsweep's"));
        assert!(spec(&[("default_pool_size", "8")]).check().is_ok());
    }

    #[test]
    fn the_ini_reaches_the_socket_with_the_benchmark_user() {
        let up = Upstream {
            socket_dir: Path::new("/d/run"),
            port: 5433,
            user: "sbtest",
            password: "x",
        };
        let ini = render(
            &up,
            6432,
            Path::new("/d/pgbouncer/userlist.txt"),
            None,
            &settings(&PoolerSpec::default()),
        );
        for line in [
            "* = host=/d/run port=5433",
            "listen_port = 6432",
            "auth_file = /d/pgbouncer/userlist.txt",
            "stats_users = sbtest",
            "pool_mode = transaction",
            "max_prepared_statements = 200",
        ] {
            assert!(ini.lines().any(|l| l == line), "{line} in\n{ini}");
        }
        assert!(!ini.contains("client_tls"), "{ini}");
        assert!(
            !ini.contains('x') || !ini.contains("\"x\""),
            "no password in the ini"
        );
    }
}
