//! The machine's and the server's figures of one stored point as the
//! study report shows them: the CPU split over the point's CPU set (the
//! CPUs its servers were pinned to, or the whole machine), the server's
//! counters per transaction, the wait events; and the sentence that says
//! what bounded a series at its peak (seed 003's "CPU-bound at 2800 EUs").
//!
//! Every figure comes from the run document's `result.metrics`; a point
//! without it (run with `--metrics off`, or by 0.1.0) has none, never 0.

use std::fmt::Write;

use super::model::{CellData, SeriesData};
use crate::record::metrics::{CpuTime, Usage};
use crate::record::Metrics;
use crate::server::parse_cpu_list;
use crate::store::StoredPoint;

/// A CPU set's busy share above which a series is CPU-bound, %.
pub const CPU_BOUND_PCT: f64 = 90.0;
/// The client's share of the machine above which the client, sharing the
/// machine with the server, may bound the result, %.
pub const CLIENT_BOUND_PCT: f64 = 25.0;

/// The run's metrics, when it has them.
pub(super) fn metrics(p: &StoredPoint) -> Option<&Metrics> {
    p.row.run.as_ref()?.result.metrics.as_ref()
}

/// Shares of a CPU set's time, %: they add up to 100.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct CpuSplit {
    pub user: f64,
    pub system: f64,
    pub iowait: f64,
    pub idle: f64,
}

impl CpuSplit {
    pub fn busy(&self) -> f64 {
        self.user + self.system
    }
}

/// The CPU time of `set` (a CPU list such as `0-1`; `None`: every CPU) in
/// `u`, split as the report draws it. `None` when the set's CPUs were not
/// measured or no time passed.
pub(super) fn cpu_split(u: &Usage, set: Option<&str>) -> Option<CpuSplit> {
    let t = match set {
        None => u.cpu,
        Some(set) => {
            let mut sum = CpuTime::default();
            for i in parse_cpu_list(set).ok()? {
                let c = u.per_cpu.get(i)?;
                sum.user_s += c.user_s;
                sum.nice_s += c.nice_s;
                sum.system_s += c.system_s;
                sum.idle_s += c.idle_s;
                sum.iowait_s += c.iowait_s;
                sum.irq_s += c.irq_s;
                sum.softirq_s += c.softirq_s;
                sum.steal_s += c.steal_s;
            }
            sum
        }
    };
    let total = t.total_s();
    if total <= 0.0 {
        return None;
    }
    let pct = |x: f64| 100.0 * x / total;
    Some(CpuSplit {
        user: pct(t.user_s + t.nice_s),
        system: pct(t.system_s + t.irq_s + t.softirq_s + t.steal_s),
        iowait: pct(t.iowait_s),
        idle: pct(t.idle_s),
    })
}

/// The measured window's CPU split of a point, over its CPU set.
pub(super) fn point_cpu(p: &StoredPoint) -> Option<CpuSplit> {
    cpu_split(&metrics(p)?.window, p.row.cpus.as_deref())
}

/// A server counter of the window per transaction.
pub(super) fn per_transaction(p: &StoredPoint, counter: &str) -> Option<f64> {
    let txns = p.row.run.as_ref()?.result.transactions;
    let v = metrics(p)?.window.sql.get(counter)?;
    (txns > 0).then(|| v / txns as f64)
}

/// A wait event's share of the active backends sampled in the window
/// (`running` is one of the events), %.
pub(super) fn wait_pct(p: &StoredPoint, event: &str) -> Option<f64> {
    let w = &metrics(p)?.window;
    let n = w.waits.get(event).copied().unwrap_or(0);
    (w.wait_samples > 0).then(|| 100.0 * n as f64 / w.wait_samples as f64)
}

/// What bounded `s` at its peak, in words; `None` without the figures.
pub(super) fn bound_sentence(s: &SeriesData, cpus: &str) -> Option<String> {
    let peak = s.peak?;
    let c: &CellData = s.cells.iter().find(|c| c.clients == peak.clients)?;
    let busy = c.cpu_busy_pct.as_ref()?.mean;
    let mean = |x: &Option<super::Stat>| x.as_ref().map(|s| s.mean);
    let mut line = format!("{} at its peak ({} clients): ", s.label, peak.clients);
    let split = format!(
        "{busy:.0} % of {cpus} busy (user {:.0} %, system {:.0} %), iowait {:.0} %",
        mean(&c.cpu_user_pct).unwrap_or(0.0),
        mean(&c.cpu_system_pct).unwrap_or(0.0),
        mean(&c.iowait_pct).unwrap_or(0.0)
    );
    if busy > CPU_BOUND_PCT {
        let _ = write!(line, "CPU-bound: {split}");
    } else if mean(&c.iowait_pct).is_some_and(|w| w > 100.0 - CPU_BOUND_PCT) {
        let _ = write!(line, "waiting on IO: {split}");
    } else {
        let _ = write!(line, "not CPU-bound: {split}");
    }
    if let Some(us) = mean(&c.server_cpu_us_per_txn) {
        let _ = write!(line, "; the server used {us:.0} µs of CPU per transaction");
    }
    if let Some(client) = mean(&c.client_machine_pct).filter(|&x| x > CLIENT_BOUND_PCT) {
        let _ = write!(
            line,
            "; client-bound: dbsweep itself used {client:.0} % of the machine's CPU, \
             more than a quarter, so the client may limit the result"
        );
    }
    line.push('.');
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(user: f64, system: f64, idle: f64, iowait: f64) -> CpuTime {
        CpuTime {
            user_s: user,
            system_s: system,
            idle_s: idle,
            iowait_s: iowait,
            ..CpuTime::default()
        }
    }

    fn stat(v: f64) -> Option<crate::report::study::Stat> {
        crate::report::study::Stat::of(vec![v])
    }

    fn series(busy: f64, iowait: f64, client: f64) -> SeriesData {
        let cell = |clients, tps| CellData {
            clients,
            finished: 1,
            tps: stat(tps),
            cpu_busy_pct: stat(busy),
            cpu_user_pct: stat(busy * 0.75),
            cpu_system_pct: stat(busy * 0.25),
            iowait_pct: stat(iowait),
            client_machine_pct: stat(client),
            server_cpu_us_per_txn: stat(420.0),
            ..CellData::default()
        };
        SeriesData {
            label: "mariadb".into(),
            cells: vec![cell(1, 100.0), cell(8, 300.0)],
            peak: Some(crate::report::study::analysis::Peak {
                value: 300.0,
                clients: 8,
            }),
            ..SeriesData::default()
        }
    }

    #[test]
    fn the_peak_is_called_cpu_bound_io_bound_or_client_bound() {
        let s = bound_sentence(&series(96.0, 1.0, 10.0), "1 CPU (0)").unwrap();
        assert_eq!(
            s,
            "mariadb at its peak (8 clients): CPU-bound: 96 % of 1 CPU (0) busy (user 72 %, system 24 %), \
             iowait 1 %; the server used 420 µs of CPU per transaction."
        );
        let s = bound_sentence(&series(50.0, 40.0, 10.0), "all CPUs").unwrap();
        assert!(s.contains("waiting on IO: 50 % of all CPUs busy"), "{s}");
        let s = bound_sentence(&series(60.0, 2.0, 30.0), "all CPUs").unwrap();
        assert!(s.contains("not CPU-bound: 60 %"), "{s}");
        assert!(s.contains("client-bound: dbsweep itself used 30 %"), "{s}");
        let mut none = series(60.0, 2.0, 30.0);
        none.cells[1].cpu_busy_pct = None;
        assert_eq!(
            bound_sentence(&none, "all CPUs"),
            None,
            "not measured: nothing said"
        );
    }

    #[test]
    fn the_split_is_over_the_cpu_set() {
        let u = Usage {
            cpu: cpu(3.0, 1.0, 3.0, 1.0),
            per_cpu: vec![cpu(2.0, 1.0, 0.5, 0.5), cpu(1.0, 0.0, 2.5, 0.5)],
            ..Usage::default()
        };
        let all = cpu_split(&u, None).unwrap();
        assert_eq!(
            (all.user, all.system, all.idle, all.iowait),
            (37.5, 12.5, 37.5, 12.5)
        );
        let first = cpu_split(&u, Some("0")).unwrap();
        assert_eq!(first.busy(), 75.0);
        assert_eq!(first.idle, 12.5);
        let both = cpu_split(&u, Some("0-1")).unwrap();
        assert_eq!(both.busy(), 50.0);
        assert_eq!(
            cpu_split(&u, Some("0-3")),
            None,
            "CPUs 2-3 were not measured"
        );
        assert_eq!(cpu_split(&Usage::default(), None), None);
    }
}
