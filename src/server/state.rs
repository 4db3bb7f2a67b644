//! A server directory: its layout (described in the module docs of
//! [`super`]), the state file that lets a later process find, stop and
//! describe the server, and the checks that keep dbsweep from taking over a
//! directory it did not create.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use super::process::OsUser;
use super::{RunningServer, ServerError, ServerKind};

/// Name of the state file in a server directory.
pub const STATE_FILE: &str = "dbsweep-server.json";

/// Everything dbsweep itself may create in a server directory; a directory
/// holding anything else (and no state file) is not ours to use.
const OUR_ENTRIES: &[&str] = &[
    "server.log",
    "my.cnf",
    "postgresql.conf",
    "user.cnf",
    "user.conf",
    "run",
    STATE_FILE,
];

/// Paths inside one server directory (absolute, symlinks resolved).
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub dir: PathBuf,
    pub data: PathBuf,
    pub run: PathBuf,
    pub log: PathBuf,
    pub state: PathBuf,
}

impl Layout {
    pub fn new(dir: PathBuf) -> Layout {
        Layout {
            data: dir.join("data"),
            run: dir.join("run"),
            log: dir.join("server.log"),
            state: dir.join(STATE_FILE),
            dir,
        }
    }

    /// The layout of an existing directory, for stop and status.
    pub fn existing(dir: &Path) -> Result<Layout, ServerError> {
        let dir = fs::canonicalize(dir).map_err(|e| {
            ServerError::BadInput(format!(
                "no server directory {}: {e}; start one with `dbsweep server start KIND --dir {}`",
                dir.display(),
                dir.display()
            ))
        })?;
        Ok(Layout::new(dir))
    }
}

/// The state file's content.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct State {
    /// Bumped if the format changes incompatibly.
    pub format: u32,
    pub kind: ServerKind,
    /// The port of the last start, reused when the next start names none, so
    /// a server's URL stays the same across restarts.
    pub last_port: Option<u16>,
    /// The server while it is (believed to be) running; None once stopped.
    pub server: Option<RunningServer>,
}

impl State {
    pub fn new(kind: ServerKind) -> State {
        State {
            format: 1,
            kind,
            last_port: None,
            server: None,
        }
    }

    /// Reads the state file; Ok(None) if there is none.
    pub fn read(layout: &Layout) -> Result<Option<State>, ServerError> {
        let text = match fs::read_to_string(&layout.state) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(ServerError::io(
                    format!("reading {}", layout.state.display()),
                    e,
                ))
            }
        };
        serde_json::from_str(&text).map(Some).map_err(|e| {
            ServerError::BadInput(format!(
                "{} is not a dbsweep server state file ({e}); was the directory made by another tool?",
                layout.state.display()
            ))
        })
    }

    /// Writes the state file atomically (a crash leaves the old or the new
    /// one), readable only by its owner: the URL holds the password.
    pub fn write(&self, layout: &Layout) -> Result<(), ServerError> {
        // A name of its own: the Ctrl-C handler may write while a start does.
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let tmp = layout.dir.join(format!(
            "{STATE_FILE}.{}.{}.tmp",
            std::process::id(),
            WRITES.fetch_add(1, Ordering::Relaxed)
        ));
        let context = || format!("writing {}", layout.state.display());
        let json = serde_json::to_string_pretty(self).expect("state serializes");
        let written = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .and_then(|mut f| {
                f.write_all(json.as_bytes())?;
                f.write_all(b"\n")?;
                f.sync_all()
            })
            .and_then(|_| fs::rename(&tmp, &layout.state));
        written.map_err(|e| {
            let _ = fs::remove_file(&tmp);
            ServerError::io(context(), e)
        })
    }
}

/// Creates (or checks) the directory for a server of `kind` and returns its
/// layout and state, None if it has not been initialised yet. A directory
/// is usable if it is new, empty, holds only files dbsweep creates, or holds
/// our state file for the same kind.
pub(crate) fn prepare_dir(
    dir: &Path,
    kind: ServerKind,
) -> Result<(Layout, Option<State>), ServerError> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(dir)
        .map_err(|e| ServerError::io(format!("creating {}", dir.display()), e))?;
    let layout = Layout::existing(dir)?;
    match State::read(&layout)? {
        Some(state) if state.kind == kind => Ok((layout, Some(state))),
        Some(state) => Err(ServerError::BadInput(format!(
            "{} holds a {} server, not {kind}: use another directory for {kind}",
            layout.dir.display(),
            state.kind
        ))),
        None => {
            let entries = fs::read_dir(&layout.dir)
                .map_err(|e| ServerError::io(format!("reading {}", layout.dir.display()), e))?;
            for entry in entries.flatten() {
                let name = entry.file_name();
                let ours = OUR_ENTRIES.iter().any(|n| name == *n)
                    || name.to_string_lossy().starts_with(STATE_FILE); // a crash's temporary
                if !ours {
                    return Err(ServerError::BadInput(format!(
                        "{} is not empty and was not made by dbsweep (it holds '{}' and no {STATE_FILE}): choose a new or empty directory",
                        layout.dir.display(),
                        name.to_string_lossy()
                    )));
                }
            }
            Ok((layout, None))
        }
    }
}

/// Creates `path` (if missing) owned by `owner` with `mode`: the server's
/// own directories, which it must be able to write.
pub(crate) fn own_dir(path: &Path, owner: Option<&OsUser>, mode: u32) -> Result<(), ServerError> {
    let context = || format!("preparing {}", path.display());
    match fs::create_dir(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(ServerError::io(context(), e)),
    }
    if let Some(u) = owner {
        std::os::unix::fs::chown(path, Some(u.uid), Some(u.gid))
            .map_err(|e| ServerError::io(context(), e))?;
    }
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(|e| ServerError::io(context(), e))
}

/// Makes `dir` and every directory above it searchable (`o+x`) so that the
/// server's OS user can reach its data directory; returns the directories
/// changed (a temporary directory is typically 0700). Only the search bit is
/// added: nothing becomes listable or readable.
pub(crate) fn make_traversable(dir: &Path) -> Result<Vec<PathBuf>, ServerError> {
    let mut changed = Vec::new();
    for d in dir.ancestors() {
        let meta =
            fs::metadata(d).map_err(|e| ServerError::io(format!("reading {}", d.display()), e))?;
        let mode = meta.mode() & 0o7777;
        if mode & 0o001 == 0 {
            fs::set_permissions(d, fs::Permissions::from_mode(mode | 0o001)).map_err(|e| {
                ServerError::io(
                    format!(
                        "making {} searchable for the server's OS user (chmod o+x)",
                        d.display()
                    ),
                    e,
                )
            })?;
            changed.push(d.to_path_buf());
        }
    }
    Ok(changed)
}

/// Writes a config file dbsweep renders, readable by the server's OS user.
pub(crate) fn write_config(path: &Path, text: &str) -> Result<(), ServerError> {
    let context = || format!("writing {}", path.display());
    fs::write(path, text).map_err(|e| ServerError::io(context(), e))?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o644))
        .map_err(|e| ServerError::io(context(), e))
}

/// Copies the user's config file into the directory (as `name`) so that the
/// server's OS user can read it and the directory records what was used.
pub(crate) fn copy_user_config(
    layout: &Layout,
    file: &Path,
    name: &str,
) -> Result<PathBuf, ServerError> {
    let text = fs::read_to_string(file).map_err(|e| {
        ServerError::BadInput(format!("cannot read config file {}: {e}", file.display()))
    })?;
    let copy = layout.dir.join(name);
    write_config(&copy, &text)?;
    Ok(copy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_foreign_and_other_kind_directories() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("srv");
        let (layout, state) = prepare_dir(&dir, ServerKind::Mariadb).unwrap();
        assert!(state.is_none());
        fs::write(&layout.log, "x").unwrap();
        // Only our own files: still usable.
        prepare_dir(&dir, ServerKind::Mariadb).unwrap();
        State::new(ServerKind::Mariadb).write(&layout).unwrap();
        let e = prepare_dir(&dir, ServerKind::Postgres).unwrap_err();
        assert!(e.to_string().contains("holds a mariadb server"), "{e}");
        let (_, state) = prepare_dir(&dir, ServerKind::Mariadb).unwrap();
        assert_eq!(state.unwrap().kind, ServerKind::Mariadb);

        let foreign = t.path().join("foreign");
        fs::create_dir_all(foreign.join("data")).unwrap();
        fs::write(foreign.join("important.txt"), "x").unwrap();
        let e = prepare_dir(&foreign, ServerKind::Postgres).unwrap_err();
        assert!(
            e.is_bad_input() && e.to_string().contains("not made by dbsweep"),
            "{e}"
        );
    }

    #[test]
    fn state_round_trips_privately() {
        let t = tempfile::tempdir().unwrap();
        let layout = Layout::new(t.path().to_path_buf());
        let mut state = State::new(ServerKind::Postgres);
        state.last_port = Some(5999);
        state.write(&layout).unwrap();
        let back = State::read(&layout).unwrap().unwrap();
        assert_eq!(
            (back.kind, back.last_port),
            (ServerKind::Postgres, Some(5999))
        );
        let mode = fs::metadata(&layout.state).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o600);
        fs::write(&layout.state, "{").unwrap();
        assert!(State::read(&layout).unwrap_err().is_bad_input());
    }
}
