//! TPC-C's load, resumable: the items and the warehouses in order through
//! the shared loader, one group of ranges each (its tables' rows in
//! parallel chunks), each marked loaded in a small table of its own,
//! `tpcc_load`, once all its rows are committed. The loaders go on with
//! the next warehouses' tables while one's last are loading, up to
//! [`AHEAD`] warehouses past the first one not marked. A load stopped
//! part-way (Ctrl-C, a lost server) leaves the marks behind: `prepare`
//! again clears the rows of the first `AHEAD + 1` warehouses not marked
//! (the only ones that can hold rows), loads the ones not marked, builds
//! the secondary indexes, checks every table's rows against the
//! generator's (the rows the server said each COPY or LOAD DATA stored; a
//! resumed load, whose earlier part no reply of this one covers, counts
//! them) and drops `tpcc_load`, which is what says the load is complete.
//!
//! The scale table (`tpcc_scale`) is written first, with the warehouse
//! count, the load's C for C_LAST, its time and its seed: a resumed load
//! makes its rows from the first one's seed and dates (whatever
//! `--rand-seed` says now, since by default the seed comes from the
//! clock), and a resumption at another warehouse count is refused with
//! the command that fits.

use anyhow::Context as _;

use super::rows::Data;
use super::schema::{self, ITEM, ITEMS, SCALE_TABLE, TABLES};
use super::Tpcc;
use crate::driver::{Connection, Dialect};
use crate::util::progress::Progress;
use crate::workload::loader::{self, ensure_absent, usage, Groups, Steps};
use crate::workload::Connector;

/// The table of warehouses loaded (0: the items) while a load is under
/// way; dropped when it is complete.
pub const LOAD_TABLE: &str = "tpcc_load";

/// How many warehouses past the first one not loaded may load at once:
/// enough for the loaders to go on with the next warehouse's tables while
/// one's largest are loading (one warehouse at a time took 17.5 s for 10
/// warehouses on MariaDB, 15.4 s overlapping, two cores); a stopped load
/// clears the first `AHEAD + 1` warehouses not marked.
const AHEAD: usize = 2;

/// Each table's warehouse column, for clearing a warehouse's rows (the
/// items have none).
const WAREHOUSE_COLUMN: [Option<&str>; 9] = [
    Some("w_id"),
    Some("d_w_id"),
    Some("c_w_id"),
    Some("h_w_id"),
    None,
    Some("s_w_id"),
    Some("o_w_id"),
    Some("no_w_id"),
    Some("ol_w_id"),
];

/// The row numbers of each table that hold warehouse `w` (0: the items):
/// a table's rows are numbered warehouse after warehouse.
pub fn warehouse_ranges(w: u32) -> Vec<Vec<(u32, u32)>> {
    let per = schema::row_numbers(1);
    (0..TABLES.len())
        .map(|t| match (t == ITEM, w) {
            (true, 0) => vec![(1, ITEMS)],
            (false, w) if w > 0 => vec![((w - 1) * per[t] + 1, w * per[t])],
            _ => Vec::new(),
        })
        .collect()
}

/// Row numbers to load for warehouse `w` (0: the items), for the bar.
fn numbers(w: u32) -> u64 {
    warehouse_ranges(w)
        .iter()
        .flatten()
        .map(|(a, b)| u64::from(b - a) + 1)
        .sum()
}

/// Where a load stands: what `tpcc_scale` says and the warehouses marked.
struct Resume {
    /// The load's time, which every date of its rows takes.
    loaded_at: i64,
    /// The load's seed, which its rows are made from.
    seed: u64,
    done: Vec<u32>,
}

/// Loads the scale of `t`, or finishes a load of it that was stopped.
pub(super) fn prepare(
    t: &Tpcc,
    connect: Connector<'_>,
    threads: usize,
    progress: &dyn Progress,
) -> anyhow::Result<()> {
    let mut first = connect().context("could not connect to prepare the tables")?;
    let conn = first.as_mut();
    let plans = schema::plans(t.dialect, t.warehouses);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let resume = if conn.table_exists(LOAD_TABLE)? {
        Some(resume_point(t, conn)?)
    } else {
        ensure_absent(
            conn,
            &Tpcc::names(),
            "tpcc",
            "with the same --db and --warehouses",
        )?;
        None
    };
    let (loaded_at, seed) = resume
        .as_ref()
        .map_or((now, t.seed), |r| (r.loaded_at, r.seed));
    let data = Data::new(t.warehouses, seed, loaded_at);
    if resume.is_none() {
        // The marks' table first: from here on a stopped load resumes.
        conn.execute_sql(&format!("CREATE TABLE {LOAD_TABLE} (warehouse INTEGER)"))?;
        conn.execute_sql(&format!(
            "CREATE TABLE {SCALE_TABLE} (warehouses INTEGER, c_last INTEGER, loaded_at BIGINT, seed VARCHAR(20))"
        ))?;
        conn.execute_sql(&format!(
            "INSERT INTO {SCALE_TABLE} VALUES ({}, {}, {loaded_at}, '{seed}')",
            t.warehouses, data.c.c_last
        ))?;
    }
    for p in &plans {
        if resume.is_none() || !conn.table_exists(&p.name)? {
            conn.execute_sql(&p.create)
                .with_context(|| format!("could not create table {}", p.name))?;
        }
    }
    let resuming = resume.is_some();
    let done = resume.map(|r| r.done).unwrap_or_default();
    let todo: Vec<u32> = (0..=t.warehouses).filter(|w| !done.contains(w)).collect();
    if resuming {
        // Only the first warehouses not marked can hold rows: loads go no
        // further than AHEAD warehouses past the first one not marked.
        clear(conn, &todo[..todo.len().min(AHEAD + 1)])?;
        // A load stopped while building the indexes may have built some.
        drop_indexes(conn, t.dialect);
    }
    let loaders = loader::loaders(t.dialect, threads);
    progress.start("tpcc", todo.iter().map(|&w| numbers(w)).sum());
    // Group g of the load is warehouse todo[g]: range g of every table.
    let per_warehouse: Vec<_> = todo.iter().map(|&w| warehouse_ranges(w)).collect();
    let ranges: Vec<Vec<(u32, u32)>> = (0..plans.len())
        .map(|table| {
            (per_warehouse.iter())
                .map(|r| r[table].first().copied().unwrap_or((1, 0)))
                .collect()
        })
        .collect();
    let mark = |c: &mut dyn Connection, g: usize| -> anyhow::Result<()> {
        c.execute_sql(&format!("INSERT INTO {LOAD_TABLE} VALUES ({})", todo[g]))?;
        Ok(())
    };
    // The secondary indexes and each table's finishing statements are
    // built as the shared loader does, once the table's every row is in.
    let steps = Steps {
        ranges: Some(&ranges),
        groups: Some(Groups {
            ahead: AHEAD,
            mark: &mark,
        }),
        create: false,
        indexes: true,
        drop_on_failure: false,
    };
    // The rows the server stored, table by table: the check of a load that
    // made every table from empty (a resumed one counts them).
    let stored = loader::load_with(conn, connect, &plans, loaders, &data, progress, "", &steps);
    progress.finish();
    let stored = stored.with_context(|| {
        format!(
            "the load stopped part-way: run `dbsweep prepare tpcc --warehouses {}` \
             again with the same --db to finish it",
            t.warehouses
        )
    })?;
    if let Err(e) = t.verify_counts(conn, &data, (!resuming).then_some(&stored[..])) {
        let _ = loader::drop_tables(conn, &Tpcc::names());
        let _ = conn.execute_sql(&format!("DROP TABLE IF EXISTS {LOAD_TABLE}"));
        return Err(e);
    }
    conn.execute_sql(&format!("DROP TABLE {LOAD_TABLE}"))?;
    Ok(())
}

/// Reads a stopped load's scale and marks; refuses to resume it at
/// another warehouse count.
fn resume_point(t: &Tpcc, conn: &mut dyn Connection) -> anyhow::Result<Resume> {
    let scale = conn
        .query_text(&format!(
            "SELECT warehouses, loaded_at, seed FROM {SCALE_TABLE}"
        ))
        .ok()
        .and_then(|rows| rows.into_iter().next());
    let text = |i: usize| cell(&scale, i);
    let w = text(0).and_then(|v| v.parse::<i64>().ok());
    let loaded_at = text(1).and_then(|v| v.parse::<i64>().ok());
    let seed = text(2).and_then(|v| v.parse::<u64>().ok());
    let (Some(w), Some(loaded_at), Some(seed)) = (w, loaded_at, seed) else {
        return Err(usage(format!(
            "a tpcc load was stopped before it recorded its scale: run `dbsweep cleanup tpcc` and prepare again (--warehouses {})",
            t.warehouses
        )));
    };
    if w != i64::from(t.warehouses) {
        return Err(usage(format!(
            "a tpcc load of --warehouses {w} was stopped part-way in this database: \
             run `dbsweep prepare tpcc --warehouses {w}` to finish it, or `dbsweep cleanup tpcc` \
             and prepare again with --warehouses {}",
            t.warehouses
        )));
    }
    let done = conn
        .query_text(&format!("SELECT warehouse FROM {LOAD_TABLE}"))?
        .into_iter()
        .filter_map(|r| r.first()?.as_deref()?.parse().ok())
        .collect();
    Ok(Resume {
        loaded_at,
        seed,
        done,
    })
}

/// The secondary indexes the load builds last: (index, table).
const INDEXES: [(&str, &str); 2] = [("customer_name", "customer"), ("orders_customer", "orders")];

/// Drops the indexes the load builds last, where they exist: the
/// secondary ones, and the primary keys where they are built after the
/// data (best effort: MySQL knows no `IF EXISTS` there, and an index that
/// is not there is what a resumed load expects).
fn drop_indexes(conn: &mut dyn Connection, dialect: Dialect) {
    for (index, table) in INDEXES {
        let sql = match dialect {
            Dialect::Mysql => format!("DROP INDEX {index} ON {table}"),
            _ => format!("DROP INDEX IF EXISTS {index}"),
        };
        let _ = conn.execute_sql(&sql);
    }
    if schema::keys_after_load(dialect) {
        for t in (0..schema::TABLES.len()).filter(|&t| schema::KEYS[t].is_some()) {
            let (table, key) = (schema::TABLES[t], schema::key_name(t));
            let _ = conn.execute_sql(&format!(
                "ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {key}"
            ));
            let _ = conn.execute_sql(&format!("DROP INDEX IF EXISTS {key}"));
        }
    }
}

/// Column `i` of a row read as text.
fn cell(row: &Option<Vec<Option<String>>>, i: usize) -> Option<&str> {
    row.as_ref()?.get(i)?.as_deref()
}

/// Deletes the rows of warehouses `ws` (0: the items) a stopped load left.
fn clear(conn: &mut dyn Connection, ws: &[u32]) -> anyhow::Result<()> {
    for sql in clear_sql(ws) {
        conn.execute_sql(&sql)
            .with_context(|| format!("could not clear a stopped load's rows: {sql}"))?;
    }
    Ok(())
}

/// [`clear`]'s statements: one a table (one scan of a table without an
/// index on its warehouse).
fn clear_sql(ws: &[u32]) -> Vec<String> {
    let list = ws
        .iter()
        .filter(|&&w| w > 0)
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    TABLES
        .iter()
        .zip(WAREHOUSE_COLUMN)
        .filter_map(|(t, col)| match col {
            None => ws.contains(&0).then(|| format!("DELETE FROM {t}")),
            Some(c) => (!list.is_empty()).then(|| format!("DELETE FROM {t} WHERE {c} IN ({list})")),
        })
        .collect()
}

/// How far a stopped load got: (warehouses marked loaded, of how many),
/// the items not counted; None when no load is under way.
pub fn stopped(conn: &mut dyn Connection) -> anyhow::Result<Option<(usize, u32)>> {
    if !conn.table_exists(LOAD_TABLE)? {
        return Ok(None);
    }
    let done = conn
        .query_text(&format!(
            "SELECT count(*) FROM {LOAD_TABLE} WHERE warehouse > 0"
        ))?
        .first()
        .and_then(|r| r.first()?.as_deref()?.parse().ok())
        .unwrap_or(0);
    let of = Tpcc::read_scale(conn)?.map_or(0, |(w, _)| w);
    Ok(Some((done, of)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warehouses_rows_are_one_range_of_each_table() {
        let all = schema::row_numbers(3);
        for t in 0..TABLES.len() {
            // The ranges of warehouses 0 to 3 tile each table exactly.
            let mut next = 1;
            for w in 0..=3 {
                for &(a, b) in &warehouse_ranges(w)[t] {
                    assert_eq!(a, next, "{} warehouse {w}", TABLES[t]);
                    next = b + 1;
                }
            }
            assert_eq!(next - 1, all[t], "{}", TABLES[t]);
        }
        assert_eq!(numbers(0), u64::from(ITEMS));
        assert_eq!(
            numbers(2),
            schema::row_numbers(1)
                .iter()
                .map(|&n| u64::from(n))
                .sum::<u64>()
                - u64::from(ITEMS)
        );
    }

    #[test]
    fn the_rows_the_server_stored_are_checked_table_by_table() {
        let t = Tpcc::spec(2, Dialect::Postgres, 7);
        let data = Data::new(2, 7, 0);
        let mut conn = crate::driver::fake::FakeConnection::new(Default::default());
        let mut stored = super::super::expected_rows(2, &data).to_vec();
        t.verify_counts(&mut conn, &data, Some(&stored)).unwrap();
        stored[schema::ORDER_LINE] -= 1;
        let e = t
            .verify_counts(&mut conn, &data, Some(&stored))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("table order_line holds "), "{e}");
        assert!(e.contains("dbsweep cleanup tpcc"), "{e}");
        // No replies (a resumed load): the tables are counted, and the fake
        // driver's are not what a load makes.
        assert!(t.verify_counts(&mut conn, &data, None).is_err());
    }

    #[test]
    fn a_stopped_load_clears_its_first_unmarked_warehouses_in_one_statement_a_table() {
        let sql = clear_sql(&[0, 3, 5]);
        assert_eq!(sql.len(), TABLES.len());
        assert!(sql.contains(&"DELETE FROM item".to_string()), "{sql:?}");
        assert!(sql.contains(&"DELETE FROM stock WHERE s_w_id IN (3, 5)".to_string()));
        assert!(sql.contains(&"DELETE FROM history WHERE h_w_id IN (3, 5)".to_string()));
        // The items kept when marked; nothing to clear, nothing sent.
        let sql = clear_sql(&[4]);
        assert_eq!(sql.len(), TABLES.len() - 1);
        assert!(sql.iter().all(|s| s.ends_with("IN (4)")), "{sql:?}");
        assert_eq!(clear_sql(&[0]), ["DELETE FROM item"]);
        assert!(clear_sql(&[]).is_empty());
    }
}
