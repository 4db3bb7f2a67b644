//! The run record: one run's document — what produced it (tool, workload
//! and options, target and server, random seed, run settings, machine) and
//! everything it measured (counters, errors by kind, latency summaries and
//! the histograms they come from, intervals, client CPU) — as typed data.
//!
//! It is the bottom of the stack: the engine builds it (`engine::point`),
//! `--json` writes it, the results store keeps it and reads it back, and
//! every report renders from it. One set of types describes the format
//! three times over: writing is `serde_json` over these types, reading is
//! `serde_json` into them, and `schema/run.schema.json` is generated from
//! them ([`schema`]; a test fails when the committed file differs).
//!
//! # Versions
//!
//! - `dbsweep-run/1`: dbsweep 0.1.0.
//! - `dbsweep-run/2`: adds `result.histograms`,
//!   `result.connect`, `result.metrics`, `run.percentile`, `run.timeout_s`,
//!   `run.pacing` and `result.pacing` (rates, users, think time) and the
//!   stop reason `timeout`.
//!
//! - `dbsweep-run/3` ([`SCHEMA_ID`]): a record that merges exactly. Adds
//!   `released_unix_us`, `run.percentiles`, `run.shard`,
//!   `result.histograms.types`, each interval's `histogram` and
//!   `lag_histogram`, and `result.shards` (a merged run): every summary
//!   in the record can be derived again from the histograms beside it.
//!   A run started by a coordinator (`run --nodes N`) adds, in the same
//!   version, `result.shards.coordinator` and each shard row's `node`,
//!   `clock_rtt_s` and `start_skew_s` (optional: every record of version 3
//!   still reads; a dbsweep older than these fields refuses a record that
//!   has them). A merged record has `result.metrics` too, in the same
//!   version: the server's as one shard sampled it, with
//!   `result.metrics.merged` saying which; each shard row adds
//!   `cpu_busy_pct` and `client_cpu_pct`. `result.consistency` (`--check`)
//!   and `result.tpcc` (TPC-C's results, derived from the rest of the
//!   record as it is written) are optional additions of the same kind.
//!
//! All three are read ([`read`]); an older document simply lacks the
//! additions. Anything else is refused with a message naming its version.

pub mod chbench;
pub mod compact;
pub mod consistency;
pub mod histogram;
pub mod map;
pub mod metrics;
mod outcome;
mod pacing;
pub mod profile;
mod run;
mod sample;
pub mod series;
pub mod spool;
pub mod tpcc;
pub mod tpch;

use std::io::{Read, Write};

pub use chbench::Chbench;
pub use consistency::{ConditionResult, QueryPlan};
pub use histogram::Histogram;
pub use map::{OrderedMap, Pairs};
pub use metrics::Metrics;
pub use outcome::{
    ClientCpu, Connect, Coordination, ErrorCounts, Fairness, Histograms, Interval, Latency,
    Outcome, Percentile, Queries, ShardRow, Shards, StatementLatency, StopReason, TransactionType,
};
pub use pacing::{PacingOutcome, PacingSettings};
pub use run::{
    Dialect, ErrorKindName, Machine, Random, Run, Settings, ShardOf, TargetInfo, Tool, WorkloadInfo,
};
pub use series::{Series, SeriesFile};
pub use tpcc::Tpcc;
pub use tpch::Tpch;

/// The format this version writes.
pub const SCHEMA_ID: &str = "dbsweep-run/3";

/// Every format this version reads.
pub const READABLE: [&str; 3] = ["dbsweep-run/1", "dbsweep-run/2", SCHEMA_ID];

/// Writes `run` as pretty-printed JSON with a final newline.
pub fn write(run: &Run, mut w: impl Write) -> anyhow::Result<()> {
    serde_json::to_writer_pretty(&mut w, run)?;
    w.write_all(b"\n")?;
    Ok(())
}

/// `run` as the bytes [`write`] writes.
pub fn to_vec(run: &Run) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    write(run, &mut out)?;
    Ok(out)
}

/// Reads one run document of a readable version (see the module docs).
pub fn read(r: impl Read) -> anyhow::Result<Run> {
    let value: serde_json::Value = serde_json::from_reader(r)?;
    from_value(value)
}

/// [`read`] from text.
pub fn from_str(text: &str) -> anyhow::Result<Run> {
    from_value(serde_json::from_str(text)?)
}

/// [`read`] from a parsed document. The version is checked first, so a
/// document of another format is named as such rather than reported by
/// its first unexpected field.
pub fn from_value(value: serde_json::Value) -> anyhow::Result<Run> {
    let schema = value.get("schema").and_then(serde_json::Value::as_str);
    match schema {
        Some(s) if READABLE.contains(&s) => {}
        Some(s) => anyhow::bail!(
            "the run document is of format '{s}', which this dbsweep cannot read (it reads {})",
            READABLE.join(" and ")
        ),
        None => anyhow::bail!(
            "not a dbsweep run document (its \"schema\" is missing; expected {SCHEMA_ID})"
        ),
    }
    Ok(serde_json::from_value(value)?)
}

/// The JSON Schema of the format this version writes, as committed in
/// `schema/run.schema.json`. It describes what is written: a field that is
/// always written is required, also when its value may be null.
pub fn schema() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    let mut s =
        serde_json::to_value(generator.into_root_schema_for::<Run>()).expect("a schema serializes");
    s["$id"] = SCHEMA_ID.into();
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_other_formats_by_name() {
        let e = from_str(r#"{"schema": "something/2"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("'something/2'"), "{e}");
        let e = from_str(r#"{"tps": 1}"#).unwrap_err().to_string();
        assert!(e.contains("not a dbsweep run document"), "{e}");
    }

    #[test]
    fn refuses_missing_figures_naming_them() {
        let mut v = serde_json::to_value(Run::sample()).unwrap();
        v["result"].as_object_mut().unwrap().remove("tps");
        let e = from_value(v).unwrap_err().to_string();
        assert!(e.contains("tps"), "{e}");
    }

    #[test]
    fn round_trips_and_reads_version_1() {
        let run = Run::sample();
        let back = read(to_vec(&run).unwrap().as_slice()).unwrap();
        assert_eq!(back, run);
        let mut v1 = serde_json::to_value(&run).unwrap();
        v1["schema"] = "dbsweep-run/1".into();
        v1["run"].as_object_mut().unwrap().remove("percentile");
        let old = from_value(v1).unwrap();
        assert_eq!(old.run.percentile, None);
        assert_eq!(old.result.histograms, None);
    }

    #[test]
    fn reads_version_2_without_the_merge_fields() {
        let mut v2 = serde_json::to_value(Run::sample()).unwrap();
        v2["schema"] = "dbsweep-run/2".into();
        let text = serde_json::to_string(&v2).unwrap();
        assert!(!text.contains("released_unix_us") && !text.contains("\"histogram\""));
        let old = from_value(v2).unwrap();
        assert_eq!(old.released_unix_us, None);
        assert!(old.run.percentiles.is_empty());
        assert_eq!(old.run.shard, None);
        assert_eq!(old.result.intervals.to_vec()[0].histogram, None);
        assert_eq!(old.result.shards, None);
    }
}
