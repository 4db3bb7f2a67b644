//! Run records for tests: a JSON document written out in a test (with
//! literal, round numbers) made into the typed record, with histograms.

use dbsweep::record::{self, Histograms, OrderedMap, Run};
use dbsweep::stats::histogram::Histogram;
use serde_json::Value;

/// A histogram of the given latencies.
pub fn histogram(values_ns: &[u64]) -> Histogram {
    let mut h = Histogram::new();
    for &v in values_ns {
        h.record(v);
    }
    h
}

/// The record of `doc`, with `histograms` (the first is the transactions',
/// the others one per statement type) as its histograms; none when empty.
pub fn with_histograms(doc: Value, histograms: &[(&str, Histogram)]) -> Run {
    let mut run = record::from_value(doc).expect("a valid run document");
    run.result.histograms = histograms.split_first().map(|((_, t), rest)| Histograms {
        transaction: t.into(),
        statements: rest
            .iter()
            .map(|(n, h)| (n.to_string(), h.into()))
            .collect::<OrderedMap<_>>(),
        service: None,
        lag: None,
        types: Default::default(),
    });
    run
}

/// Errors of every kind in a run JSON's `result`.
pub fn errors_total(result: &Value) -> u64 {
    result["errors"]
        .as_object()
        .unwrap_or_else(|| panic!("no errors in {result}"))
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum()
}
