//! The study report's machine and server blocks, per panel: CPU
//! utilisation against clients (stacked user / system / iowait / idle over
//! the panel's CPU set, seed 003's Figures 2–4), the server's CPU per
//! transaction, locks and InnoDB semaphores (seed 004) or PostgreSQL's top
//! wait events by clients, and the CPU and disks over time at the focus
//! point.
//!
//! A series or cell whose runs measured nothing (`--metrics off`, 0.1.0
//! files) is left out of a chart and shows "-" in a table; a block with
//! nothing at all to show is not drawn.

use std::collections::BTreeMap;

use super::names::{cpus_label, distinct, finished, panel_key};
use super::tables::text_cell;
use super::usage::{cpu_split, metrics, per_transaction, wait_pct};
use super::{CellData, Panel, SeriesData, Stat, StudyData};
use crate::report::doc::{Axis, Block, Cell, Chart, ChartKind, Mark, Row, Scale, Series, Table};
use crate::store::StoredPoint;

/// A figure of a cell.
type StatOf = fn(&CellData) -> Option<&Stat>;

/// Wait events a table shows at most (the most frequent over the series).
const TOP_WAITS: usize = 6;

/// The finished points of series `s` of panel `p`.
fn series_points<'a>(p: &Panel, s: &SeriesData, data: &'a StudyData) -> Vec<&'a StoredPoint> {
    let key = (
        p.workload.clone(),
        p.options.clone().into_iter().collect::<Vec<_>>(),
        p.cpus.clone(),
    );
    data.points
        .iter()
        .filter(|x| {
            panel_key(x) == key
                && x.row.target == s.target
                && x.row.variant == s.variant
                && x.row.instances == s.instances
                && finished(x).is_some()
        })
        .collect()
}

fn mean_points(s: &SeriesData, f: impl Fn(&CellData) -> Option<&Stat>) -> Vec<(f64, f64)> {
    s.cells
        .iter()
        .filter_map(|c| f(c).map(|st| (c.clients as f64, st.mean)))
        .collect()
}

fn clients_axis(p: &Panel) -> Axis {
    Axis::new(
        "clients",
        Scale::log_if(super::charts::log_clients(&p.clients)),
    )
}

/// Per series, its CPU set's time split against clients (stacked), then
/// the server's CPU per transaction of every series.
pub(super) fn cpu_charts(p: &Panel, title: &str) -> Vec<Block> {
    let set = cpus_label(&p.cpus);
    let mut blocks = Vec::new();
    for (i, s) in p.series.iter().enumerate() {
        let layers: [(&str, StatOf); 3] = [
            ("user", |c| c.cpu_user_pct.as_ref()),
            ("system", |c| c.cpu_system_pct.as_ref()),
            ("iowait", |c| c.iowait_pct.as_ref()),
        ];
        let mut series: Vec<Series> = layers
            .iter()
            .map(|(name, f)| Series {
                name: name.to_string(),
                points: mean_points(s, f),
                spread: None,
                reference: false,
            })
            .collect();
        if series[0].points.is_empty() {
            continue;
        }
        // Idle is what the other three leave, so the stack ends at 100 %.
        series.push(Series {
            name: "idle".into(),
            points: mean_points(s, |c| c.cpu_busy_pct.as_ref())
                .into_iter()
                .zip(mean_points(s, |c| c.iowait_pct.as_ref()))
                .map(|((x, busy), (_, io))| (x, (100.0 - busy - io).max(0.0)))
                .collect(),
            spread: None,
            reference: false,
        });
        blocks.push(Block::Chart(Chart {
            id: format!("{}-cpu-utilisation-{i}", p.id),
            title: if p.series.len() > 1 {
                format!("{title}: CPU utilisation, {}", s.label)
            } else {
                format!("{title}: CPU utilisation")
            },
            x: clients_axis(p),
            y: Axis::linear("CPU time (%)"),
            kind: ChartKind::Stacked,
            series,
        }));
    }
    let per_txn: Vec<Series> = p
        .series
        .iter()
        .map(|s| Series {
            name: s.label.clone(),
            points: mean_points(s, |c| c.server_cpu_us_per_txn.as_ref()),
            spread: None,
            reference: false,
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    if !per_txn.is_empty() {
        blocks.push(Block::Chart(Chart {
            id: format!("{}-server-cpu-per-transaction", p.id),
            title: format!("{title}: server CPU per transaction vs clients"),
            x: clients_axis(p),
            y: Axis::linear("server CPU per transaction (µs)"),
            kind: ChartKind::Line,
            series: per_txn,
        }));
    }
    if !blocks.is_empty() {
        blocks.push(Block::Note(format!(
            "CPU utilisation is the time of {set} as the kernel accounts it (/proc/stat: user with nice, system with irq, softirq and steal, iowait, idle), over the measured window; the server's CPU is its whole process tree (/proc/PID). Mean of the repeats."
        )));
    }
    blocks
}

fn value(v: Option<f64>, fmt: impl Fn(f64) -> String) -> Cell {
    v.map_or_else(
        || Cell {
            text: "-".into(),
            detail: Some("not measured".into()),
            mark: Mark::Missing,
        },
        |v| text_cell(fmt(v)),
    )
}

fn mean_of(points: &[&StoredPoint], f: impl Fn(&StoredPoint) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = points.iter().filter_map(|p| f(p)).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Per series with server counters, a table by clients: CPU, deadlocks and
/// lock waits as the server counts them, and either the InnoDB semaphore
/// counters per transaction or the most frequent PostgreSQL wait events.
pub(super) fn lock_tables(p: &Panel, data: &StudyData) -> Vec<Block> {
    let mut blocks = Vec::new();
    for s in &p.series {
        let points = series_points(p, s, data);
        let sql_names = distinct(
            points
                .iter()
                .filter_map(|x| metrics(x))
                .flat_map(|m| m.window.sql.iter().map(|(n, _)| n.to_string())),
        );
        if sql_names.is_empty() {
            continue;
        }
        let semaphores: Vec<&String> = sql_names
            .iter()
            .filter(|n| n.starts_with("innodb_semaphores."))
            .collect();
        let mut waits: BTreeMap<String, u64> = BTreeMap::new();
        for m in points.iter().filter_map(|x| metrics(x)) {
            for (e, n) in m.window.waits.iter() {
                *waits.entry(e.to_string()).or_default() += n;
            }
        }
        let mut waits: Vec<(String, u64)> = waits.into_iter().collect();
        waits.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        waits.truncate(TOP_WAITS);

        let mut columns: Vec<String> = ["server CPU µs/txn", "deadlocks/s", "row lock waits/s"]
            .map(String::from)
            .to_vec();
        columns.extend(
            semaphores
                .iter()
                .map(|n| format!("{}/txn", n.trim_start_matches("innodb_semaphores."))),
        );
        columns.extend(waits.iter().map(|(e, _)| format!("{e} %")));
        let rows =
            s.cells
                .iter()
                .filter(|c| c.finished > 0)
                .map(|c| {
                    let at: Vec<&StoredPoint> = points
                        .iter()
                        .copied()
                        .filter(|x| x.row.clients == c.clients)
                        .collect();
                    let stat = |x: &Option<Stat>| x.as_ref().map(|s| s.mean);
                    let mut cells = vec![
                        value(stat(&c.server_cpu_us_per_txn), |v| format!("{v:.0}")),
                        value(stat(&c.deadlocks_ps), |v| format!("{v:.2}")),
                        value(stat(&c.row_lock_waits_ps), |v| format!("{v:.2}")),
                    ];
                    cells.extend(semaphores.iter().map(|n| {
                        value(mean_of(&at, |x| per_transaction(x, n)), |v| {
                            format!("{v:.2}")
                        })
                    }));
                    cells.extend(waits.iter().map(|(e, _)| {
                        value(mean_of(&at, |x| wait_pct(x, e)), |v| format!("{v:.1}"))
                    }));
                    Row {
                        label: c.clients.to_string(),
                        cells,
                    }
                })
                .collect();
        let what = match (semaphores.is_empty(), waits.is_empty()) {
            (false, _) => "locks and InnoDB semaphores",
            (true, false) => "locks and wait events",
            (true, true) => "locks",
        };
        blocks.push(Block::Table(Table {
            caption: format!("{}: {what} by clients (mean of repeats)", s.label),
            corner: "clients".into(),
            columns,
            rows,
            wrap: None,
            prose: false,
        }));
        if !waits.is_empty() {
            blocks.push(Block::Note(
                "A wait event's % is its share of the active sessions sampled with each reading and, as the machine gets busy, up to nine times more in between: PostgreSQL's wait events (pg_stat_activity; 'running': on the CPU or in no wait), MariaDB's InnoDB lock waits, else its processlist stage ('running': no stage) (docs/profiles.md).".into(),
            ));
        }
        if !semaphores.is_empty() {
            blocks.push(Block::Note(
                "Semaphore counters are the SEMAPHORES section of SHOW ENGINE INNODB STATUS over the window, per transaction; the first and last texts are in each run's document.".into(),
            ));
        } else if let Some(why) = points
            .iter()
            .filter_map(|x| metrics(x))
            .flat_map(|m| m.gaps.iter())
            .find(|g| g.what.contains("semaphore"))
            .map(|g| g.why.clone())
        {
            // Say why a figure seed 004 reads is missing, not just omit it.
            blocks.push(Block::Note(format!(
                "InnoDB semaphore waits: not measured: {why}."
            )));
        }
    }
    blocks
}

/// The metrics of each series' first finished repeat at `clients`, named.
fn at_focus<'a>(
    p: &Panel,
    data: &'a StudyData,
    clients: u32,
) -> Vec<(String, &'a crate::record::Metrics)> {
    p.series
        .iter()
        .filter_map(|s| {
            let point = series_points(p, s, data)
                .into_iter()
                .find(|x| x.row.clients == clients)?;
            Some((
                format!("{} (repeat {})", s.label, point.row.repeat),
                metrics(point)?,
            ))
        })
        .collect()
}

/// The busy share of the panel's CPU set over time at `clients`, one line
/// per series (its first finished repeat), and the server's share.
pub(super) fn cpu_over_time(
    p: &Panel,
    data: &StudyData,
    clients: u32,
    title: &str,
) -> Option<Chart> {
    let set = cpus_label(&p.cpus);
    let mut series = Vec::new();
    for (name, m) in at_focus(p, data, clients) {
        let busy: Vec<(f64, f64)> = m
            .window_samples()
            .filter_map(|x| Some((x.t_s, cpu_split(&x.usage, p.cpus.as_deref())?.busy())))
            .collect();
        let server: Vec<(f64, f64)> = m
            .window_samples()
            .filter_map(|x| {
                let total = x.usage.cpu.total_s();
                let s = x.usage.server.as_ref()?;
                (total > 0.0).then(|| (x.t_s, 100.0 * s.cpu_s() / total))
            })
            .collect();
        if !busy.is_empty() {
            series.push(Series {
                name: format!("{name}: {set} busy"),
                points: busy,
                spread: None,
                reference: false,
            });
        }
        if !server.is_empty() {
            series.push(Series {
                name: format!("{name}: server, of the machine"),
                points: server,
                spread: None,
                reference: false,
            });
        }
    }
    (!series.is_empty()).then(|| Chart {
        id: format!("{}-at-{clients}-cpu-over-time", p.id),
        title: format!("{title}: CPU over time at {clients} clients"),
        x: Axis::linear("time (s)"),
        y: Axis::linear("CPU busy (%)"),
        kind: ChartKind::Line,
        series,
    })
}

/// MB read and written per second on every disk over time at `clients`,
/// one line per series.
pub(super) fn disk_over_time(
    p: &Panel,
    data: &StudyData,
    clients: u32,
    title: &str,
) -> Option<Chart> {
    let series: Vec<Series> = at_focus(p, data, clients)
        .into_iter()
        .map(|(name, m)| Series {
            name,
            points: m
                .window_samples()
                .map(|x| {
                    let bytes: u64 = x
                        .usage
                        .disks
                        .iter()
                        .map(|d| d.read_bytes + d.write_bytes)
                        .sum();
                    (x.t_s, bytes as f64 / 1e6 / x.usage.duration_s)
                })
                .collect(),
            spread: None,
            reference: false,
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    (!series.is_empty()).then(|| Chart {
        id: format!("{}-at-{clients}-disk-over-time", p.id),
        title: format!("{title}: disk over time at {clients} clients"),
        x: Axis::linear("time (s)"),
        y: Axis::linear("MB read and written per second"),
        kind: ChartKind::Line,
        series,
    })
}
