//! The sustainable-rate search's bisection, shared by `run --find-rate`
//! and a study's `rates = "find"`: the closed-loop peak is probed first,
//! then the rate halfway between the highest that held and the lowest that
//! failed, until the two are within a precision (a share of the peak).
//!
//! Pure: a search is its peak and its probes' verdicts, so it can be
//! replayed from stored points — a study resumed in another session
//! probes the very rates the first session would have.

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
