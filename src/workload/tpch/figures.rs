//! TPC-H's figures of a run (clause 5.4), derived once from the rest of
//! the record (`engine::derive` calls [`of`]) into `result.tpch`: each
//! query's and refresh function's timing interval from its type's exact
//! mean (one execution per stream), Power@Size for a power test,
//! Throughput@Size for a throughput test, and where the run departs from
//! the spec's test. QphH@Size needs both tests at one scale: a study's
//! report combines its power and throughput points.

use crate::record::tpch::{Tpch, TpchTiming};
use crate::record::{Run, TransactionType};

/// The scale factors the spec allows a result at, with the minimum
/// query streams of a throughput test at each (clause 5.3.4).
pub const MIN_STREAMS: [(f64, u64); 10] = [
    (1.0, 2),
    (10.0, 3),
    (30.0, 4),
    (100.0, 5),
    (300.0, 6),
    (1000.0, 7),
    (3000.0, 8),
    (10000.0, 9),
    (30000.0, 10),
    (100000.0, 11),
];

/// The figures of `r`, if it is a TPC-H run.
pub fn of(r: &Run) -> Option<Tpch> {
    if r.workload.name != "tpch" {
        return None;
    }
    let o = &r.workload.options;
    let sf: f64 = o.get("scale")?.parse().ok()?;
    let refresh = o.get("refresh").is_none_or(|v| v == "on");
    let qualification = o.get("qualification").is_some_and(|v| v == "on");
    let threads = r.run.threads;
    let power_test = threads <= 1;
    let streams = match (power_test, refresh) {
        (true, _) => 1,
        (false, true) => threads - 1,
        (false, false) => threads,
    };
    let timings: Vec<TpchTiming> = r.result.transaction_types.iter().map(timing).collect();
    let queries: Vec<&TpchTiming> = timings.iter().filter(|t| t.name.starts_with('Q')).collect();
    // A failure is a timeout when the run counted them (the limit ends
    // a statement without naming its type; other failures stop the run).
    let timeouts = r.result.errors.timeout;
    let missing = |ts: &[&TpchTiming], want: u64| -> Option<String> {
        ts.iter()
            .find(|t| t.count < want || t.mean_s.is_none())
            .map(|t| match t.failed {
                0 => format!("{} completed {} of {want} times", t.name, t.count),
                f if timeouts > 0 => format!(
                    "{} failed {f} of {want} times ({timeouts} statements of the run ended by --query-timeout)",
                    t.name
                ),
                f => format!("{} failed {f} of {want} times", t.name),
            })
    };
    let query_geomean_s = missing(&queries, 1)
        .is_none()
        .then(|| geomean(queries.iter().filter_map(|t| t.mean_s)));
    let elapsed_s = r.result.measured_s;
    let either = |v: Result<f64, String>| match v {
        Ok(v) => (Some(v), None),
        Err(why) => (None, Some(why)),
    };
    let ((power, power_absent), (throughput, throughput_absent)) = if power_test {
        let all: Vec<&TpchTiming> = timings.iter().collect();
        let p = match missing(&all, 1) {
            Some(why) => Err(why),
            None => Ok(power(sf, all.iter().filter_map(|t| t.mean_s))),
        };
        let none = "a power test (--threads 1) has no throughput";
        (either(p), either(Err(none.into())))
    } else {
        let t = match missing(&queries, streams) {
            Some(why) => Err(why),
            None if elapsed_s > 0.0 => Ok(streams as f64 * 22.0 * 3600.0 / elapsed_s * sf),
            None => Err("the measured interval is empty".into()),
        };
        let none = "a throughput test has no power (run --threads 1)";
        (either(Err(none.into())), either(t))
    };
    Some(Tpch {
        scale_factor: sf,
        test: if power_test { "power" } else { "throughput" }.to_string(),
        streams,
        refresh,
        qualification,
        query_geomean_s,
        power,
        power_absent,
        throughput,
        throughput_absent,
        elapsed_s,
        departures: departures(sf, power_test, streams, refresh, qualification),
        timings,
    })
}

/// A query's timing from its transaction type's counts and latency.
pub fn timing(t: &TransactionType) -> TpchTiming {
    let s = |us: f64| us / 1e6;
    TpchTiming {
        name: t.name.clone(),
        count: t.count,
        failed: t.failed,
        mean_s: t.latency.as_ref().map(|l| s(l.avg_us)),
        min_s: t.latency.as_ref().map(|l| s(l.min_us)),
        max_s: t.latency.as_ref().map(|l| s(l.max_us)),
    }
}

/// Power@Size: 3600 × SF over the geometric mean of the intervals, each
/// raised to at least the longest over 1,000 (clause 5.4.1.4).
pub fn power(sf: f64, intervals: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = intervals.collect();
    let floor = v.iter().cloned().fold(0.0, f64::max) / 1000.0;
    3600.0 * sf / geomean(v.into_iter().map(|x| x.max(floor)))
}

/// QphH@Size (clause 5.4.3): the geometric mean of Power@Size and
/// Throughput@Size at one scale.
pub fn qphh(power: f64, throughput: f64) -> f64 {
    (power * throughput).sqrt()
}

/// The geometric mean of `v` (0 for none).
pub fn geomean(v: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = v.fold((0.0, 0u32), |(s, n), x| (s + x.ln(), n + 1));
    if n == 0 {
        return 0.0;
    }
    (sum / f64::from(n)).exp()
}

/// Why the run's metric is not a TPC-H result as the spec defines one.
fn departures(sf: f64, power: bool, streams: u64, refresh: bool, qual: bool) -> Vec<String> {
    let mut out = Vec::new();
    match MIN_STREAMS.iter().find(|(s, _)| *s == sf) {
        None => out.push(format!(
            "scale factor {sf} is not one of the spec's (1, 10, 30, 100, 300, 1000, …)"
        )),
        Some((_, min)) if !power && streams < *min => out.push(format!(
            "{streams} query stream(s): the spec's minimum at scale factor {sf} is {min}"
        )),
        _ => {}
    }
    if !refresh {
        out.push("the refresh functions were off (--refresh off)".into());
    }
    if qual {
        out.push("the queries took the validation parameters (--qualification)".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_floors_intervals_at_a_thousandth_of_the_longest() {
        // 24 intervals of 1 s: 3600 × SF.
        let p = power(1.0, std::iter::repeat_n(1.0, 24));
        assert!((p - 3600.0).abs() < 1e-9, "{p}");
        // One interval of 2,000 s and 23 of 0.001 s: those count as 2 s.
        let mut v = vec![2000.0];
        v.extend(std::iter::repeat_n(0.001, 23));
        let p = power(10.0, v.into_iter());
        let expect = 36000.0 / (2000f64.ln() / 24.0 + 23.0 * 2f64.ln() / 24.0).exp();
        assert!((p - expect).abs() < 1e-6 * expect, "{p} {expect}");
        assert!((qphh(400.0, 100.0) - 200.0).abs() < 1e-12);
    }

    #[test]
    fn departures_name_what_is_not_the_specs() {
        assert!(departures(1.0, true, 1, true, false).is_empty());
        assert!(departures(1.0, false, 2, true, false).is_empty());
        let d = departures(1.0, false, 1, false, true);
        assert_eq!(d.len(), 3, "{d:?}");
        assert!(d[0].contains("minimum at scale factor 1 is 2"));
        assert!(departures(0.01, true, 1, true, false)[0].contains("0.01 is not one"));
    }
}
