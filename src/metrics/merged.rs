//! The metrics of a run merged from shards (`engine::merge`), from the
//! shards' own: every shard's sampler read the machine it ran on and the
//! one server they all drove.
//!
//! The server is one, so one shard's reading of it is the server's: that
//! of the lowest-numbered shard that measured the most of it (its
//! processes and its counters), with the other shards' monitoring
//! statements taken out of the counters that count statements. Its
//! figures are derived again by [`figures`](super::figures) against the
//! merged run's transactions and queries, never the shard's.
//!
//! The machine is one only when every shard ran on it: then that shard's
//! machine readings are the machine's, and the client's CPU is every
//! shard's together. Shards on several machines have no one machine: its
//! parts of the merged readings are left empty and its figures absent,
//! with the reason, and each shard's CPU stays in its row of the merge.
//!
//! Profiles (`--profile`): the server's is the one shard 0 took; the
//! client's is every shard's process together, their stacks summed.

use crate::record::metrics::{Figures, Gap, MergedFrom, Metrics, Process, Sample, Usage};
use crate::record::profile::Profile;
use crate::record::Series;

use super::proc::MACHINE_GAPS;
use super::sql::{mariadb, postgres};
use super::{figures, profile};

/// One shard's metrics, as the merge sees them.
pub struct ShardMetrics<'a> {
    pub index: u64,
    /// The machine it ran on.
    pub hostname: &'a str,
    /// Absent with `--metrics off`.
    pub metrics: Option<&'a Metrics>,
    /// The shard's own measured window, seconds.
    pub measured_s: f64,
}

/// The share of a shard's measured window its sampler's readings must
/// bound for its figures to be the run's: a sampler starved of CPU (a
/// thousand clients on one core) took a bounding reading seconds late,
/// and its window of a part of the run over all of the run's transactions
/// gave the server a sixth of its CPU per transaction and the client
/// 392 % of the machine.
const FULL_WINDOW: f64 = 0.9;

/// What a bounding reading may miss of a short window whatever its share
/// (a reading itself takes milliseconds), seconds.
const SLACK_S: f64 = 0.25;

/// The merged run's metrics from its shards', in any order; the merged
/// run completed `transactions` and `queries` in its window. None when no
/// shard sampled anything.
pub fn merged(shards: &[ShardMetrics<'_>], transactions: u64, queries: u64) -> Option<Metrics> {
    let mut measured: Vec<(u64, &Metrics)> = shards
        .iter()
        .filter_map(|s| Some((s.index, s.metrics?)))
        .collect();
    measured.sort_by_key(|(i, _)| *i);
    let window_of = |index: u64| {
        shards
            .iter()
            .find(|s| s.index == index)
            .map_or(0.0, |s| s.measured_s)
    };
    let full = |&(index, m): &(u64, &Metrics)| {
        let w = window_of(index);
        m.window.duration_s >= w - ((1.0 - FULL_WINDOW) * w).max(SLACK_S)
    };
    // Of the shards whose readings bound the window (else the one that
    // bound the most of it): the most of the server, then the lowest
    // index (`max_by_key` keeps the last of equals, so the shards are
    // walked from the highest).
    let &(source, m) = measured.iter().rev().max_by(|a, b| {
        let key = |s: &(u64, &Metrics)| (full(s), server_seen(&s.1.window));
        key(a).cmp(&key(b)).then_with(|| {
            if full(a) {
                std::cmp::Ordering::Equal
            } else {
                a.1.window.duration_s.total_cmp(&b.1.window.duration_s)
            }
        })
    })?;
    let short = (!full(&(source, m))).then(|| {
        format!(
            "no shard's readings bound its window: the most, shard {source}'s, {:.2} s of its {:.2} s (a sampler starved of CPU read late); figures of part of the window over all of its transactions would be wrong",
            m.window.duration_s,
            window_of(source)
        )
    });
    let saw_server = server_seen(&m.window) > 0;
    let hosts = hosts(shards);
    let one_host = hosts.len() == 1 && !hosts[0].0.is_empty();

    let mut window = m.window.clone();
    let mut warmup = m.warmup.clone();
    let mut samples: Vec<Sample> = m.samples.to_vec();
    let others: Vec<&Metrics> = measured
        .iter()
        .filter(|(i, _)| *i != source)
        .map(|(_, o)| *o)
        .collect();
    let others_full: Vec<(u64, bool)> = measured
        .iter()
        .filter(|(i, _)| *i != source)
        .map(|s| (s.0, full(s)))
        .collect();
    // The other samplers' statements, in the server's counters too.
    without_statements(&mut window, statements(others.iter().map(|o| &o.window)));
    if let Some(w) = &mut warmup {
        let n = statements(others.iter().filter_map(|o| o.warmup.as_ref()));
        without_statements(w, n);
    }

    let mut gaps: Vec<Gap> = m
        .gaps
        .iter()
        .filter(|g| !figures::DERIVED_GAPS.contains(&g.what.as_str()))
        .filter(|g| one_host || !MACHINE_GAPS.contains(&g.what.as_str()))
        .cloned()
        .collect();
    let machine_why_not = (!one_host).then(|| different_machines(&hosts));
    let derived = if let Some(why) = short {
        for what in ["machine CPU", "server CPU", "per-transaction figures"] {
            gaps.retain(|g| g.what != what);
            gaps.push(Gap {
                what: what.into(),
                why: why.clone(),
            });
        }
        Figures::default()
    } else if one_host {
        // Every shard's client on the one machine: known for the window
        // only when every shard's readings bound it.
        let starved: Vec<String> = others_full
            .iter()
            .filter(|(_, ok)| !ok)
            .map(|(i, _)| i.to_string())
            .collect();
        for o in &others {
            add(&mut window.client, &o.window.client);
            if let (Some(w), Some(x)) = (&mut warmup, &o.warmup) {
                add(&mut w.client, &x.client);
            }
            for (s, x) in samples.iter_mut().zip(o.samples.iter()) {
                add(&mut s.usage.client, &x.usage.client);
            }
        }
        let mut f = figures::derive(&window, transactions, queries, &mut gaps);
        if !starved.is_empty() {
            f.client_cpu_pct = None;
            f.other_cpu_pct = None;
            gaps.push(Gap {
                what: "client CPU".into(),
                why: format!(
                    "shard {}'s readings bound less than {:.0} % of its window (a sampler starved of CPU read late): the shards' clients together are not known for the run's",
                    starved.join(", "),
                    FULL_WINDOW * 100.0
                ),
            });
        }
        f
    } else {
        without_machine(&mut window);
        if let Some(w) = &mut warmup {
            without_machine(w);
        }
        for s in &mut samples {
            without_machine(&mut s.usage);
        }
        let why = machine_why_not.clone().unwrap_or_default();
        server_only(&window, (transactions, queries), why, &mut gaps)
    };
    let profiles = profiles(&measured, source, &mut gaps);
    Some(Metrics {
        interval_s: m.interval_s,
        readings: m.readings,
        reading_ms_avg: m.reading_ms_avg,
        reading_ms_max: m.reading_ms_max,
        sampling_cpu_s: m.sampling_cpu_s,
        server_process: m.server_process.clone(),
        warmup,
        window,
        figures: derived,
        samples: Series::from(samples),
        gaps,
        innodb_semaphores: m.innodb_semaphores.clone(),
        profiles,
        window_counts: m.window_counts.clone(),
        merged: Some(MergedFrom {
            server_shard: saw_server.then_some(source),
            machine_shard: one_host.then_some(source),
            machine_why_not,
        }),
    })
}

/// The merged run's profiles: the server's from the shard the server is
/// read from (else the one that profiled it: only shard 0 looks for the
/// server's processes), and the clients' pooled over every shard, each
/// shard's own process sampled on its machine.
fn profiles(measured: &[(u64, &Metrics)], source: u64, gaps: &mut Vec<Gap>) -> Vec<Profile> {
    fn of<'m>(m: &'m Metrics, role: &str) -> Option<&'m Profile> {
        m.profiles.iter().find(|p| p.role == role)
    }
    let server = (measured.iter().find(|(i, _)| *i == source))
        .and_then(|(_, m)| of(m, "server"))
        .or_else(|| measured.iter().find_map(|(_, m)| of(m, "server")));
    let mut out: Vec<Profile> = server.into_iter().cloned().collect();
    let clients: Vec<&Profile> = measured
        .iter()
        .filter_map(|(_, m)| of(m, "client"))
        .collect();
    let why = if clients.is_empty() {
        return out;
    } else if clients.len() < measured.len() {
        let none: Vec<String> = (measured.iter())
            .filter(|(_, m)| of(m, "client").is_none())
            .map(|(i, _)| i.to_string())
            .collect();
        format!(
            "shard {} took none (its record says why): the others' alone are not the run's client",
            none.join(", ")
        )
    } else if let Some(p) = profile::fold::pooled(&clients) {
        out.push(p);
        return out;
    } else {
        "the shards' folded stacks did not come with their records (records read from files): their figures alone cannot be added up".into()
    };
    gaps.push(Gap {
        what: "client profile".into(),
        why,
    });
    out
}

/// How much of the server a window saw: its processes, its counters.
fn server_seen(w: &Usage) -> u8 {
    u8::from(w.server.is_some()) + u8::from(!w.sql.is_empty())
}

/// The shards' machines, each with its shards, in order of first shard.
fn hosts<'a>(shards: &[ShardMetrics<'a>]) -> Vec<(&'a str, Vec<u64>)> {
    let mut sorted: Vec<&ShardMetrics<'a>> = shards.iter().collect();
    sorted.sort_by_key(|s| s.index);
    let mut out: Vec<(&str, Vec<u64>)> = Vec::new();
    for s in sorted {
        match out.iter_mut().find(|(h, _)| *h == s.hostname) {
            Some((_, list)) => list.push(s.index),
            None => out.push((s.hostname, vec![s.index])),
        }
    }
    out
}

fn different_machines(hosts: &[(&str, Vec<u64>)]) -> String {
    let list: Vec<String> = hosts
        .iter()
        .map(|(h, shards)| {
            let n: Vec<String> = shards.iter().map(u64::to_string).collect();
            let h = if h.is_empty() { "an unnamed host" } else { h };
            format!(
                "{h}: shard{} {}",
                if n.len() == 1 { "" } else { "s" },
                n.join(", ")
            )
        })
        .collect();
    format!(
        "the shards ran on different machines ({}), so no one machine's CPU is the run's: \
         each shard's is in its row of the shards table",
        list.join("; ")
    )
}

/// The statements the monitoring connections of `windows` ran.
fn statements<'a>(windows: impl Iterator<Item = &'a Usage>) -> u64 {
    windows.map(|u| u.monitor_statements).sum()
}

/// Takes `others` (statements of the other shards' monitoring
/// connections) out of the counters that count statements, as each
/// sampler took out its own.
fn without_statements(u: &mut Usage, others: u64) {
    if others == 0 {
        return;
    }
    for (name, v) in u.sql.0.iter_mut() {
        let counts = mariadb::COUNTS_STATEMENTS
            .iter()
            .chain(postgres::COUNTS_STATEMENTS)
            .any(|c| *c == name.as_str());
        if counts {
            *v = (*v - others as f64).max(0.0);
        }
    }
    u.monitor_statements += others;
}

/// Adds `p`'s use to `sum`: the shards' clients on one machine.
fn add(sum: &mut Process, p: &Process) {
    sum.cpu_user_s += p.cpu_user_s;
    sum.cpu_system_s += p.cpu_system_s;
    sum.rss_bytes += p.rss_bytes;
    sum.voluntary_switches += p.voluntary_switches;
    sum.involuntary_switches += p.involuntary_switches;
    sum.read_bytes += p.read_bytes;
    sum.write_bytes += p.write_bytes;
    sum.processes += p.processes;
}

/// The figures of shards on several machines: the server's alone (each
/// shard saw a different machine), the machine's CPU a gap saying why.
fn server_only(
    window: &Usage,
    (transactions, queries): (u64, u64),
    why: String,
    gaps: &mut Vec<Gap>,
) -> Figures {
    gaps.retain(|g| g.what != "machine CPU");
    gaps.insert(
        0,
        Gap {
            what: "machine CPU".into(),
            why,
        },
    );
    let mut f = Figures::default();
    figures::server(window, transactions, queries, &mut f, gaps);
    f
}

/// Empties the machine's parts of `u`: not one machine's.
fn without_machine(u: &mut Usage) {
    u.cpu = Default::default();
    u.per_cpu = Vec::new();
    u.context_switches = 0;
    u.procs_running = 0;
    u.procs_blocked = 0;
    u.memory = Default::default();
    u.disks = Vec::new();
    u.network = Vec::new();
    u.client = Process::default();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::metrics::{CpuTime, Figure, ServerProcess};
    use crate::record::OrderedMap;

    /// A shard's window: 10 s on 2 CPUs, 12 of 20 CPU-seconds busy; the
    /// server's commits as that shard's sampler counted them (its own
    /// monitoring statements already out).
    fn usage(server_cpu_s: Option<f64>, client_cpu_s: f64, commits: f64) -> Usage {
        Usage {
            duration_s: 10.0,
            cpu: CpuTime {
                user_s: 8.0,
                system_s: 4.0,
                idle_s: 8.0,
                ..CpuTime::default()
            },
            per_cpu: vec![CpuTime::default(); 2],
            context_switches: 40_000,
            server: server_cpu_s.map(|s| Process {
                cpu_user_s: s,
                ..Process::default()
            }),
            client: Process {
                cpu_user_s: client_cpu_s,
                ..Process::default()
            },
            sql: [
                ("pg_stat_database.xact_commit", commits),
                ("pg_stat_database.deadlocks", 2.0),
            ]
            .into_iter()
            .map(|(n, v)| (n.to_string(), v))
            .collect::<OrderedMap<f64>>(),
            monitor_statements: 10,
            ..Usage::default()
        }
    }

    /// A shard's metrics, its figures derived against its own
    /// `transactions`.
    fn metrics(w: Usage, transactions: u64) -> Metrics {
        let mut gaps = Vec::new();
        let figures = figures::derive(&w, transactions, 10 * transactions, &mut gaps);
        Metrics {
            interval_s: 1.0,
            readings: 12,
            reading_ms_avg: 1.0,
            reading_ms_max: 2.0,
            sampling_cpu_s: None,
            server_process: ServerProcess {
                pid: w.server.map(|_| 7),
                how: "listening on 127.0.0.1:5432".into(),
            },
            warmup: None,
            window: w.clone(),
            figures,
            samples: Series::from(vec![Sample {
                t_s: 1.0,
                warmup: false,
                usage: w,
            }]),
            gaps,
            innodb_semaphores: Vec::new(),
            profiles: Vec::new(),
            window_counts: Vec::new(),
            merged: None,
        }
    }

    fn v(f: &Option<Figure>) -> f64 {
        f.as_ref().expect("a figure").value
    }

    #[test]
    fn one_host_the_server_of_the_lowest_shard_per_merged_transaction() {
        // Both shards saw the one server (8,000 commits, 6 s of CPU); each
        // counted the other's 10 monitoring statements as commits.
        let (a, b) = (
            metrics(usage(Some(6.0), 1.0, 8010.0), 3000),
            metrics(usage(Some(6.1), 2.0, 8010.0), 5000),
        );
        let shards = [
            ShardMetrics {
                index: 1,
                hostname: "lg1",
                metrics: Some(&b),
                measured_s: 10.0,
            },
            ShardMetrics {
                index: 0,
                hostname: "lg1",
                metrics: Some(&a),
                measured_s: 10.0,
            },
        ];
        let m = merged(&shards, 8000, 80_000).unwrap();
        let f = &m.figures;
        assert_eq!(v(&f.server_cpu_us_per_transaction), 750.0); // 6 s / 8,000
        assert_eq!(v(&f.server_cpu_us_per_query), 75.0);
        assert!(f
            .server_cpu_us_per_transaction
            .as_ref()
            .unwrap()
            .from
            .contains("/ 8000 transactions"));
        assert_eq!(
            m.window.sql.get("pg_stat_database.xact_commit"),
            Some(&8000.0)
        );
        assert_eq!(m.window.monitor_statements, 20);
        // The machine is the one both ran on; its client is both shards'.
        assert_eq!(v(&f.cpu_busy_pct), 60.0);
        assert_eq!(v(&f.client_cpu_pct), 15.0); // 3 of 20 CPU-seconds
        assert_eq!(v(&f.context_switches_per_transaction), 5.0);
        assert_eq!(m.samples.to_vec()[0].usage.client.cpu_s(), 3.0);
        let from = m.merged.unwrap();
        assert_eq!(
            (from.server_shard, from.machine_shard, from.machine_why_not),
            (Some(0), Some(0), None)
        );
        // PostgreSQL's own: nothing of the merge.
        let gaps: Vec<&str> = m.gaps.iter().map(|g| g.what.as_str()).collect();
        assert_eq!(gaps, ["row lock waits"]);
    }

    #[test]
    fn several_hosts_the_server_without_a_machine() {
        // Shard 0 ran far from the server (its counters, not its
        // processes); shard 1 on the server's machine saw both.
        let (a, b) = (
            metrics(usage(None, 1.0, 8010.0), 4000),
            metrics(usage(Some(4.0), 1.0, 8010.0), 4000),
        );
        let shards = [
            ShardMetrics {
                index: 0,
                hostname: "lg1",
                metrics: Some(&a),
                measured_s: 10.0,
            },
            ShardMetrics {
                index: 1,
                hostname: "db",
                metrics: Some(&b),
                measured_s: 10.0,
            },
        ];
        let m = merged(&shards, 8000, 80_000).unwrap();
        let f = &m.figures;
        assert_eq!(v(&f.server_cpu_us_per_transaction), 500.0);
        assert_eq!(v(&f.deadlocks_per_s), 0.2);
        // No machine: absent, never 0, with why.
        assert!(f.cpu_busy_pct.is_none() && f.client_cpu_pct.is_none());
        assert!(f.server_cpu_pct.is_none());
        assert!(f.context_switches_per_transaction.is_none());
        assert!(f.disk_mb_per_transaction.is_none());
        assert_eq!(m.window.cpu.total_s(), 0.0);
        assert!(m.window.per_cpu.is_empty());
        let gap = m.gaps.iter().find(|g| g.what == "machine CPU").unwrap();
        assert!(
            gap.why
                .contains("different machines (lg1: shard 0; db: shard 1)"),
            "{}",
            gap.why
        );
        let from = m.merged.unwrap();
        assert_eq!((from.server_shard, from.machine_shard), (Some(1), None));
        assert!(from.machine_why_not.is_some());
    }

    /// `u` as a starved sampler bounded it: its readings `s` seconds apart.
    fn bounding(mut u: Usage, s: f64) -> Usage {
        u.duration_s = s;
        u
    }

    #[test]
    fn a_starved_shards_short_window_is_never_the_runs() {
        // Shard 0 read its window's start late: 2.5 s of the run's 10 s.
        let (a, b) = (
            metrics(bounding(usage(Some(1.5), 6.0, 2010.0), 2.5), 3000),
            metrics(usage(Some(6.0), 2.0, 8010.0), 5000),
        );
        let shards = [
            ShardMetrics {
                index: 0,
                hostname: "lg1",
                metrics: Some(&a),
                measured_s: 10.0,
            },
            ShardMetrics {
                index: 1,
                hostname: "lg1",
                metrics: Some(&b),
                measured_s: 10.0,
            },
        ];
        let m = merged(&shards, 8000, 80_000).unwrap();
        let from = m.merged.as_ref().unwrap();
        assert_eq!((from.server_shard, from.machine_shard), (Some(1), Some(1)));
        let f = &m.figures;
        assert_eq!(v(&f.server_cpu_us_per_transaction), 750.0); // 6 s / 8,000
        assert_eq!(v(&f.cpu_busy_pct), 60.0);
        // The shards' clients together are not known for the window.
        assert!(f.client_cpu_pct.is_none() && f.other_cpu_pct.is_none());
        let gap = m.gaps.iter().find(|g| g.what == "client CPU").unwrap();
        assert!(gap.why.contains("shard 0's readings"), "{}", gap.why);

        // Every shard starved: nothing of the window is the run's.
        let b = metrics(bounding(usage(Some(6.0), 2.0, 8010.0), 4.0), 5000);
        let shards = [
            ShardMetrics {
                index: 0,
                hostname: "lg1",
                metrics: Some(&a),
                measured_s: 10.0,
            },
            ShardMetrics {
                index: 1,
                hostname: "lg1",
                metrics: Some(&b),
                measured_s: 10.0,
            },
        ];
        let m = merged(&shards, 8000, 80_000).unwrap();
        assert_eq!(m.merged.as_ref().unwrap().server_shard, Some(1));
        let f = &m.figures;
        assert!(f.server_cpu_us_per_transaction.is_none() && f.cpu_busy_pct.is_none());
        assert!(f.client_cpu_pct.is_none() && f.context_switches_per_transaction.is_none());
        for what in ["machine CPU", "server CPU", "per-transaction figures"] {
            let g = m.gaps.iter().find(|g| g.what == what).unwrap();
            assert!(
                g.why.contains("the most, shard 1's, 4.00 s of its 10.00 s"),
                "{what}: {}",
                g.why
            );
        }
    }

    #[test]
    fn nothing_sampled_nothing_merged() {
        let shards = [ShardMetrics {
            index: 0,
            hostname: "lg1",
            metrics: None,
            measured_s: 10.0,
        }];
        assert!(merged(&shards, 10, 100).is_none());
    }
}
