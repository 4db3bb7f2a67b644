//! The study report's derived figures, as pure functions over measured
//! numbers: peaks and sag, collapse points, CPU scalability, rankings and
//! their sentences, changes against a baseline judged against the repeat
//! noise, fairness and latency distributions.
//!
//! Nothing here reads the store or formats a table: the functions take
//! plain numbers, so they are tested with the published tables of the seeds
//! (seed 002's scalability and sag tables come out as published).

use serde::Serialize;

use crate::stats;
use crate::stats::histogram::Histogram;

/// The best value of a curve and where it occurs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Peak {
    pub value: f64,
    pub clients: u32,
}

/// The peak of a curve of `(clients, value)` points: the largest value, the
/// first one on ties (fewest clients). `None` for an empty curve.
pub fn peak(curve: &[(u32, f64)]) -> Option<Peak> {
    let mut best: Option<Peak> = None;
    for &(clients, value) in curve {
        if best.is_none_or(|b| value > b.value) {
            best = Some(Peak { value, clients });
        }
    }
    best
}

/// How far a curve falls from its peak at its highest client count
/// (seed 002's "threads scalability").
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sag {
    pub peak: Peak,
    /// The value at the highest client count measured.
    pub last: Peak,
    /// (peak − last) / peak × 100.
    pub pct: f64,
}

/// (peak − last) / peak in percent; 0 when the peak is not positive.
pub fn sag_pct(peak: f64, last: f64) -> f64 {
    if peak > 0.0 {
        (peak - last) / peak * 100.0
    } else {
        0.0
    }
}

/// The sag of a curve: its peak against its value at the highest client
/// count. `None` for an empty curve.
pub fn sag(curve: &[(u32, f64)]) -> Option<Sag> {
    let p = peak(curve)?;
    let &(clients, value) = curve.iter().max_by_key(|(c, _)| *c)?;
    Some(Sag {
        peak: p,
        last: Peak { value, clients },
        pct: sag_pct(p.value, value),
    })
}

/// Where a curve collapses: the first point past the peak (more clients)
/// whose value is below `fraction` of the peak (e.g. 0.5: half of it).
pub fn collapse(curve: &[(u32, f64)], fraction: f64) -> Option<Peak> {
    let p = peak(curve)?;
    let mut after: Vec<(u32, f64)> = curve
        .iter()
        .copied()
        .filter(|&(c, _)| c > p.clients)
        .collect();
    after.sort_by_key(|&(c, _)| c);
    after
        .into_iter()
        .find(|&(_, v)| v < fraction * p.value)
        .map(|(clients, value)| Peak { value, clients })
}

/// The number of CPUs in a CPU list such as `0-3`, `0,2` or `0-1,4-5`.
/// `None` when it does not parse.
pub fn cpu_count(set: &str) -> Option<usize> {
    let mut n = 0;
    for part in set.split(',').map(str::trim) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if b < a {
                    return None;
                }
                n += b - a + 1;
            }
            None => {
                part.parse::<usize>().ok()?;
                n += 1;
            }
        }
    }
    (n > 0).then_some(n)
}

/// One CPU configuration of a scalability table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scaling {
    /// The configuration as the report names it (e.g. "2 CPUs (0-1)").
    pub label: String,
    pub cpus: usize,
    /// The peak with this many CPUs.
    pub peak: f64,
    /// Peak / the peak with half as many CPUs (seed 002's "N vs N/2");
    /// `None` when no configuration has exactly half.
    pub vs_half: Option<f64>,
    /// Peak / the peak with the fewest CPUs ("N vs 1"); `None` for that
    /// configuration itself.
    pub vs_fewest: Option<f64>,
}

/// The scalability factors of `(label, cpus, peak)` configurations, in
/// ascending CPU order.
pub fn scalability(configs: &[(String, usize, f64)]) -> Vec<Scaling> {
    let mut sorted: Vec<&(String, usize, f64)> = configs.iter().collect();
    sorted.sort_by_key(|c| c.1);
    let fewest = sorted.first().map(|c| (c.1, c.2));
    sorted
        .iter()
        .map(|&&(ref label, cpus, peak)| Scaling {
            label: label.clone(),
            cpus,
            peak,
            vs_half: (cpus % 2 == 0)
                .then(|| sorted.iter().find(|c| c.1 == cpus / 2))
                .flatten()
                .and_then(|c| ratio(peak, c.2)),
            vs_fewest: fewest
                .filter(|&(n, _)| n < cpus)
                .and_then(|(_, p)| ratio(peak, p)),
        })
        .collect()
}

fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| a / b)
}

/// One entry of a ranking.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rank {
    pub label: String,
    pub value: f64,
    /// How much worse than the best, in percent of the best (0 for the best).
    pub behind_pct: f64,
}

/// `(label, value)` entries ranked best first. Higher is better for
/// throughput, lower for latency. Ties keep their given order.
pub fn ranking(entries: &[(String, f64)], higher_is_better: bool) -> Vec<Rank> {
    let mut sorted: Vec<&(String, f64)> = entries.iter().collect();
    sorted.sort_by(|a, b| {
        let o = a.1.total_cmp(&b.1);
        if higher_is_better {
            o.reverse()
        } else {
            o
        }
    });
    let Some(best) = sorted.first().map(|e| e.1) else {
        return Vec::new();
    };
    sorted
        .into_iter()
        .map(|(label, value)| Rank {
            label: label.clone(),
            value: *value,
            behind_pct: if best == 0.0 {
                0.0
            } else if higher_is_better {
                (best - value) / best * 100.0
            } else {
                (value - best) / best * 100.0
            },
        })
        .collect()
}

/// Whether a change from a baseline is larger than the repeat noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Better than the baseline beyond the noise.
    Better,
    /// Worse than the baseline beyond the noise.
    Worse,
    /// The difference is within the noise.
    Within,
    /// Fewer than two repeats on one side: the noise is unknown.
    TooFewRepeats,
}

/// A value against its baseline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Change {
    pub baseline: f64,
    pub value: f64,
    /// (value − baseline) / baseline × 100; `None` when the baseline is 0.
    pub pct: Option<f64>,
    pub verdict: Verdict,
}

/// The mean of `values` against the mean of `baseline` (the repeats of
/// each). The difference counts as real only when the two 95 % confidence
/// intervals of the means do not overlap: |Δ| > ci(baseline) + ci(value).
/// That is stricter than a t-test, on purpose: with three repeats a
/// report should not call a 2 % wobble an improvement. `None` when one
/// side has no value.
pub fn change(baseline: &[f64], values: &[f64], higher_is_better: bool) -> Option<Change> {
    let b = stats::mean(baseline)?;
    let v = stats::mean(values)?;
    let pct = (b != 0.0).then(|| (v - b) / b * 100.0);
    let verdict = match (stats::mean_ci95(baseline), stats::mean_ci95(values)) {
        (Some((_, cb)), Some((_, cv))) => {
            if (v - b).abs() <= cb + cv {
                Verdict::Within
            } else if (v > b) == higher_is_better {
                Verdict::Better
            } else {
                Verdict::Worse
            }
        }
        _ => Verdict::TooFewRepeats,
    };
    Some(Change {
        baseline: b,
        value: v,
        pct,
        verdict,
    })
}

/// The coefficient of variation of work per client, in percent: sysbench's
/// "events (avg/stddev)" as one number, 0 when every client did the same.
/// `None` without work.
pub fn fairness_cv(avg: f64, stddev: f64) -> Option<f64> {
    (avg > 0.0 && avg.is_finite() && stddev.is_finite()).then(|| stddev / avg * 100.0)
}

/// The cumulative distribution of a latency histogram as `(ms, percent of
/// transactions at or below)` steps, one per non-empty bucket, at the
/// bucket's upper bound. Empty for an empty histogram.
pub fn cdf(h: &Histogram) -> Vec<(f64, f64)> {
    let total = h.count();
    if total == 0 {
        return Vec::new();
    }
    let mut seen = 0u64;
    h.buckets()
        .map(|(_, high, n)| {
            seen += n;
            (high as f64 / 1e6, seen as f64 / total as f64 * 100.0)
        })
        .collect()
}

/// At most `max` points of a CDF, keeping the first and last and thinning
/// evenly between: a chart does not need thousands of steps.
pub fn thin(points: Vec<(f64, f64)>, max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max || max < 2 {
        return points;
    }
    let step = (points.len() - 1) as f64 / (max - 1) as f64;
    (0..max)
        .map(|i| points[((i as f64 * step).round() as usize).min(points.len() - 1)])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, decimals: i32) -> bool {
        (a - b).abs() <= 0.5 * 10f64.powi(-decimals) + 1e-9
    }

    /// Seed 002's published peak results (tps, read-only special), one
    /// column per server; rows 1 CPU, 1 CPU HT, 2 CPU HT, 4 CPU HT. With
    /// hyper-threading each physical CPU is two logical ones, so the rows
    /// have 1, 2, 4 and 8 logical CPUs: "N vs N/2" is exactly the row above.
    const SEED002_PEAKS: [(&str, [f64; 4]); 5] = [
        ("MySQL 5.0.7, InnoDB", [304.62, 362.12, 661.34, 1048.55]),
        ("Oracle 10g", [169.18, 193.94, 374.66, 621.63]),
        ("PostgreSQL 8", [246.44, 274.42, 511.56, 802.47]),
        ("EnterpriseDB 8", [155.46, 162.4, 312.48, 566.04]),
        ("MySQL 5.0.7, MyISAM", [241.1, 294.65, 481.1, 595.74]),
    ];
    const SEED002_CONFIGS: [(&str, usize); 4] =
        [("1CPU", 1), ("1CPU HT", 2), ("2CPU HT", 4), ("4CPU HT", 8)];

    fn seed002(server: usize) -> Vec<Scaling> {
        let peaks = SEED002_PEAKS[server].1;
        let configs: Vec<(String, usize, f64)> = SEED002_CONFIGS
            .iter()
            .zip(peaks)
            .map(|(&(l, n), p)| (l.to_string(), n, p))
            .collect();
        scalability(&configs)
    }

    #[test]
    fn seed002_scalability_vs_half_as_published() {
        // "peak result with N CPU / peak result with N/2 CPU".
        let published: [[f64; 3]; 5] = [
            [1.19, 1.83, 1.59],
            [1.15, 1.93, 1.66],
            [1.11, 1.86, 1.57],
            [1.04, 1.92, 1.81],
            [1.22, 1.63, 1.24],
        ];
        for (server, row) in published.iter().enumerate() {
            let s = seed002(server);
            assert_eq!(s[0].vs_half, None, "1CPU is X");
            for (i, &want) in row.iter().enumerate() {
                let got = s[i + 1].vs_half.unwrap();
                assert!(close(got, want, 2), "{server}/{i}: {got} vs {want}");
            }
        }
    }

    #[test]
    fn seed002_scalability_vs_one_cpu_as_published() {
        // "peak result with N CPU / peak result with 1 CPU"; the
        // conclusions quote the last row: InnoDB 3.44, PostgreSQL 3.26.
        let published: [[f64; 3]; 5] = [
            [1.19, 2.17, 3.44],
            [1.15, 2.21, 3.67],
            [1.11, 2.08, 3.26],
            [1.04, 2.01, 3.64],
            [1.22, 2.00, 2.47],
        ];
        for (server, row) in published.iter().enumerate() {
            let s = seed002(server);
            assert_eq!(s[0].vs_fewest, None);
            for (i, &want) in row.iter().enumerate() {
                let got = s[i + 1].vs_fewest.unwrap();
                assert!(close(got, want, 2), "{server}/{i}: {got} vs {want}");
            }
        }
        assert_eq!(format!("{:.2}", seed002(0)[3].vs_fewest.unwrap()), "3.44");
        assert_eq!(format!("{:.2}", seed002(2)[3].vs_fewest.unwrap()), "3.26");
    }

    #[test]
    fn seed002_sag_as_published() {
        // "Threads scalability", 2 CPU with HT: the special/uniform curves
        // of each server at 1..88 threads, plus the 256-thread value.
        let innodb_special = [
            (1, 302.62),
            (2, 480.21),
            (4, 661.34),
            (8, 653.10),
            (16, 602.92),
            (24, 615.91),
            (32, 620.06),
            (40, 630.16),
            (64, 606.73),
            (88, 599.25),
            (256, 548.84),
        ];
        let s = sag(&innodb_special).unwrap();
        assert_eq!(
            s.peak,
            Peak {
                value: 661.34,
                clients: 4
            }
        );
        assert_eq!(s.last.clients, 256);
        assert_eq!(format!("{:.2}", s.pct), "17.01");
        // The rest of the published row, from its peak and 256 values.
        let published = [
            (655.71, 544.08, 17.02),
            (374.66, 308.07, 17.77),
            (373.91, 290.80, 22.23),
            (511.56, 322.53, 36.95),
            (502.51, 305.35, 39.24),
            (312.48, 233.93, 25.14),
            (309.25, 221.84, 28.27),
            (481.10, 433.74, 9.84),
            (474.37, 434.45, 8.42),
        ];
        for (p, last, want) in published {
            assert_eq!(format!("{:.2}", sag_pct(p, last)), format!("{want:.2}"));
        }
    }

    #[test]
    fn seed002_slower_than_the_best() {
        // 4 CPU HT peaks: the conclusions' "slower by" figures.
        let entries: Vec<(String, f64)> = SEED002_PEAKS
            .iter()
            .map(|(l, p)| (l.to_string(), p[3]))
            .collect();
        let r = ranking(&entries, true);
        assert_eq!(r[0].label, "MySQL 5.0.7, InnoDB");
        let pct = |l: &str| {
            let x = r.iter().find(|x| x.label == l).unwrap().behind_pct;
            format!("{x:.2}")
        };
        // Published: 23.47, 43.18, 46.02, and "40.7" (40.715 to two decimals).
        assert_eq!(pct("PostgreSQL 8"), "23.47");
        assert_eq!(pct("MySQL 5.0.7, MyISAM"), "43.18");
        assert_eq!(pct("EnterpriseDB 8"), "46.02");
        assert_eq!(pct("Oracle 10g"), "40.72");
    }

    /// Seed 000's SELECT table (queries per second by clients).
    const CLIENTS: [u32; 14] = [
        1, 5, 10, 20, 50, 100, 150, 200, 250, 300, 350, 400, 450, 500,
    ];

    fn curve(values: &[f64]) -> Vec<(u32, f64)> {
        CLIENTS
            .iter()
            .copied()
            .zip(values.iter().copied())
            .collect()
    }

    #[test]
    fn seed000_select_peaks_and_collapse_points() {
        let m5_f4_l = curve(&[
            170.058, 323.16, 477.446, 372.566, 339.972, 227.59, 152.85, 84.964, 55.88, 37.502,
        ]);
        let m5_f6_t = curve(&[
            199.006, 342.458, 341.26, 348.496, 325.02, 243.772, 226.098, 205.888, 184.448, 169.568,
            154.178, 139.282, 124.466, 115.778,
        ]);
        let m4_l26 = curve(&[
            150.346, 298.896, 532.994, 583.086, 569.238, 576.338, 566.152, 556.558, 549.946,
            538.802, 535.866, 526.118, 519.828, 512.788,
        ]);
        assert_eq!(
            peak(&m5_f4_l),
            Some(Peak {
                value: 477.446,
                clients: 10
            })
        );
        assert_eq!(
            peak(&m5_f6_t),
            Some(Peak {
                value: 348.496,
                clients: 20
            })
        );
        assert_eq!(
            peak(&m4_l26),
            Some(Peak {
                value: 583.086,
                clients: 20
            })
        );
        // Below half the peak: M5-F4-L at 100 clients (227.59 < 238.723),
        // M5-F6-T only at 300 (169.568 < 174.248); M4-L2.6 never.
        assert_eq!(collapse(&m5_f4_l, 0.5).map(|p| p.clients), Some(100));
        assert_eq!(collapse(&m5_f6_t, 0.5).map(|p| p.clients), Some(300));
        assert_eq!(collapse(&m4_l26, 0.5), None);
        // The curve that was stopped at 300 clients sags 92 %.
        assert_eq!(format!("{:.2}", sag(&m5_f4_l).unwrap().pct), "92.15");
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(cpu_count("0"), Some(1));
        assert_eq!(cpu_count("0-3"), Some(4));
        assert_eq!(cpu_count("0,2"), Some(2));
        assert_eq!(cpu_count("0-1,4-5"), Some(4));
        assert_eq!(cpu_count("3-1"), None);
        assert_eq!(cpu_count("x"), None);
    }

    #[test]
    fn scalability_without_a_half() {
        let s = scalability(&[("3".into(), 3, 300.0), ("1".into(), 1, 100.0)]);
        assert_eq!(s[0].label, "1");
        assert_eq!(s[1].vs_half, None);
        assert_eq!(s[1].vs_fewest, Some(3.0));
    }

    #[test]
    fn changes_beyond_the_noise_only() {
        // Baseline 100 ± 4.30 (s = 1, n = 3: ci = 4.302653 / √3 = 2.484);
        // both cis 2.484: a 5 % change is beyond 4.97, a 4 % one is not.
        let base = [99.0, 100.0, 101.0];
        let c = change(&base, &[104.0, 105.0, 106.0], true).unwrap();
        assert_eq!(c.verdict, Verdict::Better);
        assert!((c.pct.unwrap() - 5.0).abs() < 1e-9);
        let c = change(&base, &[103.0, 104.0, 105.0], true).unwrap();
        assert_eq!(c.verdict, Verdict::Within);
        // Lower is better for latency.
        let c = change(&base, &[104.0, 105.0, 106.0], false).unwrap();
        assert_eq!(c.verdict, Verdict::Worse);
        // One repeat: the noise is unknown, whatever the difference.
        let c = change(&base, &[200.0], true).unwrap();
        assert_eq!(c.verdict, Verdict::TooFewRepeats);
        assert_eq!(change(&base, &[], true), None);
    }

    #[test]
    fn fairness_and_cdf() {
        assert_eq!(fairness_cv(100.0, 5.0), Some(5.0));
        assert_eq!(fairness_cv(0.0, 0.0), None);
        assert_eq!(fairness_cv(f64::NAN, 0.0), None);
        let mut h = Histogram::new();
        for ns in [1_000_000, 1_000_000, 2_000_000, 4_000_000] {
            h.record(ns);
        }
        let c = cdf(&h);
        assert_eq!(c.len(), 3);
        assert!((c[0].0 - 1.0).abs() < 0.01, "{c:?}");
        assert_eq!(c[0].1, 50.0);
        assert_eq!(c[1].1, 75.0);
        assert_eq!(c[2].1, 100.0);
        assert!(cdf(&Histogram::new()).is_empty());
        let t = thin((0..100).map(|i| (i as f64, i as f64)).collect(), 5);
        assert_eq!(t.len(), 5);
        assert_eq!((t[0].0, t[4].0), (0.0, 99.0));
    }
}
