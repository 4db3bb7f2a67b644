//! TPC-C's figures of a run, as its results page states them: tpmC (New-
//! Orders completed per minute of the measured window, rollbacks
//! included, as clause 5.4 counts them), NOPM (the committed ones) and
//! TPM (every transaction) as the client counted them and as the database
//! did (the window's change of `sum(d_next_o_id)`; the server's commits
//! and rollbacks), the efficiency against the spec's ceiling of 12.86 tpmC
//! per warehouse (meaningful only with keying and think times, so absent
//! with `--no-wait`), each type's share of the mix against the minimum of
//! clause 5.2.3, how Delivery ran, and the consistency verdict of
//! `--check`. Pure: read from the run's record. [`record`] gives the same
//! figures as the record's JSON carries them (`result.tpcc`), for `--json`
//! and the study's JSON and CSV reports.

use crate::record::tpcc::{Tpcc, TpccConsistency, TpccShare, TpccType};
use crate::record::{consistency, ConditionResult, Pairs, Run};
use crate::workload::tpcc::terminal::{Txn, DEFERRED_NAME, ROLLED_BACK_NAME};
use crate::workload::tpcc::{MAX_TPMC_PER_WAREHOUSE, SERVER_NEW_ORDERS};

/// A TPC-C run's headline figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    pub tpmc: f64,
    /// Committed New-Orders per minute (tpmC less the rollbacks), as the
    /// client counted them.
    pub nopm: f64,
    /// The database's own NOPM: the window's change of sum(D_NEXT_O_ID)
    /// per minute; Err says why it is absent.
    pub server_nopm: Result<f64, String>,
    /// Transactions per minute as the client counted them (a deferred
    /// Delivery's execution is one of them; its queueing, which sends no
    /// statement, is one too).
    pub tpm: f64,
    /// The server's commits and rollbacks per minute, and which counters
    /// they come from; Err says why they are absent.
    pub server_tpm: Result<(f64, &'static str), String>,
    pub warehouses: u32,
    /// The terminals emulated (the run's users) and the connections they
    /// shared.
    pub terminals: u64,
    pub connections: u64,
    /// tpmC against 12.86 × warehouses, percent; Err says why the spec's
    /// maximum does not apply.
    pub efficiency: Result<f64, String>,
    /// (type, share %, minimum %) of each type with a minimum.
    pub mix: Vec<(&'static str, f64, f64)>,
    /// Each type of the record's, its 90th percentile against its limit.
    pub types: Vec<TpccType>,
    /// Delivery queued for deferred execution (`--delivery deferred`).
    pub deferred: bool,
    /// The consistency conditions checked after the run (`--check`).
    pub consistency: Option<Vec<ConditionResult>>,
}

impl Figures {
    /// Types whose share is below the spec's minimum, with their shares.
    pub fn mix_short(&self) -> Vec<(&'static str, f64)> {
        self.mix
            .iter()
            .filter(|(_, share, min)| share < min)
            .map(|(n, share, _)| (*n, *share))
            .collect()
    }
}

/// The figures of `r`, if it is a TPC-C run.
pub fn figures(r: &Run) -> Option<Figures> {
    if r.workload.name != "tpcc" {
        return None;
    }
    let o = &r.workload.options;
    let warehouses: u32 = o.get("warehouses")?.parse().ok()?;
    let no_wait = o.get("no-wait").is_some_and(|v| v == "on");
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
        .filter(|t| t.name != DEFERRED_NAME)
        .map(|t| t.count)
        .sum();
    let mix = Txn::ALL
        .iter()
        .filter(|t| t.min_pct() > 0.0)
        .filter(|t| types.iter().any(|x| x.name == t.name()))
        .map(|t| {
            let share = if dealt > 0 {
                100.0 * count(t.name()) as f64 / dealt as f64
            } else {
                0.0
            };
            (t.name(), share, t.min_pct())
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
    let connections = r.run.threads;
    let terminals = r
        .run
        .pacing
        .as_ref()
        .and_then(|p| p.users)
        .unwrap_or(connections);
    let efficiency = match efficiency_absent(no_wait, o, warehouses, terminals) {
        Some(why) => Err(why),
        None => Ok(100.0 * tpmc / (MAX_TPMC_PER_WAREHOUSE * f64::from(warehouses))),
    };
    Some(Figures {
        tpmc,
        nopm: per_minute(committed as f64),
        server_nopm: server_nopm(r),
        tpm: per_minute(r.result.transactions as f64),
        server_tpm: server_tpm(r),
        warehouses,
        terminals,
        connections,
        efficiency,
        mix,
        types,
        deferred: o.get("delivery").is_some_and(|v| v == "deferred"),
        consistency: r.result.consistency.clone(),
    })
}

/// Why a run without waits has no efficiency.
pub const NO_EFFICIENCY: &str = "not meaningful without keying and think times (--no-wait)";

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

/// The figures of `r` as the record's JSON carries them; None if it is not
/// a TPC-C run.
pub fn record(r: &Run) -> Option<Tpcc> {
    figures(r).map(|f| to_record(&f))
}

/// `f` as the record's JSON carries it.
pub fn to_record(f: &Figures) -> Tpcc {
    let (server_nopm, server_nopm_absent) = split(f.server_nopm.clone());
    let (efficiency_pct, efficiency_absent) = split(f.efficiency.clone());
    let (server_tpm, server_tpm_absent) = split(f.server_tpm.clone());
    Tpcc {
        warehouses: u64::from(f.warehouses),
        terminals: f.terminals,
        connections: f.connections,
        delivery: if f.deferred { "deferred" } else { "inline" }.into(),
        tpmc: f.tpmc,
        efficiency_pct,
        efficiency_absent,
        nopm: f.nopm,
        server_nopm,
        server_nopm_absent,
        tpm: f.tpm,
        server_tpm: server_tpm.map(|(v, _)| v),
        server_tpm_counters: server_tpm.map(|(_, from)| from.into()),
        server_tpm_absent,
        types: f.types.clone(),
        mix: f
            .mix
            .iter()
            .map(|&(name, share_pct, min_pct)| TpccShare {
                name: name.into(),
                share_pct,
                min_pct,
                meets: share_pct >= min_pct,
            })
            .collect(),
        consistency: consistency_of(f.consistency.as_deref()),
    }
}

fn split<T>(v: Result<T, String>) -> (Option<T>, Option<String>) {
    match v {
        Ok(v) => (Some(v), None),
        Err(why) => (None, Some(why)),
    }
}

/// The verdict of a run whose consistency was not checked.
pub const NOT_CHECKED: &str = "not checked (--check, or `check = true` in a study's workload)";

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

/// The figures in sentences, one per line.
pub fn lines(f: &Figures) -> Vec<String> {
    let server = |v: &Result<f64, String>| match v {
        Ok(v) => format!("{v:.2}"),
        Err(why) => format!("not measured: {why}"),
    };
    let mut out = vec![
        format!(
            "scale: warehouses {}, terminals {} on {} connections",
            f.warehouses, f.terminals, f.connections
        ),
        format!(
            "tpmC: {:.2} (New-Orders completed per minute in the measured window, rollbacks included)",
            f.tpmc
        ),
        format!(
            "NOPM: {:.2} (New-Orders committed per minute, as the client counted them); \
             the database's: {} (the window's change of sum(D_NEXT_O_ID))",
            f.nopm,
            server(&f.server_nopm)
        ),
        format!(
            "TPM: {:.2} (transactions per minute, as the client counted them); the server's: {}",
            f.tpm,
            match &f.server_tpm {
                Ok((v, from)) => format!("{v:.2} ({from})"),
                Err(why) => format!("not measured: {why}"),
            }
        ),
    ];
    out.push(match &f.efficiency {
        Ok(e) => format!(
            "efficiency: {e:.1} % of the spec's maximum, 12.86 tpmC per warehouse × {}",
            f.warehouses
        ),
        Err(why) => format!("efficiency: {why}"),
    });
    let short = f.mix_short();
    out.push(if short.is_empty() {
        "mix: every type at or above the spec's minimum (Payment 43 %, the others 4 %)".into()
    } else {
        let short: Vec<String> = short.iter().map(|(n, p)| format!("{n} {p:.2} %")).collect();
        format!(
            "mix: below the spec's minimum (Payment 43 %, the others 4 %): {} \
             (each terminal's deck meets it; the decks in progress at the end of a short window may not)",
            short.join(", ")
        )
    });
    out.push(if f.deferred {
        format!(
            "Delivery: deferred — its response time is the queueing (limit 5 s), \
             {DEFERRED_NAME}'s the completion from the queueing (limit 80 s)"
        )
    } else {
        "Delivery: inline — its response time covers all ten districts (held to 80 s)".into()
    });
    if let Some(c) = &f.consistency {
        out.push(format!(
            "after the run: {} (clause 3.3.2)",
            consistency::verdict(c)
        ));
        for c in c.iter().filter(|c| !c.holds) {
            for d in &c.detail {
                out.push(format!("  {}: {d}", c.name));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::metrics::{Gap, ServerProcess, Usage, WindowCount};
    use crate::record::{Metrics, OrderedMap, Pairs, TransactionType};

    fn run(no_wait: &str, counts: [u64; 6]) -> Run {
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
        let f = figures(&run("off", [88, 86, 8, 8, 8, 2])).unwrap();
        assert_eq!(f.tpmc, 45.0);
        assert_eq!(f.nopm, 44.0);
        let e = f.efficiency.clone().ok().unwrap();
        assert!((e - 100.0 * 45.0 / 25.72).abs() < 1e-9, "{e}");
        assert!(f.mix_short().is_empty(), "{:?}", f.mix);
        // Without waits there is no efficiency; a short Payment share is named.
        let f = figures(&run("on", [90, 80, 10, 10, 10, 0])).unwrap();
        assert_eq!(f.efficiency.clone().ok(), None);
        assert_eq!(f.mix_short().len(), 1);
        assert!(lines(&f)[5].contains("payment 40.00 %"), "{:?}", lines(&f));
        // Not a TPC-C run: nothing.
        assert_eq!(figures(&Run::sample()), None);
    }

    #[test]
    fn efficiency_needs_the_specs_waits_and_ten_terminals_a_warehouse() {
        let counts = [88, 86, 8, 8, 8, 2];
        let f = figures(&run("off", counts)).unwrap();
        assert!(f.efficiency.is_ok());
        // Waits scaled down: the run can go far past the spec's maximum.
        let mut r = run("off", counts);
        r.workload
            .options
            .0
            .push(("think-time-scale".into(), "0.05".into()));
        let f = figures(&r).unwrap();
        assert_eq!(f.efficiency.clone().ok(), None);
        let why = f.efficiency.clone().unwrap_err();
        assert!(why.contains("--think-time-scale 0.05"), "{why}");
        assert_eq!(to_record(&f).efficiency_absent.as_deref(), Some(&*why));
        assert!(
            lines(&f).iter().any(|l| l.contains(&why)),
            "{:?}",
            lines(&f)
        );
        // Another number of terminals than ten per warehouse.
        let mut r = run("off", counts);
        r.run.threads = 30;
        let f = figures(&r).unwrap();
        assert_eq!(f.efficiency.clone().ok(), None);
        assert!(f
            .efficiency
            .unwrap_err()
            .contains("30 terminals for 2 warehouses"));
        // Without waits, the reason says so.
        let f = figures(&run("on", counts)).unwrap();
        assert_eq!(
            f.efficiency.as_ref().err().map(String::as_str),
            Some(NO_EFFICIENCY)
        );
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
        let f = figures(&r).unwrap();
        assert_eq!(f.server_nopm, Err("not measured (--metrics off)".into()));
        assert_eq!(f.tpm, r.result.transactions as f64 / 2.0);
        // MariaDB: 88 more orders in the districts over a 120 s window;
        // 200 commits and 3 rollbacks.
        r.result.metrics = Some(metrics(
            120.0,
            &[("Com_commit", 200.0), ("Com_rollback", 3.0)],
            Some((60_010.0, 60_098.0)),
        ));
        let f = figures(&r).unwrap();
        assert_eq!(f.server_nopm, Ok(44.0));
        assert_eq!(f.server_tpm, Ok((101.5, "Com_commit + Com_rollback")));
        let l = lines(&f);
        assert!(l[2].contains("the database's: 44.00"), "{l:?}");
        assert!(
            l[3].contains("the server's: 101.50 (Com_commit + Com_rollback)"),
            "{l:?}"
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
        let f = figures(&r).unwrap();
        assert_eq!(f.server_tpm, Ok((51.0, "xact_commit + xact_rollback")));
        assert!(f.server_nopm.is_err());
        // SQLite: no server counters, and the gap says why.
        r.result.metrics = Some(metrics(60.0, &[], Some((1.0, 2.0))));
        let f = figures(&r).unwrap();
        assert!(
            f.server_tpm
                .as_ref()
                .unwrap_err()
                .contains("per connection"),
            "{:?}",
            f.server_tpm
        );
        assert_eq!(f.server_nopm, Ok(1.0));
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
        let f = figures(&r).unwrap();
        assert!(f.deferred);
        let delivery = f.mix.iter().find(|m| m.0 == "delivery").unwrap();
        assert_eq!(delivery.1, 4.0);
        assert!(f.mix_short().is_empty(), "{:?}", f.mix);
        assert!(lines(&f).iter().any(|l| l.contains("Delivery: deferred")));
    }

    #[test]
    fn the_consistency_verdict_and_what_broke_it_are_shown() {
        let mut r = run("off", [88, 86, 8, 8, 8, 2]);
        assert!(!lines(&figures(&r).unwrap())
            .iter()
            .any(|l| l.contains("after the run")));
        r.result.consistency = Some(vec![
            ConditionResult {
                name: "3.3.2.1 W_YTD = sum(D_YTD)".into(),
                holds: true,
                broken: 0,
                detail: Vec::new(),
            },
            ConditionResult {
                name: "3.3.2.9 D_YTD = sum(H_AMOUNT)".into(),
                holds: false,
                broken: 1,
                detail: vec![
                    "warehouse 1 district 7: D_YTD 30001.00, sum(H_AMOUNT) 30000.00".into(),
                ],
            },
        ]);
        let l = lines(&figures(&r).unwrap());
        assert!(
            l.iter()
                .any(|l| l.contains("NOT consistent: 1 of 2 conditions hold; failing: 3.3.2.9")),
            "{l:?}"
        );
        assert!(
            l.iter().any(|l| l.contains("district 7: D_YTD 30001.00")),
            "{l:?}"
        );
    }

    #[test]
    fn the_records_figures_are_the_reports() {
        let mut r = run("on", [90, 80, 10, 10, 10, 0]);
        r.result.transaction_types[0].p90_limit_s = Some(5.0);
        r.result.transaction_types[0].p90_exceeded = Some(false);
        let t = record(&r).unwrap();
        let f = figures(&r).unwrap();
        assert_eq!((t.tpmc, t.nopm, t.tpm), (f.tpmc, f.nopm, f.tpm));
        assert_eq!((t.warehouses, t.delivery.as_str()), (2, "inline"));
        // Without waits: no efficiency, and why.
        assert_eq!(t.efficiency_pct, None);
        assert_eq!(t.efficiency_absent.as_deref(), Some(NO_EFFICIENCY));
        // Without the sampler: no server figures, and why.
        assert_eq!(t.server_nopm, None);
        assert_eq!(
            t.server_nopm_absent.as_deref(),
            Some("not measured (--metrics off)")
        );
        assert_eq!(
            (t.server_tpm, t.server_tpm_counters.as_deref()),
            (None, None)
        );
        // Each type against its limit, the mix against its minimums.
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
        let c = record(&r).unwrap().consistency;
        assert_eq!((c.checked, c.holds), (true, Some(false)));
        assert_eq!(
            (c.passed, c.failed),
            (vec!["3.3.2.1".to_string()], vec!["3.3.2.9".to_string()])
        );
        assert!(c.verdict.starts_with("NOT consistent"), "{}", c.verdict);
        // With waits, the efficiency and no reason.
        let t = record(&run("off", [88, 86, 8, 8, 8, 2])).unwrap();
        assert!(t.efficiency_pct.is_some() && t.efficiency_absent.is_none());
        assert_eq!(record(&Run::sample()), None);
    }
}
