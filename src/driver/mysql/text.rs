//! Client-side SQL text: finding `?` placeholders, formatting parameter
//! values as SQL literals (text protocol, sysbench's `--db-ps-mode=disable`),
//! and the field format of `LOAD DATA`.
//!
//! Everything writes straight into the packet being built, so the text
//! protocol's hot path copies each byte once and allocates nothing.

use std::io::Write as _;

use crate::driver::Value;

/// Byte offsets of the `?` placeholders in `sql`, skipping those inside
/// quoted strings or identifiers ('…', "…", `…`) and comments (`-- `, `#`,
/// `/* */`), as the server's parser would.
pub fn placeholders(sql: &str) -> Vec<usize> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'?' => out.push(i),
            q @ (b'\'' | b'"' | b'`') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    // Backslash escapes in strings (not identifiers); a
                    // doubled quote is two quoted runs in a row, which this
                    // loop handles by itself.
                    if b[i] == b'\\' && q != b'`' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'#' => i = skip_line(b, i),
            b'-' if b.get(i + 1) == Some(&b'-')
                && b.get(i + 2).is_none_or(|c| c.is_ascii_whitespace()) =>
            {
                i = skip_line(b, i)
            }
            b'/' if b.get(i + 1) == Some(&b'*') && b.get(i + 2) != Some(&b'!') => {
                // A `/*! … */` comment is executable by MySQL, so it stays
                // code; any other comment is skipped to its end.
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Index of the newline ending the comment that starts at `i`.
fn skip_line(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i] != b'\n' {
        i += 1;
    }
    i
}

/// Appends `v` as a SQL literal. With `no_backslash_escapes` (the server's
/// `NO_BACKSLASH_ESCAPES` SQL mode) a backslash is an ordinary character and
/// only the quote needs doubling. Fails for NaN and infinities, which have
/// no literal.
#[inline]
pub fn put_literal(out: &mut Vec<u8>, v: &Value, no_backslash_escapes: bool) -> Result<(), String> {
    match v {
        Value::Null => out.extend_from_slice(b"NULL"),
        Value::Int(i) => put_int(out, *i),
        Value::Float(f) => put_float(out, *f)?,
        Value::Text(s) => {
            out.push(b'\'');
            if no_backslash_escapes {
                for &c in s.as_bytes() {
                    if c == b'\'' {
                        out.push(b'\'');
                    }
                    out.push(c);
                }
            } else {
                put_escaped(out, s.as_bytes(), |c| match c {
                    b'\\' => Some(b'\\'),
                    b'\'' => Some(b'\''),
                    b'"' => Some(b'"'),
                    0 => Some(b'0'),
                    b'\n' => Some(b'n'),
                    b'\r' => Some(b'r'),
                    0x1A => Some(b'Z'),
                    _ => None,
                });
            }
            out.push(b'\'');
        }
    }
    Ok(())
}

/// Appends `s` as the body of a single-quoted string (for the driver's own
/// queries: table names in information_schema lookups).
pub fn quote(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len() + 2);
    // Never fails for text.
    let _ = put_literal(&mut out, &Value::Text(s.to_string()), false);
    String::from_utf8(out).expect("escaping keeps UTF-8 intact")
}

/// Appends one field of a `LOAD DATA` row (fields separated by tab, lines by
/// newline, escape character backslash): NULL is `\N`, and the backslash,
/// tab, newline, carriage return and NUL are escaped.
#[inline]
pub fn put_load_field(out: &mut Vec<u8>, v: &Value) -> Result<(), String> {
    match v {
        Value::Null => out.extend_from_slice(b"\\N"),
        Value::Int(i) => put_int(out, *i),
        Value::Float(f) => put_float(out, *f)?,
        Value::Text(s) => put_escaped(out, s.as_bytes(), |c| match c {
            b'\\' => Some(b'\\'),
            b'\t' => Some(b't'),
            b'\n' => Some(b'n'),
            b'\r' => Some(b'r'),
            0 => Some(b'0'),
            _ => None,
        }),
    }
    Ok(())
}

/// Appends `s`, writing each byte that `escape` maps as a backslash and the
/// mapped letter. Runs without special bytes are copied whole.
#[inline]
fn put_escaped(out: &mut Vec<u8>, s: &[u8], escape: impl Fn(u8) -> Option<u8>) {
    let mut run = 0;
    for (i, &c) in s.iter().enumerate() {
        if let Some(e) = escape(c) {
            out.extend_from_slice(&s[run..i]);
            out.push(b'\\');
            out.push(e);
            run = i + 1;
        }
    }
    out.extend_from_slice(&s[run..]);
}

#[inline]
fn put_int(out: &mut Vec<u8>, i: i64) {
    // Writing to a Vec cannot fail; integer formatting does not allocate.
    let _ = write!(out, "{i}");
}

/// Floats in Rust's shortest round-trip form (`{:?}`: `0.1`, `1e300`),
/// which MySQL reads back as the same DOUBLE.
fn put_float(out: &mut Vec<u8>, f: f64) -> Result<(), String> {
    if !f.is_finite() {
        return Err(format!("{f} has no SQL literal"));
    }
    let _ = write!(out, "{f:?}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(v: Value, nbe: bool) -> String {
        let mut out = Vec::new();
        put_literal(&mut out, &v, nbe).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn finds_placeholders_outside_quotes_and_comments() {
        let sql = "SELECT '?', \"?\", `?`, 'it''s ?', 'a\\'?' FROM t WHERE a = ? -- ?\n\
                   AND b = ? # ?\n AND /* ? */ c = ? /*! AND d = ? */";
        let found: Vec<&str> = placeholders(sql).iter().map(|&i| &sql[i..]).collect();
        assert_eq!(found.len(), 4, "{found:?}");
        assert!(found[0].starts_with("? -- "));
        assert!(found[1].starts_with("? # "));
        assert!(found[2].starts_with("? /*! "));
        assert!(found[3].starts_with("? */"));
        assert_eq!(placeholders("UPDATE t SET k=k+1 WHERE id=?"), [28]);
        assert_eq!(
            placeholders("SELECT 5--?"),
            [10],
            "`--` needs a space to comment"
        );
    }

    #[test]
    fn formats_literals() {
        assert_eq!(lit(Value::Null, false), "NULL");
        assert_eq!(lit(Value::Int(-42), false), "-42");
        assert_eq!(lit(Value::Int(i64::MIN), false), "-9223372036854775808");
        assert_eq!(lit(Value::Float(0.1), false), "0.1");
        assert_eq!(lit(Value::Float(1e300), false), "1e300");
        assert_eq!(lit(Value::Float(2.0), false), "2.0");
        assert!(put_literal(&mut Vec::new(), &Value::Float(f64::NAN), false).is_err());
        assert_eq!(
            lit(Value::Text("a'b\\c\nd\re\0f\u{1a}g\"h".into()), false),
            r#"'a\'b\\c\nd\re\0f\Zg\"h'"#
        );
        assert_eq!(lit(Value::Text("a'b\\c".into()), true), "'a''b\\c'");
        assert_eq!(
            lit(Value::Text("plain ünïcode".into()), false),
            "'plain ünïcode'"
        );
        assert_eq!(quote("o'neil"), "'o\\'neil'");
    }

    #[test]
    fn formats_load_data_fields() {
        let mut out = Vec::new();
        for v in [
            Value::Int(7),
            Value::Null,
            Value::Text("a\tb\nc\\d\re\0".into()),
            Value::Float(1.5),
        ] {
            put_load_field(&mut out, &v).unwrap();
            out.push(b'|');
        }
        assert_eq!(out, b"7|\\N|a\\tb\\nc\\\\d\\re\\0|1.5|");
    }
}
