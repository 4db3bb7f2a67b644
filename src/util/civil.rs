//! Calendar dates of Unix times in UTC, without a time-zone database: what
//! reports print as "measured at" and what generated rows store in their
//! datetime columns.

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
}
