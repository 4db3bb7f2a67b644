//! The human report, in sysbench's sections and wording so its users find
//! their way, plus what sysbench lacks: the full percentile list, latency per
//! statement type, errors by kind, retries, abandoned transactions and the
//! client's own CPU.

use std::fmt::Write;

use super::{per_second, CPU_WARN_SHARE};
use crate::record::{Latency, Run, StopReason, TransactionType};
use crate::util::units::ms_us;

/// The header cells matching [`latency_columns`], each name followed by
/// `unit` (e.g. "_ms", or "" when the table's title gives the unit).
pub fn latency_headers(percentiles: &[f64], unit: &str) -> Vec<String> {
    let mut cols = vec![
        "count".to_string(),
        format!("min{unit}"),
        format!("avg{unit}"),
    ];
    cols.extend(percentiles.iter().map(|p| format!("p{p}{unit}")));
    cols.push(format!("max{unit}"));
    cols
}

fn pct_label(p: f64) -> String {
    let s = format!("{p}");
    let suffix = if s.ends_with('1') && !s.ends_with("11") {
        "st"
    } else if s.ends_with('2') && !s.ends_with("12") {
        "nd"
    } else if s.ends_with('3') && !s.ends_with("13") {
        "rd"
    } else {
        "th"
    };
    format!("{s}{suffix} percentile")
}

/// The report printed after the run: its summary and, for a run over
/// several processes, its shards.
pub fn report(r: &Run) -> String {
    summary(r) + &super::shards::text(r)
}

/// The table's columns.
pub const TYPE_COLUMNS: [&str; 10] = [
    "count",
    "share",
    "expected",
    "per s",
    "avg",
    "p90",
    "p99",
    "max",
    "p90 limit",
    "failed",
];

pub fn type_cells(t: &TransactionType) -> Vec<(String, bool)> {
    let pct = |p: Option<f64>| p.map_or("-".to_string(), |x| format!("{x:.2}%"));
    let l = t.latency.as_ref();
    let at = |p: f64| {
        l.and_then(|l| l.percentiles.iter().find(|x| x.p == p))
            .map_or("-".to_string(), |x| ms_us(x.us))
    };
    let exceeded = t.p90_exceeded == Some(true);
    vec![
        (t.count.to_string(), false),
        (pct(Some(t.share_pct)), false),
        (pct(t.expected_pct), false),
        (format!("{:.2}", t.per_s), false),
        (l.map_or("-".into(), |l| ms_us(l.avg_us)), false),
        (at(90.0), exceeded),
        (at(99.0), false),
        (l.map_or("-".into(), |l| ms_us(l.max_us)), false),
        (
            t.p90_limit_s
                .map_or("-".to_string(), |s| format!("{s:.0} s")),
            false,
        ),
        (t.failed.to_string(), false),
    ]
}

pub fn type_label(t: &TransactionType) -> String {
    if t.queries {
        t.name.clone()
    } else {
        format!("{} (no query)", t.name)
    }
}

/// The per-transaction-type section (DBT-1's interactions); nothing for a
/// workload without types.
fn types_section(s: &mut String, r: &Run) {
    let types = &r.result.transaction_types;
    if types.is_empty() {
        return;
    }
    let tpcc = r.result.tpcc.as_ref();
    if let Some(f) = tpcc {
        if let Some(c) = &r.result.chbench {
            let _ = writeln!(s, "CH-benCHmark:\n    {}", super::tpch::chbench_line(c));
        }
        let _ = writeln!(s, "TPC-C:");
        for l in super::tpcc::lines(f, r) {
            let _ = writeln!(s, "    {l}");
        }
        let _ = writeln!(
            s,
            "Transactions (response time in ms from the end of each keying time):"
        );
    } else if let Some(f) = &r.result.tpch {
        let _ = writeln!(s, "TPC-H:");
        for l in super::tpch::lines(f) {
            let _ = writeln!(s, "    {l}");
        }
        let _ = writeln!(
            s,
            "Queries and refresh functions (timing interval in ms; one execution per stream):"
        );
        let _ = write!(s, "    {:<32}", "query");
        for c in super::tpch::COLUMNS {
            let _ = write!(s, "{c:>10}");
        }
        let _ = writeln!(s);
        for (name, cells) in super::tpch::rows(f) {
            let _ = write!(s, "    {name:<32}");
            for c in cells {
                let _ = write!(s, "{c:>10}");
            }
            let _ = writeln!(s);
        }
        let _ = writeln!(s);
        return;
    } else if r.workload.name == "ycsb" {
        let _ = writeln!(
            s,
            "Operations ({:.2} per sec. in all, YCSB's Throughput(ops/sec); latency in ms from each intended start):",
            r.result.tps
        );
    } else {
        let _ = writeln!(
            s,
            "Interactions ({:.2} per sec. in all, DBT-1's BT/s; response time in ms from each intended start):",
            r.result.tps
        );
    }
    let corner = if tpcc.is_some() {
        "transaction"
    } else if r.workload.name == "ycsb" {
        "operation"
    } else {
        "interaction"
    };
    let mut head = format!("    {corner:<32}");
    for c in TYPE_COLUMNS {
        let _ = write!(head, "{c:>10}");
    }
    let _ = writeln!(s, "{head}");
    let mut any_exceeded = false;
    for t in types {
        let mut row = format!("    {:<32}", type_label(t));
        for (c, exceeded) in type_cells(t) {
            let c = if exceeded {
                any_exceeded = true;
                format!("{c}*")
            } else {
                c
            };
            let _ = write!(row, "{c:>10}");
        }
        let _ = writeln!(s, "{row}");
    }
    if any_exceeded {
        let clause = if tpcc.is_some() {
            "TPC-C clause 5.2.5.3"
        } else {
            "TPC-W clause 5.1.1.2"
        };
        let _ = writeln!(s, "    * the 90th percentile exceeds the limit ({clause})");
    }
    if let Some(f) = tpcc {
        let delivery = if f.deferred() {
            "Delivery queued 5 s, its deferred completion 80 s"
        } else {
            "Delivery (inline, all ten districts) 80 s"
        };
        let _ = writeln!(
            s,
            "    expected: the type's share of a terminal's deck; limits on the 90th percentile: \
             5 s, Stock-Level 20 s, {delivery}"
        );
        let _ = writeln!(s);
        return;
    }
    if r.workload.name == "ycsb" {
        let _ = writeln!(
            s,
            "    expected: the operation's proportion in the workload (its YCSB property)"
        );
        let _ = writeln!(s);
        return;
    }
    let _ = writeln!(
        s,
        "    expected: the interaction's share in the mix's stationary distribution; \
         an interaction marked (no query) is answered without the database, as DBT-1 does"
    );
    let _ = writeln!(s);
}

/// The columns of one latency-per-type row, in the order every text table
/// shows them: count, min, avg, the percentiles, max (times in ms).
pub fn latency_columns(l: &Latency) -> Vec<String> {
    let mut cols = vec![l.count.to_string(), ms_us(l.min_us), ms_us(l.avg_us)];
    cols.extend(l.percentiles.iter().map(|p| ms_us(p.us)));
    cols.push(ms_us(l.max_us));
    cols
}

fn latency_block(s: &mut String, l: &Latency) {
    let row = |s: &mut String, label: &str, v: String| {
        let _ = writeln!(s, "         {:<24}{:>16}", format!("{label}:"), v);
    };
    row(s, "min", ms_us(l.min_us));
    row(s, "avg", ms_us(l.avg_us));
    row(s, "max", ms_us(l.max_us));
    for p in &l.percentiles {
        row(s, &pct_label(p.p), ms_us(p.us));
    }
    row(s, "sum", format!("{:.2}", l.sum_us / 1e3));
}

/// One labelled line of the summary.
fn line(s: &mut String, label: &str, v: String) {
    let _ = writeln!(s, "    {:<37}{v}", format!("{label}:"));
}

/// What the pacing measured: offered against achieved, late, skipped and
/// unstarted transactions, service time and schedule lag.
fn pacing_section(s: &mut String, r: &Run, p: &crate::record::PacingOutcome) {
    let _ = writeln!(s, "Pacing:");
    let users = r.run.pacing.as_ref().and_then(|x| x.users);
    if let (Some(u), Some(t)) = (users, p.setup_s) {
        line(
            s,
            "users set up",
            format!("{u} in {t:.3} s, before the window opened"),
        );
    }
    if let (Some(n), Some(rate)) = (p.offered, p.offered_per_s) {
        line(s, "offered", format!("{n:<6} ({rate:.2} per sec.)"));
    }
    let achieved = match p.offered_per_s {
        Some(o) if o > 0.0 => format!(
            "{:<6} ({:.2} per sec., {:.1} % of offered)",
            r.result.transactions,
            p.achieved_per_s,
            p.achieved_per_s / o * 100.0
        ),
        _ => format!(
            "{:<6} ({:.2} per sec.)",
            r.result.transactions, p.achieved_per_s
        ),
    };
    line(s, "achieved", achieved);
    let share = |n: u64| match p.offered.filter(|&o| o > 0) {
        Some(o) => format!("{n:<6} ({:.2} % of offered)", n as f64 / o as f64 * 100.0),
        None => n.to_string(),
    };
    if let Some(n) = p.late {
        let limit = r
            .run
            .pacing
            .as_ref()
            .and_then(|x| x.latency_limit_ms)
            .unwrap_or_default();
        line(s, &format!("late (over {limit} ms)"), share(n));
    }
    if let Some(n) = p.skipped {
        line(s, "skipped (behind schedule)", share(n));
    }
    if let Some(n) = p.unstarted {
        line(s, "not started by the end", share(n));
    }
    let _ = writeln!(s);
    if let Some(l) = &p.service {
        let _ = writeln!(s, "Service time (ms, from when a connection began it):");
        latency_block(s, l);
        let _ = writeln!(s);
    }
    if let Some(l) = &p.lag {
        let _ = writeln!(s, "Schedule lag (ms, intended start to actual start):");
        latency_block(s, l);
        let _ = writeln!(s);
    }
}

/// The summary printed after the run, in sysbench's sections and order,
/// then what sysbench lacks.
pub fn summary(r: &Run) -> String {
    let mut s = String::new();
    stop_lines(&mut s, r);
    sql_statistics(&mut s, r);
    general_statistics(&mut s, r);
    latency_section(&mut s, r);
    if let Some(p) = &r.result.pacing {
        pacing_section(&mut s, r, p);
    }
    types_section(&mut s, r);
    statements_section(&mut s, r);
    fairness_section(&mut s, r);
    client_cpu_section(&mut s, r);
    if let Some(m) = &r.result.metrics {
        let _ = writeln!(s);
        s.push_str(&super::metrics::text_section(m));
        s.push_str(&super::waits::text_section(&m.window));
        s.push_str(&super::profile::text_section(&m.profiles));
    }
    s
}

/// The run's end, when it was not the planned one, and what it abandoned.
fn stop_lines(s: &mut String, r: &Run) {
    let res = &r.result;
    match res.stop_reason {
        StopReason::Interrupted => {
            let _ = writeln!(
                s,
                "Interrupted: the results below cover the run until then.\n"
            );
        }
        StopReason::Timeout => {
            let _ = writeln!(
                s,
                "Timed out: the run reached its hard limit of {:.0} s; the results below cover it until then.\n",
                r.run.timeout_s.unwrap_or_default()
            );
        }
        StopReason::Aborted => {
            let _ = writeln!(
                s,
                "FATAL: the run was aborted by an error: {}\n(retryable kinds are retried; see --ignore-errors to continue past others)\n",
                res.fatal_error.as_deref().unwrap_or("unknown")
            );
        }
        StopReason::Incomplete => {
            let _ = writeln!(
                s,
                "INCOMPLETE: {}\n",
                res.fatal_error
                    .as_deref()
                    .unwrap_or("the run did not finish")
            );
        }
        _ => {}
    }
    if res.abandoned > 0 {
        let _ = writeln!(
            s,
            "WARNING: {} transaction(s) were still running at the deadline and were abandoned (the server stopped answering?).\n",
            res.abandoned
        );
    }
}

/// sysbench's "SQL statistics": queries, transactions, errors by kind.
fn sql_statistics(s: &mut String, r: &Run) {
    let res = &r.result;
    let q = &res.queries;
    let _ = writeln!(s, "SQL statistics:");
    let _ = writeln!(s, "    queries performed:");
    for (label, n) in [
        ("read", q.read),
        ("write", q.write),
        ("other", q.other),
        ("total", q.total),
    ] {
        let _ = writeln!(s, "        {:<33}{n}", format!("{label}:"));
    }
    line(
        s,
        "transactions",
        format!("{:<6} ({:.2} per sec.)", res.transactions, res.tps),
    );
    line(
        s,
        "queries",
        format!("{:<6} ({:.2} per sec.)", q.total, res.qps),
    );
    line(
        s,
        "ignored errors",
        format!(
            "{:<6} ({:.2} per sec.)",
            res.ignored_errors,
            per_second(r, res.ignored_errors)
        ),
    );
    line(
        s,
        "reconnects",
        format!(
            "{:<6} ({:.2} per sec.)",
            res.reconnects,
            per_second(r, res.reconnects)
        ),
    );
    line(s, "retries", res.retries.to_string());
    line(
        s,
        "failed transactions",
        res.failed_transactions.to_string(),
    );
    line(s, "abandoned at deadline", res.abandoned.to_string());
    let errors: Vec<_> = res.errors.iter().filter(|(_, n)| *n > 0).collect();
    if !errors.is_empty() {
        let _ = writeln!(s, "    errors by kind:");
        for (k, n) in errors {
            let _ = writeln!(s, "        {:<33}{n}", format!("{k}:"));
        }
    }
    let _ = writeln!(s);
}

/// sysbench's "General statistics": the window and the events.
fn general_statistics(s: &mut String, r: &Run) {
    let res = &r.result;
    let _ = writeln!(s, "General statistics:");
    line(s, "total time", format!("{:.4}s", res.measured_s));
    line(s, "total number of events", res.transactions.to_string());
    if r.run.warmup_s > 0.0 {
        line(
            s,
            "warmup (not measured)",
            format!("{:.4}s", r.run.warmup_s),
        );
    }
    let _ = writeln!(s);
}

/// The transactions' latency (from the intended start under a rate).
fn latency_section(s: &mut String, r: &Run) {
    let res = &r.result;
    let queued = res.pacing.as_ref().is_some_and(|p| p.offered.is_some());
    if queued {
        let _ = writeln!(s, "Latency (ms, from each transaction's intended start):");
    } else {
        let _ = writeln!(s, "Latency (ms):");
    }
    match &res.latency {
        Some(l) => latency_block(s, l),
        None => {
            let _ = writeln!(
                s,
                "         no transaction completed in the measured window"
            );
        }
    }
    let _ = writeln!(s);
}

/// Latency by statement type.
fn statements_section(s: &mut String, r: &Run) {
    let res = &r.result;
    if !res.statements.is_empty() {
        let _ = writeln!(s, "Latency by statement type (ms):");
        let pcts: Vec<f64> = res.statements[0]
            .latency
            .percentiles
            .iter()
            .map(|p| p.p)
            .collect();
        let mut head = format!("    {:<18}", "type");
        for h in latency_headers(&pcts, "") {
            let _ = write!(head, "{h:>10}");
        }
        let _ = writeln!(s, "{head}");
        for st in &res.statements {
            let mut row = format!("    {:<18}", st.kind);
            for c in latency_columns(&st.latency) {
                let _ = write!(row, "{c:>10}");
            }
            let _ = writeln!(s, "{row}");
        }
        let _ = writeln!(s);
    }
}

/// sysbench's "Threads fairness".
fn fairness_section(s: &mut String, r: &Run) {
    let res = &r.result;
    let f = &res.fairness;
    let _ = writeln!(s, "Threads fairness:");
    line(
        s,
        "events (avg/stddev)",
        format!("{:.4}/{:.2}", f.events_avg, f.events_stddev),
    );
    line(
        s,
        "execution time (avg/stddev)",
        format!("{:.4}/{:.2}", f.time_avg_s, f.time_stddev_s),
    );
    let _ = writeln!(s);
}

/// This process's CPU over the measured window, with a warning when it may limit the result.
fn client_cpu_section(s: &mut String, r: &Run) {
    let res = &r.result;
    let cpu = &res.client_cpu;
    let _ = writeln!(s, "Client CPU (this process, measured window):");
    line(
        s,
        "user + system",
        format!(
            "{:.3}s (user {:.3}s, system {:.3}s)",
            cpu.total_s(),
            cpu.user_s,
            cpu.system_s
        ),
    );
    if let Some(v) = cpu.us_per_transaction {
        line(s, "per transaction", format!("{v:.1} µs"));
    }
    if let Some(v) = cpu.us_per_query {
        line(s, "per query", format!("{v:.2} µs"));
    }
    line(
        s,
        "share of the machine",
        format!(
            "{:.1} % of {} CPU(s)",
            cpu.share_of_machine * 100.0,
            cpu.cpus
        ),
    );
    if cpu.share_of_machine > CPU_WARN_SHARE {
        let embedded = if r.target.dialect == crate::record::Dialect::Sqlite {
            " (SQLite runs inside the client, so its work counts here)"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "    WARNING: the client used more than {:.0} % of the machine's CPU{embedded}; \
             on a shared machine it may be limiting the result.",
            CPU_WARN_SHARE * 100.0
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_percentiles() {
        assert_eq!(pct_label(95.0), "95th percentile");
        assert_eq!(pct_label(99.9), "99.9th percentile");
        assert_eq!(pct_label(51.0), "51st percentile");
    }
}
