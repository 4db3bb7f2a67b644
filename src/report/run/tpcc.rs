//! TPC-C's figures of a run in sentences, as its results page states them
//! (the text report's TPC-C block and the HTML report's paragraph). The
//! figures are the record's (`result.tpcc`, derived once by
//! `workload::tpcc::figures`); this only words them.

use crate::record::tpcc::Tpcc;
use crate::record::{consistency, Run};
use crate::workload::tpcc::terminal::DEFERRED_NAME;

/// The figures in sentences, one per line.
pub fn lines(f: &Tpcc, r: &Run) -> Vec<String> {
    let server = |v: Option<f64>, why: &Option<String>| match (v, why.as_deref()) {
        (Some(v), _) => format!("{v:.2}"),
        // A reason that says so already is not said twice.
        (None, Some(why)) if why.starts_with("not ") => why.to_string(),
        (None, why) => format!("not measured: {}", why.unwrap_or("not read")),
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
            server(f.server_nopm, &f.server_nopm_absent)
        ),
        format!(
            "TPM: {:.2} (transactions per minute, as the client counted them); the server's: {}",
            f.tpm,
            match (f.server_tpm, &f.server_tpm_counters) {
                (Some(v), Some(from)) => format!("{v:.2} ({from})"),
                _ => server(None, &f.server_tpm_absent),
            }
        ),
    ];
    out.push(match (f.efficiency_pct, &f.efficiency_absent) {
        (Some(e), _) => format!(
            "efficiency: {e:.1} % of the spec's maximum, 12.86 tpmC per warehouse × {}",
            f.warehouses
        ),
        (None, why) => format!("efficiency: {}", why.as_deref().unwrap_or("not given")),
    });
    let short: Vec<String> = f
        .mix_short()
        .map(|m| format!("{} {:.2} %", m.name, m.share_pct))
        .collect();
    out.push(if short.is_empty() {
        "mix: every type at or above the spec's minimum (Payment 43 %, the others 4 %)".into()
    } else {
        format!(
            "mix: below the spec's minimum (Payment 43 %, the others 4 %): {} \
             (each terminal's deck meets it; the decks in progress at the end of a short window may not)",
            short.join(", ")
        )
    });
    out.push(if f.deferred() {
        format!(
            "Delivery: deferred — its response time is the queueing (limit 5 s), \
             {DEFERRED_NAME}'s the completion from the queueing (limit 80 s)"
        )
    } else {
        "Delivery: inline — its response time covers all ten districts (held to 80 s)".into()
    });
    if let Some(c) = &r.result.consistency {
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
    use crate::record::ConditionResult;
    use crate::workload::tpcc::figures::{of, tests::run};

    fn said(r: &Run) -> Vec<String> {
        lines(&of(r).unwrap(), r)
    }

    #[test]
    fn a_short_share_and_an_absent_efficiency_are_named_with_why() {
        let l = said(&run("on", [90, 80, 10, 10, 10, 0]));
        assert!(l[5].contains("payment 40.00 %"), "{l:?}");
        assert!(l[4].contains("--no-wait"), "{l:?}");
        let mut r = run("off", [88, 86, 8, 8, 8, 2]);
        r.workload
            .options
            .0
            .push(("think-time-scale".into(), "0.05".into()));
        let why = of(&r).unwrap().efficiency_absent.unwrap();
        assert!(said(&r).iter().any(|l| l.contains(&why)), "{:?}", said(&r));
        let l = said(&run("off", [88, 86, 8, 8, 8, 2]));
        assert!(
            l[4].starts_with("efficiency: 175.0 % of the spec's maximum"),
            "{l:?}"
        );
        assert!(l[5].contains("every type at or above"), "{l:?}");
    }

    #[test]
    fn the_databases_counts_or_why_they_are_absent() {
        let l = said(&run("off", [88, 86, 8, 8, 8, 2]));
        assert!(
            l[2].contains("the database's: not measured (--metrics off) (the window's"),
            "{l:?}"
        );
        let mut r = run("off", [88, 86, 8, 8, 8, 2]);
        let mut t = of(&r).unwrap();
        t.server_nopm = Some(44.0);
        t.server_tpm = Some(101.5);
        t.server_tpm_counters = Some("Com_commit + Com_rollback".into());
        t.server_tpm_absent = None;
        r.result.tpcc = Some(t.clone());
        let l = lines(&t, &r);
        assert!(l[2].contains("the database's: 44.00"), "{l:?}");
        assert!(
            l[3].contains("the server's: 101.50 (Com_commit + Com_rollback)"),
            "{l:?}"
        );
    }

    #[test]
    fn delivery_and_the_consistency_verdict_with_what_broke_it() {
        let mut r = run("off", [45, 43, 4, 4, 4, 0]);
        r.workload
            .options
            .0
            .push(("delivery".into(), "deferred".into()));
        assert!(said(&r).iter().any(|l| l.contains("Delivery: deferred")));
        let mut r = run("off", [88, 86, 8, 8, 8, 2]);
        assert!(!said(&r).iter().any(|l| l.contains("after the run")));
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
        let l = said(&r);
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
}
