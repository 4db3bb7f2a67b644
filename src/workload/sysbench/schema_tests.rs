//! Tests of `schema.rs` (kept apart so the module itself stays short).

use super::*;
use crate::workload::sysbench::testutil::{rand_config, sqlite};

fn is_digit_groups(s: &str, groups: usize) {
    let parts: Vec<&str> = s.split('-').collect();
    assert_eq!(parts.len(), groups, "{s}");
    for p in parts {
        assert_eq!(p.len(), 11, "{s}");
        assert!(p.bytes().all(|b| b.is_ascii_digit()), "{s}");
    }
}

#[test]
fn templates_have_sysbench_lengths() {
    assert_eq!(C_TEMPLATE.len(), 119);
    assert_eq!(PAD_TEMPLATE.len(), 59);
}

#[test]
fn generated_rows_match_sysbench_shape() {
    let mut gen = RowGen::new(&rand_config(7), 1, 50, 50);
    let mut row = Vec::new();
    let mut n = 0;
    while gen.next_row(&mut row) {
        n += 1;
        assert_eq!(row[0], Value::Int(n));
        let Value::Int(k) = row[1] else { panic!() };
        assert!((1..=50).contains(&k));
        let (Value::Text(c), Value::Text(pad)) = (&row[2], &row[3]) else {
            panic!()
        };
        assert_eq!(c.len(), 119);
        assert_eq!(pad.len(), 59);
        is_digit_groups(c, 10);
        is_digit_groups(pad, 5);
        row.clear();
    }
    assert_eq!(n, 50);
}

#[test]
fn generation_is_deterministic_per_seed_and_table() {
    let rows = |seed, table| {
        let mut gen = RowGen::new(&rand_config(seed), table, 20, 100);
        let mut out = Vec::new();
        while gen.next_row(&mut out) {}
        out
    };
    assert_eq!(rows(1, 1), rows(1, 1));
    assert_ne!(rows(1, 1), rows(1, 2));
    assert_ne!(rows(1, 1), rows(2, 1));
}

#[test]
fn placeholders_per_dialect() {
    let sql = "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?";
    assert_eq!(render(Dialect::Sqlite, sql), sql);
    assert_eq!(render(Dialect::Mysql, sql), sql);
    assert_eq!(
        render(Dialect::Postgres, sql),
        "SELECT c FROM sbtest1 WHERE id BETWEEN $1 AND $2"
    );
}

fn schema(dialect: Dialect, auto_inc: bool, secondary: bool) -> Schema {
    Schema {
        workload: "oltp_read_write",
        dialect,
        tables: 2,
        offset: 0,
        table_size: 10,
        load_rows: 10,
        auto_inc,
        secondary,
        create_secondary: true,
        table_options: String::new(),
        engine: "innodb".to_string(),
        takes_tables: true,
        rand: rand_config(1),
    }
}

#[test]
fn ddl_per_dialect() {
    let my = schema(Dialect::Mysql, true, false).create_table_sql(3);
    assert_eq!(
        my,
        "CREATE TABLE sbtest3(\n  id INTEGER NOT NULL AUTO_INCREMENT,\n  \
         k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  \
         pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n) /*! ENGINE = innodb */"
    );
    let my2 = schema(Dialect::Mysql, false, true).create_table_sql(1);
    assert!(my2.contains("id INTEGER NOT NULL,") && my2.contains("KEY xid (id)"));

    let pg = schema(Dialect::Postgres, true, false);
    assert!(pg.create_table_sql(1).contains("id SERIAL,"));
    assert!(pg.create_table_sql(1).ends_with("PRIMARY KEY (id)\n)"));
    assert_eq!(
        pg.after_load_sql(1),
        [
            "SELECT setval(pg_get_serial_sequence('sbtest1', 'id'), 11, false)",
            "CREATE INDEX k_1 ON sbtest1(k)"
        ]
    );
    let pg2 = schema(Dialect::Postgres, false, true);
    assert!(!pg2.create_table_sql(1).contains("KEY"));
    assert_eq!(
        pg2.after_load_sql(1),
        [
            "CREATE INDEX xid_1 ON sbtest1(id)",
            "CREATE INDEX k_1 ON sbtest1(k)"
        ]
    );

    let mut lite = schema(Dialect::Sqlite, true, false);
    lite.table_options = "WITHOUT ROWID".to_string();
    assert!(lite
        .create_table_sql(1)
        .ends_with("PRIMARY KEY (id)\n) WITHOUT ROWID"));
    assert_eq!(lite.after_load_sql(2), ["CREATE INDEX k_2 ON sbtest2(k)"]);
}

#[test]
fn sqlite_assigns_ids_when_insert_omits_them() {
    let (_dir, mut conn) = sqlite();
    let s = schema(Dialect::Sqlite, true, false);
    conn.execute_sql(&s.create_table_sql(1)).unwrap();
    conn.execute_sql("INSERT INTO sbtest1 (id, k, c, pad) VALUES (5, 1, 'a', 'b')")
        .unwrap();
    conn.execute_sql("INSERT INTO sbtest1 (k, c, pad) VALUES (1, 'a', 'b')")
        .unwrap();
    let o = conn
        .execute_sql("SELECT id FROM sbtest1 WHERE id = 6")
        .unwrap();
    assert_eq!(o.rows, 1);
}

#[test]
fn digits_are_the_expansion_of_one_draw_per_group() {
    // The definition: each run of digits (up to eleven) starts from a
    // new draw, each digit is the integer part of ten times the
    // fraction left by the previous one.
    let reference = |rng: &mut Rng, template: &str| {
        let mut out = String::new();
        let (mut x, mut left) = (0u64, 0);
        for ch in template.chars() {
            if ch != '#' {
                out.push(ch);
                left = 0;
                continue;
            }
            if left == 0 {
                (x, left) = (rng.next_u64(), DIGITS_PER_DRAW);
            }
            let t = u128::from(x) * 10;
            out.push(char::from(b'0' + (t >> 64) as u8));
            (x, left) = (t as u64, left - 1);
        }
        out
    };
    let mut out = String::new();
    for (seed, template) in [
        (1, C_TEMPLATE),
        (2, PAD_TEMPLATE),
        (3, "#-##############################-x#"),
        (4, "no digits"),
    ] {
        let t = DigitTemplate::new(template);
        for n in 0..200 {
            let mut a = Rng::for_client(seed, n);
            let mut b = a.clone();
            t.fill(&mut a, &mut out);
            assert_eq!(out, reference(&mut b, template), "{template}");
            assert_eq!(a.next_u64(), b.next_u64(), "draws used");
        }
    }
    // Every digit shows up in every position.
    let mut seen = [[false; 10]; 11];
    let mut rng = Rng::new(9);
    let t = DigitTemplate::new("###########");
    for _ in 0..500 {
        t.fill(&mut rng, &mut out);
        for (i, b) in out.bytes().enumerate() {
            seen[i][usize::from(b - b'0')] = true;
        }
    }
    assert!(seen.iter().all(|p| p.iter().all(|&s| s)));
}

#[test]
fn any_id_range_generates_the_same_rows() {
    let rand = rand_config(5);
    let rows = |first, last| {
        let mut gen = RowGen::range(&rand, 2, first, last, 1000);
        let mut out = Vec::new();
        while gen.next_row(&mut out) {}
        out
    };
    let whole = rows(1, 1000);
    assert_eq!(whole.len(), 4000);
    let mut pieces = rows(1, 1);
    for (first, last) in [(2, 333), (334, 334), (335, 999), (1000, 1000)] {
        pieces.extend(rows(first, last));
    }
    assert_eq!(pieces, whole);
    assert!(rows(10, 9).is_empty());
    let mut gen = RowGen::new(&rand, 2, 1000, 1000);
    let mut out = Vec::new();
    while gen.next_row(&mut out) {}
    assert_eq!(out, whole);
    // The last ids of the id type end the range.
    let mut gen = RowGen::range(&rand, 1, u32::MAX - 1, u32::MAX, 10);
    let mut out = Vec::new();
    while gen.next_row(&mut out) {}
    assert_eq!(out[4], Value::Int(i64::from(u32::MAX)));
    assert_eq!(out.len(), 8);
}

#[test]
fn postgres_builds_the_primary_key_after_loading() {
    let pg = schema(Dialect::Postgres, true, false);
    let plan = pg.plan(2);
    assert!(!plan.create.contains("PRIMARY KEY"), "{}", plan.create);
    assert!(plan.create.contains("id SERIAL,"));
    assert_eq!(
        plan.indexes,
        [
            "CREATE UNIQUE INDEX sbtest2_pkey ON sbtest2(id)",
            "CREATE INDEX k_2 ON sbtest2(k)"
        ]
    );
    assert_eq!(
        plan.finish,
        [
            "ALTER TABLE sbtest2 ADD CONSTRAINT sbtest2_pkey PRIMARY KEY USING INDEX sbtest2_pkey",
            "SELECT setval(pg_get_serial_sequence('sbtest2', 'id'), 11, false)"
        ]
    );
    let mut pg2 = schema(Dialect::Postgres, false, true);
    pg2.create_secondary = false;
    let plan = pg2.plan(1);
    assert_eq!(plan.create, pg2.create_table_sql(1));
    assert_eq!(plan.indexes, ["CREATE INDEX xid_1 ON sbtest1(id)"]);
    assert!(plan.finish.is_empty());

    // MySQL and SQLite load the table sysbench creates.
    for d in [Dialect::Mysql, Dialect::Sqlite] {
        let s = schema(d, true, false);
        let plan = s.plan(3);
        assert_eq!(plan.create, s.create_table_sql(3));
        assert_eq!(plan.indexes, s.after_load_sql(3));
        assert!(plan.finish.is_empty());
    }
}

#[test]
fn sqlite_prepare_is_the_same_for_any_thread_count() {
    let dump = |threads| {
        let db = crate::workload::sysbench::testutil::TestDb::new();
        let w = crate::workload::sysbench::testutil::build(
            "oltp_read_only",
            &[("table-size", "500"), ("tables", "2")],
        );
        db.prepare(w.as_ref(), threads).unwrap();
        let conn = rusqlite::Connection::open(&db.path).unwrap();
        let mut st = conn
            .prepare("SELECT id, k, c, pad FROM sbtest2 ORDER BY id")
            .unwrap();
        let rows: Vec<(i64, i64, String, String)> = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        rows
    };
    let one = dump(1);
    assert_eq!(one.len(), 500);
    assert_eq!(one, dump(4));
}
