//! PostgreSQL's own counters: `pg_stat_database` for the benchmark's
//! database, `pg_stat_bgwriter`, and the wait events of the active client
//! backends sampled from `pg_stat_activity`.

use super::Reading;
use crate::driver::Connection;

/// `pg_stat_database` columns kept (differences).
const DATABASE: &[&str] = &[
    "xact_commit",
    "xact_rollback",
    "blks_read",
    "blks_hit",
    "tup_returned",
    "tup_fetched",
    "tup_inserted",
    "tup_updated",
    "tup_deleted",
    "conflicts",
    "temp_files",
    "temp_bytes",
    "deadlocks",
    "blk_read_time",
    "blk_write_time",
];

/// `pg_stat_bgwriter` columns kept (differences); PostgreSQL 17 moved the
/// checkpoint counters to `pg_stat_checkpointer`, so each is asked for on
/// its own terms (see [`read`]).
const BGWRITER: &[&str] = &[
    "checkpoints_timed",
    "checkpoints_req",
    "buffers_checkpoint",
    "buffers_clean",
    "buffers_backend",
    "buffers_alloc",
];

/// Counters that count the monitor's own statements too (each of its
/// queries is a transaction of its own).
pub const COUNTS_STATEMENTS: &[&str] = &["pg_stat_database.xact_commit"];

/// The name a backend running without a wait event is counted under.
pub const RUNNING: &str = "running";

/// Reads the server's counters and samples its waits; what could not be
/// read is named in `reading.gaps`.
pub fn read(conn: &mut dyn Connection, r: &mut Reading) {
    let db_sql = format!(
        "SELECT {} FROM pg_stat_database WHERE datname = current_database()",
        DATABASE.join(", ")
    );
    match conn.query_text(&db_sql) {
        Ok(rows) => {
            r.statements += 1;
            if let Some(row) = rows.first() {
                for (name, v) in DATABASE.iter().zip(row) {
                    if let Some(v) = v.as_deref().and_then(|v| v.parse::<f64>().ok()) {
                        r.counters.push((format!("pg_stat_database.{name}"), v));
                    }
                }
            }
        }
        Err(e) => r.gap("server status", format!("pg_stat_database failed: {e}")),
    }
    // Every column that exists in this version's pg_stat_bgwriter.
    match conn.query_text("SELECT row_to_json(b)::text FROM pg_stat_bgwriter b") {
        Ok(rows) => {
            r.statements += 1;
            let json: serde_json::Value = rows
                .first()
                .and_then(|row| row.first().cloned().flatten())
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or_default();
            for name in BGWRITER {
                if let Some(v) = json.get(name).and_then(|v| v.as_f64()) {
                    r.counters.push((format!("pg_stat_bgwriter.{name}"), v));
                }
            }
        }
        Err(e) => r.gap("background writer", format!("pg_stat_bgwriter failed: {e}")),
    }
    read_waits(conn, r);
}

/// Samples the wait events of the active client backends into `r`.
///
/// `backend_type` came with PostgreSQL 10; before it (9.6, where
/// `wait_event` began) the view holds client backends and autovacuum
/// workers, told apart by the latter's `autovacuum:` query. The column is
/// read through the row's JSON so that one statement serves every version.
pub fn read_waits(conn: &mut dyn Connection, r: &mut Reading) {
    r.sample_waits(
        conn,
        "SELECT coalesce(a.wait_event_type || ':' || a.wait_event, 'running'), count(*) \
         FROM pg_stat_activity a \
         WHERE a.state = 'active' AND a.pid <> pg_backend_pid() \
         AND coalesce(to_jsonb(a) ->> 'backend_type', \
                      CASE WHEN a.query LIKE 'autovacuum:%' THEN 'autovacuum worker' ELSE 'client backend' END) \
             = 'client backend' \
         GROUP BY 1",
        "pg_stat_activity",
        str::to_string,
    );
}
