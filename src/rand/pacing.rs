//! Pacing draws: the arrival schedule of an open loop (`--rate`, Poisson or
//! evenly spaced) and users' think times (`--think-time`), each from its own
//! seeded stream so a run's schedule is a function of its seed alone.
//!
//! The schedule is a position, not a queue: arrival `k`'s intended start is
//! computed when a connection asks for it, from the gaps drawn so far, so
//! the schedule never drifts with the service (the gaps are summed from the
//! run's start, never from when a transaction ran) and pending arrivals
//! cost no memory however far behind the connections fall.

use std::fmt;
use std::time::Duration;

use super::{poisson, Rng};
use crate::util::duration;

/// How arrivals are spaced at a rate of R per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrival {
    /// Exponential gaps of mean 1/R: independent users arriving at random
    /// (pgbench's `--rate`, wrk2's model).
    #[default]
    Poisson,
    /// Gaps of exactly 1/R.
    Uniform,
}

impl Arrival {
    pub fn parse(s: &str) -> Result<Arrival, String> {
        match s {
            "poisson" => Ok(Arrival::Poisson),
            "uniform" => Ok(Arrival::Uniform),
            _ => Err(format!(
                "unknown arrival process '{s}': expected poisson or uniform"
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Arrival::Poisson => "poisson",
            Arrival::Uniform => "uniform",
        }
    }
}

/// The intended starts of an open loop's transactions, in nanoseconds from
/// the run's start, in order.
#[derive(Debug, Clone)]
pub struct Schedule {
    kind: Arrival,
    /// Mean gap, ns.
    gap_ns: f64,
    rng: Rng,
    /// The next arrival's intended start, ns from the start (as f64 so that
    /// a sum of millions of gaps loses nothing that matters: 2^53 ns is
    /// 104 days).
    next_ns: f64,
    /// Arrivals handed out so far.
    taken: u64,
}

impl Schedule {
    /// `rate` arrivals per second (positive and finite); `seed` the run's.
    pub fn new(rate: f64, kind: Arrival, seed: u64) -> Schedule {
        assert!(rate > 0.0 && rate.is_finite(), "rate {rate}");
        // A stream of its own, apart from every client's.
        let mut rng = Rng::for_client(seed ^ 0x7261_7465_7261_7465, u64::MAX);
        let gap_ns = 1e9 / rate;
        let first = match kind {
            // The first arrival comes after a gap like every other one: a
            // Poisson process has no arrival at its origin.
            Arrival::Poisson => exponential(&mut rng, gap_ns),
            Arrival::Uniform => 0.0,
        };
        Schedule {
            kind,
            gap_ns,
            rng,
            next_ns: first,
            taken: 0,
        }
    }

    /// The next arrival's intended start, ns from the start.
    pub fn peek(&self) -> u64 {
        self.next_ns as u64
    }

    /// Hands out the next arrival: its intended start, ns from the start.
    pub fn take(&mut self) -> u64 {
        let t = self.next_ns as u64;
        self.taken += 1;
        self.next_ns = match self.kind {
            Arrival::Poisson => self.next_ns + exponential(&mut self.rng, self.gap_ns),
            // A multiple of the gap, not a sum of gaps: a million million
            // sums would drift, and the count over any span then follows
            // from the gap alone (`untaken_between`).
            Arrival::Uniform => self.taken as f64 * self.gap_ns,
        };
        t
    }

    /// Arrivals handed out so far.
    pub fn taken(&self) -> u64 {
        self.taken
    }

    /// Arrivals due at `now_ns` that have not been handed out (the queue's
    /// length), counting at most `limit` (cheap for a small limit).
    pub fn pending_at(&self, now_ns: u64, limit: u64) -> u64 {
        match self.kind {
            Arrival::Uniform => self.untaken_between(0, now_ns + 1).min(limit),
            Arrival::Poisson => self.clone().step(0, now_ns + 1, limit).0,
        }
    }

    /// Arrivals not handed out yet whose intended start lies in
    /// [`from_ns`, `to_ns`), for any rate without stepping through them:
    /// evenly spaced ones are counted from the gap (exact), Poisson ones
    /// are stepped exactly for the first [`STEPPED`] and counted by one
    /// Poisson draw beyond (the count the stream would give, in
    /// distribution; a Poisson process forgets its past).
    pub fn untaken_between(&self, from_ns: u64, to_ns: u64) -> u64 {
        if to_ns <= from_ns {
            return 0;
        }
        match self.kind {
            Arrival::Uniform => {
                // Arrival k is intended at ⌊k × gap⌋ ns: inside the span
                // when from ≤ k × gap < to.
                let first = ((from_ns as f64 / self.gap_ns).ceil() as u64).max(self.taken);
                let end = (to_ns as f64 / self.gap_ns).ceil() as u64;
                end.saturating_sub(first)
            }
            Arrival::Poisson => {
                let mut s = self.clone();
                let (n, done) = s.step(from_ns, to_ns, STEPPED);
                if done {
                    return n;
                }
                // The next arrival, drawn, is at `next_ns` (below `to`);
                // after it the process starts afresh.
                let start = s.next_ns.max(from_ns as f64);
                let at_next = u64::from(s.next_ns >= from_ns as f64);
                let mean = (to_ns as f64 - start).max(0.0) / self.gap_ns;
                n + at_next + poisson::draw(&mut s.rng, mean)
            }
        }
    }

    /// Takes arrivals before `to_ns`, at most `limit`: how many of them lie
    /// at or after `from_ns`, and whether `to_ns` was reached.
    fn step(&mut self, from_ns: u64, to_ns: u64, limit: u64) -> (u64, bool) {
        let mut n = 0;
        for _ in 0..limit {
            if self.peek() >= to_ns {
                return (n, true);
            }
            if self.take() >= from_ns {
                n += 1;
            }
        }
        (n, self.peek() >= to_ns)
    }
}

/// Poisson arrivals counted one by one before the rest of a span is counted
/// by a draw: exact for the spans of ordinary rates, a fraction of a
/// millisecond at most.
pub const STEPPED: u64 = 10_000;

/// A draw from the exponential distribution of mean `mean` (inverse
/// transform of a uniform in (0, 1]).
fn exponential(rng: &mut Rng, mean: f64) -> f64 {
    -(1.0 - rng.next_f64()).ln() * mean
}

/// The pause between one user's transactions.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum ThinkTime {
    Fixed(Duration),
    /// Evenly spread between the two.
    Uniform(Duration, Duration),
    /// Negative exponential of this mean, −ln(r) × mean, cut at `cap` if
    /// given (TPC-W and DBT-1 cap theirs at ten times the mean).
    Exp {
        mean: Duration,
        cap: Option<Duration>,
    },
}

/// What [`ThinkTime::parse`] accepts, for messages.
pub const THINK_TIME_FORMS: &str =
    "fixed:DURATION, uniform:MIN:MAX or exp:MEAN[:cap=MAX], e.g. fixed:100ms, uniform:1s:3s, exp:7.2s:cap=72s";

impl ThinkTime {
    /// Parses `fixed:100ms`, `uniform:1s:3s`, `exp:7.2s` or
    /// `exp:7.2s:cap=72s`. Every duration needs its unit.
    pub fn parse(s: &str) -> Result<ThinkTime, String> {
        let bad = |why: String| format!("bad think time '{s}': {why}; expected {THINK_TIME_FORMS}");
        let d = |x: &str| -> Result<Duration, String> {
            if !x.trim().ends_with(|c: char| c.is_ascii_alphabetic()) {
                return Err(bad(format!("'{x}' needs a unit (ms, s, …)")));
            }
            duration::parse(x).map_err(bad)
        };
        let parts: Vec<&str> = s.split(':').collect();
        let t = match parts.as_slice() {
            ["fixed", x] => ThinkTime::Fixed(d(x)?),
            ["uniform", a, b] => {
                let (a, b) = (d(a)?, d(b)?);
                if a > b {
                    return Err(bad(format!(
                        "the minimum {} exceeds the maximum {}",
                        parts[1], parts[2]
                    )));
                }
                ThinkTime::Uniform(a, b)
            }
            ["exp", m] => ThinkTime::Exp {
                mean: d(m)?,
                cap: None,
            },
            ["exp", m, cap] => {
                let Some(c) = cap.strip_prefix("cap=") else {
                    return Err(bad(format!("'{cap}' is not cap=DURATION")));
                };
                let (mean, c) = (d(m)?, d(c)?);
                if c < mean {
                    return Err(bad("the cap is below the mean".into()));
                }
                ThinkTime::Exp { mean, cap: Some(c) }
            }
            _ => return Err(bad("unknown form".into())),
        };
        Ok(t)
    }

    /// One pause.
    pub fn draw(&self, rng: &mut Rng) -> Duration {
        self.at(rng.next_f64())
    }

    /// The pause a uniform draw `r` in [0, 1) gives (inverse transform):
    /// so a stream of any size can feed it (a user's is 8 bytes).
    pub fn at(&self, r: f64) -> Duration {
        match *self {
            ThinkTime::Fixed(d) => d,
            ThinkTime::Uniform(a, b) => {
                let span = (b - a).as_nanos() as f64;
                a + Duration::from_nanos((r * span) as u64)
            }
            ThinkTime::Exp { mean, cap } => {
                let x = -(1.0 - r).ln() * mean.as_nanos() as f64;
                let d = Duration::from_nanos(x.min(u64::MAX as f64 / 2.0) as u64);
                cap.map_or(d, |c| d.min(c))
            }
        }
    }

    /// The expected pause (of the capped distribution, for the capped
    /// exponential m(1 − e^(−c/m))): what U users thinking this long
    /// between negligible transactions run is U / mean per second.
    pub fn mean(&self) -> Duration {
        match *self {
            ThinkTime::Fixed(d) => d,
            ThinkTime::Uniform(a, b) => (a + b) / 2,
            ThinkTime::Exp { mean, cap: None } => mean,
            ThinkTime::Exp { mean, cap: Some(c) } => {
                let m = mean.as_secs_f64();
                if m == 0.0 {
                    return Duration::ZERO;
                }
                Duration::from_secs_f64(m * (1.0 - (-c.as_secs_f64() / m).exp()))
            }
        }
    }
}

impl fmt::Display for ThinkTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = short;
        match *self {
            ThinkTime::Fixed(x) => write!(f, "fixed:{}", d(x)),
            ThinkTime::Uniform(a, b) => write!(f, "uniform:{}:{}", d(a), d(b)),
            ThinkTime::Exp { mean, cap: None } => write!(f, "exp:{}", d(mean)),
            ThinkTime::Exp { mean, cap: Some(c) } => write!(f, "exp:{}:cap={}", d(mean), d(c)),
        }
    }
}

/// A duration as it would be written in the option: `100ms`, `7.2s`.
fn short(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns % 1_000_000_000 == 0 {
        format!("{}s", ns / 1_000_000_000)
    } else if ns < 1_000_000_000 && ns % 1_000_000 == 0 {
        format!("{}ms", ns / 1_000_000)
    } else if ns < 1_000_000 {
        format!("{}us", ns as f64 / 1e3)
    } else {
        format!("{}s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kolmogorov–Smirnov: the largest distance between the sample's CDF
    /// and the exponential's.
    fn ks_exponential(gaps: &mut [f64], mean: f64) -> f64 {
        gaps.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let n = gaps.len() as f64;
        gaps.iter()
            .enumerate()
            .map(|(i, &x)| {
                let f = 1.0 - (-x / mean).exp();
                (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
            })
            .fold(0.0, f64::max)
    }

    #[test]
    fn poisson_gaps_are_exponential_with_mean_one_over_the_rate() {
        let rate = 5000.0;
        let mut s = Schedule::new(rate, Arrival::Poisson, 42);
        let n = 100_000;
        let times: Vec<u64> = (0..=n).map(|_| s.take()).collect();
        let mut gaps: Vec<f64> = times.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
        let mean = gaps.iter().sum::<f64>() / n as f64;
        // The mean of 100,000 exponential gaps is within 1 % (10 standard
        // errors of 0.32 %... 3 of them) of 1/R.
        assert!((mean / 200_000.0 - 1.0).abs() < 0.01, "mean gap {mean} ns");
        // KS at the 1 % level: D < 1.63 / sqrt(n).
        let d = ks_exponential(&mut gaps, 200_000.0);
        assert!(d < 1.63 / (n as f64).sqrt(), "KS distance {d}");
        // The same test rejects evenly spaced gaps.
        let mut even = vec![200_000.0; 1000];
        assert!(ks_exponential(&mut even, 200_000.0) > 0.3);
    }

    #[test]
    fn uniform_arrivals_are_evenly_spaced_from_the_start() {
        let mut s = Schedule::new(3.0, Arrival::Uniform, 1);
        let t: Vec<u64> = (0..4).map(|_| s.take()).collect();
        assert_eq!(t, vec![0, 333_333_333, 666_666_666, 1_000_000_000]);
        assert_eq!(s.taken(), 4);
    }

    #[test]
    fn the_schedule_is_the_seeds_and_pending_counts_what_is_due() {
        let a: Vec<u64> = {
            let mut s = Schedule::new(100.0, Arrival::Poisson, 7);
            (0..50).map(|_| s.take()).collect()
        };
        let mut s = Schedule::new(100.0, Arrival::Poisson, 7);
        assert_eq!(a, (0..50).map(|_| s.take()).collect::<Vec<_>>());
        let mut u = Schedule::new(1000.0, Arrival::Uniform, 7);
        u.take();
        // Due at 10 ms: arrivals at 1, 2, …, 10 ms.
        assert_eq!(u.pending_at(10_000_000, u64::MAX), 10);
        assert_eq!(u.pending_at(10_000_000, 4), 4);
        assert_eq!(u.taken(), 1, "counting takes nothing");
        let mut p = Schedule::new(1000.0, Arrival::Poisson, 7);
        let due: Vec<u64> = (0..20).map(|_| p.take()).collect();
        let p = Schedule::new(1000.0, Arrival::Poisson, 7);
        let at = due[9];
        assert_eq!(p.pending_at(at, u64::MAX), 10);
        assert_eq!(p.pending_at(at, 3), 3);
        assert_eq!(p.untaken_between(due[2], due[12]), 10);
    }

    #[test]
    fn huge_rates_are_counted_from_the_schedule_without_stepping() {
        // 1e12 a second, evenly: 1000 arrivals in each ns. Two seconds hold
        // 2e12, of which the first 1000 were taken.
        let mut u = Schedule::new(1e12, Arrival::Uniform, 1);
        for _ in 0..1000 {
            u.take();
        }
        let window = 2_000_000_000;
        let n = u.untaken_between(0, window) as f64;
        assert!((n - (2e12 - 1000.0)).abs() <= 1.0, "{n}");
        // The window's second second: 1e12.
        let n = u.untaken_between(window / 2, window) as f64;
        assert!((n - 1e12).abs() <= 1.0, "{n}");
        // Exact at ordinary rates, at the boundaries: arrivals at 0, ⅓ s,
        // ⅔ s, 1 s.
        let t = Schedule::new(3.0, Arrival::Uniform, 1);
        assert_eq!(t.untaken_between(0, 1_000_000_000), 3);
        assert_eq!(t.untaken_between(0, 1_000_000_001), 4);
        assert_eq!(t.untaken_between(333_333_334, 1_000_000_000), 1);
        // Poisson: within five standard deviations (√(2e12) = 1.4e6) of
        // the mean, counted at once.
        let p = Schedule::new(1e12, Arrival::Poisson, 5);
        let started = std::time::Instant::now();
        let n = p.untaken_between(0, window) as f64;
        assert!((n - 2e12).abs() < 5.0 * 2e12f64.sqrt(), "{n}");
        // Stepping through 2e12 arrivals would take hours; a minute is a
        // hang's bound, never a busy machine's.
        assert!(started.elapsed() < Duration::from_secs(60));
        // A span that starts after a backlog counts only itself.
        let n = p.untaken_between(window / 2, window) as f64;
        assert!((n - 1e12).abs() < 5.0 * 1e12f64.sqrt(), "{n}");
    }

    #[test]
    fn think_times_parse_draw_and_print() {
        let ms = Duration::from_millis;
        assert_eq!(
            ThinkTime::parse("fixed:100ms"),
            Ok(ThinkTime::Fixed(ms(100)))
        );
        assert_eq!(
            ThinkTime::parse("uniform:1s:3s"),
            Ok(ThinkTime::Uniform(ms(1000), ms(3000)))
        );
        let exp = ThinkTime::parse("exp:7.2s:cap=72s").unwrap();
        assert_eq!(
            exp,
            ThinkTime::Exp {
                mean: ms(7200),
                cap: Some(ms(72_000))
            }
        );
        assert_eq!(exp.to_string(), "exp:7.2s:cap=72s");
        for bad in [
            "exp",
            "fixed:100",
            "uniform:3s:1s",
            "exp:1s:72s",
            "exp:2s:cap=1s",
            "gauss:1s",
            "",
        ] {
            let e = ThinkTime::parse(bad).unwrap_err();
            assert!(e.contains("bad think time"), "{bad}: {e}");
        }
        let mut rng = Rng::new(3);
        let n = 200_000;
        let draws: Vec<f64> = (0..n).map(|_| exp.draw(&mut rng).as_secs_f64()).collect();
        assert!(draws.iter().all(|&x| x <= 72.0));
        let mean = draws.iter().sum::<f64>() / n as f64;
        let expected = exp.mean().as_secs_f64();
        assert!((expected - 7.2 * (1.0 - (-10f64).exp())).abs() < 1e-9);
        assert!((mean / expected - 1.0).abs() < 0.01, "{mean} vs {expected}");
        let u = ThinkTime::Uniform(ms(1000), ms(3000));
        for _ in 0..1000 {
            let x = u.draw(&mut rng);
            assert!(x >= ms(1000) && x <= ms(3000));
        }
    }
}
