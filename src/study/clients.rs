//! Client-count lists as a study writes them: plain integers, or range
//! expressions such as `"1,5,10,20,50..500 step 50"` and `"pow2 1..1024"`.
//!
//! An expression is a comma-separated list of terms:
//!
//! | term            | counts                                             |
//! |-----------------|----------------------------------------------------|
//! | `N`             | N                                                  |
//! | `A..B`          | A, A+1, …, B                                       |
//! | `A..B step S`   | A, A+S, A+2S, …; B itself only if it is on the step |
//! | `pow2 A..B`     | the powers of two from A to B (1, 2, 4, …)         |
//!
//! Whatever the terms, the result is sorted ascending without duplicates.
//! Pure functions, so the grammar is tested with literal strings.

/// The most client counts one list may expand to: far beyond any sweep a
/// machine can run, low enough that a typo (`1..1000000`) fails at once
/// instead of planning a million points.
pub const MAX_COUNTS: usize = 10_000;

/// Expands one expression into sorted, distinct client counts.
///
/// Errors (as text naming the bad term and the accepted forms): an empty
/// expression or term, a count of 0, a malformed number, a range whose end
/// is below its start, a step of 0, a `pow2` range holding no power of two,
/// more than [`MAX_COUNTS`] counts.
pub fn parse(expr: &str) -> Result<Vec<u32>, String> {
    if expr.trim().is_empty() {
        return Err(format!("empty client list '{expr}': {FORMS}"));
    }
    let mut counts = Vec::new();
    for term in expr.split(',') {
        counts.extend(parse_term(term.trim())?);
        if counts.len() > MAX_COUNTS {
            return Err(too_many(expr));
        }
    }
    normalize(counts)
}

/// Sorts and deduplicates counts gathered from several terms or list
/// elements; an empty list or a 0 is an error.
pub fn normalize(mut counts: Vec<u32>) -> Result<Vec<u32>, String> {
    counts.sort_unstable();
    counts.dedup();
    match counts.first() {
        None => Err(format!("the client list is empty: {FORMS}")),
        Some(0) => Err("a client count of 0: every point needs at least 1 client".into()),
        Some(_) if counts.len() > MAX_COUNTS => Err(format!(
            "{} client counts: at most {MAX_COUNTS} are allowed",
            counts.len()
        )),
        Some(_) => Ok(counts),
    }
}

/// The accepted forms, for error messages.
const FORMS: &str =
    "expected counts and ranges such as \"1,2,4\", \"10..100 step 10\" or \"pow2 1..1024\"";

fn too_many(expr: &str) -> String {
    format!("'{expr}' expands to more than {MAX_COUNTS} client counts; use a step, e.g. \"1..1000 step 50\"")
}

/// One comma-separated term: `N`, `A..B`, `A..B step S` or `pow2 A..B`.
fn parse_term(term: &str) -> Result<Vec<u32>, String> {
    if term.is_empty() {
        return Err(format!("empty term in client list: {FORMS}"));
    }
    if let Some(range) = term.strip_prefix("pow2") {
        let (a, b) = parse_range(term, range.trim())?;
        // Powers of two are ≥ 1, so a range starting at 0 is fine here.
        let pows: Vec<u32> = (0..32)
            .map(|i| 1u32 << i)
            .filter(|p| (a..=b).contains(p))
            .collect();
        if pows.is_empty() {
            return Err(format!("'{term}' holds no power of two"));
        }
        return Ok(pows);
    }
    if !term.contains("..") {
        return Ok(vec![number(term, term)?]);
    }
    let (range, step) = match term.split_once("step") {
        Some((range, step)) => (range.trim(), number(term, step.trim())?),
        None => (term, 1),
    };
    if step == 0 {
        return Err(format!("'{term}': the step must be at least 1"));
    }
    let (a, b) = parse_range(term, range)?;
    if a == 0 {
        return Err(format!(
            "'{term}' starts at 0: every point needs at least 1 client"
        ));
    }
    if (b - a) / step >= MAX_COUNTS as u32 {
        return Err(too_many(term));
    }
    Ok((a..=b).step_by(step as usize).collect())
}

/// `A..B` with A ≤ B.
fn parse_range(term: &str, range: &str) -> Result<(u32, u32), String> {
    let Some((a, b)) = range.split_once("..") else {
        return Err(format!("'{term}': expected a range A..B, {FORMS}"));
    };
    let (a, b) = (number(term, a.trim())?, number(term, b.trim())?);
    if a > b {
        return Err(format!("'{term}': the range ends below its start"));
    }
    Ok((a, b))
}

/// A count within a term; the error quotes the whole term.
fn number(term: &str, s: &str) -> Result<u32, String> {
    s.parse()
        .map_err(|_| format!("bad client count '{s}' in '{term}': {FORMS}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lists_are_sorted_and_deduplicated() {
        assert_eq!(parse("8, 1,2,4,2").unwrap(), vec![1, 2, 4, 8]);
        assert_eq!(parse("64").unwrap(), vec![64]);
        assert_eq!(normalize(vec![3, 1, 3]).unwrap(), vec![1, 3]);
    }

    #[test]
    fn stepped_ranges_include_the_end_only_on_the_step() {
        assert_eq!(
            parse("1,5,10,20,50..500 step 50").unwrap(),
            vec![1, 5, 10, 20, 50, 100, 150, 200, 250, 300, 350, 400, 450, 500]
        );
        assert_eq!(parse("10..35 step 10").unwrap(), vec![10, 20, 30]);
        assert_eq!(parse("3..6").unwrap(), vec![3, 4, 5, 6]);
        assert_eq!(parse("7..7").unwrap(), vec![7]);
        assert_eq!(parse(" 1 .. 3 step 2 ").unwrap(), vec![1, 3]);
    }

    #[test]
    fn powers_of_two_within_a_range() {
        assert_eq!(
            parse("pow2 1..1024").unwrap(),
            vec![1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
        );
        assert_eq!(parse("pow2 3..40").unwrap(), vec![4, 8, 16, 32]);
        assert_eq!(parse("pow2 0..2").unwrap(), vec![1, 2]);
        assert_eq!(parse("1, 3, pow2 2..8").unwrap(), vec![1, 2, 3, 4, 8]);
    }

    #[test]
    fn bad_expressions_say_what_is_wrong() {
        let err = |s: &str| parse(s).unwrap_err();
        assert!(err("").contains("empty client list"));
        assert!(err("1,,2").contains("empty term"));
        assert!(err("1,").contains("empty term"));
        assert!(err("0").contains("at least 1 client"));
        assert!(err("0..10").contains("starts at 0"));
        assert!(err("10..1").contains("ends below its start"));
        assert!(err("1..10 step 0").contains("step must be at least 1"));
        assert!(err("pow2 5..7").contains("no power of two"));
        assert!(err("pow2 8").contains("expected a range"));
        assert!(err("ten").contains("bad client count 'ten'"));
        assert!(err("-1").contains("bad client count '-1'"));
        assert!(err("1..5 stride 2").contains("bad client count"));
        assert!(err("1..5000000").contains("more than 10000"));
        assert!(err("4294967296").contains("bad client count"));
        assert!(normalize(vec![]).unwrap_err().contains("empty"));
        assert!(normalize(vec![0, 4]).unwrap_err().contains("0"));
    }
}
