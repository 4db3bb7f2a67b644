//! The run engine: N clients, each on its own connection, driving a
//! workload's transactions until a stop condition, with warmup, retries,
//! per-interval reporting, a hard deadline and client CPU accounting.
//!
//! The engine knows neither the workload nor the database: it asks the
//! workload for [`ClientScript`]s and executes their operations on
//! [`Connection`]s, timing each one with a monotonic clock (see docs/architecture.md,
//! "Contracts that keep the numbers honest").
//!
//! Timeline of one run (`t0` = all clients connected and released):
//! ```text
//! t0 ── warmup ──► measure_start ── time ──► end ── grace ──► deadline
//! ```
//! A transaction counts in the measured window if it *started* at or after
//! `measure_start`. After `end` no client starts a transaction; in-flight ones
//! may finish until the deadline, after which hung clients are interrupted,
//! their transactions counted as abandoned, and the run reported as it stands.

mod client;
mod connect;
pub mod derive;
pub mod merge;
pub mod pacing;
pub mod point;
pub mod recorder;
pub mod recover;
pub mod release;
mod result;
pub mod shard;
pub mod users;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Barrier, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::driver::DbResult;
use crate::driver::{Connection, ErrorSet, Interrupter};
use crate::rand::Rng;
use crate::workload::Workload;

/// Opens a new connection to the run's target. Owned and shareable, because
/// clients call it again to re-establish a lost connection.
pub type Connect = Arc<dyn Fn() -> DbResult<Box<dyn Connection>> + Send + Sync>;

use self::recorder::Recorder;
use crate::metrics::cpu::{self, CpuTimes};
use crate::metrics::sampler::Sampler;

/// How a run is driven. Built by the CLI (or a study runner) from options;
/// serialisable, because a distributed run's coordinator sends it to its
/// workers.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RunConfig {
    /// Number of clients, each with its own connection.
    pub threads: usize,
    /// Length of the measured window; None = no time limit.
    pub time: Option<Duration>,
    /// Total transactions to run in the measured window, across clients.
    pub events: Option<u64>,
    /// Transactions per client in the measured window (Super Smack's model).
    pub rounds: Option<u64>,
    /// Time before the measured window whose samples are discarded.
    pub warmup: Duration,
    /// Emit one interval sample this often.
    pub report_interval: Option<Duration>,
    /// The latency percentile each interval sample carries as its headline.
    pub interval_percentile: f64,
    /// Retries of one transaction after retryable errors; None = unlimited.
    pub max_retries: Option<u64>,
    /// Non-retryable error kinds that fail the transaction instead of the run.
    pub ignore_errors: ErrorSet,
    /// How long in-flight transactions may take to finish after the end
    /// (or after an interrupt) before they are abandoned.
    pub grace: Duration,
    /// Seed of the run; client `i` draws from `Rng::for_client(seed, i)`.
    pub seed: u64,
    /// Close and re-open each client's connection every N transactions
    /// (sysbench's `--reconnect`).
    pub reconnect_every: Option<u64>,
    /// A hard limit on the whole run from its start (connecting, warmup and
    /// measured window): at it, no client starts another transaction, and
    /// what is still in flight after `grace` is abandoned (a study's
    /// `point_timeout`). None: no limit beyond the stop condition's.
    pub timeout: Option<Duration>,
    /// Closed loop (the default), open loop at a rate, or users on a pool
    /// of connections; think time and the latency limit.
    pub pacing: Pacing,
    /// Run only this shard of the clients, users, events and rate
    /// (`--shard I/N`); None: the whole run.
    pub shard: Option<Shard>,
    /// Release the clients, once connected, at the instant this hook
    /// returns (a coordinated start, `release.rs`); None: at once.
    #[serde(skip)]
    pub release: Option<release::Release>,
}

pub use crate::record::StopReason;
use connect::connect_all;
pub use pacing::Pacing;
use result::sample;
pub use result::{ConnectStats, IntervalSample, PacedSample, RunResult, TypeResult};
pub use shard::Shard;

/// One client's state and counters, as the coordinator reads them.
#[repr(align(128))]
struct Slot {
    /// IDLE, IN_TXN, DONE or RECONNECTING.
    state: AtomicU8,
    /// Transactions in the measured window.
    txns: AtomicU64,
    /// Nanoseconds spent in them.
    busy_ns: AtomicU64,
}

const IDLE: u8 = 0;
const IN_TXN: u8 = 1;
const DONE: u8 = 2;
/// Re-establishing a lost connection: not a transaction, never abandoned.
const RECONNECTING: u8 = 3;

/// Points in time shared by the clients, fixed when they are released.
struct Timeline {
    /// When the clients were released.
    t0: Instant,
    measure_start: Instant,
    end: Option<Instant>,
}

/// State shared between the clients and the coordinating thread.
struct Shared {
    recorder: Recorder,
    timeline: OnceLock<Timeline>,
    /// Set when clients must not start another transaction.
    stop: AtomicBool,
    /// Set at the deadline: whatever is in flight is abandoned.
    abandon: AtomicBool,
    tickets: AtomicU64,
    events: Option<u64>,
    rounds: Option<u64>,
    max_retries: Option<u64>,
    ignore: ErrorSet,
    /// Per instance: error kinds its workload retries besides the usual ones.
    retry_also: Vec<ErrorSet>,
    /// Per client: what it is doing and what it measured, each on its own
    /// cache line (clients on different cores store to these every
    /// transaction).
    slots: Vec<Slot>,
    fatal: Mutex<Option<String>>,
    done: Mutex<usize>,
    done_cv: Condvar,
    /// Set (under `done`) once the run's last reading of the machine and
    /// the server is taken: until then finished clients keep their
    /// connections, so the server's sessions do not end inside the window.
    closing: AtomicBool,
    /// Per instance: statement id → kind index; then the kind indexes of
    /// BEGIN and COMMIT.
    stmt_kind: Vec<Vec<u16>>,
    begin_kind: u16,
    commit_kind: u16,
    /// For reconnects: how to connect, and what to prepare (per instance).
    connect: Connect,
    sql: Vec<Vec<String>>,
    /// Clients per instance: client `i` belongs to instance `i / per_instance`.
    per_instance: usize,
    /// The run-wide number of this process's client 0 (a shard's first).
    first_client: usize,
    reconnect_every: Option<u64>,
    /// Per client: how to interrupt its current connection at the deadline.
    interrupters: Vec<Mutex<Option<Box<dyn Interrupter>>>>,
    pacing: Pacing,
    /// The queue of a queued run, from the clients' release on.
    dispatch: OnceLock<pacing::Dispatch>,
    /// With a rate and a latency limit: skip arrivals this far behind.
    skip_after: Option<Duration>,
    seed: u64,
}

/// Runs `workload` on connections from `connect` as `cfg` says. `cancel` is
/// polled to stop early (Ctrl-C); `on_interval` receives each interval sample.
pub fn run(
    workload: &dyn Workload,
    connect: Connect,
    cfg: &RunConfig,
    cancel: &AtomicBool,
    on_interval: &mut dyn FnMut(&IntervalSample),
) -> anyhow::Result<RunResult> {
    run_instances(&[workload], connect, cfg, cancel, on_interval, None)
}

/// Runs several instances of a workload at once (each on its own tables, as
/// seed 001 ran 8 sysbench processes), `cfg.threads` clients each, measured
/// as one run: one timeline, merged counters and histograms. A `sampler`
/// is told when the clients are released, when the measured window
/// begins and when the run ends.
pub fn run_instances(
    instances: &[&dyn Workload],
    connect: Connect,
    cfg: &RunConfig,
    cancel: &AtomicBool,
    on_interval: &mut dyn FnMut(&IntervalSample),
    sampler: Option<&Sampler>,
) -> anyhow::Result<RunResult> {
    assert!(!instances.is_empty(), "at least one workload instance");
    let started = Instant::now();
    let hard_end = cfg.timeout.map(|t| started + t);
    let per_instance = cfg.threads.max(1);
    // A shard runs its part of the run's clients under their run-wide
    // numbers, its share of the events and the pacing (shard.rs).
    let all = 0..per_instance * instances.len();
    let clients = cfg.shard.map_or(all.clone(), |s| s.range(all.end));
    let threads = clients.len();
    let pacing = match cfg.shard {
        Some(s) => s.pacing(&cfg.pacing),
        None => cfg.pacing.clone(),
    };
    let events = match cfg.shard {
        Some(s) => cfg.events.map(|e| s.share(e)),
        None => cfg.events,
    };
    let stream_seed = cfg.shard.map_or(cfg.seed, |s| s.stream_seed(cfg.seed));
    let mut kinds: Vec<String> = Vec::new();
    let mut kind_of = |name: &str| -> u16 {
        match kinds.iter().position(|k| k == name) {
            Some(i) => i as u16,
            None => {
                kinds.push(name.to_string());
                (kinds.len() - 1) as u16
            }
        }
    };
    // Statement kinds are shared by name across instances, so their
    // latencies merge (point_select of every instance is one row).
    let stmt_kind: Vec<Vec<u16>> = instances
        .iter()
        .map(|w| w.statements().iter().map(|s| kind_of(&s.kind)).collect())
        .collect();
    // Transaction types: the first instance's (instances are one workload).
    let types = instances[0].transaction_types();
    let begin_kind = kind_of("begin");
    let commit_kind = kind_of("commit");
    let sql: Vec<Vec<String>> = instances
        .iter()
        .map(|w| w.statements().iter().map(|s| s.sql.clone()).collect())
        .collect();
    let client_sql: Vec<&[String]> = clients
        .clone()
        .map(|g| sql[g / per_instance].as_slice())
        .collect();

    let connect_start = Instant::now();
    let (conns, server, connect_latency) = connect_all(&*connect, &client_sql)?;
    let connect_stats = ConnectStats {
        wall: connect_start.elapsed(),
        latency: connect_latency,
    };
    let interrupters = conns.iter().map(|c| Mutex::new(c.interrupter())).collect();

    let shared = Arc::new(Shared {
        recorder: Recorder::new(threads, kinds.len(), types.len()),
        timeline: OnceLock::new(),
        stop: AtomicBool::new(false),
        abandon: AtomicBool::new(false),
        tickets: AtomicU64::new(0),
        events,
        rounds: cfg.rounds,
        max_retries: cfg.max_retries,
        ignore: cfg.ignore_errors,
        retry_also: instances
            .iter()
            .map(|w| {
                let mut set = ErrorSet::NONE;
                for &k in w.retry_also() {
                    set.insert(k);
                }
                set
            })
            .collect(),
        slots: (0..threads)
            .map(|_| Slot {
                state: AtomicU8::new(IDLE),
                txns: AtomicU64::new(0),
                busy_ns: AtomicU64::new(0),
            })
            .collect(),
        fatal: Mutex::new(None),
        done: Mutex::new(0),
        done_cv: Condvar::new(),
        closing: AtomicBool::new(false),
        stmt_kind,
        begin_kind,
        commit_kind,
        connect,
        sql,
        per_instance,
        first_client: clients.start,
        reconnect_every: cfg.reconnect_every,
        interrupters,
        pacing: pacing.clone(),
        dispatch: OnceLock::new(),
        skip_after: pacing.skip_after(),
        seed: cfg.seed,
    });

    let gate = Arc::new(Barrier::new(threads + 1));
    let mut handles = Vec::with_capacity(threads);
    for (id, conn) in conns.into_iter().enumerate() {
        let g = clients.start + id;
        let script = instances[g / per_instance].client(
            g % per_instance,
            per_instance,
            Rng::for_client(cfg.seed, g as u64),
        );
        let shared = shared.clone();
        let gate = gate.clone();
        let h = std::thread::Builder::new()
            .name(format!("client-{g}"))
            .stack_size(512 * 1024)
            .spawn(move || {
                gate.wait();
                client::run(id, conn, script, &shared);
            })
            .context("could not start a client thread")?;
        handles.push(h);
    }

    // The queue, and what the workload keeps per user, are built before
    // the clients are released: a hundred million users take seconds to
    // build, and a window that spent them would report the client's set-up
    // as the server's throughput.
    let queued = pacing.queued(threads);
    let setup_start = Instant::now();
    let users = pacing.users.unwrap_or(threads);
    for w in instances {
        w.users(users);
    }
    let source = if let Some((rate, arrival)) = pacing.rate {
        Some(pacing::Source::rate(rate, arrival, stream_seed))
    } else if queued {
        Some(pacing::Source::users(
            users,
            pacing.think_time,
            pacing.ramp_up,
            stream_seed,
        ))
    } else {
        None
    };
    let setup = setup_start.elapsed();

    if let Some(r) = &cfg.release {
        r.wait()?;
    }
    let t0 = Instant::now();
    let released_unix_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64);
    let measure_start = t0 + cfg.warmup;
    let end = cfg.time.map(|t| measure_start + t);
    let _ = shared.timeline.set(Timeline {
        t0,
        measure_start,
        end,
    });
    if let Some(source) = source {
        let _ = shared.dispatch.set(pacing::Dispatch::new(t0, source));
    }
    let mut queue_before = 0u64;
    let mut cpu_start = (cfg.warmup.is_zero()).then(CpuTimes::now);
    // The coordinator keeps the run's time — the bounding readings, the
    // interval ticks, the deadline — and sleeps otherwise: at a real-time
    // priority where allowed, so a thousand clients released at once do
    // not delay its first reading by seconds.
    let realtime = crate::util::priority::realtime_thread();
    gate.wait();
    if let Some(m) = sampler {
        m.released(cpu_start.is_some());
    }

    // Coordinate: interval samples, warmup boundary, cancellation, deadline.
    // Each interval goes to `on_interval` and is not kept: a long run's
    // memory does not grow with its length (its caller writes them out).
    let mut last_tick = t0;
    // Shards to totals, every recorder::COLLECT_EVERY (why: recorder.rs);
    // the next interval taken trims the shards' interval histograms.
    let (mut last_collect, mut trim) = (t0, false);
    let mut deadline = end.map(|e| e + cfg.grace);
    let mut interrupted = false;
    let mut timed_out = false;
    let mut abandoned = 0u64;
    let finished_at = loop {
        let now = Instant::now();
        if cpu_start.is_none() && now >= measure_start {
            cpu_start = Some(CpuTimes::now());
            if let Some(m) = sampler {
                m.measure_start();
            }
        }
        if let Some(iv) = cfg.report_interval {
            if now >= last_tick + iv {
                let acc = shared.recorder.take_interval(std::mem::take(&mut trim));
                let s = sample(
                    cfg.interval_percentile,
                    &acc,
                    t0,
                    last_tick..now,
                    measure_start,
                    threads,
                    shared.dispatch.get().map(|d| (d, &mut queue_before)),
                );
                on_interval(&s);
                last_tick = now;
            }
        } else if std::mem::take(&mut trim) {
            shared.recorder.take_interval(true); // unread: let go
        }
        // After the interval is taken: the interval ends at `now`, and the
        // arrivals it counts must not include those of the collection.
        if now >= last_collect + recorder::COLLECT_EVERY {
            shared.recorder.collect();
            last_collect = now;
            trim = true;
        }
        if !interrupted && cancel.load(Ordering::Relaxed) {
            interrupted = true;
            shared.stop.store(true, Ordering::Relaxed);
            let d = now + cfg.grace;
            deadline = Some(deadline.map_or(d, |x| x.min(d)));
        }
        if !timed_out && !interrupted && hard_end.is_some_and(|h| now >= h) {
            timed_out = true;
            shared.stop.store(true, Ordering::Relaxed);
            let d = now + cfg.grace;
            deadline = Some(deadline.map_or(d, |x| x.min(d)));
        }
        if shared.fatal.lock().unwrap().is_some() && !shared.stop.load(Ordering::Relaxed) {
            shared.stop.store(true, Ordering::Relaxed);
        }
        if shared.stop.load(Ordering::Relaxed) && deadline.is_none() {
            deadline = Some(now + cfg.grace);
        }
        // Clients waiting on the queue for a transaction that will never
        // come (the end, or a stop) are let go.
        if let Some(d) = shared.dispatch.get() {
            if shared.stop.load(Ordering::Relaxed) || end.is_some_and(|e| now >= e) {
                d.stop();
            }
        }
        if let Some(d) = deadline {
            if now >= d {
                abandoned = client::abandon(&shared);
                break d;
            }
        }
        // Sleep until the next thing to do, or until every client is done.
        let mut wake = now + Duration::from_millis(50);
        if let Some(iv) = cfg.report_interval {
            wake = wake.min(last_tick + iv);
        }
        if cpu_start.is_none() {
            wake = wake.min(measure_start);
        }
        if let Some(e) = end.filter(|e| now < *e) {
            wake = wake.min(e);
        }
        if let Some(h) = hard_end.filter(|_| !timed_out) {
            wake = wake.min(h);
        }
        if let Some(d) = deadline {
            wake = wake.min(d);
        }
        let done = shared.done.lock().unwrap();
        if *done == threads {
            break Instant::now();
        }
        let timeout = wake.saturating_duration_since(Instant::now());
        let (done, _) = shared.done_cv.wait_timeout(done, timeout).unwrap();
        if *done == threads {
            break Instant::now();
        }
    };
    if realtime {
        crate::util::priority::normal_thread();
    }
    let cpu_end = CpuTimes::now();
    if let Some(m) = sampler {
        m.end();
    }
    {
        // Under `done`, so no client between its check and its wait misses it.
        let _done = shared.done.lock().unwrap();
        shared.closing.store(true, Ordering::Release);
        shared.done_cv.notify_all();
    }

    // Join the clients that finished; a client stuck in a driver call after
    // the deadline is left behind rather than waited for.
    for (id, h) in handles.into_iter().enumerate() {
        if shared.slots[id].state.load(Ordering::Acquire) == DONE {
            let _ = h.join();
        }
    }
    let last = shared.recorder.take_interval(false);
    if cfg.report_interval.is_some() && (last.counters.queries() > 0 || last.counters.failed > 0) {
        let s = sample(
            cfg.interval_percentile,
            &last,
            t0,
            last_tick..finished_at,
            measure_start,
            threads,
            shared.dispatch.get().map(|d| (d, &mut queue_before)),
        );
        on_interval(&s);
    }

    let totals = shared.recorder.totals();
    let mut counters = totals.counters;
    // What was due in the window and never handed to a connection is
    // offered load that was not sent.
    let offered = shared.dispatch.get().map(|d| {
        let window_end = end.map_or(finished_at, |e| e.min(finished_at));
        let untaken = d.untaken_between(measure_start, window_end);
        counters.unstarted += untaken;
        counters.arrivals + untaken
    });
    let clients = shared
        .slots
        .iter()
        .map(|s| {
            (
                s.txns.load(Ordering::Relaxed),
                s.busy_ns.load(Ordering::Relaxed) as f64 / 1e9,
            )
        })
        .collect();
    let fatal = shared.fatal.lock().unwrap().clone();
    let stop = if fatal.is_some() {
        StopReason::Aborted
    } else if interrupted {
        StopReason::Interrupted
    } else if timed_out {
        StopReason::Timeout
    } else if cfg.rounds.is_some() && end.is_none_or(|e| finished_at < e) {
        StopReason::Rounds
    } else if events.is_some() && end.is_none_or(|e| finished_at < e) {
        StopReason::Events
    } else {
        StopReason::Time
    };
    Ok(RunResult {
        threads,
        statement_kinds: kinds,
        warmup: cfg.warmup,
        measured: finished_at.saturating_duration_since(measure_start),
        counters,
        abandoned,
        txn_latency: totals.latency,
        service: queued.then_some(totals.service),
        lag: queued.then_some(totals.lag),
        offered,
        stmt_latency: totals.statements,
        types: types
            .into_iter()
            .zip(totals.types)
            .zip(totals.types_failed)
            .map(|((t, latency), failed)| TypeResult { t, latency, failed })
            .collect(),
        clients,
        cpu: cpu_start.map(|s| cpu_end.since(&s)).unwrap_or_default(),
        cpus: cpu::available_cpus(),
        stop,
        connect: connect_stats,
        setup: queued.then_some(setup),
        fatal,
        server,
        released_unix_us,
    })
}

#[cfg(test)]
mod pacing_tests;
#[cfg(test)]
mod series_tests;
#[cfg(test)]
mod shard_tests;
#[cfg(test)]
mod tests;
