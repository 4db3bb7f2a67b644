//! TPC-H's answers at scale factor 0.01 (`tests/fixtures/tpch/sf0.01`),
//! computed once by PostgreSQL 15 from the same generator's data and
//! stored: the spec publishes answers for scale factor 1 only, and this
//! scale loads in seconds. Each engine's answers are compared with them
//! by the spec's precision rules (`workload::tpch::answers`).

use std::path::PathBuf;

use dbsweep::driver::{self, Dialect, Target};
use dbsweep::workload::tpch::answers;

/// The scale the stored answers are at.
pub const SCALE: &str = "0.01";

pub fn answers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tpch/sf0.01")
}

/// The queries whose answers on the database at `url` (TPC-H at SF 0.01,
/// as loaded) differ from the stored ones, each with what differs.
pub fn differences(url: &str, dialect: Dialect) -> Vec<String> {
    let mut conn = driver::connect(&Target::parse(url).unwrap()).unwrap();
    let mut out = Vec::new();
    for q in 1..=22u8 {
        let path = answers_dir().join(format!("q{q}.tbl"));
        let stored =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let sql = answers::sql(q, dialect, 0.01);
        let got = conn
            .query_text(&sql)
            .unwrap_or_else(|e| panic!("Q{q} failed: {e}\n{sql}"));
        if let Some((n, d)) = answers::compare(&answers::parse(&stored), &got, 3) {
            out.push(format!("Q{q}: {n} row(s) differ: {}", d.join("; ")));
        }
    }
    out
}

/// Writes the answers the database at `url` gives (the stored ones were
/// written so, from PostgreSQL): `|`-separated, a header line first.
pub fn write_answers(url: &str, dialect: Dialect) {
    let mut conn = driver::connect(&Target::parse(url).unwrap()).unwrap();
    std::fs::create_dir_all(answers_dir()).unwrap();
    for q in 1..=22u8 {
        let rows = conn.query_text(&answers::sql(q, dialect, 0.01)).unwrap();
        let mut text = format!("answer of Q{q} at scale factor 0.01\n");
        for r in rows {
            let cells: Vec<String> = r
                .into_iter()
                .map(|c| c.unwrap_or_else(|| "NULL".into()).trim_end().to_string())
                .collect();
            text.push_str(&cells.join("|"));
            text.push('\n');
        }
        std::fs::write(answers_dir().join(format!("q{q}.tbl")), text).unwrap();
    }
}
