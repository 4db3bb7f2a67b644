//! Reading points back: complete ([`Store::points`]) or just their figures
//! ([`Store::point_figures`]).

use std::collections::{BTreeMap, HashMap};

use anyhow::Context;
use rusqlite::Row;

use super::{Metrics, PointRow, PointStatus, Store, StoredPoint, StudyId};
use crate::record::{self, Histograms, OrderedMap, Run};

impl Store {
    /// The points of `study` (or of every study), in commit order, failed
    /// attempts included, complete: run documents, histograms and settings.
    pub fn points(&self, study: Option<StudyId>) -> anyhow::Result<Vec<StoredPoint>> {
        self.read_points(study, true)
    }

    /// The points like [`Store::points`], but only their plan, status,
    /// reason, metric columns and errors by kind: `row.run` is `None` and
    /// `row.settings` is empty. What tables, CSV and
    /// summaries need, without parsing megabytes of histograms for a large
    /// study.
    pub fn point_figures(&self, study: Option<StudyId>) -> anyhow::Result<Vec<StoredPoint>> {
        self.read_points(study, false)
    }

    fn read_points(&self, study: Option<StudyId>, full: bool) -> anyhow::Result<Vec<StoredPoint>> {
        let filter = study.map(|s| s.0);
        let children = |sql: &str| -> anyhow::Result<HashMap<i64, Vec<(String, String)>>> {
            let mut map: HashMap<i64, Vec<(String, String)>> = HashMap::new();
            let mut stmt = self.conn.prepare(sql)?;
            let rows = stmt.query_map([filter], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            for row in rows {
                let (id, a, b) = row?;
                map.entry(id).or_default().push((a, b));
            }
            Ok(map)
        };
        let scope = "p.study_id = ?1 OR ?1 IS NULL";
        let mut errors = children(&format!(
            "SELECT e.point_id, e.kind, CAST(e.count AS TEXT) FROM point_error e
             JOIN point p ON p.id = e.point_id WHERE {scope} ORDER BY e.kind"
        ))?;
        let (mut histograms, mut settings) = if full {
            (
                children(&format!(
                    "SELECT h.point_id, h.name, h.histogram_json FROM point_histogram h
                     JOIN point p ON p.id = h.point_id WHERE {scope} ORDER BY h.id"
                ))?,
                children(&format!(
                    "SELECT s.point_id, s.name, s.value FROM point_setting s
                     JOIN point p ON p.id = s.point_id WHERE {scope} ORDER BY s.id"
                ))?,
            )
        } else {
            (HashMap::new(), HashMap::new())
        };

        // A version 6 point's time series, in rows of their own.
        let (mut intervals, mut samples) = if full {
            (
                children(&format!(
                    "SELECT i.point_id, CAST(i.seq AS TEXT), i.interval_json FROM point_interval i
                     JOIN point p ON p.id = i.point_id
                     WHERE ({scope}) AND i.interval_json IS NOT NULL ORDER BY i.point_id, i.seq"
                ))?,
                children(&format!(
                    "SELECT s.point_id, CAST(s.seq AS TEXT), s.sample_json FROM point_sample s
                     JOIN point p ON p.id = s.point_id WHERE {scope} ORDER BY s.point_id, s.seq"
                ))?,
            )
        } else {
            (HashMap::new(), HashMap::new())
        };

        let mut profiles: HashMap<i64, Vec<(String, Vec<u8>)>> = HashMap::new();
        if full {
            let mut stmt = self.conn.prepare(&format!(
                "SELECT f.point_id, f.role, f.folded_gz FROM point_profile f
                 JOIN point p ON p.id = f.point_id WHERE {scope}"
            ))?;
            let rows = stmt.query_map([filter], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            for row in rows {
                let (id, role, gz) = row?;
                profiles.entry(id).or_default().push((role, gz));
            }
        }

        let document = if full { "p.result_json" } else { "NULL" };
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {POINT_COLUMNS}, {document} AS result_json, s.name AS study_name,
                    t.kind AS target_kind, t.url_redacted, v.settings_json
             FROM point p
             JOIN study s ON s.id = p.study_id
             JOIN target t ON t.study_id = p.study_id AND t.name = p.target
             JOIN variant v ON v.study_id = p.study_id AND v.target = p.target AND v.name = p.variant
             WHERE {scope} ORDER BY p.id"
        ))?;
        let mut rows = stmt.query([filter])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let id: i64 = r.get("id")?;
            let mut sp = read_point(r).with_context(|| {
                format!("Could not read point {id} of '{}'", self.path.display())
            })?;
            let stored = histograms.remove(&id).unwrap_or_default();
            if let Some(run) = &mut sp.row.run {
                attach_histograms(run, stored)
                    .with_context(|| format!("point {id} of '{}'", self.path.display()))?;
                attach_series(run, intervals.remove(&id), samples.remove(&id))
                    .with_context(|| format!("point {id} of '{}'", self.path.display()))?;
                attach_profiles(run, profiles.remove(&id).unwrap_or_default())
                    .with_context(|| format!("point {id} of '{}'", self.path.display()))?;
                crate::engine::derive::older(run);
            }
            sp.row.settings = settings.remove(&id).unwrap_or_default();
            sp.errors = errors
                .remove(&id)
                .unwrap_or_default()
                .into_iter()
                .map(|(k, n)| Ok((k, n.parse()?)))
                .collect::<anyhow::Result<_>>()?;
            out.push(sp);
        }
        Ok(out)
    }
}

/// Puts a version 6 point's intervals and samples back into its run
/// record (a version 5 point has them in its document already).
fn attach_series(
    run: &mut Run,
    intervals: Option<Vec<(String, String)>>,
    samples: Option<Vec<(String, String)>>,
) -> anyhow::Result<()> {
    if let Some(rows) = intervals {
        let list = rows
            .iter()
            .map(|(_, json)| record::spool::interval_from_json(json))
            .collect::<Result<Vec<_>, _>>()
            .map_err(anyhow::Error::msg)
            .context("point_interval.interval_json")?;
        run.result.intervals = list.into();
    }
    if let (Some(rows), Some(m)) = (samples, run.result.metrics.as_mut()) {
        let list = rows
            .iter()
            .map(|(_, json)| serde_json::from_str(json))
            .collect::<Result<Vec<_>, _>>()
            .context("point_sample.sample_json")?;
        m.samples = list.into();
    }
    Ok(())
}

/// Puts a point's stored folded stacks back into its profiles.
fn attach_profiles(run: &mut Run, stored: Vec<(String, Vec<u8>)>) -> anyhow::Result<()> {
    let Some(m) = run.result.metrics.as_mut() else {
        return Ok(());
    };
    for (role, gz) in stored {
        if let Some(p) = m.profiles.iter_mut().find(|p| p.role == role) {
            p.set_folded_gz(&gz)
                .with_context(|| format!("point_profile.folded_gz of the {role}"))?;
        }
    }
    Ok(())
}

/// Puts a point's stored histograms (`transaction` first, then one per
/// statement type) back into its run record, where the run had them.
fn attach_histograms(run: &mut Run, stored: Vec<(String, String)>) -> anyhow::Result<()> {
    let mut transaction = None;
    let (mut service, mut lag) = (None, None);
    let mut statements = OrderedMap::default();
    let mut types = OrderedMap::default();
    for (name, json) in stored {
        let h: record::Histogram =
            serde_json::from_str(&json).with_context(|| format!("histogram '{name}'"))?;
        match name.as_str() {
            "transaction" if transaction.is_none() => transaction = Some(h),
            "#service" => service = Some(h),
            "#lag" => lag = Some(h),
            _ => match name.strip_prefix("#type:") {
                Some(t) => types.0.push((t.to_string(), h)),
                None => statements.0.push((name, h)),
            },
        }
    }
    if let Some(transaction) = transaction {
        run.result.histograms = Some(Histograms {
            transaction,
            statements,
            service,
            lag,
            types,
        });
    }
    Ok(())
}

/// The `point` columns [`read_point`] reads, all but `result_json` (which
/// only [`Store::points`] reads).
const POINT_COLUMNS: &str = "p.id, p.study_id, p.key, p.target, p.variant, p.cpus, p.workload,
    p.workload_label, p.workload_options_json, p.clients, p.instances, p.repeat, p.status,
    p.reason, p.committed_unix_s, p.started_unix_s, p.seed, p.stop_reason, p.measured_s,
    p.transactions, p.tps, p.qps, p.reads, p.writes, p.others, p.failed_transactions,
    p.retries, p.ignored_errors, p.errors, p.reconnects, p.abandoned, p.lat_min_us,
    p.lat_avg_us, p.lat_p50_us, p.lat_p95_us, p.lat_p99_us, p.lat_max_us, p.client_cpu_s,
    p.server_version, p.cpu_busy_pct, p.cpu_user_pct, p.cpu_system_pct, p.iowait_pct, p.server_cpu_pct, p.client_cpu_pct, p.server_cpu_us_per_txn, p.disk_mb_per_txn, p.buffer_pool_hit_pct, p.row_lock_waits_per_s, p.deadlocks_per_s, p.semaphore_os_waits_per_txn,
    p.load_level, p.offered_per_s, p.achieved_per_s, p.late, p.skipped, p.unstarted, p.lag_p99_us,
    p.started_unix_us, p.ended_unix_us, p.machine, p.restart_s";

/// Builds a [`StoredPoint`] from a `point` row joined with its study,
/// target and variant; children are added by the caller.
fn read_point(r: &Row<'_>) -> anyhow::Result<StoredPoint> {
    let status: String = r.get("status")?;
    let status = PointStatus::from_name(&status)
        .ok_or_else(|| anyhow::anyhow!("unknown status '{status}'"))?;
    let run: Option<String> = r.get("result_json")?;
    let run: Option<Run> = run
        .map(|s| record::from_str(&s))
        .transpose()
        .context("result_json")?;
    // Figures exist exactly when a run document was committed; its
    // stop_reason is required, so the column tells without reading it.
    let stop_reason: Option<String> = r.get("stop_reason")?;
    let metrics = match stop_reason {
        None => None,
        Some(stop_reason) => Some(Metrics {
            started_unix_s: uint(r.get("started_unix_s")?)?,
            started_unix_us: r
                .get::<_, Option<i64>>("started_unix_us")?
                .map(uint)
                .transpose()?,
            ended_unix_us: r
                .get::<_, Option<i64>>("ended_unix_us")?
                .map(uint)
                .transpose()?,
            machine: r.get::<_, Option<String>>("machine")?.unwrap_or_default(),
            seed: r.get::<_, String>("seed")?.parse().context("point.seed")?,
            stop_reason,
            measured_s: r.get("measured_s")?,
            transactions: uint(r.get("transactions")?)?,
            tps: r.get("tps")?,
            qps: r.get("qps")?,
            reads: uint(r.get("reads")?)?,
            writes: uint(r.get("writes")?)?,
            others: uint(r.get("others")?)?,
            failed_transactions: uint(r.get("failed_transactions")?)?,
            retries: uint(r.get("retries")?)?,
            ignored_errors: uint(r.get("ignored_errors")?)?,
            errors: uint(r.get("errors")?)?,
            reconnects: uint(r.get("reconnects")?)?,
            abandoned: uint(r.get("abandoned")?)?,
            lat_min_us: r.get("lat_min_us")?,
            lat_avg_us: r.get("lat_avg_us")?,
            lat_p50_us: r.get("lat_p50_us")?,
            lat_p95_us: r.get("lat_p95_us")?,
            lat_p99_us: r.get("lat_p99_us")?,
            lat_max_us: r.get("lat_max_us")?,
            client_cpu_s: r.get("client_cpu_s")?,
            server_version: r.get("server_version")?,
            cpu_busy_pct: r.get("cpu_busy_pct")?,
            cpu_user_pct: r.get("cpu_user_pct")?,
            cpu_system_pct: r.get("cpu_system_pct")?,
            iowait_pct: r.get("iowait_pct")?,
            server_cpu_pct: r.get("server_cpu_pct")?,
            client_cpu_pct: r.get("client_cpu_pct")?,
            server_cpu_us_per_txn: r.get("server_cpu_us_per_txn")?,
            disk_mb_per_txn: r.get("disk_mb_per_txn")?,
            buffer_pool_hit_pct: r.get("buffer_pool_hit_pct")?,
            row_lock_waits_per_s: r.get("row_lock_waits_per_s")?,
            deadlocks_per_s: r.get("deadlocks_per_s")?,
            semaphore_os_waits_per_txn: r.get("semaphore_os_waits_per_txn")?,
            offered_per_s: r.get("offered_per_s")?,
            achieved_per_s: r.get("achieved_per_s")?,
            late: r.get::<_, Option<i64>>("late")?.map(uint).transpose()?,
            skipped: r.get::<_, Option<i64>>("skipped")?.map(uint).transpose()?,
            unstarted: r
                .get::<_, Option<i64>>("unstarted")?
                .map(uint)
                .transpose()?,
            lag_p99_us: r.get("lag_p99_us")?,
        }),
    };
    Ok(StoredPoint {
        id: r.get("id")?,
        study: StudyId(r.get("study_id")?),
        study_name: r.get("study_name")?,
        committed_unix_s: uint(r.get("committed_unix_s")?)?,
        row: PointRow {
            key: r.get("key")?,
            target: r.get("target")?,
            target_kind: r.get("target_kind")?,
            target_url: r.get("url_redacted")?,
            variant: r.get("variant")?,
            variant_settings: json_pairs(&r.get::<_, String>("settings_json")?)?,
            cpus: r.get("cpus")?,
            workload: r.get("workload")?,
            workload_label: r.get("workload_label")?,
            workload_options: json_pairs(&r.get::<_, String>("workload_options_json")?)?,
            clients: r.get("clients")?,
            instances: r.get("instances")?,
            repeat: r.get("repeat")?,
            load_level: r.get("load_level")?,
            status,
            reason: r.get("reason")?,
            run,
            settings: Vec::new(),
            restart_s: r.get("restart_s")?,
        },
        metrics,
        errors: Vec::new(),
    })
}

/// The name–value pairs of a JSON object column, sorted by name.
pub(super) fn json_pairs(text: &str) -> anyhow::Result<Vec<(String, String)>> {
    let map: BTreeMap<String, String> = serde_json::from_str(text)?;
    Ok(map.into_iter().collect())
}

/// The inverse of `write::int`.
fn uint(n: i64) -> anyhow::Result<u64> {
    u64::try_from(n).map_err(|_| anyhow::anyhow!("negative count {n} in the database"))
}
