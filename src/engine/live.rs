//! A point watched while it runs: what an observer (the Prometheus feed of
//! `run --prometheus` and a study's `prometheus = "ADDR"`) is told as the
//! point begins, as each interval closes and as the sampler takes each
//! reading of the machine and the server. [`point::execute`] tells it; the
//! observer keeps what it needs and returns at once, as it is called on
//! the engine's timekeeper and the sampler's threads.
//!
//! [`point::execute`]: super::point::execute

use std::sync::Arc;

use super::IntervalSample;
use crate::driver::{Target, TargetKind};
use crate::record::metrics::Sample;

/// Told of a point as it runs.
pub trait Watch: Send + Sync {
    /// A point begins: what it is, as label names and values (its
    /// workload and target first); the last point's figures are done with.
    fn begin(&self, labels: &[(String, String)]);
    /// An interval closed (on the timekeeper's thread: return at once).
    fn interval(&self, s: &IntervalSample);
    /// The sampler read the machine, the server and dbsweep itself.
    fn sample(&self, s: &Sample);
    /// The point ended (its record is being built).
    fn end(&self);
}

/// A point's watcher and the labels that say which point it is, beyond
/// its workload and target (a study's target name, variant, clients and
/// repeat), which [`point::execute`](super::point::execute) adds first.
#[derive(Clone)]
pub struct Live {
    pub watch: Arc<dyn Watch>,
    pub labels: Vec<(String, String)>,
}

impl Live {
    /// Tells the watcher that a point of `workload` on `target` begins,
    /// those two before the other labels; the watcher, for the rest of
    /// the point.
    pub fn begin(&self, workload: &str, target: &Target) -> Arc<dyn Watch> {
        let mut labels = vec![
            ("workload".to_string(), workload.to_string()),
            ("target".to_string(), target_label(target)),
        ];
        labels.extend(self.labels.iter().cloned());
        self.watch.begin(&labels);
        self.watch.clone()
    }
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("labels", &self.labels)
            .finish_non_exhaustive()
    }
}

/// The target as a label: its engine and where it listens (host and port,
/// a socket, or SQLite's file), never its user, password or options.
pub fn target_label(t: &Target) -> String {
    match &t.kind {
        TargetKind::Postgres(a) | TargetKind::Mysql(a) => {
            let scheme = if matches!(t.kind, TargetKind::Postgres(_)) {
                "postgres"
            } else {
                "mysql"
            };
            match &a.socket {
                Some(s) => format!("{scheme}://{}", s.display()),
                None if a.host.contains(':') && !a.host.starts_with('[') => {
                    format!("{scheme}://[{}]:{}", a.host, a.port)
                }
                None => format!("{scheme}://{}:{}", a.host, a.port),
            }
        }
        TargetKind::Sqlite { path, .. } => format!("sqlite://{}", path.display()),
        TargetKind::Fake(_) => "fake".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_targets_label_names_its_engine_and_host_only() {
        let label = |url: &str| target_label(&Target::parse(url).unwrap());
        assert_eq!(
            label("postgres://bench:secret@db.example:5433/app?sslmode=require"),
            "postgres://db.example:5433"
        );
        assert_eq!(
            label("mysql://root:pw@127.0.0.1/test"),
            "mysql://127.0.0.1:3306"
        );
        assert_eq!(
            label("sqlite:///tmp/bench.db?synchronous=full"),
            "sqlite:///tmp/bench.db"
        );
    }
}
