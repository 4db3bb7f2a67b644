//! Checking the 22 queries' answers (clause 2.1.3.5): each query run with
//! its validation parameters, its rows compared with the answer the spec
//! publishes for scale factor 1 (dbgen's answer files, as the `tpchgen`
//! crate carries them), or with answers stored for another scale.
//!
//! The spec's precision rules, read as one: a value that is an integer in
//! the answer (a key, a count) must match exactly; a decimal must be
//! within 1 % of the answer's, but never more than 100 off (a sum of
//! money) nor asked closer than 0.01 (the answer is rounded to the
//! nearest hundredth); text must match once trailing blanks are dropped
//! (CHAR columns come back padded on some engines). Rows are compared in
//! order: every query orders its result.

use crate::driver::{Dialect, Rows, Value};

/// Query `q` with its validation parameters written into the text (a
/// statement any connection can run without binding).
pub fn sql(q: u8, dialect: Dialect, sf: f64) -> String {
    let mut values = Vec::new();
    super::params::draw(q, sf, None, &mut values);
    let text = super::queries::text(q, dialect);
    let mut out = String::with_capacity(text.len() + 64);
    let mut values = values.iter();
    for ch in text.chars() {
        if ch != '?' {
            out.push(ch);
            continue;
        }
        match values.next() {
            Some(Value::Int(i)) => out.push_str(&i.to_string()),
            Some(Value::Float(f)) => out.push_str(&f.to_string()),
            Some(Value::Text(t)) => {
                out.push('\'');
                out.push_str(&t.replace('\'', "''"));
                out.push('\'');
            }
            Some(Value::Null) | None => out.push_str("NULL"),
        }
    }
    out
}

/// The statement that shows query `q`'s plan (with its validation
/// values) on `dialect`, estimates left out where the server can.
pub fn explain(q: u8, dialect: Dialect, sf: f64) -> String {
    explain_sql(dialect, &sql(q, dialect, sf))
}

/// The statement that asks for the plan of `sql` without running it.
pub fn explain_sql(dialect: Dialect, sql: &str) -> String {
    let prefix = match dialect {
        Dialect::Postgres => "EXPLAIN (COSTS OFF) ",
        Dialect::Mysql => "EXPLAIN ",
        Dialect::Sqlite => "EXPLAIN QUERY PLAN ",
    };
    format!("{prefix}{sql}")
}

/// A plan's text from its EXPLAIN rows: PostgreSQL's lines as they are;
/// MariaDB's table one line per row with the numeric estimates (rows,
/// filtered, key lengths) left out; SQLite's steps' details.
pub fn plan_text(dialect: Dialect, rows: &Rows) -> String {
    let cell = |c: &Option<String>| c.clone().unwrap_or_else(|| "NULL".into());
    let lines: Vec<String> = rows
        .iter()
        .map(|r| match dialect {
            Dialect::Postgres => r.first().map(cell).unwrap_or_default(),
            Dialect::Sqlite => r.last().map(cell).unwrap_or_default(),
            Dialect::Mysql => r
                .iter()
                .enumerate()
                .filter(|(i, c)| *i == 0 || c.as_deref().is_none_or(|v| v.parse::<f64>().is_err()))
                .map(|(_, c)| cell(c))
                .collect::<Vec<_>>()
                .join(" | "),
        })
        .collect();
    lines.join("\n")
}

/// The rows of an answer file: `|`-separated, a header line first.
pub fn parse(answer: &str) -> Vec<Vec<String>> {
    answer
        .lines()
        .filter(|l| !l.trim().is_empty())
        .skip(1)
        .map(|l| l.split('|').map(|c| c.trim().to_string()).collect())
        .collect()
}

/// The answer the spec publishes for query `q` at scale factor `sf`:
/// only scale factor 1 has them.
pub fn published(q: u8, sf: f64) -> Option<&'static str> {
    (sf == 1.0)
        .then(|| tpchgen::q_and_a::answers_sf1::answer(i32::from(q)))
        .flatten()
}

/// [`compare`] with the spec's published answer to query `q`: the copy
/// of Q11's answer that `tpchgen` carries (dbgen's `answers/q11.out`)
/// writes each `ps_partkey` without its last two digits (129760 as
/// `1297`; every other column as published), so Q11's keys are compared
/// with those digits dropped — its values and the rows' order in full.
pub fn compare_published(
    q: u8,
    expected: &[Vec<String>],
    got: &Rows,
    limit: usize,
) -> Option<(u64, Vec<String>)> {
    if q != 11 {
        return compare(expected, got, limit);
    }
    let shown: Rows = got
        .iter()
        .map(|r| {
            let mut r = r.clone();
            if let Some(Some(key)) = r.first_mut() {
                if let Ok(k) = key.trim().parse::<i64>() {
                    *key = (k / 100).to_string();
                }
            }
            r
        })
        .collect();
    compare(expected, &shown, limit)
}

/// Compares `got` with the answer's rows: None when they agree, else
/// what differs (at most `limit` differences, and how many in all).
pub fn compare(expected: &[Vec<String>], got: &Rows, limit: usize) -> Option<(u64, Vec<String>)> {
    let mut diffs = Vec::new();
    let mut count = 0u64;
    if expected.len() != got.len() {
        return Some((
            1,
            vec![format!(
                "{} rows, the answer has {}",
                got.len(),
                expected.len()
            )],
        ));
    }
    for (i, (e, g)) in expected.iter().zip(got).enumerate() {
        let cells = e.len().min(g.len());
        let bad: Vec<String> = (0..cells)
            .filter_map(|c| {
                let g = g[c].as_deref().unwrap_or("NULL").trim_end();
                (!agrees(&e[c], g)).then(|| format!("column {}: {g} (answer {})", c + 1, e[c]))
            })
            .collect();
        if e.len() != g.len() || !bad.is_empty() {
            count += 1;
            if diffs.len() < limit {
                let what = if bad.is_empty() {
                    format!("{} columns, the answer has {}", g.len(), e.len())
                } else {
                    bad.join(", ")
                };
                diffs.push(format!("row {}: {what}", i + 1));
            }
        }
    }
    (count > 0).then_some((count, diffs))
}

/// One value against the answer's, by the precision rules above.
fn agrees(expected: &str, got: &str) -> bool {
    let e = expected.trim();
    let g = got.trim();
    // Finite numbers only: a string such as `inf` or `NaN` (CH's random
    // item names have them) is text.
    let num = |s: &str| {
        s.parse::<f64>()
            .map_err(|_| ())
            .and_then(|x| x.is_finite().then_some(x).ok_or(()))
    };
    match (num(e), num(g)) {
        (Ok(x), Ok(y)) if !e.contains('.') && !e.contains('e') => {
            // An integer in the answer (a key, a count): exactly, however
            // the engine writes it (`323` or `323.00`).
            y.fract() == 0.0 && x == y
        }
        (Ok(x), Ok(y)) => (x - y).abs() <= (0.01 * x.abs()).clamp(0.01, 100.0),
        _ => e == g,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_agree_by_the_precision_rules() {
        assert!(agrees("1478493", "1478493"));
        assert!(!agrees("1478493", "1478494"));
        assert!(agrees("323.00", "323"));
        assert!(agrees("0.05", "0.0499994"));
        assert!(!agrees("0.05", "0.07"));
        assert!(agrees("56586554400.73", "56586554450.00"));
        assert!(!agrees("56586554400.73", "56586554600.00"));
        assert!(agrees("25.52", "25.6"));
        assert!(!agrees("25.52", "25.9"));
        assert!(agrees("Supplier#000005359", "Supplier#000005359"));
        assert!(!agrees("BRAZIL", "FRANCE"));
        assert!(agrees("1994-04-07", "1994-04-07"));
        assert!(agrees("nAn", "nAn") && agrees("INf", "INf"));
        assert!(!agrees("inf", "nan"));
    }

    #[test]
    fn validation_queries_carry_their_values() {
        let q6 = sql(6, Dialect::Postgres, 1.0);
        assert!(
            q6.contains("l_discount between '0.05' and '0.07' and l_quantity < 24"),
            "{q6}"
        );
        let q7 = sql(7, Dialect::Mysql, 1.0);
        assert!(
            q7.contains("extract(year from l_shipdate)") && q7.contains("'FRANCE'"),
            "{q7}"
        );
        assert!(!sql(22, Dialect::Postgres, 1.0).contains('?'));
    }

    #[test]
    fn answers_parse_and_compare_in_order() {
        let a = parse(published(15, 1.0).expect("Q15 at SF 1"));
        assert_eq!(a.len(), 1);
        assert_eq!(a[0][0], "8449");
        let row = |s: &[&str]| s.iter().map(|c| Some(c.to_string())).collect::<Vec<_>>();
        let good = vec![row(&[
            "8449",
            "Supplier#000008449",
            "Wp34zim9qYFbVctdW",
            "20-469-856-8873",
            "1772627.2087",
        ])];
        assert_eq!(compare(&a, &good, 5), None);
        let bad = vec![row(&[
            "8450",
            "Supplier#000008449",
            "Wp34zim9qYFbVctdW",
            "20-469-856-8873",
            "1772627.21",
        ])];
        let (n, d) = compare(&a, &bad, 5).unwrap();
        assert_eq!(n, 1);
        assert!(d[0].starts_with("row 1: column 1: 8450"), "{d:?}");
        assert!(published(1, 0.1).is_none());
        // Q11's published keys lack their last two digits.
        let q11 = parse(published(11, 1.0).unwrap());
        assert_eq!(q11[0][0], "1297");
        let first = vec![row(&["129760", "17538456.86"])];
        assert_eq!(compare_published(11, &q11[..1], &first, 5), None);
        let wrong = vec![row(&["129860", "17538456.86"])];
        assert!(compare_published(11, &q11[..1], &wrong, 5).is_some());
    }
}
