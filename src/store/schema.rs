//! The database schema, its version and the migrations between versions.
//!
//! The version lives in the file's header (`PRAGMA user_version`), next to
//! an application id (`PRAGMA application_id`) that marks the file as
//! dbsweep's. [`MIGRATIONS`]`[i]` takes a file from version `i` to `i + 1`;
//! a new file runs them all. Opening a file whose version is newer than
//! [`SCHEMA_VERSION`] fails without touching it, since this program cannot
//! know what the newer columns mean.
//!
//! Policy (also in `docs/results-db.md`): a released migration is never
//! edited, only appended to; a new version only adds (tables, columns,
//! views), so queries written against an older version keep working.

use std::path::Path;

use anyhow::Context;
use rusqlite::{Connection, TransactionBehavior};

use crate::UsageError;

/// `PRAGMA application_id` of a dbsweep results file: "dbsw" in ASCII, so
/// `file results.db` and other tools can tell it from any SQLite file.
pub const APPLICATION_ID: i32 = 0x6462_7377;

/// Version 1: studies, sessions, targets, variants, points and their
/// errors, intervals, histograms and settings; the `point_summary` view.
///
/// Plain (non-STRICT) tables and no newer syntax than window functions, so
/// any `sqlite3` from 3.25 (2018) on can query the file.
const V1: &str = r#"
CREATE TABLE study (
    id              INTEGER PRIMARY KEY,
    name            TEXT NOT NULL UNIQUE,
    description     TEXT NOT NULL,
    file_text       TEXT NOT NULL,
    started_unix_s  INTEGER NOT NULL,
    tool_version    TEXT NOT NULL,
    machine_json    TEXT NOT NULL
);

CREATE TABLE session (
    id              INTEGER PRIMARY KEY,
    study_id        INTEGER NOT NULL REFERENCES study(id) ON DELETE CASCADE,
    started_unix_s  INTEGER NOT NULL,
    tool_version    TEXT NOT NULL,
    machine_json    TEXT NOT NULL,
    file_text       TEXT NOT NULL
);

CREATE TABLE target (
    id              INTEGER PRIMARY KEY,
    study_id        INTEGER NOT NULL REFERENCES study(id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    kind            TEXT NOT NULL,
    url_redacted    TEXT NOT NULL,
    UNIQUE (study_id, name)
);

CREATE TABLE variant (
    id              INTEGER PRIMARY KEY,
    study_id        INTEGER NOT NULL,
    target          TEXT NOT NULL,
    name            TEXT NOT NULL,
    settings_json   TEXT NOT NULL,
    UNIQUE (study_id, target, name),
    FOREIGN KEY (study_id, target) REFERENCES target(study_id, name) ON DELETE CASCADE
);

CREATE TABLE point (
    id                    INTEGER PRIMARY KEY,
    study_id              INTEGER NOT NULL,
    session_id            INTEGER NOT NULL REFERENCES session(id),
    key                   TEXT NOT NULL,
    target                TEXT NOT NULL,
    variant               TEXT NOT NULL,
    cpus                  TEXT,
    workload              TEXT NOT NULL,
    workload_label        TEXT NOT NULL,
    workload_options_json TEXT NOT NULL,
    clients               INTEGER NOT NULL CHECK (clients >= 1),
    instances             INTEGER NOT NULL CHECK (instances >= 1),
    repeat                INTEGER NOT NULL,
    status                TEXT NOT NULL CHECK (status IN ('finished', 'skipped', 'failed')),
    reason                TEXT,
    committed_unix_s      INTEGER NOT NULL,
    started_unix_s        INTEGER,
    seed                  TEXT,
    stop_reason           TEXT,
    measured_s            REAL,
    transactions          INTEGER,
    tps                   REAL,
    qps                   REAL,
    reads                 INTEGER,
    writes                INTEGER,
    others                INTEGER,
    failed_transactions   INTEGER,
    retries               INTEGER,
    ignored_errors        INTEGER,
    errors                INTEGER,
    reconnects            INTEGER,
    abandoned             INTEGER,
    lat_min_us            REAL,
    lat_avg_us            REAL,
    lat_p50_us            REAL,
    lat_p95_us            REAL,
    lat_p99_us            REAL,
    lat_max_us            REAL,
    client_cpu_s          REAL,
    server_version        TEXT,
    result_json           TEXT,
    FOREIGN KEY (study_id, target, variant) REFERENCES variant(study_id, target, name) ON DELETE CASCADE,
    -- A reason says why a point did not finish; a finished one has none.
    CHECK ((status = 'finished') = (reason IS NULL)),
    -- Only a run produces a document; a finished point always has one.
    CHECK (status <> 'finished' OR result_json IS NOT NULL),
    CHECK (status <> 'skipped' OR result_json IS NULL)
);

-- A point is finished or skipped at most once; failed attempts stay as
-- history and may be followed by another attempt.
CREATE UNIQUE INDEX point_done ON point(study_id, key) WHERE status <> 'failed';
CREATE INDEX point_study ON point(study_id, key);

CREATE TABLE point_error (
    point_id  INTEGER NOT NULL REFERENCES point(id) ON DELETE CASCADE,
    kind      TEXT NOT NULL,
    count     INTEGER NOT NULL,
    PRIMARY KEY (point_id, kind)
);

CREATE TABLE point_interval (
    point_id      INTEGER NOT NULL REFERENCES point(id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,
    t_s           REAL NOT NULL,
    duration_s    REAL NOT NULL,
    warmup        INTEGER NOT NULL CHECK (warmup IN (0, 1)),
    threads       INTEGER NOT NULL,
    transactions  INTEGER NOT NULL,
    failed        INTEGER NOT NULL,
    reads         INTEGER NOT NULL,
    writes        INTEGER NOT NULL,
    others        INTEGER NOT NULL,
    errors        INTEGER NOT NULL,
    reconnects    INTEGER NOT NULL,
    p50_us        REAL,
    p95_us        REAL,
    p99_us        REAL,
    max_us        REAL,
    PRIMARY KEY (point_id, seq)
);

CREATE TABLE point_histogram (
    id              INTEGER PRIMARY KEY,
    point_id        INTEGER NOT NULL REFERENCES point(id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    histogram_json  TEXT NOT NULL,
    UNIQUE (point_id, name)
);

CREATE TABLE point_setting (
    id        INTEGER PRIMARY KEY,
    point_id  INTEGER NOT NULL REFERENCES point(id) ON DELETE CASCADE,
    name      TEXT NOT NULL,
    value     TEXT NOT NULL,
    UNIQUE (point_id, name)
);

-- Repeats of one point grouped: counts by status, and over the finished
-- repeats avg/min/max and the sample variance (divisor n - 1, NULL below
-- two repeats) of tps, qps and p95 latency. SQLite has no sqrt without its
-- math functions, so the standard deviation is sqrt(*_variance) where they
-- exist; Store::summaries computes it and the 95 % interval in Rust.
-- The variance is two-pass (deviations from the group mean, from a window),
-- which stays exact where sum(x*x) - sum(x)^2/n would cancel.
CREATE VIEW point_summary AS
SELECT study_id, target, variant, cpus, workload, workload_label, workload_options_json, clients, instances,
       sum(status = 'finished') AS n,
       sum(status = 'skipped') AS skipped,
       sum(status = 'failed') AS failed,
       avg(f_tps) AS tps_avg,
       min(f_tps) AS tps_min,
       max(f_tps) AS tps_max,
       sum((f_tps - m_tps) * (f_tps - m_tps)) / (count(f_tps) - 1) AS tps_variance,
       avg(f_qps) AS qps_avg,
       min(f_qps) AS qps_min,
       max(f_qps) AS qps_max,
       sum((f_qps - m_qps) * (f_qps - m_qps)) / (count(f_qps) - 1) AS qps_variance,
       avg(f_p95) AS lat_p95_us_avg,
       min(f_p95) AS lat_p95_us_min,
       max(f_p95) AS lat_p95_us_max,
       sum((f_p95 - m_p95) * (f_p95 - m_p95)) / (count(f_p95) - 1) AS lat_p95_us_variance
FROM (
    SELECT *,
           avg(f_tps) OVER g AS m_tps,
           avg(f_qps) OVER g AS m_qps,
           avg(f_p95) OVER g AS m_p95
    FROM (
        SELECT id, study_id, target, variant, cpus, workload, workload_label, workload_options_json,
               clients, instances, status,
               CASE WHEN status = 'finished' THEN tps END AS f_tps,
               CASE WHEN status = 'finished' THEN qps END AS f_qps,
               CASE WHEN status = 'finished' THEN lat_p95_us END AS f_p95
        FROM point
    )
    WINDOW g AS (PARTITION BY study_id, target, variant, cpus, workload, workload_label,
                              workload_options_json, clients, instances)
)
GROUP BY study_id, target, variant, cpus, workload, workload_label, workload_options_json, clients, instances
ORDER BY min(id);
"#;

/// Version 2: the machine's and the server's figures of each point
/// (`result.metrics.figures` of its run document), NULL where not measured.
/// Points committed before are filled from their stored document, so a
/// file written with metrics before this version has them too.
const V2: &str = r#"
ALTER TABLE point ADD COLUMN cpu_busy_pct REAL;
ALTER TABLE point ADD COLUMN cpu_user_pct REAL;
ALTER TABLE point ADD COLUMN cpu_system_pct REAL;
ALTER TABLE point ADD COLUMN iowait_pct REAL;
ALTER TABLE point ADD COLUMN server_cpu_pct REAL;
ALTER TABLE point ADD COLUMN client_cpu_pct REAL;
ALTER TABLE point ADD COLUMN server_cpu_us_per_txn REAL;
ALTER TABLE point ADD COLUMN disk_mb_per_txn REAL;
ALTER TABLE point ADD COLUMN buffer_pool_hit_pct REAL;
ALTER TABLE point ADD COLUMN row_lock_waits_per_s REAL;
ALTER TABLE point ADD COLUMN deadlocks_per_s REAL;
ALTER TABLE point ADD COLUMN semaphore_os_waits_per_txn REAL;
UPDATE point SET
    cpu_busy_pct = json_extract(result_json, '$.result.metrics.figures.cpu_busy_pct.value'),
    cpu_user_pct = json_extract(result_json, '$.result.metrics.figures.cpu_user_pct.value'),
    cpu_system_pct = json_extract(result_json, '$.result.metrics.figures.cpu_system_pct.value'),
    iowait_pct = json_extract(result_json, '$.result.metrics.figures.iowait_pct.value'),
    server_cpu_pct = json_extract(result_json, '$.result.metrics.figures.server_cpu_pct.value'),
    client_cpu_pct = json_extract(result_json, '$.result.metrics.figures.client_cpu_pct.value'),
    server_cpu_us_per_txn = json_extract(result_json, '$.result.metrics.figures.server_cpu_us_per_transaction.value'),
    disk_mb_per_txn = json_extract(result_json, '$.result.metrics.figures.disk_mb_per_transaction.value'),
    buffer_pool_hit_pct = json_extract(result_json, '$.result.metrics.figures.buffer_pool_hit_pct.value'),
    row_lock_waits_per_s = json_extract(result_json, '$.result.metrics.figures.row_lock_waits_per_s.value'),
    deadlocks_per_s = json_extract(result_json, '$.result.metrics.figures.deadlocks_per_s.value'),
    semaphore_os_waits_per_txn = json_extract(result_json, '$.result.metrics.figures.semaphore_os_waits_per_transaction.value')
WHERE result_json IS NOT NULL AND json_extract(result_json, '$.result.metrics') IS NOT NULL;
"#;

/// Version 3: paced points. `load_level` is a point's offered load on its
/// clients' connections as the plan writes it (`rate=5000`, `rate=50%` of
/// the closed-loop peak, `users=1000`; NULL for the closed loop) and is part
/// of what groups repeats, so the summary view groups by it too. The pacing
/// figures come from `result.pacing` of the run document (filled for
/// points committed before, from their stored document).
const V3: &str = r#"
ALTER TABLE point ADD COLUMN load_level TEXT;
ALTER TABLE point ADD COLUMN offered_per_s REAL;
ALTER TABLE point ADD COLUMN achieved_per_s REAL;
ALTER TABLE point ADD COLUMN late INTEGER;
ALTER TABLE point ADD COLUMN skipped INTEGER;
ALTER TABLE point ADD COLUMN unstarted INTEGER;
ALTER TABLE point ADD COLUMN lag_p99_us REAL;
UPDATE point SET
    offered_per_s = json_extract(result_json, '$.result.pacing.offered_per_s'),
    achieved_per_s = json_extract(result_json, '$.result.pacing.achieved_per_s'),
    late = json_extract(result_json, '$.result.pacing.late'),
    skipped = json_extract(result_json, '$.result.pacing.skipped'),
    unstarted = json_extract(result_json, '$.result.pacing.unstarted'),
    lag_p99_us = (SELECT json_extract(e.value, '$.us')
                  FROM json_each(result_json, '$.result.pacing.lag.percentiles') AS e
                  WHERE json_extract(e.value, '$.p') = 99.0)
WHERE result_json IS NOT NULL AND json_extract(result_json, '$.result.pacing') IS NOT NULL;
DROP VIEW point_summary;
CREATE VIEW point_summary AS
SELECT study_id, target, variant, cpus, workload, workload_label, workload_options_json, clients, instances, load_level,
       sum(status = 'finished') AS n,
       sum(status = 'skipped') AS skipped,
       sum(status = 'failed') AS failed,
       avg(f_tps) AS tps_avg,
       min(f_tps) AS tps_min,
       max(f_tps) AS tps_max,
       sum((f_tps - m_tps) * (f_tps - m_tps)) / (count(f_tps) - 1) AS tps_variance,
       avg(f_qps) AS qps_avg,
       min(f_qps) AS qps_min,
       max(f_qps) AS qps_max,
       sum((f_qps - m_qps) * (f_qps - m_qps)) / (count(f_qps) - 1) AS qps_variance,
       avg(f_p95) AS lat_p95_us_avg,
       min(f_p95) AS lat_p95_us_min,
       max(f_p95) AS lat_p95_us_max,
       sum((f_p95 - m_p95) * (f_p95 - m_p95)) / (count(f_p95) - 1) AS lat_p95_us_variance
FROM (
    SELECT *,
           avg(f_tps) OVER g AS m_tps,
           avg(f_qps) OVER g AS m_qps,
           avg(f_p95) OVER g AS m_p95
    FROM (
        SELECT id, study_id, target, variant, cpus, workload, workload_label, workload_options_json,
               clients, instances, load_level, status,
               CASE WHEN status = 'finished' THEN tps END AS f_tps,
               CASE WHEN status = 'finished' THEN qps END AS f_qps,
               CASE WHEN status = 'finished' THEN lat_p95_us END AS f_p95
        FROM point
    )
    WINDOW g AS (PARTITION BY study_id, target, variant, cpus, workload, workload_label,
                              workload_options_json, clients, instances, load_level)
)
GROUP BY study_id, target, variant, cpus, workload, workload_label, workload_options_json, clients, instances, load_level
ORDER BY min(id);
"#;

/// Version 4: the published figures a study compares itself with (its
/// `[[reference]]` CSV files, as read when it ran), so a report renders
/// them wherever the results database goes.
const V4: &str = r#"
CREATE TABLE reference (
    study_id  INTEGER NOT NULL REFERENCES study(id) ON DELETE CASCADE,
    file      TEXT NOT NULL,
    text      TEXT NOT NULL,
    PRIMARY KEY (study_id, file)
);
"#;

/// Version 5: a study's reproduction as validated when it ran (its
/// references parsed, conclusions with the publication's words,
/// deviations), as JSON, so a report reads it back instead of the file.
const V5: &str = r#"
CREATE TABLE reproduction (
    study_id  INTEGER PRIMARY KEY REFERENCES study(id) ON DELETE CASCADE,
    spec_json TEXT NOT NULL
);
"#;

/// Version 6: the program that served each managed target, as its
/// `--version` line (`mysqld Ver 10.2.11-MariaDB for Linux on x86_64`),
/// recorded when the study starts it. A line per build a target ran on: a
/// study resumed after a build changed has both. No row for a target
/// dbsweep did not start (a URL, SQLite): it has no program to ask.
const V6: &str = r#"
CREATE TABLE server_build (
    study_id        INTEGER NOT NULL REFERENCES study(id) ON DELETE CASCADE,
    target          TEXT NOT NULL,
    version_line    TEXT NOT NULL,
    first_unix_s    INTEGER NOT NULL,
    PRIMARY KEY (study_id, target, version_line)
);
"#;

/// Version 7: a point's time series in rows of their own — each interval
/// whole (its histograms included, their buckets as compact text:
/// `record::compact`) beside its columns, each metrics sample
/// in `point_sample` — so a long point's record is stored, and read back,
/// without its hours of intervals in one document (`result_json` then has
/// them empty; files of version 6 and before keep them there).
const V7: &str = r#"
ALTER TABLE point_interval ADD COLUMN interval_json TEXT;
CREATE TABLE point_sample (
    point_id     INTEGER NOT NULL REFERENCES point(id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    sample_json  TEXT NOT NULL,
    PRIMARY KEY (point_id, seq)
);
"#;

/// When each point ran and where: its clients' release and its measured
/// window's end (µs since 1970), the machine (CPU model, CPUs, memory,
/// kernel), and how long a server (re)start before it took. Points stored
/// before have them from their run documents where those hold them. And
/// how the study compares its series (order, baseline, control, margin).
const V8: &str = r#"
CREATE TABLE design (
    study_id    INTEGER PRIMARY KEY REFERENCES study(id) ON DELETE CASCADE,
    design_json TEXT NOT NULL
);
ALTER TABLE point ADD COLUMN started_unix_us INTEGER;
ALTER TABLE point ADD COLUMN ended_unix_us INTEGER;
ALTER TABLE point ADD COLUMN machine TEXT;
ALTER TABLE point ADD COLUMN restart_s REAL;
UPDATE point SET
    started_unix_us = json_extract(result_json, '$.released_unix_us'),
    ended_unix_us = CAST(json_extract(result_json, '$.released_unix_us')
        + 1e6 * (json_extract(result_json, '$.run.warmup_s') + json_extract(result_json, '$.result.measured_s')) AS INTEGER),
    machine = json_extract(result_json, '$.machine.cpu_model') || '; '
        || json_extract(result_json, '$.machine.cpus_online') || ' CPUs; '
        || printf('%.1f', json_extract(result_json, '$.machine.memory_bytes') / 1073741824.0) || ' GiB; '
        || json_extract(result_json, '$.machine.kernel')
WHERE result_json IS NOT NULL;
"#;

/// Version 9: a point's on-CPU profiles (`profile = true`): per process
/// tree (`server`, `client`) its folded stacks, gzipped; the figures read
/// from them stay in the run document.
const V9: &str = r#"
CREATE TABLE point_profile (
    point_id   INTEGER NOT NULL REFERENCES point(id) ON DELETE CASCADE,
    role       TEXT NOT NULL,
    folded_gz  BLOB NOT NULL,
    PRIMARY KEY (point_id, role)
);
"#;

/// `MIGRATIONS[i]` upgrades a file from version `i` to `i + 1`. Append only.
const MIGRATIONS: &[&str] = &[V1, V2, V3, V4, V5, V6, V7, V8, V9];

/// The schema version this build writes and reads (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Refuses files that are not dbsweep's or are newer than this build, before
/// anything is written to them. Returns the file's version.
pub fn check(conn: &Connection, path: &Path) -> anyhow::Result<i64> {
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(|e| not_sqlite(path, e))?;
    let app_id: i32 = conn.pragma_query_value(None, "application_id", |r| r.get(0))?;
    if version > SCHEMA_VERSION {
        return Err(UsageError(format!(
            "'{}' is a results database of version {version}, newer than this dbsweep {} \
             understands (up to version {SCHEMA_VERSION}); read it with a newer dbsweep",
            path.display(),
            env!("CARGO_PKG_VERSION"),
        ))
        .into());
    }
    let objects: i64 = conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
    let ours = if version == 0 {
        objects == 0 // a new, empty file
    } else {
        app_id == APPLICATION_ID
    };
    if !ours {
        return Err(UsageError(format!(
            "'{}' is an SQLite database but not a dbsweep results database; \
             give the study's output directory or its results.db",
            path.display()
        ))
        .into());
    }
    Ok(version)
}

/// Brings the file up to [`SCHEMA_VERSION`], one transaction per step so a
/// crash leaves it at a whole version. The version is read again inside the
/// write lock, so two processes opening a new file do not both migrate it.
pub fn migrate(conn: &mut Connection, path: &Path) -> anyhow::Result<()> {
    // Up to date: no write lock, so reading a file others are writing (or a
    // read-only copy) never waits or fails here.
    if check(conn, path)? == SCHEMA_VERSION {
        return Ok(());
    }
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version = check(&tx, path)?;
        if version == SCHEMA_VERSION {
            return Ok(());
        }
        tx.execute_batch(MIGRATIONS[version as usize])
            .with_context(|| {
                format!(
                    "Could not upgrade '{}' to version {}",
                    path.display(),
                    version + 1
                )
            })?;
        tx.pragma_update(None, "user_version", version + 1)?;
        tx.pragma_update(None, "application_id", APPLICATION_ID)?;
        tx.commit()?;
    }
}

/// "file is not a database" and friends, said in the user's terms.
fn not_sqlite(path: &Path, e: rusqlite::Error) -> anyhow::Error {
    UsageError(format!(
        "'{}' is not a dbsweep results database ({e}); give the study's output directory or its results.db",
        path.display()
    ))
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_build_the_latest_schema_in_memory() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn, Path::new(":memory:")).unwrap();
        let v: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(v, SCHEMA_VERSION);
        // Idempotent: a second open finds nothing to do.
        migrate(&mut conn, Path::new(":memory:")).unwrap();
        let tables: Vec<String> = conn
            .prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            tables,
            [
                "design",
                "point",
                "point_error",
                "point_histogram",
                "point_interval",
                "point_profile",
                "point_sample",
                "point_setting",
                "point_summary",
                "reference",
                "reproduction",
                "server_build",
                "session",
                "study",
                "target",
                "variant"
            ]
        );
    }

    #[test]
    fn a_foreign_database_is_refused_untouched() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t(x)").unwrap();
        let e = check(&conn, Path::new("other.db")).unwrap_err();
        assert!(
            e.to_string().contains("not a dbsweep results database"),
            "{e}"
        );
        let v: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(v, 0);
    }
}
