//! The loader's queue and chunking, tested without a database.

use super::*;
use crate::util::progress::NoProgress;

#[test]
fn chunks() {
    assert_eq!(chunk_rows(1_000_000, 1), 1_000_000);
    assert_eq!(chunk_rows(0, 1), 1);
    assert_eq!(chunk_rows(1_000_000, 2), 31_250);
    assert_eq!(chunk_rows(1_000_000, 64), MIN_CHUNK_ROWS);
    assert_eq!(chunk_rows(100_000_000, 2), MAX_CHUNK_ROWS);
    assert_eq!(chunk_rows(0, 2), MIN_CHUNK_ROWS);
    assert_eq!(loaders(Dialect::Sqlite, 8), 1);
    assert!(loaders(Dialect::Postgres, 1) >= 1);
    assert!(loaders(Dialect::Mysql, 64) >= 64);
}

fn plan(name: &str, indexes: &[&str], finish: &[&str]) -> TablePlan {
    TablePlan {
        name: name.into(),
        create: String::new(),
        columns: Vec::new(),
        rows: 2,
        indexes: indexes.iter().map(|s| s.to_string()).collect(),
        finish: finish.iter().map(|s| s.to_string()).collect(),
    }
}

#[test]
fn queue_runs_indexes_once_loaded_then_finish() {
    let plans = vec![plan("t1", &["a", "b"], &["f"]), plan("t2", &[], &[])];
    let mut q = Queue::default();
    for table in [0, 1] {
        q.jobs.push_back(Job::Load {
            table,
            first: 1,
            last: 1,
        });
        q.jobs.push_back(Job::Load {
            table,
            first: 2,
            last: 2,
        });
        q.loads_left.push(2);
        q.indexes_left.push(plans[table].indexes.len());
    }
    let shared = Shared {
        queue: Mutex::new(q),
        changed: Condvar::new(),
    };
    let mut order = Vec::new();
    // One loader: each job ends before the next is taken.
    while let Some(job) = shared.take() {
        order.push(job);
        shared.done(job, true, &plans);
    }
    let load = |table, first| Job::Load {
        table,
        first,
        last: first,
    };
    assert_eq!(
        order,
        [
            load(0, 1),
            load(0, 2),
            Job::Index { table: 0, index: 0 },
            Job::Index { table: 0, index: 1 },
            Job::Finish { table: 0 },
            load(1, 1),
            load(1, 2),
        ]
    );
    // A failure stops everyone.
    let shared = Shared {
        queue: Mutex::new(Queue {
            jobs: [load(0, 1), load(0, 2)].into(),
            loads_left: vec![2],
            indexes_left: vec![2],
            ..Queue::default()
        }),
        changed: Condvar::new(),
    };
    let job = shared.take().unwrap();
    shared.done(job, false, &plans);
    assert_eq!(shared.take(), None);
}

#[test]
fn one_loader_per_table_shares_out_tables() {
    let plans = vec![plan("t1", &["a"], &[]), plan("t2", &[], &[])];
    let load = |table, first| Job::Load {
        table,
        first,
        last: first,
    };
    let shared = Shared {
        queue: Mutex::new(Queue {
            jobs: [load(0, 1), load(0, 2), load(1, 1), load(1, 2)].into(),
            loads_left: vec![2, 2],
            indexes_left: vec![1, 0],
            one_per_table: true,
            loading: vec![false, false],
            ..Queue::default()
        }),
        changed: Condvar::new(),
    };
    // Two loaders: the second gets the other table, not t1's next chunk.
    assert_eq!(shared.take(), Some(load(0, 1)));
    assert_eq!(shared.take(), Some(load(1, 1)));
    shared.done(load(1, 1), true, &plans);
    // t1 is still being loaded: the free loader goes on with t2.
    assert_eq!(shared.take(), Some(load(1, 2)));
    shared.done(load(0, 1), true, &plans);
    assert_eq!(shared.take(), Some(load(0, 2)));
    shared.done(load(0, 2), true, &plans);
    assert_eq!(shared.take(), Some(Job::Index { table: 0, index: 0 }));
    shared.done(Job::Index { table: 0, index: 0 }, true, &plans);
    shared.done(load(1, 2), true, &plans);
    assert_eq!(shared.take(), None);
    assert!(one_loader_per_table(Dialect::Mysql));
    assert!(!one_loader_per_table(Dialect::Postgres));
}

/// Rows 1..=N of any table, every third number left empty (as TPC-C's
/// order-line slots past an order's line count are).
struct Sparse;

impl RowSource for Sparse {
    fn rows(&self, _table: usize, first: u32, last: u32) -> Rows<'_> {
        let mut next = first;
        Box::new(move |row| {
            while next <= last && next % 3 == 0 {
                next += 1;
            }
            if next > last {
                return false;
            }
            row.clear();
            row.push(Value::Int(i64::from(next)));
            next += 1;
            true
        })
    }
}

#[test]
fn a_load_returns_the_rows_the_server_stored_in_each_table() {
    let connect = || -> crate::driver::DbResult<Box<dyn Connection>> {
        Ok(Box::new(crate::driver::fake::FakeConnection::new(
            Default::default(),
        )))
    };
    let mut plans = vec![plan("a", &[], &[]), plan("b", &["i"], &[])];
    plans[0].rows = 30_000;
    plans[1].rows = 100;
    let mut first = connect().unwrap();
    // Two ranges of the first table, in several chunks over two loaders.
    let ranges = vec![vec![(1, 9_000), (20_001, 30_000)], vec![(1, 100)]];
    let steps = Steps {
        ranges: Some(&ranges),
        create: false,
        indexes: true,
        drop_on_failure: false,
    };
    let stored = load_with(
        first.as_mut(),
        &connect,
        &plans,
        2,
        &Sparse,
        &NoProgress,
        "",
        &steps,
    )
    .unwrap();
    let kept = |from: u32, to: u32| (from..=to).filter(|n| n % 3 != 0).count() as u64;
    assert_eq!(
        stored,
        [kept(1, 9_000) + kept(20_001, 30_000), kept(1, 100)]
    );
}
