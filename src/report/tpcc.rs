//! TPC-C's figures of a run, as its results page states them: tpmC (New-
//! Orders completed per minute of the measured window, rollbacks
//! included, as clause 5.4 counts them), the efficiency against the
//! spec's ceiling of 12.86 tpmC per warehouse (meaningful only with
//! keying and think times, so absent with `--no-wait`), and each type's
//! share of the mix against the minimum of clause 5.2.3. Pure: read from
//! the run's record.

use crate::record::Run;
use crate::workload::tpcc::terminal::Txn;
use crate::workload::tpcc::MAX_TPMC_PER_WAREHOUSE;

/// A TPC-C run's headline figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    pub tpmc: f64,
    pub warehouses: u32,
    /// tpmC against 12.86 × warehouses, percent; None without waits.
    pub efficiency_pct: Option<f64>,
    /// (type, share %, minimum %) of each type with a minimum.
    pub mix: Vec<(&'static str, f64, f64)>,
}

impl Figures {
    /// Types whose share is below the spec's minimum.
    pub fn mix_short(&self) -> Vec<&'static str> {
        self.mix
            .iter()
            .filter(|(_, share, min)| share < min)
            .map(|(n, _, _)| *n)
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
    let new_orders = types.iter().find(|t| t.name == Txn::NewOrder.name())?.count;
    let minutes = r.result.measured_s / 60.0;
    let tpmc = if minutes > 0.0 {
        new_orders as f64 / minutes
    } else {
        0.0
    };
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
        warehouses,
        efficiency_pct: (!no_wait)
            .then(|| 100.0 * tpmc / (MAX_TPMC_PER_WAREHOUSE * f64::from(warehouses))),
        mix,
    })
}

/// The figures in sentences, one per line.
pub fn lines(f: &Figures) -> Vec<String> {
    let mut out = vec![format!(
        "tpmC: {:.2} (New-Orders completed per minute in the measured window, rollbacks included)",
        f.tpmc
    )];
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
        format!(
            "mix: below the spec's minimum (Payment 43 %, the others 4 %): {}",
            short.join(", ")
        )
    });
    out
}
