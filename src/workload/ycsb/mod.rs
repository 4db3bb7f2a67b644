//! YCSB's core workloads A–F (YCSB 0.17.0's `CoreWorkload` over its JDBC
//! binding's table and statements), as one workload `ycsb` with
//! `--workload a` … `f`.
//!
//! # Layout
//! - this file: the table, its load and the statements;
//! - [`config`]: the options (YCSB's property names) over the workload
//!   letters' settings, checked;
//! - [`keys`]: key names, the load order, the shared insert sequence and
//!   the key choosers over `rand::ycsb`'s distributions;
//! - [`script`]: one client's operations.
//!
//! What YCSB does and this keeps: `usertable` with `ycsb_key` and
//! `fieldcount` text fields of `fieldlength` printable characters; keys
//! `user` + FNV-64 of the record number (`insertorder=hashed`); the
//! request distributions with YCSB's constants; inserts numbered from a
//! sequence shared by the clients whose acknowledged end bounds every
//! read; a scan of `ycsb_key >= ? ORDER BY ycsb_key LIMIT ?`; each
//! operation autocommitted, as the JDBC binding's default; operations
//! counted and timed by type under YCSB's names (READ, UPDATE, INSERT,
//! SCAN, READ-MODIFY-WRITE).
//!
//! What differs, and why: the run's length is `--time` or `--events`, as
//! every workload's (`operationcount` sizes only what YCSB sizes with it
//! besides, the key range a zipfian covers for the inserts expected);
//! with `readallfields=off` a read selects its one field (the JDBC
//! binding selects every column and keeps one); the load writes the
//! records in key order, so an index clustered on the key fills from
//! left to right; a run with inserts starts its sequence after the last
//! record in the table (found by probing keys), so runs can follow each
//! other without reloading.

mod config;
mod keys;
mod script;

use std::sync::Arc;

use anyhow::Context as _;

use crate::driver::{Connection, Dialect, ErrorKind};
use crate::rand::ycsb::SkewedLatest;
use crate::rand::{RandConfig, Rng};
use crate::util::progress::Progress;
use crate::workload::loader::{self, check_tables, drop_tables, ensure_absent, usage, TablePlan};
use crate::workload::{
    ClientScript, Connector, OptionValues, StatementDef, TxnType, Workload, WorkloadInfo,
};
use config::MAX_FIELDS;
use config::OPERATIONS;
pub use config::{Config, Operation};
use keys::{InsertKeys, Request};

/// The table, as YCSB's JDBC binding names it.
const TABLE: &str = "usertable";

/// Every YCSB option, in `dbsweep workloads` order.
const OPTIONS: [&str; 20] = [
    "workload",
    "recordcount",
    "operationcount",
    "fieldcount",
    "fieldlength",
    "readallfields",
    "writeallfields",
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
    "requestdistribution",
    "minscanlength",
    "maxscanlength",
    "scanlengthdistribution",
    "insertorder",
    "zeropadding",
    "hotspotdatafraction",
    "hotspotopnfraction",
];

pub static WORKLOADS: &[WorkloadInfo] = &[WorkloadInfo {
    name: "ycsb",
    description: "YCSB's core workloads A-F on usertable: reads, updates, inserts, scans, read-modify-writes by key",
    options: &OPTIONS,
    build,
}];

fn build(
    _name: &'static str,
    o: &OptionValues,
    dialect: Dialect,
    rand: RandConfig,
) -> anyhow::Result<Box<dyn Workload>> {
    let (config, options) = Config::resolve(o)?;
    Ok(Box::new(Ycsb::new(config, options, dialect, rand)))
}

/// The statements, by what they do: each is prepared only when an
/// operation with a share uses it.
#[derive(Debug, Clone, Default)]
pub struct Statements {
    /// Read of every field, or of field `i` (`readallfields=off`).
    pub read_all: Option<usize>,
    pub read_field: Vec<usize>,
    /// Update of every field (`writeallfields=on`), or of field `i`.
    pub update_all: Option<usize>,
    pub update_field: Vec<usize>,
    pub insert: Option<usize>,
    pub scan_all: Option<usize>,
    pub scan_field: Vec<usize>,
}

pub struct Ycsb {
    config: Config,
    options: OptionValues,
    dialect: Dialect,
    rand: RandConfig,
    defs: Vec<StatementDef>,
    ids: Statements,
    /// The run's insert sequence, shared by its clients.
    inserts: Arc<InsertKeys>,
    /// Workload D's chooser, whose zeta is O(records): built once, cloned
    /// per client.
    latest: SkewedLatest,
    types: Vec<(Operation, &'static str, f64)>,
}

impl Ycsb {
    fn new(config: Config, options: OptionValues, dialect: Dialect, rand: RandConfig) -> Ycsb {
        let (defs, ids) = statements(&config, dialect);
        let records = i64::from(config.records);
        let latest = match config.request {
            Request::Latest => SkewedLatest::new(records - 1),
            _ => SkewedLatest::new(1),
        };
        let types = OPERATIONS
            .iter()
            .zip(config.proportions)
            .filter(|(_, p)| *p > 0.0)
            .map(|((op, name, _), p)| (*op, *name, p))
            .collect();
        Ycsb {
            inserts: Arc::new(InsertKeys::new(records)),
            config,
            options,
            dialect,
            rand,
            defs,
            ids,
            latest,
            types,
        }
    }

    fn inserts(&self) -> bool {
        self.config.share(Operation::Insert) > 0.0
    }

    fn plan(&self) -> TablePlan {
        let fields: Vec<String> = (0..self.config.fields)
            .map(|i| format!("field{i}"))
            .collect();
        let cols: Vec<String> = fields.iter().map(|f| format!("{f} TEXT")).collect();
        let key = match self.dialect {
            // A heap loaded without an index, the key's index built after
            // in one sorted pass, as pgbench and sysbench's loads here.
            Dialect::Postgres => "ycsb_key VARCHAR(255) NOT NULL",
            _ => "ycsb_key VARCHAR(255) PRIMARY KEY",
        };
        let mut columns: Vec<&'static str> = (0..self.config.fields).map(field_name).collect();
        columns.push("ycsb_key");
        let (indexes, finish) = match self.dialect {
            Dialect::Postgres => (
                vec![format!("CREATE UNIQUE INDEX {TABLE}_pkey ON {TABLE}(ycsb_key)")],
                vec![format!(
                    "ALTER TABLE {TABLE} ADD CONSTRAINT {TABLE}_pkey PRIMARY KEY USING INDEX {TABLE}_pkey"
                )],
            ),
            _ => (Vec::new(), Vec::new()),
        };
        TablePlan {
            name: TABLE.to_string(),
            create: format!("CREATE TABLE {TABLE} ({key}, {})", cols.join(", ")),
            columns,
            rows: self.config.records,
            indexes,
            finish,
        }
    }

    /// The first record number at or after `from` whose key is not in the
    /// table: records are inserted in number order, so their keys are
    /// present up to some number and absent after (a failed insert leaves
    /// a hole that a later insert's duplicate key fills: retried).
    fn first_absent(&self, conn: &mut dyn Connection, from: i64) -> anyhow::Result<i64> {
        let present = |k: i64| -> anyhow::Result<bool> {
            let key = self.config.names.name(k);
            Ok(conn
                .execute_sql(&format!("SELECT 1 FROM {TABLE} WHERE ycsb_key = '{key}'"))?
                .rows
                > 0)
        };
        let last = crate::stats::bisect::last_true(from, present)?;
        Ok(last.map_or(from, |k| k + 1))
    }

    fn hint(&self) -> String {
        format!("with the same --recordcount ({})", self.config.records)
    }
}

/// Column `i`'s name, `field{i}` (the loader's plans name columns for
/// the life of the process).
fn field_name(i: u32) -> &'static str {
    static NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| (0..MAX_FIELDS).map(|i| format!("field{i}")).collect())[i as usize]
        .as_str()
}

/// The statements the configuration's operations use, and their ids,
/// written with `?`, rendered for `dialect` (`$1, $2, …` on PostgreSQL).
fn statements(c: &Config, dialect: Dialect) -> (Vec<StatementDef>, Statements) {
    let mut defs = Vec::new();
    let mut add = |kind: &'static str, sql: String| {
        defs.push(StatementDef {
            kind: kind.into(),
            sql: crate::workload::sysbench::render(dialect, &sql),
        });
        defs.len() - 1
    };
    let mut ids = Statements::default();
    let reads = c.share(Operation::Read) + c.share(Operation::ReadModifyWrite) > 0.0;
    let updates = c.share(Operation::Update) + c.share(Operation::ReadModifyWrite) > 0.0;
    let fields = 0..c.fields;
    if reads {
        if c.read_all {
            ids.read_all = Some(add(
                "read",
                format!("SELECT * FROM {TABLE} WHERE ycsb_key = ?"),
            ));
        } else {
            ids.read_field = fields
                .clone()
                .map(|i| {
                    add(
                        "read",
                        format!("SELECT ycsb_key, field{i} FROM {TABLE} WHERE ycsb_key = ?"),
                    )
                })
                .collect();
        }
    }
    if updates {
        if c.write_all {
            let set: Vec<String> = fields.clone().map(|i| format!("field{i} = ?")).collect();
            ids.update_all = Some(add(
                "update",
                format!("UPDATE {TABLE} SET {} WHERE ycsb_key = ?", set.join(", ")),
            ));
        } else {
            ids.update_field = fields
                .clone()
                .map(|i| {
                    add(
                        "update",
                        format!("UPDATE {TABLE} SET field{i} = ? WHERE ycsb_key = ?"),
                    )
                })
                .collect();
        }
    }
    if c.share(Operation::Insert) > 0.0 {
        let cols: Vec<String> = fields.clone().map(|i| format!("field{i}")).collect();
        let marks = vec!["?"; c.fields as usize + 1].join(", ");
        ids.insert = Some(add(
            "insert",
            format!(
                "INSERT INTO {TABLE} ({}, ycsb_key) VALUES ({marks})",
                cols.join(", ")
            ),
        ));
    }
    if c.share(Operation::Scan) > 0.0 {
        let scan = |what: &str| {
            format!("SELECT {what} FROM {TABLE} WHERE ycsb_key >= ? ORDER BY ycsb_key LIMIT ?")
        };
        if c.read_all {
            ids.scan_all = Some(add("scan", scan("*")));
        } else {
            ids.scan_field = fields
                .map(|i| add("scan", scan(&format!("ycsb_key, field{i}"))))
                .collect();
        }
    }
    (defs, ids)
}

impl Workload for Ycsb {
    fn name(&self) -> &'static str {
        "ycsb"
    }

    fn statements(&self) -> &[StatementDef] {
        &self.defs
    }

    fn prepare(
        &self,
        connect: Connector<'_>,
        threads: usize,
        progress: &dyn Progress,
    ) -> anyhow::Result<()> {
        let mut first = connect().context("could not connect to prepare usertable")?;
        ensure_absent(first.as_mut(), &[TABLE.to_string()], "ycsb", &self.hint())?;
        let source = script::Rows::new(&self.config, self.rand.seed);
        loader::load(
            first.as_mut(),
            connect,
            &[self.plan()],
            loader::loaders(self.dialect, threads),
            &source,
            progress,
            TABLE,
        )
    }

    fn cleanup(&self, conn: &mut dyn Connection) -> anyhow::Result<()> {
        drop_tables(conn, &[TABLE.to_string()])
    }

    fn check_prepared(&self, conn: &mut dyn Connection) -> anyhow::Result<()> {
        check_tables(conn, &[TABLE.to_string()], "ycsb", &self.hint(), true)?;
        let last = self.config.names.name(i64::from(self.config.records) - 1);
        let found = conn.execute_sql(&format!(
            "SELECT field{} FROM {TABLE} WHERE ycsb_key = '{last}'",
            self.config.fields - 1
        ));
        match found {
            Ok(r) if r.rows > 0 => Ok(()),
            _ => Err(usage(format!(
                "{TABLE} does not hold record {} with field{}: it was prepared with a smaller \
                 --recordcount or --fieldcount; run `dbsweep cleanup ycsb`, then \
                 `dbsweep prepare ycsb --recordcount {} --fieldcount {}`",
                self.config.records - 1,
                self.config.fields - 1,
                self.config.records,
                self.config.fields,
            ))),
        }
    }

    fn ready(
        &self,
        conn: &mut dyn Connection,
        shard: Option<(usize, usize)>,
    ) -> anyhow::Result<()> {
        let records = i64::from(self.config.records);
        let start = if self.inserts() {
            self.first_absent(conn, records)
                .context("could not find where the last run's inserts ended")?
        } else {
            records
        };
        let (index, count) = shard.unwrap_or((0, 1));
        self.inserts.reset(start, index, count);
        Ok(())
    }

    fn client(&self, _id: usize, _clients: usize, rng: Rng) -> Box<dyn ClientScript> {
        Box::new(script::Script::new(
            &self.config,
            &self.ids,
            &self.types,
            self.inserts.clone(),
            &self.latest,
            rng,
        ))
    }

    fn options(&self) -> &OptionValues {
        &self.options
    }

    fn retry_also(&self) -> &'static [ErrorKind] {
        // An insert's number taken by a record a failed run left: the
        // retry takes the next number.
        &[ErrorKind::DuplicateKey]
    }

    fn transaction_types(&self) -> Vec<TxnType> {
        self.types
            .iter()
            .map(|(_, name, p)| TxnType {
                name,
                expected_pct: Some(p * 100.0),
                p90_limit: None,
                queries: true,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
