//! Tests of `histogram.rs` (kept apart so the module itself stays short).

use super::*;

const MS: u64 = 1_000_000;

#[test]
fn chunks_given_to_a_spare_come_back_zeroed_for_any_power_of_two() {
    let mut spare = Spare::new();
    let (mut a, mut b) = (Histogram::new(), Histogram::new());
    let mut total = Histogram::new();
    a.record_spare(3 * MS, &mut spare);
    a.record_spare(40 * MS, &mut spare);
    assert_eq!(spare.allocated(), 2);
    // Drained with values: the chunks stay, zeroed.
    a.drain_into_spare(&mut total, &mut spare);
    assert_eq!((a.allocated_chunks(), spare.heap_bytes()), (2, 0));
    // Drained again, unused: both go to the spare, and another histogram
    // takes them for other powers of two without allocating.
    a.drain_into_spare(&mut total, &mut spare);
    assert_eq!((a.allocated_chunks(), spare.heap_bytes()), (0, 2 * 8192));
    b.record_spare(7, &mut spare);
    b.record_spare(900 * MS, &mut spare);
    assert_eq!(spare.allocated(), 2);
    assert_eq!(spare.heap_bytes(), 0);
    let mut want = Histogram::new();
    want.record(7);
    want.record(900 * MS);
    assert_eq!(b, want, "a reused chunk starts from zero");
    let mut want = Histogram::new();
    want.record(3 * MS);
    want.record(40 * MS);
    assert_eq!(total, want);
}

#[test]
fn a_spare_keeps_what_its_busiest_recent_period_took() {
    let mut spare = Spare::new();
    let mut h = Histogram::new();
    let mut total = Histogram::new();
    // A first period over five powers of two, then one.
    for p in 0..5 {
        h.record_spare(MS << p, &mut spare);
    }
    h.drain_into_spare(&mut total, &mut spare);
    h.drain_into_spare(&mut total, &mut spare);
    spare.settle();
    assert_eq!(spare.heap_bytes(), 5 * 8192, "the busiest period took five");
    for _ in 0..63 {
        h.record_spare(MS, &mut spare);
        h.drain_into_spare(&mut total, &mut spare);
        spare.settle();
        assert_eq!(spare.heap_bytes() + h.heap_bytes(), 5 * 8192);
    }
    // 64 periods later the first one is forgotten: the most taken in a
    // period since is the one chunk the second took (in use since).
    h.record_spare(MS, &mut spare);
    h.drain_into_spare(&mut total, &mut spare);
    spare.settle();
    assert_eq!((h.heap_bytes(), spare.heap_bytes()), (8192, 8192));
    assert_eq!(spare.allocated(), 5);
    assert_eq!(total.count(), 5 + 64);
}

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
fn drain_moves_every_value_and_gives_back_the_chunks_left_unused() {
    let mut h = Histogram::new();
    let mut total = Histogram::new();
    let mut direct = Histogram::new();
    // A first period: the body (two powers of two) and one tail value.
    for v in [2 * MS, 3 * MS, 4 * MS, 450 * MS] {
        h.record(v);
        direct.record(v);
    }
    assert_eq!(h.allocated_chunks(), 3);
    h.drain_into(&mut total);
    assert!(h.is_empty());
    assert_eq!(h, Histogram::new());
    // Every chunk held a value: all are kept (zeroed) for the next period.
    assert_eq!(h.allocated_chunks(), 3);
    assert_eq!(total, direct);

    // A second period without the tail: its chunk is given back, the
    // body's stay, and nothing recorded is lost.
    for v in [2 * MS, 4 * MS] {
        h.record(v);
        direct.record(v);
    }
    h.drain_into(&mut total);
    assert_eq!(h.allocated_chunks(), 2);
    assert_eq!(total, direct);
    assert_eq!(total.count(), 6);
    assert_eq!((total.min(), total.max()), (Some(2 * MS), Some(450 * MS)));
    assert_eq!(total.sum(), u128::from(465 * MS));

    // An empty period gives back everything and adds nothing.
    h.drain_into(&mut total);
    assert_eq!(h.allocated_chunks(), 0);
    assert_eq!(total, direct);
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
        serde_json::from_str(r#"{"count":0,"min":null,"max":null,"sum":0,"buckets":[]}"#).unwrap();
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

proptest::proptest! {
    /// The series file's compact buckets (`record::compact`) give back
    /// a recorded histogram exactly: read back, it equals the one written,
    /// and merges into a total bucket for bucket as the original does.
    #[test]
    fn compact_buckets_give_back_recorded_histograms_exactly(
        values in proptest::collection::vec((0u64..50, 1u64..4), 1..300),
        seed in proptest::prelude::any::<u64>(),
    ) {
        use proptest::prelude::*;
        let mut h = Histogram::new();
        let mut x = seed | 1;
        for &(bits, n) in &values {
            // A value of about `bits` bits (up to past the trackable range).
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            h.record_n(x >> (64 - bits.max(1)), n);
        }
        let mut r = record::Histogram::from(&h);
        let text = record::compact::encode(&r.buckets);
        prop_assert!(!text.contains('='), "{}", text);
        r.buckets = record::compact::decode(&text).unwrap();
        let back = Histogram::try_from(&r).unwrap();
        prop_assert_eq!(&back, &h);
        let (mut a, mut b) = (h.clone(), h.clone());
        a.merge(&h);
        b.merge(&back);
        prop_assert_eq!(a, b);
    }
}
