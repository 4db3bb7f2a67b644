//! The queue's next arrival as one alarm shared by every event loop
//! (evloop.rs), which the kernel rings in one sleeping loop, not in all.
//!
//! With a timer per loop, every loop holding an idle client slept until
//! the same arrival and all woke for it; one took it and the others went
//! back to sleep: two context switches an arrival on two loops, where
//! pgbench's threads (each with its own share of the rate) wake once. A
//! claim that let only one loop wait halved the wake-ups but doubled the
//! p99 at half the peak: on two shared CPUs the one waiting loop is often
//! not running when its arrival comes, while the other has an idle client.
//! Here one timerfd is in the epoll set of every loop that has a client
//! waiting on the queue, added with `EPOLLEXCLUSIVE`: when it rings the
//! kernel walks the loops in order, queues the ring on each one that is
//! awake (it sees it at its next poll, without a switch) and wakes the
//! first one asleep, and stops there. A loop leaves the set when it has no
//! client waiting, so a ring never wakes a loop that cannot take it.
//!
//! One woken loop is one chance: on two CPUs shared with the server, the
//! loop the kernel wakes may wait for a CPU while the other could have
//! taken the arrival (every loop waking had the lower lag, the first of
//! them to run taking it). So a second alarm, exclusive too, rings
//! [`BACKUP`] later unless the first ring was read by then: a loop late
//! to its wake-up costs the arrival at most that, and an arrival taken in
//! time costs no second wake-up. Both are set together and read together.
//!
//! mio has no exclusive flag: the descriptor is added to the loop's epoll
//! (`Poll::as_raw_fd`) with `epoll_ctl` directly, its data the token mio
//! reports (mio reads an event's data as its token).

use std::io;
use std::os::fd::RawFd;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::util::alarm::Alarm;

/// How long after an arrival its second alarm rings, if no loop has
/// read the first by then.
pub(super) const BACKUP: Duration = Duration::from_micros(250);

/// The alarms for the queue's next arrival (the first and its backup),
/// shared by the loops.
pub(super) struct QueueAlarm {
    alarms: Mutex<[Alarm; 2]>,
    fds: [RawFd; 2],
}

impl QueueAlarm {
    pub fn new() -> io::Result<QueueAlarm> {
        let alarms = [Alarm::new()?, Alarm::new()?];
        let fds = [alarms[0].raw_fd(), alarms[1].raw_fd()];
        Ok(QueueAlarm {
            alarms: Mutex::new(alarms),
            fds,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, [Alarm; 2]> {
        self.alarms.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A client waits for the queue's arrival at `at` (`now` the caller's
    /// clock): the alarm rings by then. A ring already due and not yet
    /// read is left alone — whoever reads it asks the queue again, and
    /// setting the timer anew would take the ring back from a loop the
    /// kernel has just woken for it.
    pub fn arm(&self, at: Instant, now: Instant) -> io::Result<()> {
        let mut a = self.lock();
        match a[0].armed() {
            Some(t) if t <= now || t <= at => Ok(()),
            _ => {
                a[0].set(at, now)?;
                a[1].set(at + BACKUP, now)
            }
        }
    }

    /// One of them rang in this loop: reads both away (the loop then asks
    /// the queue for each of its waiting clients, and they set the next).
    pub fn rang(&self) {
        // A ring read here or by another loop (several may see one): an
        // alarm set anew meanwhile stays set.
        let mut a = self.lock();
        a[0].clear();
        a[1].clear();
    }

    /// Adds the alarms to the epoll set `epoll` as `token` and `token + 1`,
    /// rung exclusively (or, on a kernel without `EPOLLEXCLUSIVE`, as every
    /// loop's).
    pub fn join(&self, epoll: RawFd, token: usize) -> io::Result<()> {
        self.join_one(epoll, 0, token)?;
        self.join_one(epoll, 1, token + 1)
    }

    fn join_one(&self, epoll: RawFd, k: usize, token: usize) -> io::Result<()> {
        let add = |flags: i32| {
            let mut ev = libc::epoll_event {
                events: flags as u32,
                u64: token as u64,
            };
            // SAFETY: valid descriptors and a valid event.
            if unsafe { libc::epoll_ctl(epoll, libc::EPOLL_CTL_ADD, self.fds[k], &mut ev) } < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        };
        match add(libc::EPOLLIN | libc::EPOLLEXCLUSIVE) {
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => add(libc::EPOLLIN),
            r => r,
        }
    }

    /// Takes the alarms out of the epoll set `epoll`.
    pub fn leave(&self, epoll: RawFd) -> io::Result<()> {
        for fd in self.fds {
            let mut ev = libc::epoll_event { events: 0, u64: 0 };
            // SAFETY: valid descriptors; the event is ignored by DEL but
            // must be non-null on old kernels.
            if unsafe { libc::epoll_ctl(epoll, libc::EPOLL_CTL_DEL, fd, &mut ev) } < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn epoll() -> RawFd {
        // SAFETY: plain system call.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        assert!(fd >= 0);
        fd
    }

    /// Events ready on `ep` within `ms`, with their data.
    fn wait(ep: RawFd, ms: i32) -> Vec<u64> {
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 4];
        // SAFETY: a valid epoll descriptor and a buffer of 4 events.
        let n = unsafe { libc::epoll_wait(ep, evs.as_mut_ptr(), 4, ms) };
        evs[..n.max(0) as usize].iter().map(|e| e.u64).collect()
    }

    #[test]
    fn it_rings_in_a_joined_loop_with_its_token_and_not_in_one_that_left() {
        let q = QueueAlarm::new().unwrap();
        let (a, b) = (epoll(), epoll());
        q.join(a, 7).unwrap();
        q.join(b, 9).unwrap();
        q.leave(b).unwrap();
        let now = Instant::now();
        q.arm(now + Duration::from_micros(500), now).unwrap();
        assert_eq!(wait(a, 1000), vec![7]);
        assert!(Instant::now() >= now + Duration::from_micros(500));
        // Not read: the backup rings too, BACKUP later.
        std::thread::sleep(BACKUP);
        let mut both = wait(a, 1000);
        both.sort();
        assert_eq!(both, vec![7, 8]);
        assert_eq!(wait(b, 0), Vec::<u64>::new(), "a loop that left was rung");
        q.rang();
        assert_eq!(
            wait(a, 0),
            Vec::<u64>::new(),
            "the rings were not read away"
        );
        // SAFETY: closing descriptors this test opened.
        unsafe {
            libc::close(a);
            libc::close(b);
        }
    }

    #[test]
    fn each_ring_wakes_one_sleeping_loop_not_all() {
        let q = std::sync::Arc::new(QueueAlarm::new().unwrap());
        let eps = [epoll(), epoll(), epoll()];
        for (k, &ep) in eps.iter().enumerate() {
            q.join(ep, 2 * k).unwrap();
        }
        // Three loops asleep on their epoll; none reads the rings away, so
        // a loop the kernel did not wake would see them if they were
        // queued on it too. The first ring wakes one, its backup another.
        let sleepers: Vec<_> = eps
            .iter()
            .map(|&ep| std::thread::spawn(move || wait(ep, 600).len()))
            .collect();
        std::thread::sleep(Duration::from_millis(150));
        let now = Instant::now();
        q.arm(now, now).unwrap();
        let woken: Vec<usize> = sleepers.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(
            woken.iter().filter(|&&n| n > 0).count(),
            2,
            "two rings woke {woken:?} of three sleeping loops"
        );
        for ep in eps {
            // SAFETY: closing descriptors this test opened.
            unsafe { libc::close(ep) };
        }
    }

    #[test]
    fn an_earlier_arrival_moves_it_a_later_one_does_not_and_a_due_ring_is_kept() {
        let q = QueueAlarm::new().unwrap();
        let now = Instant::now();
        let (early, late) = (now + Duration::from_secs(5), now + Duration::from_secs(9));
        q.arm(late, now).unwrap();
        q.arm(early, now).unwrap();
        let armed = |q: &QueueAlarm| {
            let a = q.lock();
            (a[0].armed(), a[1].armed())
        };
        assert_eq!(armed(&q), (Some(early), Some(early + BACKUP)));
        q.arm(late, now).unwrap();
        assert_eq!(armed(&q).0, Some(early), "a later arrival moved it");
        // Once its instant has passed, a ring is due: nothing moves it.
        q.arm(now + Duration::from_secs(20), early).unwrap();
        assert_eq!(armed(&q).0, Some(early));
        // A read with no ring to read changes nothing.
        q.rang();
        assert_eq!(armed(&q), (Some(early), Some(early + BACKUP)));
    }

    #[test]
    fn a_ring_read_twice_leaves_the_alarm_set_anew_in_between() {
        // Several loops may see one ring; the second to read it must not
        // take the next arrival's setting for the ring it came for (it did
        // once: arrivals waited for a transaction to end, p99 lag ×3).
        let q = QueueAlarm::new().unwrap();
        let now = Instant::now();
        q.arm(now, now).unwrap();
        std::thread::sleep(Duration::from_millis(2));
        q.rang(); // the first loop
        assert_eq!(q.lock()[0].armed(), None);
        let next = Instant::now() + Duration::from_secs(5);
        q.arm(next, Instant::now()).unwrap();
        q.rang(); // the second, late
        assert_eq!(
            q.lock()[0].armed(),
            Some(next),
            "the next arrival's alarm was lost"
        );
    }
}
