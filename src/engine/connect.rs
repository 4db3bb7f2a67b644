//! Opening every client's connection before a run: in parallel, each
//! prepared with its workload's statements, timed, and the server asked
//! for its version and settings once.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use std::sync::Arc;
use std::time::Duration;

use super::Connect;
use crate::driver::{Connection, DbResult, ServerInfo};
use crate::stats::histogram::Histogram;
use crate::UsageError;

/// Every client's connection, the server's description, connect latencies.
type Connected = (Vec<Box<dyn Connection>>, ServerInfo, Histogram);

/// Opens and prepares every client's connection in parallel; the first
/// connection also reports the server's version and settings. Returns the
/// connections, the server's description and each client's connect time.
pub(super) fn connect_all(
    connect: &(dyn Fn() -> DbResult<Box<dyn Connection>> + Send + Sync),
    sql: &[&[String]],
) -> anyhow::Result<Connected> {
    let threads = sql.len();
    let parallel = threads.clamp(1, 32);
    let next = AtomicU64::new(0);
    type Slot = Mutex<Option<Result<(Box<dyn Connection>, u64), String>>>;
    let results: Vec<Slot> = (0..threads).map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..parallel {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                if i >= threads {
                    break;
                }
                let t = Instant::now();
                let r = connect().map_err(|e| e.to_string()).and_then(|mut c| {
                    c.prepare_all(sql[i])
                        .map(|_| c)
                        .map_err(|e| format!("preparing the workload's statements failed: {e}"))
                });
                let ns = t.elapsed().as_nanos() as u64;
                *results[i].lock().unwrap() = Some(r.map(|c| (c, ns)));
            });
        }
    });
    let mut conns = Vec::with_capacity(threads);
    let mut latency = Histogram::new();
    for (i, r) in results.into_iter().enumerate() {
        match r.into_inner().unwrap().expect("every slot filled") {
            Ok((c, ns)) => {
                latency.record(ns);
                conns.push(c);
            }
            Err(e) => {
                return Err(UsageError(format!("client {i} could not connect: {e}")).into());
            }
        }
    }
    let server = conns[0]
        .server_info()
        .map_err(|e| anyhow::anyhow!("could not read the server's version and settings: {e}"))?;
    Ok((conns, server, latency))
}

/// Gives every connection in `conns` the statement time `limit`, and
/// returns `connect` giving it to each new connection too (clients
/// reconnect through it).
pub(super) fn limit_statements(
    conns: &mut [Box<dyn Connection>],
    connect: Connect,
    limit: Option<Duration>,
) -> anyhow::Result<Connect> {
    let Some(limit) = limit else {
        return Ok(connect);
    };
    for c in conns.iter_mut() {
        c.set_statement_timeout(limit)
            .map_err(|e| anyhow::anyhow!("could not set the statement time limit: {e}"))?;
    }
    Ok(Arc::new(move || {
        let mut c = connect()?;
        c.set_statement_timeout(limit)?;
        Ok(c)
    }))
}
