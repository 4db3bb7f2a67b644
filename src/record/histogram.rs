//! A latency histogram as the record keeps it: the exact count, min, max
//! and sum, and the non-empty buckets named by their lowest value, so the
//! data can be read without knowing the bucket scheme. The scheme itself,
//! recording, merging and percentiles belong to `stats::histogram`, which
//! converts to and from this form and checks it on the way in.
//!
//! ```json
//! {"count":3,"min":5,"max":3000,"sum":3010,"buckets":[[5,2],[3000,1]]}
//! ```
//!
//! In a pretty-printed run file the buckets stay on one line: a run has
//! thousands of them, and one line per number would make the file ten
//! times longer without making it any easier to read.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize, Serializer};

/// A latency histogram in nanoseconds (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Histogram {
    /// Number of recorded latencies.
    pub count: u64,
    /// Smallest latency, ns, exact; null when empty.
    pub min: Option<u64>,
    /// Largest latency, ns, exact; null when empty.
    pub max: Option<u64>,
    /// Sum of all latencies, ns, exact.
    pub sum: u128,
    /// `[lowest value of the bucket in ns, count]` of every non-empty
    /// bucket, ascending.
    #[serde(serialize_with = "one_line")]
    pub buckets: Vec<[u64; 2]>,
}

/// Writes the bucket pairs as one compact JSON line, also inside a
/// pretty-printed document.
fn one_line<S: Serializer>(buckets: &[[u64; 2]], s: S) -> Result<S::Ok, S::Error> {
    let text = serde_json::to_string(buckets).map_err(serde::ser::Error::custom)?;
    let raw = serde_json::value::RawValue::from_string(text).map_err(serde::ser::Error::custom)?;
    raw.serialize(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_stay_on_one_line_in_pretty_output() {
        let h = Histogram {
            count: 3,
            min: Some(5),
            max: Some(3000),
            sum: 3010,
            buckets: vec![[5, 2], [3000, 1]],
        };
        let text = serde_json::to_string_pretty(&h).unwrap();
        assert!(text.contains("\"buckets\": [[5,2],[3000,1]]"), "{text}");
        let back: Histogram = serde_json::from_str(&text).unwrap();
        assert_eq!(back, h);
    }
}
