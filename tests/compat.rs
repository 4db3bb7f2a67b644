//! Files written by dbsweep 0.1.0 (tests/fixtures/v0.1: a run file, a
//! results database, and what that version printed and rendered from
//! them) load with the current code and render the same, byte for byte
//! (but for the changes made on purpose since, each undone by name).

mod util;

use std::path::{Path, PathBuf};

use serde_json::Value;

use util::{dbsweep_in, Dir};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/v0.1")
        .join(name)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Asserts two texts are equal, showing the first differing line.
fn assert_same(what: &str, got: &str, want: &str) {
    if got != want {
        let (n, (g, w)) = got
            .lines()
            .zip(want.lines())
            .enumerate()
            .find(|(_, (g, w))| g != w)
            .unwrap_or((
                got.lines().count().min(want.lines().count()),
                ("(end)", "(end)"),
            ));
        panic!(
            "{what} differs from what 0.1.0 wrote, first at line {}:\n  now:    {g}\n  0.1.0:  {w}\n({} vs {} bytes)",
            n + 1,
            got.len(),
            want.len()
        );
    }
}

/// `got` and `want` with one change made on purpose since 0.1.0 undone:
/// a chart title that ran past the chart's right edge (cut there) is now
/// wrapped, moving the plot down a line per line. In each chart of `got`
/// with a wrapped title, and its counterpart in `want`, the title element
/// is left out and every number inside a tag masked (one `#`), so the charts'
/// elements, labels and data still compare; every other chart compares as
/// it is.
fn wrapped_titles_masked(got: &str, want: &str) -> (String, String) {
    fn charts(s: &str) -> Vec<&str> {
        let mut out = Vec::new();
        let mut rest = s;
        while let Some(i) = rest.find("<svg") {
            let j = rest[i..].find("</svg>").map_or(rest.len(), |j| i + j + 6);
            out.push(&rest[..i]);
            out.push(&rest[i..j]);
            rest = &rest[j..];
        }
        out.push(rest);
        out
    }
    fn masked(chart: &str) -> String {
        let mut s = chart.to_string();
        if let Some(i) = s.find("<text class=\"title\"") {
            let j = i + s[i..].find("</text>").unwrap() + "</text>".len();
            s.replace_range(i..j, "");
        }
        let mut out = String::new();
        let mut in_tag = false;
        for c in s.chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                _ => {}
            }
            if in_tag && (c.is_ascii_digit() || c == '.') {
                // A number of any length is one mark.
                if !out.ends_with('#') {
                    out.push('#');
                }
            } else {
                out.push(c);
            }
        }
        out
    }
    let (g, w) = (charts(got), charts(want));
    if g.len() != w.len() {
        return (got.to_string(), want.to_string());
    }
    let (mut a, mut b) = (String::new(), String::new());
    for (x, y) in g.iter().zip(&w) {
        if x.starts_with("<svg") && x.contains("<tspan") {
            a.push_str(&masked(x));
            b.push_str(&masked(y));
        } else {
            a.push_str(x);
            b.push_str(y);
        }
    }
    (a, b)
}

#[test]
fn a_version_1_run_file_renders_the_report_its_run_printed() {
    let dir = Dir::new();
    std::fs::copy(fixture("run.json"), dir.join("run.json")).unwrap();
    let r = dbsweep_in(dir.path(), &["report", "run.json", "--format", "text"]);
    r.ok();
    // What `dbsweep run` printed after its preamble and interval lines.
    let printed = read(&fixture("run.txt"));
    let summary = &printed[printed.find("SQL statistics:").unwrap()..];
    assert_same("the text report of run.json", &r.stdout, summary);

    // As JSON it is the same document.
    let r = dbsweep_in(
        dir.path(),
        &["report", "run.json", "--format", "json", "--out", "-"],
    );
    r.ok();
    let mut now: Value = serde_json::from_str(&r.stdout).unwrap();
    let then: Value = serde_json::from_str(&read(&fixture("run.json"))).unwrap();
    // The error kind `timeout` came later: an older record has none.
    let errors = now["result"]["errors"].as_object_mut().unwrap();
    assert_eq!(errors.remove("timeout"), Some(Value::from(0)));
    assert_eq!(now, then);

    // The HTML report has everything but the latency distribution, which
    // needs the histograms version 1 did not write; it says so.
    let r = dbsweep_in(
        dir.path(),
        &[
            "report", "run.json", "--format", "html", "--out", "run.html",
        ],
    );
    r.ok();
    let html = read(&dir.join("run.html"));
    assert!(html.contains("no latency histograms"), "{html}");
    for fact in ["oltp_read_write", "SQLite 3.46.0", "2265.59"] {
        assert!(html.contains(fact), "{fact} missing");
    }

    // As Markdown too: the same document, each chart a file beside it.
    let r = dbsweep_in(
        dir.path(),
        &["report", "run.json", "--format", "md", "--out", "run.md"],
    );
    r.ok();
    let md = read(&dir.join("run.md"));
    for fact in ["# oltp_read_write", "SQLite 3.46.0", "2265.59"] {
        assert!(md.contains(fact), "{fact} missing:\n{md}");
    }
    let charts: Vec<&str> = md
        .lines()
        .filter_map(|l| l.strip_prefix("![")?.split("](").nth(1)?.strip_suffix(')'))
        .collect();
    assert!(!charts.is_empty(), "no chart in:\n{md}");
    for c in charts {
        assert!(c.starts_with("run-"), "{c}");
        assert!(read(&dir.join(c)).starts_with("<svg"), "{c} is not an SVG");
    }
}

/// What 0.1.0 rendered, with the changes made on purpose since: 0.1.0
/// said it did not record server CPU; now it is recorded, and a report of
/// runs without it says so of the runs.
///
/// Since results database version 3, the report's JSON has the study's
/// offered-load sweeps (`offered`, empty here) and each point its
/// `load_level` (null: a closed loop).
///
/// The HTML stylesheet has a rule for prose tables (a reproduction's
/// words and deviations).
///
/// The report names each target's server: the JSON's `study.servers` and
/// the CSV's `server` records (SQLite has a version, no release and no
/// program of its own).
///
/// The CSV has a `shard` column after `repeat` (a coordinated point's
/// shards' lines), empty on every line here.
/// The study report's JSON without what the paired comparisons added
/// (checked here for what a database without a stored design gives: one
/// series, nothing compared, no order, no point times), in the writer's
/// layout, so the rest compares byte for byte.
fn without_comparisons(json: &str) -> String {
    let mut doc: Value = serde_json::from_str(json).unwrap();
    let o = doc.as_object_mut().unwrap();
    assert_eq!(o.remove("comparisons").unwrap(), serde_json::json!([]));
    assert_eq!(o.remove("order").unwrap(), Value::Null);
    assert_eq!(o.remove("noise_floor").unwrap(), Value::Null);
    assert_eq!(o.remove("latency_noise_floor").unwrap(), Value::Null);
    assert_eq!(o.remove("equivalence").unwrap(), 0.02);
    let machines = o.remove("machines").unwrap();
    assert_eq!(machines[0]["machine"], MACHINE, "{machines}");
    assert!(o.remove("drift").unwrap().is_array());
    for p in o["points"].as_array_mut().unwrap() {
        let p = p.as_object_mut().unwrap();
        for key in ["started_unix_us", "ended_unix_us", "restart_s"] {
            assert_eq!(p.remove(key).unwrap(), Value::Null, "{key}");
        }
        assert_eq!(p.remove("machine").unwrap(), MACHINE);
    }
    let mut out = serde_json::to_string_pretty(&doc).unwrap();
    out.push('\n');
    out
}

/// The machine the fixture's runs recorded in their headers.
const MACHINE: &str = "AMD EPYC; 2 CPUs; 23.5 GiB; 6.18.44-fc-v782";

fn intended(then: &str) -> String {
    let then = then.replace(
        "Server CPU is not recorded by this version.",
        "Server CPU was not recorded for these runs (--metrics off, or an earlier dbsweep).",
    );
    // A sag is said only where the blocks' interval decides it; these two
    // repeats of 2 clients against 1 do not. (The new sentence has a
    // comma, so CSV quotes its line.)
    let then = then.replace(
        ",oltp_point_select table-size=2000 tables=1: It peaks at 269088.22 tps with 1 client and sags 20.38 % by 2 clients (214258.86 tps).\n",
        ",\"oltp_point_select table-size=2000 tables=1: It peaks at 269088.22 tps with 1 client; at 2 clients it stays within the noise of its peak (ratio 0.796, interval 0.555–1.142).\"\n",
    );
    let then = then.replace(
        "It peaks at 269088.22 tps with 1 client and sags 20.38 % by 2 clients (214258.86 tps).",
        "It peaks at 269088.22 tps with 1 client; at 2 clients it stays within the noise of its peak (ratio 0.796, interval 0.555–1.142).",
    );
    let csv = then.starts_with("record,panel,");
    let mut out = String::new();
    for line in then.split_inclusive('\n') {
        if csv {
            out.push_str(&with_shard_column(line));
            // Each finished point now names the machine it ran on (from
            // its run's header) after its last figure.
            let f: Vec<&str> = line.split(',').collect();
            if f[0] == "point" && f[7] == "errors_per_s" {
                let key = f[..7].join(",");
                out.push_str(&with_shard_column(&format!(
                    "{key},machine,,,,,,,{MACHINE}\n"
                )));
            }
            continue;
        }
        out.push_str(line);
        if line.starts_with("  \"metric\": ") {
            out.push_str("  \"offered\": [],\n");
        }
        if line.starts_with("td { text-align: right; white-space: nowrap; }") {
            out.push_str("table.prose th, table.prose td { text-align: left; white-space: normal; vertical-align: top; min-width: 8em; max-width: 32em; }\n");
        }
        if line.starts_with("      \"key\": \"target=") {
            out.push_str("      \"load_level\": null,\n");
        }
        if line.starts_with("    \"points_skipped\": ") {
            out.push_str(concat!(
                "    \"servers\": [\n",
                "      {\n",
                "        \"label\": \"sqlite\",\n",
                "        \"release\": null,\n",
                "        \"server_version\": \"SQLite 3.46.0\",\n",
                "        \"target\": \"sqlite\",\n",
                "        \"version_lines\": []\n",
                "      }\n",
                "    ],\n",
            ));
        }
    }
    if csv {
        out.push_str("server,,,,sqlite,,,,server_version,,,,,,,SQLite 3.46.0\n");
    }
    out
}

/// A CSV line of 0.1.0 with the `shard` column added after `repeat` (the
/// seventh field): its name in the header, an empty field elsewhere.
fn with_shard_column(line: &str) -> String {
    if line.starts_with("record,") {
        return line.replacen(",repeat,", ",repeat,shard,", 1);
    }
    let (mut commas, mut quoted) = (0, false);
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                commas += 1;
                if commas == 7 {
                    return format!("{},{}", &line[..=i], &line[i + 1..]);
                }
            }
            _ => {}
        }
    }
    line.to_string()
}

#[test]
fn a_version_1_results_database_renders_the_same_reports() {
    let dir = Dir::new();
    std::fs::copy(fixture("results.db"), dir.join("results.db")).unwrap();
    for (format, file) in [
        ("html", "report.html"),
        ("md", "report.md"),
        ("text", "report.txt"),
        ("csv", "report.csv"),
        ("json", "report.json"),
    ] {
        dbsweep_in(
            dir.path(),
            &["report", "results.db", "--format", format, "--out", file],
        )
        .ok();
        let (got, want) =
            wrapped_titles_masked(&read(&dir.join(file)), &intended(&read(&fixture(file))));
        let (got, want) = if file == "report.json" {
            (without_comparisons(&got), want)
        } else {
            (got, want)
        };
        assert_same(file, &got, &want);
    }
    // The Markdown report's charts.
    let charts = fixture("charts");
    let mut names: Vec<_> = std::fs::read_dir(&charts)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert!(!names.is_empty());
    for name in names {
        let name = name.to_string_lossy();
        let (got, want) = wrapped_titles_masked(
            &read(&dir.join(name.as_ref())),
            &read(&charts.join(name.as_ref())),
        );
        assert_same(&name, &got, &want);
    }
    let r = dbsweep_in(dir.path(), &["results", "results.db"]);
    r.ok();
    assert_same("dbsweep results", &r.stdout, &read(&fixture("results.txt")));
    let r = dbsweep_in(dir.path(), &["results", "results.db", "--csv"]);
    r.ok();
    assert_same(
        "dbsweep results --csv",
        &r.stdout,
        &with_timeout_column(&read(&fixture("results.csv"))),
    );
}

/// 0.1.0's `results --csv` with the column `errors_timeout` (an error
/// kind added since) after `errors_other`: 0 on every point, since a
/// point of then has no timeouts.
fn with_timeout_column(csv: &str) -> String {
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    let at = header
        .split(',')
        .position(|h| h == "errors_other")
        .expect("errors_other in the header");
    let mut out = header.replacen(",errors_other,", ",errors_other,errors_timeout,", 1);
    out.push('\n');
    for line in lines {
        let (mut commas, mut quoted) = (0, false);
        let mut cut = line.len();
        for (i, c) in line.char_indices() {
            match c {
                '"' => quoted = !quoted,
                ',' if !quoted => {
                    commas += 1;
                    if commas == at + 1 {
                        cut = i;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push_str(&format!("{},0{}\n", &line[..cut], &line[cut..]));
    }
    out
}
