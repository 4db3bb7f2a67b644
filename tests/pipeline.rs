//! `--pipeline K` against a real PostgreSQL: requests sent ahead of their
//! answers, each its own Sync unit or one group, are answered in order,
//! each as it would be one at a time (in both statement modes, with
//! responses and requests larger than the sockets' buffers in flight both
//! ways); after an error inside a transaction none of the statements sent
//! behind it runs, and a group's rest answers "not run"; a pipelined run
//! records the same transactions and statements as one sending one at a
//! time, its statements overlapping in time; bad input is refused with the
//! fix.

mod util;

use dbsweep::driver::evented::{Evented, Progress, Request};
use dbsweep::driver::{Col, Connection, DbResult, ErrorKind, Fetch, Outcome, PsMode, Value};
use util::evented::{blocking, conn, evented, shape, wait};
use util::{dbsweep, read_json, Dir, Server};

/// Starts every request before reading any answer — each a Sync unit of
/// its own, or `grouped` into one — then reads the answers in order, each
/// with a `Fetch` of its own.
fn pipelined(
    e: &mut dyn Evented,
    reqs: &[Request<'_>],
    grouped: bool,
) -> Vec<(DbResult<Outcome>, Fetch)> {
    for &r in reqs {
        if grouped {
            e.start_ahead(r).unwrap();
        } else {
            e.start(r).unwrap();
        }
    }
    reqs.iter()
        .map(|_| {
            let mut f = Fetch::new(&[Col::Int, Col::Text], 3);
            loop {
                match e.advance(Some(&mut f)) {
                    Progress::Done(r) => return (r, f),
                    Progress::Wait(w) => wait(e.fd(), w),
                }
            }
        })
        .collect()
}

fn rows(from: i64, n: i64, width: usize) -> Vec<Value> {
    (from..from + n)
        .flat_map(|i| [Value::Int(i), Value::Text(format!("{i:0width$}"))])
        .collect()
}

fn statements(table: &str) -> Vec<String> {
    vec![
        format!("INSERT INTO {table} VALUES ($1, $2)"),
        format!("SELECT id, c FROM {table} WHERE id BETWEEN $1 AND $2 ORDER BY id"),
        format!("UPDATE {table} SET c = c || 'u' WHERE id <= $1"),
        "SELECT g, repeat('x', 100) FROM generate_series(1, $1) g".to_string(),
        "SELECT repeat('y', 1000000), 1 UNION ALL SELECT 'z', $1".to_string(),
    ]
}

fn table(c: &mut dyn Connection, name: &str) {
    c.execute_sql(&format!("DROP TABLE IF EXISTS {name}"))
        .unwrap();
    c.execute_sql(&format!("CREATE TABLE {name} (id int PRIMARY KEY, c text)"))
        .unwrap();
}

#[test]
fn requests_sent_ahead_are_answered_in_order_as_one_at_a_time() {
    let s = Server::start("postgres", &[]);
    for (mode, t) in [(PsMode::Prepared, "pl_p"), (PsMode::Disable, "pl_t")] {
        let (a, b) = (format!("{t}_a"), format!("{t}_b"));
        let mut setup = conn(&s.url, mode);
        table(&mut *setup, &a);
        table(&mut *setup, &b);
        let mut c = conn(&s.url, mode);
        c.prepare_all(&statements(&a)).unwrap();
        let mut e = evented(&s.url, mode, &statements(&b));
        assert!(e.pipelines(), "a PostgreSQL connection sends ahead");
        // 3,000 rows of 700 bytes: a request of 2 MB, sent while 1 MB
        // answers come back, so that neither side can finish writing
        // before the other reads.
        let (batch, wide) = (rows(1, 15, 10), rows(1000, 3000, 700));
        let dup = [rows(16, 2, 10), rows(3, 1, 10), rows(18, 2, 10)].concat();
        let (two, many, big) = (
            [Value::Int(2), Value::Int(9)],
            [Value::Int(20_000)],
            [Value::Int(7)],
        );
        let (r100, r5) = (rows(100, 1, 10), rows(5, 1, 10));
        let script: Vec<Request> = vec![
            Request::Rollback,
            Request::Exec(0, &r100),
            Request::Begin { writes: true },
            Request::Batch(0, &batch, 15),
            Request::Batch(0, &[], 0),
            Request::Exec(2, &big),
            Request::Commit,
            Request::Fetch(1, &two),
            Request::Exec(4, &big),
            Request::Exec(4, &big),
            Request::Batch(0, &wide, 3000),
            Request::Exec(3, &many),
            Request::Exec(4, &big),
            Request::Begin { writes: true },
            Request::Batch(0, &dup, 5),
            Request::Rollback,
            Request::Exec(0, &r5),
            Request::Fetch(1, &two),
        ];
        // Each a unit of its own, all of them; then one group of all but
        // the duplicate and what follows it (after an error a group's rest
        // does not run, unlike a Sync unit's: the next test).
        for (grouped, n) in [(false, script.len()), (true, 14)] {
            let got = pipelined(&mut *e, &script[..n], grouped);
            for (i, (&req, (got, fb))) in script.iter().zip(&got).enumerate() {
                let mut fa = Fetch::new(&[Col::Int, Col::Text], 3);
                let want = blocking(&mut *c, req, Some(&mut fa));
                let what = format!("{mode:?} grouped {grouped}, request {i}: {req:?}");
                assert_eq!(shape(got), shape(&want), "{what}");
                if let Request::Fetch(..) = req {
                    assert_eq!(fb.values, fa.values, "{what}");
                    assert_eq!(fb.rows(), 3);
                    assert_eq!(fb.int(0, 0), Some(2));
                }
            }
            if !grouped {
                assert!(matches!(got[14].0, Err(ref e) if e.kind == ErrorKind::DuplicateKey));
                // The same rows again in the group: cleared first.
                for t in [&a, &b] {
                    setup.execute_sql(&format!("TRUNCATE {t}")).unwrap();
                }
            }
        }
        // What each left behind is the same, row for row.
        let mut check = conn(&s.url, PsMode::Prepared);
        let dump = |check: &mut Box<dyn Connection>, table: &str| {
            check
                .query_text(&format!("SELECT id, c FROM {table} ORDER BY id"))
                .unwrap()
        };
        let left = dump(&mut check, &a);
        assert_eq!(left.len(), 3016);
        assert_eq!(dump(&mut check, &b), left);
    }
}

#[test]
fn after_an_error_in_a_transaction_nothing_sent_behind_it_runs() {
    let s = Server::start("postgres", &[]);
    let mut setup = conn(&s.url, PsMode::Prepared);
    table(&mut *setup, "pl_e");
    let mut e = evented(&s.url, PsMode::Prepared, &statements("pl_e"));
    let (one, two, three) = (rows(1, 1, 1), rows(2, 1, 1), rows(3, 1, 1));
    let txn = [
        Request::Begin { writes: true },
        Request::Exec(0, &two),
        Request::Exec(0, &one), // the duplicate
        Request::Exec(0, &three),
        Request::Commit,
    ];
    for grouped in [false, true] {
        setup.execute_sql("TRUNCATE pl_e").unwrap();
        setup
            .execute_sql("INSERT INTO pl_e VALUES (1, 'one')")
            .unwrap();
        let got = pipelined(&mut *e, &txn, grouped);
        let shapes: Vec<String> = got.iter().map(|(r, _)| shape(r)).collect();
        assert!(got[0].0.is_ok() && got[1].0.is_ok(), "{shapes:?}");
        assert!(
            matches!(got[2].0, Err(ref e) if e.kind == ErrorKind::DuplicateKey),
            "{shapes:?}"
        );
        if grouped {
            // The server skipped the rest of the group: not run, COMMIT
            // included, and the transaction is left failed, to roll back.
            for (r, _) in &got[3..] {
                assert!(
                    matches!(r, Err(e) if e.message.contains("not run")),
                    "{shapes:?}"
                );
            }
            let (r, _) = pipelined(&mut *e, &[Request::Rollback], false).remove(0);
            r.unwrap();
        } else {
            // Each its own unit: refused by the aborted transaction, and
            // its COMMIT rolls back.
            assert!(
                matches!(got[3].0, Err(ref e) if e.code == "25P02"),
                "{shapes:?}"
            );
            assert!(got[4].0.is_ok(), "{shapes:?}");
        }
        let left = setup.query_text("SELECT id FROM pl_e ORDER BY id").unwrap();
        assert_eq!(
            left.len(),
            1,
            "grouped {grouped}: only the row from before: {left:?}"
        );
        // The connection goes on as new.
        let (r, _) = pipelined(&mut *e, &[Request::Exec(0, &three)], grouped).remove(0);
        assert_eq!(r.unwrap().affected, 1);
    }
}

/// `dbsweep run` with `args`, its record read back.
fn run(dir: &Dir, name: &str, args: &[&str]) -> serde_json::Value {
    let json = dir.join(name);
    let mut all: Vec<&str> = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", json.to_str().unwrap()]);
    dbsweep(&all).ok();
    read_json(&json)
}

fn num(doc: &serde_json::Value, path: &[&str]) -> f64 {
    let mut v = doc;
    for p in path {
        v = &v[*p];
    }
    v.as_f64()
        .unwrap_or_else(|| panic!("{path:?}: {}", doc["result"]))
}

/// Per statement kind: how many were timed.
fn kinds(doc: &serde_json::Value) -> Vec<(String, u64)> {
    doc["result"]["statements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let t = s["type"].as_str().unwrap().to_string();
            (t, s["latency"]["count"].as_u64().unwrap())
        })
        .collect()
}

/// The statements' time summed over the transactions' own: about 1 when
/// they ran one after another, more when they overlapped.
fn overlap(doc: &serde_json::Value) -> f64 {
    let statements: f64 = doc["result"]["statements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["latency"]["sum_us"].as_f64().unwrap())
        .sum();
    statements / num(doc, &["result", "latency", "sum_us"])
}

#[test]
fn a_pipelined_run_records_what_one_at_a_time_does_its_statements_overlapping() {
    let s = Server::start("postgres", &[]);
    dbsweep(&[
        "prepare",
        "oltp_read_only",
        "--db",
        &s.url,
        "--table-size",
        "10000",
    ])
    .ok();
    let dir = Dir::new();
    let base = [
        "oltp_read_only",
        "--db",
        &s.url,
        "--table-size",
        "10000",
        "--threads",
        "4",
        "--events",
        "400",
        "--rand-seed",
        "5",
    ];
    let one = run(
        &dir,
        "one.json",
        &[&base[..], &["--client-threads", "2"]].concat(),
    );
    let ahead = run(
        &dir,
        "ahead.json",
        &[&base[..], &["--pipeline", "8"]].concat(),
    );
    for doc in [&one, &ahead] {
        assert_eq!(num(doc, &["result", "transactions"]), 400.0);
        // sysbench's read-only mix: 16 queries a transaction (BEGIN and
        // COMMIT among them), each timed under its statement's kind.
        assert_eq!(num(doc, &["result", "queries", "total"]), 400.0 * 16.0);
    }
    assert_eq!(kinds(&ahead), kinds(&one));
    assert_eq!(ahead["run"]["pipeline"], 8, "{}", ahead["run"]);
    assert!(ahead["run"]["client_threads"].as_u64().unwrap() >= 1);
    assert!(one["run"].get("pipeline").is_none(), "{}", one["run"]);
    // One at a time, a transaction's statements fill its time; sent
    // ahead, each waits behind the ones before it, so their times add up
    // to more than the transaction's.
    let (o1, o8) = (overlap(&one), overlap(&ahead));
    assert!(o1 <= 1.0, "one at a time: {o1:.2}");
    assert!(o8 > 2.0, "eight ahead: {o8:.2}");
}

#[test]
fn contention_under_a_pipeline_counts_each_error_once() {
    let s = Server::start("postgres", &[]);
    let url = &s.url;
    dbsweep(&[
        "prepare",
        "oltp_read_write",
        "--db",
        url,
        "--table-size",
        "10",
    ])
    .ok();
    let dir = Dir::new();
    let doc = run(
        &dir,
        "c.json",
        &[
            "oltp_read_write",
            "--db",
            url,
            "--table-size",
            "10",
            "--threads",
            "8",
            "--events",
            "400",
            "--pipeline",
            "20",
        ],
    );
    assert_eq!(num(&doc, &["result", "transactions"]), 400.0);
    let errors = &doc["result"]["errors"];
    // The aborted transaction's refusals of the statements sent behind a
    // deadlock are not errors of their own.
    assert_eq!(errors["other"], 0, "{errors}");
    assert_eq!(errors["connection_lost"], 0, "{errors}");
    let all: f64 = ["deadlock", "lock_timeout", "serialization", "duplicate_key"]
        .iter()
        .map(|k| num(&doc, &["result", "errors", k]))
        .sum();
    assert!(
        all > 0.0,
        "10 rows under 8 clients: some conflict ({errors})"
    );
    assert_eq!(
        num(&doc, &["result", "retries"]),
        all,
        "every conflict retried once: {errors}"
    );
}

#[test]
fn bad_pipelines_are_refused_with_the_fix() {
    let dir = Dir::new();
    let sqlite = dir.sqlite_url("x.db");
    for (args, words) in [
        (
            vec!["--pipeline", "0", "--db", "postgres://u@127.0.0.1:1/x"],
            "--pipeline 0: give at least 1",
        ),
        (
            vec!["--pipeline", "4", "--db", "mysql://u@127.0.0.1:1/x"],
            "only PostgreSQL connections send statements ahead",
        ),
        (
            vec!["--pipeline", "4", "--db", &sqlite],
            "SQLite runs in this process",
        ),
    ] {
        let mut all = vec!["run", "oltp_point_select"];
        all.extend(args);
        let r = dbsweep(&all);
        r.expect_status(2);
        assert!(r.stderr.contains(words), "{all:?}: {}", r.stderr);
    }
}
