//! Long time series drawn at the chart's resolution. A day of one-second
//! intervals is 86,400 points on a plot about 640 pixels wide: drawn as
//! they are, the line is a smear and the SVG tens of megabytes. A series
//! with more than [`MAX_POINTS`] points on a linear x axis is cut into
//! that many buckets of equal x width, each drawn as its largest y — a
//! one-second stall stays visible in a day-long chart, where an average
//! would smooth it away. Every series of a chart shares the buckets, so
//! stacked series still meet point for point.

use super::chart::{Chart, ChartKind, Scale, Series};

/// The most points a line is drawn with before it is thinned: about one
/// per pixel of the plot.
pub const MAX_POINTS: usize = 600;

/// `chart` with its long series thinned, or `None` when none needs it (or
/// the chart is not a line over a linear x).
pub(super) fn thin(chart: &Chart) -> Option<Chart> {
    let lines = matches!(chart.kind, ChartKind::Line | ChartKind::Stacked);
    let linear = matches!(chart.x.scale, Scale::Linear);
    if !lines || !linear || chart.series.iter().all(|s| s.points.len() <= MAX_POINTS) {
        return None;
    }
    let xs = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .filter(|x| x.is_finite());
    let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
        (lo.min(x), hi.max(x))
    });
    // No width to cut (one x, or none finite).
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    let width = (hi - lo) / MAX_POINTS as f64;
    let bucket = |x: f64| (((x - lo) / width) as usize).min(MAX_POINTS - 1);
    let mut out = chart.clone();
    for s in &mut out.series {
        *s = thin_series(s, lo, width, &bucket);
    }
    Some(out)
}

/// One series in the buckets: each bucket's largest y at its centre (NaN
/// when the bucket holds only gaps), and its spread's extremes.
fn thin_series(s: &Series, lo: f64, width: f64, bucket: &dyn Fn(f64) -> usize) -> Series {
    let mut ys: Vec<Option<f64>> = vec![None; MAX_POINTS];
    let mut spread: Vec<Option<(f64, f64)>> = vec![None; MAX_POINTS];
    for (i, &(x, y)) in s.points.iter().enumerate() {
        if !x.is_finite() {
            continue;
        }
        let k = bucket(x);
        let cur = ys[k].get_or_insert(f64::NAN);
        // f64::max ignores a NaN: a gap counts only where nothing else is.
        *cur = cur.max(y);
        if let Some((l, h)) = s.spread.as_ref().and_then(|sp| sp.get(i)) {
            let b = spread[k].get_or_insert((*l, *h));
            *b = (b.0.min(*l), b.1.max(*h));
        }
    }
    let kept: Vec<usize> = (0..MAX_POINTS).filter(|&k| ys[k].is_some()).collect();
    Series {
        name: s.name.clone(),
        points: kept
            .iter()
            .map(|&k| (lo + (k as f64 + 0.5) * width, ys[k].unwrap_or(f64::NAN)))
            .collect(),
        spread: s.spread.as_ref().map(|_| {
            kept.iter()
                .map(|&k| spread[k].unwrap_or((f64::NAN, f64::NAN)))
                .collect()
        }),
        reference: s.reference,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::plot::chart::Axis;

    fn chart(points: Vec<(f64, f64)>) -> Chart {
        Chart {
            kind: ChartKind::Line,
            x: Axis::linear("time (s)"),
            y: Axis::linear("transactions/s"),
            series: vec![Series {
                name: "tps".into(),
                points,
                spread: None,
                reference: false,
            }],
            ..Chart::default()
        }
    }

    #[test]
    fn a_day_of_seconds_is_drawn_at_the_plots_width_keeping_each_buckets_max() {
        // 86,400 one-second intervals at 1,000/s, with one stall second at
        // 5,000 and one gap (NaN) in the middle of a bucket of real points.
        let mut points: Vec<(f64, f64)> = (1..=86_400).map(|t| (t as f64, 1000.0)).collect();
        points[40_000].1 = 5000.0;
        points[50_000].1 = f64::NAN;
        let thinned = thin(&chart(points)).expect("thinned");
        let s = &thinned.series[0];
        assert_eq!(s.points.len(), MAX_POINTS);
        let peaks: Vec<&(f64, f64)> = s.points.iter().filter(|p| p.1 == 5000.0).collect();
        assert_eq!(peaks.len(), 1, "the stall survives as its bucket's max");
        let x = peaks[0].0;
        assert!(
            (x - 40_001.0).abs() <= 86_400.0 / MAX_POINTS as f64,
            "at {x}"
        );
        assert!(s.points.iter().all(|p| p.1 == 1000.0 || p.1 == 5000.0));
    }

    #[test]
    fn short_series_and_log_axes_are_drawn_as_they_are() {
        let short = chart((1..=MAX_POINTS).map(|t| (t as f64, 1.0)).collect());
        assert!(thin(&short).is_none());
        let mut log = chart((1..=10_000).map(|t| (t as f64, 1.0)).collect());
        log.x.scale = Scale::Log;
        assert!(thin(&log).is_none());
    }

    #[test]
    fn a_gap_alone_in_its_bucket_stays_a_gap() {
        let mut points: Vec<(f64, f64)> = (0..6_000).map(|t| (t as f64, 2.0)).collect();
        for p in &mut points[0..10] {
            p.1 = f64::NAN;
        }
        let thinned = thin(&chart(points)).unwrap();
        assert!(thinned.series[0].points[0].1.is_nan());
        assert_eq!(thinned.series[0].points[1].1, 2.0);
    }
}
