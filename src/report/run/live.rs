//! What a run prints while it runs, in sysbench's wording: the preamble
//! before the clients start and one line per `--report-interval`. The
//! summary after the run is `text.rs`'s.

use std::fmt::Write;

use crate::engine::{IntervalSample, RunConfig};
use crate::util::units::ms;

/// What is printed before the clients start.
pub fn preamble(workload: &str, target: &str, server: &str, cfg: &RunConfig, seed: u64) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "dbsweep {}", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(s);
    let _ = writeln!(s, "Running {workload} on {target} ({server})");
    let _ = writeln!(s, "Number of threads: {}", cfg.threads);
    if let Some(n) = cfg.client_threads {
        let _ = writeln!(s, "Connections on {n} event-loop thread(s)");
    }
    if let Some(k) = cfg.pipeline.filter(|&k| k > 1) {
        let _ = writeln!(
            s,
            "Pipeline: a transaction's statements in groups of up to {k} per connection; each statement timed from when it was sent"
        );
    }
    if let Some(sh) = cfg.shard {
        let mine = sh.range(cfg.threads).len();
        let _ = writeln!(
            s,
            "Shard {} of {} (0-based): {mine} of the {} clients and this share of the load below; merge the shards' --json records with `dbsweep merge`",
            sh.index, sh.count, cfg.threads
        );
    }
    let p = &cfg.pacing;
    if let Some((rate, arrival)) = p.rate() {
        let _ = writeln!(
            s,
            "Rate: {rate} transactions per second ({} arrivals); latency from each one's intended start",
            arrival.name()
        );
    }
    if let Some(u) = p.users().filter(|&u| u > cfg.threads) {
        let _ = writeln!(
            s,
            "Users: {u} on {} connection(s); latency includes the wait for a connection",
            cfg.threads
        );
    }
    if let Some(t) = p.think_time() {
        let _ = writeln!(
            s,
            "Think time: {t} (mean {:.3} s, not part of any latency)",
            t.mean().as_secs_f64()
        );
    }
    if let Some(l) = p.latency_limit {
        let _ = writeln!(s, "Latency limit: {} ms", l.as_secs_f64() * 1e3);
    }
    if let Some(iv) = cfg.report_interval {
        let _ = writeln!(
            s,
            "Report intermediate results every {} second(s)",
            iv.as_secs_f64()
        );
    }
    if !cfg.warmup.is_zero() {
        let _ = writeln!(s, "Warmup: {} s (not measured)", cfg.warmup.as_secs_f64());
    }
    let mut stop = Vec::new();
    if let Some(t) = cfg.time {
        stop.push(format!("{} s", t.as_secs_f64()));
    }
    if let Some(e) = cfg.events {
        stop.push(format!("{e} transactions"));
    }
    if let Some(r) = cfg.rounds {
        stop.push(format!("{r} transactions per client"));
    }
    let _ = writeln!(s, "Stop after: {}", stop.join(" or "));
    let _ = writeln!(s, "Random seed: {seed}");
    let _ = writeln!(s);
    s
}

/// One `--report-interval` line, sysbench's format.
pub fn interval_line(s: &IntervalSample) -> String {
    let d = s.duration_s.max(1e-9);
    let c = &s.counters;
    let rate = |n: u64| n as f64 / d;
    let lat = s
        .pct_ns
        .map(|ns| ms(ns as f64))
        .unwrap_or_else(|| "-".into());
    // Sub-second intervals need a decimal to tell their lines apart.
    let t = if s.duration_s < 0.95 {
        format!("{:.1}", s.t_s)
    } else {
        format!("{:.0}", s.t_s)
    };
    let paced = s.paced.as_ref().map_or(String::new(), |p| {
        let lag = |ns: Option<u64>| ns.map_or("-".into(), |v| ms(v as f64));
        format!(
            " offered: {:.2} queue: {} lag (ms,p99/max): {}/{} late: {} skipped: {}",
            p.offered_per_s,
            p.queue,
            lag(p.lag_p99_ns),
            lag(p.lag_max_ns),
            c.late,
            c.skipped
        )
    });
    format!(
        "[ {t}s ] thds: {} tps: {:.2} qps: {:.2} (r/w/o: {:.2}/{:.2}/{:.2}) lat (ms,{}%): {} err/s: {:.2} reconn/s: {:.2}{paced}{}",
        s.threads,
        rate(c.transactions),
        rate(c.queries()),
        rate(c.reads),
        rate(c.writes),
        rate(c.others),
        s.pct,
        lat,
        rate(c.total_errors()),
        rate(c.reconnects),
        if s.warmup { " (warmup)" } else { "" }
    )
}
