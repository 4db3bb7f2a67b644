//! sysbench 1.0.20's OLTP workloads, rewritten as per-client scripts.
//!
//! # Layout
//! - [`schema`]: the `sbtestN` tables: DDL per dialect, the deterministic
//!   row generator, and the prepare / cleanup / check shared by the family.
//! - [`oltp`]: the `oltp_*` scripts (and `oltp_simple`, sysbench 0.4's simple
//!   mode), all built from one plan of statement groups.
//! - [`select_random`]: `select_random_points` and `select_random_ranges`,
//!   which split the `k` range of `sbtest1` between the clients.
//! - [`bulk_insert`]: multi-row INSERTs, one table per client.
//!
//! Statement text, per-transaction statement order, which draws choose a
//! table (uniform, once per statement group) and which choose ids (the
//! configured `--rand-type`) follow sysbench's Lua scripts. Where this
//! deviates from sysbench, the item's doc says so and why.

mod bulk_insert;
mod oltp;
mod schema;

pub use schema::render;
mod select_random;

use super::WorkloadInfo;
use crate::driver::{Dialect, ErrorKind};

/// sysbench 1.0.20's PostgreSQL driver rolls back and restarts the event on
/// SQLSTATE 23505 (unique violation) as on deadlocks and serialization
/// failures (drv_pgsql.c); its MySQL driver does not (1062 stays fatal).
pub fn retry_also(dialect: Dialect) -> &'static [ErrorKind] {
    match dialect {
        Dialect::Postgres => &[ErrorKind::DuplicateKey],
        _ => &[],
    }
}

/// Options of every workload that creates the `sbtestN` tables.
const OLTP_COMMON: [&str; 8] = [
    "tables",
    "table-offset",
    "table-size",
    "auto-inc",
    "secondary",
    "create-secondary",
    "create-table-options",
    "mysql-storage-engine",
];

/// The statement counts and switches of oltp_read_only.
const READS: [&str; 8] = [
    "skip-trx",
    "range-selects",
    "range-size",
    "point-selects",
    "simple-ranges",
    "sum-ranges",
    "order-ranges",
    "distinct-ranges",
];

/// The statement counts of the writing half of oltp_read_write.
const WRITES: [&str; 3] = ["index-updates", "non-index-updates", "delete-inserts"];

/// `a` followed by `b`; `N` must be their total length (checked at compile
/// time), so option lists are built from the groups above without repeating
/// names.
const fn cat<const A: usize, const B: usize, const N: usize>(
    a: [&'static str; A],
    b: [&'static str; B],
) -> [&'static str; N] {
    assert!(A + B == N, "cat: wrong output length");
    let mut out = [""; N];
    let mut i = 0;
    while i < A {
        out[i] = a[i];
        i += 1;
    }
    while i < N {
        out[i] = b[i - A];
        i += 1;
    }
    out
}

/// select_random_* work on sbtest1 only (sysbench refuses `--tables` > 1).
const ONE_TABLE: [&str; 7] = [
    "table-offset",
    "table-size",
    "auto-inc",
    "secondary",
    "create-secondary",
    "create-table-options",
    "mysql-storage-engine",
];

const READ_ONLY: [&str; 16] = cat(OLTP_COMMON, READS);
const READ_WRITE: [&str; 19] = cat(READ_ONLY, WRITES);
const WRITE_ONLY: [&str; 12] = cat(cat::<8, 1, 9>(OLTP_COMMON, ["skip-trx"]), WRITES);
const UPDATE_INDEX: [&str; 9] = cat(OLTP_COMMON, ["index-updates"]);
const UPDATE_NON_INDEX: [&str; 9] = cat(OLTP_COMMON, ["non-index-updates"]);
const SIMPLE: [&str; 9] = cat(OLTP_COMMON, ["skip-trx"]);
const RANDOM_POINTS: [&str; 8] = cat(ONE_TABLE, ["random-points"]);
const RANDOM_RANGES: [&str; 9] = cat(ONE_TABLE, ["number-of-ranges", "delta"]);
const BULK: [&str; 5] = [
    "tables",
    "table-offset",
    "bulk-rows",
    "create-table-options",
    "mysql-storage-engine",
];

/// Every sysbench workload, in `dbsweep workloads` order.
pub static WORKLOADS: &[WorkloadInfo] = &[
    WorkloadInfo {
        name: "oltp_read_only",
        description: "Read-only OLTP: point selects and four kinds of range selects per transaction",
        options: &READ_ONLY,
        build: oltp::build,
    },
    WorkloadInfo {
        name: "oltp_read_write",
        description: "Read/write OLTP: oltp_read_only's selects plus updates and a delete/insert pair",
        options: &READ_WRITE,
        build: oltp::build,
    },
    WorkloadInfo {
        name: "oltp_write_only",
        description: "Write-only OLTP: index and non-index updates and a delete/insert pair",
        options: &WRITE_ONLY,
        build: oltp::build,
    },
    WorkloadInfo {
        name: "oltp_point_select",
        description: "One primary-key point select per event, autocommit",
        options: &OLTP_COMMON,
        build: oltp::build,
    },
    WorkloadInfo {
        name: "oltp_update_index",
        description: "UPDATE of the indexed column k by primary key, autocommit",
        options: &UPDATE_INDEX,
        build: oltp::build,
    },
    WorkloadInfo {
        name: "oltp_update_non_index",
        description: "UPDATE of the non-indexed column c by primary key, autocommit",
        options: &UPDATE_NON_INDEX,
        build: oltp::build,
    },
    WorkloadInfo {
        name: "oltp_insert",
        description: "One single-row INSERT per event, autocommit (tables grow)",
        options: &OLTP_COMMON,
        build: oltp::build,
    },
    WorkloadInfo {
        name: "oltp_delete",
        description: "One DELETE by random primary key per event, autocommit (tables drain)",
        options: &OLTP_COMMON,
        build: oltp::build,
    },
    WorkloadInfo {
        name: "oltp_simple",
        description: "sysbench 0.4 simple mode: an all-column point select and a k=k+1 update per transaction",
        options: &SIMPLE,
        build: oltp::build,
    },
    WorkloadInfo {
        name: "select_random_points",
        description: "SELECT by k IN (random points) on sbtest1, each client in its own slice of k",
        options: &RANDOM_POINTS,
        build: select_random::build_points,
    },
    WorkloadInfo {
        name: "select_random_ranges",
        description: "SELECT count(k) over OR-ed k BETWEEN ranges on sbtest1, each client in its own slice",
        options: &RANDOM_RANGES,
        build: select_random::build_ranges,
    },
    WorkloadInfo {
        name: "bulk_insert",
        description: "Multi-row INSERTs of --bulk-rows rows, each client into its own table",
        options: &BULK,
        build: bulk_insert::build,
    },
];

#[cfg(test)]
pub(crate) mod testutil;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::options;

    #[test]
    fn every_listed_option_exists_and_names_are_unique() {
        for w in WORKLOADS {
            for o in w.options {
                assert!(options::spec(o).is_some(), "{}: unknown option {o}", w.name);
            }
            assert_eq!(WORKLOADS.iter().filter(|x| x.name == w.name).count(), 1);
            assert!(!w.description.contains('\n'));
        }
        let names: Vec<_> = WORKLOADS.iter().map(|w| w.name).collect();
        assert_eq!(names.len(), 12);
    }
}
