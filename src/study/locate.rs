//! Where in a study file a problem is: byte offsets (what toml's spans hold)
//! turned into `FILE:LINE:COLUMN` and a field path such as
//! `workload[1].options`, so every error points at the text to fix.

use std::fmt::Display;
use std::ops::Range;
use std::path::Path;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::UsageError;

/// A study file's text and the name it is reported under.
pub(super) struct Source<'a> {
    pub path: &'a Path,
    pub text: &'a str,
}

impl Source<'_> {
    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, before[line_start..].chars().count() + 1)
    }

    /// `FILE:LINE:COL: FIELD: MESSAGE`; without a span, `FILE: FIELD: MESSAGE`.
    pub fn error(&self, span: Option<Range<usize>>, field: &str, msg: impl Display) -> UsageError {
        let at = match span {
            Some(s) => {
                let (line, col) = self.line_col(s.start);
                format!("{}:{line}:{col}", self.path.display())
            }
            None => self.path.display().to_string(),
        };
        if field.is_empty() {
            UsageError(format!("{at}: {msg}"))
        } else {
            UsageError(format!("{at}: {field}: {msg}"))
        }
    }

    /// An error about a spanned value.
    pub fn at<T>(&self, v: &Spanned<T>, field: &str, msg: impl Display) -> UsageError {
        self.error(Some(v.span()), field, msg)
    }

    /// A toml syntax or type error, with the field it is in and serde's
    /// wording turned into the study's (tables, arrays, integers).
    pub fn toml_error(&self, e: &toml::de::Error) -> UsageError {
        let Some(span) = e.span() else {
            return self.error(None, "", humanize(e.message()));
        };
        let (mut path, on_key) = field_path(self.text, span.start).unwrap_or_default();
        let mut msg = humanize(e.message());
        if let Some(rest) = e.message().strip_prefix("unknown field `") {
            // The span is the unknown key: name the table it is in (at the
            // top level, the key itself).
            if on_key && path.len() > 1 {
                path.pop();
            }
            msg = unknown_key(rest).unwrap_or(msg);
        }
        if msg.contains("invalid type: table, expected an array") {
            if let Some(key) = path.last() {
                msg.push_str(&format!(
                    " (write [[{key}]], with double brackets, for each entry)"
                ));
            }
        }
        self.error(Some(span), &join(&path), msg)
    }
}

/// Rewrites serde's Rust-flavoured type names into TOML's.
fn humanize(msg: &str) -> String {
    let mut m = msg.trim_end().to_string();
    for (from, to) in [
        ("expected u32", "expected a non-negative integer"),
        ("expected u64", "expected a non-negative integer"),
        ("expected f64", "expected a number"),
        ("expected a sequence", "expected an array"),
        ("expected a map", "expected a table"),
        ("invalid type: map", "invalid type: table"),
        ("invalid type: sequence", "invalid type: array"),
        ("unknown variant", "unknown value"),
    ] {
        m = m.replace(from, to);
    }
    m
}

/// `bogus`, expected one of `a`, `b`` → unknown key with a suggestion.
fn unknown_key(rest: &str) -> Option<String> {
    let (key, tail) = rest.split_once('`')?;
    let expected: Vec<&str> = tail.split('`').skip(1).step_by(2).collect();
    if expected.is_empty() {
        return Some(format!("unknown key '{key}': this table takes no keys"));
    }
    let hint = suggest(key, &expected, "expected one of");
    Some(format!("unknown key '{key}'{hint}"))
}

/// Dotted path with `[i]` for array elements.
fn join(path: &[String]) -> String {
    let mut s = String::new();
    for p in path {
        if !p.starts_with('[') && !s.is_empty() {
            s.push('.');
        }
        s.push_str(p);
    }
    s
}

/// The path of keys leading to `offset`, and whether the offset lies on the
/// last key itself (rather than in its value).
fn field_path(text: &str, offset: usize) -> Option<(Vec<String>, bool)> {
    let doc = DeTable::parse(text).ok()?;
    let mut path = Vec::new();
    let on_key = walk_table(doc.get_ref(), offset, &mut path)?;
    Some((path, on_key))
}

fn contains(span: Range<usize>, offset: usize) -> bool {
    span.contains(&offset) || (span.is_empty() && span.start == offset)
}

/// Descends into the entry holding `offset`; Some(on_key) when found.
fn walk_table(t: &DeTable<'_>, offset: usize, path: &mut Vec<String>) -> Option<bool> {
    for (k, v) in t.iter() {
        path.push(k.get_ref().to_string());
        if contains(k.span(), offset) {
            return Some(true);
        }
        if let Some(on_key) = walk_value(v, offset, path) {
            return Some(on_key);
        }
        path.pop();
    }
    None
}

/// Descends into a value (tables and arrays); Some(false) when the
/// offset lies in the value itself.
fn walk_value(v: &Spanned<DeValue<'_>>, offset: usize, path: &mut Vec<String>) -> Option<bool> {
    // Children first: an array of tables' element spans cover only their
    // [[header]], while their keys lie below it.
    match v.get_ref() {
        DeValue::Table(t) => {
            if let Some(on_key) = walk_table(t, offset, path) {
                return Some(on_key);
            }
        }
        DeValue::Array(a) => {
            for (i, item) in a.iter().enumerate() {
                path.push(format!("[{i}]"));
                if let Some(on_key) = walk_value(item, offset, path) {
                    return Some(on_key);
                }
                path.pop();
            }
        }
        _ => {}
    }
    contains(v.span(), offset).then_some(false)
}

/// What to add to "unknown X 'given'": a suggestion when one is close,
/// else the list of what exists (`intro: a, b, c`).
pub(super) fn suggest(given: &str, candidates: &[&str], intro: &str) -> String {
    match did_you_mean(given, candidates.iter().copied()) {
        Some(s) => format!(" (did you mean '{s}'?)"),
        None => format!("; {intro}: {}", candidates.join(", ")),
    }
}

/// The candidate closest to `given` if it is close enough to be a typo:
/// within a third of the length in edits (at least one; a swap of two
/// neighbours is one edit: optimal string alignment), or differing only in
/// case, `-` versus `_`.
pub(super) fn did_you_mean<'a>(
    given: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let norm = |s: &str| s.to_ascii_lowercase().replace('-', "_");
    let g = norm(given);
    candidates
        .into_iter()
        .map(|c| (strsim::osa_distance(&g, &norm(c)), c))
        .filter(|(d, _)| *d <= (given.chars().count() / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(text: &str) -> Source<'_> {
        Source {
            path: Path::new("s.toml"),
            text,
        }
    }

    #[test]
    fn offsets_become_lines_and_columns() {
        let s = src("a = 1\nbé = 2\n");
        assert_eq!(s.line_col(0), (1, 1));
        assert_eq!(s.line_col(4), (1, 5));
        assert_eq!(s.line_col(6), (2, 1));
        // Columns count characters, not bytes: 'é' is two bytes.
        assert_eq!(s.line_col(10), (2, 4));
        assert_eq!(s.line_col(999), (3, 1));
    }

    #[test]
    fn paths_lead_to_the_offset() {
        let text = "name = \"x\"\n[[workload]]\nname = \"a\"\n[[workload]]\nname = \"b\"\noptions = { tables = 2, x = [1, 2] }\n";
        let at = |needle: &str| field_path(text, text.find(needle).unwrap()).unwrap();
        let p = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(at("\"b\""), (p(&["workload", "[1]", "name"]), false));
        assert_eq!(
            at("tables"),
            (p(&["workload", "[1]", "options", "tables"]), true)
        );
        assert_eq!(
            at("2]"),
            (p(&["workload", "[1]", "options", "x", "[1]"]), false)
        );
        assert_eq!(join(&at("2]").0), "workload[1].options.x[1]");
    }

    #[test]
    fn suggestions_are_close_matches_only() {
        let names = ["table-size", "tables", "range-size"];
        assert_eq!(did_you_mean("tabel-size", names), Some("table-size"));
        assert_eq!(did_you_mean("table_size", names), Some("table-size"));
        assert_eq!(did_you_mean("tablez", names), Some("tables"));
        assert_eq!(did_you_mean("threads", names), None);
        assert_eq!(strsim::osa_distance("kitten", "sitting"), 3);
        assert_eq!(strsim::osa_distance("tabel", "table"), 1);
        assert_eq!(strsim::osa_distance("", "ab"), 2);
    }

    #[test]
    fn serde_messages_read_as_toml() {
        assert_eq!(
            unknown_key("zzz`, expected one of `table`, `name`").unwrap(),
            "unknown key 'zzz'; expected one of: table, name"
        );
        assert_eq!(
            unknown_key("tabel`, expected one of `table`, `name`").unwrap(),
            "unknown key 'tabel' (did you mean 'table'?)"
        );
        assert_eq!(
            humanize("invalid type: string \"x\", expected u32"),
            "invalid type: string \"x\", expected a non-negative integer"
        );
    }
}
