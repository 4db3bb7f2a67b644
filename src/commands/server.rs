//! `dbsweep server start|stop|status`: managed MariaDB and PostgreSQL
//! servers in scratch directories, for campaigns run by hand.

use std::path::{Path, PathBuf};

use crate::server::{self, ServerError, ServerSpec};
use crate::UsageError;

/// Where `dbsweep server` keeps servers when no `--dir` is given.
pub const SERVERS_DIR: &str = "dbsweep-servers";

/// `dbsweep server …`.
pub enum ServerRequest {
    /// Start a server as the spec says.
    Start(ServerSpec),
    /// Stop the server in a directory (None: every one under ./dbsweep-servers).
    Stop(Option<PathBuf>),
    /// Say whether it runs, and where.
    Status(Option<PathBuf>),
}

pub fn server(req: ServerRequest) -> anyhow::Result<()> {
    match req {
        ServerRequest::Start(spec) => start(&spec),
        ServerRequest::Stop(dir) => {
            for dir in server_dirs(dir.as_deref())? {
                match server::stop(&dir).map_err(ServerError::into_anyhow)? {
                    true => eprintln!("Stopped the server in {}", dir.display()),
                    false => eprintln!("No server running in {}", dir.display()),
                }
            }
            Ok(())
        }
        ServerRequest::Status(dir) => {
            for dir in server_dirs(dir.as_deref())? {
                match server::status(&dir).map_err(ServerError::into_anyhow)? {
                    Some(s) => println!(
                        "{}: {} running, pid {}, port {}\n    {}\n    {}",
                        dir.display(),
                        s.kind,
                        s.pid,
                        s.port,
                        shown(&s.url),
                        s.version
                    ),
                    None => println!("{}: not running", dir.display()),
                }
            }
            Ok(())
        }
    }
}

/// The server directories `stop`/`status` act on: the one given, or every
/// server directory under ./dbsweep-servers.
fn server_dirs(dir: Option<&Path>) -> anyhow::Result<Vec<PathBuf>> {
    if let Some(d) = dir {
        return Ok(vec![d.to_path_buf()]);
    }
    let mut dirs: Vec<_> = std::fs::read_dir(SERVERS_DIR)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.join(server::STATE_FILE).exists())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    if dirs.is_empty() {
        return Err(UsageError(format!(
            "no servers under ./{SERVERS_DIR}: name one with --dir DIR"
        ))
        .into());
    }
    Ok(dirs)
}

fn start(spec: &ServerSpec) -> anyhow::Result<()> {
    // Ctrl-C while the server initialises: stop what was started.
    let _ = ctrlc::set_handler(|| {
        server::stop_all_started();
        std::process::exit(130);
    });
    eprintln!("Starting {} in {} ...", spec.kind, spec.dir.display());
    let s = server::start(spec).map_err(ServerError::into_anyhow)?;
    eprintln!(
        "{} running (pid {}, port {}{})\n  socket URL: {}\n  stop with: dbsweep server stop --dir {}",
        s.version,
        s.pid,
        s.port,
        s.cpus
            .as_ref()
            .map(|c| format!(", CPUs {}", server::format_cpu_list(c)))
            .unwrap_or_default(),
        shown(&s.socket_url()),
        s.dir.display()
    );
    println!("{}", shown(&s.url));
    Ok(())
}

/// A server URL as printed: with the public default password, as is (ready
/// to paste); with one of the user's own, without it (the URL then works
/// with PGPASSWORD or MYSQL_PWD set).
fn shown(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(u) if u.password().is_some_and(|p| p != server::DEFAULT_PASSWORD) => {
            crate::util::secrets::without_password(url)
        }
        _ => url.to_string(),
    }
}
