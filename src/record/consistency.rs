//! The data's consistency after a run, as the record keeps it: each of the
//! workload's conditions (TPC-C's twelve of clause 3.3.2) with whether it
//! held and, when not, what broke it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One consistency condition, as checked after the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConditionResult {
    /// The condition, e.g. `3.3.2.1 W_YTD = sum(D_YTD)`.
    pub name: String,
    /// Whether it held after the run.
    pub holds: bool,
    /// How many warehouses, districts, orders or customers break it.
    pub broken: u64,
    /// The first that break it, with their numbers; empty when it holds.
    pub detail: Vec<String>,
}

/// Do all of `conditions` hold?
pub fn all_hold(conditions: &[ConditionResult]) -> bool {
    conditions.iter().all(|c| c.holds)
}

/// The verdict in one line: "12 of 12 conditions hold", or which fail.
pub fn verdict(conditions: &[ConditionResult]) -> String {
    let failed: Vec<&str> = conditions
        .iter()
        .filter(|c| !c.holds)
        .map(|c| c.name.as_str())
        .collect();
    let holding = conditions.len() - failed.len();
    if failed.is_empty() {
        format!(
            "consistent: {holding} of {} conditions hold",
            conditions.len()
        )
    } else {
        format!(
            "NOT consistent: {holding} of {} conditions hold; failing: {}",
            conditions.len(),
            failed.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(name: &str, holds: bool) -> ConditionResult {
        ConditionResult {
            name: name.into(),
            holds,
            broken: u64::from(!holds),
            detail: Vec::new(),
        }
    }

    #[test]
    fn the_verdict_names_the_failing_conditions() {
        let ok = [c("a", true), c("b", true)];
        assert!(all_hold(&ok));
        assert_eq!(verdict(&ok), "consistent: 2 of 2 conditions hold");
        let bad = [c("a", true), c("b", false)];
        assert!(!all_hold(&bad));
        assert_eq!(
            verdict(&bad),
            "NOT consistent: 1 of 2 conditions hold; failing: b"
        );
    }
}

/// One statement's plan as the server chose it, read after the run
/// (TPC-H's queries with their validation values), so runs of two builds
/// or settings show which plans changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryPlan {
    /// The statement, e.g. `Q7`.
    pub name: String,
    /// The plan's lines as the server's EXPLAIN gives them, estimates
    /// (costs, row counts) left out so that only the plan's shape is
    /// compared.
    pub plan: String,
}
