//! MariaDB: finding its programs (the system's, a `--binaries` directory's
//! or a registry build's, whose install script sits in `scripts/` and its
//! libraries in `libs/`), `mariadb-install-db` / `mysql_install_db` with the
//! options its version knows, the `my.cnf` of each start, readiness (the
//! server's greeting on its socket), and the benchmark user, created over
//! the wire by dbsweep's own driver as root through the socket, so no
//! `mariadb` client is needed.

use std::io::Read;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::engine::{build_lib_dir, find_program, not_found, search_path, with_libs, Ctx, Engine};
use super::state::Layout;
use super::{process, ServerError, ServerKind};
use super::{DATABASE, INIT_TIMEOUT, USER};
use crate::driver::{self, PsMode, ServerAddr};

/// dbsweep's base settings for MariaDB, before the user's.
pub(super) const BASE_SETTINGS: &[(&str, &str)] = &[
    // Holds sysbench's default tables (10 × 100k rows ≈ 250 MB) with room to
    // spare, on a 24 GB machine.
    ("innodb_buffer_pool_size", "1G"),
    // A redo log that does not force checkpoints every few seconds under
    // write-heavy workloads (the default is 96M).
    ("innodb_log_file_size", "512M"),
    // Durable commits, as shipped: stated so that every result records it.
    ("innodb_flush_log_at_trx_commit", "1"),
    // Every start begins with a cold buffer pool, whatever ran before.
    ("innodb_buffer_pool_dump_at_shutdown", "OFF"),
    ("innodb_buffer_pool_load_at_startup", "OFF"),
    // Sweeps go to 1024 clients and beyond.
    ("max_connections", "2000"),
    // Each sysbench client prepares ~10–20 statements; the default cap
    // (16382) is hit at about a thousand clients.
    ("max_prepared_stmt_count", "1048576"),
    // No binary log: a benchmark server has no replicas.
    ("skip-log-bin", ""),
    // No reverse DNS lookup per connection; 127.0.0.1 matches 'sbtest'@'%'.
    ("skip-name-resolve", ""),
    // Allows LOAD DATA LOCAL for bulk loading.
    ("local_infile", "1"),
];

/// The installed MariaDB programs.
pub(super) struct Mariadb {
    server: PathBuf,
    install_db: PathBuf,
    /// The installation's root, for a `binaries` directory that is not the
    /// system's (install-db and the server find their share files there).
    basedir: Option<PathBuf>,
    /// The build's own libraries (`libs/`), when it is not the system's.
    libs: Option<PathBuf>,
    /// The server's version numbers ([10, 2, 11]).
    version: Vec<u32>,
}

impl Mariadb {
    /// Finds `mariadbd` (or `mysqld`) and `mariadb-install-db` (or
    /// `mysql_install_db`): in `binaries` (and its sibling sbin/, bin/,
    /// scripts/) if given, else on PATH and in /usr/sbin, /usr/bin.
    pub fn find(binaries: Option<&Path>) -> Result<Mariadb, ServerError> {
        let dirs = match binaries {
            Some(b) => vec![
                b.to_path_buf(),
                b.join("../sbin"),
                b.join("../bin"),
                b.join("../scripts"),
            ],
            None => search_path(&["/usr/sbin", "/usr/bin", "/usr/local/mysql/bin"]),
        };
        let find = |names: &[&str]| {
            find_program(names, &dirs)
                .ok_or_else(|| not_found(ServerKind::Mariadb, names, &dirs, binaries))
        };
        Ok(Mariadb {
            server: find(&["mariadbd", "mysqld"])?,
            install_db: find(&["mariadb-install-db", "mysql_install_db"])?,
            basedir: binaries.and_then(|b| b.parent()).map(Path::to_path_buf),
            libs: build_lib_dir(binaries),
            version: Vec::new(),
        })
    }

    /// MariaDB 10.4 made the unix_socket plugin part of the server; before
    /// it, root logs in without a password (through the socket only: see
    /// [`setup_sql`]).
    fn socket_auth(&self) -> bool {
        self.version.as_slice() >= [10, 4].as_slice()
    }

    /// Whether the install script knows an option (older ones refuse
    /// what they do not know).
    fn install_db_knows(&self, option: &str) -> bool {
        std::fs::read(&self.install_db)
            .is_ok_and(|text| text.windows(option.len()).any(|w| w == option.as_bytes()))
    }

    /// Root's connection through the socket: as dbsweep's OS user by
    /// socket authentication, or as root without a password before 10.4.
    fn root(&self, ctx: &Ctx, port: u16) -> ServerAddr {
        ServerAddr {
            host: "localhost".into(),
            port,
            user: if self.socket_auth() {
                ctx.invoker.name.clone()
            } else {
                "root".into()
            },
            password: None,
            database: String::new(),
            socket: Some(self.socket(&ctx.layout, port)),
            ps_mode: PsMode::Disable,
            tls: Default::default(),
        }
    }
}

impl Engine for Mariadb {
    fn kind(&self) -> ServerKind {
        ServerKind::Mariadb
    }

    fn binary(&self) -> &Path {
        &self.server
    }

    fn init(&self, ctx: &Ctx) -> Result<(), ServerError> {
        let l = &ctx.layout;
        super::state::own_dir(&l.data, ctx.run_as.as_ref(), 0o750)?;
        let mut cmd = process::command(&self.install_db, ctx.run_as.as_ref(), &l.dir);
        with_libs(&mut cmd, self.libs.as_deref());
        // --no-defaults: the system's my.cnf must not shape our data
        // directory. Root logs in through the socket as dbsweep's OS user,
        // which is how the benchmark user is created at every start.
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", l.data.display()));
        if self.socket_auth() {
            cmd.arg("--auth-root-authentication-method=socket")
                .arg(format!("--auth-root-socket-user={}", ctx.invoker.name));
        }
        // --force: skip the script's DNS check of the host name (through
        // resolveip, which some builds lack); the server resolves no names.
        for option in ["--skip-test-db", "--skip-name-resolve", "--force"] {
            if self.install_db_knows(option) {
                cmd.arg(option);
            }
        }
        if let Some(b) = &self.basedir {
            cmd.arg(format!("--basedir={}", b.display()));
        }
        ctx.run_helper(
            cmd,
            None,
            &format!(
                "initialising {} with {}",
                l.data.display(),
                self.install_db.display()
            ),
            INIT_TIMEOUT,
        )
    }

    fn config_path(&self, layout: &Layout) -> PathBuf {
        layout.dir.join("my.cnf")
    }

    fn user_config_name(&self) -> &'static str {
        "user.cnf"
    }

    fn render_config(
        &self,
        layout: &Layout,
        port: u16,
        base: &[(String, String)],
        include: Option<&Path>,
        user: &[(String, String)],
    ) -> String {
        render_my_cnf(layout, port, self.basedir.as_deref(), base, include, user)
    }

    fn lib_dir(&self) -> Option<&Path> {
        self.libs.as_deref()
    }

    fn set_version(&mut self, version: &[u32]) {
        self.version = version.to_vec();
    }

    fn base_settings(&self) -> Vec<(&'static str, &'static str)> {
        BASE_SETTINGS.to_vec()
    }

    fn command(&self, ctx: &Ctx) -> Command {
        let mut cmd = process::command(&self.server, ctx.run_as.as_ref(), &ctx.layout.dir);
        with_libs(&mut cmd, self.libs.as_deref());
        // Must be the first argument; it makes this file the only one read.
        cmd.arg(format!(
            "--defaults-file={}",
            self.config_path(&ctx.layout).display()
        ));
        cmd
    }

    fn socket(&self, layout: &Layout, _port: u16) -> PathBuf {
        layout.run.join("mysqld.sock")
    }

    fn is_ready(&self, ctx: &Ctx, port: u16, _pid: u32) -> bool {
        // The socket is ours alone (a TCP port could be answered by another
        // server); the greeting packet (protocol version 10) comes once the
        // server accepts connections.
        let Ok(mut s) = UnixStream::connect(self.socket(&ctx.layout, port)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
        let mut header = [0u8; 5];
        s.read_exact(&mut header).is_ok() && header[4] == 10
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
            driver::mysql::MyConnection::connect(&self.root(ctx, port)).map_err(failed)?;
        for sql in setup_sql(password, &self.version) {
            conn.execute_sql(&sql).map_err(failed)?;
        }
        Ok(())
    }

    fn rejected_settings(&self, log: &str) -> Option<String> {
        rejected_settings(log)
    }

    fn port_taken(&self, log: &str) -> bool {
        log.contains("Address already in use") || log.contains("Do you already have another")
    }
}

/// The `my.cnf` of one start. Later lines win, so the order is: where the
/// server lives, the base settings, the user's file, the user's settings.
pub(super) fn render_my_cnf(
    layout: &Layout,
    port: u16,
    basedir: Option<&Path>,
    base: &[(String, String)],
    include: Option<&Path>,
    user: &[(String, String)],
) -> String {
    let mut out = String::new();
    out.push_str(
        "# Written by dbsweep at every start of this server; edits are overwritten.\n\
         # The server reads only this file (--defaults-file): not /etc/mysql/my.cnf.\n\
         [mysqld]\n",
    );
    out.push_str(&format!("datadir={}\n", layout.data.display()));
    out.push_str(&format!(
        "socket={}\n",
        layout.run.join("mysqld.sock").display()
    ));
    out.push_str(&format!(
        "pid-file={}\n",
        layout.run.join("mysqld.pid").display()
    ));
    out.push_str(&format!("port={port}\nbind-address=127.0.0.1\n"));
    if let Some(b) = basedir {
        out.push_str(&format!("basedir={}\n", b.display()));
    }
    out.push_str("\n# dbsweep's base settings for benchmarking\n");
    for (name, value) in base {
        out.push_str(&option_line(name, value));
    }
    if let Some(file) = include {
        out.push_str(&format!(
            "\n# The user's config file\n!include {}\n",
            file.display()
        ));
    }
    if !user.is_empty() {
        // The included file may have switched groups: return to ours.
        out.push_str("\n# Settings given with --set\n[mysqld]\n");
        for (name, value) in user {
            out.push_str(&option_line(name, value));
        }
    }
    out
}

/// One option line: a bare flag, `name=value`, or a quoted value (with `\`
/// and `"` escaped) when it holds spaces, `#` or quotes.
fn option_line(name: &str, value: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_.,:/+-=@%*".contains(c);
    if value.is_empty() {
        format!("{name}\n")
    } else if value.chars().all(plain) {
        format!("{name}={value}\n")
    } else {
        let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
        format!("{name}=\"{escaped}\"\n")
    }
}

/// Creates the benchmark database and user, or brings them up to date on a
/// reused directory (the password may have changed). The user may do
/// anything on this scratch, loopback-only server, so that workloads can
/// create schemas and metrics can read every counter.
///
/// Before 10.4 (no `ALTER USER … USING PASSWORD()`), GRANT sets the
/// password, and the anonymous accounts install-db made are dropped: a
/// socket login as `sbtest@localhost` would match them first. Root keeps
/// no password there, reachable through the socket only (`root@127.0.0.1`
/// and its kin are dropped too).
fn setup_sql(password: &str, version: &[u32]) -> Vec<String> {
    let pw = password.replace('\\', "\\\\").replace('\'', "\\'");
    let mut out = vec![format!("CREATE DATABASE IF NOT EXISTS `{DATABASE}`")];
    if version >= [10, 4].as_slice() {
        out.extend([
            format!("CREATE USER IF NOT EXISTS '{USER}'@'%'"),
            format!(
                "ALTER USER '{USER}'@'%' IDENTIFIED VIA mysql_native_password USING PASSWORD('{pw}')"
            ),
            format!("GRANT ALL PRIVILEGES ON *.* TO '{USER}'@'%'"),
        ]);
    } else {
        out.extend([
            format!("GRANT ALL PRIVILEGES ON *.* TO '{USER}'@'%' IDENTIFIED BY '{pw}'"),
            "DELETE FROM mysql.user WHERE User = '' OR (User = 'root' AND Host <> 'localhost')"
                .to_string(),
            "FLUSH PRIVILEGES".to_string(),
        ]);
    }
    out
}

/// The phrases of MariaDB's option parser when it refuses an option.
const REJECTIONS: &[&str] = &[
    "unknown variable",
    "unknown option",
    "Error while setting value",
    "Unknown suffix",
    "ambiguous option",
    "requires an argument",
    "doesn't allow an argument",
    "Incorrect argument",
];

/// The server's messages about rejected options, without timestamps:
/// `unknown variable 'no_such_setting=1'`.
fn rejected_settings(log: &str) -> Option<String> {
    let messages: Vec<String> = log
        .lines()
        .filter(|l| REJECTIONS.iter().any(|r| l.contains(r)))
        .map(strip_prefix)
        .collect();
    (!messages.is_empty()).then(|| messages.join("; "))
}

/// `2024-05-01 10:00:00 0 [ERROR] /usr/sbin/mariadbd: unknown variable 'x=1'`
/// → `unknown variable 'x=1'`.
fn strip_prefix(line: &str) -> String {
    let mut rest = line.split_once("] ").map_or(line, |(_, r)| r).trim();
    rest = rest.strip_prefix("Buffered error: ").unwrap_or(rest);
    if let Some((program, message)) = rest.split_once(": ") {
        if program.starts_with('/') && !program.contains(' ') {
            rest = message;
        }
    }
    rest.to_string()
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
    fn renders_my_cnf_in_precedence_order() {
        let layout = Layout::new("/srv/m".into());
        let text = render_my_cnf(
            &layout,
            3307,
            None,
            &set(&[("innodb_buffer_pool_size", "1G"), ("skip-log-bin", "")]),
            Some(Path::new("/srv/m/user.cnf")),
            &set(&[
                ("max_connections", "321"),
                ("init_connect", "SET @a='x # y'"),
            ]),
        );
        let expected = "\
# Written by dbsweep at every start of this server; edits are overwritten.
# The server reads only this file (--defaults-file): not /etc/mysql/my.cnf.
[mysqld]
datadir=/srv/m/data
socket=/srv/m/run/mysqld.sock
pid-file=/srv/m/run/mysqld.pid
port=3307
bind-address=127.0.0.1

# dbsweep's base settings for benchmarking
innodb_buffer_pool_size=1G
skip-log-bin

# The user's config file
!include /srv/m/user.cnf

# Settings given with --set
[mysqld]
max_connections=321
init_connect=\"SET @a='x # y'\"
";
        assert_eq!(text, expected);
        let bare = render_my_cnf(&layout, 1, Some(Path::new("/opt/mariadb")), &[], None, &[]);
        assert!(bare.contains("basedir=/opt/mariadb\n") && !bare.contains("--set"));
    }

    #[test]
    fn quotes_values_that_need_it() {
        assert_eq!(option_line("a", "b"), "a=b\n");
        assert_eq!(
            option_line("sql_mode", "STRICT_TRANS_TABLES,NO_ZERO_DATE"),
            "sql_mode=STRICT_TRANS_TABLES,NO_ZERO_DATE\n"
        );
        assert_eq!(option_line("x", r#"a "b" \c"#), "x=\"a \\\"b\\\" \\\\c\"\n");
    }

    #[test]
    fn escapes_the_password_in_sql() {
        let sql = setup_sql(r"it's\x", &[10, 11, 6]).join(";\n");
        assert!(sql.contains(r"USING PASSWORD('it\'s\\x')"), "{sql}");
        assert!(sql.contains("IDENTIFIED VIA mysql_native_password"));
        let old = setup_sql("pw", &[10, 2, 11]).join(";\n");
        assert!(old.contains("TO 'sbtest'@'%' IDENTIFIED BY 'pw'"), "{old}");
        assert!(old.contains("DELETE FROM mysql.user WHERE User = ''"));
    }

    #[test]
    fn extracts_the_servers_own_message() {
        let log = "\
--- dbsweep: starting /usr/sbin/mariadbd on port 3307 ---
2026-11-21 19:59:29 0 [Note] Starting MariaDB 10.11.19-MariaDB-0+deb12u1 as process 13520
2026-11-21 19:59:29 0 [ERROR] /usr/sbin/mariadbd: unknown variable 'no_such_setting=1'
2026-11-21 19:59:29 0 [ERROR] Aborting
";
        assert_eq!(
            rejected_settings(log).unwrap(),
            "unknown variable 'no_such_setting=1'"
        );
        let log = "\
2026-11-21 19:59:29 0 [ERROR] Buffered error: Unknown suffix 'a' used for variable 'max_connections' (value 'abc'). Legal suffix characters are: K, M, G, T, P, E
2026-11-21 19:59:29 0 [ERROR] Buffered error: /usr/sbin/mariadbd: Error while setting value 'abc' to 'max_connections'
";
        assert_eq!(
            rejected_settings(log).unwrap(),
            "Unknown suffix 'a' used for variable 'max_connections' (value 'abc'). Legal suffix characters are: K, M, G, T, P, E; Error while setting value 'abc' to 'max_connections'"
        );
        assert_eq!(
            rejected_settings("2026-11-21 0 [ERROR] Can't start server: Bind on TCP/IP port. Got error: 98: Address already in use"),
            None
        );
    }
}
