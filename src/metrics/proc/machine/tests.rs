//! The machine parsers on committed /proc samples (tests/fixtures/proc).

use super::*;

fn fixture(name: &str) -> String {
    let p = format!("{}/tests/fixtures/proc/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

#[test]
fn reads_stat() {
    let mut s = MachineSnap::default();
    parse_stat(&fixture("stat"), &mut s).unwrap();
    assert_eq!(s.cpu, [655722, 322, 119291, 1019025, 46963, 0, 15552, 4780]);
    assert_eq!(s.per_cpu.len(), 2);
    assert_eq!(s.per_cpu[1][0], 355127);
    assert_eq!(s.context_switches, 29357065);
    assert_eq!((s.procs_running, s.procs_blocked), (1, 0));
    // The total is the sum of the CPUs (within a tick of rounding).
    let sum: u64 = s.per_cpu.iter().map(|c| c[0]).sum();
    assert!(sum.abs_diff(s.cpu[0]) <= 2, "{sum} vs {}", s.cpu[0]);
}

#[test]
fn an_offline_cpu_keeps_the_numbers_of_the_others() {
    let mut s = MachineSnap::default();
    parse_stat(
        "cpu 20 0 0 0\ncpu0 10 0 0 0\ncpu2 10 0 0 0\nctxt 1\n",
        &mut s,
    )
    .unwrap();
    assert_eq!(s.per_cpu.len(), 3);
    assert_eq!(s.per_cpu[1], [0; 8], "cpu1 is offline");
    assert_eq!(s.per_cpu[2][0], 10);
}

#[test]
fn old_kernels_print_fewer_cpu_fields() {
    let mut s = MachineSnap::default();
    parse_stat("cpu 10 0 5 100\ncpu0 10 0 5 100\nctxt 7\n", &mut s).unwrap();
    assert_eq!(s.cpu, [10, 0, 5, 100, 0, 0, 0, 0]);
    assert_eq!(s.context_switches, 7);
    assert!(parse_stat("ctxt 7\n", &mut s).is_err());
    assert!(parse_stat("cpu 10 x 5 100\n", &mut s)
        .unwrap_err()
        .contains("'x'"));
}

#[test]
fn reads_meminfo() {
    let m = parse_meminfo(&fixture("meminfo"));
    assert!(m.available_bytes > 1 << 30, "{m:?}");
    assert_eq!(m.available_bytes % 1024, 0);
    let m = parse_meminfo("MemAvailable: 100 kB\nDirty: 3 kB\nSwapTotal: 10 kB\nSwapFree: 4 kB\n");
    assert_eq!(
        (m.available_bytes, m.dirty_bytes, m.swap_used_bytes),
        (102400, 3072, 6144)
    );
}

#[test]
fn reads_diskstats_in_all_three_layouts() {
    for (file, disk, reads, writes, busy_ms) in [
        ("diskstats-14", "sda", 34000, 21000, 11200),
        ("diskstats-18", "nvme0n1", 120000, 80000, 30000),
        ("diskstats-20", "vda", 327135, 513401, 489972),
    ] {
        let d = parse_diskstats(&fixture(file)).unwrap();
        let first = &d[0];
        assert_eq!(
            (
                first.name.as_str(),
                first.reads,
                first.writes,
                first.busy_ms
            ),
            (disk, reads, writes, busy_ms),
            "{file}"
        );
        // Devices that never did IO are left out (sdb, zram0).
        assert!(d.iter().all(|x| x.reads + x.writes > 0), "{file}");
    }
    let e = parse_diskstats("8 0 sda 1 2 3\n").unwrap_err();
    assert!(e.contains("6 fields"), "{e}");
}

#[test]
fn disk_deltas_leave_partitions_out_and_count_bytes() {
    let before = parse_diskstats(&fixture("diskstats-14")).unwrap();
    let mut now = before.clone();
    for d in &mut now {
        d.writes += 10;
        d.write_sectors += 80;
        d.busy_ms += 250;
        d.write_ms += 40;
    }
    let delta = disk_delta(&before, &now);
    assert_eq!(delta.len(), 1, "sda1 is a partition of sda: {delta:?}");
    let sda = &delta[0];
    assert_eq!((sda.writes, sda.write_bytes), (10, 80 * 512));
    assert_eq!((sda.busy_s, sda.wait_s), (0.25, 0.04));
    let nvme = parse_diskstats(&fixture("diskstats-18")).unwrap();
    assert!(is_partition("nvme0n1p1", &nvme) && !is_partition("nvme0n1", &nvme));
}

#[test]
fn reads_net_dev() {
    let n = parse_netdev(&fixture("net-dev"));
    let lo = n.iter().find(|(name, ..)| name == "lo").unwrap();
    assert_eq!((lo.1, lo.2), (15923607140, 15923607140));
    let d = net_delta(
        &[("lo".into(), 100, 50)],
        &[("lo".into(), 160, 90), ("eth0".into(), 0, 0)],
    );
    assert_eq!(d.len(), 1);
    assert_eq!((d[0].rx_bytes, d[0].tx_bytes), (60, 40));
}

#[test]
fn cpu_deltas_in_seconds() {
    let c = cpu_delta(
        &[100, 0, 50, 1000, 10, 0, 0, 0],
        &[300, 0, 150, 1200, 30, 0, 0, 0],
        0.01,
    );
    assert_eq!(
        (c.user_s, c.system_s, c.idle_s, c.iowait_s),
        (2.0, 1.0, 2.0, 0.2)
    );
    assert!((c.busy_s() - 3.0).abs() < 1e-9);
}
