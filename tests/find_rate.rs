//! `run --find-rate --slo p99=10ms`: the closed-loop peak, then open-loop
//! probes bisecting to the highest rate that holds the objective. Each
//! probe's verdict follows from its own record (the percentile from the
//! intended start, the unserved share of the offered arrivals), each rate
//! lies between the highest that held and the lowest that failed so far,
//! and the search ends within its precision. Bad input exits 2 with the
//! fix.

mod util;

use serde_json::Value;
use util::{dbsweep, Dir};

/// A search on a fresh SQLite database, its JSON read back.
fn search(dir: &Dir, name: &str, extra: &[&str]) -> (util::Run, Value) {
    let db = dir.sqlite_url(&format!("{name}.db"));
    dbsweep(&[
        "prepare",
        "oltp_point_select",
        "--db",
        &db,
        "--table-size",
        "1000",
    ])
    .ok();
    let json = dir.join(&format!("{name}.json"));
    let mut args = vec![
        "run",
        "oltp_point_select",
        "--db",
        &db,
        "--table-size",
        "1000",
        "--threads",
        "2",
        "--time",
        "0.7",
        "--find-rate",
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let r = dbsweep(&args);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (r, doc)
}

/// The objective's percentile in a run record, ms.
fn percentile_ms(run: &Value, p: f64) -> f64 {
    run["result"]["latency"]["percentiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["p"].as_f64() == Some(p))
        .map(|x| x["us"].as_f64().unwrap() / 1000.0)
        .unwrap_or_else(|| panic!("no p{p} in {}", run["result"]["latency"]))
}

/// Checks a finished search against its own records; returns it.
fn check(doc: &Value, p: f64, limit_ms: f64) -> &Value {
    let f = &doc["find_rate"];
    let probes = f["probes"].as_array().unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(probes.len(), runs.len());
    assert!(probes.len() >= 2, "{f}");
    // The first run is the closed loop that gives the peak.
    assert!(probes[0]["offered_per_s"].is_null());
    assert!(
        runs[0]["run"]["pacing"]["rate"].is_null(),
        "{}",
        runs[0]["run"]
    );
    let peak = f["peak_per_s"].as_f64().unwrap();
    assert!(peak > 0.0);
    assert_eq!(probes[1]["offered_per_s"].as_f64(), Some(peak));
    let (mut held, mut failed) = (0.0_f64, f64::INFINITY);
    for (probe, run) in probes.iter().zip(runs).skip(1) {
        let rate = probe["offered_per_s"].as_f64().unwrap();
        assert!(
            held < rate && rate <= failed.min(peak),
            "{rate} outside ({held}, {failed}]"
        );
        assert_eq!(run["run"]["pacing"]["rate"].as_f64(), Some(rate));
        // The verdict is the record's: the percentile and the unserved share.
        let pacing = &run["result"]["pacing"];
        let offered = pacing["offered"].as_f64().unwrap();
        let unserved =
            pacing["skipped"].as_f64().unwrap_or(0.0) + pacing["unstarted"].as_f64().unwrap_or(0.0);
        let holds = percentile_ms(run, p) <= limit_ms && 100.0 * unserved / offered <= 1.0;
        assert_eq!(probe["holds"].as_bool(), Some(holds), "{probe}");
        if holds {
            held = rate;
        } else {
            failed = rate;
        }
    }
    assert_eq!(f["held_per_s"].as_f64().unwrap_or(0.0), held, "{f}");
    if failed.is_finite() {
        assert_eq!(f["failed_per_s"].as_f64(), Some(failed));
    } else {
        assert!(f["failed_per_s"].is_null());
    }
    f
}

#[test]
fn the_search_bisects_to_the_highest_rate_that_holds() {
    let dir = Dir::new();
    let (r, doc) = search(&dir, "a", &["--slo", "p99=10ms"]);
    r.ok();
    let f = check(&doc, 99.0, 10.0);
    let peak = f["peak_per_s"].as_f64().unwrap();
    let held = f["held_per_s"].as_f64().unwrap_or(0.0);
    let failed = f["failed_per_s"].as_f64().unwrap_or(peak);
    // Ended within 2 % of the peak (or the peak held).
    assert!(failed - held <= 0.02 * peak + 1.0, "{f}");
    assert!(
        r.stdout.contains("probe 1: closed loop (the peak)"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("Highest rate held") || r.stdout.contains("No rate held"));
}

#[test]
fn an_objective_nothing_meets_says_so() {
    let dir = Dir::new();
    // No transaction is that fast: every probe fails, down to the
    // precision's floor.
    let (r, doc) = search(
        &dir,
        "b",
        &[
            "--slo",
            "p95=1us",
            "--precision",
            "20",
            "--max-unserved",
            "0",
        ],
    );
    r.ok();
    let f = check(&doc, 95.0, 0.001);
    assert!(f["held_per_s"].is_null(), "{f}");
    assert!(r.stdout.contains("No rate held"), "{}", r.stdout);
    // 20 % of the peak: the peak, then halves down to below a fifth.
    let probes = f["probes"].as_array().unwrap().len();
    assert!((4..=6).contains(&probes), "{probes} probes: {f}");
}

#[test]
fn bad_searches_are_refused_with_the_fix() {
    for (args, words) in [
        (vec!["--slo", "p99=10ms"], "add --find-rate"),
        (
            vec!["--find-rate", "--rate", "100"],
            "--rate cannot be given with --find-rate",
        ),
        (
            vec!["--find-rate", "--events", "100"],
            "--events cannot be given",
        ),
        (vec!["--find-rate", "--slo", "p99"], "no '='"),
        (vec!["--find-rate", "--slo", "p99=10"], "needs a unit"),
        (vec!["--find-rate", "--precision", "0"], "--precision 0"),
        (
            vec!["--find-rate", "--max-unserved", "100"],
            "--max-unserved 100",
        ),
    ] {
        let mut all = vec!["run", "oltp_point_select"];
        all.extend(args);
        let r = dbsweep(&all);
        r.expect_status(2);
        assert!(r.stderr.contains(words), "{all:?}: {}", r.stderr);
    }
}
