//! A mergeable, log-linear latency histogram (HdrHistogram's bucket scheme).
//!
//! Values are nanoseconds (`u64`). Buckets follow HdrHistogram with 11
//! sub-bucket bits and a unit of 1 ns:
//!
//! - values below 2048 have a bucket each (exact);
//! - above that, every power of two `[2^m, 2^(m+1))` is split into 1024
//!   equal buckets of width `2^(m-10)`, so a bucket is never wider than
//!   1/1024 of its lowest value: at least 3 significant decimal digits;
//! - the trackable range ends at [`MAX_TRACKABLE_NS`] (2^42 − 1 ns, about
//!   73 minutes, covering the one hour the design asks for). Larger values
//!   are counted in the top bucket; `max` and `sum` still record them exactly.
//!
//! # Memory
//!
//! Counters live in chunks of 1024 `u64` (8 KiB), one chunk per power of two
//! (values below 1024 form chunk 0, `[1024, 2048)` chunk 1, `[2048, 4096)`
//! chunk 2, …; 33 chunks in all). A chunk is allocated the first time a value
//! falls into it, so an empty histogram owns no heap memory, and latencies
//! spanning three to four decades (10 to 14 powers of two) cost 80 to 112 KiB.
//! Recording into an allocated chunk never allocates, and [`Histogram::reset`]
//! keeps the chunks, so a recorder that is reset every interval settles into
//! allocation-free steady state.
//!
//! A histogram that lives as long as the run and is reset now and then
//! would keep, besides the chunks of the latencies' body, a chunk for every
//! power of two a rare tail value ever reached: over hours, and in each of
//! the recorder's shards, that is memory growing with the run's length.
//! Draining it into the run's totals instead ([`Histogram::drain_into`])
//! gives back the chunks that held no value since the last reset, so it
//! holds what one period's latencies need.
//!
//! Given back to a [`Spare`] rather than to the allocator
//! ([`Histogram::drain_into_spare`], [`Histogram::record_spare`]), a chunk
//! is reused by the next histogram of its owner that needs one, for any
//! power of two. A thousand clients' recorder otherwise freed and
//! allocated hundreds of chunks a second — tails come and go in every
//! period — from a thousand threads' malloc arenas, and the arenas'
//! fragmentation grew the process by megabytes an hour while its heap in
//! use stayed flat. With a spare, the owner holds at most the most chunks
//! its histograms ever needed at once (never more than 33 per histogram),
//! and a settled run allocates nothing.
//!
//! # Percentiles
//!
//! [`Histogram::value_at_percentile`] reads the histogram itself, never a
//! sample: it finds the bucket holding the rank `ceil(p/100 · count)` and
//! returns that bucket's highest value, clamped into `[min, max]`. The two
//! extreme ranks are known exactly, so rank 1 returns `min` and rank `count`
//! returns `max`.
//!
//! # Serialized form
//!
//! Serde writes the run record's form ([`record::Histogram`]), a compact
//! sparse form that names buckets by their lowest value, so the stored data
//! can be read without knowing the bucket scheme:
//!
//! ```json
//! {"count":3,"min":5,"max":3000,"sum":3010,"buckets":[[5,2],[3000,1]]}
//! ```
//!
//! `buckets` holds `[low_ns, count]` pairs in ascending order, non-empty
//! buckets only. An empty histogram has `min` and `max` `null`. Reading it
//! back checks that the pairs are real bucket bounds in order and agree with
//! `count`, `min` and `max`.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::record;

pub use super::spare::Spare;
use super::spare::{new_chunk, Chunk, CHUNK_LEN};

/// log2 of [`CHUNK_LEN`].
const CHUNK_BITS: u32 = 10;

/// Number of chunks: chunk 0 holds `[0, 1024)`, chunk `c ≥ 1` holds
/// `[2^(c+9), 2^(c+10))`, so the last one (32) ends at 2^42.
const CHUNKS: usize = 33;

/// The largest value with a bucket of its own: 2^42 − 1 ns, about 73.3
/// minutes. Larger values are counted in the top bucket.
pub const MAX_TRACKABLE_NS: u64 = (1 << 42) - 1;

/// Flat index of the top bucket, where values above [`MAX_TRACKABLE_NS`] go.
const TOP_INDEX: usize = CHUNKS * CHUNK_LEN - 1;

/// A latency histogram in nanoseconds; see the [module docs](self) for the
/// bucket scheme, memory use and percentile definition.
///
/// Equality compares what was recorded (count, min, max, sum and the counts
/// of non-empty buckets), not which chunks happen to be allocated, so a
/// histogram that was reset and refilled equals a fresh one with the same
/// data.
#[derive(Clone)]
pub struct Histogram {
    /// Lazily allocated counters, one chunk per power of two; `None` until a
    /// value falls into it. A fixed array so the directory never reallocates.
    chunks: [Option<Box<Chunk>>; CHUNKS],
    /// Number of recorded values.
    count: u64,
    /// Smallest recorded value, exact; `u64::MAX` while empty.
    min: u64,
    /// Largest recorded value, exact (also above the trackable range); 0
    /// while empty.
    max: u64,
    /// Sum of all recorded values, exact: a u128 cannot overflow for any
    /// realistic run (2^64 values of 2^64 ns each still fit).
    sum: u128,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    /// An empty histogram. Owns no heap memory until the first value.
    pub fn new() -> Self {
        Histogram {
            chunks: std::array::from_fn(|_| None),
            count: 0,
            min: u64::MAX,
            max: 0,
            sum: 0,
        }
    }

    /// Records one value in nanoseconds. Allocates only the first time a
    /// value falls into a new power of two.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.record_n(ns, 1);
    }

    /// Records `n` occurrences of the same value; `n = 0` records nothing.
    /// Counts saturate at `u64::MAX` rather than wrap.
    pub fn record_n(&mut self, ns: u64, n: u64) {
        if n == 0 {
            return;
        }
        self.add(ns, n, new_chunk);
    }

    /// Records one value, taking a missing chunk from `spare` (allocating
    /// only when it has none).
    #[inline]
    pub fn record_spare(&mut self, ns: u64, spare: &mut Spare) {
        self.add(ns, 1, || spare.take());
    }

    #[inline]
    fn add(&mut self, ns: u64, n: u64, chunk: impl FnOnce() -> Box<Chunk>) {
        let (c, sub) = split(index_of(ns));
        let counters = self.chunks[c].get_or_insert_with(chunk);
        counters[sub] = counters[sub].saturating_add(n);
        self.count = self.count.saturating_add(n);
        self.sum += u128::from(ns) * u128::from(n);
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
    }

    /// Number of recorded values.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// True when nothing was recorded (since creation or the last reset).
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The smallest recorded value, exact; `None` when empty.
    pub fn min(&self) -> Option<u64> {
        (!self.is_empty()).then_some(self.min)
    }

    /// The largest recorded value, exact even above [`MAX_TRACKABLE_NS`];
    /// `None` when empty.
    pub fn max(&self) -> Option<u64> {
        (!self.is_empty()).then_some(self.max)
    }

    /// The exact sum of all recorded values in nanoseconds (0 when empty).
    pub fn sum(&self) -> u128 {
        self.sum
    }

    /// The exact arithmetic mean in nanoseconds (from `sum / count`, not from
    /// the buckets); `None` when empty.
    pub fn mean(&self) -> Option<f64> {
        (!self.is_empty()).then(|| self.sum as f64 / self.count as f64)
    }

    /// The value at percentile `p` (0 to 100; values outside are clamped):
    /// the highest value of the bucket holding rank `ceil(p/100 · count)`
    /// (at least 1), clamped into `[min, max]`. Rank 1 is `min` and rank
    /// `count` is `max`, both exact, so `p = 0` gives `min` and `p = 100`
    /// gives `max`. `None` when empty or when `p` is NaN.
    pub fn value_at_percentile(&self, p: f64) -> Option<u64> {
        if self.is_empty() || p.is_nan() {
            return None;
        }
        let rank = rank_of(p, self.count);
        if rank <= 1 {
            return Some(self.min);
        }
        if rank >= self.count {
            return Some(self.max);
        }
        let mut seen = 0u64;
        for (c, chunk) in self.allocated() {
            // Skip whole chunks first: summing 1024 counters is cheap and
            // most chunks lie entirely below the rank.
            let total = chunk.iter().fold(0u64, |a, &n| a.saturating_add(n));
            if seen.saturating_add(total) < rank {
                seen = seen.saturating_add(total);
                continue;
            }
            for (s, &n) in chunk.iter().enumerate() {
                seen = seen.saturating_add(n);
                if n > 0 && seen >= rank {
                    let high = self.bucket_high(c * CHUNK_LEN + s);
                    return Some(high.clamp(self.min, self.max));
                }
            }
        }
        // Only reachable if counters saturated and no longer add up.
        Some(self.max)
    }

    /// Adds everything recorded in `other` to `self`, as if every value had
    /// been recorded here. Allocates only chunks that `other` has non-zero
    /// counts in and `self` lacks.
    pub fn merge(&mut self, other: &Histogram) {
        if other.is_empty() {
            return;
        }
        for (c, theirs) in other.allocated() {
            if theirs.iter().all(|&n| n == 0) {
                continue; // a reset chunk: nothing to add, nothing to allocate
            }
            let ours = self.chunk_mut(c);
            for (a, &b) in ours.iter_mut().zip(theirs.iter()) {
                *a = a.saturating_add(b);
            }
        }
        self.count = self.count.saturating_add(other.count);
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Forgets every recorded value but keeps the allocated chunks (zeroed),
    /// so recording the same range again allocates nothing.
    pub fn reset(&mut self) {
        for chunk in self.chunks.iter_mut().flatten() {
            chunk.fill(0);
        }
        self.count = 0;
        self.min = u64::MAX;
        self.max = 0;
        self.sum = 0;
    }

    /// Moves everything recorded here into `dst` (as [`Histogram::merge`]
    /// would add it) and forgets it here, as [`Histogram::reset`] does,
    /// except that the chunks that held no value since the last reset are
    /// freed rather than kept: a tail value's chunk is given back one period
    /// after it was used, while the chunks the body of the latencies uses
    /// every period stay, so recording into them allocates nothing.
    pub fn drain_into(&mut self, dst: &mut Histogram) {
        self.drain(dst, drop);
    }

    /// [`Histogram::drain_into`], the chunks that held no value given to
    /// `spare` (zeroed) instead of freed.
    pub fn drain_into_spare(&mut self, dst: &mut Histogram, spare: &mut Spare) {
        self.drain(dst, |c| spare.give(c));
    }

    fn drain(&mut self, dst: &mut Histogram, mut give_back: impl FnMut(Box<Chunk>)) {
        for (c, slot) in self.chunks.iter_mut().enumerate() {
            let Some(ours) = slot.as_deref_mut() else {
                continue;
            };
            if ours.iter().all(|&n| n == 0) {
                give_back(slot.take().expect("an allocated chunk"));
                continue;
            }
            let theirs = dst.chunk_mut(c);
            for (a, b) in theirs.iter_mut().zip(ours.iter_mut()) {
                *a = a.saturating_add(*b);
                *b = 0;
            }
        }
        if !self.is_empty() {
            dst.count = dst.count.saturating_add(self.count);
            dst.sum += self.sum;
            dst.min = dst.min.min(self.min);
            dst.max = dst.max.max(self.max);
        }
        self.count = 0;
        self.min = u64::MAX;
        self.max = 0;
        self.sum = 0;
    }

    /// The non-empty buckets in ascending order as `(low_ns, high_ns, count)`,
    /// both bounds inclusive: the data for CDF and distribution plots. The
    /// top bucket's `high_ns` is raised to `max` when values above
    /// [`MAX_TRACKABLE_NS`] were clamped into it, so it still holds them.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.non_empty()
            .map(|(i, n)| (bucket_low(i), self.bucket_high(i), n))
    }

    /// Number of allocated 8 KiB chunks: the observable behind the memory
    /// guarantees (reset keeps them; recording into them allocates nothing).
    pub fn allocated_chunks(&self) -> usize {
        self.chunks.iter().flatten().count()
    }

    /// Heap bytes owned by this histogram (its allocated chunks).
    pub fn heap_bytes(&self) -> usize {
        self.allocated_chunks() * std::mem::size_of::<Chunk>()
    }

    /// The counters of chunk `c`, allocating it the first time.
    #[inline]
    fn chunk_mut(&mut self, c: usize) -> &mut Chunk {
        self.chunks[c].get_or_insert_with(new_chunk)
    }

    /// The allocated chunks with their chunk numbers, in ascending order.
    fn allocated(&self) -> impl Iterator<Item = (usize, &Chunk)> + '_ {
        self.chunks
            .iter()
            .enumerate()
            .filter_map(|(c, chunk)| chunk.as_deref().map(|chunk| (c, chunk)))
    }

    /// `(flat bucket index, count)` of every non-empty bucket, ascending.
    fn non_empty(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.allocated().flat_map(|(c, chunk)| {
            chunk
                .iter()
                .enumerate()
                .filter(|&(_, &n)| n > 0)
                .map(move |(s, &n)| (c * CHUNK_LEN + s, n))
        })
    }

    /// Highest value of bucket `i`; for the top bucket, at least `max`,
    /// since clamped values larger than its nominal bound are counted there.
    fn bucket_high(&self, i: usize) -> u64 {
        let high = bucket_low(i) + bucket_width(i) - 1;
        if i == TOP_INDEX {
            high.max(self.max)
        } else {
            high
        }
    }
}

impl PartialEq for Histogram {
    fn eq(&self, other: &Self) -> bool {
        self.count == other.count
            && self.sum == other.sum
            && self.min() == other.min()
            && self.max() == other.max()
            && self.non_empty().eq(other.non_empty())
    }
}

impl Eq for Histogram {}

impl fmt::Debug for Histogram {
    // Printing 1024 counters per chunk would bury the content; show the
    // exact figures and the non-empty buckets instead.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Histogram")
            .field("count", &self.count)
            .field("min", &self.min())
            .field("max", &self.max())
            .field("sum", &self.sum)
            .field("allocated_chunks", &self.allocated_chunks())
            .field("buckets", &self.buckets().collect::<Vec<_>>())
            .finish()
    }
}

/// The flat bucket index (`chunk * 1024 + sub-bucket`) holding `ns`.
#[inline]
fn index_of(ns: u64) -> usize {
    if ns < CHUNK_LEN as u64 {
        return ns as usize;
    }
    if ns > MAX_TRACKABLE_NS {
        return TOP_INDEX;
    }
    let magnitude = 63 - ns.leading_zeros(); // floor(log2 ns), 10..=41
    let chunk = (magnitude - CHUNK_BITS + 1) as usize; // 1..=32
    let shift = magnitude - CHUNK_BITS; // bucket width is 2^shift
    let sub = (ns >> shift) as usize - CHUNK_LEN; // 0..1024
    chunk * CHUNK_LEN + sub
}

/// Splits a flat index into (chunk, sub-bucket).
#[inline]
fn split(i: usize) -> (usize, usize) {
    (i / CHUNK_LEN, i % CHUNK_LEN)
}

/// Lowest value of bucket `i`.
fn bucket_low(i: usize) -> u64 {
    let (chunk, sub) = split(i);
    if chunk == 0 {
        sub as u64
    } else {
        ((CHUNK_LEN + sub) as u64) << (chunk - 1)
    }
}

/// Width of bucket `i` in nanoseconds (1 for the exact range).
fn bucket_width(i: usize) -> u64 {
    let (chunk, _) = split(i);
    1 << chunk.saturating_sub(1)
}

/// The 1-based rank for percentile `p` among `count` values:
/// `ceil(p/100 · count)`, at least 1 and at most `count`.
///
/// `p/100 · count` is computed in floating point, where e.g. 99.9 % of 1000
/// may come out as 999.0000000000001; a result within rounding noise of a
/// whole number is taken as that number, so the rank is not pushed one up.
fn rank_of(p: f64, count: u64) -> u64 {
    let x = p.clamp(0.0, 100.0) / 100.0 * count as f64;
    let nearest = x.round();
    let rank = if (x - nearest).abs() <= x.max(1.0) * 1e-12 {
        nearest
    } else {
        x.ceil()
    };
    (rank as u64).clamp(1, count)
}

impl From<&Histogram> for record::Histogram {
    fn from(h: &Histogram) -> record::Histogram {
        record::Histogram {
            count: h.count,
            min: h.min(),
            max: h.max(),
            sum: h.sum,
            buckets: h.non_empty().map(|(i, n)| [bucket_low(i), n]).collect(),
        }
    }
}

impl TryFrom<&record::Histogram> for Histogram {
    type Error = String;

    fn try_from(r: &record::Histogram) -> Result<Histogram, String> {
        Histogram::from_sparse(r)
    }
}

impl Serialize for Histogram {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        record::Histogram::from(self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Histogram {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let sparse = record::Histogram::deserialize(deserializer)?;
        Histogram::from_sparse(&sparse).map_err(serde::de::Error::custom)
    }
}

impl Histogram {
    /// Rebuilds a histogram from its recorded form, checking that the
    /// parts agree so a corrupted record is refused rather than merged.
    fn from_sparse(s: &record::Histogram) -> Result<Histogram, String> {
        let mut h = Histogram::new();
        let mut previous: Option<usize> = None;
        for &[low, n] in &s.buckets {
            let i = index_of(low);
            if bucket_low(i) != low {
                return Err(format!("histogram bucket {low} ns is not a bucket bound"));
            }
            if previous.is_some_and(|p| p >= i) {
                return Err(format!("histogram bucket {low} ns is out of order"));
            }
            if n == 0 {
                return Err(format!("histogram bucket {low} ns has a zero count"));
            }
            previous = Some(i);
            let (chunk, sub) = split(i);
            h.chunk_mut(chunk)[sub] = n;
            h.count = h.count.saturating_add(n);
        }
        if h.count != s.count {
            return Err(format!(
                "histogram count {} disagrees with its buckets' total {}",
                s.count, h.count
            ));
        }
        match (s.count, s.min, s.max) {
            (0, None, None) if s.sum == 0 => {}
            (0, ..) => return Err("empty histogram with min, max or sum".to_string()),
            (_, Some(min), Some(max)) if min <= max => {
                let first = h.non_empty().next().map(|(i, _)| i);
                let last = h.non_empty().last().map(|(i, _)| i);
                if first != Some(index_of(min)) || last != Some(index_of(max)) {
                    return Err(format!(
                        "histogram min {min} or max {max} lies outside its buckets"
                    ));
                }
                let count = u128::from(s.count);
                if s.sum < u128::from(min) * count || s.sum > u128::from(max) * count {
                    return Err(format!("histogram sum {} is impossible", s.sum));
                }
                h.min = min;
                h.max = max;
                h.sum = s.sum;
            }
            _ => return Err("histogram min and max missing or reversed".to_string()),
        }
        Ok(h)
    }
}

#[cfg(test)]
#[path = "histogram_tests.rs"]
mod tests;
