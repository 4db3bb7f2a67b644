//! Statistics: pure functions and data structures over measured numbers.
//!
//! Nothing here does I/O or reads a clock; everything is unit-tested with
//! literal numbers.
//!
//! - [`histogram`]: the mergeable latency [`histogram::Histogram`] every
//!   statement and transaction is recorded into, and the percentiles read
//!   from it.
//! - [`summary`]: the latency figures reported for one histogram.
//! - [`fairness`]: sysbench's "Threads fairness" over the clients.
//! - [`spread`]: the [`Spread`] of repeated measurements of one figure,
//!   built on [`mean`], [`stddev`] and [`mean_ci95`].
//! - [`paired`]: two series compared block by block as ratios, with an
//!   interval and a verdict that can say "no difference".
//! - [`hdrlog`]: a run's interval histograms in HdrHistogram's interval
//!   log format (`run --hdr-log`).
//! - [`bisect`]: the sustainable-rate search's bisection over offered
//!   rates (`run --find-rate`, a study's `rates = "find"`).

pub mod bisect;
pub mod fairness;
pub mod hdrlog;
pub mod histogram;
pub mod paired;
pub mod spare;
pub mod spread;
pub mod summary;

pub use spread::Spread;

/// The arithmetic mean; `None` for an empty slice. NaN or infinite inputs
/// propagate into the result.
pub fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    Some(xs.iter().sum::<f64>() / xs.len() as f64)
}

/// The sample standard deviation (divisor n − 1, Bessel's correction): the
/// estimate of the spread of repeated measurements, which are a sample of
/// what the point would give. `None` for fewer than two values.
///
/// (sysbench's thread fairness uses the population form instead; see
/// [`fairness::fairness`].)
pub fn stddev(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 {
        return None;
    }
    let m = mean(xs)?;
    let squares: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
    Some((squares / (xs.len() - 1) as f64).sqrt())
}

/// The mean and the half-width of its 95 % confidence interval,
/// `t(0.975, n − 1) · s / √n`, with `s` the sample standard deviation and
/// `t` Student's t quantile for n − 1 degrees of freedom. The interval is
/// `mean ± half_width`. `None` for fewer than two values.
pub fn mean_ci95(xs: &[f64]) -> Option<(f64, f64)> {
    let m = mean(xs)?;
    let s = stddev(xs)?;
    let n = xs.len() as f64;
    Some((m, t975(xs.len() - 1) * s / n.sqrt()))
}

/// Student's t 0.975 quantile (two-sided 95 %) for `df` degrees of freedom.
///
/// Exact to 6 decimals for 1 to 30, 40, 50, 60, 80, 100 and 120 degrees of
/// freedom. Between listed values the next lower listed `df` is used, which
/// is slightly larger, so the interval errs on the wide side; beyond 120 the
/// normal quantile 1.959964 is used (t(120) is 1.979930, 1 % more).
fn t975(df: usize) -> f64 {
    /// t(0.975, df) for df = 1..=30.
    const SMALL: [f64; 30] = [
        12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157,
        2.228139, 2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922,
        2.093024, 2.085963, 2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831,
        2.048407, 2.045230, 2.042272,
    ];
    /// (df, t(0.975, df)) beyond 30, ascending.
    const LARGE: [(usize, f64); 6] = [
        (40, 2.021075),
        (50, 2.008559),
        (60, 2.000298),
        (80, 1.990063),
        (100, 1.983972),
        (120, 1.979930),
    ];
    match df {
        0 => f64::NAN, // unreachable through mean_ci95, which needs n ≥ 2
        1..=30 => SMALL[df - 1],
        _ if df > 120 => 1.959964,
        _ => LARGE
            .iter()
            .rev()
            .find(|&&(d, _)| d <= df)
            .map_or(SMALL[29], |&(_, t)| t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn mean_and_sample_stddev() {
        assert_eq!(mean(&[]), None);
        assert_eq!(mean(&[4.0]), Some(4.0));
        assert_eq!(mean(&[1.0, 2.0, 3.0, 6.0]), Some(3.0));
        assert_eq!(stddev(&[4.0]), None);
        // Deviations -2, -1, 0, 3: squares sum to 14, over n - 1 = 3.
        assert!(close(
            stddev(&[1.0, 2.0, 3.0, 6.0]).unwrap(),
            (14.0f64 / 3.0).sqrt()
        ));
        assert_eq!(stddev(&[5.0, 5.0, 5.0]), Some(0.0));
    }

    #[test]
    fn ci95_of_five_repeats() {
        // mean 14, s = sqrt(40 / 4) = sqrt(10), s/sqrt(5) = sqrt(2),
        // t(0.975, 4) = 2.776445: half-width 2.776445 * 1.41421356 = 3.926486.
        let (m, half) = mean_ci95(&[10.0, 12.0, 14.0, 16.0, 18.0]).unwrap();
        assert_eq!(m, 14.0);
        assert!((half - 3.926486).abs() < 1e-6, "{half}");
        assert_eq!(mean_ci95(&[3.0]), None);
        assert_eq!(mean_ci95(&[]), None);
    }

    #[test]
    fn ci95_of_two_repeats_uses_t_with_one_degree_of_freedom() {
        // mean 2, s = sqrt(2), s/sqrt(2) = 1: half-width = t(0.975, 1).
        let (m, half) = mean_ci95(&[1.0, 3.0]).unwrap();
        assert_eq!(m, 2.0);
        assert!(close(half, 12.706205));
    }

    #[test]
    fn t_table_lookups() {
        assert_eq!(t975(4), 2.776445);
        assert_eq!(t975(30), 2.042272);
        assert_eq!(t975(35), 2.042272); // next lower listed df: wider
        assert_eq!(t975(45), 2.021075);
        assert_eq!(t975(120), 1.979930);
        assert_eq!(t975(500), 1.959964);
    }
}
