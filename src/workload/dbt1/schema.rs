//! DBT-1's ten tables: their DDL per dialect, their sizes at a scale, and
//! the loader's plans; their rows are generated in `rows.rs`.
//!
//! Sizes as DBT-1 (TPC-W clause 4.3): `items` ∈ {1k, 10k, 100k, 1M, 10M},
//! authors = items / 4, customers = 2880 × EBs, addresses = 2 × customers,
//! orders = 0.9 × customers with 1–5 lines each and one cc_xacts row, 92
//! countries; the two shopping-cart tables start empty. A table
//! `dbt1_scale` keeps the scale, so a run can tell a database prepared at
//! another one.
//!

use crate::driver::Dialect;
use crate::workload::loader::TablePlan;

use super::text::COUNTRIES;

/// The allowed item counts (TPC-W clause 4.3).
pub const ITEM_SCALES: [u32; 5] = [1_000, 10_000, 100_000, 1_000_000, 10_000_000];

/// Customers per emulated browser (EB) of the scale.
pub const CUSTOMERS_PER_EB: u32 = 2880;

/// The day the data's dates count back from: 2026-01-01 00:00:00 UTC.
pub const EPOCH: i64 = 1_767_225_600;
pub(super) const DAY: i64 = 86_400;
/// 1880-01-01 and 1800-01-01, as Unix times.
pub(super) const Y1880: i64 = -2_840_140_800;
pub(super) const Y1800: i64 = -5_364_662_400;
pub(super) const Y1930: i64 = -1_262_304_000;

/// Mixed into the seed of the data, apart from every client's stream.
pub(super) const LOAD_SALT: u64 = 0x6462_7431_6c6f_6164;

/// The tables, in load order; the last two start empty.
pub const TABLES: [&str; 10] = [
    "country",
    "author",
    "item",
    "customer",
    "address",
    "orders",
    "order_line",
    "cc_xacts",
    "shopping_cart",
    "shopping_cart_line",
];

/// The table that records the scale the data was prepared at.
pub const SCALE_TABLE: &str = "dbt1_scale";

const COLUMNS: [&[&str]; 8] = [
    &["co_id", "co_name", "co_exchange", "co_currency"],
    &["a_id", "a_fname", "a_lname", "a_mname", "a_dob", "a_bio"],
    &[
        "i_id",
        "i_title",
        "i_a_id",
        "i_pub_date",
        "i_publisher",
        "i_subject",
        "i_desc",
        "i_related1",
        "i_related2",
        "i_related3",
        "i_related4",
        "i_related5",
        "i_thumbnail",
        "i_image",
        "i_srp",
        "i_cost",
        "i_avail",
        "i_stock",
        "i_isbn",
        "i_page",
        "i_backing",
        "i_dimensions",
    ],
    &[
        "c_id",
        "c_uname",
        "c_passwd",
        "c_fname",
        "c_lname",
        "c_addr_id",
        "c_phone",
        "c_email",
        "c_since",
        "c_last_visit",
        "c_login",
        "c_expiration",
        "c_discount",
        "c_balance",
        "c_ytd_pmt",
        "c_birthdate",
        "c_data",
    ],
    &[
        "addr_id",
        "addr_street1",
        "addr_street2",
        "addr_city",
        "addr_state",
        "addr_zip",
        "addr_co_id",
    ],
    &[
        "o_id",
        "o_c_id",
        "o_date",
        "o_sub_total",
        "o_tax",
        "o_total",
        "o_ship_type",
        "o_ship_date",
        "o_bill_addr_id",
        "o_ship_addr_id",
        "o_status",
    ],
    &[
        "ol_id",
        "ol_o_id",
        "ol_i_id",
        "ol_qty",
        "ol_discount",
        "ol_comments",
    ],
    &[
        "cx_o_id",
        "cx_type",
        "cx_num",
        "cx_name",
        "cx_expiry",
        "cx_auth_id",
        "cx_xact_amt",
        "cx_xact_date",
        "cx_co_id",
    ],
];

/// The scale and the rows it gives.
#[derive(Debug, Clone)]
pub struct Scale {
    pub items: u32,
    pub ebs: u32,
    pub customers: u32,
    pub orders: u32,
}

impl Scale {
    pub fn new(items: u32, ebs: u32) -> Scale {
        let customers = CUSTOMERS_PER_EB * ebs;
        Scale {
            items,
            ebs,
            customers,
            orders: (u64::from(customers) * 9 / 10) as u32,
        }
    }

    pub fn authors(&self) -> u32 {
        (self.items / 4).max(1)
    }

    pub fn addresses(&self) -> u32 {
        2 * self.customers
    }
}

/// The rows of every table for one seed and scale.
pub struct Data {
    pub scale: Scale,
    pub dialect: Dialect,
    pub(super) seed: u64,
    /// Order `o`'s first line is order line number `line_start[o - 1] + 1`;
    /// the last entry is the total.
    pub(super) line_start: Vec<u32>,
}

impl Data {
    pub fn order_lines_total(&self) -> u32 {
        *self.line_start.last().unwrap_or(&0)
    }

    /// Rows of each loaded table, in [`TABLES`] order.
    pub fn rows(&self) -> [u32; 8] {
        let s = &self.scale;
        [
            COUNTRIES.len() as u32,
            s.authors(),
            s.items,
            s.customers,
            s.addresses(),
            s.orders,
            self.order_lines_total(),
            s.orders,
        ]
    }

    /// How the loader builds each loaded table.
    pub fn plans(&self) -> Vec<TablePlan> {
        let rows = self.rows();
        (0..8)
            .map(|t| TablePlan {
                name: TABLES[t].to_string(),
                create: self.create(t),
                columns: COLUMNS[t].to_vec(),
                rows: rows[t],
                indexes: self.indexes(t),
                finish: self.finish(t),
            })
            .collect()
    }

    /// The CREATE TABLE of table `t` (any of the ten) with its primary key.
    pub fn create(&self, t: usize) -> String {
        let ts = if self.dialect == Dialect::Mysql {
            "DATETIME"
        } else {
            "TIMESTAMP"
        };
        let money = "DECIMAL(17,2)";
        let body = match t {
            0 => "co_id INTEGER NOT NULL, co_name VARCHAR(50), co_exchange DECIMAL(12,6), \
                  co_currency VARCHAR(18), PRIMARY KEY (co_id)"
                .to_string(),
            1 => "a_id INTEGER NOT NULL, a_fname VARCHAR(20), a_lname VARCHAR(20), \
                  a_mname VARCHAR(20), a_dob DATE, a_bio VARCHAR(500), PRIMARY KEY (a_id)"
                .to_string(),
            2 => format!(
                "i_id INTEGER NOT NULL, i_title VARCHAR(60), i_a_id INTEGER, i_pub_date DATE, \
                 i_publisher VARCHAR(60), i_subject VARCHAR(60), i_desc VARCHAR(500), \
                 i_related1 INTEGER, i_related2 INTEGER, i_related3 INTEGER, i_related4 INTEGER, \
                 i_related5 INTEGER, i_thumbnail INTEGER, i_image INTEGER, i_srp {money}, \
                 i_cost {money}, i_avail DATE, i_stock INTEGER, i_isbn CHAR(13), i_page INTEGER, \
                 i_backing VARCHAR(15), i_dimensions VARCHAR(25), PRIMARY KEY (i_id)"
            ),
            3 => format!(
                "c_id INTEGER NOT NULL, c_uname VARCHAR(20), c_passwd VARCHAR(20), \
                 c_fname VARCHAR(15), c_lname VARCHAR(15), c_addr_id INTEGER, c_phone VARCHAR(16), \
                 c_email VARCHAR(50), c_since DATE, c_last_visit DATE, c_login {ts}, \
                 c_expiration {ts}, c_discount DECIMAL(5,2), c_balance {money}, c_ytd_pmt {money}, \
                 c_birthdate DATE, c_data VARCHAR(500), PRIMARY KEY (c_id)"
            ),
            4 => "addr_id INTEGER NOT NULL, addr_street1 VARCHAR(40), addr_street2 VARCHAR(40), \
                  addr_city VARCHAR(30), addr_state VARCHAR(20), addr_zip VARCHAR(10), \
                  addr_co_id INTEGER, PRIMARY KEY (addr_id)"
                .to_string(),
            5 => format!(
                "o_id INTEGER NOT NULL, o_c_id INTEGER, o_date {ts}, o_sub_total {money}, \
                 o_tax {money}, o_total {money}, o_ship_type VARCHAR(10), o_ship_date {ts}, \
                 o_bill_addr_id INTEGER, o_ship_addr_id INTEGER, o_status VARCHAR(15), \
                 PRIMARY KEY (o_id)"
            ),
            6 => "ol_id INTEGER NOT NULL, ol_o_id INTEGER NOT NULL, ol_i_id INTEGER, \
                  ol_qty INTEGER, ol_discount DECIMAL(5,2), ol_comments VARCHAR(100), \
                  PRIMARY KEY (ol_o_id, ol_id)"
                .to_string(),
            7 => format!(
                "cx_o_id INTEGER NOT NULL, cx_type VARCHAR(10), cx_num VARCHAR(16), \
                 cx_name VARCHAR(31), cx_expiry DATE, cx_auth_id CHAR(15), cx_xact_amt {money}, \
                 cx_xact_date {ts}, cx_co_id INTEGER, PRIMARY KEY (cx_o_id)"
            ),
            8 => format!(
                "sc_id INTEGER NOT NULL, sc_c_id INTEGER, sc_date {ts}, sc_sub_total {money}, \
                 sc_tax {money}, sc_ship_cost {money}, sc_total {money}, sc_c_fname VARCHAR(15), \
                 sc_c_lname VARCHAR(15), sc_c_discount DECIMAL(5,2), PRIMARY KEY (sc_id)"
            ),
            _ => format!(
                "scl_sc_id INTEGER NOT NULL, scl_i_id INTEGER NOT NULL, scl_qty INTEGER, \
                 scl_cost {money}, scl_srp {money}, scl_title VARCHAR(60), \
                 scl_backing VARCHAR(15), PRIMARY KEY (scl_sc_id, scl_i_id)"
            ),
        };
        let engine = if self.dialect == Dialect::Mysql {
            " ENGINE=InnoDB"
        } else {
            ""
        };
        format!("CREATE TABLE {} ({body}){engine}", TABLES[t])
    }

    /// The secondary indexes the interactions need, built after the load.
    fn indexes(&self, t: usize) -> Vec<String> {
        let ix: &[&str] = match t {
            // New Products and the subject search: by subject, newest first.
            2 => &[
                "CREATE INDEX item_subject ON item (i_subject, i_pub_date)",
                "CREATE INDEX item_author ON item (i_a_id)",
            ],
            // Logins by user name.
            3 => &["CREATE UNIQUE INDEX customer_uname ON customer (c_uname)"],
            // A customer's latest order.
            5 => &["CREATE INDEX orders_customer ON orders (o_c_id, o_date)"],
            _ => &[],
        };
        ix.iter().map(|s| s.to_string()).collect()
    }

    fn finish(&self, t: usize) -> Vec<String> {
        match (self.dialect, t) {
            (Dialect::Postgres, _) => vec![format!("ANALYZE {}", TABLES[t])],
            (Dialect::Sqlite, 7) => vec!["ANALYZE".to_string()],
            _ => Vec::new(),
        }
    }
}
