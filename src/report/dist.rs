//! Rendering for `dbsweep dist`: what a `--rand-type` actually does to a
//! range, shown as exact quantiles, the skew (share of draws on the hottest
//! 1 % of values) and a text histogram, so a user can see the hot spot before
//! spending an hour benchmarking it.

use std::fmt::Write as _;

/// The quantiles printed, as (label, percent); nearest-rank order statistics.
const QUANTILES: [(&str, u64); 9] = [
    ("min", 0),
    ("p1", 1),
    ("p5", 5),
    ("p25", 25),
    ("p50", 50),
    ("p75", 75),
    ("p95", 95),
    ("p99", 99),
    ("max", 100),
];

/// Renders what `dbsweep dist` prints for `draws` of distribution `kind` over
/// [min, max] from `seed`:
///
/// - a header (distribution, range, number of draws, seed);
/// - exact quantiles min, p1, p5, p25, p50, p75, p95, p99, max of the draws
///   (nearest rank: the smallest draw with at least p % of draws at or below
///   it; computed on a sorted copy);
/// - the share of draws on the most popular 1 % of the range's values
///   (ceil(range / 100) values, by count; 1 % for a uniform draw);
/// - a histogram of `bins` equal-width bins over [min, max] (fewer if the
///   range has fewer values than `bins`; none if `bins` is 0), one line per
///   bin with its value range, count, percentage and a bar of `#` scaled so
///   that the fullest bin is `width` columns.
///
/// Draws outside [min, max] (a bug upstream) are counted on a line of their
/// own, not hidden in a bin. The text ends with a newline.
pub fn render(
    kind: &str,
    min: u32,
    max: u32,
    seed: u64,
    draws: &[u32],
    bins: usize,
    width: usize,
) -> String {
    let (min, max) = if min <= max { (min, max) } else { (max, min) };
    let mut out = String::new();
    // Writing to a String cannot fail; the results are ignored.
    let _ = writeln!(
        out,
        "distribution: {kind}  range: [{min}, {max}]  draws: {}  seed: {seed}",
        draws.len()
    );
    if draws.is_empty() {
        out.push_str("\nno draws\n");
        return out;
    }

    let mut sorted = draws.to_vec();
    sorted.sort_unstable();
    let n = sorted.len() as u64;

    out.push_str("\nquantiles\n");
    let values: Vec<u32> = QUANTILES
        .iter()
        .map(|&(_, pct)| sorted[nearest_rank_index(n, pct)])
        .collect();
    let value_width = values
        .iter()
        .map(|v| v.to_string().len())
        .max()
        .unwrap_or(1);
    for (&(label, _), value) in QUANTILES.iter().zip(&values) {
        let _ = writeln!(out, "  {label:<4} {value:>value_width$}");
    }

    let in_range: Vec<u32> = sorted
        .iter()
        .copied()
        .filter(|v| (min..=max).contains(v))
        .collect();
    let outside = sorted.len() - in_range.len();
    let range_size = u64::from(max - min) + 1;
    let hot_values = range_size.div_ceil(100);
    let hot_draws = hottest_values_count(&in_range, hot_values);
    let _ = writeln!(
        out,
        "\nhottest 1% of the range ({hot_values} value{}): {} of draws",
        if hot_values == 1 { "" } else { "s" },
        percent(hot_draws, n)
    );

    let bins = (bins as u64).min(range_size);
    if bins > 0 {
        let _ = writeln!(out, "\nhistogram ({bins} bins over [{min}, {max}])");
        let mut counts = vec![0u64; bins as usize];
        for &v in &in_range {
            counts[bin_of(v - min, range_size, bins)] += 1;
        }
        let peak = counts.iter().copied().max().unwrap_or(0);
        let edges: Vec<(u32, u32)> = (0..bins)
            .map(|i| {
                // Bin i holds offsets [ceil(i·R/bins), ceil((i+1)·R/bins)),
                // the same split `bin_of` computes.
                let lo = bin_start(i, range_size, bins);
                let hi = bin_start(i + 1, range_size, bins) - 1;
                (min + lo as u32, min + hi as u32)
            })
            .collect();
        let edge_width = edges
            .iter()
            .map(|&(lo, hi)| lo.to_string().len().max(hi.to_string().len()))
            .max()
            .unwrap_or(1);
        let count_width = peak.to_string().len();
        for (&(lo, hi), &count) in edges.iter().zip(&counts) {
            let _ = write!(
                out,
                "  [{lo:>edge_width$}, {hi:>edge_width$}] {count:>count_width$} {:>7}",
                percent(count, n)
            );
            let bar = bar_len(count, peak, width);
            // No trailing blank on lines without a bar.
            if bar > 0 {
                out.push(' ');
                out.push_str(&"#".repeat(bar));
            }
            out.push('\n');
        }
    }
    if outside > 0 {
        let _ = writeln!(
            out,
            "\noutside [{min}, {max}]: {outside} draws ({})",
            percent(outside as u64, n)
        );
    }
    out
}

/// Index into `n` sorted values of the nearest-rank p-th percentile: rank
/// ceil(p·n/100), at least 1.
fn nearest_rank_index(n: u64, pct: u64) -> usize {
    let rank = (pct * n).div_ceil(100).max(1);
    (rank - 1) as usize
}

/// How many of the `sorted` draws fall on the `k` most frequent values.
fn hottest_values_count(sorted: &[u32], k: u64) -> u64 {
    let mut runs: Vec<u64> = sorted
        .chunk_by(|x, y| x == y)
        .map(|run| run.len() as u64)
        .collect();
    let k = k as usize;
    if k < runs.len() {
        // Only the k largest runs are needed, not a full sort.
        runs.select_nth_unstable_by(k - 1, |x, y| y.cmp(x));
        runs.truncate(k);
    }
    runs.iter().sum()
}

/// First offset of bin `i` when [0, range) is split into `bins` bins.
fn bin_start(i: u64, range: u64, bins: u64) -> u64 {
    (u128::from(i) * u128::from(range)).div_ceil(u128::from(bins)) as u64
}

/// The bin of an offset in [0, range): floor(offset·bins/range), which puts
/// it in [bin_start(i), bin_start(i + 1)).
fn bin_of(offset: u32, range: u64, bins: u64) -> usize {
    (u128::from(offset) * u128::from(bins) / u128::from(range)) as usize
}

/// Bar length for `count` when `peak` fills `width` columns, rounded.
fn bar_len(count: u64, peak: u64, width: usize) -> usize {
    if peak == 0 {
        return 0;
    }
    let w = width as u128;
    ((u128::from(count) * w * 2 + u128::from(peak)) / (u128::from(peak) * 2)) as usize
}

/// `part` of `whole` as a percentage with two decimals, e.g. `12.35%`.
fn percent(part: u64, whole: u64) -> String {
    format!("{:.2}%", part as f64 * 100.0 / whole as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The histogram lines of a rendering.
    fn histogram_lines(text: &str) -> Vec<&str> {
        text.lines().filter(|l| l.starts_with("  [")).collect()
    }

    /// The `#` bar at the end of a histogram line.
    fn bar(line: &str) -> usize {
        line.chars().rev().take_while(|&c| c == '#').count()
    }

    /// The value printed on a quantile line.
    fn quantile(text: &str, label: &str) -> u32 {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(label))
            .unwrap_or_else(|| panic!("no {label} line in\n{text}"));
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// Ten draws of 1, twenty of 30, forty of 60 over [1, 100].
    fn skewed() -> Vec<u32> {
        let mut d = vec![60; 40];
        d.extend([30; 20]);
        d.extend([1; 10]);
        d
    }

    #[test]
    fn header_and_quantiles_are_exact_order_statistics() {
        let text = render("special", 1, 100, 42, &skewed(), 4, 40);
        assert!(text.starts_with("distribution: special  range: [1, 100]  draws: 70  seed: 42\n"));
        for (label, _) in QUANTILES {
            assert!(
                text.lines().any(|l| l.trim_start().starts_with(label)),
                "{label}"
            );
        }
        // Sorted: indexes 0-9 are 1, 10-29 are 30, 30-69 are 60.
        // p25: rank ceil(17.5) = 18 -> 30; p50: rank 35 -> 60; p1: rank 1.
        assert_eq!(quantile(&text, "min"), 1);
        assert_eq!(quantile(&text, "p1"), 1);
        assert_eq!(quantile(&text, "p25"), 30);
        assert_eq!(quantile(&text, "p50"), 60);
        assert_eq!(quantile(&text, "max"), 60);
        // 1 % of 100 values is one value: 60, with 40 of 70 draws.
        assert!(text.contains("hottest 1% of the range (1 value): 57.14% of draws"));
    }

    #[test]
    fn histogram_has_one_line_per_bin_and_proportional_bars() {
        let text = render("special", 1, 100, 42, &skewed(), 4, 40);
        let lines = histogram_lines(&text);
        assert_eq!(lines.len(), 4, "{text}");
        // Bins of 25 values: 10, 20, 40 and 0 draws; the fullest gets 40.
        assert!(
            lines[0].starts_with("  [  1,  25] 10  14.29% "),
            "{}",
            lines[0]
        );
        assert_eq!(
            lines.iter().map(|l| bar(l)).collect::<Vec<_>>(),
            [10, 20, 40, 0]
        );
        assert!(lines[3].ends_with("[ 76, 100]  0   0.00%"), "{}", lines[3]);
        // Halving the width halves every bar.
        let narrow = render("special", 1, 100, 42, &skewed(), 4, 20);
        let bars: Vec<usize> = histogram_lines(&narrow).iter().map(|l| bar(l)).collect();
        assert_eq!(bars, [5, 10, 20, 0]);
    }

    #[test]
    fn uneven_bins_cover_the_range_without_gaps() {
        // 10 values in 3 bins: [1, 4], [5, 7], [8, 10].
        let draws = [4, 5, 7, 8, 10, 10];
        let text = render("uniform", 1, 10, 0, &draws, 3, 10);
        let lines = histogram_lines(&text);
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("  [ 1,  4] 1 "), "{text}");
        assert!(lines[1].starts_with("  [ 5,  7] 2 "), "{text}");
        assert!(lines[2].starts_with("  [ 8, 10] 3 "), "{text}");
        // 1 % of 10 values rounds up to one value: 10, with 2 of 6 draws.
        assert!(text.contains("(1 value): 33.33% of draws"));
        // More bins than values: one bin per value.
        let text = render("uniform", 1, 10, 0, &draws, 50, 10);
        assert_eq!(histogram_lines(&text).len(), 10);
        // No bins: no histogram.
        let text = render("uniform", 1, 10, 0, &draws, 0, 10);
        assert!(histogram_lines(&text).is_empty() && !text.contains("histogram"));
    }

    #[test]
    fn hot_share_uses_one_percent_of_the_values_and_full_range_works() {
        // 1000 values, so the 10 most popular; 10 values hold 50 draws each
        // and 900 others one each: 500 / 1400.
        let mut draws: Vec<u32> = (0..10).flat_map(|v| [v * 7; 50]).collect();
        draws.extend(100..1000);
        let text = render("pareto", 0, 999, 1, &draws, 10, 30);
        assert!(text.contains("(10 values): 35.71% of draws"), "{text}");
        // The full u32 range neither overflows nor allocates per value.
        let text = render("uniform", 0, u32::MAX, 1, &[0, u32::MAX], 2, 10);
        let lines = histogram_lines(&text);
        assert_eq!(lines.len(), 2);
        assert!(lines[1].contains(&u32::MAX.to_string()));
    }

    #[test]
    fn empty_and_out_of_range_draws_are_reported() {
        let text = render("gaussian", 1, 10, 3, &[], 5, 10);
        assert!(text.contains("draws: 0") && text.contains("no draws"));
        let text = render("gaussian", 1, 10, 3, &[5, 11, 12], 5, 10);
        assert!(text.contains("outside [1, 10]: 2 draws (66.67%)"), "{text}");
        let total: u64 = histogram_lines(&text)
            .iter()
            .map(|l| {
                l.split(']')
                    .nth(1)
                    .unwrap()
                    .split_whitespace()
                    .next()
                    .unwrap()
            })
            .map(|c| c.parse::<u64>().unwrap())
            .sum();
        assert_eq!(total, 1);
    }
}
