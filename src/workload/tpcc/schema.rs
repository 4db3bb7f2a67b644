//! TPC-C's nine tables (clause 1.3): their DDL per dialect with the spec's
//! primary keys, the secondary indexes the transactions need (customers by
//! last name, orders by customer) built after the load, their sizes per
//! warehouse (clause 4.3.3.1), and the loader's plans. The rows are made in
//! `rows.rs`.
//!
//! Each table's rows are numbered so that a row number gives its
//! warehouse, district and key at once (stock row n is item
//! (n − 1) % 100,000 + 1 of warehouse (n − 1) / 100,000 + 1): the loader
//! cuts every table into ranges that connections load in parallel, so the
//! warehouses load side by side. A table `tpcc_scale` keeps the warehouse
//! count and the load's C constant for C_LAST, which a run needs for the
//! delta rule.

use crate::driver::Dialect;
use crate::workload::loader::TablePlan;

/// Items in the catalogue (clause 4.3.3.1), fixed at every scale.
pub const ITEMS: u32 = 100_000;
pub const DISTRICTS: u32 = 10;
pub const CUSTOMERS: u32 = 3_000;
/// Orders per district at load, the last 900 of them undelivered.
pub const ORDERS: u32 = 3_000;
pub const NEW_ORDERS: u32 = 900;
/// The first undelivered order of each district at load.
pub const FIRST_NEW_ORDER: u32 = ORDERS - NEW_ORDERS + 1;
/// Order-line slots per order (an order has 5 to 15 lines).
pub const LINE_SLOTS: u32 = 15;
/// The unused item a rolled-back New-Order asks for.
pub const UNUSED_ITEM: u32 = ITEMS + 1;

/// The loaded tables, in load order (the index of each in the plans).
pub const TABLES: [&str; 9] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "item",
    "stock",
    "orders",
    "new_order",
    "order_line",
];

pub const WAREHOUSE: usize = 0;
pub const DISTRICT: usize = 1;
pub const CUSTOMER: usize = 2;
pub const HISTORY: usize = 3;
pub const ITEM: usize = 4;
pub const STOCK: usize = 5;
pub const ORDER: usize = 6;
pub const NEW_ORDER: usize = 7;
pub const ORDER_LINE: usize = 8;

/// The table that records the scale the data was prepared at.
pub const SCALE_TABLE: &str = "tpcc_scale";

pub(super) const COLUMNS: [&[&str]; 9] = [
    &[
        "w_id",
        "w_name",
        "w_street_1",
        "w_street_2",
        "w_city",
        "w_state",
        "w_zip",
        "w_tax",
        "w_ytd",
    ],
    &[
        "d_id",
        "d_w_id",
        "d_name",
        "d_street_1",
        "d_street_2",
        "d_city",
        "d_state",
        "d_zip",
        "d_tax",
        "d_ytd",
        "d_next_o_id",
    ],
    &[
        "c_id",
        "c_d_id",
        "c_w_id",
        "c_first",
        "c_middle",
        "c_last",
        "c_street_1",
        "c_street_2",
        "c_city",
        "c_state",
        "c_zip",
        "c_phone",
        "c_since",
        "c_credit",
        "c_credit_lim",
        "c_discount",
        "c_balance",
        "c_ytd_payment",
        "c_payment_cnt",
        "c_delivery_cnt",
        "c_data",
    ],
    &[
        "h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data",
    ],
    &["i_id", "i_im_id", "i_name", "i_price", "i_data"],
    &[
        "s_i_id",
        "s_w_id",
        "s_quantity",
        "s_dist_01",
        "s_dist_02",
        "s_dist_03",
        "s_dist_04",
        "s_dist_05",
        "s_dist_06",
        "s_dist_07",
        "s_dist_08",
        "s_dist_09",
        "s_dist_10",
        "s_ytd",
        "s_order_cnt",
        "s_remote_cnt",
        "s_data",
    ],
    &[
        "o_id",
        "o_d_id",
        "o_w_id",
        "o_c_id",
        "o_entry_d",
        "o_carrier_id",
        "o_ol_cnt",
        "o_all_local",
    ],
    &["no_o_id", "no_d_id", "no_w_id"],
    &[
        "ol_o_id",
        "ol_d_id",
        "ol_w_id",
        "ol_number",
        "ol_i_id",
        "ol_supply_w_id",
        "ol_delivery_d",
        "ol_quantity",
        "ol_amount",
        "ol_dist_info",
    ],
];

/// Row numbers of each table at `warehouses` (order_line: its slots, 15
/// per order, of which each order fills 5 to 15).
pub fn row_numbers(warehouses: u32) -> [u32; 9] {
    let w = warehouses;
    [
        w,
        w * DISTRICTS,
        w * DISTRICTS * CUSTOMERS,
        w * DISTRICTS * CUSTOMERS,
        ITEMS,
        w * ITEMS,
        w * DISTRICTS * ORDERS,
        w * DISTRICTS * NEW_ORDERS,
        w * DISTRICTS * ORDERS * LINE_SLOTS,
    ]
}

/// The largest warehouse count whose row numbers fit the loader's u32.
pub const MAX_WAREHOUSES: u32 = u32::MAX / (DISTRICTS * ORDERS * LINE_SLOTS);

/// Each table's primary key (the spec gives HISTORY none).
pub const KEYS: [Option<&str>; 9] = [
    Some("w_id"),
    Some("d_w_id, d_id"),
    Some("c_w_id, c_d_id, c_id"),
    None,
    Some("i_id"),
    Some("s_w_id, s_i_id"),
    Some("o_w_id, o_d_id, o_id"),
    Some("no_w_id, no_d_id, no_o_id"),
    Some("ol_w_id, ol_d_id, ol_o_id, ol_number"),
];

/// Whether the primary keys are built after the data rather than declared
/// with the table. PostgreSQL: a heap table has no order of its own, so
/// one sorted index build after the load costs less than keeping the
/// index up to date row by row (10 warehouses: 13.0 s with the keys
/// declared, 10.6 s built afterwards, medians of 3 in bench/README.md).
/// InnoDB stores a table in its key's order, so MariaDB's keys stay in the
/// CREATE TABLE, and SQLite's with them.
pub fn keys_after_load(dialect: Dialect) -> bool {
    dialect == Dialect::Postgres
}

/// The CREATE TABLE of table `t`, with its primary key unless
/// [`keys_after_load`].
pub fn create(dialect: Dialect, t: usize) -> String {
    let ts = if dialect == Dialect::Mysql {
        "DATETIME"
    } else {
        "TIMESTAMP"
    };
    let addr = |p: &str| {
        format!(
            "{p}_street_1 VARCHAR(20), {p}_street_2 VARCHAR(20), {p}_city VARCHAR(20), \
             {p}_state CHAR(2), {p}_zip CHAR(9)"
        )
    };
    let body = match t {
        WAREHOUSE => format!(
            "w_id INTEGER NOT NULL, w_name VARCHAR(10), {}, w_tax DECIMAL(4,4), \
             w_ytd DECIMAL(12,2)",
            addr("w")
        ),
        DISTRICT => format!(
            "d_id INTEGER NOT NULL, d_w_id INTEGER NOT NULL, d_name VARCHAR(10), {}, \
             d_tax DECIMAL(4,4), d_ytd DECIMAL(12,2), d_next_o_id INTEGER",
            addr("d")
        ),
        CUSTOMER => format!(
            "c_id INTEGER NOT NULL, c_d_id INTEGER NOT NULL, c_w_id INTEGER NOT NULL, \
             c_first VARCHAR(16), c_middle CHAR(2), c_last VARCHAR(16), {}, c_phone CHAR(16), \
             c_since {ts}, c_credit CHAR(2), c_credit_lim DECIMAL(12,2), c_discount DECIMAL(4,4), \
             c_balance DECIMAL(12,2), c_ytd_payment DECIMAL(12,2), c_payment_cnt INTEGER, \
             c_delivery_cnt INTEGER, c_data VARCHAR(500)",
            addr("c")
        ),
        // The spec gives HISTORY no key.
        HISTORY => format!(
            "h_c_id INTEGER, h_c_d_id INTEGER, h_c_w_id INTEGER, h_d_id INTEGER, h_w_id INTEGER, \
             h_date {ts}, h_amount DECIMAL(6,2), h_data VARCHAR(24)"
        ),
        ITEM => "i_id INTEGER NOT NULL, i_im_id INTEGER, i_name VARCHAR(24), \
                 i_price DECIMAL(5,2), i_data VARCHAR(50)"
            .to_string(),
        STOCK => {
            let dists: Vec<String> = (1..=10)
                .map(|d| format!("s_dist_{d:02} CHAR(24)"))
                .collect();
            format!(
                "s_i_id INTEGER NOT NULL, s_w_id INTEGER NOT NULL, s_quantity INTEGER, {}, \
                 s_ytd INTEGER, s_order_cnt INTEGER, s_remote_cnt INTEGER, s_data VARCHAR(50)",
                dists.join(", ")
            )
        }
        ORDER => format!(
            "o_id INTEGER NOT NULL, o_d_id INTEGER NOT NULL, o_w_id INTEGER NOT NULL, \
             o_c_id INTEGER, o_entry_d {ts}, o_carrier_id INTEGER, o_ol_cnt INTEGER, \
             o_all_local INTEGER"
        ),
        NEW_ORDER => "no_o_id INTEGER NOT NULL, no_d_id INTEGER NOT NULL, \
                      no_w_id INTEGER NOT NULL"
            .to_string(),
        _ => format!(
            "ol_o_id INTEGER NOT NULL, ol_d_id INTEGER NOT NULL, ol_w_id INTEGER NOT NULL, \
             ol_number INTEGER NOT NULL, ol_i_id INTEGER, ol_supply_w_id INTEGER, \
             ol_delivery_d {ts}, ol_quantity INTEGER, ol_amount DECIMAL(6,2), \
             ol_dist_info CHAR(24)"
        ),
    };
    let engine = if dialect == Dialect::Mysql {
        " ENGINE=InnoDB"
    } else {
        ""
    };
    let key = match KEYS[t].filter(|_| !keys_after_load(dialect)) {
        Some(k) => format!(", PRIMARY KEY ({k})"),
        None => String::new(),
    };
    format!("CREATE TABLE {} ({body}{key}){engine}", TABLES[t])
}

/// The name a primary key built after the load takes: PostgreSQL's own
/// for a declared key, so the tables look as if it had been declared.
pub fn key_name(t: usize) -> String {
    format!("{}_pkey", TABLES[t])
}

/// The indexes built once a table is loaded: its primary key's where
/// [`keys_after_load`] (a unique index, made the key by [`finish`]), then
/// the secondary ones — Payment and Order-Status find customers by last
/// name (sorted by first name), and Order-Status a customer's latest order.
fn indexes(dialect: Dialect, t: usize) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(k) = KEYS[t].filter(|_| keys_after_load(dialect)) {
        out.push(format!(
            "CREATE UNIQUE INDEX {} ON {} ({k})",
            key_name(t),
            TABLES[t]
        ));
    }
    let ix: &[&str] = match t {
        CUSTOMER => &["CREATE INDEX customer_name ON customer (c_w_id, c_d_id, c_last, c_first)"],
        ORDER => &["CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)"],
        _ => &[],
    };
    out.extend(ix.iter().map(|s| s.to_string()));
    out
}

fn finish(dialect: Dialect, t: usize) -> Vec<String> {
    let mut out = Vec::new();
    if KEYS[t].is_some() && keys_after_load(dialect) {
        let name = key_name(t);
        out.push(format!(
            "ALTER TABLE {} ADD CONSTRAINT {name} PRIMARY KEY USING INDEX {name}",
            TABLES[t]
        ));
    }
    match (dialect, t) {
        (Dialect::Postgres, _) => out.push(format!("ANALYZE {}", TABLES[t])),
        (Dialect::Sqlite, ORDER_LINE) => out.push("ANALYZE".to_string()),
        _ => {}
    }
    out
}

/// How the loader builds each table at `warehouses`.
pub fn plans(dialect: Dialect, warehouses: u32) -> Vec<TablePlan> {
    let rows = row_numbers(warehouses);
    (0..TABLES.len())
        .map(|t| TablePlan {
            name: TABLES[t].to_string(),
            create: create(dialect, t),
            columns: COLUMNS[t].to_vec(),
            rows: rows[t],
            indexes: indexes(dialect, t),
            finish: finish(dialect, t),
        })
        .collect()
}
