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
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
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
#[path = "dist_tests.rs"]
mod tests;
