//! TPC-H's eight tables (clause 1.4) per dialect, and how each is loaded
//! and indexed.
//!
//! Column types are the spec's: identifiers as integers (order keys as
//! BIGINT, which SF 300 and more need), DECIMAL(15,2) for every money,
//! quantity and rate, DATE, and fixed and variable text. Keys and indexes
//! are the ones clause 1.5.7 allows: each table's primary key and an
//! index on each foreign key, built after the rows are in (clause 4.3's
//! load may do so). On MariaDB and SQLite the primary key is in the
//! CREATE TABLE: their tables are ordered by it and the generator writes
//! the rows in key order; on PostgreSQL the heap is loaded bare and the
//! keys built after, one sorted pass each. Statistics are gathered last,
//! as every TPC-H kit does before the power test.

use crate::driver::Dialect;
use crate::workload::loader::TablePlan;

pub const REGION: &[&str] = &["r_regionkey", "r_name", "r_comment"];
pub const NATION: &[&str] = &["n_nationkey", "n_name", "n_regionkey", "n_comment"];
pub const PART: &[&str] = &[
    "p_partkey",
    "p_name",
    "p_mfgr",
    "p_brand",
    "p_type",
    "p_size",
    "p_container",
    "p_retailprice",
    "p_comment",
];
pub const SUPPLIER: &[&str] = &[
    "s_suppkey",
    "s_name",
    "s_address",
    "s_nationkey",
    "s_phone",
    "s_acctbal",
    "s_comment",
];
pub const PARTSUPP: &[&str] = &[
    "ps_partkey",
    "ps_suppkey",
    "ps_availqty",
    "ps_supplycost",
    "ps_comment",
];
pub const CUSTOMER: &[&str] = &[
    "c_custkey",
    "c_name",
    "c_address",
    "c_nationkey",
    "c_phone",
    "c_acctbal",
    "c_mktsegment",
    "c_comment",
];
pub const ORDERS: &[&str] = &[
    "o_orderkey",
    "o_custkey",
    "o_orderstatus",
    "o_totalprice",
    "o_orderdate",
    "o_orderpriority",
    "o_clerk",
    "o_shippriority",
    "o_comment",
];
pub const LINEITEM: &[&str] = &[
    "l_orderkey",
    "l_partkey",
    "l_suppkey",
    "l_linenumber",
    "l_quantity",
    "l_extendedprice",
    "l_discount",
    "l_tax",
    "l_returnflag",
    "l_linestatus",
    "l_shipdate",
    "l_commitdate",
    "l_receiptdate",
    "l_shipinstruct",
    "l_shipmode",
    "l_comment",
];

/// The tables in load order (the small ones first, so the progress bar
/// moves at once), by their position in [`plans`].
pub const TABLES: [&str; 8] = [
    "region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem",
];

/// One table: its columns with their types, its primary key, and its
/// foreign keys (each indexed).
struct Table {
    name: &'static str,
    columns: &'static [&'static str],
    types: Vec<&'static str>,
    key: &'static str,
    foreign: &'static [&'static str],
}

const D: &str = "DECIMAL(15,2) NOT NULL";
const I: &str = "INTEGER NOT NULL";
const B: &str = "BIGINT NOT NULL";
const DATE: &str = "DATE NOT NULL";

fn c(n: u32) -> &'static str {
    match n {
        1 => "CHAR(1) NOT NULL",
        10 => "CHAR(10) NOT NULL",
        15 => "CHAR(15) NOT NULL",
        25 => "CHAR(25) NOT NULL",
        _ => unreachable!("no CHAR({n}) in TPC-H"),
    }
}

fn v(n: u32) -> &'static str {
    match n {
        23 => "VARCHAR(23) NOT NULL",
        25 => "VARCHAR(25) NOT NULL",
        40 => "VARCHAR(40) NOT NULL",
        44 => "VARCHAR(44) NOT NULL",
        55 => "VARCHAR(55) NOT NULL",
        79 => "VARCHAR(79) NOT NULL",
        101 => "VARCHAR(101) NOT NULL",
        117 => "VARCHAR(117) NOT NULL",
        152 => "VARCHAR(152)",
        199 => "VARCHAR(199) NOT NULL",
        _ => unreachable!("no VARCHAR({n}) in TPC-H"),
    }
}

fn tables() -> [Table; 8] {
    [
        Table {
            name: "region",
            columns: REGION,
            types: vec![I, c(25), v(152)],
            key: "r_regionkey",
            foreign: &[],
        },
        Table {
            name: "nation",
            columns: NATION,
            types: vec![I, c(25), I, v(152)],
            key: "n_nationkey",
            foreign: &["n_regionkey"],
        },
        Table {
            name: "supplier",
            columns: SUPPLIER,
            types: vec![I, c(25), v(40), I, c(15), D, v(101)],
            key: "s_suppkey",
            foreign: &["s_nationkey"],
        },
        Table {
            name: "customer",
            columns: CUSTOMER,
            types: vec![I, v(25), v(40), I, c(15), D, c(10), v(117)],
            key: "c_custkey",
            foreign: &["c_nationkey"],
        },
        Table {
            name: "part",
            columns: PART,
            types: vec![I, v(55), c(25), c(10), v(25), I, c(10), D, v(23)],
            key: "p_partkey",
            foreign: &[],
        },
        Table {
            name: "partsupp",
            columns: PARTSUPP,
            types: vec![I, I, I, D, v(199)],
            key: "ps_partkey, ps_suppkey",
            foreign: &["ps_suppkey"],
        },
        Table {
            name: "orders",
            columns: ORDERS,
            types: vec![B, I, c(1), D, DATE, c(15), c(15), I, v(79)],
            key: "o_orderkey",
            foreign: &["o_custkey"],
        },
        Table {
            name: "lineitem",
            columns: LINEITEM,
            types: vec![
                B,
                I,
                I,
                I,
                D,
                D,
                D,
                D,
                c(1),
                c(1),
                DATE,
                DATE,
                DATE,
                c(25),
                c(10),
                v(44),
            ],
            key: "l_orderkey, l_linenumber",
            foreign: &["l_partkey, l_suppkey"],
        },
    ]
}

/// The load plans of the eight tables in [`TABLES`] order, `rows[i]` rows
/// (or slots) each.
pub fn plans(dialect: Dialect, rows: [u32; 8]) -> Vec<TablePlan> {
    tables()
        .into_iter()
        .zip(rows)
        .map(|(t, rows)| plan(&t, dialect, rows))
        .collect()
}

fn plan(t: &Table, dialect: Dialect, rows: u32) -> TablePlan {
    let name = t.name;
    let mut cols: Vec<String> = t
        .columns
        .iter()
        .zip(&t.types)
        .map(|(c, ty)| format!("{c} {ty}"))
        .collect();
    let mut indexes: Vec<String> = t
        .foreign
        .iter()
        .map(|f| {
            let tag = f.split(',').next().unwrap_or(f).trim();
            format!("CREATE INDEX {tag}_idx ON {name} ({f})")
        })
        .collect();
    let mut finish = Vec::new();
    match dialect {
        Dialect::Postgres => {
            indexes.push(format!(
                "CREATE UNIQUE INDEX {name}_pkey ON {name} ({})",
                t.key
            ));
            finish.push(format!(
                "ALTER TABLE {name} ADD CONSTRAINT {name}_pkey PRIMARY KEY USING INDEX {name}_pkey"
            ));
            finish.push(format!("ANALYZE {name}"));
        }
        Dialect::Mysql => {
            cols.push(format!("PRIMARY KEY ({})", t.key));
            finish.push(format!("ANALYZE TABLE {name}"));
        }
        Dialect::Sqlite => {
            cols.push(format!("PRIMARY KEY ({})", t.key));
            finish.push(format!("ANALYZE {name}"));
        }
    }
    let engine = if dialect == Dialect::Mysql {
        " ENGINE=InnoDB"
    } else {
        ""
    };
    TablePlan {
        name: name.to_string(),
        create: format!("CREATE TABLE {name} ({}){engine}", cols.join(", ")),
        columns: t.columns.to_vec(),
        rows,
        indexes,
        finish,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_column_has_a_type_and_the_tables_their_order() {
        for t in tables() {
            assert_eq!(t.columns.len(), t.types.len(), "{}", t.name);
        }
        let names: Vec<&str> = tables().iter().map(|t| t.name).collect();
        assert_eq!(names, TABLES);
    }

    #[test]
    fn postgres_builds_its_keys_after_the_load() {
        let p = plans(Dialect::Postgres, [5, 25, 10, 150, 200, 800, 1500, 10500]);
        let l = &p[7];
        assert!(!l.create.contains("PRIMARY KEY"), "{}", l.create);
        assert!(l.indexes.contains(
            &"CREATE UNIQUE INDEX lineitem_pkey ON lineitem (l_orderkey, l_linenumber)".to_string()
        ));
        assert!(l.indexes.contains(
            &"CREATE INDEX l_partkey_idx ON lineitem (l_partkey, l_suppkey)".to_string()
        ));
        let m = plans(Dialect::Mysql, [1; 8]);
        assert!(m[7]
            .create
            .ends_with("PRIMARY KEY (l_orderkey, l_linenumber)) ENGINE=InnoDB"));
    }
}
