//! The run's statement kinds: the names its statements' latencies are
//! reported under, and which kind each statement of each instance is.
//! BEGIN and COMMIT are kinds of their own, so a transaction's bounds are
//! timed beside its statements.

use crate::workload::Workload;

/// The run's statement kinds and, per instance, each statement's kind.
pub(super) struct Kinds {
    /// Kind names; a kind's index is its place here.
    pub names: Vec<String>,
    /// Per instance: statement id → kind index.
    pub of_statement: Vec<Vec<u16>>,
    pub begin: u16,
    pub commit: u16,
}

impl Kinds {
    pub fn of(instances: &[&dyn Workload]) -> Kinds {
        let mut names: Vec<String> = Vec::new();
        let mut kind_of = |name: &str| -> u16 {
            match names.iter().position(|k| k == name) {
                Some(i) => i as u16,
                None => {
                    names.push(name.to_string());
                    (names.len() - 1) as u16
                }
            }
        };
        // Statement kinds are shared by name across instances, so their
        // latencies merge (point_select of every instance is one row).
        let of_statement = instances
            .iter()
            .map(|w| w.statements().iter().map(|s| kind_of(&s.kind)).collect())
            .collect();
        let begin = kind_of("begin");
        let commit = kind_of("commit");
        Kinds {
            names,
            of_statement,
            begin,
            commit,
        }
    }
}
