//! The process's file-descriptor limit (`RLIMIT_NOFILE`). Every connection
//! holds descriptors (a server connection its socket; an SQLite one its
//! database, WAL and shared-memory files), and the usual soft limit (1024)
//! stops a run long before the machine would: dbsweep raises it to the hard
//! limit at start, as load generators do, and a run that still needs more
//! is refused before it connects, with the limit and how to raise it.

/// Descriptors dbsweep keeps open beside its connections (standard
/// streams, the results database, `/proc` readings, the monitoring
/// connection, the report's files).
pub const RESERVE: u64 = 64;

/// The soft and hard limits.
pub fn limits() -> (u64, u64) {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit, which `r` is.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return (u64::MAX, u64::MAX);
    }
    (r.rlim_cur, r.rlim_max)
}

/// Raises the soft limit to the hard one; returns the limits after.
pub fn raise() -> (u64, u64) {
    let (soft, hard) = limits();
    if soft < hard {
        let r = libc::rlimit {
            rlim_cur: hard,
            rlim_max: hard,
        };
        // SAFETY: setrlimit reads one rlimit, which `r` is. Failure leaves
        // the limit as it was, which `limits` then reports.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) };
    }
    limits()
}

/// Why `connections` connections of `per` descriptors each cannot be
/// opened under the current soft limit, if they cannot.
pub fn shortfall(connections: u64, per: u64, what: &str) -> Option<String> {
    let need = connections.saturating_mul(per).saturating_add(RESERVE);
    let (soft, hard) = limits();
    (need > soft).then(|| {
        format!(
            "{connections} connections need about {need} file descriptors ({per} per {what} connection and {RESERVE} for dbsweep itself), but this process may open {soft} (hard limit {hard}): use fewer connections, or raise the limit before starting dbsweep (`ulimit -n {need}` in its shell, as root beyond the hard limit; LimitNOFILE={need} for a systemd service; nofile in /etc/security/limits.conf)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raising_reaches_the_hard_limit_and_shortfalls_name_it() {
        let (soft, hard) = raise();
        assert_eq!(soft, hard);
        assert!(shortfall(10, 1, "server").is_none());
        if hard < u64::MAX / 4 {
            let e = shortfall(hard, 3, "SQLite").unwrap();
            assert!(e.contains(&format!("may open {soft}")), "{e}");
            assert!(e.contains("3 per SQLite connection"), "{e}");
            assert!(e.contains("ulimit -n"), "{e}");
        }
    }
}
