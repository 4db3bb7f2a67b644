//! The client's own CPU use, from getrusage(RUSAGE_SELF): every thread of the
//! process, so it includes an embedded engine (SQLite) running in-process.

use std::time::Duration;

/// CPU time consumed by this process so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTimes {
    pub user: Duration,
    pub system: Duration,
}

impl CpuTimes {
    pub fn now() -> CpuTimes {
        // SAFETY: getrusage writes into the struct we pass and nothing else.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        if rc != 0 {
            return CpuTimes::default();
        }
        let tv = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
        };
        CpuTimes {
            user: tv(ru.ru_utime),
            system: tv(ru.ru_stime),
        }
    }

    /// CPU used between `earlier` and `self`.
    pub fn since(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
        }
    }

    pub fn total(&self) -> Duration {
        self.user + self.system
    }
}

/// CPUs this process may run on (respects affinity masks and cgroup quotas).
pub fn available_cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// Peak resident set size of this process, in bytes.
pub fn max_rss_bytes() -> u64 {
    // SAFETY: as above.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return 0;
    }
    ru.ru_maxrss as u64 * 1024
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_with_work_and_stays_within_wall_time() {
        // Spin until getrusage has seen 50 ms of CPU; on a busy machine that
        // takes longer than 50 ms of wall time, so bound it generously.
        let wall = std::time::Instant::now();
        let a = CpuTimes::now();
        let mut x = 0u64;
        let mut used = Duration::ZERO;
        while used < Duration::from_millis(50) && wall.elapsed() < Duration::from_secs(10) {
            for _ in 0..10_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            used = CpuTimes::now().since(&a).total();
        }
        std::hint::black_box(x);
        assert!(used >= Duration::from_millis(50), "used {used:?}");
        // A process cannot use more CPU than its CPUs had wall time.
        let limit = wall.elapsed() * available_cpus() as u32 + Duration::from_millis(10);
        assert!(used <= limit, "used {used:?} > {limit:?}");
        assert!(max_rss_bytes() > 0);
    }
}
