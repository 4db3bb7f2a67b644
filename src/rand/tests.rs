//! Tests of `rand/mod.rs` (kept apart so the module itself stays short).

use super::*;
use std::collections::HashSet;
use std::sync::Arc;

#[test]
fn splitmix64_matches_the_published_first_outputs() {
    let mut state = 0;
    assert_eq!(splitmix64_next(&mut state), 0xe220_a839_7b1d_cdaf);
    assert_eq!(splitmix64_next(&mut state), 0x6e78_9e6a_a1b9_65f4);
}

#[test]
fn xoshiro256starstar_matches_the_published_vector() {
    // Reference outputs from state {1, 2, 3, 4} (Blackman and Vigna's C
    // code, as quoted in the rand_xoshiro crate's tests).
    let mut rng = Rng::from_state([1, 2, 3, 4]);
    let got: Vec<u64> = (0..6).map(|_| rng.next_u64()).collect();
    assert_eq!(
        got,
        [
            11520,
            0,
            1509978240,
            1215971899390074240,
            1216172134540287360,
            607988272756665600
        ]
    );
}

#[test]
fn same_seed_gives_same_stream() {
    let mut a = Rng::new(42);
    let mut b = Rng::new(42);
    for _ in 0..1000 {
        assert_eq!(a.next_u64(), b.next_u64());
    }
    let mut c = Rng::for_client(42, 3);
    let mut d = Rng::for_client(42, 3);
    for _ in 0..1000 {
        assert_eq!(c.next_u64(), d.next_u64());
    }
    // A different seed gives a different stream.
    let mut e = Rng::new(43);
    let mut a = Rng::new(42);
    assert!((0..10).any(|_| a.next_u64() != e.next_u64()));
}

#[test]
fn client_streams_differ_and_are_uncorrelated() {
    let first: Vec<Vec<u64>> = (0..64)
        .map(|c| {
            let mut r = Rng::for_client(7, c);
            (0..16).map(|_| r.next_u64()).collect()
        })
        .collect();
    // No two clients share any of their first 16 outputs.
    let all: HashSet<u64> = first.iter().flatten().copied().collect();
    assert_eq!(all.len(), 64 * 16);
    // Client 0 is not simply the stream of `Rng::new(seed)`.
    let mut plain = Rng::new(7);
    assert_ne!(first[0][0], plain.next_u64());

    // Uncorrelated: the sign agreement of client 0 and 1's doubles
    // around 0.5 is ~50 % (sd 0.5 / sqrt(20000) = 0.0035).
    let mut r0 = Rng::for_client(7, 0);
    let mut r1 = Rng::for_client(7, 1);
    let n = 20_000;
    let agree = (0..n)
        .filter(|_| (r0.next_f64() < 0.5) == (r1.next_f64() < 0.5))
        .count();
    let share = agree as f64 / n as f64;
    assert!((share - 0.5).abs() < 0.02, "agreement {share}");
}

#[test]
fn next_f64_is_in_unit_interval_with_mean_one_half() {
    let mut rng = Rng::new(1);
    let n = 1_000_000;
    let mut sum = 0.0;
    for _ in 0..n {
        let x = rng.next_f64();
        assert!((0.0..1.0).contains(&x), "{x}");
        sum += x;
    }
    // The standard error of the mean is 0.289 / 1000 = 0.0003.
    let mean = sum / n as f64;
    assert!((mean - 0.5).abs() < 0.002, "mean {mean}");
}

#[test]
fn small_streams_are_uniform_and_apart() {
    // Neighbouring streams (users 0, 1, 2, …) are unrelated: their first
    // draws are as spread as one stream's successive draws.
    let n = 200_000u64;
    let firsts: Vec<f64> = (0..n)
        .map(|u| SmallRng::for_index(7, u).next_f64())
        .collect();
    let mean = firsts.iter().sum::<f64>() / n as f64;
    // Standard error 0.289 / 447 = 0.00065.
    assert!((mean - 0.5).abs() < 0.004, "mean {mean}");
    let below = firsts.iter().filter(|&&x| x < 0.1).count() as f64 / n as f64;
    assert!((below - 0.1).abs() < 0.005, "{below} below 0.1");
    let mut a = SmallRng::for_index(7, 3);
    let b = a;
    a.next_f64();
    assert_ne!(a, b, "a draw moves the stream");
    assert_ne!(SmallRng::for_index(7, 3), SmallRng::for_index(8, 3));
}

#[test]
fn push_chars_gives_uniform_independent_characters() {
    let mut rng = Rng::new(11);
    let mut s = String::new();
    rng.push_chars(ALNUM, 7, &mut s);
    rng.push_chars(DIGITS, 23, &mut s);
    assert_eq!(s.len(), 30);
    assert!(s[..7].bytes().all(|b| ALNUM.contains(&b)), "{s}");
    assert!(s[7..].bytes().all(|b| b.is_ascii_digit()), "{s}");
    // Pairs of neighbours (within a draw and across draws, since a
    // string of 11 spans three): 62^2 cells, ~130 draws each. With
    // 3843 degrees of freedom the 0.1 % critical value is about 4129;
    // every symbol's own count is checked the same way (61: 100.9).
    let k = ALNUM.len();
    let at = |b: u8| ALNUM.iter().position(|&a| a == b).unwrap();
    let (mut pairs, mut singles) = (vec![0u64; k * k], vec![0u64; k]);
    let mut n_pairs = 0u64;
    for _ in 0..50_000 {
        s.clear();
        rng.push_chars(ALNUM, 11, &mut s);
        let b = s.as_bytes();
        for w in b.windows(2) {
            pairs[at(w[0]) * k + at(w[1])] += 1;
            n_pairs += 1;
        }
        b.iter().for_each(|&c| singles[at(c)] += 1);
    }
    let chi2 = |counts: &[u64]| {
        let total: u64 = counts.iter().sum();
        let e = total as f64 / counts.len() as f64;
        counts
            .iter()
            .map(|&c| (c as f64 - e).powi(2) / e)
            .sum::<f64>()
    };
    assert_eq!(n_pairs, 500_000);
    assert!(chi2(&pairs) < 4129.0, "pairs chi2 {}", chi2(&pairs));
    assert!(chi2(&singles) < 100.9, "singles chi2 {}", chi2(&singles));
    // Each position of a string, first to last, is uniform: the late
    // digits of a draw as much as the first.
    for pos in 0..11 {
        let mut c = vec![0u64; k];
        let mut r = Rng::new(pos as u64);
        for _ in 0..20_000 {
            s.clear();
            r.push_chars(ALNUM, 11, &mut s);
            c[at(s.as_bytes()[pos])] += 1;
        }
        assert!(chi2(&c) < 100.9, "position {pos}: chi2 {}", chi2(&c));
    }
}

#[test]
fn uniform_stays_in_range_and_hits_both_ends() {
    let mut rng = Rng::new(5);
    let (mut lo, mut hi) = (false, false);
    for _ in 0..10_000 {
        let v = rng.uniform(10, 20);
        assert!((10..=20).contains(&v), "{v}");
        lo |= v == 10;
        hi |= v == 20;
    }
    assert!(lo && hi);
    assert_eq!(rng.uniform(7, 7), 7);
    // Reversed bounds are read as [b, a].
    for _ in 0..1000 {
        assert!((3..=9).contains(&rng.uniform(9, 3)));
    }
    // The full u32 range works (sysbench's wraps to a single value) and
    // spreads over both halves.
    let full: Vec<u32> = (0..1000).map(|_| rng.uniform(0, u32::MAX)).collect();
    assert!(full.iter().any(|&v| v > u32::MAX / 2));
    assert!(full.iter().any(|&v| v < u32::MAX / 2));
    // At the top of the range.
    for _ in 0..1000 {
        assert!(rng.uniform(u32::MAX - 1, u32::MAX) >= u32::MAX - 1);
    }
}

#[test]
fn uniform_buckets_pass_chi_square() {
    // 10^6 draws over [1, 10^6] into 100 equal buckets. With 99 degrees
    // of freedom the 0.1 % critical value is 148.2.
    let mut rng = Rng::new(99);
    let n = 1_000_000u32;
    let mut buckets = [0u64; 100];
    for _ in 0..n {
        let v = rng.uniform(1, 1_000_000);
        buckets[((v - 1) / 10_000) as usize] += 1;
    }
    let expected = f64::from(n) / 100.0;
    let chi2: f64 = buckets
        .iter()
        .map(|&c| (c as f64 - expected).powi(2) / expected)
        .sum();
    assert!(chi2 < 148.2, "chi-square {chi2}");
    // And no bucket is off by more than 5 % of its expected share.
    for (i, &c) in buckets.iter().enumerate() {
        assert!((c as f64 / expected - 1.0).abs() < 0.05, "bucket {i}: {c}");
    }
}

#[test]
fn fill_template_replaces_hashes_and_ats_only() {
    let mut rng = Rng::new(11);
    let template = "###-@@@ x#é@";
    let mut out = String::with_capacity(64);
    let (mut digits, mut letters) = (HashSet::new(), HashSet::new());
    for _ in 0..2000 {
        let before = out.as_ptr();
        rng.fill_template(template, &mut out);
        // No reallocation when the buffer is big enough.
        assert_eq!(out.as_ptr(), before);
        assert_eq!(out.len(), template.len());
        for (t, o) in template.chars().zip(out.chars()) {
            match t {
                '#' => {
                    assert!(o.is_ascii_digit(), "{out}");
                    digits.insert(o);
                }
                '@' => {
                    assert!(o.is_ascii_lowercase(), "{out}");
                    letters.insert(o);
                }
                _ => assert_eq!(o, t),
            }
        }
    }
    // Every digit and every letter shows up.
    assert_eq!(digits.len(), 10);
    assert_eq!(letters.len(), 26);
    // The buffer is cleared first, not appended to.
    rng.fill_template("ab", &mut out);
    assert_eq!(out, "ab");
}

#[test]
fn permute_is_injective_on_samples_and_fixes_the_top() {
    for x in [UNIQUE_PRIME, UNIQUE_PRIME + 1, u32::MAX] {
        assert_eq!(permute(x), x);
    }
    // Samples from the low end, around p/2 (where the two branches
    // meet) and the top of [0, p).
    let half = UNIQUE_PRIME / 2;
    let xs = (0..20_000u32)
        .chain(half - 10_000..half + 10_000)
        .chain(UNIQUE_PRIME - 20_000..UNIQUE_PRIME);
    let mut seen = HashSet::new();
    for x in xs {
        let y = permute(x);
        assert!(y < UNIQUE_PRIME);
        assert!(seen.insert(y), "collision at {x}");
    }
}

#[test]
fn unique_seq_never_repeats_across_threads() {
    let seq = Arc::new(UniqueSeq::new(3));
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let seq = Arc::clone(&seq);
            std::thread::spawn(move || (0..25_000).map(|_| seq.next()).collect::<Vec<_>>())
        })
        .collect();
    let mut all = HashSet::new();
    for h in handles {
        for v in h.join().unwrap() {
            assert!(all.insert(v), "{v} repeated");
        }
    }
    assert_eq!(all.len(), 100_000);
    // Random-looking: spread over the whole u32 space, not a counter.
    let high = all.iter().filter(|&&v| v > u32::MAX / 2).count();
    assert!((high as f64 / 100_000.0 - 0.5).abs() < 0.02, "{high}");
}

#[test]
fn unique_seq_depends_on_its_seed() {
    let a = UniqueSeq::new(1);
    let b = UniqueSeq::new(1);
    let c = UniqueSeq::new(2);
    let va: Vec<u32> = (0..100).map(|_| a.next()).collect();
    let vb: Vec<u32> = (0..100).map(|_| b.next()).collect();
    let vc: Vec<u32> = (0..100).map(|_| c.next()).collect();
    assert_eq!(va, vb);
    assert_ne!(va, vc);
}

#[test]
fn seed_from_time_is_nonzero_and_changes() {
    let a = seed_from_time();
    std::thread::sleep(std::time::Duration::from_millis(2));
    let b = seed_from_time();
    assert_ne!(a, 0);
    assert_ne!(a, b);
}
