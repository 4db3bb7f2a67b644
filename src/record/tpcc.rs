//! TPC-C's figures of a run as the record's JSON carries them: the
//! results page in numbers, for a script reading `--json` or a study's
//! JSON report. Derived once from the rest of the record
//! (`workload::tpcc::figures`, called by `engine::derive`) and read by
//! every report, so they are never a second measurement.
//! A figure that could not be measured is null beside the reason.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A TPC-C run's results: tpmC, efficiency, NOPM and TPM by the client and
/// by the database, each type's 90th percentile against its limit, the
/// mix against its minimums and the consistency verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tpcc {
    /// The scale (`--warehouses`).
    pub warehouses: u64,
    /// The terminals (users) the run emulated: 10 per warehouse unless
    /// `--users` said otherwise.
    pub terminals: u64,
    /// The connections they shared (`--threads`).
    pub connections: u64,
    /// How Delivery ran: `inline` or `deferred`.
    pub delivery: String,
    /// New-Orders completed per minute of the measured window, rolled-back
    /// ones included (clause 5.4).
    #[schemars(range(min = 0))]
    pub tpmc: f64,
    /// tpmC against the spec's ceiling of 12.86 per warehouse, percent;
    /// null without keying and think times (`efficiency_absent` says why).
    #[schemars(range(min = 0))]
    pub efficiency_pct: Option<f64>,
    /// Why `efficiency_pct` is null; null when it is given.
    pub efficiency_absent: Option<String>,
    /// New-Orders committed per minute, as the client counted them.
    #[schemars(range(min = 0))]
    pub nopm: f64,
    /// The database's NOPM: the window's change of sum(D_NEXT_O_ID) per
    /// minute; null when not read (`server_nopm_absent` says why).
    pub server_nopm: Option<f64>,
    /// Why `server_nopm` is null.
    pub server_nopm_absent: Option<String>,
    /// Transactions per minute, as the client counted them.
    #[schemars(range(min = 0))]
    pub tpm: f64,
    /// The server's commits and rollbacks per minute; null when its
    /// counters were not read (`server_tpm_absent` says why).
    pub server_tpm: Option<f64>,
    /// The counters `server_tpm` comes from, e.g.
    /// `xact_commit + xact_rollback`.
    pub server_tpm_counters: Option<String>,
    /// Why `server_tpm` is null.
    pub server_tpm_absent: Option<String>,
    /// Each transaction type's 90th-percentile response time against its
    /// limit (clause 5.2.5.3), in the record's order of types.
    pub types: Vec<TpccType>,
    /// Each type with a minimum share (clause 5.2.3) against it.
    pub mix: Vec<TpccShare>,
    pub consistency: TpccConsistency,
}

impl Tpcc {
    /// The types whose share is below the spec's minimum.
    pub fn mix_short(&self) -> impl Iterator<Item = &TpccShare> {
        self.mix.iter().filter(|m| !m.meets)
    }

    /// Whether Delivery was queued for deferred execution.
    pub fn deferred(&self) -> bool {
        self.delivery == "deferred"
    }
}

/// One transaction type's 90th percentile against its limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TpccType {
    pub name: String,
    /// Completed in the measured window.
    pub count: u64,
    /// Its 90th-percentile response time from the intended start (the end
    /// of the keying time), ms; null when none completed.
    #[schemars(range(min = 0))]
    pub p90_ms: Option<f64>,
    /// The limit, s.
    #[schemars(range(min = 0))]
    pub limit_s: Option<f64>,
    /// Whether the 90th percentile is within the limit; null without a
    /// percentile or a limit.
    pub within: Option<bool>,
}

/// One type's share of the terminals' transactions against its minimum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TpccShare {
    pub name: String,
    /// Percent of the terminals' transactions (a deferred Delivery's
    /// execution is not one of them; a rolled-back New-Order is a
    /// New-Order).
    #[schemars(range(min = 0, max = 100))]
    pub share_pct: f64,
    /// The spec's minimum, percent.
    #[schemars(range(min = 0, max = 100))]
    pub min_pct: f64,
    /// `share_pct ≥ min_pct`.
    pub meets: bool,
}

/// The consistency verdict of clause 3.3.2 after the run (`--check`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TpccConsistency {
    /// Whether the conditions were checked after the run.
    pub checked: bool,
    /// Whether every condition held; null when not checked.
    pub holds: Option<bool>,
    /// The verdict in words ("consistent: 12 of 12 conditions hold", or
    /// which fail, or "not checked …").
    pub verdict: String,
    /// The conditions that held.
    pub passed: Vec<String>,
    /// The conditions that failed (each one's detail is in
    /// `result.consistency`).
    pub failed: Vec<String>,
}
