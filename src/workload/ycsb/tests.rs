use super::keys::KeyNames;
use super::*;
use crate::driver::sqlite::SqliteConnection;
use crate::driver::Value;
use crate::workload::sysbench::testutil::{client, run_txn, try_build, TestDb};
use crate::workload::Op;

fn build(opts: &[(&str, &str)]) -> Box<dyn Workload> {
    try_build("ycsb", opts).unwrap()
}

fn error(opts: &[(&str, &str)]) -> String {
    let e = try_build("ycsb", opts).err().expect("refused");
    assert!(e.downcast_ref::<crate::UsageError>().is_some(), "{e}");
    e.to_string()
}

fn value<'a>(w: &'a dyn Workload, name: &str) -> &'a str {
    w.options().iter().find(|(k, _)| *k == name).unwrap().1
}

#[test]
fn each_letter_has_ycsbs_mix_and_distribution() {
    let types = |l: &str| -> Vec<(&'static str, f64)> {
        build(&[("workload", l)])
            .transaction_types()
            .iter()
            .map(|t| (t.name, t.expected_pct.unwrap()))
            .collect()
    };
    assert_eq!(types("a"), [("READ", 50.0), ("UPDATE", 50.0)]);
    assert_eq!(types("b"), [("READ", 95.0), ("UPDATE", 5.0)]);
    assert_eq!(types("c"), [("READ", 100.0)]);
    assert_eq!(types("D"), [("READ", 95.0), ("INSERT", 5.0)]);
    assert_eq!(types("e"), [("INSERT", 5.0), ("SCAN", 95.0)]);
    assert_eq!(types("f"), [("READ", 50.0), ("READ-MODIFY-WRITE", 50.0)]);
    let d = build(&[("workload", "d")]);
    assert_eq!(value(d.as_ref(), "requestdistribution"), "latest");
    assert_eq!(value(d.as_ref(), "workload"), "d");
    let e = build(&[("workload", "e")]);
    assert_eq!(value(e.as_ref(), "maxscanlength"), "100");
    assert_eq!(value(e.as_ref(), "requestdistribution"), "zipfian");
    // A given share replaces the letter's; the record keeps both resolved.
    let w = build(&[
        ("workload", "a"),
        ("readproportion", "0.9"),
        ("updateproportion", "0.1"),
    ]);
    assert_eq!(value(w.as_ref(), "updateproportion"), "0.1");
    assert_eq!(value(w.as_ref(), "scanproportion"), "0");
}

#[test]
fn statements_are_the_jdbc_bindings() {
    let sql = |opts: &[(&str, &str)]| -> Vec<String> {
        build(opts)
            .statements()
            .iter()
            .map(|s| format!("{}: {}", s.kind, s.sql))
            .collect()
    };
    let c = sql(&[("workload", "c")]);
    assert_eq!(c, ["read: SELECT * FROM usertable WHERE ycsb_key = ?"]);
    let e = sql(&[("workload", "e"), ("fieldcount", "2")]);
    assert_eq!(
        e,
        [
            "insert: INSERT INTO usertable (field0, field1, ycsb_key) VALUES (?, ?, ?)",
            "scan: SELECT * FROM usertable WHERE ycsb_key >= ? ORDER BY ycsb_key LIMIT ?",
        ]
    );
    let a = sql(&[("fieldcount", "2"), ("readallfields", "off")]);
    assert_eq!(
        a,
        [
            "read: SELECT ycsb_key, field0 FROM usertable WHERE ycsb_key = ?",
            "read: SELECT ycsb_key, field1 FROM usertable WHERE ycsb_key = ?",
            "update: UPDATE usertable SET field0 = ? WHERE ycsb_key = ?",
            "update: UPDATE usertable SET field1 = ? WHERE ycsb_key = ?",
        ]
    );
    let pg = crate::workload::build(
        "ycsb",
        &[("workload".into(), "e".into())],
        crate::driver::Dialect::Postgres,
        crate::workload::sysbench::testutil::rand_config(1),
    )
    .unwrap();
    assert_eq!(
        pg.statements()[1].sql,
        "SELECT * FROM usertable WHERE ycsb_key >= $1 ORDER BY ycsb_key LIMIT $2"
    );
    let f = sql(&[
        ("workload", "f"),
        ("fieldcount", "2"),
        ("writeallfields", "on"),
    ]);
    assert_eq!(
        f[1],
        "update: UPDATE usertable SET field0 = ?, field1 = ? WHERE ycsb_key = ?"
    );
}

#[test]
fn bad_options_are_refused_with_the_fix() {
    assert!(error(&[("workload", "g")]).contains("a, b, c, d, e and f"));
    let sum = error(&[("workload", "a"), ("readproportion", "0.9")]);
    assert!(sum.contains("sum to 1.4"), "{sum}");
    assert!(sum.contains("updateproportion 0.5"), "{sum}");
    assert!(error(&[("readproportion", "x")]).contains("a share from 0 to 1"));
    assert!(error(&[("readproportion", "1.5")]).contains("a share from 0 to 1"));
    assert!(error(&[("requestdistribution", "pareto")]).contains("zipfian, latest"));
    assert!(error(&[("minscanlength", "200"), ("workload", "e")]).contains("--maxscanlength (100)"));
    assert!(error(&[("insertorder", "random")]).contains("hashed or ordered"));
    assert!(error(&[("recordcount", "0")]).contains("at least 1"));
    assert!(error(&[("hotspotopnfraction", "2")]).contains("from 0 to 1"));
}

/// Prepares `opts` on a fresh SQLite database and returns it with the
/// workload, readied for a run.
fn prepared(opts: &[(&str, &str)]) -> (TestDb, Box<dyn Workload>, SqliteConnection) {
    let db = TestDb::new();
    let w = build(opts);
    db.prepare(w.as_ref(), 1).unwrap();
    let mut conn = db.connect();
    w.check_prepared(&mut conn).unwrap();
    w.ready(&mut conn, None).unwrap();
    (db, w, conn)
}

#[test]
fn the_load_writes_every_record_once_with_its_fields() {
    let (_db, _w, mut conn) = prepared(&[("recordcount", "500"), ("fieldcount", "3")]);
    assert_eq!(conn.count_rows("usertable").unwrap(), 500);
    let names = KeyNames {
        hashed: true,
        zero_padding: 1,
    };
    for k in [0, 17, 499] {
        let rows = conn
            .query_text(&format!(
                "SELECT field0, field2, length(field1) FROM usertable WHERE ycsb_key = '{}'",
                names.name(k)
            ))
            .unwrap();
        assert_eq!(rows.len(), 1, "record {k}");
        let row = &rows[0];
        assert_eq!(row[0].as_deref().unwrap().len(), 100);
        assert!(row[1]
            .as_deref()
            .unwrap()
            .bytes()
            .all(|b| (b' '..=b'~').contains(&b)));
        assert_eq!(row[2].as_deref(), Some("100"));
    }
}

#[test]
fn operations_follow_the_mix_and_inserts_extend_the_table() {
    let (_db, w, mut conn) = prepared(&[("workload", "d"), ("recordcount", "200")]);
    let mut s = client(w.as_ref(), &mut conn, 0, 1);
    let mut kinds = [0u32; 2];
    let n = 2000;
    for _ in 0..n {
        let c = run_txn(s.as_mut(), &mut conn);
        let k = s.kind().unwrap() as usize;
        kinds[k] += 1;
        assert_eq!(c.reads + c.writes, 1);
        s.end(true);
    }
    // 5 % inserts: 100 ± 5 standard deviations.
    assert!((50..150).contains(&kinds[1]), "{kinds:?}");
    assert_eq!(
        conn.count_rows("usertable").unwrap(),
        200 + u64::from(kinds[1])
    );
    drop(s);
    // The next run's inserts go on after the last one.
    w.ready(&mut conn, None).unwrap();
    let mut s = client(w.as_ref(), &mut conn, 0, 1);
    for _ in 0..400 {
        run_txn(s.as_mut(), &mut conn);
        s.end(true);
    }
}

#[test]
fn read_modify_write_reads_then_updates_the_same_record() {
    let (_db, w, mut conn) = prepared(&[("workload", "f"), ("recordcount", "100")]);
    let mut s = client(w.as_ref(), &mut conn, 0, 1);
    let mut rmw = 0;
    for _ in 0..200 {
        s.start();
        let mut keys = Vec::new();
        while let Some(op) = s.next() {
            let Op::Exec(_, p) = op else { panic!() };
            keys.push(p.last().cloned().unwrap());
        }
        if s.kind() == Some(1) {
            rmw += 1;
            assert_eq!(keys.len(), 2);
            assert_eq!(keys[0], keys[1]);
        } else {
            assert_eq!(keys.len(), 1);
        }
        s.end(true);
    }
    assert!(rmw > 50, "{rmw}");
}

#[test]
fn scans_ask_for_a_length_within_the_bounds() {
    let (_db, w, mut conn) = prepared(&[
        ("workload", "e"),
        ("recordcount", "300"),
        ("minscanlength", "5"),
        ("maxscanlength", "9"),
    ]);
    let mut s = client(w.as_ref(), &mut conn, 0, 1);
    let mut scans = 0;
    for _ in 0..300 {
        s.start();
        if let Some(Op::Exec(_, [Value::Text(k), Value::Int(len)])) = s.next() {
            assert!(k.starts_with("user"));
            assert!((5..=9).contains(len), "{len}");
            scans += 1;
        }
        s.end(true);
    }
    assert!(scans > 250, "{scans}");
    // And on the database: a scan returns its length of rows.
    let c = run_txn(s.as_mut(), &mut conn);
    assert_eq!(c.reads + c.writes, 1);
}

#[test]
fn a_table_prepared_smaller_is_refused_with_the_fix() {
    let (db, _w, _conn) = prepared(&[("recordcount", "100")]);
    let bigger = build(&[("recordcount", "200")]);
    let msg = bigger
        .check_prepared(&mut db.connect())
        .unwrap_err()
        .to_string();
    assert!(msg.contains("--recordcount 200"), "{msg}");
    let wider = build(&[("recordcount", "100"), ("fieldcount", "12")]);
    assert!(wider.check_prepared(&mut db.connect()).is_err());
}

#[test]
fn first_absent_finds_the_end_of_the_inserts() {
    let (db, w, mut conn) = prepared(&[("workload", "d"), ("recordcount", "50")]);
    let y = Ycsb::new(
        Config::resolve(
            &OptionValues::resolve(
                crate::workload::find("ycsb").unwrap(),
                &[("recordcount".into(), "50".into())],
            )
            .unwrap(),
        )
        .unwrap()
        .0,
        w.options().clone(),
        crate::driver::Dialect::Sqlite,
        crate::workload::sysbench::testutil::rand_config(42),
    );
    assert_eq!(y.first_absent(&mut conn, 50).unwrap(), 50);
    let names = y.config.names;
    for k in 50..87 {
        conn.execute_sql(&format!(
            "INSERT INTO usertable (ycsb_key) VALUES ('{}')",
            names.name(k)
        ))
        .unwrap();
    }
    assert_eq!(y.first_absent(&mut conn, 50).unwrap(), 87);
    drop(db);
}
