//! Workload options: one table of every option any built-in workload takes,
//! with sysbench's names, help texts and defaults.
//!
//! The same table feeds the command line (each entry becomes `--name`), the
//! `dbsweep workloads` listing, validation of user values, and the result
//! record, so an option is declared exactly once.

use std::collections::BTreeMap;

use super::WorkloadInfo;
use crate::UsageError;

/// The type of an option's value, for validation and help.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptKind {
    /// Non-negative integer.
    Int,
    /// on/off, true/false, yes/no, 1/0; given alone (`--skip-trx`) means on.
    Bool,
    Str,
    /// A positive, finite number (e.g. `--scale 0.01`).
    Float,
}

#[derive(Debug, Clone, Copy)]
pub struct OptionSpec {
    /// Name without dashes, sysbench's spelling with '-' (e.g. `table-size`).
    pub name: &'static str,
    pub kind: OptKind,
    pub default: &'static str,
    pub help: &'static str,
}

const fn int(name: &'static str, default: &'static str, help: &'static str) -> OptionSpec {
    OptionSpec {
        name,
        kind: OptKind::Int,
        default,
        help,
    }
}

const fn boolean(name: &'static str, default: &'static str, help: &'static str) -> OptionSpec {
    OptionSpec {
        name,
        kind: OptKind::Bool,
        default,
        help,
    }
}

const fn string(name: &'static str, default: &'static str, help: &'static str) -> OptionSpec {
    OptionSpec {
        name,
        kind: OptKind::Str,
        default,
        help,
    }
}

const fn float(name: &'static str, default: &'static str, help: &'static str) -> OptionSpec {
    OptionSpec {
        name,
        kind: OptKind::Float,
        default,
        help,
    }
}

/// Every workload option, with sysbench 1.0.20's defaults.
pub const ALL: &[OptionSpec] = &[
    int("tables", "1", "Number of tables"),
    int(
        "table-offset",
        "0",
        "Use tables sbtest(N+1)..sbtest(N+tables) instead of sbtest1..: several instances side by side",
    ),
    int("table-size", "10000", "Number of rows per table"),
    int("range-size", "100", "Range size for range SELECT queries"),
    int(
        "point-selects",
        "10",
        "Number of point SELECT queries per transaction",
    ),
    int(
        "simple-ranges",
        "1",
        "Number of simple range SELECT queries per transaction",
    ),
    int(
        "sum-ranges",
        "1",
        "Number of SELECT SUM() queries per transaction",
    ),
    int(
        "order-ranges",
        "1",
        "Number of SELECT ORDER BY queries per transaction",
    ),
    int(
        "distinct-ranges",
        "1",
        "Number of SELECT DISTINCT queries per transaction",
    ),
    int(
        "index-updates",
        "1",
        "Number of UPDATE index queries per transaction",
    ),
    int(
        "non-index-updates",
        "1",
        "Number of UPDATE non-index queries per transaction",
    ),
    int(
        "delete-inserts",
        "1",
        "Number of DELETE/INSERT combinations per transaction",
    ),
    boolean(
        "range-selects",
        "on",
        "Enable/disable all range SELECT queries",
    ),
    boolean(
        "auto-inc",
        "on",
        "Use an auto-increment column as primary key; when off, use client-generated ids",
    ),
    boolean(
        "skip-trx",
        "off",
        "Don't start explicit transactions; run all queries in autocommit mode",
    ),
    boolean(
        "secondary",
        "off",
        "Use a secondary index in place of the PRIMARY KEY",
    ),
    boolean(
        "create-secondary",
        "on",
        "Create a secondary index on k in addition to the PRIMARY KEY",
    ),
    string(
        "create-table-options",
        "",
        "Extra options appended to CREATE TABLE",
    ),
    string(
        "mysql-storage-engine",
        "innodb",
        "Storage engine, if MySQL is used",
    ),
    int(
        "random-points",
        "10",
        "Number of random points in the IN() clause (select_random_points)",
    ),
    int(
        "number-of-ranges",
        "10",
        "Number of ranges in the WHERE clause (select_random_ranges)",
    ),
    int("delta", "5", "Size of each range (select_random_ranges)"),
    int(
        "bulk-rows",
        "1000",
        "Rows per multi-row INSERT statement (bulk_insert)",
    ),
    int(
        "items",
        "10000",
        "DBT-1: items in the store, one of 1000, 10000, 100000, 1000000, 10000000",
    ),
    int(
        "ebs",
        "10",
        "DBT-1: the scale's emulated browsers: 2880 customers each (orders 0.9 per customer)",
    ),
    string(
        "mix",
        "shopping",
        "DBT-1: browsing, shopping, ordering (TPC-W's matrices) or ordering-dbt1 (DBT-1's, 56/44)",
    ),
    int(
        "warehouses",
        "1",
        "TPC-C: warehouses of the scale, 10 terminals each (the run's users)",
    ),
    boolean(
        "no-wait",
        "off",
        "TPC-C: no keying or think time (a saturation run; not a TPC-C result)",
    ),
    boolean(
        "all-warehouses",
        "off",
        "TPC-C with --no-wait: each transaction on a random warehouse and district, not its terminal's",
    ),
    float(
        "keying-time-scale",
        "1",
        "TPC-C: factor on the spec's keying times (18 s New-Order, 3 s Payment, 2 s the others)",
    ),
    float(
        "think-time-scale",
        "1",
        "TPC-C: factor on the spec's mean think times (12, 12, 10, 5, 5 s)",
    ),
    string(
        "weights",
        "45,43,4,4,4",
        "TPC-C: cards of each type in a terminal's deck: New-Order,Payment,Order-Status,Delivery,Stock-Level",
    ),
    string(
        "delivery",
        "inline",
        "TPC-C: inline (the terminal waits for the ten districts) or deferred (queued; executed after the terminal's response, clause 2.7)",
    ),
    float(
        "scale",
        "1",
        "Scale factor: on seed 000's table sizes (Member 10,000,000, Record and Result 1,000,000 rows), e.g. 0.01; TPC-H's SF (1: 6,000,000 lineitems, about 1 GB)",
    ),
    string(
        "workload",
        "a",
        "YCSB: the core workload, a to f (a 50/50 read/update, b 95/5, c read only, d read latest + insert, e short scans + insert, f read-modify-write)",
    ),
    int("recordcount", "1000", "YCSB: records in usertable"),
    int(
        "operationcount",
        "1000",
        "YCSB: operations expected: sizes the key range a zipfian covers for inserts (the run's length is --time or --events)",
    ),
    int("fieldcount", "10", "YCSB: fields per record"),
    int("fieldlength", "100", "YCSB: characters per field"),
    boolean(
        "readallfields",
        "on",
        "YCSB: reads and scans fetch every field (off: one field, at random)",
    ),
    boolean(
        "writeallfields",
        "off",
        "YCSB: updates write every field (off: one field, at random)",
    ),
    string(
        "readproportion",
        "",
        "YCSB: share of reads, 0 to 1 [default: the workload's]",
    ),
    string(
        "updateproportion",
        "",
        "YCSB: share of updates [default: the workload's]",
    ),
    string(
        "insertproportion",
        "",
        "YCSB: share of inserts [default: the workload's]",
    ),
    string(
        "scanproportion",
        "",
        "YCSB: share of scans [default: the workload's]",
    ),
    string(
        "readmodifywriteproportion",
        "",
        "YCSB: share of read-modify-writes [default: the workload's]",
    ),
    string(
        "requestdistribution",
        "",
        "YCSB: zipfian (scrambled, constant 0.99), latest, uniform or hotspot [default: the workload's]",
    ),
    int("minscanlength", "1", "YCSB: shortest scan, records"),
    string(
        "maxscanlength",
        "",
        "YCSB: longest scan, records [default: the workload's: 100 for e, else 1000]",
    ),
    string(
        "scanlengthdistribution",
        "uniform",
        "YCSB: uniform or zipfian scan lengths",
    ),
    string(
        "insertorder",
        "hashed",
        "YCSB: hashed (keys user + FNV-64 of the record number) or ordered",
    ),
    int("zeropadding", "1", "YCSB: digits a key's number is padded to"),
    float(
        "hotspotdatafraction",
        "0.2",
        "YCSB hotspot: share of the records that are hot",
    ),
    float(
        "hotspotopnfraction",
        "0.8",
        "YCSB hotspot: share of the operations on the hot records",
    ),
    boolean(
        "qualification",
        "off",
        "TPC-H: every query takes the spec's validation parameters (whose answers the spec publishes for --scale 1) instead of drawn ones",
    ),
    int(
        "analytic-streams",
        "1",
        "CH-benCHmark: connections (of --threads) that run the 22 analytical queries; the others are TPC-C terminals",
    ),
    string(
        "query-timeout",
        "off",
        "TPC-H and CH-benCHmark: end a query (or refresh function) that runs longer than this, e.g. 30s, 5m: counted as a timeout error, its stream goes on with the next; off: no limit",
    ),
    boolean(
        "refresh",
        "on",
        "TPC-H: run the refresh functions RF1 and RF2 (the power test's first and last; the throughput test's refresh stream on one more connection)",
    ),
];

impl OptionSpec {
    /// Whether the help says what the default is itself (YCSB's shares:
    /// the workload letter's), so listings add no `[default: …]` of their own.
    pub fn states_default(&self) -> bool {
        self.help.contains("[default:")
    }
}

pub fn spec(name: &str) -> Option<&'static OptionSpec> {
    ALL.iter().find(|s| s.name == name)
}

/// Parses a sysbench-style boolean.
pub fn parse_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Some(true),
        "off" | "false" | "no" | "0" => Some(false),
        _ => None,
    }
}

/// Effective option values of one workload: defaults overlaid with what the
/// user gave, all validated.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OptionValues {
    values: BTreeMap<&'static str, String>,
}

impl OptionValues {
    /// Validates `given` (name → raw value) against the options `info`
    /// takes, filling in defaults.
    pub fn resolve(info: &WorkloadInfo, given: &[(String, String)]) -> Result<Self, UsageError> {
        let mut values = BTreeMap::new();
        for name in info.options {
            let s = spec(name).expect("workload lists an option missing from options::ALL");
            values.insert(s.name, s.default.to_string());
        }
        for (name, raw) in given {
            let Some(s) = spec(name) else {
                return Err(UsageError(format!(
                    "unknown option '--{name}' (see `dbsweep workloads` for each workload's options)"
                )));
            };
            if !info.options.contains(&s.name) {
                return Err(UsageError(format!(
                    "option '--{name}' does not apply to workload '{}'; its options are: {}",
                    info.name,
                    info.options
                        .iter()
                        .map(|o| format!("--{o}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                )));
            }
            let ok = match s.kind {
                OptKind::Int => raw.parse::<u32>().is_ok(),
                OptKind::Bool => parse_bool(raw).is_some(),
                OptKind::Str => true,
                OptKind::Float => raw.parse::<f64>().is_ok_and(|x| x.is_finite() && x > 0.0),
            };
            if !ok {
                let expected = match s.kind {
                    OptKind::Int => "a non-negative integer",
                    OptKind::Bool => "on or off",
                    OptKind::Str => "a string",
                    OptKind::Float => "a positive number",
                };
                return Err(UsageError(format!(
                    "invalid value '{raw}' for '--{name}': expected {expected}"
                )));
            }
            let v = match s.kind {
                OptKind::Bool => if parse_bool(raw).unwrap() {
                    "on"
                } else {
                    "off"
                }
                .to_string(),
                _ => raw.clone(),
            };
            values.insert(s.name, v);
        }
        Ok(OptionValues { values })
    }

    fn raw(&self, name: &str) -> &str {
        self.values
            .get(name)
            .unwrap_or_else(|| panic!("workload reads option '{name}' it does not declare"))
    }

    pub fn u32(&self, name: &str) -> u32 {
        self.raw(name).parse().expect("validated in resolve")
    }

    pub fn f64(&self, name: &str) -> f64 {
        self.raw(name).parse().expect("validated in resolve")
    }

    pub fn bool(&self, name: &str) -> bool {
        parse_bool(self.raw(name)).expect("validated in resolve")
    }

    pub fn str(&self, name: &str) -> &str {
        self.raw(name)
    }

    /// Sets `name` to its resolved value (a workload whose defaults depend
    /// on another option records what it resolved them to).
    pub fn set(&mut self, name: &'static str, value: &str) {
        self.values.insert(name, value.to_string());
    }

    /// All effective values, for the result record.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &str)> {
        self.values.iter().map(|(k, v)| (*k, v.as_str()))
    }
}
