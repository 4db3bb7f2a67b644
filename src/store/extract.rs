//! The metric columns of a point, read from its run document
//! (`dbsweep-run/1`, see `docs/json.md`). The document is the one source of
//! truth: every number in the `point`, `point_error` and `point_interval`
//! tables is copied from it here, never recomputed from other data.
//!
//! The one exception is a latency percentile the document does not list
//! (the run's `--percentiles` left it out): it is then read from the stored
//! `transaction` histogram, the very histogram the document's percentiles
//! come from, with the same definition and unit conversion.

use serde_json::Value;

use crate::report::json::SCHEMA_ID;
use crate::stats::histogram::Histogram;

/// The figures of one run that get a column of their own in `point`.
/// Units as in the run document: seconds, microseconds, per second.
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    /// When the run started, seconds since 1970 (`started_unix_s`).
    pub started_unix_s: u64,
    /// The run's random seed (`--rand-seed` repeats its random choices).
    pub seed: u64,
    /// `time`, `events`, `rounds`, `interrupted` or `aborted`.
    pub stop_reason: String,
    /// Length of the measured window, seconds.
    pub measured_s: f64,
    /// Completed transactions in the window.
    pub transactions: u64,
    /// Transactions per second of the window.
    pub tps: f64,
    /// Queries (read + write + other) per second of the window.
    pub qps: f64,
    /// Statements that returned a result set.
    pub reads: u64,
    /// Statements without a result set that changed rows.
    pub writes: u64,
    /// Everything else (BEGIN, COMMIT, DML that changed nothing).
    pub others: u64,
    /// Transactions given up (retries exhausted, or an ignored error).
    pub failed_transactions: u64,
    /// Re-runs after deadlocks, lock timeouts and serialization failures.
    pub retries: u64,
    /// Errors that did not abort the run.
    pub ignored_errors: u64,
    /// All errors, every kind (the sum of `point_error.count`).
    pub errors: u64,
    /// Connections re-established.
    pub reconnects: u64,
    /// Transactions still running at the deadline.
    pub abandoned: u64,
    /// Transaction latency, µs; `None` when no transaction completed (or the
    /// percentile is neither in the document nor in a stored histogram).
    pub lat_min_us: Option<f64>,
    pub lat_avg_us: Option<f64>,
    pub lat_p50_us: Option<f64>,
    pub lat_p95_us: Option<f64>,
    pub lat_p99_us: Option<f64>,
    pub lat_max_us: Option<f64>,
    /// The client's CPU over the window (user + system), seconds.
    pub client_cpu_s: f64,
    /// The server's product and version as the connection reported it.
    pub server_version: String,
}

/// One `result.intervals` entry, as stored in `point_interval`.
#[derive(Debug, Clone, PartialEq)]
pub struct Interval {
    pub t_s: f64,
    pub duration_s: f64,
    pub warmup: bool,
    pub threads: u64,
    pub transactions: u64,
    pub failed: u64,
    pub reads: u64,
    pub writes: u64,
    pub others: u64,
    pub errors: u64,
    pub reconnects: u64,
    pub p50_us: Option<f64>,
    pub p95_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub max_us: Option<f64>,
}

/// Everything a commit copies out of a run document.
#[derive(Debug, Clone, PartialEq)]
pub struct Extracted {
    pub metrics: Metrics,
    /// `(kind, count)` for every kind in `result.errors`, zeros included, so
    /// a query for deadlocks finds 0 rather than nothing.
    pub errors: Vec<(String, u64)>,
    pub intervals: Vec<Interval>,
}

/// Reads the stored figures out of a `dbsweep-run/1` document. Fails, naming
/// the field, when the document is of another format or lacks a figure:
/// a commit stores nothing rather than a made-up number.
pub fn extract(run: &Value, histograms: &[(String, Histogram)]) -> anyhow::Result<Extracted> {
    let schema = run.get("schema").and_then(Value::as_str);
    if schema != Some(SCHEMA_ID) {
        anyhow::bail!(
            "the run document is not a {SCHEMA_ID} document (its \"schema\" is {})",
            schema.map_or("missing".into(), |s| format!("'{s}'"))
        );
    }
    let result = at(run, "result")?;
    let latency = at(result, "latency")?;
    let txn_hist = histograms
        .iter()
        .find(|(name, _)| name == "transaction")
        .map(|(_, h)| h);
    let pct = |p: f64| -> anyhow::Result<Option<f64>> {
        if latency.is_null() {
            return Ok(None);
        }
        let listed = at(latency, "percentiles")?
            .as_array()
            .ok_or_else(|| missing("result.latency.percentiles", "an array"))?
            .iter()
            .find(|e| e.get("p").and_then(Value::as_f64) == Some(p));
        Ok(match listed {
            Some(e) => Some(f64_at(e, "us")?),
            // Same conversion as the document's: ns / 1e3.
            None => txn_hist
                .and_then(|h| h.value_at_percentile(p))
                .map(|ns| ns as f64 / 1e3),
        })
    };
    let lat = |name: &str| -> anyhow::Result<Option<f64>> {
        if latency.is_null() {
            Ok(None)
        } else {
            f64_at(latency, name).map(Some)
        }
    };
    let errors: Vec<(String, u64)> = at(result, "errors")?
        .as_object()
        .ok_or_else(|| missing("result.errors", "an object"))?
        .iter()
        .map(|(k, v)| {
            let n = v
                .as_u64()
                .ok_or_else(|| missing(&format!("result.errors.{k}"), "a count"))?;
            Ok((k.clone(), n))
        })
        .collect::<anyhow::Result<_>>()?;
    let cpu = at(result, "client_cpu")?;
    let queries = at(result, "queries")?;
    let metrics = Metrics {
        started_unix_s: u64_at(run, "started_unix_s")?,
        seed: u64_at(at(run, "random")?, "seed")?,
        stop_reason: str_at(result, "stop_reason")?,
        measured_s: f64_at(result, "measured_s")?,
        transactions: u64_at(result, "transactions")?,
        tps: f64_at(result, "tps")?,
        qps: f64_at(result, "qps")?,
        reads: u64_at(queries, "read")?,
        writes: u64_at(queries, "write")?,
        others: u64_at(queries, "other")?,
        failed_transactions: u64_at(result, "failed_transactions")?,
        retries: u64_at(result, "retries")?,
        ignored_errors: u64_at(result, "ignored_errors")?,
        errors: errors.iter().map(|(_, n)| n).sum(),
        reconnects: u64_at(result, "reconnects")?,
        abandoned: u64_at(result, "abandoned")?,
        lat_min_us: lat("min_us")?,
        lat_avg_us: lat("avg_us")?,
        lat_p50_us: pct(50.0)?,
        lat_p95_us: pct(95.0)?,
        lat_p99_us: pct(99.0)?,
        lat_max_us: lat("max_us")?,
        client_cpu_s: f64_at(cpu, "user_s")? + f64_at(cpu, "system_s")?,
        server_version: str_at(at(run, "target")?, "server_version")?,
    };
    let intervals = at(result, "intervals")?
        .as_array()
        .ok_or_else(|| missing("result.intervals", "an array"))?
        .iter()
        .map(interval)
        .collect::<anyhow::Result<_>>()?;
    Ok(Extracted {
        metrics,
        errors,
        intervals,
    })
}

fn interval(v: &Value) -> anyhow::Result<Interval> {
    Ok(Interval {
        t_s: f64_at(v, "t_s")?,
        duration_s: f64_at(v, "duration_s")?,
        warmup: v
            .get("warmup")
            .and_then(Value::as_bool)
            .ok_or_else(|| missing("result.intervals[].warmup", "a boolean"))?,
        threads: u64_at(v, "threads")?,
        transactions: u64_at(v, "transactions")?,
        failed: u64_at(v, "failed")?,
        reads: u64_at(v, "reads")?,
        writes: u64_at(v, "writes")?,
        others: u64_at(v, "others")?,
        errors: u64_at(v, "errors")?,
        reconnects: u64_at(v, "reconnects")?,
        p50_us: opt_f64_at(v, "p50_us")?,
        p95_us: opt_f64_at(v, "p95_us")?,
        p99_us: opt_f64_at(v, "p99_us")?,
        max_us: opt_f64_at(v, "max_us")?,
    })
}

fn missing(field: &str, what: &str) -> anyhow::Error {
    anyhow::anyhow!("the run document's {field} is missing or not {what}")
}

fn at<'a>(v: &'a Value, field: &str) -> anyhow::Result<&'a Value> {
    v.get(field).ok_or_else(|| missing(field, "present"))
}

fn u64_at(v: &Value, field: &str) -> anyhow::Result<u64> {
    at(v, field)?
        .as_u64()
        .ok_or_else(|| missing(field, "a count"))
}

fn f64_at(v: &Value, field: &str) -> anyhow::Result<f64> {
    at(v, field)?
        .as_f64()
        .ok_or_else(|| missing(field, "a number"))
}

fn opt_f64_at(v: &Value, field: &str) -> anyhow::Result<Option<f64>> {
    match at(v, field)? {
        Value::Null => Ok(None),
        x => x
            .as_f64()
            .map(Some)
            .ok_or_else(|| missing(field, "a number")),
    }
}

fn str_at(v: &Value, field: &str) -> anyhow::Result<String> {
    at(v, field)?
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| missing(field, "a string"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn doc(latency: Value) -> Value {
        json!({
            "schema": "dbsweep-run/1",
            "started_unix_s": 1_700_000_000u64,
            "random": {"seed": 18_000_000_000_000_000_000u64},
            "target": {"server_version": "SQLite 3.46.0"},
            "result": {
                "stop_reason": "time", "measured_s": 10.0, "transactions": 1000,
                "tps": 100.0, "qps": 2000.0,
                "queries": {"read": 14000, "write": 4000, "other": 2000, "total": 20000},
                "failed_transactions": 1, "retries": 3, "ignored_errors": 4,
                "reconnects": 0, "abandoned": 0,
                "errors": {"deadlock": 3, "other": 1},
                "latency": latency,
                "client_cpu": {"user_s": 1.5, "system_s": 0.25},
                "intervals": [{
                    "t_s": 1.0, "duration_s": 1.0, "warmup": true, "threads": 4,
                    "transactions": 90, "failed": 0, "reads": 1, "writes": 2,
                    "others": 3, "errors": 0, "reconnects": 0,
                    "p50_us": 10.0, "p95_us": null, "p99_us": 30.0, "max_us": 40.0
                }]
            }
        })
    }

    #[test]
    fn reads_every_column_from_the_document() {
        let lat = json!({"count": 1000, "min_us": 1.0, "avg_us": 5.0, "max_us": 90.0,
                         "sum_us": 5000.0,
                         "percentiles": [{"p": 50, "us": 4.0}, {"p": 95.0, "us": 20.0},
                                         {"p": 99, "us": 60.0}]});
        let x = extract(&doc(lat), &[]).unwrap();
        let m = &x.metrics;
        assert_eq!((m.tps, m.qps, m.transactions), (100.0, 2000.0, 1000));
        assert_eq!((m.reads, m.writes, m.others), (14000, 4000, 2000));
        assert_eq!(m.errors, 4);
        assert_eq!(m.seed, 18_000_000_000_000_000_000);
        assert_eq!(m.client_cpu_s, 1.75);
        assert_eq!(
            (m.lat_p50_us, m.lat_p95_us, m.lat_p99_us),
            (Some(4.0), Some(20.0), Some(60.0))
        );
        assert_eq!(x.errors, [("deadlock".into(), 3), ("other".into(), 1)]);
        assert_eq!(x.intervals.len(), 1);
        assert!(x.intervals[0].warmup);
        assert_eq!(x.intervals[0].p95_us, None);
    }

    #[test]
    fn unlisted_percentiles_come_from_the_transaction_histogram() {
        let lat = json!({"count": 2, "min_us": 1.0, "avg_us": 1.5, "max_us": 2.0,
                         "sum_us": 3.0, "percentiles": [{"p": 50, "us": 1.0}]});
        let mut h = Histogram::new();
        h.record(1_000);
        h.record(2_000);
        let x = extract(&doc(lat.clone()), &[("transaction".into(), h)]).unwrap();
        assert_eq!(x.metrics.lat_p50_us, Some(1.0)); // the document's
        assert_eq!(x.metrics.lat_p95_us, Some(2.0)); // the histogram's
        let x = extract(&doc(lat), &[]).unwrap();
        assert_eq!(x.metrics.lat_p95_us, None); // nothing made up
    }

    #[test]
    fn no_latency_means_null_latency_columns() {
        let x = extract(&doc(Value::Null), &[]).unwrap();
        assert_eq!(x.metrics.lat_min_us, None);
        assert_eq!(x.metrics.lat_p95_us, None);
    }

    #[test]
    fn refuses_other_formats_and_missing_figures() {
        let mut d = doc(Value::Null);
        d["schema"] = json!("something/2");
        let e = extract(&d, &[]).unwrap_err().to_string();
        assert!(e.contains("'something/2'"), "{e}");
        let mut d = doc(Value::Null);
        d["result"].as_object_mut().unwrap().remove("tps");
        let e = extract(&d, &[]).unwrap_err().to_string();
        assert!(e.contains("tps is missing"), "{e}");
    }
}
