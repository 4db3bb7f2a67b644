//! A server behind a connection pooler on this machine: the process
//! listening where the client connects is then PgBouncer, and the server's
//! CPU is the pooler's and the database's together — the server side of
//! the benchmark, as a direct run's is the database's alone, so pooled
//! against direct shows the pooler's cost per transaction.
//!
//! The database behind it is found by the port it reports through the
//! pooler (`SHOW port`), listening on this machine's loopback or on a unix
//! socket `.s.PGSQL.PORT` in any directory.

use std::path::Path;

use super::proc::sockets;
use crate::driver::{self, Target, TargetKind};

/// The pooler at `listener` and the database behind it: (database's pid,
/// what the record says about how they were found), or None when the
/// listener is not a pooler. With the database out of sight, the pooler
/// alone, said so.
pub(super) fn behind(proc: &Path, target: &Target, listener: u32) -> Option<(Option<u32>, String)> {
    let comm = std::fs::read_to_string(proc.join(listener.to_string()).join("comm")).ok()?;
    if comm.trim() != "pgbouncer" || !matches!(target.kind, TargetKind::Postgres(_)) {
        return None;
    }
    let port = driver::connect(target)
        .ok()
        .and_then(|mut c| c.query_text("SHOW port").ok())
        .and_then(|rows| {
            rows.into_iter()
                .next()?
                .into_iter()
                .next()??
                .parse::<u16>()
                .ok()
        });
    let Some(port) = port else {
        return Some((
            None,
            format!("PgBouncer (pid {listener}): the port of the database behind it could not be read; its CPU is the pooler's alone"),
        ));
    };
    match database(proc, port) {
        Some(pid) => Some((
            Some(pid),
            format!("PgBouncer (pid {listener}) in front of PostgreSQL (pid {pid}, port {port}): the server's CPU is both"),
        )),
        None => Some((
            None,
            format!("PgBouncer (pid {listener}); the PostgreSQL behind it (port {port}) is not on this machine: its CPU is the pooler's alone"),
        )),
    }
}

/// The process listening on `port` on the loopback or on a PostgreSQL
/// unix socket of that port.
fn database(proc: &Path, port: u16) -> Option<u32> {
    let mut inodes = Vec::new();
    for f in ["net/tcp", "net/tcp6"] {
        if let Ok(text) = std::fs::read_to_string(proc.join(f)) {
            inodes.extend(sockets::tcp_listeners(&text, port));
        }
    }
    let name = format!(".s.PGSQL.{port}");
    if let Ok(text) = std::fs::read_to_string(proc.join("net/unix")) {
        inodes.extend(sockets::unix_listeners_where(&text, |p| {
            p.file_name().is_some_and(|n| n == name.as_str())
        }));
    }
    sockets::holders(proc, &inodes).first().copied()
}
