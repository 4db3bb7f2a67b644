//! Seed 000's workloads ("Benchmark MySQL Performance On FreeBSD and
//! Linux", measured with Super Smack), as sysbench-style built-ins:
//! `smack_select`, `smack_update` and `smack_oltp`.
//!
//! # The tables
//! The seed's three InnoDB tables, with its keys, in every dialect:
//!
//! | table | rows (`--scale 1`) | keys |
//! |---|---|---|
//! | `Member` (aid, name, passwd, count, line, bill) | 10,000,000 | PK aid (auto-increment), UNIQUE name, count, line |
//! | `Record` (num, host, aid, uid, sn, count, grp, id) | 1,000,000 | (grp, num), (id, uid); no primary key |
//! | `Result` (id, uid, aid, count, time1, time2, total, countnum, num, times, point, ret) | 1,000,000 | PK id (auto-increment), aid, (ret, uid) |
//!
//! MySQL gets the seed's DDL (`ENGINE=` for its `TYPE=`); PostgreSQL and
//! SQLite the nearest types: `SERIAL` / `INTEGER PRIMARY KEY` for
//! auto-increment, `BIGINT` for `unsigned` on PostgreSQL (it has no
//! unsigned integers), `TIMESTAMP(0)` for `datetime`. One deviation
//! everywhere: the datetime columns default to `'1000-01-01 00:00:00'`, not
//! the seed's `'0000-00-00 00:00:00'`, which today's servers reject in
//! strict mode (no row ever takes the default: the loader and the OLTP
//! insert give both values).
//!
//! # The data
//! The seed does not say what its rows held, only their number. Every row
//! is a function of the seed, its table and its row number (its own
//! random stream, as sysbench's rows, see [`Data`]), so any range of rows
//! can be generated on its own and loaded in parallel by the shared
//! [`loader`]: `Member.aid` and `Result.id` are the row numbers, names are
//! unique; `Record.id` is the row number too, so the OLTP transaction's
//! `WHERE id = ?` finds one row until a transaction deletes it. Indexes
//! other than the clustered primary key are built after the load, as the
//! sysbench loader does.
//!
//! # The statements
//! Exactly the seed's; `?` is drawn uniformly over the loaded rows
//! (`aid` in `1..=Member rows`, `id` in `1..=Record rows`) from the client's
//! stream of the run's seed (Super Smack's `rand` dictionaries are uniform;
//! `--rand-type` does not apply). `for update` is dropped on SQLite, which
//! has no row locks.
//!
//! # Rounds and errors
//! Each workload ends, by default, after the seed's count of transactions
//! per client (1000 / 1000 / 100, see [`Workload::default_rounds`]).
//! Deadlocks and lock wait timeouts under `smack_oltp` are retried like any
//! workload's (`--max-retries`, default unlimited), so each client still
//! completes its rounds, and are counted per kind. Super Smack did not
//! retry: a deadlock ended its run ("the test fails because of deadlock").
//! `--max-retries 0` counts such a transaction as failed instead, and a
//! study's `[stop] max_error_rate` stops a series at a given rate of
//! deadlocks per transaction (docs/smack.md).

use crate::util::civil::sql_datetime as datetime;
use anyhow::Context as _;

use crate::driver::{Connection, Dialect, Value};
use crate::rand::Rng;
use crate::workload::loader::{self, check_tables, drop_tables, ensure_absent, usage, TablePlan};
use crate::workload::{
    ClientScript, Connector, Op, OptionValues, Progress, RandConfig, StatementDef, Workload,
    WorkloadInfo,
};

/// Options of every seed 000 workload.
const OPTIONS: [&str; 2] = ["scale", "mysql-storage-engine"];

/// Seed 000's workloads, in `dbsweep workloads` order.
pub static WORKLOADS: &[WorkloadInfo] = &[
    WorkloadInfo {
        name: "smack_select",
        description: "Seed 000's read test: select * from Member where aid=?, 1000 rounds per client",
        options: &OPTIONS,
        build,
    },
    WorkloadInfo {
        name: "smack_update",
        description: "Seed 000's write test: update Member set bill=1 where aid=?, 1000 rounds per client",
        options: &OPTIONS,
        build,
    },
    WorkloadInfo {
        name: "smack_oltp",
        description: "Seed 000's OLTP transaction: select for update, update, insert, delete; 100 rounds per client",
        options: &OPTIONS,
        build,
    },
];

/// The seed's table sizes at `--scale 1`.
const MEMBER_ROWS: f64 = 10_000_000.0;
const RECORD_ROWS: f64 = 1_000_000.0;
const RESULT_ROWS: f64 = 1_000_000.0;

/// The table names, in load order.
const TABLES: [&str; 3] = ["Member", "Record", "Result"];

/// Mixed into the seed of the data generator, so that the loaded data and a
/// client's draws never come from the same stream.
const LOAD_SALT: u64 = 0x736d_6163_6b00_0000;

/// The columns each table is loaded with, in [`TABLES`] order.
const MEMBER_COLUMNS: [&str; 6] = ["aid", "name", "passwd", "count", "line", "bill"];
const RECORD_COLUMNS: [&str; 8] = ["num", "host", "aid", "uid", "sn", "count", "grp", "id"];
const RESULT_COLUMNS: [&str; 12] = [
    "id", "uid", "aid", "count", "time1", "time2", "total", "countnum", "num", "times", "point",
    "ret",
];

/// Which of the three tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Test {
    Select,
    Update,
    Oltp,
}

/// The seed 000 workloads and the test each runs.
const TESTS: [(&str, Test); 3] = [
    ("smack_select", Test::Select),
    ("smack_update", Test::Update),
    ("smack_oltp", Test::Oltp),
];

/// Builds the seed 000 test called `name` (one of [`TESTS`]).
fn build(
    name: &'static str,
    o: &OptionValues,
    d: Dialect,
    r: RandConfig,
) -> anyhow::Result<Box<dyn Workload>> {
    let (_, test) = TESTS
        .iter()
        .find(|(n, _)| *n == name)
        .expect("the registry names seed 000 workloads from TESTS");
    Smack::build(*test, o, d, r)
}

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

    fn names() -> Vec<String> {
        TABLES.iter().map(|t| t.to_string()).collect()
    }

    /// How the loader builds each table, in [`TABLES`] order.
    pub fn plans(&self) -> Vec<TablePlan> {
        match self.dialect {
            Dialect::Mysql => self.mysql_plans(),
            Dialect::Postgres | Dialect::Sqlite => self.portable_plans(),
        }
    }

    fn plan(
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
    fn mysql_plans(&self) -> Vec<TablePlan> {
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
    fn portable_plans(&self) -> Vec<TablePlan> {
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
    fn row_rng(&self, table: usize, row: u32) -> Rng {
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
                const ALNUM: &[u8] =
                    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
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
    fn prepare(
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
    fn check(&self, workload: &str, conn: &mut dyn Connection) -> anyhow::Result<()> {
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
const HINT: &str = "with the same --db and --scale";

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
const YEAR_2005: i64 = 1_104_537_600;

/// One of the three tests, resolved for a dialect.
pub struct Smack {
    test: Test,
    options: OptionValues,
    data: Data,
    statements: Vec<StatementDef>,
}

impl Smack {
    fn build(
        test: Test,
        o: &OptionValues,
        dialect: Dialect,
        rand: RandConfig,
    ) -> anyhow::Result<Box<dyn Workload>> {
        let data = Data::new(
            dialect,
            o.f64("scale"),
            o.str("mysql-storage-engine"),
            rand.seed,
        )?;
        let p = if dialect == Dialect::Postgres {
            "$1"
        } else {
            "?"
        };
        let def = |kind: &'static str, sql: String| StatementDef {
            kind: kind.into(),
            sql,
        };
        let statements = match test {
            Test::Select => vec![def("select", format!("select * from Member where aid={p}"))],
            Test::Update => vec![def(
                "update",
                format!("update Member set bill=1 where aid={p}"),
            )],
            Test::Oltp => {
                let lock = if dialect == Dialect::Sqlite {
                    ""
                } else {
                    " for update"
                };
                vec![
                    def("select", format!("select * from Record where id={p}{lock}")),
                    def("update", format!("update Member set bill=1 where aid={p}")),
                    def(
                        "insert",
                        "insert into Result(uid,aid,count,time1,time2,total,countnum,num,times,point,ret) \
                         values (1,2,3,'2005-09-09 09:09:09','2005-10-10 10:10:10',6,7,8,9,10,11)"
                            .to_string(),
                    ),
                    def("delete", format!("delete from Record where id={p}")),
                ]
            }
        };
        Ok(Box::new(Smack {
            test,
            options: o.clone(),
            data,
            statements,
        }))
    }
}

impl Workload for Smack {
    fn name(&self) -> &'static str {
        match self.test {
            Test::Select => "smack_select",
            Test::Update => "smack_update",
            Test::Oltp => "smack_oltp",
        }
    }

    fn statements(&self) -> &[StatementDef] {
        &self.statements
    }

    fn prepare(
        &self,
        connect: Connector<'_>,
        threads: usize,
        progress: &dyn Progress,
    ) -> anyhow::Result<()> {
        self.data.prepare(self.name(), connect, threads, progress)
    }

    fn cleanup(&self, conn: &mut dyn Connection) -> anyhow::Result<()> {
        drop_tables(conn, &Data::names())
    }

    fn check_prepared(&self, conn: &mut dyn Connection) -> anyhow::Result<()> {
        self.data.check(self.name(), conn)
    }

    fn client(&self, _id: usize, _clients: usize, rng: Rng) -> Box<dyn ClientScript> {
        let [members, records, _] = self.data.rows;
        Box::new(Script {
            test: self.test,
            members,
            records,
            rng,
            aid: [Value::Int(0)],
            id: [Value::Int(0)],
            step: 0,
        })
    }

    fn options(&self) -> &OptionValues {
        &self.options
    }

    /// The seed's counts: "each client executed the following select
    /// statement 1,000 times", the update 1,000 times, the transaction 100.
    fn default_rounds(&self) -> Option<u64> {
        Some(match self.test {
            Test::Select | Test::Update => 1000,
            Test::Oltp => 100,
        })
    }
}

/// One client of a seed 000 test.
struct Script {
    test: Test,
    /// Rows of Member and Record: keys are drawn from `1..=rows`.
    members: u32,
    records: u32,
    rng: Rng,
    /// This transaction's `aid` (Member) and `id` (Record, used by both the
    /// select and the delete, as the seed's one `$word`).
    aid: [Value; 1],
    id: [Value; 1],
    /// The next operation of the transaction.
    step: usize,
}

impl ClientScript for Script {
    fn start(&mut self) {
        self.step = 0;
        if self.test == Test::Oltp {
            self.id[0] = Value::Int(i64::from(self.rng.uniform(1, self.records)));
        }
        self.aid[0] = Value::Int(i64::from(self.rng.uniform(1, self.members)));
    }

    fn next(&mut self) -> Option<Op<'_>> {
        let step = self.step;
        self.step += 1;
        match (self.test, step) {
            (Test::Select | Test::Update, 0) => Some(Op::Exec(0, &self.aid)),
            (Test::Oltp, 0) => Some(Op::Begin),
            (Test::Oltp, 1) => Some(Op::Exec(0, &self.id)),
            (Test::Oltp, 2) => Some(Op::Exec(1, &self.aid)),
            (Test::Oltp, 3) => Some(Op::Exec(2, &[])),
            (Test::Oltp, 4) => Some(Op::Exec(3, &self.id)),
            (Test::Oltp, 5) => Some(Op::Commit),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datetimes() {
        assert_eq!(datetime(0), "1970-01-01 00:00:00");
        assert_eq!(datetime(YEAR_2005), "2005-01-01 00:00:00");
        assert_eq!(
            datetime(YEAR_2005 + 59 * 86_400 + 3661),
            "2005-03-01 01:01:01"
        );
        assert_eq!(datetime(951_782_400), "2000-02-29 00:00:00");
    }

    #[test]
    fn sizes_scale_and_round() {
        let d = Data::new(Dialect::Sqlite, 1.0, "innodb", 1).unwrap();
        assert_eq!(d.rows, [10_000_000, 1_000_000, 1_000_000]);
        let d = Data::new(Dialect::Sqlite, 0.0001, "innodb", 1).unwrap();
        assert_eq!(d.rows, [1000, 100, 100]);
        let d = Data::new(Dialect::Sqlite, 1e-9, "innodb", 1).unwrap();
        assert_eq!(d.rows, [1, 1, 1]);
        let e = Data::new(Dialect::Sqlite, 1000.0, "innodb", 1).unwrap_err();
        assert!(e.to_string().contains("use a smaller scale"), "{e}");
    }

    #[test]
    fn rows_are_functions_of_seed_table_and_number() {
        let d = Data::new(Dialect::Sqlite, 0.001, "innodb", 7).unwrap();
        let row = |d: &Data, t, n| {
            let mut v = Vec::new();
            d.row(t, n, &mut v);
            v
        };
        for t in 0..3 {
            assert_eq!(row(&d, t, 5), row(&d, t, 5));
            assert_ne!(row(&d, t, 5), row(&d, t, 6));
        }
        let other = Data::new(Dialect::Sqlite, 0.001, "innodb", 8).unwrap();
        assert_ne!(row(&d, 0, 5), row(&other, 0, 5));
        let m = row(&d, 0, 42);
        assert_eq!(m.len(), MEMBER_COLUMNS.len());
        assert_eq!(m[0], Value::Int(42));
        let Value::Text(name) = &m[1] else { panic!() };
        assert_eq!(name.len(), 20);
        assert!(name.ends_with("0000000042"));
        let Value::Text(pw) = &m[2] else { panic!() };
        assert_eq!(pw.len(), 16);
        assert_eq!(m[5], Value::Int(2));
        assert_eq!(row(&d, 1, 9).len(), RECORD_COLUMNS.len());
        assert_eq!(row(&d, 1, 9)[7], Value::Int(9));
        let r = row(&d, 2, 3);
        assert_eq!(r.len(), RESULT_COLUMNS.len());
        let (Value::Text(t1), Value::Text(t2)) = (&r[4], &r[5]) else {
            panic!()
        };
        assert!(t1.starts_with("2005-") && t1 <= t2, "{t1} {t2}");
    }

    #[test]
    fn statements_per_dialect() {
        let o = OptionValues::resolve(&WORKLOADS[2], &[]).unwrap();
        let rand = RandConfig {
            kind: crate::rand::dist::DistKind::Uniform,
            params: Default::default(),
            seed: 1,
        };
        let sql = |d| -> Vec<String> {
            Smack::build(Test::Oltp, &o, d, rand)
                .unwrap()
                .statements()
                .iter()
                .map(|s| s.sql.clone())
                .collect()
        };
        let my = sql(Dialect::Mysql);
        assert_eq!(my[0], "select * from Record where id=? for update");
        assert_eq!(my[1], "update Member set bill=1 where aid=?");
        assert!(my[2].starts_with("insert into Result(uid,aid,count,time1,time2,total,countnum,num,times,point,ret) values (1,2,3,'2005-09-09 09:09:09','2005-10-10 10:10:10',6,7,8,9,10,11)"));
        assert_eq!(my[3], "delete from Record where id=?");
        assert_eq!(sql(Dialect::Sqlite)[0], "select * from Record where id=?");
        assert_eq!(
            sql(Dialect::Postgres)[0],
            "select * from Record where id=$1 for update"
        );
    }

    #[test]
    fn plans_declare_the_seed_keys() {
        for d in [Dialect::Mysql, Dialect::Postgres, Dialect::Sqlite] {
            let data = Data::new(d, 0.001, "InnoDB", 1).unwrap();
            let plans = data.plans();
            assert_eq!(
                plans.iter().map(|p| p.rows).collect::<Vec<_>>(),
                [10_000, 1000, 1000]
            );
            let all: String = plans
                .iter()
                .flat_map(|p| {
                    [p.create.clone()]
                        .into_iter()
                        .chain(p.indexes.clone())
                        .chain(p.finish.clone())
                })
                .collect::<Vec<_>>()
                .join("\n")
                .replace('`', "");
            let mut keys = vec![
                "(name)",
                "(count)",
                "(line)",
                "(grp,num)",
                "(id,uid)",
                "(ret,uid)",
            ];
            if d == Dialect::Sqlite {
                // The rowid: declared in the column.
                keys.extend(["aid INTEGER PRIMARY KEY", "id INTEGER PRIMARY KEY"]);
            } else {
                keys.extend(["(aid)", "(id)"]);
            }
            for key in keys {
                assert!(
                    all.replace(", ", ",").contains(key),
                    "{d:?}: {key} in {all}"
                );
            }
            assert!(
                !plans[1].create.contains("PRIMARY"),
                "{d:?}: Record has no primary key"
            );
        }
    }
}
