//! The report [`Doc`] of one run (`dbsweep run --report FILE.html`): what
//! was measured, throughput and errors, latency per statement type,
//! throughput and latency over time, and the latency distribution.
//!
//! Every number comes from the run's record — its figures, histograms and
//! intervals — as in the text and JSON reports, so a run file renders the
//! same report as the run that wrote it. A record without histograms
//! (format version 1) has no latency distribution to draw, and says so.

use super::{per_second, CPU_WARN_SHARE};
use crate::record::{Dialect, Interval, Latency, Run, StopReason};
use crate::report::doc::{
    Axis, Block, Cell, Chart, ChartKind, Doc, Mark, Row, Scale, Section, Series, Table,
};
use crate::stats::histogram::Histogram;
use crate::util::civil::utc_minutes as utc;
use crate::util::units::ms_us;

/// Above this many steps a distribution is thinned to steps at least this
/// fraction of the axis apart: below a pixel, so nothing visible is lost.
const MAX_STEPS: usize = 800;

fn cell(text: impl Into<String>) -> Cell {
    Cell::plain(text)
}

fn row(label: &str, cells: Vec<Cell>) -> Row {
    Row {
        label: label.into(),
        cells,
    }
}

fn ms_of(ns: f64) -> f64 {
    ns / 1e6
}

/// Latency by percentile from a histogram, as a step function: each bucket
/// is one step from the percentile below it, at the bucket's upper bound
/// (capped at the exact maximum) — an upper bound, never an invention.
pub fn percentile_steps(h: &Histogram) -> Vec<(f64, f64)> {
    let total = h.count();
    let (Some(min), Some(max)) = (h.min(), h.max()) else {
        return Vec::new();
    };
    let mut pts = Vec::new();
    let mut below = 0u64;
    let buckets: Vec<(u64, u64, u64)> = h.buckets().collect();
    // Thin in the chart's coordinates: the percentile scale -log10(1 - p)
    // and a logarithmic latency axis.
    let t_of = |n: u64| -(1.0 - n as f64 / total as f64).max(1e-12).log10();
    let x_step = t_of(total.saturating_sub(1)).max(1.0) / MAX_STEPS as f64;
    let y_step = (max.max(1) as f64 / min.max(1) as f64).log10().max(1.0) / MAX_STEPS as f64;
    let (mut last_t, mut last_v) = (f64::NEG_INFINITY, 0u64);
    for (i, &(_, high, n)) in buckets.iter().enumerate() {
        let t = t_of(below);
        let v = high.min(max).max(min);
        let far =
            t - last_t >= x_step || (v.max(1) as f64 / last_v.max(1) as f64).log10() >= y_step;
        if i == 0 || far {
            pts.push((100.0 * below as f64 / total as f64, ms_of(v as f64)));
            (last_t, last_v) = (t, v);
        } else if let Some(last) = pts.last_mut() {
            // A thinned step takes the higher bound of the steps it absorbs.
            last.1 = ms_of(v as f64);
        }
        below += n;
    }
    pts.push((100.0, ms_of(max as f64)));
    pts
}

fn latency_row(label: &str, l: &Latency) -> Row {
    row(
        label,
        super::text::latency_columns(l)
            .into_iter()
            .map(cell)
            .collect(),
    )
}

fn pct_column(p: f64) -> String {
    format!("p{p}")
}

/// The report of one run.
pub fn build(r: &Run) -> Doc {
    Doc {
        title: format!(
            "{} on {}",
            r.workload.name,
            engine_title(r.target.dialect.name())
        ),
        facts: facts(r),
        sections: [summary(r), latency(r)]
            .into_iter()
            .chain(super::pacing::doc_section(r))
            .chain(super::types::doc_section(r))
            .chain([over_time(r), clients(r)])
            .chain(super::shards::doc_section(r))
            .chain(r.result.metrics.as_ref().map(super::metrics::doc_section))
            .chain(super::waits::run_section(r))
            .chain(super::profile::run_section(r))
            .collect(),
    }
}

/// The header facts: what was measured, where, how long, on what.
fn facts(r: &Run) -> Vec<(String, String)> {
    let res = &r.result;
    let m = &r.machine;

    let server = if r.target.server_version.is_empty() {
        r.target.dialect.name().to_string()
    } else {
        r.target.server_version.clone()
    };
    let mut facts = vec![
        ("workload".to_string(), r.workload.name.clone()),
        ("target".to_string(), r.target.url.clone()),
        ("server".to_string(), server),
        ("clients".to_string(), r.run.threads.to_string()),
    ];
    let stop = match res.stop_reason {
        StopReason::Time => "time limit reached",
        StopReason::Events => "all transactions (--events) done",
        StopReason::Rounds => "all rounds done",
        StopReason::Interrupted => "interrupted (Ctrl-C)",
        StopReason::Aborted => "aborted by an error",
        StopReason::Timeout => "hard timeout reached",
        StopReason::Incomplete => {
            "the process ended before the run: rebuilt from its closed intervals"
        }
    };
    let mut window = format!("{:.2} s ({stop})", res.measured_s);
    if r.run.warmup_s > 0.0 {
        window.push_str(&format!(", after {:.1} s of warmup", r.run.warmup_s));
    }
    facts.push(("measured window".into(), window));
    if r.started_unix_s > 0 {
        facts.push(("started".into(), utc(r.started_unix_s)));
    }
    if !r.workload.options.is_empty() {
        let opts: Vec<String> = r
            .workload
            .options
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        facts.push(("workload options".into(), opts.join(", ")));
    }
    facts.push((
        "random".into(),
        format!("{}, seed {}", r.random.kind, r.random.seed),
    ));
    let cpus = if m.cpus_available != m.cpus_online {
        format!("{} CPUs ({} usable)", m.cpus_online, m.cpus_available)
    } else {
        format!("{} CPUs", m.cpus_online)
    };
    facts.push((
        "machine".into(),
        format!(
            "{}: {}, {cpus}, {:.1} GiB, {} {}",
            m.hostname,
            if m.cpu_model.is_empty() {
                "unknown CPU"
            } else {
                &m.cpu_model
            },
            m.memory_bytes as f64 / (1u64 << 30) as f64,
            m.os,
            m.kernel
        ),
    ));
    facts.push((
        "tool".into(),
        format!("dbsweep {}", env!("CARGO_PKG_VERSION")),
    ));
    facts
}

/// The headline, warnings, throughput and errors.
fn summary(r: &Run) -> Section {
    let res = &r.result;
    let q = &res.queries;
    // Summary: the headline, warnings, throughput and errors.
    let mut blocks = Vec::new();
    // Version 1 records do not say which one was asked for: sysbench's 95.
    let headline_p = r.run.percentile.unwrap_or(95.0);
    let headline_lat = res.latency.as_ref().and_then(|l| {
        l.percentiles
            .iter()
            .find(|p| p.p == headline_p)
            .map(|p| p.us)
    });
    blocks.push(Block::Paragraph(format!(
        "{:.2} {} and {:.2} queries/s with {} client(s) over {:.2} s{}.",
        res.tps,
        crate::workload::unit::unit(&r.workload.name).per_s,
        res.qps,
        r.run.threads,
        res.measured_s,
        match headline_lat {
            Some(us) => format!("; transaction latency p{headline_p} {} ms", ms_us(us)),
            None => String::new(),
        }
    )));
    match res.stop_reason {
        StopReason::Aborted => blocks.push(Block::Paragraph(format!(
            "The run was aborted by an error: {}. The figures cover the run until then.",
            res.fatal_error.as_deref().unwrap_or("unknown")
        ))),
        StopReason::Interrupted => blocks.push(Block::Paragraph(
            "The run was interrupted; the figures cover the run until then.".into(),
        )),
        StopReason::Timeout => blocks.push(Block::Paragraph(
            "The run reached its hard timeout; the figures cover the run until then.".into(),
        )),
        StopReason::Incomplete => blocks.push(Block::Paragraph(format!(
            "The run did not finish: {}",
            res.fatal_error
                .as_deref()
                .unwrap_or("its process ended before it")
        ))),
        _ => {}
    }
    if res.abandoned > 0 {
        blocks.push(Block::Paragraph(format!(
            "{} transaction(s) were still running at the deadline and were abandoned.",
            res.abandoned
        )));
    }
    let cpu = &res.client_cpu;
    if cpu.share_of_machine > CPU_WARN_SHARE {
        blocks.push(Block::Note(format!(
            "The client used {:.0} % of the machine's CPU{}: on a shared machine it may be limiting the result.{}",
            cpu.share_of_machine * 100.0,
            if r.target.dialect == Dialect::Sqlite {
                " (SQLite runs inside the client, so its work counts here)"
            } else {
                ""
            },
            if super::profile::client_profiled(r) {
                " Where it went: the client's flame graph, under Profiles."
            } else {
                ""
            }
        )));
    }
    let count_row = |label: &str, n: u64, per_s: Option<f64>| {
        row(
            label,
            vec![
                cell(n.to_string()),
                cell(per_s.map(|v| format!("{v:.2}")).unwrap_or_default()),
            ],
        )
    };
    let ps = |n: u64| Some(per_second(r, n));
    let mut rows = vec![
        count_row("transactions", res.transactions, Some(res.tps)),
        count_row("queries", q.total, Some(res.qps)),
        count_row("read queries", q.read, ps(q.read)),
        count_row("write queries", q.write, ps(q.write)),
        count_row("other queries", q.other, ps(q.other)),
        count_row("ignored errors", res.ignored_errors, ps(res.ignored_errors)),
        count_row("reconnects", res.reconnects, ps(res.reconnects)),
        count_row("retries", res.retries, None),
        count_row("failed transactions", res.failed_transactions, None),
        count_row("abandoned at deadline", res.abandoned, None),
    ];
    for (kind, n) in res.errors.iter() {
        if n > 0 {
            rows.push(count_row(&format!("errors: {kind}"), n, None));
        }
    }
    blocks.push(Block::Table(Table {
        caption: "Throughput and errors".into(),
        corner: "".into(),
        columns: vec!["total".into(), "per second".into()],
        rows,
        wrap: None,
        prose: false,
    }));
    Section {
        title: "Summary".into(),
        blocks,
    }
}

/// Latency of the transaction and of each statement type, and its
/// distribution.
fn latency(r: &Run) -> Section {
    let res = &r.result;
    // Latency: the transaction and each statement type.
    let mut columns: Vec<String> = vec!["count".into(), "min".into(), "avg".into()];
    let percentiles: Vec<f64> = res
        .latency
        .as_ref()
        .or(res.statements.first().map(|s| &s.latency))
        .map(|l| l.percentiles.iter().map(|p| p.p).collect())
        .unwrap_or_default();
    columns.extend(percentiles.iter().map(|&p| pct_column(p)));
    columns.push("max".into());
    let mut rows = Vec::new();
    match &res.latency {
        Some(l) => rows.push(latency_row("transaction", l)),
        None => {
            let mut cells = vec![cell("0")];
            cells.push(Cell {
                text: "no transaction completed in the measured window".into(),
                detail: None,
                mark: Mark::Missing,
            });
            rows.push(row("transaction", cells));
        }
    }
    for st in &res.statements {
        rows.push(latency_row(&st.kind, &st.latency));
    }
    let mut blocks = vec![Block::Table(Table {
        caption: "Latency (ms) of transactions and of each statement type".into(),
        corner: "".into(),
        columns,
        rows,
        wrap: None,
        prose: false,
    })];
    blocks.push(Block::Note(
        "Percentiles come from the full latency histograms (microsecond resolution, 3 significant digits); \
         min, avg and max are exact. Statement latency is timed around each statement, result fully fetched."
            .into(),
    ));
    // The distribution, as latency by percentile: the tail stays visible.
    let mut series = Vec::new();
    if let Some(hs) = &res.histograms {
        let named = std::iter::once(("transaction", &hs.transaction)).chain(hs.statements.iter());
        for (name, h) in named {
            match Histogram::try_from(h) {
                Ok(h) if !h.is_empty() => series.push(Series {
                    name: name.to_string(),
                    points: percentile_steps(&h),
                    spread: None,
                    reference: false,
                }),
                _ => {}
            }
        }
    }
    if res.histograms.is_none() {
        blocks.push(Block::Note(
            "This run's record has no latency histograms (it was written by dbsweep 0.1.0): \
             no latency distribution to draw."
                .into(),
        ));
    } else {
        blocks.push(Block::Chart(Chart {
            id: "latency-distribution".into(),
            title: "Latency by percentile".into(),
            x: Axis::percentile("percentile (%)"),
            y: Axis::log("latency (ms)"),
            kind: ChartKind::Step,
            series,
        }));
        blocks.push(Block::Note(
            "Read: at percentile p, p % of the executions were at most this fast. \
         The percentile axis stretches the tail (90, 99, 99.9 …); both axes are logarithmic."
                .into(),
        ));
    }
    Section {
        title: "Latency".into(),
        blocks,
    }
}

/// Throughput and latency over time, from the measured window's intervals.
fn over_time(r: &Run) -> Section {
    let res = &r.result;
    // Over time, from the interval samples of the measured window.
    let interval = r.run.report_interval_s.unwrap_or(0.0);
    let samples: Vec<_> = res
        .intervals
        .iter()
        // A short tail after the last full interval has too few samples for
        // its rates to mean anything (the interval lines skip it too).
        .filter(|s| !s.warmup && s.duration_s >= 0.5 * interval && s.duration_s > 0.0)
        .collect();
    let mut blocks = Vec::new();
    if samples.len() >= 2 {
        let per_s = |n: u64, d: f64| n as f64 / d;
        let tps: Vec<(f64, f64)> = samples
            .iter()
            .map(|s| (s.t_s, per_s(s.transactions, s.duration_s)))
            .collect();
        let failed: Vec<(f64, f64)> = samples
            .iter()
            .map(|s| (s.t_s, per_s(s.failed, s.duration_s)))
            .collect();
        let unit = crate::workload::unit::unit(&r.workload.name);
        let mut tseries = vec![Series {
            name: unit.per_s.into(),
            points: tps,
            spread: None,
            reference: false,
        }];
        if failed.iter().any(|p| p.1 > 0.0) {
            tseries.push(Series {
                name: "failed transactions/s".into(),
                points: failed,
                spread: None,
                reference: false,
            });
        }
        blocks.push(Block::Chart(Chart {
            id: "throughput-over-time".into(),
            title: "Throughput over time".into(),
            x: Axis::linear("time (s)"),
            y: Axis::linear(unit.per_s),
            kind: ChartKind::Line,
            series: tseries,
        }));
        let lat = |name: &str, get: &dyn Fn(&Interval) -> Option<f64>| Series {
            name: name.into(),
            points: samples
                .iter()
                .map(|s| (s.t_s, get(s).map_or(f64::NAN, |us| ms_of(us * 1e3))))
                .collect(),
            spread: None,
            reference: false,
        };
        let lseries = vec![
            lat("p50", &|s| s.p50_us),
            lat("p95", &|s| s.p95_us),
            lat("p99", &|s| s.p99_us),
            lat("max", &|s| s.max_us),
        ];
        // A max far above the median flattens a linear axis: go logarithmic.
        let lo = lseries[0]
            .points
            .iter()
            .map(|p| p.1)
            .filter(|v| v.is_finite())
            .fold(f64::INFINITY, f64::min);
        let hi = lseries[3]
            .points
            .iter()
            .map(|p| p.1)
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        blocks.push(Block::Chart(Chart {
            id: "latency-over-time".into(),
            title: "Transaction latency over time".into(),
            x: Axis::linear("time (s)"),
            y: Axis::new("latency (ms)", Scale::log_if(lo > 0.0 && hi / lo > 20.0)),
            kind: ChartKind::Line,
            series: lseries,
        }));
        blocks.push(Block::Note(format!(
            "One point per {:.3} s interval of the measured window, plotted at the interval's end; \
             latency percentiles are those of the transactions finished in that interval.",
            interval
        )));
    } else {
        blocks.push(Block::Note(
            "The measured window was shorter than two intervals: no time series to draw \
             (a longer --time, or a shorter --report-interval)."
                .into(),
        ));
    }
    Section {
        title: "Over time".into(),
        blocks,
    }
}

/// The clients (fairness, their own CPU) and the server's settings.
fn clients(r: &Run) -> Section {
    let res = &r.result;
    let cpu = &res.client_cpu;
    // The clients: fairness and their own CPU.
    let fair = &res.fairness;
    let mut rows = vec![
        row(
            "transactions per client (avg / stddev)",
            vec![cell(format!(
                "{:.2} / {:.2}",
                fair.events_avg, fair.events_stddev
            ))],
        ),
        row(
            "time in transactions per client, s (avg / stddev)",
            vec![cell(format!(
                "{:.3} / {:.3}",
                fair.time_avg_s, fair.time_stddev_s
            ))],
        ),
        row(
            "client CPU, user + system",
            vec![cell(format!(
                "{:.3} s ({:.1} % of {} CPU(s))",
                cpu.total_s(),
                cpu.share_of_machine * 100.0,
                cpu.cpus
            ))],
        ),
    ];
    if let Some(v) = cpu.us_per_transaction {
        rows.push(row(
            "client CPU per transaction",
            vec![cell(format!("{v:.1} µs"))],
        ));
    }
    if let Some(c) = res.connect.as_ref().filter(|c| c.histogram.count > 0) {
        rows.push(row(
            "connecting all clients",
            vec![cell(format!("{:.3} s", c.wall_s))],
        ));
    }
    let mut blocks = vec![Block::Table(Table {
        caption: "Clients".into(),
        corner: "".into(),
        columns: vec!["value".into()],
        rows,
        wrap: None,
        prose: false,
    })];
    if !r.target.settings.is_empty() {
        blocks.push(Block::Table(Table {
            caption: "Server settings that matter for the measurement".into(),
            corner: "setting".into(),
            columns: vec!["value".into()],
            rows: r
                .target
                .settings
                .iter()
                .map(|(k, v)| row(k, vec![cell(v.clone())]))
                .collect(),
            wrap: None,
            prose: false,
        }));
    }
    Section {
        title: "Clients and server".into(),
        blocks,
    }
}

/// The engine's name as people write it.
fn engine_title(dialect: &str) -> &str {
    match dialect {
        "sqlite" => "SQLite",
        "postgres" | "postgresql" => "PostgreSQL",
        "mysql" => "MySQL/MariaDB",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(utc(1_700_000_000), "2023-11-14 22:13 UTC");
    }

    #[test]
    fn percentile_steps_bound_the_distribution() {
        let mut h = Histogram::new();
        for v in 1..=1000u64 {
            h.record(v * 1000); // 1 µs … 1 ms
        }
        let pts = percentile_steps(&h);
        assert_eq!(pts.first().unwrap(), &(0.0, 0.001));
        assert_eq!(pts.last().unwrap(), &(100.0, 1.0));
        // Monotone in both coordinates.
        assert!(pts.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
        // At the 50th percentile the step is at most 1 % above the true median.
        let med = pts.iter().rev().find(|p| p.0 <= 50.0).unwrap().1;
        assert!((0.5..=0.505).contains(&med), "{med}");
        assert!(percentile_steps(&Histogram::new()).is_empty());
    }

    #[test]
    fn thins_very_fine_distributions() {
        let mut h = Histogram::new();
        for v in 0..200_000u64 {
            h.record(1000 + v * 37);
        }
        let pts = percentile_steps(&h);
        assert!(pts.len() <= 2 * MAX_STEPS + 2, "{}", pts.len());
        assert_eq!(pts.last().unwrap().1, ms_of(h.max().unwrap() as f64));
    }
}
