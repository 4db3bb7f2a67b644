//! A histogram's buckets as a short line of text, the form a series file
//! (format `dbsweep-series/2`) and the results store keep an interval's
//! histograms in: a one-second interval of a few hundred transactions has
//! a few hundred non-empty buckets, and as `[low_ns, count]` pairs they are
//! most of its line (about 14 bytes a bucket, against about 3 here).
//!
//! ```text
//! 79036416,10,40x2,=5000,4      [79036416,1],[79691776,1],[82313216,2],[5000,1],[5016,1]
//! ```
//!
//! One token per bucket, in the pairs' order, separated by commas: the
//! bucket's lowest value as a step from the previous bucket's, counted in
//! that previous bucket's width (the first from 0), then `xCOUNT` when the
//! count is not 1. A latency histogram's buckets hold 11 significant bits
//! (`stats::histogram`: a bucket of a value with `b` bits is
//! `2^max(0, b − 11)` wide, and every bucket above it starts on a multiple
//! of that), so neighbouring buckets are a step of 1 and the steps are
//! small numbers. A low value that is not such a step from the previous
//! one (out of order, or not a bucket bound) is written whole, `=LOW`: any
//! list of pairs comes back exactly as it was, so a histogram read back
//! adds into a merge bucket for bucket as the one written.

use std::fmt::Write;

/// The width, in ns, of a bucket whose lowest value is `low`: 1 below
/// 2,048 ns, then doubling with each bit (11 significant bits).
fn width(low: u64) -> u64 {
    let bits = 64 - low.leading_zeros();
    1 << bits.saturating_sub(11)
}

/// The buckets as compact text (see the module docs).
pub fn encode(buckets: &[[u64; 2]]) -> String {
    let mut out = String::with_capacity(buckets.len() * 4);
    let mut previous = 0u64;
    for (k, &[low, count]) in buckets.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        let w = width(previous);
        // Writing to a String cannot fail.
        match low.checked_sub(previous) {
            Some(step) if step % w == 0 => {
                let _ = write!(out, "{}", step / w);
            }
            _ => {
                let _ = write!(out, "={low}");
            }
        }
        if count != 1 {
            let _ = write!(out, "x{count}");
        }
        previous = low;
    }
    out
}

/// The buckets of [`encode`]'s text, exactly; what is not such text is an
/// error naming the token.
pub fn decode(text: &str) -> Result<Vec<[u64; 2]>, String> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::with_capacity(text.len() / 3 + 1);
    let mut previous = 0u64;
    for token in text.split(',') {
        let bad = || {
            format!("histogram bucket '{token}' is neither STEP nor =LOW (each with an optional xCOUNT)")
        };
        let (at, count) = match token.split_once('x') {
            Some((at, n)) => (at, number(n).ok_or_else(bad)?),
            None => (token, 1),
        };
        let low = match at.strip_prefix('=') {
            Some(low) => number(low).ok_or_else(bad)?,
            None => number(at)
                .and_then(|step| step.checked_mul(width(previous)))
                .and_then(|step| step.checked_add(previous))
                .ok_or_else(bad)?,
        };
        out.push([low, count]);
        previous = low;
    }
    Ok(out)
}

/// Decimal digits only (`u64::from_str` would also take a sign).
fn number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn neighbouring_buckets_are_steps_of_one_counted_in_their_width() {
        // 2^26 = 67,108,864: 11 significant bits make its buckets 2^16 wide.
        let b = [
            [67_108_864, 1],
            [67_174_400, 1],
            [67_305_472, 3],
            [5000, 1],
            [5000, 2],
            [0, 0],
        ];
        let text = encode(&b);
        assert_eq!(text, "67108864,1,2x3,=5000,0x2,=0x0");
        assert_eq!(decode(&text).unwrap(), b);
        assert_eq!(encode(&[]), "");
        assert_eq!(decode("").unwrap(), Vec::<[u64; 2]>::new());
    }

    #[test]
    fn the_module_docs_example_holds() {
        let b = [
            [79_036_416, 1],
            [79_691_776, 1],
            [82_313_216, 2],
            [5000, 1],
            [5016, 1],
        ];
        assert_eq!(encode(&b), "79036416,10,40x2,=5000,4");
        assert_eq!(encode(&b[..3]), "79036416,10,40x2");
    }

    #[test]
    fn below_2048_ns_every_nanosecond_is_a_bucket() {
        let b = [[3, 1], [4, 1], [2047, 5], [2048, 1], [2050, 1], [4096, 1]];
        let text = encode(&b);
        assert_eq!(text, "3,1,2043x5,1,1,1023");
        assert_eq!(decode(&text).unwrap(), b);
    }

    #[test]
    fn what_is_not_compact_text_is_refused_naming_the_token() {
        for bad in [
            "1,,2",
            "1,+2",
            "x3",
            "1x",
            "=",
            "1,=x2",
            "18446744073709551616",
        ] {
            let e = decode(bad).unwrap_err();
            assert!(e.contains("histogram bucket '"), "{bad}: {e}");
        }
        // A step that would overflow.
        let e = decode(&format!("{},18446744073709551615", 1u64 << 40)).unwrap_err();
        assert!(e.contains("18446744073709551615"), "{e}");
    }

    proptest! {
        #[test]
        fn any_pairs_come_back_exactly(pairs in proptest::collection::vec(any::<[u64; 2]>(), 0..64)) {
            prop_assert_eq!(decode(&encode(&pairs)).unwrap(), pairs);
        }

        #[test]
        fn ascending_bucket_bounds_come_back_exactly(
            bits in proptest::collection::vec((0u32..42, 0u64..1024, 1u64..5), 0..200)
        ) {
            // Bucket bounds of the 11-significant-bit scheme, ascending.
            let mut lows: Vec<u64> = bits
                .iter()
                .map(|&(b, sub, _)| if b < 11 { sub.min((1 << b) - 1) } else { (1024 + sub) << (b - 10) })
                .collect();
            lows.sort_unstable();
            lows.dedup();
            let pairs: Vec<[u64; 2]> = lows.iter().zip(&bits).map(|(&l, &(_, _, n))| [l, n]).collect();
            let text = encode(&pairs);
            prop_assert!(!text.contains('='), "{}", text);
            prop_assert_eq!(decode(&text).unwrap(), pairs);
        }
    }
}
