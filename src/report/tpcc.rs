//! TPC-C's figures of a run, as its results page states them: tpmC (New-
//! Orders completed per minute of the measured window, rollbacks
//! included, as clause 5.4 counts them), NOPM (the committed ones), the efficiency against the
//! spec's ceiling of 12.86 tpmC per warehouse (meaningful only with
//! keying and think times, so absent with `--no-wait`), and each type's
//! share of the mix against the minimum of clause 5.2.3. Pure: read from
//! the run's record.

use crate::record::Run;
use crate::workload::tpcc::terminal::{Txn, ROLLED_BACK_NAME};
use crate::workload::tpcc::MAX_TPMC_PER_WAREHOUSE;

/// A TPC-C run's headline figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    pub tpmc: f64,
    /// Committed New-Orders per minute (tpmC less the rollbacks), as the
    /// client counted them.
    pub nopm: f64,
    pub warehouses: u32,
    /// tpmC against 12.86 × warehouses, percent; None without waits.
    pub efficiency_pct: Option<f64>,
    /// (type, share %, minimum %) of each type with a minimum.
    pub mix: Vec<(&'static str, f64, f64)>,
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
    let per_minute = |n: u64| {
        if minutes > 0.0 {
            n as f64 / minutes
        } else {
            0.0
        }
    };
    let tpmc = per_minute(new_orders);
    let mix = Txn::ALL
        .iter()
        .filter(|t| t.min_pct() > 0.0)
        .filter_map(|t| {
            let share = types.iter().find(|x| x.name == t.name())?.share_pct;
            Some((t.name(), share, t.min_pct()))
        })
        .collect();
    Some(Figures {
        tpmc,
        nopm: per_minute(committed),
        warehouses,
        efficiency_pct: (!no_wait)
            .then(|| 100.0 * tpmc / (MAX_TPMC_PER_WAREHOUSE * f64::from(warehouses))),
        mix,
    })
}

/// The figures in sentences, one per line.
pub fn lines(f: &Figures) -> Vec<String> {
    let mut out = vec![
        format!(
            "tpmC: {:.2} (New-Orders completed per minute in the measured window, rollbacks included)",
            f.tpmc
        ),
        format!(
            "NOPM: {:.2} (New-Orders committed per minute, as the client counted them)",
            f.nopm
        ),
    ];
    out.push(match f.efficiency_pct {
        Some(e) => format!(
            "efficiency: {e:.1} % of the spec's maximum, 12.86 tpmC per warehouse × {}",
            f.warehouses
        ),
        None => "efficiency: not meaningful without keying and think times (--no-wait)".into(),
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
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Pairs, TransactionType};

    fn run(no_wait: &str, counts: [u64; 6]) -> Run {
        let mut r = Run::sample();
        r.workload.name = "tpcc".into();
        r.workload.options = [("warehouses", "2"), ("no-wait", no_wait)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<Pairs>();
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
        let e = f.efficiency_pct.unwrap();
        assert!((e - 100.0 * 45.0 / 25.72).abs() < 1e-9, "{e}");
        assert!(f.mix_short().is_empty(), "{:?}", f.mix);
        // Without waits there is no efficiency; a short Payment share is named.
        let f = figures(&run("on", [90, 80, 10, 10, 10, 0])).unwrap();
        assert_eq!(f.efficiency_pct, None);
        assert_eq!(f.mix_short().len(), 1);
        assert!(lines(&f)[3].contains("payment 40.00 %"), "{:?}", lines(&f));
        // Not a TPC-C run: nothing.
        assert_eq!(figures(&Run::sample()), None);
    }
}
