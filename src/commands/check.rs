//! `check`: a workload's consistency conditions on a prepared database
//! (TPC-C's clause 3.3.2, `dbsweep check tpcc --db URL`), before or after
//! a run. Prints one line per condition; a broken one names the
//! warehouses, districts or rows that break it. Exit status 1 when any
//! condition fails.

use std::time::Instant;

use super::run::{build, require_target, TargetRequest};
use super::{check_sqlite_path, connect_checked, RunStatus};
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
    let failed = conditions.iter().filter(|c| !c.holds).count();
    for c in &conditions {
        if c.holds {
            println!("ok    {}", c.name);
        } else {
            println!("FAIL  {} ({} broken)", c.name, c.count);
            for f in &c.failures {
                println!("        {f}");
            }
            if c.count > c.failures.len() as u64 {
                println!("        … and {} more", c.count - c.failures.len() as u64);
            }
        }
    }
    println!(
        "{} of {} conditions hold on {} ({:.2}s)",
        conditions.len() - failed,
        conditions.len(),
        target.display,
        started.elapsed().as_secs_f64()
    );
    Ok(if failed == 0 {
        RunStatus::Ok
    } else {
        RunStatus::Aborted
    })
}
