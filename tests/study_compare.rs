//! Comparisons end to end on the fake driver: two identical targets on a
//! "machine" that slows down under the study (`drift=…`) — measured in
//! sequence, the later one looks slower; interleaved, the paired ratios
//! find no difference —, the control's noise floor, repeats that stop
//! once precise, the JSON's `comparisons`, and bad keys refused with exit
//! status 2.

mod util;

use serde_json::Value;
use util::{dbsweep_in, read_json, Dir};

/// Two identical fake targets on a machine twice as slow by the end of
/// the study's ~10 s (every point of either target slows alike).
fn study(order: &str, extra: &str) -> String {
    format!(
        r#"
name = "aa"
out = "out"
clients = [2]
order = "{order}"
metrics = false
{extra}

[[target]]
name = "a"
url = "fake://?latency=250us&drift=4x/10s"

[[target]]
name = "b"
url = "fake://?latency=250us&drift=4x/10s"

[[workload]]
name = "oltp_point_select"
time = 0.5
repeats = 6
"#
    )
}

/// Runs the study and returns its report's JSON.
fn run(dir: &Dir, text: &str) -> (Value, String) {
    std::fs::write(dir.join("s.toml"), text).unwrap();
    let r = dbsweep_in(dir.path(), &["study", "s.toml"]);
    r.ok();
    let json = dir.join("r.json");
    dbsweep_in(
        dir.path(),
        &[
            "report",
            "out",
            "--format",
            "json",
            "--out",
            json.to_str().unwrap(),
        ],
    )
    .ok();
    (read_json(&json), r.stderr.clone())
}

fn comparison<'a>(doc: &'a Value, series: &str, cell: &str) -> &'a Value {
    doc["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["series"] == series && c["cell"] == cell && c["metric"] == "tps")
        .unwrap_or_else(|| panic!("no {series} {cell} in {}", doc["comparisons"]))
}

fn valid(doc: &Value) {
    let schema = read_json(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/report.schema.json"),
    );
    let errors: Vec<String> = jsonschema::validator_for(&schema)
        .unwrap()
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn a_drifting_machine_ranks_a_server_against_itself_in_sequence_but_not_interleaved() {
    // In sequence b runs after a, on the slower half of the study: the
    // ratio of two identical servers is the drift, and its interval (over
    // six repeats that drifted too) decides it.
    let dir = Dir::new();
    let (seq, _) = run(&dir, &study("sequential", ""));
    valid(&seq);
    assert_eq!(seq["order"], "sequential");
    let c = comparison(&seq, "b", "clients=2");
    assert_eq!(c["verdict"], "worse", "{c}");
    assert!(c["ratio"].as_f64().unwrap() < 0.9, "{c}");
    assert!(seq["conclusions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s.as_str().unwrap().contains("measured one after another")));

    // Interleaved, every block runs both within a second: the drift
    // cancels, and nothing ranks them.
    let dir = Dir::new();
    let (inter, _) = run(&dir, &study("interleaved", ""));
    valid(&inter);
    assert_eq!(inter["order"], "interleaved");
    let c = comparison(&inter, "b", "clients=2");
    let v = c["verdict"].as_str().unwrap();
    assert!(v == "equivalent" || v == "inconclusive", "{c}");
    assert_eq!(c["blocks"], 6);
    let (lo, hi) = (
        c["ci_low"].as_f64().unwrap(),
        c["ci_high"].as_f64().unwrap(),
    );
    assert!(lo <= 1.0 && 1.0 <= hi, "{c}");
    // The drift is stated, beside what pairing left of it.
    let d = &inter["drift"][0];
    assert!(d["drift_pct"].as_f64().unwrap() > 20.0, "{d}");
    assert!(
        d["paired_spread_pct"].as_f64().unwrap() < d["drift_pct"].as_f64().unwrap(),
        "{d}"
    );
    // Every point has when and where it ran.
    for p in inter["points"].as_array().unwrap() {
        assert!(p["started_unix_us"].as_u64().unwrap() < p["ended_unix_us"].as_u64().unwrap());
        assert!(p["machine"].as_str().unwrap().contains(" CPUs; "), "{p}");
    }
    assert_eq!(inter["machines"].as_array().unwrap().len(), 1);
}

#[test]
fn a_control_runs_twice_per_block_and_sets_the_noise_floor() {
    let dir = Dir::new();
    let text = study(
        "interleaved",
        "control = \"a\"\nbaseline = \"a\"\nequivalence = \"5%\"",
    )
    .replace("repeats = 6", "repeats = 3");
    let (doc, _) = run(&dir, &text);
    valid(&doc);
    let floor = &doc["noise_floor"];
    assert_eq!(floor["series"], "a");
    assert_eq!(floor["again"], "a (again)");
    // Its throughput at the one cell and at its peak.
    assert_eq!(floor["comparisons"], 2);
    // The same server against itself: never better or worse, or the
    // report says the design failed.
    let c = comparison(&doc, "a (again)", "clients=2");
    assert_eq!(c["baseline"], "a");
    let failed = floor["failed"].as_bool().unwrap();
    // Two comparisons (the cell and its peak): failing takes both.
    assert_eq!(
        failed,
        floor["failed_at"].as_array().unwrap().len() == 2,
        "{floor}"
    );
    let first = doc["conclusions"][0].as_str().unwrap();
    if failed {
        assert!(first.starts_with("The design has failed"), "{first}");
    } else {
        assert!(
            first.starts_with("Noise floor: a measured twice"),
            "{first}"
        );
    }
    assert!((doc["equivalence"].as_f64().unwrap() - 0.05).abs() < 1e-12);
    // Three blocks of three points: a, a (again), b.
    let keys: Vec<&str> = doc["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["target"].as_str().unwrap())
        .collect();
    assert_eq!(keys.iter().filter(|t| **t == "a (again)").count(), 3);
    assert_eq!(keys.len(), 9);
}

#[test]
fn repeats_stop_once_every_comparison_is_precise() {
    // A precision hardly missed (±50 %) on a machine that does not drift
    // (with the drift, the order inside a block moves each block's ratio
    // by several percent, and t on one degree of freedom is 12.7): two
    // blocks, not six.
    let dir = Dir::new();
    let text = study("interleaved", "")
        .replace("&drift=4x/10s", "")
        .replace(
            "repeats = 6",
            "repeats = { min = 2, max = 6, precision = \"50%\" }",
        );
    let (doc, stderr) = run(&dir, &text);
    assert_eq!(doc["points"].as_array().unwrap().len(), 4, "{stderr}");
    assert!(stderr.contains("every comparison within ±"), "{stderr}");
    assert!(stderr.contains("8 not needed"), "{stderr}");
    // A resumed study decides the same: nothing more to run.
    let r = dbsweep_in(dir.path(), &["study", "s.toml", "--resume"]);
    r.ok();
    assert!(r.stderr.contains("0 point(s) finished"), "{}", r.stderr);
}

#[test]
fn bad_comparison_keys_exit_2_with_the_fix() {
    let dir = Dir::new();
    for (extra, words) in [
        (
            "baseline = \"c\"",
            "baseline: no series 'c': name a target or TARGET/VARIANT",
        ),
        ("control = \"nope\"", "control: no series 'nope'"),
    ] {
        std::fs::write(dir.join("s.toml"), study("interleaved", extra)).unwrap();
        let r = dbsweep_in(dir.path(), &["study", "s.toml"]);
        r.expect_status(2);
        assert!(r.stderr.contains(words), "{}", r.stderr);
        assert!(!dir.join("out").exists(), "nothing written");
    }
    for (repeats, words) in [
        (
            "{ min = 3, max = 6, precision = \"0%\" }",
            "a precision of 0 is never reached",
        ),
        (
            "{ min = 5, max = 3, precision = \"3%\" }",
            "max = 3 is below min = 5",
        ),
    ] {
        let text = study("interleaved", "").replace("repeats = 6", &format!("repeats = {repeats}"));
        std::fs::write(dir.join("s.toml"), text).unwrap();
        let r = dbsweep_in(dir.path(), &["study", "s.toml"]);
        r.expect_status(2);
        assert!(r.stderr.contains(words), "{}", r.stderr);
    }
}
