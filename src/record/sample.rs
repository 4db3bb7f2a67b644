//! A small, complete record for tests and examples.

use super::*;

impl Run {
    /// A small, complete record with round numbers: the starting point of
    /// tests and examples that need one (10 s, 1,000 transactions, 4
    /// errors, one warmup interval, no latency).
    pub fn sample() -> Run {
        Run {
            schema: super::SCHEMA_ID.into(),
            tool: Tool {
                name: "dbsweep".into(),
                version: "0.1.0".into(),
            },
            started_unix_s: 1_700_000_000,
            released_unix_us: None,
            workload: WorkloadInfo {
                name: "oltp_read_write".into(),
                options: Pairs::default(),
            },
            target: TargetInfo {
                url: "sqlite:///tmp/x.db".into(),
                dialect: Dialect::Sqlite,
                server_version: "SQLite 3.46.0".into(),
                settings: Pairs::default(),
            },
            random: Random {
                kind: "uniform".into(),
                seed: 18_000_000_000_000_000_000,
                spec_iter: 12,
                spec_pct: 1.0,
                spec_res: 75.0,
                pareto_h: 0.2,
                zipfian_exp: 0.8,
            },
            run: Settings {
                threads: 4,
                time_s: Some(10.0),
                events: None,
                rounds: None,
                warmup_s: 0.0,
                report_interval_s: Some(1.0),
                percentile: Some(95.0),
                max_retries: None,
                ignore_errors: Vec::new(),
                grace_s: 1.0,
                timeout_s: None,
                pacing: None,
                percentiles: Vec::new(),
                shard: None,
                client_threads: None,
            },
            machine: Machine {
                hostname: "host".into(),
                cpu_model: "CPU".into(),
                cpus_online: 2,
                cpus_available: 2,
                memory_bytes: 1 << 30,
                kernel: "6.1".into(),
                os: "linux".into(),
            },
            result: Outcome {
                stop_reason: StopReason::Time,
                fatal_error: None,
                measured_s: 10.0,
                transactions: 1000,
                tps: 100.0,
                queries: Queries {
                    read: 14000,
                    write: 4000,
                    other: 2000,
                    total: 20000,
                },
                qps: 2000.0,
                failed_transactions: 1,
                retries: 3,
                ignored_errors: 4,
                reconnects: 0,
                abandoned: 0,
                errors: ErrorCounts {
                    deadlock: 3,
                    other: 1,
                    ..ErrorCounts::default()
                },
                latency: None,
                statements: Vec::new(),
                fairness: Fairness {
                    events_avg: 250.0,
                    events_stddev: 0.0,
                    time_avg_s: 10.0,
                    time_stddev_s: 0.0,
                },
                client_cpu: ClientCpu {
                    user_s: 1.5,
                    system_s: 0.25,
                    us_per_transaction: Some(1750.0),
                    us_per_query: Some(87.5),
                    share_of_machine: 0.0875,
                    cpus: 2,
                },
                intervals: vec![Interval {
                    t_s: 1.0,
                    duration_s: 1.0,
                    warmup: true,
                    threads: 4,
                    transactions: 90,
                    failed: 0,
                    reads: 1,
                    writes: 2,
                    others: 3,
                    errors: 0,
                    reconnects: 0,
                    p50_us: Some(10.0),
                    p95_us: None,
                    p99_us: Some(30.0),
                    max_us: Some(40.0),
                    offered_per_s: None,
                    queue: None,
                    lag_p99_us: None,
                    lag_max_us: None,
                    late: None,
                    skipped: None,
                    histogram: None,
                    lag_histogram: None,
                }]
                .into(),
                connect: None,
                histograms: None,
                metrics: None,
                pacing: None,
                transaction_types: Vec::new(),
                shards: None,
                consistency: None,
                tpcc: None,
            },
        }
    }
}
