//! The machine a result was measured on, read from /proc and uname.

pub use crate::record::Machine;

/// This machine, as recorded with every result so it says what produced it.
pub fn describe() -> Machine {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_default();
    let cpus_online = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count();
    let memory_bytes = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0);
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    Machine {
        hostname: read("/proc/sys/kernel/hostname"),
        cpu_model,
        cpus_online: cpus_online as u64,
        cpus_available: super::cpu::available_cpus() as u64,
        memory_bytes,
        kernel: read("/proc/sys/kernel/osrelease"),
        os: std::env::consts::OS.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn describes_this_machine() {
        let m = super::describe();
        assert!(m.cpus_available >= 1);
        if cfg!(target_os = "linux") {
            assert!(m.cpus_online >= 1);
            assert!(m.memory_bytes > 0);
            assert!(!m.kernel.is_empty());
        }
    }
}
