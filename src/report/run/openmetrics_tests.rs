//! The renderer on a feed of literal numbers: every line of both formats.

use super::*;
use crate::engine::recorder::Counters;
use crate::report::run::feed::{Cpu, CpuSeconds, Last, Sum};

fn labels() -> Vec<(String, String)> {
    vec![
        ("workload".into(), "oltp_point_select".into()),
        ("target".into(), "postgres://127.0.0.1:5432".into()),
        ("variant".into(), "say \"hi\"\\now".into()),
    ]
}

/// A measured interval of an open loop, the server's CPU measured.
fn feed() -> Feed {
    Feed {
        labels: labels(),
        phase: Phase::Measured,
        totals: Counters {
            transactions: 1500,
            failed: 2,
            retries: 3,
            reads: 1500,
            writes: 0,
            others: 10,
            errors: [3, 0, 0, 0, 0, 2, 0],
            reconnects: 1,
            ..Counters::default()
        },
        latency: Sum {
            count: 1500,
            sum_s: 0.75,
        },
        lag: Some(Sum {
            count: 1504,
            sum_s: 0.25,
        }),
        last: Some(Last {
            t_s: 3.0,
            clients: 8,
            tps: 498.5,
            offered_per_s: Some(500.0),
            queue: Some(4),
            latency_s: [Some(0.00025), Some(0.001), Some(0.002), Some(0.0125)],
            lag_s: [Some(0.0005), None],
        }),
        cpu: Some(Cpu {
            machine: 0.5,
            client: 0.125,
            server: Some(0.25),
        }),
        cpu_seconds: Some(CpuSeconds {
            machine_busy: 6.0,
            client: 1.5,
            server: Some(3.0),
        }),
    }
}

const L: &str =
    r#"workload="oltp_point_select",target="postgres://127.0.0.1:5432",variant="say \"hi\"\\now""#;

#[test]
fn openmetrics_has_every_family_with_its_metadata_and_ends_with_eof() {
    let text = render(&feed(), Format::OpenMetrics);
    let expected = format!(
        r#"# HELP dbsweep_phase Where the point is: starting, warmup, measured or finished
# TYPE dbsweep_phase stateset
dbsweep_phase{{{L},dbsweep_phase="starting"}} 0
dbsweep_phase{{{L},dbsweep_phase="warmup"}} 0
dbsweep_phase{{{L},dbsweep_phase="measured"}} 1
dbsweep_phase{{{L},dbsweep_phase="finished"}} 0
# HELP dbsweep_transactions Transactions completed since the point began, its warmup included
# TYPE dbsweep_transactions counter
dbsweep_transactions_total{{{L}}} 1500
# HELP dbsweep_failed_transactions Transactions given up (retries exhausted or an ignored error) since the point began
# TYPE dbsweep_failed_transactions counter
dbsweep_failed_transactions_total{{{L}}} 2
# HELP dbsweep_errors Errors since the point began, by kind (retried ones included)
# TYPE dbsweep_errors counter
dbsweep_errors_total{{{L},kind="deadlock"}} 3
dbsweep_errors_total{{{L},kind="lock_timeout"}} 0
dbsweep_errors_total{{{L},kind="serialization"}} 0
dbsweep_errors_total{{{L},kind="duplicate_key"}} 0
dbsweep_errors_total{{{L},kind="connection_lost"}} 0
dbsweep_errors_total{{{L},kind="other"}} 2
dbsweep_errors_total{{{L},kind="timeout"}} 0
# HELP dbsweep_retries Transactions run again after a retryable error since the point began
# TYPE dbsweep_retries counter
dbsweep_retries_total{{{L}}} 3
# HELP dbsweep_reconnects Connections opened again during the point
# TYPE dbsweep_reconnects counter
dbsweep_reconnects_total{{{L}}} 1
# HELP dbsweep_queries Statements since the point began, by type (read: returned rows; write: changed rows; other)
# TYPE dbsweep_queries counter
dbsweep_queries_total{{{L},type="read"}} 1500
dbsweep_queries_total{{{L},type="write"}} 0
dbsweep_queries_total{{{L},type="other"}} 10
# HELP dbsweep_elapsed_seconds Seconds since the clients were released, at the end of the last interval
# TYPE dbsweep_elapsed_seconds gauge
# UNIT dbsweep_elapsed_seconds seconds
dbsweep_elapsed_seconds{{{L}}} 3
# HELP dbsweep_clients Clients (connections) running in the last interval
# TYPE dbsweep_clients gauge
dbsweep_clients{{{L}}} 8
# HELP dbsweep_transactions_per_second Transactions completed per second in the last interval (achieved)
# TYPE dbsweep_transactions_per_second gauge
dbsweep_transactions_per_second{{{L}}} 498.5
# HELP dbsweep_offered_transactions_per_second Transactions due per second in the last interval (a rate or users: the offered load)
# TYPE dbsweep_offered_transactions_per_second gauge
dbsweep_offered_transactions_per_second{{{L}}} 500
# HELP dbsweep_queued_transactions Transactions due and not yet taken by a connection at the end of the last interval
# TYPE dbsweep_queued_transactions gauge
dbsweep_queued_transactions{{{L}}} 4
# HELP dbsweep_latency_seconds Transaction latency from each intended start: quantiles of the last interval (1: the maximum), count and sum since the point began
# TYPE dbsweep_latency_seconds summary
# UNIT dbsweep_latency_seconds seconds
dbsweep_latency_seconds{{{L},quantile="0.5"}} 0.00025
dbsweep_latency_seconds{{{L},quantile="0.95"}} 0.001
dbsweep_latency_seconds{{{L},quantile="0.99"}} 0.002
dbsweep_latency_seconds{{{L},quantile="1"}} 0.0125
dbsweep_latency_seconds_count{{{L}}} 1500
dbsweep_latency_seconds_sum{{{L}}} 0.75
# HELP dbsweep_schedule_lag_seconds Schedule lag (intended to actual start): quantiles of the last interval (1: the maximum), count and sum since the point began
# TYPE dbsweep_schedule_lag_seconds summary
# UNIT dbsweep_schedule_lag_seconds seconds
dbsweep_schedule_lag_seconds{{{L},quantile="0.99"}} 0.0005
dbsweep_schedule_lag_seconds_count{{{L}}} 1504
dbsweep_schedule_lag_seconds_sum{{{L}}} 0.25
# HELP dbsweep_machine_cpu_ratio Share of the machine's CPU time that was busy in the sampler's last interval
# TYPE dbsweep_machine_cpu_ratio gauge
# UNIT dbsweep_machine_cpu_ratio ratio
dbsweep_machine_cpu_ratio{{{L}}} 0.5
# HELP dbsweep_client_cpu_ratio Share of the machine's CPU time dbsweep used in the sampler's last interval
# TYPE dbsweep_client_cpu_ratio gauge
# UNIT dbsweep_client_cpu_ratio ratio
dbsweep_client_cpu_ratio{{{L}}} 0.125
# HELP dbsweep_server_cpu_ratio Share of the machine's CPU time the server's processes used in the sampler's last interval
# TYPE dbsweep_server_cpu_ratio gauge
# UNIT dbsweep_server_cpu_ratio ratio
dbsweep_server_cpu_ratio{{{L}}} 0.25
# HELP dbsweep_machine_cpu_busy_seconds Busy CPU seconds of every CPU of the machine since the point began
# TYPE dbsweep_machine_cpu_busy_seconds counter
# UNIT dbsweep_machine_cpu_busy_seconds seconds
dbsweep_machine_cpu_busy_seconds_total{{{L}}} 6
# HELP dbsweep_client_cpu_seconds CPU seconds dbsweep used since the point began
# TYPE dbsweep_client_cpu_seconds counter
# UNIT dbsweep_client_cpu_seconds seconds
dbsweep_client_cpu_seconds_total{{{L}}} 1.5
# HELP dbsweep_server_cpu_seconds CPU seconds the server's processes used since the point began
# TYPE dbsweep_server_cpu_seconds counter
# UNIT dbsweep_server_cpu_seconds seconds
dbsweep_server_cpu_seconds_total{{{L}}} 3
# EOF
"#
    );
    for (n, (got, want)) in text.lines().zip(expected.lines()).enumerate() {
        assert_eq!(got, want, "line {}", n + 1);
    }
    assert_eq!(text, expected);
}

#[test]
fn the_classic_format_names_counters_by_their_samples_and_has_no_units_or_eof() {
    let text = render(&feed(), Format::Classic);
    assert!(text.contains(
        "# HELP dbsweep_transactions_total Transactions completed since the point began, its warmup included\n\
         # TYPE dbsweep_transactions_total counter\n\
         dbsweep_transactions_total{"
    ));
    assert!(text.contains("# TYPE dbsweep_phase gauge\n"));
    assert!(text.contains("# TYPE dbsweep_server_cpu_seconds_total counter\n"));
    assert!(!text.contains("# UNIT"));
    assert!(!text.contains("# EOF"));
    // The same samples, line for line.
    let samples = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with('#'))
            .map(String::from)
            .collect()
    };
    assert_eq!(
        samples(&text),
        samples(&render(&feed(), Format::OpenMetrics))
    );
}

#[test]
fn what_was_not_measured_is_left_out() {
    let mut f = feed();
    f.last.as_mut().unwrap().offered_per_s = None;
    f.last.as_mut().unwrap().queue = None;
    f.last.as_mut().unwrap().latency_s = [None; 4];
    f.last.as_mut().unwrap().lag_s = [None; 2];
    f.lag = None;
    f.cpu.as_mut().unwrap().server = None;
    f.cpu_seconds.as_mut().unwrap().server = None;
    let text = render(&f, Format::OpenMetrics);
    for gone in [
        "dbsweep_offered",
        "dbsweep_queued",
        "dbsweep_latency_seconds{",
        "dbsweep_schedule_lag",
        "dbsweep_server_cpu",
    ] {
        assert!(!text.contains(gone), "{gone} in\n{text}");
    }
    // An interval without transactions: no quantile, the count and sum
    // since the point began.
    assert!(text.contains("\ndbsweep_latency_seconds_count{"));
    assert!(text.contains("dbsweep_machine_cpu_ratio{"));
    // Before any point: the phase alone.
    assert_eq!(
        render(&Feed::default(), Format::OpenMetrics),
        "# HELP dbsweep_phase Where the point is: starting, warmup, measured or finished\n\
         # TYPE dbsweep_phase stateset\n\
         dbsweep_phase{dbsweep_phase=\"starting\"} 1\n\
         dbsweep_phase{dbsweep_phase=\"warmup\"} 0\n\
         dbsweep_phase{dbsweep_phase=\"measured\"} 0\n\
         dbsweep_phase{dbsweep_phase=\"finished\"} 0\n\
         # EOF\n"
    );
}

#[test]
fn the_format_follows_the_accept_header() {
    let om = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    assert_eq!(Format::from_accept(om), Format::OpenMetrics);
    assert_eq!(Format::from_accept("text/plain"), Format::Classic);
    assert_eq!(Format::from_accept(""), Format::Classic);
    assert_eq!(
        Format::OpenMetrics.content_type(),
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    );
}

#[test]
fn numbers_are_written_in_full() {
    assert_eq!(number(3.0), "3");
    assert_eq!(number(0.00025), "0.00025");
    assert_eq!(number(1e-7), "0.0000001");
    assert_eq!(number(f64::NAN), "NaN");
}
