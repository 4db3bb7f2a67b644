//! Seeded random streams: one independent generator per client, and the
//! sysbench helpers built on it (`rand.uniform`, `rand.string`,
//! `rand.unique`). The distributions that pick row ids live in [`dist`].
//!
//! Why per-client streams: a run is reproducible from its `--rand-seed` and
//! its client count alone. Each client owns an [`Rng`] derived from the run
//! seed and its client number, so what client 3 draws does not depend on how
//! the OS interleaved the other clients. sysbench 1.0.20 instead seeds each
//! thread's xoroshiro128+ from libc `random()` as the threads start, which
//! makes its streams depend on thread start order.
//!
//! The generator is xoshiro256** (256-bit state, seeded through splitmix64)
//! rather than sysbench's xoroshiro128+, whose lowest bits are weak. The draws
//! therefore differ from sysbench's number by number; what matches sysbench is
//! how each distribution turns uniform doubles into values (see [`dist`]).
//!
//! Nothing here holds global state; [`UniqueSeq`] is the one value meant to be
//! shared between clients, behind an `Arc`.

pub mod dist;
pub mod pacing;
pub mod poisson;

use std::sync::atomic::{AtomicU32, Ordering};

/// How random values are drawn: sysbench's `--rand-type` and its knobs, and
/// the run's seed (each client gets its own stream from it).
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct RandConfig {
    pub kind: dist::DistKind,
    pub params: dist::DistParams,
    pub seed: u64,
}

/// splitmix64's increment (2^64 / golden ratio, made odd).
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// Mixed into the run seed before client numbers are added, so that
/// `for_client(s, c)` is not simply `new(s + c)`: nearby seeds and nearby
/// client numbers must not give related streams.
const CLIENT_SALT: u64 = 0x6462_7377_6565_7063;

/// splitmix64's output function: a bijection of `u64` that spreads every
/// input bit over every output bit.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One step of the splitmix64 generator, used only to expand a 64-bit seed
/// into xoshiro's 256-bit state (what xoshiro's authors recommend).
fn splitmix64_next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(GOLDEN_GAMMA);
    mix64(*state)
}

/// An 8-byte stream (splitmix64): for where millions of streams are kept
/// at once — each emulated user's think times — and xoshiro's 32 bytes
/// each would be most of a user's memory. splitmix64 passes BigCrush; its
/// period (2^64) is far beyond one user's draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmallRng(u64);

impl SmallRng {
    /// Stream number `n` of `seed`, unrelated to its neighbours.
    pub fn for_index(seed: u64, n: u64) -> SmallRng {
        SmallRng(mix64(mix64(seed ^ CLIENT_SALT).wrapping_add(n)))
    }

    /// Uniform double in [0, 1), a multiple of 2^-53 (as [`Rng::next_f64`]).
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        const SCALE: f64 = 1.0 / (1u64 << 53) as f64;
        (splitmix64_next(&mut self.0) >> 11) as f64 * SCALE
    }
}

/// xoshiro256** PRNG, seeded through splitmix64. sysbench uses the same
/// family (xoroshiro128+ in 1.0.20); see the module doc for why this one.
///
/// Not thread-safe by design: each client owns one (see [`Rng::for_client`]).
#[derive(Clone, Debug)]
pub struct Rng {
    /// The xoshiro256** state; never all zero (that state is a fixed point).
    s: [u64; 4],
}

impl Rng {
    /// A generator whose whole stream is determined by `seed`.
    pub fn new(seed: u64) -> Rng {
        let mut sm = seed;
        // Four consecutive splitmix64 outputs come from four distinct inputs
        // through a bijection, so at most one of them is zero: the state can
        // never be all zero.
        let s = [
            splitmix64_next(&mut sm),
            splitmix64_next(&mut sm),
            splitmix64_next(&mut sm),
            splitmix64_next(&mut sm),
        ];
        Rng { s }
    }

    /// Independent stream for client number `client` of a run seeded with
    /// `seed`.
    ///
    /// The client's seed is `mix64(mix64(seed ^ salt) + client)`: for one run
    /// seed, distinct clients get distinct seeds (both steps are bijections),
    /// and with a 2^256 period two streams overlapping within a benchmark is
    /// not a practical concern. Creation is O(1), unlike xoshiro's jump, so a
    /// run with thousands of clients starts at once.
    pub fn for_client(seed: u64, client: u64) -> Rng {
        Rng::new(mix64(mix64(seed ^ CLIENT_SALT).wrapping_add(client)))
    }

    /// Builds a generator from a raw state, for the published test vectors.
    #[cfg(test)]
    fn from_state(s: [u64; 4]) -> Rng {
        Rng { s }
    }

    /// The next 64 uniformly distributed bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform double in [0, 1), from the top 53 bits of the next output, so
    /// every value is a multiple of 2^-53.
    ///
    /// sysbench's `sb_rand_uniform_double` builds its double from 52 bits
    /// (exponent trick `1.x - 1.0`); 53 bits is the finer grid of the same
    /// interval and changes no distribution by a measurable amount.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        const SCALE: f64 = 1.0 / (1u64 << 53) as f64;
        (self.next_u64() >> 11) as f64 * SCALE
    }

    /// Uniform integer in [a, b] inclusive, as sysbench's `sb_rand_uniform`:
    /// `a + trunc(u * (b - a + 1))` with `u` from [`Rng::next_f64`].
    ///
    /// Two deliberate differences, both only at edges: the range size is
    /// computed in floating point, so the full range `[0, u32::MAX]` works
    /// (sysbench's `b - a + 1` wraps to 0 there and always returns `a`); and
    /// the offset is truncated before `a` is added, so rounding at large `a`
    /// cannot produce `b + 1`. If `a > b` the range is taken as `[b, a]`.
    #[inline]
    pub fn uniform(&mut self, a: u32, b: u32) -> u32 {
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        let n = f64::from(b - a) + 1.0;
        // u < 1 - 2^-53 makes u * n < n after rounding for every n <= 2^32,
        // so the truncated offset is at most b - a.
        a + (self.next_f64() * n) as u32
    }

    /// sysbench's `rand.string`: clears `out`, then copies `template` into
    /// it, replacing each `#` with a random digit and each `@` with a random
    /// lowercase letter; other characters are kept. The output has the
    /// template's length in bytes.
    ///
    /// Allocates only if `out` lacks the capacity, so a client that reuses
    /// one buffer for every row generates strings without allocating.
    pub fn fill_template(&mut self, template: &str, out: &mut String) {
        out.clear();
        out.reserve(template.len());
        for c in template.chars() {
            let c = match c {
                // Through `uniform` over the ASCII codes, as sysbench does.
                '#' => char::from(self.uniform(u32::from(b'0'), u32::from(b'9')) as u8),
                '@' => char::from(self.uniform(u32::from(b'a'), u32::from(b'z')) as u8),
                other => other,
            };
            out.push(c);
        }
    }

    /// Appends `n` characters drawn uniformly and independently from
    /// `alphabet` (ASCII, 2 to 256 symbols; panics on others), such as TPC's a-strings from
    /// [`ALNUM`] and n-strings from [`DIGITS`].
    ///
    /// Several characters come from each 64-bit draw: the draw is read as a
    /// fraction u in [0, 1) and its base-k digits taken in turn (digit =
    /// ⌊u·k⌋, then u = frac(u·k), one 128-bit multiply each), as many as
    /// keep k^digits ≤ 2^34. The digits of one draw together are ⌊u·k^j⌋,
    /// each of whose k^j values covers ⌊2^64/k^j⌋ or one more of the 2^64
    /// draws, so every string is within a relative 2^-30 of uniform: five
    /// characters a draw for 62 symbols, ten for digits. TPC-C's initial
    /// data is mostly such strings (278 characters a stock row), and one
    /// draw a character was half of its loader's CPU.
    pub fn push_chars(&mut self, alphabet: &[u8], n: usize, out: &mut String) {
        let k = alphabet.len() as u64;
        assert!((2..=256).contains(&k), "an alphabet of 2 to 256 symbols");
        let mut per_draw = 1;
        let mut span = k;
        while span * k <= 1 << 34 {
            span *= k;
            per_draw += 1;
        }
        // Written as bytes into the string's buffer, then checked as text
        // once: pushing char by char kept the string's length and capacity
        // in memory, which cost more than the draws.
        let mut bytes = std::mem::take(out).into_bytes();
        let start = bytes.len();
        bytes.resize(start + n, 0);
        for chunk in bytes[start..].chunks_mut(per_draw) {
            let mut x = self.next_u64();
            for b in chunk {
                let wide = u128::from(x) * u128::from(k);
                *b = alphabet[(wide >> 64) as usize];
                x = wide as u64;
            }
        }
        *out = String::from_utf8(bytes).expect("an ASCII alphabet");
    }
}

/// Letters and digits: the alphabet of TPC's a-strings.
pub const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// The alphabet of TPC's n-strings.
pub const DIGITS: &[u8] = b"0123456789";

/// The largest prime below 2^32; it is 3 mod 4, which makes [`permute`] a
/// bijection.
const UNIQUE_PRIME: u32 = 4_294_967_291;

/// A bijection of `u32` that looks random: quadratic residues modulo a prime
/// p ≡ 3 (mod 4). For x ≤ p/2 the squares x² mod p are all distinct, and
/// for x > p/2 `p - x² mod p` covers the non-residues, so [0, p) maps onto
/// itself; the five values ≥ p map to themselves. This is the idea sysbench's
/// `rand_unique_permute` takes from Jeff Preshing's RandomSequence.
fn permute(x: u32) -> u32 {
    if x >= UNIQUE_PRIME {
        return x;
    }
    let residue = (u64::from(x) * u64::from(x) % u64::from(UNIQUE_PRIME)) as u32;
    if x <= UNIQUE_PRIME / 2 {
        residue
    } else {
        UNIQUE_PRIME - residue
    }
}

/// sysbench's `rand.unique()`: a thread-safe source of unique,
/// random-looking `u32` values, for keys that must not collide (e.g. insert
/// ids shared by all clients).
///
/// An atomic counter walks the `u32` space and each index goes through a
/// fixed bijection (`permute`, a seeded add, a seeded xor, `permute` again), so
/// the first 2^32 values are all distinct whatever the interleaving of
/// callers. After 2^32 calls the sequence repeats, as sysbench's does.
#[derive(Debug)]
pub struct UniqueSeq {
    /// The next index to hand out; starts at a seed-derived point so that
    /// different seeds give different sequences, not shifted copies.
    next_index: AtomicU32,
    /// Added between the two permutations; part of the seeded bijection.
    offset: u32,
    /// Xored between the two permutations; sysbench uses a fixed constant,
    /// here it comes from the seed too.
    mask: u32,
}

impl UniqueSeq {
    /// A sequence fully determined by `seed`.
    pub fn new(seed: u64) -> Self {
        let mut rng = Rng::new(seed ^ 0x756e_6971_7565_0000);
        let words = rng.next_u64();
        UniqueSeq {
            next_index: AtomicU32::new(words as u32),
            offset: (words >> 32) as u32,
            mask: rng.next_u64() as u32,
        }
    }

    /// The next value; safe to call from many threads at once.
    pub fn next(&self) -> u32 {
        // Relaxed is enough: only the counter's atomicity matters, no other
        // memory is published through it.
        let index = self.next_index.fetch_add(1, Ordering::Relaxed);
        permute(permute(index).wrapping_add(self.offset) ^ self.mask)
    }
}

/// A seed for `--rand-seed 0`, which in sysbench means "seed from the time".
///
/// Nanoseconds since the epoch mixed with the process id, so that two runs
/// started in the same second (sysbench's resolution) still differ. Never
/// returns 0, so the seed can be recorded and passed back as `--rand-seed`
/// to repeat the run.
pub fn seed_from_time() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    match mix64(nanos ^ (u64::from(std::process::id()) << 40)) {
        0 => 1,
        seed => seed,
    }
}

#[cfg(test)]
mod tests {
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
}
