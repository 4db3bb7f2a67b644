//! The tidy CSV every report writes: one figure per line in one long
//! table that loads as is into a spreadsheet, pandas or R,
//!
//! `record,panel,workload,cpus,series,clients,repeat,shard,figure,value,n,stddev,ci95,min,max,note`
//!
//! — its `Line`, RFC 4180 quoting, a finished point's figures and a
//! TPC-C point's results (as a study's `point` lines and a run's lines
//! share them). A run's lines are `report::run::csv`'s, a study's records
//! `report::study::csv`'s. Empty fields are absent values.

use crate::record::{Run, Tpcc};
use crate::store::Metrics;

pub(super) const HEADER: [&str; 16] = [
    "record", "panel", "workload", "cpus", "series", "clients", "repeat", "shard", "figure",
    "value", "n", "stddev", "ci95", "min", "max", "note",
];

/// The spread columns of a line: a cell's repeats, or a paired ratio's
/// blocks and interval (`min`, `max`).
#[derive(Debug, Clone)]
pub(super) struct Spread {
    pub(super) n: usize,
    pub(super) stddev: Option<f64>,
    pub(super) ci95: Option<f64>,
    pub(super) min: f64,
    pub(super) max: f64,
}

/// One line of the table; `stat` fills `n` to `max`.
#[derive(Default, Clone)]
pub(super) struct Line {
    pub(super) record: &'static str,
    pub(super) panel: String,
    pub(super) workload: String,
    pub(super) cpus: String,
    pub(super) series: String,
    pub(super) clients: String,
    pub(super) repeat: String,
    pub(super) shard: String,
    pub(super) figure: String,
    pub(super) value: String,
    pub(super) stat: Option<Spread>,
    pub(super) note: String,
}

pub(super) fn num(v: f64) -> String {
    if v.is_finite() {
        v.to_string()
    } else {
        String::new()
    }
}

pub(super) fn opt(v: Option<f64>) -> String {
    v.map_or(String::new(), num)
}

/// The header and `lines`.
pub(super) fn to_csv(lines: Vec<Line>) -> String {
    let mut out = String::new();
    csv_line(&mut out, &HEADER.map(String::from));
    for l in lines {
        let st = l.stat.as_ref();
        csv_line(
            &mut out,
            &[
                l.record.to_string(),
                l.panel,
                l.workload,
                l.cpus,
                l.series,
                l.clients,
                l.repeat,
                l.shard,
                l.figure,
                l.value,
                st.map_or(String::new(), |s| s.n.to_string()),
                opt(st.and_then(|s| s.stddev)),
                opt(st.and_then(|s| s.ci95)),
                opt(st.map(|s| s.min)),
                opt(st.map(|s| s.max)),
                l.note,
            ],
        );
    }
    out
}

/// A finished point's figures (`m`, copied from its record `run`), on
/// the lines of `base`.
pub(super) fn point_lines(
    base: &Line,
    m: &Metrics,
    paced: bool,
    run: Option<&Run>,
    lines: &mut Vec<Line>,
) {
    for (figure, v) in [
        ("tps", Some(m.tps)),
        ("qps", Some(m.qps)),
        ("p95_ms", m.p95_ms()),
        ("p99_ms", m.p99_ms()),
        ("errors_per_s", m.errors_per_s()),
    ] {
        lines.push(Line {
            figure: figure.into(),
            value: opt(v),
            ..base.clone()
        });
    }
    if paced {
        for (figure, v) in [
            ("offered_per_s", m.offered_per_s),
            ("achieved_per_s", m.achieved_per_s),
        ] {
            lines.push(Line {
                figure: figure.into(),
                value: opt(v),
                ..base.clone()
            });
        }
    }
    if let Some(t) = run.and_then(|r| r.result.tpcc.as_ref()) {
        tpcc_lines(t, base, lines);
    }
}

/// A TPC-C point's results, one figure per line; an absent one with its
/// reason.
fn tpcc_lines(t: &Tpcc, base: &Line, lines: &mut Vec<Line>) {
    let mut push = |figure: String, value: Option<f64>, note: Option<String>| {
        lines.push(Line {
            figure,
            value: opt(value),
            note: note.unwrap_or_else(|| base.note.clone()),
            ..base.clone()
        })
    };
    push("tpmc".into(), Some(t.tpmc), None);
    push(
        "efficiency_pct".into(),
        t.efficiency_pct,
        t.efficiency_absent.clone(),
    );
    push("nopm".into(), Some(t.nopm), None);
    push(
        "nopm_server".into(),
        t.server_nopm,
        t.server_nopm_absent.clone(),
    );
    push("tpm".into(), Some(t.tpm), None);
    push(
        "tpm_server".into(),
        t.server_tpm,
        t.server_tpm_absent
            .clone()
            .or_else(|| t.server_tpm_counters.clone()),
    );
    push("warehouses".into(), Some(t.warehouses as f64), None);
    push(
        "terminals".into(),
        Some(t.terminals as f64),
        Some(format!("on {} connections", t.connections)),
    );
    for ty in &t.types {
        let note = match (ty.limit_s, ty.within) {
            (Some(l), Some(true)) => format!("limit {l} s: within"),
            (Some(l), Some(false)) => format!("limit {l} s: above"),
            (Some(l), None) => format!("limit {l} s: none completed"),
            (None, _) => "no limit".into(),
        };
        push(format!("{}:p90_ms", ty.name), ty.p90_ms, Some(note));
    }
    for m in &t.mix {
        let verdict = if m.meets { "meets" } else { "below" };
        push(
            format!("{}:share_pct", m.name),
            Some(m.share_pct),
            Some(format!("minimum {} %: {verdict}", m.min_pct)),
        );
    }
    let c = &t.consistency;
    push(
        "consistency_failed".into(),
        c.checked.then_some(c.failed.len() as f64),
        Some(c.verdict.clone()),
    );
}

/// Appends one CSV record (RFC 4180 quoting) to `out`.
pub fn csv_line(out: &mut String, fields: &[String]) {
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if field.contains([',', '"', '\n', '\r']) {
            out.push('"');
            out.push_str(&field.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(field);
        }
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_only_what_needs_it() {
        let mut s = String::new();
        csv_line(
            &mut s,
            &["plain", "a,b", "say \"hi\"", "two\nlines", ""].map(String::from),
        );
        assert_eq!(s, "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\n");
    }
}
