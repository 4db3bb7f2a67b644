//! `check`: a workload's consistency conditions on a prepared database
//! (TPC-C's clause 3.3.2, `dbsweep check tpcc --db URL`), before or after
//! a run. Prints one line per condition; a broken one names the
//! warehouses, districts or rows that break it. Exit status 1 when any
//! condition fails.

use std::time::Instant;

use super::run::{build, require_target, TargetRequest};
use super::{check_sqlite_path, connect_checked, print_conditions, RunStatus};
use crate::UsageError;

pub fn check(t: &TargetRequest) -> anyhow::Result<RunStatus> {
    let target = require_target(t, "check")?;
    let w = build(t, &target)?;
    check_sqlite_path(&target, false, w.name())?;
    let mut conn = connect_checked(&target)?;
    let started = Instant::now();
    let Some(conditions) = w.consistency(conn.as_mut())? else {
        return Err(UsageError(format!(
            "workload {} defines no consistency conditions: `dbsweep check` knows tpcc's",
            w.name()
        ))
        .into());
    };
    Ok(
        if print_conditions(&conditions, &target.display, started, "") {
            RunStatus::Ok
        } else {
            RunStatus::Aborted
        },
    )
}
