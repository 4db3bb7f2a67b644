//! Which build a spec names and what it is: the system's programs, a
//! `--binaries` directory or a cached registry build (`--version`), its
//! `--version` line, and whether an existing data directory suits it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::engine::{with_libs, Engine};
use super::{engine_for, install, ServerError, ServerKind, ServerSpec};

/// The programs a spec names: `--binaries DIR` as given, `--version V` as
/// the newest cached build of that version (see [`super::install`]), or
/// None for the system's.
pub(super) fn binaries_of(spec: &ServerSpec) -> Result<Option<PathBuf>, ServerError> {
    let kind = spec.kind;
    match (&spec.version, &spec.binaries) {
        (Some(_), Some(_)) => Err(ServerError::BadInput(
            "give either a version or a binaries directory, not both".into(),
        )),
        (None, b) => Ok(b.clone()),
        (Some(v), None) => {
            let wanted = install::parse_wanted(kind, v)?;
            let installer = install::Installer::from_env()?;
            match installer.cached(kind, &wanted) {
                Some(build) => Ok(Some(build.bin())),
                None => Err(ServerError::BadInput(format!(
                    "{kind} {v} is not installed in {}: install it with `dbsweep server install {kind}@{v}`",
                    installer.cache.display()
                ))),
            }
        }
    }
}

/// The `--version` line of the server a spec names (the system's, a
/// `--binaries` directory's or a cached build's), for `dbsweep server
/// versions` and reports.
pub fn describe(spec: &ServerSpec) -> Result<(PathBuf, String), ServerError> {
    let binaries = binaries_of(spec)?;
    let engine = engine_for(spec.kind, binaries.as_deref())?;
    let line = version_of(&*engine)?;
    Ok((engine.binary().to_path_buf(), line))
}

/// The server's `--version` line, whitespace collapsed and the program
/// named without its directory: `mariadbd Ver 10.11.6-MariaDB…` or
/// `postgres (PostgreSQL) 15.5 (Debian 15.5-0+deb12u1)`.
pub(super) fn version_of(engine: &dyn Engine) -> Result<String, ServerError> {
    let binary = engine.binary();
    let mut cmd = Command::new(binary);
    with_libs(&mut cmd, engine.lib_dir());
    let out = cmd
        .arg("--version")
        .output()
        .map_err(|e| ServerError::io(format!("running {} --version", binary.display()), e))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = version_line(&text);
    if !out.status.success() || line.is_empty() {
        return Err(ServerError::BadInput(format!(
            "{} --version failed ({}): is it a working server binary?",
            binary.display(),
            out.status
        )));
    }
    Ok(line)
}

fn version_line(output: &str) -> String {
    let mut words: Vec<&str> = output
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    if let Some(first) = words.first_mut() {
        *first = first.rsplit('/').next().unwrap_or(first);
    }
    words.join(" ")
}

/// A PostgreSQL data directory works only with the major version that made
/// it (`data/PG_VERSION`): another version's start would fail deep in its
/// log, so it is refused here with the fix.
pub(super) fn check_data_version(
    kind: ServerKind,
    data: &Path,
    version: &[u32],
) -> Result<(), ServerError> {
    let Some(major) = postgres_major(version).filter(|_| kind == ServerKind::Postgres) else {
        return Ok(());
    };
    let Ok(made) = fs::read_to_string(data.join("PG_VERSION")) else {
        return Ok(());
    };
    let made = made.trim();
    if made == major {
        return Ok(());
    }
    Err(ServerError::BadInput(format!(
        "the data directory {} was made by PostgreSQL {made}; this server is PostgreSQL {major}, which cannot use it: give this version a directory of its own (--dir, or the study target's dir)",
        data.display()
    )))
}

/// PostgreSQL's major version as `PG_VERSION` spells it: `9.6`, `15`.
fn postgres_major(version: &[u32]) -> Option<String> {
    match version {
        [major, ..] if *major >= 10 => Some(major.to_string()),
        [major, minor, ..] => Some(format!("{major}.{minor}")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_lines_are_tidied() {
        assert_eq!(
            version_line("/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)\n"),
            "mariadbd Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)"
        );
        assert_eq!(
            version_line("postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)\n"),
            "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"
        );
        assert_eq!(version_line(""), "");
    }

    #[test]
    fn a_postgres_data_directory_keeps_its_major_version() {
        assert_eq!(postgres_major(&[9, 6, 24]).as_deref(), Some("9.6"));
        assert_eq!(postgres_major(&[15, 18]).as_deref(), Some("15"));
        assert_eq!(postgres_major(&[]), None);
        let t = tempfile::tempdir().unwrap();
        fs::write(t.path().join("PG_VERSION"), "15\n").unwrap();
        let pg = ServerKind::Postgres;
        assert!(check_data_version(pg, t.path(), &[15, 5]).is_ok());
        let e = check_data_version(pg, t.path(), &[9, 6, 24]).unwrap_err();
        assert!(e.is_bad_input());
        assert!(
            e.to_string()
                .contains("made by PostgreSQL 15; this server is PostgreSQL 9.6"),
            "{e}"
        );
        assert!(check_data_version(ServerKind::Mariadb, t.path(), &[10, 2]).is_ok());
    }
}
