//! The report [`Doc`] of one run (`dbsweep run --report FILE.html`): what
//! was measured, throughput and errors, latency per statement type,
//! throughput and latency over time, and the latency distribution.
//!
//! Every number comes from [`Figures`] or straight from the run's
//! histograms and interval samples, as in the text and JSON reports.

use super::doc::{Axis, Block, Cell, Chart, ChartKind, Doc, Mark, Row, Section, Series, Table};
use super::text::ms;
use super::{Figures, RunRecord, CPU_WARN_SHARE};
use crate::civil::utc_minutes as utc;
use crate::engine::StopReason;
use crate::stats::histogram::Histogram;
use crate::stats::summary::LatencySummary;

/// Above this many steps a distribution is thinned to steps at least this
/// fraction of the axis apart: below a pixel, so nothing visible is lost.
const MAX_STEPS: usize = 800;

fn cell(text: impl Into<String>) -> Cell {
    Cell {
        text: text.into(),
        ..Cell::default()
    }
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

fn latency_row(label: &str, l: &LatencySummary) -> Row {
    let mut cells = vec![
        cell(l.count.to_string()),
        cell(ms(l.min_ns as f64)),
        cell(ms(l.avg_ns)),
    ];
    cells.extend(l.percentiles.iter().map(|p| cell(ms(p.ns as f64))));
    cells.push(cell(ms(l.max_ns as f64)));
    row(label, cells)
}

fn pct_column(p: f64) -> String {
    format!("p{p}")
}

/// The report of one run.
pub fn build(r: &RunRecord<'_>) -> Doc {
    let f = Figures::of(r);
    let res = r.result;
    let c = &res.counters;
    let cfg = r.config;
    let m = &r.machine;

    let server = if res.server.version.is_empty() {
        r.dialect.to_string()
    } else {
        res.server.version.clone()
    };
    let mut facts = vec![
        ("workload".to_string(), r.workload.to_string()),
        ("target".to_string(), r.target.clone()),
        ("server".to_string(), server),
        ("clients".to_string(), cfg.threads.to_string()),
    ];
    let stop = match res.stop {
        StopReason::Time => "time limit reached",
        StopReason::Events => "all transactions (--events) done",
        StopReason::Rounds => "all rounds done",
        StopReason::Interrupted => "interrupted (Ctrl-C)",
        StopReason::Aborted => "aborted by an error",
    };
    let mut window = format!("{:.2} s ({stop})", f.seconds);
    if !res.warmup.is_zero() {
        window.push_str(&format!(
            ", after {:.1} s of warmup",
            res.warmup.as_secs_f64()
        ));
    }
    facts.push(("measured window".into(), window));
    if r.started_unix_s > 0 {
        facts.push(("started".into(), utc(r.started_unix_s)));
    }
    if !r.options.is_empty() {
        let opts: Vec<String> = r.options.iter().map(|(k, v)| format!("{k}={v}")).collect();
        facts.push(("workload options".into(), opts.join(", ")));
    }
    facts.push((
        "random".into(),
        format!("{}, seed {}", r.rand.kind.name(), r.rand.seed),
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

    let mut sections = Vec::new();

    // Summary: the headline, warnings, throughput and errors.
    let mut blocks = Vec::new();
    let headline_p = cfg.interval_percentile;
    let headline_lat = f.latency.as_ref().and_then(|l| {
        l.percentiles
            .iter()
            .find(|p| p.p == headline_p)
            .map(|p| p.ns)
    });
    blocks.push(Block::Paragraph(format!(
        "{:.2} transactions/s and {:.2} queries/s with {} client(s) over {:.2} s{}.",
        f.tps,
        f.qps,
        cfg.threads,
        f.seconds,
        match headline_lat {
            Some(ns) => format!("; transaction latency p{headline_p} {} ms", ms(ns as f64)),
            None => String::new(),
        }
    )));
    match res.stop {
        StopReason::Aborted => blocks.push(Block::Paragraph(format!(
            "The run was aborted by an error: {}. The figures cover the run until then.",
            res.fatal.as_deref().unwrap_or("unknown")
        ))),
        StopReason::Interrupted => blocks.push(Block::Paragraph(
            "The run was interrupted; the figures cover the run until then.".into(),
        )),
        _ => {}
    }
    if res.abandoned > 0 {
        blocks.push(Block::Paragraph(format!(
            "{} transaction(s) were still running at the deadline and were abandoned.",
            res.abandoned
        )));
    }
    if f.cpu_share > CPU_WARN_SHARE {
        blocks.push(Block::Note(format!(
            "The client used {:.0} % of the machine's CPU{}: on a shared machine it may be limiting the result.",
            f.cpu_share * 100.0,
            if r.dialect == "sqlite" {
                " (SQLite runs inside the client, so its work counts here)"
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
    let mut rows = vec![
        count_row("transactions", c.transactions, Some(f.tps)),
        count_row("queries", c.queries(), Some(f.qps)),
        count_row("read queries", c.reads, Some(f.reads_ps)),
        count_row("write queries", c.writes, Some(f.writes_ps)),
        count_row("other queries", c.others, Some(f.others_ps)),
        count_row("ignored errors", f.ignored_errors, Some(f.errors_ps)),
        count_row("reconnects", c.reconnects, Some(f.reconnects_ps)),
        count_row("retries", c.retries, None),
        count_row("failed transactions", c.failed, None),
        count_row("abandoned at deadline", res.abandoned, None),
    ];
    for (kind, n) in Figures::errors(r) {
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
    }));
    sections.push(Section {
        title: "Summary".into(),
        blocks,
    });

    // Latency: the transaction and each statement type.
    let mut columns: Vec<String> = vec!["count".into(), "min".into(), "avg".into()];
    columns.extend(r.percentiles.iter().map(|&p| pct_column(p)));
    columns.push("max".into());
    let mut rows = Vec::new();
    match &f.latency {
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
    for (kind, l) in &f.statements {
        rows.push(latency_row(kind, l));
    }
    let mut blocks = vec![Block::Table(Table {
        caption: "Latency (ms) of transactions and of each statement type".into(),
        corner: "".into(),
        columns,
        rows,
        wrap: None,
    })];
    blocks.push(Block::Note(
        "Percentiles come from the full latency histograms (microsecond resolution, 3 significant digits); \
         min, avg and max are exact. Statement latency is timed around each statement, result fully fetched."
            .into(),
    ));
    // The distribution, as latency by percentile: the tail stays visible.
    let mut series = Vec::new();
    if !res.txn_latency.is_empty() {
        series.push(Series {
            name: "transaction".into(),
            points: percentile_steps(&res.txn_latency),
            spread: None,
        });
    }
    for (kind, h) in res.statement_kinds.iter().zip(&res.stmt_latency) {
        if !h.is_empty() {
            series.push(Series {
                name: kind.clone(),
                points: percentile_steps(h),
                spread: None,
            });
        }
    }
    blocks.push(Block::Chart(Chart {
        id: "latency-distribution".into(),
        title: "Latency by percentile".into(),
        x: Axis::new("percentile (%)", true),
        y: Axis::new("latency (ms)", true),
        kind: ChartKind::Step,
        series,
    }));
    blocks.push(Block::Note(
        "Read: at percentile p, p % of the executions were at most this fast. \
         The percentile axis stretches the tail (90, 99, 99.9 …); both axes are logarithmic."
            .into(),
    ));
    sections.push(Section {
        title: "Latency".into(),
        blocks,
    });

    // Over time, from the interval samples of the measured window.
    let interval = cfg.report_interval.map_or(0.0, |d| d.as_secs_f64());
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
            .map(|s| (s.t_s, per_s(s.counters.transactions, s.duration_s)))
            .collect();
        let failed: Vec<(f64, f64)> = samples
            .iter()
            .map(|s| (s.t_s, per_s(s.counters.failed, s.duration_s)))
            .collect();
        let mut tseries = vec![Series {
            name: "transactions/s".into(),
            points: tps,
            spread: None,
        }];
        if failed.iter().any(|p| p.1 > 0.0) {
            tseries.push(Series {
                name: "failed transactions/s".into(),
                points: failed,
                spread: None,
            });
        }
        blocks.push(Block::Chart(Chart {
            id: "throughput-over-time".into(),
            title: "Throughput over time".into(),
            x: Axis::new("time (s)", false),
            y: Axis::new("transactions/s", false),
            kind: ChartKind::Line,
            series: tseries,
        }));
        let lat =
            |name: &str, get: &dyn Fn(&crate::engine::IntervalSample) -> Option<u64>| Series {
                name: name.into(),
                points: samples
                    .iter()
                    .map(|s| (s.t_s, get(s).map_or(f64::NAN, |ns| ms_of(ns as f64))))
                    .collect(),
                spread: None,
            };
        let lseries = vec![
            lat("p50", &|s| s.p50_ns),
            lat("p95", &|s| s.p95_ns),
            lat("p99", &|s| s.p99_ns),
            lat("max", &|s| s.max_ns),
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
            x: Axis::new("time (s)", false),
            y: Axis::new("latency (ms)", lo > 0.0 && hi / lo > 20.0),
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
    sections.push(Section {
        title: "Over time".into(),
        blocks,
    });

    // The clients: fairness and their own CPU.
    let fair = &f.fairness;
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
                f.cpu_s,
                f.cpu_share * 100.0,
                res.cpus
            ))],
        ),
    ];
    if let Some(v) = f.cpu_us_per_txn {
        rows.push(row(
            "client CPU per transaction",
            vec![cell(format!("{v:.1} µs"))],
        ));
    }
    if !res.connect.latency.is_empty() {
        rows.push(row(
            "connecting all clients",
            vec![cell(format!("{:.3} s", res.connect.wall.as_secs_f64()))],
        ));
    }
    let mut blocks = vec![Block::Table(Table {
        caption: "Clients".into(),
        corner: "".into(),
        columns: vec!["value".into()],
        rows,
        wrap: None,
    })];
    if !res.server.settings.is_empty() {
        blocks.push(Block::Table(Table {
            caption: "Server settings that matter for the measurement".into(),
            corner: "setting".into(),
            columns: vec!["value".into()],
            rows: res
                .server
                .settings
                .iter()
                .map(|(k, v)| row(k, vec![cell(v.clone())]))
                .collect(),
            wrap: None,
        }));
    }
    sections.push(Section {
        title: "Clients and server".into(),
        blocks,
    });

    Doc {
        title: format!("{} on {}", r.workload, engine_title(r.dialect)),
        facts,
        sections,
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
