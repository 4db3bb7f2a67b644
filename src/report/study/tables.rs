//! The study report's tables: a metric by client count, peaks and sag,
//! errors by kind, latency per statement type, fairness; and how a cell
//! shows a missing point (its reason, never a zero).

use std::fmt::Write;

use super::names::{distinct, panel_title};
use super::paired::PairedComparison;
use super::{CellData, Metric, Panel};
use crate::report::doc::{Cell, Mark, Row, Table};
use crate::stats::paired::Verdict;
use crate::util::units::ms_ms;

/// Tables wider than this many client columns wrap into halves (seed 000).
pub(super) const WRAP_ABOVE: usize = 8;

/// Why a cell has no figure, short enough for a table: a skip reason
/// (stop rules write short ones), or "failed ×N" (the failure messages are
/// in the cell's detail and in a note under the table).
pub(super) fn missing_text(c: &CellData) -> String {
    if c.failed > 0 {
        if c.failed == 1 {
            "failed".into()
        } else {
            format!("failed ×{}", c.failed)
        }
    } else {
        let text = c.reasons.join("; ");
        if text.chars().count() > 48 {
            format!("{}…", text.chars().take(47).collect::<String>())
        } else {
            text
        }
    }
}

/// A cell of a metric table: the mean with its spread, or why there is none.
pub(super) fn metric_cell(c: &CellData, metric: Metric) -> Cell {
    match metric.stat(c) {
        Some(s) => {
            let mut detail = s.detail(|v| metric.format(v));
            if c.failed + c.skipped > 0 {
                let _ = write!(detail, "; also {}", c.reasons.join("; "));
            }
            Cell {
                text: metric.format(s.mean),
                detail: Some(detail),
                mark: Mark::None,
            }
        }
        None if c.finished > 0 => Cell {
            text: "-".into(),
            detail: Some("no transaction completed".into()),
            mark: Mark::Missing,
        },
        None if c.reasons.is_empty() => Cell::default(),
        None => Cell {
            text: missing_text(c),
            detail: Some(c.reasons.join("; ")),
            mark: Mark::Missing,
        },
    }
}

pub(super) fn wrap(columns: usize) -> Option<usize> {
    (columns > WRAP_ABOVE).then(|| columns.div_ceil(2))
}

pub(super) fn text_cell(text: impl Into<String>) -> Cell {
    Cell {
        text: text.into(),
        ..Cell::default()
    }
}

/// A table of `metric` by clients, one row per series.
pub(super) fn metric_table(p: &Panel, metric: Metric, caption: String, mark_best: bool) -> Table {
    let rows = p
        .series
        .iter()
        .map(|s| {
            let mut cells: Vec<Cell> = s.cells.iter().map(|c| metric_cell(c, metric)).collect();
            if mark_best {
                if let Some(peak) = s.peak {
                    if let Some(i) = s.cells.iter().position(|c| c.clients == peak.clients) {
                        cells[i].mark = Mark::Best;
                    }
                }
            }
            Row {
                label: s.label.clone(),
                cells,
            }
        })
        .collect();
    Table {
        caption,
        corner: "clients".into(),
        columns: p.clients.iter().map(u32::to_string).collect(),
        rows,
        wrap: wrap(p.clients.len()),
        prose: false,
    }
}

/// The peak and sag of each series; beside several series, each one's
/// peak against the baseline's block by block (`peaks`: the panel's
/// paired peak comparisons), marked only where the interval decides.
pub(super) fn peak_table(p: &Panel, tp: Metric, peaks: &[&PairedComparison]) -> Table {
    let rows = p
        .series
        .iter()
        .map(|s| {
            let mut cells = vec![
                s.peak.map_or(Cell::default(), |pk| Cell {
                    text: tp.format(pk.value),
                    detail: None,
                    mark: Mark::None,
                }),
                text_cell(s.peak.map_or(String::new(), |pk| pk.clients.to_string())),
                text_cell(s.sag.map_or(String::new(), |g| g.last.clients.to_string())),
                text_cell(s.sag.map_or(String::new(), |g| tp.format(g.last.value))),
                text_cell(s.sag.map_or(String::new(), |g| format!("{:.2}", g.pct))),
                text_cell(
                    s.collapse
                        .map_or("-".to_string(), |c| c.clients.to_string()),
                ),
            ];
            if p.series.len() > 1 {
                cells.push(match peaks.iter().find(|c| c.series == s.label) {
                    Some(c) => Cell {
                        text: c.difference_text(),
                        detail: Some(format!(
                            "{} against {}, {} blocks",
                            c.verdict.name().replace('_', " "),
                            c.baseline,
                            c.blocks
                        )),
                        mark: match c.verdict {
                            Verdict::Better => Mark::Better,
                            Verdict::Worse => Mark::Worse,
                            _ => Mark::None,
                        },
                    },
                    None if peaks.iter().any(|c| c.baseline == s.label) => text_cell("baseline"),
                    None => text_cell(""),
                });
            }
            Row {
                label: s.label.clone(),
                cells,
            }
        })
        .collect();
    let mut columns: Vec<String> = [
        "peak",
        "clients at peak",
        "highest clients",
        "value there",
        "sag %",
        "collapse (< 50 % of peak) at",
    ]
    .map(String::from)
    .to_vec();
    if p.series.len() > 1 {
        columns.push("peak against the baseline, block by block".into());
    }
    Table {
        caption: format!(
            "Peak and sag ({}): sag % = (peak − value at the highest client count) / peak",
            tp.name()
        ),
        corner: "series".into(),
        columns,
        rows,
        wrap: None,
        prose: false,
    }
}

pub(super) fn errors_table(panels: &[Panel], several: bool) -> Option<Table> {
    let kinds: Vec<String> = distinct(
        panels
            .iter()
            .flat_map(|p| &p.series)
            .flat_map(|s| s.errors.keys().cloned()),
    );
    let mut rows = Vec::new();
    let mut any = false;
    for p in panels {
        for s in &p.series {
            let skipped: usize = s.cells.iter().map(|c| c.skipped).sum();
            let failed: usize = s.cells.iter().map(|c| c.failed).sum();
            let mut cells: Vec<Cell> = kinds
                .iter()
                .map(|k| text_cell(s.errors.get(k).copied().unwrap_or(0).to_string()))
                .collect();
            for n in [s.failed_transactions, s.retries, s.reconnects, s.abandoned] {
                cells.push(text_cell(n.to_string()));
            }
            cells.push(text_cell(skipped.to_string()));
            cells.push(text_cell(failed.to_string()));
            any |= s.errors.values().any(|&n| n > 0)
                || s.failed_transactions + s.retries + s.reconnects + s.abandoned > 0
                || skipped + failed > 0;
            rows.push(Row {
                label: format!("{} · {}", panel_title(p, several), s.label),
                cells,
            });
        }
    }
    if !any {
        return None;
    }
    let mut columns: Vec<String> = kinds.iter().map(|k| k.replace('_', " ")).collect();
    columns.extend(
        [
            "failed txns",
            "retries",
            "reconnects",
            "abandoned",
            "skipped points",
            "failed points",
        ]
        .map(String::from),
    );
    Some(Table {
        caption: "Errors by kind, failed and retried transactions (totals over the finished points), and points not measured".into(),
        corner: "workload · series".into(),
        columns,
        rows,
        wrap: None,
        prose: false,
    })
}

pub(super) fn statements_table(p: &Panel) -> Option<Table> {
    let kinds = distinct(
        p.statements
            .iter()
            .flat_map(|s| s.kinds.iter().map(|k| k.kind.clone())),
    );
    if kinds.len() < 2 {
        return None;
    }
    let rows = p
        .statements
        .iter()
        .map(|s| Row {
            label: s.series.clone(),
            cells: kinds
                .iter()
                .map(|k| match s.kinds.iter().find(|x| &x.kind == k) {
                    Some(x) => Cell {
                        text: ms_ms(x.p95_ms),
                        detail: Some(format!(
                            "avg {} ms, p99 {} ms, max {} ms, {} executions",
                            ms_ms(x.avg_ms),
                            ms_ms(x.p99_ms),
                            ms_ms(x.max_ms),
                            x.count
                        )),
                        mark: Mark::None,
                    },
                    None => Cell::default(),
                })
                .collect(),
        })
        .collect();
    Some(Table {
        caption: format!(
            "95th percentile latency (ms) by statement type at {} clients, over every repeat",
            p.focus_clients.unwrap_or(0)
        ),
        corner: "series".into(),
        columns: kinds,
        rows,
        wrap: wrap(p.statements.first().map_or(0, |s| s.kinds.len())),
        prose: false,
    })
}

pub(super) fn fairness_table(p: &Panel) -> Option<Table> {
    let any = p
        .series
        .iter()
        .flat_map(|s| &s.cells)
        .any(|c| c.fairness_cv_pct.is_some() && c.clients > 1);
    if !any {
        return None;
    }
    let rows = p
        .series
        .iter()
        .map(|s| Row {
            label: s.label.clone(),
            cells: s
                .cells
                .iter()
                .map(|c| match &c.fairness_cv_pct {
                    Some(st) => Cell {
                        text: format!("{:.2}", st.mean),
                        detail: Some(st.detail(|v| format!("{v:.2}"))),
                        mark: Mark::None,
                    },
                    None => Cell {
                        text: missing_text(c),
                        detail: None,
                        mark: if c.reasons.is_empty() {
                            Mark::None
                        } else {
                            Mark::Missing
                        },
                    },
                })
                .collect(),
        })
        .collect();
    Some(Table {
        caption: "Threads fairness: spread of transactions per client (coefficient of variation, %; 0 = every client did the same work)".into(),
        corner: "clients".into(),
        columns: p.clients.iter().map(u32::to_string).collect(),
        rows,
        wrap: wrap(p.clients.len()),
        prose: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_tables_wrap() {
        assert_eq!(wrap(14), Some(7));
        assert_eq!(wrap(7), None);
    }
}
