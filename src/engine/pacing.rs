//! Pacing: when each transaction should start, and who runs it.
//!
//! Three ways to drive a run, a [`Mode`] each (a run's [`Pacing`] is its
//! mode and latency limit: `pacing/mode.rs`):
//! - **closed loop** (the default, sysbench's and Super Smack's): each
//!   connection is one user who starts the next transaction when the last
//!   one ends — after a think time, if one is given (DBT-1's direct mode);
//! - **open loop** (`--rate`): arrivals on a schedule fixed from the run's
//!   start ([`Schedule`]); an idle connection takes the earliest arrival not
//!   yet taken, waits for its intended start if it lies ahead, and the
//!   transaction's latency is measured from that intended start, so a
//!   server stall shows in the percentiles instead of thinning the load
//!   (coordinated omission);
//! - **users on a pool** (`--users U` > `--threads C`): U users, each a
//!   timer (its wake time and its random stream, 20 bytes: `users.rs`) in
//!   a heap, not a thread, built before the clients are released; a user
//!   whose think time ends queues for a free connection, and its latency
//!   includes that wait.
//!
//! The queue of an open loop or a pool is the [`Dispatch`]: a schedule or a
//! heap behind one mutex, handed out in order of intended start. Idle
//! connections wait leader/follower style: one (the leader) sleeps until the
//! next intended start, the others sleep until they are needed, so an
//! arrival wakes one thread, not every idle one. A user who becomes due
//! earlier than the leader's target wakes the leader.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::users::Users;
use crate::rand::pacing::{Arrival, Schedule, ThinkTime};
use crate::util::clock;

mod mode;
pub use mode::{Mode, Options, Pacing};

/// A transaction handed to a connection.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ticket {
    /// When it should start.
    pub intended: Instant,
    /// The user it is for (a pool); None in an open loop, whose arrivals
    /// are no one's until a connection takes them (its own user runs them).
    pub user: Option<u32>,
}

/// What the queue has for a connection on an event loop.
#[derive(Debug, Clone, Copy)]
pub(super) enum Next {
    /// A transaction due now.
    Take(Ticket),
    /// Nothing due before this instant.
    At(Instant),
    /// Nothing queued: every user is in a transaction (ask again when one
    /// ends).
    Busy,
    /// Nothing more starts before the end, or the run stops.
    Over,
}

/// Where queued work comes from: built before the run's start is known
/// (a pool of many users takes a while), then given it ([`Dispatch::new`]).
pub(super) enum Source {
    Rate(Schedule),
    Users(Users),
}

impl Source {
    /// An open loop at `rate` per second.
    pub fn rate(rate: f64, arrival: Arrival, seed: u64) -> Source {
        Source::Rate(Schedule::new(rate, arrival, seed))
    }

    /// `users` users, all due at the start or, with a `ramp_up` rate, one
    /// after another from it (each starts with a transaction, then
    /// thinks), each with its own stream.
    pub fn users(
        users: usize,
        think: Option<ThinkTime>,
        ramp_up: Option<f64>,
        seed: u64,
    ) -> Source {
        Source::Users(Users::new(users, think, ramp_up, seed))
    }

    /// When the next transaction is due, ns from the start.
    fn due(&self) -> Option<u64> {
        match self {
            Source::Rate(s) => Some(s.peek()),
            Source::Users(u) => u.due(),
        }
    }
}

struct State {
    source: Source,
    /// A connection is waiting for the next intended start.
    leader: bool,
    /// Connections waiting to become the leader (idle, not leading).
    followers: usize,
}

/// The queue of an open loop or a pool of users, shared by the connections.
pub(super) struct Dispatch {
    t0: Instant,
    state: Mutex<State>,
    leader_cv: Condvar,
    follower_cv: Condvar,
    stopped: AtomicBool,
}

impl Dispatch {
    /// An open loop at `rate` per second from `t0`.
    #[cfg(test)]
    pub fn rate(t0: Instant, rate: f64, arrival: Arrival, seed: u64) -> Dispatch {
        Dispatch::new(t0, Source::rate(rate, arrival, seed))
    }

    /// A pool of users from `t0` (see [`Source::users`]).
    #[cfg(test)]
    pub fn users(
        t0: Instant,
        users: usize,
        think: Option<ThinkTime>,
        ramp_up: Option<f64>,
        seed: u64,
    ) -> Dispatch {
        Dispatch::new(t0, Source::users(users, think, ramp_up, seed))
    }

    /// The queue of `source`, whose times count from `t0`.
    pub fn new(t0: Instant, source: Source) -> Dispatch {
        Dispatch {
            t0,
            state: Mutex::new(State {
                source,
                leader: false,
                followers: 0,
            }),
            leader_cv: Condvar::new(),
            follower_cv: Condvar::new(),
            stopped: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn at(&self, ns: u64) -> Instant {
        self.t0 + Duration::from_nanos(ns)
    }

    /// The next transaction to run, waiting for its intended start; None
    /// when nothing is left to start before `end`, or the run stops.
    pub fn next(&self, end: Option<Instant>) -> Option<Ticket> {
        let mut st = self.lock();
        let mut leading = false;
        let give_up = |st: &mut State, leading: bool| {
            if leading {
                st.leader = false;
                self.follower_cv.notify_one();
            }
        };
        loop {
            if self.stopped.load(Ordering::Acquire) {
                give_up(&mut st, leading);
                return None;
            }
            let now = clock::now();
            let due = st.source.due();
            if let Some(ns) = due {
                let at = self.at(ns);
                if end.is_some_and(|e| at >= e) {
                    // The schedule has passed the end (heap: this user's
                    // next transaction would start after it).
                    if let Source::Users(u) = &mut st.source {
                        u.pop();
                        continue;
                    }
                    give_up(&mut st, leading);
                    // Nothing more will come: let every waiting connection go
                    // (the lock is held, so no wakeup is lost).
                    self.stopped.store(true, Ordering::Release);
                    self.leader_cv.notify_all();
                    self.follower_cv.notify_all();
                    return None;
                }
                if at <= now {
                    let user = match &mut st.source {
                        Source::Rate(s) => {
                            s.take();
                            None
                        }
                        Source::Users(u) => Some(u.pop().expect("due")),
                    };
                    if leading {
                        st.leader = false;
                    }
                    // Arrivals already due behind this one are taken by idle
                    // connections at once, all woken now, rather than one
                    // after another as each wakes the next: on a busy
                    // machine every wake-up waits for a CPU, and a chain
                    // of them is a backlog the connections never saw.
                    let due_ns = now.saturating_duration_since(self.t0).as_nanos() as u64;
                    let idle = st.followers;
                    let more = match &st.source {
                        Source::Rate(s) => s.pending_at(due_ns, idle as u64) as usize,
                        Source::Users(u) => u.due().is_some_and(|t| t <= due_ns).into(),
                    };
                    // One more to lead, when the leader just left.
                    // (Each notify is a system call, waiters or not: none
                    // when nobody waits, the common case under a backlog.)
                    let wake = (more + usize::from(leading)).min(idle);
                    if wake > 0 && wake == idle {
                        self.follower_cv.notify_all();
                    } else {
                        for _ in 0..wake {
                            self.follower_cv.notify_one();
                        }
                    }
                    return Some(Ticket { intended: at, user });
                }
            }
            if st.leader && !leading {
                st.followers += 1;
                st = self.follower_cv.wait(st).unwrap_or_else(|p| p.into_inner());
                st.followers -= 1;
                continue;
            }
            st.leader = true;
            leading = true;
            st = match due {
                Some(ns) => {
                    let wait = self.at(ns).saturating_duration_since(now);
                    // A unit test's single connection in virtual time
                    // (`util::clock`) lets the wait pass at once: no other
                    // connection shares its clock to wake it earlier.
                    if clock::advance(wait) {
                        continue;
                    }
                    self.leader_cv
                        .wait_timeout(st, wait)
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
                // Every user is in a transaction: wait for one to return.
                None => self.leader_cv.wait(st).unwrap_or_else(|p| p.into_inner()),
            };
        }
    }

    /// The transaction due at `now` for a connection on an event loop,
    /// which never waits here: it takes a due one, or learns when to ask
    /// again.
    pub fn try_next(&self, now: Instant, end: Option<Instant>) -> Next {
        let mut st = self.lock();
        loop {
            if self.stopped.load(Ordering::Acquire) {
                return Next::Over;
            }
            let Some(ns) = st.source.due() else {
                return Next::Busy;
            };
            let at = self.at(ns);
            if end.is_some_and(|e| at >= e) {
                // The schedule has passed the end (heap: this user's next
                // transaction would start after it).
                if let Source::Users(u) = &mut st.source {
                    u.pop();
                    continue;
                }
                return Next::Over;
            }
            if at > now {
                return Next::At(at);
            }
            let user = match &mut st.source {
                Source::Rate(s) => {
                    s.take();
                    None
                }
                Source::Users(u) => Some(u.pop().expect("due")),
            };
            return Next::Take(Ticket { intended: at, user });
        }
    }

    /// A user's transaction ended at `now`: it pauses — for `pause` when
    /// the workload chose it, else for a think time — then queues again.
    pub fn user_done(&self, user: u32, now: Instant, pause: Option<Duration>) {
        let mut st = self.lock();
        if let Source::Users(u) = &mut st.source {
            let now_ns = now.saturating_duration_since(self.t0).as_nanos() as u64;
            if u.done(user, now_ns, pause) {
                self.leader_cv.notify_one();
            }
        }
    }

    /// Wakes every waiting connection; `next` returns None from now on.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
        let _st = self.lock();
        self.leader_cv.notify_all();
        self.follower_cv.notify_all();
    }

    /// Transactions due at `now` that no connection has taken (the queue's
    /// length).
    pub fn pending(&self, now: Instant) -> u64 {
        self.untaken_between(self.t0, now + Duration::from_nanos(1))
    }

    /// Arrivals intended in [`from`, `to`) that no connection took: the
    /// offered load the connections never started. Counted, not stepped
    /// through, however many there are (see `Schedule::untaken_between`
    /// and `Users::due_between`).
    pub fn untaken_between(&self, from: Instant, to: Instant) -> u64 {
        let ns = |i: Instant| i.saturating_duration_since(self.t0).as_nanos() as u64;
        let (from, to) = (ns(from), ns(to));
        let st = self.lock();
        match &st.source {
            Source::Rate(s) => s.untaken_between(from, to),
            Source::Users(u) => u.due_between(from, to),
        }
    }
}

/// Sleeps until `until`, waking early (false) when `stop` is set.
pub(super) fn sleep_until(until: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = clock::now();
        if now >= until {
            return true;
        }
        // A unit test's client in virtual time takes the pause exactly.
        if clock::advance(until - now) {
            return true;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(20)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn an_open_loop_hands_out_the_schedule_in_order_at_its_times() {
        let t0 = Instant::now();
        let d = Dispatch::rate(t0, 1000.0, Arrival::Uniform, 1);
        let mut last = t0;
        for k in 0..20u64 {
            let t = d.next(None).unwrap();
            assert_eq!(t.intended, t0 + Duration::from_millis(k));
            assert!(Instant::now() >= t.intended);
            assert!(t.intended >= last);
            last = t.intended;
        }
        // Past the end nothing more is handed out.
        assert!(d.next(Some(t0 + Duration::from_millis(20))).is_none());
        assert!(d.next(None).is_none(), "stopped for good");
    }

    #[test]
    fn a_late_connection_finds_the_backlog_due_and_counts_it() {
        let t0 = Instant::now() - Duration::from_millis(100);
        let d = Dispatch::rate(t0, 1000.0, Arrival::Uniform, 1);
        // 0, 1, …, 100 ms are due.
        assert_eq!(d.pending(t0 + Duration::from_millis(100)), 101);
        let t = d.next(None).unwrap();
        assert_eq!(t.intended, t0, "the oldest first");
        assert_eq!(
            d.untaken_between(
                t0 + Duration::from_millis(50),
                t0 + Duration::from_millis(60)
            ),
            10
        );
    }

    #[test]
    fn users_think_then_queue_and_an_earlier_user_wakes_the_leader() {
        let t0 = Instant::now();
        let think = Duration::from_secs(60);
        let d = Arc::new(Dispatch::users(
            t0,
            2,
            Some(ThinkTime::Fixed(think)),
            None,
            1,
        ));
        let a = d.next(None).unwrap();
        let b = d.next(None).unwrap();
        assert_ne!(a.user, b.user);
        // User a thinks a minute from its end; meanwhile a waiting
        // connection is the leader, asleep until then.
        let a_end = Instant::now();
        d.user_done(a.user.unwrap(), a_end, None);
        let waiter = {
            let d = d.clone();
            std::thread::spawn(move || d.next(None).unwrap())
        };
        std::thread::sleep(Duration::from_millis(20));
        // User b returns with no think time: due at its end, earlier than a.
        {
            let mut st = d.lock();
            if let Source::Users(u) = &mut st.source {
                u.no_think();
            }
        }
        let b_end = Instant::now();
        d.user_done(b.user.unwrap(), b_end, None);
        let got = waiter.join().unwrap();
        assert_eq!(got.user, b.user, "the earlier user first");
        assert_eq!(got.intended, b_end, "due at its end");
        // The leader was woken for b, not by its timer for a: only a hang
        // of a minute could make this late.
        assert!(Instant::now() < a_end + think, "the leader slept on");
        // a is due a minute after its end.
        let ns = Duration::from_millis(1);
        assert_eq!(d.untaken_between(a_end + think - ns, a_end + think + ns), 1);
        assert_eq!(d.untaken_between(t0, a_end + think - ns), 0);
    }

    #[test]
    fn stop_releases_every_waiting_connection() {
        let t0 = Instant::now();
        let d = Arc::new(Dispatch::users(
            t0,
            1,
            Some(ThinkTime::Fixed(Duration::from_secs(60))),
            None,
            1,
        ));
        let u = d.next(None).unwrap();
        d.user_done(u.user.unwrap(), Instant::now(), None);
        let waiters: Vec<_> = (0..4)
            .map(|_| {
                let d = d.clone();
                std::thread::spawn(move || d.next(None))
            })
            .collect();
        std::thread::sleep(Duration::from_millis(20));
        d.stop();
        for w in waiters {
            assert!(w.join().unwrap().is_none());
        }
    }
}
