//! `dbsweep smack` and `dbsweep gen-data` through the real binary: the stock
//! Super Smack files (select-key.smack, update-select.smack) run unmodified
//! against SQLite, MariaDB and PostgreSQL with exact query counts, and bad
//! files fail before anything runs with file:line:col messages.

mod util;

use std::path::{Path, PathBuf};

use util::{assert_valid_run_json, dbsweep, dbsweep_in, read_json, Dir, Run, Server};

fn stock(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/testdata/smack")
        .join(name)
        .display()
        .to_string()
}

/// The stock files, wherever the checkout is (the worktree or main).
fn stock_file(name: &str) -> String {
    let here = stock(name);
    if Path::new(&here).exists() {
        return here;
    }
    let shared = PathBuf::from("/work/shared/testdata/smack").join(name);
    assert!(shared.exists(), "stock file {name} not found");
    shared.display().to_string()
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

/// Checks a run of a stock file: the report's shape and exact counts.
fn check_stock_run(r: &Run, client: &str, clients: u64, rounds: u64, expect: &[(&str, u64)]) {
    assert!(
        r.stdout.starts_with(&format!(
            "Query Barrel Report for client {client}\nconnect: max="
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
    assert_eq!(table.len(), expect.len(), "{}", r.stdout);
    for ((t, n, max, min, qps), (et, shots)) in table.iter().zip(expect) {
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

fn check_json(path: &Path, clients: u64, rounds: u64, per_round: u64, writes: bool) {
    let doc = read_json(path);
    assert_valid_run_json(&doc);
    assert_eq!(doc["workload"]["name"], "smack");
    let r = &doc["result"];
    assert_eq!(r["stop_reason"], "rounds");
    assert_eq!(r["transactions"].as_u64().unwrap(), clients * rounds);
    let q = &r["queries"];
    assert_eq!(q["total"].as_u64().unwrap(), clients * rounds * per_round);
    if writes {
        // Updates find their rows (the dictionary holds real keys); MySQL
        // counts an update that sets a value the row already has as 0 rows
        // changed ("other"), which a repeated random pair can do.
        let n = clients * rounds;
        let (w, o) = (q["write"].as_u64().unwrap(), q["other"].as_u64().unwrap());
        assert_eq!(w + o, n);
        assert!(w * 10 >= n * 9, "{w} of {n} updates changed a row");
    }
    assert_eq!(
        q["read"].as_u64().unwrap(),
        clients * rounds * (per_round - u64::from(writes))
    );
    assert_eq!(r["failed_transactions"], 0);
}

#[test]
fn stock_select_key_runs_unmodified_on_sqlite() {
    let dir = Dir::new();
    let json = dir.join("out.json");
    let js = json.display().to_string();
    let db = dir.sqlite_url("smack.db");
    let r = dbsweep_in(
        dir.path(),
        &[
            "smack",
            &stock_file("select-key.smack"),
            "4",
            "50",
            "--db",
            &db,
            "--json",
            &js,
        ],
    );
    r.ok();
    check_stock_run(&r, "smacker1", 4, 50, &[("select_index", 2)]);
    check_json(&json, 4, 50, 2, false);
    // The data file was generated in ./smack-data with gen-data's format.
    let words = std::fs::read_to_string(dir.join("smack-data/words.dat")).unwrap();
    assert_eq!(words.lines().count(), 90000);
    assert!(
        r.stderr.contains("Creating table 'http_auth'"),
        "{}",
        r.stderr
    );

    // Second run: the table has its 90000 rows and is left alone.
    let r = dbsweep_in(
        dir.path(),
        &[
            "smack",
            &stock_file("select-key.smack"),
            "2",
            "10",
            "--db",
            &db,
        ],
    );
    r.ok();
    assert!(!r.stderr.contains("Creating table"), "{}", r.stderr);
    check_stock_run(&r, "smacker1", 2, 10, &[("select_index", 2)]);
}

#[test]
fn stock_update_select_runs_with_a_temporary_sqlite_database() {
    let dir = Dir::new();
    let json = dir.join("out.json");
    let js = json.display().to_string();
    let data = dir.join("data").display().to_string();
    let r = dbsweep_in(
        dir.path(),
        &[
            "smack",
            &stock_file("update-select.smack"),
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
    check_stock_run(
        &r,
        "smacker",
        3,
        40,
        &[("select_index", 1), ("update_index", 1)],
    );
    check_json(&json, 3, 40, 2, true);
    assert!(dir.join("data/words.dat").exists());
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

#[test]
fn bad_files_fail_before_anything_runs() {
    let dir = Dir::new();
    let stock = std::fs::read_to_string(stock_file("select-key.smack")).unwrap();
    // Missing arguments.
    usage_error(
        &dir,
        &stock,
        &["10"],
        "FILE:77:3: this line uses $2, but only 1 argument was given after the file name",
    );
    // An undefined dictionary in a query.
    usage_error(
        &dir,
        &stock.replace("'$word'", "'$wrod'"),
        &["1", "1"],
        "query \"select_by_username\" uses $wrod, but no dictionary \"wrod\" is defined",
    );
    // A syntax error.
    usage_error(
        &dir,
        &stock.replace("type \"rand\";", "type \"rand\""),
        &["1", "1"],
        "FILE:38:3: expected ';' after the value of type, found 'source_type'",
    );
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

/// Both stock files, unmodified, against a real server the test starts.
fn stock_files_on_server(kind: &'static str, dtype: &str) {
    let s = Server::start(kind, &[]);
    let dir = Dir::new();
    let data = dir.join("data").display().to_string();
    for (file, client, expect, writes) in [
        (
            "select-key.smack",
            "smacker1",
            &[("select_index", 2u64)][..],
            false,
        ),
        (
            "update-select.smack",
            "smacker",
            &[("select_index", 1u64), ("update_index", 1u64)][..],
            true,
        ),
    ] {
        let json = dir.join(&format!("{file}.json"));
        let js = json.display().to_string();
        let r = dbsweep_in(
            dir.path(),
            &[
                "smack",
                &stock_file(file),
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
        check_stock_run(&r, client, 5, 30, expect);
        check_json(&json, 5, 30, 2, writes);
    }
}

#[test]
fn stock_files_run_unmodified_on_mariadb() {
    stock_files_on_server("mariadb", "mysql");
}

#[test]
fn stock_files_run_unmodified_on_postgres() {
    stock_files_on_server("postgres", "pg");
}
