//! PostgreSQL: finding its programs (Debian keeps them in
//! /usr/lib/postgresql/VERSION/bin; a build from the registry in its cache
//! directory's bin/), `initdb` with the options of its major version, the
//! config of each start, client authentication (rewritten at every start),
//! readiness (`postmaster.pid` says "ready", as `pg_ctl -w` checks; before
//! PostgreSQL 10, which does not say, a login through the socket), and the
//! benchmark user, created over the wire by dbsweep's own driver as the
//! superuser (peer authentication, dbsweep's OS user mapped to it), so no
//! `psql` is needed.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::engine::{build_lib_dir, find_program, not_found, search_path, with_libs, Ctx, Engine};
use super::process::OsUser;
use super::state::Layout;
use super::{process, ServerError, ServerKind};
use super::{DATABASE, INIT_TIMEOUT, USER};
use crate::driver::{self, PsMode, ServerAddr};

/// dbsweep's base settings for PostgreSQL, before the user's.
pub(super) const BASE_SETTINGS: &[(&str, &str)] = &[
    // Sweeps go to 1024 clients; a few more for monitoring and the superuser.
    ("max_connections", "1100"),
    // 1 GB of 24: caches sysbench's default tables; the OS cache does the rest.
    ("shared_buffers", "1GB"),
    // Checkpoints by time rather than every 1 GB of WAL under write load.
    ("max_wal_size", "4GB"),
    // Durable commits, as shipped: stated so that every result records it.
    ("synchronous_commit", "on"),
    // The benchmark user's password is stored as SCRAM (the default, stated).
    ("password_encryption", "scram-sha-256"),
    // The server's messages go to stderr, which is server.log.
    ("logging_collector", "off"),
];

/// The installed PostgreSQL programs.
pub(super) struct Postgres {
    server: PathBuf,
    initdb: PathBuf,
    /// The build's own libraries, when it is not the system's.
    libs: Option<PathBuf>,
    /// The server's version numbers ([9, 6, 24], [15, 5]).
    version: Vec<u32>,
}

impl Postgres {
    /// Finds `postgres` and `initdb`: in `binaries` if given, else in the
    /// highest version's /usr/lib/postgresql/*/bin, else on PATH and in
    /// /usr/sbin, /usr/bin.
    pub fn find(binaries: Option<&Path>) -> Result<Postgres, ServerError> {
        let dirs = match binaries {
            Some(b) => vec![b.to_path_buf()],
            None => {
                let mut dirs = debian_bin_dirs(Path::new("/usr/lib/postgresql"));
                dirs.extend(search_path(&["/usr/sbin", "/usr/bin"]));
                dirs
            }
        };
        // Both from the same directory, so versions cannot mix.
        let complete = dirs.iter().find(|d| {
            ["postgres", "initdb"]
                .iter()
                .all(|n| find_program(&[n], &[d.to_path_buf()]).is_some())
        });
        let Some(dir) = complete else {
            return Err(not_found(
                ServerKind::Postgres,
                &["postgres and initdb"],
                &dirs,
                binaries,
            ));
        };
        Ok(Postgres {
            server: dir.join("postgres"),
            initdb: dir.join("initdb"),
            libs: build_lib_dir(binaries),
            version: Vec::new(),
        })
    }

    /// PostgreSQL 10 brought SCRAM passwords and the postmaster's status
    /// line in `postmaster.pid`.
    fn before_10(&self) -> bool {
        self.version.first().is_some_and(|&v| v < 10)
    }

    /// The password method of client authentication: SCRAM from 10 on,
    /// MD5 before.
    fn password_method(&self) -> &'static str {
        if self.before_10() {
            "md5"
        } else {
            "scram-sha-256"
        }
    }

    /// The superuser's connection through the socket.
    fn superuser(&self, ctx: &Ctx, port: u16) -> ServerAddr {
        ServerAddr {
            host: "localhost".into(),
            port,
            user: ctx.server_user().name.clone(),
            password: None,
            database: "postgres".into(),
            socket: Some(ctx.layout.run.clone()),
            ps_mode: PsMode::Disable,
            tls: Default::default(),
        }
    }
}

/// Debian's per-version program directories under `root`, highest version
/// first (`16` before `15` before `9.6`).
fn debian_bin_dirs(root: &Path) -> Vec<PathBuf> {
    let mut versions: Vec<(Vec<u32>, PathBuf)> = fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let version: Option<Vec<u32>> = name.split('.').map(|p| p.parse().ok()).collect();
            Some((version?, e.path().join("bin")))
        })
        .collect();
    versions.sort_by(|a, b| b.0.cmp(&a.0));
    versions.into_iter().map(|(_, dir)| dir).collect()
}

impl Engine for Postgres {
    fn kind(&self) -> ServerKind {
        ServerKind::Postgres
    }

    fn binary(&self) -> &Path {
        &self.server
    }

    fn init(&self, ctx: &Ctx) -> Result<(), ServerError> {
        let l = &ctx.layout;
        let owner = ctx.run_as.as_ref();
        super::state::own_dir(&l.data, owner, 0o700)?;
        let superuser = &ctx.server_user().name;
        let mut cmd = process::command(&self.initdb, owner, &l.dir);
        with_libs(&mut cmd, self.libs.as_deref());
        // The C locale: byte-order collation, the same on every machine.
        // (pg_hba.conf is rewritten at every start; these only have to be
        // methods this version knows.)
        cmd.arg("-D")
            .arg(&l.data)
            .arg(format!("--username={superuser}"))
            .arg("--auth-local=peer")
            .arg(format!("--auth-host={}", self.password_method()))
            .arg("--encoding=UTF8")
            .arg("--locale=C");
        ctx.run_helper(
            cmd,
            None,
            &format!(
                "initialising {} with {}",
                l.data.display(),
                self.initdb.display()
            ),
            INIT_TIMEOUT,
        )?;
        // initdb's postgresql.conf keeps its choices (locale messages, time
        // zone); ours, included last, wins over it.
        let conf = l.data.join("postgresql.conf");
        let context = || format!("writing {}", conf.display());
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(&conf)
            .map_err(|e| ServerError::io(context(), e))?;
        f.write_all(
            b"\n# Added by dbsweep: its settings, rewritten at every start.\ninclude '../postgresql.conf'\n",
        )
        .map_err(|e| ServerError::io(context(), e))
    }

    fn config_path(&self, layout: &Layout) -> PathBuf {
        layout.dir.join("postgresql.conf")
    }

    fn user_config_name(&self) -> &'static str {
        "user.conf"
    }

    fn render_config(
        &self,
        layout: &Layout,
        port: u16,
        base: &[(String, String)],
        include: Option<&Path>,
        user: &[(String, String)],
    ) -> String {
        render_postgresql_conf(layout, port, base, include, user)
    }

    fn command(&self, ctx: &Ctx) -> Command {
        let mut cmd = process::command(&self.server, ctx.run_as.as_ref(), &ctx.layout.dir);
        with_libs(&mut cmd, self.libs.as_deref());
        cmd.arg("-D").arg(&ctx.layout.data);
        cmd
    }

    fn lib_dir(&self) -> Option<&Path> {
        self.libs.as_deref()
    }

    fn set_version(&mut self, version: &[u32]) {
        self.version = version.to_vec();
    }

    fn base_settings(&self) -> Vec<(&'static str, &'static str)> {
        BASE_SETTINGS
            .iter()
            .map(|&(name, value)| match name {
                // Before 10 the setting is a boolean: on is MD5.
                "password_encryption" if self.before_10() => (name, "on"),
                _ => (name, value),
            })
            .collect()
    }

    fn before_start(&self, ctx: &Ctx) -> Result<(), ServerError> {
        // Written at every start, so that a data directory made by an
        // earlier dbsweep gets the current rules too.
        let l = &ctx.layout;
        let owner = ctx.run_as.as_ref();
        let superuser = &ctx.server_user().name;
        write_owned(
            &l.data.join("pg_hba.conf"),
            &render_hba(superuser, self.password_method()),
            owner,
        )?;
        write_owned(
            &l.data.join("pg_ident.conf"),
            &render_ident(&ctx.invoker.name, superuser),
            owner,
        )
    }

    fn socket(&self, layout: &Layout, port: u16) -> PathBuf {
        layout.run.join(format!(".s.PGSQL.{port}"))
    }

    fn is_ready(&self, ctx: &Ctx, port: u16, pid: u32) -> bool {
        // postmaster.pid: pid, data dir, start time, port, socket dir, listen
        // address, shared memory key, then (from PostgreSQL 10 on) the
        // status the postmaster updates.
        let Ok(text) = fs::read_to_string(ctx.layout.data.join("postmaster.pid")) else {
            return false;
        };
        let lines: Vec<&str> = text.lines().collect();
        if lines.first().is_none_or(|l| l.trim() != pid.to_string()) {
            return false;
        }
        if !self.before_10() {
            return lines.get(7).is_some_and(|l| l.trim() == "ready");
        }
        // No status line: ready once the superuser can log in.
        self.socket(&ctx.layout, port).exists()
            && driver::postgres::PgConnection::connect(&self.superuser(ctx, port)).is_ok()
    }

    fn create_benchmark_user(
        &self,
        ctx: &Ctx,
        port: u16,
        password: &str,
    ) -> Result<(), ServerError> {
        let failed = |e: driver::DbError| ServerError::Failed {
            what: format!("creating database {DATABASE} and user {USER} failed: {e}"),
            log: ctx.layout.log.clone(),
            tail: String::new(),
        };
        ctx.note(&format!("creating database {DATABASE} and user {USER}"));
        let mut conn =
            driver::postgres::PgConnection::connect(&self.superuser(ctx, port)).map_err(failed)?;
        for sql in setup_sql(password) {
            let exists = match &sql.unless {
                Some(q) => !conn.query_text(q).map_err(failed)?.is_empty(),
                None => false,
            };
            if !exists {
                conn.execute_sql(&sql.statement).map_err(failed)?;
            }
        }
        Ok(())
    }

    fn rejected_settings(&self, log: &str) -> Option<String> {
        rejected_settings(log)
    }

    fn port_taken(&self, log: &str) -> bool {
        log.contains("could not bind") && log.contains("Address already in use")
    }
}

/// Writes a file in the data directory, owned by the server's OS user (the
/// server refuses or cannot read others' files there).
fn write_owned(path: &Path, text: &str, owner: Option<&OsUser>) -> Result<(), ServerError> {
    let context = || format!("writing {}", path.display());
    fs::write(path, text).map_err(|e| ServerError::io(context(), e))?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o600))
        .map_err(|e| ServerError::io(context(), e))?;
    if let Some(u) = owner {
        std::os::unix::fs::chown(path, Some(u.uid), Some(u.gid))
            .map_err(|e| ServerError::io(context(), e))?;
    }
    Ok(())
}

/// Client authentication: the superuser through the socket as dbsweep's OS
/// user (peer, mapped in pg_ident.conf: how dbsweep creates the benchmark
/// user); everyone else, over the socket or TCP, with a password (SCRAM,
/// or MD5 before PostgreSQL 10).
fn render_hba(superuser: &str, method: &str) -> String {
    format!(
        "# Written by dbsweep at every start.\n\
         # TYPE  DATABASE  USER  ADDRESS  METHOD\n\
         local   all       {superuser}        peer map=dbsweep\n\
         local   all       all                {method}\n\
         host    all       all   127.0.0.1/32 {method}\n\
         host    all       all   ::1/128      {method}\n"
    )
}

/// The peer map: dbsweep's OS user (root, when it starts the server as
/// `postgres`) and the server's own may log in as the superuser.
fn render_ident(invoker: &str, superuser: &str) -> String {
    let mut out = format!(
        "# Written by dbsweep at every start.\n# MAPNAME  SYSTEM-USERNAME  PG-USERNAME\ndbsweep    {superuser}    {superuser}\n"
    );
    if invoker != superuser {
        out.push_str(&format!("dbsweep    {invoker}    {superuser}\n"));
    }
    out
}

/// dbsweep's `postgresql.conf` for one start, included at the end of the
/// data directory's: where the server listens, the base settings, the
/// user's file, the user's settings (later lines win; `ALTER SYSTEM`'s
/// postgresql.auto.conf still wins over all of them).
pub(super) fn render_postgresql_conf(
    layout: &Layout,
    port: u16,
    base: &[(String, String)],
    include: Option<&Path>,
    user: &[(String, String)],
) -> String {
    let mut out = String::from(
        "# Written by dbsweep at every start of this server; edits are overwritten.\n\
         # Included at the end of data/postgresql.conf, so these settings win over it.\n",
    );
    out.push_str(&setting_line("listen_addresses", "127.0.0.1"));
    out.push_str(&setting_line("port", &port.to_string()));
    out.push_str(&setting_line(
        "unix_socket_directories",
        &layout.run.display().to_string(),
    ));
    out.push_str("\n# dbsweep's base settings for benchmarking\n");
    for (name, value) in base {
        out.push_str(&setting_line(name, value));
    }
    if let Some(file) = include {
        out.push_str("\n# The user's config file\n");
        out.push_str(&format!("include {}\n", quote(&file.display().to_string())));
    }
    if !user.is_empty() {
        out.push_str("\n# Settings given with --set\n");
        for (name, value) in user {
            out.push_str(&setting_line(name, value));
        }
    }
    out
}

/// `name = 'value'`: PostgreSQL accepts a quoted value for every type.
fn setting_line(name: &str, value: &str) -> String {
    format!("{name} = {}\n", quote(value))
}

/// A single-quoted config-file string (`'` doubled, `\` escaped).
fn quote(value: &str) -> String {
    format!("'{}'", value.replace('\\', "\\\\").replace('\'', "''"))
}

/// One statement of the setup, skipped when its `unless` query returns a
/// row.
struct SetupStatement {
    unless: Option<String>,
    statement: String,
}

/// Creates the benchmark user and database, or brings them up to date on a
/// reused directory (the password may have changed). The user is a
/// superuser of this scratch, loopback-only server, so that workloads can
/// create schemas and metrics can read every statistics view. (CREATE
/// DATABASE cannot run in a transaction or a DO block: hence the checks.)
fn setup_sql(password: &str) -> Vec<SetupStatement> {
    let pw = password.replace('\'', "''");
    vec![
        SetupStatement {
            unless: Some(format!("SELECT 1 FROM pg_roles WHERE rolname = '{USER}'")),
            statement: format!("CREATE ROLE {USER}"),
        },
        SetupStatement {
            unless: None,
            statement: format!("ALTER ROLE {USER} WITH LOGIN SUPERUSER PASSWORD '{pw}'"),
        },
        SetupStatement {
            unless: Some(format!(
                "SELECT 1 FROM pg_database WHERE datname = '{DATABASE}'"
            )),
            statement: format!("CREATE DATABASE {DATABASE} OWNER {USER}"),
        },
    ]
}

/// The phrases PostgreSQL uses when its config holds a bad setting.
const REJECTIONS: &[&str] = &[
    "unrecognized configuration parameter",
    "invalid value for parameter",
    "outside the valid range for parameter",
    "requires a Boolean value",
    "requires a numeric value",
    "syntax error in file",
    "could not open configuration file",
];

/// The server's messages about rejected settings (with their HINT lines),
/// without timestamps: `unrecognized configuration parameter "x" in file
/// "/d/postgresql.conf" line 12`.
fn rejected_settings(log: &str) -> Option<String> {
    let mut messages: Vec<String> = Vec::new();
    let mut after_match = false;
    for line in log.lines() {
        let (level, text) = split_level(line);
        if REJECTIONS.iter().any(|r| text.contains(r)) {
            messages.push(text.to_string());
            after_match = true;
        } else if after_match && matches!(level, "HINT" | "DETAIL") {
            if let Some(last) = messages.last_mut() {
                last.push_str(&format!(" ({text})"));
            }
        } else {
            after_match = false;
        }
    }
    (!messages.is_empty()).then(|| messages.join("; "))
}

/// `2024-05-01 10:00:00.123 UTC [42] LOG:  message` → (`LOG`, `message`).
fn split_level(line: &str) -> (&str, &str) {
    for level in [
        "LOG", "FATAL", "ERROR", "WARNING", "HINT", "DETAIL", "PANIC",
    ] {
        let marker = format!("{level}:  ");
        if let Some(i) = line.find(&marker) {
            return (level, line[i + marker.len()..].trim());
        }
    }
    ("", line.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn renders_postgresql_conf_in_precedence_order() {
        let layout = Layout::new("/srv/p".into());
        let text = render_postgresql_conf(
            &layout,
            5433,
            &set(&[("shared_buffers", "1GB")]),
            Some(Path::new("/srv/p/user.conf")),
            &set(&[("work_mem", "7MB"), ("search_path", r"it's \here")]),
        );
        let expected = "\
# Written by dbsweep at every start of this server; edits are overwritten.
# Included at the end of data/postgresql.conf, so these settings win over it.
listen_addresses = '127.0.0.1'
port = '5433'
unix_socket_directories = '/srv/p/run'

# dbsweep's base settings for benchmarking
shared_buffers = '1GB'

# The user's config file
include '/srv/p/user.conf'

# Settings given with --set
work_mem = '7MB'
search_path = 'it''s \\\\here'
";
        assert_eq!(text, expected);
        let bare = render_postgresql_conf(&layout, 1, &[], None, &[]);
        assert!(!bare.contains("include") && !bare.contains("--set"));
    }

    #[test]
    fn hba_lets_only_the_superuser_in_by_peer() {
        let hba = render_hba("postgres", "scram-sha-256");
        assert!(hba.contains("local   all       postgres        peer map=dbsweep\n"));
        assert!(!hba.contains("trust"));
        assert_eq!(hba.matches("scram-sha-256").count(), 3);
        assert_eq!(render_hba("postgres", "md5").matches("md5").count(), 3);
        let ident = render_ident("root", "postgres");
        assert!(ident.contains("dbsweep    root    postgres\n"), "{ident}");
        assert!(!render_ident("ann", "ann").contains("ann    ann\ndbsweep"));
    }

    #[test]
    fn setup_sql_escapes_the_password() {
        let sql = setup_sql("it's");
        assert!(sql[1].statement.contains("PASSWORD 'it''s'"));
        assert_eq!(sql[2].statement, "CREATE DATABASE sbtest OWNER sbtest");
    }

    #[test]
    fn extracts_the_servers_own_message() {
        let log = r#"--- dbsweep: starting /usr/lib/postgresql/15/bin/postgres on port 5433 ---
2026-11-21 19:59:45.166 GMT [13832] LOG:  unrecognized configuration parameter "no_such_setting" in file "/tmp/pt/postgresql.conf" line 6
2026-11-21 19:59:45.166 GMT [13832] FATAL:  configuration file "/tmp/pt/postgresql.conf" contains errors
"#;
        assert_eq!(
            rejected_settings(log).unwrap(),
            r#"unrecognized configuration parameter "no_such_setting" in file "/tmp/pt/postgresql.conf" line 6"#
        );
        let log = r#"2026-11-21 19:59:45.240 UTC [13841] LOG:  invalid value for parameter "shared_buffers": "100TB"
2026-11-21 19:59:45.240 UTC [13841] HINT:  Value exceeds integer range.
2026-11-21 19:59:45.240 UTC [13841] FATAL:  configuration file "/tmp/pt/postgresql.conf" contains errors
"#;
        assert_eq!(
            rejected_settings(log).unwrap(),
            r#"invalid value for parameter "shared_buffers": "100TB" (Value exceeds integer range.)"#
        );
        assert_eq!(
            rejected_settings("2026-11-21 UTC [1] LOG:  could not bind IPv4 address \"127.0.0.1\": Address already in use"),
            None
        );
    }

    #[test]
    fn orders_debian_versions_numerically() {
        let t = tempfile::tempdir().unwrap();
        for v in ["9.6", "15", "16", "notaversion"] {
            fs::create_dir_all(t.path().join(v).join("bin")).unwrap();
        }
        let dirs = debian_bin_dirs(t.path());
        let names: Vec<String> = dirs
            .iter()
            .map(|d| {
                d.parent()
                    .unwrap()
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(names, ["16", "15", "9.6"]);
        assert!(debian_bin_dirs(Path::new("/nonexistent")).is_empty());
    }
}
