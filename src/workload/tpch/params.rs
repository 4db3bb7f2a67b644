//! TPC-H's substitution parameters (clause 2.4, each query's
//! "Substitution Parameters" and "Query Validation" sections) and the
//! query streams' orders (Appendix A).
//!
//! A parameter is drawn by its query's rule from the client's own random
//! stream (the run's seed and the client's number), so a stream's
//! parameters are the same in every run with the same seed; QGen's own
//! random stream is not reproduced. With `--qualification` every query
//! takes the spec's validation values instead, the ones its published
//! answers were computed with.
//!
//! Dates are computed here, not by the server: a query's
//! `date '1994-01-01' + interval '1' year` is sent as the two dates, the
//! spec's permitted form for a dialect without interval arithmetic, and
//! the same text on every engine.

use crate::driver::Value;
use crate::rand::Rng;
use tpchgen::distribution::Distributions;

/// The query streams' orders (Appendix A): row 0 is the power test's
/// stream, row `s` the throughput test's stream `s`; streams past the
/// last row start again at the top (`s` modulo 41).
pub const ORDERS: [[u8; 22]; 41] = [
    [
        14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12,
    ],
    [
        21, 3, 18, 5, 11, 7, 6, 20, 17, 12, 16, 15, 13, 10, 2, 8, 14, 19, 9, 22, 1, 4,
    ],
    [
        6, 17, 14, 16, 19, 10, 9, 2, 15, 8, 5, 22, 12, 7, 13, 18, 1, 4, 20, 3, 11, 21,
    ],
    [
        8, 5, 4, 6, 17, 7, 1, 18, 22, 14, 9, 10, 15, 11, 20, 2, 21, 19, 13, 16, 12, 3,
    ],
    [
        5, 21, 14, 19, 15, 17, 12, 6, 4, 9, 8, 16, 11, 2, 10, 18, 1, 13, 7, 22, 3, 20,
    ],
    [
        21, 15, 4, 6, 7, 16, 19, 18, 14, 22, 11, 13, 3, 1, 2, 5, 8, 20, 12, 17, 10, 9,
    ],
    [
        10, 3, 15, 13, 6, 8, 9, 7, 4, 11, 22, 18, 12, 1, 5, 16, 2, 14, 19, 20, 17, 21,
    ],
    [
        18, 8, 20, 21, 2, 4, 22, 17, 1, 11, 9, 19, 3, 13, 5, 7, 10, 16, 6, 14, 15, 12,
    ],
    [
        19, 1, 15, 17, 5, 8, 9, 12, 14, 7, 4, 3, 20, 16, 6, 22, 10, 13, 2, 21, 18, 11,
    ],
    [
        8, 13, 2, 20, 17, 3, 6, 21, 18, 11, 19, 10, 15, 4, 22, 1, 7, 12, 9, 14, 5, 16,
    ],
    [
        6, 15, 18, 17, 12, 1, 7, 2, 22, 13, 21, 10, 14, 9, 3, 16, 20, 19, 11, 4, 8, 5,
    ],
    [
        15, 14, 18, 17, 10, 20, 16, 11, 1, 8, 4, 22, 5, 12, 3, 9, 21, 2, 13, 6, 19, 7,
    ],
    [
        1, 7, 16, 17, 18, 22, 12, 6, 8, 9, 11, 4, 2, 5, 20, 21, 13, 10, 19, 3, 14, 15,
    ],
    [
        21, 17, 7, 3, 1, 10, 12, 22, 9, 16, 6, 11, 2, 4, 5, 14, 8, 20, 13, 18, 15, 19,
    ],
    [
        2, 9, 5, 4, 18, 1, 20, 15, 16, 17, 7, 21, 13, 14, 19, 8, 22, 11, 10, 3, 12, 6,
    ],
    [
        16, 9, 17, 8, 14, 11, 10, 12, 6, 21, 7, 3, 15, 5, 22, 20, 1, 13, 19, 2, 4, 18,
    ],
    [
        1, 3, 6, 5, 2, 16, 14, 22, 17, 20, 4, 9, 10, 11, 15, 8, 12, 19, 18, 13, 7, 21,
    ],
    [
        3, 16, 5, 11, 21, 9, 2, 15, 10, 18, 17, 7, 8, 19, 14, 13, 1, 4, 22, 20, 6, 12,
    ],
    [
        14, 4, 13, 5, 21, 11, 8, 6, 3, 17, 2, 20, 1, 19, 10, 9, 12, 18, 15, 7, 22, 16,
    ],
    [
        4, 12, 22, 14, 5, 15, 16, 2, 8, 10, 17, 9, 21, 7, 3, 6, 13, 18, 11, 20, 19, 1,
    ],
    [
        16, 15, 14, 13, 4, 22, 18, 19, 7, 1, 12, 17, 5, 10, 20, 3, 9, 21, 11, 2, 6, 8,
    ],
    [
        20, 14, 21, 12, 15, 17, 4, 19, 13, 10, 11, 1, 16, 5, 18, 7, 8, 22, 9, 6, 3, 2,
    ],
    [
        16, 14, 13, 2, 21, 10, 11, 4, 1, 22, 18, 12, 19, 5, 7, 8, 6, 3, 15, 20, 9, 17,
    ],
    [
        18, 15, 9, 14, 12, 2, 8, 11, 22, 21, 16, 1, 6, 17, 5, 10, 19, 4, 20, 13, 3, 7,
    ],
    [
        7, 3, 10, 14, 13, 21, 18, 6, 20, 4, 9, 8, 22, 15, 2, 1, 5, 12, 19, 17, 11, 16,
    ],
    [
        18, 1, 13, 7, 16, 10, 14, 2, 19, 5, 21, 11, 22, 15, 8, 17, 20, 3, 4, 12, 6, 9,
    ],
    [
        13, 2, 22, 5, 11, 21, 20, 14, 7, 10, 4, 9, 19, 18, 6, 3, 1, 8, 15, 12, 17, 16,
    ],
    [
        14, 17, 21, 8, 2, 9, 6, 4, 5, 13, 22, 7, 15, 3, 1, 18, 16, 11, 10, 12, 20, 19,
    ],
    [
        10, 22, 1, 12, 13, 18, 21, 20, 2, 14, 16, 7, 15, 3, 4, 17, 5, 19, 6, 8, 9, 11,
    ],
    [
        10, 8, 9, 18, 12, 6, 1, 5, 20, 11, 17, 22, 16, 3, 13, 2, 15, 21, 14, 19, 7, 4,
    ],
    [
        7, 17, 22, 5, 3, 10, 13, 18, 9, 1, 14, 15, 21, 19, 16, 12, 8, 6, 11, 20, 4, 2,
    ],
    [
        2, 9, 21, 3, 4, 7, 1, 11, 16, 5, 20, 19, 18, 8, 17, 13, 10, 12, 15, 6, 14, 22,
    ],
    [
        15, 12, 8, 4, 22, 13, 16, 17, 18, 3, 7, 5, 6, 1, 9, 11, 21, 10, 14, 20, 19, 2,
    ],
    [
        15, 16, 2, 11, 17, 7, 5, 14, 20, 4, 21, 3, 10, 9, 12, 8, 13, 6, 18, 19, 22, 1,
    ],
    [
        1, 13, 11, 3, 4, 21, 6, 14, 15, 22, 18, 9, 7, 5, 10, 20, 12, 16, 17, 8, 19, 2,
    ],
    [
        14, 17, 22, 20, 8, 16, 5, 10, 1, 13, 2, 21, 12, 9, 4, 18, 3, 7, 6, 19, 15, 11,
    ],
    [
        9, 17, 7, 4, 5, 13, 21, 18, 11, 3, 22, 1, 6, 16, 20, 14, 15, 10, 8, 2, 12, 19,
    ],
    [
        13, 14, 5, 22, 19, 11, 9, 6, 18, 15, 8, 10, 7, 4, 17, 16, 3, 1, 12, 2, 21, 20,
    ],
    [
        20, 5, 4, 14, 11, 1, 6, 16, 8, 22, 7, 3, 2, 12, 21, 19, 17, 13, 10, 15, 18, 9,
    ],
    [
        3, 7, 14, 15, 6, 5, 21, 20, 18, 10, 4, 16, 19, 1, 13, 9, 8, 17, 11, 12, 22, 2,
    ],
    [
        13, 15, 17, 1, 22, 11, 3, 4, 7, 20, 14, 21, 9, 8, 2, 18, 16, 6, 10, 12, 5, 19,
    ],
];

/// The substitution values of query `q` (1–22), in the order its
/// statement's placeholders take them: drawn from `rng` by the query's
/// rule, or the spec's validation values when `rng` is None.
pub fn draw(q: u8, sf: f64, rng: Option<&mut Rng>, out: &mut Vec<Value>) {
    out.clear();
    let Some(rng) = rng else {
        return qualification(q, sf, out);
    };
    let d = Distributions::static_default();
    let text = |s: &str| Value::Text(s.to_string());
    fn pick<S: AsRef<str>>(rng: &mut Rng, values: &[S]) -> String {
        values[rng.uniform(0, values.len() as u32 - 1) as usize]
            .as_ref()
            .to_string()
    }
    match q {
        1 => out.push(text(&ymd_minus_days((1998, 12, 1), rng.uniform(60, 120)))),
        2 => {
            let size = rng.uniform(1, 50);
            let ty = pick(rng, &syllables(d.part_types().get_values(), 2, 3));
            let region = pick(rng, d.regions().get_values());
            out.push(Value::Int(size.into()));
            out.push(Value::Text(format!("%{ty}")));
            out.push(Value::Text(region.clone()));
            out.push(Value::Text(region));
        }
        3 => {
            out.push(text(&pick(rng, d.market_segments().get_values())));
            let day = date((1995, 3, rng.uniform(1, 31)));
            out.push(text(&day));
            out.push(text(&day));
        }
        4 | 15 => {
            // A month's first day from January 1993 to October 1997.
            let m = rng.uniform(0, 57);
            months(out, (1993 + m / 12, 1 + m % 12), 3);
        }
        5 => {
            out.push(text(&pick(rng, d.regions().get_values())));
            years(out, rng.uniform(1993, 1997));
        }
        6 => {
            years(out, rng.uniform(1993, 1997));
            let discount = rng.uniform(2, 9);
            out.push(Value::Text(cents(discount - 1)));
            out.push(Value::Text(cents(discount + 1)));
            out.push(Value::Int(rng.uniform(24, 25).into()));
        }
        7 => {
            let n = d.nations().size() as u32;
            let a = rng.uniform(0, n - 1);
            let b = (a + rng.uniform(1, n - 1)) % n;
            let (a, b) = (
                d.nations().get_value(a as usize),
                d.nations().get_value(b as usize),
            );
            for v in [a, b, b, a] {
                out.push(text(v));
            }
        }
        8 => {
            let nation = rng.uniform(0, d.nations().size() as u32 - 1) as usize;
            let region = d.nations().get_weight(nation) as usize;
            let ty = d
                .part_types()
                .get_value(rng.uniform(0, d.part_types().size() as u32 - 1) as usize);
            out.push(text(d.nations().get_value(nation)));
            out.push(text(d.regions().get_value(region)));
            out.push(text(ty));
        }
        9 => out.push(Value::Text(format!(
            "%{}%",
            pick(rng, d.part_colors().get_values())
        ))),
        10 => {
            // A month's first day from February 1993 to January 1995.
            let m = rng.uniform(1, 24);
            months(out, (1993 + m / 12, 1 + m % 12), 3);
        }
        11 => {
            let nation = pick(rng, d.nations().get_values());
            out.push(Value::Text(nation.clone()));
            out.push(Value::Text(fraction(sf)));
            out.push(Value::Text(nation));
        }
        12 => {
            let modes = d.ship_modes().get_values();
            let a = rng.uniform(0, modes.len() as u32 - 1);
            let b = (a + rng.uniform(1, modes.len() as u32 - 1)) % modes.len() as u32;
            out.push(text(modes[a as usize]));
            out.push(text(modes[b as usize]));
            years(out, rng.uniform(1993, 1997));
        }
        13 => {
            let w1 = pick(rng, &["special", "pending", "unusual", "express"]);
            let w2 = pick(rng, &["packages", "requests", "accounts", "deposits"]);
            out.push(Value::Text(format!("%{w1}%{w2}%")));
        }
        14 => {
            let m = rng.uniform(0, 59);
            months(out, (1993 + m / 12, 1 + m % 12), 1);
        }
        16 => {
            out.push(Value::Text(brand(rng)));
            let ty = pick(rng, &syllables(d.part_types().get_values(), 0, 2));
            out.push(Value::Text(format!("{ty}%")));
            let mut sizes: Vec<u32> = Vec::with_capacity(8);
            while sizes.len() < 8 {
                let s = rng.uniform(1, 50);
                if !sizes.contains(&s) {
                    sizes.push(s);
                }
            }
            out.extend(sizes.into_iter().map(|s| Value::Int(s.into())));
        }
        17 => {
            out.push(Value::Text(brand(rng)));
            out.push(text(&pick(rng, d.part_containers().get_values())));
        }
        18 => out.push(Value::Int(rng.uniform(312, 315).into())),
        19 => {
            let quantities = [rng.uniform(1, 10), rng.uniform(10, 20), rng.uniform(20, 30)];
            for q in quantities {
                out.push(Value::Text(brand(rng)));
                out.push(Value::Int(q.into()));
                out.push(Value::Int((q + 10).into()));
            }
        }
        20 => {
            out.push(Value::Text(format!(
                "{}%",
                pick(rng, d.part_colors().get_values())
            )));
            years(out, rng.uniform(1993, 1997));
            out.push(text(&pick(rng, d.nations().get_values())));
        }
        21 => out.push(text(&pick(rng, d.nations().get_values()))),
        22 => {
            let mut codes: Vec<u32> = Vec::with_capacity(7);
            while codes.len() < 7 {
                let c = rng.uniform(10, 34);
                if !codes.contains(&c) {
                    codes.push(c);
                }
            }
            country_codes(out, &codes);
        }
        _ => unreachable!("TPC-H has queries 1 to 22"),
    }
}

/// The validation values of each query's "Query Validation" section.
fn qualification(q: u8, sf: f64, out: &mut Vec<Value>) {
    let text = |s: &str| Value::Text(s.to_string());
    match q {
        1 => out.push(text(&ymd_minus_days((1998, 12, 1), 90))),
        2 => out.extend([
            Value::Int(15),
            text("%BRASS"),
            text("EUROPE"),
            text("EUROPE"),
        ]),
        3 => out.extend([text("BUILDING"), text("1995-03-15"), text("1995-03-15")]),
        4 => months(out, (1993, 7), 3),
        5 => {
            out.push(text("ASIA"));
            years(out, 1994);
        }
        6 => {
            years(out, 1994);
            out.extend([text("0.05"), text("0.07"), Value::Int(24)]);
        }
        7 => out.extend(["FRANCE", "GERMANY", "GERMANY", "FRANCE"].map(text)),
        8 => out.extend(["BRAZIL", "AMERICA", "ECONOMY ANODIZED STEEL"].map(text)),
        9 => out.push(text("%green%")),
        10 => months(out, (1993, 10), 3),
        11 => out.extend([text("GERMANY"), Value::Text(fraction(sf)), text("GERMANY")]),
        12 => {
            out.extend([text("MAIL"), text("SHIP")]);
            years(out, 1994);
        }
        13 => out.push(text("%special%requests%")),
        14 => months(out, (1995, 9), 1),
        15 => months(out, (1996, 1), 3),
        16 => {
            out.extend([text("Brand#45"), text("MEDIUM POLISHED%")]);
            out.extend([49, 14, 23, 45, 19, 3, 36, 9].map(Value::Int));
        }
        17 => out.extend([text("Brand#23"), text("MED BOX")]),
        18 => out.push(Value::Int(300)),
        19 => {
            for (brand, q) in [("Brand#12", 1), ("Brand#23", 10), ("Brand#34", 20)] {
                out.extend([text(brand), Value::Int(q), Value::Int(q + 10)]);
            }
        }
        20 => {
            out.push(text("forest%"));
            years(out, 1994);
            out.push(text("CANADA"));
        }
        21 => out.push(text("SAUDI ARABIA")),
        22 => country_codes(out, &[13, 31, 23, 29, 30, 18, 17]),
        _ => unreachable!("TPC-H has queries 1 to 22"),
    }
}

/// Q22's seven codes, twice: the outer query's list and the subquery's.
fn country_codes(out: &mut Vec<Value>, codes: &[u32]) {
    for _ in 0..2 {
        out.extend(codes.iter().map(|c| Value::Text(c.to_string())));
    }
}

/// Q11's FRACTION: 0.0001 / SF, written out in full.
fn fraction(sf: f64) -> String {
    format!("{:.12}", 0.0001 / sf)
}

/// `Brand#MN`, M and N from 1 to 5.
fn brand(rng: &mut Rng) -> String {
    format!("Brand#{}{}", rng.uniform(1, 5), rng.uniform(1, 5))
}

/// Hundredths as a decimal literal (`5` → `0.05`).
fn cents(n: u32) -> String {
    format!("0.{n:02}")
}

/// The distinct spans `from..to` of the part types' words (words 2..3
/// of `STANDARD ANODIZED TIN` are `TIN`; 0..2 are `STANDARD ANODIZED`).
fn syllables(types: &[&str], from: usize, to: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in types {
        let words: Vec<&str> = t.split(' ').collect();
        let span = words[from..to].join(" ");
        if !out.contains(&span) {
            out.push(span);
        }
    }
    out
}

/// A year's first day and the next year's: `[date, date + 1 year)`.
fn years(out: &mut Vec<Value>, year: u32) {
    out.push(Value::Text(date((year, 1, 1))));
    out.push(Value::Text(date((year + 1, 1, 1))));
}

/// A month's first day and the first day `n` months on.
fn months(out: &mut Vec<Value>, (y, m): (u32, u32), n: u32) {
    let next = (m - 1 + n) as usize;
    out.push(Value::Text(date((y, m, 1))));
    out.push(Value::Text(date((
        y + next as u32 / 12,
        1 + next as u32 % 12,
        1,
    ))));
}

fn date((y, m, d): (u32, u32, u32)) -> String {
    format!("{y:04}-{m:02}-{d:02}")
}

/// `date - days`, by the proleptic Gregorian calendar.
pub fn ymd_minus_days((y, m, d): (u32, u32, u32), days: u32) -> String {
    use crate::util::civil;
    let day = civil::days_from_civil(i64::from(y), m, d) - i64::from(days);
    let (y, m, d, ..) = civil::from_unix(day * 86_400);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_are_permutations_and_stream_zero_is_the_power_tests() {
        for row in ORDERS {
            let mut seen = [false; 23];
            for q in row {
                assert!(!seen[q as usize], "{row:?} repeats Q{q}");
                seen[q as usize] = true;
            }
            assert!(seen[1..].iter().all(|&s| s), "{row:?}");
        }
        assert_eq!(&ORDERS[0][..4], &[14, 2, 9, 20]);
    }

    #[test]
    fn dates_shift_by_the_calendar() {
        assert_eq!(ymd_minus_days((1998, 12, 1), 90), "1998-09-02");
        assert_eq!(ymd_minus_days((1998, 12, 1), 60), "1998-10-02");
        assert_eq!(ymd_minus_days((1998, 12, 1), 120), "1998-08-03");
        assert_eq!(ymd_minus_days((1996, 3, 1), 1), "1996-02-29");
        let mut out = Vec::new();
        months(&mut out, (1997, 10), 3);
        assert_eq!(
            out,
            [
                Value::Text("1997-10-01".into()),
                Value::Text("1998-01-01".into())
            ]
        );
    }

    #[test]
    fn qualification_values_are_the_specs() {
        let mut out = Vec::new();
        draw(6, 1.0, None, &mut out);
        let t = |s: &str| Value::Text(s.into());
        assert_eq!(
            out,
            [
                t("1994-01-01"),
                t("1995-01-01"),
                t("0.05"),
                t("0.07"),
                Value::Int(24)
            ]
        );
        draw(11, 1.0, None, &mut out);
        assert_eq!(out[1], t("0.000100000000"));
        draw(11, 10.0, None, &mut out);
        assert_eq!(out[1], t("0.000010000000"));
    }

    #[test]
    fn drawn_values_keep_to_their_ranges() {
        let mut rng = Rng::new(7);
        let mut out = Vec::new();
        for _ in 0..500 {
            draw(2, 1.0, Some(&mut rng), &mut out);
            let Value::Text(ty) = &out[1] else { panic!() };
            assert!(
                ["%TIN", "%NICKEL", "%BRASS", "%STEEL", "%COPPER"].contains(&ty.as_str()),
                "{ty}"
            );
            draw(16, 1.0, Some(&mut rng), &mut out);
            let Value::Text(ty) = &out[1] else { panic!() };
            assert_eq!(ty.split(' ').count(), 2, "{ty}");
            assert_eq!(out.len(), 10);
            draw(7, 1.0, Some(&mut rng), &mut out);
            assert_ne!(out[0], out[1]);
            draw(8, 1.0, Some(&mut rng), &mut out);
            let Value::Text(ty) = &out[2] else { panic!() };
            assert_eq!(ty.split(' ').count(), 3, "{ty}");
            draw(4, 1.0, Some(&mut rng), &mut out);
            let (Value::Text(a), Value::Text(b)) = (&out[0], &out[1]) else {
                panic!()
            };
            assert!(
                a.as_str() >= "1993-01-01" && a.as_str() <= "1997-10-01",
                "{a}"
            );
            assert!(b > a);
            draw(22, 1.0, Some(&mut rng), &mut out);
            assert_eq!(out.len(), 14);
            assert_eq!(out[..7], out[7..]);
        }
    }

    #[test]
    fn q8_names_the_nations_own_region() {
        let mut rng = Rng::new(3);
        let mut out = Vec::new();
        for _ in 0..100 {
            draw(8, 1.0, Some(&mut rng), &mut out);
            let (Value::Text(n), Value::Text(r)) = (&out[0], &out[1]) else {
                panic!()
            };
            if n == "BRAZIL" {
                assert_eq!(r, "AMERICA");
            }
            if n == "GERMANY" {
                assert_eq!(r, "EUROPE");
            }
        }
    }
}
