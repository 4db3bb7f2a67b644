//! One shard of a run split across processes (`--shard I/N`): which of the
//! run's clients, users, transactions and arrivals are this shard's.
//!
//! The split is exact. Clients keep their run-wide numbers, so client `g`
//! of shard `I` draws from `Rng::for_client(seed, g)` exactly as it would
//! in one process, and shard `I` of `N` runs clients
//! `⌊G·I/N⌋ .. ⌊G·(I+1)/N⌋` of the run's `G`: the union of the shards is
//! the one-process run, client for client. `--events` and `--users` are
//! split by the same rule, so their shares add up to the whole. A
//! `--rate R` becomes `R/N` per shard — N independent Poisson streams of
//! R/N are one Poisson stream of R — each drawn from a seed derived from
//! the run's seed and the shard's index, so the union is reproducible
//! (though not the same arrivals as one process would draw: a schedule is
//! one stream, and it cannot be dealt out without a shared clock).

use std::ops::Range;

use super::pacing::Mode;
use super::{Pacing, RunConfig};

/// Shard `index` of `count` (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Shard `index` of `count`; None unless `index < count`.
    pub fn new(index: usize, count: usize) -> Option<Shard> {
        (index < count).then_some(Shard { index, count })
    }

    /// This shard's part of `0..n`.
    pub fn range(self, n: usize) -> Range<usize> {
        let at = |i: usize| (n as u128 * i as u128 / self.count as u128) as usize;
        at(self.index)..at(self.index + 1)
    }

    /// This shard's share of `n` (of `--events`, say): the shares of all
    /// shards add up to `n`.
    pub fn share(self, n: u64) -> u64 {
        let at = |i: usize| (u128::from(n) * i as u128 / self.count as u128) as u64;
        at(self.index + 1) - at(self.index)
    }

    /// The seed of this shard's streams that are not per client (the rate's
    /// schedule, the users' think times): the run's own for a run of one
    /// shard, otherwise a mix of it and the index, so no two shards draw
    /// the same arrivals.
    pub fn stream_seed(self, seed: u64) -> u64 {
        if self.count == 1 {
            return seed;
        }
        // SplitMix64's finaliser: neighbouring indexes give unrelated seeds.
        let mut z = seed ^ (self.index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The run's pacing as this shard applies it: its share of the users,
    /// `1/N` of the rate and of the ramp-up.
    pub fn pacing(self, p: &Pacing) -> Pacing {
        let n = self.count as f64;
        let mode = match p.mode {
            Mode::Open { rate, arrival } => Mode::Open {
                rate: rate / n,
                arrival,
            },
            Mode::Users {
                users,
                think_time,
                ramp_up,
            } => Mode::Users {
                users: self.range(users).len(),
                think_time,
                ramp_up: ramp_up.map(|r| r / n),
            },
            Mode::Closed {
                think_time,
                ramp_up,
            } => Mode::Closed {
                think_time,
                ramp_up: ramp_up.map(|r| r / n),
            },
        };
        Pacing {
            mode,
            latency_limit: p.latency_limit,
        }
    }

    /// What makes this split impossible for a run of `clients` clients
    /// (all instances together) and `users` users, in the options' words.
    pub fn check(self, clients: usize, users: Option<usize>) -> Result<(), String> {
        if clients < self.count {
            return Err(format!(
                "--shard {}/{}: {clients} clients cannot be split into {} shards; \
                 give --threads at least {} or fewer shards",
                self.index, self.count, self.count, self.count
            ));
        }
        if let Some(u) = users {
            let (mine, conns) = (self.range(u).len(), self.range(clients).len());
            if mine < conns {
                return Err(format!(
                    "--shard {}/{}: this shard gets {mine} of the {u} users but {conns} connections; \
                     give --users at least --threads",
                    self.index, self.count
                ));
            }
        }
        Ok(())
    }
}

/// What one process runs of a run: all of it, or its shard's part.
pub(super) struct Part {
    /// Clients per instance: the run's client `g` belongs to instance
    /// `g / per_instance`.
    pub per_instance: usize,
    /// This process's clients, by their run-wide numbers.
    pub clients: Range<usize>,
    pub pacing: Pacing,
    pub events: Option<u64>,
    /// The seed of the pacing's arrivals and users.
    pub stream_seed: u64,
}

impl Part {
    /// The part `cfg` gives this process of a run of `instances` instances.
    pub fn of(cfg: &RunConfig, instances: usize) -> Part {
        let per_instance = cfg.threads.max(1);
        // A shard runs its part of the run's clients under their run-wide
        // numbers, its share of the events and the pacing.
        let all = 0..per_instance * instances;
        Part {
            per_instance,
            clients: cfg.shard.map_or(all.clone(), |s| s.range(all.end)),
            pacing: match cfg.shard {
                Some(s) => s.pacing(&cfg.pacing),
                None => cfg.pacing.clone(),
            },
            events: match cfg.shard {
                Some(s) => cfg.events.map(|e| s.share(e)),
                None => cfg.events,
            },
            stream_seed: cfg.shard.map_or(cfg.seed, |s| s.stream_seed(cfg.seed)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_to_the_whole() {
        for count in [1, 2, 3, 7] {
            let shards: Vec<Shard> = (0..count).map(|i| Shard::new(i, count).unwrap()).collect();
            for n in [7usize, 10, 64, 1001] {
                let mut next = 0;
                for s in &shards {
                    let r = s.range(n);
                    assert_eq!(r.start, next);
                    next = r.end;
                    assert!(r.len() >= n / count && r.len() <= n / count + 1);
                }
                assert_eq!(next, n);
                let total: u64 = shards.iter().map(|s| s.share(n as u64)).sum();
                assert_eq!(total, n as u64);
            }
        }
        assert_eq!(Shard::new(3, 3), None);
    }

    #[test]
    fn streams_differ_by_shard_and_repeat() {
        let a = Shard::new(0, 3).unwrap();
        let b = Shard::new(1, 3).unwrap();
        assert_ne!(a.stream_seed(7), b.stream_seed(7));
        assert_eq!(a.stream_seed(7), Shard::new(0, 3).unwrap().stream_seed(7));
        assert_eq!(Shard::new(0, 1).unwrap().stream_seed(7), 7);
    }

    #[test]
    fn a_shard_takes_its_share_of_the_pacing() {
        use crate::rand::pacing::Arrival;
        let open = Pacing::from(Mode::Open {
            rate: 900.0,
            arrival: Arrival::Poisson,
        });
        let users = Pacing::from(Mode::Users {
            users: 100,
            think_time: None,
            ramp_up: Some(30.0),
        });
        let users: Vec<usize> = (0..3)
            .map(|i| {
                let s = Shard::new(i, 3).unwrap();
                assert_eq!(s.pacing(&open).rate(), Some((300.0, Arrival::Poisson)));
                let mine = s.pacing(&users);
                assert_eq!(mine.ramp_up(), Some(10.0));
                mine.users().unwrap()
            })
            .collect();
        assert_eq!(users, [33, 33, 34]);
    }

    #[test]
    fn refuses_more_shards_than_clients() {
        let e = Shard::new(0, 4).unwrap().check(3, None).unwrap_err();
        assert!(e.contains("--threads at least 4"), "{e}");
        assert!(Shard::new(0, 3).unwrap().check(3, Some(3)).is_ok());
    }
}
