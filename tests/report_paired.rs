//! The paired comparisons of a study report on literal points: a server
//! against itself while the machine drifts by 40 % gives `equivalent`
//! when its blocks were interleaved and a confident difference when they
//! ran in sequence; a real difference is `better` / `worse`; a control
//! that differs from itself says the design failed; points of two
//! machines are never paired; and the report's words follow the verdicts.

use std::path::Path;

use dbsweep::record::{Machine, Run};
use dbsweep::report::study::{self, Options, StudyData};
use dbsweep::stats::paired::Verdict;
use dbsweep::store::{PointRow, PointStatus, Store, StudyId};
use dbsweep::study::DesignSpec;
use util::Dir;

mod util;

/// One finished point of `target` at 4 clients, repeat `repeat`, with
/// `tps`, released at `at_s` seconds, on `cpu`.
fn point(target: &str, repeat: u32, tps: f64, at_s: u64, cpu: &str) -> PointRow {
    let mut run = Run::sample();
    run.result.tps = tps;
    run.result.transactions = (tps * 10.0) as u64;
    run.released_unix_us = Some(1_700_000_000_000_000 + at_s * 1_000_000);
    run.machine = Machine {
        cpu_model: cpu.into(),
        cpus_online: 2,
        cpus_available: 2,
        memory_bytes: 1 << 30,
        kernel: "6.1".into(),
        ..Machine::default()
    };
    PointRow {
        key: format!("target={target}/variant=base/cpus=all/workload=0:oltp_point_select/clients=4/instances=1/repeat={repeat}"),
        target: target.into(),
        target_kind: "fake".into(),
        target_url: "fake://".into(),
        variant: "base".into(),
        variant_settings: Vec::new(),
        cpus: None,
        workload: "oltp_point_select".into(),
        workload_label: "oltp_point_select".into(),
        workload_options: Vec::new(),
        clients: 4,
        instances: 1,
        repeat,
        load_level: None,
        status: PointStatus::Finished,
        reason: None,
        run: Some(run),
        settings: Vec::new(),
        restart_s: None,
    }
}

/// A new study `p` in `dir`'s results.db, with a design of `order`
/// (baseline `a/base`, `control` the control's target) unless None: the
/// store and the study's id.
fn begin(dir: &Dir, design: Option<(&str, Option<&str>)>) -> (Store, StudyId) {
    let mut s = Store::create_or_open(&dir.join("results.db")).unwrap();
    let id = s
        .begin_study("p", "", "name = \"p\"\n", &Machine::default())
        .unwrap();
    if let Some((order, control)) = design {
        let design = DesignSpec {
            order: order.into(),
            baseline: ("a".into(), "base".into()),
            baselines: vec![],
            control: control.map(|c| (c.into(), "base".into())),
            equivalence: 0.02,
            seed: 1,
            sweep: None,
        };
        s.save_design(id, &serde_json::to_string(&design).unwrap())
            .unwrap();
    }
    (s, id)
}

/// A study of `series` (target, tps by block, time by block, cpu), stored
/// and read back as a report's data.
fn stored(
    dir: &Dir,
    order: &str,
    control: Option<&str>,
    series: &[(&str, &[f64], &[u64], &str)],
) -> StudyData {
    let path = dir.join("results.db");
    let (mut s, id) = begin(dir, Some((order, control)));
    for (target, tps, at, cpu) in series {
        for (k, (v, t)) in tps.iter().zip(*at).enumerate() {
            s.commit_point(id, &point(target, k as u32 + 1, *v, *t, cpu))
                .unwrap();
        }
    }
    drop(s);
    study::load(Path::new(&path), None).unwrap()
}

fn tps_at_4<'a>(r: &'a study::Report, series: &str) -> &'a study::paired::PairedComparison {
    r.paired
        .comparisons
        .iter()
        .find(|c| c.series == series && c.cell == "clients=4" && c.metric == "tps")
        .unwrap_or_else(|| panic!("{series}: {:?}", r.paired.comparisons))
}

const OPTS: Options = Options {
    metric: study::Metric::Tps,
    point: None,
};

/// The machine drifts from 1000 to 1400 tps over five blocks.
const DRIFT: [f64; 5] = [1000.0, 1100.0, 1200.0, 1300.0, 1400.0];

#[test]
fn a_server_against_itself_on_a_drifting_machine() {
    // Interleaved: each block runs both a second apart; they differ by a
    // few tenths of a percent, the blocks by 10 %.
    let dir = Dir::new();
    let b = [1003.0, 1097.0, 1204.0, 1297.0, 1402.0];
    let data = stored(
        &dir,
        "interleaved",
        None,
        &[
            ("a", &DRIFT, &[0, 60, 120, 180, 240], "cpu"),
            ("b", &b, &[1, 61, 121, 181, 241], "cpu"),
        ],
    );
    let r = study::analyze(&data, None, &OPTS);
    let c = tps_at_4(&r, "b");
    assert_eq!(c.verdict, Verdict::Equivalent, "{c:?}");
    assert_eq!(c.blocks, 5);
    let (lo, hi) = (c.ci_low.unwrap(), c.ci_high.unwrap());
    assert!(lo > 0.98 && hi < 1.02 && lo < 1.0 && hi > 1.0, "{c:?}");
    let text = r.conclusions.join("\n");
    assert!(
        text.contains("b and a: no difference in peak throughput within ±2 %"),
        "{text}"
    );
    assert!(!text.contains("best") && !text.contains("slower"), "{text}");
    // The drift: 40 % between blocks, pairing left 0.7 %.
    let d = &r.paired.drift[0];
    assert!((d.drift_pct - 40.0).abs() < 1e-9, "{d:?}");
    assert!(d.paired_spread_pct.unwrap() < 1.0, "{d:?}");

    // Sequential: b ran after a, on the drifted half of the day.
    let dir = Dir::new();
    let later = [1500.0, 1600.0, 1700.0, 1800.0, 1900.0];
    let data = stored(
        &dir,
        "sequential",
        None,
        &[
            ("a", &DRIFT, &[0, 10, 20, 30, 40], "cpu"),
            ("b", &later, &[300, 310, 320, 330, 340], "cpu"),
        ],
    );
    let r = study::analyze(&data, None, &OPTS);
    let c = tps_at_4(&r, "b");
    assert_eq!(c.verdict, Verdict::Better, "{c:?}");
    let text = r.conclusions.join("\n");
    assert!(text.contains("measured one after another"), "{text}");
}

#[test]
fn a_real_difference_under_the_same_drift_is_decided() {
    // b is 15 % slower in every block, within ±1 %.
    let dir = Dir::new();
    let b: Vec<f64> = DRIFT
        .iter()
        .zip([0.85, 0.86, 0.84, 0.85, 0.855])
        .map(|(a, f)| a * f)
        .collect();
    let data = stored(
        &dir,
        "interleaved",
        None,
        &[
            ("a", &DRIFT, &[0, 60, 120, 180, 240], "cpu"),
            ("b", &b, &[1, 61, 121, 181, 241], "cpu"),
        ],
    );
    let r = study::analyze(&data, None, &OPTS);
    let c = tps_at_4(&r, "b");
    assert_eq!(c.verdict, Verdict::Worse, "{c:?}");
    assert!((c.ratio.unwrap() - 0.851).abs() < 0.002, "{c:?}");
    let text = r.conclusions.join("\n");
    assert!(
        text.contains("b has lower peak throughput than a: −14.9 %"),
        "{text}"
    );
    // The document marks it, and says how it was measured.
    let doc = study::document(&data, &r);
    let s = doc
        .sections
        .iter()
        .find(|s| s.title == "Comparisons")
        .unwrap();
    let dbsweep::report::doc::Block::Paragraph(first) = &s.blocks[0] else {
        panic!()
    };
    assert!(
        first.starts_with("Interleaved: every block ran each series once"),
        "{first}"
    );
}

#[test]
fn a_control_that_differs_from_itself_fails_the_design() {
    let dir = Dir::new();
    // "a (again)" always runs second and always gains 5 %: an order
    // effect, not a server.
    let again: Vec<f64> = DRIFT.iter().map(|x| x * 1.05).collect();
    let data = stored(
        &dir,
        "interleaved",
        Some("a"),
        &[
            ("a", &DRIFT, &[0, 60, 120, 180, 240], "cpu"),
            ("a (again)", &again, &[1, 61, 121, 181, 241], "cpu"),
            ("b", &DRIFT, &[2, 62, 122, 182, 242], "cpu"),
        ],
    );
    let r = study::analyze(&data, None, &OPTS);
    let floor = r.paired.noise_floor.as_ref().unwrap();
    assert_eq!(
        (floor.series.as_str(), floor.again.as_str()),
        ("a", "a (again)")
    );
    assert_eq!(floor.failed_at.len(), 2, "the cell and the peak: {floor:?}");
    // Both of two differing is 1 in 400 by chance: failed.
    assert_eq!(floor.tested, 2);
    assert!((floor.by_chance - 0.0025).abs() < 1e-12, "{floor:?}");
    assert!(floor.failed);
    assert!(
        r.conclusions[0].starts_with(
            "The design has failed: a measured twice in every block came out different from itself"
        ),
        "{}",
        r.conclusions[0]
    );
    // The twin is compared with its original, not with the baseline.
    assert_eq!(tps_at_4(&r, "a (again)").baseline, "a");
}

#[test]
fn points_of_two_machines_are_never_paired() {
    let dir = Dir::new();
    let data = stored(
        &dir,
        "interleaved",
        None,
        &[
            ("a", &DRIFT, &[0, 60, 120, 180, 240], "Intel Xeon"),
            ("b", &DRIFT, &[1, 61, 121, 181, 241], "AMD EPYC"),
        ],
    );
    let r = study::analyze(&data, None, &OPTS);
    assert_eq!(tps_at_4(&r, "b").verdict, Verdict::DifferentMachines);
    assert_eq!(r.paired.machines.len(), 2);
    let text = r.conclusions.join("\n");
    assert!(
        text.contains("measured on different machines: not compared"),
        "{text}"
    );
    let doc = study::document(&data, &r);
    let s = doc
        .sections
        .iter()
        .find(|s| s.title == "Comparisons")
        .unwrap();
    assert!(
        s.blocks.iter().any(
            |b| matches!(b, dbsweep::report::doc::Block::Note(n) if n.contains("ran on 2 machines"))
        ),
        "{:?}",
        s.blocks
    );
}

#[test]
fn a_point_a_stop_rule_skipped_leaves_its_block_its_peak() {
    // Two series at 4 and 256 clients over three blocks; in block 2 the
    // collapse rule skipped b at 256 (below 30 % of its peak), in block 3
    // b's 256 point is missing altogether (not run). The whole-curve
    // comparison pairs blocks 1 and 2 — b's peak in block 2 is its 4-client
    // point — and leaves block 3 out, where the missing point could have
    // been the peak.
    let dir = Dir::new();
    let path = dir.join("results.db");
    let (mut s, id) = begin(&dir, None);
    let at_256 = |mut p: PointRow| {
        p.key = p.key.replace("clients=4", "clients=256");
        p.clients = 256;
        p
    };
    for k in 1..=3u32 {
        let t = u64::from(k) * 60;
        s.commit_point(id, &point("a", k, 1000.0, t, "cpu"))
            .unwrap();
        s.commit_point(id, &at_256(point("a", k, 400.0, t + 1, "cpu")))
            .unwrap();
        s.commit_point(id, &point("b", k, 1100.0, t + 2, "cpu"))
            .unwrap();
        match k {
            1 => s
                .commit_point(id, &at_256(point("b", k, 300.0, t + 3, "cpu")))
                .unwrap(),
            2 => {
                let mut p = at_256(point("b", k, 0.0, t + 3, "cpu"));
                p.status = PointStatus::Skipped;
                p.reason = Some("stopped: below 30 % of the peak".into());
                p.run = None;
                s.commit_point(id, &p).unwrap();
            }
            _ => {}
        }
    }
    drop(s);
    let data = study::load(Path::new(&path), None).unwrap();
    let r = study::analyze(&data, None, &OPTS);
    let peak = r
        .paired
        .comparisons
        .iter()
        .find(|c| c.series == "b" && c.cell == "peak")
        .unwrap_or_else(|| panic!("{:?}", r.paired.comparisons));
    assert_eq!(peak.blocks, 2, "{peak:?}");
    assert!((peak.ratio.unwrap() - 1.1).abs() < 1e-9, "{peak:?}");
}

#[test]
fn variants_measured_only_at_offered_loads_are_compared_as_series() {
    // One target, two variants, each measured at a level of 32 users (a
    // closed loop, with think time offering a load as DBT-1's does) and at
    // an offered rate, over four blocks. At the users level the throughput
    // is the server's answer and is compared; at the rate it is the rate
    // and is not.
    let dir = Dir::new();
    let path = dir.join("results.db");
    let (mut s, id) = begin(&dir, Some(("interleaved", None)));
    let at = |variant: &str, level: &str, k: u32, tps: f64, t: u64| {
        let mut p = point("a", k, tps, t, "cpu");
        p.variant = variant.into();
        p.load_level = Some(level.into());
        p.key = p
            .key
            .replace("variant=base", &format!("variant={variant}"))
            .replace("/repeat=", &format!("/level={level}/repeat="));
        let run = p.run.as_mut().unwrap();
        // A p95 that tracks the throughput's ratio, so every level has a
        // latency to compare.
        run.result.latency = Some(dbsweep::record::Latency {
            count: 10,
            min_us: 1.0,
            avg_us: 2.0,
            max_us: 1e6,
            sum_us: 20.0,
            percentiles: vec![dbsweep::record::Percentile {
                p: 95.0,
                us: 1e6 / tps,
            }],
        });
        // Both offer a load: the rate, and the users through their think
        // time (DBT-1's), which the server may not keep up with.
        let rate = level.starts_with("rate");
        run.result.pacing = Some(dbsweep::record::PacingOutcome {
            offered: Some(1000),
            offered_per_s: Some(if rate { 100.0 } else { 400.0 }),
            achieved_per_s: tps,
            late: None,
            skipped: None,
            unstarted: None,
            service: None,
            lag: None,
            setup_s: None,
        });
        p
    };
    for k in 1..=4u32 {
        let t = u64::from(k) * 60;
        let drift = 1.0 + 0.1 * f64::from(k);
        s.commit_point(id, &at("base", "users=32", k, 300.0 * drift, t))
            .unwrap();
        s.commit_point(id, &at("x", "users=32", k, 240.0 * drift, t + 1))
            .unwrap();
        s.commit_point(id, &at("base", "rate=100", k, 100.0, t + 2))
            .unwrap();
        s.commit_point(id, &at("x", "rate=100", k, 100.0, t + 3))
            .unwrap();
    }
    drop(s);
    let data = study::load(Path::new(&path), None).unwrap();
    assert!(data.points.is_empty() && data.paced.len() == 16);
    let r = study::analyze(&data, None, &OPTS);
    let c = &r.paired.comparisons;
    let users = c
        .iter()
        .find(|c| c.series == "a / x" && c.metric == "tps" && c.cell.starts_with("users=32"))
        .unwrap_or_else(|| panic!("{c:?}"));
    assert_eq!(users.baseline, "a / base");
    assert_eq!(users.blocks, 4);
    assert!((users.ratio.unwrap() - 0.8).abs() < 1e-9, "{users:?}");
    assert_eq!(users.verdict, Verdict::Worse);
    assert!(
        !c.iter()
            .any(|c| c.metric == "tps" && c.cell.starts_with("rate=100")),
        "{c:?}"
    );
    assert!(
        c.iter()
            .any(|c| c.metric == "p95" && c.cell.starts_with("rate=100")),
        "{c:?}"
    );
}
