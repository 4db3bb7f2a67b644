//! Engine tests on the fake driver: exact counts, retries, error policy, the
//! deadline with a hanging connection, warmup exclusion and cancellation.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;
use crate::driver::{self, ErrorKind, Target, Value};
use crate::rand::Rng;
use crate::util::progress::Progress;
use crate::workload::{ClientScript, Connector, Op, OptionValues, StatementDef};

/// BEGIN; SELECT; UPDATE; COMMIT — four queries: 1 read, 1 write, 2 other.
pub(super) struct TestWorkload {
    statements: Vec<StatementDef>,
    options: OptionValues,
    retry_also: &'static [ErrorKind],
    /// Each client runs on virtual time (`util::clock`) from its first
    /// transaction on: the fake driver's latencies and the pacing's waits
    /// take exactly their length, however late the machine's timers wake.
    virtual_time: bool,
}

impl TestWorkload {
    /// The workload on virtual time (see `virtual_time`): for runs whose
    /// clients share no clock — closed loops, or a queue on one
    /// connection.
    pub(super) fn on_virtual_time() -> Self {
        TestWorkload {
            virtual_time: true,
            ..Self::new()
        }
    }

    pub(super) fn new() -> Self {
        TestWorkload {
            statements: vec![
                StatementDef {
                    kind: "point_select".into(),
                    sql: "SELECT c FROM t WHERE id=?".into(),
                },
                StatementDef {
                    kind: "update".into(),
                    sql: "UPDATE t SET k=k+1 WHERE id=?".into(),
                },
            ],
            options: OptionValues::default(),
            retry_also: &[],
            virtual_time: false,
        }
    }
}

struct TestScript {
    step: usize,
    params: Vec<Value>,
    rng: Rng,
    virtual_time: bool,
}

impl ClientScript for TestScript {
    fn start(&mut self) {
        if self.virtual_time {
            crate::util::clock::enter_virtual();
        }
        self.step = 0;
        self.params[0] = Value::Int(self.rng.uniform(1, 100) as i64);
    }

    fn next(&mut self) -> Option<Op<'_>> {
        self.step += 1;
        match self.step {
            1 => Some(Op::Begin { writes: false }),
            2 => Some(Op::Exec(0, &self.params)),
            3 => Some(Op::Exec(1, &self.params)),
            4 => Some(Op::Commit),
            _ => None,
        }
    }
}

impl Workload for TestWorkload {
    fn name(&self) -> &'static str {
        "test"
    }
    fn statements(&self) -> &[StatementDef] {
        &self.statements
    }
    fn prepare(&self, _: Connector<'_>, _: usize, _: &dyn Progress) -> anyhow::Result<()> {
        Ok(())
    }
    fn cleanup(&self, _: &mut dyn Connection) -> anyhow::Result<()> {
        Ok(())
    }
    fn check_prepared(&self, _: &mut dyn Connection) -> anyhow::Result<()> {
        Ok(())
    }
    fn client(&self, _id: usize, _clients: usize, rng: Rng) -> Box<dyn ClientScript> {
        Box::new(TestScript {
            step: 0,
            params: vec![Value::Int(0)],
            rng,
            virtual_time: self.virtual_time,
        })
    }
    fn options(&self) -> &OptionValues {
        &self.options
    }
    fn retry_also(&self) -> &'static [ErrorKind] {
        self.retry_also
    }
}

pub(super) fn config(threads: usize) -> RunConfig {
    RunConfig {
        threads,
        time: None,
        events: None,
        rounds: None,
        warmup: Duration::ZERO,
        report_interval: None,
        interval_percentile: 95.0,
        max_retries: None,
        ignore_errors: ErrorSet::NONE,
        grace: Duration::from_millis(300),
        seed: 7,
        reconnect_every: None,
        timeout: None,
        pacing: Default::default(),
        shard: None,
        client_threads: None,
        pipeline: None,
        release: None,
    }
}

pub(super) fn run_fake(url: &str, cfg: &RunConfig) -> RunResult {
    run_fake_cancel(url, cfg, &AtomicBool::new(false))
}

/// A run on the fake driver with every client on virtual time (see
/// `TestWorkload::on_virtual_time`).
pub(super) fn run_fake_virtual(url: &str, cfg: &RunConfig) -> RunResult {
    let target = Target::parse(url).unwrap();
    let connect: Connect = Arc::new(move || driver::connect(&target));
    let w = TestWorkload::on_virtual_time();
    run(&w, connect, cfg, &AtomicBool::new(false), &mut |_| {}).unwrap()
}

/// A run on the fake driver, and the intervals it handed out.
pub(super) fn run_fake_intervals(url: &str, cfg: &RunConfig) -> (RunResult, Vec<IntervalSample>) {
    let target = Target::parse(url).unwrap();
    let connect: Connect = Arc::new(move || driver::connect(&target));
    let mut intervals = Vec::new();
    let r = run(
        &TestWorkload::new(),
        connect,
        cfg,
        &AtomicBool::new(false),
        &mut |s| intervals.push(s.clone()),
    )
    .unwrap();
    (r, intervals)
}

fn run_fake_cancel(url: &str, cfg: &RunConfig, cancel: &AtomicBool) -> RunResult {
    let target = Target::parse(url).unwrap();
    let connect: Connect = Arc::new(move || driver::connect(&target));
    run(&TestWorkload::new(), connect, cfg, cancel, &mut |_| {}).unwrap()
}

#[test]
fn events_runs_exactly_that_many_transactions() {
    let cfg = RunConfig {
        events: Some(1000),
        ..config(4)
    };
    let r = run_fake("fake://", &cfg);
    let c = &r.counters;
    assert_eq!(c.transactions, 1000);
    assert_eq!((c.reads, c.writes, c.others), (1000, 1000, 2000));
    assert_eq!(r.txn_latency.count(), 1000);
    assert_eq!(r.stop, StopReason::Events);
    assert_eq!(r.clients.iter().map(|c| c.0).sum::<u64>(), 1000);
    // Every statement type has one latency sample per execution.
    let kind = |name: &str| r.statement_kinds.iter().position(|k| k == name).unwrap();
    assert_eq!(r.stmt_latency[kind("point_select")].count(), 1000);
    assert_eq!(r.stmt_latency[kind("begin")].count(), 1000);
    assert_eq!(r.stmt_latency[kind("commit")].count(), 1000);
}

#[test]
fn an_event_loop_whose_every_answer_is_in_at_once_runs_on_its_stack() {
    // The fake answers each request when it starts: every transaction on
    // a loop ends without waiting, the worst case of a fast server (on a
    // debug build, PostgreSQL's answers were in before the client looked,
    // and the chain of transactions on one stack overflowed it). The
    // client hands the loop a timer every few transactions instead.
    let cfg = RunConfig {
        events: Some(200_000),
        client_threads: Some(1),
        ..config(2)
    };
    let r = run_fake("fake://", &cfg);
    assert_eq!(r.counters.transactions, 200_000);
    assert_eq!(r.stop, StopReason::Events);
    // Retries too: a failed attempt's rollback is answered at once
    // (every 5th statement fails; the fake's rollback is not one).
    let cfg = RunConfig {
        events: Some(20_000),
        client_threads: Some(1),
        ..config(1)
    };
    let r = run_fake("fake://?error_every=5:deadlock", &cfg);
    assert_eq!(r.counters.transactions, 20_000);
    assert!(r.counters.retries > 2_000, "{}", r.counters.retries);
}

#[test]
fn rounds_give_each_client_the_same_count() {
    let cfg = RunConfig {
        rounds: Some(7),
        ..config(3)
    };
    let r = run_fake("fake://", &cfg);
    assert_eq!(r.counters.transactions, 21);
    assert!(r.clients.iter().all(|c| c.0 == 7), "{:?}", r.clients);
    assert_eq!(r.stop, StopReason::Rounds);
    // Each client's connect time is recorded once.
    assert_eq!(r.connect.latency.count(), 3);
    assert!(r.connect.wall.as_nanos() as u64 >= r.connect.latency.max().unwrap());
}

#[test]
fn latencies_are_measured_around_the_driver_call() {
    // Every statement takes 2 ms: a transaction at least 8 ms.
    let cfg = RunConfig {
        events: Some(20),
        ..config(1)
    };
    let r = run_fake("fake://?latency=2ms", &cfg);
    assert!(r.txn_latency.min().unwrap() >= 8_000_000);
    let sel = r
        .statement_kinds
        .iter()
        .position(|k| k == "point_select")
        .unwrap();
    let h = &r.stmt_latency[sel];
    assert!(h.min().unwrap() >= 2_000_000);
    let p50 = h.value_at_percentile(50.0).unwrap();
    // A sleep overshoots on a busy machine, but a statement's latency must
    // not include the transaction's other three operations (8 ms).
    assert!(p50 < 4_000_000, "p50 {p50} ns far above the scripted 2 ms");
}

#[test]
fn retryable_errors_roll_back_and_retry() {
    // Every 5th statement deadlocks; transactions still all complete.
    let cfg = RunConfig {
        events: Some(100),
        ..config(1)
    };
    let r = run_fake("fake://?error_every=5:deadlock", &cfg);
    let c = &r.counters;
    assert_eq!(c.transactions, 100);
    assert_eq!(c.failed, 0);
    assert!(c.retries > 0);
    assert_eq!(c.errors[ErrorKind::Deadlock.index()], c.retries);
    assert_eq!(r.stop, StopReason::Events);
}

#[test]
fn workloads_may_retry_more_kinds() {
    // sysbench on PostgreSQL retries unique violations; the engine asks the
    // workload which kinds besides the usual ones to retry.
    let cfg = RunConfig {
        events: Some(100),
        ..config(2)
    };
    let target = Target::parse("fake://?error_every=7:duplicate_key").unwrap();
    let connect: Connect = Arc::new(move || driver::connect(&target));
    let w = TestWorkload {
        retry_also: &[ErrorKind::DuplicateKey],
        ..TestWorkload::new()
    };
    let r = run(&w, connect, &cfg, &AtomicBool::new(false), &mut |_| {}).unwrap();
    let c = &r.counters;
    assert_eq!(r.stop, StopReason::Events);
    assert!(r.fatal.is_none());
    assert_eq!((c.transactions, c.failed), (100, 0));
    assert!(c.retries > 0);
    assert_eq!(c.errors[ErrorKind::DuplicateKey.index()], c.retries);
}

#[test]
fn max_retries_turns_persistent_errors_into_failed_transactions() {
    let cfg = RunConfig {
        events: Some(100),
        max_retries: Some(0),
        ..config(1)
    };
    let r = run_fake("fake://?error_every=5:lock_timeout", &cfg);
    let c = &r.counters;
    assert_eq!(c.retries, 0);
    assert!(c.failed > 0);
    assert_eq!(c.transactions + c.failed, 100);
    assert_eq!(c.errors[ErrorKind::LockTimeout.index()], c.failed);
    // Failed transactions have no latency sample.
    assert_eq!(r.txn_latency.count(), c.transactions);
}

#[test]
fn other_errors_abort_the_run_unless_ignored() {
    let cfg = RunConfig {
        events: Some(100),
        ..config(2)
    };
    let r = run_fake("fake://?error_every=10:duplicate_key", &cfg);
    assert_eq!(r.stop, StopReason::Aborted);
    assert!(r.fatal.as_deref().unwrap().contains("duplicate_key"));
    assert!(r.counters.transactions < 100);

    let mut ignore = ErrorSet::NONE;
    ignore.insert(ErrorKind::DuplicateKey);
    let cfg = RunConfig {
        ignore_errors: ignore,
        ..cfg
    };
    let r = run_fake("fake://?error_every=10:duplicate_key", &cfg);
    assert_eq!(r.stop, StopReason::Events);
    assert!(r.fatal.is_none());
    assert!(r.counters.failed > 0);
    assert_eq!(r.counters.transactions + r.counters.failed, 100);
    assert_eq!(
        r.counters.errors[ErrorKind::DuplicateKey.index()],
        r.counters.failed
    );
}

/// A wall-clock bound that only a hang or a missed deadline can break: an
/// order of magnitude above what the run is asked to take, so a busy
/// machine never reaches it. The figures themselves (how close to its
/// deadline a run ends) are bench/pacing.py's `engine` part.
const HANG: Duration = Duration::from_secs(60);

#[test]
fn deadline_holds_when_the_server_hangs() {
    // Each connection stops answering after 40 statements, for good.
    let cfg = RunConfig {
        time: Some(Duration::from_millis(500)),
        grace: Duration::from_millis(300),
        ..config(2)
    };
    let start = Instant::now();
    let r = run_fake("fake://?latency=1ms&hang_after=40", &cfg);
    assert!(start.elapsed() < HANG, "took {:?}", start.elapsed());
    assert_eq!(r.abandoned, 2);
    assert_eq!(r.counters.transactions, 20, "10 complete per client");
    assert_eq!(r.stop, StopReason::Time);
    // The measured window runs to the deadline (the end plus the grace),
    // exactly: not to when the timekeeper woke to see it.
    assert_eq!(r.measured, Duration::from_millis(800));
}

#[test]
fn hard_timeout_ends_a_run_that_would_go_on() {
    // Asked for an hour, limited to 0.4 s from the start: at the limit no
    // client starts another transaction; a hung one is abandoned after
    // the grace.
    let cfg = RunConfig {
        time: Some(Duration::from_secs(3600)),
        grace: Duration::from_millis(300),
        timeout: Some(Duration::from_millis(400)),
        pacing: Default::default(),
        ..config(2)
    };
    let start = Instant::now();
    let r = run_fake("fake://?latency=1ms&hang_after=2000", &cfg);
    let took = start.elapsed();
    assert_eq!(r.stop, StopReason::Timeout);
    assert!(took >= Duration::from_millis(400), "took {took:?}");
    assert!(took < HANG, "took {took:?}");
    assert!(r.counters.transactions > 0);
    assert_eq!(r.abandoned, 0);
    // The window ends with the clients' last transaction after the limit,
    // within the grace.
    assert!(r.measured <= took, "{:?} of {took:?}", r.measured);

    // Hung clients: abandoned at the limit plus the grace.
    let start = Instant::now();
    let r = run_fake("fake://?latency=1ms&hang_after=40", &cfg);
    let took = start.elapsed();
    assert_eq!(r.stop, StopReason::Timeout);
    assert_eq!(r.abandoned, 2);
    assert!(took < HANG, "took {took:?}");
}

#[test]
fn warmup_samples_are_discarded() {
    // 4 statements × 1 ms per transaction on one client; a 300 ms warmup,
    // then 300 ms measured, in 50 ms intervals.
    let cfg = RunConfig {
        time: Some(Duration::from_millis(300)),
        warmup: Duration::from_millis(300),
        report_interval: Some(Duration::from_millis(50)),
        ..config(1)
    };
    let (r, intervals) = run_fake_intervals("fake://?latency=1ms", &cfg);
    let n = r.counters.transactions;
    assert!(n > 0);
    // The window is the time after the warmup: at least the 300 ms, at
    // most until the deadline.
    assert!(
        r.measured >= Duration::from_millis(300) && r.measured <= Duration::from_millis(600),
        "{:?}",
        r.measured
    );
    // Intervals cover the warmup too, flagged as such.
    let at = |s: &IntervalSample| s.t_s;
    let warm: u64 = intervals
        .iter()
        .filter(|s| at(s) <= 0.3)
        .map(|s| s.counters.transactions)
        .sum();
    assert!(intervals.iter().any(|s| s.warmup) && intervals.iter().any(|s| !s.warmup));
    assert!(
        warm > 0,
        "no interval ended within the warmup: {intervals:?}"
    );
    // A transaction that ended in an interval over by the warmup's end
    // started in the warmup: none of those is in the measured count.
    let all: u64 = intervals.iter().map(|s| s.counters.transactions).sum();
    assert!(
        n <= all - warm,
        "{n} measured, {all} in all, {warm} in the warmup"
    );
    // One client, one transaction at a time: the measured transactions
    // took no more time than the window (and one straddling its end), so
    // they cannot include the warmup's.
    let busy = n as f64 * r.txn_latency.mean().unwrap() / 1e9;
    let last = r.txn_latency.max().unwrap() as f64 / 1e9;
    assert!(
        busy <= r.measured.as_secs_f64() + last,
        "{n} transactions busy {busy} s in a {:?} window",
        r.measured
    );
}

#[test]
fn cancel_stops_the_run_and_keeps_what_was_measured() {
    let cfg = RunConfig {
        time: Some(Duration::from_secs(3600)),
        ..config(2)
    };
    let cancel = Arc::new(AtomicBool::new(false));
    let c2 = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        c2.store(true, Ordering::SeqCst);
    });
    let start = Instant::now();
    let r = run_fake_cancel("fake://?latency=1ms", &cfg, &cancel);
    let took = start.elapsed();
    assert!(took < HANG, "took {took:?}");
    assert_eq!(r.stop, StopReason::Interrupted);
    assert!(r.counters.transactions > 0);
    assert_eq!(r.abandoned, 0);
    // The window runs at least to the interrupt.
    assert!(r.measured >= Duration::from_millis(300) && r.measured <= took);
}

#[test]
fn time_limit_ends_the_run_on_time() {
    let cfg = RunConfig {
        time: Some(Duration::from_millis(400)),
        ..config(3)
    };
    let start = Instant::now();
    let r = run_fake("fake://?latency=200us", &cfg);
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(400) && took < HANG,
        "{took:?}"
    );
    assert_eq!(r.stop, StopReason::Time);
    // Ended by the limit: the window is the time, and at most the grace
    // more for the transactions in flight at the end (not when the
    // timekeeper woke to see them done).
    assert!(
        r.measured >= Duration::from_millis(400)
            && r.measured <= Duration::from_millis(400) + cfg.grace,
        "{:?}",
        r.measured
    );
    assert_eq!(r.abandoned, 0);
    assert!(r.clients.iter().all(|c| c.0 > 0), "{:?}", r.clients);
}

#[test]
fn lost_connections_are_reestablished_and_counted() {
    // Every 10th statement on a connection loses it; a new connection
    // starts counting again, so each connection completes 2 transactions
    // (8 statements) and loses the third.
    let cfg = RunConfig {
        events: Some(90),
        ..config(1)
    };
    let r = run_fake("fake://?error_every=10:connection_lost", &cfg);
    let c = &r.counters;
    assert_eq!(r.stop, StopReason::Events);
    assert_eq!(c.transactions + c.failed, 90);
    assert_eq!(c.transactions, 60);
    assert_eq!(c.failed, 30);
    assert_eq!(c.errors[ErrorKind::ConnectionLost.index()], 30);
    assert_eq!(c.reconnects, 30);
}

#[test]
fn reconnect_every_n_transactions() {
    let cfg = RunConfig {
        events: Some(100),
        reconnect_every: Some(10),
        timeout: None,
        pacing: Default::default(),
        ..config(1)
    };
    let r = run_fake("fake://", &cfg);
    assert_eq!(r.counters.transactions, 100);
    // After transactions 10, 20, …, 90 (the 100th ends the run first).
    assert_eq!(r.counters.reconnects, 9);
}

#[test]
fn instances_run_as_one_measured_run() {
    let (a, b, c) = (
        TestWorkload::new(),
        TestWorkload::new(),
        TestWorkload::new(),
    );
    let target = Target::parse("fake://").unwrap();
    let connect: Connect = Arc::new(move || driver::connect(&target));
    let cfg = RunConfig {
        rounds: Some(10),
        ..config(2)
    };
    let r = run_instances(
        &[&a, &b, &c],
        connect,
        &cfg,
        &AtomicBool::new(false),
        &mut |_| {},
        None,
    )
    .unwrap();
    // 3 instances × 2 clients, 10 transactions each.
    assert_eq!(r.threads, 6);
    assert_eq!(r.clients.len(), 6);
    assert_eq!(r.counters.transactions, 60);
    // Statement types of all instances merge by name.
    let sel = r
        .statement_kinds
        .iter()
        .filter(|k| *k == "point_select")
        .count();
    assert_eq!(sel, 1);
    let i = r
        .statement_kinds
        .iter()
        .position(|k| k == "point_select")
        .unwrap();
    assert_eq!(r.stmt_latency[i].count(), 60);
}
