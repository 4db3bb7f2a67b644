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
pub mod ycsb;

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
mod tests;
