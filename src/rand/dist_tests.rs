//! Tests of `dist.rs` (kept apart so the module itself stays short).

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
