//! A connection pooler between dbsweep and the server, found and named.
//!
//! Through PgBouncer a run measures the pooler as much as the server, so
//! the record must say so. The sign is cheap and needs no privilege: a
//! server's BackendKeyData carries its backend's process id, which
//! `pg_backend_pid()` repeats; PgBouncer hands each client a random cancel
//! key instead, so the two differ. Only then is the pooler's admin console
//! (database `pgbouncer`) asked for `SHOW VERSION` and `SHOW CONFIG`, so a
//! direct connection never leaves a failed login in the server's log.
//!
//! In transaction (or statement) pooling, consecutive transactions of one
//! client may run on different server connections: a statement prepared on
//! one is unknown on the next unless PgBouncer carries it over
//! (`max_prepared_statements`, 1.21 and later). A run whose prepared
//! statements would be lost that way is refused before it starts.

use super::startup;
use crate::driver::Connection as _;
use crate::driver::{DbError, DbResult, ErrorKind, PsMode, ServerAddr};

/// The admin console's database.
const CONSOLE: &str = "pgbouncer";

/// The settings of PgBouncer's `SHOW CONFIG` a run's record keeps.
const KEPT: [&str; 6] = [
    "pool_mode",
    "max_prepared_statements",
    "default_pool_size",
    "max_client_conn",
    "server_reset_query",
    "server_tls_sslmode",
];

/// What stands between the client and the server.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Pooler {
    /// "PgBouncer 1.24.1", "PgBouncer" or "a connection pooler".
    pub name: String,
    /// Why its console told no more, and how to let it.
    pub unread: Option<String>,
    /// Its settings as `pgbouncer.NAME` → value (empty when unreadable).
    pub settings: Vec<(String, String)>,
}

impl Pooler {
    fn setting(&self, name: &str) -> Option<&str> {
        let key = format!("pgbouncer.{name}");
        self.settings
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The pooling mode, when the console told it.
    pub fn mode(&self) -> Option<&str> {
        self.setting("pool_mode")
    }

    /// What the record's settings keep as `dbsweep.pooler`: its name, and
    /// why it is all that is known.
    pub fn recorded(&self) -> String {
        match &self.unread {
            Some(why) => format!("{} ({why})", self.name),
            None => self.name.clone(),
        }
    }

    /// The name the record's version gives: "PgBouncer 1.24.1, transaction
    /// pooling".
    pub fn describe(&self) -> String {
        match self.mode() {
            Some(mode) => format!("{}, {mode} pooling", self.name),
            None => self.name.clone(),
        }
    }

    /// Refuses prepared statements a transaction-pooling PgBouncer would
    /// lose between transactions (it does not carry them over when
    /// `max_prepared_statements` is 0, or before 1.21, which lacks it).
    pub fn check(&self, mode: PsMode) -> DbResult<()> {
        if mode != PsMode::Prepared || !matches!(self.mode(), Some("transaction" | "statement")) {
            return Ok(());
        }
        let why = match self.setting("max_prepared_statements") {
            Some(v) if v.parse::<u64>().is_ok_and(|n| n > 0) => return Ok(()),
            Some(_) => "max_prepared_statements = 0",
            None => "no max_prepared_statements (PgBouncer 1.21 and later have it)",
        };
        Err(DbError::new(
            ErrorKind::Other,
            "",
            format!(
                "{} has {why}: the statements dbsweep prepares would be lost between transactions; \
                 set max_prepared_statements (e.g. 200) in pgbouncer.ini, or run with --db-ps-mode=disable",
                self.describe()
            ),
        ))
    }
}

/// The pooler between this session and its server, when its backend key
/// (`key_pid`, from BackendKeyData) is not the backend's process id
/// (`backend_pid`, from `pg_backend_pid()`); None for a direct connection.
pub(super) fn find(a: &ServerAddr, key_pid: Option<i32>, backend_pid: i32) -> Option<Pooler> {
    if key_pid.is_none_or(|k| k == backend_pid) {
        return None;
    }
    Some(ask_console(a).unwrap_or_else(|why| Pooler {
        name: "a connection pooler".into(),
        unread: Some(why),
        settings: Vec::new(),
    }))
}

/// PgBouncer's name and settings from its admin console, or why they could
/// not be read.
fn ask_console(a: &ServerAddr) -> Result<Pooler, String> {
    let mut console = a.clone();
    console.database = CONSOLE.to_string();
    let s = match startup::connect(&console) {
        Ok(s) => s,
        // PgBouncer's own words for a user outside admin_users and
        // stats_users.
        Err(e) if e.message.contains("not allowed") => {
            return Ok(Pooler {
                name: "PgBouncer".into(),
                unread: Some(format!(
                    "version unread: add user '{}' to its stats_users",
                    a.user
                )),
                settings: Vec::new(),
            });
        }
        Err(_) => return Err("not PgBouncer: it has no admin console".into()),
    };
    let mut c = super::PgConnection::from_session(s, &console);
    let version = c
        .query_text("SHOW VERSION")
        .map_err(|e| format!("its console answered SHOW VERSION with: {}", e.message))?
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next().flatten())
        .ok_or("its console answered SHOW VERSION with no row")?;
    let settings = c
        .query_text("SHOW CONFIG")
        .map(|rows| config(&rows))
        .unwrap_or_default();
    Ok(Pooler {
        name: version,
        unread: None,
        settings,
    })
}

/// The kept settings of `SHOW CONFIG`'s rows (key, value, …).
fn config(rows: &[Vec<Option<String>>]) -> Vec<(String, String)> {
    rows.iter()
        .filter_map(|r| {
            let key = r.first()?.as_deref()?;
            KEPT.contains(&key).then(|| {
                (
                    format!("pgbouncer.{key}"),
                    r.get(1).cloned().flatten().unwrap_or_default(),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pooler(settings: &[(&str, &str)]) -> Pooler {
        Pooler {
            name: "PgBouncer 1.24.1".into(),
            unread: None,
            settings: settings
                .iter()
                .map(|(k, v)| (format!("pgbouncer.{k}"), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn a_matching_key_is_a_direct_connection() {
        let t = crate::driver::Target::parse("postgres://u@127.0.0.1:1/db").unwrap();
        let crate::driver::TargetKind::Postgres(a) = t.kind else {
            panic!("a PostgreSQL URL")
        };
        assert_eq!(find(&a, Some(4242), 4242), None);
        assert_eq!(find(&a, None, 4242), None);
    }

    #[test]
    fn transaction_pooling_needs_carried_statements() {
        let lost = pooler(&[
            ("pool_mode", "transaction"),
            ("max_prepared_statements", "0"),
        ]);
        let e = lost.check(PsMode::Prepared).unwrap_err().message;
        assert!(
            e.starts_with("PgBouncer 1.24.1, transaction pooling has max_prepared_statements = 0:"),
            "{e}"
        );
        assert!(e.contains("--db-ps-mode=disable"), "{e}");
        assert!(lost.check(PsMode::Disable).is_ok());
        let old = pooler(&[("pool_mode", "statement")]);
        let e = old.check(PsMode::Prepared).unwrap_err().message;
        assert!(e.contains("PgBouncer 1.21 and later"), "{e}");
        let carried = pooler(&[
            ("pool_mode", "transaction"),
            ("max_prepared_statements", "200"),
        ]);
        assert!(carried.check(PsMode::Prepared).is_ok());
        let session = pooler(&[("pool_mode", "session"), ("max_prepared_statements", "0")]);
        assert!(session.check(PsMode::Prepared).is_ok());
        // Unknown mode (console unread): nothing to refuse on.
        assert!(pooler(&[]).check(PsMode::Prepared).is_ok());
        assert_eq!(
            carried.describe(),
            "PgBouncer 1.24.1, transaction pooling".to_string()
        );
    }

    #[test]
    fn only_the_kept_settings_are_recorded() {
        let row = |k: &str, v: &str| vec![Some(k.to_string()), Some(v.to_string())];
        let got = config(&[
            row("pool_mode", "transaction"),
            row("auth_file", "/etc/secret"),
            row("max_prepared_statements", "200"),
        ]);
        assert_eq!(
            got,
            vec![
                ("pgbouncer.pool_mode".into(), "transaction".into()),
                ("pgbouncer.max_prepared_statements".into(), "200".into()),
            ]
        );
    }
}
