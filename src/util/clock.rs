//! The monotonic clock the engine times statements and transactions with.
//!
//! In a release or integration-test build [`now`] is `Instant::now()`,
//! inlined: the per-statement path pays nothing for it. In the crate's own
//! unit tests a thread may instead run on *virtual time* ([`enter_virtual`]):
//! its clock stands still except when the fake driver "sleeps" a scripted
//! latency or the engine's pacing waits — a think time, the next arrival
//! on a run's only connection — ([`advance`]), so a statement takes
//! exactly its scripted latency and a wait exactly its length. That is
//! what lets the shard tests compare histograms bucket for bucket with a
//! one-process run, and the pacing tests count late and skipped
//! transactions exactly however busy the machine is: with real sleeps,
//! scheduling jitter moves values across buckets and decisions across
//! their limits from one run to the next.

use std::time::Instant;

/// The current instant.
#[cfg(not(test))]
#[inline(always)]
pub fn now() -> Instant {
    Instant::now()
}

/// The current instant: this thread's virtual time if it entered it, the
/// real clock otherwise (remembered, so virtual time can start there).
#[cfg(test)]
pub fn now() -> Instant {
    virt::NOW.with(|v| match v.get() {
        Some(t) => t,
        None => {
            let t = Instant::now();
            virt::LAST.with(|l| l.set(Some(t)));
            t
        }
    })
}

/// Lets time pass by `d` on a thread in virtual time and returns true; on
/// any other thread (and outside unit tests) does nothing and returns
/// false, so the caller sleeps for real.
#[inline]
pub fn advance(d: std::time::Duration) -> bool {
    #[cfg(test)]
    {
        virt::NOW.with(|v| match v.get() {
            Some(t) => {
                v.set(Some(t + d));
                true
            }
            None => false,
        })
    }
    #[cfg(not(test))]
    {
        let _ = d;
        false
    }
}

/// Puts this thread in virtual time from the last real reading of [`now`]
/// on it (so a transaction whose start was read just before is timed
/// exactly); a thread already in virtual time stays where it is.
#[cfg(test)]
pub fn enter_virtual() {
    virt::NOW.with(|v| {
        if v.get().is_none() {
            let from = virt::LAST.with(|l| l.get()).unwrap_or_else(Instant::now);
            v.set(Some(from));
        }
    });
}

#[cfg(test)]
mod virt {
    use std::cell::Cell;
    use std::time::Instant;

    thread_local! {
        /// This thread's virtual time; None: the real clock.
        pub static NOW: Cell<Option<Instant>> = const { Cell::new(None) };
        /// The last real reading on this thread.
        pub static LAST: Cell<Option<Instant>> = const { Cell::new(None) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn virtual_time_moves_only_when_advanced() {
        std::thread::spawn(|| {
            assert!(!advance(Duration::from_millis(1)));
            let t = now();
            enter_virtual();
            assert_eq!(now(), t);
            std::thread::sleep(Duration::from_millis(2));
            assert_eq!(now(), t);
            assert!(advance(Duration::from_micros(1500)));
            assert_eq!(now() - t, Duration::from_micros(1500));
        })
        .join()
        .unwrap();
    }
}
