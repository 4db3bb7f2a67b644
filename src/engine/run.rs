//! One run as the timekeeper drives it, in four phases:
//!
//! 1. [`Run::connect`]: everything before the clients may start — which
//!    clients this process runs, the statement kinds, every client's
//!    connection, the state the clients share, their threads (waiting at a
//!    gate), the pacing's queue and what the workload keeps per user.
//! 2. [`Run::release`]: waits for the start (at once, or a distributed
//!    run's common instant), fixes the timeline and lets the clients go.
//! 3. [`Run::keep_time`]: keeps the run's time on a [`Clock`] — interval
//!    samples, the measured window's start, cancellation, the hard timeout,
//!    a fatal error, the deadline — until the clients are done or the
//!    deadline abandons what is still in flight.
//! 4. [`Run::finish`]: the last readings, the clients let go and joined,
//!    the last interval, and the [`RunResult`].
//!
//! The clients (client.rs) see none of this but [`Shared`]: the
//! timekeeper's state is its own, so it adds nothing to their path.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Barrier, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::connect::{connect_all, limit_statements};
use super::kinds::Kinds;
use super::recorder::{self, IntervalAcc, Recorder};
use super::result::sample;
use super::shard::Part;
use super::{
    client, evloop, pacing, threaded, Connections, Done, Lifecycle, Rules, Shared, Slot, Timeline,
    DONE, IDLE,
};
use super::{Connect, ConnectStats, IntervalSample, RunConfig, RunResult, StopReason, TypeResult};
use crate::driver::{Connection, ServerInfo};
use crate::metrics::cpu::{self, CpuTimes};
use crate::metrics::sampler::Sampler;
use crate::workload::{TxnType, Workload};

/// A run from its clients' connections to its result: what the
/// timekeeper holds besides the state it shares with the clients.
pub(super) struct Run<'a> {
    cfg: &'a RunConfig,
    /// Told when the clients are released, when the measured window
    /// begins and when the run ends.
    sampler: Option<&'a Sampler>,
    /// The hard timeout's instant, counted from the run's call (connecting
    /// included).
    hard_end: Option<Instant>,
    /// This process's clients.
    threads: usize,
    /// This process's share of the run's events.
    events: Option<u64>,
    /// The workload's transaction types.
    types: Vec<TxnType>,
    shared: Arc<Shared>,
    /// Where the client threads wait for the release.
    gate: Arc<Barrier>,
    /// The clients' threads, each with the clients it runs.
    handles: threaded::Handles,
    /// A queued run's work, until the release gives it its start.
    source: Option<pacing::Source>,
    /// Work comes from a queue (a rate, or users on a pool of connections).
    queued: bool,
    /// How long the queue and the users took to build.
    setup: Duration,
    connect: ConnectStats,
    server: ServerInfo,
}

/// The run's time as the timekeeper keeps it, from the release on.
pub(super) struct Clock {
    t0: Instant,
    measure_start: Instant,
    end: Option<Instant>,
    /// The release in microseconds since the Unix epoch (0 if the system
    /// clock is before it).
    released_unix_us: u64,
    /// This process's CPU at the measured window's start, once reached.
    cpu_start: Option<CpuTimes>,
    /// Where the current interval began.
    last_tick: Instant,
    /// Shards to totals, every recorder::COLLECT_EVERY (why: recorder.rs);
    /// the next interval taken trims the shards' interval histograms.
    last_collect: Instant,
    trim: bool,
    /// A queued run: the previous interval's queue length.
    queue_before: u64,
    /// From it, whatever is still in flight is abandoned.
    deadline: Option<Instant>,
    interrupted: bool,
    timed_out: bool,
    /// When the timekeeper stopped the clients (Ctrl-C, the hard timeout):
    /// the window runs at least to here.
    stopped_at: Option<Instant>,
    /// The timekeeper runs at a real-time priority until the run ends.
    realtime: bool,
}

/// How the timekeeping ended: when, and how many transactions in flight
/// were abandoned at the deadline.
pub(super) struct Ended {
    at: Instant,
    abandoned: u64,
    /// Of the abandoned, the measured window's arrivals (queued runs).
    abandoned_arrivals: u64,
}

impl<'a> Run<'a> {
    /// Connects this process's clients and readies everything they need,
    /// leaving them at the gate until [`Run::release`].
    pub fn connect(
        instances: &[&dyn Workload],
        connect: Connect,
        cfg: &'a RunConfig,
        sampler: Option<&'a Sampler>,
    ) -> anyhow::Result<Run<'a>> {
        assert!(!instances.is_empty(), "at least one workload instance");
        instances[0]
            .check_clients(cfg.threads)
            .map_err(crate::UsageError)?;
        let started = Instant::now();
        let part = Part::of(cfg, instances.len());
        let threads = part.clients.len();
        let kinds = Kinds::of(instances);
        // Transaction types: the first instance's (instances are one workload).
        let types = instances[0].transaction_types();
        let sql: Vec<Vec<String>> = instances
            .iter()
            .map(|w| w.statements().iter().map(|s| s.sql.clone()).collect())
            .collect();
        let client_sql: Vec<&[String]> = part
            .clients
            .clone()
            .map(|g| sql[g / part.per_instance].as_slice())
            .collect();

        let connect_start = Instant::now();
        let (mut conns, server, connect_latency) = connect_all(&*connect, &client_sql)?;
        let shard = cfg.shard.map(|s| (s.index, s.count));
        if let Some(first) = conns.first_mut() {
            for w in instances {
                w.ready(first.as_mut(), shard)?;
            }
        }
        // The workload's statement time limit, once the server has
        // described itself and the workload readied its data (neither is
        // a statement the limit is for); a reconnection gets it too.
        let connect = limit_statements(&mut conns, connect, instances[0].statement_timeout())?;
        let connect_stats = ConnectStats {
            wall: connect_start.elapsed(),
            latency: connect_latency,
        };
        // On event loops it is the loop's waker (no socket duplicated).
        let own = |c: &dyn Connection| cfg.client_threads.is_none().then(|| c.interrupter());
        let interrupters = conns
            .iter()
            .map(|c| Mutex::new(own(&**c).flatten()))
            .collect();

        let recorder = Recorder::new(threads, kinds.names.len(), types.len());
        let shared = Arc::new(Shared {
            recorder,
            timeline: OnceLock::new(),
            slots: (0..threads)
                .map(|_| Slot {
                    state: AtomicU8::new(IDLE),
                    txns: AtomicU64::new(0),
                    busy_ns: AtomicU64::new(0),
                })
                .collect(),
            tickets: AtomicU64::new(0),
            lifecycle: Lifecycle::new(),
            rules: Rules::new(cfg, part.events, instances),
            kinds,
            connections: Connections {
                connect,
                sql,
                interrupters,
            },
            per_instance: part.per_instance,
            first_client: part.clients.start,
            pacing: part.pacing.clone(),
            dispatch: OnceLock::new(),
            skip_after: part.pacing.skip_after(),
            seed: cfg.seed,
        });
        let (gate, handles) = match cfg.client_threads {
            None => threaded::start(instances, conns, &part, cfg.seed, &shared)?,
            Some(loops) => evloop::start(instances, conns, loops, &part, cfg.seed, &shared)?,
        };

        // The queue and the workload's per-user state are built before the
        // release: 10^8 users take seconds, which a window would count.
        let queued = part.pacing.queued(threads);
        let setup_start = Instant::now();
        let users = part.pacing.users().unwrap_or(threads);
        for w in instances {
            w.users(users);
        }
        // As many users as connections are a closed loop: nothing queues.
        let source = match part.pacing.mode {
            pacing::Mode::Open { rate, arrival } => {
                Some(pacing::Source::rate(rate, arrival, part.stream_seed))
            }
            pacing::Mode::Users {
                users,
                think_time,
                ramp_up,
            } if queued => Some(pacing::Source::users(
                users,
                think_time,
                ramp_up,
                part.stream_seed,
            )),
            _ => None,
        };
        let setup = setup_start.elapsed();

        Ok(Run {
            cfg,
            sampler,
            hard_end: cfg.timeout.map(|t| started + t),
            threads,
            events: part.events,
            types,
            shared,
            gate,
            handles,
            source,
            queued,
            setup,
            connect: connect_stats,
            server,
        })
    }

    /// Waits for the start (`cfg.release`: a distributed run's common
    /// instant; at once without one), fixes the run's timeline from it and
    /// lets the clients go.
    pub fn release(&mut self) -> anyhow::Result<Clock> {
        if let Some(r) = &self.cfg.release {
            r.wait()?;
        }
        let t0 = Instant::now();
        let released_unix_us = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64);
        let measure_start = t0 + self.cfg.warmup;
        let end = self.cfg.time.map(|t| measure_start + t);
        let _ = self.shared.timeline.set(Timeline {
            t0,
            measure_start,
            end,
        });
        if let Some(source) = self.source.take() {
            let _ = self.shared.dispatch.set(pacing::Dispatch::new(t0, source));
        }
        let cpu_start = (self.cfg.warmup.is_zero()).then(CpuTimes::now);
        // The timekeeper keeps the run's time — the bounding readings, the
        // interval ticks, the deadline — and sleeps otherwise: at a real-time
        // priority where allowed, so a thousand clients released at once do
        // not delay its first reading by seconds.
        let realtime = crate::util::priority::realtime_thread();
        self.gate.wait();
        if let Some(m) = self.sampler {
            m.released(cpu_start.is_some());
        }
        Ok(Clock {
            t0,
            measure_start,
            end,
            released_unix_us,
            cpu_start,
            last_tick: t0,
            last_collect: t0,
            trim: false,
            queue_before: 0,
            deadline: end.map(|e| e + self.cfg.grace),
            interrupted: false,
            timed_out: false,
            stopped_at: None,
            realtime,
        })
    }

    /// Keeps the run's time until every client is done or the deadline passes:
    /// interval samples, the warmup boundary, cancellation, the deadline.
    /// Each interval goes to `on_interval` and is not kept: a long run's
    /// memory does not grow with its length (its caller writes them out).
    pub fn keep_time(
        &self,
        clock: &mut Clock,
        cancel: &AtomicBool,
        on_interval: &mut dyn FnMut(&IntervalSample),
    ) -> Ended {
        loop {
            let now = Instant::now();
            self.window_start(clock, now);
            self.tick_interval(clock, now, on_interval);
            // After the interval is taken: the interval ends at `now`, and the
            // arrivals it counts must not include those of the collection.
            self.collect(clock, now);
            self.check_stop(clock, now, cancel);
            self.close_queue(clock, now);
            if let Some(d) = clock.deadline.filter(|d| now >= *d) {
                let (abandoned, abandoned_arrivals) = client::abandon(&self.shared);
                return Ended {
                    at: d,
                    abandoned,
                    abandoned_arrivals,
                };
            }
            if let Some(done) = self.wait_for_clients(self.next_wake(clock, now)) {
                return Ended {
                    at: Self::ended_at(clock, &done),
                    abandoned: 0,
                    abandoned_arrivals: 0,
                };
            }
        }
    }

    /// At the measured window's start: the CPU reading, the sampler's mark.
    fn window_start(&self, clock: &mut Clock, now: Instant) {
        if clock.cpu_start.is_none() && now >= clock.measure_start {
            clock.cpu_start = Some(CpuTimes::now());
            if let Some(m) = self.sampler {
                m.measure_start();
            }
        }
    }

    /// Takes the interval ending at `now` when one is due; without interval
    /// reports, lets a collection's trimmed interval go unread.
    fn tick_interval(
        &self,
        clock: &mut Clock,
        now: Instant,
        on_interval: &mut dyn FnMut(&IntervalSample),
    ) {
        if let Some(iv) = self.cfg.report_interval {
            if now >= clock.last_tick + iv {
                let acc = self
                    .shared
                    .recorder
                    .take_interval(std::mem::take(&mut clock.trim));
                on_interval(&self.interval(clock, &acc, now));
                clock.last_tick = now;
            }
        } else if std::mem::take(&mut clock.trim) {
            self.shared.recorder.take_interval(true); // unread: let go
        }
    }

    /// The interval from the last tick to `to`, as `on_interval` gets it.
    fn interval(&self, clock: &mut Clock, acc: &IntervalAcc, to: Instant) -> IntervalSample {
        sample(
            self.cfg.interval_percentile,
            acc,
            clock.t0,
            clock.last_tick..to,
            clock.measure_start,
            self.threads,
            self.shared
                .dispatch
                .get()
                .map(|d| (d, &mut clock.queue_before)),
        )
    }

    /// Moves the shards' data to the totals when a collection is due.
    fn collect(&self, clock: &mut Clock, now: Instant) {
        if now >= clock.last_collect + recorder::COLLECT_EVERY {
            self.shared.recorder.collect();
            clock.last_collect = now;
            clock.trim = true;
        }
    }

    /// Cancellation (Ctrl-C), the hard timeout and a fatal error stop the
    /// clients; what is in flight then has `grace` to finish.
    fn check_stop(&self, clock: &mut Clock, now: Instant, cancel: &AtomicBool) {
        let stop = &self.shared.lifecycle.stop;
        let grace = self.cfg.grace;
        if !clock.interrupted && cancel.load(Ordering::Relaxed) {
            clock.interrupted = true;
            clock.stopped_at.get_or_insert(now);
            stop.store(true, Ordering::Relaxed);
            let d = now + grace;
            clock.deadline = Some(clock.deadline.map_or(d, |x| x.min(d)));
        }
        if !clock.timed_out && !clock.interrupted && self.hard_end.is_some_and(|h| now >= h) {
            clock.timed_out = true;
            clock.stopped_at.get_or_insert(now);
            stop.store(true, Ordering::Relaxed);
            let d = now + grace;
            clock.deadline = Some(clock.deadline.map_or(d, |x| x.min(d)));
        }
        if self.shared.lifecycle.fatal.lock().unwrap().is_some() && !stop.load(Ordering::Relaxed) {
            stop.store(true, Ordering::Relaxed);
        }
        if stop.load(Ordering::Relaxed) && clock.deadline.is_none() {
            clock.deadline = Some(now + grace);
        }
    }

    /// Clients waiting on the queue for a transaction that will never
    /// come (the end, or a stop) are let go.
    fn close_queue(&self, clock: &Clock, now: Instant) {
        if let Some(d) = self.shared.dispatch.get() {
            if self.shared.lifecycle.stop.load(Ordering::Relaxed)
                || clock.end.is_some_and(|e| now >= e)
            {
                d.stop();
            }
        }
    }

    /// The next thing to do: an interval, the window's start, the end, the
    /// hard timeout, the deadline; a look at least every 50 ms.
    fn next_wake(&self, clock: &Clock, now: Instant) -> Instant {
        let mut wake = now + Duration::from_millis(50);
        if let Some(iv) = self.cfg.report_interval {
            wake = wake.min(clock.last_tick + iv);
        }
        if clock.cpu_start.is_none() {
            wake = wake.min(clock.measure_start);
        }
        if let Some(e) = clock.end.filter(|e| now < *e) {
            wake = wake.min(e);
        }
        if let Some(h) = self.hard_end.filter(|_| !clock.timed_out) {
            wake = wake.min(h);
        }
        if let Some(d) = clock.deadline {
            wake = wake.min(d);
        }
        wake
    }

    /// Sleeps until `wake`, or until every client is done: then what they
    /// said of their end, and the instant they were found done.
    fn wait_for_clients(&self, wake: Instant) -> Option<(Done, Instant)> {
        let life = &self.shared.lifecycle;
        let done = life.done.lock().unwrap();
        let done = if done.count == self.threads {
            done
        } else {
            let timeout = wake.saturating_duration_since(Instant::now());
            life.done_cv.wait_timeout(done, timeout).unwrap().0
        };
        (done.count == self.threads).then(|| (*done, Instant::now()))
    }

    /// The run's end once every client is done: the end of the last
    /// transaction, or the time limit (clients idle at the end, waiting for
    /// an arrival or a user), or the moment the timekeeper stopped them —
    /// whichever is latest, and never past the deadline. Not the moment
    /// the timekeeper woke to find them done, which a busy machine makes
    /// late. A client that never ran a transaction leaves only that moment.
    fn ended_at(clock: &Clock, (done, found): &(Done, Instant)) -> Instant {
        let reached_end = clock.end.filter(|_| done.by_end);
        let at = [done.last, reached_end, clock.stopped_at]
            .into_iter()
            .flatten()
            .max()
            .unwrap_or(*found);
        clock.deadline.map_or(at, |d| at.min(d))
    }

    /// The run's last readings, the clients let go, the last interval, and
    /// what the run measured.
    pub fn finish(
        mut self,
        mut clock: Clock,
        ended: Ended,
        on_interval: &mut dyn FnMut(&IntervalSample),
    ) -> RunResult {
        if clock.realtime {
            crate::util::priority::normal_thread();
        }
        let cpu_end = CpuTimes::now();
        if let Some(m) = self.sampler {
            m.end();
        }
        self.let_go();
        let last = self.shared.recorder.take_interval(false);
        if self.cfg.report_interval.is_some()
            && (last.counters.queries() > 0 || last.counters.failed > 0)
        {
            // A tick at or after the end leaves no span to it: the grace's
            // completions get the span to now, never an interval of no length.
            let to = Some(ended.at).filter(|&at| at > clock.last_tick);
            let to = to.unwrap_or_else(Instant::now);
            on_interval(&self.interval(&mut clock, &last, to));
        }
        self.result(clock, ended, cpu_end)
    }

    /// Tells the finished clients to close, and joins them.
    fn let_go(&mut self) {
        {
            // Under `done`, so no client between its check and its wait misses it.
            let life = &self.shared.lifecycle;
            let _done = life.done.lock().unwrap();
            life.closing.store(true, Ordering::Release);
            life.done_cv.notify_all();
        }
        // Join the threads whose clients all finished; a client stuck in a
        // driver call after the deadline is left behind rather than waited
        // for.
        for (h, ids) in std::mem::take(&mut self.handles) {
            let slots = &self.shared.slots[ids];
            if slots
                .iter()
                .all(|s| s.state.load(Ordering::Acquire) == DONE)
            {
                let _ = h.join();
            }
        }
    }

    /// The run's totals and figures, once the clients are done.
    fn result(self, clock: Clock, ended: Ended, cpu_end: CpuTimes) -> RunResult {
        let finished_at = ended.at;
        let totals = self.shared.recorder.totals();
        let mut counters = totals.counters;
        // What was due in the window and never handed to a connection is
        // offered load that was not sent.
        let offered = self.shared.dispatch.get().map(|d| {
            let window_end = clock.end.map_or(finished_at, |e| e.min(finished_at));
            let untaken = d.untaken_between(clock.measure_start, window_end);
            counters.unstarted += untaken;
            counters.arrivals + untaken + ended.abandoned_arrivals
        });
        let clients = self
            .shared
            .slots
            .iter()
            .map(|s| {
                (
                    s.txns.load(Ordering::Relaxed),
                    s.busy_ns.load(Ordering::Relaxed) as f64 / 1e9,
                )
            })
            .collect();
        let fatal = self.shared.lifecycle.fatal.lock().unwrap().clone();
        let stop = self.stop_reason(&clock, finished_at, fatal.is_some());
        RunResult {
            threads: self.threads,
            statement_kinds: self.shared.kinds.names.clone(),
            warmup: self.cfg.warmup,
            measured: finished_at.saturating_duration_since(clock.measure_start),
            counters,
            abandoned: ended.abandoned,
            txn_latency: totals.latency,
            service: self.queued.then_some(totals.service),
            lag: self.queued.then_some(totals.lag),
            offered,
            stmt_latency: totals.statements,
            types: self
                .types
                .into_iter()
                .zip(totals.types)
                .zip(totals.types_failed)
                .map(|((t, latency), failed)| TypeResult { t, latency, failed })
                .collect(),
            clients,
            cpu: clock
                .cpu_start
                .map(|s| cpu_end.since(&s))
                .unwrap_or_default(),
            cpus: cpu::available_cpus(),
            stop,
            connect: self.connect,
            setup: self.queued.then_some(self.setup),
            fatal,
            server: self.server,
            released_unix_us: clock.released_unix_us,
        }
    }

    /// Why the run ended: the first of a fatal error, Ctrl-C, the hard
    /// timeout, the rounds or events done before the end, the time.
    fn stop_reason(&self, clock: &Clock, finished_at: Instant, fatal: bool) -> StopReason {
        let before_end = clock.end.is_none_or(|e| finished_at < e);
        if fatal {
            StopReason::Aborted
        } else if clock.interrupted {
            StopReason::Interrupted
        } else if clock.timed_out {
            StopReason::Timeout
        } else if self.cfg.rounds.is_some() && before_end {
            StopReason::Rounds
        } else if self.events.is_some() && before_end {
            StopReason::Events
        } else {
            StopReason::Time
        }
    }
}
