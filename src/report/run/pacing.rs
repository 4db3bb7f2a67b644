//! The pacing part of a run's HTML report: how the run was paced (rate,
//! users, think time, latency limit), offered against achieved load, late,
//! skipped and unstarted transactions, the latency from the intended start
//! beside the service time and the schedule lag, and the offered and
//! achieved rate and the lag over time.

use crate::record::{Latency, PacingOutcome, Run};
use crate::report::doc::{Axis, Block, Cell, Chart, ChartKind, Row, Section, Series, Table};
use crate::util::units::ms_us;

/// The section, for a run that was paced; None for a plain closed loop.
pub fn doc_section(r: &Run) -> Option<Section> {
    let p = r.result.pacing.as_ref()?;
    let mut blocks = Vec::new();
    if let Some(s) = &r.run.pacing {
        let mut how = Vec::new();
        if let (Some(rate), Some(a)) = (s.rate, &s.arrival) {
            how.push(format!(
                "an open loop of {rate} transactions per second ({a} arrivals) on {} connection(s)",
                r.run.threads
            ));
        }
        if let Some(u) = s.users {
            how.push(format!("{u} users on {} connection(s)", r.run.threads));
        }
        if let (Some(t), Some(m)) = (&s.think_time, s.think_time_mean_s) {
            how.push(format!("think time {t} (mean {m:.3} s)"));
        }
        if let Some(l) = s.latency_limit_ms {
            how.push(format!("latency limit {l} ms"));
        }
        let mut text = format!("Paced as {}.", how.join(", "));
        if let (Some(_), Some(t)) = (s.users, p.setup_s) {
            text.push_str(&format!(
                " The users were set up in {t:.3} s, before the window opened."
            ));
        }
        blocks.push(Block::Paragraph(text));
    }
    blocks.push(Block::Table(counts(r, p)));
    if p.offered.is_some() {
        blocks.push(Block::Note(
            "Latency runs from each transaction's intended start (its arrival, or the end of its \
             user's think time), so waiting for a connection counts; service time runs from when \
             a connection began it; schedule lag is the wait between the two."
                .into(),
        ));
    }
    let lat: Vec<(&str, &Latency)> = [
        ("latency", r.result.latency.as_ref()),
        ("service time", p.service.as_ref()),
        ("schedule lag", p.lag.as_ref()),
    ]
    .into_iter()
    .filter_map(|(n, l)| Some((n, l?)))
    .collect();
    if lat.len() > 1 {
        blocks.push(Block::Table(latencies(&lat)));
    }
    blocks.extend(over_time(r));
    Some(Section {
        title: "Pacing".into(),
        blocks,
    })
}

fn counts(r: &Run, p: &PacingOutcome) -> Table {
    let share = |n: u64| {
        p.offered.filter(|&o| o > 0).map_or(String::new(), |o| {
            format!("{:.2} %", n as f64 / o as f64 * 100.0)
        })
    };
    let mut rows = Vec::new();
    if let (Some(n), Some(rate)) = (p.offered, p.offered_per_s) {
        rows.push((
            "offered",
            n.to_string(),
            format!("{rate:.2}"),
            String::new(),
        ));
    }
    rows.push((
        "achieved",
        r.result.transactions.to_string(),
        format!("{:.2}", p.achieved_per_s),
        share(r.result.transactions),
    ));
    for (label, n) in [
        ("late", p.late),
        ("skipped (behind schedule)", p.skipped),
        ("not started by the end", p.unstarted),
    ] {
        if let Some(n) = n {
            rows.push((label, n.to_string(), String::new(), share(n)));
        }
    }
    Table {
        caption: "Offered and achieved load".into(),
        corner: "".into(),
        columns: vec![
            "transactions".into(),
            "per second".into(),
            "of offered".into(),
        ],
        rows: rows
            .into_iter()
            .map(|(label, a, b, c)| Row {
                label: label.into(),
                cells: vec![Cell::plain(a), Cell::plain(b), Cell::plain(c)],
            })
            .collect(),
        wrap: None,
        prose: false,
    }
}

fn latencies(lat: &[(&str, &Latency)]) -> Table {
    let pcts: Vec<f64> = lat[0].1.percentiles.iter().map(|p| p.p).collect();
    let mut columns = vec!["min".to_string(), "avg".to_string()];
    columns.extend(pcts.iter().map(|p| format!("p{p}")));
    columns.push("max".into());
    Table {
        caption: "Latency, service time and schedule lag (ms)".into(),
        corner: "".into(),
        columns,
        rows: lat
            .iter()
            .map(|(name, l)| {
                let mut cells = vec![Cell::plain(ms_us(l.min_us)), Cell::plain(ms_us(l.avg_us))];
                cells.extend(pcts.iter().map(|p| {
                    Cell::plain(
                        l.percentiles
                            .iter()
                            .find(|x| x.p == *p)
                            .map_or("-".into(), |x| ms_us(x.us)),
                    )
                }));
                cells.push(Cell::plain(ms_us(l.max_us)));
                Row {
                    label: name.to_string(),
                    cells,
                }
            })
            .collect(),
        wrap: None,
        prose: false,
    }
}

/// Offered and achieved rate, and the lag, over the run's intervals.
fn over_time(r: &Run) -> Vec<Block> {
    let iv: Vec<_> = r
        .result
        .intervals
        .iter()
        .filter(|i| i.offered_per_s.is_some())
        .collect();
    if iv.len() < 2 {
        return Vec::new();
    }
    let series = |name: &str, f: &dyn Fn(&crate::record::Interval) -> Option<f64>| Series {
        name: name.into(),
        points: iv.iter().filter_map(|i| Some((i.t_s, f(i)?))).collect(),
        spread: None,
        reference: false,
    };
    vec![
        Block::Chart(Chart {
            id: "rate-over-time".into(),
            title: "Offered and achieved rate over time".into(),
            x: Axis::linear("time (s)"),
            y: Axis::linear("transactions per second"),
            kind: ChartKind::Line,
            series: vec![
                series("offered", &|i| i.offered_per_s),
                series("achieved", &|i| {
                    Some(i.transactions as f64 / i.duration_s.max(1e-9))
                }),
            ],
        }),
        Block::Chart(Chart {
            id: "lag-over-time".into(),
            title: "Schedule lag over time".into(),
            x: Axis::linear("time (s)"),
            y: Axis::log("lag (ms)"),
            kind: ChartKind::Line,
            series: vec![
                series("lag p99", &|i| {
                    i.lag_p99_us.map(|u| u / 1e3).filter(|v| *v > 0.0)
                }),
                series("lag max", &|i| {
                    i.lag_max_us.map(|u| u / 1e3).filter(|v| *v > 0.0)
                }),
            ],
        }),
    ]
}
