//! What a workload's throughput is counted in, in its own words, for every
//! report that states a rate: a run's and a study's.

/// What a workload's throughput counts, in the workload's own words:
/// DBT-1 completes web interactions (its BT/s), Super Smack rounds of its
/// query barrel (each several queries), sysbench transactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unit {
    /// Plural: "transactions".
    pub noun: &'static str,
    /// A rate, for axes and figures: "transactions/s".
    pub per_s: &'static str,
    /// A rate in words, for captions: "transactions per second".
    pub per_second: &'static str,
    /// A rate in a sentence's figures: "tps".
    pub short: &'static str,
}

/// The unit of the workload named `workload` (its name in the registry,
/// not a study's label).
pub fn unit(workload: &str) -> Unit {
    if workload == "dbt1" {
        Unit {
            noun: "web interactions",
            per_s: "web interactions/s (BT/s)",
            per_second: "web interactions per second (BT/s)",
            short: "BT/s",
        }
    } else if workload == "ycsb" {
        Unit {
            noun: "operations",
            per_s: "operations/s",
            per_second: "operations per second",
            short: "ops/s",
        }
    } else if workload.starts_with("smack") || workload.ends_with(".smack") {
        Unit {
            noun: "query barrel rounds",
            per_s: "rounds/s",
            per_second: "query barrel rounds per second",
            short: "rounds/s",
        }
    } else {
        Unit {
            noun: "transactions",
            per_s: "transactions/s",
            per_second: "transactions per second",
            short: "tps",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_workload_counts_in_its_own_unit() {
        assert_eq!(unit("dbt1").per_s, "web interactions/s (BT/s)");
        assert_eq!(unit("dbt1").short, "BT/s");
        assert_eq!(unit("ycsb").per_s, "operations/s");
        for smack in ["smack_select", "smack_oltp", "select-key.smack"] {
            assert_eq!(unit(smack).noun, "query barrel rounds", "{smack}");
        }
        for w in ["oltp_read_write", "oltp_point_select", "bulk_insert"] {
            assert_eq!(unit(w).per_s, "transactions/s", "{w}");
            assert_eq!(unit(w).short, "tps");
        }
    }
}
