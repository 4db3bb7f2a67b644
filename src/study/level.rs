//! One step of a workload's load axis (`rates` or `users`): an offered
//! rate, a share of the closed-loop peak, a number of emulated users, or a
//! probe of the search for the highest sustained rate (`rates = "find"`),
//! and how point keys and the results database write it.

/// One step of a load axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Level {
    /// Arrivals per second, in total.
    Rate(f64),
    /// This fraction of the throughput the series' closed-loop calibration
    /// point measured at the same client count.
    OfPeak(f64),
    /// Emulated users on the point's connections.
    Users(u32),
    /// The Nth probe (from 1) of the search for the highest rate that
    /// holds the workload's p99 goal: its rate follows from the series'
    /// calibration point and the probes before it in the same block
    /// (`stats::bisect`).
    Probe(u32),
}

impl Level {
    /// The level as point keys and the results database write it:
    /// `rate=5000`, `rate=50%`, `users=1000`, `probe=3`.
    pub fn key(&self) -> String {
        match *self {
            Level::Rate(r) => format!("rate={}", trim_number(r)),
            Level::OfPeak(f) => format!("rate={}%", trim_number(f * 100.0)),
            Level::Users(u) => format!("users={u}"),
            Level::Probe(n) => format!("probe={n}"),
        }
    }

    /// Parses [`Level::key`]'s form back.
    pub fn from_key(s: &str) -> Option<Level> {
        if let Some(u) = s.strip_prefix("users=") {
            return u.parse().ok().filter(|&u| u > 0).map(Level::Users);
        }
        if let Some(n) = s.strip_prefix("probe=") {
            return n.parse().ok().filter(|&n| n > 0).map(Level::Probe);
        }
        let r = s.strip_prefix("rate=")?;
        let (v, share) = match r.strip_suffix('%') {
            Some(v) => (v, true),
            None => (r, false),
        };
        let v: f64 = v.parse().ok().filter(|v: &f64| *v > 0.0 && v.is_finite())?;
        Some(if share {
            Level::OfPeak(v / 100.0)
        } else {
            Level::Rate(v)
        })
    }
}

/// A number without a needless fraction: 5000, 2500.5, 12.5.
fn trim_number(v: f64) -> String {
    let s = format!("{:.6}", v);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}
