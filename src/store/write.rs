//! Committing a point: validation before the transaction, then one
//! transaction for the point and everything that belongs to it.

use std::collections::{BTreeMap, HashSet};

use anyhow::Context;
use rusqlite::{params, OptionalExtension, TransactionBehavior};

use super::{extract, unix_now, Extracted, Metrics, PointRow, PointStatus, Store, StudyId};
use crate::record;
use crate::stats::histogram::Histogram;

impl Store {
    /// Stores one point in one transaction: the point, its errors by kind,
    /// intervals, histograms and settings (and its target and variant the
    /// first time they appear). When this returns `Ok`, the point is on
    /// disk; on `Err`, nothing of it is.
    ///
    /// Refused (nothing stored): no [`Store::begin_study`] for `study` in
    /// this process; a key that is already finished or skipped; a status
    /// and reason/document that disagree; a finished run that was
    /// interrupted (it is unfinished: resume must run it again; commit it
    /// as failed to keep it); a run document that is not `dbsweep-run/1`
    /// or lacks a figure; a target kind or variant settings that differ
    /// from the stored ones; duplicate histogram names.
    pub fn commit_point(&mut self, study: StudyId, p: &PointRow) -> anyhow::Result<()> {
        let session = *self.sessions.get(&study).ok_or_else(|| {
            anyhow::anyhow!(
                "commit_point for study {} without begin_study in this process",
                study.0
            )
        })?;
        let extracted = validate(p)?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        refuse_stored(&tx, study, p)?;
        store_target(&tx, study, p)?;
        store_variant(&tx, study, p)?;
        let point = insert_point(&tx, study, session, p, extracted.as_ref())?;
        set_pacing_and_times(&tx, point, p, extracted.as_ref().map(|x| &x.metrics))?;
        insert_children(&tx, point, extracted.as_ref(), p)?;
        tx.commit().with_context(|| {
            format!(
                "Could not commit point '{}' to '{}'",
                p.key,
                self.path.display()
            )
        })?;
        Ok(())
    }
}

/// A finished or skipped point is never stored again (a failed one may be:
/// resume runs it again).
fn refuse_stored(
    tx: &rusqlite::Transaction<'_>,
    study: StudyId,
    p: &PointRow,
) -> anyhow::Result<()> {
    let done: Option<String> = tx
        .query_row(
            "SELECT status FROM point WHERE study_id = ?1 AND key = ?2 AND status <> 'failed'",
            params![study.0, p.key],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(status) = done {
        anyhow::bail!(
            "point '{}' is already stored as {status}; a finished or skipped point is never run again",
            p.key
        );
    }
    Ok(())
}

/// The point's target, stored the first time it appears; a target stored
/// as another kind is refused.
fn store_target(
    tx: &rusqlite::Transaction<'_>,
    study: StudyId,
    p: &PointRow,
) -> anyhow::Result<()> {
    tx.execute(
        "INSERT INTO target (study_id, name, kind, url_redacted) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (study_id, name) DO NOTHING",
        params![
            study.0,
            p.target,
            p.target_kind,
            crate::util::secrets::without_password(&p.target_url)
        ],
    )?;
    let kind: String = tx.query_row(
        "SELECT kind FROM target WHERE study_id = ?1 AND name = ?2",
        params![study.0, p.target],
        |r| r.get(0),
    )?;
    anyhow::ensure!(
        kind == p.target_kind,
        "target '{}' is stored as a {kind} target, this point says {}; a changed study needs a new name",
        p.target,
        p.target_kind
    );
    Ok(())
}

/// The point's variant of its target, stored the first time it appears; a
/// variant stored with other settings is refused.
fn store_variant(
    tx: &rusqlite::Transaction<'_>,
    study: StudyId,
    p: &PointRow,
) -> anyhow::Result<()> {
    let settings = pairs_json(&p.variant_settings);
    tx.execute(
        "INSERT INTO variant (study_id, target, name, settings_json) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (study_id, target, name) DO NOTHING",
        params![study.0, p.target, p.variant, settings],
    )?;
    let stored: String = tx.query_row(
        "SELECT settings_json FROM variant WHERE study_id = ?1 AND target = ?2 AND name = ?3",
        params![study.0, p.target, p.variant],
        |r| r.get(0),
    )?;
    anyhow::ensure!(
        stored == settings,
        "variant '{}' of target '{}' is stored with settings {stored}, this point has {settings}; \
         a changed study needs a new name",
        p.variant,
        p.target
    );
    Ok(())
}

/// The point's row: its place in the study, its status and the figures
/// extracted from its run document (with the document itself, less what
/// other tables hold). Returns the row's id.
fn insert_point(
    tx: &rusqlite::Transaction<'_>,
    study: StudyId,
    session: i64,
    p: &PointRow,
    extracted: Option<&Extracted>,
) -> anyhow::Result<i64> {
    let m = extracted.map(|x| &x.metrics);
    let run_json = stored_document(p)?;
    tx.execute(
        "INSERT INTO point (study_id, session_id, key, target, variant, cpus, workload, workload_label,
             workload_options_json, clients, instances, repeat, status, reason,
             committed_unix_s, started_unix_s, seed, stop_reason, measured_s, transactions, tps, qps,
             reads, writes, others, failed_transactions, retries, ignored_errors, errors,
             reconnects, abandoned, lat_min_us, lat_avg_us, lat_p50_us, lat_p95_us,
             lat_p99_us, lat_max_us, client_cpu_s, server_version, result_json,
             cpu_busy_pct, cpu_user_pct, cpu_system_pct, iowait_pct, server_cpu_pct, client_cpu_pct, server_cpu_us_per_txn, disk_mb_per_txn, buffer_pool_hit_pct, row_lock_waits_per_s, deadlocks_per_s, semaphore_os_waits_per_txn)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
             ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33,
             ?34, ?35, ?36, ?37, ?38, ?39, ?40, ?41, ?42, ?43, ?44, ?45, ?46, ?47, ?48,
             ?49, ?50, ?51, ?52)",
        params![
            study.0,
            session,
            p.key,
            p.target,
            p.variant,
            p.cpus,
            p.workload,
            p.workload_label,
            pairs_json(&p.workload_options),
            p.clients,
            p.instances,
            p.repeat,
            p.status.as_str(),
            p.reason,
            unix_now(),
            m.map(|m| int(m.started_unix_s)).transpose()?,
            // Text: seeds use all 64 bits, SQLite integers are signed.
            m.map(|m| m.seed.to_string()),
            m.map(|m| &m.stop_reason),
            m.map(|m| m.measured_s),
            m.map(|m| int(m.transactions)).transpose()?,
            m.map(|m| m.tps),
            m.map(|m| m.qps),
            m.map(|m| int(m.reads)).transpose()?,
            m.map(|m| int(m.writes)).transpose()?,
            m.map(|m| int(m.others)).transpose()?,
            m.map(|m| int(m.failed_transactions)).transpose()?,
            m.map(|m| int(m.retries)).transpose()?,
            m.map(|m| int(m.ignored_errors)).transpose()?,
            m.map(|m| int(m.errors)).transpose()?,
            m.map(|m| int(m.reconnects)).transpose()?,
            m.map(|m| int(m.abandoned)).transpose()?,
            m.and_then(|m| m.lat_min_us),
            m.and_then(|m| m.lat_avg_us),
            m.and_then(|m| m.lat_p50_us),
            m.and_then(|m| m.lat_p95_us),
            m.and_then(|m| m.lat_p99_us),
            m.and_then(|m| m.lat_max_us),
            m.map(|m| m.client_cpu_s),
            m.map(|m| &m.server_version),
            run_json,
            m.and_then(|m| m.cpu_busy_pct),
            m.and_then(|m| m.cpu_user_pct),
            m.and_then(|m| m.cpu_system_pct),
            m.and_then(|m| m.iowait_pct),
            m.and_then(|m| m.server_cpu_pct),
            m.and_then(|m| m.client_cpu_pct),
            m.and_then(|m| m.server_cpu_us_per_txn),
            m.and_then(|m| m.disk_mb_per_txn),
            m.and_then(|m| m.buffer_pool_hit_pct),
            m.and_then(|m| m.row_lock_waits_per_s),
            m.and_then(|m| m.deadlocks_per_s),
            m.and_then(|m| m.semaphore_os_waits_per_txn),
        ],
    )?;
    Ok(tx.last_insert_rowid())
}

/// The run document as the point's row keeps it. The histograms go to
/// point_histogram and the time series to point_interval and point_sample,
/// not twice into the file; the document so stays small however long the
/// point ran.
fn stored_document(p: &PointRow) -> anyhow::Result<Option<String>> {
    let doc = p
        .run
        .as_ref()
        .map(|run| {
            let mut doc = serde_json::to_value(without_series(run))?;
            if let Some(result) = doc.get_mut("result").and_then(|r| r.as_object_mut()) {
                result.remove("histograms");
            }
            serde_json::to_string(&doc)
        })
        .transpose()?;
    Ok(doc)
}

/// The point row's pacing figures, times, machine and restart.
fn set_pacing_and_times(
    tx: &rusqlite::Transaction<'_>,
    point: i64,
    p: &PointRow,
    m: Option<&Metrics>,
) -> anyhow::Result<()> {
    tx.execute(
        "UPDATE point SET load_level = ?1, offered_per_s = ?2, achieved_per_s = ?3, late = ?4,
             skipped = ?5, unstarted = ?6, lag_p99_us = ?7, started_unix_us = ?8,
             ended_unix_us = ?9, machine = ?10, restart_s = ?11 WHERE id = ?12",
        params![
            p.load_level,
            m.and_then(|m| m.offered_per_s),
            m.and_then(|m| m.achieved_per_s),
            m.and_then(|m| m.late).map(int).transpose()?,
            m.and_then(|m| m.skipped).map(int).transpose()?,
            m.and_then(|m| m.unstarted).map(int).transpose()?,
            m.and_then(|m| m.lag_p99_us),
            m.and_then(|m| m.started_unix_us).map(int).transpose()?,
            m.and_then(|m| m.ended_unix_us).map(int).transpose()?,
            m.map(|m| &m.machine),
            p.restart_s,
            point
        ],
    )?;
    Ok(())
}

/// The point's errors, intervals, histograms and settings, inside the
/// point's transaction.
fn insert_children(
    tx: &rusqlite::Transaction<'_>,
    point: i64,
    extracted: Option<&Extracted>,
    p: &PointRow,
) -> anyhow::Result<()> {
    if let Some(x) = extracted {
        let mut ins =
            tx.prepare("INSERT INTO point_error (point_id, kind, count) VALUES (?1, ?2, ?3)")?;
        for (kind, n) in &x.errors {
            ins.execute(params![point, kind, int(*n)?])?;
        }
        let mut ins = tx.prepare(
            "INSERT INTO point_interval (point_id, seq, t_s, duration_s, warmup, threads,
                 transactions, failed, reads, writes, others, errors, reconnects,
                 p50_us, p95_us, p99_us, max_us, interval_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
        )?;
        // One entry at a time from the run's series file: a point of hours
        // is stored without holding its hours in memory.
        for (seq, i) in x.intervals.try_iter().enumerate() {
            let i = i.map_err(anyhow::Error::msg)?;
            ins.execute(params![
                point,
                seq,
                i.t_s,
                i.duration_s,
                i.warmup,
                int(i.threads)?,
                int(i.transactions)?,
                int(i.failed)?,
                int(i.reads)?,
                int(i.writes)?,
                int(i.others)?,
                int(i.errors)?,
                int(i.reconnects)?,
                i.p50_us,
                i.p95_us,
                i.p99_us,
                i.max_us,
                // Its histograms' buckets as compact text: a fifth of the pairs' bytes.
                record::spool::interval_json(&i)?,
            ])?;
        }
        if let Some(m) = p.run.as_ref().and_then(|r| r.result.metrics.as_ref()) {
            let mut ins = tx.prepare(
                "INSERT INTO point_sample (point_id, seq, sample_json) VALUES (?1, ?2, ?3)",
            )?;
            for (seq, s) in m.samples.try_iter().enumerate() {
                let s = s.map_err(anyhow::Error::msg)?;
                ins.execute(params![point, seq, serde_json::to_string(&*s)?])?;
            }
            let mut ins = tx.prepare(
                "INSERT INTO point_profile (point_id, role, folded_gz) VALUES (?1, ?2, ?3)",
            )?;
            for profile in &m.profiles {
                if let Some(gz) = profile.folded_gz() {
                    ins.execute(params![point, profile.role, gz?])?;
                }
            }
        }
    }
    let mut ins = tx.prepare(
        "INSERT INTO point_histogram (point_id, name, histogram_json) VALUES (?1, ?2, ?3)",
    )?;
    if let Some(hs) = p.run.as_ref().and_then(|r| r.result.histograms.as_ref()) {
        // A queued run's service time and lag under names no statement
        // type has.
        let paced = [("#service", &hs.service), ("#lag", &hs.lag)];
        for (name, h) in std::iter::once(("transaction", &hs.transaction))
            .chain(hs.statements.iter())
            .chain(paced.iter().filter_map(|(n, h)| Some((*n, h.as_ref()?))))
        {
            ins.execute(params![point, name, serde_json::to_string(h)?])?;
        }
        // Transaction types likewise, under `#type:` and their name.
        for (name, h) in hs.types.iter() {
            let name = format!("#type:{name}");
            ins.execute(params![point, name, serde_json::to_string(h)?])?;
        }
    }
    let mut ins = tx.prepare(
        "INSERT INTO point_setting (point_id, name, value) VALUES (?1, ?2, ?3)
         ON CONFLICT (point_id, name) DO UPDATE SET value = excluded.value",
    )?;
    for (name, value) in &p.settings {
        ins.execute(params![point, name, value])?;
    }
    Ok(())
}

/// Checks that status, reason, document, histograms and settings agree, and
/// extracts the document's figures: everything that can be refused is
/// refused before the transaction begins.
fn validate(p: &PointRow) -> anyhow::Result<Option<Extracted>> {
    let key = &p.key;
    match (p.status, &p.reason) {
        (PointStatus::Finished, Some(r)) => {
            anyhow::bail!("point '{key}' is finished but has a reason ('{r}'); only skipped and failed points have one")
        }
        (PointStatus::Skipped | PointStatus::Failed, None) => {
            anyhow::bail!("point '{key}' is {} without a reason", p.status.as_str())
        }
        (_, Some(r)) if r.trim().is_empty() => {
            anyhow::bail!(
                "point '{key}' is {} with an empty reason",
                p.status.as_str()
            )
        }
        _ => {}
    }
    match (p.status, &p.run) {
        (PointStatus::Finished, None) => {
            anyhow::bail!("point '{key}' is finished but has no run document")
        }
        (PointStatus::Skipped, _) if p.run.is_some() || !p.settings.is_empty() => {
            anyhow::bail!(
                "point '{key}' is skipped, so it never ran: it has no run document or settings"
            )
        }
        _ => {}
    }
    if let Some(run) = &p.run {
        anyhow::ensure!(
            crate::record::READABLE.contains(&run.schema.as_str()),
            "point '{key}': the run record is of format '{}', which this version cannot read back",
            run.schema
        );
    }
    if let Some(hs) = p.run.as_ref().and_then(|r| r.result.histograms.as_ref()) {
        let mut names = HashSet::new();
        // A queued run's service time and lag under names no statement
        // type has.
        let paced = [("#service", &hs.service), ("#lag", &hs.lag)];
        for (name, h) in std::iter::once(("transaction", &hs.transaction))
            .chain(hs.statements.iter())
            .chain(paced.iter().filter_map(|(n, h)| Some((*n, h.as_ref()?))))
        {
            anyhow::ensure!(
                names.insert(name),
                "point '{key}' has two histograms called '{name}'"
            );
            Histogram::try_from(h)
                .map_err(|e| anyhow::anyhow!("point '{key}': histogram '{name}': {e}"))?;
        }
    }
    let extracted = p.run.as_ref().map(extract);
    if let (PointStatus::Finished, Some(x)) = (p.status, &extracted) {
        let stop = x.metrics.stop_reason.as_str();
        anyhow::ensure!(
            !matches!(stop, "interrupted" | "timeout"),
            "point '{key}' was {}, so it is not finished: commit it as failed, or not at all, \
             and resume will run it again",
            if stop == "timeout" {
                "timed out"
            } else {
                "interrupted"
            }
        );
    }
    Ok(extracted)
}

/// Name–value pairs as a JSON object with keys sorted (so equal sets give
/// equal text, which the grouping of repeats relies on); a later duplicate
/// wins.
fn pairs_json(pairs: &[(String, String)]) -> String {
    let map: BTreeMap<&str, &str> = pairs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    serde_json::to_string(&map).expect("a map of strings serializes")
}

/// SQLite integers are signed; counts beyond i64 cannot occur in a real run
/// but are refused rather than wrapped.
fn int(n: u64) -> anyhow::Result<i64> {
    i64::try_from(n).map_err(|_| anyhow::anyhow!("count {n} does not fit the database"))
}

/// `run` without its time series (intervals and metrics samples), which
/// are stored in rows of their own.
fn without_series(run: &crate::record::Run) -> crate::record::Run {
    let mut r = run.clone();
    r.result.intervals = Default::default();
    if let Some(m) = &mut r.result.metrics {
        m.samples = Default::default();
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_stored_sorted_with_the_last_duplicate() {
        let pairs = [
            ("b".to_string(), "1".to_string()),
            ("a".to_string(), "x\"y".to_string()),
            ("b".to_string(), "2".to_string()),
        ];
        let json = pairs_json(&pairs);
        assert_eq!(json, r#"{"a":"x\"y","b":"2"}"#);
        assert_eq!(
            super::super::read::json_pairs(&json).unwrap(),
            [("a".into(), "x\"y".into()), ("b".into(), "2".into())]
        );
    }
}
