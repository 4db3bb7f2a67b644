//! Starting, stopping and describing a server: the sequence of a start
//! (checks, directory, initialisation, config, spawn, readiness, pinning,
//! benchmark user) and of a stop (clean signal, then SIGKILL).

use std::fs;
use std::path::Path;
use std::process::Child;
use std::thread;
use std::time::{Duration, Instant};

use super::build::{binaries_of, check_data_version, version_of};
use super::engine::{package, version_numbers, Ctx, Engine};
use super::engine_for;
use super::registry::{
    registry_add, registry_epoch, registry_has, registry_remove, registry_set_ready,
};
use super::state::{self, Layout, State, STATE_FILE};
use super::{format_cpu_list, STOP_TIMEOUT};
use super::{pgbouncer, tls};
use super::{process, settings, url, RunningServer, ServerError, ServerKind, ServerSpec};

/// Starts the server `spec` describes and returns once it accepts the
/// benchmark user's connections. Initialises the directory on its first use.
///
/// Errors: [`ServerError::BadSetting`] when the server rejects a setting,
/// [`ServerError::BadInput`] for unusable CPUs, ports, directories or
/// missing binaries, [`ServerError::AlreadyRunning`], and
/// [`ServerError::Failed`] (with the log's tail) when the server dies, does
/// not become ready within `spec.start_timeout`, or setup fails. On error no
/// server process is left running.
pub fn start(spec: &ServerSpec) -> Result<RunningServer, ServerError> {
    let epoch = registry_epoch();
    let kind = spec.kind;
    settings::validate(kind, &spec.settings)?;
    check_not_reserved(kind, &spec.settings)?;
    check_password(&spec.password)?;
    if let Some(p) = &spec.pooler {
        if kind != ServerKind::Postgres {
            return Err(ServerError::BadInput(format!(
                "a pooler (PgBouncer) goes in front of PostgreSQL, not {kind}: leave the pooler out"
            )));
        }
        p.check()?;
    }
    if let Some(cpus) = &spec.cpus {
        process::check_cpus(cpus)?;
    }
    let binaries = binaries_of(spec)?;
    let mut engine = engine_for(kind, binaries.as_deref())?;
    let version = version_of(&*engine)?;
    engine.set_version(&version_numbers(&version));
    let run_as = if process::is_root() {
        Some(process::lookup_user(kind.os_user()).ok_or_else(|| {
            ServerError::BadInput(format!(
                "the OS user '{}' does not exist; {kind} refuses to run as root and dbsweep starts it as that user: install Debian's {} package, which creates it",
                kind.os_user(),
                package(kind)
            ))
        })?)
    } else {
        None
    };

    let (layout, state) = state::prepare_dir(&spec.dir, kind)?;
    if state.is_some() {
        check_data_version(kind, &layout.data, &version_numbers(&version))?;
    }
    check_socket_path(&engine.socket(&layout, 65535))?;
    if let Some(s) = state.as_ref().and_then(|s| s.server.as_ref()) {
        if process::is_server_process(s.pid, &kind.process_marker(&s.dir)) {
            return Err(ServerError::AlreadyRunning {
                kind,
                dir: s.dir.clone(),
                pid: s.pid,
            });
        }
    }
    if let Some(port) = spec.port {
        if port == 0 || !process::port_is_free(port) {
            return Err(ServerError::BadInput(format!(
                "port {port} on 127.0.0.1 is not available: choose another port, or leave it out for a free one"
            )));
        }
    }
    let ctx = Ctx::open(layout, run_as)?;
    if let (Some(user), Some(b)) = (&ctx.run_as, &binaries) {
        // The server's OS user runs the build's programs from wherever they
        // are (a cache under /root, say).
        for d in state::make_traversable(b)? {
            ctx.note(&format!(
                "made {} searchable (o+x) so that OS user {} can run the build in {}",
                d.display(),
                user.name,
                b.display()
            ));
        }
    }
    if registry_epoch() != epoch {
        return Err(interrupted(spec));
    }
    let mut state = match state {
        Some(state) => state,
        None => {
            initialise(&*engine, &ctx)?;
            let state = State::new(kind);
            state.write(&ctx.layout)?;
            state
        }
    };
    let include = match &spec.config_file {
        Some(file) => Some(state::copy_user_config(
            &ctx.layout,
            file,
            engine.user_config_name(),
        )?),
        None => None,
    };

    // A free port can be taken between our check and the server's bind; a
    // port we chose is then replaced, a port the user chose is their error.
    let mut attempts = 0;
    loop {
        attempts += 1;
        let port = match spec.port {
            Some(p) => p,
            None => match state.last_port.filter(|&p| process::port_is_free(p)) {
                Some(p) => p,
                None => process::free_port()
                    .map_err(|e| ServerError::io("finding a free port on 127.0.0.1", e))?,
            },
        };
        let launch = Launch {
            engine: &*engine,
            ctx: &ctx,
            spec,
            version: &version,
            include: include.as_deref(),
            epoch,
        };
        match launch.run(port, &mut state) {
            Ok(server) => return Ok(server),
            Err(StartError::PortTaken) if spec.port.is_none() && attempts < 3 => {
                state.last_port = None;
            }
            Err(StartError::PortTaken) => {
                return Err(ServerError::BadInput(format!(
                    "port {port} on 127.0.0.1 is in use: choose another port, or leave it out for a free one"
                )))
            }
            Err(StartError::Server(e)) => return Err(e),
        }
    }
}

/// One attempt at starting a prepared server directory on a port.
struct Launch<'a> {
    engine: &'a dyn Engine,
    ctx: &'a Ctx,
    spec: &'a ServerSpec,
    version: &'a str,
    /// The copy of the user's config file.
    include: Option<&'a Path>,
    /// The registry's epoch when the start began (see [`stop_all_started`]).
    epoch: u64,
}

impl Launch<'_> {
    /// Writes the config, spawns the server, waits until it is ready, checks
    /// its pinning and creates the benchmark user. On error the server is
    /// stopped and the state file says so.
    fn run(&self, port: u16, state: &mut State) -> Result<RunningServer, StartError> {
        let (engine, ctx, spec) = (self.engine, self.ctx, self.spec);
        let kind = spec.kind;
        let mut base =
            settings::base_without_overrides(kind, &engine.base_settings(), &spec.settings);
        // A variant's own `ssl = off` (or MariaDB's skip-ssl) wins: the
        // server then runs plain and its URL does not ask for TLS.
        let tls = match spec.tls && !tls::turned_off(kind, &spec.settings) {
            true => Some(tls::ensure(&ctx.layout.dir, ctx.run_as.as_ref())?),
            false => None,
        };
        match &tls {
            // The certificate's settings are base settings: a user's own win.
            Some(files) => {
                let pairs = tls::settings(kind, files);
                let pairs: Vec<(&str, &str)> = pairs
                    .iter()
                    .map(|(n, v)| (n.as_str(), v.as_str()))
                    .collect();
                base.extend(settings::base_without_overrides(
                    kind,
                    &pairs,
                    &spec.settings,
                ));
            }
            // Plain unless the user's own settings speak of TLS.
            None => base.extend(
                tls::plain(kind, &spec.settings)
                    .into_iter()
                    .map(|(n, v)| (n.to_string(), v.to_string())),
            ),
        }
        let config = engine.render_config(&ctx.layout, port, &base, self.include, &spec.settings);
        state::write_config(&engine.config_path(&ctx.layout), &config)?;

        engine.before_start(ctx)?;
        let offset = ctx.log_len();
        ctx.note(&format!(
            "starting {} on port {port}",
            engine.binary().display()
        ));
        let mut cmd = engine.command(ctx);
        ctx.log_to(&mut cmd)?;
        let child = process::spawn_server(cmd, spec.cpus.as_deref())
            .map_err(|e| ServerError::io(format!("starting {}", engine.binary().display()), e))?;
        let pid = child.id();
        if !registry_add(kind, &ctx.layout.dir, pid, self.epoch) {
            // Ctrl-C came while we were getting here.
            let _ = kill(kind, pid, &ctx.layout.dir);
            return Err(interrupted(spec).into());
        }
        let server = RunningServer {
            kind,
            dir: ctx.layout.dir.clone(),
            pid,
            port,
            url: match &tls {
                Some(files) => format!(
                    "{}?{}",
                    url(kind, &spec.password, port),
                    tls::url_query(kind, files)
                ),
                None => url(kind, &spec.password, port),
            },
            socket: engine.socket(&ctx.layout, port),
            version: self.version.to_string(),
            binary: engine.binary().to_path_buf(),
            settings: base
                .into_iter()
                .chain(spec.settings.iter().cloned())
                .collect(),
            config_file: self.include.map(Path::to_path_buf),
            cpus: spec.cpus.clone(),
            pooler: None,
        };
        // Recorded at once, so that a stop from another process can find
        // a server that is still starting.
        state.last_port = Some(port);
        state.server = Some(server.clone());
        let ready = state
            .write(&ctx.layout)
            .map_err(StartError::from)
            .and_then(|_| wait_ready(engine, ctx, child, port, offset, spec.start_timeout))
            .map(|_| registry_set_ready(pid))
            .and_then(|_| check_pinning(&server))
            .and_then(|_| Ok(engine.create_benchmark_user(ctx, port, &spec.password)?));
        // stop_all_started may have stopped it at any point of the above.
        let stopped = registry_epoch() != self.epoch;
        if ready.is_err() || stopped {
            // Leave nothing running behind an error.
            let _ = terminate(kind, pid, &ctx.layout.dir);
            registry_remove(pid);
            state.server = None;
            state.write(&ctx.layout)?;
            return Err(match ready {
                Err(e) if !stopped => e,
                _ => interrupted(spec).into(),
            });
        }
        match &spec.pooler {
            Some(p) => self.front(server, p, tls.as_ref(), state),
            None => Ok(server),
        }
    }

    /// Starts PgBouncer in front of the ready `server`; its URL becomes the
    /// server's. On error the server is stopped too.
    fn front(
        &self,
        mut server: RunningServer,
        p: &pgbouncer::PoolerSpec,
        tls: Option<&tls::TlsFiles>,
        state: &mut State,
    ) -> Result<RunningServer, StartError> {
        let (ctx, spec) = (self.ctx, self.spec);
        let up = pgbouncer::Upstream {
            socket_dir: server.socket.parent().unwrap_or(&ctx.layout.run),
            port: server.port,
            user: super::USER,
            password: &spec.password,
        };
        let started = pgbouncer::start(ctx, p, &up, tls, spec.cpus.as_deref(), spec.start_timeout);
        let pooler = match started {
            Ok(pooler) => pooler,
            Err(e) => {
                let _ = terminate(spec.kind, server.pid, &ctx.layout.dir);
                registry_remove(server.pid);
                state.server = None;
                state.write(&ctx.layout)?;
                return Err(e.into());
            }
        };
        server.url = super::at_port(&server.url, server.port, pooler.port);
        server.pooler = Some(pooler);
        state.server = Some(server.clone());
        state.write(&ctx.layout)?;
        Ok(server)
    }
}

/// Stops the server in `dir` if it runs, then starts it per `spec`: how a
/// study changes a server's settings between points.
pub fn restart(spec: &ServerSpec) -> Result<RunningServer, ServerError> {
    if spec.dir.join(STATE_FILE).exists() {
        stop(&spec.dir)?;
    }
    start(spec)
}

/// Stops the server in `dir` (started by this or any earlier process):
/// the clean shutdown signal, then SIGKILL to its whole process group if it
/// has not exited after [`STOP_TIMEOUT`]. Returns whether it was running.
/// Errors if `dir` holds no dbsweep server.
pub fn stop(dir: &Path) -> Result<bool, ServerError> {
    let layout = Layout::existing(dir)?;
    let mut state = read_state(&layout)?;
    let Some(server) = state.server.take() else {
        return Ok(false);
    };
    if let Some(p) = &server.pooler {
        pgbouncer::stop(p.pid, &p.ini);
    }
    let was_running =
        process::is_server_process(server.pid, &server.kind.process_marker(&server.dir));
    if was_running {
        terminate(server.kind, server.pid, &server.dir)?;
    } else if registry_has(server.pid) {
        // It died on its own; as our child it waits to be reaped.
        process::is_gone(server.pid);
    }
    registry_remove(server.pid);
    state.write(&layout)?;
    Ok(was_running)
}

/// The server in `dir` if it is running (its process alive), else None.
/// Errors if `dir` holds no dbsweep server.
pub fn status(dir: &Path) -> Result<Option<RunningServer>, ServerError> {
    let layout = Layout::existing(dir)?;
    let state = read_state(&layout)?;
    Ok(state
        .server
        .filter(|s| process::is_server_process(s.pid, &s.kind.process_marker(&s.dir))))
}

fn read_state(layout: &Layout) -> Result<State, ServerError> {
    State::read(layout)?.ok_or_else(|| {
        ServerError::BadInput(format!(
            "{} holds no dbsweep server (no {}); start one with `dbsweep server start KIND --dir {}`",
            layout.dir.display(),
            STATE_FILE,
            layout.dir.display()
        ))
    })
}

/// Shuts a server process down: the clean signal, then SIGKILL to its
/// process group after [`STOP_TIMEOUT`]. Returns once nothing of it runs.
pub(super) fn terminate(kind: ServerKind, pid: u32, dir: &Path) -> Result<(), ServerError> {
    if !process::is_gone(pid) {
        let _ = process::signal(pid, kind.stop_signal());
        if !process::wait_gone(pid, STOP_TIMEOUT) {
            return kill(kind, pid, dir);
        }
    }
    // Whatever outlived it (the backends of a postmaster that crashed).
    if !process::group_gone(pid) {
        return kill(kind, pid, dir);
    }
    Ok(())
}

/// Kills a server's process group and waits until all of it is gone.
pub(super) fn kill(kind: ServerKind, pid: u32, dir: &Path) -> Result<(), ServerError> {
    process::kill_group(pid);
    if process::wait_group_gone(pid, Duration::from_secs(10)) {
        Ok(())
    } else {
        Err(ServerError::io(
            format!(
                "stopping the {kind} server in {} (pid {pid}): it survived SIGKILL",
                dir.display()
            ),
            std::io::Error::from(std::io::ErrorKind::TimedOut),
        ))
    }
}

/// What went wrong while a server was starting.
enum StartError {
    /// The port was taken between our check and the server's bind.
    PortTaken,
    Server(ServerError),
}

impl From<ServerError> for StartError {
    fn from(e: ServerError) -> StartError {
        StartError::Server(e)
    }
}

/// Waits until the server accepts connections, watching the process: if it
/// exits, the log says why (a rejected setting becomes
/// [`ServerError::BadSetting`]); after `timeout` it is killed.
fn wait_ready(
    engine: &dyn Engine,
    ctx: &Ctx,
    mut child: Child,
    port: u16,
    offset: u64,
    timeout: Duration,
) -> Result<(), StartError> {
    let kind = engine.kind();
    let begun = Instant::now();
    loop {
        let exited = match child.try_wait() {
            Ok(status) => status.map(|s| s.to_string()),
            // Reaped elsewhere: stopped by stop_all_started.
            Err(_) => Some("stopped".to_string()),
        };
        if let Some(status) = exited {
            if !registry_has(child.id()) {
                return Err(ServerError::Interrupted {
                    kind,
                    dir: ctx.layout.dir.clone(),
                }
                .into());
            }
            let log = ctx.log_since(offset);
            if let Some(message) = engine.rejected_settings(&log) {
                return Err(ServerError::BadSetting { kind, message }.into());
            }
            if engine.port_taken(&log) {
                return Err(StartError::PortTaken);
            }
            return Err(ctx
                .failed(
                    format!("the {kind} server exited while starting ({status})"),
                    offset,
                )
                .into());
        }
        if engine.is_ready(ctx, port, child.id()) {
            return Ok(());
        }
        if begun.elapsed() > timeout {
            let _ = kill(kind, child.id(), &ctx.layout.dir);
            return Err(ctx
                .failed(
                    format!(
                        "the {kind} server did not accept connections within {timeout:?} and was killed"
                    ),
                    offset,
                )
                .into());
        }
        thread::sleep(process::POLL);
    }
}

fn interrupted(spec: &ServerSpec) -> ServerError {
    ServerError::Interrupted {
        kind: spec.kind,
        dir: spec.dir.clone(),
    }
}

/// Checks in /proc that a pinned server runs on exactly its CPUs.
fn check_pinning(server: &RunningServer) -> Result<(), StartError> {
    let Some(want) = &server.cpus else {
        return Ok(());
    };
    let have = process::affinity(server.pid).map_err(|e| {
        ServerError::io(format!("reading the CPU affinity of pid {}", server.pid), e)
    })?;
    let mut want = want.clone();
    want.sort_unstable();
    want.dedup();
    if have == want {
        Ok(())
    } else {
        Err(ServerError::io(
            format!(
                "pinning the {} server: it runs on CPUs {} instead of {}",
                server.kind,
                format_cpu_list(&have),
                format_cpu_list(&want)
            ),
            std::io::Error::other("affinity mismatch"),
        )
        .into())
    }
}

/// Runs install-db / initdb; on failure removes the half-made data
/// directory so the next start tries again.
fn initialise(engine: &dyn Engine, ctx: &Ctx) -> Result<(), ServerError> {
    let result = engine.init(ctx);
    if result.is_err() {
        let _ = fs::remove_dir_all(&ctx.layout.data);
    }
    result
}

/// Settings dbsweep derives from the spec (where the server lives and
/// listens); a `--set` of them would make dbsweep wait at the wrong place.
fn check_not_reserved(kind: ServerKind, user: &[(String, String)]) -> Result<(), ServerError> {
    let reserved: &[&str] = match kind {
        ServerKind::Mariadb => &[
            "datadir",
            "socket",
            "port",
            "bind_address",
            "pid_file",
            "basedir",
            "user",
            "skip_networking",
        ],
        ServerKind::Postgres => &[
            "port",
            "listen_addresses",
            "unix_socket_directories",
            "data_directory",
            "config_file",
            "hba_file",
            "ident_file",
        ],
    };
    for (name, _) in user {
        if reserved.contains(&settings::normalize(kind, name).as_str()) {
            return Err(ServerError::BadInput(format!(
                "setting '{name}' is chosen by dbsweep (the server lives in its directory and listens on 127.0.0.1): use the port and directory options instead"
            )));
        }
    }
    Ok(())
}

/// The password goes into SQL and a URL; control characters would do
/// neither any good.
fn check_password(password: &str) -> Result<(), ServerError> {
    if password.is_empty() || password.chars().any(|c| c.is_control()) {
        return Err(ServerError::BadInput(
            "the benchmark user's password must be non-empty and printable".into(),
        ));
    }
    Ok(())
}

/// Socket paths are limited to 107 bytes by the kernel (sun_path).
fn check_socket_path(socket: &Path) -> Result<(), ServerError> {
    let len = socket.as_os_str().len();
    if len > 107 {
        return Err(ServerError::BadInput(format!(
            "the server's socket path {} would be {len} bytes, over the 107 a unix socket allows: choose a shorter directory",
            socket.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_settings_dbsweep_chooses() {
        let set = |n: &str| vec![(n.to_string(), "1".to_string())];
        assert!(check_not_reserved(ServerKind::Mariadb, &set("bind-address")).is_err());
        assert!(check_not_reserved(ServerKind::Postgres, &set("Port")).is_err());
        assert!(check_not_reserved(ServerKind::Postgres, &set("work_mem")).is_ok());
    }

    #[test]
    fn long_socket_paths_are_refused() {
        assert!(check_socket_path(Path::new("/tmp/x/run/mysqld.sock")).is_ok());
        let long = format!("/{}/run/mysqld.sock", "d".repeat(100));
        let e = check_socket_path(Path::new(&long)).unwrap_err();
        assert!(e.is_bad_input() && e.to_string().contains("shorter directory"));
    }
}
