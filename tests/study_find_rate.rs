//! A study's `rates = "find"`: in every block each series searches for
//! the highest rate that holds its p99 goal — a closed-loop calibration
//! point, then probes bisecting from its peak, replayed from the stored
//! points — and the report pairs the blocks' answers. A server eight
//! times as slow sustains a fraction of the rate, and the comparison says so; bad
//! searches exit 2 with the fix.

mod util;

use std::collections::BTreeMap;

use util::{dbsweep_in, Dir};

fn write(dir: &Dir, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// Two fake servers, one answering in 250 µs and one in 2 ms, on 2
/// connections: about 8,000 and 1,000 a second at most (the gap wide
/// enough that a busy machine, which slows the fast one most, keeps it). The goal (10 ms)
/// is far above what a rate well below capacity costs; at capacity the
/// random arrivals' backlog over a second passes it, so the searches
/// bisect.
const STUDY: &str = r#"
name = "find"
out = "out"
clients = [2]
# Five blocks: a busy machine scatters the fast server's answers, and
# with three the interval (t = 4.3) may then decide nothing.
repeats = 5

[[target]]
name = "fast"
url = "fake://?latency=250us"

[[target]]
name = "slow"
url = "fake://?latency=2ms"

[[workload]]
name = "oltp_point_select"
rates = "find within 10%"
p99_goal = "10ms"
time = 1
"#;

/// Per (target, block): the calibration's tps and each probe's
/// (number, intended rate, status), as stored.
type Searches = BTreeMap<(String, u32), (f64, Vec<(u32, Option<f64>, String)>)>;

fn stored(dir: &Dir) -> Searches {
    let conn = rusqlite::Connection::open(dir.join("out/results.db")).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT target, repeat, load_level, status, tps, json_extract(result_json, '$.run.pacing.rate') FROM point ORDER BY id",
        )
        .unwrap();
    type Row = (
        String,
        u32,
        Option<String>,
        String,
        Option<f64>,
        Option<f64>,
    );
    let rows: Vec<Row> = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut out = Searches::new();
    for (target, block, level, status, tps, rate) in rows {
        let e = out.entry((target, block)).or_default();
        match level {
            None => e.0 = tps.unwrap(),
            Some(l) => {
                let n = l.strip_prefix("probe=").unwrap().parse().unwrap();
                e.1.push((n, rate, status));
            }
        }
    }
    out
}

#[test]
fn each_block_searches_and_the_report_pairs_the_answers() {
    let dir = Dir::new();
    let file = write(&dir, "find.toml", STUDY);
    let dry = dbsweep_in(dir.path(), &["study", &file, "--dry-run"]);
    dry.ok();
    // 2 series × 5 blocks × (1 calibration + at most 6 probes at 10 %).
    assert!(dry.stdout.contains("points: 70"), "{}", dry.stdout);
    let r = dbsweep_in(dir.path(), &["study", &file]);
    r.ok();
    assert!(
        r.stderr.contains("not needed, the search has its answer"),
        "{}",
        r.stderr
    );

    let searches = stored(&dir);
    assert_eq!(searches.len(), 10, "{searches:?}");
    for ((target, block), (peak, probes)) in &searches {
        let what = format!("{target} block {block}: peak {peak}, probes {probes:?}");
        assert!(!probes.is_empty() && probes.len() <= 6, "{what}");
        // The probes a search needed, in order, and no others.
        for (i, (n, rate, status)) in probes.iter().enumerate() {
            assert_eq!(*n as usize, i + 1, "{what}");
            assert_eq!(status, "finished", "{what}");
            assert!(rate.is_some(), "{what}");
        }
        // The peak first; then each rate halfway between the highest that
        // held and the lowest that failed so far: strictly inside them.
        assert_eq!(probes[0].1, Some(peak.round()), "{what}");
        for w in probes.windows(2) {
            assert_ne!(w[0].1, w[1].1, "{what}");
        }
    }

    let json = dir.join("report.json");
    dbsweep_in(
        dir.path(),
        &[
            "report",
            "out",
            "--format",
            "json",
            "--out",
            json.to_str().unwrap(),
        ],
    )
    .ok();
    let doc = util::read_json(&json);
    // The JSON is what schema/report.schema.json says.
    util::assert_valid_report_json(&doc);
    let panel = &doc["searched"][0];
    assert_eq!(panel["p99_goal_ms"].as_f64(), Some(10.0), "{panel}");
    let held = |name: &str| {
        let s = panel["series"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["series"] == name)
            .unwrap_or_else(|| panic!("no {name} in {panel}"));
        for b in s["blocks"].as_array().unwrap() {
            let (held, peak) = (b["held_per_s"].as_f64(), b["peak_per_s"].as_f64().unwrap());
            // Stored probes are the report's: their count, and an answer
            // at most the peak.
            let key = (name.to_string(), b["block"].as_u64().unwrap() as u32);
            assert_eq!(
                b["probes"].as_u64().unwrap() as usize,
                searches[&key].1.len()
            );
            assert!(held.is_none_or(|h| h <= peak), "{b}");
        }
        s["held_mean_per_s"].as_f64().unwrap()
    };
    let (fast, slow) = (held("fast"), held("slow"));
    assert!(slow < fast * 0.8, "slow {slow} against fast {fast}");
    let c = doc["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == "sustained_rate")
        .unwrap_or_else(|| panic!("{}", doc["comparisons"]));
    assert_eq!(c["series"], "slow");
    assert_eq!(c["baseline"], "fast");
    assert_eq!(c["cell"], "find at clients=2");
    assert_eq!(c["blocks"], 5);
    assert_eq!(c["verdict"], "worse", "{c}");
    // No comparison pairs the probes rate by rate: each series probes its own.
    assert!(!doc["comparisons"].to_string().contains("probe="));

    let md = dir.join("report.md");
    dbsweep_in(
        dir.path(),
        &[
            "report",
            "out",
            "--format",
            "md",
            "--out",
            md.to_str().unwrap(),
        ],
    )
    .ok();
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.contains("highest sustained rate"), "{text}");
    assert!(
        text.contains("slow has lower sustainable rate at 2 connections than fast"),
        "{text}"
    );
}

#[test]
fn bad_searches_exit_2_with_the_fix() {
    let dir = Dir::new();
    for (rates, goal, words) in [
        ("\"find\"", "", "give p99_goal too"),
        (
            "[\"find\", 1000]",
            "p99_goal = \"10ms\"",
            "the whole load axis",
        ),
        ("\"find within 0%\"", "p99_goal = \"10ms\"", "above 0"),
        ("\"find 5%\"", "p99_goal = \"10ms\"", "find within P%"),
    ] {
        let study = format!(
            "name = \"bad\"\nclients = [2]\n[[target]]\nname = \"f\"\nurl = \"fake://\"\n[[workload]]\nname = \"oltp_point_select\"\nrates = {rates}\n{goal}\n"
        );
        let file = write(&dir, "bad.toml", &study);
        let r = dbsweep_in(dir.path(), &["study", &file, "--dry-run"]);
        r.expect_status(2);
        assert!(r.stderr.contains(words), "{rates}: {}", r.stderr);
        assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    }
    assert!(!dir.join("results").exists());
}
