//! `run --find-rate --slo p99=10ms`: the highest offered rate the target
//! sustains — its latency objective held (the percentile from each
//! arrival's intended start) with at most `--max-unserved` of the offered
//! arrivals never served — found by bisection, every probe reported.
//!
//! The search: one closed-loop run at `--threads` gives the peak; the
//! peak itself is probed as an open loop, then the rate is bisected
//! between the highest rate that held (0 to start with) and the lowest
//! that failed, until the two are within `--precision` of the peak
//! (`stats::bisect`, which a study's `rates = "find"` shares). Each
//! probe is one run as long as the command line's `--time` (and warmup),
//! so the boundary is as noisy as one run is: a probe near it may hold in
//! one search and fail in the next. bench/rate_sweep.py measures fixed
//! levels in interleaved pairs instead, for comparisons between tools.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use super::run::{Bench, RunRequest};
use super::{cancel_flag, status_of, JsonOut, RunStatus};
use crate::engine::pacing::Mode;
use crate::engine::RunConfig;
use crate::rand::pacing::Arrival;
use crate::record::{Run, StopReason};
use crate::stats::bisect::Bisection;

/// What the search looks for, as the command line gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct FindRate {
    /// The latency percentile of the objective (99 for `p99`).
    pub percentile: f64,
    /// Its limit.
    pub limit: Duration,
    /// The share of the offered arrivals that may go unserved, %.
    pub max_unserved_pct: f64,
    /// Bisection stops when held and failed rates are this close, % of
    /// the peak.
    pub precision_pct: f64,
    /// How the probes' arrivals are spaced.
    pub arrival: Arrival,
}

/// One probe, as reported and written.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Probe {
    /// None: the closed-loop run that gives the peak.
    pub offered_per_s: Option<f64>,
    pub achieved_per_s: f64,
    /// The objective's percentile, ms; None when nothing completed.
    pub latency_ms: Option<f64>,
    /// Arrivals skipped or never started, % of those offered.
    pub unserved_pct: Option<f64>,
    /// Whether the probe held the objective (None for the peak's run).
    pub holds: Option<bool>,
}

/// The search's outcome.
#[derive(Debug, Clone, serde::Serialize)]
struct Outcome {
    slo: Slo,
    max_unserved_pct: f64,
    precision_pct: f64,
    peak_per_s: f64,
    /// The highest rate that held; None when none did.
    held_per_s: Option<f64>,
    /// The lowest rate that failed; None when the peak held.
    failed_per_s: Option<f64>,
    /// Every probe in the order run, the closed loop first.
    probes: Vec<Probe>,
    /// Why the search stopped early, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    stopped: Option<String>,
}

#[derive(Debug, Clone, serde::Serialize)]
struct Slo {
    percentile: f64,
    limit_ms: f64,
}

/// Judges a probe's record against the objective.
pub fn judge(run: &Run, f: &FindRate, offered_rate: Option<f64>) -> Probe {
    let r = &run.result;
    let latency_ms = r.latency.as_ref().and_then(|l| {
        l.percentiles
            .iter()
            .find(|p| (p.p - f.percentile).abs() < 1e-9)
            .map(|p| p.us / 1000.0)
    });
    let unserved_pct = r.pacing.as_ref().and_then(|p| {
        let offered = p.offered.filter(|&o| o > 0)?;
        let unserved = p.skipped.unwrap_or(0) + p.unstarted.unwrap_or(0);
        Some(100.0 * unserved as f64 / offered as f64)
    });
    let achieved_per_s = r.pacing.as_ref().map_or(r.tps, |p| p.achieved_per_s);
    let holds = offered_rate.map(|_| {
        finished(r.stop_reason)
            && latency_ms.is_some_and(|ms| ms <= f.limit.as_secs_f64() * 1000.0)
            && unserved_pct.is_some_and(|u| u <= f.max_unserved_pct)
    });
    Probe {
        offered_per_s: offered_rate,
        achieved_per_s,
        latency_ms,
        unserved_pct,
        holds,
    }
}

/// `dbsweep run … --find-rate`.
pub fn find_rate(mut req: RunRequest, f: &FindRate) -> anyhow::Result<RunStatus> {
    if !req.percentiles.contains(&f.percentile) {
        req.percentiles.push(f.percentile);
    }
    // Every probe runs for the time, also for a workload with rounds of
    // its own.
    req.open_ended = false;
    let feed = req.feed()?;
    let (mut bench, cfg) = Bench::open(&req)?;
    bench.live = feed.as_ref().map(|f| f.live(Vec::new()));
    let cancel = cancel_flag();
    bench.preamble(&cfg);
    let limit_ms = f.limit.as_secs_f64() * 1000.0;
    println!(
        "Finding the highest rate that holds p{} ≤ {} ms with ≤ {} % unserved (probes of {}; within {} % of the peak)",
        trim(f.percentile),
        trim(limit_ms),
        trim(f.max_unserved_pct),
        cfg.time.map_or("the run's stop condition".into(), |t| format!("{} s", trim(t.as_secs_f64()))),
        trim(f.precision_pct),
    );
    let mut runs: Vec<Run> = Vec::new();
    let mut probes = Vec::new();
    let mut stopped = None;
    let probe = |rate: Option<f64>, runs: &mut Vec<Run>| -> anyhow::Result<Option<Probe>> {
        let mut c: RunConfig = cfg.clone();
        if let Some(rate) = rate {
            c.pacing.mode = Mode::Open {
                rate,
                arrival: f.arrival,
            };
        }
        let what = probed(rate);
        // On a terminal the probe under way shows, replaced by its result.
        let tty = std::io::stdout().is_terminal();
        if tty {
            print!("  probe {}: {what} …", runs.len() + 1);
            let _ = std::io::stdout().flush();
        }
        let run = bench.measure(&req, &c, None, &cancel, &mut |_| {})?;
        let p = judge(&run, f, rate);
        let erase = if tty { "\r\x1b[2K" } else { "" };
        println!("{erase}  probe {}: {}", runs.len() + 1, line(&p, f));
        let done = run.result.stop_reason;
        runs.push(run);
        Ok(finished(done).then_some(p))
    };

    let mut search = Bisection::new(0.0, f.precision_pct);
    // A probe that fails with an error (not a stop reason) ends the search,
    // but the probes finished before it are still written.
    let mut error = None;
    let mut failed = |e: anyhow::Error, stopped: &mut Option<String>| {
        *stopped = Some(format!("a probe failed: {e:#}"));
        error = Some(e);
    };
    match probe(None, &mut runs).unwrap_or_else(|e| {
        failed(e, &mut stopped);
        None
    }) {
        _ if stopped.is_some() => {}
        Some(p) if p.achieved_per_s > 0.0 => {
            search = Bisection::new(p.achieved_per_s, f.precision_pct);
            probes.push(p);
        }
        Some(p) => {
            probes.push(p);
            stopped = Some("the closed loop completed no transaction".to_string());
        }
        None => stopped = Some(stop_words(&runs)),
    }
    let mut rate = search.next().filter(|_| stopped.is_none());
    while let Some(r) = rate {
        let p = match probe(Some(r), &mut runs) {
            Ok(Some(p)) => p,
            Ok(None) => {
                stopped = Some(stop_words(&runs));
                break;
            }
            Err(e) => {
                failed(e, &mut stopped);
                break;
            }
        };
        search.record(r, p.holds == Some(true));
        probes.push(p);
        rate = search.next();
    }
    let outcome = Outcome {
        slo: Slo {
            percentile: f.percentile,
            limit_ms,
        },
        max_unserved_pct: f.max_unserved_pct,
        precision_pct: f.precision_pct,
        peak_per_s: search.peak,
        held_per_s: search.held,
        failed_per_s: search.failed,
        probes,
        stopped,
    };
    println!("{}", conclusion(&outcome));
    if let Some(out) = &req.json {
        write_json(out, &outcome, &runs)?;
    }
    if let Some(e) = error {
        return Err(e);
    }
    Ok(
        match status_of(runs.iter().map(|r| &r.result.stop_reason)) {
            RunStatus::Ok if outcome.stopped.is_some() => RunStatus::Aborted,
            s => s,
        },
    )
}

/// Whether a run ended as planned (its time, events or rounds done).
fn finished(s: StopReason) -> bool {
    matches!(
        s,
        StopReason::Time | StopReason::Events | StopReason::Rounds
    )
}

/// Why the last run stopped the search.
fn stop_words(runs: &[Run]) -> String {
    let Some(r) = runs.last() else {
        return "no probe ran".into();
    };
    match (&r.result.fatal_error, r.result.stop_reason) {
        (Some(e), _) => format!("probe {} failed: {e}", runs.len()),
        (None, StopReason::Interrupted) => format!("interrupted during probe {}", runs.len()),
        (None, s) => format!("probe {} ended: {}", runs.len(), s.name()),
    }
}

/// What a probe at `rate` (None: the closed loop) runs, in words.
fn probed(rate: Option<f64>) -> String {
    match rate {
        None => "closed loop (the peak)".to_string(),
        Some(r) => format!("{r:>10.0}/s offered"),
    }
}

/// One probe's line.
fn line(p: &Probe, f: &FindRate) -> String {
    let what = probed(p.offered_per_s);
    let lat = p.latency_ms.map_or("—".into(), |ms| format!("{ms:.2} ms"));
    let unserved = p
        .unserved_pct
        .map_or(String::new(), |u| format!(", unserved {u:.1} %"));
    let verdict = match p.holds {
        None => "",
        Some(true) => ": holds",
        Some(false) => ": fails",
    };
    format!(
        "{what} → {:.0}/s achieved, p{} {lat}{unserved}{verdict}",
        p.achieved_per_s,
        trim(f.percentile)
    )
}

/// The search's answer in words.
fn conclusion(o: &Outcome) -> String {
    let pct = |r: f64| 100.0 * r / o.peak_per_s;
    let mut s = match (o.held_per_s, o.failed_per_s) {
        (Some(h), None) => format!(
            "Highest rate held: {h:.0}/s, the closed-loop peak itself (no higher rate was probed: more would need more connections, --threads)"
        ),
        (Some(h), Some(f)) => format!(
            "Highest rate held: {h:.0}/s ({:.1} % of the closed-loop peak {:.0}/s); {f:.0}/s ({:.1} %) failed",
            pct(h),
            o.peak_per_s,
            pct(f)
        ),
        (None, Some(f)) => format!(
            "No rate held: the lowest probed, {f:.0}/s ({:.1} % of the closed-loop peak {:.0}/s), failed",
            pct(f),
            o.peak_per_s
        ),
        (None, None) => "No rate was judged".to_string(),
    };
    if let Some(why) = &o.stopped {
        s.push_str(&format!(" (the search stopped: {why})"));
    }
    s
}

/// The outcome and every probe's record: `{"find_rate": …, "runs": […]}`.
fn write_json(out: &JsonOut, outcome: &Outcome, runs: &[Run]) -> anyhow::Result<()> {
    let mut buf = Vec::new();
    buf.extend_from_slice(b"{\"find_rate\":");
    serde_json::to_writer(&mut buf, outcome)?;
    buf.extend_from_slice(b",\"runs\":[");
    for (i, r) in runs.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        crate::record::write(r, &mut buf)?;
    }
    buf.extend_from_slice(b"]}\n");
    out.write(&buf)
}

/// A number without trailing zeros.
fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_without_trailing_zeros() {
        assert_eq!(trim(99.0), "99");
        assert_eq!(trim(99.9), "99.9");
        assert_eq!(trim(0.25), "0.25");
    }
}
