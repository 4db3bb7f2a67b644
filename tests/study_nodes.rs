//! Study points on several load machines (`nodes = N`): each runs as one
//! coordinated run of `run --nodes N`'s code and is stored as the merge of
//! its workers' records — its transactions the sum of its shards', its
//! shards named in every report format, the JSON export and the CSV, the
//! server's metrics per transaction of the merge — on the
//! fake driver and on a scratch PostgreSQL server; the dry run says how a
//! series runs; and what cannot be split is refused before anything runs,
//! at its place in the file, with the fix.

mod util;

use serde_json::Value;
use util::{dbsweep_in, Dir, Server};

fn write(dir: &Dir, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// A stored point: what the results database holds of it.
struct Stored {
    key: String,
    status: String,
    reason: Option<String>,
    transactions: Option<u64>,
    record: Option<Value>,
}

/// Every stored point, in commit order.
fn stored(dir: &Dir) -> Vec<Stored> {
    let conn = rusqlite::Connection::open(dir.join("out/results.db")).unwrap();
    let mut stmt = conn
        .prepare("SELECT key, status, reason, transactions, result_json FROM point ORDER BY id")
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            let doc: Option<String> = r.get(4)?;
            let transactions: Option<i64> = r.get(3)?;
            Ok(Stored {
                key: r.get(0)?,
                status: r.get(1)?,
                reason: r.get(2)?,
                transactions: transactions.map(|t| t as u64),
                record: doc.map(|d| serde_json::from_str(&d).unwrap()),
            })
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    rows
}

/// Checks one stored point ran on `n` workers: its transactions are the
/// sum of its shards', each shard measured its clock and start; returns
/// the shards' rows.
#[track_caller]
fn check_sharded(transactions: Option<u64>, doc: &Value, n: usize, clients: u64) -> Vec<Value> {
    let shards = &doc["result"]["shards"];
    let rows = shards["rows"].as_array().expect("shard rows").clone();
    assert_eq!(rows.len(), n, "{shards}");
    let sum: u64 = rows
        .iter()
        .map(|x| x["transactions"].as_u64().unwrap())
        .sum();
    assert!(sum > 0, "{shards}");
    assert_eq!(
        transactions,
        Some(sum),
        "the point is the sum of its shards"
    );
    assert_eq!(doc["result"]["transactions"].as_u64(), Some(sum));
    let split: u64 = rows.iter().map(|x| x["clients"].as_u64().unwrap()).sum();
    assert_eq!(split, clients, "{shards}");
    assert_eq!(shards["coordinator"]["launcher"], "local");
    for x in &rows {
        assert!(x["clock_offset_s"].is_f64(), "{x}");
        assert!(x["start_skew_s"].is_f64(), "{x}");
        assert!(x["node"].is_string(), "{x}");
    }
    rows
}

/// The report's JSON export, checked against its schema.
fn json_report(dir: &Dir) -> Value {
    let path = dir.join("r.json");
    dbsweep_in(
        dir.path(),
        &["report", "out", "--out", path.to_str().unwrap()],
    )
    .ok();
    let doc = util::read_json(&path);
    let schema = util::read_json(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/report.schema.json"),
    );
    let errors: Vec<String> = jsonschema::validator_for(&schema)
        .unwrap()
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    doc
}

/// The study report in `format` (`txt`, `md`).
fn report(dir: &Dir, ext: &str) -> String {
    let path = dir.join(&format!("r.{ext}"));
    dbsweep_in(
        dir.path(),
        &["report", "out", "--out", path.to_str().unwrap()],
    )
    .ok();
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn fake_points_on_three_nodes_are_stored_merged_and_resume() {
    let dir = Dir::new();
    let file = write(
        &dir,
        "fake.toml",
        r#"
name = "fake-nodes"
out = "out"
clients = [3, 6]

[[target]]
name = "fake"
url = "fake://?latency=200us"

[[workload]]
name = "oltp_point_select"
time = 0.6
repeats = 2
nodes = 3
"#,
    );
    let r = dbsweep_in(dir.path(), &["study", &file, "--dry-run"]);
    r.ok();
    assert!(r.stdout.contains("3 nodes (local)"), "{}", r.stdout);
    dbsweep_in(dir.path(), &["study", &file]).ok();
    let points = stored(&dir);
    assert_eq!(points.len(), 4);
    for p in &points {
        assert_eq!(p.status, "finished", "{}: {:?}", p.key, p.reason);
        let clients = if p.key.contains("clients=3/") { 3 } else { 6 };
        check_sharded(p.transactions, p.record.as_ref().unwrap(), 3, clients);
    }
    // Stored like any point: a resume finds every one and runs none.
    let r = dbsweep_in(dir.path(), &["study", &file, "--resume"]);
    r.ok();
    assert!(r.stderr.contains("(4 stored earlier)"), "{}", r.stderr);
    assert_eq!(stored(&dir).len(), 4);
    let text = report(&dir, "txt");
    assert!(text.contains("Coordinated points: shards"), "{text}");
    for shard in [
        "6 clients, repeat 2: merged",
        "6 clients, repeat 2: shard 2",
    ] {
        assert!(text.contains(shard), "{shard} not in:\n{text}");
    }
}

#[test]
fn a_study_on_postgres_with_two_nodes_stores_the_merge_and_names_its_shards() {
    let pg = Server::start("postgres", &[]);
    let dir = Dir::new();
    let file = write(
        &dir,
        "pg.toml",
        &format!(
            r#"
name = "pg-nodes"
out = "out"
clients = [4]
nodes = 2

[[target]]
name = "pg"
url = "{}"

[[workload]]
name = "oltp_point_select"
options = {{ table-size = 1000 }}
time = 1
"#,
            pg.url
        ),
    );
    let r = dbsweep_in(dir.path(), &["study", &file]);
    r.ok();
    assert!(r.stderr.contains("on 2 nodes"), "{}", r.stderr);
    let points = stored(&dir);
    assert_eq!(points.len(), 1);
    let p = &points[0];
    assert_eq!(p.status, "finished", "{:?}", p.reason);
    let txns = p.transactions;
    let doc = p.record.as_ref().unwrap();
    let rows = check_sharded(txns, doc, 2, 4);
    assert_eq!(doc["run"]["threads"], 4, "the point's clients, all shards'");
    assert!(doc["run"].get("shard").is_none(), "the point is the merge");
    // The server's metrics: one shard's reading of the one server, its
    // CPU per transaction of the point (the merge), not of that shard.
    let m = &doc["result"]["metrics"];
    assert_eq!(m["merged"]["server_shard"], 0, "{}", m["merged"]);
    let per_txn = &m["figures"]["server_cpu_us_per_transaction"];
    assert!(
        per_txn["value"].as_f64().is_some_and(|v| v > 0.0),
        "{per_txn}"
    );
    let from = per_txn["from"].as_str().unwrap();
    assert!(
        from.ends_with(&format!("/ {} transactions", txns.unwrap())),
        "{from}"
    );
    for x in &rows {
        assert!(x["cpu_busy_pct"].is_f64(), "{x}");
    }

    // Markdown and text name the shards beside the merged point.
    for ext in ["md", "txt"] {
        let out = report(&dir, ext);
        assert!(out.contains("Coordinated points: shards"), "{out}");
        assert!(out.contains("4 clients, repeat 1: merged"), "{out}");
        for x in &rows {
            let shard = format!("4 clients, repeat 1: shard {}", x["index"]);
            assert!(out.contains(&shard), "{shard} not in:\n{out}");
            assert!(out.contains(x["node"].as_str().unwrap()), "{out}");
        }
        assert!(out.contains("2 nodes (local)"), "{out}");
    }
    let html = report(&dir, "html");
    assert!(html.contains("Coordinated points: shards"));
    // The JSON export: the point's shards, valid against the schema.
    let doc = json_report(&dir);
    let shards = &doc["points"][0]["shards"];
    assert_eq!(shards["launcher"], "local");
    let json_rows = shards["rows"].as_array().unwrap();
    assert_eq!(json_rows.len(), 2);
    let sum: u64 = json_rows
        .iter()
        .map(|x| x["transactions"].as_u64().unwrap())
        .sum();
    assert_eq!(Some(sum), txns);
    assert_eq!(doc["points"][0]["figures"]["transactions"].as_u64(), txns);
    assert!(json_rows[0]["cpu_busy_pct"].is_f64(), "{}", json_rows[0]);

    // CSV: the point's merged lines, its shards' right under them.
    let r = dbsweep_in(
        dir.path(),
        &["report", "out", "--format", "csv", "--out", "-"],
    );
    r.ok();
    let lines: Vec<Vec<&str>> = r.stdout.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(lines[0][7], "shard", "{}", r.stdout);
    let point = lines
        .iter()
        .position(|l| l[0] == "point" && l[8] == "tps")
        .expect("the point's tps line");
    let mut sum = 0;
    for x in &rows {
        let i = x["index"].to_string();
        let line = |figure: &str| {
            let at = lines
                .iter()
                .position(|l| l[0] == "shard" && l[7] == i && l[8] == figure)
                .unwrap_or_else(|| panic!("no shard {i} {figure} in\n{}", r.stdout));
            assert!(at > point, "shards under their point:\n{}", r.stdout);
            // The point's workload, series, clients and repeat.
            assert_eq!(lines[at][1..7], lines[point][1..7]);
            assert_eq!(lines[at][15], x["node"].as_str().unwrap());
            lines[at][9]
        };
        let n: u64 = line("transactions").parse().unwrap();
        assert_eq!(Some(n), x["transactions"].as_u64());
        sum += n;
        let busy: f64 = line("cpu_busy_pct").parse().unwrap();
        assert!(busy > 0.0 && busy <= 100.0 + 1e-9, "{busy}");
        line("start_skew_ms").parse::<f64>().unwrap();
    }
    assert_eq!(Some(sum), txns);
}

/// Runs `dbsweep study FILE --dry-run` on `text`; asserts exit status 2
/// and that the message names `field` at the position of `needle` and
/// says `words`.
#[track_caller]
fn refused(text: &str, needle: &str, field: &str, words: &str) {
    let dir = Dir::new();
    let file = write(&dir, "x.toml", text);
    let r = dbsweep_in(dir.path(), &["study", &file, "--dry-run"]);
    r.expect_status(2);
    let off = text.find(needle).unwrap();
    let line = text[..off].matches('\n').count() + 1;
    let col = off - text[..off].rfind('\n').map_or(0, |i| i + 1) + 1;
    let at = format!("x.toml:{line}:{col}: {field}: ");
    assert!(r.stderr.contains(&at), "{at:?} not in:\n{}", r.stderr);
    assert!(r.stderr.contains(words), "{words:?} not in:\n{}", r.stderr);
}

const FAKE: &str = r#"
[[target]]
name = "fake"
url = "fake://"
"#;

#[test]
fn nodes_that_cannot_split_a_point_are_refused_with_the_fix() {
    let wl = "\n[[workload]]\nname = \"oltp_point_select\"\ntime = 1\n";
    refused(
        &format!("clients = [2]\nnodes = 0\n{FAKE}{wl}"),
        "0\n",
        "nodes",
        "give at least 1",
    );
    // A workload's own nodes against its client counts.
    refused(
        &format!("clients = [1, 2]\n{FAKE}{wl}nodes = 2\n"),
        "2\n",
        "workload[0].nodes",
        "give every client count at least 2 (clients), or nodes = 1 or fewer",
    );
    // The target's nodes, with a workload that keeps them.
    refused(
        &format!("clients = [3]\n[[target]]\nname = \"fake\"\nurl = \"fake://\"\nnodes = 4\n{wl}"),
        "4\n",
        "target[0].nodes",
        "give every client count at least 4",
    );
    refused(
        &format!("clients = [2]\nnodes = 2\n{wl}"),
        "2\n\n",
        "nodes",
        "is an SQLite file of this machine",
    );
    refused(
        &format!("clients = [2]\nnodes = 2\n{FAKE}{wl}instances = 2\n"),
        "2\n\n[[target]]",
        "nodes",
        "give it instances = 1",
    );
    refused(
        &format!("clients = [2]\nnodes = 2\nlauncher = \"external\"\n{FAKE}{wl}"),
        "\"external\"",
        "launcher",
        "use local or slurm",
    );
    refused(
        &format!("clients = [2]\nlauncher = \"slurm\"\n{FAKE}{wl}"),
        "\"slurm\"",
        "launcher",
        "add nodes = N",
    );
}

#[test]
fn a_point_takes_its_workloads_nodes_else_its_targets_else_the_studys() {
    let text = r#"
clients = [4]
nodes = 2
launcher = "slurm"

[[target]]
name = "a"
url = "fake://"

[[target]]
name = "b"
url = "fake://"
nodes = 3

[[workload]]
name = "oltp_point_select"
time = 1

[[workload]]
name = "oltp_read_only"
time = 1
nodes = 4
launcher = "local"
"#;
    let s = dbsweep::study::load_str(text, std::path::Path::new("x.toml"))
        .unwrap_or_else(|e| panic!("{e}"));
    use dbsweep::nodes::{Launcher, Nodes};
    let at = |count, launcher| Some(Nodes { count, launcher });
    assert_eq!(s.nodes(0, 0), at(2, Launcher::Slurm), "the study's");
    assert_eq!(s.nodes(1, 0), at(3, Launcher::Slurm), "the target's count");
    assert_eq!(s.nodes(0, 1), at(4, Launcher::Local), "the workload's");
    assert_eq!(s.nodes(1, 1), at(4, Launcher::Local));
    let plan = dbsweep::study::plan(&s).describe(&s);
    assert!(plan.contains("3 nodes (slurm)"), "{plan}");
    assert!(plan.contains("4 nodes (local)"), "{plan}");
    // Without nodes anywhere, every point runs in this process.
    let s = dbsweep::study::load_str(
        "clients = [1]\n[[workload]]\nname = \"oltp_point_select\"\n",
        std::path::Path::new("x.toml"),
    )
    .unwrap();
    assert_eq!(s.nodes(0, 0), None);
}
