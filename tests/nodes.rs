//! `dbsweep run … --nodes N` on the fake driver, as a user meets it: the
//! local launcher's workers start together and merge into one record (the
//! shards' transactions adding up, clock offsets and start skews
//! measured); workers started by someone else (`--launcher external`, as a
//! Kubernetes Job does) join by their index; a worker killed mid-run makes
//! the run partial, named, with exit status 1 and no merged figures; bad
//! options are refused with exit status 2. The Slurm launcher is tested in
//! tests/slurm.rs.

mod util;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use util::nodes::{check_merged, finish, spawn, workers};
use util::{dbsweep, read_json, Dir};

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
    // Three processes on one machine: they should start within a few ms;
    // 50 ms leaves room for a loaded test machine.
    let rows = check_merged(&doc, 3, "local", 0.05);
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
    check_merged(&doc, 2, "external", 0.05);
    assert_eq!(doc["result"]["transactions"], 200, "4 clients × 50 rounds");
}

#[test]
fn a_killed_worker_makes_the_run_partial_and_names_its_shard() {
    let dir = Dir::new();
    let json = dir.join("run.json");
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
        ],
        &[],
    );
    let coordinator_pid = coordinator.0.id().to_string();
    // Shard 1's worker, once all three run (a worker's parent is the
    // coordinator, whose pid its command line does not name: the
    // coordinator's address is unique to this run instead).
    let until = Instant::now() + Duration::from_secs(20);
    let victim = loop {
        let ours: Vec<_> = workers()
            .into_iter()
            .filter(|(pid, _, _)| parent_of(*pid).as_deref() == Some(coordinator_pid.as_str()))
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

/// The parent pid of `pid`, from /proc.
fn parent_of(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')')
        .next()?
        .split_whitespace()
        .nth(1)
        .map(str::to_string)
}
