//! The machine and server metrics of runs against real MariaDB and
//! PostgreSQL servers (started with `dbsweep server start`): the server's
//! own deadlock and lock-wait counters rise when deadlocks are provoked,
//! PostgreSQL's sampled wait events show the lock waits, the server found
//! by its port is the server's process and its CPU is a part of the
//! machine's, and what cannot be measured is a gap with its reason.

mod util;

use std::sync::Mutex;

use serde_json::Value;
use util::{dbsweep, read_json, Dir, Server};

/// The tests here measure the machine: one at a time, so that one's load
/// (300 backends, or contended writers) is not another's "everything else"
/// or its lost deadlocks.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn alone() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}

/// Provokes deadlocks (8 clients update 10 rows in random order inside
/// transactions, as in tests/server_workloads.rs) and returns the run's
/// document.
fn contended_run(s: &Server, dir: &Dir) -> Value {
    let json = dir.join("contended.json");
    dbsweep(&[
        "prepare",
        "oltp_write_only",
        "--db",
        &s.url,
        "--table-size",
        "10",
    ])
    .ok();
    dbsweep(&[
        "run",
        "oltp_write_only",
        "--db",
        &s.url,
        "--table-size",
        "10",
        "--threads",
        "8",
        "--time",
        "3",
        "--index-updates",
        "4",
        "--non-index-updates",
        "4",
        "--metrics-interval",
        "0.5",
        "--json",
        &json.display().to_string(),
    ])
    .ok();
    read_json(&json)
}

fn figure(m: &Value, name: &str) -> f64 {
    m["figures"][name]["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("no {name} in {}", m["figures"]))
}

/// Why the metrics `m` lack `what`, if they list it as a gap.
fn gap(m: &Value, what: &str) -> Option<String> {
    let g = m["gaps"].as_array()?.iter().find(|g| g["what"] == what)?;
    Some(g["why"].as_str().unwrap_or_default().to_string())
}

fn counter(m: &Value, name: &str) -> f64 {
    m["window"]["sql"][name]
        .as_f64()
        .unwrap_or_else(|| panic!("no counter {name} in {}", m["window"]["sql"]))
}

/// The server was found by its port, is the server's own process, and its
/// CPU is a positive part of the machine's.
fn assert_server_measured(s: &Server, m: &Value) {
    let port = s.url.rsplit(':').next().unwrap().split('/').next().unwrap();
    assert_eq!(
        m["server_process"]["pid"].as_u64(),
        Some(s.pid() as u64),
        "{}",
        m["server_process"]
    );
    let how = m["server_process"]["how"].as_str().unwrap();
    assert_eq!(how, format!("listening on 127.0.0.1:{port}"));
    let busy = figure(m, "cpu_busy_pct");
    let server = figure(m, "server_cpu_pct");
    let client = figure(m, "client_cpu_pct");
    assert!(
        server > 0.0 && client > 0.0,
        "server {server} %, client {client} %"
    );
    // The processes' CPU comes from the scheduler's exact run time
    // (/proc/PID/stat) and the machine's from tick samples (/proc/stat), so
    // over a 3-second window the parts can exceed the whole by a few ticks
    // per CPU-second; counting a process twice would exceed it by far more.
    assert!(
        server + client <= busy * 1.10 + 2.0,
        "server {server} % + client {client} % > busy {busy} %"
    );
    assert!(figure(m, "server_cpu_us_per_transaction") > 0.0);
}

#[test]
fn mariadb_counts_its_deadlocks_lock_waits_and_cpu() {
    let _alone = alone();
    let s = Server::start("mariadb", &[]);
    let dir = Dir::new();
    let doc = contended_run(&s, &dir);
    let r = &doc["result"];
    assert!(r["errors"]["deadlock"].as_u64().unwrap() > 0, "no deadlock");
    let m = &r["metrics"];
    assert_server_measured(&s, m);
    // The server's own counts, over the measured window.
    assert!(counter(m, "Innodb_deadlocks") > 0.0);
    assert!(figure(m, "deadlocks_per_s") > 0.0);
    assert!(counter(m, "Innodb_row_lock_waits") > 0.0);
    assert!(figure(m, "row_lock_waits_per_s") > 0.0);
    // The sessions sampled: each by its lock wait, its stage or running;
    // eight clients on ten rows wait for each other's row locks.
    let waits = m["window"]["waits"].as_object().unwrap();
    assert!(m["window"]["wait_samples"].as_u64().unwrap() > 0);
    assert!(
        waits
            .keys()
            .all(|e| e.starts_with("stage:") || e == "InnoDB:lock wait" || e == "running"),
        "{waits:?}"
    );
    assert!(waits.contains_key("InnoDB:lock wait"), "{waits:?}");
    // COMMIT statements the server counted are the workload's: the
    // monitoring connection commits nothing.
    let commits = counter(m, "Com_commit");
    let txns = r["transactions"].as_f64().unwrap();
    assert!(
        commits >= txns * 0.5,
        "{commits} commits for {txns} transactions"
    );
    // The statements the server counted are the workload's (the monitoring
    // connection's own are subtracted): the run's queries, plus for each
    // retried transaction the statement that failed and its ROLLBACK, give
    // or take what crosses the window's edges.
    let questions = counter(m, "Questions");
    let expected = r["queries"]["total"].as_f64().unwrap() + 2.0 * r["retries"].as_f64().unwrap();
    assert!(
        (questions - expected).abs() <= expected * 0.03,
        "the server counted {questions} statements, the run {expected}"
    );
    // SHOW ENGINE INNODB STATUS: the SEMAPHORES section of the first and
    // the last reading; counters where the server prints them, else a gap
    // saying so.
    let texts = m["innodb_semaphores"].as_array().unwrap();
    assert_eq!(texts.len(), 2, "{texts:?}");
    let printed = texts
        .iter()
        .any(|t| t.as_str().unwrap().contains("OS WAIT ARRAY INFO"));
    let semaphores = gap(m, "semaphore waits");
    if printed {
        assert!(figure(m, "semaphore_os_waits_per_transaction") >= 0.0);
    } else {
        let why = semaphores.expect("a gap for the semaphores");
        assert!(why.contains("holds no counters"), "{why}");
    }
    dbsweep(&["cleanup", "oltp_write_only", "--db", &s.url]).ok();
}

#[test]
fn postgres_counts_its_deadlocks_and_samples_the_lock_waits() {
    let _alone = alone();
    // PostgreSQL looks for deadlocks after deadlock_timeout (1 s by default).
    let s = Server::start("postgres", &["--set", "deadlock_timeout=50ms"]);
    let dir = Dir::new();
    let doc = contended_run(&s, &dir);
    let r = &doc["result"];
    assert!(r["errors"]["deadlock"].as_u64().unwrap() > 0, "no deadlock");
    let m = &r["metrics"];
    assert_server_measured(&s, m);
    // One process per connection: the tree has the postmaster and the
    // backend of every client still connected at its last reading. (A
    // client abandoned at the deadline, stuck in a lock wait on a busy
    // machine, has had its connection closed; its backend may be gone.)
    let connected = 8 - r["abandoned"].as_u64().unwrap();
    let processes = m["window"]["server"]["processes"].as_u64().unwrap();
    assert!(
        processes > connected,
        "{processes} processes, {connected} connected"
    );
    assert!(counter(m, "pg_stat_database.deadlocks") > 0.0);
    assert!(figure(m, "deadlocks_per_s") > 0.0);
    // Eight clients on ten rows wait on each other's row locks.
    let waits = m["figures"]["top_waits"].as_array().unwrap();
    let lock = waits
        .iter()
        .find(|w| w["event"].as_str().unwrap().starts_with("Lock:"))
        .unwrap_or_else(|| panic!("no Lock wait among {waits:?}"));
    assert!(lock["pct"].as_f64().unwrap() > 0.0);
    // No row lock counter in PostgreSQL: a gap, not a zero.
    assert!(m["figures"]["row_lock_waits_per_s"].is_null());
    assert!(gap(m, "row lock waits").is_some());
    dbsweep(&["cleanup", "oltp_write_only", "--db", &s.url]).ok();
}

#[test]
fn metrics_off_measures_nothing_and_a_zero_interval_is_refused() {
    let _alone = alone();
    let dir = Dir::new();
    let url = dir.sqlite_url("m.db");
    let json = dir.join("off.json");
    dbsweep(&[
        "prepare",
        "oltp_point_select",
        "--db",
        &url,
        "--table-size",
        "100",
    ])
    .ok();
    let r = dbsweep(&[
        "run",
        "oltp_point_select",
        "--db",
        &url,
        "--table-size",
        "100",
        "--time",
        "1",
        "--metrics",
        "off",
        "--json",
        &json.display().to_string(),
    ]);
    r.ok();
    assert!(read_json(&json)["result"]["metrics"].is_null());
    assert!(!r.stdout.contains("Machine and server"), "{}", r.stdout);

    let r = dbsweep(&[
        "run",
        "oltp_point_select",
        "--db",
        &url,
        "--time",
        "1",
        "--metrics-interval",
        "0",
    ]);
    r.expect_status(2);
    assert!(r.stderr.contains("--metrics-interval"), "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);

    // SQLite: the machine is measured, the server is the client itself.
    let json = dir.join("on.json");
    let r = dbsweep(&[
        "run",
        "oltp_point_select",
        "--db",
        &url,
        "--table-size",
        "100",
        "--time",
        "1",
        "--json",
        &json.display().to_string(),
    ]);
    r.ok();
    assert!(r.stdout.contains("Machine and server"), "{}", r.stdout);
    let m = &read_json(&json)["result"]["metrics"];
    assert!(m["server_process"]["pid"].is_null());
    assert!(figure(m, "cpu_busy_pct") > 0.0);
    assert!(m["figures"]["server_cpu_pct"].is_null());
    assert!(
        gap(m, "server CPU").is_some() && gap(m, "server counters").is_some(),
        "{}",
        m["gaps"]
    );
}

/// Hundreds of PostgreSQL backends, each using a few ms of CPU a second:
/// the server's CPU is counted once and in full (not lost to each
/// backend's truncation to clock ticks, not counted twice when the
/// backends exit at the end), so the server, the client and the rest add
/// up to the machine's busy time in the window and in every sample.
#[test]
fn many_backends_add_up_to_the_machines_cpu() {
    let _alone = alone();
    let s = Server::start("postgres", &["--set", "max_connections=400"]);
    let dir = Dir::new();
    let json = dir.join("many.json");
    dbsweep(&[
        "prepare",
        "oltp_point_select",
        "--db",
        &s.url,
        "--table-size",
        "1000",
    ])
    .ok();
    dbsweep(&[
        "run",
        "oltp_point_select",
        "--db",
        &s.url,
        "--table-size",
        "1000",
        "--threads",
        "300",
        "--time",
        "3",
        "--metrics-interval",
        "0.5",
        "--json",
        &json.display().to_string(),
    ])
    .ok();
    let doc = read_json(&json);
    let m = &doc["result"]["metrics"];
    assert_server_measured(&s, m);
    // The backends stay connected until the window's last reading (but
    // for those of clients abandoned at the deadline).
    let connected = 300 - doc["result"]["abandoned"].as_u64().unwrap();
    let processes = m["window"]["server"]["processes"].as_u64().unwrap();
    assert!(
        processes > connected,
        "{processes} processes, {connected} connected"
    );
    let cpu_s = |u: &Value| u["cpu_user_s"].as_f64().unwrap() + u["cpu_system_s"].as_f64().unwrap();
    let busy_s = |u: &Value| {
        u["cpu"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| *k != "idle_s")
            .map(|(_, v)| v.as_f64().unwrap())
            .sum::<f64>()
    };
    for s in m["samples"].as_array().unwrap() {
        let u = &s["usage"];
        let (server, client, busy) = (cpu_s(&u["server"]), cpu_s(&u["client"]), busy_s(u));
        // Clock ticks are 10 ms: a sample's sources may disagree by a few.
        assert!(
            server + client <= busy * 1.1 + 0.05,
            "at {} s: server {server} + client {client} > busy {busy}",
            s["t_s"]
        );
    }
    // The server does most of the work of point selects: a share lost to
    // truncation would show as a small server and a large "everything
    // else" (this test's servers are the only other load while it runs).
    let w = &m["window"];
    let (server, client, busy) = (cpu_s(&w["server"]), cpu_s(&w["client"]), busy_s(w));
    assert!(server > client, "server {server} s, client {client} s");
    assert!(
        server + client >= busy * 0.6,
        "server {server} s + client {client} s of {busy} s busy"
    );
    dbsweep(&["cleanup", "oltp_point_select", "--db", &s.url]).ok();
}

/// The server is one: of a run's shards only the first samples it (its
/// processes, views and counters); the others sample their own machine
/// and say where the server's figures are.
#[test]
fn only_the_first_shard_samples_the_server() {
    let _alone = alone();
    let s = Server::start("postgres", &[]);
    let dir = Dir::new();
    dbsweep(&[
        "prepare",
        "oltp_point_select",
        "--db",
        &s.url,
        "--table-size",
        "100",
    ])
    .ok();
    let shard = |i: usize| {
        let json = dir.join(&format!("shard{i}.json"));
        dbsweep(&[
            "run",
            "oltp_point_select",
            "--db",
            &s.url,
            "--table-size",
            "100",
            "--threads",
            "4",
            "--time",
            "2",
            "--rand-seed",
            "3",
            "--shard",
            &format!("{i}/2"),
            "--metrics-interval",
            "0.5",
            "--json",
            &json.display().to_string(),
        ])
        .expect_status(0);
        read_json(&json)
    };
    let first = shard(0);
    let m = &first["result"]["metrics"];
    assert_server_measured(&s, m);
    let second = shard(1);
    let m = &second["result"]["metrics"];
    assert!(m["window"]["server"].is_null(), "{}", m["window"]);
    assert!(m["window"]["cpu"].is_object(), "{}", m["window"]);
    assert!(figure(m, "client_cpu_pct") > 0.0);
    let why =
        |what: &str| gap(m, what).unwrap_or_else(|| panic!("no `{what}` gap in {}", m["gaps"]));
    assert!(why("server process").contains("sampled by shard 0"));
    assert!(why("server counters").contains("sampled by shard 0"));
    dbsweep(&["cleanup", "oltp_point_select", "--db", &s.url]).ok();
}
