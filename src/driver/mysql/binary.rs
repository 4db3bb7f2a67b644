//! The binary protocol's result rows (the answer to COM_STMT_EXECUTE): the
//! column types a statement's prepare announced, and a row's values decoded
//! from them into a [`Fetch`]. With it, a workload that reads results back
//! (TPC-C, DBT-1) runs its SELECTs as the same prepared statements as its
//! writes: the server parses each once, not at every execution as it does
//! the text protocol's literals (on TPC-C half the statements are reads).
//!
//! A value reaches the fetch as the text protocol would have given it:
//! integers as integers, DECIMAL and the strings as their bytes, DATE,
//! DATETIME, TIMESTAMP and TIME as the server's text of them (the column's
//! fractional digits included), FLOAT as the shortest decimal of the
//! single-precision value (`1.1`, not 1.100000023841858). DOUBLE is the
//! exact value (the text protocol rounds it to the server's digits).

use super::{lenenc, lenenc_str, u16_at, u32_at};
use crate::driver::{Fetch, Value};

// Column types (the binary protocol's, as column definitions give them).
const TYPE_TINY: u8 = 0x01;
const TYPE_SHORT: u8 = 0x02;
const TYPE_LONG: u8 = 0x03;
const TYPE_FLOAT: u8 = 0x04;
const TYPE_DOUBLE: u8 = 0x05;
const TYPE_NULL: u8 = 0x06;
const TYPE_TIMESTAMP: u8 = 0x07;
const TYPE_LONGLONG: u8 = 0x08;
const TYPE_INT24: u8 = 0x09;
const TYPE_DATE: u8 = 0x0A;
const TYPE_TIME: u8 = 0x0B;
const TYPE_DATETIME: u8 = 0x0C;
const TYPE_YEAR: u8 = 0x0D;

/// A column definition's flag: the integer is unsigned.
const UNSIGNED_FLAG: u16 = 0x20;

/// A result column as its definition describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ColumnType {
    pub ty: u8,
    pub unsigned: bool,
    /// Fractional digits of a temporal column (0–6; more means "not
    /// fixed", as for an expression's).
    pub decimals: u8,
}

/// The type of a column definition packet (ColumnDefinition41): six
/// length-encoded names, the length of the fixed fields, then character
/// set (2), length (4), type (1), flags (2), decimals (1).
pub(super) fn column_type(p: &[u8]) -> Option<ColumnType> {
    let mut pos = 0;
    for _ in 0..6 {
        lenenc_str(p, &mut pos)?;
    }
    lenenc(p, &mut pos)?;
    if p.len() < pos + 10 {
        return None;
    }
    Some(ColumnType {
        ty: p[pos + 6],
        unsigned: u16_at(p, pos + 7) & UNSIGNED_FLAG != 0,
        decimals: p[pos + 9],
    })
}

/// Keeps the leading columns of one binary row (header 0x00, the NULL
/// bitmap with its offset of two bits, then the values) in `fetch`, typed
/// as it asks. None if the row does not parse as `columns` say.
pub(super) fn push_row(p: &[u8], columns: &[ColumnType], fetch: &mut Fetch) -> Option<()> {
    if !fetch.wants_row() {
        return Some(());
    }
    if p.first() != Some(&0) {
        return None;
    }
    let bitmap_len = (columns.len() + 9) / 8;
    let bitmap = p.get(1..1 + bitmap_len)?;
    let mut pos = 1 + bitmap_len;
    let mut ok = true;
    fetch.push_row(|i| {
        let Some(&c) = columns.get(i) else {
            return Value::Null;
        };
        if bitmap[(i + 2) / 8] & (1 << ((i + 2) % 8)) != 0 || !ok {
            return Value::Null;
        }
        value(p, &mut pos, c).unwrap_or_else(|| {
            ok = false;
            Value::Null
        })
    });
    ok.then_some(())
}

/// The value at `*pos` of a column of type `c`, advancing past it.
fn value(p: &[u8], pos: &mut usize, c: ColumnType) -> Option<Value> {
    let mut take = |n: usize| -> Option<&[u8]> {
        let b = p.get(*pos..*pos + n)?;
        *pos += n;
        Some(b)
    };
    let int = |b: &[u8]| -> i64 {
        let mut x = [0u8; 8];
        x[..b.len()].copy_from_slice(b);
        let u = u64::from_le_bytes(x);
        if c.unsigned || b.len() == 8 {
            u as i64
        } else {
            // Sign-extend from the value's width.
            let shift = 64 - 8 * b.len() as u32;
            ((u << shift) as i64) >> shift
        }
    };
    Some(match c.ty {
        TYPE_TINY => Value::Int(int(take(1)?)),
        TYPE_SHORT | TYPE_YEAR => Value::Int(int(take(2)?)),
        TYPE_LONG | TYPE_INT24 => Value::Int(int(take(4)?)),
        TYPE_LONGLONG => {
            let b = take(8)?;
            let u = u64::from_le_bytes(b.try_into().ok()?);
            if c.unsigned && u > i64::MAX as u64 {
                // Past an i64, as its text (which parses as no integer).
                Value::Text(u.to_string())
            } else {
                Value::Int(u as i64)
            }
        }
        TYPE_FLOAT => {
            let f = f32::from_le_bytes(take(4)?.try_into().ok()?);
            // The shortest decimal that reads back as this f32, as the
            // server's text of it.
            Value::Float(f.to_string().parse().unwrap_or(f64::from(f)))
        }
        TYPE_DOUBLE => Value::Float(f64::from_le_bytes(take(8)?.try_into().ok()?)),
        TYPE_NULL => Value::Null,
        TYPE_DATE | TYPE_DATETIME | TYPE_TIMESTAMP => {
            let n = usize::from(*take(1)?.first()?);
            Value::Text(datetime(take(n)?, c)?)
        }
        TYPE_TIME => {
            let n = usize::from(*take(1)?.first()?);
            Value::Text(time(take(n)?, c.decimals)?)
        }
        // DECIMAL, the strings, BLOBs, BIT, ENUM, SET, JSON, GEOMETRY: bytes.
        _ => match lenenc_str(p, pos)? {
            Some(b) => Value::Text(String::from_utf8_lossy(b).into_owned()),
            None => Value::Null,
        },
    })
}

/// A DATE's, DATETIME's or TIMESTAMP's text from its binary form: 0, 4, 7
/// or 11 bytes (year u16, month, day, hour, minute, second, µs u32).
fn datetime(b: &[u8], c: ColumnType) -> Option<String> {
    if ![0, 4, 7, 11].contains(&b.len()) {
        return None;
    }
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let year = if b.len() >= 2 { u16_at(b, 0) } else { 0 };
    let mut s = format!("{year:04}-{:02}-{:02}", at(2), at(3));
    if c.ty != TYPE_DATE {
        s.push_str(&format!(" {:02}:{:02}:{:02}", at(4), at(5), at(6)));
        let micros = if b.len() == 11 { u32_at(b, 7) } else { 0 };
        push_fraction(&mut s, micros, c.decimals);
    }
    Some(s)
}

/// A TIME's text from its binary form: 0, 8 or 12 bytes (negative, days
/// u32, hour, minute, second, µs u32); hours past a day count on.
fn time(b: &[u8], decimals: u8) -> Option<String> {
    if ![0, 8, 12].contains(&b.len()) {
        return None;
    }
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let days = if b.len() >= 5 { u32_at(b, 1) } else { 0 };
    let hours = u64::from(days) * 24 + u64::from(at(5));
    let sign = if at(0) == 1 { "-" } else { "" };
    let mut s = format!("{sign}{hours:02}:{:02}:{:02}", at(6), at(7));
    let micros = if b.len() == 12 { u32_at(b, 8) } else { 0 };
    push_fraction(&mut s, micros, decimals);
    Some(s)
}

/// The fraction of a second as the column's digits show it: its declared
/// digits (1–6), or for a column without a fixed number all six when
/// there is a fraction.
fn push_fraction(s: &mut String, micros: u32, decimals: u8) {
    let digits = match decimals {
        0 => return,
        1..=6 => usize::from(decimals),
        _ if micros == 0 => return,
        _ => 6,
    };
    let f = format!("{micros:06}");
    s.push('.');
    s.push_str(&f[..digits]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::Col;

    fn col(ty: u8, unsigned: bool, decimals: u8) -> ColumnType {
        ColumnType {
            ty,
            unsigned,
            decimals,
        }
    }

    /// A binary row of `values` (None for NULL), each already encoded.
    fn row(values: &[Option<&[u8]>]) -> Vec<u8> {
        let mut p = vec![0u8];
        let n = values.len();
        let mut bitmap = vec![0u8; (n + 9) / 8];
        for (i, v) in values.iter().enumerate() {
            if v.is_none() {
                bitmap[(i + 2) / 8] |= 1 << ((i + 2) % 8);
            }
        }
        p.extend_from_slice(&bitmap);
        for v in values.iter().flatten() {
            p.extend_from_slice(v);
        }
        p
    }

    #[test]
    fn a_column_definition_gives_type_flags_and_decimals() {
        let mut p = Vec::new();
        for name in ["def", "tpcc", "stock", "stock", "s_quantity", "s_quantity"] {
            p.push(name.len() as u8);
            p.extend_from_slice(name.as_bytes());
        }
        p.push(0x0c);
        p.extend_from_slice(&63u16.to_le_bytes()); // binary charset
        p.extend_from_slice(&6u32.to_le_bytes());
        p.push(TYPE_LONG);
        p.extend_from_slice(&(UNSIGNED_FLAG | 1).to_le_bytes());
        p.push(0);
        p.extend_from_slice(&[0, 0]);
        assert_eq!(column_type(&p), Some(col(TYPE_LONG, true, 0)));
        assert_eq!(column_type(&p[..p.len() - 3]), None);
    }

    #[test]
    fn integers_are_sign_extended_by_width_unless_unsigned() {
        let cols = [
            col(TYPE_TINY, false, 0),
            col(TYPE_TINY, true, 0),
            col(TYPE_SHORT, false, 0),
            col(TYPE_LONG, false, 0),
            col(TYPE_LONGLONG, false, 0),
            col(TYPE_LONGLONG, true, 0),
            col(TYPE_INT24, true, 0),
        ];
        let p = row(&[
            Some(&[0xFF]),
            Some(&[0xFF]),
            Some(&(-300i16).to_le_bytes()),
            Some(&(-70_000i32).to_le_bytes()),
            Some(&i64::MIN.to_le_bytes()),
            Some(&u64::MAX.to_le_bytes()),
            Some(&16_777_215u32.to_le_bytes()),
        ]);
        let mut f = Fetch::new(&[Col::Int; 7], 1);
        push_row(&p, &cols, &mut f).unwrap();
        let got: Vec<_> = (0..7).map(|i| f.int(0, i)).collect();
        assert_eq!(
            got,
            [
                Some(-1),
                Some(255),
                Some(-300),
                Some(-70_000),
                Some(i64::MIN),
                None, // past an i64, as the text protocol's "18446744073709551615"
                Some(16_777_215)
            ]
        );
    }

    #[test]
    fn nulls_decimals_floats_and_strings_read_as_their_text_would() {
        let cols = [
            col(TYPE_LONG, false, 0),
            col(0xF6, false, 2), // NEWDECIMAL
            col(TYPE_FLOAT, false, 31),
            col(TYPE_DOUBLE, false, 31),
            col(0xFD, false, 0), // VAR_STRING
            col(TYPE_LONG, false, 0),
        ];
        let dec = [5, b'-', b'3', b'.', b'7', b'5'];
        let s = [3, b'a', b'b', b'c'];
        let p = row(&[
            None,
            Some(&dec),
            Some(&1.1f32.to_le_bytes()),
            Some(&0.1f64.to_le_bytes()),
            Some(&s),
            Some(&42i32.to_le_bytes()),
        ]);
        let mut f = Fetch::new(
            &[
                Col::Int,
                Col::Float,
                Col::Float,
                Col::Float,
                Col::Text,
                Col::Int,
            ],
            4,
        );
        push_row(&p, &cols, &mut f).unwrap();
        assert_eq!(f.int(0, 0), None);
        assert_eq!(f.float(0, 1), Some(-3.75));
        assert_eq!(f.float(0, 2), Some(1.1));
        assert_eq!(f.float(0, 3), Some(0.1));
        assert_eq!(f.text(0, 4), Some("abc"));
        assert_eq!(f.int(0, 5), Some(42));
        // A DECIMAL as an integer is cut at its point, as its text is.
        let mut g = Fetch::new(&[Col::Int, Col::Int], 1);
        push_row(&p, &cols, &mut g).unwrap();
        assert_eq!(g.int(0, 1), Some(-3));
        // Fewer columns kept than sent: the rest is not even decoded.
        let mut h = Fetch::new(&[Col::Int], 1);
        push_row(&p[..4], &cols, &mut h).unwrap();
        assert_eq!(h.rows(), 1);
    }

    #[test]
    fn temporal_values_read_as_the_servers_text() {
        let mut dt = vec![11u8];
        dt.extend_from_slice(&2026u16.to_le_bytes());
        dt.extend_from_slice(&[11, 26, 9, 5, 7]);
        dt.extend_from_slice(&123_456u32.to_le_bytes());
        let cases: [(ColumnType, Vec<u8>, &str); 8] = [
            (
                col(TYPE_DATETIME, false, 0),
                dt.clone(),
                "2026-11-26 09:05:07",
            ),
            (
                col(TYPE_DATETIME, false, 3),
                dt.clone(),
                "2026-11-26 09:05:07.123",
            ),
            (
                col(TYPE_TIMESTAMP, false, 6),
                dt.clone(),
                "2026-11-26 09:05:07.123456",
            ),
            (col(TYPE_DATETIME, false, 0), vec![0], "0000-00-00 00:00:00"),
            (
                col(TYPE_DATE, false, 0),
                vec![4, 0xEA, 0x07, 11, 26],
                "2026-11-26",
            ),
            (
                col(TYPE_DATETIME, false, 2),
                vec![7, 0xEA, 0x07, 1, 2, 3, 4, 5],
                "2026-01-02 03:04:05.00",
            ),
            (
                col(TYPE_TIME, false, 0),
                vec![8, 1, 2, 0, 0, 0, 3, 4, 5],
                "-51:04:05",
            ),
            (
                col(TYPE_TIME, false, 1),
                vec![12, 0, 0, 0, 0, 0, 0, 0, 9, 0xA0, 0x86, 0x01, 0],
                "00:00:09.1",
            ),
        ];
        for (c, bytes, want) in cases {
            let p = row(&[Some(&bytes)]);
            let mut f = Fetch::new(&[Col::Text], 1);
            push_row(&p, &[c], &mut f).unwrap();
            assert_eq!(f.text(0, 0), Some(want), "{c:?}");
        }
        // A length the protocol does not have is a malformed row.
        let p = row(&[Some(&[5, 1, 2, 3, 4, 5])]);
        let mut f = Fetch::new(&[Col::Text], 1);
        assert_eq!(push_row(&p, &[col(TYPE_DATETIME, false, 0)], &mut f), None);
    }

    #[test]
    fn a_short_row_is_malformed_not_a_panic() {
        let cols = [col(TYPE_LONGLONG, false, 0), col(0xFD, false, 0)];
        let full = row(&[Some(&7i64.to_le_bytes()), Some(&[3, b'x', b'y', b'z'])]);
        for cut in 0..full.len() {
            let mut f = Fetch::new(&[Col::Int, Col::Text], 1);
            assert_eq!(push_row(&full[..cut], &cols, &mut f), None, "cut at {cut}");
        }
        let mut f = Fetch::new(&[Col::Int, Col::Text], 1);
        assert_eq!(push_row(&full, &cols, &mut f), Some(()));
    }
}
