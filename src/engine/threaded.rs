//! One client on a thread of its own, the engine's first way to run
//! (and the only one for SQLite and the fake driver, which have no socket
//! for an event loop to wait on): its loop waits for each transaction's
//! start, runs it (transaction.rs) and records it, with the decisions in
//! client.rs, until the stop condition.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;

use anyhow::Context;

use crate::driver::Connection;
use crate::rand::Rng;
use crate::workload::{ClientScript, Workload};

use super::client::{reconnect_as, Client, Closed, Open};
use super::pacing::sleep_until;
use super::recorder::TxnBuffer;
use super::shard::Part;
use super::transaction::transaction;
use super::Shared;

/// One client's loop on a thread of its own: waits for each
/// transaction's start, runs it, records it, until the stop condition;
/// then says it is done.
pub(super) fn run(
    id: usize,
    mut conn: Box<dyn Connection>,
    mut script: Box<dyn ClientScript>,
    shared: &Shared,
) {
    let mut c = Client::new(id, shared, script.as_ref());
    let timeline = c.timeline;
    loop {
        if shared.lifecycle.stop.load(Ordering::Relaxed) {
            break;
        }
        let deferred = c.deferred_from.take();
        // When this transaction should start, and for which user.
        let ticket = match shared.dispatch.get() {
            _ if deferred.is_some() => None,
            Some(d) => match d.next(timeline.end) {
                Some(t) => Some(t),
                None => break,
            },
            None => {
                if let Some(at) = c.closed_loop_due() {
                    if !sleep_until(at, &shared.lifecycle.stop) {
                        break;
                    }
                }
                None
            }
        };
        let txn = match c.open(ticket, deferred) {
            Open::Go(txn) => txn,
            Open::Skip => continue,
            Open::Leave => break,
        };
        if c.reconnect_due() {
            drop(conn);
            match reconnect(id, shared, &mut c.buf) {
                Some(new) => conn = new,
                None => break,
            }
            c.reconnected();
            c.clear_buffer(txn.ticket);
        }
        c.begin(script.as_mut(), &txn);
        let end = transaction(
            conn.as_mut(),
            script.as_mut(),
            shared,
            c.stmt_kind,
            c.retry_also,
            &mut c.buf,
        );
        match c.close(script.as_mut(), end, &txn) {
            Closed::Next => {}
            Closed::Abandoned => return, // state stays in the transaction: counted by the timekeeper
            Closed::Leave => break,
            Closed::Reconnect => {
                drop(conn);
                match reconnect(id, shared, &mut c.buf) {
                    Some(new) => conn = new,
                    None => break,
                }
                c.reconnected();
                c.transaction_done(&txn);
            }
        }
    }
    c.leave();
    c.wait_closing();
    // The connection closes (dropped here), and its server session ends,
    // only once `wait_closing` returns: after the run's last reading of the
    // server.
}

/// Opens a new connection for client `id` and prepares the workload's
/// statements on it, trying again every 100 ms while the server is away.
/// Gives up (None) when the run stops. Each success counts as a reconnect.
fn reconnect(id: usize, shared: &Shared, buf: &mut TxnBuffer) -> Option<Box<dyn Connection>> {
    let c = reconnect_as(id, shared, buf)?;
    *shared.connections.interrupters[id]
        .lock()
        .unwrap_or_else(|p| p.into_inner()) = c.interrupter();
    Some(c)
}

/// The threads that run the clients, each with the clients it runs.
pub(super) type Handles = Vec<(JoinHandle<()>, std::ops::Range<usize>)>;

/// Starts one thread per client, each waiting at the gate it returns
/// (with the timekeeper) for the release.
pub(super) fn start(
    instances: &[&dyn Workload],
    conns: Vec<Box<dyn Connection>>,
    part: &Part,
    seed: u64,
    shared: &Arc<Shared>,
) -> anyhow::Result<(Arc<Barrier>, Handles)> {
    let n = conns.len();
    let gate = Arc::new(Barrier::new(n + 1));
    let handles = spawn(instances, conns, part, seed, shared, &gate)?;
    Ok((
        gate,
        handles
            .into_iter()
            .zip((0..n).map(|id| id..id + 1))
            .collect(),
    ))
}

fn spawn(
    instances: &[&dyn Workload],
    conns: Vec<Box<dyn Connection>>,
    part: &Part,
    seed: u64,
    shared: &Arc<Shared>,
    gate: &Arc<Barrier>,
) -> anyhow::Result<Vec<JoinHandle<()>>> {
    let per_instance = part.per_instance;
    let mut handles = Vec::with_capacity(conns.len());
    for (id, conn) in conns.into_iter().enumerate() {
        let g = part.clients.start + id;
        let script = instances[g / per_instance].client(
            g % per_instance,
            per_instance,
            Rng::for_client(seed, g as u64),
        );
        let shared = shared.clone();
        let gate = gate.clone();
        let h = std::thread::Builder::new()
            .name(format!("client-{g}"))
            .stack_size(512 * 1024)
            .spawn(move || {
                gate.wait();
                run(id, conn, script, &shared);
            })
            .context("could not start a client thread")?;
        handles.push(h);
    }
    Ok(handles)
}
