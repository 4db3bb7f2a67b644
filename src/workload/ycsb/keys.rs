//! YCSB's keys: a record number's key name, the order the loader writes
//! them in, the shared sequence a run's inserts take their numbers from,
//! and the request distribution that picks the record an operation reads.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;

use crate::rand::ycsb::{fnvhash64, uniform_below, Hotspot, ScrambledZipfian, SkewedLatest};
use crate::rand::Rng;

/// How record numbers become key names (`insertorder`, `zeropadding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyNames {
    /// `insertorder=hashed` (YCSB's default): the number goes through
    /// FNV-64 first, so consecutive records land all over the key space.
    pub hashed: bool,
    /// Digits the number is padded to with zeros.
    pub zero_padding: u32,
}

impl KeyNames {
    /// YCSB's `buildKeyName`: "user" then the (hashed) number, padded.
    pub fn write(&self, keynum: i64, out: &mut String) {
        out.clear();
        let n = if self.hashed {
            fnvhash64(keynum)
        } else {
            keynum
        };
        out.push_str("user");
        let digits = decimal_digits(n);
        for _ in digits..self.zero_padding {
            out.push('0');
        }
        // Writing into a String with room allocates nothing.
        let _ = write!(out, "{n}");
    }

    pub fn name(&self, keynum: i64) -> String {
        let mut s = String::with_capacity(32);
        self.write(keynum, &mut s);
        s
    }

    /// Records `0..count` in the order of their key names, for the loader:
    /// an index clustered on the key (InnoDB's, SQLite's) is then filled
    /// from left to right instead of at random places. Each name is
    /// compared as packed decimal digits (16 bytes a record, not a String).
    pub fn sorted(&self, count: u32) -> Vec<u32> {
        let mut keyed: Vec<(u128, u32)> =
            (0..count).map(|k| (self.packed(i64::from(k)), k)).collect();
        keyed.sort_unstable();
        keyed.into_iter().map(|(_, k)| k).collect()
    }

    /// The key name's digits (after "user", zeros included) as nibbles
    /// 1..=10 from the top of a u128, 0 after the last: comparing two
    /// packs compares the names as strings, a shorter prefix first.
    fn packed(&self, keynum: i64) -> u128 {
        let mut s = String::with_capacity(32);
        self.write(keynum, &mut s);
        let mut p = 0u128;
        for (i, b) in s.bytes().skip(4).take(31).enumerate() {
            p |= u128::from(b - b'0' + 1) << (124 - 4 * i);
        }
        p
    }
}

/// Decimal digits of `n`'s representation (a minus sign counts as one).
fn decimal_digits(n: i64) -> u32 {
    let sign = u32::from(n < 0);
    sign + n.unsigned_abs().checked_ilog10().map_or(1, |d| d + 1)
}

/// The record numbers a run's inserts take, shared by all its clients
/// (YCSB's `AcknowledgedCounterGenerator`): a number is taken when an
/// insert starts and acknowledged when it ends, and [`InsertKeys::last`]
/// is the highest number below which every taken one is acknowledged —
/// the newest record the request distributions may ask for.
///
/// On several load machines, shard `i` of `n` takes the numbers
/// `start + i`, `start + i + n`, … so that the shards never collide; its
/// `last` follows its own numbers.
#[derive(Debug)]
pub struct InsertKeys {
    next: AtomicI64,
    limit: AtomicI64,
    stride: AtomicI64,
    /// Acknowledged numbers above `limit`, waiting for the gap below them.
    early: Mutex<BTreeSet<i64>>,
}

impl InsertKeys {
    pub fn new(start: i64) -> InsertKeys {
        let k = InsertKeys {
            next: AtomicI64::new(0),
            limit: AtomicI64::new(0),
            stride: AtomicI64::new(1),
            early: Mutex::new(BTreeSet::new()),
        };
        k.reset(start, 0, 1);
        k
    }

    /// Starts over at record `start` (the first one not in the table),
    /// as shard `index` of `count`.
    pub fn reset(&self, start: i64, index: usize, count: usize) {
        let count = count.max(1) as i64;
        let first = start + index as i64;
        self.early.lock().unwrap().clear();
        self.stride.store(count, Ordering::Relaxed);
        self.next.store(first, Ordering::Relaxed);
        // Every record below `start` is in the table; a shard's last is
        // that one until its own first insert is acknowledged.
        self.limit.store(start - 1, Ordering::Release);
    }

    /// The number for an insert about to start.
    pub fn take(&self) -> i64 {
        self.next
            .fetch_add(self.stride.load(Ordering::Relaxed), Ordering::Relaxed)
    }

    /// The insert of `k` ended (done or failed: a failed number is not
    /// retried, and a read of it finds nothing, as in YCSB).
    pub fn ack(&self, k: i64) {
        let stride = self.stride.load(Ordering::Relaxed);
        let mut early = self.early.lock().unwrap();
        early.insert(k);
        let mut limit = self.limit.load(Ordering::Acquire);
        // The next number this shard is owed after `limit`.
        let mut want = self.first_after(limit, stride);
        while early.remove(&want) {
            limit = want;
            want += stride;
        }
        self.limit.store(limit, Ordering::Release);
    }

    /// This shard's first number after `limit`.
    fn first_after(&self, limit: i64, stride: i64) -> i64 {
        let next = self.next.load(Ordering::Relaxed);
        // Numbers this shard takes are congruent to `next` mod stride.
        let phase = next.rem_euclid(stride);
        let mut w = limit + 1;
        w += (phase - w.rem_euclid(stride)).rem_euclid(stride);
        w
    }

    /// The newest record every operation may ask for.
    pub fn last(&self) -> i64 {
        self.limit.load(Ordering::Acquire)
    }
}

/// YCSB's `requestdistribution`, resolved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Request {
    Zipfian,
    Latest,
    Uniform,
    Hotspot { data: f64, opn: f64 },
}

impl Request {
    pub fn parse(s: &str, data: f64, opn: f64) -> Option<Request> {
        Some(match s {
            "zipfian" => Request::Zipfian,
            "latest" => Request::Latest,
            "uniform" => Request::Uniform,
            "hotspot" => Request::Hotspot { data, opn },
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Request::Zipfian => "zipfian",
            Request::Latest => "latest",
            Request::Uniform => "uniform",
            Request::Hotspot { .. } => "hotspot",
        }
    }
}

/// One client's key chooser (YCSB's `keychooser` and `nextKeynum`).
#[derive(Debug, Clone)]
pub enum Chooser {
    Uniform { n: i64 },
    Zipfian(ScrambledZipfian),
    Latest(SkewedLatest),
    Hotspot(Hotspot),
}

impl Chooser {
    /// For `records` loaded records; a zipfian also covers the
    /// `expected_new` records inserts are expected to add (YCSB's
    /// `expectednewkeys`, twice the inserts of `operationcount`);
    /// `latest` is built by the caller once (its zeta is O(records)) and
    /// cloned per client.
    pub fn new(request: Request, records: i64, expected_new: i64, latest: &SkewedLatest) -> Self {
        match request {
            Request::Uniform => Chooser::Uniform { n: records },
            Request::Zipfian => Chooser::Zipfian(ScrambledZipfian::new(0, records + expected_new)),
            Request::Latest => Chooser::Latest(latest.clone()),
            Request::Hotspot { data, opn } => {
                Chooser::Hotspot(Hotspot::new(0, records - 1, data, opn))
            }
        }
    }

    /// A record number at most `last` (YCSB draws again above it: a
    /// zipfian's range runs ahead of the inserts).
    pub fn next(&mut self, last: i64, rng: &mut Rng) -> i64 {
        loop {
            let k = match self {
                Chooser::Uniform { n } => uniform_below(rng, *n),
                Chooser::Zipfian(z) => z.next(rng),
                Chooser::Latest(l) => return l.next(last, rng),
                Chooser::Hotspot(h) => h.next(rng),
            };
            if k <= last {
                return k;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_names_are_ycsbs() {
        let hashed = KeyNames {
            hashed: true,
            zero_padding: 1,
        };
        // YCSB 0.17.0: CoreWorkload.buildKeyName(0, 1, false).
        assert_eq!(hashed.name(0), "user6284781860667377211");
        assert_eq!(hashed.name(1000), "user5952875239596136740");
        let ordered = KeyNames {
            hashed: false,
            zero_padding: 5,
        };
        assert_eq!(ordered.name(42), "user00042");
        assert_eq!(ordered.name(123_456), "user123456");
    }

    #[test]
    fn sorted_is_the_order_of_the_names() {
        for hashed in [true, false] {
            let k = KeyNames {
                hashed,
                zero_padding: 1,
            };
            let order = k.sorted(5000);
            let names: Vec<String> = order.iter().map(|&n| k.name(i64::from(n))).collect();
            assert!(names.windows(2).all(|w| w[0] < w[1]), "hashed={hashed}");
            let mut seen = order.clone();
            seen.sort_unstable();
            assert_eq!(seen, (0..5000).collect::<Vec<_>>());
        }
    }

    #[test]
    fn last_waits_for_the_gap_below() {
        let k = InsertKeys::new(100);
        assert_eq!(k.last(), 99);
        let (a, b, c) = (k.take(), k.take(), k.take());
        assert_eq!((a, b, c), (100, 101, 102));
        k.ack(b);
        assert_eq!(k.last(), 99, "100 is still in flight");
        k.ack(a);
        assert_eq!(k.last(), 101);
        k.ack(c);
        assert_eq!(k.last(), 102);
        k.reset(500, 0, 1);
        assert_eq!((k.take(), k.last()), (500, 499));
    }

    #[test]
    fn shards_take_their_own_numbers() {
        let k = InsertKeys::new(0);
        k.reset(100, 1, 3);
        assert_eq!((k.take(), k.take(), k.take()), (101, 104, 107));
        k.ack(104);
        assert_eq!(k.last(), 99);
        k.ack(101);
        assert_eq!(k.last(), 104);
        k.ack(107);
        assert_eq!(k.last(), 107);
    }

    #[test]
    fn choosers_never_pass_the_last_record() {
        let latest = SkewedLatest::new(999);
        let mut rng = Rng::new(1);
        for r in [
            Request::Zipfian,
            Request::Latest,
            Request::Uniform,
            Request::Hotspot {
                data: 0.2,
                opn: 0.8,
            },
        ] {
            let mut c = Chooser::new(r, 1000, 100, &latest);
            for _ in 0..10_000 {
                let k = c.next(999, &mut rng);
                assert!((0..=999).contains(&k), "{r:?}: {k}");
            }
        }
    }
}
