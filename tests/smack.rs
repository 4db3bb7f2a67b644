//! `dbsweep smack` and `dbsweep gen-data` through the real binary: `.smack`
//! files run unmodified against SQLite, MariaDB and PostgreSQL with exact
//! query counts, every kind of dictionary draws as documented, and bad
//! files fail before anything runs with file:line:col messages.
//!
//! The files are the project's own (tests/fixtures/smack/) and, where CI
//! puts them beside the repository (`../shared/testdata/smack`), Super
//! Smack's stock select-key.smack and update-select.smack; without them
//! the stock part of a test is skipped with one line saying so.

mod util;

use std::path::{Path, PathBuf};

use dbsweep::driver::{self, Target};
use util::{assert_valid_run_json, dbsweep, dbsweep_in, read_json, shared_dir, Dir, Run, Server};

/// A `.smack` file the tests run unmodified, and what its run must show.
struct Sample {
    path: PathBuf,
    /// The client main starts.
    client: &'static str,
    /// Its barrel's query types with their shots per round, in the
    /// report's order (by name).
    barrel: &'static [(&'static str, u64)],
    /// Statements per round that write.
    writes: u64,
    /// The table its table block makes, loaded from `data_file` (which
    /// gen-data writes with `rows` lines).
    table: &'static str,
    data_file: &'static str,
    rows: usize,
    /// The query that draws from dictionary `dict`, of type rand.
    query: &'static str,
    dict: &'static str,
}

impl Sample {
    fn file(&self) -> String {
        self.path.display().to_string()
    }

    fn text(&self) -> String {
        std::fs::read_to_string(&self.path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", self.path.display()))
    }

    fn per_round(&self) -> u64 {
        self.barrel.iter().map(|(_, n)| n).sum()
    }
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/smack")
        .join(name)
}

/// The project's lookup file: a table made from gen-data's file, a rand
/// dictionary from its first field, one query three times a round.
fn point_select() -> Sample {
    Sample {
        path: fixture("point-select.smack"),
        client: "reader",
        barrel: &[("key_lookup", 3)],
        writes: 0,
        table: "accounts",
        data_file: "accounts.dat",
        rows: 30000,
        query: "account_by_login",
        dict: "login",
    }
}

/// The project's lookup-and-update file, on point-select's table.
fn select_update() -> Sample {
    Sample {
        path: fixture("select-update.smack"),
        client: "writer",
        barrel: &[("key_lookup", 2), ("key_update", 1)],
        writes: 1,
        table: "accounts",
        data_file: "accounts.dat",
        rows: 30000,
        query: "account_by_login",
        dict: "login",
    }
}

/// Super Smack's stock select-key.smack and update-select.smack, where
/// `../shared` has them; else None, after one line saying `what` is skipped.
fn stock(what: &str) -> Option<[Sample; 2]> {
    let dir = shared_dir("testdata/smack", what)?;
    let sample = |name: &str, client, barrel, writes| Sample {
        path: dir.join(name),
        client,
        barrel,
        writes,
        table: "http_auth",
        data_file: "words.dat",
        rows: 90000,
        query: "select_by_username",
        dict: "word",
    };
    Some([
        sample("select-key.smack", "smacker1", &[("select_index", 2)], 0),
        sample(
            "update-select.smack",
            "smacker",
            &[("select_index", 1), ("update_index", 1)],
            1,
        ),
    ])
}

/// The report's table: query type → (num_queries, max_time, min_time, q_per_s).
fn barrel_table(r: &Run) -> Vec<(String, u64, u64, u64, f64)> {
    let lines: Vec<&str> = r.stdout.lines().collect();
    let head = lines
        .iter()
        .position(|l| *l == "Query_type\tnum_queries\tmax_time\tmin_time\tq_per_s")
        .unwrap_or_else(|| panic!("no barrel table in\n{}", r.stdout));
    lines[head + 1..]
        .iter()
        .take_while(|l| !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 5, "{l}");
            (
                f[0].to_string(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
                f[4].parse().unwrap(),
            )
        })
        .collect()
}

/// Checks a run of `sample`: the report's shape and exact counts.
fn check_run(r: &Run, sample: &Sample, clients: u64, rounds: u64) {
    assert!(
        r.stdout.starts_with(&format!(
            "Query Barrel Report for client {}\nconnect: max=",
            sample.client
        )),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(&format!("from {clients} clients \n")),
        "{}",
        r.stdout
    );
    let table = barrel_table(r);
    assert_eq!(table.len(), sample.barrel.len(), "{}", r.stdout);
    for ((t, n, max, min, qps), (et, shots)) in table.iter().zip(sample.barrel) {
        assert_eq!(t, et);
        assert_eq!(*n, clients * rounds * shots, "{}", r.stdout);
        assert!(min <= max);
        assert!(*qps > 0.0);
    }
    // dbsweep's percentiles follow, one line per type.
    assert!(
        r.stdout.contains("Latency per query type (dbsweep"),
        "{}",
        r.stdout
    );
}

fn check_json(path: &Path, sample: &Sample, clients: u64, rounds: u64) {
    let doc = read_json(path);
    assert_valid_run_json(&doc);
    assert_eq!(doc["workload"]["name"], "smack");
    let r = &doc["result"];
    assert_eq!(r["stop_reason"], "rounds");
    assert_eq!(r["transactions"].as_u64().unwrap(), clients * rounds);
    let q = &r["queries"];
    let per_round = sample.per_round();
    assert_eq!(q["total"].as_u64().unwrap(), clients * rounds * per_round);
    if sample.writes > 0 {
        // Updates find their rows (the dictionary holds real keys); MySQL
        // counts an update that sets a value the row already has as 0 rows
        // changed ("other"), which a repeated random pair can do.
        let n = clients * rounds * sample.writes;
        let (w, o) = (q["write"].as_u64().unwrap(), q["other"].as_u64().unwrap());
        assert_eq!(w + o, n);
        assert!(w * 10 >= n * 9, "{w} of {n} updates changed a row");
    }
    assert_eq!(
        q["read"].as_u64().unwrap(),
        clients * rounds * (per_round - sample.writes)
    );
    assert_eq!(r["failed_transactions"], 0);
}

/// A lookup file on a SQLite database file: gen-data's file is written in
/// ./smack-data, the table created and loaded; a second run leaves it alone.
fn lookup_runs_unmodified_on_sqlite(sample: &Sample) {
    let dir = Dir::new();
    let json = dir.join("out.json");
    let js = json.display().to_string();
    let db = dir.sqlite_url("smack.db");
    let file = sample.file();
    let r = dbsweep_in(
        dir.path(),
        &["smack", &file, "4", "50", "--db", &db, "--json", &js],
    );
    r.ok();
    check_run(&r, sample, 4, 50);
    check_json(&json, sample, 4, 50);
    // The data file was generated in ./smack-data with gen-data's format.
    let data = std::fs::read_to_string(dir.join("smack-data").join(sample.data_file)).unwrap();
    assert_eq!(data.lines().count(), sample.rows);
    assert!(
        r.stderr
            .contains(&format!("Creating table '{}'", sample.table)),
        "{}",
        r.stderr
    );

    // Second run: the table has its rows and is left alone.
    let r = dbsweep_in(dir.path(), &["smack", &file, "2", "10", "--db", &db]);
    r.ok();
    assert!(!r.stderr.contains("Creating table"), "{}", r.stderr);
    check_run(&r, sample, 2, 10);
}

#[test]
fn lookup_files_run_unmodified_on_sqlite() {
    lookup_runs_unmodified_on_sqlite(&point_select());
    if let Some([select_key, _]) = stock("the stock select-key.smack on SQLite") {
        lookup_runs_unmodified_on_sqlite(&select_key);
    }
}

/// A lookup-and-update file with `-d sqlite` and no `--db`: a temporary
/// database, the data file in `--datadir`.
fn update_runs_with_a_temporary_sqlite_database(sample: &Sample) {
    let dir = Dir::new();
    let json = dir.join("out.json");
    let js = json.display().to_string();
    let data = dir.join("data").display().to_string();
    let r = dbsweep_in(
        dir.path(),
        &[
            "smack",
            &sample.file(),
            "3",
            "40",
            "-d",
            "sqlite",
            "--datadir",
            &data,
            "--json",
            &js,
        ],
    );
    r.ok();
    check_run(&r, sample, 3, 40);
    check_json(&json, sample, 3, 40);
    assert!(dir.join("data").join(sample.data_file).exists());
}

#[test]
fn update_files_run_with_a_temporary_sqlite_database() {
    update_runs_with_a_temporary_sqlite_database(&select_update());
    if let Some([_, update_select]) = stock("the stock update-select.smack on SQLite") {
        update_runs_with_a_temporary_sqlite_database(&update_select);
    }
}

#[test]
fn gen_data_prints_the_format() {
    let r = dbsweep(&["gen-data", "-n", "3", "-f", "%4-4s:%n:%3-3n|%%"]);
    r.ok();
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 3);
    for (i, l) in lines.iter().enumerate() {
        let (letters, rest) = l.split_at(4);
        assert!(letters.bytes().all(|b| (b'a'..=b'y').contains(&b)), "{l}");
        assert_eq!(rest, format!(":{}:{:>3}|%", i + 1, i + 1));
    }
    // Same seed, same rows.
    assert_eq!(
        r.stdout,
        dbsweep(&["gen-data", "-n", "3", "-f", "%4-4s:%n:%3-3n|%%"]).stdout
    );
    let bad = dbsweep(&["gen-data", "-n", "3", "-f", "%q"]);
    bad.expect_status(2);
    assert!(
        bad.stderr.contains("'q' at offset 1 is not a field type"),
        "{}",
        bad.stderr
    );
}

fn usage_error(dir: &Dir, src: &str, args: &[&str], expect: &str) {
    let file = dir.join("t.smack");
    std::fs::write(&file, src).unwrap();
    let f = file.display().to_string();
    let mut a = vec!["smack", f.as_str()];
    a.extend_from_slice(args);
    a.extend_from_slice(&["-d", "sqlite"]);
    let r = dbsweep_in(dir.path(), &a);
    r.expect_status(2);
    let want = expect.replace("FILE", &f);
    assert!(
        r.stderr.contains(&want),
        "expected '{want}' in\n{}",
        r.stderr
    );
    assert!(r.stdout.is_empty(), "nothing runs: {}", r.stdout);
}

/// Where the statement on the first line holding `needle` starts: its
/// line and the column of its first non-blank character (both from 1).
fn line_of(text: &str, needle: &str) -> (usize, usize) {
    let (i, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains(needle))
        .unwrap_or_else(|| panic!("no line holds {needle:?}"));
    let col = line.chars().take_while(|c| c.is_whitespace()).count();
    (i + 1, col + 1)
}

/// `sample`'s own text, broken three ways: each fails with its position.
fn bad_copies_fail_before_anything_runs(dir: &Dir, sample: &Sample) {
    let text = sample.text();
    // Missing arguments: the error is on the first line that uses $2.
    let (line, col) = line_of(&text, "$2");
    usage_error(
        dir,
        &text,
        &["10"],
        &format!("FILE:{line}:{col}: this line uses $2, but only 1 argument was given after the file name"),
    );
    // An undefined dictionary in a query.
    let (dict, query) = (sample.dict, sample.query);
    usage_error(
        dir,
        &text.replace(&format!("'${dict}'"), &format!("'${dict}x'")),
        &["1", "1"],
        &format!("query \"{query}\" uses ${dict}x, but no dictionary \"{dict}x\" is defined"),
    );
    // A syntax error: the dictionary's type without its ';' is reported
    // where the next member starts.
    let text = text.replacen("type \"rand\";", "type \"rand\"", 1);
    let (line, col) = line_of(&text, "source_type");
    usage_error(
        dir,
        &text,
        &["1", "1"],
        &format!("FILE:{line}:{col}: expected ';' after the value of type, found 'source_type'"),
    );
}

#[test]
fn bad_files_fail_before_anything_runs() {
    let dir = Dir::new();
    bad_copies_fail_before_anything_runs(&dir, &point_select());
    if let Some([select_key, _]) = stock("broken copies of the stock select-key.smack") {
        bad_copies_fail_before_anything_runs(&dir, &select_key);
    }
    // A dictionary file that is not there, with no table block to make it.
    let src = "dictionary \"w\" { type \"rand\"; source_type \"file\"; source \"nowhere.dat\"; }\n\
               query \"q\" { query \"select '$w'\"; type \"s\"; has_result_set \"y\"; parsed \"y\"; }\n\
               client \"c\" { query_barrel \"1 q\"; }\n\
               main { c.init(); c.set_num_rounds(1); c.unload_query_barrel(); c.collect_threads(); }";
    usage_error(
        &dir,
        src,
        &[],
        "dictionary 'w': cannot read 'smack-data/nowhere.dat'",
    );
    usage_error(&dir, src, &[], "pass --datadir DIR");
}

#[test]
fn literal_lists_unique_values_and_prints() {
    let dir = Dir::new();
    let src = r#"
client "c" { query_barrel "1 ins 2 sel"; }
table "kv" { client "c"; create "create table kv (k varchar(40) primary key, v int)"; min_rows "0"; }
dictionary "key" { type "unique"; source_type "template"; source "key_%05d"; }
dictionary "val" { type "seq"; source_type "list"; source "1,2,3"; }
query "ins" { query "insert into kv values ('$key', $val)"; type "insert"; parsed "y"; }
query "sel" { query "select * from kv where k like 'key_$val%'"; type "select"; has_result_set "y"; parsed "y"; }
main {
  c.init(); c.set_num_rounds($1); c.create_threads(2); c.connect();
  c.unload_query_barrel(); c.collect_threads();
  c.print("inserted " . c::insert::num_queries);
  c.disconnect();
}
"#;
    let file = dir.join("kv.smack");
    std::fs::write(&file, src).unwrap();
    let db = dir.sqlite_url("kv.db");
    let r = dbsweep_in(
        dir.path(),
        &["smack", &file.display().to_string(), "25", "--db", &db],
    );
    r.ok();
    let table = barrel_table(&r);
    assert_eq!(table[0].0, "insert");
    assert_eq!(table[0].1, 50);
    assert_eq!(table[1].0, "select");
    assert_eq!(table[1].1, 100);
    assert!(r.stdout.contains("\ninserted 50\n"), "{}", r.stdout);
}

/// Rows a query returns.
fn rows(url: &str, sql: &str) -> u64 {
    let mut conn = driver::connect(&Target::parse(url).unwrap()).unwrap();
    conn.execute_sql(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .rows
}

#[test]
fn every_dictionary_kind_draws_as_documented() {
    let dir = Dir::new();
    let db = dir.sqlite_url("kinds.db");
    let r = dbsweep_in(
        dir.path(),
        &[
            "smack",
            &fixture("dictionaries.smack").display().to_string(),
            "3",
            "20",
            "--db",
            &db,
        ],
    );
    r.ok();
    let table = barrel_table(&r);
    let counts: Vec<(&str, u64)> = table.iter().map(|t| (t.0.as_str(), t.1)).collect();
    // By type, in the order of their names, as Super Smack reports them.
    assert_eq!(counts, [("insert", 60), ("range", 60), ("select", 120)]);
    assert!(r.stdout.contains("\nevents logged: 60\n"), "{}", r.stdout);
    assert_eq!(rows(&db, "select * from colours"), 400);
    // unique: one counter for all clients, from 0, in the template (ids)
    // or as plain numbers (no source).
    assert_eq!(rows(&db, "select distinct id from events"), 60);
    assert_eq!(
        rows(
            &db,
            "select * from events where id between 'ev-000000' and 'ev-000059'"
        ),
        60
    );
    assert_eq!(
        rows(
            &db,
            "select distinct serial from events where serial between 0 and 59"
        ),
        60
    );
    // seq from a file, cut at the delimiter: the colours' names, each
    // client from the first line (the insert draws every third: the same
    // 20 names in each of the 3 clients); rand from a list, with its
    // escaped comma.
    assert_eq!(rows(&db, "select distinct colour from events"), 20);
    assert_eq!(
        rows(
            &db,
            "select * from events where colour in (select name from colours where n <= 60)"
        ),
        60
    );
    assert_eq!(
        rows(
            &db,
            "select * from events where shade not in ('pale', 'dark', 'blue,ish')"
        ),
        0
    );
}

/// The project's files, and the stock ones where `../shared` has them,
/// unmodified against a real server the test starts.
fn files_on_server(kind: &'static str, dtype: &str) {
    let s = Server::start(kind, &[]);
    let dir = Dir::new();
    let data = dir.join("data").display().to_string();
    let mut samples = vec![point_select(), select_update()];
    samples.extend(
        stock(&format!("the stock files on {kind}"))
            .into_iter()
            .flatten(),
    );
    for sample in &samples {
        let name = sample.path.file_name().unwrap().to_string_lossy();
        let json = dir.join(&format!("{name}.json"));
        let js = json.display().to_string();
        let r = dbsweep_in(
            dir.path(),
            &[
                "smack",
                &sample.file(),
                "5",
                "30",
                "-d",
                dtype,
                "--db",
                &s.url,
                "--datadir",
                &data,
                "--json",
                &js,
            ],
        );
        r.ok();
        check_run(&r, sample, 5, 30);
        check_json(&json, sample, 5, 30);
    }
}

#[test]
fn smack_files_run_unmodified_on_mariadb() {
    files_on_server("mariadb", "mysql");
}

#[test]
fn smack_files_run_unmodified_on_postgres() {
    files_on_server("postgres", "pg");
}
