//! Reading Linux's `/proc`: the machine's counters ([`machine`]), a process
//! tree's ([`process`]) and which process listens on a socket
//! ([`sockets`]). Parsers are pure functions over the files' text, tested
//! on committed samples; the readers take the `/proc` directory as an
//! argument so tests can point them elsewhere.

pub mod machine;
pub mod process;
pub mod sockets;

use std::path::Path;

pub use machine::MachineSnap;
pub use process::TreeSnap;

/// Seconds per clock tick of `/proc`'s CPU times (`USER_HZ`, 100 on every
/// Linux platform in practice, asked of the system all the same).
pub fn tick_s() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    1.0 / if hz > 0 { hz as f64 } else { 100.0 }
}

/// Bytes per memory page (`/proc/PID/stat`'s RSS is in pages).
pub fn page_bytes() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

/// What the gaps of the machine's readings are called: those of
/// [`read_machine`], and `machine` when `/proc/stat` could not be read.
pub const MACHINE_GAPS: [&str; 4] = ["machine", "memory", "disks", "network"];

/// The machine's counters now. `/proc/stat` must be readable; the other
/// files are best effort: what could not be read is named in the returned
/// list of gaps (with the reason) and left at zero.
pub fn read_machine(proc: &Path) -> Result<(MachineSnap, Vec<(String, String)>), String> {
    let read = |name: &str| std::fs::read_to_string(proc.join(name));
    let mut snap = MachineSnap::default();
    let stat = read("stat").map_err(|e| format!("cannot read {}/stat: {e}", proc.display()))?;
    machine::parse_stat(&stat, &mut snap)?;
    let mut gaps = Vec::new();
    match read("meminfo") {
        Ok(t) => snap.memory = machine::parse_meminfo(&t),
        Err(e) => gaps.push(("memory".into(), format!("cannot read /proc/meminfo: {e}"))),
    }
    match read("diskstats")
        .map_err(|e| e.to_string())
        .and_then(|t| machine::parse_diskstats(&t))
    {
        Ok(d) => snap.disks = d,
        Err(e) => gaps.push(("disks".into(), e)),
    }
    match read("net/dev") {
        Ok(t) => snap.network = machine::parse_netdev(&t),
        Err(e) => gaps.push(("network".into(), format!("cannot read /proc/net/dev: {e}"))),
    }
    Ok((snap, gaps))
}
