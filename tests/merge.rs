//! `dbsweep run … --shard I/N` and `dbsweep merge` as a user meets them, on
//! the fake driver: shards made by separate processes merge into one
//! record (valid against the schema, counts adding up, a per-shard table,
//! the one machine's metrics with every shard's client);
//! records that are not every shard of one run are refused with exit
//! status 2 and the fix. (Bucket-for-bucket equality with a one-process
//! run is proven in `src/engine/shard_tests.rs`, in virtual time.)

mod util;

use util::{assert_valid_run_json, dbsweep, Dir};

const DB: &str = "fake://?latency=200us,1ms";

/// Runs shard `i` of `n` with 6 clients of 10 rounds, writing `s{i}.json`.
fn shard(dir: &Dir, i: usize, n: usize, seed: &str) -> String {
    shard_with(dir, i, n, seed, "off")
}

/// [`shard`] with `--metrics on|off`.
fn shard_with(dir: &Dir, i: usize, n: usize, seed: &str, metrics: &str) -> String {
    let file = dir.join(&format!("s{i}-{seed}.json"));
    let file = file.to_str().unwrap().to_string();
    let spec = format!("{i}/{n}");
    dbsweep(&[
        "run",
        "oltp_point_select",
        "--db",
        DB,
        "--threads",
        "6",
        "--rounds",
        "10",
        "--rand-seed",
        seed,
        "--shard",
        &spec,
        "--metrics",
        metrics,
        "--json",
        &file,
    ])
    .expect_status(0);
    file
}

fn read(file: &str) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

#[test]
fn shards_of_separate_processes_merge_into_one_run() {
    let dir = Dir::new();
    let files: Vec<String> = (0..3).map(|i| shard_with(&dir, i, 3, "7", "on")).collect();
    for f in &files {
        let doc = read(f);
        assert_valid_run_json(&doc);
        assert_eq!(doc["run"]["threads"], 2);
        assert_eq!(doc["result"]["transactions"], 20);
    }
    let out = dir.join("run.json");
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["--json", out.to_str().unwrap()]);
    let r = dbsweep(&args);
    r.expect_status(0);
    assert!(r.stdout.contains("Shards:"), "{}", r.stdout);
    assert!(r.stdout.contains("shard 2"), "{}", r.stdout);
    let m = read(out.to_str().unwrap());
    assert_valid_run_json(&m);
    assert_eq!(m["run"]["threads"], 6);
    assert_eq!(m["result"]["transactions"], 60);
    assert_eq!(m["result"]["histograms"]["transaction"]["count"], 60);
    assert_eq!(m["result"]["shards"]["rows"].as_array().unwrap().len(), 3);
    assert!(m["run"].get("shard").is_none());
    // One machine's CPUs, once: the client's share is of this machine,
    // not of three.
    let cpus = |doc: &serde_json::Value| doc["result"]["client_cpu"]["cpus"].as_u64().unwrap();
    assert_eq!(cpus(&m), cpus(&read(&files[0])));

    // The metrics: three shards on this one machine, so its readings are
    // the run's, with every shard's client; the fake driver has no server.
    let metrics = &m["result"]["metrics"];
    let from = &metrics["merged"];
    assert_eq!(from["machine_shard"], 0, "{from}");
    assert!(from["server_shard"].is_null(), "{from}");
    let rows = m["result"]["shards"]["rows"].as_array().unwrap();
    // These shards run for a few ms, under the 10-ms unit /proc/stat
    // counts in: a window may see no CPU time pass at all. The machine's
    // figures are then absent with that reason, never 0.
    let said_why = |metrics: &serde_json::Value| {
        metrics["gaps"].as_array().is_some_and(|g| {
            g.iter().any(|g| {
                g["what"] == "machine CPU"
                    && g["why"]
                        .as_str()
                        .is_some_and(|w| w.contains("no CPU time passed"))
            })
        })
    };
    let busy = metrics["figures"]["cpu_busy_pct"]["value"].as_f64();
    let client = metrics["figures"]["client_cpu_pct"]["value"].as_f64();
    match (busy, client) {
        (Some(b), Some(_)) => assert!(b >= 0.0, "{metrics}"),
        _ => assert!(said_why(metrics), "{metrics}"),
    }
    for (x, f) in rows.iter().zip(&files) {
        let own = &read(f)["result"]["metrics"];
        assert_eq!(x["index"], read(f)["run"]["shard"]["index"], "{x}");
        if !(x["cpu_busy_pct"].is_f64() && x["client_cpu_pct"].is_f64()) {
            assert!(said_why(own), "{x}: {own}");
        }
    }
    // Shard 0's client over shard 0's machine, and the others' on top.
    if let (Some(client), Some(first)) = (client, rows[0]["client_cpu_pct"].as_f64()) {
        assert!(client >= first - 1e-9);
    }
    assert!(r.stdout.contains("sampled by:"), "{}", r.stdout);
}

#[test]
fn bad_merges_are_refused_with_the_fix() {
    let dir = Dir::new();
    let a = shard(&dir, 0, 2, "7");
    let b = shard(&dir, 1, 2, "8");
    let refused = |files: &[&str], parts: &[&str]| {
        let mut args = vec!["merge"];
        args.extend(files);
        let r = dbsweep(&args);
        r.expect_status(2);
        for p in parts {
            assert!(r.stderr.contains(p), "{p:?} not in:\n{}", r.stderr);
        }
    };
    refused(&[&a], &["shard 1 of 2 missing"]);
    refused(&[&a, &a], &["both shard 0 of 2"]);
    refused(&[&a, &b], &["not a shard of the same run", "--rand-seed"]);
    refused(&[&a, "no-such.json"], &["cannot read no-such.json"]);
}

#[test]
fn shard_options_are_checked_before_running() {
    let r = dbsweep(&[
        "run",
        "oltp_point_select",
        "--threads",
        "2",
        "--shard",
        "0/2",
    ]);
    r.expect_status(2);
    assert!(r.stderr.contains("needs --db"), "{}", r.stderr);
    let r = dbsweep(&[
        "run",
        "oltp_point_select",
        "--db",
        DB,
        "--threads",
        "2",
        "--shard",
        "0/3",
        "--rand-seed",
        "1",
    ]);
    r.expect_status(2);
    assert!(r.stderr.contains("--threads at least 3"), "{}", r.stderr);
    let r = dbsweep(&[
        "run",
        "oltp_point_select",
        "--db",
        DB,
        "--threads",
        "2",
        "--shard",
        "0/2",
    ]);
    r.expect_status(2);
    assert!(r.stderr.contains("needs --rand-seed"), "{}", r.stderr);
    let r = dbsweep(&["run", "oltp_point_select", "--db", DB, "--shard", "2/2"]);
    r.expect_status(2);
    assert!(r.stderr.contains("0 <= I < N"), "{}", r.stderr);
}
