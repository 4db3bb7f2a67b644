//! MariaDB's and MySQL's own counters: `SHOW GLOBAL STATUS` (the counters
//! and gauges a comparison needs), the SEMAPHORES section of `SHOW ENGINE
//! INNODB STATUS`, and the enabled counters of
//! `information_schema.INNODB_METRICS`.

use super::Reading;
use crate::driver::Connection;

/// `SHOW GLOBAL STATUS` counters kept (differences), besides every
/// `Handler_*` and `Innodb_rows_*`.
const COUNTERS: &[&str] = &[
    "Questions",
    "Queries",
    "Com_commit",
    "Com_rollback",
    "Innodb_row_lock_waits",
    "Innodb_row_lock_time",
    "Innodb_deadlocks",
    "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_read_requests",
    "Innodb_buffer_pool_write_requests",
    "Innodb_buffer_pool_wait_free",
    "Innodb_data_reads",
    "Innodb_data_writes",
    "Innodb_data_fsyncs",
    "Innodb_os_log_written",
    "Innodb_log_waits",
    "Created_tmp_disk_tables",
    "Select_full_join",
    "Sort_merge_passes",
    "Table_locks_waited",
    "Slow_queries",
];

/// `SHOW GLOBAL STATUS` levels kept as they are at the reading.
const GAUGES: &[&str] = &[
    "Threads_running",
    "Threads_connected",
    "Innodb_row_lock_current_waits",
];

/// Counters that count the monitor's own statements too.
pub const COUNTS_STATEMENTS: &[&str] = &["Questions", "Queries"];

/// Reads the server's counters; what could not be read is named in
/// `reading.gaps`.
pub fn read(conn: &mut dyn Connection, r: &mut Reading) {
    match conn.query_text("SHOW GLOBAL STATUS") {
        Ok(rows) => {
            r.statements += 1;
            for row in rows {
                let (Some(Some(name)), Some(Some(v))) = (row.first(), row.get(1)) else {
                    continue;
                };
                let Ok(v) = v.parse::<f64>() else { continue };
                if GAUGES.contains(&name.as_str()) {
                    r.gauges.push((name.clone(), v));
                } else if COUNTERS.contains(&name.as_str())
                    || name.starts_with("Handler_")
                    || name.starts_with("Innodb_rows_")
                {
                    r.counters.push((name.clone(), v));
                }
            }
        }
        Err(e) => r.gap("server status", format!("SHOW GLOBAL STATUS failed: {e}")),
    }
    match conn.query_text("SHOW ENGINE INNODB STATUS") {
        Ok(rows) => {
            r.statements += 1;
            let text = rows
                .first()
                .and_then(|row| row.get(2).cloned().flatten())
                .unwrap_or_default();
            let section = semaphores_section(&text).unwrap_or_default();
            let counters = parse_semaphores(&section);
            if counters.is_empty() {
                // MariaDB 10.6+: performance_schema's instead, when on.
                read_synch_waits(conn, r);
            }
            if !counters.is_empty() {
                // This build prints its waiters too: one reading of them.
                r.semaphore_readings += 1;
                r.semaphore_waits = semaphore_waiters(&section);
            }
            for (name, v) in counters {
                r.counters
                    .push((format!("innodb_semaphores.{name}"), v as f64));
            }
            r.semaphores = Some(section);
        }
        Err(e) => r.gap(
            "InnoDB semaphores",
            format!("SHOW ENGINE INNODB STATUS failed (it needs the PROCESS privilege): {e}"),
        ),
    }
    // MariaDB says ENABLED (0/1), MySQL STATUS ('enabled'/'disabled').
    let metrics = conn
        .query_text("SELECT NAME, COUNT, TYPE FROM information_schema.INNODB_METRICS WHERE ENABLED = 1")
        .or_else(|_| {
            r.statements += 1;
            conn.query_text(
                "SELECT NAME, COUNT, TYPE FROM information_schema.INNODB_METRICS WHERE STATUS = 'enabled'",
            )
        });
    match metrics {
        Ok(rows) => {
            r.statements += 1;
            for row in rows {
                let (Some(Some(name)), Some(Some(v))) = (row.first(), row.get(1)) else {
                    continue;
                };
                let Ok(v) = v.parse::<f64>() else { continue };
                let name = format!("innodb_metrics.{name}");
                match row.get(2).cloned().flatten().as_deref() {
                    Some("value") => r.gauges.push((name, v)),
                    _ => r.counters.push((name, v)),
                }
            }
        }
        Err(e) => r.gap(
            "InnoDB metrics",
            format!("INNODB_METRICS could not be read: {e}"),
        ),
    }
}

/// Samples what the clients' threads are doing into `r`: a thread in an
/// InnoDB lock wait (`INNODB_TRX`) under `InnoDB:lock wait`, any other by
/// its processlist state (the stage it is in, e.g. `stage:Sending data`),
/// one with no state as `running`. Stages are not waits, but they are the
/// one account every MariaDB and MySQL version gives of where a
/// statement is; the latches its threads wait for are in the SEMAPHORES
/// section ([`semaphore_waiters`]) where the build prints them.
///
/// InnoDB refills the table behind `INNODB_TRX` only when it was not read
/// for 100 ms ([`WAITS_APART`]): read more often, it shows the
/// transactions of its last refill for ever, so the caller spaces these
/// samples.
pub fn read_waits(conn: &mut dyn Connection, r: &mut Reading) {
    r.sample_waits(
        conn,
        "SELECT CASE WHEN t.trx_state = 'LOCK WAIT' THEN 'InnoDB:lock wait' \
                WHEN p.STATE IS NULL OR p.STATE = '' THEN 'running' \
                ELSE concat('stage:', p.STATE) END, COUNT(*) \
         FROM information_schema.PROCESSLIST p \
         LEFT JOIN information_schema.INNODB_TRX t ON t.trx_mysql_thread_id = p.ID \
         WHERE p.COMMAND IN ('Query', 'Execute') AND p.ID <> CONNECTION_ID() \
         GROUP BY 1",
        "information_schema.PROCESSLIST",
        stage_case,
    );
}

/// A stage as MariaDB 10.3 and later spell it, capitalised (`stage:query
/// end` in 10.2 is `stage:Query end` there), so that two versions' stages
/// line up side by side.
pub fn stage_case(event: &str) -> String {
    match event.strip_prefix("stage:") {
        Some(stage) => {
            let mut c = stage.chars();
            let first = c.next().map(|f| f.to_uppercase().collect::<String>());
            format!("stage:{}{}", first.unwrap_or_default(), c.as_str())
        }
        None => event.to_string(),
    }
}

/// How far apart [`read_waits`] samples must be for `INNODB_TRX` to be
/// refilled each time (InnoDB's `CACHE_MIN_IDLE_TIME_US` is 100 ms).
pub const WAITS_APART: std::time::Duration = std::time::Duration::from_millis(110);

/// The threads a SEMAPHORES section shows waiting, counted by latch: its
/// mode and kind, where it was created (which latch: `buf0buf.cc:1471` is
/// every buffer page's) and where the thread waited for it, e.g.
/// `S-lock on RW-latch buf0buf.cc:1471, waited at row0sel.cc:4559`. MySQL
/// 5.5 and XtraDB name a mutex by its variable (`'&kernel_mutex'`) or say
/// `created file X line N`; 5.7's InnoDB says `created in file X line N`
/// of a latch and `Mutex LOG_SYS created log0log.cc:711` of a mutex.
pub fn semaphore_waiters(section: &str) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = Vec::new();
    let mut lines = section.lines().map(str::trim);
    while let Some(line) = lines.next() {
        let Some(rest) = line.strip_prefix("--Thread ") else {
            continue;
        };
        let at = rest
            .split_once(" has waited at ")
            .and_then(|(_, r)| r.split_once(" for "))
            .map(|(place, _)| file_line(place));
        let Some(latch) = lines.next() else { break };
        let (kind, rest) = latch.split_once(" at 0x").unwrap_or((latch, ""));
        let origin = if let Some(i) = rest.find('\'') {
            rest[i..].split(',').next().unwrap_or("").to_string()
        } else if let Some((_, named)) = rest.split_once(", Mutex ") {
            // 5.7's InnoDB: `, Mutex LOG_SYS created log0log.cc:711, …`.
            let named = named.split(',').next().unwrap_or("");
            match named.split_once(" created ") {
                Some((name, at)) => format!("{name} {}", at.trim()),
                None => named.to_string(),
            }
        } else {
            ["created in file ", "created file "]
                .iter()
                .find_map(|k| rest.split_once(k))
                .map(|(_, r)| file_line(r.split(',').next().unwrap_or("")))
                .unwrap_or_default()
        };
        let mut key = kind.to_string();
        if !origin.is_empty() {
            key = format!("{key} {origin}");
        }
        if let Some(at) = at {
            key = format!("{key}, waited at {at}");
        }
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += 1,
            None => out.push((key, 1)),
        }
    }
    out
}

/// `row0sel.cc line 4559` as `row0sel.cc:4559`; a path keeps its file name.
fn file_line(place: &str) -> String {
    let place = place.trim();
    let (file, line) = place.split_once(" line ").unwrap_or((place, ""));
    let file = file.rsplit('/').next().unwrap_or(file);
    if line.is_empty() {
        file.to_string()
    } else {
        format!("{file}:{}", line.trim())
    }
}

/// The counter of mutex, rw-lock and sx-lock waits performance_schema's
/// synchronisation instruments took, and their time (picoseconds).
pub const SYNCH_WAITS: &str = "performance_schema.synch_waits";
pub const SYNCH_WAIT_PS: &str = "performance_schema.synch_wait_ps";

/// MariaDB 10.6 and later print no semaphore counters; with
/// performance_schema on and its `wait/synch/%` instruments enabled, the
/// waits on mutexes and rw-locks are counted there instead (condition
/// variables are left out: idle threads wait on them). With it off, or the
/// instruments off, nothing is recorded, and the figure's gap says how to
/// turn them on.
fn read_synch_waits(conn: &mut dyn Connection, r: &mut Reading) {
    let Ok(rows) = conn.query_text(
        "SELECT SUM(COUNT_STAR), SUM(SUM_TIMER_WAIT) \
         FROM performance_schema.events_waits_summary_global_by_event_name \
         WHERE EVENT_NAME LIKE 'wait/synch/mutex/%' OR EVENT_NAME LIKE 'wait/synch/rwlock/%' \
            OR EVENT_NAME LIKE 'wait/synch/sxlock/%'",
    ) else {
        return;
    };
    r.statements += 1;
    let Some(row) = rows.first() else { return };
    let num = |i: usize| {
        row.get(i)
            .cloned()
            .flatten()
            .and_then(|v| v.parse::<f64>().ok())
    };
    // SUM over no enabled instrument is NULL or 0: nothing to record.
    if let Some(n) = num(0).filter(|&n| n > 0.0) {
        r.counters.push((SYNCH_WAITS.to_string(), n));
        if let Some(ps) = num(1) {
            r.counters.push((SYNCH_WAIT_PS.to_string(), ps));
        }
    }
}

/// The SEMAPHORES section of an InnoDB status text, without its header.
pub fn semaphores_section(status: &str) -> Option<String> {
    let start = status.find("\nSEMAPHORES\n")?;
    let body = &status[start + "\nSEMAPHORES\n".len()..];
    // The header's underline, then lines up to the next section's overline.
    let body = body.strip_prefix("----------\n").unwrap_or(body);
    let end = body.find("\n------------\n").map_or(body.len(), |e| e + 1);
    let section = body[..end].trim_end_matches('\n');
    Some(if section.starts_with("------------") {
        String::new()
    } else {
        section.to_string()
    })
}

/// The counters of a SEMAPHORES section in any of its layouts: MySQL 5.5
/// and 5.6 and MariaDB 10.1's XtraDB (`Mutex spin waits …`), 5.7, 8.0 and
/// MariaDB 10.2 to 10.5 (an `RW-sx` line), the OS wait array on one or two
/// lines. MariaDB 10.6 and
/// later print none, so the result is empty.
pub fn parse_semaphores(section: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let num_after = |line: &str, key: &str| -> Option<u64> {
        let i = line.find(key)? + key.len();
        let digits: String = line[i..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        digits.parse().ok()
    };
    for line in section.lines() {
        let line = line.trim();
        if line.starts_with("OS WAIT ARRAY INFO:") {
            if let Some(v) = num_after(line, "reservation count") {
                out.push(("os_wait_reservations".to_string(), v));
            }
            if let Some(v) = num_after(line, "signal count") {
                out.push(("os_wait_signals".to_string(), v));
            }
            continue;
        }
        let kind = if line.starts_with("Mutex spin waits") {
            "mutex"
        } else if line.starts_with("RW-shared spins") {
            "rw_shared"
        } else if line.starts_with("RW-excl spins") {
            "rw_excl"
        } else if line.starts_with("RW-sx spins") {
            "rw_sx"
        } else {
            continue;
        };
        let spins = if kind == "mutex" {
            num_after(line, "spin waits")
        } else {
            num_after(line, "spins")
        };
        for (what, v) in [
            ("spins", spins),
            ("rounds", num_after(line, "rounds")),
            ("os_waits", num_after(line, "OS waits")),
        ] {
            if let Some(v) = v {
                out.push((format!("{kind}_{what}"), v));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let p = format!(
            "{}/tests/fixtures/innodb/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
    }

    fn get(v: &[(String, u64)], name: &str) -> Option<u64> {
        v.iter().find(|(n, _)| n == name).map(|&(_, x)| x)
    }

    #[test]
    fn stages_are_capitalised_as_newer_versions_print_them() {
        assert_eq!(stage_case("stage:query end"), "stage:Query end");
        assert_eq!(stage_case("stage:Sending data"), "stage:Sending data");
        assert_eq!(stage_case("InnoDB:lock wait"), "InnoDB:lock wait");
    }

    #[test]
    fn counts_the_threads_waiting_by_latch() {
        let s = semaphores_section(&format!(
            "x\n{}\n------------\nTRANSACTIONS\n",
            fixture("mariadb-10.2-waiters.txt")
        ))
        .unwrap();
        let w = semaphore_waiters(&s);
        assert_eq!(
            w,
            [
                (
                    "X-lock (wait_ex) on RW-latch buf0buf.cc:1471, waited at row0upd.cc:3085"
                        .to_string(),
                    1
                ),
                (
                    "S-lock on RW-latch buf0buf.cc:1471, waited at row0sel.cc:4559".to_string(),
                    3
                ),
                (
                    "S-lock on RW-latch buf0buf.cc:1471, waited at trx0undo.ic:180".to_string(),
                    1
                ),
            ]
        );
        // MySQL 5.5's mutexes: by their variable, or by where they were made.
        let old =
            "--Thread 1 has waited at trx0trx.c line 1093 for 0.0000 seconds the semaphore:\n\
                   Mutex at 0x1c67f88 '&kernel_mutex', lock var 1\n\
                   waiters flag 1\n\
                   --Thread 2 has waited at /src/buf0buf.c line 2 for 1.0 seconds the semaphore:\n\
                   Mutex at 0x2b06ba0 created file srv0srv.c line 980, lock var 1\n";
        assert_eq!(
            semaphore_waiters(old),
            [
                (
                    "Mutex '&kernel_mutex', waited at trx0trx.c:1093".to_string(),
                    1
                ),
                ("Mutex srv0srv.c:980, waited at buf0buf.c:2".to_string(), 1),
            ]
        );
        // MariaDB 10.2's (MySQL 5.7's) mutexes, as a scratch server printed them.
        let named =
            "--Thread 3 has waited at mtr0mtr.cc line 837 for 0.00 seconds the semaphore:\n\
                     Mutex at 0x137eca50, Mutex LOG_SYS created log0log.cc:711, lock var 2\n";
        assert_eq!(
            semaphore_waiters(named),
            [(
                "Mutex LOG_SYS log0log.cc:711, waited at mtr0mtr.cc:837".to_string(),
                1
            )]
        );
        assert!(semaphore_waiters(&fixture("mariadb-10.11.txt")).is_empty());
    }

    #[test]
    fn reads_mysql_5_5_semaphores() {
        let s = semaphores_section(&fixture("mysql-5.5.txt")).unwrap();
        assert!(
            s.starts_with("OS WAIT ARRAY INFO") && s.ends_with("8.88 RW-excl"),
            "{s}"
        );
        let v = parse_semaphores(&s);
        assert_eq!(get(&v, "os_wait_reservations"), Some(2878508));
        assert_eq!(get(&v, "os_wait_signals"), Some(11155593));
        assert_eq!(get(&v, "mutex_spins"), Some(38129568));
        assert_eq!(get(&v, "mutex_rounds"), Some(157730134));
        assert_eq!(get(&v, "mutex_os_waits"), Some(1895815));
        assert_eq!(get(&v, "rw_shared_os_waits"), Some(524392));
        assert_eq!(get(&v, "rw_excl_spins"), Some(4186506));
        assert_eq!(v.len(), 11);
    }

    #[test]
    fn reads_mysql_5_7_semaphores() {
        let v = parse_semaphores(&semaphores_section(&fixture("mysql-5.7.txt")).unwrap());
        assert_eq!(get(&v, "os_wait_reservations"), Some(9135));
        assert_eq!(get(&v, "os_wait_signals"), Some(8766));
        assert_eq!(get(&v, "rw_sx_spins"), Some(43));
        assert_eq!(get(&v, "rw_sx_os_waits"), Some(33));
        assert_eq!(get(&v, "mutex_spins"), None);
    }

    #[test]
    fn reads_mariadb_10_1_and_10_2_semaphores() {
        // 10.1's XtraDB: the Mutex line of 5.5, the wait array on two lines.
        let v = parse_semaphores(&semaphores_section(&fixture("mariadb-10.1.txt")).unwrap());
        assert_eq!(get(&v, "os_wait_reservations"), Some(399));
        assert_eq!(get(&v, "os_wait_signals"), Some(319));
        assert_eq!(get(&v, "mutex_spins"), Some(1215));
        assert_eq!(get(&v, "mutex_os_waits"), Some(225));
        assert_eq!(get(&v, "rw_shared_os_waits"), Some(74));
        assert_eq!(get(&v, "rw_excl_os_waits"), Some(59));
        assert_eq!(get(&v, "rw_sx_spins"), None);
        // 10.2's InnoDB (MySQL 5.7's): no Mutex line, an RW-sx one.
        let v = parse_semaphores(&semaphores_section(&fixture("mariadb-10.2.txt")).unwrap());
        assert_eq!(get(&v, "os_wait_reservations"), Some(2086));
        assert_eq!(get(&v, "rw_excl_os_waits"), Some(39));
        assert_eq!(get(&v, "rw_sx_os_waits"), Some(2));
        assert_eq!(get(&v, "mutex_spins"), None);
    }

    #[test]
    fn mariadb_10_11_prints_an_empty_section() {
        let s = semaphores_section(&fixture("mariadb-10.11.txt")).unwrap();
        assert_eq!(s, "");
        assert!(parse_semaphores(&s).is_empty());
        assert_eq!(semaphores_section("no such section"), None);
    }
}
