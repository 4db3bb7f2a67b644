//! Pacing from the command line: `--rate`, `--latency-limit`, `--users`
//! and `--think-time` on SQLite and on real MariaDB and PostgreSQL servers
//! (a rate the server sustains, and one far above its capacity), the run
//! file's and the report's pacing figures, and bad values refused with
//! exit status 2.

mod util;

use serde_json::Value;
use util::{assert_valid_run_json, dbsweep, read_json, Dir, Server};

/// Runs `workload` on `url` with `args` and returns the run's document.
fn paced(dir: &Dir, url: &str, workload: &str, args: &[&str]) -> (Value, String) {
    let json = dir.join(&format!(
        "{workload}-{}.json",
        args.join("_").replace('/', "")
    ));
    let mut all = vec!["run", workload, "--db", url, "--table-size", "1000"];
    all.extend_from_slice(args);
    all.extend(["--json", json.to_str().unwrap()]);
    let r = dbsweep(&all);
    r.ok();
    let doc = read_json(&json);
    assert_valid_run_json(&doc);
    (doc, r.stdout.clone())
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Every offered transaction is accounted for.
fn assert_accounted(r: &Value) {
    let p = &r["pacing"];
    let sum = u(&r["transactions"])
        + u(&r["failed_transactions"])
        + u(&r["abandoned"])
        + p["skipped"].as_u64().unwrap_or(0)
        + u(&p["unstarted"]);
    assert_eq!(u(&p["offered"]), sum, "{p}");
}

#[test]
fn a_rate_on_sqlite_is_met_and_reported() {
    let dir = Dir::new();
    let url = dir.sqlite_url("p.db");
    dbsweep(&[
        "prepare",
        "oltp_point_select",
        "--db",
        &url,
        "--table-size",
        "1000",
    ])
    .ok();
    let (doc, out) = paced(
        &dir,
        &url,
        "oltp_point_select",
        &[
            "--rate",
            "500",
            "--arrival",
            "uniform",
            "--time",
            "2",
            "--threads",
            "2",
            "--latency-limit",
            "10s",
            "--report-interval",
            "1",
        ],
    );
    assert_eq!(doc["run"]["pacing"]["rate"], 500.0);
    assert_eq!(doc["run"]["pacing"]["arrival"], "uniform");
    assert_eq!(doc["run"]["pacing"]["latency_limit_ms"], 10_000.0);
    let r = &doc["result"];
    let p = &r["pacing"];
    let offered = u(&p["offered"]);
    assert!((999..=1001).contains(&offered), "offered {offered}");
    // Run, or still waiting at the end: nothing is late by ten seconds on
    // any machine. (How closely the rate is met is bench/pacing.py's.)
    assert_eq!(u(&p["late"]), 0);
    assert_eq!(u(&p["skipped"]), 0);
    assert!(u(&r["transactions"]) > 0);
    assert_accounted(r);
    // Latency from the intended start is service time plus lag.
    let lat = r["latency"]["avg_us"].as_f64().unwrap();
    let service = p["service"]["avg_us"].as_f64().unwrap();
    let lag = p["lag"]["avg_us"].as_f64().unwrap();
    assert!(
        (lat - service - lag).abs() <= lat * 0.01 + 1.0,
        "{lat} vs {service} + {lag}"
    );
    // The histograms are in the file.
    assert!(r["histograms"]["service"]["count"].as_u64().unwrap() > 0);
    // Interval lines show the queue; the summary the pacing.
    // An interval is a tick of the coordinator, a little over a second, so
    // its offered rate is 500 within the one arrival more or less it holds.
    let shown: Vec<f64> = out
        .lines()
        .filter(|l| l.starts_with("[ "))
        .filter_map(|l| l.split("offered: ").nth(1))
        .map(|s| s.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert!(!shown.is_empty(), "{out}");
    for o in &shown {
        assert!((o - 500.0).abs() <= 2.5, "offered {o} per second\n{out}");
    }
    assert!(out.contains("queue: "), "{out}");
    assert!(out.contains("Latency (ms, from each transaction's intended start):"));
    assert!(out.contains("Schedule lag (ms, intended start to actual start):"));
    assert!(r["intervals"][0]["queue"].as_u64().is_some());
    // The HTML report has the pacing section and its charts.
    let html = dir.join("r.html");
    dbsweep(&[
        "run",
        "oltp_point_select",
        "--db",
        &url,
        "--table-size",
        "1000",
        "--rate",
        "300",
        "--time",
        "2",
        "--report",
        html.to_str().unwrap(),
    ])
    .ok();
    let page = std::fs::read_to_string(&html).unwrap();
    for words in [
        "Offered and achieved load",
        "Latency, service time and schedule lag",
        "Offered and achieved rate over time",
    ] {
        assert!(page.contains(words), "no {words} in the report");
    }
}

#[test]
fn users_share_connections_and_their_think_time_is_not_latency() {
    let dir = Dir::new();
    let url = dir.sqlite_url("u.db");
    dbsweep(&[
        "prepare",
        "oltp_point_select",
        "--db",
        &url,
        "--table-size",
        "1000",
    ])
    .ok();
    // 200 users thinking 200 ms on 2 connections: 1000 a second.
    let (doc, _) = paced(
        &dir,
        &url,
        "oltp_point_select",
        &[
            "--users",
            "200",
            "--threads",
            "2",
            "--think-time",
            "fixed:200ms",
            "--time",
            "2",
            "--warmup",
            "1",
        ],
    );
    let r = &doc["result"];
    let tps = r["tps"].as_f64().unwrap();
    // Each user's cycle is its think time plus its latency from the
    // intended start (Little's law: U = X (Z + R)); had the think time been
    // counted in the latency, the rate would be U / R instead. Checked
    // against the latency the run measured, which a busy machine
    // lengthens. (The rate on an idle machine is bench/pacing.py's.)
    let latency = r["latency"]["avg_us"].as_f64().unwrap() / 1e6;
    let expected = 200.0 / (0.200 + latency);
    // Within 10 %: a window of ten cycles has edges a starved machine
    // moves by a few percent; a think time counted as latency would be
    // off by half.
    assert!(
        (tps / expected - 1.0).abs() < 0.10,
        "{tps} per second, {expected} from a {latency} s mean latency"
    );
    assert_eq!(doc["run"]["pacing"]["users"], 200);
    assert_eq!(doc["run"]["pacing"]["think_time"], "fixed:200ms");
    assert_accounted(r);
}

#[test]
fn bad_pacing_values_are_refused_with_exit_2() {
    let dir = Dir::new();
    let url = dir.sqlite_url("b.db");
    for (args, words) in [
        (vec!["--rate", "0"], "--rate 0"),
        (vec!["--rate=-10"], "--rate -10"),
        (vec!["--latency-limit", "10"], "needs a unit"),
        (
            vec!["--users", "2", "--threads", "4"],
            "--users 2 is fewer than --threads 4",
        ),
        (vec!["--think-time", "gauss:1s"], "bad think time"),
        (vec!["--think-time", "uniform:3s:1s"], "exceeds the maximum"),
        (vec!["--arrival", "bursty", "--rate", "10"], "poisson"),
        (
            vec!["--rate", "10", "--think-time", "fixed:1s"],
            "--think-time",
        ),
        // Users started one after another need users.
        (vec!["--ramp-up", "10"], "add --users N (--eus N"),
        (
            vec!["--users", "4294967296", "--threads", "2"],
            "at most 4294967295 users",
        ),
    ] {
        let mut all = vec!["run", "oltp_point_select", "--db", &url, "--time", "1"];
        all.extend(args.iter());
        let r = dbsweep(&all);
        r.expect_status(2);
        assert!(r.stderr.contains(words), "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"));
    }
    assert!(dir.files().iter().all(|f| !f.ends_with(".json")));
}

#[test]
fn users_that_would_not_fit_in_memory_are_refused_before_the_run() {
    // 4,294,967,295 users, the most there can be, need 86 GB at 20 bytes
    // each, and 3.8 TB with DBT-1's sessions: whichever the machine lacks.
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let available: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .expect("MemAvailable")
        * 1024;
    let workload = if available < 4_294_967_295 * 20 {
        "oltp_point_select"
    } else {
        "dbt1"
    };
    let dir = Dir::new();
    let url = dir.sqlite_url("m.db");
    let started = std::time::Instant::now();
    let r = dbsweep(&[
        "run",
        workload,
        "--db",
        &url,
        "--users",
        "4294967295",
        "--threads",
        "2",
        "--think-time",
        "exp:1s",
        "--time",
        "2",
    ]);
    r.expect_status(2);
    assert!(
        r.stderr.contains("--users 4,294,967,295 would need"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("MemAvailable"), "{}", r.stderr);
    // How many fit, within 5 % (memory moves between the two readings).
    let per: u64 = r
        .stderr
        .split(" bytes a user")
        .next()
        .and_then(|t| t.rsplit('(').next())
        .and_then(|n| n.parse().ok())
        .expect("bytes a user");
    assert!(per >= 20, "{per} bytes a user");
    let fit = available / per;
    let said: u64 = r
        .stderr
        .split("at most ")
        .nth(1)
        .and_then(|t| t.split(" users fit").next())
        .map(|n| n.replace(',', "").parse().unwrap())
        .expect("how many fit");
    assert!(
        (said as f64 / fit as f64 - 1.0).abs() < 0.05,
        "{said} said to fit, {fit} expected"
    );
    assert!(!r.stderr.contains("panicked"));
    // Refused before anything was built or connected.
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

/// A sustainable rate is met; one far above the server's capacity shows
/// as lag, late and skipped transactions and a backlog, not as a crash
/// or a silently lower offered load.
fn rates_on(kind: &'static str) {
    // Commits that wait for no fsync: the 200 a second must be sustainable
    // whatever else the machine's disk is doing meanwhile.
    let no_sync = match kind {
        "postgres" => "synchronous_commit=off",
        _ => "innodb_flush_log_at_trx_commit=0",
    };
    let s = Server::start(kind, &["--set", no_sync]);
    let dir = Dir::new();
    for w in ["oltp_point_select", "oltp_read_write"] {
        dbsweep(&["prepare", w, "--db", &s.url, "--table-size", "1000"]).ok();
        let (doc, _) = paced(
            &dir,
            &s.url,
            w,
            &["--rate", "200", "--time", "2", "--threads", "4"],
        );
        let r = &doc["result"];
        assert_eq!(r["stop_reason"], "time");
        let offered = u(&r["pacing"]["offered"]) as f64;
        assert!(
            (offered - 400.0).abs() < 4.0 * 20.0,
            "{w}: offered {offered}"
        );
        // Without a latency limit every arrival is run or still waiting
        // at the end. (How closely the rate is met is bench/pacing.py's.)
        assert!(u(&r["transactions"]) > 0, "{w}: {r}");
        assert_eq!(r["pacing"]["skipped"].as_u64().unwrap_or(0), 0, "{w}: {r}");
        assert_accounted(r);
        dbsweep(&["cleanup", w, "--db", &s.url]).ok();
    }
    dbsweep(&[
        "prepare",
        "oltp_point_select",
        "--db",
        &s.url,
        "--table-size",
        "1000",
    ])
    .ok();
    // 2 connections cannot run a million transactions a second.
    let (doc, _) = paced(
        &dir,
        &s.url,
        "oltp_point_select",
        &[
            "--rate",
            "1000000",
            "--time",
            "2",
            "--threads",
            "2",
            "--latency-limit",
            "5ms",
            "--report-interval",
            "0.5",
        ],
    );
    let r = &doc["result"];
    let p = &r["pacing"];
    // Poisson arrivals over the two seconds: within 5 standard deviations.
    let offered = u(&p["offered"]) as f64;
    assert!(
        (offered - 2e6).abs() < 5.0 * 2e6f64.sqrt(),
        "offered {offered}: {p}"
    );
    assert!(p["achieved_per_s"].as_f64().unwrap() < 200_000.0, "{p}");
    assert!(u(&p["skipped"]) > 0 && u(&p["unstarted"]) > 0, "{p}");
    assert_accounted(r);
    // Without a limit the lag grows from interval to interval.
    let (doc, _) = paced(
        &dir,
        &s.url,
        "oltp_point_select",
        &[
            "--rate",
            "1000000",
            "--time",
            "2",
            "--threads",
            "2",
            "--report-interval",
            "0.5",
        ],
    );
    let iv = doc["result"]["intervals"].as_array().unwrap();
    let lag: Vec<f64> = iv.iter().filter_map(|i| i["lag_p99_us"].as_f64()).collect();
    assert!(
        lag.len() >= 3 && lag[lag.len() - 1] > 2.0 * lag[0],
        "{lag:?}"
    );
    dbsweep(&["cleanup", "oltp_point_select", "--db", &s.url]).ok();
}

#[test]
fn rates_on_mariadb() {
    rates_on("mariadb");
}

#[test]
fn rates_on_postgres() {
    rates_on("postgres");
}
