//! `bulk_insert` (sysbench 1.0.20): clients append rows with multi-row
//! INSERTs, each into its own table.
//!
//! sysbench streams rows `(n, n)` (n = 1, 2, …) through its bulk-insert
//! buffer, one row per event. Here one event is one statement,
//! `INSERT INTO sbtestN VALUES (?, ?), …` with `--bulk-rows` rows, run in
//! autocommit as sysbench does, so throughput reads as statements per
//! second and rows per second is that times `--bulk-rows`.
//!
//! # Tables
//! `prepare` creates `--tables` empty tables `(id, k)`. Client `i` inserts
//! into table `(i % tables) + 1`, so with `--tables` at least the client
//! count every client has its own table, as in sysbench. The workload
//! cannot refuse fewer tables (it is not told the client count); clients
//! then share tables, each in its own id space (below), so nothing
//! collides and the run measures contended appends instead.
//!
//! # Ids
//! Client `i` writes ids `start + slot·2^40 + n` with `n` = 1, 2, … its row
//! counter (also the row's `k`, as sysbench's `(n, n)`), `slot = i / tables`
//! the client's rank among those sharing its table, and `start` the highest
//! id already in the table. So a first run on fresh tables writes exactly
//! sysbench's rows, and later runs append after earlier ones instead of
//! failing on duplicate keys (sysbench restarts from 1). `start` comes from
//! [`Workload::check_prepared`], which finds the table's highest id by
//! bisection on `SELECT id … WHERE id >= x LIMIT 1` (the driver reports row
//! counts, not values), and from the ids this workload instance has handed
//! out itself. Ids need 64 bits once slots are used, so `id` is BIGINT on
//! MySQL and PostgreSQL (SQLite's INTEGER is 64-bit already); sysbench
//! declares INTEGER.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use anyhow::Context as _;

use super::schema::{
    check_tables, drop_tables, ensure_absent, render, table_name, table_tail, usage,
};
use crate::driver::{Connection, DbResult, Dialect, Value};
use crate::rand::RandConfig;
use crate::rand::Rng;
use crate::util::progress::Progress;
use crate::workload::{ClientScript, Connector, Op, OptionValues, StatementDef, Workload};

/// Id space of one client among those sharing a table.
const SLOT: i64 = 1 << 40;

/// The most rows per statement: two parameters each must stay under
/// SQLite's 32766 bound parameters (PostgreSQL and MySQL allow 65535).
const MAX_ROWS: u32 = 16_000;

const NAME: &str = "bulk_insert";

/// What a table's hint in error messages says must match.
const HINT: &str = "with the same --db and --tables";

pub struct BulkInsert {
    options: OptionValues,
    dialect: Dialect,
    tables: u32,
    /// Number of the first table (`--table-offset` + 1).
    first: u32,
    rows: u32,
    table_options: String,
    engine: String,
    statements: Vec<StatementDef>,
    /// Highest id known to be in use in each table (index: table - first);
    /// raised by `check_prepared` and by every transaction.
    high: Arc<[AtomicI64]>,
}

pub fn build(
    _name: &'static str,
    o: &OptionValues,
    dialect: Dialect,
    _rand: RandConfig,
) -> anyhow::Result<Box<dyn Workload>> {
    Ok(Box::new(BulkInsert::new(o, dialect)?))
}

impl BulkInsert {
    fn new(o: &OptionValues, dialect: Dialect) -> anyhow::Result<BulkInsert> {
        let tables = o.u32("tables");
        if tables == 0 {
            return Err(usage("--tables must be at least 1".to_string()));
        }
        let rows = o.u32("bulk-rows");
        if !(1..=MAX_ROWS).contains(&rows) {
            return Err(usage(format!(
                "--bulk-rows must be between 1 and {MAX_ROWS} (two bound parameters per row)"
            )));
        }
        let values = vec!["(?, ?)"; rows as usize].join(", ");
        let first = o.u32("table-offset") + 1;
        let statements = (first..first + tables)
            .map(|n| StatementDef {
                kind: "bulk_insert".into(),
                sql: render(dialect, &format!("INSERT INTO sbtest{n} VALUES {values}")),
            })
            .collect();
        Ok(BulkInsert {
            options: o.clone(),
            dialect,
            tables,
            first,
            rows,
            table_options: o.str("create-table-options").to_string(),
            engine: o.str("mysql-storage-engine").to_string(),
            statements,
            high: (0..tables).map(|_| AtomicI64::new(0)).collect(),
        })
    }

    fn table_names(&self) -> Vec<String> {
        (self.first..self.first + self.tables)
            .map(table_name)
            .collect()
    }

    /// sysbench's bulk_insert table, with BIGINT ids where INTEGER is 32-bit.
    fn create_table_sql(&self, n: u32) -> String {
        let (id_type, engine) = match self.dialect {
            Dialect::Sqlite => ("INTEGER", String::new()),
            Dialect::Postgres => ("BIGINT", String::new()),
            Dialect::Mysql => ("BIGINT", format!("/*! ENGINE = {} */", self.engine)),
        };
        let body = format!(
            "CREATE TABLE sbtest{n} (\n  id {id_type} NOT NULL,\n  \
             k INTEGER DEFAULT '0' NOT NULL,\n  PRIMARY KEY (id)\n)"
        );
        table_tail(body, &engine, &self.table_options)
    }
}

/// The highest id in `table` (0 if none is positive), by a galloping
/// search over "is there an id >= x": about 2·log2(max) index probes.
fn max_id(conn: &mut dyn Connection, table: &str) -> DbResult<i64> {
    let any_from = |x: i64| -> DbResult<bool> {
        let sql = format!("SELECT id FROM {table} WHERE id >= {x} LIMIT 1");
        Ok(conn.execute_sql(&sql)?.rows > 0)
    };
    Ok(crate::stats::bisect::last_true(1, any_from)?.unwrap_or(0))
}

impl Workload for BulkInsert {
    fn name(&self) -> &'static str {
        NAME
    }

    fn statements(&self) -> &[StatementDef] {
        &self.statements
    }

    /// Creates the empty tables (no data to load, so one connection).
    fn prepare(
        &self,
        connect: Connector<'_>,
        _threads: usize,
        progress: &dyn Progress,
    ) -> anyhow::Result<()> {
        let mut conn = connect().context("could not connect to create the tables")?;
        let names = self.table_names();
        ensure_absent(conn.as_mut(), &names, NAME, HINT)?;
        progress.start(&names[0], 0);
        let mut result = Ok(());
        for n in self.first..self.first + self.tables {
            if let Err(e) = conn.execute_sql(&self.create_table_sql(n)) {
                result = Err(e).with_context(|| format!("could not create table sbtest{n}"));
                break;
            }
        }
        progress.finish();
        if result.is_err() {
            // Best effort; the creation error is what the user needs.
            let _ = drop_tables(conn.as_mut(), &names);
        }
        result
    }

    fn cleanup(&self, conn: &mut dyn Connection) -> anyhow::Result<()> {
        drop_tables(conn, &self.table_names())
    }

    /// Checks the tables exist and records the highest id in each, where
    /// the clients of the next run start.
    fn check_prepared(&self, conn: &mut dyn Connection) -> anyhow::Result<()> {
        let names = self.table_names();
        check_tables(conn, &names, NAME, HINT, false)?;
        for (t, name) in names.iter().enumerate() {
            let max = max_id(conn, name)
                .with_context(|| format!("could not find the highest id in {name}"))?;
            self.high[t].fetch_max(max, Ordering::Relaxed);
        }
        Ok(())
    }

    fn client(&self, id: usize, _clients: usize, _rng: Rng) -> Box<dyn ClientScript> {
        let table = id % self.tables as usize;
        let slot = (id / self.tables as usize) as i64;
        Box::new(BulkScript {
            stmt: table,
            first: self.high[table].load(Ordering::Relaxed) + slot * SLOT,
            count: 0,
            params: vec![Value::Int(0); 2 * self.rows as usize],
            high: self.high.clone(),
            done: false,
        })
    }

    fn options(&self) -> &OptionValues {
        &self.options
    }

    fn retry_also(&self) -> &'static [crate::driver::ErrorKind] {
        super::retry_also(self.dialect)
    }
}

struct BulkScript {
    /// Statement id, which is also the table index (0-based).
    stmt: usize,
    /// The client's ids are `first + n`.
    first: i64,
    /// Rows generated so far (sysbench's `cursize`).
    count: i64,
    params: Vec<Value>,
    high: Arc<[AtomicI64]>,
    /// This transaction's statement has been yielded.
    done: bool,
}

impl ClientScript for BulkScript {
    fn start(&mut self) {
        self.done = false;
        for row in self.params.chunks_exact_mut(2) {
            self.count += 1;
            row[0] = Value::Int(self.first + self.count);
            row[1] = Value::Int(self.count);
        }
        // Claimed before the statement runs: a later client of this
        // workload instance never reuses the ids, even if this one fails.
        self.high[self.stmt].fetch_max(self.first + self.count, Ordering::Relaxed);
    }

    fn next(&mut self) -> Option<Op<'_>> {
        if self.done {
            return None;
        }
        self.done = true;
        Some(Op::Exec(self.stmt, &self.params))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::sysbench::testutil::{
        assert_all, build, client, run_txn, try_build, Counts, TestDb,
    };

    #[test]
    fn each_transaction_is_one_multi_row_insert() {
        let db = TestDb::new();
        let w = build(NAME, &[("tables", "2"), ("bulk-rows", "50")]);
        assert_eq!(w.statements().len(), 2);
        assert!(w.statements()[1]
            .sql
            .starts_with("INSERT INTO sbtest2 VALUES (?, ?), (?, ?)"));
        db.prepare(w.as_ref(), 4).unwrap();
        let mut conn = db.connect();
        w.check_prepared(&mut conn).unwrap();
        let mut scripts: Vec<_> = (0..2)
            .map(|i| client(w.as_ref(), &mut conn, i, 2))
            .collect();
        let mut counts = Vec::new();
        for _ in 0..10 {
            for s in scripts.iter_mut() {
                counts.push(run_txn(s.as_mut(), &mut conn));
            }
        }
        assert_all(&counts, Counts::new(0, 1, 0));
        assert_eq!(conn.count_rows("sbtest1").unwrap(), 500);
        assert_eq!(conn.count_rows("sbtest2").unwrap(), 500);
        // sysbench's rows on fresh tables: (n, n) for n = 1..=500.
        let o = conn
            .execute_sql("SELECT 1 FROM sbtest1 WHERE id = k AND id BETWEEN 1 AND 500")
            .unwrap();
        assert_eq!(o.rows, 500);
    }

    #[test]
    fn later_runs_and_shared_tables_do_not_collide() {
        let db = TestDb::new();
        let opts = [("tables", "1"), ("bulk-rows", "10")];
        let w = build(NAME, &opts);
        db.prepare(w.as_ref(), 1).unwrap();
        let mut conn = db.connect();
        // Three clients share one table.
        w.check_prepared(&mut conn).unwrap();
        let mut s: Vec<_> = (0..3)
            .map(|i| client(w.as_ref(), &mut conn, i, 3))
            .collect();
        for _ in 0..3 {
            for c in s.iter_mut() {
                assert_eq!(run_txn(c.as_mut(), &mut conn), Counts::new(0, 1, 0));
            }
        }
        drop(s);
        // A new process (fresh workload instance) on the same data.
        let w2 = build(NAME, &opts);
        w2.check_prepared(&mut conn).unwrap();
        let mut c = client(w2.as_ref(), &mut conn, 0, 2);
        assert_eq!(run_txn(c.as_mut(), &mut conn), Counts::new(0, 1, 0));
        // And a second run of the same instance, without a new check.
        let mut c = client(w.as_ref(), &mut conn, 1, 2);
        assert_eq!(run_txn(c.as_mut(), &mut conn), Counts::new(0, 1, 0));
        assert_eq!(conn.count_rows("sbtest1").unwrap(), 110);
    }

    #[test]
    fn max_id_finds_the_highest_id() {
        let (_dir, mut conn) = crate::workload::sysbench::testutil::sqlite();
        conn.execute_sql("CREATE TABLE t (id INTEGER PRIMARY KEY)")
            .unwrap();
        assert_eq!(max_id(&mut conn, "t").unwrap(), 0);
        for (id, max) in [
            (1, 1),
            (7, 7),
            (1000, 1000),
            (1 << 41, 1 << 41),
            (i64::MAX, i64::MAX),
        ] {
            conn.execute_sql(&format!("INSERT INTO t VALUES ({id})"))
                .unwrap();
            assert_eq!(max_id(&mut conn, "t").unwrap(), max);
        }
    }

    #[test]
    fn prepare_cleanup_check() {
        let db = TestDb::new();
        let w = build(NAME, &[("tables", "3")]);
        let mut conn = db.connect();
        let msg = w.check_prepared(&mut conn).unwrap_err().to_string();
        assert!(msg.contains("dbsweep prepare bulk_insert"), "{msg}");
        db.prepare(w.as_ref(), 1).unwrap();
        assert!(conn.table_exists("sbtest3").unwrap());
        let msg = db.prepare(w.as_ref(), 1).unwrap_err().to_string();
        assert!(msg.contains("already exists"), "{msg}");
        w.cleanup(&mut conn).unwrap();
        assert!(!conn.table_exists("sbtest1").unwrap());
    }

    #[test]
    fn bad_options() {
        assert!(try_build(NAME, &[("bulk-rows", "0")]).is_err());
        assert!(try_build(NAME, &[("bulk-rows", "16001")]).is_err());
        assert!(try_build(NAME, &[("tables", "0")]).is_err());
    }

    #[test]
    fn ddl_per_dialect() {
        let info = crate::workload::find(NAME).unwrap();
        let given = [("bulk-rows".to_string(), "2".to_string())];
        let o = OptionValues::resolve(info, &given).unwrap();
        let ddl = |d| BulkInsert::new(&o, d).unwrap().create_table_sql(1);
        assert_eq!(
            ddl(Dialect::Mysql),
            "CREATE TABLE sbtest1 (\n  id BIGINT NOT NULL,\n  k INTEGER DEFAULT '0' NOT NULL,\n  \
             PRIMARY KEY (id)\n) /*! ENGINE = innodb */"
        );
        assert!(ddl(Dialect::Sqlite).contains("id INTEGER NOT NULL"));
        assert!(ddl(Dialect::Postgres).ends_with("PRIMARY KEY (id)\n)"));
        assert_eq!(
            BulkInsert::new(&o, Dialect::Postgres).unwrap().statements[0].sql,
            "INSERT INTO sbtest1 VALUES ($1, $2), ($3, $4)"
        );
    }
}
