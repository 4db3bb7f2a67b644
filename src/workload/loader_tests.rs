//! The loader's queue and chunking, tested without a database.

use super::*;

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
