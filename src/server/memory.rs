//! How much memory a managed server will hold, estimated before it starts:
//! what an interleaved study (every server up at once) checks against the
//! memory the machine has.
//!
//! The estimate is the server's main cache as its settings give it (or the
//! build's default: 128 MiB for both InnoDB's buffer pool and PostgreSQL's
//! shared buffers), plus a fixed [`PROCESS_BYTES`] for the rest of the
//! server, plus [`CONNECTION_BYTES`] per connection. The last two are
//! measured figures with room to spare: an idle MariaDB 10.11 holds about
//! 90 MB beside its buffer pool and 1–2 MB per connection thread;
//! a PostgreSQL 15 backend that ran sysbench's statements about 3–6 MB of
//! private memory (the shared buffers are counted once).

use super::ServerKind;

/// A server's memory beside its cache and its connections.
pub const PROCESS_BYTES: u64 = 128 << 20;
/// Each client connection's share.
pub const CONNECTION_BYTES: u64 = 8 << 20;
/// The cache of a build run with its defaults (`innodb_buffer_pool_size`,
/// `shared_buffers`).
pub const DEFAULT_CACHE_BYTES: u64 = 128 << 20;

/// The estimate for a server of `kind` with `settings` serving
/// `connections` client connections, bytes.
pub fn estimate(kind: ServerKind, settings: &[(String, String)], connections: u64) -> u64 {
    let cache = cache_bytes(kind, settings).unwrap_or(DEFAULT_CACHE_BYTES);
    cache + PROCESS_BYTES + connections * CONNECTION_BYTES
}

/// The main cache the settings give, bytes; None when they give none (or
/// one this cannot read).
pub fn cache_bytes(kind: ServerKind, settings: &[(String, String)]) -> Option<u64> {
    let (name, unit) = match kind {
        ServerKind::Mariadb => ("innodb_buffer_pool_size", 1),
        // A bare number of shared_buffers counts 8 kB blocks.
        ServerKind::Postgres => ("shared_buffers", 8192),
    };
    let value = settings
        .iter()
        .rev()
        .find(|(k, _)| k.replace('-', "_").eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim())?;
    parse_size(value, unit)
}

/// `134217728`, `128M`, `128MB`, `1G`, `1GB`, `512kB`, … as bytes; a bare
/// number counts `unit` bytes.
fn parse_size(v: &str, unit: u64) -> Option<u64> {
    let digits = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let n: u64 = v[..digits].parse().ok()?;
    let scale = match v[digits..].trim().to_ascii_lowercase().as_str() {
        "" => unit,
        "k" | "kb" => 1 << 10,
        "m" | "mb" => 1 << 20,
        "g" | "gb" => 1 << 30,
        "t" | "tb" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(k: &str, v: &str) -> Vec<(String, String)> {
        vec![(k.to_string(), v.to_string())]
    }

    #[test]
    fn caches_in_the_servers_own_units() {
        let m = ServerKind::Mariadb;
        let p = ServerKind::Postgres;
        assert_eq!(
            cache_bytes(m, &s("innodb_buffer_pool_size", "1G")),
            Some(1 << 30)
        );
        assert_eq!(
            cache_bytes(m, &s("innodb-buffer-pool-size", "134217728")),
            Some(134_217_728)
        );
        assert_eq!(
            cache_bytes(p, &s("shared_buffers", "256MB")),
            Some(256 << 20)
        );
        // 16384 blocks of 8 kB.
        assert_eq!(
            cache_bytes(p, &s("shared_buffers", "16384")),
            Some(128 << 20)
        );
        assert_eq!(cache_bytes(p, &s("work_mem", "64MB")), None);
        assert_eq!(cache_bytes(m, &s("innodb_buffer_pool_size", "lots")), None);
    }

    #[test]
    fn the_estimate_adds_the_process_and_its_connections() {
        let e = estimate(ServerKind::Postgres, &[], 10);
        assert_eq!(
            e,
            DEFAULT_CACHE_BYTES + PROCESS_BYTES + 10 * CONNECTION_BYTES
        );
        let e = estimate(ServerKind::Mariadb, &s("innodb_buffer_pool_size", "2G"), 0);
        assert_eq!(e, (2 << 30) + PROCESS_BYTES);
    }
}
