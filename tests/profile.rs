//! On-CPU profiles beside a run (`run --profile`): the client's on SQLite,
//! the server's and the client's on PostgreSQL and MariaDB started by
//! dbsweep, the folded stacks beside the JSON and the flame graphs in the
//! HTML report; a study on managed servers; a run on two load machines
//! (`--nodes`: the server's profile once, the clients' summed); and a
//! machine where perf cannot run, where the run goes on and says why it
//! has no profile.

mod util;

use std::io::Read;

use serde_json::Value;
use util::{dbsweep, dbsweep_env, read_json, Dir, Server};

/// Whether perf runs here; the tests that need it say so and skip where
/// it does not (the not-permitted path is tested everywhere).
fn perf_here() -> bool {
    let ok = std::process::Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: perf is not installed here (apt-get install linux-perf)");
    }
    ok
}

fn profiles(doc: &Value) -> Vec<Value> {
    doc["result"]["metrics"]["profiles"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn folded(dir: &Dir, file: &str) -> String {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(dir.join(file)).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text
}

/// A profiled run against `db`: its record, text output and report.
fn profiled_run(dir: &Dir, db: Option<&str>, workload: &str) -> (Value, String, String) {
    let json = dir.join("run.json");
    let report = dir.join("run.html");
    let mut args = vec![
        "run",
        workload,
        "--threads",
        "2",
        "--time",
        "3",
        "--warmup",
        "1",
        "--profile",
        "--json",
        json.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ];
    if let Some(db) = db {
        args.extend(["--db", db]);
    }
    let out = dbsweep(&args);
    out.ok();
    (
        read_json(&json),
        out.stdout.clone(),
        std::fs::read_to_string(&report).unwrap(),
    )
}

fn check_profile(dir: &Dir, p: &Value, role: &str, frame: &str) {
    assert_eq!(p["role"], role, "{p}");
    assert_eq!(p["hz"], 99);
    assert_eq!(p["call_graph"], "fp");
    let cpu_s = p["cpu_s"].as_f64().unwrap();
    assert!(cpu_s >= 0.2, "{role}: {cpu_s} CPU-s sampled in 3 s");
    let kernel = p["kernel_share"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&kernel), "{kernel}");
    assert!(!p["top"].as_array().unwrap().is_empty(), "{p}");
    let file = p["file"].as_str().unwrap();
    assert_eq!(file, format!("run.{role}.folded.gz"));
    let text = folded(dir, file);
    let ns: u64 = text
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    assert_eq!(
        ns as f64 / 1e9,
        cpu_s,
        "the record counts the file's CPU time"
    );
    assert!(text.contains(frame), "{role}: no {frame} in\n{text}");
}

#[test]
fn a_profiled_run_on_sqlite_profiles_the_client() {
    if !perf_here() {
        return;
    }
    let dir = Dir::new();
    let (doc, text, html) = profiled_run(&dir, None, "oltp_point_select");
    let ps = profiles(&doc);
    assert_eq!(ps.len(), 1, "SQLite has no server apart: {ps:?}");
    // SQLite runs in the client: its code is on the client's stacks.
    check_profile(&dir, &ps[0], "client", "sqlite3");
    assert!(
        text.contains("On-CPU profiles (perf, the measured window):"),
        "{text}"
    );
    assert!(text.contains("client: "), "{text}");
    assert!(html.contains("<figure class=\"flame\" id=\"flame-client\">"));
    assert!(
        html.contains("title=\"The client&#39;s on-CPU flame graph\""),
        "the flame graph in its own frame"
    );
    assert!(
        html.contains("src=\"data:image/svg+xml;base64,PD94bWw"),
        "an SVG document"
    );
    // The record read back draws its flame graph from the file beside it;
    // without the file, the report names it.
    let json = dir.join("run.json");
    let again = |args: &[&str]| {
        let mut all = vec!["report", json.to_str().unwrap()];
        all.extend_from_slice(args);
        dbsweep(&all)
    };
    let html = again(&["--format", "html", "--out", "-"]);
    html.ok();
    assert!(html.stdout.contains("id=\"flame-client\""));
    std::fs::remove_file(dir.join("run.client.folded.gz")).unwrap();
    let html = again(&["--format", "html", "--out", "-"]);
    html.ok();
    assert!(!html.stdout.contains("id=\"flame-client\""));
    assert!(html
        .stdout
        .contains("folded stacks are in run.client.folded.gz"));
    assert!(
        html.stderr.contains("could not be read from"),
        "{}",
        html.stderr
    );
}

#[test]
fn without_perf_the_run_goes_on_and_says_why_it_has_no_profile() {
    let dir = Dir::new();
    let json = dir.join("run.json");
    let out = dbsweep_env(
        &[
            "run",
            "oltp_point_select",
            "--time",
            "1",
            "--profile",
            "--json",
            json.to_str().unwrap(),
        ],
        &[("DBSWEEP_PERF", "/nonexistent/perf")],
    );
    out.ok();
    let doc = read_json(&json);
    assert!(profiles(&doc).is_empty());
    let gaps = doc["result"]["metrics"]["gaps"].as_array().unwrap();
    let gap = gaps.iter().find(|g| g["what"] == "profile").expect("a gap");
    let why = gap["why"].as_str().unwrap();
    assert!(why.contains("perf could not be run (not found)"), "{why}");
    assert!(why.contains("apt-get install linux-perf"), "{why}");
    assert!(
        out.stdout
            .contains("not measured: profile: perf could not be run"),
        "{}",
        out.stdout
    );
    assert!(!dir.join("run.client.folded.gz").exists());
}

#[test]
fn profile_with_metrics_off_is_refused() {
    let out = dbsweep(&["run", "oltp_point_select", "--profile", "--metrics", "off"]);
    out.expect_status(2);
    assert!(
        out.stderr.contains("--profile with --metrics off"),
        "{}",
        out.stderr
    );
    let out = dbsweep(&[
        "run",
        "oltp_point_select",
        "--profile",
        "--profile-frequency",
        "0",
    ]);
    out.expect_status(2);
    assert!(
        out.stderr.contains("'0' for '--profile-frequency <HZ>'")
            && out.stderr.contains("from 1 to 10000"),
        "{}",
        out.stderr
    );
}

/// A profiled point-select run on a scratch server of `kind`: its record
/// and its HTML report.
fn on_a_server(kind: &'static str, dir: &Dir) -> (Value, String) {
    let s = Server::start(kind, &[]);
    let prepare = [
        "prepare",
        "oltp_point_select",
        "--db",
        &s.url,
        "--table-size",
        "1000",
    ];
    dbsweep(&prepare).ok();
    let (doc, _, html) = profiled_run(dir, Some(&s.url), "oltp_point_select");
    (doc, html)
}

#[test]
fn a_profiled_run_on_postgres_profiles_the_server_and_the_client() {
    if !perf_here() {
        return;
    }
    let dir = Dir::new();
    let (doc, html) = on_a_server("postgres", &dir);
    let ps = profiles(&doc);
    let roles: Vec<&str> = ps.iter().map(|p| p["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["server", "client"]);
    // The backends' stacks: their process name is the root frame.
    check_profile(&dir, &ps[0], "server", "postgres");
    // The client's threads are named client-N.
    check_profile(&dir, &ps[1], "client", "client-");
    assert!(html.contains("id=\"flame-server\"") && html.contains("id=\"flame-client\""));
}

#[test]
fn a_profiled_run_on_mariadb_profiles_the_server() {
    if !perf_here() {
        return;
    }
    let dir = Dir::new();
    let (doc, _) = on_a_server("mariadb", &dir);
    let ps = profiles(&doc);
    assert_eq!(ps[0]["role"], "server", "{ps:?}");
    // Its connections' reads and writes on the socket: kernel frames.
    check_profile(&dir, &ps[0], "server", "_[k]");
}

#[test]
fn a_profiled_study_keeps_each_points_folded_stacks_in_results_db() {
    if !perf_here() {
        return;
    }
    let dir = Dir::new();
    let study = dir.join("profiled.toml");
    std::fs::write(
        &study,
        "name = \"profiled\"\ndescription = \"two SQLite files, profiled\"\nprofile = true\n\
         clients = [1, 2]\n\n[[target]]\nname = \"a\"\nsqlite = true\n\n\
         [[target]]\nname = \"b\"\nsqlite = true\n\n[[workload]]\n\
         name = \"oltp_point_select\"\noptions = { table-size = 1000 }\ntime = 2\n\n\
         [[workload]]\nname = \"oltp_read_only\"\noptions = { table-size = 1000 }\ntime = 1\n\
         profile = false\n",
    )
    .unwrap();
    let out = dir.join("out");
    dbsweep(&[
        "study",
        study.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
    .ok();
    let db = rusqlite::Connection::open(out.join("results.db")).unwrap();
    let rows: Vec<(String, String, Vec<u8>)> = db
        .prepare(
            "SELECT p.workload, f.role, f.folded_gz FROM point_profile f \
             JOIN point p ON p.id = f.point_id ORDER BY p.id",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    // The profiled workload's four points (two targets, two client
    // counts), the client's profile each (SQLite has no server apart);
    // none of the workload that says profile = false.
    let shape: Vec<(&str, &str)> = rows
        .iter()
        .map(|(w, r, _)| (w.as_str(), r.as_str()))
        .collect();
    assert_eq!(shape, [("oltp_point_select", "client"); 4]);
    for (_, _, gz) in &rows {
        let mut text = String::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_string(&mut text)
            .unwrap();
        assert!(text.lines().count() > 3, "{text}");
        assert!(text.contains("client-"), "{text}");
    }
    // The figures in the stored record.
    let doc: String = db
        .query_row(
            "SELECT result_json FROM point ORDER BY id LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let doc: Value = serde_json::from_str(&doc).unwrap();
    assert_eq!(profiles(&doc)[0]["role"], "client", "{doc:#}");
    // The report: each series' flame graph at its peak, and b against a.
    let html = dbsweep(&[
        "report",
        out.to_str().unwrap(),
        "--format",
        "html",
        "--out",
        "-",
    ]);
    html.ok();
    let html = &html.stdout;
    for id in ["w0-s0-client", "w0-s1-client", "w0-s1-vs-s0-diff"] {
        assert!(html.contains(&format!("id=\"flame-{id}\"")), "no {id}");
    }
    assert!(
        html.contains("CPU ns per transaction"),
        "the functions per transaction"
    );
    assert!(html.contains("the functions that moved most"));
}

#[test]
fn a_profiled_study_on_managed_servers_profiles_each_server() {
    if !perf_here() {
        return;
    }
    // The servers run as their own OS users: they must reach the study's
    // directory.
    use std::os::unix::fs::PermissionsExt;
    let dir = Dir::new();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let study = dir.join("managed.toml");
    std::fs::write(
        &study,
        "name = \"managed\"\nprofile = true\nclients = [2]\n\n\
         [[target]]\nserver = \"postgres\"\n\n[[target]]\nserver = \"mariadb\"\n\n\
         [[workload]]\nname = \"oltp_point_select\"\noptions = { table-size = 1000 }\n\
         time = 2\n",
    )
    .unwrap();
    let out = dir.join("out");
    dbsweep(&[
        "study",
        study.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
    .ok();
    let db = rusqlite::Connection::open(out.join("results.db")).unwrap();
    let rows: Vec<(String, String, Vec<u8>)> = db
        .prepare(
            "SELECT p.target, f.role, f.folded_gz FROM point_profile f \
             JOIN point p ON p.id = f.point_id ORDER BY p.target, f.role",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let shape: Vec<(&str, &str)> = rows
        .iter()
        .map(|(t, r, _)| (t.as_str(), r.as_str()))
        .collect();
    assert_eq!(
        shape,
        [
            ("mariadb", "client"),
            ("mariadb", "server"),
            ("postgres", "client"),
            ("postgres", "server"),
        ]
    );
    let text = |i: usize| {
        let mut text = String::new();
        flate2::read::GzDecoder::new(&rows[i].2[..])
            .read_to_string(&mut text)
            .unwrap();
        text
    };
    // MariaDB's connections read and write their sockets: kernel frames;
    // PostgreSQL's backends are named by their process.
    let (mariadb, postgres) = (text(1), text(3));
    assert!(mariadb.contains("_[k]"), "{mariadb}");
    assert!(
        postgres.lines().any(|l| l.starts_with("postgres")),
        "{postgres}"
    );
    assert!(text(0).contains("client-") && text(2).contains("client-"));
}

#[test]
fn a_run_on_two_nodes_profiles_the_server_once_and_every_shards_client() {
    if !perf_here() {
        return;
    }
    let s = Server::start("postgres", &[]);
    let prepare = [
        "prepare",
        "oltp_point_select",
        "--db",
        &s.url,
        "--table-size",
        "1000",
    ];
    dbsweep(&prepare).ok();
    let dir = Dir::new();
    let json = dir.join("run.json");
    let shards = dir.join("shards");
    dbsweep(&[
        "run",
        "oltp_point_select",
        "--db",
        &s.url,
        "--threads",
        "4",
        "--time",
        "3",
        "--warmup",
        "1",
        "--profile",
        "--nodes",
        "2",
        "--shard-records",
        shards.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ])
    .ok();
    let doc = read_json(&json);
    let ps = profiles(&doc);
    let roles: Vec<&str> = ps.iter().map(|p| p["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["server", "client"], "{doc:#}");
    check_profile(&dir, &ps[0], "server", "postgres");
    check_profile(&dir, &ps[1], "client", "client-");
    // The server's is shard 0's (the one that looks for its processes);
    // the client's is both workers' processes, their stacks summed.
    let shard = |i: usize| read_json(&shards.join(format!("shard-{i}.json")));
    let (s0, s1) = (profiles(&shard(0)), profiles(&shard(1)));
    assert_eq!(s0[0]["role"], "server");
    assert_eq!(s0[0]["cpu_s"], ps[0]["cpu_s"]);
    assert_eq!(s1.len(), 1, "shard 1 profiles its own process only");
    let cpu = |p: &Value| p["cpu_s"].as_f64().unwrap();
    let sum = cpu(&s0[1]) + cpu(&s1[0]);
    assert!(cpu(&s0[1]) > 0.0 && cpu(&s1[0]) > 0.0);
    assert!((cpu(&ps[1]) - sum).abs() < 1e-6, "{} vs {sum}", cpu(&ps[1]));
    // The kept records merge again into the same profiles: their stacks
    // are beside them.
    let merged = dir.join("merged.json");
    let files = [0, 1].map(|i| shards.join(format!("shard-{i}.json")));
    dbsweep(&[
        "merge",
        files[0].to_str().unwrap(),
        files[1].to_str().unwrap(),
        "--json",
        merged.to_str().unwrap(),
    ])
    .ok();
    let again = profiles(&read_json(&merged));
    assert_eq!(again.len(), 2, "{again:?}");
    assert_eq!(again[0]["cpu_s"], ps[0]["cpu_s"]);
    assert!((cpu(&again[1]) - cpu(&ps[1])).abs() < 1e-6);
    assert!(folded(&dir, "merged.client.folded.gz").lines().count() > 3);
}
