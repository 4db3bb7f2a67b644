//! TPC-C's results as the JSON carries them (a run record's `result.tpcc`,
//! a study report's `points[].tpcc`), checked against the counts they are
//! derived from.

use serde_json::Value;

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[track_caller]
fn assert_close(what: &str, got: &Value, want: f64, t: &Value) {
    assert!(close(f(got), want), "{what}: {got}, expected {want}: {t}");
}

/// Checks TPC-C's results `t` against the window `measured_s`, the
/// transactions completed in it and the counts of its types `types`
/// (`[{name, count}]`); `no_wait`: the run had no keying or think times.
fn check(t: &Value, measured_s: f64, transactions: u64, types: &[Value], no_wait: bool) {
    let count = |name: &str| {
        types
            .iter()
            .find(|x| x["name"] == name)
            .map_or(0, |x| x["count"].as_u64().unwrap())
    };
    let per_minute = |n: u64| n as f64 * 60.0 / measured_s;
    let committed = count("new_order");
    assert!(committed > 0, "no New-Order: {t}");
    assert_close(
        "tpmc",
        &t["tpmc"],
        per_minute(committed + count("new_order_rollback")),
        t,
    );
    assert_close("nopm", &t["nopm"], per_minute(committed), t);
    assert_close("tpm", &t["tpm"], per_minute(transactions), t);
    let warehouses = t["warehouses"].as_u64().unwrap();
    if no_wait {
        assert!(t["efficiency_pct"].is_null(), "{t}");
        assert!(
            t["efficiency_absent"]
                .as_str()
                .unwrap()
                .contains("--no-wait"),
            "{t}"
        );
    } else {
        let want = 100.0 * f(&t["tpmc"]) / (12.86 * warehouses as f64);
        assert_close("efficiency_pct", &t["efficiency_pct"], want, t);
        assert!(t["efficiency_absent"].is_null(), "{t}");
    }
    // Each type beside its limit: New-Order's is 5 s.
    let new_order = t["types"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "new_order")
        .unwrap();
    assert_eq!(new_order["count"], committed);
    assert_eq!(f(&new_order["limit_s"]), 5.0, "{t}");
    let within = f(&new_order["p90_ms"]) <= 5000.0;
    assert_eq!(new_order["within"], within, "{t}");
    // The mix: shares of the terminals' transactions (not a deferred
    // Delivery's execution), each against its minimum.
    let dealt: u64 = types
        .iter()
        .filter(|x| x["name"] != "delivery_deferred")
        .map(|x| x["count"].as_u64().unwrap())
        .sum();
    let mix = t["mix"].as_array().unwrap();
    assert!(mix.iter().any(|m| m["name"] == "payment"), "{t}");
    for m in mix {
        let name = m["name"].as_str().unwrap();
        let n = count(name);
        assert_close(
            "share_pct",
            &m["share_pct"],
            100.0 * n as f64 / dealt as f64,
            t,
        );
        assert_eq!(m["meets"], f(&m["share_pct"]) >= f(&m["min_pct"]), "{m}");
    }
}

/// Checks a run record's `result.tpcc` against the record (and its
/// consistency verdict, its server counters); returns it.
pub fn check_record(doc: &Value) -> &Value {
    let res = &doc["result"];
    let t = &res["tpcc"];
    assert!(t.is_object(), "no result.tpcc in the record");
    let no_wait = doc["workload"]["options"]["no-wait"] == "on";
    check(
        t,
        f(&res["measured_s"]),
        res["transactions"].as_u64().unwrap(),
        res["transaction_types"].as_array().unwrap(),
        no_wait,
    );
    assert_eq!(
        t["terminals"],
        doc["run"]["pacing"]["users"]
            .as_u64()
            .unwrap_or(doc["run"]["threads"].as_u64().unwrap())
    );
    assert_eq!(t["connections"], doc["run"]["threads"]);
    // Each type's verdict is the record's.
    for (x, r) in t["types"]
        .as_array()
        .unwrap()
        .iter()
        .zip(res["transaction_types"].as_array().unwrap())
    {
        assert_eq!(x["name"], r["name"]);
        let within = r["p90_exceeded"].as_bool().map(|over| !over);
        assert_eq!(x["within"], serde_json::json!(within), "{x} {r}");
    }
    // The consistency verdict, condition by condition.
    let c = &t["consistency"];
    match res["consistency"].as_array() {
        None => {
            assert_eq!(c["checked"], false);
            assert!(c["holds"].is_null());
            assert!(c["verdict"].as_str().unwrap().starts_with("not checked"));
        }
        Some(conditions) => {
            assert_eq!(c["checked"], true);
            let failed = conditions.iter().filter(|x| x["holds"] == false).count();
            assert_eq!(c["failed"].as_array().unwrap().len(), failed);
            assert_eq!(
                c["passed"].as_array().unwrap().len(),
                conditions.len() - failed
            );
            assert_eq!(c["holds"], failed == 0);
        }
    }
    // The database's figures, per minute of the window they were read over.
    let m = &res["metrics"];
    let window = f(&m["window"]["duration_s"]);
    match m["window_counts"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == "sum(d_next_o_id)"))
    {
        Some(c) => assert_close(
            "server_nopm",
            &t["server_nopm"],
            (f(&c["end"]) - f(&c["start"])) * 60.0 / window,
            t,
        ),
        None => assert!(t["server_nopm_absent"].is_string(), "{t}"),
    }
    let sql = &m["window"]["sql"];
    let counters = [
        ("Com_commit", "Com_rollback", "Com_commit + Com_rollback"),
        (
            "pg_stat_database.xact_commit",
            "pg_stat_database.xact_rollback",
            "xact_commit + xact_rollback",
        ),
    ];
    match counters
        .iter()
        .find(|(c, b, _)| sql[c].is_number() && sql[b].is_number())
    {
        Some((c, b, from)) => {
            assert_close(
                "server_tpm",
                &t["server_tpm"],
                (f(&sql[c]) + f(&sql[b])) * 60.0 / window,
                t,
            );
            assert_eq!(t["server_tpm_counters"], *from);
        }
        None => {
            assert!(t["server_tpm"].is_null(), "{t}");
            assert!(t["server_tpm_absent"].is_string(), "{t}");
        }
    }
    t
}

/// Checks a study report's point's `tpcc` against its figures; returns it.
pub fn check_point(p: &Value) -> &Value {
    let t = &p["tpcc"];
    assert!(t.is_object(), "no tpcc in point {}", p["key"]);
    check(
        t,
        f(&p["figures"]["measured_s"]),
        p["figures"]["transactions"].as_u64().unwrap(),
        t["types"].as_array().unwrap(),
        p["workload_options"]["no-wait"] == "on",
    );
    t
}
