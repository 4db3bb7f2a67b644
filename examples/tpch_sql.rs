//! Prints TPC-H's 22 queries with their validation parameters written in,
//! as dbsweep sends them to `DIALECT` (sqlite, mysql or postgres) at scale
//! factor `SF`, one per line group ending in `;`: the same SQL for the
//! server's own client, so bench/tpch_queries.py times both on one text.
//!
//!     cargo run --release --example tpch_sql -- postgres 1

use dbsweep::driver::Dialect;
use dbsweep::workload::tpch::answers::sql;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dialect = match args.first().map(String::as_str) {
        Some("sqlite") => Dialect::Sqlite,
        Some("mysql") | Some("mariadb") => Dialect::Mysql,
        Some("postgres") => Dialect::Postgres,
        _ => {
            eprintln!("usage: tpch_sql sqlite|mysql|postgres [SF]");
            std::process::exit(2);
        }
    };
    let sf: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    for q in 1..=22 {
        println!("-- Q{q}\n{};", sql(q, dialect, sf));
    }
}
