//! `dbsweep server start|stop|status|install|versions`: managed MariaDB and
//! PostgreSQL servers in scratch directories, for campaigns run by hand,
//! and server builds of other versions in the per-user cache.

use std::path::{Path, PathBuf};

use crate::server::install::Installer;
use crate::server::{self, ServerError, ServerKind, ServerSpec};
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
    /// Install a build into the cache (from the repository, or a file).
    Install {
        kind: ServerKind,
        /// The version's numbers as given (`[9, 6]`).
        wanted: Vec<u32>,
        from: Option<PathBuf>,
    },
    /// List the system's and the cached builds.
    Versions,
}

pub fn server(req: ServerRequest) -> anyhow::Result<()> {
    match req {
        ServerRequest::Start(spec) => start(&spec),
        ServerRequest::Install { kind, wanted, from } => install(kind, &wanted, from.as_deref()),
        ServerRequest::Versions => versions(),
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
                    Some(s) => {
                        println!(
                            "{}: {} running, pid {}, port {}\n    {}\n    {}",
                            dir.display(),
                            s.kind,
                            s.pid,
                            s.port,
                            shown(&s.url),
                            s.version
                        );
                        if let Some(p) = &s.pooler {
                            println!("    through {} (pid {}, port {})", p.version, p.pid, p.port);
                        }
                    }
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

/// `dbsweep server install KIND@VERSION [--from FILE]`: prints the build's
/// directory on stdout, what happened on stderr.
fn install(kind: ServerKind, wanted: &[u32], from: Option<&Path>) -> anyhow::Result<()> {
    let installer = Installer::from_env().map_err(ServerError::into_anyhow)?;
    let started = std::time::Instant::now();
    let done = match from {
        Some(file) => installer.install_from(kind, wanted, file),
        None => installer.install(kind, wanted),
    }
    .map_err(ServerError::into_anyhow)?;
    let b = &done.build;
    if done.fresh {
        eprintln!(
            "Installed {kind} {} from {} in {:.1} s",
            b.version,
            done.source,
            started.elapsed().as_secs_f64()
        );
    } else {
        eprintln!("{kind} {} is installed already (the cache)", b.version);
    }
    eprintln!(
        "  start it with: dbsweep server start {kind} --version {}",
        server::install::wanted_text(wanted)
    );
    println!("{}", b.dir.display());
    Ok(())
}

/// `dbsweep server versions`: the system's servers and the cached builds,
/// each with its `--version` line (or why it has none).
fn versions() -> anyhow::Result<()> {
    for kind in ServerKind::ALL {
        let spec = ServerSpec::new(kind, ".");
        match server::describe(&spec) {
            Ok((binary, line)) => println!("{kind}  system  {line}\n    {}", binary.display()),
            Err(e) => println!("{kind}  system  not installed ({e})"),
        }
    }
    let installer = Installer::from_env().map_err(ServerError::into_anyhow)?;
    let builds = installer.list();
    if builds.is_empty() {
        println!(
            "No builds in {} yet: install one with `dbsweep server install postgres@9.6` (or mariadb@10.2)",
            installer.cache.display()
        );
    }
    for b in builds {
        let mut spec = ServerSpec::new(b.kind, ".");
        spec.binaries = Some(b.bin());
        match server::describe(&spec) {
            Ok((_, line)) => println!(
                "{}  {}  {line}\n    {}",
                b.kind,
                b.version.major(b.kind),
                b.dir.display()
            ),
            Err(e) => println!("{}  {}  unusable: {e}", b.kind, b.version),
        }
    }
    Ok(())
}

fn start(spec: &ServerSpec) -> anyhow::Result<()> {
    // Ctrl-C while the server initialises: stop what was started.
    let _ = ctrlc::set_handler(|| {
        server::stop_all_started();
        std::process::exit(130);
    });
    if let Some(v) = &spec.version {
        if let Some(done) = server::install::ensure(spec)
            .map_err(ServerError::into_anyhow)?
            .filter(|d| d.fresh)
        {
            eprintln!(
                "{} {v} was not in the cache: installed {} from {}",
                spec.kind, done.build.version, done.source
            );
        }
    }
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
    if let Some(p) = &s.pooler {
        eprintln!(
            "{} in front of it (pid {}, port {}): the URL below is the pooler's\n  direct URL: {}",
            p.version,
            p.pid,
            p.port,
            shown(&s.direct_url())
        );
    }
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
