//! A study's reproduction as one typed, validated spec: its published
//! figures (`[[reference]]`, each CSV parsed once into [`RefData`]), the
//! publication's conclusions (`[[conclusion]]`, with the seed's own words
//! and where they are) and how the study differs from the publication
//! (`[[deviation]]`).
//!
//! The study loader (`study::reference`) builds it from the study file,
//! with every problem located there; the runner stores it in the results
//! database as JSON; reports read it back from there. Nothing re-reads the
//! study file's tables or the CSV text to render a report.

use serde::{Deserialize, Serialize};

pub mod expr;
pub mod published;

use published::RefData;

/// Everything a study says about the publication it reproduces.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReproSpec {
    pub references: Vec<RefSpec>,
    pub conclusions: Vec<ConclusionSpec>,
    pub deviations: Vec<Deviation>,
}

impl ReproSpec {
    /// Whether the study reproduces anything (a report section is due).
    pub fn is_empty(&self) -> bool {
        self.references.is_empty() && self.conclusions.is_empty() && self.deviations.is_empty()
    }
}

/// One `[[reference]]`: a file of published figures and how the study's
/// series stand for its series.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RefSpec {
    /// The file as named in the study.
    pub file: String,
    pub label: Option<String>,
    /// The metric compared unless a statement names another.
    pub metric: String,
    /// (ours `target/variant`, theirs series).
    pub map: Vec<(String, String)>,
    /// (ours CPU set label, theirs CPU configuration).
    pub cpus: Vec<(String, String)>,
    /// The file's values, as parsed when the study was loaded.
    pub data: RefData,
}

/// One `[[conclusion]]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConclusionSpec {
    /// The row's short wording.
    pub text: String,
    /// The publication's sentence, verbatim; None: our own observation,
    /// never shown among the publication's conclusions.
    pub quote: Option<String>,
    /// Where the quote is: `FILE:LINE`.
    pub source: Option<String>,
    /// The statement checking it (`report::study::statement` evaluates it).
    pub check: Option<String>,
    /// Why it cannot be checked here (`measurable = false`).
    pub unmeasurable: Option<String>,
}

impl ConclusionSpec {
    /// The publication's own conclusion (quoted), rather than ours.
    pub fn is_seeds(&self) -> bool {
        self.quote.is_some()
    }
}

/// One `[[deviation]]`: what the publication ran, what the study runs
/// instead, and why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Deviation {
    pub what: String,
    pub seed: String,
    pub ours: String,
    pub why: String,
}

/// Words that stand for numbers in a seed's sentences ("half", "twice").
const NUMBER_WORDS: [(&str, f64); 8] = [
    ("half", 0.5),
    ("halves", 0.5),
    ("third", 1.0 / 3.0),
    ("quarter", 0.25),
    ("twice", 2.0),
    ("double", 2.0),
    ("doubles", 2.0),
    ("triple", 3.0),
];

/// The numbers a sentence says: digits (with thousands separators and
/// decimals; a percentage also as a factor: "150%" gives 150 and 1.5) and
/// the words of [`NUMBER_WORDS`].
pub fn numbers_in(text: &str) -> Vec<f64> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = text.chars().collect();
    let flush = |cur: &mut String, out: &mut Vec<f64>, next: &[char]| {
        let t = cur.trim_end_matches(['.', ',']).replace(',', "");
        if let Ok(v) = t.parse::<f64>() {
            out.push(v);
            let rest: String = next.iter().take(3).collect();
            if rest.trim_start().starts_with('%') {
                // "5 %" is also 0.05, and "5 % more" or "less" a factor.
                out.extend([v / 100.0, 1.0 + v / 100.0, 1.0 - v / 100.0]);
            }
        }
        cur.clear();
    };
    for (i, c) in chars.iter().enumerate() {
        if c.is_ascii_digit() || ((*c == '.' || *c == ',') && !cur.is_empty()) {
            cur.push(*c);
        } else if !cur.is_empty() {
            flush(&mut cur, &mut out, &chars[i..]);
        }
    }
    flush(&mut cur, &mut out, &[]);
    let lower = text.to_lowercase();
    for word in lower.split(|c: char| !c.is_ascii_alphabetic()) {
        if let Some((_, v)) = NUMBER_WORDS.iter().find(|(w, _)| *w == word) {
            out.push(*v);
        }
    }
    out
}

/// The numbers of a quoted statement that the quote does not say: a
/// seed's conclusion compares with its own numbers or with none. A rank
/// needs no number in the words up to the count of series the statement
/// names ("the best" is rank 1; "both are best" ranks 1 and 2).
pub fn foreign_numbers(statement: &expr::Statement, quote: &str) -> Vec<f64> {
    use expr::{Func, Term};
    let said = numbers_in(quote);
    let named = statement.series().len() as f64;
    let mut out = Vec::new();
    statement.each(&mut |lhs, _, rhs| {
        let rank = |t: &Term| {
            matches!(
                t,
                Term::Call {
                    func: Func::Rank,
                    ..
                }
            )
        };
        for (t, other) in [(lhs, rhs), (rhs, lhs)] {
            let mut nums = Vec::new();
            match t {
                Term::Num(v) if !(rank(other) && v.fract() == 0.0 && *v >= 1.0 && *v <= named) => {
                    nums.push(*v)
                }
                Term::Times(k, _) => nums.push(*k),
                _ => {}
            }
            for v in nums.into_iter().filter(|v| v.is_finite()) {
                let close = |s: &f64| (s - v).abs() <= 1e-9 * v.abs().max(1.0);
                if !said.iter().any(close) && !out.iter().any(close) {
                    out.push(v);
                }
            }
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_read_from_words_and_digits() {
        assert_eq!(
            numbers_in("MySQL 5.0 is 9.25% faster, at 1,048 tps, half of it."),
            // "9.25%" also as the ratio it makes: 1 ± 0.0925.
            vec![5.0, 9.25, 0.0925, 1.0925, 0.9075, 1048.0, 0.5]
        );
        assert_eq!(numbers_in("peaks by 20."), vec![20.0]);
    }

    #[test]
    fn a_threshold_must_be_in_the_quote() {
        let s = super::expr::parse(r#"sag("A", 500) < 15"#).unwrap();
        assert_eq!(foreign_numbers(&s, "keeps high under load"), vec![15.0]);
        assert!(foreign_numbers(&s, "sags by 15 % at most").is_empty());
        let s =
            super::expr::parse(r#"rank("A") == 1 and value("A", 8) < 0.5 * peak("B")"#).unwrap();
        assert!(foreign_numbers(&s, "A is best; at 8 it is half of B's peak").is_empty());
        assert_eq!(foreign_numbers(&s, "A is best"), vec![0.5]);
    }
}
