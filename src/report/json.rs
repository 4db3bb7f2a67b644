//! The machine-readable run result. Its format is documented in
//! `docs/json.md` and fixed by `schema/run.schema.json`, which a test
//! validates real output against. Latencies are in microseconds (floats:
//! measured with nanosecond resolution); rates are per second of the measured
//! window.

use serde_json::{json, Map, Value};

use super::{Exporter, Figures, RunRecord};
use crate::stats::summary::LatencySummary;

/// Identifies the format and its version.
pub const SCHEMA_ID: &str = "dbsweep-run/1";

pub struct Json;

impl Exporter for Json {
    fn render(&self, r: &RunRecord<'_>) -> anyhow::Result<Vec<u8>> {
        let mut out = serde_json::to_vec_pretty(&to_value(r))?;
        out.push(b'\n');
        Ok(out)
    }
}

fn us(ns: f64) -> f64 {
    ns / 1e3
}

fn latency(l: &LatencySummary) -> Value {
    let pcts: Vec<Value> = l
        .percentiles
        .iter()
        .map(|p| json!({"p": p.p, "us": us(p.ns as f64)}))
        .collect();
    json!({
        "count": l.count,
        "min_us": us(l.min_ns as f64),
        "avg_us": us(l.avg_ns),
        "max_us": us(l.max_ns as f64),
        "sum_us": us(l.sum_ns as f64),
        "percentiles": pcts,
    })
}

fn opt_us(ns: Option<u64>) -> Value {
    ns.map(|v| json!(us(v as f64))).unwrap_or(Value::Null)
}

pub fn to_value(r: &RunRecord<'_>) -> Value {
    let f = Figures::of(r);
    let res = r.result;
    let c = &res.counters;
    let cfg = r.config;
    let options: Map<String, Value> = r
        .options
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    let settings: Map<String, Value> = res
        .server
        .settings
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    let errors: Map<String, Value> = Figures::errors(r)
        .into_iter()
        .map(|(k, n)| (k.name().to_string(), json!(n)))
        .collect();
    let statements: Vec<Value> = f
        .statements
        .iter()
        .map(|(kind, l)| json!({"type": kind, "latency": latency(l)}))
        .collect();
    let intervals: Vec<Value> = res
        .intervals
        .iter()
        .map(|s| {
            let c = &s.counters;
            json!({
                "t_s": s.t_s,
                "duration_s": s.duration_s,
                "warmup": s.warmup,
                "threads": s.threads,
                "transactions": c.transactions,
                "failed": c.failed,
                "reads": c.reads,
                "writes": c.writes,
                "others": c.others,
                "errors": c.total_errors(),
                "reconnects": c.reconnects,
                "p50_us": opt_us(s.p50_ns),
                "p95_us": opt_us(s.p95_ns),
                "p99_us": opt_us(s.p99_ns),
                "max_us": opt_us(s.max_ns),
            })
        })
        .collect();
    json!({
        "schema": SCHEMA_ID,
        "tool": {"name": "dbsweep", "version": env!("CARGO_PKG_VERSION")},
        "started_unix_s": r.started_unix_s,
        "workload": {"name": r.workload, "options": options},
        "target": {
            "url": r.target,
            "dialect": r.dialect,
            "server_version": res.server.version,
            "settings": settings,
        },
        "random": {
            "type": r.rand.kind.name(),
            "seed": r.rand.seed,
            "spec_iter": r.rand.params.spec_iter,
            "spec_pct": r.rand.params.spec_pct,
            "spec_res": r.rand.params.spec_res,
            "pareto_h": r.rand.params.pareto_h,
            "zipfian_exp": r.rand.params.zipf_exp,
        },
        "run": {
            "threads": res.threads,
            "time_s": cfg.time.map(|t| t.as_secs_f64()),
            "events": cfg.events,
            "rounds": cfg.rounds,
            "warmup_s": cfg.warmup.as_secs_f64(),
            "report_interval_s": cfg.report_interval.map(|t| t.as_secs_f64()),
            "max_retries": cfg.max_retries,
            "ignore_errors": cfg.ignore_errors.kinds().iter().map(|k| k.name()).collect::<Vec<_>>(),
            "grace_s": cfg.grace.as_secs_f64(),
        },
        "machine": r.machine,
        "result": {
            "stop_reason": res.stop,
            "fatal_error": res.fatal,
            "measured_s": f.seconds,
            "transactions": c.transactions,
            "tps": f.tps,
            "queries": {
                "read": c.reads,
                "write": c.writes,
                "other": c.others,
                "total": c.queries(),
            },
            "qps": f.qps,
            "failed_transactions": c.failed,
            "retries": c.retries,
            "ignored_errors": f.ignored_errors,
            "reconnects": c.reconnects,
            "abandoned": res.abandoned,
            "errors": errors,
            "latency": f.latency.as_ref().map(latency),
            "statements": statements,
            "fairness": f.fairness,
            "client_cpu": {
                "user_s": res.cpu.user.as_secs_f64(),
                "system_s": res.cpu.system.as_secs_f64(),
                "us_per_transaction": f.cpu_us_per_txn,
                "us_per_query": f.cpu_us_per_query,
                "share_of_machine": f.cpu_share,
                "cpus": res.cpus,
            },
            "intervals": intervals,
        },
    })
}
