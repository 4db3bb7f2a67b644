//! Managed servers: local MariaDB and PostgreSQL instances started from the
//! installed binaries in scratch directories, for benchmarks to run against.
//!
//! A server lives in one directory that holds its data, config, socket, log
//! and a state file, so that a later process can [`stop`] it or ask its
//! [`status`]. [`start`] initialises the directory
//! the first time (`mariadb-install-db` / `initdb`) and reuses it afterwards,
//! so a study can restart a server with other settings without reloading its
//! data. Each start:
//!
//! - renders the config: dbsweep's base settings for benchmarking
//!   ([`ServerKind::base_settings`]), then the user's config file, then the
//!   `--set` settings, later ones winning;
//! - starts the server on 127.0.0.1 on a free port (or the given one), in its
//!   own session, optionally pinned to CPUs, as the `mysql` / `postgres` OS
//!   user when dbsweep runs as root (both servers refuse root);
//! - waits until it accepts connections, watching the process so that a
//!   rejected setting is reported with the server's own message instead of
//!   a hang;
//! - creates the benchmark database and user (`sbtest`, see [`USER`]) and
//!   returns the URL for [`crate::driver::Target::parse`].
//!
//! Nothing here touches a system-wide instance: each server has its own
//! directory, socket and port, MariaDB reads only the `my.cnf` dbsweep wrote
//! (`--defaults-file`), and PostgreSQL only its own data directory's files.
//!
//! Servers started by this process are remembered, so that the CLI's Ctrl-C
//! handler can stop them all ([`stop_all_started`]); library users hold a
//! [`ServerGuard`], which stops its server when dropped.
//!
//! # Layout
//!
//! - `lifecycle.rs`: [`start`], [`stop`], [`status`], [`restart`].
//! - `build.rs`: which programs a spec names (system, `--binaries`, a
//!   cached `--version`), their `--version` line, [`describe`].
//! - `registry.rs`: the servers this process started and has not stopped.
//! - `guard.rs`: [`ServerGuard`] and [`stop_all_started`].
//! - `engine.rs`: what differs between servers (a trait), the programs;
//!   `engine_for` (here) picks the engine of a kind.
//! - `mariadb.rs`, `postgres.rs`: the two engines: install, config, readiness,
//!   benchmark user, recognising rejected settings in the log.
//! - `memory.rs`: a server's memory, estimated from its settings before it
//!   starts (an interleaved study's check).
//! - `settings.rs`: `--set` and CPU lists (pure); `state.rs`: the directory
//!   and its state file; `process.rs`: OS users, spawning, signals, /proc.
//! - `install/`: server builds of other versions from the package registry,
//!   in a per-user cache (`dbsweep server install KIND@VERSION`).
//!
//! # Files in a server directory
//!
//! ```text
//! DIR/
//!   dbsweep-server.json   state: kind, last port, and while running the
//!                         RunningServer (pid, port, URL, socket, settings)
//!   server.log            install-db/initdb, server and setup output, with a
//!                         "--- dbsweep: … ---" line before each step
//!   my.cnf                MariaDB: its only option file, rewritten at each start
//!   postgresql.conf       PostgreSQL: dbsweep's settings, rewritten at each
//!                         start, included at the end of data/postgresql.conf
//!   user.cnf, user.conf   a copy of the user's config file, when one is given
//!   data/                 the data directory (owned by the server's OS user)
//!   run/                  socket, pid and lock files (owned by the server's OS user)
//! ```

mod build;
mod engine;
mod error;
mod guard;
pub mod install;
mod lifecycle;
mod mariadb;
pub mod memory;
mod pgbouncer;
mod postgres;
mod process;
mod registry;
mod settings;
mod state;
mod tls;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use self::build::describe;
pub use self::engine::version_numbers;
pub use self::error::ServerError;
pub use self::guard::{stop_all_started, ServerGuard};
pub use self::lifecycle::{restart, start, status, stop};
pub use self::pgbouncer::{PoolerSpec, RunningPooler};
pub use self::process::affinity;
pub use self::settings::{
    format_cpu_list, merge_settings, parse_cpu_list, parse_setting, setting_key,
};
pub use self::state::STATE_FILE;

/// The benchmark user dbsweep creates (sysbench's default).
pub const USER: &str = "sbtest";
/// The benchmark database dbsweep creates (sysbench's default).
pub const DATABASE: &str = "sbtest";
/// The benchmark user's password unless the spec gives another.
pub const DEFAULT_PASSWORD: &str = "sbtest";
/// How long a start may take before the server is killed and the start
/// fails with its log: far beyond a healthy start (under a second) or crash
/// recovery of a benchmark-sized database.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a server may take to shut down before it is killed.
pub const STOP_TIMEOUT: Duration = Duration::from_secs(60);
/// How long install-db / initdb may take.
const INIT_TIMEOUT: Duration = Duration::from_secs(180);
/// How many lines of the server's log an error shows.
const TAIL_LINES: usize = 20;

/// A database server dbsweep can start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerKind {
    Mariadb,
    Postgres,
}

impl ServerKind {
    /// Every kind, for help texts and loops.
    pub const ALL: [ServerKind; 2] = [ServerKind::Mariadb, ServerKind::Postgres];

    /// The name used in commands, state files and messages.
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Mariadb => "mariadb",
            ServerKind::Postgres => "postgres",
        }
    }

    /// The settings dbsweep writes before the user's, chosen for benchmarks
    /// on a small machine (2 cores, 24 GB): durable commits as shipped, a
    /// buffer pool that holds sysbench tables, room for 1024+ clients, no
    /// binary log. Each is explained where it is defined.
    pub fn base_settings(self) -> &'static [(&'static str, &'static str)] {
        match self {
            ServerKind::Mariadb => mariadb::BASE_SETTINGS,
            ServerKind::Postgres => postgres::BASE_SETTINGS,
        }
    }

    /// The OS user the server runs as when dbsweep runs as root.
    pub fn os_user(self) -> &'static str {
        match self {
            ServerKind::Mariadb => "mysql",
            ServerKind::Postgres => "postgres",
        }
    }

    /// The signal that shuts the server down cleanly and quickly: MariaDB's
    /// normal shutdown (SIGTERM), PostgreSQL's fast shutdown (SIGINT: abort
    /// sessions, checkpoint, exit).
    fn stop_signal(self) -> i32 {
        match self {
            ServerKind::Mariadb => libc::SIGTERM,
            ServerKind::Postgres => libc::SIGINT,
        }
    }

    /// What a server process's command line ends with: tells our server from
    /// an unrelated process that reused its pid.
    fn process_marker(self, dir: &Path) -> PathBuf {
        match self {
            ServerKind::Mariadb => dir.join("my.cnf"),
            ServerKind::Postgres => dir.join("data"),
        }
    }
}

impl fmt::Display for ServerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ServerKind {
    type Err = ServerError;

    /// `mariadb` or `mysql`; `postgres`, `postgresql` or `pg`.
    fn from_str(s: &str) -> Result<ServerKind, ServerError> {
        match s.to_ascii_lowercase().as_str() {
            "mariadb" | "mysql" => Ok(ServerKind::Mariadb),
            "postgres" | "postgresql" | "pg" => Ok(ServerKind::Postgres),
            _ => Err(ServerError::BadInput(format!(
                "unknown server kind '{s}': use mariadb or postgres"
            ))),
        }
    }
}

/// What to start, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    pub kind: ServerKind,
    /// The server's directory: created if missing, initialised on the first
    /// start, reused afterwards.
    pub dir: PathBuf,
    /// The loopback port; None for the previous start's port if it is free,
    /// else a free one.
    pub port: Option<u16>,
    /// `name=value` settings (`--set`), written after the base settings and
    /// the config file so they win. A bare name (empty value) is a MariaDB
    /// flag such as `skip-grant-tables`.
    pub settings: Vec<(String, String)>,
    /// A config file of the user's (my.cnf or postgresql.conf syntax),
    /// copied into the directory and included between the base settings and
    /// `settings`.
    pub config_file: Option<PathBuf>,
    /// CPUs to pin the server to (every thread and process of it).
    pub cpus: Option<Vec<usize>>,
    /// A directory holding another installed version's programs, instead of
    /// the system's (`mariadbd` or `mysqld` and `mariadb-install-db` or
    /// `mysql_install_db`, or `postgres` and `initdb`).
    pub binaries: Option<PathBuf>,
    /// A version (`9.6`, `10.2`): the newest build of it in the cache of
    /// [`install`], instead of the system's. Not together with `binaries`.
    pub version: Option<String>,
    /// The benchmark user's password.
    pub password: String,
    /// How long to wait for the server to accept connections.
    pub start_timeout: Duration,
    /// Serve TLS with a throw-away CA's certificate (made in `dir/tls/`);
    /// the URL then verifies it.
    pub tls: bool,
    /// PgBouncer in front of PostgreSQL: clients connect to it.
    pub pooler: Option<PoolerSpec>,
}

impl ServerSpec {
    /// A spec with defaults: free port, base settings only, no pinning,
    /// system binaries, password [`DEFAULT_PASSWORD`].
    pub fn new(kind: ServerKind, dir: impl Into<PathBuf>) -> ServerSpec {
        ServerSpec {
            kind,
            dir: dir.into(),
            port: None,
            settings: Vec::new(),
            config_file: None,
            cpus: None,
            binaries: None,
            version: None,
            password: DEFAULT_PASSWORD.to_string(),
            start_timeout: DEFAULT_START_TIMEOUT,
            tls: false,
            pooler: None,
        }
    }

    /// Adds a `--set` setting.
    pub fn set(mut self, name: &str, value: &str) -> ServerSpec {
        self.settings.push((name.to_string(), value.to_string()));
        self
    }
}

/// A started server: what a benchmark needs to connect and what a result
/// records about it. Also the content of the state file while it runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunningServer {
    pub kind: ServerKind,
    /// The server's directory (absolute).
    pub dir: PathBuf,
    /// The server process (mariadbd, or PostgreSQL's postmaster).
    pub pid: u32,
    pub port: u16,
    /// Where to connect over TCP, with the benchmark user and password:
    /// `mysql://sbtest:PW@127.0.0.1:PORT/sbtest` or
    /// `postgres://sbtest:PW@127.0.0.1:PORT/sbtest`.
    pub url: String,
    /// The unix socket file (MariaDB's `mysqld.sock`, PostgreSQL's
    /// `.s.PGSQL.PORT`), for clients on this machine.
    pub socket: PathBuf,
    /// The server's `--version` line, e.g. `mariadbd  Ver 10.11.6-MariaDB…`
    /// or `postgres (PostgreSQL) 15.5 (Debian …)`.
    pub version: String,
    /// The program that runs.
    pub binary: PathBuf,
    /// The settings dbsweep wrote, in order: the base settings the user did
    /// not override, then the user's `--set` ones. The user's config file
    /// (if any) sits between them and is recorded as `config_file`.
    pub settings: Vec<(String, String)>,
    /// The copy of the user's config file that was included.
    pub config_file: Option<PathBuf>,
    /// The CPUs the server is pinned to (checked in /proc), or None.
    pub cpus: Option<Vec<usize>>,
    /// PgBouncer in front of it, when asked for: `url` is then the
    /// pooler's, `direct_url` the server's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pooler: Option<RunningPooler>,
}

impl RunningServer {
    /// The server's own URL over TCP, past any pooler in front of it.
    pub fn direct_url(&self) -> String {
        match &self.pooler {
            Some(p) => at_port(&self.url, p.port, self.port),
            None => self.url.clone(),
        }
    }

    /// The URL for connecting to the server through its unix socket
    /// (never through a pooler).
    pub fn socket_url(&self) -> String {
        let socket: String =
            url::form_urlencoded::byte_serialize(self.socket.as_os_str().as_encoded_bytes())
                .collect();
        // user:password@ is what url() has; only the host part changes.
        let (scheme, rest) = self.url.split_once("://").expect("our URL has a scheme");
        let userinfo = rest.split_once('@').map_or("", |(u, _)| u);
        format!(
            "{scheme}://{userinfo}@localhost:{}/{DATABASE}?socket={socket}",
            self.port
        )
    }

    /// The server's log file.
    pub fn log(&self) -> PathBuf {
        self.dir.join("server.log")
    }
}

/// The URL of the benchmark database over TCP.
fn url(kind: ServerKind, password: &str, port: u16) -> String {
    let scheme = match kind {
        ServerKind::Mariadb => "mysql",
        ServerKind::Postgres => "postgres",
    };
    let password: String = url::form_urlencoded::byte_serialize(password.as_bytes()).collect();
    format!("{scheme}://{USER}:{password}@127.0.0.1:{port}/{DATABASE}")
}

/// A URL of [`url`]'s form (query and all) with its port `from` made `to`:
/// the same server through its pooler, or past it.
fn at_port(url: &str, from: u16, to: u16) -> String {
    url.replacen(
        &format!("@127.0.0.1:{from}/"),
        &format!("@127.0.0.1:{to}/"),
        1,
    )
}

/// The engine for `kind`, with its programs found.
fn engine_for(
    kind: ServerKind,
    binaries: Option<&Path>,
) -> Result<Box<dyn engine::Engine>, ServerError> {
    Ok(match kind {
        ServerKind::Mariadb => Box::new(mariadb::Mariadb::find(binaries)?),
        ServerKind::Postgres => Box::new(postgres::Postgres::find(binaries)?),
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn kinds_parse_and_print() {
        assert_eq!("MySQL".parse::<ServerKind>().unwrap(), ServerKind::Mariadb);
        assert_eq!(
            "postgresql".parse::<ServerKind>().unwrap(),
            ServerKind::Postgres
        );
        let e = "oracle".parse::<ServerKind>().unwrap_err();
        assert!(e.is_bad_input() && e.to_string().contains("use mariadb or postgres"));
        assert_eq!(ServerKind::Postgres.to_string(), "postgres");
        assert_eq!(
            serde_json::to_string(&ServerKind::Mariadb).unwrap(),
            "\"mariadb\""
        );
    }

    #[test]
    fn urls_parse_as_targets() {
        let u = url(ServerKind::Mariadb, "p@ss word", 3307);
        assert_eq!(u, "mysql://sbtest:p%40ss+word@127.0.0.1:3307/sbtest");
        let t = crate::driver::Target::parse(&u).unwrap();
        let crate::driver::TargetKind::Mysql(a) = t.kind else {
            panic!()
        };
        assert_eq!(
            (
                a.host.as_str(),
                a.port,
                a.user.as_str(),
                a.password.as_deref(),
                a.database.as_str()
            ),
            ("127.0.0.1", 3307, "sbtest", Some("p@ss word"), "sbtest")
        );
        let server = RunningServer {
            kind: ServerKind::Postgres,
            dir: "/d".into(),
            pid: 1,
            port: 5433,
            url: url(ServerKind::Postgres, "sbtest", 5433),
            socket: "/d/run/.s.PGSQL.5433".into(),
            version: String::new(),
            binary: "/usr/lib/postgresql/15/bin/postgres".into(),
            settings: Vec::new(),
            config_file: None,
            cpus: None,
            pooler: None,
        };
        let t = crate::driver::Target::parse(&server.socket_url()).unwrap();
        let crate::driver::TargetKind::Postgres(a) = t.kind else {
            panic!()
        };
        assert_eq!(a.socket.as_deref(), Some(Path::new("/d/run/.s.PGSQL.5433")));
        assert_eq!((a.port, a.password.as_deref()), (5433, Some("sbtest")));
    }
}
