//! A run's interval histograms in HdrHistogram's interval log format (the
//! `.hlog` files of `HistogramLogProcessor`, jHiccup, wrk2's and YCSB's
//! users' scripts): what `dbsweep run --hdr-log FILE` writes, so that the
//! latency it measured can be read by the tools that already read
//! HdrHistogram logs.
//!
//! # The log
//!
//! ```text
//! #[Histogram log format version 1.3]
//! #[StartTime: 1700000000.000 (seconds since epoch), 2023-11-14 22:13:20 UTC]
//! #[BaseTime: 1700000000.000 (seconds since epoch)]
//! "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//! 0.000,1.000,0.041,HISTFAAAAC…
//! Tag=warmup,0.000,1.000,0.041,HISTFAAAAC…
//! ```
//!
//! One line per interval: its start in seconds after the base time, its
//! length in seconds, its largest value in milliseconds (the values are
//! nanoseconds, and the max is divided by 1,000,000, the ratio HdrHistogram's
//! own log writer uses by default and its log processor assumes), and the
//! histogram, compressed and in base64. A line may begin with `Tag=NAME,`;
//! readers take the untagged lines unless asked for a tag.
//!
//! # The histogram
//!
//! Each histogram is HdrHistogram's V2 encoding, compressed: the cookie
//! `0x1c849314`, the length of what follows, and zlib's stream of the
//! uncompressed encoding — the cookie `0x1c849313`, the payload's length,
//! a normalizing index offset of 0, the significant digits, the lowest and
//! highest trackable values and an integer-to-double ratio of 1.0 (40
//! bytes, big-endian), then the counts from the first bucket to the last
//! non-empty one, each a ZigZag LEB128 number (at most 9 bytes: the ninth
//! carries 8 bits), a run of k ≥ 2 empty buckets written as −k. (The
//! cookies' `0x10` is the word-size bits every V2 writer sets.)
//!
//! The values are nanoseconds, with [`SIGNIFICANT_DIGITS`] = 3, a lowest
//! value of 1 ns and a highest of [`MAX_TRACKABLE_NS`]: HdrHistogram then
//! has 2,048 sub-buckets and a unit of 1 ns, exactly
//! [`stats::histogram`](super::histogram)'s layout, so each of dbsweep's
//! buckets is one HdrHistogram bucket and its count goes over unchanged.
//! The log adds no error: a value read back from it lies in the bucket
//! that held it — exact below 2,048 ns, within 1/1,024 of itself above —
//! as dbsweep's own percentiles do. Values above the trackable range are
//! in the top bucket, as they are in dbsweep's histogram; the line's max
//! is the exact one.

use std::io::Write;

use base64::Engine;
use flate2::write::ZlibEncoder;

use crate::record;

pub use super::histogram::MAX_TRACKABLE_NS;

/// HdrHistogram's precision for dbsweep's buckets: 3 significant digits
/// give 2,048 sub-buckets (`2 · 10³` rounded up to a power of two).
pub const SIGNIFICANT_DIGITS: u32 = 3;

/// The lowest discernible value: 1 ns, HdrHistogram's unit.
const LOWEST_NS: u64 = 1;

/// log2 of half the sub-buckets (1,024).
const HALF_MAGNITUDE: u32 = 10;

/// The sub-buckets less one, as a mask (2,047).
const SUB_BUCKET_MASK: u64 = (2 << HALF_MAGNITUDE) - 1;

/// The uncompressed V2 encoding's cookie, and the compressed one's.
const V2_COOKIE: u32 = 0x1c84_9303 | 0x10;
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9304 | 0x10;

/// What the interval's max is divided by on its line: nanoseconds to
/// milliseconds.
pub const MAX_VALUE_UNIT_RATIO: f64 = 1e6;

/// The tag of the intervals that lie (at least partly) in the warmup:
/// readers that take the untagged lines see the measured window only.
pub const WARMUP_TAG: &str = "warmup";

/// HdrHistogram's index in its counts array of the bucket holding `ns`
/// (values above [`MAX_TRACKABLE_NS`] in the top bucket).
fn hdr_index(ns: u64) -> usize {
    let v = ns.min(MAX_TRACKABLE_NS);
    // The power of two above v, at least the sub-buckets' 2^11.
    let pow2_ceiling = 64 - (v | SUB_BUCKET_MASK).leading_zeros();
    let bucket = pow2_ceiling - (HALF_MAGNITUDE + 1);
    let sub = (v >> bucket) as usize;
    ((bucket as usize + 1) << HALF_MAGNITUDE) + sub - (1 << HALF_MAGNITUDE)
}

/// Appends `n` ZigZag-encoded as LEB128-64b9B: seven bits a byte, low
/// first, the high bit saying another follows; a ninth byte carries the
/// last eight bits whole.
fn put_zigzag(out: &mut Vec<u8>, n: i64) {
    let mut v = ((n << 1) ^ (n >> 63)) as u64;
    for _ in 0..8 {
        if v < 0x80 {
            out.push(v as u8);
            return;
        }
        out.push((v & 0x7f) as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The counts of `h`'s buckets at HdrHistogram's indices, up to the last
/// non-empty one, runs of empty buckets as their negative length.
fn payload(h: &record::Histogram) -> Vec<u8> {
    let mut out = Vec::new();
    let mut next = 0usize; // the first index not written yet
    let mut pending: Option<(usize, u64)> = None;
    let mut flush = |out: &mut Vec<u8>, (i, n): (usize, u64)| {
        match i - next {
            0 => {}
            1 => put_zigzag(out, 0),
            zeros => put_zigzag(out, -(zeros as i64)),
        }
        put_zigzag(out, n.min(i64::MAX as u64) as i64);
        next = i + 1;
    };
    for &[low, n] in &h.buckets {
        let i = hdr_index(low);
        pending = match pending {
            // Two buckets of one index (only ever the top one) add up.
            Some((j, m)) if j == i => Some((i, m.saturating_add(n))),
            Some(p) => {
                flush(&mut out, p);
                Some((i, n))
            }
            None => Some((i, n)),
        };
    }
    if let Some(p) = pending {
        flush(&mut out, p);
    }
    out
}

/// `h` in HdrHistogram's compressed V2 encoding (see the module docs).
pub fn encode(h: &record::Histogram) -> Vec<u8> {
    let payload = payload(h);
    let mut raw = Vec::with_capacity(40 + payload.len());
    raw.extend_from_slice(&V2_COOKIE.to_be_bytes());
    raw.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    raw.extend_from_slice(&0u32.to_be_bytes()); // normalizing index offset
    raw.extend_from_slice(&SIGNIFICANT_DIGITS.to_be_bytes());
    raw.extend_from_slice(&LOWEST_NS.to_be_bytes());
    raw.extend_from_slice(&MAX_TRACKABLE_NS.to_be_bytes());
    raw.extend_from_slice(&1.0f64.to_be_bytes()); // integer to double ratio
    raw.extend_from_slice(&payload);
    let mut z = ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&raw).expect("writing to memory");
    let compressed = z.finish().expect("writing to memory");
    let mut out = Vec::with_capacity(8 + compressed.len());
    out.extend_from_slice(&V2_COMPRESSED_COOKIE.to_be_bytes());
    out.extend_from_slice(&(compressed.len() as u32).to_be_bytes());
    out.extend_from_slice(&compressed);
    out
}

/// The log's head: its format version, `comments` (each a line of its
/// own after `#`), the start and base time (`start_unix_us`, which the
/// intervals' offsets count from) and the legend.
pub fn header(comments: &[String], start_unix_us: u64) -> String {
    let secs = start_unix_us as f64 / 1e6;
    let (y, mo, d, h, mi, s) = crate::util::civil::from_unix((start_unix_us / 1_000_000) as i64);
    let mut out = String::from("#[Histogram log format version 1.3]\n");
    for c in comments {
        out.push_str(&format!("#{c}\n"));
    }
    out.push_str(&format!(
        "#[StartTime: {secs:.3} (seconds since epoch), {y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02} UTC]\n\
         #[BaseTime: {secs:.3} (seconds since epoch)]\n\
         \"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n"
    ));
    out
}

/// One interval's line: `Tag=NAME,` when tagged, its start after the base
/// time and its length in seconds, its max in milliseconds, its histogram.
pub fn line(tag: Option<&str>, start_s: f64, length_s: f64, h: &record::Histogram) -> String {
    let tag = tag.map_or(String::new(), |t| format!("Tag={t},"));
    let max_ms = h.max.unwrap_or(0) as f64 / MAX_VALUE_UNIT_RATIO;
    let b64 = base64::engine::general_purpose::STANDARD.encode(encode(h));
    format!(
        "{tag}{:.3},{:.3},{max_ms:.3},{b64}\n",
        non_negative(start_s),
        non_negative(length_s)
    )
}

/// `x`, or 0 for anything not above it (rounding's −0.0 included, which
/// would print as `-0.000`: readers take the times as unsigned).
fn non_negative(x: f64) -> f64 {
    if x > 0.0 {
        x
    } else {
        0.0
    }
}

/// The line of one of the record's intervals (its transaction latency),
/// tagged [`WARMUP_TAG`] when it lies in the warmup; `None` for an
/// interval without a histogram (a record older than format 3).
pub fn interval_line(i: &record::Interval) -> Option<String> {
    let h = i.histogram.as_ref()?;
    let tag = i.warmup.then_some(WARMUP_TAG);
    Some(line(tag, i.t_s - i.duration_s, i.duration_s, h))
}

#[cfg(test)]
#[path = "hdrlog_tests.rs"]
mod tests;
