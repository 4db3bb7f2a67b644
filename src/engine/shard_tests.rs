//! A run split into shards and merged is the one-process run: on the fake
//! driver in virtual time (`util::clock`), where a statement takes exactly
//! its scripted latency, the merged histograms equal the one-process
//! run's bucket for bucket.
//!
//! What is exact and why: with `--rounds`, which client runs which
//! transaction does not depend on scheduling, each client draws from its
//! run-wide stream (`Rng::for_client(seed, g)`) in any shard, the fake
//! driver's latencies and errors are counted per connection, and virtual
//! time removes the clock's jitter. The windows' lengths (and so the rates)
//! are wall-clock figures and are not compared; `--events` hands out
//! transactions to whichever client asks first, so there only the counts
//! are exact.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use super::merge::{merge, Input};
use super::point::{self, Point};
use super::tests::config;
use super::*;
use crate::driver::{self, Target, Value};
use crate::rand::dist::{DistKind, DistParams};
use crate::rand::{RandConfig, Rng};
use crate::record;
use crate::util::clock;
use crate::util::progress::Progress;
use crate::workload::{ClientScript, Connector, Op, OptionValues, StatementDef};

/// BEGIN; SELECT; UPDATE; COMMIT, with a pause before BEGIN drawn from the
/// client's stream (so the histograms depend on every stream being the
/// one-process run's), and clients from `slow_from` on 50 ms slower.
struct Virtual {
    statements: Vec<StatementDef>,
    options: OptionValues,
    slow_from: usize,
}

impl Virtual {
    fn new(slow_from: usize) -> Virtual {
        Virtual {
            statements: vec![
                StatementDef {
                    kind: "point_select".into(),
                    sql: "SELECT c FROM t WHERE id=?".into(),
                },
                StatementDef {
                    kind: "update".into(),
                    sql: "UPDATE t SET k=k+1 WHERE id=?".into(),
                },
            ],
            options: OptionValues::default(),
            slow_from,
        }
    }
}

struct Script {
    step: usize,
    params: Vec<Value>,
    rng: Rng,
    slow: bool,
}

impl ClientScript for Script {
    fn start(&mut self) {
        // The client's thread runs on virtual time from its first
        // transaction's start on.
        clock::enter_virtual();
        self.step = 0;
        let x = self.rng.uniform(1, 1000);
        self.params[0] = Value::Int(x as i64);
        let pause = Duration::from_micros(u64::from(x) * 7)
            + if self.slow {
                Duration::from_millis(50)
            } else {
                Duration::ZERO
            };
        clock::advance(pause);
    }

    fn next(&mut self) -> Option<Op<'_>> {
        self.step += 1;
        match self.step {
            1 => Some(Op::Begin { writes: true }),
            2 => Some(Op::Exec(0, &self.params)),
            3 => Some(Op::Exec(1, &self.params)),
            4 => Some(Op::Commit),
            _ => None,
        }
    }
}

impl Workload for Virtual {
    fn name(&self) -> &'static str {
        "virtual"
    }
    fn statements(&self) -> &[StatementDef] {
        &self.statements
    }
    fn prepare(&self, _: Connector<'_>, _: usize, _: &dyn Progress) -> anyhow::Result<()> {
        Ok(())
    }
    fn cleanup(&self, _: &mut dyn Connection) -> anyhow::Result<()> {
        Ok(())
    }
    fn check_prepared(&self, _: &mut dyn Connection) -> anyhow::Result<()> {
        Ok(())
    }
    fn client(&self, id: usize, _clients: usize, rng: Rng) -> Box<dyn ClientScript> {
        Box::new(Script {
            step: 0,
            params: vec![Value::Int(0)],
            rng,
            slow: id >= self.slow_from,
        })
    }
    fn options(&self) -> &OptionValues {
        &self.options
    }
}

/// Statement latencies cycle per connection; every 11th statement is a
/// deadlock, retried.
const URL: &str = "fake://?latency=120us,2ms,350us,900us,15us&error_every=11:deadlock";
const CLIENTS: usize = 14;

fn rounds(n: u64) -> RunConfig {
    RunConfig {
        rounds: Some(n),
        report_interval: Some(Duration::from_millis(20)),
        seed: 4242,
        ..config(CLIENTS)
    }
}

/// The record of one run of `w` (a shard of it, with `cfg.shard`).
fn run_record(w: &Virtual, cfg: &RunConfig) -> record::Run {
    let target = Target::parse(URL).unwrap();
    let connect: Connect = {
        let target = target.clone();
        Arc::new(move || driver::connect(&target))
    };
    let instances: [&dyn Workload; 1] = [w];
    let mut intervals = Vec::new();
    let result = run_instances(
        &instances,
        connect,
        cfg,
        &AtomicBool::new(false),
        &mut |s| intervals.push(point::interval_record(s, &cfg.pacing)),
        None,
    )
    .unwrap();
    let rand = RandConfig {
        kind: DistKind::Uniform,
        params: DistParams::default(),
        seed: cfg.seed,
    };
    let percentiles = [50.0, 90.0, 99.0, 99.9];
    let p = Point::new(&target, &instances, cfg, rand, &percentiles);
    point::record(&p, &result, 0, intervals.into())
}

fn shards(w: &Virtual, cfg: &RunConfig, n: usize) -> Vec<record::Run> {
    (0..n)
        .map(|i| {
            run_record(
                w,
                &RunConfig {
                    shard: Shard::new(i, n),
                    ..cfg.clone()
                },
            )
        })
        .collect()
}

fn merged(records: &[record::Run]) -> Result<record::Run, String> {
    let names: Vec<String> = (0..records.len()).map(|i| format!("s{i}.json")).collect();
    let inputs: Vec<Input<'_>> = records
        .iter()
        .zip(&names)
        .map(|(run, name)| Input { name, run })
        .collect();
    merge(&inputs)
}

#[test]
fn shards_merge_into_the_one_process_run_bucket_for_bucket() {
    let w = Virtual::new(CLIENTS - 2);
    let cfg = rounds(25);
    let one = run_record(&w, &cfg);
    let oh = one.result.histograms.as_ref().unwrap();
    assert_eq!(one.result.transactions, 25 * CLIENTS as u64);
    assert!(
        one.result.retries > 0,
        "the script's deadlocks were retried"
    );
    // Enough distinct values that a client run as another would show.
    assert!(oh.transaction.buckets.len() > 50, "{:?}", oh.transaction);
    for n in [1, 2, 3, 7] {
        let parts = shards(&w, &cfg, n);
        let clients: u64 = parts.iter().map(|p| p.run.threads).sum();
        assert_eq!(clients, CLIENTS as u64);
        let m = merged(&parts).unwrap();
        let mh = m.result.histograms.as_ref().unwrap();
        assert_eq!(mh.transaction, oh.transaction, "{n} shards: transactions");
        assert_eq!(mh.statements, oh.statements, "{n} shards: statements");
        assert_eq!(m.result.transactions, one.result.transactions);
        assert_eq!(m.result.queries, one.result.queries, "{n} shards");
        assert_eq!(m.result.retries, one.result.retries, "{n} shards");
        assert_eq!(m.result.errors, one.result.errors, "{n} shards");
        assert_eq!(m.result.failed_transactions, 0);
        // The summaries are derived from equal histograms by the same code.
        assert_eq!(m.result.latency, one.result.latency, "{n} shards");
        assert_eq!(m.result.statements, one.result.statements, "{n} shards");
        assert_eq!(m.run.threads, CLIENTS as u64);
        assert_eq!(m.run.shard, None);
        let rows = &m.result.shards.as_ref().unwrap().rows;
        assert_eq!(rows.len(), n);
        assert_eq!(
            rows.iter().map(|r| r.transactions).sum::<u64>(),
            m.result.transactions
        );
        // Every interval's transactions, summed over the intervals, are
        // the run's; the intervals' histograms hold each one once.
        let in_intervals: u64 = m.result.intervals.iter().map(|i| i.transactions).sum();
        assert_eq!(in_intervals, m.result.transactions, "{n} shards");
        let counted: u64 = m
            .result
            .intervals
            .iter()
            .map(|i| i.histogram.as_ref().unwrap().count)
            .sum();
        assert_eq!(counted, m.result.transactions, "{n} shards");
    }
}

#[test]
fn a_slow_shard_shows_in_the_merged_p99() {
    // 2 of 14 clients, all in the last of 7 shards, are 50 ms slower: one
    // transaction in 7, so the merged p99 is a slow one, while 6 of the 7
    // shards' p99s are fast and their mean is far below.
    let w = Virtual::new(CLIENTS - 2);
    let parts = shards(&w, &rounds(20), 7);
    let p99 = |r: &record::Run| {
        let l = r.result.latency.as_ref().unwrap();
        l.percentiles.iter().find(|p| p.p == 99.0).unwrap().us
    };
    let mean = parts.iter().map(p99).sum::<f64>() / parts.len() as f64;
    let m = merged(&parts).unwrap();
    assert!(p99(&m) >= 50_000.0, "merged p99 {} µs", p99(&m));
    assert!(mean < 0.5 * p99(&m), "mean of the shards' p99s {mean} µs");
    let slow = &m.result.shards.as_ref().unwrap().rows[6];
    assert!(slow.latency_us.unwrap() >= 50_000.0);
}

#[test]
fn events_are_split_exactly() {
    let w = Virtual::new(usize::MAX);
    let cfg = RunConfig {
        events: Some(101),
        seed: 9,
        ..config(5)
    };
    for n in [2, 3] {
        let parts = shards(&w, &cfg, n);
        let per: Vec<u64> = parts.iter().map(|p| p.result.transactions).collect();
        assert_eq!(per.iter().sum::<u64>(), 101, "{per:?}");
        let m = merged(&parts).unwrap();
        assert_eq!(m.result.transactions, 101);
        assert_eq!(m.result.stop_reason, StopReason::Events);
        let count = m.result.histograms.as_ref().unwrap().transaction.count;
        assert_eq!(count, 101);
    }
}

#[test]
fn merges_of_other_records_are_refused_naming_the_fix() {
    let w = Virtual::new(usize::MAX);
    let cfg = RunConfig {
        rounds: Some(3),
        seed: 5,
        ..config(4)
    };
    let parts = shards(&w, &cfg, 2);
    let err = |rs: &[record::Run]| merged(rs).unwrap_err();

    let e = err(&[parts[0].clone()]);
    assert!(e.contains("shard 1 of 2 missing"), "{e}");
    let e = err(&[parts[0].clone(), parts[0].clone()]);
    assert!(e.contains("both shard 0 of 2"), "{e}");
    let whole = run_record(&w, &cfg);
    let e = err(&[whole, parts[1].clone()]);
    assert!(e.contains("s0.json is not a shard's record"), "{e}");
    let other_seed = run_record(
        &w,
        &RunConfig {
            seed: 6,
            shard: Shard::new(1, 2),
            ..cfg.clone()
        },
    );
    let e = err(&[parts[0].clone(), other_seed]);
    assert!(
        e.contains("not a shard of the same run") && e.contains("--rand-seed"),
        "{e}"
    );
    let three = shards(&w, &cfg, 3);
    let e = err(&[parts[0].clone(), three[1].clone()]);
    assert!(e.contains("split differs"), "{e}");
    let mut old = parts[1].clone();
    old.schema = "dbsweep-run/2".into();
    let e = err(&[parts[0].clone(), old]);
    assert!(e.contains("format dbsweep-run/2"), "{e}");
    assert!(merged(&parts).is_ok());
}

#[test]
fn a_shard_runs_its_clients_under_their_run_wide_numbers() {
    let w = Virtual::new(usize::MAX);
    let cfg = RunConfig {
        rounds: Some(2),
        ..config(7)
    };
    let parts = shards(&w, &cfg, 3);
    let threads: Vec<u64> = parts.iter().map(|p| p.run.threads).collect();
    assert_eq!(threads, [2, 2, 3]);
    let s = parts[2].run.shard.unwrap();
    assert_eq!((s.index, s.count, s.threads), (2, 3, 7));
}
