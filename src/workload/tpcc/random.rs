//! TPC-C's random inputs (clauses 2.1.6 and 4.3.2): NURand with its C
//! constants, customer last names from the ten syllables, a-strings and
//! n-strings, zip codes, and the data strings of which 10 % hold
//! "ORIGINAL".
//!
//! NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y − x + 1)) + x.
//! C is a constant per A: the load draws one for C_LAST (A = 255), and a
//! run draws its own, whose distance from the load's obeys the delta rule
//! of clause 2.1.6.1 (65 ≤ |Δ| ≤ 119, Δ ∉ {96, 112}), so the names a run
//! looks up are not just those the load made most common. The run's C for
//! C_ID (A = 1023) and OL_I_ID (A = 8191) may be any value: the load draws
//! neither (orders take customers from a permutation, lines items
//! uniformly).

use crate::rand::{Rng, ALNUM, DIGITS};

/// NURand's A for C_LAST, C_ID and OL_I_ID.
pub const A_C_LAST: u32 = 255;
pub const A_C_ID: u32 = 1023;
pub const A_OL_I_ID: u32 = 8191;

/// The syllables of a last name (clause 4.3.2.3).
pub const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The C constants of one side (load or run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Constants {
    pub c_last: u32,
    pub c_id: u32,
    pub ol_i_id: u32,
}

impl Constants {
    /// The load's constants, from the data's seed.
    pub fn load(seed: u64) -> Constants {
        let mut rng = Rng::for_client(seed ^ 0x6c6f_6164_5f63_6f6e, 0);
        Constants {
            c_last: rng.uniform(0, A_C_LAST),
            c_id: rng.uniform(0, A_C_ID),
            ol_i_id: rng.uniform(0, A_OL_I_ID),
        }
    }

    /// A run's constants for a database loaded with C_LAST constant
    /// `c_last_load`, from the run's seed: C_LAST obeys the delta rule.
    pub fn run(seed: u64, c_last_load: u32) -> Constants {
        let mut rng = Rng::for_client(seed ^ 0x7275_6e5f_636f_6e73, 0);
        Constants {
            c_last: run_c_last(c_last_load, &mut rng),
            c_id: rng.uniform(0, A_C_ID),
            ol_i_id: rng.uniform(0, A_OL_I_ID),
        }
    }
}

/// Whether a run's C_LAST constant may be used with the load's (clause
/// 2.1.6.1).
pub fn delta_ok(c_load: u32, c_run: u32) -> bool {
    let delta = (i64::from(c_run) - i64::from(c_load)).abs();
    (65..=119).contains(&delta) && delta != 96 && delta != 112
}

/// A run's C_LAST constant for the load's `c_load`, uniform among the
/// values in [0, 255] that satisfy the delta rule (every load value has
/// some: at least 119 − 65 + 1 − 2 on one side).
pub fn run_c_last(c_load: u32, rng: &mut Rng) -> u32 {
    let ok: Vec<u32> = (0..=A_C_LAST).filter(|&c| delta_ok(c_load, c)).collect();
    ok[rng.uniform(0, ok.len() as u32 - 1) as usize]
}

/// NURand(A, x, y) with constant `c`.
pub fn nurand(rng: &mut Rng, a: u32, c: u32, x: u32, y: u32) -> u32 {
    (((rng.uniform(0, a) | rng.uniform(x, y)) + c) % (y - x + 1)) + x
}

/// Appends the last name of number `n` (0..=999): its three digits'
/// syllables.
pub fn last_name(n: u32, out: &mut String) {
    out.push_str(SYLLABLES[(n / 100 % 10) as usize]);
    out.push_str(SYLLABLES[(n / 10 % 10) as usize]);
    out.push_str(SYLLABLES[(n % 10) as usize]);
}

/// The last name of number `n`, as a new string.
pub fn last_name_string(n: u32) -> String {
    let mut s = String::with_capacity(16);
    last_name(n, &mut s);
    s
}

/// Appends a random a-string of `min..=max` characters.
pub fn a_string(rng: &mut Rng, min: u32, max: u32, out: &mut String) {
    let len = rng.uniform(min, max);
    rng.push_chars(ALNUM, len as usize, out);
}

/// Appends a random n-string (digits) of `min..=max` characters.
pub fn n_string(rng: &mut Rng, min: u32, max: u32, out: &mut String) {
    let len = rng.uniform(min, max);
    rng.push_chars(DIGITS, len as usize, out);
}

/// An a-string of `min..=max` characters as a new string.
pub fn a_text(rng: &mut Rng, min: u32, max: u32) -> String {
    let mut s = String::with_capacity(max as usize);
    a_string(rng, min, max, &mut s);
    s
}

/// A zip code: a random n-string of 4 digits and "11111" (clause 4.3.2.7).
pub fn zip(rng: &mut Rng) -> String {
    let mut s = String::with_capacity(9);
    n_string(rng, 4, 4, &mut s);
    s.push_str("11111");
    s
}

/// A state: two random letters.
pub fn state(rng: &mut Rng) -> String {
    (0..2)
        .map(|_| char::from(b'A' + rng.uniform(0, 25) as u8))
        .collect()
}

/// I_DATA or S_DATA: an a-string of 26..=50 characters; for 10 % of rows
/// (chosen at random) "ORIGINAL" replaces eight characters at a random
/// position (clause 4.3.3.1).
pub fn data_string(rng: &mut Rng) -> String {
    let mut s = a_text(rng, 26, 50);
    if rng.uniform(1, 100) <= 10 {
        let at = rng.uniform(0, s.len() as u32 - 8) as usize;
        s.replace_range(at..at + 8, "ORIGINAL");
    }
    s
}

/// A random number in [min, max] with two decimals, from integer cents.
pub fn money(rng: &mut Rng, min_cents: u32, max_cents: u32) -> f64 {
    f64::from(rng.uniform(min_cents, max_cents)) / 100.0
}

/// A random rate in [0, max / 10000] with four decimals.
pub fn rate(rng: &mut Rng, max: u32) -> f64 {
    f64::from(rng.uniform(0, max)) / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_syllables_of_the_digits() {
        assert_eq!(last_name_string(0), "BARBARBAR");
        assert_eq!(last_name_string(371), "PRICALLYOUGHT");
        assert_eq!(last_name_string(999), "EINGEINGEING");
    }

    #[test]
    fn every_load_value_has_run_values() {
        let mut rng = Rng::new(1);
        for c in 0..=A_C_LAST {
            let r = run_c_last(c, &mut rng);
            assert!(delta_ok(c, r), "{c} {r}");
        }
        assert!(!delta_ok(0, 96) && !delta_ok(200, 88) && delta_ok(0, 65));
    }
}
