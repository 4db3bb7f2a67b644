//! The `[stop] max_error_rate` rule: stop a series once a point's errors of
//! a kind (deadlocks, lock wait timeouts, …) per transaction exceed a limit.
//!
//! `max_failed_rate` cannot see deadlocks by default: the engine retries
//! them, so they cost time but fail no transaction. Seed 000's OLTP test
//! "fails because of deadlock" at 250 clients; with retries on, the same
//! condition shows as a deadlock count that grows with the clients, and
//! this rule turns it into the end of the series. Errors are counted per
//! attempted transaction (completed + failed), so a rate can exceed 1 when
//! transactions are retried more than once on average. (The file's table is
//! read in `load.rs`.)

use crate::driver::ErrorKind;

/// The spelling for "errors of every kind together".
pub const ALL_KINDS: &str = "all";

/// Limits on errors per transaction: one per error kind, and one on all
/// kinds together. None: no limit.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ErrorRates {
    /// Indexed by [`ErrorKind::index`].
    pub per_kind: [Option<f64>; ErrorKind::COUNT],
    /// All kinds together.
    pub all: Option<f64>,
}

impl ErrorRates {
    /// Whether any limit is set.
    pub fn is_set(&self) -> bool {
        self.all.is_some() || self.per_kind.iter().any(Option::is_some)
    }

    /// The limits as the study file writes them, e.g. `deadlock 0.01`.
    pub fn describe(&self) -> Vec<String> {
        let mut out: Vec<String> = ErrorKind::ALL
            .iter()
            .filter_map(|k| self.per_kind[k.index()].map(|l| format!("{} {l}", k.name())))
            .collect();
        if let Some(l) = self.all {
            out.push(format!("{ALL_KINDS} {l}"));
        }
        out
    }

    /// The reason to stop a series, if a point with `errors` (by
    /// [`ErrorKind::index`]) over `attempted` transactions at `clients`
    /// clients exceeds a limit; kinds are judged in [`ErrorKind::ALL`]
    /// order, then all kinds together.
    pub fn exceeded(
        &self,
        errors: &[u64; ErrorKind::COUNT],
        attempted: u64,
        clients: u32,
    ) -> Option<String> {
        let rate = |n: u64| {
            if attempted == 0 {
                if n > 0 {
                    f64::INFINITY
                } else {
                    0.0
                }
            } else {
                n as f64 / attempted as f64
            }
        };
        let judged = ErrorKind::ALL
            .iter()
            .map(|k| (k.name(), self.per_kind[k.index()], errors[k.index()]))
            .chain([(ALL_KINDS, self.all, errors.iter().sum())]);
        for (name, limit, n) in judged {
            let Some(limit) = limit else { continue };
            let r = rate(n);
            if r > limit {
                let what = if name == ALL_KINDS {
                    "errors".to_string()
                } else {
                    format!("{name} errors")
                };
                return Some(format!(
                    "stopped: {n} {what} in {attempted} transactions ({r:.4} per transaction) at {clients} clients (limit {limit})"
                ));
            }
        }
        None
    }

    /// Errors by kind from `(kind name, count)` pairs as the results
    /// database stores them; unknown names are ignored.
    pub fn counts<'a>(pairs: impl IntoIterator<Item = (&'a str, u64)>) -> [u64; ErrorKind::COUNT] {
        let mut out = [0; ErrorKind::COUNT];
        for (name, n) in pairs {
            if let Some(k) = ErrorKind::from_name(name) {
                out[k.index()] += n;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(deadlock: u64, lock_timeout: u64) -> [u64; ErrorKind::COUNT] {
        let mut e = [0; ErrorKind::COUNT];
        e[ErrorKind::Deadlock.index()] = deadlock;
        e[ErrorKind::LockTimeout.index()] = lock_timeout;
        e
    }

    #[test]
    fn a_kind_over_its_limit_stops() {
        let mut r = ErrorRates::default();
        assert!(!r.is_set());
        r.per_kind[ErrorKind::Deadlock.index()] = Some(0.01);
        assert!(r.is_set());
        // 10 deadlocks in 1000 transactions is exactly the limit: go on.
        assert_eq!(r.exceeded(&errors(10, 500), 1000, 50), None);
        let why = r.exceeded(&errors(11, 0), 1000, 250).unwrap();
        assert_eq!(
            why,
            "stopped: 11 deadlock errors in 1000 transactions (0.0110 per transaction) at 250 clients (limit 0.01)"
        );
        assert_eq!(r.describe(), ["deadlock 0.01"]);
    }

    #[test]
    fn all_kinds_together_and_retries_above_one() {
        let r = ErrorRates {
            all: Some(1.5),
            ..ErrorRates::default()
        };
        assert_eq!(r.exceeded(&errors(100, 50), 100, 4), None);
        let why = r.exceeded(&errors(100, 51), 100, 4).unwrap();
        assert!(why.contains("151 errors in 100 transactions"), "{why}");
        // Errors with no transaction at all exceed any limit.
        assert!(r.exceeded(&errors(1, 0), 0, 4).is_some());
        assert_eq!(r.exceeded(&errors(0, 0), 0, 4), None);
        assert_eq!(r.describe(), ["all 1.5"]);
    }

    #[test]
    fn counts_from_stored_pairs() {
        let c = ErrorRates::counts([("deadlock", 3), ("lock_timeout", 2), ("nonsense", 9)]);
        assert_eq!(c, errors(3, 2));
    }
}
