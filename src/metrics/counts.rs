//! Counts a workload reads from the database itself at the two moments
//! that bound the measured window (TPC-C: `sum(d_next_o_id)`, which grows
//! by one for every New-Order the database committed), on a connection of
//! their own — on SQLite too, where there is no monitoring connection for
//! the server's counters. Their differences are the database's own
//! account of the work done in the window, beside the client's.
//!
//! Read only at the window's start and end, never per interval: a count
//! may scan a table, and the workload's connections must not wait for it.

use crate::driver::{self, Connection, Target};
use crate::record::metrics::WindowCount;

/// What to count: (name, SQL returning one number).
pub type Queries = Vec<(String, String)>;

/// The counting connection and its queries.
pub struct Counter {
    conn: Option<Box<dyn Connection>>,
    queries: Queries,
    /// Why there is no connection, or why a count failed: the first reason.
    pub why_not: Option<String>,
}

impl Counter {
    /// Connects to `target` for `queries`; none to read: no connection.
    pub fn connect(target: &Target, queries: Queries) -> Counter {
        if queries.is_empty() {
            return Counter {
                conn: None,
                queries,
                why_not: None,
            };
        }
        let (conn, why_not) = match driver::connect(target) {
            Ok(c) => (Some(c), None),
            Err(e) => (
                None,
                Some(format!("the counting connection failed: {}", e.message)),
            ),
        };
        Counter {
            conn,
            queries,
            why_not,
        }
    }

    /// Is there anything to count?
    pub fn is_empty(&self) -> bool {
        self.queries.is_empty()
    }

    /// Each query's number now (None where it could not be read).
    pub fn read(&mut self) -> Vec<Option<f64>> {
        let Some(conn) = self.conn.as_mut() else {
            return vec![None; self.queries.len()];
        };
        let mut out = Vec::with_capacity(self.queries.len());
        for (name, sql) in &self.queries {
            let v = match conn.query_text(sql) {
                Ok(rows) => rows
                    .first()
                    .and_then(|r| r.first())
                    .and_then(|v| v.as_deref())
                    .and_then(|v| v.trim().parse::<f64>().ok()),
                Err(e) => {
                    self.why_not
                        .get_or_insert_with(|| format!("{name}: {}", e.message));
                    None
                }
            };
            if v.is_none() {
                self.why_not
                    .get_or_insert_with(|| format!("{name}: the query returned no number"));
            }
            out.push(v);
        }
        out
    }

    /// The counts at the window's start and end, where both were read.
    pub fn window(&self, start: &[Option<f64>], end: &[Option<f64>]) -> Vec<WindowCount> {
        window(&self.queries, start, end)
    }
}

/// The counts of `queries` read at the window's `start` and `end`, where
/// both were read.
pub fn window(queries: &Queries, start: &[Option<f64>], end: &[Option<f64>]) -> Vec<WindowCount> {
    queries
        .iter()
        .zip(start.iter().zip(end))
        .filter_map(|((name, sql), (s, e))| {
            Some(WindowCount {
                name: name.clone(),
                sql: sql.clone(),
                start: (*s)?,
                end: (*e)?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_kept_where_both_ends_were_read() {
        let q: Queries = vec![
            ("a".into(), "SELECT 1".into()),
            ("b".into(), "SELECT 2".into()),
        ];
        let w = window(&q, &[Some(10.0), None], &[Some(25.0), Some(3.0)]);
        assert_eq!(w.len(), 1);
        assert_eq!(
            (w[0].name.as_str(), w[0].start, w[0].end),
            ("a", 10.0, 25.0)
        );
        assert_eq!(w[0].delta(), 15.0);
    }

    #[test]
    fn a_count_reads_the_database() {
        let dir = std::env::temp_dir().join(format!("dbsweep-counts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = Target::sqlite(dir.join("c.db"));
        let mut c = driver::connect(&target).unwrap();
        c.execute_sql("CREATE TABLE IF NOT EXISTS t (x INTEGER)")
            .unwrap();
        c.execute_sql("DELETE FROM t").unwrap();
        c.execute_sql("INSERT INTO t VALUES (3), (4)").unwrap();
        let mut counter = Counter::connect(
            &target,
            vec![
                ("sum(x)".into(), "SELECT sum(x) FROM t".into()),
                ("missing".into(), "SELECT sum(y) FROM nowhere".into()),
            ],
        );
        let start = counter.read();
        c.execute_sql("INSERT INTO t VALUES (5)").unwrap();
        let end = counter.read();
        assert_eq!(start[0], Some(7.0));
        assert_eq!(end[0], Some(12.0));
        assert_eq!(end[1], None);
        assert!(counter.why_not.as_deref().unwrap().starts_with("missing"));
        assert_eq!(counter.window(&start, &end)[0].delta(), 5.0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
