//! The `sbtestN` tables shared by the family: DDL per dialect, the
//! deterministic row generator, and prepare / cleanup / check.
//!
//! The table is sysbench 1.0.20's (`oltp_common.lua`, `create_table`):
//!
//! ```text
//! CREATE TABLE sbtestN(
//!   id <id type>,
//!   k INTEGER DEFAULT '0' NOT NULL,
//!   c CHAR(120) DEFAULT '' NOT NULL,
//!   pad CHAR(60) DEFAULT '' NOT NULL,
//!   PRIMARY KEY (id)            -- KEY xid (id) with --secondary
//! ) <engine> <create-table-options>
//! ```
//!
//! loaded with `--table-size` rows (id 1..N, `k` from `--rand-type` over
//! [1, N], `c` and `pad` from digit templates), then `CREATE INDEX k_N ON
//! sbtestN(k)` unless `--create-secondary=off`.

use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;

use crate::driver::{Connection, Dialect, Value};
use crate::rand::dist::Dist;
use crate::rand::Rng;
use crate::workload::{Connector, OptionValues, Progress, RandConfig};
use crate::UsageError;

/// Template of `c`: ten groups of 11 random digits joined by dashes (119
/// characters; the column is CHAR(120)).
pub const C_TEMPLATE: &str = "###########-###########-###########-###########-###########-\
                              ###########-###########-###########-###########-###########";

/// Template of `pad`: five groups of 11 random digits (59 characters; the
/// column is CHAR(60)).
pub const PAD_TEMPLATE: &str = "###########-###########-###########-###########-###########";

/// Rows generated between two progress updates: often enough for a smooth
/// bar, rarely enough that the shared counter costs nothing.
const PROGRESS_STEP: u64 = 1000;

/// Mixed into the seed of the data generator, so that the loaded data and a
/// client's draws never come from the same stream.
const LOAD_SALT: u64 = 0x6c6f_6164_0000_0000;

/// `sbtest{n}`, the name sysbench gives table number `n` (from 1).
pub fn table_name(n: u32) -> String {
    format!("sbtest{n}")
}

/// Renders statement text written with `?` placeholders for `dialect`:
/// unchanged for SQLite and MySQL, `$1, $2, …` for PostgreSQL.
pub fn render(dialect: Dialect, sql: &str) -> String {
    if dialect != Dialect::Postgres {
        return sql.to_string();
    }
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    for ch in sql.chars() {
        if ch == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(ch);
        }
    }
    out
}

/// Appends the non-empty ones of `engine` and `options` to a CREATE TABLE.
pub fn table_tail(mut sql: String, engine: &str, options: &str) -> String {
    for part in [engine, options.trim()] {
        if !part.is_empty() {
            sql.push(' ');
            sql.push_str(part);
        }
    }
    sql
}

/// An `anyhow` error carrying a [`UsageError`] (exit status 2).
pub fn usage(msg: String) -> anyhow::Error {
    UsageError(msg).into()
}

/// How the sbtest tables are laid out and filled, from the options every
/// table-creating member of the family shares.
#[derive(Debug, Clone)]
pub struct Schema {
    /// The workload's name, for the commands named in error messages.
    pub workload: &'static str,
    pub dialect: Dialect,
    /// Tables sbtest1..=sbtest{tables}.
    pub tables: u32,
    /// `--table-size`: the id range the clients draw from.
    pub table_size: u32,
    /// Rows `prepare` loads per table: `table_size`, except 0 for
    /// oltp_insert with `--auto-inc=off` (as sysbench: its generated ids
    /// could collide with preloaded ones).
    pub load_rows: u32,
    pub auto_inc: bool,
    /// The id index is a plain secondary index instead of the primary key.
    pub secondary: bool,
    /// Create the `k_N` index after loading.
    pub create_secondary: bool,
    /// Appended to CREATE TABLE.
    pub table_options: String,
    /// MySQL's storage engine.
    pub engine: String,
    /// Whether the workload takes `--tables`, for the hint in messages.
    pub takes_tables: bool,
    /// Seed and id distribution of the data (`k`).
    pub rand: RandConfig,
}

impl Schema {
    /// Reads the common options; `tables` is `None` for workloads without a
    /// `--tables` option (they use sbtest1 only).
    pub fn from_options(
        workload: &'static str,
        o: &OptionValues,
        dialect: Dialect,
        rand: RandConfig,
        tables: Option<u32>,
    ) -> anyhow::Result<Schema> {
        let table_size = o.u32("table-size");
        if table_size == 0 {
            return Err(usage(format!(
                "--table-size must be at least 1 for {workload}: its statements pick rows from 1..table-size"
            )));
        }
        if tables == Some(0) {
            return Err(usage("--tables must be at least 1".to_string()));
        }
        Ok(Schema {
            workload,
            dialect,
            tables: tables.unwrap_or(1),
            table_size,
            load_rows: table_size,
            auto_inc: o.bool("auto-inc"),
            secondary: o.bool("secondary"),
            create_secondary: o.bool("create-secondary"),
            table_options: o.str("create-table-options").to_string(),
            engine: o.str("mysql-storage-engine").to_string(),
            takes_tables: tables.is_some(),
            rand,
        })
    }

    /// The names of every table, in order.
    pub fn table_names(&self) -> Vec<String> {
        (1..=self.tables).map(table_name).collect()
    }

    /// CREATE TABLE for table `n`.
    pub fn create_table_sql(&self, n: u32) -> String {
        let id_def = match (self.dialect, self.auto_inc) {
            (Dialect::Mysql, true) => "INTEGER NOT NULL AUTO_INCREMENT",
            (Dialect::Postgres, true) => "SERIAL",
            // SQLite: a column declared exactly INTEGER with a one-column
            // PRIMARY KEY constraint is the rowid, which the database assigns
            // when an INSERT omits it (max(rowid) + 1). That is auto-increment
            // without AUTOINCREMENT, whose extra sqlite_sequence write per
            // insert would only add a never-reuse guarantee that no workload
            // here depends on.
            _ => "INTEGER NOT NULL",
        };
        let id_index = match (self.secondary, self.dialect) {
            (false, _) => ",\n  PRIMARY KEY (id)",
            (true, Dialect::Mysql) => ",\n  KEY xid (id)",
            // PostgreSQL and SQLite have no inline KEY clause: the index is
            // created after loading (see `after_load_sql`).
            (true, _) => "",
        };
        let engine = match self.dialect {
            Dialect::Mysql => format!("/*! ENGINE = {} */", self.engine),
            _ => String::new(),
        };
        let body = format!(
            "CREATE TABLE sbtest{n}(\n  id {id_def},\n  k INTEGER DEFAULT '0' NOT NULL,\n  \
             c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL{id_index}\n)"
        );
        table_tail(body, &engine, &self.table_options)
    }

    /// Statements to run on table `n` once its rows are in.
    pub fn after_load_sql(&self, n: u32) -> Vec<String> {
        let mut out = Vec::new();
        if self.secondary && self.dialect != Dialect::Mysql {
            out.push(format!("CREATE INDEX xid_{n} ON sbtest{n}(id)"));
        }
        if self.dialect == Dialect::Postgres && self.auto_inc {
            // Rows were loaded with explicit ids, which PostgreSQL's sequence
            // does not see; move it past them so that inserts without an id
            // get fresh ones (MySQL and SQLite do this by themselves).
            out.push(format!(
                "SELECT setval(pg_get_serial_sequence('sbtest{n}', 'id'), {}, false)",
                u64::from(self.load_rows) + 1
            ));
        }
        if self.create_secondary {
            out.push(format!("CREATE INDEX k_{n} ON sbtest{n}(k)"));
        }
        out
    }

    /// Creates and loads every table, in parallel across tables on up to
    /// `threads` connections (one for SQLite, which has a single writer:
    /// more connections would only wait on each other's locks). Refuses to
    /// start if any table exists, and drops what it created if it fails, so
    /// that nothing is left half-written.
    pub fn prepare(
        &self,
        connect: Connector<'_>,
        threads: usize,
        progress: &dyn Progress,
    ) -> anyhow::Result<()> {
        let mut first = connect().context("could not connect to prepare the tables")?;
        let names = self.table_names();
        ensure_absent(first.as_mut(), &names, self.workload, self.hint())?;

        let workers = match self.dialect {
            Dialect::Sqlite => 1,
            _ => threads.clamp(1, self.tables as usize),
        };
        let label = if self.tables == 1 {
            "sbtest1".to_string()
        } else {
            format!("sbtest1..{}", self.tables)
        };
        progress.start(&label, u64::from(self.tables) * u64::from(self.load_rows));
        let failed = AtomicBool::new(false);
        let result = std::thread::scope(|s| {
            let handles: Vec<_> = (0..workers)
                .map(|w| {
                    let failed = &failed;
                    s.spawn(move || -> anyhow::Result<()> {
                        let mut conn = connect().context("could not connect to load the tables")?;
                        let mut n = w as u32 + 1;
                        while n <= self.tables && !failed.load(Ordering::Relaxed) {
                            if let Err(e) = self.create_and_load(conn.as_mut(), n, progress) {
                                failed.store(true, Ordering::Relaxed);
                                return Err(e);
                            }
                            n += workers as u32;
                        }
                        Ok(())
                    })
                })
                .collect();
            let mut result = Ok(());
            for h in handles {
                let r = h
                    .join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a loader thread panicked")));
                if result.is_ok() {
                    result = r;
                }
            }
            result
        });
        progress.finish();
        if result.is_err() {
            // Best effort: the load error is what the user needs to see.
            let _ = drop_tables(first.as_mut(), &names);
        }
        result
    }

    /// Creates table `n`, loads its rows, then builds its indexes.
    fn create_and_load(
        &self,
        conn: &mut dyn Connection,
        n: u32,
        progress: &dyn Progress,
    ) -> anyhow::Result<()> {
        let table = table_name(n);
        conn.execute_sql(&self.create_table_sql(n))
            .with_context(|| format!("could not create table {table}"))?;
        let mut gen = RowGen::new(&self.rand, n, self.load_rows, self.table_size);
        let mut pending = 0u64;
        conn.bulk_load(&table, &["id", "k", "c", "pad"], &mut |row| {
            if !gen.next_row(row) {
                return false;
            }
            pending += 1;
            if pending == PROGRESS_STEP {
                progress.inc(pending);
                pending = 0;
            }
            true
        })
        .with_context(|| format!("could not load table {table}"))?;
        progress.inc(pending);
        for sql in self.after_load_sql(n) {
            conn.execute_sql(&sql)
                .with_context(|| format!("could not index table {table}: {sql}"))?;
        }
        Ok(())
    }

    /// Drops every table (`DROP TABLE IF EXISTS`).
    pub fn cleanup(&self, conn: &mut dyn Connection) -> anyhow::Result<()> {
        drop_tables(conn, &self.table_names())
    }

    /// Checks that every table exists and, if `need_rows`, has rows.
    pub fn check(&self, conn: &mut dyn Connection, need_rows: bool) -> anyhow::Result<()> {
        check_tables(
            conn,
            &self.table_names(),
            self.workload,
            self.hint(),
            need_rows,
        )
    }

    /// Which options must match between prepare and run, for messages.
    fn hint(&self) -> &'static str {
        if self.takes_tables {
            "with the same --db and --tables"
        } else {
            "with the same --db"
        }
    }
}

/// Generates one table's rows as sysbench's `create_table` does: id
/// 1..=rows in order, `k` from the configured distribution over
/// [1, table_size], `c` and `pad` from their templates. The stream depends
/// only on the run's seed and the table number, so a prepare is repeatable.
pub struct RowGen {
    rng: Rng,
    dist: Dist,
    /// The last id handed out.
    id: u32,
    rows: u32,
    table_size: u32,
}

impl RowGen {
    pub fn new(rand: &RandConfig, table: u32, rows: u32, table_size: u32) -> RowGen {
        RowGen {
            rng: Rng::new(rand.seed ^ LOAD_SALT ^ u64::from(table)),
            dist: Dist::new(rand.kind, rand.params),
            id: 0,
            rows,
            table_size,
        }
    }

    /// Appends the next row's (id, k, c, pad) to `row`; false once all rows
    /// have been produced.
    pub fn next_row(&mut self, row: &mut Vec<Value>) -> bool {
        if self.id == self.rows {
            return false;
        }
        self.id += 1;
        let k = self.dist.draw(&mut self.rng, 1, self.table_size);
        let mut c = String::with_capacity(C_TEMPLATE.len());
        self.rng.fill_template(C_TEMPLATE, &mut c);
        let mut pad = String::with_capacity(PAD_TEMPLATE.len());
        self.rng.fill_template(PAD_TEMPLATE, &mut pad);
        row.push(Value::Int(i64::from(self.id)));
        row.push(Value::Int(i64::from(k)));
        row.push(Value::Text(c));
        row.push(Value::Text(pad));
        true
    }
}

/// Fails, before anything is created, if any of `names` exists.
pub fn ensure_absent(
    conn: &mut dyn Connection,
    names: &[String],
    workload: &str,
    hint: &str,
) -> anyhow::Result<()> {
    for t in names {
        if conn.table_exists(t)? {
            return Err(usage(format!(
                "table {t} already exists: run `dbsweep cleanup {workload}` first ({hint}), \
                 or run the benchmark on the existing data as it is"
            )));
        }
    }
    Ok(())
}

/// `DROP TABLE IF EXISTS` each of `names`.
pub fn drop_tables(conn: &mut dyn Connection, names: &[String]) -> anyhow::Result<()> {
    for t in names {
        conn.execute_sql(&format!("DROP TABLE IF EXISTS {t}"))
            .with_context(|| format!("could not drop table {t}"))?;
    }
    Ok(())
}

/// Checks that each of `names` exists and, if `need_rows`, is not empty.
/// Emptiness is probed with `LIMIT 1` rather than a count, which on a large
/// InnoDB table would scan an index.
pub fn check_tables(
    conn: &mut dyn Connection,
    names: &[String],
    workload: &str,
    hint: &str,
    need_rows: bool,
) -> anyhow::Result<()> {
    for t in names {
        if !conn.table_exists(t)? {
            return Err(usage(format!(
                "table {t} does not exist: run `dbsweep prepare {workload}` first ({hint})"
            )));
        }
        if need_rows
            && conn
                .execute_sql(&format!("SELECT 1 FROM {t} LIMIT 1"))?
                .rows
                == 0
        {
            return Err(usage(format!(
                "table {t} is empty: run `dbsweep cleanup {workload}` and then \
                 `dbsweep prepare {workload}` ({hint})"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
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
}
