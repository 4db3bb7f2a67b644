//! `run --find-rate`: the options of the sustainable-rate search
//! (flattened into `RunArgs`; checked in `run_checks`) and the objective
//! they give.

use clap::Args;

use crate::UsageError;

/// `run`'s options for finding the highest rate that holds an objective.
#[derive(Debug, Args)]
pub struct FindRateArgs {
    /// Find the highest offered rate that holds --slo with at most
    /// --max-unserved of the arrivals unserved: a closed-loop run at
    /// --threads for the peak, then open-loop probes (each as long as
    /// --time) bisecting between the highest rate that held and the lowest
    /// that failed. Every probe is reported; --json writes them all.
    #[arg(long, help_heading = "Sustainable rate")]
    pub find_rate: bool,
    /// The latency objective of --find-rate: a percentile and its limit,
    /// from each arrival's intended start. Default: p99=10ms.
    #[arg(long, value_name = "pP=DURATION", help_heading = "Sustainable rate")]
    pub slo: Option<String>,
    /// The share of a probe's offered arrivals that may go unserved
    /// (skipped or never started), in %. Default: 1.
    #[arg(long, value_name = "PCT", help_heading = "Sustainable rate")]
    pub max_unserved: Option<f64>,
    /// Stop bisecting once the rates that held and failed are this close,
    /// in % of the closed-loop peak. Default: 2.
    #[arg(long, value_name = "PCT", help_heading = "Sustainable rate")]
    pub precision: Option<f64>,
}

/// `p99=10ms` → (99, 10 ms).
pub fn slo(s: &str) -> Result<(f64, std::time::Duration), UsageError> {
    let bad = |why: String| {
        UsageError(format!(
            "--slo '{s}': {why} (give a percentile and its limit, e.g. p99=10ms or p95=2.5ms)"
        ))
    };
    let (p, limit) = s
        .split_once('=')
        .ok_or_else(|| bad("no '=' between the percentile and its limit".into()))?;
    let p: f64 = p
        .trim()
        .strip_prefix('p')
        .and_then(|p| p.parse().ok())
        .filter(|p: &f64| *p > 0.0 && *p < 100.0)
        .ok_or_else(|| bad(format!("'{p}' is not a percentile pP with 0 < P < 100")))?;
    let limit = super::values::duration_with_unit(limit.trim()).map_err(bad)?;
    if limit.is_zero() {
        return Err(bad("the limit is zero".into()));
    }
    Ok((p, limit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_slo_is_a_percentile_and_a_limit() {
        assert_eq!(
            slo("p99=10ms").unwrap(),
            (99.0, std::time::Duration::from_millis(10))
        );
        assert_eq!(
            slo("p99.9=1.5s").unwrap(),
            (99.9, std::time::Duration::from_millis(1500))
        );
        for (bad, words) in [
            ("p99", "no '='"),
            ("99=10ms", "not a percentile"),
            ("p100=10ms", "not a percentile"),
            ("p99=10", "needs a unit"),
            ("p99=0ms", "zero"),
        ] {
            let e = slo(bad).unwrap_err().0;
            assert!(e.contains(words), "{bad}: {e}");
        }
    }
}
