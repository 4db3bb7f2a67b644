//! Latencies as people read them: milliseconds with as many decimals as
//! the magnitude needs, from the unit each layer keeps (nanoseconds in
//! histograms, microseconds in the record, milliseconds in study reports).

/// Milliseconds with as many decimals as the magnitude needs, so sub-ms
/// latencies (embedded SQLite) are not printed as 0.00.
pub fn ms(ns: f64) -> String {
    let v = ns / 1e6;
    if ns < 10_000.0 {
        format!("{v:.4}")
    } else if ns < 1_000_000.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.2}")
    }
}

/// [`ms`] of a latency in microseconds (the record's unit).
pub fn ms_us(us: f64) -> String {
    ms(us * 1e3)
}

/// [`ms`] of a latency in milliseconds (the study report's unit).
pub fn ms_ms(millis: f64) -> String {
    ms(millis * 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_latencies_by_magnitude() {
        assert_eq!(ms(3_456.0), "0.0035");
        assert_eq!(ms(345_600.0), "0.346");
        assert_eq!(ms(12_345_678.0), "12.35");
        assert_eq!(ms_us(3.456), "0.0035");
        assert_eq!(ms_ms(12.345_678), "12.35");
    }
}
