//! `dbsweep run … --nodes N` on the fake driver, as a user meets it: the
//! local launcher's workers start together and merge into one record (the
//! shards' transactions adding up, clock offsets and start skews
//! measured); workers started by someone else (`--launcher external`, as a
//! Kubernetes Job does) join by their index; a worker killed mid-run makes
//! the run partial, named, with exit status 1 and no merged figures; bad
//! options are refused with exit status 2. On a scratch PostgreSQL server,
//! the merged record keeps the server's metrics, its figures per merged
//! transaction; Ctrl-C at the coordinator stops every worker early and
//! reports the merge of what they measured, and a second Ctrl-C exits at
//! once, leaving no worker behind. The Slurm launcher is tested in
//! tests/slurm.rs.

mod util;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use util::nodes::{check_merged, finish, parent_of, spawn, workers, workers_of, Watched};
use util::{dbsweep, process_alive, read_json, Dir, Server};

const DB: &str = "fake://?latency=200us";

#[test]
fn local_workers_start_together_and_merge_into_one_run() {
    let dir = Dir::new();
    let json = dir.join("run.json");
    let html = dir.join("run.html");
    let r = dbsweep(&[
        "run",
        "oltp_point_select",
        "--db",
        DB,
        "--threads",
        "6",
        "--time",
        "1",
        "--metrics",
        "off",
        "--nodes",
        "3",
        "--launcher",
        "local",
        "--json",
        json.to_str().unwrap(),
        "--report",
        html.to_str().unwrap(),
    ]);
    r.expect_status(0);
    assert!(
        r.stdout.contains("Coordinator at 127.0.0.1:"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("Shards:") && r.stdout.contains("skew ms"),
        "{}",
        r.stdout
    );
    let doc = read_json(&json);
    // Three processes on one machine: they start within a few ms of each
    // other on an idle one (bench/nodes.py's figure).
    let rows = check_merged(&doc, 3, "local");
    assert_eq!(doc["run"]["threads"], 6);
    assert!(doc["run"].get("shard").is_none());
    for x in &rows {
        assert_eq!(x["clients"], 2, "{x}");
        // One machine, one clock: the offset is within the round trip.
        let (offset, rtt) = (
            x["clock_offset_s"].as_f64().unwrap(),
            x["clock_rtt_s"].as_f64().unwrap(),
        );
        assert!(
            offset.abs() <= rtt / 2.0 + 1e-4,
            "offset {offset} s, round trip {rtt} s"
        );
    }
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("skew ms"),
        "the HTML report has the shard table"
    );
}

#[test]
fn the_shards_records_are_kept_on_request_and_merge_again_into_the_run() {
    let dir = Dir::new();
    let json = dir.join("run.json");
    let kept = dir.join("shards");
    let r = dbsweep(&[
        "run",
        "oltp_point_select",
        "--db",
        DB,
        "--threads",
        "4",
        "--time",
        "1",
        "--metrics",
        "off",
        "--nodes",
        "2",
        "--shard-records",
        kept.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    r.expect_status(0);
    assert!(
        r.stderr.contains("2 of 2 shard records kept in"),
        "{}",
        r.stderr
    );
    let merged = read_json(&json);
    let mut shards = Vec::new();
    let mut sum = 0;
    for i in 0..2 {
        let p = kept.join(format!("shard-{i}.json"));
        let doc = read_json(&p);
        assert_eq!(doc["run"]["shard"]["index"], i, "{}", p.display());
        sum += doc["result"]["transactions"].as_u64().unwrap();
        shards.push(p);
    }
    assert_eq!(merged["result"]["transactions"].as_u64().unwrap(), sum);
    // `dbsweep merge` of the kept records is the coordinated run's merge.
    let again = dir.join("again.json");
    let mut args = vec!["merge"];
    args.extend(shards.iter().map(|p| p.to_str().unwrap()));
    args.extend(["--json", again.to_str().unwrap()]);
    dbsweep(&args).expect_status(0);
    let again = read_json(&again);
    for key in ["transactions", "queries", "latency", "histograms"] {
        assert_eq!(again["result"][key], merged["result"][key], "{key}");
    }
}

#[test]
fn external_workers_join_by_their_job_index() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let dir = Dir::new();
    let json = dir.join("run.json");
    let coordinator = spawn(
        &[
            "run",
            "oltp_point_select",
            "--db",
            DB,
            "--threads",
            "4",
            "--rounds",
            "50",
            "--metrics",
            "off",
            "--nodes",
            "2",
            "--launcher",
            "external",
            "--listen",
            &listen,
            "--json",
            json.to_str().unwrap(),
        ],
        &[],
    );
    // Started in the wrong order on purpose: the index decides the shard.
    // A worker keeps trying while the coordinator is not listening yet.
    let w1 = spawn(
        &["worker", "--coordinator", &listen],
        &[("JOB_COMPLETION_INDEX", "1")],
    );
    let w0 = spawn(
        &["worker", "--coordinator", &listen, "--shard-index", "0"],
        &[],
    );
    let r = finish(coordinator);
    r.expect_status(0);
    assert!(
        r.stdout.contains("dbsweep worker --coordinator"),
        "{}",
        r.stdout
    );
    finish(w1).expect_status(0);
    finish(w0).expect_status(0);
    let doc = read_json(&json);
    check_merged(&doc, 2, "external");
    assert_eq!(doc["result"]["transactions"], 200, "4 clients × 50 rounds");
}

#[test]
fn a_killed_worker_makes_the_run_partial_and_names_its_shard() {
    let dir = Dir::new();
    let json = dir.join("run.json");
    let kept = dir.join("shards");
    let coordinator = spawn(
        &[
            "run",
            "oltp_point_select",
            "--db",
            DB,
            "--threads",
            "3",
            "--time",
            "4",
            "--metrics",
            "off",
            "--nodes",
            "3",
            "--json",
            json.to_str().unwrap(),
            "--shard-records",
            kept.to_str().unwrap(),
        ],
        &[],
    );
    let coordinator_pid = coordinator.0.id();
    // Shard 1's worker, once all three run (a worker's parent is the
    // coordinator, whose pid its command line does not name: the
    // coordinator's address is unique to this run instead).
    let until = Instant::now() + Duration::from_secs(60);
    let victim = loop {
        let ours: Vec<_> = workers()
            .into_iter()
            .filter(|(pid, _, _)| parent_of(*pid) == Some(coordinator_pid))
            .collect();
        if ours.len() == 3 {
            break ours
                .into_iter()
                .find(|(_, cmd, _)| cmd.contains("--shard-index 1"))
                .expect("worker 1")
                .0;
        }
        assert!(Instant::now() < until, "the three workers did not start");
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: kill(2) on the pid of a worker this test's coordinator started.
    unsafe { libc::kill(victim as libc::pid_t, libc::SIGKILL) };
    let r = finish(coordinator);
    r.expect_status(1);
    assert!(
        r.stdout.contains("PARTIAL RUN: 1 of 3 shards"),
        "{}",
        r.stdout
    );
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("shard 1 "))
        .expect("shard 1's line");
    assert!(
        line.contains("FAILED") && line.contains("connection closed"),
        "{line}"
    );
    assert!(r.stderr.contains("partial run: shard 1 ("), "{}", r.stderr);
    for other in ["shard 0 ", "shard 2 "] {
        let line = r
            .stdout
            .lines()
            .find(|l| l.contains(other))
            .expect("other shards");
        assert!(line.contains("finished"), "{line}");
    }
    assert!(!json.exists(), "no merged record of a partial run");
    // No merged figures: no summary of transactions for the whole run.
    assert!(!r.stdout.contains("Shards:"), "{}", r.stdout);
    // The shards that finished are kept where asked.
    assert!(
        r.stderr.contains("2 of 3 shard records kept in"),
        "{}",
        r.stderr
    );
    for (i, there) in [(0, true), (1, false), (2, true)] {
        let p = kept.join(format!("shard-{i}.json"));
        assert_eq!(p.exists(), there, "{}", p.display());
        if there {
            assert!(read_json(&p)["result"]["transactions"].as_u64().unwrap() > 0);
        }
    }
}

#[test]
fn a_point_file_runs_the_run_it_was_resolved_from() {
    // The point `dbsweep run` resolves from its options (what `dbsweep
    // k8s` writes into its ConfigMap), run with `run --spec`: the same run.
    let options = [
        "oltp_point_select",
        "--db",
        DB,
        "--threads",
        "2",
        "--rounds",
        "30",
        "--metrics",
        "off",
        "--rand-seed",
        "5",
        "--percentiles",
        "50,99",
    ];
    let argv = ["dbsweep", "run"].iter().chain(&options);
    let dbsweep::commands::Request::Run(req) =
        dbsweep::cli::request(dbsweep::cli::args::parse_from(argv)).unwrap()
    else {
        panic!("a run")
    };
    let spec = req.spec(req.target.db.clone().unwrap()).unwrap();
    let dir = Dir::new();
    let file = dir.join("point.json");
    std::fs::write(&file, serde_json::to_string_pretty(&spec).unwrap()).unwrap();
    let file = file.to_str().unwrap();
    let (from_file, direct) = (dir.join("spec.json"), dir.join("direct.json"));
    dbsweep(&["run", "--spec", file, "--json", from_file.to_str().unwrap()]).expect_status(0);
    let mut again = options.to_vec();
    again.extend(["--json", direct.to_str().unwrap()]);
    let mut args = vec!["run"];
    args.extend(again);
    dbsweep(&args).expect_status(0);
    let (a, b) = (read_json(&from_file), read_json(&direct));
    for key in ["workload", "target", "random", "run"] {
        assert!(a[key].is_object(), "{key}: {}", a[key]);
        assert_eq!(a[key], b[key], "{key}");
    }
    assert_eq!(a["random"]["seed"], 5);
    assert_eq!(a["run"]["percentiles"], serde_json::json!([50.0, 99.0]));
    assert_eq!(a["result"]["transactions"], 60, "2 clients × 30 rounds");
    assert_eq!(a["result"]["transactions"], b["result"]["transactions"]);
    assert_eq!(
        a["result"]["latency"].as_object().map(|l| l.len()),
        b["result"]["latency"].as_object().map(|l| l.len())
    );
    // The point gives the run: an option that would change it is refused,
    // as are a missing file and one that is not a point.
    let refused = |args: &[&str], parts: &[&str]| {
        let r = dbsweep(args);
        r.expect_status(2);
        let lines: Vec<&str> = r.stderr.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), 1, "{}", r.stderr);
        for p in parts {
            assert!(lines[0].contains(p), "{p:?} not in: {}", lines[0]);
        }
    };
    refused(
        &["run", "--spec", file, "--threads", "4"],
        &["--threads cannot be given with --spec", "drop one"],
    );
    refused(
        &["run", "oltp_read_only", "--spec", file],
        &["WORKLOAD cannot be given with --spec"],
    );
    refused(
        &["run", "--spec", file, "--table-size", "9"],
        &["--table-size"],
    );
    refused(&["run", "--spec", "no/such.json"], &["cannot read --spec"]);
    let r = dbsweep(&["run"]);
    r.expect_status(2);
    assert!(r.stderr.contains("<WORKLOAD>"), "{}", r.stderr);
    let bad = dir.join("bad.json");
    std::fs::write(&bad, r#"{"workload": "oltp_point_select"}"#).unwrap();
    refused(
        &["run", "--spec", bad.to_str().unwrap()],
        &["is not a point", "missing field"],
    );
}

#[test]
fn coordinated_runs_refuse_bad_options_naming_the_fix() {
    let refused = |args: &[&str], part: &str| {
        let mut all = vec!["run", "oltp_point_select", "--metrics", "off"];
        all.extend_from_slice(args);
        let r = dbsweep(&all);
        r.expect_status(2);
        assert!(r.stderr.contains(part), "{part:?} not in:\n{}", r.stderr);
    };
    refused(
        &["--db", DB, "--threads", "2", "--nodes", "3"],
        "--threads at least 3",
    );
    refused(&["--db", DB, "--nodes", "0"], "at least 1 worker");
    refused(&["--nodes", "2", "--threads", "2"], "needs --db");
    refused(
        &["--db", DB, "--threads", "2", "--launcher", "local"],
        "add --nodes N",
    );
    refused(
        &[
            "--db",
            DB,
            "--threads",
            "2",
            "--nodes",
            "2",
            "--shard",
            "0/2",
            "--rand-seed",
            "1",
        ],
        "drop --shard",
    );
    refused(
        &["--db", DB, "--threads", "2", "--shard-records", "x"],
        "add --nodes N",
    );
    let file = Dir::new();
    let not_dir = file.join("f");
    std::fs::write(&not_dir, "").unwrap();
    refused(
        &[
            "--db",
            DB,
            "--nodes",
            "1",
            "--shard-records",
            not_dir.to_str().unwrap(),
        ],
        "not a directory",
    );
    refused(
        &["--db", DB, "--nodes", "1", "--launcher", "ssh"],
        "unknown launcher 'ssh'",
    );
    // A port someone already listens on.
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    refused(
        &["--db", DB, "--nodes", "1", "--listen", addr.as_str()],
        format!("cannot listen on {addr}").as_str(),
    );
    let r = util::dbsweep_env(
        &["worker", "--coordinator", "x"],
        &[("JOB_COMPLETION_INDEX", "a")],
    );
    r.expect_status(2);
    assert!(
        r.stderr
            .contains("JOB_COMPLETION_INDEX=a is not a shard index"),
        "{}",
        r.stderr
    );
}

#[test]
fn on_postgres_the_merge_keeps_the_servers_metrics_and_ctrl_c_reports_it() {
    let pg = Server::start("postgres", &[]);
    dbsweep(&[
        "prepare",
        "oltp_point_select",
        "--db",
        &pg.url,
        "--table-size",
        "1000",
    ])
    .ok();
    let dir = Dir::new();
    let json = dir.join("run.json");
    let r = dbsweep(&[
        "run",
        "oltp_point_select",
        "--db",
        &pg.url,
        "--threads",
        "4",
        "--time",
        "2",
        "--nodes",
        "2",
        "--json",
        json.to_str().unwrap(),
    ]);
    r.ok();
    let doc = read_json(&json);
    let rows = check_merged(&doc, 2, "local");
    let result = &doc["result"];
    let txns = result["transactions"].as_u64().unwrap();
    let m = &result["metrics"];
    // The server is one: shard 0's reading of it; both shards ran on this
    // machine, so its readings are the run's too.
    assert_eq!(m["merged"]["server_shard"], 0, "{}", m["merged"]);
    assert_eq!(m["merged"]["machine_shard"], 0, "{}", m["merged"]);
    assert!(m["window"]["sql"]["pg_stat_database.xact_commit"].as_f64() > Some(0.0));
    // Server CPU per transaction of the merge, not of the shard.
    let server = &m["window"]["server"];
    let cpu_s = server["cpu_user_s"].as_f64().unwrap() + server["cpu_system_s"].as_f64().unwrap();
    assert!(cpu_s > 0.0, "{server}");
    let per_txn = &m["figures"]["server_cpu_us_per_transaction"];
    let v = per_txn["value"]
        .as_f64()
        .expect("server CPU per transaction");
    let want = cpu_s * 1e6 / txns as f64;
    assert!((v - want).abs() <= 1e-9 * want, "{v} vs {want}");
    let from = per_txn["from"].as_str().unwrap();
    assert!(from.ends_with(&format!("/ {txns} transactions")), "{from}");
    for x in &rows {
        assert!(x["transactions"].as_u64().unwrap() < txns, "{x}");
        assert!(x["cpu_busy_pct"].as_f64().is_some_and(|b| b > 0.0), "{x}");
        assert!(x["client_cpu_pct"].is_f64(), "{x}");
    }
    let queries = result["queries"]["total"].as_u64().unwrap();
    let per_query = m["figures"]["server_cpu_us_per_query"]["value"].as_f64();
    let per_query = per_query.expect("server CPU per query");
    assert!((per_query * queries as f64 - cpu_s * 1e6).abs() <= 1e-6 * cpu_s * 1e6);
    assert!(r.stdout.contains("sampled by:"), "{}", r.stdout);
    assert!(r.stdout.contains("CPU per transaction"), "{}", r.stdout);

    // Ctrl-C mid-run: the workers stop early and send what they measured,
    // merged and reported as one process's interrupted run.
    let json = dir.join("interrupted.json");
    let mut coordinator = Watched::spawn(&[
        "run",
        "oltp_point_select",
        "--db",
        &pg.url,
        "--threads",
        "4",
        "--time",
        "600",
        "--nodes",
        "2",
        "--json",
        json.to_str().unwrap(),
    ]);
    let pid = coordinator.child.id();
    let ours = workers_of(pid, 2);
    coordinator.wait_for("release their clients together", Duration::from_secs(60));
    std::thread::sleep(Duration::from_millis(1500));
    let sent = Instant::now();
    // SAFETY: kill(2) on the coordinator this test started.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGINT) };
    let r = coordinator.finish();
    r.expect_status(130);
    // Stopped by the interrupt, not the ten-minute time: a minute is only
    // a hang's bound.
    assert!(
        sent.elapsed() < Duration::from_secs(60),
        "{:?}",
        sent.elapsed()
    );
    assert!(
        r.stderr.contains("Asking 2 workers to stop"),
        "{}",
        r.stderr
    );
    assert!(
        r.stdout
            .contains("Interrupted: the results below cover the run until then"),
        "{}",
        r.stdout
    );
    let doc = read_json(&json);
    let rows = check_merged(&doc, 2, "local");
    assert_eq!(doc["result"]["stop_reason"], "interrupted");
    assert!(doc["result"]["measured_s"].as_f64().unwrap() < 30.0);
    for x in &rows {
        assert!(x["transactions"].as_u64() > Some(0), "{x}");
    }
    for w in ours {
        assert!(!process_alive(w), "worker {w} left running");
    }
}

#[test]
fn a_second_ctrl_c_exits_at_once_and_leaves_no_worker() {
    let dir = Dir::new();
    let json = dir.join("run.json");
    // Statements of 2 s: the first Ctrl-C waits for those in flight.
    let mut coordinator = Watched::spawn(&[
        "run",
        "oltp_point_select",
        "--db",
        "fake://?latency=2s",
        "--threads",
        "2",
        "--time",
        "60",
        "--metrics",
        "off",
        "--nodes",
        "2",
        "--json",
        json.to_str().unwrap(),
    ]);
    let pid = coordinator.child.id();
    let ours = workers_of(pid, 2);
    coordinator.wait_for("release their clients together", Duration::from_secs(60));
    std::thread::sleep(Duration::from_millis(500));
    for _ in 0..2 {
        // SAFETY: kill(2) on the coordinator this test started.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGINT) };
        std::thread::sleep(Duration::from_millis(200));
    }
    let r = coordinator.finish();
    r.expect_status(130);
    assert!(
        r.stderr.contains("Interrupted again: exiting now"),
        "{}",
        r.stderr
    );
    assert!(!json.exists(), "no record when exiting at once");
    // The workers go with their coordinator (the run had ten minutes to
    // go): half a minute is only a hang's bound.
    let until = Instant::now() + Duration::from_secs(30);
    while ours.iter().any(|w| process_alive(*w)) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    for w in ours {
        assert!(!process_alive(w), "worker {w} left running");
    }
}
