//! How a run was paced — closed loop, open loop at a rate, or users on a
//! pool of connections — and what the pacing measured: the offered and
//! achieved rate, late, skipped and unstarted transactions, the service
//! time and the schedule lag. Field docs become the schema's descriptions.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::outcome::Latency;

/// The run's pacing settings (version 2; absent for a plain closed loop:
/// every client a user with its own connection, no think time).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PacingSettings {
    /// Open loop: arrivals per second in total (`--rate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub rate: Option<f64>,
    /// How the arrivals were spaced: `poisson` or `uniform`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrival: Option<String>,
    /// Emulated users (`--users`); absent: one per connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub users: Option<u64>,
    /// The think time between one user's transactions, as given
    /// (`exp:7.2s:cap=72s`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_time: Option<String>,
    /// Its expected value, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub think_time_mean_s: Option<f64>,
    /// `--latency-limit`, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub latency_limit_ms: Option<f64>,
    /// A study's `p99_goal`, ms: the p99 latency this run's offered load
    /// is judged against (sustained or not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub p99_goal_ms: Option<f64>,
    /// Users started per second (`--ramp-up`); absent: all at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub ramp_up_per_s: Option<f64>,
}

/// What the pacing measured (version 2; absent for a plain closed loop).
/// In a queued run (a rate, or more users than connections) every
/// transaction has an intended start: `result.latency` runs from it,
/// `service` from when a connection began the transaction, and `lag` is the
/// wait between the two (schedule lag, or a user's queue wait).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PacingOutcome {
    /// Queued runs: transactions intended to start in the measured window
    /// (run, skipped, or never started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered: Option<u64>,
    /// `offered` per second of the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub offered_per_s: Option<f64>,
    /// Completed transactions per second (`result.tps`).
    #[schemars(range(min = 0))]
    pub achieved_per_s: f64,
    /// With a latency limit: completed transactions slower than it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late: Option<u64>,
    /// With a rate and a latency limit: arrivals already further behind
    /// schedule than the limit when a connection was free, not sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<u64>,
    /// Queued runs: transactions due in the window that no connection
    /// started before it ended (the backlog the server never saw).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unstarted: Option<u64>,
    /// Queued runs: from when a connection began each transaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<Latency>,
    /// Queued runs: intended start → actual start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag: Option<Latency>,
    /// Queued runs: building the queue — the users' timers and think-time
    /// streams, and what the workload keeps per user — before the clients
    /// were released (outside the window), seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub setup_s: Option<f64>,
}
