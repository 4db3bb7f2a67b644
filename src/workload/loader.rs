//! The parallel, chunked table loader every workload family prepares its
//! data with, and the table checks that go with it.
//!
//! A family describes each table once ([`TablePlan`]: the CREATE TABLE its
//! rows are loaded into, the index builds after the load, the statements
//! that finish it) and hands over a [`RowSource`] that generates any range
//! of a table's rows on its own. [`load`] cuts every table into chunks,
//! lets several connections take them from one queue (each chunk is one
//! [`Connection::bulk_load`], i.e. one `LOAD DATA`, `COPY` or batch of
//! INSERTs), starts a table's index builds, each on a connection of its own,
//! the moment its last chunk is in, and finishes it once they are built.
//! Where concurrent loads of one table only contend with each other
//! (InnoDB, see [`one_loader_per_table`]), a table's chunks go to one
//! loader at a time and the loaders share out the tables instead.
//! Because a row is a function of the seed, its table and its number alone,
//! the data do not depend on how many loaders there were or which loaded
//! what.

mod queue;

use anyhow::Context as _;

use crate::driver::{Connection, Dialect, Value};
use crate::util::progress::Progress;
use crate::workload::Connector;
use crate::UsageError;
use queue::{Job, Queue, Shared};

/// Rows generated between two progress updates: often enough for a smooth
/// bar, rarely enough that the shared counter costs nothing.
const PROGRESS_STEP: u64 = 1000;

/// Bounds of the rows per load job when several loaders share a table
/// (see [`chunk_rows`]): a job is one bulk-load statement, and one
/// transaction.
pub const MIN_CHUNK_ROWS: u32 = 5_000;
pub const MAX_CHUNK_ROWS: u32 = 100_000;

/// Load jobs per loader that a table is cut into, at least (within the
/// bounds above): the loaders take them from one queue, so the more there
/// are, the closer together the loaders finish.
const CHUNKS_PER_LOADER: u32 = 16;

/// Generates a range of rows: each call appends the next row's values and
/// returns false once the range is done.
pub type Rows<'a> = Box<dyn FnMut(&mut Vec<Value>) -> bool + 'a>;

/// A generator of table rows, shared by the loader threads.
pub trait RowSource: Sync {
    /// Rows `first..=last` (numbered from 1) of the table at position
    /// `table` of the plans: each call of the returned closure appends the
    /// next row's values, in [`TablePlan::columns`] order, and returns
    /// false once the range is done.
    fn rows(&self, table: usize, first: u32, last: u32) -> Rows<'_>;
}

/// How [`load`] builds one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TablePlan {
    pub name: String,
    /// The CREATE TABLE the rows are loaded into.
    pub create: String,
    /// The columns the [`RowSource`] fills, in order.
    pub columns: Vec<&'static str>,
    /// Rows to load, numbered 1..=rows.
    pub rows: u32,
    /// Index builds once every row is in. They do not depend on each other,
    /// so each runs on a connection of its own when there are several:
    /// on a server each is one process or thread, on one core.
    pub indexes: Vec<String>,
    /// Run in order on one connection once the indexes are built.
    pub finish: Vec<String>,
}

/// How many connections to load over: one for SQLite, which has a single
/// writer (more connections would only wait on each other's locks); for a
/// server, `threads` or the CPUs of this machine if there are more, since
/// one connection is one server process or thread and loading a single
/// table on one keeps one core busy while the others idle.
pub fn loaders(dialect: Dialect, threads: usize) -> usize {
    match dialect {
        Dialect::Sqlite => 1,
        _ => {
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
            threads.max(cpus).max(1)
        }
    }
}

/// Whether a table should take its chunks one at a time, on one loader.
///
/// MySQL/MariaDB: InnoDB stores a table in its primary key's B-tree, so
/// connections inserting into one table at once take turns at the same
/// index and page latches. Measured with 1,000,000 sbtest rows on MariaDB
/// 10.11 (2 cores, 5 interleaved rounds): one connection was faster in
/// every round (3.92–5.28 s against 5.05–5.55 s), and with two the server
/// spent about 30% of its CPU spinning on a latch (bench/README.md).
/// A PostgreSQL heap has no such order: concurrent COPYs into one table
/// each fill pages of their own, and two load it about 1.3× as fast as one.
pub fn one_loader_per_table(dialect: Dialect) -> bool {
    dialect == Dialect::Mysql
}

/// Rows per load job for a largest table of `rows` rows over `loaders`
/// connections: the whole table with a single loader; otherwise about
/// [`CHUNKS_PER_LOADER`] jobs per loader for it, so that they finish close
/// together, within [`MIN_CHUNK_ROWS`, `MAX_CHUNK_ROWS`] so that no
/// statement is too short or too long.
pub fn chunk_rows(rows: u32, loaders: usize) -> u32 {
    if loaders <= 1 {
        return rows.max(1);
    }
    let per = rows.div_ceil(CHUNKS_PER_LOADER.saturating_mul(loaders as u32).max(1));
    per.clamp(MIN_CHUNK_ROWS, MAX_CHUNK_ROWS)
}

/// Creates every table of `plans` on `first` and loads it over up to
/// `loaders` connections (see [`loaders`]), the rows from `source`; then
/// builds its indexes and runs its finishing statements. `label` names the
/// tables on the progress bar. Drops every table of `plans` if anything
/// fails, so that nothing is left half-written; the caller checks
/// beforehand that none exists (see [`ensure_absent`]).
pub fn load(
    first: &mut dyn Connection,
    connect: Connector<'_>,
    plans: &[TablePlan],
    loaders: usize,
    source: &dyn RowSource,
    progress: &dyn Progress,
    label: &str,
) -> anyhow::Result<()> {
    let steps = Steps {
        ranges: None,
        groups: None,
        create: true,
        indexes: true,
        drop_on_failure: true,
    };
    load_with(
        first, connect, plans, loaders, source, progress, label, &steps,
    )
    .map(|_| ())
}

/// What [`load_with`] does: [`load`] does all of it; a resumable load
/// (TPC-C's, a warehouse at a time) loads ranges of rows into tables that
/// exist, keeps what it loaded if it fails, and builds the indexes last.
pub struct Steps<'a> {
    /// The ranges of rows to load of each table (by plan position); None:
    /// every row of each, `1..=rows`. Range `i` of every table is group
    /// `i` (an empty range, first > last, holds no rows): the groups load
    /// in order, overlapping (see [`Groups`]).
    pub ranges: Option<&'a [Vec<(u32, u32)>]>,
    /// What marks a group loaded, and how far ahead of it loads may go.
    pub groups: Option<Groups<'a>>,
    /// Create the tables first (otherwise they exist).
    pub create: bool,
    /// Build each table's indexes and run its finishing statements once
    /// its rows are in.
    pub indexes: bool,
    /// Drop every table of the plans if anything fails.
    pub drop_on_failure: bool,
}

/// Marks a group of ranges loaded: called with the connection of the
/// loader that finished the group's last load, once every row of the group
/// is committed, and the group's number.
pub type MarkGroup<'a> = dyn Fn(&mut dyn Connection, usize) -> anyhow::Result<()> + Sync + 'a;

/// How a resumable load's groups go (see [`Steps::ranges`]).
pub struct Groups<'a> {
    /// Loads of a group may start while up to this many groups before it
    /// are not marked: a stopped load leaves unmarked rows in at most the
    /// first `ahead + 1` groups not marked.
    pub ahead: usize,
    pub mark: &'a MarkGroup<'a>,
}

/// [`load`], doing `steps`; `label` empty: the caller's progress bar is
/// running already (neither started nor finished here). Returns the rows
/// the server said it stored in each table (by plan position): the replies
/// of COPY, LOAD DATA or the inserts, the count a load can check without
/// reading its tables again.
#[allow(clippy::too_many_arguments)]
pub fn load_with(
    first: &mut dyn Connection,
    connect: Connector<'_>,
    plans: &[TablePlan],
    loaders: usize,
    source: &dyn RowSource,
    progress: &dyn Progress,
    label: &str,
    steps: &Steps<'_>,
) -> anyhow::Result<Vec<u64>> {
    let whole: Vec<Vec<(u32, u32)>> = plans
        .iter()
        .map(|p| {
            if p.rows > 0 {
                vec![(1, p.rows)]
            } else {
                Vec::new()
            }
        })
        .collect();
    let ranges = steps.ranges.unwrap_or(&whole);
    let largest = plans.iter().map(|p| p.rows).max().unwrap_or(0);
    let one_per_table = one_loader_per_table(first.dialect());
    let chunk = if one_per_table {
        // The loaders do not finish a table together; a chunk only bounds
        // the transaction.
        largest.clamp(1, MAX_CHUNK_ROWS)
    } else {
        chunk_rows(largest, loaders)
    };
    let mut queue = Queue {
        one_per_table,
        loading: vec![false; plans.len()],
        no_indexes: !steps.indexes,
        stored: vec![0; plans.len()],
        ahead: steps.groups.as_ref().map_or(usize::MAX, |g| g.ahead),
        ..Queue::default()
    };
    let mut total = 0u64;
    let mut loads = vec![0u32; plans.len()];
    // Group by group: the first range of every table, then the second…, so
    // that the groups (TPC-C's warehouses) are loaded in order while the
    // loaders overlap one group's last tables with the next one's first.
    let groups = ranges.iter().map(Vec::len).max().unwrap_or(0);
    queue.group_left = vec![0; groups];
    for group in 0..groups {
        for (table, plan) in plans.iter().enumerate() {
            let Some(&(from, to)) = ranges.get(table).and_then(|r| r.get(group)) else {
                continue;
            };
            let to = to.min(plan.rows);
            let mut next = from.max(1);
            if to >= next {
                total += u64::from(to - next) + 1;
            }
            while next <= to {
                let last = next.saturating_add(chunk - 1).min(to);
                queue.jobs.push_back(Job::Load {
                    table,
                    first: next,
                    last,
                    group,
                });
                loads[table] += 1;
                queue.group_left[group] += 1;
                next = match last.checked_add(1) {
                    Some(n) => n,
                    None => break,
                };
            }
        }
    }
    for (table, plan) in plans.iter().enumerate() {
        queue.loads_left.push(loads[table]);
        queue.indexes_left.push(plan.indexes.len());
        if loads[table] == 0 {
            queue.loaded(table, plan);
        }
    }
    let most_indexes = plans.iter().map(|p| p.indexes.len()).max().unwrap_or(0);
    let parallel_loads = if one_per_table {
        plans.len()
    } else {
        queue.jobs.len()
    };
    let loaders = loaders.min(parallel_loads.max(most_indexes)).max(1);

    if !label.is_empty() {
        progress.start(label, total);
    }
    // A group without rows is loaded already (its mark is written below).
    let empty: Vec<usize> = (0..groups).filter(|&g| queue.group_left[g] == 0).collect();
    for &g in &empty {
        queue.mark(g);
    }
    let mark = steps.groups.as_ref().map(|g| g.mark);
    let shared = Shared::new(queue);
    let result = (|| {
        for plan in plans.iter().filter(|_| steps.create) {
            first
                .execute_sql(&plan.create)
                .with_context(|| format!("could not create table {}", plan.name))?;
        }
        if let Some(mark) = mark {
            for &g in &empty {
                mark(first, g)?;
            }
        }
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..loaders)
                .map(|_| {
                    let shared = &shared;
                    s.spawn(move || loader(connect, plans, source, shared, progress, mark))
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
        })
    })();
    if !label.is_empty() {
        progress.finish();
    }
    if result.is_err() && steps.drop_on_failure {
        // Best effort: the load error is what the user needs to see.
        let names: Vec<String> = plans.iter().map(|p| p.name.clone()).collect();
        let _ = drop_tables(first, &names);
    }
    result.map(|()| shared.lock().stored.clone())
}

/// One loader: connects, then runs jobs from the queue until there are
/// none left or another loader failed.
fn loader(
    connect: Connector<'_>,
    plans: &[TablePlan],
    source: &dyn RowSource,
    shared: &Shared,
    progress: &dyn Progress,
    mark: Option<&MarkGroup<'_>>,
) -> anyhow::Result<()> {
    let mut conn = match connect().context("could not connect to load the tables") {
        Ok(c) => c,
        Err(e) => {
            shared.fail();
            return Err(e);
        }
    };
    while let Some(job) = shared.take() {
        let result = run(conn.as_mut(), plans, source, &job, progress);
        if let (Ok(n), Job::Load { table, .. }) = (&result, job) {
            shared.lock().stored[table] += n;
        }
        if let Some(group) = shared.done(job, result.is_ok(), plans) {
            let marked = mark.map_or(Ok(()), |m| {
                m(conn.as_mut(), group)
                    .with_context(|| format!("could not mark group {group} of the load done"))
            });
            shared.marked(group, marked.is_ok());
            marked?;
        }
        result?;
    }
    Ok(())
}

/// Runs one job on `conn`: the rows the server stored (a load's), else 0.
fn run(
    conn: &mut dyn Connection,
    plans: &[TablePlan],
    source: &dyn RowSource,
    job: &Job,
    progress: &dyn Progress,
) -> anyhow::Result<u64> {
    let plan = &plans[job.table()];
    let name = &plan.name;
    match *job {
        Job::Load {
            table, first, last, ..
        } => {
            let mut gen = source.rows(table, first, last);
            let mut pending = 0u64;
            let mut rows = 0u64;
            let stored = conn
                .bulk_load(name, &plan.columns, &mut |row| {
                    if !gen(row) {
                        return false;
                    }
                    rows += 1;
                    pending += 1;
                    if pending == PROGRESS_STEP {
                        progress.inc(pending);
                        pending = 0;
                    }
                    true
                })
                .with_context(|| format!("could not load table {name}"))?;
            // The bar counts row numbers: a source that leaves some empty
            // (TPC-C's order-line slots past an order's line count) has
            // them counted here, so the bar ends at 100 %.
            let numbers = u64::from(last - first) + 1;
            progress.inc(pending + numbers.saturating_sub(rows));
            return Ok(stored);
        }
        Job::Index { index, .. } => {
            let sql = &plan.indexes[index];
            conn.execute_sql(sql)
                .with_context(|| format!("could not index table {name}: {sql}"))?;
        }
        Job::Finish { .. } => {
            for sql in &plan.finish {
                conn.execute_sql(sql)
                    .with_context(|| format!("could not finish table {name}: {sql}"))?;
            }
        }
    }
    Ok(0)
}

/// An `anyhow` error carrying a [`UsageError`] (exit status 2).
pub fn usage(msg: String) -> anyhow::Error {
    UsageError(msg).into()
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
#[path = "loader_tests.rs"]
mod tests;
