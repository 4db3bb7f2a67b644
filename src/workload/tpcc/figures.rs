//! TPC-C's figures of a run, as its results page states them, derived
//! once from the rest of the record (`engine::derive` calls [`of`]) into
//! `result.tpcc`, where every report reads them: tpmC (New-Orders
//! completed per minute of the measured window, rollbacks included, as
//! clause 5.4 counts them), NOPM (the committed ones) and TPM (every
//! transaction) as the client counted them and as the database did (the
//! window's change of `sum(d_next_o_id)`; the server's commits and
//! rollbacks), the efficiency against the spec's ceiling of 12.86 tpmC per
//! warehouse (meaningful only with keying and think times, so absent with
//! `--no-wait`), each type's share of the mix against the minimum of
//! clause 5.2.3, how Delivery ran, and the consistency verdict of
//! `--check`. A figure that could not be measured is absent beside why.

use super::terminal::{Txn, DEFERRED_NAME, ROLLED_BACK_NAME};
use super::{MAX_TPMC_PER_WAREHOUSE, SERVER_NEW_ORDERS};
use crate::record::tpcc::{Tpcc, TpccConsistency, TpccShare, TpccType};
use crate::record::{consistency, ConditionResult, Pairs, Run};

/// Why a run without waits has no efficiency.
pub const NO_EFFICIENCY: &str = "not meaningful without keying and think times (--no-wait)";

/// The verdict of a run whose consistency was not checked.
pub const NOT_CHECKED: &str = "not checked (--check, or `check = true` in a study's workload)";

/// The figures of `r`, if it is a TPC-C run.
pub fn of(r: &Run) -> Option<Tpcc> {
    // CH-benCHmark's terminals are TPC-C's, without waits.
    let ch = r.workload.name == "chbench";
    if r.workload.name != "tpcc" && !ch {
        return None;
    }
    let o = &r.workload.options;
    let warehouses: u32 = o.get("warehouses")?.parse().ok()?;
    let no_wait = ch || o.get("no-wait").is_some_and(|v| v == "on");
    let types = &r.result.transaction_types;
    let count = |name: &str| types.iter().find(|t| t.name == name).map_or(0, |t| t.count);
    let committed = count(Txn::NewOrder.name());
    let new_orders = committed + count(ROLLED_BACK_NAME);
    let minutes = r.result.measured_s / 60.0;
    let per_minute = |n: f64| if minutes > 0.0 { n / minutes } else { 0.0 };
    let tpmc = per_minute(new_orders as f64);
    // The mix of the terminals' transactions: a deferred Delivery's
    // execution is not a card of the deck.
    let dealt: u64 = types
        .iter()
        .filter(|t| {
            t.name != DEFERRED_NAME && !crate::workload::chbench::figures::is_query(&t.name)
        })
        .map(|t| t.count)
        .sum();
    let mix = Txn::ALL
        .iter()
        .filter(|t| t.min_pct() > 0.0)
        .filter(|t| types.iter().any(|x| x.name == t.name()))
        .map(|t| {
            let share_pct = if dealt > 0 {
                100.0 * count(t.name()) as f64 / dealt as f64
            } else {
                0.0
            };
            TpccShare {
                name: t.name().into(),
                share_pct,
                min_pct: t.min_pct(),
                meets: share_pct >= t.min_pct(),
            }
        })
        .collect();
    let types = types
        .iter()
        .map(|t| TpccType {
            name: t.name.clone(),
            count: t.count,
            p90_ms: t
                .latency
                .as_ref()
                .and_then(|l| l.percentiles.iter().find(|q| q.p == 90.0))
                .map(|q| q.us / 1e3),
            limit_s: t.p90_limit_s,
            // As the record judged it, from the exact histogram.
            within: t.p90_exceeded.map(|over| !over),
        })
        .collect();
    // CH's streams are connections of the run, not terminals.
    let streams: u64 = match ch {
        true => o
            .get("analytic-streams")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
        false => 0,
    };
    let connections = r.run.threads.saturating_sub(streams);
    let terminals = r
        .run
        .pacing
        .as_ref()
        .and_then(|p| p.users)
        .unwrap_or(connections);
    let (efficiency_pct, efficiency_absent) =
        match efficiency_absent(no_wait, o, warehouses, terminals) {
            Some(why) => (None, Some(why)),
            None => (
                Some(100.0 * tpmc / (MAX_TPMC_PER_WAREHOUSE * f64::from(warehouses))),
                None,
            ),
        };
    let (server_nopm, server_nopm_absent) = split(server_nopm(r));
    let (server_tpm, server_tpm_absent) = split(server_tpm(r));
    let deferred = o.get("delivery").is_some_and(|v| v == "deferred");
    Some(Tpcc {
        warehouses: u64::from(warehouses),
        terminals,
        connections,
        delivery: if deferred { "deferred" } else { "inline" }.into(),
        tpmc,
        efficiency_pct,
        efficiency_absent,
        nopm: per_minute(committed as f64),
        server_nopm,
        server_nopm_absent,
        tpm: per_minute(r.result.transactions as f64),
        server_tpm: server_tpm.map(|(v, _)| v),
        server_tpm_counters: server_tpm.map(|(_, from)| from.into()),
        server_tpm_absent,
        types,
        mix,
        consistency: consistency_of(r.result.consistency.as_deref()),
    })
}

/// Why the run's tpmC cannot be held to the spec's maximum of 12.86 per
/// warehouse, if it cannot: that maximum is ten terminals per warehouse
/// at the spec's keying and think times, so it means nothing without
/// them, with them scaled, or with another number of terminals.
fn efficiency_absent(no_wait: bool, o: &Pairs, warehouses: u32, terminals: u64) -> Option<String> {
    if no_wait {
        return Some(NO_EFFICIENCY.into());
    }
    let scale = |name: &str| {
        o.get(name)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(1.0)
    };
    let (k, t) = (scale("keying-time-scale"), scale("think-time-scale"));
    if k != 1.0 || t != 1.0 {
        return Some(format!(
            "not meaningful with scaled waits (--keying-time-scale {k}, --think-time-scale {t}): \
             the spec's maximum assumes its keying and think times"
        ));
    }
    if terminals != 10 * u64::from(warehouses) {
        return Some(format!(
            "not meaningful with {terminals} terminals for {warehouses} warehouses: \
             the spec's maximum assumes ten per warehouse"
        ));
    }
    None
}

fn split<T>(v: Result<T, String>) -> (Option<T>, Option<String>) {
    match v {
        Ok(v) => (Some(v), None),
        Err(why) => (None, Some(why)),
    }
}

fn consistency_of(c: Option<&[ConditionResult]>) -> TpccConsistency {
    let names = |holds: bool| -> Vec<String> {
        c.unwrap_or_default()
            .iter()
            .filter(|c| c.holds == holds)
            .map(|c| c.name.clone())
            .collect()
    };
    TpccConsistency {
        checked: c.is_some(),
        holds: c.map(consistency::all_hold),
        verdict: c.map_or(NOT_CHECKED.into(), consistency::verdict),
        passed: names(true),
        failed: names(false),
    }
}

/// The window's change of sum(D_NEXT_O_ID) per minute of the window it
/// was read over.
fn server_nopm(r: &Run) -> Result<f64, String> {
    let m = r
        .result
        .metrics
        .as_ref()
        .ok_or("not measured (--metrics off)")?;
    let c = m
        .window_counts
        .iter()
        .find(|c| c.name == SERVER_NEW_ORDERS)
        .ok_or_else(|| {
            m.gaps
                .iter()
                .find(|g| g.what.contains("counts"))
                .map_or("not read".to_string(), |g| g.why.clone())
        })?;
    per_window_minute(m.window.duration_s, c.delta())
}

/// Commits and rollbacks from the server's counters, per minute of the
/// window they were read over.
fn server_tpm(r: &Run) -> Result<(f64, &'static str), String> {
    let m = r
        .result
        .metrics
        .as_ref()
        .ok_or("not measured (--metrics off)")?;
    let sql = |n: &str| m.window.sql.get(n).copied();
    let (n, from) = if let (Some(c), Some(b)) = (sql("Com_commit"), sql("Com_rollback")) {
        (c + b, "Com_commit + Com_rollback")
    } else if let (Some(c), Some(b)) = (
        sql("pg_stat_database.xact_commit"),
        sql("pg_stat_database.xact_rollback"),
    ) {
        (c + b, "xact_commit + xact_rollback")
    } else {
        return Err(m
            .gaps
            .iter()
            .find(|g| g.what == "server counters")
            .map_or("the server's counters were not read".to_string(), |g| {
                g.why.clone()
            }));
    };
    Ok((per_window_minute(m.window.duration_s, n)?, from))
}

fn per_window_minute(window_s: f64, n: f64) -> Result<f64, String> {
    if window_s > 0.0 {
        Ok(n * 60.0 / window_s)
    } else {
        Err("the window was empty".into())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::record::metrics::{Gap, ServerProcess, Usage, WindowCount};
    use crate::record::{Metrics, OrderedMap, Pairs, TransactionType};

    /// A TPC-C run of two warehouses over two minutes, with these counts
    /// of New-Order, Payment, Order-Status, Delivery, Stock-Level and
    /// rolled-back New-Order (`no_wait`: "on" or "off").
    pub fn run(no_wait: &str, counts: [u64; 6]) -> Run {
        let mut r = Run::sample();
        r.workload.name = "tpcc".into();
        r.workload.options = [("warehouses", "2"), ("no-wait", no_wait)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<Pairs>();
        // Ten terminals per warehouse, one connection each.
        r.run.threads = 20;
        r.run.pacing = None;
        r.result.measured_s = 120.0;
        let total: u64 = counts.iter().sum();
        let names = [
            "new_order",
            "payment",
            "order_status",
            "delivery",
            "stock_level",
            ROLLED_BACK_NAME,
        ];
        r.result.transaction_types = names
            .iter()
            .zip(counts)
            .map(|(n, c)| TransactionType {
                name: n.to_string(),
                count: c,
                failed: 0,
                per_s: c as f64 / 120.0,
                share_pct: 100.0 * c as f64 / total as f64,
                expected_pct: None,
                latency: None,
                p90_limit_s: None,
                p90_exceeded: None,
                queries: true,
            })
            .collect();
        r
    }

    #[test]
    fn tpmc_counts_rollbacks_nopm_does_not() {
        // Two minutes: 44 + 1 New-Orders a minute, 2 warehouses.
        let f = of(&run("off", [88, 86, 8, 8, 8, 2])).unwrap();
        assert_eq!(f.tpmc, 45.0);
        assert_eq!(f.nopm, 44.0);
        let e = f.efficiency_pct.unwrap();
        assert!((e - 100.0 * 45.0 / 25.72).abs() < 1e-9, "{e}");
        assert_eq!(f.mix_short().count(), 0, "{:?}", f.mix);
        // Without waits there is no efficiency; a short Payment share is named.
        let f = of(&run("on", [90, 80, 10, 10, 10, 0])).unwrap();
        assert_eq!(f.efficiency_pct, None);
        let short: Vec<_> = f
            .mix_short()
            .map(|m| (m.name.as_str(), m.share_pct))
            .collect();
        assert_eq!(short, [("payment", 40.0)]);
        // Not a TPC-C run: nothing.
        assert_eq!(of(&Run::sample()), None);
    }

    #[test]
    fn efficiency_needs_the_specs_waits_and_ten_terminals_a_warehouse() {
        let counts = [88, 86, 8, 8, 8, 2];
        let f = of(&run("off", counts)).unwrap();
        assert!(f.efficiency_pct.is_some() && f.efficiency_absent.is_none());
        // Waits scaled down: the run can go far past the spec's maximum.
        let mut r = run("off", counts);
        r.workload
            .options
            .0
            .push(("think-time-scale".into(), "0.05".into()));
        let f = of(&r).unwrap();
        assert_eq!(f.efficiency_pct, None);
        let why = f.efficiency_absent.unwrap();
        assert!(why.contains("--think-time-scale 0.05"), "{why}");
        // Another number of terminals than ten per warehouse.
        let mut r = run("off", counts);
        r.run.threads = 30;
        let f = of(&r).unwrap();
        assert_eq!(f.efficiency_pct, None);
        assert!(f
            .efficiency_absent
            .unwrap()
            .contains("30 terminals for 2 warehouses"));
        // Without waits, the reason says so.
        let f = of(&run("on", counts)).unwrap();
        assert_eq!(f.efficiency_absent.as_deref(), Some(NO_EFFICIENCY));
    }

    fn metrics(window_s: f64, sql: &[(&str, f64)], d_next: Option<(f64, f64)>) -> Metrics {
        Metrics {
            interval_s: 1.0,
            readings: 2,
            reading_ms_avg: 0.0,
            reading_ms_max: 0.0,
            sampling_cpu_s: None,
            server_process: ServerProcess {
                pid: None,
                how: "managed".into(),
            },
            warmup: None,
            window: Usage {
                duration_s: window_s,
                sql: OrderedMap(sql.iter().map(|(n, v)| (n.to_string(), *v)).collect()),
                ..Usage::default()
            },
            figures: Default::default(),
            samples: Default::default(),
            gaps: vec![Gap {
                what: "server counters".into(),
                why: "SQLite keeps its page cache statistics per connection".into(),
            }],
            innodb_semaphores: Vec::new(),
            profiles: Vec::new(),
            window_counts: d_next
                .map(|(start, end)| WindowCount {
                    name: SERVER_NEW_ORDERS.into(),
                    sql: "SELECT sum(d_next_o_id) FROM district".into(),
                    start,
                    end,
                })
                .into_iter()
                .collect(),
            merged: None,
        }
    }

    #[test]
    fn the_databases_own_counts_stand_beside_the_clients() {
        let mut r = run("off", [88, 86, 8, 8, 8, 2]);
        let f = of(&r).unwrap();
        assert_eq!(f.server_nopm, None);
        assert_eq!(
            f.server_nopm_absent.as_deref(),
            Some("not measured (--metrics off)")
        );
        assert_eq!((f.server_tpm, f.server_tpm_counters), (None, None));
        assert_eq!(f.tpm, r.result.transactions as f64 / 2.0);
        // MariaDB: 88 more orders in the districts over a 120 s window;
        // 200 commits and 3 rollbacks.
        r.result.metrics = Some(metrics(
            120.0,
            &[("Com_commit", 200.0), ("Com_rollback", 3.0)],
            Some((60_010.0, 60_098.0)),
        ));
        let f = of(&r).unwrap();
        assert_eq!((f.server_nopm, f.server_nopm_absent), (Some(44.0), None));
        assert_eq!(f.server_tpm, Some(101.5));
        assert_eq!(
            f.server_tpm_counters.as_deref(),
            Some("Com_commit + Com_rollback")
        );
        // PostgreSQL's counters.
        r.result.metrics = Some(metrics(
            60.0,
            &[
                ("pg_stat_database.xact_commit", 50.0),
                ("pg_stat_database.xact_rollback", 1.0),
            ],
            None,
        ));
        let f = of(&r).unwrap();
        assert_eq!(f.server_tpm, Some(51.0));
        assert_eq!(
            f.server_tpm_counters.as_deref(),
            Some("xact_commit + xact_rollback")
        );
        assert!(f.server_nopm.is_none() && f.server_nopm_absent.is_some());
        // SQLite: no server counters, and the gap says why.
        r.result.metrics = Some(metrics(60.0, &[], Some((1.0, 2.0))));
        let f = of(&r).unwrap();
        assert_eq!(f.server_tpm, None);
        let why = f.server_tpm_absent.unwrap();
        assert!(why.contains("per connection"), "{why}");
        assert_eq!(f.server_nopm, Some(1.0));
    }

    #[test]
    fn a_deferred_deliverys_execution_is_not_a_card_of_the_mix() {
        let mut r = run("off", [45, 43, 4, 4, 4, 0]);
        r.workload
            .options
            .0
            .push(("delivery".into(), "deferred".into()));
        let mut t = r.result.transaction_types[3].clone();
        t.name = DEFERRED_NAME.into();
        r.result.transaction_types.push(t);
        let f = of(&r).unwrap();
        assert_eq!(f.delivery, "deferred");
        let delivery = f.mix.iter().find(|m| m.name == "delivery").unwrap();
        assert_eq!(delivery.share_pct, 4.0);
        assert_eq!(f.mix_short().count(), 0, "{:?}", f.mix);
    }

    #[test]
    fn each_type_against_its_limit_the_mix_against_its_minimums_and_the_verdict() {
        let mut r = run("on", [90, 80, 10, 10, 10, 0]);
        r.result.transaction_types[0].p90_limit_s = Some(5.0);
        r.result.transaction_types[0].p90_exceeded = Some(false);
        let t = of(&r).unwrap();
        assert_eq!((t.warehouses, t.delivery.as_str()), (2, "inline"));
        assert_eq!(t.types[0].name, "new_order");
        assert_eq!(
            (t.types[0].limit_s, t.types[0].within),
            (Some(5.0), Some(true))
        );
        assert_eq!(t.types[1].within, None);
        let payment = t.mix.iter().find(|m| m.name == "payment").unwrap();
        assert_eq!(
            (payment.share_pct, payment.min_pct, payment.meets),
            (40.0, 43.0, false)
        );
        assert!(t
            .mix
            .iter()
            .filter(|m| m.name != "payment")
            .all(|m| m.meets));
        // Not checked, then checked with one condition failing.
        assert!(!t.consistency.checked && t.consistency.holds.is_none());
        assert_eq!(t.consistency.verdict, NOT_CHECKED);
        let cond = |name: &str, holds: bool| ConditionResult {
            name: name.into(),
            holds,
            broken: u64::from(!holds),
            detail: Vec::new(),
        };
        r.result.consistency = Some(vec![cond("3.3.2.1", true), cond("3.3.2.9", false)]);
        let c = of(&r).unwrap().consistency;
        assert_eq!((c.checked, c.holds), (true, Some(false)));
        assert_eq!(
            (c.passed, c.failed),
            (vec!["3.3.2.1".to_string()], vec!["3.3.2.9".to_string()])
        );
        assert!(c.verdict.starts_with("NOT consistent"), "{}", c.verdict);
    }
}
