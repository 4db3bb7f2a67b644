//! Pacing on the fake driver: an open loop shows a stall a closed loop
//! hides, the achieved rate follows the offered one, the latency limit's
//! late and skipped counts are the schedule's, users with think time run at
//! U / T, and U = C without think time is the closed loop.

use std::time::Duration;

use super::pacing::Mode;
use super::tests::{config, run_fake, run_fake_virtual};
use super::*;
use crate::rand::pacing::{Arrival, ThinkTime};
use crate::stats::histogram::Histogram;

fn ms(x: u64) -> Duration {
    Duration::from_millis(x)
}

fn pct(h: &Histogram, p: f64) -> f64 {
    h.value_at_percentile(p).unwrap() as f64 / 1e9
}

fn open(rate: f64, arrival: Arrival, threads: usize, time: Duration) -> RunConfig {
    RunConfig {
        time: Some(time),
        grace: Duration::from_secs(3),
        pacing: Mode::Open { rate, arrival }.into(),
        ..config(threads)
    }
}

/// Every transaction offered in the window was run, failed, skipped,
/// abandoned or never started.
fn assert_accounted(r: &RunResult) {
    let c = &r.counters;
    assert_eq!(
        r.offered.unwrap(),
        c.transactions + c.failed + c.skipped + c.unstarted + r.abandoned,
        "{c:?}"
    );
}

/// Transactions slower than `secs` in `h`.
fn over(h: &Histogram, secs: f64) -> u64 {
    h.buckets()
        .filter(|(low, _, _)| *low as f64 > secs * 1e9)
        .map(|(_, _, c)| c)
        .sum()
}

#[test]
fn an_open_loop_shows_a_stall_that_a_closed_loop_hides() {
    // 1 ms per transaction (4 statements of 250 µs), and the server stops
    // answering from 1 s to 2 s. Real time and two connections: the
    // leader/follower queue as it runs. Every bound below only grows when
    // the machine is slow (a late timer adds latency, never removes it).
    let url = "fake://?latency=250us&stall_at=1s:1s";
    let rate = 500.0;
    let o = run_fake(url, &open(rate, Arrival::Uniform, 2, ms(3500)));
    assert_accounted(&o);
    let n = o.counters.transactions as f64;
    // The 500 arrivals of the stalled second wait for its end: the k-th
    // of them at least 1 s - k / rate. They are first in line when the
    // server answers again, so they are run even if the rest is not.
    let over_half = over(&o.txn_latency, 0.5);
    assert!(
        over_half as f64 >= rate * 0.5 * 0.9,
        "{over_half} transactions over 0.5 s"
    );
    // So the top 1 % of all transactions are among them: p99 is at least
    // 1 s less the time 1 % of the arrivals take to come.
    let theory = 1.0 - 0.01 * n / rate;
    let p99 = pct(&o.txn_latency, 99.0);
    assert!(
        p99 >= theory * 0.95,
        "open-loop p99 {p99} s < theory {theory} s"
    );
    // Service times stay short: the wait was in the queue.
    let lag = o.lag.as_ref().unwrap();
    assert!(pct(lag, 99.0) >= theory * 0.9);

    // The same server in a closed loop: two clients wait once each, and
    // the stall is gone from the percentiles: it shows only in the max.
    let closed = RunConfig {
        time: Some(ms(3500)),
        grace: Duration::from_secs(3),
        ..config(2)
    };
    let c = run_fake(url, &closed);
    let slow = over(&c.txn_latency, 0.5);
    assert!(
        slow <= 2,
        "{slow} closed-loop transactions over 0.5 s (2 clients)"
    );
    assert!(c.txn_latency.max().unwrap() as f64 / 1e9 > 0.9);
    assert!(
        c.counters.transactions >= 100 * slow.max(1),
        "{:?}",
        c.counters
    );
    assert!(
        pct(&c.txn_latency, 99.0) < 0.5,
        "closed-loop p99 {}",
        pct(&c.txn_latency, 99.0)
    );
    assert!(c.service.is_none() && c.offered.is_none());
}

#[test]
fn the_achieved_rate_follows_the_offered_one_when_the_service_keeps_up() {
    // One connection on virtual time: 200 µs a transaction against an
    // arrival every 1 ms, so every arrival is run at its intended start.
    // (How closely a real machine's timers follow is bench/pacing.py's.)
    let r = run_fake_virtual(
        "fake://?latency=50us",
        &open(1000.0, Arrival::Uniform, 1, ms(3000)),
    );
    // Evenly spaced: exactly 1000 arrivals a second from the start.
    assert_eq!(r.offered, Some(3000));
    assert_eq!(r.counters.transactions, 3000);
    assert_eq!(r.counters.unstarted, 0);
    assert_accounted(&r);
    // Only the first few, taken while the client was starting, waited.
    let lag = r.lag.as_ref().unwrap();
    assert_eq!(lag.count(), 3000);
    assert_eq!(lag.value_at_percentile(50.0), Some(0));
    assert_eq!(r.measured, ms(3000));

    // Poisson: the count is random (sd √N), what is run is what came,
    // but for the few arrivals a burst leaves behind at the end.
    let r = run_fake_virtual(
        "fake://?latency=50us",
        &open(2000.0, Arrival::Poisson, 1, ms(3000)),
    );
    let offered = r.offered.unwrap();
    assert!(
        (offered as f64 - 6000.0).abs() < 4.0 * 6000f64.sqrt(),
        "offered {offered}"
    );
    assert!(
        r.counters.transactions + 3 >= offered,
        "{} of {offered}",
        r.counters.transactions
    );
    assert_accounted(&r);
}

/// What one connection does with evenly spaced arrivals every `gap`, a
/// service time `s` and a latency limit `l` until `end` (pgbench's rules):
/// (completed, late, skipped, unstarted), and the smallest margin by which
/// any decision was taken, so the test can require that the client's
/// start cannot flip one.
fn model(gap: f64, s: f64, l: f64, end: f64) -> ((u64, u64, u64, u64), f64) {
    let (mut done, mut late, mut skipped, mut unstarted) = (0, 0, 0, 0);
    let mut margin = f64::MAX;
    let mut free: f64 = 0.0;
    let mut k = 0.0;
    loop {
        let a = k * gap;
        if a >= end {
            break;
        }
        k += 1.0;
        let start = free.max(a);
        margin = margin.min((start - end).abs());
        if start >= end {
            unstarted += 1;
            continue;
        }
        margin = margin.min((start - a - l).abs());
        if start - a > l {
            skipped += 1;
            continue;
        }
        free = start + s;
        done += 1;
        margin = margin.min((free - a - l).abs());
        if free - a > l {
            late += 1;
        }
    }
    ((done, late, skipped, unstarted), margin)
}

#[test]
fn late_and_skipped_transactions_are_the_schedules() {
    // 240 s per transaction against an arrival every 80 s: the connection
    // falls behind, finishes some late, skips what is over the limit, and
    // leaves a backlog at the end. On virtual time, so the seconds cost
    // nothing and the fake's latencies are exact; the only real time is the
    // client's first reading after the release, a few ms against a margin
    // of seconds.
    let (gap, s, l, end) = (80.0, 240.0, 520.0, 2832.0);
    let (expected, margin) = model(gap, s, l, end);
    assert!(
        margin >= 12.0,
        "the model decides too close to a tie: {margin}"
    );
    assert!(expected.1 > 0 && expected.2 > 0, "{expected:?}");
    let mut cfg = open(1.0 / gap, Arrival::Uniform, 1, Duration::from_secs_f64(end));
    cfg.pacing.latency_limit = Some(Duration::from_secs_f64(l));
    let r = run_fake_virtual("fake://?latency=60s", &cfg);
    let c = &r.counters;
    assert_eq!(
        (c.transactions, c.late, c.skipped, c.unstarted),
        expected,
        "(completed, late, skipped, unstarted)"
    );
    assert_eq!(r.offered, Some(36));
    assert_accounted(&r);
    // No transaction started further behind than the limit: those were
    // skipped.
    let lag = r.lag.as_ref().unwrap().max().unwrap();
    assert!(lag as f64 <= l * 1e9, "lag {lag} ns");
}

#[test]
fn users_with_think_time_run_u_over_t_per_second() {
    // 200 users thinking 100 ms on average on 4 connections, instant
    // transactions: 2000 a second once the start's burst is past. Real
    // time, four connections sharing the queue.
    let cfg = RunConfig {
        time: Some(ms(2000)),
        warmup: ms(1000),
        pacing: Mode::Users {
            users: 200,
            think_time: Some(ThinkTime::Uniform(ms(50), ms(150))),
            ramp_up: None,
        }
        .into(),
        ..config(4)
    };
    let r = run_fake("fake://", &cfg);
    assert_accounted(&r);
    let tps = r.counters.transactions as f64 / r.measured.as_secs_f64();
    // A user thinks from its transaction's end, so its cycle is its think
    // time plus the transaction's latency from its intended start
    // (Little's law: U = X (Z + R)). A busy machine's late timers lengthen
    // R and slow every user alike, so the rate is checked against the
    // cycle the run measured, not against 2000. (How late the timers
    // were, and the rate on an idle machine, are bench/pacing.py's.)
    let latency = r.txn_latency.mean().unwrap() / 1e9;
    let expected = 200.0 / (0.100 + latency);
    // Within 5 %: twenty cycles' edges move a little with a starved
    // machine; a think time counted as latency would be off by half.
    assert!(
        (tps / expected - 1.0).abs() < 0.05,
        "{tps} per second, {expected} from a {latency} s mean latency"
    );
    // Every transaction's wait for a connection is recorded.
    let lag = r.lag.as_ref().unwrap();
    assert_eq!(lag.count(), r.counters.transactions);
}

#[test]
fn ten_million_users_start_in_the_first_second_of_the_window() {
    // Built before the clients are released: the window opens with the
    // connections busy, not with the client setting up.
    let cfg = RunConfig {
        time: Some(ms(1000)),
        report_interval: Some(ms(250)),
        pacing: Mode::Users {
            users: 10_000_000,
            think_time: Some(ThinkTime::Exp {
                mean: ms(1000),
                cap: None,
            }),
            ramp_up: None,
        }
        .into(),
        ..config(2)
    };
    let (r, intervals) = super::tests::run_fake_intervals("fake://", &cfg);
    // Building ten million users takes a second or more: had it been done
    // after the release, the window's first quarter second would be empty.
    let first = &intervals[0];
    assert!(
        first.counters.transactions > 0,
        "no transaction in the window's first quarter second"
    );
    assert!(r.counters.transactions > 0, "{:?}", r.counters);
    // The set-up was timed, apart from the window.
    let setup = r.setup.expect("a queued run's set-up time");
    assert!(setup > Duration::ZERO, "{setup:?}");
    // The window ends by the deadline (the end plus the grace).
    assert!(r.measured <= ms(1000) + cfg.grace, "{:?}", r.measured);
    // Every user was due in the window: the offered load is theirs.
    assert!(r.offered.unwrap() >= 10_000_000, "{:?}", r.offered);
    assert_accounted(&r);
}

#[test]
fn a_huge_rate_is_counted_from_the_schedule_and_ends_in_time() {
    // 1e12 a second: no client can take more than a sliver of it, and the
    // rest is counted, not stepped through.
    for (arrival, slack) in [
        (Arrival::Uniform, 1.0),
        (Arrival::Poisson, 5.0 * 1e12f64.sqrt()),
    ] {
        let mut cfg = open(1e12, arrival, 2, ms(1000));
        cfg.grace = ms(500);
        let started = std::time::Instant::now();
        let r = run_fake("fake://", &cfg);
        let wall = started.elapsed();
        // The window ends at its end (the run at most its grace later):
        // rate × window arrivals were offered.
        let window = ms(1000).as_secs_f64();
        let offered = r.offered.unwrap() as f64;
        assert!(
            (offered - 1e12 * window).abs() <= slack,
            "{arrival:?}: offered {offered}"
        );
        assert!(r.counters.transactions > 0);
        assert!(
            r.counters.unstarted as f64
                >= 1e12 * window - slack - r.counters.transactions as f64 - 10.0,
            "{arrival:?}: unstarted {}",
            r.counters.unstarted
        );
        assert_accounted(&r);
        assert!(r.measured <= ms(1000) + cfg.grace, "{:?}", r.measured);
        // Stepping through 1e12 arrivals would take hours: a minute is
        // only a hang's bound, never a busy machine's.
        assert!(wall < Duration::from_secs(60), "{arrival:?}: {wall:?}");
    }
}

#[test]
fn think_time_on_own_connections_paces_a_closed_loop() {
    // Two users on their own connections on virtual time: a transaction of
    // 4 × 100 ms, then 2 s of thought, for 100 s: each starts at 0, 2.4 s,
    // 4.8 s, … — 42 starts before the end (41 × 2.4 = 98.4 s), as long as
    // the first comes within 1.6 s of the release.
    let cfg = RunConfig {
        time: Some(Duration::from_secs(100)),
        pacing: Mode::Closed {
            think_time: Some(ThinkTime::Fixed(Duration::from_secs(2))),
            ramp_up: None,
        }
        .into(),
        ..config(2)
    };
    let r = run_fake_virtual("fake://?latency=100ms", &cfg);
    assert_eq!(r.counters.transactions, 84, "{:?}", r.counters);
    assert!(r.lag.is_none(), "nothing queued");
    // Think time is no part of the latency: every transaction took its
    // 400 ms.
    assert_eq!(r.txn_latency.min(), Some(400_000_000));
    assert_eq!(r.txn_latency.max(), Some(400_000_000));
}

#[test]
fn as_many_users_as_connections_without_think_time_is_the_closed_loop() {
    let closed = RunConfig {
        rounds: Some(50),
        ..config(4)
    };
    let users = RunConfig {
        pacing: Mode::Users {
            users: 4,
            think_time: None,
            ramp_up: None,
        }
        .into(),
        ..closed.clone()
    };
    let a = run_fake("fake://?latency=100us", &closed);
    let b = run_fake("fake://?latency=100us", &users);
    assert_eq!(a.counters, b.counters);
    assert_eq!(a.counters.transactions, 200);
    assert_eq!(
        a.clients.iter().map(|c| c.0).collect::<Vec<_>>(),
        vec![50; 4]
    );
    assert_eq!(
        b.clients.iter().map(|c| c.0).collect::<Vec<_>>(),
        vec![50; 4]
    );
}
