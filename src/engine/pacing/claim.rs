//! Event loops: which loop waits for the queue's next arrival.
//!
//! An idle client on an event loop waits for the queue's next arrival on
//! a timer in its loop. If every loop with an idle client held that timer,
//! each arrival would wake every loop and all but one would find it taken:
//! 1.3–1.4 times pgbench's context switches a transaction, whose threads
//! each own their schedule (bench/README.md, "Context switches"). So one
//! loop at a time *claims* the next arrival and sets the timer; the other
//! loops' idle clients are told `Busy` and sleep on the queue, and when
//! the claim is taken the loop that took it finds the next waiter
//! ([`Claims::waiter`]): its own idle clients, else a loop whose clients
//! sleep on the queue (each loop says so in a flag of its own before it
//! sleeps), woken; until one claims, every loop looks again after each
//! round, so no idle client sleeps through an arrival.
//!
//! One waiter costs latency where the CPUs are shared with the server: the
//! one loop woken may wait for a CPU, where of several woken the first to
//! run takes the arrival (measured: p99 at 50 % of the peak 2.55 times
//! every loop waiting, on two CPUs beside the server). So the single
//! waiter is watched: of the claimed arrivals (whichever loop takes them), if
//! more than [`LATE`] of a [`WINDOW`] start later than [`LATE_BY`] — enough
//! to move the lag's p99 — every loop waits again (each sets the timer, the
//! first to run takes the arrival) for [`HOLD`], and then the single
//! waiter is tried anew. Where one waiter is on time (a machine with CPU
//! to spare) an arrival wakes one loop; where it is not, latency is not
//! traded for fewer wake-ups.

use std::sync::atomic::{AtomicBool, Ordering};

/// A claimer that takes its arrival later than this was late.
pub(super) const LATE_BY: u64 = 200_000;
/// Arrivals taken by their claimers over which lateness is counted.
pub(super) const WINDOW: u32 = 512;
/// More late arrivals than this in a window and every loop waits: 2 of 512
/// is 0.4 %, under the 1 % that would move the p99.
pub(super) const LATE: u32 = 2;
/// How long every loop waits once the single waiter was late too often.
pub(super) const HOLD: u64 = 1_000_000_000;

/// Who waits for the queue's next arrival, after a round of an event loop
/// ([`Claims::waiter`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(in crate::engine) enum Waiter {
    /// A loop has claimed it, or no loop has an idle client to wait.
    Covered,
    /// The asking loop's idle clients should ask again: one will claim it.
    AskHere,
    /// This other loop has idle clients asleep on the queue: wake it.
    Wake(usize),
}

/// The loops' claims on the next arrival, kept under the queue's lock.
/// Times are nanoseconds from the run's start, as the queue's.
#[derive(Debug, Default)]
pub(super) struct Claims {
    /// The loop whose idle client holds the timer for the next arrival,
    /// and that arrival's intended start.
    claim: Option<(usize, u64)>,
    /// Arrivals taken by their claimers in this window, and how many late.
    taken: u32,
    late: u32,
    /// Every loop waits for the next arrival until then.
    all_until: u64,
}

impl Claims {
    /// Whether every loop waits for the next arrival at `now`.
    pub fn everyone_waits(&self, now: u64) -> bool {
        now < self.all_until
    }

    /// Loop `lp` asks at `now` for the arrival intended at `ns`, still
    /// ahead: whether one of its clients should wait for it on a timer
    /// (else it is told `Busy`).
    pub fn ask(&mut self, lp: usize, ns: u64, now: u64) -> bool {
        match self.claim {
            Some((other, claimed)) if other != lp && claimed <= ns => self.everyone_waits(now),
            // No claim, its own, or a later arrival than this one (a user
            // due sooner): the asking loop claims it.
            _ => {
                self.claim = Some((lp, ns));
                true
            }
        }
    }

    /// Loop `lp` took the arrival intended at `ns`, at `now` (`idle`: by
    /// a client that was waiting for work, not one whose transaction just
    /// ended). True when the claim is gone with it (the claimed arrival,
    /// or any taken by the claimer's loop): the next arrival has no waiter
    /// yet.
    pub fn took(&mut self, lp: usize, ns: u64, now: u64, idle: bool) -> bool {
        let claimed = self.claim.is_some_and(|(_, claimed)| claimed == ns);
        if (idle || claimed) && !self.everyone_waits(now) {
            // A client was idle for this one: however it came to be taken
            // (by its claimer, by an idle client woken for it, or by one
            // whose transaction ended on another loop), its lateness is the
            // single waiter's. Late takes by clients that were all busy are
            // a queue, which more waiters would not shorten.
            self.watch(now.saturating_sub(ns), now);
        }
        let Some((c, _)) = self.claim else {
            return false;
        };
        if c == lp || claimed {
            self.claim = None;
            return true;
        }
        false
    }

    /// Counts a claimer's lateness; too many late and every loop waits.
    fn watch(&mut self, late: u64, now: u64) {
        self.taken += 1;
        self.late += u32::from(late > LATE_BY);
        if self.late > LATE {
            self.all_until = now + HOLD;
        }
        if self.late > LATE || self.taken >= WINDOW {
            self.taken = 0;
            self.late = 0;
        }
    }

    /// After a round of loop `lp`, with no claim known to stand
    /// (`queued_here`: `lp` has idle clients asleep on the queue;
    /// `asleep[j]`: loop `j` sleeps with such clients): who waits for the
    /// next arrival. `Covered` with no claim (every client busy) leaves
    /// the next client to finish to claim it.
    pub fn waiter(&self, lp: usize, queued_here: bool, asleep: &[AtomicBool]) -> Waiter {
        if self.claim.is_some() {
            return Waiter::Covered;
        }
        if queued_here {
            return Waiter::AskHere;
        }
        // The first other loop asleep with idle clients; its flag is
        // cleared so that no other loop wakes it for the same arrival.
        match (0..asleep.len()).find(|&j| j != lp && asleep[j].swap(false, Ordering::SeqCst)) {
            Some(j) => Waiter::Wake(j),
            None => Waiter::Covered,
        }
    }

    /// Whether a loop has claimed the next arrival.
    pub fn claimed(&self) -> bool {
        self.claim.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_loop_claims_the_next_arrival_and_the_others_sleep_on_the_queue() {
        let mut c = Claims::default();
        assert!(c.ask(0, 1_000, 0), "the first loop to ask claims it");
        assert!(!c.ask(1, 1_000, 0), "a second loop is told Busy");
        assert!(
            c.ask(0, 1_000, 10),
            "the claimer's other clients may wait too"
        );
        assert!(
            c.ask(1, 500, 10),
            "a loop with an earlier arrival claims that one"
        );
        // Loop 1 now claims 500; loop 0, still asleep on its timer for
        // 1,000, asks again when it fires and is told Busy.
        assert!(!c.ask(0, 1_000, 20));
    }

    #[test]
    fn a_claimer_that_takes_without_an_idle_client_wakes_a_loop_that_has_one() {
        let mut c = Claims::default();
        let asleep: Vec<AtomicBool> = (0..3).map(|_| AtomicBool::new(false)).collect();
        assert!(c.ask(0, 1_000, 0));
        assert!(!c.ask(1, 1_000, 0));
        assert!(!c.ask(2, 1_000, 0));
        asleep[1].store(true, Ordering::Relaxed);
        asleep[2].store(true, Ordering::Relaxed);
        assert_eq!(c.waiter(0, false, &asleep), Waiter::Covered, "claimed");
        assert!(c.took(0, 1_000, 1_000, true), "the claimer took its claim");
        assert_eq!(c.waiter(0, false, &asleep), Waiter::Wake(1));
        // Loop 1 claims the next one when woken: loop 2 stays asleep.
        assert!(c.ask(1, 2_000, 1_100));
        assert!(c.claimed());
        assert_eq!(c.waiter(0, false, &asleep), Waiter::Covered);
        assert!(c.took(1, 2_000, 2_000, true));
        assert_eq!(
            c.waiter(1, true, &asleep),
            Waiter::AskHere,
            "its own idle clients first"
        );
        assert_eq!(c.waiter(1, false, &asleep), Waiter::Wake(2));
        assert_eq!(
            c.waiter(1, false, &asleep),
            Waiter::Covered,
            "nobody left asleep"
        );
        assert!(!c.claimed(), "the next client to finish claims it");
        assert!(
            !c.took(2, 3_000, 3_000, true),
            "an unclaimed take needs no new waiter"
        );
        // Another loop taking the claimed arrival ends the claim too.
        assert!(c.ask(0, 4_000, 3_500));
        assert!(c.took(1, 4_000, 4_000, true));
        assert_eq!(c.waiter(1, true, &asleep), Waiter::AskHere);
    }

    #[test]
    fn a_late_single_waiter_makes_every_loop_wait_for_a_while() {
        let mut c = Claims::default();
        let mut t = 0;
        // On time: the second loop keeps being told Busy.
        for k in 0..(2 * WINDOW as u64) {
            let ns = 1_000_000 * (k + 1);
            assert!(c.ask(0, ns, t));
            assert!(
                !c.ask(1, ns, t),
                "arrival {k}: one waiter while it is on time"
            );
            t = ns + LATE_BY / 2;
            assert!(c.took(0, ns, t, true));
        }
        // LATE late ones are tolerated; one more and every loop waits.
        for k in 0..=LATE as u64 {
            let ns = t + 1_000_000;
            assert!(c.ask(0, ns, t));
            assert!(!c.ask(1, ns, t), "late arrival {k} of {LATE} tolerated");
            t = ns + 2 * LATE_BY;
            assert!(c.took(0, ns, t, true));
        }
        let ns = t + 1_000_000;
        assert!(c.ask(0, ns, t));
        assert!(c.ask(1, ns, t), "every loop waits after too many late");
        // Lateness in that time is not counted; after HOLD, one waiter again.
        t += HOLD;
        let ns = t + 1_000_000;
        assert!(c.ask(0, ns, t));
        assert!(!c.ask(1, ns, t), "the single waiter is tried again");
    }

    #[test]
    fn lateness_is_counted_per_window() {
        let mut c = Claims::default();
        let mut t = 0;
        // Lateness counts whichever loop takes the claimed arrival.
        for _ in 0..=LATE {
            let ns = t + 1_000_000;
            assert!(c.ask(0, ns, t));
            t = ns + 2 * LATE_BY;
            assert!(c.took(1, ns, t, true));
        }
        assert!(c.everyone_waits(t));
        t += HOLD;
        // LATE late arrivals in each of several windows never add up.
        for k in 0..(4 * WINDOW as u64) {
            let ns = t + 1_000_000;
            assert!(c.ask(0, ns, t));
            assert!(!c.ask(1, ns, t), "arrival {k}");
            let late = k % u64::from(WINDOW) < u64::from(LATE);
            t = ns + if late { 2 * LATE_BY } else { 0 };
            c.took(0, ns, t, true);
        }
    }
}
