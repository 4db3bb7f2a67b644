//! The users of a pool (`--users` above `--threads`), as the pacing's
//! queue keeps them: each user is a timer — when it next wants a connection
//! — in a heap, and a stream of its own for its think times. Nothing else:
//! a user's workload state (DBT-1's session) lives in the workload.
//!
//! A run may hold a hundred million users, so two things matter: a user is
//! 20 bytes ([`BYTES_PER_USER`]: a 12-byte heap entry and an 8-byte
//! stream), and the pool is built before the clients are released, not
//! inside the measured window (a 2 s window that spent its first seconds
//! building users would report the client's set-up as the server's
//! throughput). What the users would need is checked against the memory
//! available before anything starts ([`memory_shortfall`]).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::mem::size_of;

use crate::rand::pacing::ThinkTime;
use crate::rand::SmallRng;

/// A user's place in the heap: its wake time in ns from the run's start,
/// split in two halves so the entry is 12 bytes (a `(u64, u32)` pads to
/// 16). Fields compare in order: by wake time, then by user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    hi: u32,
    lo: u32,
    user: u32,
}

impl Entry {
    fn new(ns: u64, user: u32) -> Entry {
        Entry {
            hi: (ns >> 32) as u32,
            lo: ns as u32,
            user,
        }
    }

    fn ns(self) -> u64 {
        (u64::from(self.hi) << 32) | u64::from(self.lo)
    }
}

/// What the pool keeps for each user.
pub const BYTES_PER_USER: usize = size_of::<Entry>() + size_of::<SmallRng>();

/// Users numbered 0, 1, … are `u32`s.
pub const MAX_USERS: u64 = u32::MAX as u64;

/// Every user of a pool: who is due when, and their think times.
pub(super) struct Users {
    /// Every thinking or waiting user (a user in a transaction is not in
    /// it); a min-heap through `Reverse`.
    heap: BinaryHeap<Reverse<Entry>>,
    streams: Vec<SmallRng>,
    think: Option<ThinkTime>,
}

impl Users {
    /// `users` users, all due at the start or, with a `ramp_up` rate, one
    /// after another from it (each starts with a transaction, then
    /// thinks), each with its own stream of `seed`.
    pub fn new(users: usize, think: Option<ThinkTime>, ramp_up: Option<f64>, seed: u64) -> Users {
        assert!(users as u64 <= MAX_USERS, "{users} users");
        let start = |u: u32| ramp_up.map_or(0, |r| (f64::from(u) / r * 1e9) as u64);
        // Exactly `users` of each: the heap never holds a user twice, so it
        // never grows, and the memory is what `BYTES_PER_USER` says.
        let mut entries = Vec::with_capacity(users);
        entries.extend((0..users as u32).map(|u| Reverse(Entry::new(start(u), u))));
        let mut streams = Vec::with_capacity(users);
        streams.extend((0..users as u64).map(|u| SmallRng::for_index(seed ^ 0x7573_6572, u)));
        Users {
            // In order of wake time already: a heap as it stands, checked
            // in one pass.
            heap: BinaryHeap::from(entries),
            streams,
            think,
        }
    }

    /// When the next user is due (ns from the start); None when every user
    /// is in a transaction.
    pub fn due(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse(e)| e.ns())
    }

    /// The next user due, out of the heap.
    pub fn pop(&mut self) -> Option<u32> {
        self.heap.pop().map(|Reverse(e)| e.user)
    }

    /// A user's transaction ended at `now_ns`: it thinks, then is due
    /// again. True when it is now the earliest due.
    pub fn done(&mut self, user: u32, now_ns: u64, pause: Option<std::time::Duration>) -> bool {
        // The workload's own pause (TPC-C's keying and think times for the
        // type it drew next) stands for the run's think time.
        let pause = match pause {
            Some(p) => p.as_nanos() as u64,
            None => self.think.map_or(0, |t| {
                t.at(self.streams[user as usize].next_f64()).as_nanos() as u64
            }),
        };
        let wake = now_ns.saturating_add(pause);
        let earlier = self.due().is_none_or(|t| wake < t);
        self.heap.push(Reverse(Entry::new(wake, user)));
        earlier
    }

    /// Users due in [`from_ns`, `to_ns`) and not in a transaction. The
    /// heap is searched from its root and a subtree due at or after `to`
    /// is skipped whole, so the cost is the users due before `to`, not
    /// every user.
    pub fn due_between(&self, from_ns: u64, to_ns: u64) -> u64 {
        let v = self.heap.as_slice();
        let mut n = 0;
        let mut stack = vec![0usize];
        while let Some(i) = stack.pop() {
            let Some(Reverse(e)) = v.get(i) else {
                continue;
            };
            let t = e.ns();
            if t >= to_ns {
                continue;
            }
            n += u64::from(t >= from_ns);
            stack.push(2 * i + 1);
            stack.push(2 * i + 2);
        }
        n
    }

    /// Users stop thinking (a test's change of plan).
    #[cfg(test)]
    pub fn no_think(&mut self) {
        self.think = None;
    }

    /// The pool's memory, from what it holds.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.heap.capacity() * size_of::<Reverse<Entry>>()
            + self.streams.capacity() * size_of::<SmallRng>()
    }
}

/// Why `users` users (each `BYTES_PER_USER` here and `workload_bytes` in
/// the workload, `workload_what` naming what) would not fit in the memory
/// the machine has available (`MemAvailable` in `meminfo`, the text of
/// /proc/meminfo), if they would not. None when it cannot be read.
pub fn memory_shortfall(
    users: u64,
    workload_bytes: u64,
    workload_what: &str,
    meminfo: &str,
) -> Option<String> {
    let available = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())?
        .saturating_mul(1024);
    let per = BYTES_PER_USER as u64 + workload_bytes;
    let need = users.saturating_mul(per);
    if need <= available {
        return None;
    }
    let fit = available / per;
    let what = if workload_bytes > 0 {
        format!(
            ": {BYTES_PER_USER} for its timer and think times, {workload_bytes} for {workload_what}"
        )
    } else {
        ", for its timer and think times".to_string()
    };
    Some(format!(
        "--users {} would need about {} of memory ({per} bytes a user{what}), but the machine has {} available (MemAvailable in /proc/meminfo): at most {} users fit; lower --users (--eus), or free memory first",
        group(users),
        size(need),
        size(available),
        group(fit)
    ))
}

/// 1234567 → "1,234,567".
fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes as people read them: "4.7 GB", "483 MB".
fn size(bytes: u64) -> String {
    let b = bytes as f64;
    match bytes {
        0..1_000_000 => format!("{:.0} kB", b / 1e3),
        1_000_000..1_000_000_000 => format!("{:.0} MB", b / 1e6),
        _ => format!("{:.1} GB", b / 1e9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_user_is_twenty_bytes_and_the_pool_holds_no_more() {
        assert_eq!(size_of::<Reverse<Entry>>(), 12);
        assert_eq!(BYTES_PER_USER, 20);
        let mut u = Users::new(1000, None, None, 1);
        assert_eq!(u.bytes(), 1000 * BYTES_PER_USER);
        // Every user taken and returned: the heap never grows past them.
        let all: Vec<u32> = (0..1000).map(|_| u.pop().unwrap()).collect();
        assert_eq!(all, (0..1000).collect::<Vec<_>>(), "in user order at 0");
        for user in all {
            u.done(user, 5, None);
        }
        assert_eq!(u.bytes(), 1000 * BYTES_PER_USER);
    }

    #[test]
    fn users_come_in_order_of_wake_time_and_ramp_up() {
        // 10 a second: user k is due at k × 100 ms.
        let mut u = Users::new(5, None, Some(10.0), 1);
        for k in 0..5u64 {
            assert_eq!(u.due(), Some(k * 100_000_000));
            assert_eq!(u.pop(), Some(k as u32));
        }
        assert_eq!(u.due(), None, "all in transactions");
        // Wake times beyond 2^32 ns (4.3 s) keep their order.
        let late = 10 * 1_000_000_000;
        assert!(u.done(3, late, None));
        assert!(u.done(1, 5_000_000_000, None));
        assert!(!u.done(2, late, None));
        assert_eq!(u.pop(), Some(1));
        assert_eq!(u.due(), Some(late));
        assert_eq!(u.pop(), Some(2), "ties by user");
        assert_eq!(u.pop(), Some(3));
    }

    #[test]
    fn think_times_come_from_each_users_stream() {
        let think = ThinkTime::Uniform(Duration::from_millis(10), Duration::from_millis(20));
        let mut a = Users::new(3, Some(think), None, 9);
        let mut b = Users::new(3, Some(think), None, 9);
        let wake = |u: &mut Users, user: u32| {
            while u.pop().is_some() {}
            u.done(user, 0, None);
            u.due().unwrap()
        };
        let (a1, b1) = (wake(&mut a, 1), wake(&mut b, 1));
        assert_eq!(a1, b1, "the seed's");
        assert!((10_000_000..=20_000_000).contains(&a1));
        // User 2's first pause is not user 1's.
        assert_ne!(wake(&mut a, 2), a1);
    }

    #[test]
    fn due_users_are_counted_without_visiting_the_rest() {
        let mut u = Users::new(100_000, None, Some(1000.0), 1);
        // User k is due at k ms: [10 ms, 20 ms) holds ten.
        assert_eq!(u.due_between(10_000_000, 20_000_000), 10);
        assert_eq!(u.due_between(0, 1), 1);
        assert_eq!(u.due_between(0, u64::MAX), 100_000);
        u.pop();
        assert_eq!(u.due_between(0, 1), 0, "a user in a transaction is not due");
    }

    #[test]
    fn too_many_users_for_the_memory_are_refused_with_how_many_fit() {
        let meminfo = "MemTotal: 4000000 kB\nMemAvailable:    1000000 kB\n";
        // 1,024,000,000 bytes: 51,200,000 users of 20 bytes.
        assert!(memory_shortfall(51_200_000, 0, "", meminfo).is_none());
        let e = memory_shortfall(100_000_000, 0, "", meminfo).unwrap();
        assert!(e.contains("--users 100,000,000"), "{e}");
        assert!(e.contains("2.0 GB"), "{e}");
        assert!(e.contains("1.0 GB available"), "{e}");
        assert!(e.contains("at most 51,200,000 users fit"), "{e}");
        let e = memory_shortfall(10_000_000, 780, "its DBT-1 session", meminfo).unwrap();
        assert!(e.contains("800 bytes a user"), "{e}");
        assert!(e.contains("780 for its DBT-1 session"), "{e}");
        assert!(e.contains("at most 1,280,000 users fit"), "{e}");
        // Unknown memory refuses nothing.
        assert!(memory_shortfall(u64::MAX, 0, "", "MemTotal: 1 kB\n").is_none());
    }
}
