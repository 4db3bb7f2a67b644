//! `dbsweep dist`: draws from one of the access distributions and shows
//! what it looks like (or prints the raw draws).

use std::io::Write;

use crate::rand::dist::Dist;
use crate::rand::{RandConfig, Rng};
use crate::report;
use crate::UsageError;

/// `dbsweep dist DISTRIBUTION`.
pub struct DistRequest {
    /// The distribution, its knobs and the seed of the draws.
    pub rand: RandConfig,
    pub min: u32,
    pub max: u32,
    /// Draws.
    pub n: u64,
    /// Histogram bins.
    pub bins: usize,
    /// Print the draws, one per line, instead of the histogram.
    pub raw: bool,
}

pub fn dist(a: &DistRequest) -> anyhow::Result<()> {
    if a.min > a.max {
        return Err(UsageError(format!("--min {} is greater than --max {}", a.min, a.max)).into());
    }
    if a.n == 0 || a.bins == 0 {
        return Err(UsageError("--n and --bins must be at least 1".into()).into());
    }
    let cfg = a.rand;
    let mut rng = Rng::new(cfg.seed);
    let mut d = Dist::new(cfg.kind, cfg.params);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if a.raw {
        for _ in 0..a.n {
            writeln!(out, "{}", d.draw(&mut rng, a.min, a.max))?;
        }
    } else {
        let draws: Vec<u32> = (0..a.n).map(|_| d.draw(&mut rng, a.min, a.max)).collect();
        let text =
            report::dist::render(cfg.kind.name(), a.min, a.max, cfg.seed, &draws, a.bins, 60);
        out.write_all(text.as_bytes())?;
    }
    out.flush()?;
    Ok(())
}
