//! The per-user cache of server builds:
//! `$XDG_CACHE_HOME/dbsweep/servers/KIND-VERSION/` (`~/.cache` without
//! it), one directory per build, named by the repository's version
//! (`postgres-9.6.24`, `mariadb-10.2.11`).
//!
//! A build appears there whole or not at all: it is downloaded and unpacked
//! into a hidden staging directory beside it (`.staging-…`, the same file
//! system) and renamed into place only once verified.

use std::fs;
use std::path::{Path, PathBuf};

use super::resolve::Version;
use crate::server::{ServerError, ServerKind};

/// The file in a build's directory that says where it came from.
pub const SOURCE_FILE: &str = "dbsweep-source.txt";

/// The cache directory: `$XDG_CACHE_HOME/dbsweep/servers`, or
/// `~/.cache/dbsweep/servers`.
pub fn root() -> Result<PathBuf, ServerError> {
    let base = match std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from) {
        // The XDG spec: a relative value is to be ignored.
        Some(p) if p.is_absolute() => p,
        _ => match std::env::var_os("HOME").map(PathBuf::from) {
            Some(home) if home.is_absolute() => home.join(".cache"),
            _ => {
                return Err(ServerError::BadInput(
                    "neither XDG_CACHE_HOME nor HOME is set to an absolute directory, so there is no cache for server builds: set XDG_CACHE_HOME".into(),
                ))
            }
        },
    };
    Ok(base.join("dbsweep").join("servers"))
}

/// One build in the cache.
#[derive(Debug, Clone, PartialEq)]
pub struct Build {
    pub kind: ServerKind,
    pub version: Version,
    /// Its directory (bin/, lib/ or libs/, share/, scripts/).
    pub dir: PathBuf,
}

impl Build {
    /// The directory of its programs, as `--binaries` takes it.
    pub fn bin(&self) -> PathBuf {
        self.dir.join("bin")
    }

    /// `postgres-9.6.24`.
    pub fn name(&self) -> String {
        dir_name(self.kind, &self.version)
    }
}

/// A build's directory name.
pub fn dir_name(kind: ServerKind, version: &Version) -> String {
    format!("{kind}-{version}")
}

/// Every build in the cache under `root`, by kind then version.
pub fn list(root: &Path) -> Vec<Build> {
    let mut out: Vec<Build> = fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let (kind, version) = name.split_once('-')?;
            let kind: ServerKind = kind.parse().ok()?;
            (name == format!("{kind}-{version}")).then_some(())?;
            let version = Version::parse(version)?;
            e.path().join("bin").is_dir().then(|| Build {
                kind,
                version,
                dir: e.path(),
            })
        })
        .collect();
    out.sort_by(|a, b| (a.kind.name(), &a.version).cmp(&(b.kind.name(), &b.version)));
    out
}

/// The newest cached build of `kind` that `wanted` names.
pub fn find(root: &Path, kind: ServerKind, wanted: &[u32]) -> Option<Build> {
    list(root)
        .into_iter()
        .filter(|b| b.kind == kind && b.version.matches(wanted))
        .max_by(|a, b| a.version.cmp(&b.version))
}

/// The cache directory, created (readable by everyone: servers run as
/// their own OS users and read their programs from here).
pub fn create_root(root: &Path) -> Result<(), ServerError> {
    use std::os::unix::fs::PermissionsExt;
    fs::create_dir_all(root).map_err(|e| {
        ServerError::io(
            format!("creating the server build cache {}", root.display()),
            e,
        )
    })?;
    fs::set_permissions(root, fs::Permissions::from_mode(0o755))
        .map_err(|e| ServerError::io(format!("making {} readable", root.display()), e))
}

/// Moves a verified, unpacked build into place. Another process may have
/// installed the same build meanwhile: then its copy is kept and ours
/// dropped.
pub fn commit(
    staged: &Path,
    root: &Path,
    kind: ServerKind,
    version: &Version,
) -> Result<Build, ServerError> {
    use std::os::unix::fs::PermissionsExt;
    let dest = root.join(dir_name(kind, version));
    fs::set_permissions(staged, fs::Permissions::from_mode(0o755))
        .map_err(|e| ServerError::io(format!("making {} readable", staged.display()), e))?;
    if let Err(e) = fs::rename(staged, &dest) {
        if !dest.join("bin").is_dir() {
            return Err(ServerError::io(
                format!("moving the build into {}", dest.display()),
                e,
            ));
        }
    }
    Ok(Build {
        kind,
        version: version.clone(),
        dir: dest,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_builds_and_finds_the_newest() {
        let t = tempfile::tempdir().unwrap();
        for d in [
            "postgres-9.6.24/bin",
            "postgres-9.6.10/bin",
            "postgres-18.6.0/bin",
            "mariadb-10.2.11/bin",
            ".staging-postgres-9.6.30/bin",
            "postgres-9.6.99",
            "oracle-8.1/bin",
        ] {
            fs::create_dir_all(t.path().join(d)).unwrap();
        }
        let names: Vec<String> = list(t.path()).iter().map(Build::name).collect();
        assert_eq!(
            names,
            [
                "mariadb-10.2.11",
                "postgres-9.6.10",
                "postgres-9.6.24",
                "postgres-18.6.0"
            ]
        );
        let b = find(t.path(), ServerKind::Postgres, &[9, 6]).unwrap();
        assert_eq!(b.name(), "postgres-9.6.24");
        assert_eq!(b.bin(), t.path().join("postgres-9.6.24/bin"));
        assert!(find(t.path(), ServerKind::Mariadb, &[10, 1]).is_none());
    }
}
