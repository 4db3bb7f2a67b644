//! Super Smack's report for one client, as `collect_threads()` printed it:
//!
//! ```text
//! Query Barrel Report for client smacker1
//! connect: max=4ms  min=0ms avg= 1ms from 10 clients
//! Query_type<TAB>num_queries<TAB>max_time<TAB>min_time<TAB>q_per_s
//! select_index<TAB>20000<TAB>3<TAB>0<TAB>4861.22
//! ```
//! (the columns are separated by tabs).
//!
//! Times are whole milliseconds (truncated, as Super Smack computed them);
//! query types are in name order (Super Smack kept them in a sorted map);
//! `q_per_s` divides each type's queries by the wall time from thread
//! creation (connecting included) to the last client's finish.
//!
//! Unlike Super Smack 1.3, `min_time` and `max_time` are the true extremes
//! over every query of the type: 1.3's per-process update had its test
//! inverted (`if(num_queries) min_time = max_time = q_time;`), so each
//! process reported only its last query's time and the merged figures were
//! the largest of those last times and, since the parent's minimum starts
//! at 0, a minimum of 0.
//!
//! Below the table come dbsweep's own figures: latency percentiles per query
//! type at microsecond resolution, and errors by kind.

use std::fmt::Write;

use crate::record::{self, Run};

use super::text::{latency_columns, latency_headers};

/// Whole milliseconds, truncated.
fn whole_ms(ns: u64) -> u64 {
    ns / 1_000_000
}

/// Whole milliseconds of a histogram's mean, truncated (0 when empty).
fn mean_ms(h: &record::Histogram) -> u64 {
    if h.count == 0 {
        0
    } else {
        (h.sum as f64 / h.count as f64 / 1e6) as u64
    }
}

/// The wall time Super Smack divides by: connecting plus running.
pub fn wall_seconds(r: &Run) -> f64 {
    r.result.connect.as_ref().map_or(0.0, |c| c.wall_s) + r.result.measured_s
}

/// The clients' connect times (empty for a record without them).
fn connects(r: &Run) -> record::Histogram {
    r.result
        .connect
        .as_ref()
        .map(|c| c.histogram.clone())
        .unwrap_or_default()
}

/// The report of client `client`, whose barrel has the query `types`.
pub fn render(client: &str, types: &[&str], r: &Run) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Query Barrel Report for client {client}");
    let c = connects(r);
    // Super Smack's spacing, trailing blank included.
    let _ = writeln!(
        s,
        "connect: max={}ms  min={}ms avg= {}ms from {} clients ",
        c.max.map_or(0, whole_ms),
        c.min.map_or(0, whole_ms),
        mean_ms(&c),
        c.count
    );
    let _ = writeln!(s, "Query_type\tnum_queries\tmax_time\tmin_time\tq_per_s");
    let wall = wall_seconds(r);
    let mut sorted: Vec<&str> = types.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    for t in &sorted {
        let h = r.histogram(Some(t));
        let n = h.map_or(0, |h| h.count);
        let q_per_s = if wall > 0.0 {
            format!("{:.2}", n as f64 / wall)
        } else {
            "n/a".into()
        };
        let _ = writeln!(
            s,
            "{t}\t{n}\t{}\t{}\t{q_per_s}",
            h.and_then(|h| h.max).map_or(0, whole_ms),
            h.and_then(|h| h.min).map_or(0, whole_ms),
        );
    }

    // dbsweep's figures.
    let _ = writeln!(s);
    let width = sorted.iter().map(|t| t.len()).max().unwrap_or(4).max(10);
    let mut head = format!("{:<width$}", "Query_type");
    let percentiles: Vec<f64> = r
        .result
        .statements
        .first()
        .map(|st| st.latency.percentiles.iter().map(|p| p.p).collect())
        .unwrap_or_default();
    for h in latency_headers(&percentiles, "_ms") {
        let _ = write!(head, " {h:>10}");
    }
    let _ = writeln!(s, "Latency per query type (dbsweep, wall {wall:.3} s):");
    let _ = writeln!(s, "{head}");
    for t in &sorted {
        let Some(st) = r.result.statements.iter().find(|st| st.kind == *t) else {
            let _ = writeln!(s, "{t:<width$} {:>10}", 0);
            continue;
        };
        let mut line = format!("{t:<width$}");
        for c in latency_columns(&st.latency) {
            let _ = write!(line, " {c:>10}");
        }
        let _ = writeln!(s, "{line}");
    }
    let res = &r.result;
    let errors: Vec<String> = res
        .errors
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("{k}={n}"))
        .collect();
    if !errors.is_empty() || res.failed_transactions > 0 {
        let _ = writeln!(
            s,
            "Errors: {} (rounds failed: {})",
            if errors.is_empty() {
                "none".to_string()
            } else {
                errors.join(" ")
            },
            res.failed_transactions
        );
    }
    if let Some(f) = &res.fatal_error {
        let _ = writeln!(s, "Aborted: {f}");
    }
    s
}

/// A `client::…` figure of a finished run (`path` after the client's
/// name), as Super Smack's `print` showed it: `max_connect_time`,
/// `min_connect_time`, `avg_connect_time`, or `TYPE::num_queries`,
/// `max_time`, `min_time`, `q_per_s`.
pub fn figure(r: &Run, path: &[String]) -> String {
    let ms = |ns: Option<u64>| ns.map_or(0, whole_ms).to_string();
    match path {
        [p] => {
            let c = connects(r);
            match p.as_str() {
                "max_connect_time" => ms(c.max),
                "min_connect_time" => ms(c.min),
                _ => mean_ms(&c).to_string(),
            }
        }
        [t, p] => {
            let h = r.histogram(Some(t));
            match p.as_str() {
                "num_queries" => h.map_or(0, |h| h.count).to_string(),
                "max_time" => ms(h.and_then(|h| h.max)),
                "min_time" => ms(h.and_then(|h| h.min)),
                _ => {
                    let wall = wall_seconds(r);
                    let n = h.map_or(0, |h| h.count);
                    if wall > 0.0 {
                        format!("{:.2}", n as f64 / wall)
                    } else {
                        "0".into()
                    }
                }
            }
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{ErrorSet, Target};
    use crate::engine::point::{self, Point};
    use crate::engine::{ConnectStats, RunConfig, RunResult, StopReason};
    use crate::rand::dist::{DistKind, DistParams};
    use crate::rand::RandConfig;
    use crate::stats::histogram::Histogram;
    use std::time::Duration;

    /// The record of `result()` as `dbsweep smack` builds it.
    fn record(percentiles: &[f64]) -> Run {
        let target = Target::sqlite("/tmp/smack.db".into());
        let config = RunConfig {
            threads: 2,
            time: None,
            events: None,
            rounds: Some(2),
            warmup: Duration::ZERO,
            report_interval: None,
            interval_percentile: 95.0,
            max_retries: Some(0),
            ignore_errors: ErrorSet::NONE,
            grace: Duration::from_secs(5),
            seed: 1,
            reconnect_every: None,
            timeout: None,
            pacing: Default::default(),
            shard: None,
            client_threads: None,
            pipeline: None,
            release: None,
        };
        let p = Point {
            target: &target,
            instances: &[],
            config: &config,
            rand: RandConfig {
                kind: DistKind::Uniform,
                params: DistParams::default(),
                seed: 1,
            },
            percentiles,
            workload: crate::record::WorkloadInfo {
                name: "smack".into(),
                options: Default::default(),
            },
            metrics: None,
            series: None,
            live: None,
        };
        point::record(&p, &result(), 0, Default::default())
    }

    fn result() -> RunResult {
        let mut sel = Histogram::new();
        for ns in [400_000, 2_500_000, 7_900_000, 1_200_000] {
            sel.record(ns);
        }
        let mut upd = Histogram::new();
        upd.record(3_000_000);
        upd.record(11_000_000);
        let mut conn = Histogram::new();
        conn.record(1_500_000);
        conn.record(4_200_000);
        RunResult {
            threads: 2,
            statement_kinds: vec![
                "update_index".into(),
                "select_index".into(),
                "begin".into(),
                "commit".into(),
            ],
            warmup: Duration::ZERO,
            measured: Duration::from_millis(1500),
            counters: Default::default(),
            abandoned: 0,
            txn_latency: Histogram::new(),
            service: None,
            lag: None,
            offered: None,
            stmt_latency: vec![upd, sel, Histogram::new(), Histogram::new()],
            types: vec![],
            clients: vec![],
            cpu: Default::default(),
            cpus: 1,
            stop: StopReason::Rounds,
            connect: ConnectStats {
                wall: Duration::from_millis(500),
                latency: conn,
            },
            setup: None,
            fatal: None,
            server: Default::default(),
            released_unix_us: 0,
        }
    }

    #[test]
    fn super_smack_layout_with_true_min_and_max() {
        let out = render(
            "smacker",
            &["update_index", "select_index", "select_index"],
            &record(&[50.0]),
        );
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "Query Barrel Report for client smacker");
        assert_eq!(
            lines[1],
            "connect: max=4ms  min=1ms avg= 2ms from 2 clients "
        );
        assert_eq!(
            lines[2],
            "Query_type\tnum_queries\tmax_time\tmin_time\tq_per_s"
        );
        // Sorted by type; 4 queries over 2 s of wall time.
        assert_eq!(lines[3], "select_index\t4\t7\t0\t2.00");
        assert_eq!(lines[4], "update_index\t2\t11\t3\t1.00");
        assert!(lines[6].starts_with("Latency per query type (dbsweep, wall 2.000 s):"));
        assert!(lines[7].contains("p50_ms"), "{}", lines[7]);
        assert!(
            lines[8].starts_with("select_index          4      0.400"),
            "{}",
            lines[8]
        );
        assert!(!out.contains("Errors"));
    }
}
