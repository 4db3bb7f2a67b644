//! Draws from the Poisson distribution, for counting the arrivals of an
//! open loop's Poisson schedule over a span no connection reached: at
//! `--rate 1e12` two seconds hold two million million arrivals, and
//! stepping through them one exponential gap at a time would take longer
//! than the run. A Poisson process's count over a span is Poisson with
//! mean rate × span, whatever happened before the span (it has no memory),
//! so one draw counts it.
//!
//! Small means use Knuth's multiplication method (exact, a few draws);
//! means of 10 and more use Hörmann's PTRS, transformed rejection with
//! squeeze ("The transformed rejection method for generating Poisson
//! random variables", Insurance: Mathematics and Economics 12, 1993), also
//! exact and a few draws whatever the mean — the method NumPy uses.

use super::Rng;

/// One draw of a Poisson variable of mean `mean` (non-negative and
/// finite; 0 gives 0).
pub fn draw(rng: &mut Rng, mean: f64) -> u64 {
    assert!(mean >= 0.0 && mean.is_finite(), "Poisson mean {mean}");
    if mean == 0.0 {
        return 0;
    }
    if mean < 10.0 {
        return multiplication(rng, mean);
    }
    ptrs(rng, mean)
}

/// Knuth: multiply uniforms until their product falls below e^−mean.
fn multiplication(rng: &mut Rng, mean: f64) -> u64 {
    let limit = (-mean).exp();
    let mut k = 0;
    let mut p = 1.0 - rng.next_f64();
    while p > limit {
        k += 1;
        p *= 1.0 - rng.next_f64();
    }
    k
}

/// Hörmann's PTRS, as in NumPy's `random_poisson_ptrs`.
fn ptrs(rng: &mut Rng, mean: f64) -> u64 {
    let slam = mean.sqrt();
    let loglam = mean.ln();
    let b = 0.931 + 2.53 * slam;
    let a = -0.059 + 0.02483 * b;
    let invalpha = 1.1239 + 1.1328 / (b - 3.4);
    let vr = 0.9277 - 3.6224 / (b - 2.0);
    loop {
        let u = rng.next_f64() - 0.5;
        let v = 1.0 - rng.next_f64();
        let us = 0.5 - u.abs();
        let k = ((2.0 * a / us + b) * u + mean + 0.43).floor();
        if us >= 0.07 && v <= vr {
            return k as u64;
        }
        if k < 0.0 || (us < 0.013 && v > us) {
            continue;
        }
        let lhs = v.ln() + invalpha.ln() - (a / (us * us) + b).ln();
        if lhs <= -mean + k * loglam - log_gamma(k + 1.0) {
            return k as u64;
        }
    }
}

/// ln Γ(x) for x ≥ 1: Stirling's series, shifted up to x ≥ 7 where it is
/// accurate to double precision (NumPy's `random_loggam`).
fn log_gamma(x: f64) -> f64 {
    const A: [f64; 10] = [
        8.333333333333333e-02,
        -2.777777777777778e-03,
        7.936507936507937e-04,
        -5.952380952380952e-04,
        8.417508417508418e-04,
        -1.917526917526918e-03,
        6.41025641025641e-03,
        -2.955065359477124e-02,
        1.796443723688307e-01,
        -1.39243221690590e+00,
    ];
    if x == 1.0 || x == 2.0 {
        return 0.0;
    }
    let shift = if x < 7.0 { (7.0 - x.floor()) as u32 } else { 0 };
    let mut x0 = x + f64::from(shift);
    let x2 = 1.0 / (x0 * x0);
    let mut gl0 = A[9];
    for &c in A[..9].iter().rev() {
        gl0 = gl0 * x2 + c;
    }
    let mut gl = gl0 / x0 + 0.5 * std::f64::consts::TAU.ln() + (x0 - 0.5) * x0.ln() - x0;
    for _ in 0..shift {
        x0 -= 1.0;
        gl -= x0.ln();
    }
    gl
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mean and variance of `n` draws of mean `mean`.
    fn moments(mean: f64, n: usize, seed: u64) -> (f64, f64) {
        let mut rng = Rng::new(seed);
        let xs: Vec<f64> = (0..n).map(|_| draw(&mut rng, mean) as f64).collect();
        let m = xs.iter().sum::<f64>() / n as f64;
        let v = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64;
        (m, v)
    }

    #[test]
    fn draws_have_the_poisson_mean_and_variance() {
        // Both methods, and a mean as large as a huge rate's count.
        for (mean, seed) in [
            (0.5, 1),
            (3.0, 2),
            (9.9, 3),
            (10.0, 4),
            (250.0, 5),
            (2e12, 6),
        ] {
            let n = 40_000;
            let (m, v) = moments(mean, n, seed);
            // The sample mean's standard error is sqrt(mean / n); the
            // variance's relative one about sqrt(2 / n) = 0.7 %.
            let se = (mean / n as f64).sqrt();
            assert!((m - mean).abs() < 5.0 * se, "mean {m} for {mean}");
            assert!((v / mean - 1.0).abs() < 0.05, "variance {v} for {mean}");
        }
        // A span of no length holds no arrival.
        let mut rng = Rng::new(9);
        assert_eq!(draw(&mut rng, 0.0), 0);
    }

    #[test]
    fn small_counts_have_the_poisson_probabilities() {
        // P(0) = e^−3, P(3) = 27/6 e^−3, for both methods' side of 10
        // (the larger through PTRS at mean 12: P(12) = 12^12/12! e^−12).
        let n = 200_000;
        let mut rng = Rng::new(11);
        let counts: Vec<u64> = (0..n).map(|_| draw(&mut rng, 3.0)).collect();
        let share = |k| counts.iter().filter(|&&c| c == k).count() as f64 / n as f64;
        let e3 = (-3f64).exp();
        assert!((share(0) - e3).abs() < 0.003, "P(0) {}", share(0));
        assert!((share(3) - 4.5 * e3).abs() < 0.005, "P(3) {}", share(3));
        let counts: Vec<u64> = (0..n).map(|_| draw(&mut rng, 12.0)).collect();
        let p12 = (12.0 * 12f64.ln() - 12.0 - log_gamma(13.0)).exp();
        let s12 = counts.iter().filter(|&&c| c == 12).count() as f64 / n as f64;
        assert!((s12 - p12).abs() < 0.004, "P(12) {s12} vs {p12}");
    }

    #[test]
    fn log_gamma_matches_factorials() {
        let mut f = 1.0f64;
        for k in 1..30u32 {
            f *= f64::from(k);
            let g = log_gamma(f64::from(k) + 1.0);
            assert!((g - f.ln()).abs() < 1e-9 * f.ln().max(1.0), "{k}! {g}");
        }
    }
}
