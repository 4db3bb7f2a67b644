//! A point's time series goes to its series file as it runs and its
//! record reads it back from there (`record::series`): the same JSON as a
//! record holding every entry in memory, every interval's percentiles
//! already in place, a line cut short by a kill ignored, and the file
//! removed once it has served (or kept, when asked, for a run that did not
//! finish).

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::point::{self, Point};
use super::tests::{config, TestWorkload};
use super::*;
use crate::driver::Target;
use crate::rand::dist::{DistKind, DistParams};
use crate::rand::RandConfig;
use crate::record;
use crate::workload::Workload;

fn execute(series: Option<std::path::PathBuf>) -> record::Run {
    let target = Target::parse("fake://?latency=200us").unwrap();
    let w = TestWorkload::new();
    let instances: [&dyn Workload; 1] = [&w];
    let cfg = RunConfig {
        time: Some(Duration::from_millis(600)),
        report_interval: Some(Duration::from_millis(50)),
        ..config(2)
    };
    let rand = RandConfig {
        kind: DistKind::Uniform,
        params: DistParams::default(),
        seed: 1,
    };
    let percentiles = [50.0, 95.0];
    let mut p = Point::new(&target, &instances, &cfg, rand, &percentiles);
    p.metrics = Some(point::Metrics {
        interval: Duration::from_millis(100),
        server: point::ServerRef::Embedded,
        profile: None,
    });
    p.series = series;
    point::execute(&p, &AtomicBool::new(false), &mut |_| {}).unwrap()
}

#[test]
fn intervals_and_samples_go_to_the_series_file_and_read_back_as_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.series.jsonl.gz");
    let run = execute(Some(path.clone()));
    let intervals = &run.result.intervals;
    assert!(intervals.len() >= 8, "{} intervals", intervals.len());
    assert_eq!(intervals.file().unwrap().path(), path);
    let samples = &run.result.metrics.as_ref().unwrap().samples;
    assert!(samples.len() >= 3, "{} samples", samples.len());
    assert!(samples.file().is_some());
    // Every interval went out complete: its percentiles read from its
    // histogram, its transactions adding up to the run's.
    let all = intervals.to_vec();
    assert!(all
        .iter()
        .all(|i| i.histogram.as_ref().unwrap().count == 0 || i.p95_us.is_some()));
    let sum: u64 = all.iter().map(|i| i.transactions).sum();
    assert_eq!(sum, run.result.transactions);
    // The file on its own: its header names the run, its entries are the
    // record's.
    let (header, from_file, samples_from_file) = record::spool::read_file(&path).unwrap();
    assert_eq!(header.workload.name, run.workload.name);
    assert_eq!(header.run.threads, 2);
    assert_eq!(from_file, all);
    assert_eq!(samples_from_file.len(), samples.len());
    // Serialized, the record is the one it would be with its series in memory.
    let mut loaded = run.clone();
    loaded.result.intervals.load();
    loaded.result.metrics.as_mut().unwrap().samples.load();
    assert!(loaded.result.intervals.file().is_none());
    assert_eq!(
        serde_json::to_value(&run).unwrap(),
        serde_json::to_value(&loaded).unwrap()
    );
    // A file cut anywhere (a kill mid-write: no gzip trailer, a line cut
    // short) reads up to its last whole line.
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[..2], &[0x1f, 0x8b], "the lines go through gzip");
    let cut_path = dir.path().join("cut.series.jsonl.gz");
    let mut longest = 0;
    for drop in [8, 9, 20, 100, bytes.len() / 2] {
        std::fs::write(&cut_path, &bytes[..bytes.len() - drop]).unwrap();
        let (_, cut, _) = record::spool::read_file(&cut_path).unwrap();
        assert_eq!(cut[..], all[..cut.len()], "cut {drop} bytes short");
        longest = longest.max(cut.len());
    }
    // Without only its trailer, every line is there (each was flushed).
    assert_eq!(longest, all.len());
    // Kept while asked to, removed once it has served.
    drop(loaded);
    let file = run.result.intervals.file().unwrap().clone();
    drop(run);
    assert!(path.exists());
    file.remove_when_dropped(true);
    drop(file);
    assert!(!path.exists());
}

#[test]
fn without_a_place_for_it_the_series_file_is_temporary() {
    let run = execute(None);
    let path = run.result.intervals.file().unwrap().path().to_path_buf();
    assert!(path.exists());
    assert!(run.result.intervals.len() >= 8);
    drop(run);
    assert!(!path.exists(), "{} left behind", path.display());
}
