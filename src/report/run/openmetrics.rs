//! The live feed ([`super::feed::Feed`]) as a scraper reads it: the
//! OpenMetrics text format (`application/openmetrics-text; version=1.0.0`,
//! `# HELP`, `# TYPE` and `# UNIT` for each family, counters' samples
//! ending in `_total`, `# EOF` last) or, for a scraper that does not ask
//! for OpenMetrics, Prometheus's classic text format (`text/plain;
//! version=0.0.4`: no units, no `# EOF`, a state set as a gauge).
//!
//! Every name starts `dbsweep_`; every sample carries the point's labels
//! (workload, target, and a study's target, variant, clients and repeat).
//! The last interval's latency quantiles are a summary's (labelled by
//! `quantile`, 1 the maximum, as a summary's quantiles cover a recent
//! window), its `_count` and `_sum` since the point began, so that
//! `rate(_sum) / rate(_count)` is the mean latency.
//! A figure not measured is left out, never written as 0: the latency of
//! an interval without transactions, the offered rate of a closed loop,
//! the server's CPU when its processes were not found.

use std::fmt::Write;

use super::feed::{Feed, Phase};
use crate::driver::ErrorKind;

/// The two text formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    OpenMetrics,
    Classic,
}

impl Format {
    /// The format a scraper's `Accept` header asks for: OpenMetrics when
    /// it names it, the classic format otherwise (as Prometheus's own
    /// client libraries negotiate).
    pub fn from_accept(accept: &str) -> Format {
        if accept.contains("application/openmetrics-text") {
            Format::OpenMetrics
        } else {
            Format::Classic
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Format::Classic => "text/plain; version=0.0.4; charset=utf-8",
        }
    }
}

/// A metric family's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Counter,
    Gauge,
    StateSet,
    Summary,
}

/// A sample of a family: its name's suffix (`_total`, `_count`, `_sum`,
/// or none), its labels beyond the point's, its value.
type Point = (&'static str, Vec<(&'static str, String)>, f64);

/// One family and its samples.
struct Family {
    /// Without `_total` for a counter.
    name: &'static str,
    kind: Kind,
    unit: Option<&'static str>,
    help: &'static str,
    samples: Vec<Point>,
}

impl Family {
    fn new(name: &'static str, kind: Kind, unit: Option<&'static str>, help: &'static str) -> Self {
        Family {
            name,
            kind,
            unit,
            help,
            samples: Vec::new(),
        }
    }

    /// The suffix of a sample of this family's own name.
    fn own(&self) -> &'static str {
        match self.kind {
            Kind::Counter => "_total",
            _ => "",
        }
    }

    fn one(mut self, v: f64) -> Self {
        self.samples.push((self.own(), Vec::new(), v));
        self
    }

    fn by(mut self, label: &'static str, values: impl IntoIterator<Item = (String, f64)>) -> Self {
        for (l, v) in values {
            self.samples.push((self.own(), vec![(label, l)], v));
        }
        self
    }

    /// A summary's count and sum.
    fn count_sum(mut self, count: u64, sum: f64) -> Self {
        self.samples.push(("_count", Vec::new(), count as f64));
        self.samples.push(("_sum", Vec::new(), sum));
        self
    }
}

/// The quantiles of the latency gauges, as labelled.
const QUANTILES: [&str; 4] = ["0.5", "0.95", "0.99", "1"];

/// The feed as text in `format`.
pub fn render(feed: &Feed, format: Format) -> String {
    let mut out = String::new();
    for f in families(feed) {
        write_family(&mut out, &f, &feed.labels, format);
    }
    if format == Format::OpenMetrics {
        out.push_str("# EOF\n");
    }
    out
}

/// Every family the feed has figures for, in a fixed order.
fn families(feed: &Feed) -> Vec<Family> {
    use Kind::*;
    let phase = Family::new(
        "dbsweep_phase",
        StateSet,
        None,
        "Where the point is: starting, warmup, measured or finished",
    )
    .by(
        "dbsweep_phase",
        Phase::ALL.map(|p| (p.name().to_string(), f64::from(u8::from(p == feed.phase)))),
    );
    let mut out = vec![phase];
    if feed.labels.is_empty() {
        return out;
    }
    let t = &feed.totals;
    let count = |name, help, n: u64| Family::new(name, Counter, None, help).one(n as f64);
    out.extend([
        count(
            "dbsweep_transactions",
            "Transactions completed since the point began, its warmup included",
            t.transactions,
        ),
        count(
            "dbsweep_failed_transactions",
            "Transactions given up (retries exhausted or an ignored error) since the point began",
            t.failed,
        ),
        Family::new(
            "dbsweep_errors",
            Counter,
            None,
            "Errors since the point began, by kind (retried ones included)",
        )
        .by(
            "kind",
            ErrorKind::ALL.map(|k| (k.name().to_string(), t.errors[k.index()] as f64)),
        ),
        count(
            "dbsweep_retries",
            "Transactions run again after a retryable error since the point began",
            t.retries,
        ),
        count(
            "dbsweep_reconnects",
            "Connections opened again during the point",
            t.reconnects,
        ),
        Family::new(
            "dbsweep_queries",
            Counter,
            None,
            "Statements since the point began, by type (read: returned rows; write: changed rows; other)",
        )
        .by(
            "type",
            [("read", t.reads), ("write", t.writes), ("other", t.others)]
                .map(|(k, n)| (k.to_string(), n as f64)),
        ),
    ]);
    out.extend(last_interval(feed));
    out.extend(cpu(feed));
    out
}

/// The last closed interval's families.
fn last_interval(feed: &Feed) -> Vec<Family> {
    use Kind::*;
    let Some(l) = &feed.last else {
        return Vec::new();
    };
    let mut out = vec![
        Family::new(
            "dbsweep_elapsed_seconds",
            Gauge,
            Some("seconds"),
            "Seconds since the clients were released, at the end of the last interval",
        )
        .one(l.t_s),
        Family::new(
            "dbsweep_clients",
            Gauge,
            None,
            "Clients (connections) running in the last interval",
        )
        .one(l.clients as f64),
        Family::new(
            "dbsweep_transactions_per_second",
            Gauge,
            None,
            "Transactions completed per second in the last interval (achieved)",
        )
        .one(l.tps),
    ];
    if let Some(o) = l.offered_per_s {
        out.push(
            Family::new(
                "dbsweep_offered_transactions_per_second",
                Gauge,
                None,
                "Transactions due per second in the last interval (a rate or users: the offered load)",
            )
            .one(o),
        );
    }
    if let Some(q) = l.queue {
        out.push(
            Family::new(
                "dbsweep_queued_transactions",
                Gauge,
                None,
                "Transactions due and not yet taken by a connection at the end of the last interval",
            )
            .one(q as f64),
        );
    }
    let quantiles = |values: &[Option<f64>], names: &[&str]| -> Vec<(String, f64)> {
        names
            .iter()
            .zip(values)
            .filter_map(|(q, v)| Some((q.to_string(), (*v)?)))
            .collect()
    };
    let t = &feed.latency;
    out.push(
        Family::new(
            "dbsweep_latency_seconds",
            Summary,
            Some("seconds"),
            "Transaction latency from each intended start: quantiles of the last interval (1: the maximum), count and sum since the point began",
        )
        .by("quantile", quantiles(&l.latency_s, &QUANTILES))
        .count_sum(t.count, t.sum_s),
    );
    if let Some(t) = &feed.lag {
        out.push(
            Family::new(
                "dbsweep_schedule_lag_seconds",
                Summary,
                Some("seconds"),
                "Schedule lag (intended to actual start): quantiles of the last interval (1: the maximum), count and sum since the point began",
            )
            .by("quantile", quantiles(&l.lag_s, &QUANTILES[2..]))
            .count_sum(t.count, t.sum_s),
        );
    }
    out
}

/// The sampler's families: shares of the machine's CPU in its last
/// reading, and CPU seconds since the point began.
fn cpu(feed: &Feed) -> Vec<Family> {
    use Kind::*;
    let mut out = Vec::new();
    if let Some(c) = &feed.cpu {
        let share = |name, help, v: f64| Family::new(name, Gauge, Some("ratio"), help).one(v);
        out.push(share(
            "dbsweep_machine_cpu_ratio",
            "Share of the machine's CPU time that was busy in the sampler's last interval",
            c.machine,
        ));
        out.push(share(
            "dbsweep_client_cpu_ratio",
            "Share of the machine's CPU time dbsweep used in the sampler's last interval",
            c.client,
        ));
        if let Some(s) = c.server {
            out.push(share(
                "dbsweep_server_cpu_ratio",
                "Share of the machine's CPU time the server's processes used in the sampler's last interval",
                s,
            ));
        }
    }
    if let Some(t) = &feed.cpu_seconds {
        let secs = |name, help, v: f64| Family::new(name, Counter, Some("seconds"), help).one(v);
        out.push(secs(
            "dbsweep_machine_cpu_busy_seconds",
            "Busy CPU seconds of every CPU of the machine since the point began",
            t.machine_busy,
        ));
        out.push(secs(
            "dbsweep_client_cpu_seconds",
            "CPU seconds dbsweep used since the point began",
            t.client,
        ));
        if let Some(s) = t.server {
            out.push(secs(
                "dbsweep_server_cpu_seconds",
                "CPU seconds the server's processes used since the point began",
                s,
            ));
        }
    }
    out
}

fn write_family(out: &mut String, f: &Family, labels: &[(String, String)], format: Format) {
    let total = format!("{}_total", f.name);
    let (meta_name, kind) = match (format, f.kind) {
        (Format::OpenMetrics, Kind::Counter) => (f.name, "counter"),
        (Format::OpenMetrics, Kind::StateSet) => (f.name, "stateset"),
        (Format::Classic, Kind::Counter) => (total.as_str(), "counter"),
        (_, Kind::Gauge | Kind::StateSet) => (f.name, "gauge"),
        (_, Kind::Summary) => (f.name, "summary"),
    };
    let _ = writeln!(out, "# HELP {meta_name} {}", f.help);
    let _ = writeln!(out, "# TYPE {meta_name} {kind}");
    if let (Format::OpenMetrics, Some(unit)) = (format, f.unit) {
        let _ = writeln!(out, "# UNIT {meta_name} {unit}");
    }
    for (suffix, extra, v) in &f.samples {
        out.push_str(f.name);
        out.push_str(suffix);
        let all: Vec<(&str, &str)> = labels
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .chain(extra.iter().map(|(k, v)| (*k, v.as_str())))
            .collect();
        if !all.is_empty() {
            out.push('{');
            for (i, (k, v)) in all.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{k}=\"{}\"", escape(v));
            }
            out.push('}');
        }
        let _ = writeln!(out, " {}", number(*v));
    }
}

/// A label value with backslash, double quote and line feed escaped.
fn escape(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

/// A sample's value: integers without a fraction, others in full.
fn number(v: f64) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "NaN".into()
        } else if v > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
#[path = "openmetrics_tests.rs"]
mod tests;
