//! Fields of binary `COPY … FROM STDIN`: the column types whose binary
//! form the loader writes, and each value in it.
//!
//! Binary COPY spares the server parsing every field's text: a quarter of
//! its cost of loading sbtest rows, and more for the tables of TPC-C and
//! DBT-1, whose NUMERIC money, timestamps and dates take PostgreSQL's
//! general input routines (`numeric_in`, `timestamp_in`'s date parser)
//! once a field. NUMERIC is sent as `numeric_in` would have read the text
//! form (the shortest digits that read back as the same double), in base
//! 10,000, so the server stores exactly what text COPY would have stored
//! and rounds to the column's scale as it does for text. Timestamps and
//! dates are read from the `YYYY-MM-DD[ hh:mm:ss[.ffffff]]` text that
//! generated rows hold.

use bytes::{BufMut, BytesMut};

use super::text::int_digits;
use crate::driver::Value;
use crate::util::civil::{parse_sql_date, parse_sql_datetime};

/// How `bulk_load` sends a column in binary COPY, from the column's type:
/// the types whose binary form is simple and whose values [`Value`] holds
/// or whose text is of one fixed form. A column of any other type makes
/// the load use text COPY.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BinaryType {
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    /// text, varchar and bpchar: the bytes, in the client encoding (the
    /// server converts and checks them, and applies the type's length).
    Text,
    /// numeric, from integers and doubles.
    Numeric,
    /// timestamp without time zone, from `YYYY-MM-DD hh:mm:ss[.ffffff]`.
    Timestamp,
    /// date, from `YYYY-MM-DD`.
    Date,
}

/// 2000-01-01, PostgreSQL's epoch for dates and timestamps, in days and
/// microseconds since 1970-01-01.
const PG_EPOCH_DAYS: i64 = 10_957;
const PG_EPOCH_US: i64 = PG_EPOCH_DAYS * 86_400 * 1_000_000;

/// NUMERIC's sign words.
const NUMERIC_POS: u16 = 0x0000;
const NUMERIC_NEG: u16 = 0x4000;
const NUMERIC_NAN: u16 = 0xC000;
const NUMERIC_PINF: u16 = 0xD000;
const NUMERIC_NINF: u16 = 0xF000;

impl BinaryType {
    /// The binary form for the type with OID `oid`, if it has one here.
    pub(super) fn from_oid(oid: u32) -> Option<BinaryType> {
        Some(match oid {
            21 => BinaryType::Int2,
            23 => BinaryType::Int4,
            20 => BinaryType::Int8,
            700 => BinaryType::Float4,
            701 => BinaryType::Float8,
            25 | 1042 | 1043 => BinaryType::Text,
            1700 => BinaryType::Numeric,
            1114 => BinaryType::Timestamp,
            1082 => BinaryType::Date,
            _ => return None,
        })
    }

    /// Whether `v` is of the kind this type is sent from (NULL always is).
    pub(super) fn takes(self, v: &Value) -> bool {
        match (self, v) {
            (_, Value::Null) => true,
            (BinaryType::Int2 | BinaryType::Int4 | BinaryType::Int8, Value::Int(_)) => true,
            (BinaryType::Float4 | BinaryType::Float8, Value::Float(_)) => true,
            (BinaryType::Text, Value::Text(_)) => true,
            (BinaryType::Numeric, Value::Int(_) | Value::Float(_)) => true,
            (BinaryType::Timestamp, Value::Text(s)) => parse_sql_datetime(s).is_some(),
            (BinaryType::Date, Value::Text(s)) => parse_sql_date(s).is_some(),
            _ => false,
        }
    }
}

/// The signature, flags and header extension that start a binary COPY.
pub(super) const BINARY_COPY_HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";

/// Appends `v` as a field of binary COPY (its length, -1 for NULL, and its
/// bytes) for a column of type `t`; an error names what does not fit.
pub(super) fn push_binary_field(
    out: &mut BytesMut,
    t: BinaryType,
    v: &Value,
) -> Result<(), String> {
    let range = |i: i64, name: &str| format!("{i} is out of range for type {name}");
    match (t, v) {
        (_, Value::Null) => out.put_i32(-1),
        (BinaryType::Int2, Value::Int(i)) => {
            let i = i16::try_from(*i).map_err(|_| range(*i, "smallint"))?;
            out.put_i32(2);
            out.put_i16(i);
        }
        (BinaryType::Int4, Value::Int(i)) => {
            let i = i32::try_from(*i).map_err(|_| range(*i, "integer"))?;
            out.put_i32(4);
            out.put_i32(i);
        }
        (BinaryType::Int8, Value::Int(i)) => {
            out.put_i32(8);
            out.put_i64(*i);
        }
        (BinaryType::Float4, Value::Float(x)) => {
            out.put_i32(4);
            out.put_f32(*x as f32);
        }
        (BinaryType::Float8, Value::Float(x)) => {
            out.put_i32(8);
            out.put_f64(*x);
        }
        (BinaryType::Text, Value::Text(s)) => {
            let len = i32::try_from(s.len()).map_err(|_| "a text value over 2 GiB".to_string())?;
            out.put_i32(len);
            out.put_slice(s.as_bytes());
        }
        (BinaryType::Numeric, Value::Int(i)) => {
            let mut buf = [0; 20];
            let digits = int_digits(*i, &mut buf);
            let (neg, digits) = match digits.split_first() {
                Some((b'-', rest)) => (true, rest),
                _ => (false, digits),
            };
            push_numeric(out, neg, digits, digits.len() as i64, 0);
        }
        (BinaryType::Numeric, Value::Float(x)) => push_numeric_float(out, *x),
        (BinaryType::Timestamp, Value::Text(s)) => {
            let us = parse_sql_datetime(s).ok_or_else(|| not_of_form(s, "a timestamp"))?;
            out.put_i32(8);
            out.put_i64(us - PG_EPOCH_US);
        }
        (BinaryType::Date, Value::Text(s)) => {
            let days = parse_sql_date(s).ok_or_else(|| not_of_form(s, "a date"))?;
            let days = i32::try_from(days - PG_EPOCH_DAYS).map_err(|_| not_of_form(s, "a date"))?;
            out.put_i32(4);
            out.put_i32(days);
        }
        (t, v) => {
            let kind = match v {
                Value::Int(_) => "integer",
                Value::Float(_) => "floating-point",
                _ => "text",
            };
            return Err(format!("a {kind} value for a column of type {t:?}"));
        }
    }
    Ok(())
}

/// Why a text could not be sent as a date or timestamp: binary COPY was
/// chosen from the load's first row, whose dates were of the one form.
fn not_of_form(s: &str, what: &str) -> String {
    format!(
        "'{s}' is not {what} of the form YYYY-MM-DD hh:mm:ss (binary COPY, chosen from the first row, takes no other)"
    )
}

/// A double as NUMERIC: what `numeric_in` makes of the text text COPY
/// sends for it (`{:?}`, the shortest digits that read back as `x`, with
/// `.0` or an exponent), or NaN and ±Infinity.
fn push_numeric_float(out: &mut BytesMut, x: f64) {
    if !x.is_finite() {
        let sign = match (x.is_nan(), x > 0.0) {
            (true, _) => NUMERIC_NAN,
            (false, true) => NUMERIC_PINF,
            (false, false) => NUMERIC_NINF,
        };
        out.put_i32(8);
        out.put_slice(&[0, 0, 0, 0]);
        out.put_u16(sign);
        out.put_u16(0);
        return;
    }
    let mut text = Short::default();
    // A finite double's shortest form has at most 17 digits, a point and
    // an exponent of three: it fits.
    let _ = std::fmt::Write::write_fmt(&mut text, format_args!("{:?}", x.abs()));
    let s = &text.bytes[..text.len];
    let (mantissa, exp) = match s.iter().position(|&b| b == b'e') {
        Some(e) => {
            let exp = std::str::from_utf8(&s[e + 1..])
                .ok()
                .and_then(|e| e.parse().ok());
            (&s[..e], exp.unwrap_or(0))
        }
        None => (s, 0i64),
    };
    let (int, frac) = match mantissa.iter().position(|&b| b == b'.') {
        Some(dot) => (&mantissa[..dot], &mantissa[dot + 1..]),
        None => (mantissa, &mantissa[mantissa.len()..]),
    };
    let mut digits = [0u8; 32];
    digits[..int.len()].copy_from_slice(int);
    digits[int.len()..int.len() + frac.len()].copy_from_slice(frac);
    // As numeric_in: the exponent moves the point and the display scale.
    let dscale = (frac.len() as i64 - exp).max(0);
    push_numeric(
        out,
        x < 0.0,
        &digits[..int.len() + frac.len()],
        int.len() as i64 + exp,
        dscale as u16,
    );
}

/// A short text on the stack.
#[derive(Default)]
struct Short {
    bytes: [u8; 32],
    len: usize,
}

impl std::fmt::Write for Short {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        self.bytes
            .get_mut(self.len..end)
            .ok_or(std::fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Appends the NUMERIC whose decimal digits are `digits` (ASCII) with the
/// point after the first `point` of them (negative: that many zeros
/// before them; past their end: zeros after them), with display scale
/// `dscale`: base-10,000 digits aligned on the point and the weight of the
/// first. Leading and trailing zero digits are dropped and zero is
/// positive, as the server stores them.
fn push_numeric(out: &mut BytesMut, neg: bool, digits: &[u8], point: i64, dscale: u16) {
    // Zeros before the digits so that the point falls on a group's edge.
    let pad = (4 - point.rem_euclid(4)) % 4;
    let at = |i: i64| {
        let j = i - pad;
        if (0..digits.len() as i64).contains(&j) {
            u16::from(digits[j as usize] - b'0')
        } else {
            0
        }
    };
    // At most 20 digits (an i64's 19, a double's 17) and 3 of padding:
    // six groups, on the stack (this runs once a field of a load).
    let groups = ((pad + digits.len() as i64 + 3) / 4) as usize;
    let mut all = [0u16; 6];
    for (g, d) in all[..groups].iter_mut().enumerate() {
        *d = (0..4).fold(0, |n, k| n * 10 + at(4 * g as i64 + k));
    }
    let lead = all[..groups].iter().take_while(|&&d| d == 0).count();
    let trail = all[lead..groups]
        .iter()
        .rev()
        .take_while(|&&d| d == 0)
        .count();
    let base = &all[lead..groups - trail];
    let mut weight = (point + pad) / 4 - 1 - lead as i64;
    let sign = if base.is_empty() {
        weight = 0;
        NUMERIC_POS
    } else if neg {
        NUMERIC_NEG
    } else {
        NUMERIC_POS
    };
    out.put_i32(8 + 2 * base.len() as i32);
    out.put_u16(base.len() as u16);
    out.put_i16(weight as i16);
    out.put_u16(sign);
    out.put_u16(dscale);
    for &d in base {
        out.put_u16(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Value {
        Value::Text(s.to_string())
    }

    /// (ndigits, weight, sign, dscale, digits) of one NUMERIC field.
    fn numeric(v: Value) -> (u16, i16, u16, u16, Vec<u16>) {
        let mut b = BytesMut::new();
        push_binary_field(&mut b, BinaryType::Numeric, &v).unwrap();
        let w = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
        let len = i32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize;
        assert_eq!(len, b.len() - 4);
        let n = w(4);
        let digits = (0..n as usize).map(|i| w(12 + 2 * i)).collect();
        (n, w(6) as i16, w(8), w(10), digits)
    }

    #[test]
    fn binary_copy_fields() {
        let mut b = BytesMut::new();
        for (t, v) in [
            (BinaryType::Int4, Value::Int(-2)),
            (BinaryType::Int8, Value::Int(1 << 40)),
            (BinaryType::Int2, Value::Int(258)),
            (BinaryType::Text, text("ab")),
            (BinaryType::Float8, Value::Float(1.5)),
            (BinaryType::Float4, Value::Float(0.5)),
            (BinaryType::Text, Value::Null),
            (BinaryType::Timestamp, text("2000-01-01 00:00:01.5")),
            (BinaryType::Date, text("1999-12-31")),
        ] {
            assert!(t.takes(&v));
            push_binary_field(&mut b, t, &v).unwrap();
        }
        let mut want = Vec::new();
        want.extend_from_slice(&[0, 0, 0, 4, 0xFF, 0xFF, 0xFF, 0xFE]);
        want.extend_from_slice(&[0, 0, 0, 8, 0, 0, 1, 0, 0, 0, 0, 0]);
        want.extend_from_slice(&[0, 0, 0, 2, 1, 2]);
        want.extend_from_slice(&[0, 0, 0, 2, b'a', b'b']);
        want.extend_from_slice(&[0, 0, 0, 8]);
        want.extend_from_slice(&1.5f64.to_be_bytes());
        want.extend_from_slice(&[0, 0, 0, 4]);
        want.extend_from_slice(&0.5f32.to_be_bytes());
        want.extend_from_slice(&[0xFF; 4]);
        want.extend_from_slice(&[0, 0, 0, 8]);
        want.extend_from_slice(&1_500_000i64.to_be_bytes());
        want.extend_from_slice(&[0, 0, 0, 4]);
        want.extend_from_slice(&(-1i32).to_be_bytes());
        assert_eq!(&b[..], &want[..]);
        assert_eq!(BINARY_COPY_HEADER.len(), 19);
        assert_eq!(BinaryType::from_oid(1042), Some(BinaryType::Text));
        assert_eq!(BinaryType::from_oid(1700), Some(BinaryType::Numeric));
        assert_eq!(BinaryType::from_oid(1184), None); // timestamptz: the session's zone
        assert!(!BinaryType::Int4.takes(&text("1")));
        assert!(!BinaryType::Text.takes(&Value::Int(1)));
        assert!(!BinaryType::Numeric.takes(&text("1.5")));
        assert!(!BinaryType::Timestamp.takes(&text("now")));
        assert!(!BinaryType::Date.takes(&text("2024-01-01 00:00:00")));
        let e = push_binary_field(&mut b, BinaryType::Int4, &Value::Int(1 << 31)).unwrap_err();
        assert!(e.contains("out of range for type integer"), "{e}");
        let e = push_binary_field(&mut b, BinaryType::Int4, &text("1")).unwrap_err();
        assert!(e.contains("text value for a column of type Int4"), "{e}");
        let e = push_binary_field(&mut b, BinaryType::Timestamp, &text("yesterday")).unwrap_err();
        assert!(
            e.contains("'yesterday' is not a timestamp of the form"),
            "{e}"
        );
    }

    #[test]
    fn numerics_are_the_decimal_digits_in_base_ten_thousand() {
        assert_eq!(numeric(Value::Float(12.34)), (2, 0, 0, 2, vec![12, 3400]));
        assert_eq!(numeric(Value::Float(-0.0001)), (1, -1, 0x4000, 4, vec![1]));
        assert_eq!(numeric(Value::Float(100_000.0)), (1, 1, 0, 1, vec![10]));
        assert_eq!(numeric(Value::Float(0.1234)), (1, -1, 0, 4, vec![1234]));
        assert_eq!(
            numeric(Value::Float(300_000.5)),
            (3, 1, 0, 1, vec![30, 0, 5000])
        );
        // "0.0", as text COPY writes it: scale 1.
        assert_eq!(numeric(Value::Float(0.0)), (0, 0, 0, 1, vec![]));
        assert_eq!(numeric(Value::Float(-0.0)), (0, 0, 0, 1, vec![]));
        assert_eq!(numeric(Value::Float(1e20)), (1, 5, 0, 0, vec![1]));
        assert_eq!(numeric(Value::Float(1e-7)), (1, -2, 0, 7, vec![10]));
        assert_eq!(
            numeric(Value::Int(-98_765)),
            (2, 1, 0x4000, 0, vec![9, 8765])
        );
        assert_eq!(numeric(Value::Int(0)), (0, 0, 0, 0, vec![]));
        let (n, weight, ..) = numeric(Value::Int(i64::MIN));
        assert_eq!((n, weight), (5, 4));
        assert_eq!(numeric(Value::Float(f64::NAN)).2, 0xC000);
        assert_eq!(numeric(Value::Float(f64::INFINITY)).2, 0xD000);
        assert_eq!(numeric(Value::Float(f64::NEG_INFINITY)).2, 0xF000);
        // The extremes, written with exponents: 309 integer digits, and
        // 324 fraction digits for the least subnormal.
        let (n, weight, _, dscale, _) = numeric(Value::Float(f64::MAX));
        assert_eq!((n, weight, dscale), (5, 77, 0));
        let (n, weight, _, dscale, d) = numeric(Value::Float(5e-324));
        assert_eq!((n, weight, dscale, d), (1, -81, 324, vec![5]));
    }

    #[test]
    fn numerics_read_back_as_the_doubles_they_came_from() {
        // digits × 10000^(weight − i), written out as one decimal string
        // and read as a double.
        let value = |v: Value| {
            let (_, weight, sign, _, digits) = numeric(v);
            if digits.is_empty() {
                return 0.0;
            }
            let text: String = digits.iter().map(|d| format!("{d:04}")).collect();
            let point = 4 * (i64::from(weight) + 1);
            let s = if point <= 0 {
                format!("0.{}{text}", "0".repeat(point.unsigned_abs() as usize))
            } else if point as usize >= text.len() {
                format!("{text}{}", "0".repeat(point as usize - text.len()))
            } else {
                format!("{}.{}", &text[..point as usize], &text[point as usize..])
            };
            let x = s.parse::<f64>().unwrap();
            if sign == NUMERIC_NEG {
                -x
            } else {
                x
            }
        };
        let mut rng = crate::rand::Rng::new(7);
        for _ in 0..20_000 {
            let cents = f64::from(rng.uniform(0, 99_999_999)) / 100.0;
            assert_eq!(value(Value::Float(cents)), cents);
            let sign = if rng.uniform(0, 1) == 0 { 1.0 } else { -1.0 };
            let x = f64::from_bits(rng.next_u64() >> 2) * sign;
            if x.is_finite() && x.abs() > 1e-300 {
                assert_eq!(value(Value::Float(x)), x, "{x}");
            }
        }
    }
}
