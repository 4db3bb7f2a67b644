//! YCSB's request distributions (YCSB 0.17.0's `site.ycsb.generator`),
//! drawn from a client's own [`Rng`]: the scrambled zipfian every core
//! workload but D uses, the zipfian under it (Gray et al., "Quickly
//! Generating Billion-Record Synthetic Databases", SIGMOD 1994), the
//! skewed-latest of workload D, the hotspot and the uniform.
//!
//! Each follows YCSB's arithmetic, its quirks included, so that the keys a
//! workload asks for have YCSB's shape (tests/ycsb.rs draws from YCSB's own
//! jar and compares): the scrambled zipfian draws from a zipfian over
//! 10^10 + 1 items with YCSB's precomputed zeta and hashes the draw with
//! YCSB's FNV-64 into the key range; a zipfian whose item count grows
//! (skewed-latest, as inserts go on) extends its zeta incrementally and
//! keeps the eta of its first count, as YCSB's does.

use super::Rng;

/// YCSB's zipfian constant (theta).
pub const ZIPFIAN_CONSTANT: f64 = 0.99;

/// The items of the zipfian under the scrambled zipfian, and their zeta at
/// [`ZIPFIAN_CONSTANT`], as YCSB precomputes it
/// (`ScrambledZipfianGenerator.ITEM_COUNT` and `ZETAN`).
const SCRAMBLED_ITEM_COUNT: i64 = 10_000_000_000;
const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;

/// YCSB's `Utils.fnvhash64`: FNV-1a over the eight little-end bytes of
/// `val`, in Java's wrapping 64-bit arithmetic, then `Math.abs` (which
/// leaves `i64::MIN` negative, as Java's does).
pub fn fnvhash64(mut val: i64) -> i64 {
    const OFFSET_BASIS: i64 = 0xCBF2_9CE4_8422_2325_u64 as i64;
    const PRIME: i64 = 1_099_511_628_211;
    let mut h = OFFSET_BASIS;
    for _ in 0..8 {
        let octet = val & 0xff;
        val >>= 8;
        h ^= octet;
        h = h.wrapping_mul(PRIME);
    }
    h.wrapping_abs()
}

/// ζ(n, θ) from item `st` on, added to `initial`: Σ 1/(i+1)^θ for i in
/// st..n (`ZipfianGenerator.zetastatic`).
fn zeta(st: i64, n: i64, theta: f64, initial: f64) -> f64 {
    let mut sum = initial;
    for i in st..n {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
    }
    sum
}

/// YCSB's `ZipfianGenerator`: item `base` most popular, then `base + 1`,
/// and so on. Cloning one is cheap: the zeta (O(items) to compute) is
/// computed once and shared by every client's copy.
#[derive(Debug, Clone)]
pub struct Zipfian {
    items: i64,
    base: i64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    zeta2theta: f64,
    /// The item count `zetan` is for.
    count_for_zeta: i64,
}

impl Zipfian {
    /// Items `min..=max` at constant `theta` (computes their zeta).
    pub fn new(min: i64, max: i64, theta: f64) -> Zipfian {
        let zetan = zeta(0, max - min + 1, theta, 0.0);
        Zipfian::with_zetan(min, max, theta, zetan)
    }

    fn with_zetan(min: i64, max: i64, theta: f64, zetan: f64) -> Zipfian {
        let items = max - min + 1;
        let zeta2theta = zeta(0, 2, theta, 0.0);
        Zipfian {
            items,
            base: min,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2theta / zetan),
            zeta2theta,
            count_for_zeta: items,
        }
    }

    /// A draw over the constructor's items.
    pub fn next(&mut self, rng: &mut Rng) -> i64 {
        self.next_of(self.items, rng)
    }

    /// A draw over `item_count` items (`nextLong(itemcount)`): a count
    /// above the last one extends zeta by the new items; eta keeps the
    /// constructor's item count, as YCSB's does. A smaller count is drawn
    /// with the larger count's zeta (YCSB recomputes only when asked to).
    pub fn next_of(&mut self, item_count: i64, rng: &mut Rng) -> i64 {
        if item_count > self.count_for_zeta {
            self.zetan = zeta(self.count_for_zeta, item_count, self.theta, self.zetan);
            self.count_for_zeta = item_count;
            self.eta = (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta))
                / (1.0 - self.zeta2theta / self.zetan);
        }
        let u = rng.next_f64();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return self.base + 1;
        }
        self.base + (item_count as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as i64
    }
}

/// YCSB's `ScrambledZipfianGenerator`: zipfian popularity over
/// `min..=max`, the popular items spread over the range by FNV-64 rather
/// than crowded at its start.
#[derive(Debug, Clone)]
pub struct ScrambledZipfian {
    gen: Zipfian,
    min: i64,
    item_count: i64,
}

impl ScrambledZipfian {
    pub fn new(min: i64, max: i64) -> ScrambledZipfian {
        ScrambledZipfian {
            gen: Zipfian::with_zetan(0, SCRAMBLED_ITEM_COUNT, ZIPFIAN_CONSTANT, SCRAMBLED_ZETAN),
            min,
            item_count: max - min + 1,
        }
    }

    pub fn next(&mut self, rng: &mut Rng) -> i64 {
        let r = self.gen.next(rng);
        self.min + fnvhash64(r) % self.item_count
    }
}

/// YCSB's `SkewedLatestGenerator`: the most recently inserted key most
/// popular, then the one before it, zipfian over every key inserted so far.
#[derive(Debug, Clone)]
pub struct SkewedLatest {
    zipfian: Zipfian,
}

impl SkewedLatest {
    /// For a key sequence whose last acknowledged key is `last` now.
    pub fn new(last: i64) -> SkewedLatest {
        SkewedLatest {
            zipfian: Zipfian::new(0, last.max(1) - 1, ZIPFIAN_CONSTANT),
        }
    }

    /// A key at most `last`, the key sequence's last acknowledged key.
    pub fn next(&mut self, last: i64, rng: &mut Rng) -> i64 {
        last - self.zipfian.next_of(last, rng)
    }
}

/// YCSB's `HotspotIntegerGenerator`: a share `hot_opn` of the draws falls
/// uniformly on the first `hot_set` of `lo..=hi`, the rest uniformly on
/// the others.
#[derive(Debug, Clone)]
pub struct Hotspot {
    lo: i64,
    hot: i64,
    cold: i64,
    hot_opn: f64,
}

impl Hotspot {
    pub fn new(lo: i64, hi: i64, hot_set: f64, hot_opn: f64) -> Hotspot {
        let interval = hi - lo + 1;
        let hot = (interval as f64 * hot_set) as i64;
        Hotspot {
            lo,
            hot,
            cold: interval - hot,
            hot_opn,
        }
    }

    pub fn next(&mut self, rng: &mut Rng) -> i64 {
        // YCSB divides by zero on an empty set; here the other set serves.
        let hot = rng.next_f64() < self.hot_opn;
        if (hot && self.hot > 0) || self.cold == 0 {
            self.lo + uniform_below(rng, self.hot)
        } else {
            self.lo + self.hot + uniform_below(rng, self.cold)
        }
    }
}

/// A uniform draw in `0..n` (`Math.abs(nextLong()) % n`), n ≥ 1.
pub fn uniform_below(rng: &mut Rng, n: i64) -> i64 {
    (rng.next_u64() % n.max(1) as u64) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnvhash64_matches_java() {
        // Values computed with YCSB 0.17.0's Utils.fnvhash64 under Java 17.
        assert_eq!(fnvhash64(0), 6_284_781_860_667_377_211);
        assert_eq!(fnvhash64(1), 8_517_097_267_634_966_620);
        assert_eq!(fnvhash64(1000), 5_952_875_239_596_136_740);
    }

    #[test]
    fn scrambled_zipfian_precomputed_zeta_is_ycsbs() {
        // YCSB's constant is ζ(10^10, 0.99); the first 10^6 terms and the
        // integral of the rest agree with it to 1e-6.
        let head = zeta(0, 1_000_000, ZIPFIAN_CONSTANT, 0.0);
        let a = 1.0 - ZIPFIAN_CONSTANT;
        let tail = ((1e10f64 + 0.5).powf(a) - (1e6f64 + 0.5).powf(a)) / a;
        assert!(
            (head + tail - SCRAMBLED_ZETAN).abs() < 1e-6,
            "{}",
            head + tail
        );
    }

    #[test]
    fn zipfian_favours_its_first_items_by_theta() {
        let mut z = Zipfian::new(0, 999, ZIPFIAN_CONSTANT);
        let mut rng = Rng::new(7);
        let mut counts = vec![0u32; 1000];
        let n = 200_000;
        for _ in 0..n {
            let v = z.next(&mut rng);
            assert!((0..1000).contains(&v), "{v}");
            counts[v as usize] += 1;
        }
        // P(0) = 1/ζ(1000); P(1)/P(0) = 2^-θ.
        let p0 = 1.0 / zeta(0, 1000, ZIPFIAN_CONSTANT, 0.0);
        let got = counts[0] as f64 / n as f64;
        assert!((got - p0).abs() < 0.01, "{got} vs {p0}");
        let ratio = counts[1] as f64 / counts[0] as f64;
        assert!((ratio - 0.5f64.powf(0.99)).abs() < 0.03, "{ratio}");
        assert!(counts[0] > counts[10] && counts[10] > counts[500]);
    }

    #[test]
    fn scrambled_zipfian_stays_in_range_and_is_skewed() {
        let mut z = ScrambledZipfian::new(100, 1099);
        let mut rng = Rng::new(3);
        let mut counts = vec![0u32; 1000];
        for _ in 0..100_000 {
            let v = z.next(&mut rng);
            assert!((100..1100).contains(&v), "{v}");
            counts[(v - 100) as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        // The hottest tenth of the items takes well over a tenth of the
        // draws (about 30 %: 10^10 zipfian items hashed into 1,000 flatten
        // the skew, as YCSB's own do; tests/ycsb.rs compares the shapes).
        let top: u32 = counts[..100].iter().sum();
        assert!((25_000..35_000).contains(&top), "{top}");
    }

    #[test]
    fn skewed_latest_prefers_the_last_key_and_follows_it() {
        let mut g = SkewedLatest::new(999);
        let mut rng = Rng::new(5);
        let draws: Vec<i64> = (0..10_000).map(|_| g.next(999, &mut rng)).collect();
        assert!(draws.iter().all(|v| (0..=999).contains(v)));
        let last = draws.iter().filter(|&&v| v == 999).count();
        assert!(last > 1000, "{last}");
        // More keys inserted: the new last is now the favourite.
        let draws: Vec<i64> = (0..10_000).map(|_| g.next(1999, &mut rng)).collect();
        assert!(draws.iter().all(|v| (0..=1999).contains(v)));
        assert!(draws.iter().filter(|&&v| v == 1999).count() > 1000);
    }

    #[test]
    fn hotspot_puts_its_share_on_the_hot_set() {
        let mut h = Hotspot::new(0, 999, 0.2, 0.8);
        let mut rng = Rng::new(9);
        let n = 100_000;
        let hot = (0..n).filter(|_| h.next(&mut rng) < 200).count();
        assert!((hot as f64 / n as f64 - 0.8).abs() < 0.01, "{hot}");
        // Degenerate sets do not divide by zero.
        let mut all_cold = Hotspot::new(0, 9, 0.0, 0.8);
        assert!((0..100).all(|_| (0..10).contains(&all_cold.next(&mut rng))));
        let mut all_hot = Hotspot::new(0, 9, 1.0, 0.2);
        assert!((0..100).all(|_| (0..10).contains(&all_hot.next(&mut rng))));
    }
}
