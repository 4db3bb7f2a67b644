//! The "Machine and server" part of a run's reports: what the machine,
//! the server and the client did during the measured window, as the text
//! report's section ([`text_section`]) and as the HTML report's
//! ([`doc_section`]: the figures, and CPU and IO over time).

use std::fmt::Write;

use crate::record::metrics::{Figure, MergedFrom, Metrics, Usage};
use crate::report::doc::{Axis, Block, Cell, Chart, ChartKind, Row, Section, Series, Table};

/// A figure's value with its unit, or why it is absent.
fn value(f: &Option<Figure>, unit: &str, decimals: usize) -> Option<String> {
    f.as_ref()
        .map(|f| format!("{:.*}{unit}", decimals, f.value))
}

/// The reason a figure or source named `what` is absent.
fn why<'a>(m: &'a Metrics, what: &str) -> Option<&'a str> {
    m.gaps
        .iter()
        .find(|g| g.what == what)
        .map(|g| g.why.as_str())
}

/// The figures as (label, value) lines; absent ones say why.
fn lines(m: &Metrics) -> Vec<(String, String)> {
    let f = &m.figures;
    let mut out = Vec::new();
    let missing = |what: &str| {
        format!(
            "not measured: {}",
            why(m, what).unwrap_or("see the gaps below")
        )
    };
    let cpus = m.window.per_cpu.len().max(1);
    if let Some(from) = &m.merged {
        out.push(("sampled by".to_string(), sampled_by(from)));
    }
    out.push((
        "machine CPU busy".to_string(),
        match (
            &f.cpu_busy_pct,
            &f.cpu_user_pct,
            &f.cpu_system_pct,
            &f.iowait_pct,
        ) {
            (Some(b), Some(u), Some(s), Some(w)) => format!(
                "{:.1} % of {cpus} CPU(s) (user {:.1} %, system {:.1} %, iowait {:.1} %)",
                b.value, u.value, s.value, w.value
            ),
            _ => missing("machine CPU"),
        },
    ));
    let embedded = m.server_process.how.starts_with("embedded");
    if let Some(pid) = m.server_process.pid {
        out.push((
            "server process".to_string(),
            format!("pid {pid}, {}", m.server_process.how),
        ));
    }
    out.push((
        "server CPU".to_string(),
        match &f.server_cpu_pct {
            Some(p) => {
                let mut s = format!("{:.1} % of the machine", p.value);
                if let Some(v) = value(&f.server_cpu_us_per_transaction, " µs", 1) {
                    let _ = write!(s, ", {v} CPU per transaction");
                }
                if let Some(v) = value(&f.server_cpu_us_per_query, " µs", 2) {
                    let _ = write!(s, ", {v} per query");
                }
                s
            }
            None if embedded => "counted in the client's: SQLite runs in the client".into(),
            // Shards on several machines: the server's CPU, not its share
            // of a machine.
            None => match (
                value(&f.server_cpu_us_per_transaction, " µs", 1),
                value(&f.server_cpu_us_per_query, " µs", 2),
            ) {
                (Some(t), q) => {
                    let q = q.map_or(String::new(), |q| format!(", {q} per query"));
                    format!("{t} CPU per transaction{q}")
                }
                (None, _) => missing("server process"),
            },
        },
    ));
    if let Some(v) = value(&f.client_cpu_pct, " % of the machine", 1) {
        out.push(("client (dbsweep)".into(), v));
    }
    if let Some(v) = value(&f.other_cpu_pct, " % of the machine", 1) {
        out.push(("everything else".into(), v));
    }
    if let Some(v) = value(&f.context_switches_per_transaction, "", 1) {
        out.push(("context switches per transaction".into(), v));
    }
    if let Some(v) = value(&f.disk_mb_per_transaction, " MB per transaction", 4) {
        let w = &m.window;
        let busiest = w
            .disks
            .iter()
            .max_by(|a, b| a.busy_s.total_cmp(&b.busy_s))
            .filter(|_| w.duration_s > 0.0)
            .map(|d| {
                format!(
                    " ({}: {:.1} MB/s read, {:.1} MB/s written, {:.0} % busy)",
                    d.name,
                    d.read_bytes as f64 / 1e6 / w.duration_s,
                    d.write_bytes as f64 / 1e6 / w.duration_s,
                    100.0 * d.busy_s / w.duration_s
                )
            })
            .unwrap_or_default();
        out.push(("disk".into(), format!("{v}{busiest}")));
    }
    let sql_figures: [(&str, &Option<Figure>, &str, usize, &str); 4] = [
        (
            "buffer pool hit ratio",
            &f.buffer_pool_hit_pct,
            " %",
            2,
            "buffer pool hit ratio",
        ),
        (
            "row lock waits",
            &f.row_lock_waits_per_s,
            " per sec.",
            2,
            "row lock waits",
        ),
        ("deadlocks", &f.deadlocks_per_s, " per sec.", 2, "deadlocks"),
        (
            "semaphore OS waits per transaction",
            &f.semaphore_os_waits_per_transaction,
            "",
            3,
            "semaphore waits",
        ),
    ];
    for (label, fig, unit, d, gap) in sql_figures {
        match value(fig, unit, d) {
            Some(v) => out.push((label.to_string(), v)),
            None => {
                if let Some(w) = why(m, gap) {
                    out.push((label.to_string(), format!("not measured: {w}")));
                }
            }
        }
    }
    out
}

/// Whose readings a merged run's metrics are, in words.
fn sampled_by(from: &MergedFrom) -> String {
    let server = match from.server_shard {
        Some(i) => format!(
            "the server: shard {i}'s sampler (one server; its figures per transaction of the merged run)"
        ),
        None => "the server: no shard measured it".to_string(),
    };
    let machine = match from.machine_shard {
        Some(i) => {
            format!("the machine: shard {i}'s (every shard ran on it; the client is every shard's)")
        }
        None => "the machine: none (see machine CPU busy)".to_string(),
    };
    format!("{server}; {machine}")
}

/// The text report's section.
pub fn text_section(m: &Metrics) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Machine and server (measured window, sampled every {} s):",
        m.interval_s
    );
    for (label, v) in lines(m) {
        let _ = writeln!(s, "    {:<37}{v}", format!("{label}:"));
    }
    let shown = [
        "machine CPU",
        "server CPU",
        "server process",
        "row lock waits",
        "deadlocks",
        "semaphore waits",
        "buffer pool hit ratio",
    ];
    for g in m.gaps.iter().filter(|g| !shown.contains(&g.what.as_str())) {
        let _ = writeln!(s, "    not measured: {}: {}", g.what, g.why);
    }
    s
}

/// Per-second rates of a sample series, for charts.
fn series(name: &str, samples: &[(f64, &Usage)], f: impl Fn(&Usage) -> Option<f64>) -> Series {
    Series {
        name: name.into(),
        points: samples
            .iter()
            .map(|(t, u)| (*t, f(u).unwrap_or(f64::NAN)))
            .collect(),
        spread: None,
        reference: false,
    }
}

/// The HTML report's section: the figures as a table, and the machine's
/// CPU by kind, the server's and the client's CPU, and disk throughput over
/// the measured window.
pub fn doc_section(m: &Metrics) -> Section {
    let cell = |text: String| Cell {
        text,
        ..Cell::default()
    };
    let mut blocks = vec![Block::Table(Table {
        caption: format!("Measured window, sampled every {} s", m.interval_s),
        corner: "".into(),
        columns: vec!["value".into()],
        rows: lines(m)
            .into_iter()
            .map(|(label, v)| Row {
                label,
                cells: vec![cell(v)],
            })
            .collect(),
        wrap: None,
        prose: false,
    })];
    let window: Vec<_> = m.window_samples().collect();
    let samples: Vec<(f64, &Usage)> = window.iter().map(|s| (s.t_s, &s.usage)).collect();
    // A merge of shards on several machines has no machine to draw.
    let machine = !matches!(&m.merged, Some(f) if f.machine_shard.is_none());
    if samples.len() >= 2 && machine {
        let pct = |u: &Usage, x: f64| {
            let total = u.cpu.total_s();
            (total > 0.0).then(|| 100.0 * x / total)
        };
        blocks.push(Block::Chart(Chart {
            id: "cpu-over-time".into(),
            title: "CPU over time".into(),
            x: Axis::linear("time (s)"),
            y: Axis::linear("% of the machine's CPU"),
            kind: ChartKind::Line,
            series: vec![
                series("busy", &samples, |u| pct(u, u.cpu.busy_s())),
                series("user", &samples, |u| pct(u, u.cpu.user_s + u.cpu.nice_s)),
                series("system", &samples, |u| {
                    pct(u, u.cpu.system_s + u.cpu.irq_s + u.cpu.softirq_s)
                }),
                series("iowait", &samples, |u| pct(u, u.cpu.iowait_s)),
                series("server", &samples, |u| {
                    u.server.as_ref().and_then(|s| pct(u, s.cpu_s()))
                }),
                series("client", &samples, |u| pct(u, u.client.cpu_s())),
            ],
        }));
        blocks.push(Block::Chart(Chart {
            id: "disk-over-time".into(),
            title: "Disk throughput over time".into(),
            x: Axis::linear("time (s)"),
            y: Axis::linear("MB/s"),
            kind: ChartKind::Line,
            series: vec![
                series("read", &samples, |u| {
                    Some(
                        u.disks.iter().map(|d| d.read_bytes).sum::<u64>() as f64
                            / 1e6
                            / u.duration_s,
                    )
                }),
                series("written", &samples, |u| {
                    Some(
                        u.disks.iter().map(|d| d.write_bytes).sum::<u64>() as f64
                            / 1e6
                            / u.duration_s,
                    )
                }),
            ],
        }));
    }
    for g in &m.gaps {
        blocks.push(Block::Note(format!("Not measured: {}: {}.", g.what, g.why)));
    }
    if !m.innodb_semaphores.is_empty() {
        let last = m.innodb_semaphores.last().cloned().unwrap_or_default();
        blocks.push(Block::Note(format!(
            "InnoDB SEMAPHORES at the window's end, as the server printed it: {}",
            if last.trim().is_empty() {
                "(empty)".to_string()
            } else {
                last.replace('\n', "; ")
            }
        )));
    }
    Section {
        title: "Machine and server".into(),
        blocks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::metrics::{Figures, Gap, Sample, ServerProcess};

    /// A run merged from shards on two machines: the server's figures
    /// without a machine.
    fn merged_on_two_machines() -> Metrics {
        Metrics {
            interval_s: 1.0,
            readings: 4,
            reading_ms_avg: 1.0,
            reading_ms_max: 1.0,
            sampling_cpu_s: None,
            server_process: ServerProcess {
                pid: Some(7),
                how: "listening on 127.0.0.1:5432".into(),
            },
            warmup: None,
            window: Usage::default(),
            figures: Figures {
                server_cpu_us_per_transaction: Some(Figure {
                    value: 500.0,
                    from: "server CPU 4.000 s / 8000 transactions".into(),
                }),
                ..Figures::default()
            },
            samples: (1..=3)
                .map(|t| Sample {
                    t_s: t as f64,
                    warmup: false,
                    usage: Usage {
                        duration_s: 1.0,
                        ..Usage::default()
                    },
                })
                .collect::<Vec<_>>()
                .into(),
            gaps: vec![Gap {
                what: "machine CPU".into(),
                why: "the shards ran on different machines (lg1: shard 0; db: shard 1)".into(),
            }],
            innodb_semaphores: Vec::new(),
            profiles: Vec::new(),
            window_counts: Vec::new(),
            merged: Some(MergedFrom {
                server_shard: Some(1),
                machine_shard: None,
                machine_why_not: Some("the shards ran on different machines".into()),
            }),
        }
    }

    #[test]
    fn a_merge_on_several_machines_shows_the_server_and_why_no_machine() {
        let text = text_section(&merged_on_two_machines());
        let line = |label: &str| {
            text.lines()
                .find(|l| l.trim_start().starts_with(label))
                .unwrap_or_else(|| panic!("no {label} in\n{text}"))
                .to_string()
        };
        assert!(line("sampled by:").contains("shard 1's sampler"), "{text}");
        assert!(
            line("machine CPU busy:")
                .contains("not measured: the shards ran on different machines"),
            "{text}"
        );
        assert!(
            line("server CPU:").contains("500.0 µs CPU per transaction"),
            "{text}"
        );
        assert!(!text.contains("client (dbsweep)"), "{text}");
        // No machine to draw: no chart of CPU over time.
        let section = doc_section(&merged_on_two_machines());
        assert!(!section.blocks.iter().any(|b| matches!(b, Block::Chart(_))));
    }
}
