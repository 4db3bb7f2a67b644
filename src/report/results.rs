//! What `dbsweep results [DIR|results.db] [--csv]` prints: a readable table
//! of every point followed by the summaries of repeats, or every point and
//! every metric column as CSV.
//!
//! A point that did not finish shows its status and reason and no figures:
//! a skipped point is never shown as zero throughput.

use std::fmt::Write;

use super::csv::csv_line;
use super::doc::text::columns;
use crate::driver::ErrorKind;
use crate::stats::Spread;
use crate::store::{Metrics, PointStatus, StoredPoint, Summary};
use crate::util::units::ms;

/// Points, then summaries, as aligned text tables.
pub fn table(points: &[StoredPoint], summaries: &[Summary]) -> String {
    let instances = points.iter().any(|p| p.row.instances != 1);
    let mut out = String::new();

    let mut t = Table::new(&[
        ("target", false),
        ("variant", false),
        ("cpus", false),
        ("workload", false),
        ("clients", true),
    ]);
    if instances {
        t.column("inst", true);
    }
    for (h, right) in [
        ("repeat", true),
        ("tps", true),
        ("qps", true),
        ("p95 ms", true),
        ("errors", true),
        ("status", false),
    ] {
        t.column(h, right);
    }
    for p in points {
        let r = &p.row;
        let mut row = vec![
            r.target.clone(),
            r.variant.clone(),
            cpus(&r.cpus),
            workload(&r.workload_label, &r.workload_options),
            r.clients.to_string(),
        ];
        if instances {
            row.push(r.instances.to_string());
        }
        row.push(r.repeat.to_string());
        // Figures only for finished points: a failed run's partial numbers
        // are in the CSV and the database, not next to finished ones.
        match (r.status, &p.metrics) {
            (PointStatus::Finished, Some(m)) => {
                row.push(format!("{:.2}", m.tps));
                row.push(format!("{:.2}", m.qps));
                row.push(p95(m.lat_p95_us));
                row.push(m.errors.to_string());
            }
            _ => row.extend(["-", "-", "-", "-"].map(String::from)),
        }
        row.push(status(r.status, r.reason.as_deref()));
        t.row(row);
    }
    let _ = writeln!(out, "Points ({})", points.len());
    out.push_str(&t.render());

    if summaries.is_empty() {
        return out;
    }
    let mut t = Table::new(&[
        ("target", false),
        ("variant", false),
        ("cpus", false),
        ("workload", false),
        ("clients", true),
    ]);
    if instances {
        t.column("inst", true);
    }
    for (h, right) in [
        ("n", true),
        ("tps mean", true),
        ("±95%", true),
        ("stddev", true),
        ("min", true),
        ("max", true),
        ("qps mean", true),
        ("p95 ms mean", true),
        ("note", false),
    ] {
        t.column(h, right);
    }
    for s in summaries {
        let g = &s.group;
        let mut row = vec![
            g.target.clone(),
            g.variant.clone(),
            cpus(&g.cpus),
            workload(&g.workload_label, &g.workload_options),
            g.clients.to_string(),
        ];
        if instances {
            row.push(g.instances.to_string());
        }
        row.push(s.finished.to_string());
        let num = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.2}"));
        let tps = s.tps.as_ref();
        row.push(num(tps.map(|t| t.mean)));
        row.push(num(tps.and_then(|t| t.ci95)));
        row.push(num(tps.and_then(|t| t.stddev)));
        row.push(num(tps.map(|t| t.min)));
        row.push(num(tps.map(|t| t.max)));
        row.push(num(s.qps.as_ref().map(|q| q.mean)));
        row.push(p95(s.lat_p95_us.as_ref().map(|l: &Spread| l.mean)));
        row.push(s.reasons.join("; "));
        t.row(row);
    }
    let _ = writeln!(
        out,
        "\nSummaries over finished repeats (±95%: half-width of the 95 % confidence interval of the mean tps)"
    );
    out.push_str(&t.render());
    out
}

/// Every point with every stored column, one header row, RFC 4180 quoting
/// (fields with a comma, quote or line break are quoted, quotes doubled),
/// `\n` line ends. Empty fields are NULLs: a point without a run has no
/// figures, not zeros.
pub fn csv(points: &[StoredPoint]) -> String {
    let mut header: Vec<String> = [
        "study",
        "key",
        "target",
        "target_kind",
        "variant",
        "cpus",
        "workload",
        "workload_label",
        "workload_options_json",
        "clients",
        "instances",
        "repeat",
        "status",
        "reason",
        "committed_unix_s",
        "started_unix_s",
        "seed",
        "stop_reason",
        "measured_s",
        "transactions",
        "tps",
        "qps",
        "reads",
        "writes",
        "others",
        "failed_transactions",
        "retries",
        "ignored_errors",
        "errors",
    ]
    .map(String::from)
    .to_vec();
    header.extend(ErrorKind::ALL.map(|k| format!("errors_{}", k.name())));
    header.extend(
        [
            "reconnects",
            "abandoned",
            "lat_min_us",
            "lat_avg_us",
            "lat_p50_us",
            "lat_p95_us",
            "lat_p99_us",
            "lat_max_us",
            "client_cpu_s",
            "server_version",
        ]
        .map(String::from),
    );
    let mut out = String::new();
    csv_line(&mut out, &header);
    for p in points {
        let r = &p.row;
        let options: serde_json::Map<String, serde_json::Value> = r
            .workload_options
            .iter()
            .map(|(k, v)| (k.clone(), v.clone().into()))
            .collect();
        let mut f: Vec<String> = vec![
            p.study_name.clone(),
            r.key.clone(),
            r.target.clone(),
            r.target_kind.clone(),
            r.variant.clone(),
            r.cpus.clone().unwrap_or_default(),
            r.workload.clone(),
            r.workload_label.clone(),
            serde_json::Value::Object(options).to_string(),
            r.clients.to_string(),
            r.instances.to_string(),
            r.repeat.to_string(),
            r.status.as_str().to_string(),
            r.reason.clone().unwrap_or_default(),
            p.committed_unix_s.to_string(),
        ];
        let m: Option<&Metrics> = p.metrics.as_ref();
        let int = |g: fn(&Metrics) -> u64| m.map_or(String::new(), |m| g(m).to_string());
        let real = |g: fn(&Metrics) -> f64| m.map_or(String::new(), |m| g(m).to_string());
        let opt =
            |g: fn(&Metrics) -> Option<f64>| m.and_then(g).map_or(String::new(), |v| v.to_string());
        f.push(int(|m| m.started_unix_s));
        f.push(int(|m| m.seed));
        f.push(m.map_or(String::new(), |m| m.stop_reason.clone()));
        f.push(real(|m| m.measured_s));
        f.push(int(|m| m.transactions));
        f.push(real(|m| m.tps));
        f.push(real(|m| m.qps));
        f.push(int(|m| m.reads));
        f.push(int(|m| m.writes));
        f.push(int(|m| m.others));
        f.push(int(|m| m.failed_transactions));
        f.push(int(|m| m.retries));
        f.push(int(|m| m.ignored_errors));
        f.push(int(|m| m.errors));
        for k in ErrorKind::ALL {
            f.push(m.map_or(String::new(), |_| p.errors_of(k.name()).to_string()));
        }
        f.push(int(|m| m.reconnects));
        f.push(int(|m| m.abandoned));
        f.push(opt(|m| m.lat_min_us));
        f.push(opt(|m| m.lat_avg_us));
        f.push(opt(|m| m.lat_p50_us));
        f.push(opt(|m| m.lat_p95_us));
        f.push(opt(|m| m.lat_p99_us));
        f.push(opt(|m| m.lat_max_us));
        f.push(real(|m| m.client_cpu_s));
        f.push(m.map_or(String::new(), |m| m.server_version.clone()));
        debug_assert_eq!(f.len(), header.len());
        csv_line(&mut out, &f);
    }
    out
}

fn cpus(c: &Option<String>) -> String {
    c.clone().unwrap_or_else(|| "-".into())
}

/// The workload entry (its label, which defaults to its name) with the
/// options the study gives it.
fn workload(name: &str, options: &[(String, String)]) -> String {
    let mut s = name.to_string();
    for (k, v) in options {
        let _ = write!(s, " {k}={v}");
    }
    s
}

fn p95(us: Option<f64>) -> String {
    us.map_or("-".into(), |us| ms(us * 1e3))
}

fn status(s: PointStatus, reason: Option<&str>) -> String {
    match reason {
        Some(r) => format!("{}: {r}", s.as_str()),
        None => s.as_str().to_string(),
    }
}

/// A text table built row by row: columns two spaces apart, numbers
/// right-aligned, text left-aligned (see [`columns`]).
struct Table {
    headers: Vec<String>,
    right: Vec<bool>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn new(columns: &[(&str, bool)]) -> Table {
        let mut t = Table {
            headers: Vec::new(),
            right: Vec::new(),
            rows: Vec::new(),
        };
        for &(h, right) in columns {
            t.column(h, right);
        }
        t
    }

    fn column(&mut self, header: &str, right: bool) {
        self.headers.push(header.to_string());
        self.right.push(right);
    }

    fn row(&mut self, row: Vec<String>) {
        debug_assert_eq!(row.len(), self.headers.len());
        self.rows.push(row);
    }

    fn render(&self) -> String {
        let all: Vec<Vec<String>> = std::iter::once(self.headers.clone())
            .chain(self.rows.iter().cloned())
            .collect();
        columns(&all, &self.right)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_aligns_numbers_right_and_text_left() {
        let mut t = Table::new(&[("name", false), ("n", true), ("note", false)]);
        t.row(vec!["a".into(), "1000".into(), "".into()]);
        t.row(vec!["long name".into(), "2".into(), "skipped: why".into()]);
        assert_eq!(
            t.render(),
            "name          n  note\n\
             a          1000\n\
             long name     2  skipped: why\n"
        );
    }
}
