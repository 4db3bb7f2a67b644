//! The results database: one SQLite file (`results.db` in a study's output
//! directory) holding every point of every study run into it, documented in
//! `docs/results-db.md` as a public interface users query with `sqlite3`.
//!
//! # Guarantees
//!
//! - Each finished point is committed in one transaction
//!   ([`Store::commit_point`]): the point with its errors, intervals,
//!   histograms and settings, or nothing. The file runs in WAL mode with
//!   `synchronous=FULL`, so a committed point survives a crash, Ctrl-C or
//!   a power cut.
//! - A point is finished or skipped at most once per study (a unique index):
//!   resume asks [`Store::finished_keys`] and runs only the rest. A failed
//!   attempt is kept as history and the point may be attempted again.
//! - Skipped and failed points are stored as such, with their reason; their
//!   metric columns are NULL, never zero.
//! - The run record ([`crate::record::Run`]) is the one source of truth:
//!   the metric columns are copied out of it ([`extract()`]).
//!
//! # Studies and resume
//!
//! A study is identified by its name. [`Store::begin_study`] with a new name
//! creates it; with a known name it resumes it: the points go on appending
//! to the same study, and a `session` row records each start (when, tool
//! version, machine and study file text), so a resumed study says what each
//! of its points was measured with. The `study` row keeps what its first
//! session said.
//!
//! # Layout
//!
//! - `schema.rs`: the schema, its version and the migrations.
//! - `write.rs`: [`Store::commit_point`]: validation, then one transaction.
//! - `read.rs`: [`Store::points`] and [`Store::point_figures`].
//! - `extract.rs`: the metric columns, copied from a run record (pure).
//! - `summary.rs`: summaries over repeats (pure).

mod extract;
mod read;
mod schema;
mod summary;
mod write;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, TransactionBehavior};
use serde_json::Value;

use crate::record::{Machine, Run};
use crate::stats::histogram::Histogram;
use crate::UsageError;

pub use self::extract::{extract, machine_fingerprint, Extracted, Interval, Metrics};
pub use self::schema::{APPLICATION_ID, SCHEMA_VERSION};
pub use self::summary::{summarize, GroupKey, Repeats, Summary};

/// The file name of the results database in a study's output directory.
pub const FILE_NAME: &str = "results.db";

/// How long a writer or reader waits for another process's lock (e.g.
/// `dbsweep results` reading while a study commits) before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The results database; see the [module docs](self).
pub struct Store {
    conn: Connection,
    /// For messages.
    path: PathBuf,
    /// The session [`Store::begin_study`] opened for each study in this
    /// process: commits record which session measured them.
    sessions: HashMap<StudyId, i64>,
}

/// A study in the store (its `study.id`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StudyId(pub i64);

/// A study as stored, for listing and reports.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyInfo {
    pub id: StudyId,
    pub name: String,
    pub description: String,
    /// The study file as first run.
    pub file_text: String,
    /// When the study first began, seconds since 1970.
    pub started_unix_s: u64,
    /// The dbsweep version of the first session.
    pub tool_version: String,
    /// The machine of the first session (see `metrics::machine::Machine`).
    pub machine: Value,
    /// How many times the study was begun (1 + resumes).
    pub sessions: u64,
}

/// How a point ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PointStatus {
    /// The run completed; its document and metrics are stored.
    Finished,
    /// Not run, on purpose (e.g. "stopped: below 20 % of peak"); never run
    /// again on resume.
    Skipped,
    /// Attempted and failed (server did not start, run aborted, …); run
    /// again on resume.
    Failed,
}

impl PointStatus {
    /// The value of the `status` column.
    pub fn as_str(self) -> &'static str {
        match self {
            PointStatus::Finished => "finished",
            PointStatus::Skipped => "skipped",
            PointStatus::Failed => "failed",
        }
    }

    /// The status of a `status` column value.
    pub fn from_name(s: &str) -> Option<PointStatus> {
        [
            PointStatus::Finished,
            PointStatus::Skipped,
            PointStatus::Failed,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// One point of a study's plan and its outcome: what
/// [`Store::commit_point`] stores.
#[derive(Debug, Clone, PartialEq)]
pub struct PointRow {
    /// The stable point key from the plan: unique within a study, the same
    /// in every session, so resume can tell which points are done.
    pub key: String,
    /// The target's name in the study.
    pub target: String,
    /// What the target is (e.g. `sqlite`, `mariadb`, `postgres`). Fixed per
    /// target name: a commit with another kind is refused.
    pub target_kind: String,
    /// The target's URL. A password in it is removed before storing. The
    /// first commit of a target records it (managed servers change port
    /// between sessions; each point's own URL is in its run document).
    pub target_url: String,
    /// The variant's name (a configuration of the target).
    pub variant: String,
    /// The settings the variant asks for (name, value). Fixed per variant:
    /// a commit with other settings is refused, because the study's results
    /// would otherwise mix configurations under one name. Stored sorted by
    /// name; a name given twice keeps its last value.
    pub variant_settings: Vec<(String, String)>,
    /// The CPU set the server was pinned to (e.g. `0-3`); `None`: unpinned.
    pub cpus: Option<String>,
    /// The workload's name, e.g. `oltp_read_write`.
    pub workload: String,
    /// How reports name this workload entry of the study: its label, which
    /// defaults to the workload's name and tells two entries of one
    /// workload apart. Part of what groups repeats.
    pub workload_label: String,
    /// The workload options the plan gives this point (not the defaults;
    /// the run document has every effective option). Part of what groups
    /// repeats. Stored sorted by name; a name given twice keeps its last
    /// value.
    pub workload_options: Vec<(String, String)>,
    /// Clients of each instance (total connections: clients × instances).
    pub clients: u32,
    /// Instances of the workload that run at once (1 normally).
    pub instances: u32,
    /// A paced point's offered load on its clients' connections, as the
    /// plan writes it: `rate=5000`, `rate=50%` (of the closed-loop peak),
    /// `users=1000`; `None`: the closed loop. Part of what groups repeats.
    pub load_level: Option<String>,
    /// Which repeat of the point this is (the plan counts from 1).
    pub repeat: u32,
    pub status: PointStatus,
    /// Why the point was skipped or failed; required for those, absent for
    /// a finished point.
    pub reason: Option<String>,
    /// The run's record: required when finished, absent when skipped,
    /// optional when failed (what was measured before the failure). The
    /// metric columns are copied from it; its histograms are stored in
    /// `point_histogram` (`transaction` and one per statement type) and the
    /// rest as `result_json`.
    pub run: Option<Run>,
    /// The server's effective settings at this point (name, value), in the
    /// order given; a name given twice keeps its last value (at the first
    /// one's position).
    pub settings: Vec<(String, String)>,
    /// Seconds a server (re)start just before this point took (an
    /// interleaved study restarts a target inside a block when its variant
    /// needs other settings); None: no start before it.
    pub restart_s: Option<f64>,
}

/// A point read back from the store.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPoint {
    /// `point.id`: increases in commit order.
    pub id: i64,
    pub study: StudyId,
    pub study_name: String,
    /// When the point was committed, seconds since 1970.
    pub committed_unix_s: u64,
    /// The point as committed (target kind, URL and variant settings as the
    /// study stores them: from their first commit). From
    /// [`Store::point_figures`] without run record and settings.
    pub row: PointRow,
    /// The metric columns exactly as stored; `None` when the point has no
    /// run record. (Read from the columns rather than re-parsed from the
    /// document text, so these are the very numbers `sqlite3` shows.)
    pub metrics: Option<Metrics>,
    /// `point_error`: `(kind, count)` sorted by kind.
    pub errors: Vec<(String, u64)>,
}

impl PointRow {
    /// The names of the run's latency histograms, as `point_histogram`
    /// stores them: `transaction`, then one per statement type. Empty
    /// without a run record, or for one without histograms.
    pub fn histogram_names(&self) -> Vec<String> {
        let Some(hs) = self.run.as_ref().and_then(|r| r.result.histograms.as_ref()) else {
            return Vec::new();
        };
        std::iter::once("transaction".to_string())
            .chain(hs.statements.iter().map(|(n, _)| n.to_string()))
            .collect()
    }

    /// The run's histogram called `name` (see [`PointRow::histogram_names`]).
    pub fn histogram(&self, name: &str) -> Option<Histogram> {
        let run = self.run.as_ref()?;
        let h = if name == "transaction" {
            run.histogram(None)?
        } else {
            run.histogram(Some(name))?
        };
        Histogram::try_from(h).ok()
    }
}

impl StoredPoint {
    /// Errors of one kind (0 when there is no document).
    pub fn errors_of(&self, kind: &str) -> u64 {
        self.errors
            .iter()
            .find(|(k, _)| k == kind)
            .map_or(0, |&(_, n)| n)
    }
}

/// Where the results database of `arg` is: `arg/results.db` for a directory,
/// else `arg` itself (for `dbsweep results [DIR|results.db]`).
pub fn resolve_path(arg: &Path) -> PathBuf {
    if arg.is_dir() {
        arg.join(FILE_NAME)
    } else {
        arg.to_path_buf()
    }
}

impl Store {
    /// Opens the results database at `path`, creating it (and upgrading an
    /// older one) as needed. The directory must exist.
    ///
    /// Errors: not a dbsweep file, or one of a newer version (a
    /// [`UsageError`]; the file is left untouched), or I/O.
    pub fn create_or_open(path: &Path) -> anyhow::Result<Store> {
        Store::open(path, true)
    }

    /// Opens an existing results database (for `dbsweep results`), upgrading
    /// an older one. A missing file is a [`UsageError`] that says what to
    /// give instead.
    pub fn open_existing(path: &Path) -> anyhow::Result<Store> {
        if !path.is_file() {
            return Err(UsageError(format!(
                "no results database at '{}': give a study's output directory or its {FILE_NAME}",
                path.display()
            ))
            .into());
        }
        Store::open(path, false)
    }

    fn open(path: &Path, create: bool) -> anyhow::Result<Store> {
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let mut conn = Connection::open_with_flags(path, flags)
            .with_context(|| format!("Could not open results database '{}'", path.display()))?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // Refuse a foreign or newer file before any pragma writes to it.
        schema::check(&conn, path)?;
        // Persistent in the file: readers (`dbsweep results`, sqlite3) do
        // not block the study's commits, and a commit is one append.
        let mode: String =
            conn.pragma_update_and_check(None, "journal_mode", "wal", |r| r.get(0))?;
        anyhow::ensure!(
            mode.eq_ignore_ascii_case("wal"),
            "Could not switch '{}' to WAL mode (it stays in '{mode}' mode)",
            path.display()
        );
        // Per connection: FULL syncs the WAL at every commit, so a
        // committed point survives a power cut, not just a crash.
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", true)?;
        schema::migrate(&mut conn, path)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            sessions: HashMap::new(),
        })
    }

    /// The connection, for read-only queries of the report layer. Writing
    /// through it bypasses the store's checks.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Begins (or resumes) the study called `name` and opens a session for
    /// this process's commits to it. A new name creates the study with the
    /// given description, file text and machine; a known name resumes it
    /// (those are recorded with the session, the study row keeps the
    /// first ones). Must be called before [`Store::commit_point`].
    pub fn begin_study(
        &mut self,
        name: &str,
        description: &str,
        file_text: &str,
        machine: &Machine,
    ) -> anyhow::Result<StudyId> {
        let now = unix_now();
        let machine = serde_json::to_string(machine)?;
        let tool = env!("CARGO_PKG_VERSION");
        // The file is kept as written, but for its passwords: results
        // databases are shared.
        let file_text = crate::util::secrets::redact_text(file_text);
        let file_text = file_text.as_str();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let existing: Option<i64> = tx
            .query_row("SELECT id FROM study WHERE name = ?1", [name], |r| r.get(0))
            .optional()?;
        let study = match existing {
            Some(id) => id,
            None => {
                tx.execute(
                    "INSERT INTO study (name, description, file_text, started_unix_s, tool_version, machine_json)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![name, description, file_text, now, tool, machine],
                )?;
                tx.last_insert_rowid()
            }
        };
        tx.execute(
            "INSERT INTO session (study_id, started_unix_s, tool_version, machine_json, file_text)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![study, now, tool, machine, file_text],
        )?;
        let session = tx.last_insert_rowid();
        tx.commit().with_context(|| {
            format!(
                "Could not record study '{name}' in '{}'",
                self.path.display()
            )
        })?;
        self.sessions.insert(StudyId(study), session);
        Ok(StudyId(study))
    }

    /// Stores the study's reference files (`[[reference]]`: file as
    /// named, text), replacing earlier versions of the same files.
    pub fn save_references(
        &mut self,
        study: StudyId,
        files: &[(String, String)],
    ) -> anyhow::Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        for (file, text) in files {
            tx.execute(
                "INSERT OR REPLACE INTO reference (study_id, file, text) VALUES (?1, ?2, ?3)",
                params![study.0, file, text],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Stores the study's reproduction spec (JSON of
    /// `study::repro::ReproSpec`), replacing an earlier one.
    pub fn save_reproduction(&mut self, study: StudyId, spec_json: &str) -> anyhow::Result<()> {
        self.conn.execute(
            "INSERT OR REPLACE INTO reproduction (study_id, spec_json) VALUES (?1, ?2)",
            params![study.0, spec_json],
        )?;
        Ok(())
    }

    /// The study's reproduction spec as stored (None: a study stored
    /// before version 5, or one that reproduces nothing).
    pub fn reproduction(&self, study: StudyId) -> anyhow::Result<Option<String>> {
        Ok(self
            .conn
            .query_row(
                "SELECT spec_json FROM reproduction WHERE study_id = ?1",
                [study.0],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Stores how the study compares its series (JSON of
    /// `study::DesignSpec`), replacing an earlier one.
    pub fn save_design(&mut self, study: StudyId, design_json: &str) -> anyhow::Result<()> {
        self.conn.execute(
            "INSERT OR REPLACE INTO design (study_id, design_json) VALUES (?1, ?2)",
            params![study.0, design_json],
        )?;
        Ok(())
    }

    /// How the study compares its series, as stored (None: a study stored
    /// before version 8).
    pub fn design(&self, study: StudyId) -> anyhow::Result<Option<String>> {
        Ok(self
            .conn
            .query_row(
                "SELECT design_json FROM design WHERE study_id = ?1",
                [study.0],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// The study's reference files: (file as named, text), by name.
    pub fn references(&self, study: StudyId) -> anyhow::Result<Vec<(String, String)>> {
        let mut st = self
            .conn
            .prepare("SELECT file, text FROM reference WHERE study_id = ?1 ORDER BY file")?;
        let rows = st.query_map([study.0], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Records that `target` of `study` runs on the program whose
    /// `--version` line is `line` (kept once per target and line, with
    /// when it was first seen).
    pub fn save_server_build(
        &mut self,
        study: StudyId,
        target: &str,
        line: &str,
    ) -> anyhow::Result<()> {
        self.conn.execute(
            "INSERT OR IGNORE INTO server_build (study_id, target, version_line, first_unix_s)
             VALUES (?1, ?2, ?3, ?4)",
            params![study.0, target, line, unix_now()],
        )?;
        Ok(())
    }

    /// The `--version` lines of the programs that served `study`'s
    /// managed targets: (target, line), in the order they were first seen.
    pub fn server_builds(&self, study: StudyId) -> anyhow::Result<Vec<(String, String)>> {
        let mut st = self.conn.prepare(
            "SELECT target, version_line FROM server_build WHERE study_id = ?1
             ORDER BY first_unix_s, rowid",
        )?;
        let rows = st.query_map([study.0], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The study called `name`, if stored.
    pub fn find_study(&self, name: &str) -> anyhow::Result<Option<StudyId>> {
        Ok(self
            .conn
            .query_row("SELECT id FROM study WHERE name = ?1", [name], |r| r.get(0))
            .optional()?
            .map(StudyId))
    }

    /// Every study, oldest first.
    pub fn studies(&self) -> anyhow::Result<Vec<StudyInfo>> {
        let mut stmt = self.conn.prepare(
            "SELECT s.id, s.name, s.description, s.file_text, s.started_unix_s, s.tool_version,
                    s.machine_json, (SELECT count(*) FROM session WHERE study_id = s.id)
             FROM study s ORDER BY s.id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                StudyId(r.get(0)?),
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, String>(6)?,
                r.get::<_, i64>(7)?,
            ))
        })?;
        rows.map(|row| {
            let (id, name, description, file_text, started, tool_version, machine, sessions) = row?;
            Ok(StudyInfo {
                id,
                name,
                description,
                file_text,
                started_unix_s: started.try_into()?,
                tool_version,
                machine: serde_json::from_str(&machine).context("study.machine_json")?,
                sessions: sessions.try_into()?,
            })
        })
        .collect()
    }

    /// Keys of the points of `study` that are done, finished or skipped:
    /// resume never runs these again. Failed points are not in it.
    pub fn finished_keys(&self, study: StudyId) -> anyhow::Result<HashSet<String>> {
        let mut stmt = self.conn.prepare(
            "SELECT key FROM point WHERE study_id = ?1 AND status IN ('finished', 'skipped')",
        )?;
        let keys = stmt.query_map([study.0], |r| r.get(0))?;
        Ok(keys.collect::<Result<_, _>>()?)
    }

    /// The repeats of each point of `study` summarised (see [`Summary`]),
    /// in order of each group's first commit. Computed in Rust from the
    /// stored columns, because SQLite has no standard deviation.
    pub fn summaries(&self, study: StudyId) -> anyhow::Result<Vec<Summary>> {
        Ok(summarize(&self.point_figures(Some(study))?))
    }
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}
