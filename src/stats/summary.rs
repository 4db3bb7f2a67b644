//! The latency figures reported for one histogram: count, exact min, mean,
//! exact max, exact sum and a list of percentiles read from the histogram.

use serde::Serialize;

use super::histogram::Histogram;

/// The latency figures reported for one histogram. Values in nanoseconds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LatencySummary {
    /// Number of recorded latencies.
    pub count: u64,
    /// Smallest latency, exact.
    pub min_ns: u64,
    /// Arithmetic mean, exact (`sum_ns / count`).
    pub avg_ns: f64,
    /// Largest latency, exact.
    pub max_ns: u64,
    /// Sum of all latencies, exact; serializes as a plain JSON integer
    /// (serde_json writes u128 natively, also beyond u64).
    pub sum_ns: u128,
    /// The requested percentiles, in the order asked for.
    pub percentiles: Vec<Percentile>,
}

/// One percentile of a latency distribution.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Percentile {
    /// The percentile, 0 to 100 (e.g. 99.9).
    pub p: f64,
    /// The latency at that percentile; see
    /// [`Histogram::value_at_percentile`] for its exact definition.
    pub ns: u64,
}

/// The default list reported by dbsweep: 50, 90, 95, 99, 99.9.
pub const DEFAULT_PERCENTILES: [f64; 5] = [50.0, 90.0, 95.0, 99.0, 99.9];

/// Summarises `h`, reporting the given `percentiles` (0 to 100) in order.
/// `None` when the histogram is empty: there is nothing to report, and no
/// figure is made up. NaN entries in `percentiles` are skipped.
pub fn summarize(h: &Histogram, percentiles: &[f64]) -> Option<LatencySummary> {
    Some(LatencySummary {
        count: h.count(),
        min_ns: h.min()?,
        avg_ns: h.mean()?,
        max_ns: h.max()?,
        sum_ns: h.sum(),
        percentiles: percentiles
            .iter()
            .filter_map(|&p| {
                Some(Percentile {
                    p,
                    ns: h.value_at_percentile(p)?,
                })
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn one_to_100_ms() -> Histogram {
        let mut h = Histogram::new();
        for k in 1..=100 {
            h.record(k * MS);
        }
        h
    }

    #[test]
    fn empty_histogram_has_no_summary() {
        assert_eq!(summarize(&Histogram::new(), &DEFAULT_PERCENTILES), None);
    }

    #[test]
    fn summary_of_1_to_100_ms() {
        let s = summarize(&one_to_100_ms(), &DEFAULT_PERCENTILES).unwrap();
        let pct = |p, ns| Percentile { p, ns };
        assert_eq!(
            s,
            LatencySummary {
                count: 100,
                min_ns: MS,
                avg_ns: 50_500_000.0,
                max_ns: 100 * MS,
                sum_ns: 5_050_000_000,
                percentiles: vec![
                    // Tops of the buckets holding 50, 90, 95 and 99 ms.
                    pct(50.0, 50_003_967),
                    pct(90.0, 90_046_463),
                    pct(95.0, 95_027_199),
                    pct(99.0, 99_024_895),
                    // ceil(99.9) = rank 100, the exact max.
                    pct(99.9, 100 * MS),
                ],
            }
        );
    }

    #[test]
    fn percentiles_keep_the_requested_order_and_skip_nan() {
        let s = summarize(&one_to_100_ms(), &[100.0, f64::NAN, 0.0]).unwrap();
        let ps: Vec<(f64, u64)> = s.percentiles.iter().map(|p| (p.p, p.ns)).collect();
        assert_eq!(ps, vec![(100.0, 100 * MS), (0.0, MS)]);
    }

    #[test]
    fn serializes_sum_as_a_plain_integer() {
        let mut h = Histogram::new();
        h.record_n(7, 2);
        let json = serde_json::to_string(&summarize(&h, &[50.0]).unwrap()).unwrap();
        assert_eq!(
            json,
            r#"{"count":2,"min_ns":7,"avg_ns":7.0,"max_ns":7,"sum_ns":14,"percentiles":[{"p":50.0,"ns":7}]}"#
        );

        // Beyond u64 too (serde_json writes u128 natively).
        let mut big = Histogram::new();
        big.record_n(u64::MAX, 2);
        let json = serde_json::to_string(&summarize(&big, &[]).unwrap()).unwrap();
        assert!(json.contains(r#""sum_ns":36893488147419103230,"#), "{json}");
    }
}
