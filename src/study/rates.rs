//! Offered-load lists as a study writes them (`rates = …`): transactions
//! per second, absolute or as a share of the peak that a closed-loop
//! calibration point of the same series measured.
//!
//! An expression is a comma-separated list of terms:
//!
//! | term                          | rates                                   |
//! |-------------------------------|-----------------------------------------|
//! | `R`                           | R per second                            |
//! | `A..B step S`                 | A, A+S, …; B itself only on the step     |
//! | `P%` (or `P% of peak`)        | P % of the calibration point's tps      |
//! | `A%..B% step S%` (`of peak`)  | A %, A+S %, … of it                     |
//!
//! The result is sorted (shares first, then absolute rates) without
//! duplicates. Pure functions, so the grammar is tested with literal
//! strings.

use super::model::Level;

/// The most levels one list may expand to: far beyond what a machine can
/// run, low enough that a typo fails at once.
pub const MAX_LEVELS: usize = 1_000;

const FORMS: &str = "expected rates per second such as [1000, 2000], \"1000..10000 step 1000\", shares of the closed-loop peak such as \"50%\" or \"10%..100% of peak step 10%\", or \"find\" (the highest rate that holds p99_goal)";

/// Expands one expression into sorted, distinct levels.
pub fn parse(expr: &str) -> Result<Vec<Level>, String> {
    if expr.trim().is_empty() {
        return Err(format!("empty rate list '{expr}': {FORMS}"));
    }
    let mut out = Vec::new();
    for term in expr.split(',') {
        out.extend(term_levels(term.trim())?);
        if out.len() > MAX_LEVELS {
            return Err(format!(
                "'{expr}' makes more than {MAX_LEVELS} rates: use a larger step"
            ));
        }
    }
    normalize(out)
}

/// Sorts and deduplicates; refuses an empty list.
pub fn normalize(mut levels: Vec<Level>) -> Result<Vec<Level>, String> {
    if levels.is_empty() {
        return Err(format!("no rates: {FORMS}"));
    }
    levels.sort_by(|a, b| order(a).partial_cmp(&order(b)).unwrap());
    levels.dedup();
    Ok(levels)
}

fn order(l: &Level) -> (u8, f64) {
    match *l {
        Level::OfPeak(f) => (0, f),
        Level::Rate(r) => (1, r),
        Level::Users(u) => (2, f64::from(u)),
        Level::Probe(n) => (3, f64::from(n)),
    }
}

/// The precision of the search `rates = "find"` uses when none is given,
/// % of the peak: `run --find-rate`'s default.
pub const FIND_PRECISION_PCT: f64 = 2.0;

/// `find` or `find within P%`: the search for the highest rate that holds
/// the p99 goal, to within P % of the closed-loop peak. None: `expr` is
/// not a search; Some(Err) a search written wrong.
pub fn search(expr: &str) -> Option<Result<f64, String>> {
    let rest = expr.trim().strip_prefix("find")?;
    let rest = rest.trim();
    if rest.is_empty() {
        return Some(Ok(FIND_PRECISION_PCT));
    }
    let bad = || {
        format!("bad search '{expr}': write \"find\" or \"find within P%\" (P the precision, % of the closed-loop peak, e.g. \"find within 5%\")")
    };
    let Some(p) = rest
        .strip_prefix("within")
        .and_then(|p| p.trim().strip_suffix('%'))
    else {
        return Some(Err(bad()));
    };
    Some(match p.trim().parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 100.0 => Ok(p),
        Ok(p) => Err(format!(
            "search precision {p} %: give a share of the peak above 0 and at most 100, e.g. \"find within 5%\""
        )),
        Err(_) => Err(bad()),
    })
}

/// One rate given as a number.
pub fn rate(r: f64) -> Result<Level, String> {
    if r > 0.0 && r.is_finite() {
        Ok(Level::Rate(r))
    } else {
        Err(format!(
            "rate {r}: a rate is a positive number of transactions per second"
        ))
    }
}

fn term_levels(term: &str) -> Result<Vec<Level>, String> {
    let bad = |why: &str| format!("bad rate '{term}': {why}; {FORMS}");
    if term.is_empty() {
        return Err(bad("an empty term"));
    }
    let t = term.replace("of peak", " ");
    let (range, step) = match t.split_once("step") {
        Some((r, s)) => (r.trim().to_string(), Some(s.trim().to_string())),
        None => (t.trim().to_string(), None),
    };
    let share = range.contains('%');
    let num = |s: &str, pct: bool| -> Result<f64, String> {
        let s = s.trim();
        let s = match (pct, s.strip_suffix('%')) {
            (true, Some(v)) => v.trim(),
            (true, None) => return Err(bad("mix of shares (%) and rates")),
            (false, Some(_)) => return Err(bad("mix of shares (%) and rates")),
            (false, None) => s,
        };
        let v: f64 = s
            .parse()
            .map_err(|_| bad(&format!("'{s}' is not a number")))?;
        if v > 0.0 && v.is_finite() {
            Ok(v)
        } else {
            Err(bad("rates and shares are positive"))
        }
    };
    let make = |v: f64| {
        if share {
            Level::OfPeak(v / 100.0)
        } else {
            Level::Rate(v)
        }
    };
    match (range.split_once(".."), step) {
        (None, None) => Ok(vec![make(num(&range, share)?)]),
        (None, Some(_)) => Err(bad("a step needs a range A..B")),
        (Some(_), None) => Err(bad("a range needs a step (A..B step S)")),
        (Some((a, b)), Some(s)) => {
            let (a, b, s) = (num(a, share)?, num(b, share)?, num(&s, share)?);
            if b < a {
                return Err(bad("the range ends below its start"));
            }
            let n = ((b - a) / s + 1e-9).floor() as usize + 1;
            if n > MAX_LEVELS {
                return Err(bad(&format!("more than {MAX_LEVELS} rates")));
            }
            // From integer steps, so 0.1 + 0.2 never drifts past the end.
            Ok((0..n).map(|i| make(a + i as f64 * s)).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_and_relative_rates_expand_sorted() {
        assert_eq!(parse("1000").unwrap(), [Level::Rate(1000.0)]);
        assert_eq!(
            parse("1000..4000 step 1000, 2500").unwrap(),
            [1000.0, 2000.0, 2500.0, 3000.0, 4000.0].map(Level::Rate)
        );
        let shares = parse("10%..100% of peak step 30%").unwrap();
        assert_eq!(shares.len(), 4);
        for (l, want) in shares.iter().zip([0.1, 0.4, 0.7, 1.0]) {
            match l {
                Level::OfPeak(f) => assert!((f - want).abs() < 1e-12, "{f} vs {want}"),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(
            parse("50% of peak, 200").unwrap(),
            [Level::OfPeak(0.5), Level::Rate(200.0)]
        );
    }

    #[test]
    fn a_search_is_find_with_its_precision() {
        assert_eq!(search("find"), Some(Ok(FIND_PRECISION_PCT)));
        assert_eq!(search(" find within 5% "), Some(Ok(5.0)));
        assert_eq!(search("find within 0.5 %"), Some(Ok(0.5)));
        assert_eq!(search("50%"), None);
        for (expr, words) in [
            ("find 5%", "find within P%"),
            ("find within 5", "find within P%"),
            ("find within 0%", "above 0"),
            ("find within 150%", "at most 100"),
        ] {
            let e = search(expr).unwrap().unwrap_err();
            assert!(e.contains(words), "{expr}: {e}");
        }
    }

    #[test]
    fn bad_terms_name_themselves() {
        for (expr, words) in [
            ("", "empty rate list"),
            ("0", "positive"),
            ("-5", "positive"),
            ("fast", "'fast' is not a number"),
            ("10%..100 step 10%", "mix of shares"),
            ("1000..100 step 10", "ends below"),
            ("1..1000000 step 1", "more than 1000"),
            ("1000 step 10", "needs a range"),
            ("1000..2000", "needs a step"),
        ] {
            let e = parse(expr).unwrap_err();
            assert!(e.contains(words), "{expr}: {e}");
        }
    }
}
