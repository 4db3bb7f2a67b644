//! The encoder read back by an independent decoder: the `hdrhistogram`
//! crate's V2 deserializer and interval log reader.

use super::*;
use crate::stats::histogram::Histogram as Ours;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram as Hdr;

fn decode(bytes: &[u8]) -> Hdr<u64> {
    Deserializer::new()
        .deserialize(&mut &bytes[..])
        .expect("an HdrHistogram V2 compressed histogram")
}

fn literal() -> record::Histogram {
    record::Histogram {
        count: 3,
        min: Some(5),
        max: Some(3000),
        sum: 3010,
        buckets: vec![[5, 2], [3000, 1]],
    }
}

#[test]
fn payload_is_zigzag_leb128_with_runs_of_zeros() {
    // Index 5 after 5 empty buckets: -5 → 9; count 2 → 4. 3000 ns is in
    // [3000, 3001], index 2048 + (1500 - 1024) = 2524, after 2518 empty
    // buckets: -2518 → 5035 = 0x13ab → 0xab 0x27; count 1 → 2.
    assert_eq!(payload(&literal()), [0x09, 0x04, 0xab, 0x27, 0x02]);
    // Buckets next to each other have no run between them; a single empty
    // bucket is a zero.
    let h = record::Histogram {
        count: 3,
        min: Some(0),
        max: Some(3),
        sum: 4,
        buckets: vec![[0, 1], [1, 1], [3, 1]],
    };
    assert_eq!(payload(&h), [0x02, 0x02, 0x00, 0x02]);
}

#[test]
fn zigzag_takes_nine_bytes_at_most() {
    let mut out = Vec::new();
    put_zigzag(&mut out, 63);
    put_zigzag(&mut out, 64);
    put_zigzag(&mut out, -1);
    assert_eq!(out, [0x7e, 0x80, 0x01, 0x01]);
    out.clear();
    put_zigzag(&mut out, i64::MAX);
    assert_eq!(out, [0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
}

#[test]
fn a_literal_histogram_decodes_with_its_counts_and_layout() {
    let bytes = encode(&literal());
    assert_eq!(bytes[..4], [0x1c, 0x84, 0x93, 0x14]);
    let h = decode(&bytes);
    assert_eq!(h.sigfig(), 3);
    assert_eq!(h.low(), 1);
    assert_eq!(h.high(), (1 << 42) - 1);
    assert_eq!(h.len(), 3);
    assert_eq!(h.count_at(5), 2);
    assert_eq!(h.count_at(3000), 1);
    assert_eq!(h.count_at(3001), 1); // the same 2 ns bucket
    assert_eq!(h.count_at(2999), 0);
    assert_eq!(h.min_nz(), 5);
    assert_eq!(h.max(), 3001); // the highest value of the max's bucket
    assert_eq!(h.value_at_quantile(0.5), 5);
}

#[test]
fn an_empty_histogram_and_a_huge_count_decode() {
    assert_eq!(decode(&encode(&record::Histogram::default())).len(), 0);
    let huge = i64::MAX as u64;
    let h = record::Histogram {
        count: huge,
        min: Some(1_000_000),
        max: Some(1_000_000),
        sum: u128::from(huge) * 1_000_000,
        buckets: vec![[999_936, huge]],
    };
    let back = decode(&encode(&h));
    assert_eq!(back.len(), huge);
    assert_eq!(back.count_at(1_000_000), huge);
}

#[test]
fn each_bucket_of_ours_is_one_hdr_bucket() {
    let mut values: Vec<u64> = (0..4100).step_by(3).collect();
    for m in 11..42 {
        let p = 1u64 << m;
        values.extend([p - 1, p, p + 1, p + p / 3, p + p / 1024, 2 * p - 1]);
    }
    let mut ours = Ours::new();
    for &v in &values {
        ours.record(v);
    }
    let back = decode(&encode(&record::Histogram::from(&ours)));
    assert_eq!(back.len(), ours.count());
    let theirs: Vec<(u64, u64, u64)> = back
        .iter_recorded()
        .map(|v| {
            let high = v.value_iterated_to();
            (back.lowest_equivalent(high), high, v.count_at_value())
        })
        .collect();
    assert_eq!(theirs, ours.buckets().collect::<Vec<_>>());
    for &v in &values {
        let (low, high) = (back.lowest_equivalent(v), back.highest_equivalent(v));
        assert!(low <= v && v <= high && (v < 2048 || (high - low) * 1024 < v));
    }
}

#[test]
fn values_above_the_range_are_in_the_top_bucket_with_the_exact_max_on_the_line() {
    let mut ours = Ours::new();
    ours.record(1 << 43);
    let r = record::Histogram::from(&ours);
    let back = decode(&encode(&r));
    assert_eq!(back.len(), 1);
    assert_eq!(back.max(), (1 << 42) - 1);
    let line = line(None, 0.0, 1.0, &r);
    assert!(line.starts_with("0.000,1.000,8796093.022,HISTF"), "{line}");
    // A start a rounding below zero is 0, not "-0.000".
    let h = record::Histogram::default();
    assert!(super::line(None, 1.0 - 1.0000000000000002, 1.0, &h).starts_with("0.000,1.000,0.000,"));
    assert!(super::line(None, -0.0, 1.0, &h).starts_with("0.000,"));
}

#[test]
fn the_log_reads_back_with_times_tags_and_maxima() {
    let interval = |t_s: f64, warmup: bool, h: record::Histogram| record::Interval {
        t_s,
        duration_s: 1.0,
        warmup,
        histogram: Some(h),
        ..record::Run::sample().result.intervals.to_vec()[0].clone()
    };
    let mut text = header(&["dbsweep: a test".to_string()], 1_700_000_000_250_000);
    text += &interval_line(&interval(1.0, true, literal())).unwrap();
    text += &interval_line(&interval(2.5, false, record::Histogram::default())).unwrap();
    assert!(text.starts_with(
        "#[Histogram log format version 1.3]\n#dbsweep: a test\n\
         #[StartTime: 1700000000.250 (seconds since epoch), 2023-11-14 22:13:20 UTC]\n\
         #[BaseTime: 1700000000.250 (seconds since epoch)]\n\
         \"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n\
         Tag=warmup,0.000,1.000,0.003,HISTF"
    ));
    let entries: Vec<LogEntry> = IntervalLogIterator::new(text.as_bytes())
        .collect::<Result<_, _>>()
        .expect("a log the reader parses");
    assert_eq!(entries.len(), 4);
    let secs = |d: std::time::Duration| d.as_secs_f64();
    assert!(matches!(entries[0], LogEntry::StartTime(d) if secs(d) == 1_700_000_000.25));
    assert!(matches!(entries[1], LogEntry::BaseTime(d) if secs(d) == 1_700_000_000.25));
    let LogEntry::Interval(ref warm) = entries[2] else {
        panic!("{:?}", entries[2]);
    };
    assert_eq!(warm.tag().map(|t| t.as_str()), Some(WARMUP_TAG));
    assert_eq!(secs(warm.start_timestamp()), 0.0);
    assert_eq!(secs(warm.duration()), 1.0);
    assert_eq!(warm.max(), 0.003);
    let b = base64::engine::general_purpose::STANDARD
        .decode(warm.encoded_histogram())
        .unwrap();
    assert_eq!(decode(&b).len(), 3);
    let LogEntry::Interval(ref measured) = entries[3] else {
        panic!("{:?}", entries[3]);
    };
    assert!(measured.tag().is_none());
    assert_eq!(secs(measured.start_timestamp()), 1.5);
    assert_eq!(measured.max(), 0.0);
}
