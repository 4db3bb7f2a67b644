//! Values as text, three ways: as Bind parameters (text format), as SQL
//! literals (text mode, sysbench's `--db-ps-mode disable`), and as fields of
//! `COPY … FROM STDIN` (text format; binary COPY's are in `binary.rs`). Also the
//! statement templates of text mode, split once at prepare so that
//! execution only copies.
//!
//! Everything here appends to a caller's buffer and allocates nothing once
//! the buffer has grown to its working size.

use std::ops::Range;

use bytes::{BufMut, BytesMut};

use crate::driver::Value;

/// Formats `v` in decimal into `buf`, returning the digits (with sign).
/// Faster than `fmt` and allocation-free; the hot path formats every
/// integer parameter through it.
pub(super) fn int_digits(v: i64, buf: &mut [u8; 20]) -> &[u8] {
    let mut n = v.unsigned_abs();
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        i -= 1;
        buf[i] = b'-';
    }
    &buf[i..]
}

/// Appends `x` as PostgreSQL's float input accepts it: shortest round-trip
/// digits (`{:?}` keeps a `.0` or an exponent, so the text reads back as the
/// same double), or `NaN` / `Infinity` / `-Infinity`.
fn push_float(out: &mut BytesMut, x: f64) {
    use std::fmt::Write as _;
    if x.is_nan() {
        out.put_slice(b"NaN");
    } else if x.is_infinite() {
        out.put_slice(if x > 0.0 { b"Infinity" } else { b"-Infinity" });
    } else {
        // Writing to a BytesMut cannot fail.
        let _ = write!(out, "{x:?}");
    }
}

/// Appends a Bind parameter in text format; returns false for NULL (which
/// has no bytes: the caller writes length -1).
pub(super) fn push_param(out: &mut BytesMut, v: &Value) -> bool {
    match v {
        Value::Null => return false,
        Value::Int(i) => out.put_slice(int_digits(*i, &mut [0; 20])),
        Value::Float(x) => push_float(out, *x),
        Value::Text(s) => out.put_slice(s.as_bytes()),
    }
    true
}

/// Appends `v` as an SQL literal. Text is quoted with `'` doubled; text with
/// a backslash becomes an `E'…'` string with backslashes doubled too, which
/// reads back the same whatever `standard_conforming_strings` says.
/// Negative numbers are parenthesised so that `x - $1` cannot turn into the
/// comment `x --1`.
pub(super) fn push_literal(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("NULL"),
        Value::Int(i) => {
            let mut buf = [0; 20];
            let digits = int_digits(*i, &mut buf);
            // Digits and '-' are ASCII.
            let digits = std::str::from_utf8(digits).unwrap_or_default();
            if *i < 0 {
                out.push('(');
                out.push_str(digits);
                out.push(')');
            } else {
                out.push_str(digits);
            }
        }
        Value::Float(x) => {
            use std::fmt::Write as _;
            // Writing to a String cannot fail.
            let _ = match (x.is_finite(), x.is_sign_negative()) {
                (true, false) => write!(out, "{x:?}"),
                (true, true) => write!(out, "({x:?})"),
                (false, _) if x.is_nan() => write!(out, "'NaN'::float8"),
                (false, _) if *x > 0.0 => write!(out, "'Infinity'::float8"),
                (false, _) => write!(out, "'-Infinity'::float8"),
            };
        }
        Value::Text(s) => {
            let escape_backslash = s.contains('\\');
            if escape_backslash {
                out.push('E');
            }
            out.push('\'');
            for ch in s.chars() {
                match ch {
                    '\'' => out.push_str("''"),
                    '\\' if escape_backslash => out.push_str("\\\\"),
                    c => out.push(c),
                }
            }
            out.push('\'');
        }
    }
}

/// Appends `v` as one field of COPY's text format: `\N` for NULL, and in
/// text the four bytes that would break the row structure (backslash, tab,
/// newline, carriage return) as backslash escapes.
pub(super) fn push_copy_field(out: &mut BytesMut, v: &Value) {
    match v {
        Value::Null => out.put_slice(b"\\N"),
        Value::Int(i) => out.put_slice(int_digits(*i, &mut [0; 20])),
        Value::Float(x) => push_float(out, *x),
        Value::Text(s) => {
            let bytes = s.as_bytes();
            let special = |b: &u8| matches!(b, b'\\' | b'\t' | b'\n' | b'\r');
            if !bytes.iter().any(special) {
                // The common case (sysbench's digit strings): one copy.
                out.put_slice(bytes);
                return;
            }
            for &b in bytes {
                match b {
                    b'\\' => out.put_slice(b"\\\\"),
                    b'\t' => out.put_slice(b"\\t"),
                    b'\n' => out.put_slice(b"\\n"),
                    b'\r' => out.put_slice(b"\\r"),
                    _ => out.put_u8(b),
                }
            }
        }
    }
}

/// A statement of text mode: its SQL and where its `$n` placeholders are, so
/// that each execution copies the pieces between them and the literals.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Template {
    sql: String,
    /// Placeholders in order of appearance: the byte range of `$n` in `sql`
    /// and the parameter index (n - 1).
    holes: Vec<(Range<usize>, usize)>,
}

impl Template {
    /// Finds the `$n` placeholders of `sql`, skipping quoted strings, quoted
    /// identifiers and comments, where a `$1` is just text.
    pub(super) fn new(sql: &str) -> Template {
        let b = sql.as_bytes();
        let mut holes = Vec::new();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                q @ (b'\'' | b'"') => {
                    // A doubled quote inside ends and re-opens the string,
                    // which this loop handles as two strings: same result.
                    i += 1;
                    while i < b.len() && b[i] != q {
                        i += 1;
                    }
                    i += 1;
                }
                b'-' if b.get(i + 1) == Some(&b'-') => {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                }
                b'/' if b.get(i + 1) == Some(&b'*') => {
                    i += 2;
                    while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                        i += 1;
                    }
                    i += 2;
                }
                b'$' if i + 1 < b.len()
                    && b[i + 1].is_ascii_digit()
                    // `a$1` is an identifier, not a placeholder.
                    && !(i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
                {
                    let start = i;
                    i += 1;
                    let mut n = 0usize;
                    while i < b.len() && b[i].is_ascii_digit() {
                        n = n
                            .saturating_mul(10)
                            .saturating_add(usize::from(b[i] - b'0'));
                        i += 1;
                    }
                    holes.push((start..i, n.saturating_sub(1)));
                }
                _ => i += 1,
            }
        }
        Template {
            sql: sql.to_string(),
            holes,
        }
    }

    /// Appends the statement with `params` substituted to `out`. Fails
    /// with the 1-based number of a placeholder that has no parameter.
    pub(super) fn render(&self, params: &[Value], out: &mut String) -> Result<(), usize> {
        let mut at = 0;
        for (range, p) in &self.holes {
            let v = params.get(*p).ok_or(p + 1)?;
            out.push_str(&self.sql[at..range.start]);
            push_literal(out, v);
            at = range.end;
        }
        out.push_str(&self.sql[at..]);
        Ok(())
    }
}

/// Rows a command changed, from its CommandComplete tag (`INSERT 0 5`,
/// `UPDATE 3`, `DELETE 1`, `MERGE 2`, `COPY 100`; `SELECT n` only when the
/// command returned no rows, i.e. `CREATE TABLE AS` / `SELECT INTO`). Zero
/// for everything else.
pub(super) fn tag_affected(tag: &[u8], result_set: bool) -> u64 {
    let verb_end = tag.iter().position(|&b| b == b' ').unwrap_or(tag.len());
    let counts = match &tag[..verb_end] {
        b"INSERT" | b"UPDATE" | b"DELETE" | b"MERGE" | b"COPY" => true,
        b"SELECT" => !result_set,
        _ => false,
    };
    if !counts {
        return 0;
    }
    let last = tag.rsplit(|&b| b == b' ').next().unwrap_or_default();
    last.iter()
        .try_fold(0u64, |n, &d| {
            d.is_ascii_digit()
                .then(|| n.saturating_mul(10).saturating_add(u64::from(d - b'0')))
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Value {
        Value::Text(s.to_string())
    }

    #[test]
    fn integers_as_digits() {
        for v in [0, 7, -7, 1234567890, i64::MAX, i64::MIN] {
            assert_eq!(int_digits(v, &mut [0; 20]), v.to_string().as_bytes());
        }
    }

    #[test]
    fn bind_parameters_in_text_format() {
        let mut b = BytesMut::new();
        assert!(push_param(&mut b, &Value::Int(-42)));
        assert!(push_param(&mut b, &Value::Float(0.5)));
        assert!(push_param(&mut b, &Value::Float(f64::NEG_INFINITY)));
        assert!(push_param(&mut b, &text("a'b\\c")));
        assert!(!push_param(&mut b, &Value::Null));
        assert_eq!(&b[..], b"-420.5-Infinitya'b\\c");
    }

    #[test]
    fn literals_are_quoted_and_escaped() {
        let lit = |v: Value| {
            let mut s = String::new();
            push_literal(&mut s, &v);
            s
        };
        assert_eq!(lit(Value::Null), "NULL");
        assert_eq!(lit(Value::Int(12)), "12");
        assert_eq!(lit(Value::Int(-12)), "(-12)");
        assert_eq!(lit(Value::Float(1.0)), "1.0");
        assert_eq!(lit(Value::Float(-2.5)), "(-2.5)");
        assert_eq!(lit(Value::Float(f64::NAN)), "'NaN'::float8");
        assert_eq!(lit(text("it's")), "'it''s'");
        assert_eq!(lit(text(r"a\b'c")), r"E'a\\b''c'");
        assert_eq!(lit(text("")), "''");
    }

    #[test]
    fn copy_fields_escape_structure_bytes() {
        let mut b = BytesMut::new();
        for v in [
            Value::Int(3),
            Value::Null,
            text("plain-123"),
            text("t\tn\nr\rb\\"),
        ] {
            push_copy_field(&mut b, &v);
            b.put_u8(b'|');
        }
        assert_eq!(&b[..], b"3|\\N|plain-123|t\\tn\\nr\\rb\\\\|");
    }

    #[test]
    fn templates_find_placeholders_outside_quotes_and_comments() {
        let t = Template::new(
            "SELECT '$1', \"a$2\", x$3 FROM t -- $4\n WHERE id BETWEEN $1 AND $10 /* $5 */ OR c = $2",
        );
        let params: Vec<Value> = (1..=10).map(Value::Int).collect();
        let mut out = String::new();
        t.render(&params, &mut out).unwrap();
        assert_eq!(
            out,
            "SELECT '$1', \"a$2\", x$3 FROM t -- $4\n WHERE id BETWEEN 1 AND 10 /* $5 */ OR c = 2"
        );
        assert_eq!(t.render(&params[..5], &mut out), Err(10));
        let t = Template::new("INSERT INTO t VALUES ($1, $2)");
        out.clear();
        t.render(&[Value::Int(1), text("o'k")], &mut out).unwrap();
        assert_eq!(out, "INSERT INTO t VALUES (1, 'o''k')");
    }

    #[test]
    fn affected_rows_from_command_tags() {
        assert_eq!(tag_affected(b"INSERT 0 5", false), 5);
        assert_eq!(tag_affected(b"UPDATE 3", false), 3);
        assert_eq!(tag_affected(b"DELETE 0", false), 0);
        assert_eq!(tag_affected(b"MERGE 2", false), 2);
        assert_eq!(tag_affected(b"COPY 100000", false), 100_000);
        assert_eq!(tag_affected(b"SELECT 10", true), 0);
        assert_eq!(tag_affected(b"SELECT 10", false), 10);
        assert_eq!(tag_affected(b"INSERT 0 2", true), 2);
        assert_eq!(tag_affected(b"CREATE TABLE", false), 0);
        assert_eq!(tag_affected(b"BEGIN", false), 0);
        assert_eq!(tag_affected(b"", false), 0);
    }
}
