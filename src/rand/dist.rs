//! The distributions sysbench draws row ids from (`--rand-type`), computed
//! from uniform doubles exactly as sysbench does, so that a hot spot in
//! dbsweep is the hot spot sysbench users know.
//!
//! Sources: `src/sb_rand.c` of sysbench 1.0.20 for uniform, gaussian,
//! special and pareto, with 1.0.20's option defaults. Zipfian is not in any
//! 1.0.x release: it comes from sysbench's master branch (commit 6c2e47e,
//! "Add Zipfian distribution"), which also made uniform the default
//! `--rand-type` and then dropped special. dbsweep defaults to uniform like
//! master and keeps special available for comparison with 1.0.x results.
//!
//! Where sysbench's arithmetic can leave [a, b] (u32 wrap-around of
//! `b - a + 1` on the full range, floating-point rounding at the top of a
//! range, out-of-range parameters), dbsweep clamps into [a, b]; in every
//! other case the result is the value sysbench computes from the same
//! uniform doubles.

use super::Rng;
use std::fmt;

/// Which distribution a [`Dist`] draws from; the `--rand-type` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DistKind {
    /// Every value in [a, b] equally likely.
    Uniform,
    /// Mean of `spec_iter` uniforms: a bell around the middle of the range.
    Gaussian,
    /// sysbench 1.0.x's default: `spec_res` % of draws uniform in (the upper
    /// part of) a window of `spec_pct` % of the range around its middle, the
    /// rest gaussian.
    Special,
    /// `n · u^p` with `p = ln h / ln(1 - h)`: the lowest `h` of the values
    /// get `1 - h` of the draws (80/20 by default).
    Pareto,
    /// Value `a + k - 1` with probability proportional to `1 / k^zipf_exp`.
    Zipfian,
}

impl DistKind {
    /// Every kind, in the order `--help` lists them.
    pub const ALL: [DistKind; 5] = [
        DistKind::Uniform,
        DistKind::Gaussian,
        DistKind::Special,
        DistKind::Pareto,
        DistKind::Zipfian,
    ];

    /// The `--rand-type` spelling, also used in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            DistKind::Uniform => "uniform",
            DistKind::Gaussian => "gaussian",
            DistKind::Special => "special",
            DistKind::Pareto => "pareto",
            DistKind::Zipfian => "zipfian",
        }
    }

    /// Parses a `--rand-type` value; exact lowercase names, as sysbench.
    pub fn from_name(s: &str) -> Option<DistKind> {
        DistKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

impl fmt::Display for DistKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// sysbench's knobs with sysbench 1.0.20's defaults: rand-spec-iter=12,
/// rand-spec-pct=1, rand-spec-res=75, rand-pareto-h=0.2, and master's
/// rand-zipfian-exp=0.8.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct DistParams {
    /// `--rand-spec-iter`: how many uniforms gaussian (and special's
    /// gaussian part) average; more makes the bell narrower.
    pub spec_iter: u32,
    /// `--rand-spec-pct`: width of special's hot window, in % of the range.
    pub spec_pct: f64,
    /// `--rand-spec-res`: % of special's draws that go to the hot window.
    pub spec_res: f64,
    /// `--rand-pareto-h`: pareto's shape, in (0, 1); smaller is more skewed.
    pub pareto_h: f64,
    /// `--rand-zipfian-exp`: zipfian's exponent (theta), >= 0; 0 is uniform.
    pub zipf_exp: f64,
}

impl Default for DistParams {
    fn default() -> Self {
        DistParams {
            spec_iter: 12,
            spec_pct: 1.0,
            spec_res: 75.0,
            pareto_h: 0.2,
            zipf_exp: 0.8,
        }
    }
}

/// A distribution parameter outside the range where its formula means
/// anything; the message names the option and what it accepts.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid --{option} {value}: it must be {expected}")]
pub struct InvalidParam {
    /// The sysbench option name, without dashes (e.g. `rand-pareto-h`).
    pub option: &'static str,
    /// The rejected value as given.
    pub value: String,
    /// The accepted range, in words.
    pub expected: &'static str,
}

impl DistParams {
    /// Checks every knob; the CLI calls this so that nonsense is rejected
    /// with a clear message. (A [`Dist`] built from unchecked parameters
    /// still returns values in [a, b], just not meaningful ones.)
    pub fn validate(&self) -> Result<(), InvalidParam> {
        fn bad(option: &'static str, value: impl ToString, expected: &'static str) -> InvalidParam {
            InvalidParam {
                option,
                value: value.to_string(),
                expected,
            }
        }
        if self.spec_iter == 0 {
            return Err(bad("rand-spec-iter", self.spec_iter, "at least 1"));
        }
        if !(0.0..=100.0).contains(&self.spec_pct) {
            return Err(bad("rand-spec-pct", self.spec_pct, "between 0 and 100"));
        }
        if !(0.0..=100.0).contains(&self.spec_res) {
            return Err(bad("rand-spec-res", self.spec_res, "between 0 and 100"));
        }
        if !(self.pareto_h > 0.0 && self.pareto_h < 1.0) {
            return Err(bad(
                "rand-pareto-h",
                self.pareto_h,
                "strictly between 0 and 1",
            ));
        }
        if !(self.zipf_exp >= 0.0 && self.zipf_exp.is_finite()) {
            return Err(bad(
                "rand-zipfian-exp",
                self.zipf_exp,
                "a finite number >= 0",
            ));
        }
        Ok(())
    }
}

/// One client's sampler (Clone + Send): the kind, its parameters, and the
/// constants sysbench precomputes from them, so that [`Dist::draw`] does no
/// division or logarithm it can avoid, and never allocates.
#[derive(Clone, Debug)]
pub struct Dist {
    /// What [`Dist::draw`] samples.
    kind: DistKind,
    /// The knobs as given, reported back by [`Dist::params`].
    params: DistParams,
    /// 1 / spec_iter.
    iter_mult: f64,
    /// spec_pct / 100: the hot window's width as a fraction of the range.
    pct_mult: f64,
    /// spec_pct / 200: half of it, to centre the window.
    pct_half_mult: f64,
    /// 100 / (100 - spec_res): special stretches [0, t) by this so that
    /// `spec_res` % of a uniform lands beyond t and means "hot".
    res_mult: f64,
    /// ln h / ln(1 - h), pareto's exponent.
    pareto_power: f64,
    /// Zipfian's shortcut acceptance bound (Hörmann and Derflinger's `s`).
    zipf_s: f64,
    /// Zipfian's exponent as used: `zipf_exp`, or 0 (uniform) if it is
    /// negative, infinite or NaN, where rejection sampling might never
    /// accept a draw.
    zipf_e: f64,
    /// H(1.5) - 1: the lower end of zipfian's inversion interval.
    zipf_h_x1: f64,
    /// Range size `n` for which `zipf_h_n` holds; 0 before the first draw.
    zipf_n: u64,
    /// H(n + 0.5) for `zipf_n`: cached because a client draws over the same
    /// range again and again, and it costs a log and an exp.
    zipf_h_n: f64,
}

impl Dist {
    /// A sampler of `kind` with `params` (see [`DistParams::validate`]).
    pub fn new(kind: DistKind, params: DistParams) -> Dist {
        let e = if params.zipf_exp >= 0.0 && params.zipf_exp.is_finite() {
            params.zipf_exp
        } else {
            0.0
        };
        Dist {
            kind,
            params,
            iter_mult: 1.0 / f64::from(params.spec_iter),
            pct_mult: params.spec_pct / 100.0,
            pct_half_mult: params.spec_pct / 200.0,
            res_mult: 100.0 / (100.0 - params.spec_res),
            pareto_power: params.pareto_h.ln() / (1.0 - params.pareto_h).ln(),
            zipf_s: 2.0 - h_integral_inverse(h_integral(2.5, e) - h(2.0, e), e),
            zipf_e: e,
            zipf_h_x1: h_integral(1.5, e) - 1.0,
            zipf_n: 0,
            zipf_h_n: 0.0,
        }
    }

    /// What this sampler draws from.
    pub fn kind(&self) -> DistKind {
        self.kind
    }

    /// The parameters it was built with.
    pub fn params(&self) -> DistParams {
        self.params
    }

    /// A draw in [a, b] inclusive, computed as sysbench does for the kind
    /// (see the module doc for the only differences). If `a > b` the range
    /// is taken as [b, a].
    #[inline]
    pub fn draw(&mut self, rng: &mut Rng, a: u32, b: u32) -> u32 {
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        match self.kind {
            DistKind::Uniform => rng.uniform(a, b),
            DistKind::Gaussian => a + self.gaussian_offset(rng, b - a),
            DistKind::Special => a + self.special_offset(rng, b - a),
            DistKind::Pareto => a + self.pareto_offset(rng, b - a),
            DistKind::Zipfian => a + self.zipfian_offset(rng, b - a),
        }
    }

    /// sb_rand_gaussian: `trunc(sum(u_i · n) / iter)` with n = b - a + 1,
    /// summed in the same order so the rounding is sysbench's.
    fn gaussian_offset(&self, rng: &mut Rng, span: u32) -> u32 {
        let n = f64::from(span) + 1.0;
        let mut sum = 0.0;
        for _ in 0..self.params.spec_iter {
            sum += rng.next_f64() * n;
        }
        // Each term is < n, but the rounded mean could reach n itself.
        ((sum * self.iter_mult) as u32).min(span)
    }

    /// sb_rand_special. With t = b - a, one uniform `rnd` decides the branch:
    /// `rnd · t · res_mult < t` (i.e. rnd < 1 - spec_res/100) takes a
    /// gaussian over [0, t); otherwise the *same* `rnd` is mapped into the
    /// hot window `rnd · (t·pct/100 + 1) + t/2 - t·pct/200`. Because `rnd`
    /// is already ≥ 1 - spec_res/100 there, only the upper spec_res % of the
    /// nominal window [t/2 - t·pct/200, t/2 + t·pct/200 + 1) is reached: with
    /// the defaults, offsets [0.4975·t + 0.25, 0.505·t + 1), not a window
    /// centred on t/2.
    fn special_offset(&self, rng: &mut Rng, span: u32) -> u32 {
        let t = f64::from(span);
        let rnd = rng.next_f64();
        // Written as sysbench does; with spec_res = 100 the stretch is
        // infinite (or NaN at rnd = 0 or t = 0) and every draw is hot, as
        // there.
        if rnd * (t * self.res_mult) < t {
            let mut sum = 0.0;
            for _ in 0..self.params.spec_iter {
                sum += rng.next_f64();
            }
            // sysbench adds `a` before truncating; truncating the offset
            // first gives the same value without rounding at large `a`.
            return ((sum * t * self.iter_mult) as u32).min(span);
        }
        let d = t * self.pct_mult;
        let res = rnd * (d + 1.0) + (t / 2.0 - t * self.pct_half_mult);
        // In range for spec_pct <= 100; the clamp guards other values.
        (res as u32).min(span)
    }

    /// sb_rand_pareto: `trunc(n · u^p)`, n = b - a + 1.
    fn pareto_offset(&self, rng: &mut Rng, span: u32) -> u32 {
        let n = f64::from(span) + 1.0;
        ((n * rng.next_f64().powf(self.pareto_power)) as u32).min(span)
    }

    /// sysbench master's sb_rand_zipfian: rejection-inversion sampling
    /// (Hörmann and Derflinger 1996, as in Apache Commons RNG's
    /// RejectionInversionZipfSampler) of k in [1, n] with P(k) ∝ k^-e; the
    /// offset is k - 1.
    ///
    /// A uniform point under the integral H of the hat function h(x) = x^-e
    /// is inverted to x and rounded to k; k is accepted when the point also
    /// lies under the step of height h(k) (the cheap test `k - x <= s`
    /// settles most draws). k = 1 is always accepted, which is what makes
    /// P(1) exactly 1 / H(n, e), the generalised harmonic number.
    fn zipfian_offset(&mut self, rng: &mut Rng, span: u32) -> u32 {
        let n = u64::from(span) + 1;
        let e = self.zipf_e;
        if n != self.zipf_n {
            self.zipf_h_n = h_integral(n as f64 + 0.5, e);
            self.zipf_n = n;
        }
        let h_n = self.zipf_h_n;
        loop {
            // Uniform in (H(1.5) - 1, H(n + 0.5)].
            let u = h_n + rng.next_f64() * (self.zipf_h_x1 - h_n);
            let x = h_integral_inverse(u, e);
            // Rounding; numerical error may push it out of [1, n].
            let k = ((x + 0.5) as u64).clamp(1, n);
            let kf = k as f64;
            if kf - x <= self.zipf_s || u >= h_integral(kf + 0.5, e) - h(kf, e) {
                return (k - 1) as u32;
            }
        }
    }
}

/// H(x) = (x^(1-e) - 1) / (1 - e), or ln x when e = 1: the integral of the
/// hat h. Written as `expm1_over_x((1 - e) ln x) · ln x` so that it is continuous
/// through e = 1.
fn h_integral(x: f64, e: f64) -> f64 {
    let log_x = x.ln();
    expm1_over_x((1.0 - e) * log_x) * log_x
}

/// The hat function h(x) = x^-e.
fn h(x: f64, e: f64) -> f64 {
    (-e * x.ln()).exp()
}

/// The inverse of [`h_integral`].
fn h_integral_inverse(x: f64, e: f64) -> f64 {
    // (1 - e)·x is >= -1 in exact arithmetic; rounding can push it below,
    // where ln(1 + t) is undefined.
    let t = (x * (1.0 - e)).max(-1.0);
    (ln1p_over_x(t) * x).exp()
}

/// ln(1 + x) / x, by its Taylor series near 0 where the quotient loses
/// precision (and is 0/0 at 0).
fn ln1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (e^x - 1) / x, by its Taylor series near 0 for the same reason.
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `count` draws of `kind` over [a, b] from a fixed seed.
    fn sample(kind: DistKind, params: DistParams, a: u32, b: u32, count: usize) -> Vec<u32> {
        let mut rng = Rng::new(20_200_424);
        let mut dist = Dist::new(kind, params);
        (0..count).map(|_| dist.draw(&mut rng, a, b)).collect()
    }

    fn mean_and_sd(v: &[u32]) -> (f64, f64) {
        let n = v.len() as f64;
        let mean = v.iter().map(|&x| f64::from(x)).sum::<f64>() / n;
        let var = v
            .iter()
            .map(|&x| (f64::from(x) - mean).powi(2))
            .sum::<f64>()
            / n;
        (mean, var.sqrt())
    }

    /// Generalised harmonic number H(n, s) = sum of k^-s for k in 1..=n.
    fn harmonic(n: u32, s: f64) -> f64 {
        (1..=n).map(|k| f64::from(k).powf(-s)).sum()
    }

    /// CDF of the Irwin–Hall distribution (sum of `n` uniforms on [0, 1)).
    fn irwin_hall_cdf(n: u32, x: f64) -> f64 {
        if x <= 0.0 {
            return 0.0;
        }
        if x >= f64::from(n) {
            return 1.0;
        }
        let mut sum = 0.0;
        let mut binom = 1.0; // C(n, k)
        for k in 0..=(x.floor() as u32) {
            let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
            sum += sign * binom * (x - f64::from(k)).powi(n as i32);
            binom = binom * f64::from(n - k) / f64::from(k + 1);
        }
        let factorial: f64 = (1..=n).map(f64::from).product();
        sum / factorial
    }

    #[test]
    fn names_round_trip_and_serialize_lowercase() {
        for kind in DistKind::ALL {
            assert_eq!(DistKind::from_name(kind.name()), Some(kind));
            assert_eq!(kind.to_string(), kind.name());
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.name()));
        }
        assert_eq!(DistKind::from_name("Special"), None);
        assert_eq!(DistKind::from_name("zipf"), None);
    }

    #[test]
    fn defaults_are_sysbench_1_0_20s_and_validate() {
        let p = DistParams::default();
        assert_eq!(
            (p.spec_iter, p.spec_pct, p.spec_res, p.pareto_h, p.zipf_exp),
            (12, 1.0, 75.0, 0.2, 0.8)
        );
        assert_eq!(p.validate(), Ok(()));
        let bad = [
            (DistParams { spec_iter: 0, ..p }, "rand-spec-iter"),
            (
                DistParams {
                    spec_pct: 101.0,
                    ..p
                },
                "rand-spec-pct",
            ),
            (
                DistParams {
                    spec_res: -1.0,
                    ..p
                },
                "rand-spec-res",
            ),
            (DistParams { pareto_h: 1.0, ..p }, "rand-pareto-h"),
            (DistParams { pareto_h: 0.0, ..p }, "rand-pareto-h"),
            (
                DistParams {
                    zipf_exp: -0.5,
                    ..p
                },
                "rand-zipfian-exp",
            ),
            (
                DistParams {
                    zipf_exp: f64::NAN,
                    ..p
                },
                "rand-zipfian-exp",
            ),
        ];
        for (params, option) in bad {
            let err = params.validate().unwrap_err();
            assert_eq!(err.option, option);
            assert!(err.to_string().starts_with(&format!("invalid --{option} ")));
        }
    }

    #[test]
    fn every_kind_stays_in_range_at_the_edges() {
        let p = DistParams::default();
        for kind in DistKind::ALL {
            assert!(sample(kind, p, 5, 5, 200).iter().all(|&v| v == 5), "{kind}");
            assert!(sample(kind, p, 1, 10, 5000)
                .iter()
                .all(|&v| (1..=10).contains(&v)));
            let top = sample(kind, p, u32::MAX - 3, u32::MAX, 2000);
            assert!(top.iter().all(|&v| v >= u32::MAX - 3), "{kind}");
            // The full range: not stuck on one value (sysbench's
            // `b - a + 1` wraps to 0 there).
            let full = sample(kind, p, 0, u32::MAX, 200);
            assert!(full.iter().any(|&v| v != full[0]), "{kind}");
            // Reversed bounds are read as [b, a].
            assert!(sample(kind, p, 10, 1, 500)
                .iter()
                .all(|&v| (1..=10).contains(&v)));
        }
        // Out-of-range knobs give meaningless but in-range values.
        // (Zipfian: NaN, negative and infinite exponents must not make the
        // rejection loop spin forever.)
        let sillies = [
            (0, 500.0, 100.0, 0.0, f64::NAN),
            (0, f64::NAN, f64::NAN, f64::NAN, -1.0),
            (1, -5.0, 150.0, 1.0, f64::INFINITY),
        ];
        for (spec_iter, spec_pct, spec_res, pareto_h, zipf_exp) in sillies {
            let silly = DistParams {
                spec_iter,
                spec_pct,
                spec_res,
                pareto_h,
                zipf_exp,
            };
            for kind in DistKind::ALL {
                assert!(sample(kind, silly, 1, 100, 2000)
                    .iter()
                    .all(|&v| (1..=100).contains(&v)));
            }
        }
    }

    #[test]
    fn uniform_dist_passes_chi_square() {
        // 200 000 draws over 50 values; 49 degrees of freedom, whose 0.1 %
        // critical value is 85.4.
        let draws = sample(DistKind::Uniform, DistParams::default(), 1, 50, 200_000);
        let mut counts = [0u32; 50];
        for v in draws {
            counts[(v - 1) as usize] += 1;
        }
        let expected = 200_000.0 / 50.0;
        let chi2: f64 = counts
            .iter()
            .map(|&c| (f64::from(c) - expected).powi(2) / expected)
            .sum();
        assert!(chi2 < 85.4, "chi-square {chi2}");
    }

    #[test]
    fn gaussian_mean_and_sd_match_the_mean_of_twelve_uniforms() {
        // Mean of 12 uniforms on [0, n): mean n/2, sd n / sqrt(12 · 12).
        let (a, b) = (1u32, 1_000_000u32);
        let draws = sample(DistKind::Gaussian, DistParams::default(), a, b, 100_000);
        let (mean, sd) = mean_and_sd(&draws);
        let n = f64::from(b - a + 1);
        let want_mean = f64::from(a) + n / 2.0 - 0.5; // -0.5: truncation
        let want_sd = n / 12.0;
        // Standard errors: 83 333 / 316 = 264 for the mean (0.03 % of the
        // range) and about 0.25 % for the sd.
        assert!((mean - want_mean).abs() < 0.002 * n, "mean {mean}");
        assert!((sd / want_sd - 1.0).abs() < 0.02, "sd {sd} want {want_sd}");
        // A third of a standard deviation from the middle holds ~26 % of a
        // normal; a uniform would put 1/18 ≈ 5.6 % there.
        let mid = draws
            .iter()
            .filter(|&&v| (f64::from(v) - want_mean).abs() < want_sd / 3.0)
            .count() as f64
            / draws.len() as f64;
        assert!((mid - 0.2611).abs() < 0.01, "middle share {mid}");
    }

    #[test]
    fn special_puts_spec_res_of_draws_in_the_hot_window() {
        // sb_rand_special with the defaults over [1, 10^6]: t = b - a.
        let (a, b) = (1u32, 1_000_000u32);
        let p = DistParams::default();
        let draws = sample(DistKind::Special, p, a, b, 1_000_000);
        let t = f64::from(b - a);
        // The window as the issue states it.
        let lo = f64::from(a) + 0.4975 * t;
        let hi = f64::from(a) + 0.505 * t;
        let inside = draws
            .iter()
            .filter(|&&v| (lo..hi).contains(&f64::from(v)))
            .count() as f64
            / draws.len() as f64;

        // Expected share, computed analytically. A draw is a + floor(r) for
        // a real offset r, so it is inside exactly when r ∈ [l, h) with:
        let (l, h) = ((lo - f64::from(a)).ceil(), (hi - f64::from(a)).ceil());
        // Hot branch (probability spec_res = 75 %): r is uniform over
        // [0.25·(d+1) + c, (d+1) + c), d = t·pct/100, c = t/2 - t·pct/200.
        let d = t * p.spec_pct / 100.0;
        let c = t / 2.0 - t * p.spec_pct / 200.0;
        let (r0, r1) = (0.25 * (d + 1.0) + c, (d + 1.0) + c);
        let hot_inside = (h.min(r1) - l.max(r0)).max(0.0) / (r1 - r0);
        // Gaussian branch (25 %): r = t · (sum of 12 uniforms) / 12, whose
        // share in [l, h) comes from the Irwin–Hall CDF, not from sampling.
        let gauss_inside = irwin_hall_cdf(12, 12.0 * h / t) - irwin_hall_cdf(12, 12.0 * l / t);
        let want = 0.75 * hot_inside + 0.25 * gauss_inside;
        // Sanity of the arithmetic: nearly all hot draws are inside, and the
        // gaussian adds about 0.9 percentage points.
        assert!(hot_inside > 0.999 && (0.035..0.037).contains(&gauss_inside));
        assert!(
            (inside - want).abs() < 0.005,
            "inside {inside}, want {want}"
        );
    }

    #[test]
    fn special_hot_values_sit_where_sb_rand_special_puts_them() {
        // The branch is decided by the draw's first uniform, so a clone of
        // the generator taken before the draw tells which branch it took.
        // With the defaults the hot offsets are floor of
        // [0.4975·t + 0.25, 0.505·t + 1): over [1, 10^6], values
        // 497 500 ..= 505 001, i.e. the window [a + 0.4975·t,
        // a + 0.505·t) plus one value at each edge.
        let mut rng = Rng::new(3);
        let mut dist = Dist::new(DistKind::Special, DistParams::default());
        let (mut hot, mut lo, mut hi, mut below_mid) = (0u32, u32::MAX, 0u32, 0u32);
        let count = 100_000;
        for _ in 0..count {
            let rnd = rng.clone().next_f64();
            let v = dist.draw(&mut rng, 1, 1_000_000);
            if rnd >= 0.25 {
                hot += 1;
                lo = lo.min(v);
                hi = hi.max(v);
                below_mid += u32::from(v < 501_250);
            }
        }
        assert!((497_500..=497_501).contains(&lo), "lowest hot value {lo}");
        assert!((505_000..=505_001).contains(&hi), "highest hot value {hi}");
        assert!((f64::from(hot) / f64::from(count) - 0.75).abs() < 0.01);
        // Uniform inside: each half of the window gets half of the hot draws.
        let below = f64::from(below_mid) / f64::from(hot);
        assert!((below - 0.5).abs() < 0.01, "{below}");

        // With spec_res = 100 every draw is hot and rnd spans all of [0, 1):
        // the full nominal window [t/2 - t·pct/200, t/2 + t·pct/200 + 1).
        let p = DistParams {
            spec_res: 100.0,
            ..DistParams::default()
        };
        let draws = sample(DistKind::Special, p, 1, 1_000_000, 100_000);
        let (lo, hi) = (draws.iter().min().unwrap(), draws.iter().max().unwrap());
        assert!((495_000..=495_001).contains(lo), "{lo}");
        assert!((505_000..=505_001).contains(hi), "{hi}");
    }

    #[test]
    fn pareto_frequency_decreases_and_lowest_fifth_gets_eighty_percent() {
        // Offsets are floor(n · u^p), so P(offset < m) = (m/n)^(1/p), and
        // with p = ln h / ln(1 - h) the lowest h of the range gets
        // h^(ln(1-h)/ln h) = 1 - h of the draws: 80 % for h = 0.2.
        let n = 1000u32;
        let draws = sample(DistKind::Pareto, DistParams::default(), 1, n, 200_000);
        let share_below = |m: u32| draws.iter().filter(|&&v| v <= m).count() as f64 / 200_000.0;
        let inv_p = 0.8f64.ln() / 0.2f64.ln();
        assert!((share_below(200) - 0.8).abs() < 0.005);
        assert!((share_below(10) - 0.01f64.powf(inv_p)).abs() < 0.005);

        // Five equal bins of 200 values: strictly decreasing counts (the
        // smallest expected gap, bins 4 and 5, is 1 500 draws, ~12 sd).
        let mut bins = [0u32; 5];
        for &v in &draws {
            bins[((v - 1) / 200) as usize] += 1;
        }
        assert!(bins.windows(2).all(|w| w[0] > w[1]), "{bins:?}");
        // And per value at the head: 1 > 2 > 3 > 4 > 5.
        let mut head = [0u32; 5];
        for &v in draws.iter().filter(|&&v| v <= 5) {
            head[(v - 1) as usize] += 1;
        }
        assert!(head.windows(2).all(|w| w[0] > w[1]), "{head:?}");
    }

    #[test]
    fn zipfian_rank_frequencies_follow_the_harmonic_formula() {
        let (n, s) = (1000u32, 0.8);
        let count = 200_000;
        let draws = sample(DistKind::Zipfian, DistParams::default(), 1, n, count);
        let freq = |v: u32| draws.iter().filter(|&&x| x == v).count() as f64 / count as f64;
        let (f1, f2) = (freq(1), freq(2));
        // P(rank 1) = 1 / H(1000, 0.8) ≈ 0.0636; sd of the estimate 0.00055.
        let want1 = 1.0 / harmonic(n, s);
        assert!((f1 - want1).abs() < 0.003, "P(1) {f1}, want {want1}");
        // P(2) / P(1) = 2^-0.8 ≈ 0.574; sd of the ratio ≈ 0.007.
        let ratio = f2 / f1;
        assert!((ratio - 2f64.powf(-s)).abs() < 0.03, "ratio {ratio}");
        // P(10) = 10^-0.8 / H.
        let want10 = 10f64.powf(-s) / harmonic(n, s);
        assert!((freq(10) - want10).abs() < 0.002);
    }

    #[test]
    fn zipfian_cache_follows_the_range() {
        // Alternating two ranges on one sampler: each keeps its own law.
        // Rank-1 share for n = 10: 1 / H(10, 0.8) ≈ 0.281.
        let mut rng = Rng::new(8);
        let mut dist = Dist::new(DistKind::Zipfian, DistParams::default());
        let (mut small, mut large) = (0u32, 0u32);
        let rounds = 50_000;
        for _ in 0..rounds {
            let v = dist.draw(&mut rng, 100, 109);
            assert!((100..=109).contains(&v));
            small += u32::from(v == 100);
            let w = dist.draw(&mut rng, 0, 999);
            assert!(w <= 999);
            large += u32::from(w == 0);
        }
        let small = f64::from(small) / f64::from(rounds);
        let large = f64::from(large) / f64::from(rounds);
        assert!((small - 1.0 / harmonic(10, 0.8)).abs() < 0.01, "{small}");
        assert!((large - 1.0 / harmonic(1000, 0.8)).abs() < 0.006, "{large}");
    }

    #[test]
    fn zipfian_exponents_zero_and_one_use_the_series_branches() {
        // e = 1 makes (1 - e) exactly 0, the Taylor branches of both helpers;
        // e = 0 is the uniform distribution.
        for (e, n) in [(1.0, 100u32), (0.0, 10)] {
            let p = DistParams {
                zipf_exp: e,
                ..DistParams::default()
            };
            let draws = sample(DistKind::Zipfian, p, 1, n, 50_000);
            let f1 = draws.iter().filter(|&&v| v == 1).count() as f64 / 50_000.0;
            let want = 1.0 / harmonic(n, e);
            assert!((f1 - want).abs() < 0.01, "e {e}: P(1) {f1}, want {want}");
            assert!(draws.iter().all(|&v| (1..=n).contains(&v)));
        }
    }
}
