//! YCSB's options resolved: the workload letters' settings under what
//! was given, checked, with the message that names the fix.

use super::keys::{KeyNames, Request};
use crate::workload::loader::usage;
use crate::workload::OptionValues;

/// YCSB's operations, in its order; a type's index in the run is its
/// place among those the proportions give a share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Read,
    Update,
    Insert,
    Scan,
    ReadModifyWrite,
}

pub(super) const OPERATIONS: [(Operation, &str, &str); 5] = [
    (Operation::Read, "READ", "readproportion"),
    (Operation::Update, "UPDATE", "updateproportion"),
    (Operation::Insert, "INSERT", "insertproportion"),
    (Operation::Scan, "SCAN", "scanproportion"),
    (
        Operation::ReadModifyWrite,
        "READ-MODIFY-WRITE",
        "readmodifywriteproportion",
    ),
];

/// A core workload's settings (YCSB's `workloads/workloada` … `f`):
/// the five proportions in [`OPERATIONS`] order, the request distribution
/// and the longest scan.
fn letter(l: &str) -> Option<([f64; 5], &'static str, u32)> {
    Some(match l {
        "a" => ([0.5, 0.5, 0.0, 0.0, 0.0], "zipfian", 1000),
        "b" => ([0.95, 0.05, 0.0, 0.0, 0.0], "zipfian", 1000),
        "c" => ([1.0, 0.0, 0.0, 0.0, 0.0], "zipfian", 1000),
        "d" => ([0.95, 0.0, 0.05, 0.0, 0.0], "latest", 1000),
        "e" => ([0.0, 0.0, 0.05, 0.95, 0.0], "zipfian", 100),
        "f" => ([0.5, 0.0, 0.0, 0.0, 0.5], "zipfian", 1000),
        _ => return None,
    })
}

/// The options, resolved and checked.
#[derive(Debug, Clone)]
pub struct Config {
    pub records: u32,
    pub operations: u32,
    pub fields: u32,
    pub field_length: u32,
    pub read_all: bool,
    pub write_all: bool,
    /// Shares of [`OPERATIONS`], summing to 1.
    pub proportions: [f64; 5],
    pub request: Request,
    pub min_scan: u32,
    pub max_scan: u32,
    pub scan_zipfian: bool,
    pub names: KeyNames,
}

impl Config {
    /// The options as given over the workload letter's settings; the
    /// returned values name what was resolved (the record keeps them).
    pub(super) fn resolve(o: &OptionValues) -> anyhow::Result<(Config, OptionValues)> {
        let l = o.str("workload").to_ascii_lowercase();
        let (mut proportions, dist, max_scan) = letter(&l).ok_or_else(|| {
            usage(format!(
                "--workload {l}: YCSB's core workloads are a, b, c, d, e and f \
                 (a 50/50 read/update, b 95/5, c read only, d read latest and insert, \
                 e short scans and insert, f read-modify-write)"
            ))
        })?;
        let mut resolved = o.clone();
        resolved.set("workload", &l);
        for (i, (_, _, name)) in OPERATIONS.iter().enumerate() {
            let raw = o.str(name);
            if !raw.is_empty() {
                proportions[i] = raw
                    .parse::<f64>()
                    .ok()
                    .filter(|p| (0.0..=1.0).contains(p))
                    .ok_or_else(|| {
                        usage(format!(
                            "invalid value '{raw}' for '--{name}': expected a share from 0 to 1"
                        ))
                    })?;
            }
            resolved.set(name, &proportions[i].to_string());
        }
        let sum: f64 = proportions.iter().sum();
        if (sum - 1.0).abs() > 1e-9 {
            let parts: Vec<String> = OPERATIONS
                .iter()
                .zip(proportions)
                .map(|((_, _, name), p)| format!("{name} {p}"))
                .collect();
            return Err(usage(format!(
                "the operation proportions sum to {sum} ({}): make them sum to 1 \
                 (those not given are workload {l}'s)",
                parts.join(", ")
            )));
        }
        let dist_name = match o.str("requestdistribution") {
            "" => dist,
            d => d,
        };
        let request = Request::parse(
            dist_name,
            o.f64("hotspotdatafraction"),
            o.f64("hotspotopnfraction"),
        )
        .ok_or_else(|| {
            usage(format!(
                "--requestdistribution {dist_name}: expected zipfian, latest, uniform or hotspot"
            ))
        })?;
        resolved.set("requestdistribution", request.name());
        for f in ["hotspotdatafraction", "hotspotopnfraction"] {
            if o.f64(f) > 1.0 {
                return Err(usage(format!(
                    "--{f} {}: expected a share from 0 to 1",
                    o.f64(f)
                )));
            }
        }
        let max_scan = match o.str("maxscanlength") {
            "" => max_scan,
            m => m.parse::<u32>().ok().filter(|&m| m >= 1).ok_or_else(|| {
                usage(format!(
                    "invalid value '{m}' for '--maxscanlength': expected a positive integer"
                ))
            })?,
        };
        resolved.set("maxscanlength", &max_scan.to_string());
        let min_scan = o.u32("minscanlength");
        if min_scan == 0 || min_scan > max_scan {
            return Err(usage(format!(
                "--minscanlength {min_scan}: expected from 1 to --maxscanlength ({max_scan})"
            )));
        }
        let scan_zipfian = match o.str("scanlengthdistribution") {
            "uniform" => false,
            "zipfian" => true,
            s => {
                return Err(usage(format!(
                    "--scanlengthdistribution {s}: expected uniform or zipfian"
                )))
            }
        };
        let hashed = match o.str("insertorder") {
            "hashed" => true,
            "ordered" => false,
            s => {
                return Err(usage(format!(
                    "--insertorder {s}: expected hashed or ordered"
                )))
            }
        };
        let positive = |name: &str| -> anyhow::Result<u32> {
            match o.u32(name) {
                0 => Err(usage(format!("--{name} must be at least 1"))),
                n => Ok(n),
            }
        };
        let records = positive("recordcount")?;
        let fields = positive("fieldcount")?;
        if fields > MAX_FIELDS {
            return Err(usage(format!(
                "--fieldcount {fields}: at most {MAX_FIELDS} fields (a table's columns are limited)"
            )));
        }
        let zero_padding = o.u32("zeropadding");
        if zero_padding > 30 {
            return Err(usage(format!(
                "--zeropadding {zero_padding}: at most 30 digits (keys are VARCHAR(255))"
            )));
        }
        let config = Config {
            records,
            operations: o.u32("operationcount"),
            fields,
            field_length: positive("fieldlength")?,
            read_all: o.bool("readallfields"),
            write_all: o.bool("writeallfields"),
            proportions,
            request,
            min_scan,
            max_scan,
            scan_zipfian,
            names: KeyNames {
                hashed,
                zero_padding,
            },
        };
        Ok((config, resolved))
    }

    pub(super) fn share(&self, op: Operation) -> f64 {
        let i = OPERATIONS.iter().position(|(o, ..)| *o == op).unwrap();
        self.proportions[i]
    }

    /// YCSB's `expectednewkeys`: twice the inserts `operationcount`
    /// operations would make (its "fudge factor").
    pub(super) fn expected_new_keys(&self) -> i64 {
        (f64::from(self.operations) * self.share(Operation::Insert) * 2.0) as i64
    }
}

/// The most fields a table may have here (MariaDB allows 4,096 columns,
/// PostgreSQL 1,600, SQLite 2,000).
pub(super) const MAX_FIELDS: u32 = 1000;
