//! Tests of `oltp.rs` (kept apart so the module itself stays short).

use super::*;
use crate::workload::sysbench::testutil::{
    assert_all, build, client, drive, run_txn, try_build, Counts, TestDb,
};

#[test]
fn read_write_counts() {
    let c = drive(
        "oltp_read_write",
        &[("table-size", "100"), ("tables", "2")],
        20,
    );
    assert_all(&c, Counts::new(14, 4, 2));
}

#[test]
fn read_write_skip_trx_and_no_ranges() {
    let c = drive(
        "oltp_read_write",
        &[("table-size", "100"), ("skip-trx", "on")],
        20,
    );
    assert_all(&c, Counts::new(14, 4, 0));
    let c = drive(
        "oltp_read_write",
        &[("table-size", "100"), ("range-selects", "off")],
        20,
    );
    assert_all(&c, Counts::new(10, 4, 2));
}

#[test]
fn read_only_counts() {
    let c = drive(
        "oltp_read_only",
        &[("table-size", "100"), ("tables", "3")],
        20,
    );
    assert_all(&c, Counts::new(14, 0, 2));
    let c = drive(
        "oltp_read_only",
        &[
            ("table-size", "100"),
            ("range-selects", "off"),
            ("skip-trx", "on"),
        ],
        20,
    );
    assert_all(&c, Counts::new(10, 0, 0));
}

#[test]
fn write_only_counts() {
    let c = drive("oltp_write_only", &[("table-size", "100")], 20);
    assert_all(&c, Counts::new(0, 4, 2));
    let c = drive(
        "oltp_write_only",
        &[
            ("table-size", "100"),
            ("delete-inserts", "3"),
            ("skip-trx", "on"),
        ],
        20,
    );
    assert_all(&c, Counts::new(0, 8, 0));
}

#[test]
fn single_statement_workloads() {
    let size = [("table-size", "100")];
    assert_all(&drive("oltp_point_select", &size, 20), Counts::new(1, 0, 0));
    assert_all(&drive("oltp_update_index", &size, 20), Counts::new(0, 1, 0));
    assert_all(
        &drive("oltp_update_non_index", &size, 20),
        Counts::new(0, 1, 0),
    );
    assert_all(&drive("oltp_insert", &size, 20), Counts::new(0, 1, 0));
    let c = drive(
        "oltp_insert",
        &[("table-size", "100"), ("auto-inc", "off")],
        20,
    );
    assert_all(&c, Counts::new(0, 1, 0));
    let c = drive(
        "oltp_update_index",
        &[("table-size", "100"), ("index-updates", "3")],
        20,
    );
    assert_all(&c, Counts::new(0, 3, 0));
}

#[test]
fn simple_counts() {
    let c = drive("oltp_simple", &[("table-size", "100"), ("tables", "2")], 20);
    assert_all(&c, Counts::new(1, 1, 2));
    let c = drive(
        "oltp_simple",
        &[("table-size", "100"), ("skip-trx", "on")],
        20,
    );
    assert_all(&c, Counts::new(1, 1, 0));
}

#[test]
fn simple_statement_text() {
    let w = build("oltp_simple", &[("tables", "2")]);
    let sql: Vec<_> = w.statements().iter().map(|s| s.sql.as_str()).collect();
    assert_eq!(
        sql,
        [
            "SELECT id, k, c, pad FROM sbtest1 WHERE id=?",
            "SELECT id, k, c, pad FROM sbtest2 WHERE id=?",
            "UPDATE sbtest1 SET k=k+1 WHERE id=?",
            "UPDATE sbtest2 SET k=k+1 WHERE id=?",
        ]
    );
}

#[test]
fn postgres_placeholders() {
    let given = vec![("tables".to_string(), "1".to_string())];
    let w = crate::workload::build(
        "oltp_write_only",
        &given,
        Dialect::Postgres,
        crate::workload::sysbench::testutil::rand_config(1),
    )
    .unwrap();
    let sql: Vec<_> = w.statements().iter().map(|s| s.sql.as_str()).collect();
    assert_eq!(
        sql,
        [
            "UPDATE sbtest1 SET k=k+1 WHERE id=$1",
            "UPDATE sbtest1 SET c=$1 WHERE id=$2",
            "DELETE FROM sbtest1 WHERE id=$1",
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES ($1, $2, $3, $4)",
        ]
    );
}

#[test]
fn ranges_span_range_size() {
    let w = build(
        "oltp_read_only",
        &[("range-size", "7"), ("point-selects", "0")],
    );
    let mut s = w.client(0, 1, Rng::new(3));
    s.start();
    let mut ops = 0;
    while let Some(op) = s.next() {
        if let Op::Exec(_, p) = op {
            let (Value::Int(a), Value::Int(b)) = (&p[0], &p[1]) else {
                panic!("{p:?}")
            };
            assert_eq!(b - a, 6);
            assert!((1..=10_000).contains(a));
        }
        ops += 1;
    }
    assert_eq!(ops, 6);
}

#[test]
fn delete_drains_the_table() {
    let db = TestDb::new();
    let w = build("oltp_delete", &[("table-size", "100")]);
    db.prepare(w.as_ref(), 1).unwrap();
    let mut conn = db.connect();
    assert_eq!(conn.count_rows("sbtest1").unwrap(), 100);
    let mut s = client(w.as_ref(), &mut conn, 0, 1);
    let mut writes = 0;
    for _ in 0..50 {
        let c = run_txn(s.as_mut(), &mut conn);
        assert_eq!(c.reads, 0);
        assert_eq!(c.writes + c.other, 1);
        writes += c.writes;
    }
    let left = conn.count_rows("sbtest1").unwrap();
    assert!(left < 100);
    assert_eq!(left, 100 - u64::from(writes));
}

#[test]
fn insert_grows_the_table_by_one_row_per_transaction() {
    for auto_inc in ["on", "off"] {
        let db = TestDb::new();
        let w = build(
            "oltp_insert",
            &[
                ("table-size", "100"),
                ("tables", "2"),
                ("auto-inc", auto_inc),
            ],
        );
        db.prepare(w.as_ref(), 2).unwrap();
        let mut conn = db.connect();
        w.check_prepared(&mut conn).unwrap();
        let before = conn.count_rows("sbtest1").unwrap() + conn.count_rows("sbtest2").unwrap();
        // As sysbench: client-generated ids start from empty tables.
        assert_eq!(before, if auto_inc == "on" { 200 } else { 0 });
        let mut s = client(w.as_ref(), &mut conn, 0, 1);
        for _ in 0..30 {
            run_txn(s.as_mut(), &mut conn);
        }
        let after = conn.count_rows("sbtest1").unwrap() + conn.count_rows("sbtest2").unwrap();
        assert_eq!(after - before, 30, "auto-inc={auto_inc}");
    }
}

#[test]
fn read_write_keeps_row_count() {
    let db = TestDb::new();
    let w = build(
        "oltp_read_write",
        &[("table-size", "50"), ("delete-inserts", "4")],
    );
    db.prepare(w.as_ref(), 1).unwrap();
    let mut conn = db.connect();
    let mut s = client(w.as_ref(), &mut conn, 0, 1);
    for _ in 0..20 {
        run_txn(s.as_mut(), &mut conn);
    }
    assert_eq!(conn.count_rows("sbtest1").unwrap(), 50);
}

#[test]
fn prepare_loads_and_indexes_every_table() {
    let db = TestDb::new();
    let w = build("oltp_read_only", &[("table-size", "300"), ("tables", "3")]);
    db.prepare(w.as_ref(), 4).unwrap();
    let mut conn = db.connect();
    for t in ["sbtest1", "sbtest2", "sbtest3"] {
        assert_eq!(conn.count_rows(t).unwrap(), 300);
    }
    let o = conn
        .execute_sql("SELECT name FROM sqlite_master WHERE type='index' AND name LIKE 'k_%'")
        .unwrap();
    assert_eq!(o.rows, 3);
    // Ids are exactly 1..=300.
    let o = conn
        .execute_sql("SELECT 1 FROM sbtest2 WHERE id BETWEEN 1 AND 300")
        .unwrap();
    assert_eq!(o.rows, 300);
}

#[test]
fn prepare_twice_fails_clearly_and_leaves_the_data() {
    let db = TestDb::new();
    let w = build("oltp_read_write", &[("table-size", "20"), ("tables", "2")]);
    db.prepare(w.as_ref(), 1).unwrap();
    let err = db.prepare(w.as_ref(), 1).unwrap_err();
    assert!(err.downcast_ref::<crate::UsageError>().is_some());
    let msg = err.to_string();
    assert!(msg.contains("table sbtest1 already exists"), "{msg}");
    assert!(msg.contains("dbsweep cleanup oltp_read_write"), "{msg}");
    let mut conn = db.connect();
    assert_eq!(conn.count_rows("sbtest2").unwrap(), 20);
}

#[test]
fn check_before_prepare_and_cleanup() {
    let db = TestDb::new();
    let w = build("oltp_read_only", &[("table-size", "20"), ("tables", "2")]);
    let mut conn = db.connect();
    let err = w.check_prepared(&mut conn).unwrap_err();
    assert!(err.downcast_ref::<crate::UsageError>().is_some());
    let msg = err.to_string();
    assert!(msg.contains("table sbtest1 does not exist"), "{msg}");
    assert!(msg.contains("dbsweep prepare oltp_read_only"), "{msg}");

    db.prepare(w.as_ref(), 2).unwrap();
    w.check_prepared(&mut conn).unwrap();
    w.cleanup(&mut conn).unwrap();
    assert!(!conn.table_exists("sbtest1").unwrap());
    assert!(!conn.table_exists("sbtest2").unwrap());
    // Cleaning up what is not there is fine.
    w.cleanup(&mut conn).unwrap();
}

#[test]
fn check_rejects_empty_tables_for_readers_only() {
    let db = TestDb::new();
    let mut conn = db.connect();
    conn.execute_sql("CREATE TABLE sbtest1(id INTEGER, k INTEGER, c TEXT, pad TEXT)")
        .unwrap();
    let r = build("oltp_point_select", &[]);
    let msg = r.check_prepared(&mut conn).unwrap_err().to_string();
    assert!(msg.contains("sbtest1 is empty"), "{msg}");
    build("oltp_insert", &[]).check_prepared(&mut conn).unwrap();
}

#[test]
fn empty_transactions_and_bad_sizes_are_usage_errors() {
    let e = try_build(
        "oltp_write_only",
        &[
            ("index-updates", "0"),
            ("non-index-updates", "0"),
            ("delete-inserts", "0"),
        ],
    )
    .err()
    .unwrap();
    assert!(e.downcast_ref::<crate::UsageError>().is_some());
    assert!(try_build("oltp_read_only", &[("tables", "0")]).is_err());
    assert!(try_build("oltp_read_only", &[("table-size", "0")]).is_err());
    let e = try_build("oltp_insert", &[("secondary", "on")])
        .err()
        .unwrap();
    assert!(e.to_string().contains("--auto-inc=off"), "{e}");
}

#[test]
fn secondary_index_layout_works_on_sqlite() {
    let c = drive(
        "oltp_read_write",
        &[
            ("table-size", "100"),
            ("secondary", "on"),
            ("create-secondary", "off"),
        ],
        10,
    );
    assert_all(&c, Counts::new(14, 4, 2));
}
