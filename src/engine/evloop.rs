//! Many clients on a few threads (`--client-threads N`, pgbench's `-j`):
//! each thread an event loop over its share of the connections, serving
//! every ready socket per wake-up, with the clients' think times and the
//! queue's arrivals as timers in the same loop. One thread per connection
//! (client.rs) costs a context switch or two per transaction and a thread
//! per connection; here a wake-up serves whatever is ready.
//!
//! The loop waits with epoll (`util::epoll`): sockets are registered once
//! for reading and writing, edge-triggered, and a client reads and writes
//! until its socket would block (evclient.rs), so no registration changes
//! per statement. A socket's event is passed to its connection
//! ([`Evented::woken`]) before anything else: a connection that found its
//! socket empty and had no event since waits for the answer to what it
//! sends without reading first. Timers are a heap of (instant, client); a
//! stale entry is recognised when it fires by asking the client again.
//! The loop sleeps until the earliest on epoll's own timeout, to the
//! nanosecond (`epoll_pwait2`); where the kernel counts that timeout only
//! in milliseconds, on a timerfd (`util::alarm`) instead, so an arrival
//! never starts up to a millisecond late. The timekeeper reaches a loop
//! through its waker: at the deadline (`client::abandon`) the loop
//! cancels what is still in flight and lets its clients go.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::driver::evented::Evented;
use crate::driver::Connection;
use crate::driver::Interrupter;
use crate::rand::Rng;
use crate::util::alarm::Alarm;
use crate::util::clock;
use crate::util::epoll::{precise_timers, Epoll, Events, Waker};
use crate::workload::Workload;

use super::client::wait_closing;
use super::evclient::{EvClient, Then};
use super::shard::Part;
use super::threaded::Handles;
use super::Shared;

/// The longest a loop sleeps without looking at the run's flags (a stop
/// reaches a sleeping threaded client within as long: `sleep_until`).
const LOOK_EVERY: Duration = Duration::from_millis(20);

/// Wakes a loop, as a client's interrupter: the timekeeper interrupts
/// clients at the deadline.
struct WakeLoop(Arc<Waker>);

impl Interrupter for WakeLoop {
    fn interrupt(&self) {
        self.0.wake();
    }
}

/// The clients of loop `k` of `loops`: a contiguous share of `n`.
pub(super) fn share(k: usize, loops: usize, n: usize) -> Range<usize> {
    k * n / loops..(k + 1) * n / loops
}

/// Starts `loops` event-loop threads (at most one per client), each
/// serving its share of the connections and waiting at the gate it returns
/// (with the timekeeper) for the release. Every connection must have an
/// evented form: a driver without one is refused by name.
pub(super) fn start(
    instances: &[&dyn Workload],
    conns: Vec<Box<dyn Connection>>,
    loops: usize,
    part: &Part,
    seed: u64,
    shared: &Arc<Shared>,
) -> anyhow::Result<(Arc<Barrier>, Handles)> {
    let loops = loops.clamp(1, conns.len().max(1));
    let mut evented = Vec::with_capacity(conns.len());
    for c in conns {
        match c.into_evented() {
            Ok(e) => evented.push(e),
            Err(c) => {
                return Err(crate::UsageError(format!(
                "--client-threads: a {} connection has no evented form; leave --client-threads out",
                c.dialect().name()
            ))
                .into())
            }
        }
    }
    let gate = Arc::new(Barrier::new(loops + 1));
    let handles = spawn(instances, evented, loops, part, seed, shared, &gate)?;
    Ok((gate, handles))
}

/// Starts `loops` threads, each serving its share of the connections,
/// waiting at `gate` for the release. Returns each thread with its clients.
fn spawn(
    instances: &[&dyn Workload],
    conns: Vec<Box<dyn Evented>>,
    loops: usize,
    part: &Part,
    seed: u64,
    shared: &Arc<Shared>,
    gate: &Arc<Barrier>,
) -> anyhow::Result<Handles> {
    let per_instance = part.per_instance;
    let n = conns.len();
    let mut conns = conns.into_iter();
    let mut handles = Vec::with_capacity(loops);
    for k in 0..loops {
        let ids = share(k, loops, n);
        let poll = Epoll::new().context("could not start an event loop")?;
        // The waker's token is past every client's.
        let waker =
            Arc::new(Waker::new(&poll, ids.len() as u64).context("could not start an event loop")?);
        let mut mine = Vec::with_capacity(ids.len());
        for id in ids.clone() {
            let conn = conns.next().expect("one connection per client");
            let g = part.clients.start + id;
            let script = instances[g / per_instance].client(
                g % per_instance,
                per_instance,
                Rng::for_client(seed, g as u64),
            );
            watch(&poll, conn.fd(), id - ids.start)
                .context("could not watch a connection's socket")?;
            *shared.connections.interrupters[id]
                .lock()
                .unwrap_or_else(|p| p.into_inner()) = Some(Box::new(WakeLoop(waker.clone())));
            mine.push((id, conn, script));
        }
        let shared = shared.clone();
        let gate = gate.clone();
        let h = std::thread::Builder::new()
            .name(format!("loop-{k}"))
            .spawn(move || {
                gate.wait();
                let clients = mine
                    .into_iter()
                    .map(|(id, conn, script)| EvClient::new(id, conn, script, &shared))
                    .collect();
                precise_timers();
                let clients = serve(clients, poll, &waker, &shared);
                wait_closing(&shared);
                // The connections close (their server sessions end) only now.
                drop(clients);
            })
            .context("could not start an event loop's thread")?;
        handles.push((h, ids));
    }
    Ok(handles)
}

/// What each client of a loop waits for, and how many have left.
struct Waits {
    then: Vec<Then>,
    gone: usize,
    timers: BinaryHeap<Reverse<(Instant, usize)>>,
    /// Clients waiting for the queue to have work for them.
    queued: Vec<usize>,
}

/// Watches client `i`'s socket: for reading and writing, edge-triggered.
fn watch(poll: &Epoll, fd: std::os::fd::RawFd, i: usize) -> std::io::Result<()> {
    poll.watch(fd, i as u64, true)
}

impl Waits {
    /// Client `i` now waits for `t`.
    fn set(&mut self, i: usize, t: Then) {
        if t == Then::Gone && self.then[i] != Then::Gone {
            self.gone += 1;
        }
        match t {
            Then::Timer(at) => self.timers.push(Reverse((at, i))),
            Then::Queue => self.queued.push(i),
            Then::Socket(_) | Then::Gone => {}
        }
        self.then[i] = t;
    }
}

/// Resumes client `i`, watching its new socket if it reconnected.
fn step(c: &mut EvClient<'_>, i: usize, poll: &Epoll, w: &mut Waits, shared: &Shared) -> Then {
    let t = c.resume();
    if let Some(fd) = c.take_new_socket() {
        if let Err(e) = watch(poll, fd, i) {
            shared
                .lifecycle
                .fail(|| format!("an event loop could not watch a new connection: {e}"));
        }
    }
    w.set(i, t);
    t
}

/// One loop: resumes each client when what it waits for comes, until all
/// have left. Returns them with their connections, which stay open until
/// the run's last reading of the server.
fn serve<'a>(
    mut clients: Vec<EvClient<'a>>,
    mut poll: Epoll,
    waker: &Waker,
    shared: &Shared,
) -> Vec<EvClient<'a>> {
    let n = clients.len();
    let mut events = Events::with_capacity(n.clamp(16, 1024));
    let mut w = Waits {
        then: vec![Then::Queue; n],
        gone: 0,
        timers: BinaryHeap::new(),
        queued: Vec::new(),
    };
    let mut due = Vec::new();
    // A timerfd for the timers, only where epoll's timeout counts whole
    // milliseconds; its token is past the waker's. Without one (out of
    // descriptors) timers keep epoll's millisecond.
    let alarm_token = n as u64 + 1;
    let mut alarm = (!poll.precise())
        .then(|| Alarm::new().ok())
        .flatten()
        .filter(|a| poll.watch(a.raw_fd(), alarm_token, false).is_ok());
    for (i, c) in clients.iter_mut().enumerate() {
        step(c, i, &poll, &mut w, shared);
    }
    let life = &shared.lifecycle;
    let end = shared.timeline.get().and_then(|t| t.end);
    while w.gone < n {
        if life.abandon.load(Ordering::Acquire) {
            // The deadline: what is in flight is given up, the rest leave.
            for (i, c) in clients.iter_mut().enumerate() {
                let t = c.abandon();
                w.set(i, t);
            }
            break;
        }
        let now = clock::now();
        due.clear();
        if life.stop.load(Ordering::Relaxed) {
            // Every client not in a statement leaves now.
            due.extend((0..n).filter(|&i| matches!(w.then[i], Then::Timer(_) | Then::Queue)));
            w.queued.clear();
        } else if !w.queued.is_empty() && end.is_some_and(|e| now >= e) {
            // The timekeeper closes the queue at the end: those waiting on
            // it learn so when they ask.
            due.append(&mut w.queued);
        } else {
            while let Some(&Reverse((at, i))) = w.timers.peek() {
                if at > now {
                    break;
                }
                w.timers.pop();
                // A stale entry: the client waits for something else now.
                if w.then[i] == Then::Timer(at) {
                    due.push(i);
                }
            }
            // A timer may have made work due for those waiting on the queue.
            if !due.is_empty() {
                due.append(&mut w.queued);
            }
        }
        for &i in &due {
            step(&mut clients[i], i, &poll, &mut w, shared);
        }
        let next = w.timers.peek().map(|Reverse((at, _))| *at);
        let mut timeout = next
            .map_or(LOOK_EVERY, |at| at.saturating_duration_since(now))
            .min(LOOK_EVERY);
        if let (Some(at), Some(a)) = (next, alarm.as_mut()) {
            // Set from the clock now: stepping the due clients took time.
            if !timeout.is_zero() && timeout < LOOK_EVERY && a.set(at, clock::now()).is_ok() {
                timeout = LOOK_EVERY;
            }
        }
        if let Err(e) = poll.wait(&mut events, timeout) {
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            // The loop cannot wait any more: the run stops with the reason.
            life.fail(|| format!("an event loop failed: {e}"));
            continue;
        }
        let mut ended = false;
        for token in events.tokens() {
            if token == alarm_token {
                if let Some(a) = alarm.as_mut() {
                    a.clear(); // its timers are looked at the top
                }
                continue;
            }
            let i = token as usize;
            if i >= n {
                waker.clear(); // the flags are read at the top
                continue;
            }
            // Whatever it waits for, what the event said may be unread.
            clients[i].woken();
            if let Then::Socket(_) = w.then[i] {
                let t = step(&mut clients[i], i, &poll, &mut w, shared);
                ended |= !matches!(t, Then::Socket(_));
            }
        }
        // A transaction ended on this loop: its user may be due again, or
        // the queue may have moved; the clients waiting on it ask.
        if ended && !w.queued.is_empty() {
            for i in std::mem::take(&mut w.queued) {
                step(&mut clients[i], i, &poll, &mut w, shared);
            }
        }
    }
    clients
}
