//! The spread of repeated measurements of one figure: mean, sample
//! standard deviation, range and the 95 % confidence interval of the mean.

/// One metric over the finished repeats of a group.
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    /// Repeats that have a value (finished ones; for latency, those in which
    /// a transaction completed).
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (divisor n − 1); `None` below two repeats.
    pub stddev: Option<f64>,
    pub min: f64,
    pub max: f64,
    /// Half-width of the 95 % confidence interval of the mean (Student's t,
    /// n − 1 degrees of freedom): the mean is `mean ± ci95`. `None` below
    /// two repeats.
    pub ci95: Option<f64>,
}

impl Spread {
    /// `None` for no values: there is nothing to summarise.
    pub fn of(xs: &[f64]) -> Option<Spread> {
        let mean = super::mean(xs)?;
        Some(Spread {
            n: xs.len(),
            mean,
            stddev: super::stddev(xs),
            min: xs.iter().copied().fold(f64::INFINITY, f64::min),
            max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            ci95: super::mean_ci95(xs).map(|(_, half)| half),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_three_repeats() {
        // mean 110, deviations -10, 0, 10: s = sqrt(200 / 2) = 10;
        // ci95 = t(0.975, 2) · 10 / sqrt(3) = 4.302653 · 5.773503 = 24.841379.
        let s = Spread::of(&[100.0, 110.0, 120.0]).unwrap();
        assert_eq!((s.n, s.mean, s.min, s.max), (3, 110.0, 100.0, 120.0));
        assert!((s.stddev.unwrap() - 10.0).abs() < 1e-12);
        assert!((s.ci95.unwrap() - 24.841379).abs() < 1e-6, "{:?}", s.ci95);
    }

    #[test]
    fn spread_of_one_or_none() {
        let s = Spread::of(&[7.0]).unwrap();
        assert_eq!((s.n, s.mean, s.min, s.max), (1, 7.0, 7.0, 7.0));
        assert_eq!((s.stddev, s.ci95), (None, None));
        assert_eq!(Spread::of(&[]), None);
    }
}
