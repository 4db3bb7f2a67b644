//! The server's own counters, read over SQL on one monitoring connection
//! that is not part of the workload and not timed with it: MariaDB/MySQL
//! ([`mariadb`]) and PostgreSQL ([`postgres`]). SQLite keeps its cache
//! statistics per connection (the clients' own), so there is nothing a
//! monitoring connection could read: it says so.
//!
//! The monitor's statements show up in the server's counters of statements
//! and transactions; each [`Reading`] counts its own, and [`delta`] takes
//! them out of the counters that count them.

pub mod mariadb;
pub mod postgres;

use crate::driver::{self, Connection, Dialect, Target};
use crate::record::OrderedMap;

/// One reading of the server's counters.
#[derive(Debug, Clone, Default)]
pub struct Reading {
    /// Cumulative counters, by name.
    pub counters: Vec<(String, f64)>,
    /// Levels at the reading.
    pub gauges: Vec<(String, f64)>,
    /// Active sessions by wait event (PostgreSQL) or by lock wait and
    /// stage (MariaDB) at the reading.
    pub waits: Vec<(String, u64)>,
    pub wait_samples: u64,
    /// InnoDB: threads waiting for a latch, by latch, at a reading of
    /// its SEMAPHORES section; `semaphore_readings` is 1 where the build
    /// prints its waiters (the denominator: mean threads waiting).
    pub semaphore_waits: Vec<(String, u64)>,
    pub semaphore_readings: u64,
    /// InnoDB's SEMAPHORES section as printed.
    pub semaphores: Option<String>,
    /// Statements the monitor ran for this reading.
    pub statements: u64,
    /// What could not be read: (what, why).
    pub gaps: Vec<(String, String)>,
}

impl Reading {
    /// Runs `sql`, whose rows are (wait event, sessions), and counts them
    /// as sampled sessions, each event named by `name`; a failure is a
    /// gap naming `view`.
    fn sample_waits(
        &mut self,
        conn: &mut dyn Connection,
        sql: &str,
        view: &str,
        name: impl Fn(&str) -> String,
    ) {
        match conn.query_text(sql) {
            Ok(rows) => {
                self.statements += 1;
                for row in rows {
                    let (Some(Some(event)), Some(Some(n))) = (row.first(), row.get(1)) else {
                        continue;
                    };
                    let Ok(n) = n.parse::<u64>() else { continue };
                    self.wait_samples += n;
                    self.waits.push((name(event), n));
                }
            }
            Err(e) => self.gap("wait events", format!("{view} failed: {e}")),
        }
    }

    fn gap(&mut self, what: &str, why: String) {
        self.gaps.push((what.to_string(), why));
    }
}

/// The monitoring connection.
pub struct Monitor {
    conn: Box<dyn Connection>,
    dialect: Dialect,
    /// When MariaDB's waits were last sampled ([`mariadb::WAITS_APART`]).
    waits_at: Option<std::time::Instant>,
}

impl Monitor {
    /// Connects to `target` as the workload does; `Err` says why there is
    /// no monitor (SQLite, or the connection failed).
    pub fn connect(target: &Target) -> Result<Monitor, String> {
        let dialect = target.dialect();
        if dialect == Dialect::Sqlite {
            return Err(
                "SQLite keeps its page cache statistics per connection, the clients' own: \
                 a monitoring connection has none to read"
                    .into(),
            );
        }
        let conn = driver::connect(target)
            .map_err(|e| format!("the monitoring connection failed: {}", e.message))?;
        Ok(Monitor {
            conn,
            dialect,
            waits_at: None,
        })
    }

    /// Reads the counters now.
    pub fn read(&mut self) -> Reading {
        let mut r = Reading::default();
        match self.dialect {
            Dialect::Mysql => {
                mariadb::read(self.conn.as_mut(), &mut r);
                if self.mariadb_waits_due() {
                    mariadb::read_waits(self.conn.as_mut(), &mut r);
                }
            }
            Dialect::Postgres => postgres::read(self.conn.as_mut(), &mut r),
            Dialect::Sqlite => {}
        }
        r
    }

    /// Whether MariaDB's waits may be sampled now, so that `INNODB_TRX` is
    /// fresh; notes the time when they may.
    fn mariadb_waits_due(&mut self) -> bool {
        let now = std::time::Instant::now();
        if self
            .waits_at
            .is_some_and(|t| now < t + mariadb::WAITS_APART)
        {
            return false;
        }
        self.waits_at = Some(now);
        true
    }

    /// Samples only the wait events (`None` on SQLite, and on MariaDB
    /// sooner than [`mariadb::WAITS_APART`] after the last): cheap enough
    /// to do several times per interval, which a wait's share needs to
    /// mean something.
    pub fn read_waits(&mut self) -> Option<Reading> {
        let mut r = Reading::default();
        let dialect = self.dialect;
        match dialect {
            Dialect::Mysql if self.mariadb_waits_due() => {
                mariadb::read_waits(self.conn.as_mut(), &mut r)
            }
            Dialect::Postgres => postgres::read_waits(self.conn.as_mut(), &mut r),
            Dialect::Mysql | Dialect::Sqlite => return None,
        }
        Some(r)
    }

    /// The counters that count statements, which the monitor's own
    /// statements inflate.
    pub fn counts_statements(&self) -> &'static [&'static str] {
        match self.dialect {
            Dialect::Mysql => mariadb::COUNTS_STATEMENTS,
            Dialect::Postgres => postgres::COUNTS_STATEMENTS,
            Dialect::Sqlite => &[],
        }
    }
}

/// The counters' differences from `before` to `now` and the gauges' levels
/// at `now`; `monitor_statements` (the monitor's statements between the
/// two readings) are taken out of the counters in `counts_statements`. A
/// counter that went backwards (a server restart) is left out rather than
/// made negative.
pub fn delta(
    before: &Reading,
    now: &Reading,
    monitor_statements: u64,
    counts_statements: &[&str],
) -> OrderedMap<f64> {
    let mut out = OrderedMap::default();
    for (name, v) in &now.counters {
        let Some((_, b)) = before.counters.iter().find(|(n, _)| n == name) else {
            continue;
        };
        let mut d = v - b;
        if counts_statements.contains(&name.as_str()) {
            d = (d - monitor_statements as f64).max(0.0);
        }
        if d >= 0.0 {
            out.0.push((name.clone(), d));
        }
    }
    out.0.extend(now.gauges.iter().cloned());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(counters: &[(&str, f64)], statements: u64) -> Reading {
        Reading {
            counters: counters.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
            gauges: vec![("Threads_running".into(), 3.0)],
            statements,
            ..Reading::default()
        }
    }

    #[test]
    fn differences_without_the_monitors_statements() {
        let a = reading(&[("Questions", 100.0), ("Com_commit", 10.0)], 3);
        let b = reading(
            &[("Questions", 160.0), ("Com_commit", 15.0), ("New", 1.0)],
            3,
        );
        let d = delta(&a, &b, 3, mariadb::COUNTS_STATEMENTS);
        assert_eq!(d.get("Questions"), Some(&57.0));
        assert_eq!(d.get("Com_commit"), Some(&5.0));
        assert_eq!(d.get("New"), None, "no earlier reading: no difference");
        assert_eq!(d.get("Threads_running"), Some(&3.0));
        // A restarted server's counters start again from 0: left out.
        let c = reading(&[("Com_commit", 2.0)], 3);
        assert_eq!(delta(&b, &c, 0, &[]).get("Com_commit"), None);
    }

    #[test]
    fn sqlite_has_no_monitor() {
        let e = Monitor::connect(&Target::sqlite("/tmp/x.db".into()))
            .err()
            .unwrap();
        assert!(e.contains("per connection"), "{e}");
    }
}
