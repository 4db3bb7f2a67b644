//! Paired comparisons: two series measured in the same blocks (each block
//! runs every series once, back to back), compared block by block as
//! ratios, so that what moves both sides of a block alike — the machine
//! drifting over a day — cancels.
//!
//! The figure is the geometric mean of the per-block ratios with a 95 %
//! confidence interval from Student's t on their logarithms:
//! `exp(mean(ln r) ± t(0.975, n − 1) · sd(ln r) / √n)`. Why t on log
//! ratios and not a bootstrap: a study has 3 to 10 blocks, and a bootstrap
//! of so few values has too few distinct resamples (its percentile
//! interval is known to be too narrow below ~20); t is exact when the log
//! ratios are normal, which a ratio of two throughputs with independent,
//! roughly symmetric noise is to a good approximation, and logarithms make
//! the interval the same whichever side is the baseline (the interval of
//! B/A is that of A/B inverted).
//!
//! A [`Verdict`] then says what the interval allows: `equivalent` when it
//! lies inside ±margin, `better` / `worse` when it excludes 1, otherwise
//! `inconclusive`; fewer than two blocks, `too_few_repeats`.

use serde::Serialize;

use super::{mean_ci95, t975};

/// The ratio of one series to another over paired blocks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ratio {
    /// Geometric mean of the per-block ratios (value / baseline).
    pub ratio: f64,
    /// The 95 % confidence interval of the ratio; None with one block.
    pub ci: Option<(f64, f64)>,
    /// Blocks that paired (both sides measured, both positive).
    pub blocks: usize,
}

impl Ratio {
    /// Of the per-block `(value, baseline)` pairs; pairs where either side
    /// is not a positive number are left out (they have no ratio). None
    /// when no pair is left.
    pub fn of(pairs: &[(f64, f64)]) -> Option<Ratio> {
        let logs: Vec<f64> = pairs
            .iter()
            .filter(|(v, b)| v.is_finite() && b.is_finite() && *v > 0.0 && *b > 0.0)
            .map(|(v, b)| (v / b).ln())
            .collect();
        Ratio::of_logs(&logs)
    }

    /// Of per-block ratios given as their logarithms.
    pub fn of_logs(logs: &[f64]) -> Option<Ratio> {
        let (m, half) = match mean_ci95(logs) {
            Some(x) => x,
            None => (*logs.first()?, f64::NAN),
        };
        Some(Ratio {
            ratio: m.exp(),
            ci: half
                .is_finite()
                .then(|| ((m - half).exp(), (m + half).exp())),
            blocks: logs.len(),
        })
    }

    /// The interval's half-width as a share of 1 (0.03: ±3 %); None with
    /// one block.
    pub fn half_width(&self) -> Option<f64> {
        self.ci.map(|(lo, hi)| (hi - lo) / 2.0)
    }

    /// What the interval allows, with `margin` the equivalence margin (a
    /// share: 0.02 for ±2 %) and `higher_is_better` the metric's sense
    /// (throughput: true; latency, CPU per transaction: false).
    pub fn verdict(&self, margin: f64, higher_is_better: bool) -> Verdict {
        let Some((lo, hi)) = self.ci.filter(|_| self.blocks >= 2) else {
            return Verdict::TooFewRepeats;
        };
        if lo >= 1.0 - margin && hi <= 1.0 + margin {
            Verdict::Equivalent
        } else if lo > 1.0 {
            if higher_is_better {
                Verdict::Better
            } else {
                Verdict::Worse
            }
        } else if hi < 1.0 {
            if higher_is_better {
                Verdict::Worse
            } else {
                Verdict::Better
            }
        } else {
            Verdict::Inconclusive
        }
    }
}

/// What a comparison's interval allows one to say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Better than the baseline: the interval lies beyond 1 on the good side.
    Better,
    /// Worse than the baseline: the interval lies beyond 1 on the bad side.
    Worse,
    /// No difference: the interval lies inside ±margin.
    Equivalent,
    /// The interval contains 1 but reaches outside ±margin: the data
    /// decide neither way.
    Inconclusive,
    /// Fewer than two paired blocks: no interval.
    TooFewRepeats,
    /// The two sides ran on different machines: not compared.
    DifferentMachines,
}

impl Verdict {
    /// The name JSON and CSV use.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Equivalent => "equivalent",
            Verdict::Inconclusive => "inconclusive",
            Verdict::TooFewRepeats => "too_few_repeats",
            Verdict::DifferentMachines => "different_machines",
        }
    }

    /// A difference the data support: better or worse.
    pub fn decided(self) -> bool {
        matches!(self, Verdict::Better | Verdict::Worse)
    }
}

/// The mean of per-block values with its 95 % interval, for a figure
/// compared with a number rather than another series (`slower("A") ~ 40`):
/// (mean, Some((low, high))), or the one value with None.
pub fn mean_interval(values: &[f64]) -> Option<(f64, Option<(f64, f64)>)> {
    match mean_ci95(values) {
        Some((m, h)) => Some((m, Some((m - h, m + h)))),
        None => values.first().map(|&v| (v, None)),
    }
}

/// Student's t 0.975 quantile, for callers that build their own interval.
pub fn t_975(df: usize) -> f64 {
    t975(df)
}

/// The chance of `k` or more successes in `n` independent trials of
/// probability `p`: how often a control measured against itself with 95 %
/// intervals (p = 0.05 each) differs in `k` of `n` cells by chance alone.
pub fn binomial_at_least(n: usize, k: usize, p: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    // 1 − P(fewer than k), the terms built one from the last.
    let mut term = (1.0 - p).powi(n as i32);
    let mut below = 0.0;
    for i in 0..k.min(n + 1) {
        below += term;
        term *= (n - i) as f64 / (i + 1) as f64 * p / (1.0 - p);
    }
    (1.0 - below).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, eps: f64) -> bool {
        (a - b).abs() <= eps
    }

    #[test]
    fn a_constant_ratio_has_a_zero_width_interval() {
        let r = Ratio::of(&[(110.0, 100.0), (220.0, 200.0), (55.0, 50.0)]).unwrap();
        assert!(close(r.ratio, 1.1, 1e-12), "{r:?}");
        let (lo, hi) = r.ci.unwrap();
        assert!(close(lo, 1.1, 1e-12) && close(hi, 1.1, 1e-12));
        assert_eq!(r.blocks, 3);
        assert_eq!(r.verdict(0.02, true), Verdict::Better);
        assert_eq!(r.verdict(0.02, false), Verdict::Worse);
    }

    #[test]
    fn the_interval_is_t_on_the_log_ratios() {
        // ln ratios 0, ln 1.1, ln 0.95: mean 0.014672, sd 0.074395,
        // t(0.975, 2) = 4.302653 → half-width 0.184807 in logs.
        let r = Ratio::of(&[(100.0, 100.0), (110.0, 100.0), (95.0, 100.0)]).unwrap();
        let logs = [0.0f64, 1.1f64.ln(), 0.95f64.ln()];
        let m = logs.iter().sum::<f64>() / 3.0;
        let sd = (logs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 2.0).sqrt();
        let half = 4.302653 * sd / 3f64.sqrt();
        assert!(close(r.ratio, m.exp(), 1e-12));
        let (lo, hi) = r.ci.unwrap();
        assert!(close(lo, (m - half).exp(), 1e-9), "{lo}");
        assert!(close(hi, (m + half).exp(), 1e-9), "{hi}");
        assert!(close(r.ratio, 1.014780, 1e-6), "{}", r.ratio);
        assert!(
            close(lo, 0.843551, 1e-6) && close(hi, 1.220767, 1e-6),
            "{lo} {hi}"
        );
        assert_eq!(r.verdict(0.02, true), Verdict::Inconclusive);
    }

    #[test]
    fn a_tight_interval_around_one_is_equivalent() {
        let r = Ratio::of(&[
            (100.0, 100.0),
            (100.5, 100.0),
            (99.6, 100.0),
            (100.2, 100.0),
        ])
        .unwrap();
        assert_eq!(r.verdict(0.02, true), Verdict::Equivalent);
        // The same interval is inconclusive at a margin it does not fit in.
        assert_eq!(r.verdict(0.001, true), Verdict::Inconclusive);
        assert!(r.half_width().unwrap() < 0.01);
    }

    #[test]
    fn an_interval_beyond_one_but_inside_the_margin_is_equivalent() {
        // 0.5 % faster in every block: a real difference, but one the
        // margin calls none.
        let r = Ratio::of(&[(100.5, 100.0), (201.0, 200.0), (50.25, 50.0)]).unwrap();
        assert_eq!(r.verdict(0.02, true), Verdict::Equivalent);
        assert_eq!(r.verdict(0.001, true), Verdict::Better);
    }

    #[test]
    fn swapping_the_sides_inverts_the_interval() {
        let pairs = [(103.0, 100.0), (97.0, 101.0), (110.0, 99.0), (101.0, 100.0)];
        let swapped: Vec<(f64, f64)> = pairs.iter().map(|&(a, b)| (b, a)).collect();
        let (a, b) = (Ratio::of(&pairs).unwrap(), Ratio::of(&swapped).unwrap());
        assert!(close(a.ratio, 1.0 / b.ratio, 1e-12));
        let ((al, ah), (bl, bh)) = (a.ci.unwrap(), b.ci.unwrap());
        assert!(close(al, 1.0 / bh, 1e-12) && close(ah, 1.0 / bl, 1e-12));
    }

    #[test]
    fn one_block_has_no_interval_and_bad_pairs_are_left_out() {
        let r = Ratio::of(&[(120.0, 100.0), (0.0, 100.0), (f64::NAN, 1.0)]).unwrap();
        assert_eq!(r.blocks, 1);
        assert!(close(r.ratio, 1.2, 1e-12));
        assert_eq!(r.ci, None);
        assert_eq!(r.half_width(), None);
        assert_eq!(r.verdict(0.02, true), Verdict::TooFewRepeats);
        assert!(Ratio::of(&[]).is_none());
        assert!(Ratio::of(&[(0.0, 1.0)]).is_none());
    }

    #[test]
    fn the_mean_interval_of_values() {
        let (m, ci) = mean_interval(&[10.0, 12.0, 14.0]).unwrap();
        assert!(close(m, 12.0, 1e-12));
        // sd 2, t(2) = 4.302653: ± 4.968275.
        let (lo, hi) = ci.unwrap();
        assert!(close(lo, 12.0 - 4.968275, 1e-5) && close(hi, 12.0 + 4.968275, 1e-5));
        assert_eq!(mean_interval(&[3.0]), Some((3.0, None)));
        assert_eq!(mean_interval(&[]), None);
    }

    #[test]
    fn verdict_names() {
        assert_eq!(Verdict::TooFewRepeats.name(), "too_few_repeats");
        assert_eq!(
            serde_json::to_string(&Verdict::DifferentMachines).unwrap(),
            "\"different_machines\""
        );
        assert!(Verdict::Worse.decided() && !Verdict::Equivalent.decided());
    }

    #[test]
    fn the_chance_of_k_or_more_differing_cells() {
        // 19 cells at 1 in 20: none differ 37.7 % of the time, one 37.7 %.
        assert!((binomial_at_least(19, 1, 0.05) - (1.0 - 0.95f64.powi(19))).abs() < 1e-12);
        let two = 1.0 - 0.95f64.powi(19) - 19.0 * 0.05 * 0.95f64.powi(18);
        assert!((binomial_at_least(19, 2, 0.05) - two).abs() < 1e-12);
        assert!((two - 0.2453).abs() < 1e-3, "{two}");
        assert_eq!(binomial_at_least(5, 0, 0.05), 1.0);
        assert!((binomial_at_least(2, 2, 0.05) - 0.0025).abs() < 1e-12);
        assert!(binomial_at_least(3, 4, 0.05).abs() < 1e-12);
    }
}
