//! Parsers of single option values into their types, for clap's
//! `value_parser`: each returns the typed value or a message naming what
//! is accepted (clap adds the option and the value given, and exits with
//! status 2).

use crate::driver::{Dialect, ErrorKind, ErrorSet, PsMode};
use crate::metrics::profile::CallGraph;
use crate::rand::dist::DistKind;
use crate::rand::pacing::{Arrival, ThinkTime};
use crate::report::study::Metric;
use crate::server::ServerKind;

/// `-d`: mysql (also mariadb), pg (also pgsql, postgres, postgresql) or
/// sqlite (also sqlite3).
pub fn dialect(s: &str) -> Result<Dialect, String> {
    match s {
        "mysql" | "mariadb" => Ok(Dialect::Mysql),
        "pg" | "pgsql" | "postgres" | "postgresql" => Ok(Dialect::Postgres),
        "sqlite" | "sqlite3" => Ok(Dialect::Sqlite),
        other => Err(format!(
            "unknown database type '{other}': expected mysql, pg or sqlite"
        )),
    }
}

/// `--db-ps-mode`: auto (prepared statements) or disable (SQL text).
pub fn ps_mode(s: &str) -> Result<PsMode, String> {
    match s {
        "auto" => Ok(PsMode::Prepared),
        "disable" => Ok(PsMode::Disable),
        other => Err(format!(
            "invalid --db-ps-mode '{other}': expected auto or disable"
        )),
    }
}

/// `--profile-frequency`: samples per second, 1 to 10,000.
pub fn profile_hz(s: &str) -> Result<u32, String> {
    match s.parse::<u32>() {
        Ok(hz) if (1..=10_000).contains(&hz) => Ok(hz),
        _ => Err("give samples per second from 1 to 10000 (e.g. 99)".into()),
    }
}

/// `--call-graph`: fp or dwarf.
pub fn call_graph(s: &str) -> Result<CallGraph, String> {
    match s {
        "fp" => Ok(CallGraph::Fp),
        "dwarf" => Ok(CallGraph::Dwarf),
        _ => Err("expected fp (frame pointers) or dwarf".into()),
    }
}

/// `--ignore-errors`: `all`, or a comma-separated list of error kinds.
pub fn error_kinds(list: &str) -> Result<ErrorSet, String> {
    let mut set = ErrorSet::NONE;
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if name == "all" {
            return Ok(ErrorSet::ALL);
        }
        let kind = ErrorKind::from_name(name).ok_or_else(|| {
            format!(
                "unknown error kind '{name}' in --ignore-errors: expected all or a list of {}",
                ErrorKind::ALL.map(|k| k.name()).join(", ")
            )
        })?;
        set.insert(kind);
    }
    Ok(set)
}

/// `on` or `off` (also `true`/`false`, `yes`/`no`, `1`/`0`).
pub fn on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        other => Err(format!("'{other}': expected on or off")),
    }
}

/// `--metric`.
pub fn metric(s: &str) -> Result<Metric, String> {
    Metric::parse(s).map_err(|e| e.0)
}

/// The kind of `dbsweep server start KIND`.
pub fn server_kind(s: &str) -> Result<ServerKind, String> {
    s.parse()
        .map_err(|e: crate::server::ServerError| e.to_string())
}

/// `--rand-type`, and the distribution of `dbsweep dist`.
pub fn dist_kind(s: &str) -> Result<DistKind, String> {
    DistKind::from_name(s).ok_or_else(|| {
        format!(
            "invalid distribution '{s}': expected one of {}",
            DistKind::ALL.map(|k| k.name()).join(", ")
        )
    })
}

pub fn arrival(s: &str) -> Result<Arrival, String> {
    Arrival::parse(s)
}

pub fn think_time(s: &str) -> Result<ThinkTime, String> {
    ThinkTime::parse(s)
}

/// A duration that names its unit (`10ms`, `1.5s`): a bare number would be
/// read as seconds by some tools and as milliseconds by others (pgbench's
/// --latency-limit), so none is guessed.
pub fn duration_with_unit(s: &str) -> Result<std::time::Duration, String> {
    if !s.trim().ends_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(format!("'{s}' needs a unit: e.g. 10ms, 250us or 1.5s"));
    }
    crate::util::duration::parse(s)
}

/// `--prometheus HOST:PORT` (or `:PORT`): where to serve the live feed.
pub fn listen(s: &str) -> Result<std::net::SocketAddr, String> {
    crate::util::http::parse_listen(s)
}

/// `--shard I/N`: shard I (0-based) of N.
pub fn shard(s: &str) -> Result<crate::engine::Shard, String> {
    let bad = || {
        format!(
            "invalid shard '{s}': expected I/N with 0 <= I < N, e.g. 0/3 for the first of three"
        )
    };
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let i: usize = i.trim().parse().map_err(|_| bad())?;
    let n: usize = n.trim().parse().map_err(|_| bad())?;
    crate::engine::Shard::new(i, n).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_error_kind_sets() {
        let s = error_kinds("duplicate_key,deadlock").unwrap();
        assert!(s.contains(ErrorKind::DuplicateKey) && s.contains(ErrorKind::Deadlock));
        assert!(!s.contains(ErrorKind::Other));
        assert_eq!(error_kinds("all").unwrap(), ErrorSet::ALL);
        assert!(error_kinds("oops")
            .unwrap_err()
            .contains("unknown error kind 'oops'"));
    }

    #[test]
    fn parses_dialects_by_their_usual_names() {
        assert_eq!(dialect("mariadb").unwrap(), Dialect::Mysql);
        assert_eq!(dialect("pgsql").unwrap(), Dialect::Postgres);
        assert!(dialect("oracle")
            .unwrap_err()
            .contains("mysql, pg or sqlite"));
    }
}
