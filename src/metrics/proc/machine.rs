//! The machine's cumulative counters, read from `/proc/stat`,
//! `/proc/meminfo`, `/proc/diskstats` and `/proc/net/dev`, and the
//! difference of two readings as a [`record::metrics::Usage`]'s machine
//! part. The parsers are pure (text in, counters out) and tested on
//! committed samples of each file.

use crate::record::metrics::{CpuTime, Disk, Memory, Net};

/// Counters of the machine at one instant. CPU times are in clock ticks
/// (`USER_HZ`), as the kernel prints them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MachineSnap {
    /// user, nice, system, idle, iowait, irq, softirq, steal.
    pub cpu: [u64; 8],
    pub per_cpu: Vec<[u64; 8]>,
    pub context_switches: u64,
    pub procs_running: u64,
    pub procs_blocked: u64,
    pub memory: Memory,
    pub disks: Vec<DiskCounters>,
    pub network: Vec<(String, u64, u64)>,
}

/// A block device's cumulative counters (`/proc/diskstats`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiskCounters {
    pub name: String,
    pub reads: u64,
    pub read_sectors: u64,
    pub read_ms: u64,
    pub writes: u64,
    pub write_sectors: u64,
    pub write_ms: u64,
    /// Milliseconds with IO in flight.
    pub busy_ms: u64,
}

/// The `cpu` lines of `/proc/stat` and its `ctxt`, `procs_running` and
/// `procs_blocked`. Kernels before 2.6.11 print fewer CPU fields; missing
/// ones are 0. Guest time is already counted in user and nice.
pub fn parse_stat(text: &str, snap: &mut MachineSnap) -> Result<(), String> {
    let mut seen_cpu = false;
    snap.per_cpu.clear();
    for line in text.lines() {
        let mut f = line.split_ascii_whitespace();
        let Some(key) = f.next() else { continue };
        let nums = || -> Result<[u64; 8], String> {
            let mut v = [0u64; 8];
            for (i, x) in line.split_ascii_whitespace().skip(1).take(8).enumerate() {
                v[i] = x
                    .parse()
                    .map_err(|_| format!("/proc/stat: bad number '{x}' in '{key}'"))?;
            }
            Ok(v)
        };
        match key {
            "cpu" => {
                snap.cpu = nums()?;
                seen_cpu = true;
            }
            k if k.starts_with("cpu") && k[3..].parse::<usize>().is_ok() => {
                // At its CPU number: an offline CPU has no line, and a CPU
                // set names CPUs by number.
                let n: usize = k[3..].parse().unwrap_or(0);
                if snap.per_cpu.len() <= n {
                    snap.per_cpu.resize(n + 1, [0; 8]);
                }
                snap.per_cpu[n] = nums()?;
            }
            "ctxt" | "procs_running" | "procs_blocked" => {
                let v: u64 = f
                    .next()
                    .and_then(|x| x.parse().ok())
                    .ok_or_else(|| format!("/proc/stat: '{key}' without a number"))?;
                match key {
                    "ctxt" => snap.context_switches = v,
                    "procs_running" => snap.procs_running = v,
                    _ => snap.procs_blocked = v,
                }
            }
            _ => {}
        }
    }
    if seen_cpu {
        Ok(())
    } else {
        Err("/proc/stat has no 'cpu' line".into())
    }
}

/// `MemAvailable`, `Dirty` and swap in use from `/proc/meminfo` (kB).
pub fn parse_meminfo(text: &str) -> Memory {
    let kb = |name: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    Memory {
        available_bytes: kb("MemAvailable") * 1024,
        dirty_bytes: kb("Dirty") * 1024,
        swap_used_bytes: kb("SwapTotal").saturating_sub(kb("SwapFree")) * 1024,
    }
}

/// Every line of `/proc/diskstats` in any of the layouts kernels have had:
/// 14 fields (before 4.18), 18 (4.18: discards) and 20 (5.5: flushes); the
/// first eleven counters are the same in all three. Lines of other lengths
/// are an error. Devices that never did IO are left out.
pub fn parse_diskstats(text: &str) -> Result<Vec<DiskCounters>, String> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split_ascii_whitespace().collect();
        if !matches!(f.len(), 14 | 18 | 20) {
            return Err(format!(
                "/proc/diskstats: a line of {} fields (expected 14, 18 or 20): '{line}'",
                f.len()
            ));
        }
        let n = |i: usize| -> Result<u64, String> {
            f[i].parse()
                .map_err(|_| format!("/proc/diskstats: bad number '{}' in '{line}'", f[i]))
        };
        let d = DiskCounters {
            name: f[2].to_string(),
            reads: n(3)?,
            read_sectors: n(5)?,
            read_ms: n(6)?,
            writes: n(7)?,
            write_sectors: n(9)?,
            write_ms: n(10)?,
            busy_ms: n(12)?,
        };
        if d.reads + d.writes > 0 {
            out.push(d);
        }
    }
    Ok(out)
}

/// Bytes received and sent per interface, from `/proc/net/dev`.
pub fn parse_netdev(text: &str) -> Vec<(String, u64, u64)> {
    text.lines()
        .filter_map(|l| {
            let (name, rest) = l.split_once(':')?;
            let f: Vec<u64> = rest
                .split_ascii_whitespace()
                .map(|x| x.parse().ok())
                .collect::<Option<_>>()?;
            (f.len() >= 9).then(|| (name.trim().to_string(), f[0], f[8]))
        })
        .collect()
}

/// Devices whose statistics double-count others': partitions of a disk
/// that is listed too (`sda1` of `sda`, `nvme0n1p1` of `nvme0n1`), and
/// device-mapper / loop devices over listed disks would too, but those are
/// kept: they are what a filesystem sits on when present.
fn is_partition(name: &str, all: &[DiskCounters]) -> bool {
    all.iter().any(|d| {
        d.name != name
            && name.starts_with(&d.name)
            && name[d.name.len()..]
                .trim_start_matches('p')
                .chars()
                .all(|c| c.is_ascii_digit())
    })
}

/// A sector in `/proc/diskstats` is always 512 bytes, whatever the device.
const SECTOR: u64 = 512;

/// The difference `now - before` of the CPU counters, in seconds.
pub fn cpu_delta(before: &[u64; 8], now: &[u64; 8], tick_s: f64) -> CpuTime {
    let d = |i: usize| now[i].saturating_sub(before[i]) as f64 * tick_s;
    CpuTime {
        user_s: d(0),
        nice_s: d(1),
        system_s: d(2),
        idle_s: d(3),
        iowait_s: d(4),
        irq_s: d(5),
        softirq_s: d(6),
        steal_s: d(7),
    }
}

/// The IO of each whole disk between two readings (partitions left out,
/// so a write is not counted twice), devices with none left out.
pub fn disk_delta(before: &[DiskCounters], now: &[DiskCounters]) -> Vec<Disk> {
    now.iter()
        .filter(|d| !is_partition(&d.name, now))
        .filter_map(|d| {
            let b = before.iter().find(|b| b.name == d.name);
            let z = DiskCounters::default();
            let b = b.unwrap_or(&z);
            let disk = Disk {
                name: d.name.clone(),
                reads: d.reads.saturating_sub(b.reads),
                writes: d.writes.saturating_sub(b.writes),
                read_bytes: d.read_sectors.saturating_sub(b.read_sectors) * SECTOR,
                write_bytes: d.write_sectors.saturating_sub(b.write_sectors) * SECTOR,
                busy_s: d.busy_ms.saturating_sub(b.busy_ms) as f64 / 1e3,
                wait_s: (d.read_ms + d.write_ms).saturating_sub(b.read_ms + b.write_ms) as f64
                    / 1e3,
            };
            (disk.reads + disk.writes > 0).then_some(disk)
        })
        .collect()
}

/// The traffic of each interface between two readings, idle ones left out.
pub fn net_delta(before: &[(String, u64, u64)], now: &[(String, u64, u64)]) -> Vec<Net> {
    now.iter()
        .filter_map(|(name, rx, tx)| {
            let (brx, btx) = before
                .iter()
                .find(|b| &b.0 == name)
                .map_or((0, 0), |b| (b.1, b.2));
            let n = Net {
                name: name.clone(),
                rx_bytes: rx.saturating_sub(brx),
                tx_bytes: tx.saturating_sub(btx),
            };
            (n.rx_bytes + n.tx_bytes > 0).then_some(n)
        })
        .collect()
}

#[cfg(test)]
mod tests;
