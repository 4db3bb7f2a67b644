//! Batches and fetched values on real servers, in both statement modes:
//! a batch of INSERTs and UPDATEs (MariaDB's bulk execution, PostgreSQL's
//! pipeline, one execution per row in text mode or on SQLite) writes
//! exactly what the same rows one by one write, adds up the affected
//! rows, takes rows a bulk command cannot (a NULL after a value), and
//! fails as a whole inside a transaction at a bad row; values fetched
//! through prepared statements (MariaDB's binary rows) read as those
//! fetched through the text protocol, type by type.

mod util;

use dbsweep::driver::{self, Col, Connection, Dialect, ErrorKind, Fetch, PsMode, Target, Value};
use util::{Dir, Server};

fn conn(url: &str, mode: PsMode) -> Box<dyn Connection> {
    let mut t = Target::parse(url).unwrap();
    t.set_ps_mode(mode);
    driver::connect(&t).unwrap()
}

fn text_rows(c: &mut dyn Connection, sql: &str) -> Vec<Vec<Option<String>>> {
    c.query_text(sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Rows of `(id, k, c)` with `c` NULL in row 3 and a quote in row 5.
fn batch_rows(from: i64, n: i64) -> Vec<Value> {
    let mut v = Vec::new();
    for id in from..from + n {
        v.push(Value::Int(id));
        v.push(Value::Int(id * 10));
        v.push(match id % 5 {
            3 => Value::Null,
            0 => Value::Text(format!("it's row {id}")),
            _ => Value::Text(format!("row {id}")),
        });
    }
    v
}

/// `sql` with PostgreSQL's numbered placeholders where it needs them.
fn marks(c: &dyn Connection, sql: String) -> String {
    if c.dialect() != Dialect::Postgres {
        return sql;
    }
    let mut n = 0;
    sql.chars()
        .map(|ch| match ch {
            '?' => {
                n += 1;
                format!("${n}")
            }
            _ => ch.to_string(),
        })
        .collect()
}

/// What a batch must do, on one connection in one mode.
fn batches(c: &mut dyn Connection, table: &str) {
    c.execute_sql(&format!("DROP TABLE IF EXISTS {table}"))
        .unwrap();
    c.execute_sql(&format!(
        "CREATE TABLE {table} (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(40))"
    ))
    .unwrap();
    let sql = [
        format!("INSERT INTO {table} (id, k, c) VALUES (?, ?, ?)"),
        format!("UPDATE {table} SET k = k + ? WHERE id = ?"),
        format!("SELECT COUNT(*), SUM(k) FROM {table}"),
    ];
    let sql: Vec<String> = sql.into_iter().map(|q| marks(c, q)).collect();
    c.prepare_all(&sql).unwrap();
    // 15 rows, with a NULL after values and a value after a NULL.
    let out = c.execute_batch(0, &batch_rows(1, 15), 15).unwrap();
    assert_eq!(out.affected, 15);
    assert!(!out.result_set);
    let got = text_rows(c, &format!("SELECT id, k, c FROM {table} ORDER BY id"));
    assert_eq!(got.len(), 15);
    for (i, r) in got.iter().enumerate() {
        let id = i as i64 + 1;
        let c_want = match id % 5 {
            3 => None,
            0 => Some(format!("it's row {id}")),
            _ => Some(format!("row {id}")),
        };
        assert_eq!(
            r,
            &vec![Some(id.to_string()), Some((id * 10).to_string()), c_want]
        );
    }
    // Updates: affected rows add up; a row that matches nothing adds 0.
    let upd: Vec<Value> = [(1, 2), (2, 4), (3, 99), (100, 1)]
        .iter()
        .flat_map(|&(add, id)| [Value::Int(add), Value::Int(id)])
        .collect();
    assert_eq!(c.execute_batch(1, &upd, 4).unwrap().affected, 3);
    assert_eq!(
        text_rows(
            c,
            &format!("SELECT k FROM {table} WHERE id IN (2, 4, 99) ORDER BY id")
        ),
        vec![vec![Some("21".to_string())], vec![Some("42".to_string())]]
    );
    // One row and no rows.
    assert_eq!(c.execute_batch(1, &upd[..2], 1).unwrap().affected, 1);
    assert_eq!(c.execute_batch(1, &[], 0).unwrap().affected, 0);
    // A row count that does not divide the parameters fails, as do (on
    // MariaDB, in both modes) rows of the wrong width; the connection goes
    // on.
    let e = c.execute_batch(1, &upd[..3], 2).unwrap_err();
    assert!(e.message.contains("batch of 2 rows"), "{e}");
    if c.dialect() == Dialect::Mysql {
        let e = c.execute_batch(1, &upd[..3], 1).unwrap_err();
        assert!(e.message.contains("takes 2 parameters"), "{e}");
    }
    // A duplicate key in the middle of a batch inside a transaction: the
    // error is the server's; the rollback leaves none of the batch.
    c.begin(true).unwrap();
    let mut dup = batch_rows(16, 3);
    dup.extend(batch_rows(5, 1));
    dup.extend(batch_rows(19, 2));
    let e = c.execute_batch(0, &dup, 6).unwrap_err();
    assert_eq!(e.kind, ErrorKind::DuplicateKey, "{e}");
    c.rollback().unwrap();
    let mut f = Fetch::new(&[Col::Int, Col::Int], 1);
    c.execute_fetch(2, &[], &mut f).unwrap();
    assert_eq!(f.int(0, 0), Some(15));
    // 10 × (1 + … + 15), plus the updates: 1 + 2 + 100, and 1 again.
    assert_eq!(f.int(0, 1), Some(1200 + 104));
    // And a committed batch in a transaction stays.
    c.begin(true).unwrap();
    c.execute_batch(0, &batch_rows(16, 5), 5).unwrap();
    c.commit().unwrap();
    c.execute_fetch(2, &[], &mut f).unwrap();
    assert_eq!(f.int(0, 0), Some(20));
    c.execute_sql(&format!("DROP TABLE {table}")).unwrap();
}

/// Fetches every column of `sql`'s row with each type through both
/// modes: what the prepared statement gives must be what the text
/// protocol gives.
fn fetch_both(url: &str, setup: &[&str], sql: &str, columns: usize) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for mode in [PsMode::Disable, PsMode::Prepared] {
        let mut c = conn(url, mode);
        for s in setup {
            c.execute_sql(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        }
        c.prepare_all(&[sql.to_string()]).unwrap();
        let mut got = Vec::new();
        for t in [Col::Int, Col::Float, Col::Text] {
            let mut f = Fetch::new(&vec![t; columns], 3);
            let o = c.execute_fetch(0, &[Value::Int(1)], &mut f).unwrap();
            assert!(o.result_set);
            assert_eq!(o.rows, 2, "{mode:?}: every row counted, {} kept", f.rows());
            assert_eq!(f.rows(), 2);
            got.extend(f.values);
        }
        out.push(got);
    }
    out
}

#[test]
fn batches_and_fetches_on_mariadb() {
    let s = Server::start("mariadb", &[]);
    for (mode, t) in [
        (PsMode::Prepared, "b_prepared"),
        (PsMode::Disable, "b_text"),
    ] {
        batches(&mut *conn(&s.url, mode), t);
    }
    let setup = [
        "DROP TABLE IF EXISTS typed",
        "CREATE TABLE typed (id INT PRIMARY KEY, ti TINYINT, us BIGINT UNSIGNED, \
         big BIGINT, d DECIMAL(12,2), fl FLOAT, db DOUBLE, dt DATETIME, dt3 DATETIME(3), \
         dd DATE, tm TIME(2), ts TIMESTAMP(6) NULL, vc VARCHAR(20), yr YEAR, nul INT)",
        "INSERT INTO typed VALUES \
         (1, -7, 18446744073709551615, -9007199254740993, -1234.50, 1.1, 0.1, \
          '2026-11-26 09:05:07', '2026-11-26 09:05:07.120', '2026-02-03', '-38:59:58.25', \
          '2026-11-26 09:05:07.000001', 'naïve ''q''', 2026, NULL), \
         (2, 127, 5, 9007199254740993, 0.05, -3.25e10, 1e300, \
          '0000-00-00 00:00:00', '1999-12-31 23:59:59.999', '1000-01-01', '00:00:00', \
          NULL, '', 1901, 0)",
    ];
    let sql = "SELECT id, ti, us, big, d, fl, db, dt, dt3, dd, tm, ts, vc, yr, nul, \
               id * 2, CAST(d AS CHAR) FROM typed WHERE id >= ? ORDER BY id";
    let [text, binary]: [Vec<Value>; 2] = fetch_both(&s.url, &setup, sql, 17).try_into().unwrap();
    assert_eq!(text.len(), binary.len());
    for (i, (a, b)) in text.iter().zip(&binary).enumerate() {
        let (row, col) = ((i / 17) % 2, i % 17);
        match (a, b) {
            // The text protocol rounds a DOUBLE to the server's digits:
            // the binary value is exact.
            (Value::Float(x), Value::Float(y)) if col == 6 => {
                assert!((x - y).abs() <= 1e-15 * x.abs(), "{x} vs {y}")
            }
            (Value::Text(x), Value::Text(y)) if col == 6 || col == 5 => {
                let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
                assert!((x - y).abs() <= 1e-6 * x.abs(), "{x} vs {y}")
            }
            _ => assert_eq!(a, b, "row {row} column {col}"),
        }
    }
    // Spot checks of what both read.
    assert_eq!(binary[0], Value::Int(1));
    assert_eq!(binary[1], Value::Int(-7));
    assert_eq!(binary[2], Value::Null, "past an i64");
    assert_eq!(binary[4], Value::Int(-1234));
    let texts = &binary[2 * 2 * 17..];
    assert_eq!(texts[2], Value::Text("18446744073709551615".into()));
    assert_eq!(texts[4], Value::Text("-1234.50".into()));
    assert_eq!(texts[8], Value::Text("2026-11-26 09:05:07.120".into()));
    assert_eq!(texts[10], Value::Text("-38:59:58.25".into()));
    assert_eq!(texts[11], Value::Text("2026-11-26 09:05:07.000001".into()));
    assert_eq!(texts[12], Value::Text("naïve 'q'".into()));
    assert_eq!(texts[17 + 7], Value::Text("0000-00-00 00:00:00".into()));
    assert_eq!(texts[17 + 11], Value::Null);
}

#[test]
fn batches_on_postgres() {
    let s = Server::start("postgres", &[]);
    for (mode, t) in [
        (PsMode::Prepared, "b_prepared"),
        (PsMode::Disable, "b_text"),
    ] {
        batches(&mut *conn(&s.url, mode), t);
    }
}

#[test]
fn batches_on_sqlite() {
    let d = Dir::new();
    batches(&mut *conn(&d.sqlite_url("b.db"), PsMode::Prepared), "b");
}
