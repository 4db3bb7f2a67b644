//! The loader's queue and chunking, tested without a database.

use super::*;
use std::sync::Mutex;

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
    let mut q = Queue {
        group_left: vec![4],
        ..Queue::default()
    };
    for table in [0, 1] {
        q.jobs.push_back(Job::Load {
            table,
            first: 1,
            last: 1,
            group: 0,
        });
        q.jobs.push_back(Job::Load {
            table,
            first: 2,
            last: 2,
            group: 0,
        });
        q.loads_left.push(2);
        q.indexes_left.push(plans[table].indexes.len());
    }
    let shared = Shared::new(q);
    let mut order = Vec::new();
    // One loader: each job ends before the next is taken.
    while let Some(job) = shared.take() {
        order.push(job);
        if let Some(g) = shared.done(job, true, &plans) {
            shared.marked(g, true);
        }
    }
    let load = |table, first| Job::Load {
        table,
        first,
        last: first,
        group: 0,
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
    let shared = Shared::new(Queue {
        jobs: [load(0, 1), load(0, 2)].into(),
        loads_left: vec![2],
        group_left: vec![2],
        indexes_left: vec![2],
        ..Queue::default()
    });
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
        group: 0,
    };
    let shared = Shared::new(Queue {
        jobs: [load(0, 1), load(0, 2), load(1, 1), load(1, 2)].into(),
        loads_left: vec![2, 2],
        group_left: vec![4],
        indexes_left: vec![1, 0],
        one_per_table: true,
        loading: vec![false, false],
        ..Queue::default()
    });
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
    assert_eq!(shared.done(load(1, 2), true, &plans), Some(0));
    shared.marked(0, true);
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

/// A connection to the fake driver, whose loads store every row.
fn fake() -> crate::driver::DbResult<Box<dyn Connection>> {
    Ok(Box::new(crate::driver::fake::FakeConnection::new(
        Default::default(),
    )))
}

#[test]
fn a_load_returns_the_rows_the_server_stored_in_each_table() {
    let connect = fake;
    let mut plans = vec![plan("a", &[], &[]), plan("b", &["i"], &[])];
    plans[0].rows = 30_000;
    plans[1].rows = 100;
    let mut first = connect().unwrap();
    // Two ranges of the first table, in several chunks over two loaders.
    let ranges = vec![vec![(1, 9_000), (20_001, 30_000)], vec![(1, 100)]];
    let steps = Steps {
        ranges: Some(&ranges),
        groups: None,
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

#[test]
fn groups_load_in_order_no_further_than_ahead_and_wait_for_their_marks() {
    let plans = vec![plan("t1", &[], &[]), plan("t2", &[], &[])];
    let load = |table, group: usize| Job::Load {
        table,
        first: group as u32 + 1,
        last: group as u32 + 1,
        group,
    };
    let jobs = [0, 1, 2].map(|g| [load(0, g), load(1, g)]).concat();
    let shared = Shared::new(Queue {
        jobs: jobs.into(),
        loads_left: vec![3, 3],
        indexes_left: vec![0, 0],
        group_left: vec![2, 2, 2],
        ahead: 1,
        no_indexes: true,
        ..Queue::default()
    });
    // Four loaders: groups 0 and 1 start, group 2 is beyond the window.
    let taken: Vec<Job> = (0..4).map(|_| shared.take().unwrap()).collect();
    assert_eq!(taken, [load(0, 0), load(1, 0), load(0, 1), load(1, 1)]);
    // Group 1 is in first: marked, but the window stays at group 0.
    assert_eq!(shared.done(load(0, 1), true, &plans), None);
    assert_eq!(shared.done(load(1, 1), true, &plans), Some(1));
    shared.marked(1, true);
    assert_eq!(shared.lock().first_open, 0);
    assert_eq!(shared.lock().jobs.len(), 2);
    // Group 0's last load: until its mark is written, it counts as running
    // (a loader finding nothing to do waits rather than leaves).
    assert_eq!(shared.done(load(0, 0), true, &plans), None);
    assert_eq!(shared.done(load(1, 0), true, &plans), Some(0));
    assert_eq!(shared.lock().running, 1);
    shared.marked(0, true);
    let q = shared.lock();
    assert_eq!((q.first_open, q.running), (2, 0));
    drop(q);
    assert_eq!(shared.take(), Some(load(0, 2)));
    assert_eq!(shared.take(), Some(load(1, 2)));
    // A mark that fails stops the load.
    assert_eq!(shared.done(load(0, 2), true, &plans), None);
    assert_eq!(shared.done(load(1, 2), true, &plans), Some(2));
    shared.marked(2, false);
    assert!(shared.lock().failed);
    assert_eq!(shared.take(), None);
}

/// Rows 1..=N of any table, recording each range it finished, and the
/// first row of each it started.
struct Recording(Mutex<Vec<(usize, u32, u32)>>, Mutex<Vec<(usize, u32)>>);

impl RowSource for Recording {
    fn rows(&self, table: usize, first: u32, last: u32) -> Rows<'_> {
        self.1.lock().unwrap().push((table, first));
        let mut next = first;
        Box::new(move |row| {
            if next > last {
                self.0.lock().unwrap().push((table, first, last));
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
fn a_group_is_marked_once_every_row_of_it_is_loaded() {
    let connect = fake;
    let mut plans = vec![plan("a", &[], &[]), plan("b", &["i"], &[])];
    plans[0].rows = 40_000;
    plans[1].rows = 4_000;
    // Four groups: a's rows in four ranges of several chunks, b's in three
    // (the third group has none of b's: an empty range).
    let ranges = vec![
        vec![
            (1, 10_000),
            (10_001, 20_000),
            (20_001, 30_000),
            (30_001, 40_000),
        ],
        vec![(1, 1_000), (1_001, 2_000), (1, 0), (2_001, 4_000)],
    ];
    for (ahead, loaders) in [(0, 2), (1, 3), (2, 2)] {
        let source = Recording(Mutex::new(Vec::new()), Mutex::new(Vec::new()));
        let group_of = |table: usize, row: u32| {
            (ranges[table].iter())
                .position(|&(a, b)| (a..=b).contains(&row))
                .unwrap()
        };
        let marks = Mutex::new(Vec::new());
        let mark = |_: &mut dyn Connection, g: usize| -> anyhow::Result<()> {
            // Every range of the group is loaded, and no range of a group
            // more than `ahead` past the first one not marked has started.
            let done = source.0.lock().unwrap().clone();
            for (table, r) in ranges.iter().enumerate() {
                let (from, to) = r[g];
                let rows: u32 = done
                    .iter()
                    .filter(|&&(t, a, b)| t == table && a >= from && b <= to)
                    .map(|&(_, a, b)| b - a + 1)
                    .sum();
                assert_eq!(
                    rows,
                    (to + 1).saturating_sub(from),
                    "group {g}, table {table}"
                );
            }
            let mut marks = marks.lock().unwrap();
            let open = (0..).find(|g| !marks.contains(g)).unwrap();
            for &(table, row) in source.1.lock().unwrap().iter() {
                let started = group_of(table, row);
                assert!(
                    started <= open + ahead,
                    "group {started} started, {open} open"
                );
            }
            marks.push(g);
            Ok(())
        };
        let steps = Steps {
            ranges: Some(&ranges),
            groups: Some(Groups { ahead, mark: &mark }),
            create: false,
            indexes: true,
            drop_on_failure: false,
        };
        let mut first = connect().unwrap();
        let stored = load_with(
            first.as_mut(),
            &connect,
            &plans,
            loaders,
            &source,
            &NoProgress,
            "",
            &steps,
        )
        .unwrap();
        assert_eq!(stored, [40_000, 4_000]);
        let mut marks = marks.into_inner().unwrap();
        if ahead == 0 {
            assert_eq!(marks, [0, 1, 2, 3], "one group at a time, in order");
        }
        marks.sort();
        assert_eq!(marks, [0, 1, 2, 3], "ahead {ahead}: each group marked once");
    }
}
