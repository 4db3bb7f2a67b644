//! Seed 000's three tables: their DDL per dialect and their rows, each a
//! function of the seed, its table and its row number, generated in
//! ranges for the shared parallel loader.

use anyhow::Context as _;

use crate::driver::{Connection, Dialect, Value};
use crate::rand::{Rng, ALNUM};
use crate::util::civil::sql_datetime as datetime;
use crate::util::progress::Progress;
use crate::workload::loader::{self, check_tables, ensure_absent, usage, TablePlan};
use crate::workload::Connector;

/// The seed's table sizes at `--scale 1`.
pub(super) const MEMBER_ROWS: f64 = 10_000_000.0;
pub(super) const RECORD_ROWS: f64 = 1_000_000.0;
pub(super) const RESULT_ROWS: f64 = 1_000_000.0;

/// The table names, in load order.
pub(super) const TABLES: [&str; 3] = ["Member", "Record", "Result"];

/// Mixed into the seed of the data generator, so that the loaded data and a
/// client's draws never come from the same stream.
pub(super) const LOAD_SALT: u64 = 0x736d_6163_6b00_0000;

/// The columns each table is loaded with, in [`TABLES`] order.
pub(super) const MEMBER_COLUMNS: [&str; 6] = ["aid", "name", "passwd", "count", "line", "bill"];

pub(super) const RECORD_COLUMNS: [&str; 8] =
    ["num", "host", "aid", "uid", "sn", "count", "grp", "id"];

pub(super) const RESULT_COLUMNS: [&str; 12] = [
    "id", "uid", "aid", "count", "time1", "time2", "total", "countnum", "num", "times", "point",
    "ret",
];

/// The three tables' layout and contents for one dialect and scale.
#[derive(Debug, Clone)]
pub struct Data {
    dialect: Dialect,
    /// Rows of Member, Record and Result.
    pub rows: [u32; 3],
    /// MySQL's storage engine (the seed's is InnoDB).
    engine: String,
    /// The seed of the rows.
    seed: u64,
}

impl Data {
    /// The tables at `scale` (1 = the seed's sizes).
    pub fn new(dialect: Dialect, scale: f64, engine: &str, seed: u64) -> anyhow::Result<Data> {
        Ok(Data {
            dialect,
            rows: [
                scaled(MEMBER_ROWS, scale, "scale")?,
                scaled(RECORD_ROWS, scale, "scale")?,
                scaled(RESULT_ROWS, scale, "scale")?,
            ],
            engine: engine.to_string(),
            seed,
        })
    }

    pub(super) fn names() -> Vec<String> {
        TABLES.iter().map(|t| t.to_string()).collect()
    }

    /// How the loader builds each table, in [`TABLES`] order.
    pub fn plans(&self) -> Vec<TablePlan> {
        match self.dialect {
            Dialect::Mysql => self.mysql_plans(),
            Dialect::Postgres | Dialect::Sqlite => self.portable_plans(),
        }
    }

    pub(super) fn plan(
        &self,
        table: usize,
        create: String,
        indexes: Vec<String>,
        finish: Vec<String>,
    ) -> TablePlan {
        let columns = match table {
            0 => MEMBER_COLUMNS.to_vec(),
            1 => RECORD_COLUMNS.to_vec(),
            _ => RESULT_COLUMNS.to_vec(),
        };
        TablePlan {
            name: TABLES[table].to_string(),
            create,
            columns,
            rows: self.rows[table],
            indexes,
            finish,
        }
    }

    /// The seed's DDL. InnoDB tables are clustered on the primary key, so
    /// the rows go into a table that has it, and the secondary keys are
    /// added afterwards, each table's in one ALTER TABLE (one scan of the
    /// table for all of them; two ALTERs of one table would only wait for
    /// each other's metadata lock).
    pub(super) fn mysql_plans(&self) -> Vec<TablePlan> {
        let tail = format!(" ENGINE={}", self.engine);
        vec![
            self.plan(
                0,
                format!(
                    "CREATE TABLE `Member` (\n  `aid` int(11) NOT NULL auto_increment,\n  \
                     `name` char(20) NOT NULL default '',\n  `passwd` char(16) NOT NULL default '',\n  \
                     `count` int(11) NOT NULL default '0',\n  `line` int(11) NOT NULL default '0',\n  \
                     `bill` int(11) NOT NULL default '2',\n  PRIMARY KEY (`aid`)\n){tail}"
                ),
                vec!["ALTER TABLE `Member` ADD UNIQUE KEY `name` (`name`), ADD KEY `count` (`count`), \
                      ADD KEY `line` (`line`)"
                    .to_string()],
                Vec::new(),
            ),
            self.plan(
                1,
                format!(
                    "CREATE TABLE `Record` (\n  `num` int(11) default NULL,\n  \
                     `host` int(11) NOT NULL default '0',\n  `aid` int(11) NOT NULL default '0',\n  \
                     `uid` int(11) NOT NULL default '0',\n  `sn` int(11) default NULL,\n  \
                     `count` int(10) unsigned default NULL,\n  `grp` int(11) default NULL,\n  \
                     `id` int(10) unsigned default NULL\n){tail}"
                ),
                vec![
                    "ALTER TABLE `Record` ADD KEY `gr` (`grp`,`num`), ADD KEY `d` (`id`,`uid`)"
                        .to_string(),
                ],
                Vec::new(),
            ),
            self.plan(
                2,
                format!(
                    "CREATE TABLE `Result` (\n  `id` int(11) NOT NULL auto_increment,\n  \
                     `uid` int(11) NOT NULL default '0',\n  `aid` int(11) NOT NULL default '0',\n  \
                     `count` int(11) NOT NULL default '0',\n  \
                     `time1` datetime NOT NULL default '1000-01-01 00:00:00',\n  \
                     `time2` datetime NOT NULL default '1000-01-01 00:00:00',\n  \
                     `total` int(11) default '0',\n  `countnum` int(11) default '0',\n  \
                     `num` int(10) unsigned NOT NULL default '0',\n  `times` int(11) default '0',\n  \
                     `point` int(11) default '0',\n  `ret` int(11) default '0',\n  \
                     PRIMARY KEY (`id`)\n){tail}"
                ),
                vec!["ALTER TABLE `Result` ADD KEY `aid` (`aid`), ADD KEY `sid` (`ret`,`uid`)"
                    .to_string()],
                Vec::new(),
            ),
        ]
    }

    /// PostgreSQL and SQLite, with the nearest types and index names that
    /// carry the table's (both keep index names per schema, not per table).
    ///
    /// PostgreSQL, as `pgbench -i` and the sysbench loader: heaps without
    /// any index, then every index in one sorted pass each (in parallel:
    /// they only share a lock that does not conflict with itself), then the
    /// primary keys attached to their unique indexes and the sequences
    /// moved past the loaded ids. SQLite: `INTEGER PRIMARY KEY` is the
    /// rowid, assigned on insert when omitted (auto-increment, as in
    /// sysbench's SQLite tables); the other indexes follow the load.
    pub(super) fn portable_plans(&self) -> Vec<TablePlan> {
        let pg = self.dialect == Dialect::Postgres;
        let (serial, unsigned, datetime) = if pg {
            ("SERIAL", "BIGINT", "TIMESTAMP(0)")
        } else {
            ("INTEGER PRIMARY KEY", "INTEGER", "DATETIME")
        };
        // PostgreSQL: the primary key's index is built with the others and
        // attached afterwards, and the sequence moved past the loaded ids.
        let keyed = |t: &str, col: &str, rows: u32, mut indexes: Vec<String>| {
            let mut finish = Vec::new();
            if pg {
                indexes.insert(0, format!("CREATE UNIQUE INDEX {t}_pkey ON {t}({col})"));
                finish.push(format!(
                    "ALTER TABLE {t} ADD CONSTRAINT {t}_pkey PRIMARY KEY USING INDEX {t}_pkey"
                ));
                finish.push(format!(
                    "SELECT setval(pg_get_serial_sequence('{}', '{col}'), {}, false)",
                    t.to_lowercase(),
                    u64::from(rows) + 1
                ));
            }
            (indexes, finish)
        };
        let (member_indexes, member_finish) = keyed(
            "Member",
            "aid",
            self.rows[0],
            vec![
                "CREATE UNIQUE INDEX Member_name ON Member(name)".to_string(),
                "CREATE INDEX Member_count ON Member(count)".to_string(),
                "CREATE INDEX Member_line ON Member(line)".to_string(),
            ],
        );
        let (result_indexes, result_finish) = keyed(
            "Result",
            "id",
            self.rows[2],
            vec![
                "CREATE INDEX Result_aid ON Result(aid)".to_string(),
                "CREATE INDEX Result_sid ON Result(ret, uid)".to_string(),
            ],
        );
        vec![
            self.plan(
                0,
                format!(
                    "CREATE TABLE Member (\n  aid {serial},\n  name CHAR(20) NOT NULL DEFAULT '',\n  \
                     passwd CHAR(16) NOT NULL DEFAULT '',\n  count INTEGER NOT NULL DEFAULT 0,\n  \
                     line INTEGER NOT NULL DEFAULT 0,\n  bill INTEGER NOT NULL DEFAULT 2\n)"
                ),
                member_indexes,
                member_finish,
            ),
            self.plan(
                1,
                format!(
                    "CREATE TABLE Record (\n  num INTEGER DEFAULT NULL,\n  host INTEGER NOT NULL DEFAULT 0,\n  \
                     aid INTEGER NOT NULL DEFAULT 0,\n  uid INTEGER NOT NULL DEFAULT 0,\n  \
                     sn INTEGER DEFAULT NULL,\n  count {unsigned} DEFAULT NULL,\n  \
                     grp INTEGER DEFAULT NULL,\n  id {unsigned} DEFAULT NULL\n)"
                ),
                vec![
                    "CREATE INDEX Record_gr ON Record(grp, num)".to_string(),
                    "CREATE INDEX Record_d ON Record(id, uid)".to_string(),
                ],
                Vec::new(),
            ),
            self.plan(
                2,
                format!(
                    "CREATE TABLE Result (\n  id {serial},\n  uid INTEGER NOT NULL DEFAULT 0,\n  \
                     aid INTEGER NOT NULL DEFAULT 0,\n  count INTEGER NOT NULL DEFAULT 0,\n  \
                     time1 {datetime} NOT NULL DEFAULT '1000-01-01 00:00:00',\n  \
                     time2 {datetime} NOT NULL DEFAULT '1000-01-01 00:00:00',\n  \
                     total INTEGER DEFAULT 0,\n  countnum INTEGER DEFAULT 0,\n  \
                     num {unsigned} NOT NULL DEFAULT 0,\n  times INTEGER DEFAULT 0,\n  \
                     point INTEGER DEFAULT 0,\n  ret INTEGER DEFAULT 0\n)"
                ),
                result_indexes,
                result_finish,
            ),
        ]
    }

    /// The random stream of row `row` of table `table`.
    pub(super) fn row_rng(&self, table: usize, row: u32) -> Rng {
        let table_seed = Rng::new(self.seed ^ LOAD_SALT ^ table as u64).next_u64();
        Rng::for_client(table_seed, u64::from(row))
    }

    /// Appends row `row` (from 1) of table `table` ([`TABLES`] order) to
    /// `out`, in the loader's column order.
    ///
    /// - Member: aid = row; name = ten random lowercase letters and the aid
    ///   in ten digits (unique, as the key demands); passwd = sixteen
    ///   random letters and digits; count in 0..100000; line in 0..1000;
    ///   bill = 2 (the column's default).
    /// - Record: id = row; aid and uid drawn over Member's aids; num, host,
    ///   sn, count and grp small random numbers.
    /// - Result: id = row; uid and aid over Member's aids; time1 a second
    ///   of 2005, time2 up to a day later; the other numbers small.
    pub fn row(&self, table: usize, row: u32, out: &mut Vec<Value>) {
        let mut rng = self.row_rng(table, row);
        let members = self.rows[0];
        let int = |v: u32| Value::Int(i64::from(v));
        match table {
            0 => {
                let mut name = String::with_capacity(20);
                for _ in 0..10 {
                    name.push(char::from(b'a' + rng.uniform(0, 25) as u8));
                }
                name.push_str(&format!("{row:010}"));
                let passwd: String = (0..16)
                    .map(|_| char::from(ALNUM[rng.uniform(0, ALNUM.len() as u32 - 1) as usize]))
                    .collect();
                out.extend([
                    int(row),
                    Value::Text(name),
                    Value::Text(passwd),
                    int(rng.uniform(0, 99_999)),
                    int(rng.uniform(0, 999)),
                    int(2),
                ]);
            }
            1 => out.extend([
                int(rng.uniform(0, 999)),
                int(rng.uniform(0, 255)),
                int(rng.uniform(1, members)),
                int(rng.uniform(1, members)),
                int(rng.uniform(0, 999_999)),
                int(rng.uniform(0, 999)),
                int(rng.uniform(0, 99)),
                int(row),
            ]),
            _ => {
                let t1 = YEAR_2005 + i64::from(rng.uniform(0, 365 * 86_400 - 1));
                let t2 = t1 + i64::from(rng.uniform(0, 86_400));
                out.extend([
                    int(row),
                    int(rng.uniform(1, members)),
                    int(rng.uniform(1, members)),
                    int(rng.uniform(0, 999)),
                    Value::Text(datetime(t1)),
                    Value::Text(datetime(t2)),
                    int(rng.uniform(0, 999)),
                    int(rng.uniform(0, 999)),
                    int(rng.uniform(0, 999)),
                    int(rng.uniform(0, 999)),
                    int(rng.uniform(0, 999)),
                    int(rng.uniform(0, 9)),
                ]);
            }
        }
    }

    /// Loads the three tables with the shared loader.
    pub(super) fn prepare(
        &self,
        workload: &str,
        connect: Connector<'_>,
        threads: usize,
        progress: &dyn Progress,
    ) -> anyhow::Result<()> {
        let mut first = connect().context("could not connect to prepare the tables")?;
        ensure_absent(first.as_mut(), &Self::names(), workload, HINT)?;
        loader::load(
            first.as_mut(),
            connect,
            &self.plans(),
            loader::loaders(self.dialect, threads),
            self,
            progress,
            "Member, Record, Result",
        )
    }

    /// The tables exist, Member holds exactly the rows `--scale` asks for
    /// (probed by primary key: its last aid and none past it), and Record
    /// still has rows for the OLTP transaction.
    pub(super) fn check(&self, workload: &str, conn: &mut dyn Connection) -> anyhow::Result<()> {
        check_tables(conn, &Self::names(), workload, HINT, false)?;
        let members = self.rows[0];
        let has = |conn: &mut dyn Connection, aid: u64| -> anyhow::Result<bool> {
            Ok(conn
                .execute_sql(&format!("SELECT aid FROM Member WHERE aid = {aid}"))?
                .rows
                > 0)
        };
        if !has(conn, u64::from(members))? || has(conn, u64::from(members) + 1)? {
            return Err(usage(format!(
                "table Member does not hold the {members} rows this --scale needs: run \
                 `dbsweep cleanup {workload}` and then `dbsweep prepare {workload}` ({HINT})"
            )));
        }
        check_tables(conn, &["Record".to_string()], workload, HINT, true)
    }
}

/// Which options must match between prepare and run, for messages.
pub(super) const HINT: &str = "with the same --db and --scale";

impl loader::RowSource for Data {
    fn rows(&self, table: usize, first: u32, last: u32) -> loader::Rows<'_> {
        let mut next = u64::from(first);
        let last = u64::from(last);
        Box::new(move |out| {
            if next > last {
                return false;
            }
            self.row(table, next as u32, out);
            next += 1;
            true
        })
    }
}

/// 2005-01-01 00:00:00 UTC, in seconds since 1970.
pub(super) const YEAR_2005: i64 = 1_104_537_600;

/// Rows of a table of `base` rows at `scale`: at least one, since every
/// statement draws a key from the loaded rows.
fn scaled(base: f64, scale: f64, option: &str) -> anyhow::Result<u32> {
    let n = (base * scale).round().max(1.0);
    if n > f64::from(u32::MAX) {
        return Err(usage(format!(
            "--{option} {scale} asks for {n} rows, more than the {} a table's keys can number: use a smaller scale",
            u32::MAX
        )));
    }
    Ok(n as u32)
}
