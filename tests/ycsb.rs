//! YCSB end to end on SQLite through the real binary (prepare, run of each
//! core workload, cleanup; operations by type in the record), and YCSB's
//! request distributions checked against YCSB's own generators: draws
//! from YCSB 0.17.0's core jar (Maven Central, run with the JDK) and from
//! dbsweep's have the same shape by a two-sample Kolmogorov–Smirnov test.

mod util;

use std::path::PathBuf;
use std::process::Command;

use dbsweep::rand::ycsb::{Hotspot, ScrambledZipfian, SkewedLatest, Zipfian, ZIPFIAN_CONSTANT};
use dbsweep::rand::Rng;
use util::{dbsweep, read_json, Dir};

const ITEMS: i64 = 1000;
const DRAWS: usize = 100_000;

/// YCSB's generators, `DRAWS` draws each over items 0..999, one line per
/// generator: its name, then the draws.
const GENERATORS_JAVA: &str = r#"
import site.ycsb.generator.*;
public class Gen {
  static void out(String name, NumberGenerator g, int n) {
    StringBuilder sb = new StringBuilder(name);
    for (int i = 0; i < n; i++) { sb.append(' ').append(g.nextValue().longValue()); }
    System.out.println(sb);
  }
  public static void main(String[] a) {
    int n = Integer.parseInt(a[0]);
    out("scrambled", new ScrambledZipfianGenerator(0, 999), n);
    out("zipfian", new ZipfianGenerator(0, 999), n);
    out("latest", new SkewedLatestGenerator(new CounterGenerator(1000)), n);
    out("hotspot", new HotspotIntegerGenerator(0, 999, 0.2, 0.8), n);
  }
}
"#;

/// YCSB's core jar from the local Maven repository, fetched with `mvn`
/// if it is not there; None (with the reason) where neither works.
fn ycsb_jar() -> Result<PathBuf, String> {
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let jar = PathBuf::from(home).join(".m2/repository/site/ycsb/core/0.17.0/core-0.17.0.jar");
    if !jar.exists() {
        let got = Command::new("mvn")
            .args(["-q", "dependency:get", "-Dartifact=site.ycsb:core:0.17.0"])
            .output()
            .map_err(|e| format!("mvn: {e}"))?;
        if !got.status.success() || !jar.exists() {
            return Err("mvn could not fetch site.ycsb:core:0.17.0".into());
        }
    }
    Ok(jar)
}

/// Each YCSB generator's draws, by name.
fn ycsb_draws(dir: &Dir) -> Result<Vec<(String, Vec<i64>)>, String> {
    if Command::new("java").arg("-version").output().is_err() {
        return Err("no java".into());
    }
    let jar = ycsb_jar()?;
    let src = dir.join("Gen.java");
    std::fs::write(&src, GENERATORS_JAVA).unwrap();
    let out = Command::new("java")
        .arg("-cp")
        .arg(&jar)
        .arg(&src)
        .arg(DRAWS.to_string())
        .output()
        .map_err(|e| format!("java: {e}"))?;
    assert!(
        out.status.success(),
        "YCSB's generators failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let mut it = l.split(' ');
            let name = it.next().unwrap().to_string();
            (name, it.map(|v| v.parse().unwrap()).collect())
        })
        .collect())
}

/// The two-sample Kolmogorov–Smirnov distance of two samples of 0..ITEMS.
fn ks(a: &[i64], b: &[i64]) -> f64 {
    let cdf = |s: &[i64]| {
        let mut counts = vec![0f64; ITEMS as usize + 1];
        for &v in s {
            assert!((0..=ITEMS).contains(&v), "{v}");
            counts[v as usize] += 1.0;
        }
        let mut acc = 0.0;
        counts
            .iter()
            .map(|c| {
                acc += c / s.len() as f64;
                acc
            })
            .collect::<Vec<_>>()
    };
    let (fa, fb) = (cdf(a), cdf(b));
    fa.iter()
        .zip(&fb)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

fn ours(name: &str, rng: &mut Rng) -> Vec<i64> {
    match name {
        "scrambled" => {
            let mut g = ScrambledZipfian::new(0, ITEMS - 1);
            (0..DRAWS).map(|_| g.next(rng)).collect()
        }
        "zipfian" => {
            let mut g = Zipfian::new(0, ITEMS - 1, ZIPFIAN_CONSTANT);
            (0..DRAWS).map(|_| g.next(rng)).collect()
        }
        "latest" => {
            let mut g = SkewedLatest::new(ITEMS - 1);
            (0..DRAWS).map(|_| g.next(ITEMS - 1, rng)).collect()
        }
        "hotspot" => {
            let mut g = Hotspot::new(0, ITEMS - 1, 0.2, 0.8);
            (0..DRAWS).map(|_| g.next(rng)).collect()
        }
        other => panic!("no generator {other}"),
    }
}

#[test]
fn request_distributions_have_ycsbs_shape() {
    let dir = Dir::new();
    let theirs = match ycsb_draws(&dir) {
        Ok(d) => d,
        Err(why) => {
            eprintln!("skipped: YCSB's generators cannot run here ({why})");
            return;
        }
    };
    assert_eq!(theirs.len(), 4);
    // The critical distance at α = 0.001 for two samples of DRAWS each.
    let critical = 1.949 * (2.0 / DRAWS as f64).sqrt();
    let mut rng = Rng::new(2026);
    for (name, draws) in &theirs {
        assert_eq!(draws.len(), DRAWS, "{name}");
        let d = ks(draws, &ours(name, &mut rng));
        eprintln!("{name}: KS distance {d:.4} (critical {critical:.4})");
        assert!(d < critical, "{name}: KS distance {d:.4} ≥ {critical:.4}");
    }
    // The test tells distributions apart: the scrambled zipfian is not
    // the plain one, nor the hotspot the latest.
    let by = |n: &str| &theirs.iter().find(|(m, _)| m == n).unwrap().1;
    assert!(ks(by("scrambled"), &ours("zipfian", &mut rng)) > 10.0 * critical);
    assert!(ks(by("hotspot"), &ours("latest", &mut rng)) > 10.0 * critical);
}

/// prepare → run → cleanup of one core workload on SQLite; the run's JSON.
fn cycle(dir: &Dir, letter: &str, extra: &[&str]) -> serde_json::Value {
    let db = dir.sqlite_url(&format!("{letter}.db"));
    let json = dir.join(&format!("{letter}.json")).display().to_string();
    let mut common = vec!["--db", &db, "--workload", letter, "--recordcount", "300"];
    common.extend_from_slice(extra);
    let with = |verb: &str, more: &[&str]| {
        let mut a = vec![verb, "ycsb"];
        a.extend_from_slice(&common);
        a.extend_from_slice(more);
        dbsweep(&a).ok();
    };
    with("prepare", &[]);
    with(
        "run",
        &["--events", "1000", "--json", &json, "--threads", "2"],
    );
    with("cleanup", &[]);
    read_json(std::path::Path::new(&json))
}

/// Operations by type in the record: (name, count).
fn by_type(doc: &serde_json::Value) -> Vec<(String, u64)> {
    doc["result"]["transaction_types"]
        .as_array()
        .unwrap_or_else(|| panic!("no types: {}", doc["result"]))
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn every_core_workload_runs_on_sqlite_with_its_operations_counted() {
    let dir = Dir::new();
    for (letter, names) in [
        ("a", &["READ", "UPDATE"][..]),
        ("c", &["READ"][..]),
        ("d", &["READ", "INSERT"][..]),
        ("e", &["INSERT", "SCAN"][..]),
        ("f", &["READ", "READ-MODIFY-WRITE"][..]),
    ] {
        let doc = cycle(&dir, letter, &[]);
        assert_eq!(doc["result"]["transactions"], 1000, "{letter}");
        assert_eq!(doc["workload"]["options"]["workload"], letter, "{letter}");
        let types = by_type(&doc);
        let got: Vec<&str> = types.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(got, names, "{letter}");
        assert_eq!(types.iter().map(|t| t.1).sum::<u64>(), 1000, "{letter}");
        // No operation failed: every key asked for was there or inserted.
        let total = util::record::errors_total(&doc["result"]);
        assert_eq!(total, 0, "{letter}: {}", doc["result"]["errors"]);
    }
}
