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

/// Counters per chunk: one chunk covers one power of two.
const CHUNK_LEN: usize = 1024;

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

/// One power of two's worth of counters.
type Chunk = [u64; CHUNK_LEN];

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
        let (chunk, sub) = split(index_of(ns));
        let counters = self.chunk_mut(chunk);
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

/// A zeroed chunk. Only called off the hot path, the first time a power of
/// two is seen.
fn new_chunk() -> Box<Chunk> {
    Box::new([0; CHUNK_LEN])
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
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn empty_histogram_reports_nothing_and_owns_no_heap() {
        let h = Histogram::new();
        assert!(h.is_empty());
        assert_eq!(h.count(), 0);
        assert_eq!(h.min(), None);
        assert_eq!(h.max(), None);
        assert_eq!(h.sum(), 0);
        assert_eq!(h.mean(), None);
        assert_eq!(h.value_at_percentile(50.0), None);
        assert_eq!(h.buckets().count(), 0);
        assert_eq!(h.heap_bytes(), 0);
        assert_eq!(h, Histogram::default());
    }

    #[test]
    fn values_below_2048_are_exact_order_statistics() {
        let mut h = Histogram::new();
        for v in 1..=2047 {
            h.record(v);
        }
        // Rank k of 1..=2047 is the value k; every rank is hit exactly.
        for k in 1..=2047u64 {
            let p = k as f64 * 100.0 / 2047.0;
            assert_eq!(h.value_at_percentile(p), Some(k), "p = {p}");
        }
        assert_eq!(h.value_at_percentile(0.0), Some(1));
        assert_eq!(h.value_at_percentile(50.0), Some(1024)); // ceil(1023.5)
        assert_eq!(h.value_at_percentile(100.0), Some(2047));
        assert!(h.buckets().all(|(low, high, n)| low == high && n == 1));
        assert_eq!(h.buckets().count(), 2047);
        assert_eq!(h.allocated_chunks(), 2);
    }

    #[test]
    fn bucket_of_123456789_holds_it_within_1_in_1024() {
        let v = 123_456_789;
        let mut h = Histogram::new();
        h.record(v);
        let buckets: Vec<_> = h.buckets().collect();
        // 2^26 ≤ v < 2^27: width 2^16, bucket 1883 · 65536.
        assert_eq!(buckets, vec![(123_404_288, 123_469_823, 1)]);
        let (low, high, _) = buckets[0];
        assert!(low <= v && v <= high);
        assert!((high - low + 1) as f64 / low as f64 <= 1.0 / 1024.0);
        // A single value is both min and max: every percentile is exact.
        assert_eq!(h.value_at_percentile(50.0), Some(v));
    }

    #[test]
    fn every_bucket_is_within_1_in_1024_of_its_low() {
        let mut probes = vec![0, 1, 1023, 1024, 2047, 2048, 2049, 4095, 4096];
        probes.extend([1 << 41, MAX_TRACKABLE_NS - 1, MAX_TRACKABLE_NS]);
        let mut v = 2048.0f64;
        while v < MAX_TRACKABLE_NS as f64 {
            probes.push(v as u64);
            v *= 1.0007;
        }
        for ns in probes {
            let i = index_of(ns);
            let (low, width) = (bucket_low(i), bucket_width(i));
            assert!(low <= ns && ns < low + width, "{ns} not in its bucket");
            if ns >= 2048 {
                assert!(width as f64 / low as f64 <= 1.0 / 1024.0, "{ns}: too wide");
            } else {
                assert_eq!(width, 1, "{ns} should be exact");
            }
            assert_eq!(index_of(low), i);
        }
        assert_eq!(index_of(MAX_TRACKABLE_NS), TOP_INDEX);
        assert_eq!(
            bucket_low(TOP_INDEX) + bucket_width(TOP_INDEX) - 1,
            MAX_TRACKABLE_NS
        );
    }

    #[test]
    fn percentiles_of_1_to_100_ms() {
        let mut h = Histogram::new();
        for k in 1..=100 {
            h.record(k * MS);
        }
        let p50 = h.value_at_percentile(50.0).unwrap();
        assert_eq!(p50, 50_003_967); // top of the bucket [49_971_200, 50_003_967]
        assert!((p50 as f64 - 50e6).abs() / 50e6 <= 0.001);
        assert_eq!(h.value_at_percentile(99.0), Some(99_024_895));
        assert_eq!(h.value_at_percentile(99.9), Some(100 * MS)); // rank 100 = max
        assert_eq!(h.value_at_percentile(100.0), Some(100 * MS));
        assert_eq!(h.value_at_percentile(0.0), Some(MS));
        assert_eq!(h.value_at_percentile(-5.0), Some(MS)); // clamped to 0
        assert_eq!(h.value_at_percentile(f64::NAN), None);
        assert_eq!(h.min(), Some(MS));
        assert_eq!(h.max(), Some(100 * MS));
        assert_eq!(h.sum(), 5_050 * MS as u128);
        assert_eq!(h.mean(), Some(50_500_000.0));
    }

    #[test]
    fn merge_equals_recording_everything_into_one() {
        let a_values = [5, 900, 3_000, 40_000, 7 * MS, 7 * MS];
        let b_values = [1, 2_500, 123_456_789, 9 * MS, 60_000 * MS];
        let (mut a, mut b, mut all) = (Histogram::new(), Histogram::new(), Histogram::new());
        for v in a_values {
            a.record(v);
            all.record(v);
        }
        for v in b_values {
            b.record(v);
            all.record(v);
        }
        a.merge(&b);
        assert_eq!(a, all);
        assert_eq!(a.count(), 11);
        assert_eq!(a.min(), Some(1));
        assert_eq!(a.max(), Some(60_000 * MS));
        assert_eq!(a.sum(), all.sum());
        assert_eq!(a.value_at_percentile(50.0), all.value_at_percentile(50.0));

        // Merging into an empty histogram copies; merging an empty one is a no-op.
        let mut copy = Histogram::new();
        copy.merge(&all);
        assert_eq!(copy, all);
        copy.merge(&Histogram::new());
        assert_eq!(copy, all);
    }

    #[test]
    fn reset_keeps_chunks_and_recording_again_allocates_none() {
        let values = [3, 1_500, 80_000, 2 * MS, 450 * MS];
        let mut h = Histogram::new();
        for v in values {
            h.record(v);
        }
        let chunks = h.allocated_chunks();
        assert_eq!(chunks, 5); // chunks 0, 1, 7, 12, 20
        assert_eq!(h.heap_bytes(), 5 * 8192);

        h.reset();
        assert!(h.is_empty());
        assert_eq!((h.min(), h.max(), h.sum()), (None, None, 0));
        assert_eq!(h.buckets().count(), 0);
        assert_eq!(h.allocated_chunks(), chunks);
        assert_eq!(h, Histogram::new()); // zeroed chunks do not count

        for v in values {
            h.record(v);
        }
        assert_eq!(h.allocated_chunks(), chunks);
        let mut fresh = Histogram::new();
        for v in values {
            fresh.record(v);
        }
        assert_eq!(h, fresh);

        // Merging a reset (all-zero) histogram allocates nothing either.
        h.reset();
        let mut target = Histogram::new();
        target.merge(&h);
        assert_eq!(target.allocated_chunks(), 0);
    }

    #[test]
    fn typical_latencies_stay_near_100_kib() {
        // 10 µs to 100 ms: four decades, powers of two 13 to 26.
        let mut h = Histogram::new();
        let mut v = 10_000.0f64;
        while v <= 100.0 * MS as f64 {
            h.record(v as u64);
            v *= 1.01;
        }
        assert_eq!(h.allocated_chunks(), 14);
        assert_eq!(h.heap_bytes(), 114_688);
    }

    #[test]
    fn two_hours_clamp_into_top_bucket_with_exact_max() {
        let two_hours = 7_200_000_000_000;
        let mut h = Histogram::new();
        h.record(1_000);
        h.record_n(two_hours, 2);
        assert_eq!(h.count(), 3);
        assert_eq!(h.max(), Some(two_hours));
        assert_eq!(h.sum(), 14_400_000_001_000);
        assert_eq!(h.value_at_percentile(0.0), Some(1_000));
        // Rank 2 lies in the top bucket, whose highest value is the max.
        assert_eq!(h.value_at_percentile(50.0), Some(two_hours));
        assert_eq!(h.value_at_percentile(100.0), Some(two_hours));
        let top = h.buckets().last().unwrap();
        assert_eq!(top, (bucket_low(TOP_INDEX), two_hours, 2));
        assert_eq!(h.allocated_chunks(), 2);
    }

    #[test]
    fn record_n_zero_records_nothing() {
        let mut h = Histogram::new();
        h.record_n(42, 0);
        assert!(h.is_empty());
        assert_eq!(h.allocated_chunks(), 0);
        h.record_n(42, 3);
        assert_eq!(
            (h.count(), h.sum(), h.min(), h.max()),
            (3, 126, Some(42), Some(42))
        );
    }

    #[test]
    fn serializes_to_the_sparse_form() {
        let mut h = Histogram::new();
        h.record_n(5, 2);
        h.record(3_000);
        let json = serde_json::to_string(&h).unwrap();
        assert_eq!(
            json,
            r#"{"count":3,"min":5,"max":3000,"sum":3010,"buckets":[[5,2],[3000,1]]}"#
        );
        assert_eq!(
            serde_json::to_string(&Histogram::new()).unwrap(),
            r#"{"count":0,"min":null,"max":null,"sum":0,"buckets":[]}"#
        );
    }

    #[test]
    fn serde_round_trip_is_equal() {
        let mut h = Histogram::new();
        for v in [0, 7, 2_047, 2_048, 123_456_789, 42 * MS, 7_200_000_000_000] {
            h.record(v);
        }
        h.record_n(3 * MS, 1_000);
        let back: Histogram = serde_json::from_str(&serde_json::to_string(&h).unwrap()).unwrap();
        assert_eq!(back, h);
        assert_eq!(back.value_at_percentile(99.0), h.value_at_percentile(99.0));
        assert_eq!(back.allocated_chunks(), h.allocated_chunks());

        let empty: Histogram =
            serde_json::from_str(r#"{"count":0,"min":null,"max":null,"sum":0,"buckets":[]}"#)
                .unwrap();
        assert_eq!(empty, Histogram::new());
    }

    #[test]
    fn sum_beyond_u64_serializes_as_a_plain_number() {
        let mut h = Histogram::new();
        h.record_n(u64::MAX, 3);
        assert_eq!(h.sum(), 3 * u64::MAX as u128);
        let json = serde_json::to_string(&h).unwrap();
        assert!(json.contains(r#""sum":55340232221128654845,"#), "{json}");
        let back: Histogram = serde_json::from_str(&json).unwrap();
        assert_eq!(back, h);
    }

    #[test]
    fn deserializing_refuses_inconsistent_data() {
        let bad = [
            // count disagrees with the buckets
            r#"{"count":4,"min":5,"max":3000,"sum":3010,"buckets":[[5,2],[3000,1]]}"#,
            // 3001 is not a bucket bound (buckets are 2 wide there)
            r#"{"count":3,"min":5,"max":3001,"sum":3011,"buckets":[[5,2],[3001,1]]}"#,
            // out of order
            r#"{"count":3,"min":5,"max":3000,"sum":3010,"buckets":[[3000,1],[5,2]]}"#,
            // max outside the last bucket
            r#"{"count":3,"min":5,"max":9000,"sum":3010,"buckets":[[5,2],[3000,1]]}"#,
            // empty with a min
            r#"{"count":0,"min":5,"max":null,"sum":0,"buckets":[]}"#,
            // sum below count · min
            r#"{"count":3,"min":5,"max":3000,"sum":10,"buckets":[[5,2],[3000,1]]}"#,
            // zero count bucket
            r#"{"count":0,"min":null,"max":null,"sum":0,"buckets":[[5,0]]}"#,
        ];
        for json in bad {
            assert!(
                serde_json::from_str::<Histogram>(json).is_err(),
                "accepted {json}"
            );
        }
    }

    #[test]
    fn rank_ignores_floating_point_noise() {
        assert_eq!(rank_of(99.9, 1_000), 999);
        assert_eq!(rank_of(50.0, 3), 2);
        assert_eq!(rank_of(0.0, 10), 1);
        assert_eq!(rank_of(100.0, 10), 10);
        assert_eq!(rank_of(99.99, 10_000), 9_999);
        assert_eq!(rank_of(90.01, 100), 91);
    }
}
