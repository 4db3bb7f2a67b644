//! The shared loader's queue of jobs: which load, index build or finishing
//! step a free loader takes next, what a finished one makes ready, and how
//! far ahead of an unfinished group of ranges the loads may go.
//!
//! Groups are what make a load resumable without stopping at each step:
//! TPC-C's load is one group per warehouse, marked loaded once all its
//! rows are committed. The loaders go on with the next warehouse's tables
//! while the last ones of a warehouse are still loading (one warehouse at
//! a time left one connection idle behind its largest table: 17.5 s for
//! 10 warehouses on MariaDB against 15.4 s overlapping, two cores), and no further than [`Queue::ahead`]
//! groups past the first unmarked one, which bounds what a stopped load can
//! leave half-written.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};

use super::TablePlan;

/// One unit of a load's work, taken from the [`Queue`] by a loader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Job {
    /// Generate and load rows `first..=last` of the table of plan `table`,
    /// part of range group `group`.
    Load {
        table: usize,
        first: u32,
        last: u32,
        group: usize,
    },
    /// Build index number `index` of the table's [`TablePlan::indexes`].
    Index { table: usize, index: usize },
    /// Run the table's [`TablePlan::finish`].
    Finish { table: usize },
}

impl Job {
    /// The position of the job's table among the plans.
    pub(super) fn table(&self) -> usize {
        match *self {
            Job::Load { table, .. } | Job::Index { table, .. } | Job::Finish { table } => table,
        }
    }
}

/// What is left to do, shared by the loaders behind a mutex.
#[derive(Debug)]
pub(super) struct Queue {
    /// Jobs ready to run, the next one first.
    pub jobs: VecDeque<Job>,
    /// Load jobs of each table (by plan position) not finished yet.
    pub loads_left: Vec<u32>,
    /// Index builds of each table not finished yet.
    pub indexes_left: Vec<usize>,
    /// Load jobs of each range group not finished yet.
    pub group_left: Vec<u32>,
    /// The first range group not marked done: loads of groups up to
    /// `first_open + ahead` may run.
    pub first_open: usize,
    /// How many groups past the first open one may load at once.
    pub ahead: usize,
    /// Groups all of whose loads are finished, marked done or not.
    pub complete: Vec<bool>,
    /// Jobs taken and not finished (a group's mark counting as part of its
    /// last load): while one runs, more may follow it.
    pub running: usize,
    /// A job failed: loaders stop taking jobs.
    pub failed: bool,
    /// Loads of one table run one at a time (see
    /// [`super::one_loader_per_table`]).
    pub one_per_table: bool,
    /// With `one_per_table`: whether a load of each table is running.
    pub loading: Vec<bool>,
    /// Load rows only: no index builds or finishing statements.
    pub no_indexes: bool,
    /// Rows the server said each table's loads stored (COPY's and LOAD
    /// DATA's replies), by plan position.
    pub stored: Vec<u64>,
}

impl Default for Queue {
    fn default() -> Queue {
        Queue {
            jobs: VecDeque::new(),
            loads_left: Vec::new(),
            indexes_left: Vec::new(),
            group_left: Vec::new(),
            first_open: 0,
            ahead: usize::MAX,
            complete: Vec::new(),
            running: 0,
            failed: false,
            one_per_table: false,
            loading: Vec::new(),
            no_indexes: false,
            stored: Vec::new(),
        }
    }
}

impl Queue {
    /// Takes the first job that may run now: with `one_per_table`, the
    /// loads of a table that is being loaded wait; the loads of a group
    /// more than `ahead` past the first open one wait.
    fn pop(&mut self) -> Option<Job> {
        let limit = self.first_open.saturating_add(self.ahead);
        let at = self.jobs.iter().position(|job| match *job {
            Job::Load { table, group, .. } => {
                !(self.one_per_table && self.loading[table]) && group <= limit
            }
            _ => true,
        })?;
        let job = self.jobs.remove(at)?;
        if let Job::Load { table, .. } = job {
            if self.one_per_table {
                self.loading[table] = true;
            }
        }
        Some(job)
    }

    /// Table `table`'s rows are all in: its index builds become ready, ahead
    /// of the loads of other tables, so that each table is finished as soon
    /// as possible (or its finish, if it has no index to build).
    pub(super) fn loaded(&mut self, table: usize, plan: &TablePlan) {
        if self.no_indexes {
            return;
        }
        if plan.indexes.is_empty() {
            self.indexed(table, plan);
        }
        for index in (0..plan.indexes.len()).rev() {
            self.jobs.push_front(Job::Index { table, index });
        }
    }

    /// Table `table`'s indexes are all built.
    fn indexed(&mut self, table: usize, plan: &TablePlan) {
        if !plan.finish.is_empty() {
            self.jobs.push_front(Job::Finish { table });
        }
    }

    /// Records that `job` finished (successfully) and makes ready what
    /// waited for it; the group whose last load it was, if any.
    fn finished(&mut self, job: Job, plans: &[TablePlan]) -> Option<usize> {
        match job {
            Job::Load { table, group, .. } => {
                if self.one_per_table {
                    self.loading[table] = false;
                }
                self.loads_left[table] -= 1;
                if self.loads_left[table] == 0 {
                    self.loaded(table, &plans[table]);
                }
                self.group_left[group] -= 1;
                (self.group_left[group] == 0).then_some(group)
            }
            Job::Index { table, .. } => {
                self.indexes_left[table] -= 1;
                if self.indexes_left[table] == 0 {
                    self.indexed(table, &plans[table]);
                }
                None
            }
            Job::Finish { .. } => None,
        }
    }

    /// Group `group`'s loads are finished and marked: the window moves on
    /// past every group finished before the first open one.
    pub(super) fn mark(&mut self, group: usize) {
        if self.complete.len() < self.group_left.len() {
            self.complete.resize(self.group_left.len(), false);
        }
        self.complete[group] = true;
        while self.complete.get(self.first_open) == Some(&true) {
            self.first_open += 1;
        }
    }
}

/// The [`Queue`] and the condition loaders wait on for it to change.
pub(super) struct Shared {
    pub queue: Mutex<Queue>,
    pub changed: Condvar,
}

impl Shared {
    pub(super) fn new(queue: Queue) -> Shared {
        Shared {
            queue: Mutex::new(queue),
            changed: Condvar::new(),
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Queue> {
        // A loader panics only outside the lock; a poisoned queue is intact.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next job, waiting while none is ready but some are running (they
    /// may make more ready); None when all is done or a job failed.
    pub(super) fn take(&self) -> Option<Job> {
        let mut q = self.lock();
        loop {
            if q.failed {
                return None;
            }
            if let Some(job) = q.pop() {
                q.running += 1;
                return Some(job);
            }
            if q.running == 0 {
                return None;
            }
            q = self.changed.wait(q).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Records the end of `job`, taken with [`Shared::take`]. Returns the
    /// group whose last load it was: the caller marks it (or not, if that
    /// fails) with [`Shared::marked`], and until then the job counts as
    /// running, so that no loader leaves for want of jobs the mark would
    /// let start.
    pub(super) fn done(&self, job: Job, ok: bool, plans: &[TablePlan]) -> Option<usize> {
        let mut q = self.lock();
        let group = if ok {
            q.finished(job, plans)
        } else {
            q.failed = true;
            None
        };
        if group.is_none() {
            q.running -= 1;
            self.changed.notify_all();
        }
        group
    }

    /// The end of the mark of `group`, which [`Shared::done`] returned.
    pub(super) fn marked(&self, group: usize, ok: bool) {
        let mut q = self.lock();
        q.running -= 1;
        if ok {
            q.mark(group);
        } else {
            q.failed = true;
        }
        self.changed.notify_all();
    }

    /// Stops every loader (one could not even connect).
    pub(super) fn fail(&self) {
        self.lock().failed = true;
        self.changed.notify_all();
    }
}
