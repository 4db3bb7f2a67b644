//! Calendar dates of Unix times in UTC, without a time-zone database: what
//! reports print as "measured at" and what generated rows store in their
//! datetime columns, and those columns' text read back (PostgreSQL's binary
//! COPY sends dates and timestamps as numbers).

/// (year, month, day, hour, minute, second) of `secs` since 1970-01-01
/// 00:00:00 UTC, in the proleptic Gregorian calendar (negative `secs` are
/// before 1970).
pub fn from_unix(secs: i64) -> (i64, u32, u32, u32, u32, u32) {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days to civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let rem = rem as u32;
    (y, m as u32, d as u32, rem / 3600, rem / 60 % 60, rem % 60)
}

/// `YYYY-MM-DD hh:mm UTC`, as reports show when something was measured.
pub fn utc_minutes(unix_s: u64) -> String {
    let (y, m, d, hh, mm, _) = from_unix(unix_s as i64);
    format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02} UTC")
}

/// `YYYY-MM-DD hh:mm:ss`, as SQL datetime literals are written.
pub fn sql_datetime(secs: i64) -> String {
    let (y, m, d, hh, mm, ss) = from_unix(secs);
    format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02}:{ss:02}")
}

/// Days since 1970-01-01 of the proleptic Gregorian date `y-m-d`
/// (Howard Hinnant's algorithm, the inverse of [`from_unix`]'s).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The days since 1970-01-01 of `YYYY-MM-DD` (years 0001–9999, a day
/// that exists), or None for any other text.
pub fn parse_sql_date(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, m, d) = (digits(&b[0..4])?, digits(&b[5..7])?, digits(&b[8..10])?);
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if y == 0 || !(1..=12).contains(&m) || d == 0 || d > month_days[m as usize - 1] {
        return None;
    }
    Some(days_from_civil(i64::from(y), m, d))
}

/// The microseconds since 1970-01-01 00:00:00 of `YYYY-MM-DD hh:mm:ss`
/// with an optional fraction of up to six digits (what [`sql_datetime`]
/// writes), or None for any other text.
pub fn parse_sql_datetime(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 19 || b[10] != b' ' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let days = parse_sql_date(s.get(..10)?)?;
    let (h, m, sec) = (
        digits(&b[11..13])?,
        digits(&b[14..16])?,
        digits(&b[17..19])?,
    );
    if h > 23 || m > 59 || sec > 59 {
        return None;
    }
    let mut micros = 0;
    if b.len() > 19 {
        let frac = &b[20..];
        if b[19] != b'.' || frac.is_empty() || frac.len() > 6 {
            return None;
        }
        micros = digits(frac)? * 10u32.pow(6 - frac.len() as u32);
    }
    let secs = days * 86_400 + i64::from(h * 3600 + m * 60 + sec);
    Some(secs * 1_000_000 + i64::from(micros))
}

/// The value of ASCII decimal digits (all of them digits, at most nine).
fn digits(b: &[u8]) -> Option<u32> {
    b.iter().try_fold(0u32, |n, &c| match c {
        b'0'..=b'9' => Some(n * 10 + u32::from(c - b'0')),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(utc_minutes(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_minutes(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(utc_minutes(1_700_000_000), "2023-11-14 22:13 UTC");
        assert_eq!(sql_datetime(1_104_537_600 + 3661), "2005-01-01 01:01:01");
        assert_eq!(sql_datetime(-1), "1969-12-31 23:59:59");
    }

    #[test]
    fn datetimes_read_back_as_written() {
        // Every 997,003 s over ±300 years, leap days and centuries included.
        let mut secs = -9_500_000_000i64;
        while secs < 9_500_000_000 {
            let text = sql_datetime(secs);
            assert_eq!(parse_sql_datetime(&text), Some(secs * 1_000_000), "{text}");
            let days = secs.div_euclid(86_400);
            assert_eq!(parse_sql_date(&text[..10]), Some(days), "{text}");
            secs += 997_003;
        }
        assert_eq!(days_from_civil(2000, 1, 1), 10_957);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(
            parse_sql_datetime("2000-01-01 00:00:00.5"),
            Some(946_684_800_500_000)
        );
        assert_eq!(
            parse_sql_datetime("2000-01-01 00:00:00.000001"),
            Some(946_684_800_000_001)
        );
        assert_eq!(parse_sql_date("2000-02-29"), Some(11_016));
        for bad in [
            "1900-02-29",
            "2001-02-29",
            "2024-13-01",
            "2024-04-31",
            "0000-01-01",
            "24-01-01",
            "2024-1-01",
            "2024/01/01",
            "2024-01-0x",
        ] {
            assert_eq!(parse_sql_date(bad), None, "{bad}");
        }
        for bad in [
            "2024-01-01",
            "2024-01-01 24:00:00",
            "2024-01-01 12:60:00",
            "2024-01-01 12:00:60",
            "2024-01-01T12:00:00",
            "2024-01-01 12:00:00.",
            "2024-01-01 12:00:00.1234567",
            "2024-01-01 12:00:00+02",
            "2024-01-01 12:00:00 ",
        ] {
            assert_eq!(parse_sql_datetime(bad), None, "{bad}");
        }
    }
}
