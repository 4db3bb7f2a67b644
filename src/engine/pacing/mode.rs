//! How a run is paced, as its config says: one [`Mode`] — a closed loop,
//! users on the pool of connections, or an open loop at a rate — and the
//! latency limit any of them may have. Options that make no sense together
//! (a rate with a think time, with users or with a ramp-up) cannot be
//! written down: [`Options`], the five options each on its own as the
//! command line gives them, becomes a [`Pacing`] only through
//! [`Pacing::try_from`], which refuses those combinations in the options'
//! words. `Options` is also the pacing's JSON in a `RunConfig` sent to
//! workers, so that stays what it always was.

use std::time::Duration;

use crate::engine::users::MAX_USERS;
use crate::rand::pacing::{Arrival, ThinkTime};

/// Who starts each transaction, and when.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode {
    /// A closed loop (sysbench's and Super Smack's): each connection is one
    /// user who starts the next transaction when the last one ends, after
    /// `think_time` if there is one (DBT-1's direct mode). With a
    /// `ramp_up`, connection `i`'s first transaction waits `i / ramp_up`
    /// seconds. A workload with users of its own (TPC-C's terminals) turns
    /// it into [`Mode::Users`] before the run (`point::effective`), and a
    /// ramp-up is refused without them (`point::check_ramp_up`).
    Closed {
        think_time: Option<ThinkTime>,
        ramp_up: Option<f64>,
    },
    /// `users` emulated users (`--users`), at least one per connection,
    /// each pausing for `think_time` between its transactions and started
    /// `ramp_up` per second (DBT-1's ramp-up; None: all at once). More
    /// users than connections are a pool: each user a timer that queues
    /// for a free connection when its think time ends. As many users as
    /// connections run as the closed loop does, but the run records them.
    Users {
        users: usize,
        think_time: Option<ThinkTime>,
        ramp_up: Option<f64>,
    },
    /// An open loop (`--rate`): `rate` arrivals per second in total, spaced
    /// as `arrival` says, on a schedule fixed from the run's start.
    Open { rate: f64, arrival: Arrival },
}

impl Default for Mode {
    /// The plain closed loop: no think time, every connection at once.
    fn default() -> Mode {
        Mode::Closed {
            think_time: None,
            ramp_up: None,
        }
    }
}

/// How a run's transactions are paced (part of `RunConfig`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "Options", into = "Options")]
pub struct Pacing {
    pub mode: Mode,
    /// Transactions slower than this (from their intended start) are late;
    /// in an open loop, one already this far behind schedule when a
    /// connection could take it is skipped.
    pub latency_limit: Option<Duration>,
}

/// The pacing as the options give it, each on its own: `--rate` (with
/// `--arrival`), `--users`, `--think-time`, `--latency-limit` and
/// `--ramp-up`. The command line reads these; a `RunConfig` travels to
/// workers as these, its JSON unchanged since the options were fields.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Options {
    /// Open loop: arrivals per second, in total, and their spacing.
    pub rate: Option<(f64, Arrival)>,
    /// Emulated users; None: one per connection.
    pub users: Option<usize>,
    /// The pause between one user's transactions (closed loops only).
    pub think_time: Option<ThinkTime>,
    pub latency_limit: Option<Duration>,
    /// Users started per second; None: all at once.
    pub ramp_up: Option<f64>,
}

impl From<Mode> for Pacing {
    /// `mode` without a latency limit.
    fn from(mode: Mode) -> Pacing {
        Pacing {
            mode,
            latency_limit: None,
        }
    }
}

impl TryFrom<Options> for Pacing {
    type Error = String;

    /// The mode the options give, or why they give none, in their words.
    fn try_from(o: Options) -> Result<Pacing, String> {
        let mode = match (o.rate, o.users) {
            (Some((rate, arrival)), users) => {
                if o.think_time.is_some() {
                    return Err(
                        "--think-time paces a closed loop and --rate an open one: give one of them"
                            .into(),
                    );
                }
                if users.is_some() {
                    return Err("--users gives users their own pace (with --think-time); with --rate arrivals come from the schedule: give one of them".into());
                }
                if o.ramp_up.is_some() {
                    return Err("--ramp-up starts users one after another; with --rate arrivals come from the schedule: give one of them".into());
                }
                Mode::Open { rate, arrival }
            }
            (None, Some(users)) => Mode::Users {
                users,
                think_time: o.think_time,
                ramp_up: o.ramp_up,
            },
            (None, None) => Mode::Closed {
                think_time: o.think_time,
                ramp_up: o.ramp_up,
            },
        };
        Ok(Pacing {
            mode,
            latency_limit: o.latency_limit,
        })
    }
}

impl From<Pacing> for Options {
    fn from(p: Pacing) -> Options {
        Options {
            rate: p.rate(),
            users: p.users(),
            think_time: p.think_time(),
            latency_limit: p.latency_limit,
            ramp_up: p.ramp_up(),
        }
    }
}

impl Pacing {
    /// Every client a user with its own connection, no think time, no
    /// limit: nothing to record about pacing.
    pub fn is_closed_loop(&self) -> bool {
        *self == Pacing::default()
    }

    /// An open loop's rate per second and arrivals.
    pub fn rate(&self) -> Option<(f64, Arrival)> {
        match self.mode {
            Mode::Open { rate, arrival } => Some((rate, arrival)),
            _ => None,
        }
    }

    /// The emulated users given; None: one per connection, or an open loop.
    pub fn users(&self) -> Option<usize> {
        match self.mode {
            Mode::Users { users, .. } => Some(users),
            _ => None,
        }
    }

    /// The pause between one user's transactions.
    pub fn think_time(&self) -> Option<ThinkTime> {
        match self.mode {
            Mode::Closed { think_time, .. } | Mode::Users { think_time, .. } => think_time,
            Mode::Open { .. } => None,
        }
    }

    /// Users started per second.
    pub fn ramp_up(&self) -> Option<f64> {
        match self.mode {
            Mode::Closed { ramp_up, .. } | Mode::Users { ramp_up, .. } => ramp_up,
            Mode::Open { .. } => None,
        }
    }

    /// In an open loop with a latency limit: arrivals further behind
    /// schedule than this are skipped.
    pub fn skip_after(&self) -> Option<Duration> {
        self.rate().and(self.latency_limit)
    }

    /// Does any transaction have an intended start apart from its actual
    /// one (an open loop, or users queueing for connections)?
    pub fn queued(&self, threads: usize) -> bool {
        match self.mode {
            Mode::Open { .. } => true,
            Mode::Users { users, .. } => users > threads,
            Mode::Closed { .. } => false,
        }
    }

    /// What is wrong with this pacing's values for `threads` connections,
    /// in the words of the options.
    pub fn check(&self, threads: usize) -> Result<(), String> {
        if let Some((r, _)) = self.rate() {
            if !(r > 0.0 && r.is_finite()) {
                return Err(format!(
                    "--rate {r}: the rate must be a positive number of transactions per second"
                ));
            }
        }
        if let Some(r) = self.ramp_up() {
            if !(r > 0.0 && r.is_finite()) {
                return Err(format!(
                    "--ramp-up {r}: give a positive number of users started per second"
                ));
            }
        }
        if let Some(u) = self.users() {
            if u as u64 > MAX_USERS {
                return Err(format!(
                    "--users {u}: at most {MAX_USERS} users (they are numbered with 32 bits)"
                ));
            }
            if u < threads {
                return Err(format!(
                    "--users {u} is fewer than --threads {threads}: each connection serves at least one user (lower --threads)"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn options_that_make_no_sense_together_are_refused_in_their_words() {
        let rate = Some((10.0, Arrival::Poisson));
        for (o, words) in [
            (
                Options {
                    rate,
                    think_time: Some(ThinkTime::Fixed(ms(1))),
                    ..Options::default()
                },
                "--think-time paces a closed loop and --rate an open one",
            ),
            (
                Options {
                    rate,
                    users: Some(8),
                    ..Options::default()
                },
                "--users gives users their own pace",
            ),
            (
                Options {
                    rate,
                    ramp_up: Some(5.0),
                    ..Options::default()
                },
                "--ramp-up starts users one after another; with --rate",
            ),
        ] {
            let e = Pacing::try_from(o).unwrap_err();
            assert!(e.contains(words) && e.ends_with("give one of them"), "{e}");
        }
        // Each option on its own gives its mode.
        let limit = Some(ms(10));
        let think = Some(ThinkTime::Fixed(ms(1)));
        for (o, mode) in [
            (
                Options {
                    rate,
                    ..Options::default()
                },
                Mode::Open {
                    rate: 10.0,
                    arrival: Arrival::Poisson,
                },
            ),
            (
                Options {
                    users: Some(8),
                    think_time: think,
                    ramp_up: Some(2.0),
                    ..Options::default()
                },
                Mode::Users {
                    users: 8,
                    think_time: think,
                    ramp_up: Some(2.0),
                },
            ),
            (
                Options {
                    think_time: think,
                    ..Options::default()
                },
                Mode::Closed {
                    think_time: think,
                    ramp_up: None,
                },
            ),
        ] {
            let o = Options {
                latency_limit: limit,
                ..o
            };
            let p = Pacing::try_from(o.clone()).unwrap();
            assert_eq!(
                p,
                Pacing {
                    mode,
                    latency_limit: limit
                }
            );
            assert_eq!(Options::from(p), o);
        }
    }

    #[test]
    fn bad_values_are_refused_with_the_options_named() {
        let users = |users: usize, ramp_up: Option<f64>| {
            Pacing::from(Mode::Users {
                users,
                think_time: None,
                ramp_up,
            })
        };
        let open = |rate: f64| {
            Pacing::from(Mode::Open {
                rate,
                arrival: Arrival::Poisson,
            })
        };
        let closed_ramp = Pacing::from(Mode::Closed {
            think_time: None,
            ramp_up: Some(0.0),
        });
        for (pacing, words) in [
            (open(0.0), "--rate 0: the rate must be a positive number"),
            (open(-5.0), "--rate -5"),
            (open(f64::INFINITY), "--rate inf"),
            (closed_ramp, "--ramp-up 0: give a positive number"),
            (users(8, Some(-1.0)), "--ramp-up -1"),
            (users(2, None), "--users 2 is fewer than --threads 4"),
            (
                users(MAX_USERS as usize + 1, None),
                "at most 4294967295 users",
            ),
        ] {
            let e = pacing.check(4).unwrap_err();
            assert!(e.contains(words), "{e}");
        }
        assert!(open(10.0).check(4).is_ok());
        assert!(users(4, Some(1.0)).check(4).is_ok());
        assert!(Pacing::from(Mode::Users {
            users: 100_000,
            think_time: Some(ThinkTime::Fixed(ms(1))),
            ramp_up: None,
        })
        .check(4)
        .is_ok());
        // As many users as connections: no queue, but not the plain loop.
        assert!(!users(4, None).queued(4) && users(5, None).queued(4));
        assert!(!users(4, None).is_closed_loop());
        assert!(open(10.0).queued(4) && Pacing::default().is_closed_loop());
    }

    #[test]
    fn the_json_is_the_five_options_as_it_always_was() {
        // What a `RunConfig` carried before the pacing was one mode, so a
        // worker and its coordinator of either version read each other.
        let cases = [
            (
                Pacing::default(),
                r#"{"rate":null,"users":null,"think_time":null,"latency_limit":null,"ramp_up":null}"#,
            ),
            (
                Pacing::from(Mode::Closed {
                    think_time: Some(ThinkTime::Fixed(ms(200))),
                    ramp_up: Some(20.0),
                }),
                r#"{"rate":null,"users":null,"think_time":{"Fixed":{"secs":0,"nanos":200000000}},"latency_limit":null,"ramp_up":20.0}"#,
            ),
            (
                Pacing {
                    mode: Mode::Open {
                        rate: 500.0,
                        arrival: Arrival::Uniform,
                    },
                    latency_limit: Some(ms(10)),
                },
                r#"{"rate":[500.0,"uniform"],"users":null,"think_time":null,"latency_limit":{"secs":0,"nanos":10000000},"ramp_up":null}"#,
            ),
            (
                Pacing {
                    mode: Mode::Users {
                        users: 200,
                        think_time: Some(ThinkTime::Exp {
                            mean: ms(7200),
                            cap: Some(ms(72_000)),
                        }),
                        ramp_up: Some(100.0),
                    },
                    latency_limit: Some(ms(1500)),
                },
                r#"{"rate":null,"users":200,"think_time":{"Exp":{"mean":{"secs":7,"nanos":200000000},"cap":{"secs":72,"nanos":0}}},"latency_limit":{"secs":1,"nanos":500000000},"ramp_up":100.0}"#,
            ),
            (
                Pacing::from(Mode::Users {
                    users: 8,
                    think_time: Some(ThinkTime::Uniform(ms(1000), ms(3000))),
                    ramp_up: None,
                }),
                r#"{"rate":null,"users":8,"think_time":{"Uniform":[{"secs":1,"nanos":0},{"secs":3,"nanos":0}]},"latency_limit":null,"ramp_up":null}"#,
            ),
        ];
        for (pacing, json) in cases {
            assert_eq!(serde_json::to_string(&pacing).unwrap(), json);
            assert_eq!(serde_json::from_str::<Pacing>(json).unwrap(), pacing);
        }
        // Absent options are None, as they always were.
        assert_eq!(
            serde_json::from_str::<Pacing>("{}").unwrap(),
            Pacing::default()
        );
        // Options no mode gives are refused on the way in, in their words.
        let e = serde_json::from_str::<Pacing>(r#"{"rate":[10.0,"poisson"],"users":8}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--users gives users their own pace"), "{e}");
    }
}
