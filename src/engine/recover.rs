//! A run rebuilt from its series file when its process ended before the
//! run did (killed, out of memory, the machine went down): the header
//! says what ran, the closed intervals what it measured. The window is the
//! measured intervals the file holds, their counters summed and their
//! histograms added bucket by bucket, and every other figure derived by
//! the code that derives a finished run's (`derive`). What only a finished
//! run writes — errors by kind, statement and transaction-type latencies,
//! the client's CPU without metrics, the window's server totals — is
//! absent, and the record says so.

use std::path::Path;

use crate::record::{self, spool, Series};
use crate::stats::histogram::Histogram;

/// The record of the run whose series file is `path`.
pub fn recover(path: &Path) -> anyhow::Result<record::Run> {
    let (h, intervals, samples) = spool::read_file(path)?;
    let measured: Vec<&record::Interval> = intervals.iter().filter(|i| !i.warmup).collect();
    let sum = |f: &dyn Fn(&record::Interval) -> u64| measured.iter().map(|&i| f(i)).sum::<u64>();
    let mut latency = Histogram::new();
    let mut lag: Option<Histogram> = None;
    for i in &measured {
        if let Some(x) = &i.histogram {
            latency.merge(&super::derive::stats(x).map_err(anyhow::Error::msg)?);
        }
        if let Some(x) = &i.lag_histogram {
            lag.get_or_insert_with(Histogram::new)
                .merge(&super::derive::stats(x).map_err(anyhow::Error::msg)?);
        }
    }
    // The client's CPU, where the sampler measured it.
    let window_samples: Vec<&record::metrics::Sample> =
        samples.iter().filter(|s| !s.warmup).collect();
    let (user_s, system_s) = window_samples.iter().fold((0.0, 0.0), |(u, s), x| {
        (
            u + x.usage.client.cpu_user_s,
            s + x.usage.client.cpu_system_s,
        )
    });
    let mut missing = vec![
        "errors by kind",
        "statement and transaction-type latencies",
        "the window's machine and server totals",
    ];
    if window_samples.is_empty() {
        missing.push("the client's CPU");
    }
    let why = format!(
        "the process ended before the run did; rebuilt from the {} interval(s) its series file '{}' had closed ({} in the measured window). Not written before it ended: {}",
        intervals.len(),
        path.display(),
        measured.len(),
        missing.join(", ")
    );
    let cpus = h.machine.cpus_available.max(1);
    let measured_s: f64 = measured.iter().map(|i| i.duration_s).sum();
    let queries = record::Queries {
        read: sum(&|i| i.reads),
        write: sum(&|i| i.writes),
        other: sum(&|i| i.others),
        total: 0,
    };
    let (transactions, failed) = (sum(&|i| i.transactions), sum(&|i| i.failed));
    let (errors, reconnects) = (sum(&|i| i.errors), sum(&|i| i.reconnects));
    let queued = h
        .run
        .pacing
        .as_ref()
        .is_some_and(|p| p.rate.is_some() || p.users.is_some());
    let mut run = record::Run {
        schema: record::SCHEMA_ID.to_string(),
        tool: h.tool,
        started_unix_s: h.started_unix_s,
        released_unix_us: None,
        workload: h.workload,
        target: h.target,
        random: h.random,
        machine: h.machine,
        result: record::Outcome {
            stop_reason: record::StopReason::Incomplete,
            fatal_error: Some(why),
            measured_s,
            transactions,
            tps: 0.0,
            queries,
            qps: 0.0,
            failed_transactions: failed,
            retries: 0,
            ignored_errors: errors,
            reconnects,
            abandoned: 0,
            errors: record::ErrorCounts::default(),
            latency: None,
            statements: Vec::new(),
            fairness: crate::stats::fairness::fairness(&[]),
            client_cpu: record::ClientCpu {
                user_s,
                system_s,
                us_per_transaction: None,
                us_per_query: None,
                share_of_machine: 0.0,
                cpus,
            },
            intervals: Series::from(intervals),
            connect: None,
            histograms: Some(record::Histograms {
                transaction: record::Histogram::from(&latency),
                statements: Default::default(),
                service: None,
                lag: lag.as_ref().map(record::Histogram::from),
                types: Default::default(),
            }),
            metrics: None,
            pacing: queued.then_some(record::PacingOutcome {
                offered: None,
                offered_per_s: None,
                achieved_per_s: 0.0,
                late: None,
                skipped: None,
                unstarted: None,
                service: None,
                lag: None,
                setup_s: None,
            }),
            transaction_types: Vec::new(),
            shards: None,
            consistency: None,
            tpcc: None,
            tpch: None,
            chbench: None,
            plans: Vec::new(),
        },
        run: h.run,
    };
    super::derive::derive(&mut run).map_err(anyhow::Error::msg)?;
    Ok(run)
}
