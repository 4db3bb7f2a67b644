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

mod data;

use self::data::Data;
use crate::driver::{Connection, Dialect, Value};
use crate::rand::RandConfig;
use crate::rand::Rng;
use crate::util::progress::Progress;
use crate::workload::loader::drop_tables;
use crate::workload::{
    ClientScript, Connector, Op, OptionValues, StatementDef, Workload, WorkloadInfo,
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
            // Its transaction updates and inserts.
            (Test::Oltp, 0) => Some(Op::Begin { writes: true }),
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
    use super::data::*;
    use super::*;
    use crate::util::civil::sql_datetime as datetime;

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
