//! The engine's per-transaction path allocates nothing in steady state:
//! a counting global allocator compares two runs of the real engine and a
//! real sysbench workload (on the fake driver, so only dbsweep's own code is
//! measured) that differ only in their number of transactions.

mod util;

use std::sync::atomic::AtomicBool;

use dbsweep::driver::ErrorSet;
use dbsweep::driver::{self, Dialect, Target};
use dbsweep::engine::{self, RunConfig};
use dbsweep::rand::dist::{DistKind, DistParams};
use dbsweep::rand::RandConfig;
use dbsweep::workload::{self};

#[global_allocator]
static GLOBAL: util::alloc::Counting = util::alloc::Counting;

/// Allocations made by one engine run of `events` transactions.
fn allocations(name: &str, events: u64) -> u64 {
    let rand = RandConfig {
        kind: DistKind::Uniform,
        params: DistParams::default(),
        seed: 1,
    };
    let w = workload::build(name, &[], Dialect::Sqlite, rand).unwrap();
    let target = Target::parse("fake://").unwrap();
    let connect: engine::Connect = std::sync::Arc::new(move || driver::connect(&target));
    let cfg = RunConfig {
        threads: 2,
        time: None,
        events: Some(events),
        rounds: None,
        warmup: std::time::Duration::ZERO,
        report_interval: None,
        interval_percentile: 95.0,
        max_retries: None,
        ignore_errors: ErrorSet::NONE,
        grace: std::time::Duration::from_secs(1),
        seed: 1,
        reconnect_every: None,
        timeout: None,
        pacing: Default::default(),
        shard: None,
        client_threads: None,
        pipeline: None,
        release: None,
    };
    let before = util::alloc::process_allocations();
    let r = engine::run(
        w.as_ref(),
        connect,
        &cfg,
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    let after = util::alloc::process_allocations();
    assert_eq!(r.counters.transactions, events);
    after - before
}

#[test]
fn steady_state_transactions_do_not_allocate() {
    for name in ["oltp_read_write", "oltp_point_select", "oltp_insert"] {
        // Warm the process (thread-locals, lazy statics) once.
        allocations(name, 100);
        let small = allocations(name, 1_000);
        let large = allocations(name, 21_000);
        // 20,000 more transactions (over 400,000 statements for
        // oltp_read_write) may cost allocations for histogram chunks of
        // latencies not seen before — more of them when a busy machine
        // spreads the latencies — but never one per transaction (20,000).
        let extra = large.saturating_sub(small);
        assert!(
            extra < 1_000,
            "{name}: {extra} more allocations for 20,000 more transactions ({small} vs {large})"
        );
    }
}
