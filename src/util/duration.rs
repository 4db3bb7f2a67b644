//! Durations as people write and read them: one parser for every place a
//! duration is given (study files, connection URLs), one formatter for every
//! place one is shown (plans, estimates, reasons).
//!
//! Hand-written rather than `humantime`: that crate reads neither decimals
//! (`1.5s`) nor bare numbers of seconds, which study files and sysbench's
//! habits both use.

use std::time::Duration;

/// What [`parse`] accepts, for messages.
pub const EXPECTED: &str =
    "a duration: seconds as a number, or a number with a unit (ns, us, ms, s, m, h), e.g. 250us, 500ms, 1.5s, 10m, 1h";

/// Parses a number of seconds (`30`, `0.5`) or a number with a unit: `ns`,
/// `us` (or `µs`), `ms`, `s`, `m` (or `min`), `h`. Negative and absurdly long
/// (over 30 years) durations are refused.
pub fn parse(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad = || format!("bad duration '{s}': expected {EXPECTED}");
    let n: f64 = num.parse().map_err(|_| bad())?;
    let secs = match unit.trim() {
        "ns" => n / 1e9,
        "us" | "µs" => n / 1e6,
        "ms" => n / 1e3,
        "" | "s" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(bad()),
    };
    if !(0.0..1e9).contains(&secs) {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(secs))
}

/// `45s`, `5m`, `3m 05s`, `2h 07m` (to the nearest second).
pub fn format(d: Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 if s % 60 == 0 => format!("{}m", s / 60),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_numbers_and_units() {
        let d = |s: &str| parse(s).unwrap();
        assert_eq!(d("250us"), Duration::from_micros(250));
        assert_eq!(d("500ns"), Duration::from_nanos(500));
        assert_eq!(d("500ms"), Duration::from_millis(500));
        assert_eq!(d("1.5s"), Duration::from_millis(1500));
        assert_eq!(d("10m"), Duration::from_secs(600));
        assert_eq!(d("2 min"), Duration::from_secs(120));
        assert_eq!(d("1h"), Duration::from_secs(3600));
        assert_eq!(d("7"), Duration::from_secs(7));
        assert!(parse("10 parsecs").unwrap_err().contains("'10 parsecs'"));
        assert!(parse("").is_err());
        assert!(parse("-1s").is_err());
        assert!(parse("1e12").is_err());
    }

    #[test]
    fn formats_to_the_second() {
        assert_eq!(format(Duration::from_secs(45)), "45s");
        assert_eq!(format(Duration::from_secs(90)), "1m 30s");
        assert_eq!(format(Duration::from_secs(185)), "3m 05s");
        assert_eq!(format(Duration::from_secs(300)), "5m");
        assert_eq!(format(Duration::from_secs(600)), "10m");
        assert_eq!(format(Duration::from_secs(7620)), "2h 07m");
    }
}
