//! The records of a run's shards added into the record of the whole run.
//!
//! A shard's record carries every histogram it summarises, so adding
//! shards is adding numbers: counters are summed, histograms are summed
//! bucket by bucket (`stats::histogram::Histogram::merge`), and every
//! derived figure — rates, percentiles, shares, CPU per transaction — is
//! computed afterwards by `derive`, the code that derives one process's
//! record. A percentile of the merge is read from the summed histogram,
//! never averaged from the shards' percentiles, so a slow shard shows in
//! it as it would in one process.
//!
//! The machine and server metrics are merged by `metrics::merged`: the
//! server's as one shard sampled it, derived again against the merged
//! transactions; the machine's when every shard ran on one.
//!
//! [`merge`] refuses records that are not every shard of one run (other
//! settings, a shard twice or missing, an older format) with a message
//! naming the file and the fix. It takes records in memory, so whoever
//! collects them — `dbsweep merge` from files, a coordinator from its
//! workers — merges them the same way.

use std::collections::BTreeMap;

use super::derive::{self, stats};
use crate::metrics::{self, merged::ShardMetrics};
use crate::record::metrics::{Figure, Figures};
use crate::record::{self, Histogram as RecordHistogram, OrderedMap};
use crate::stats::histogram::Histogram;

/// One shard's record and what to call it in messages (its file).
pub struct Input<'a> {
    pub name: &'a str,
    pub run: &'a record::Run,
}

/// The merged record of `inputs`, every shard of one run, in any order; or
/// why they cannot be merged, naming the file and the fix.
pub fn merge(inputs: &[Input<'_>]) -> Result<record::Run, String> {
    let shards = check(inputs)?;
    let first = shards[0].run;
    let mut out = first.clone();
    let all = || shards.iter().map(|s| s.run);
    out.run.threads = first.run.shard.map_or(first.run.threads, |s| s.threads);
    out.run.shard = None;
    out.started_unix_s = all().map(|r| r.started_unix_s).min().unwrap_or(0);

    // The window: from the first shard's window start to the last one's
    // end (one process's window runs until its last client stops), and
    // the part every shard covers.
    let us = |s: f64| (s * 1e6).round() as i128;
    let released = |r: &record::Run| i128::from(r.released_unix_us.unwrap_or(0));
    let start = |r: &record::Run| released(r) + us(r.run.warmup_s);
    let end = |r: &record::Run| start(r) + us(r.result.measured_s);
    let (first_start, last_start) = min_max(all().map(start));
    let (first_end, last_end) = min_max(all().map(end));
    let (first_release, last_release) = min_max(all().map(released));
    out.released_unix_us = Some(first_release as u64);

    let r = &mut out.result;
    // Derived below from the merged figures; the first shard's would be
    // its own.
    r.tpcc = None;
    r.measured_s = (last_end - first_start) as f64 / 1e6;
    r.stop_reason = stop_reason(all().map(|r| r.result.stop_reason));
    r.fatal_error = shards.iter().find_map(|s| {
        let e = s.run.result.fatal_error.as_ref()?;
        Some(format!("shard {}: {e}", s.index))
    });
    let sum = |f: &dyn Fn(&record::Outcome) -> u64| all().map(|r| f(&r.result)).sum::<u64>();
    r.transactions = sum(&|o| o.transactions);
    r.queries.read = sum(&|o| o.queries.read);
    r.queries.write = sum(&|o| o.queries.write);
    r.queries.other = sum(&|o| o.queries.other);
    r.failed_transactions = sum(&|o| o.failed_transactions);
    r.retries = sum(&|o| o.retries);
    r.ignored_errors = sum(&|o| o.ignored_errors);
    r.reconnects = sum(&|o| o.reconnects);
    r.abandoned = sum(&|o| o.abandoned);
    let mut errors = [0u64; record::ErrorCounts::NAMES.len()];
    for run in all() {
        for (a, b) in errors.iter_mut().zip(run.result.errors.to_array()) {
            *a += b;
        }
    }
    r.errors = record::ErrorCounts::from_array(errors);
    r.fairness = pooled_fairness(all().map(|r| (r.run.threads, &r.result.fairness)));
    r.client_cpu.user_s = all().map(|r| r.result.client_cpu.user_s).sum();
    r.client_cpu.system_s = all().map(|r| r.result.client_cpu.system_s).sum();
    r.client_cpu.cpus = usable_cpus(&shards);
    r.connect = merge_connect(&shards)?;
    r.histograms = Some(merge_histograms(&shards)?);
    r.intervals = merge_intervals(&shards)?.into();
    // The one server as one shard sampled it, its figures per merged
    // transaction; the machine only when the shards shared one.
    let sampled: Vec<ShardMetrics<'_>> = shards
        .iter()
        .map(|s| ShardMetrics {
            index: s.index,
            hostname: &s.run.machine.hostname,
            metrics: s.run.result.metrics.as_ref(),
            measured_s: s.run.result.measured_s,
        })
        .collect();
    let queries = r.queries.read + r.queries.write + r.queries.other;
    r.metrics = metrics::merged::merged(&sampled, r.transactions, queries);
    if let Some(p) = &mut r.pacing {
        let opt_sum = |f: &dyn Fn(&record::PacingOutcome) -> Option<u64>| {
            all()
                .filter_map(|r| r.result.pacing.as_ref().and_then(f))
                .reduce(|a, b| a + b)
        };
        p.offered = opt_sum(&|p| p.offered);
        p.late = opt_sum(&|p| p.late);
        p.skipped = opt_sum(&|p| p.skipped);
        p.unstarted = opt_sum(&|p| p.unstarted);
    }
    for t in &mut r.transaction_types {
        t.failed = all()
            .flat_map(|r| &r.result.transaction_types)
            .filter(|u| u.name == t.name)
            .map(|u| u.failed)
            .sum();
    }
    let headline = first.run.percentile.unwrap_or(95.0);
    r.shards = Some(record::Shards {
        common_s: ((first_end - last_start).max(0)) as f64 / 1e6,
        start_skew_s: (last_release - first_release) as f64 / 1e6,
        rows: shards
            .iter()
            .map(|s| shard_row(s, headline, first_release))
            .collect::<Result<_, _>>()?,
        coordinator: None,
    });
    derive::derive(&mut out)?;
    Ok(out)
}

/// A shard's record and its index, checked.
struct Shard<'a> {
    index: u64,
    name: &'a str,
    run: &'a record::Run,
}

/// The inputs in shard order, once it is certain they are every shard of
/// one run, each of this format.
fn check<'a>(inputs: &[Input<'a>]) -> Result<Vec<Shard<'a>>, String> {
    let mut shards = Vec::with_capacity(inputs.len());
    for i in inputs {
        if i.run.schema != record::SCHEMA_ID {
            return Err(format!(
                "{} is a record of format {}; merging needs {} (records of this dbsweep's `run --shard I/N`): run the shards again with this version",
                i.name, i.run.schema, record::SCHEMA_ID
            ));
        }
        let Some(s) = i.run.run.shard else {
            return Err(format!(
                "{} is not a shard's record (it was run without --shard I/N): merge the records of one run made with --shard 0/N … --shard N-1/N",
                i.name
            ));
        };
        if i.run.result.histograms.is_none() {
            return Err(format!(
                "{} has no histograms (read back from a results database?): merge the shards' --json files",
                i.name
            ));
        }
        shards.push(Shard {
            index: s.index,
            name: i.name,
            run: i.run,
        });
    }
    let first = shards
        .first()
        .ok_or("no records to merge: name every shard's --json file")?;
    let count = first.run.run.shard.map_or(0, |s| s.count);
    for s in &shards[1..] {
        same_run(first, s)?;
    }
    shards.sort_by_key(|s| s.index);
    for pair in shards.windows(2) {
        if pair[0].index == pair[1].index {
            return Err(format!(
                "{} and {} are both shard {} of {count}: give each shard's record once",
                pair[0].name, pair[1].name, pair[0].index
            ));
        }
    }
    let missing: Vec<String> = (0..count)
        .filter(|i| !shards.iter().any(|s| s.index == *i))
        .map(|i| i.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "shard {} of {count} missing: a merge of fewer shards would not be the run; give every shard's record (--shard I/{count} for I in 0..{count})",
            missing.join(", ")
        ));
    }
    Ok(shards)
}

/// Refuses `b` unless it is a shard of the run `a` is a shard of: the same
/// program, workload, target, random streams and settings, bar the shard's
/// own index and clients.
fn same_run(a: &Shard<'_>, b: &Shard<'_>) -> Result<(), String> {
    let settings = |r: &record::Run| {
        let mut s = r.run.clone();
        s.threads = 0;
        s.shard = s.shard.map(|x| record::ShardOf { index: 0, ..x });
        s
    };
    let (x, y) = (a.run, b.run);
    let differs = if x.tool != y.tool {
        Some((
            "dbsweep version",
            format!("{} vs {}", x.tool.version, y.tool.version),
        ))
    } else if x.workload != y.workload {
        Some((
            "workload or its options",
            format!("{} vs {}", x.workload.name, y.workload.name),
        ))
    } else if x.target.url != y.target.url {
        Some(("target", format!("{} vs {}", x.target.url, y.target.url)))
    } else if x.random != y.random {
        Some((
            "random settings",
            format!("seed {} vs {}", x.random.seed, y.random.seed),
        ))
    } else if x.run.shard.map(|s| (s.count, s.threads)) != y.run.shard.map(|s| (s.count, s.threads))
    {
        let n = |r: &record::Run| {
            r.run.shard.map_or(String::new(), |s| {
                format!("{} shards of {} clients", s.count, s.threads)
            })
        };
        Some(("split", format!("{} vs {}", n(x), n(y))))
    } else if settings(x) != settings(y) {
        Some((
            "run settings",
            "time, events, rounds, warmup, pacing or percentiles".to_string(),
        ))
    } else {
        None
    };
    match differs {
        None => Ok(()),
        Some((what, how)) => Err(format!(
            "{} is not a shard of the same run as {}: its {what} differs ({how}); merge the records of one run, made with the same options and --rand-seed",
            b.name, a.name
        )),
    }
}

/// The CPUs the shards' clients could use: each machine's once, however
/// many shards ran on it (its shards' largest count: processes pinned to
/// parts of one machine are not told the union of their CPUs).
fn usable_cpus(shards: &[Shard<'_>]) -> u64 {
    let mut per_host: Vec<(&str, u64)> = Vec::new();
    for s in shards {
        let (host, cpus) = (
            s.run.machine.hostname.as_str(),
            s.run.result.client_cpu.cpus,
        );
        match per_host
            .iter_mut()
            .find(|(h, _)| *h == host && !h.is_empty())
        {
            Some((_, n)) => *n = (*n).max(cpus),
            None => per_host.push((host, cpus)),
        }
    }
    per_host.iter().map(|(_, n)| n).sum()
}

/// The most telling reason among the shards': a shard that did not
/// finish, aborted, was interrupted or timed out makes the run so;
/// otherwise they agree.
fn stop_reason(reasons: impl Iterator<Item = record::StopReason>) -> record::StopReason {
    use record::StopReason::*;
    let rank = |r: &record::StopReason| match r {
        Incomplete => 0,
        Aborted => 1,
        Interrupted => 2,
        Timeout => 3,
        Time => 4,
        Events => 5,
        Rounds => 6,
    };
    reasons.min_by_key(rank).unwrap_or(Time)
}

fn min_max(xs: impl Iterator<Item = i128>) -> (i128, i128) {
    xs.fold((i128::MAX, i128::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)))
}

/// Sums recorded histograms through the stats module's exact merge.
struct Sum(Histogram);

impl Sum {
    fn new() -> Sum {
        Sum(Histogram::new())
    }

    fn add(&mut self, h: &RecordHistogram, name: &str, what: &str) -> Result<(), String> {
        let h = stats(h).map_err(|e| format!("{name}: its {what} histogram is damaged: {e}"))?;
        self.0.merge(&h);
        Ok(())
    }

    fn done(&self) -> RecordHistogram {
        RecordHistogram::from(&self.0)
    }
}

/// Histograms of one name per shard, summed by name in first-seen order.
fn by_name<'a>(
    shards: &[Shard<'a>],
    what: &str,
    get: impl Fn(&'a record::Histograms) -> &'a OrderedMap<RecordHistogram>,
) -> Result<OrderedMap<RecordHistogram>, String> {
    let mut order: Vec<&str> = Vec::new();
    let mut sums: BTreeMap<&str, Sum> = BTreeMap::new();
    for s in shards {
        let Some(hs) = s.run.result.histograms.as_ref() else {
            continue;
        };
        for (k, h) in get(hs).iter() {
            if !sums.contains_key(k) {
                order.push(k);
                sums.insert(k, Sum::new());
            }
            let sum = sums.get_mut(k).expect("inserted above");
            sum.add(h, s.name, &format!("{what} {k}"))?;
        }
    }
    Ok(order
        .into_iter()
        .map(|k| (k.to_string(), sums[k].done()))
        .collect())
}

fn merge_histograms(shards: &[Shard<'_>]) -> Result<record::Histograms, String> {
    let mut txn = Sum::new();
    let (mut service, mut lag) = (None::<Sum>, None::<Sum>);
    for s in shards {
        let hs = s.run.result.histograms.as_ref().expect("checked");
        txn.add(&hs.transaction, s.name, "transaction")?;
        if let Some(h) = &hs.service {
            service
                .get_or_insert_with(Sum::new)
                .add(h, s.name, "service time")?;
        }
        if let Some(h) = &hs.lag {
            lag.get_or_insert_with(Sum::new).add(h, s.name, "lag")?;
        }
    }
    Ok(record::Histograms {
        transaction: txn.done(),
        statements: by_name(shards, "statement", |h| &h.statements)?,
        service: service.map(|s| s.done()),
        lag: lag.map(|s| s.done()),
        types: by_name(shards, "transaction type", |h| &h.types)?,
    })
}

fn merge_connect(shards: &[Shard<'_>]) -> Result<Option<record::Connect>, String> {
    let mut sum = None::<(f64, Sum)>;
    for s in shards {
        if let Some(c) = &s.run.result.connect {
            let (wall, h) = sum.get_or_insert_with(|| (0.0, Sum::new()));
            *wall = wall.max(c.wall_s);
            h.add(&c.histogram, s.name, "connect")?;
        }
    }
    Ok(sum.map(|(wall_s, h)| record::Connect {
        wall_s,
        histogram: h.done(),
    }))
}

/// Interval `k` of the merge is the sum of every shard's interval `k`:
/// shards released together tick together. Its time is the first
/// shard's, its length the longest.
fn merge_intervals(shards: &[Shard<'_>]) -> Result<Vec<record::Interval>, String> {
    let lists: Vec<Vec<record::Interval>> = shards
        .iter()
        .map(|s| s.run.result.intervals.to_vec())
        .collect();
    let n = lists.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let mut merged: Option<record::Interval> = None;
        let (mut latency, mut lag) = (Sum::new(), None::<Sum>);
        for (s, list) in shards.iter().zip(&lists) {
            let Some(i) = list.get(k) else {
                continue;
            };
            let what = format!("interval {}", k + 1);
            if let Some(h) = &i.histogram {
                latency.add(h, s.name, &what)?;
            }
            if let Some(h) = &i.lag_histogram {
                lag.get_or_insert_with(Sum::new).add(h, s.name, &what)?;
            }
            let Some(m) = &mut merged else {
                merged = Some(i.clone());
                continue;
            };
            m.duration_s = m.duration_s.max(i.duration_s);
            m.warmup |= i.warmup;
            m.threads += i.threads;
            m.transactions += i.transactions;
            m.failed += i.failed;
            m.reads += i.reads;
            m.writes += i.writes;
            m.others += i.others;
            m.errors += i.errors;
            m.reconnects += i.reconnects;
            m.offered_per_s = add(m.offered_per_s, i.offered_per_s);
            m.queue = add(m.queue, i.queue);
            m.late = add(m.late, i.late);
            m.skipped = add(m.skipped, i.skipped);
        }
        let mut m = merged.expect("some shard has interval k");
        m.histogram = Some(latency.done());
        m.lag_histogram = lag.map(|l| l.done());
        out.push(m);
    }
    Ok(out)
}

fn add<T: std::ops::Add<Output = T>>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    }
}

/// sysbench's fairness over the clients of every shard, from each
/// shard's count of clients, mean and population deviation.
fn pooled_fairness<'a>(
    shards: impl Iterator<Item = (u64, &'a record::Fairness)> + Clone,
) -> record::Fairness {
    let pool = |get: &dyn Fn(&record::Fairness) -> (f64, f64)| {
        let n: f64 = shards.clone().map(|(c, _)| c as f64).sum();
        let mean = shards
            .clone()
            .map(|(c, f)| c as f64 * get(f).0)
            .sum::<f64>()
            / n;
        let squares = shards
            .clone()
            .map(|(c, f)| {
                let (m, s) = get(f);
                c as f64 * (s * s + (m - mean) * (m - mean))
            })
            .sum::<f64>();
        (mean, (squares / n).sqrt())
    };
    let (events_avg, events_stddev) = pool(&|f| (f.events_avg, f.events_stddev));
    let (time_avg_s, time_stddev_s) = pool(&|f| (f.time_avg_s, f.time_stddev_s));
    record::Fairness {
        events_avg,
        events_stddev,
        time_avg_s,
        time_stddev_s,
    }
}

fn shard_row(
    s: &Shard<'_>,
    headline: f64,
    first_release: i128,
) -> Result<record::ShardRow, String> {
    let r = &s.run.result;
    let h = stats(&r.histograms.as_ref().expect("checked").transaction)?;
    let figure = |f: fn(&Figures) -> &Option<Figure>| {
        r.metrics
            .as_ref()
            .and_then(|m| f(&m.figures).as_ref())
            .map(|f| f.value)
    };
    Ok(record::ShardRow {
        index: s.index,
        hostname: s.run.machine.hostname.clone(),
        clients: s.run.run.threads,
        transactions: r.transactions,
        tps: r.tps,
        measured_s: r.measured_s,
        start_offset_s: (i128::from(s.run.released_unix_us.unwrap_or(0)) - first_release) as f64
            / 1e6,
        clock_offset_s: None,
        clock_rtt_s: None,
        start_skew_s: None,
        node: None,
        client_cpu_s: r.client_cpu.total_s(),
        cpu_busy_pct: figure(|f| &f.cpu_busy_pct),
        client_cpu_pct: figure(|f| &f.client_cpu_pct),
        latency_us: h.value_at_percentile(headline).map(derive::us),
    })
}
