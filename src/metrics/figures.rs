//! The figures a reader wants from a window's totals: how busy the machine
//! was and who kept it busy, the server's CPU per transaction, IO and
//! context switches per transaction, the cache hit ratio, lock waits,
//! deadlocks, semaphore waits and the top wait events. Each says what it
//! was computed from; one that cannot be computed is absent, and a gap
//! says why. Pure: tested with literal numbers.

use crate::record::metrics::{Figure, Figures, Gap, Usage, Wait};

use super::sql::mariadb::{SYNCH_WAITS, SYNCH_WAIT_PS};
use super::sql::postgres::RUNNING;

/// How many wait events [`Figures::top_waits`] lists.
const TOP_WAITS: usize = 5;

fn fig(value: f64, from: String) -> Option<Figure> {
    value.is_finite().then_some(Figure { value, from })
}

/// What the gaps [`derive`] adds are called: a merge that derives the
/// figures again drops a shard's before it does.
pub const DERIVED_GAPS: [&str; 6] = [
    "machine CPU",
    "server CPU",
    "per-transaction figures",
    "buffer pool hit ratio",
    "row lock waits",
    "semaphore waits",
];

/// Adds a gap for `what`, unless one is there already.
fn gap(gaps: &mut Vec<Gap>, what: &str, why: String) {
    if !gaps.iter().any(|g| g.what == what) {
        gaps.push(Gap {
            what: what.to_string(),
            why,
        });
    }
}

/// Derives the figures of `w`, a measured window in which `transactions`
/// and `queries` completed; what cannot be derived is added to `gaps`.
pub fn derive(w: &Usage, transactions: u64, queries: u64, gaps: &mut Vec<Gap>) -> Figures {
    let mut f = Figures::default();
    machine(w, transactions, &mut f, gaps);
    server(w, transactions, queries, &mut f, gaps);
    f
}

/// The machine's figures: its CPU and who used it (the server's share
/// too, which is a share of this machine), context switches and disk IO
/// per transaction.
fn machine(w: &Usage, transactions: u64, f: &mut Figures, gaps: &mut Vec<Gap>) {
    let mut gap = |what: &str, why: String| gap(gaps, what, why);
    let total = w.cpu.total_s();
    let cpus = w.per_cpu.len().max(1);
    let pct = |x: f64| 100.0 * x / total;
    if total > 0.0 {
        let of = |what: &str, x: f64| {
            format!(
                "{what} {x:.2} s of {total:.2} CPU-s ({cpus} CPUs × {:.2} s)",
                w.duration_s
            )
        };
        let c = &w.cpu;
        f.cpu_busy_pct = fig(pct(c.busy_s()), of("busy", c.busy_s()));
        f.cpu_user_pct = fig(pct(c.user_s + c.nice_s), of("user", c.user_s + c.nice_s));
        let sys = c.system_s + c.irq_s + c.softirq_s;
        f.cpu_system_pct = fig(pct(sys), of("system (irq included)", sys));
        f.iowait_pct = fig(pct(c.iowait_s), of("iowait", c.iowait_s));
        let client = w.client.cpu_s();
        f.client_cpu_pct = fig(pct(client), of("dbsweep", client));
        match &w.server {
            Some(s) => {
                f.server_cpu_pct = fig(pct(s.cpu_s()), of("the server", s.cpu_s()));
                let other = (c.busy_s() - s.cpu_s() - client).max(0.0);
                f.other_cpu_pct = fig(pct(other), of("everything else", other));
            }
            None => gap(
                "server CPU",
                "the server's processes were not measured (see server process)".into(),
            ),
        }
    } else {
        gap(
            "machine CPU",
            "no CPU time passed between the window's readings".into(),
        );
    }
    if transactions > 0 {
        let x = w.context_switches as f64;
        f.context_switches_per_transaction = fig(
            x / transactions as f64,
            format!("context switches {x:.0} / {transactions} transactions"),
        );
        let bytes: u64 = w.disks.iter().map(|d| d.read_bytes + d.write_bytes).sum();
        f.disk_mb_per_transaction = fig(
            bytes as f64 / 1e6 / transactions as f64,
            format!(
                "{:.1} MB read and written / {transactions} transactions",
                bytes as f64 / 1e6
            ),
        );
    } else {
        no_transactions(gaps);
    }
}

fn no_transactions(gaps: &mut Vec<Gap>) {
    gap(
        gaps,
        "per-transaction figures",
        "no transaction completed in the window".into(),
    );
}

/// The server's figures, from its processes' CPU and its own counters:
/// what it spent per transaction and query, its cache hit ratio, lock
/// waits, deadlocks, semaphore waits and wait events. They need nothing of
/// the machine the sampler ran on, so a run merged from shards on several
/// machines has them too (`metrics::merged`).
pub fn server(w: &Usage, transactions: u64, queries: u64, f: &mut Figures, gaps: &mut Vec<Gap>) {
    if transactions > 0 {
        if let Some(s) = &w.server {
            let us = s.cpu_s() * 1e6;
            f.server_cpu_us_per_transaction = fig(
                us / transactions as f64,
                format!(
                    "server CPU {:.3} s / {transactions} transactions",
                    s.cpu_s()
                ),
            );
            if queries > 0 {
                f.server_cpu_us_per_query = fig(
                    us / queries as f64,
                    format!("server CPU {:.3} s / {queries} queries", s.cpu_s()),
                );
            }
        }
    } else {
        no_transactions(gaps);
    }
    let mut gap = |what: &str, why: String| gap(gaps, what, why);

    let sql = |name: &str| w.sql.get(name).copied();
    let mysql = sql("Com_commit").is_some();
    let postgres = sql("pg_stat_database.xact_commit").is_some();
    // The cache hit ratio.
    let hits = if mysql {
        sql("Innodb_buffer_pool_read_requests")
            .zip(sql("Innodb_buffer_pool_reads"))
            .map(|(req, reads)| {
                (
                    req - reads,
                    req,
                    "Innodb_buffer_pool_read_requests and _reads",
                )
            })
    } else if postgres {
        sql("pg_stat_database.blks_hit")
            .zip(sql("pg_stat_database.blks_read"))
            .map(|(hit, read)| (hit, hit + read, "pg_stat_database blks_hit and blks_read"))
    } else {
        None
    };
    match hits {
        Some((hit, all, from)) if all > 0.0 => {
            f.buffer_pool_hit_pct = fig(
                100.0 * hit / all,
                format!("{hit:.0} of {all:.0} page requests from the cache ({from})"),
            )
        }
        Some(_) => gap(
            "buffer pool hit ratio",
            "no page was requested in the window".into(),
        ),
        None => {}
    }
    let per_s = |what: &str, n: f64| {
        fig(
            n / w.duration_s,
            format!("{what} {n:.0} / {:.2} s", w.duration_s),
        )
    };
    if w.duration_s > 0.0 {
        if mysql {
            if let Some(n) = sql("Innodb_row_lock_waits") {
                f.row_lock_waits_per_s = per_s("Innodb_row_lock_waits", n);
            }
            if let Some(n) = sql("Innodb_deadlocks").or(sql("innodb_metrics.lock_deadlocks")) {
                f.deadlocks_per_s = per_s("Innodb_deadlocks", n);
            }
        }
        if postgres {
            if let Some(n) = sql("pg_stat_database.deadlocks") {
                f.deadlocks_per_s = per_s("pg_stat_database.deadlocks", n);
            }
            gap(
                "row lock waits",
                "PostgreSQL counts no lock waits: the Lock wait events below show them".into(),
            );
        }
    }
    if mysql {
        let os_waits: Vec<(&str, f64)> = w
            .sql
            .iter()
            .filter(|(n, _)| n.starts_with("innodb_semaphores.") && n.ends_with("_os_waits"))
            .map(|(n, v)| (n, *v))
            .collect();
        let synch = sql(SYNCH_WAITS).filter(|_| transactions > 0);
        if os_waits.is_empty() {
            let why = match synch {
                // The nearest measure there is, said where it is.
                Some(n) => format!(
                    "the server's SEMAPHORES section (SHOW ENGINE INNODB STATUS) holds no counters \
                     (MariaDB 10.6 and later); performance_schema counted {:.1} mutex and rw-lock waits \
                     per transaction ({:.1} µs), recorded as {SYNCH_WAITS}: acquisitions, not OS waits",
                    n / transactions as f64,
                    sql(SYNCH_WAIT_PS).unwrap_or(0.0) / 1e6 / transactions as f64
                ),
                None => "the server's SEMAPHORES section (SHOW ENGINE INNODB STATUS) holds no counters: \
                         MariaDB 10.6 and later no longer print them; performance_schema counts the \
                         mutex and rw-lock waits instead when it and its instruments are on \
                         (--set performance_schema=ON --set performance_schema_instrument=wait/synch/%=ON)"
                    .into(),
            };
            gap("semaphore waits", why);
        } else if transactions > 0 {
            let n: f64 = os_waits.iter().map(|(_, v)| v).sum();
            f.semaphore_os_waits_per_transaction = fig(
                n / transactions as f64,
                format!("InnoDB semaphore OS waits {n:.0} / {transactions} transactions"),
            );
        }
    }
    if w.wait_samples > 0 {
        f.top_waits = w
            .waits
            .iter()
            .filter(|(e, _)| *e != RUNNING)
            .take(TOP_WAITS)
            .map(|(e, &n)| Wait {
                event: e.to_string(),
                samples: n,
                pct: 100.0 * n as f64 / w.wait_samples as f64,
            })
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::metrics::{CpuTime, Disk, Process};
    use crate::record::OrderedMap;

    fn window() -> Usage {
        Usage {
            duration_s: 10.0,
            cpu: CpuTime {
                user_s: 8.0,
                system_s: 4.0,
                idle_s: 6.0,
                iowait_s: 2.0,
                ..CpuTime::default()
            },
            per_cpu: vec![CpuTime::default(); 2],
            context_switches: 50_000,
            disks: vec![Disk {
                name: "vda".into(),
                read_bytes: 1_000_000,
                write_bytes: 3_000_000,
                ..Disk::default()
            }],
            server: Some(Process {
                cpu_user_s: 6.0,
                cpu_system_s: 2.0,
                ..Process::default()
            }),
            client: Process {
                cpu_user_s: 2.0,
                cpu_system_s: 1.0,
                ..Process::default()
            },
            ..Usage::default()
        }
    }

    #[test]
    fn cpu_shares_and_per_transaction_figures() {
        let mut gaps = Vec::new();
        let f = derive(&window(), 10_000, 200_000, &mut gaps);
        let v = |x: &Option<Figure>| x.as_ref().unwrap().value;
        assert_eq!(v(&f.cpu_busy_pct), 60.0); // 12 of 20 CPU-seconds
        assert_eq!(v(&f.iowait_pct), 10.0);
        assert_eq!(v(&f.server_cpu_pct), 40.0);
        assert_eq!(v(&f.client_cpu_pct), 15.0);
        assert_eq!(v(&f.other_cpu_pct), 5.0);
        assert_eq!(v(&f.server_cpu_us_per_transaction), 800.0);
        assert_eq!(v(&f.server_cpu_us_per_query), 40.0);
        assert_eq!(v(&f.context_switches_per_transaction), 5.0);
        assert_eq!(v(&f.disk_mb_per_transaction), 0.0004);
        assert!(f
            .server_cpu_us_per_transaction
            .unwrap()
            .from
            .contains("10000 transactions"));
        assert!(gaps.is_empty(), "{gaps:?}");
    }

    #[test]
    fn missing_sources_are_gaps_not_zeros() {
        let mut w = window();
        w.server = None;
        let mut gaps = Vec::new();
        let f = derive(&w, 0, 0, &mut gaps);
        assert!(f.server_cpu_pct.is_none() && f.server_cpu_us_per_transaction.is_none());
        assert!(f.context_switches_per_transaction.is_none());
        let what: Vec<&str> = gaps.iter().map(|g| g.what.as_str()).collect();
        assert_eq!(what, ["server CPU", "per-transaction figures"]);
    }

    #[test]
    fn mariadb_counters() {
        let mut w = window();
        w.sql = [
            ("Com_commit", 10_000.0),
            ("Innodb_buffer_pool_read_requests", 1000.0),
            ("Innodb_buffer_pool_reads", 10.0),
            ("Innodb_row_lock_waits", 25.0),
            ("Innodb_deadlocks", 3.0),
            ("innodb_semaphores.mutex_os_waits", 400.0),
            ("innodb_semaphores.rw_excl_os_waits", 100.0),
        ]
        .into_iter()
        .map(|(n, v)| (n.to_string(), v))
        .collect::<OrderedMap<f64>>();
        let mut gaps = Vec::new();
        let f = derive(&w, 10_000, 200_000, &mut gaps);
        let v = |x: &Option<Figure>| x.as_ref().unwrap().value;
        assert_eq!(v(&f.buffer_pool_hit_pct), 99.0);
        assert_eq!(v(&f.row_lock_waits_per_s), 2.5);
        assert_eq!(v(&f.deadlocks_per_s), 0.3);
        assert_eq!(v(&f.semaphore_os_waits_per_transaction), 0.05);
        assert!(gaps.is_empty(), "{gaps:?}");
        // MariaDB 10.11: no semaphore counters.
        w.sql.0.retain(|(n, _)| !n.starts_with("innodb_semaphores"));
        let f = derive(&w, 10_000, 200_000, &mut gaps);
        assert!(f.semaphore_os_waits_per_transaction.is_none());
        assert!(gaps[0].why.contains("MariaDB 10.6"), "{gaps:?}");
        assert!(gaps[0]
            .why
            .contains("performance_schema_instrument=wait/synch/%=ON"));
        // … unless performance_schema counted the waits: said in the gap,
        // the figure itself stays absent (acquisitions are not OS waits).
        w.sql.0.push((SYNCH_WAITS.to_string(), 25_000.0));
        w.sql.0.push((SYNCH_WAIT_PS.to_string(), 30e9));
        let mut gaps = Vec::new();
        let f = derive(&w, 10_000, 200_000, &mut gaps);
        assert!(f.semaphore_os_waits_per_transaction.is_none());
        assert!(
            gaps[0].why.contains(
                "performance_schema counted 2.5 mutex and rw-lock waits per transaction (3.0 µs)"
            ),
            "{gaps:?}"
        );
    }

    #[test]
    fn postgres_counters_and_top_waits() {
        let mut w = window();
        w.sql = [
            ("pg_stat_database.xact_commit", 10_000.0),
            ("pg_stat_database.blks_hit", 900.0),
            ("pg_stat_database.blks_read", 100.0),
            ("pg_stat_database.deadlocks", 2.0),
        ]
        .into_iter()
        .map(|(n, v)| (n.to_string(), v))
        .collect::<OrderedMap<f64>>();
        w.waits = [
            ("running", 50),
            ("Lock:transactionid", 30),
            ("LWLock:WALWrite", 15),
            ("IO:WALSync", 5),
        ]
        .into_iter()
        .map(|(n, c)| (n.to_string(), c))
        .collect();
        w.wait_samples = 100;
        let mut gaps = Vec::new();
        let f = derive(&w, 10_000, 200_000, &mut gaps);
        assert_eq!(f.buffer_pool_hit_pct.unwrap().value, 90.0);
        assert_eq!(f.deadlocks_per_s.unwrap().value, 0.2);
        let top: Vec<(&str, f64)> = f
            .top_waits
            .iter()
            .map(|t| (t.event.as_str(), t.pct))
            .collect();
        assert_eq!(
            top,
            [
                ("Lock:transactionid", 30.0),
                ("LWLock:WALWrite", 15.0),
                ("IO:WALSync", 5.0)
            ]
        );
        assert_eq!(gaps[0].what, "row lock waits");
    }
}
