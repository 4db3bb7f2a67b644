//! The sustainable-rate search's bisection, shared by `run --find-rate`
//! and a study's `rates = "find"`: the closed-loop peak is probed first,
//! then the rate halfway between the highest that held and the lowest that
//! failed, until the two are within a precision (a share of the peak).
//!
//! Pure: a search is its peak and its probes' verdicts, so it can be
//! replayed from stored points — a study resumed in another session
//! probes the very rates the first session would have.
//!
//! Also [`last_true`]: the galloping search the loads use to find where
//! the rows a table holds end (sysbench's highest id, YCSB's first record
//! not inserted), in about 2·log2 probes of an index.

/// The largest `x >= from` for which `holds(x)`, where `holds` is true up
/// to some point and false after it: None when `holds(from)` is false.
/// Doubles the step until a probe fails, then bisects; `i64::MAX` when
/// every probe holds.
pub fn last_true<E>(
    from: i64,
    mut holds: impl FnMut(i64) -> Result<bool, E>,
) -> Result<Option<i64>, E> {
    if !holds(from)? {
        return Ok(None);
    }
    // Invariant: holds(lo), !holds(hi).
    let (mut lo, mut step) = (from, 1i64);
    let mut hi = loop {
        let probe = from.saturating_add(step);
        if probe == lo {
            return Ok(Some(lo));
        }
        if !holds(probe)? {
            break probe;
        }
        lo = probe;
        step = step.saturating_mul(2);
    };
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if holds(mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(Some(lo))
}

/// The next rate to probe, between the highest that held (`lo`, 0 when
/// none has) and the lowest that failed (`hi`); None once they are within
/// `precision_pct` of the peak.
pub fn next_rate(lo: f64, hi: f64, peak: f64, precision_pct: f64) -> Option<f64> {
    let mid = ((lo + hi) / 2.0).round().max(1.0);
    (hi - lo > peak * precision_pct / 100.0 && mid > lo && mid < hi).then_some(mid)
}

/// The most probes a search to `precision_pct` of the peak makes: the
/// peak itself, then one halving of the interval [0, peak] each until it
/// is within the precision, and one more for the rounding of the rates
/// to whole arrivals per second.
pub fn most_probes(precision_pct: f64) -> u32 {
    2 + (100.0 / precision_pct).log2().ceil().max(0.0) as u32
}

/// A search so far: its peak and each probe's rate and verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Bisection {
    /// The closed-loop peak, whole arrivals per second.
    pub peak: f64,
    pub precision_pct: f64,
    /// The highest rate that held.
    pub held: Option<f64>,
    /// The lowest rate that failed.
    pub failed: Option<f64>,
    /// (rate, held) in the order probed.
    pub probes: Vec<(f64, bool)>,
}

impl Bisection {
    /// A search from a closed-loop peak (rounded to whole arrivals).
    pub fn new(peak: f64, precision_pct: f64) -> Bisection {
        Bisection {
            peak: peak.round(),
            precision_pct,
            held: None,
            failed: None,
            probes: Vec::new(),
        }
    }

    /// The rate to probe next; None once the search has its answer (the
    /// peak held, or the rates that held and failed are within the
    /// precision).
    pub fn next(&self) -> Option<f64> {
        if self.peak < 1.0 {
            return None;
        }
        if self.probes.is_empty() {
            return Some(self.peak);
        }
        let hi = self.failed?;
        next_rate(self.held.unwrap_or(0.0), hi, self.peak, self.precision_pct)
    }

    /// Adds a probe's verdict.
    pub fn record(&mut self, rate: f64, held: bool) {
        if held {
            self.held = Some(self.held.map_or(rate, |h| h.max(rate)));
        } else {
            self.failed = Some(self.failed.map_or(rate, |f| f.min(rate)));
        }
        self.probes.push((rate, held));
    }

    /// Replays a search from its peak and its probes' verdicts in order:
    /// the rates are the ones [`Bisection::next`] gave.
    pub fn replay(peak: f64, precision_pct: f64, verdicts: &[bool]) -> Bisection {
        let mut b = Bisection::new(peak, precision_pct);
        for &held in verdicts {
            let Some(rate) = b.next() else { break };
            b.record(rate, held);
        }
        b
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn last_true_finds_where_a_run_of_trues_ends() {
        for end in [5i64, 6, 7, 100, 1023, 1024, 1_000_003] {
            let mut probes = 0;
            let found = super::last_true::<()>(5, |x| {
                probes += 1;
                Ok(x <= end)
            });
            assert_eq!(found, Ok(Some(end)));
            assert!(probes <= 2 + 2 * 64, "{probes}");
        }
        assert_eq!(super::last_true::<()>(5, |x| Ok(x < 5)), Ok(None));
        assert_eq!(super::last_true::<()>(1, |_| Ok(true)), Ok(Some(i64::MAX)));
    }

    use super::*;

    #[test]
    fn bisection_halves_until_within_the_precision() {
        // Peak 1000, precision 2 %: stops once held and failed are ≤ 20 apart.
        assert_eq!(next_rate(0.0, 1000.0, 1000.0, 2.0), Some(500.0));
        assert_eq!(next_rate(500.0, 1000.0, 1000.0, 2.0), Some(750.0));
        assert_eq!(next_rate(500.0, 520.0, 1000.0, 2.0), None);
        assert_eq!(next_rate(500.0, 521.0, 1000.0, 2.0), Some(511.0));
        // Nothing held yet: it keeps halving towards 0, and stops at 1/s.
        assert_eq!(next_rate(0.0, 3.0, 1000.0, 0.1), Some(2.0));
        assert_eq!(next_rate(0.0, 1.0, 1000.0, 0.01), None);
    }

    #[test]
    fn a_replayed_search_probes_the_same_rates() {
        // The peak fails, half holds, three quarters fails, …
        let b = Bisection::replay(1000.4, 10.0, &[false, true, false, true, true]);
        let rates: Vec<f64> = b.probes.iter().map(|p| p.0).collect();
        assert_eq!(rates, [1000.0, 500.0, 750.0, 625.0, 688.0]);
        assert_eq!((b.held, b.failed), (Some(688.0), Some(750.0)));
        // 750 − 688 = 62 ≤ 100: the answer is known.
        assert_eq!(b.next(), None);
        // More verdicts than the search needs are not probed.
        let c = Bisection::replay(1000.0, 10.0, &[false, true, false, true, true, true]);
        assert_eq!(c.probes.len(), 5);
        // The peak that holds ends the search at once.
        let d = Bisection::replay(800.0, 2.0, &[true]);
        assert_eq!((d.held, d.next()), (Some(800.0), None));
        // No peak, no search.
        assert_eq!(Bisection::new(0.2, 2.0).next(), None);
    }

    #[test]
    fn the_most_probes_cover_the_worst_search() {
        for precision in [1.0, 2.0, 5.0, 10.0, 25.0, 50.0, 100.0] {
            let most = most_probes(precision);
            // Every probe failing (halving towards 0) and a mix.
            for peak in [7.0, 100.0, 997.0, 12_345.0, 98_765.0] {
                for pattern in [0, 1, 2] {
                    let mut b = Bisection::new(peak, precision);
                    let mut n = 0;
                    while let Some(r) = b.next() {
                        b.record(r, pattern > 0 && n % (pattern + 1) == 1);
                        n += 1;
                    }
                    assert!(n <= most, "{precision} % of {peak}: {n} probes > {most}");
                }
            }
        }
        assert_eq!(most_probes(2.0), 8);
        assert_eq!(most_probes(100.0), 2);
    }
}
