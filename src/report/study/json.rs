//! The study report as JSON (`dbsweep-report/1`): every point and every
//! derived figure, in the format documented in `docs/report.md` and fixed
//! by `schema/report.schema.json`, which a test validates real output
//! against. Times are in milliseconds, rates per second.

use serde_json::{json, Value};

use super::{Metric, Report, StudyData};
use crate::store::StoredPoint;

pub fn render(data: &StudyData, r: &Report) -> anyhow::Result<Vec<u8>> {
    let mut v = serde_json::to_value(r)?;
    v["points"] = Value::Array(data.points.iter().chain(&data.paced).map(point).collect());
    let mut out = serde_json::to_vec_pretty(&v)?;
    out.push(b'\n');
    Ok(out)
}

fn point(p: &StoredPoint) -> Value {
    let r = &p.row;
    let figures = p.metrics.as_ref().map(|m| {
        json!({
            "measured_s": m.measured_s,
            "transactions": m.transactions,
            "tps": m.tps,
            "qps": m.qps,
            "p95_ms": Metric::P95.of(m),
            "p99_ms": Metric::P99.of(m),
            "errors": m.errors,
            "errors_per_s": Metric::Errors.of(m),
            "failed_transactions": m.failed_transactions,
            "retries": m.retries,
            "client_cpu_s": m.client_cpu_s,
            "server_version": m.server_version,
        })
    });
    let errors: serde_json::Map<String, Value> = p
        .errors
        .iter()
        .map(|(k, n)| (k.clone(), json!(n)))
        .collect();
    let options: serde_json::Map<String, Value> = r
        .workload_options
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    let mut v = json!({
        "key": r.key,
        "target": r.target,
        "target_kind": r.target_kind,
        "variant": r.variant,
        "cpus": r.cpus,
        "workload": r.workload,
        "workload_label": r.workload_label,
        "workload_options": options,
        "clients": r.clients,
        "instances": r.instances,
        "repeat": r.repeat,
        "load_level": r.load_level,
        "status": r.status.as_str(),
        "reason": r.reason,
        "figures": figures,
        "errors": errors,
        "started_unix_us": p.metrics.as_ref().and_then(|m| m.started_unix_us),
        "ended_unix_us": p.metrics.as_ref().and_then(|m| m.ended_unix_us),
        "machine": p.metrics.as_ref().map(|_| super::names::machine_of(p)),
        "restart_s": r.restart_s,
    });
    // Only a TPC-C point has TPC-C's results, derived as its record's
    // JSON carries them.
    if let Some(t) = r.run.as_ref().and_then(|r| r.result.tpcc.as_ref()) {
        v["tpcc"] = serde_json::to_value(t).expect("TPC-C's figures serialize");
    }
    if let Some(t) = r.run.as_ref().and_then(|r| r.result.tpch.as_ref()) {
        v["tpch"] = serde_json::to_value(t).expect("TPC-H's figures serialize");
    }
    if let Some(t) = r.run.as_ref().and_then(|r| r.result.chbench.as_ref()) {
        v["chbench"] = serde_json::to_value(t).expect("CH-benCHmark's figures serialize");
    }
    // Only a point that ran on several workers has shards.
    if let Some(shards) = super::sharded::json(p) {
        v["shards"] = shards;
    }
    v
}
