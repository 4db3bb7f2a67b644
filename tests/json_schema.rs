//! Real `--json` output validated against `schema/run.schema.json`, plus the
//! consistency the schema cannot express (totals add up, rates match counts,
//! percentiles are ordered), for each way a run can end.

mod util;

use serde_json::Value;

use util::{dbsweep_in, Dir, Run};

/// Runs `dbsweep run ARGS --json DIR/run.json` in a scratch directory and
/// returns the report and the parsed, schema-validated document.
fn run_json(args: &[&str]) -> (Run, Value) {
    let dir = Dir::new();
    let path = dir.join("run.json");
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", path.to_str().unwrap()]);
    let r = dbsweep_in(dir.path(), &all);
    r.ok();
    let doc = util::read_json(&path);
    util::assert_valid_run_json(&doc);
    assert_eq!(
        dir.files(),
        vec!["run.json".to_string()],
        "stray files next to the JSON"
    );
    (r, doc)
}

fn u(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("not an unsigned integer: {v}"))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(f64::MIN_POSITIVE)
}

/// Checks a `latency` object: min ≤ every percentile (ascending) ≤ max, and
/// min ≤ avg ≤ max.
fn check_latency(l: &Value, what: &str) {
    let min = f(&l["min_us"]);
    let max = f(&l["max_us"]);
    let avg = f(&l["avg_us"]);
    assert!(
        min <= avg && avg <= max,
        "{what}: min/avg/max out of order: {l}"
    );
    let pcts = l["percentiles"].as_array().unwrap();
    let mut prev_p = 0.0;
    let mut prev_us = min;
    for p in pcts {
        let (pp, us) = (f(&p["p"]), f(&p["us"]));
        assert!(pp > prev_p, "{what}: percentiles not ascending: {l}");
        assert!(
            prev_us <= us && us <= max,
            "{what}: p{pp} = {us} µs is outside [previous {prev_us}, max {max}]: {l}"
        );
        prev_p = pp;
        prev_us = us;
    }
}

/// Consistency every result must have, whatever stopped it.
fn check_consistency(doc: &Value) {
    let res = &doc["result"];
    let q = &res["queries"];
    assert_eq!(
        u(&q["total"]),
        u(&q["read"]) + u(&q["write"]) + u(&q["other"]),
        "queries.total is not read + write + other: {q}"
    );
    let txns = u(&res["transactions"]);
    assert!(txns > 0, "no transactions");
    let secs = f(&res["measured_s"]);
    assert!(secs > 0.0, "measured_s {secs}");
    let tps = f(&res["tps"]);
    assert!(
        close(tps, txns as f64 / secs, 1e-6),
        "tps {tps} is not transactions/measured_s = {txns}/{secs}"
    );
    let qps = f(&res["qps"]);
    assert!(
        close(qps, u(&q["total"]) as f64 / secs, 1e-6),
        "qps {qps} is not queries/measured_s"
    );
    let lat = &res["latency"];
    assert_eq!(u(&lat["count"]), txns, "latency.count != transactions");
    check_latency(lat, "transaction latency");
    for s in res["statements"].as_array().unwrap() {
        check_latency(&s["latency"], s["type"].as_str().unwrap());
    }
    assert!(u(&doc["random"]["seed"]) > 0, "random.seed is 0");
    assert!(u(&doc["machine"]["cpus_available"]) >= 1);
    let cpu = &res["client_cpu"];
    assert!(
        f(&cpu["us_per_query"]) > 0.0,
        "client_cpu.us_per_query: {cpu}"
    );
    assert!(f(&cpu["us_per_transaction"]) > 0.0);
}

fn statement_types(doc: &Value) -> Vec<&str> {
    doc["result"]["statements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["type"].as_str().unwrap())
        .collect()
}

#[test]
fn read_write_run_matches_schema_and_adds_up() {
    let (r, doc) = run_json(&[
        "oltp_read_write",
        "--table-size",
        "200",
        "--time",
        "1",
        "--threads",
        "2",
        "--report-interval",
        "0.5",
    ]);
    check_consistency(&doc);
    let res = &doc["result"];
    assert_eq!(res["stop_reason"], "time");
    assert_eq!(doc["workload"]["name"], "oltp_read_write");
    assert_eq!(doc["workload"]["options"]["table-size"], "200");
    assert_eq!(doc["run"]["threads"], 2);
    assert_eq!(f(&doc["run"]["time_s"]), 1.0);
    assert_eq!(f(&doc["run"]["report_interval_s"]), 0.5);
    assert_eq!(doc["target"]["dialect"], "sqlite");

    let types = statement_types(&doc);
    for t in [
        "point_select",
        "simple_range",
        "sum_range",
        "order_range",
        "distinct_range",
        "index_update",
        "non_index_update",
        "delete",
        "insert",
    ] {
        assert!(types.contains(&t), "no {t} in statements {types:?}");
    }
    // Ten point selects per transaction (plus those of retried attempts).
    let point = res["statements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["type"] == "point_select")
        .unwrap();
    assert!(u(&point["latency"]["count"]) >= 10 * u(&res["transactions"]));

    let intervals = res["intervals"].as_array().unwrap();
    assert!(!intervals.is_empty(), "no intervals with --report-interval");
    for i in intervals {
        assert_eq!(i["threads"], 2);
        assert!(f(&i["duration_s"]) > 0.0);
    }
    // The JSON and the text report agree.
    assert_eq!(r.count("transactions"), u(&res["transactions"]));
    assert_eq!(r.count("total"), u(&res["queries"]["total"]));
}

#[test]
fn json_to_stdout_follows_the_text_report() {
    let dir = Dir::new();
    let r = dbsweep_in(
        dir.path(),
        &[
            "run",
            "oltp_point_select",
            "--table-size",
            "200",
            "--events",
            "50",
            "--json",
            "-",
        ],
    );
    r.ok();
    assert!(dir.files().is_empty(), "files: {:?}", dir.files());
    let start = r
        .stdout
        .find("\n{\n")
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("no line that is exactly '{{' in stdout:\n{}", r.stdout));
    let (text, json) = r.stdout.split_at(start);
    assert!(
        text.contains("SQL statistics"),
        "the text report does not come first:\n{text}"
    );
    // The document runs to the end of the output: nothing after it.
    let doc: Value = serde_json::from_str(json).unwrap_or_else(|e| {
        panic!("stdout after the report is not one JSON document: {e}\n{json}")
    });
    util::assert_valid_run_json(&doc);
    check_consistency(&doc);
    assert_eq!(doc["result"]["stop_reason"], "events");
    assert_eq!(u(&doc["result"]["transactions"]), 50);
    assert_eq!(r.count("transactions"), 50);
}

#[test]
fn validator_rejects_broken_documents() {
    let (_, doc) = run_json(&["oltp_point_select", "--table-size", "200", "--events", "20"]);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/run.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    assert!(validator.is_valid(&doc), "the unmodified document is valid");

    let errors = |d: &Value| -> Vec<String> {
        validator
            .iter_errors(d)
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect()
    };

    let mut no_tps = doc.clone();
    no_tps["result"].as_object_mut().unwrap().remove("tps");
    let e = errors(&no_tps);
    assert!(
        e.iter().any(|m| m.contains("tps")),
        "missing result.tps not reported: {e:?}"
    );

    let mut bogus = doc.clone();
    bogus["result"]["stop_reason"] = Value::from("bogus");
    let e = errors(&bogus);
    assert!(
        e.iter().any(|m| m.contains("stop_reason")),
        "stop_reason 'bogus' not reported: {e:?}"
    );

    let mut extra = doc.clone();
    extra["result"]["surprise"] = Value::from(1);
    assert!(!errors(&extra).is_empty(), "unknown field accepted");

    let mut negative = doc.clone();
    negative["result"]["transactions"] = Value::from(-1);
    assert!(!errors(&negative).is_empty(), "negative count accepted");

    // The shared helper fails on such a document too.
    let helper = std::panic::catch_unwind(|| util::assert_valid_run_json(&bogus));
    assert!(
        helper.is_err(),
        "assert_valid_run_json accepted stop_reason 'bogus'"
    );
}

#[test]
fn events_run_stops_at_exactly_n_transactions() {
    let (_, doc) = run_json(&["oltp_point_select", "--table-size", "200", "--events", "50"]);
    check_consistency(&doc);
    let res = &doc["result"];
    assert_eq!(res["stop_reason"], "events");
    assert_eq!(u(&res["transactions"]), 50);
    assert_eq!(doc["run"]["events"], 50);
    assert!(
        doc["run"]["time_s"].is_null(),
        "--events alone has no time limit"
    );
    assert!(doc["run"]["rounds"].is_null());
    assert_eq!(statement_types(&doc), vec!["point_select"]);
}

#[test]
fn rounds_run_gives_each_client_exactly_n_transactions() {
    let (_, doc) = run_json(&[
        "oltp_point_select",
        "--table-size",
        "200",
        "--rounds",
        "5",
        "--threads",
        "3",
    ]);
    check_consistency(&doc);
    let res = &doc["result"];
    assert_eq!(res["stop_reason"], "rounds");
    assert_eq!(u(&res["transactions"]), 15);
    assert_eq!(doc["run"]["rounds"], 5);
    assert_eq!(doc["run"]["threads"], 3);
    assert!(doc["run"]["time_s"].is_null());
    assert_eq!(f(&res["fairness"]["events_avg"]), 5.0);
    assert_eq!(f(&res["fairness"]["events_stddev"]), 0.0);
}

/// The committed schema is the one generated from the run record's types:
/// the format is described once. After an intended change of the types,
/// rewrite it with `UPDATE_SCHEMA=1 cargo test --test json_schema` and
/// review the diff.
#[test]
fn committed_schema_is_generated_from_the_types() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/run.schema.json");
    let mut generated = serde_json::to_string_pretty(&dbsweep::record::schema()).unwrap();
    generated.push('\n');
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap();
    assert!(
        committed == generated,
        "schema/run.schema.json differs from the schema of dbsweep::record::Run: \
         run `UPDATE_SCHEMA=1 cargo test --test json_schema` and review the diff"
    );
}

/// A study report's points carry TPC-C's results as a run record does
/// (`result.tpcc`): the report schema's definitions of them are the run
/// schema's, generated from the record's types.
#[test]
fn the_report_schema_describes_tpcc_as_the_record_does() {
    let generated = dbsweep::record::schema();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/report.schema.json");
    let report = util::read_json(&path);
    let tpcc_defs = |s: &Value| -> Vec<(String, Value)> {
        s["$defs"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| k.starts_with("Tpcc"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    let want = tpcc_defs(&generated);
    assert_eq!(
        want.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
        ["Tpcc", "TpccConsistency", "TpccShare", "TpccType"]
    );
    assert!(
        tpcc_defs(&report) == want,
        "schema/report.schema.json's $defs Tpcc… differ from schema/run.schema.json's: copy them over"
    );
    assert_eq!(
        report["$defs"]["point"]["properties"]["tpcc"]["$ref"],
        "#/$defs/Tpcc"
    );
    assert_eq!(
        generated["$defs"]["Outcome"]["properties"]["tpcc"]["anyOf"][0]["$ref"],
        "#/$defs/Tpcc"
    );
}
