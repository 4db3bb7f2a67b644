//! `dbsweep report`: the study report built from a results database of
//! literal points (two servers, two variants, two CPU sets, a skipped
//! point), checked as snapshots of its text and Markdown renderings, its
//! JSON validated against `schema/report.schema.json`, the parameter
//! sweep's noise rule, the comparison with a baseline study, and the
//! command's usage errors.
//!
//! Snapshots (insta) live in tests/snapshots/; after an intended change,
//! review and accept the new ones with `cargo insta review` (or rewrite
//! them with `INSTA_UPDATE=always cargo test --test report`) and review
//! the diff.

mod util;

use std::path::Path;

use dbsweep::record::Machine;
use dbsweep::report::doc::{markdown, text as table_text};
use dbsweep::report::doc::{Block, Mark};
use dbsweep::report::study::{self, Metric, Options, StudyData};
use dbsweep::store::{self, PointRow, PointStatus, Store};
use serde_json::{json, Value};

use util::record::{histogram, with_histograms};
use util::{dbsweep, Dir};

/// A run document with the given figures (round numbers,
/// exact in binary).
fn run_doc(server: &str, tps: f64, p95_us: f64, deadlocks: u64, events_sd: f64) -> Value {
    let n = (tps * 10.0) as u64;
    let intervals = json!([
        {"t_s": 1.0, "duration_s": 1.0, "warmup": true, "threads": 4,
         "transactions": 90, "failed": 0, "reads": 1, "writes": 1, "others": 1,
         "errors": 0, "reconnects": 0,
         "p50_us": 800.0, "p95_us": 900.0, "p99_us": 950.0, "max_us": 990.0},
        {"t_s": 2.0, "duration_s": 1.0, "warmup": false, "threads": 4,
         "transactions": 100, "failed": 0, "reads": 1, "writes": 1, "others": 1,
         "errors": 0, "reconnects": 0,
         "p50_us": 800.0, "p95_us": p95_us, "p99_us": 1000.0, "max_us": 2000.0}
    ]);
    let latency = json!({"count": n, "min_us": 100.0, "avg_us": 900.5, "max_us": 25000.0,
                "sum_us": n as f64 * 900.5,
                "percentiles": [{"p": 50, "us": 800.0}, {"p": 95, "us": p95_us},
                                {"p": 99, "us": p95_us * 2.0}]});
    let result = json!({
            "stop_reason": "time", "fatal_error": null, "measured_s": 10.0,
            "transactions": n, "tps": tps,
            "queries": {"read": n * 14, "write": n * 4, "other": n * 2, "total": n * 20},
            "qps": tps * 20.0,
            "failed_transactions": 0, "retries": deadlocks, "ignored_errors": deadlocks,
            "reconnects": 0, "abandoned": 0,
            "errors": {"deadlock": deadlocks, "lock_timeout": 0, "serialization": 0,
                       "duplicate_key": 0, "connection_lost": 0, "other": 0},
            "latency": latency,
            "statements": [],
            "fairness": {"events_avg": 100.0, "events_stddev": events_sd,
                         "time_avg_s": 9.75, "time_stddev_s": 0.0},
            "client_cpu": {"user_s": 1.5, "system_s": 0.5, "us_per_transaction": 10.0,
                           "us_per_query": 0.5, "share_of_machine": 0.125, "cpus": 2},
            "intervals": intervals
    });
    json!({
        "schema": "dbsweep-run/2",
        "tool": {"name": "dbsweep", "version": "0.1.0"},
        "started_unix_s": 1_700_000_000u64,
        "workload": {"name": "oltp_read_write", "options": {"table-size": "1000", "tables": "1"}},
        "target": {"url": "x://h", "dialect": "mysql", "server_version": server, "settings": {}},
        "random": {"type": "uniform", "seed": 1, "spec_iter": 12, "spec_pct": 1.0,
                   "spec_res": 75.0, "pareto_h": 0.2, "zipfian_exp": 0.8},
        "run": {"threads": 4, "time_s": 10.0, "events": null, "rounds": null, "warmup_s": 1.0,
                "report_interval_s": 1.0, "max_retries": null, "ignore_errors": [], "grace_s": 5.0},
        "machine": {"hostname": "h", "cpu_model": "cpu", "cpus_online": 2, "cpus_available": 2,
                    "memory_bytes": 1024, "kernel": "6.1", "os": "linux"},
        "result": result
    })
}

struct P<'a> {
    target: &'a str,
    variant: &'a str,
    settings: &'a [(&'a str, &'a str)],
    cpus: &'a str,
    clients: u32,
    repeat: u32,
}

fn key(p: &P) -> String {
    format!(
        "target={}/variant={}/cpus={}/workload=0:oltp_read_write/clients={}/instances=1/repeat={}",
        p.target, p.variant, p.cpus, p.clients, p.repeat
    )
}

fn row(p: &P, status: PointStatus) -> PointRow {
    PointRow {
        key: key(p),
        target: p.target.into(),
        target_kind: if p.target == "pg" {
            "postgres".into()
        } else {
            "mariadb".into()
        },
        target_url: format!("x://{}", p.target),
        variant: p.variant.into(),
        variant_settings: p
            .settings
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        cpus: Some(p.cpus.into()),
        workload: "oltp_read_write".into(),
        workload_label: "oltp_read_write".into(),
        workload_options: vec![("table-size".into(), "1000".into())],
        clients: p.clients,
        instances: 1,
        load_level: None,
        repeat: p.repeat,
        status,
        reason: None,
        run: None,
        settings: Vec::new(),
        restart_s: None,
    }
}

fn finished(p: &P, server: &str, tps: f64, deadlocks: u64) -> PointRow {
    PointRow {
        run: Some(with_histograms(
            run_doc(
                server,
                tps,
                1000.0 + f64::from(p.clients) * 250.0,
                deadlocks,
                f64::from(p.clients) - 1.0,
            ),
            &[
                (
                    "transaction",
                    histogram(&[1_000_000, 1_000_000, 2_000_000, 8_000_000]),
                ),
                ("point_select", histogram(&[50_000, 70_000])),
                ("update_index", histogram(&[300_000, 500_000])),
            ],
        )),
        ..row(p, PointStatus::Finished)
    }
}

fn skipped(p: &P, reason: &str) -> PointRow {
    PointRow {
        reason: Some(reason.into()),
        ..row(p, PointStatus::Skipped)
    }
}

/// (target, variant, its settings, server version, peak tps on one CPU).
type SeriesSpec<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)], &'a str, f64);

/// The fixture study: MariaDB in two variants and PostgreSQL, each on CPU
/// 0 and CPUs 0-1, at 1, 2, 4 and 8 clients, two repeats. Throughput
/// scales with the CPUs and falls past 4 clients; PostgreSQL on one CPU is
/// stopped at 8 clients.
fn fixture(store: &mut Store, name: &str, factor: f64) {
    let id = store
        .begin_study(
            name,
            "two servers, two CPU sets",
            "name = \"x\"\n",
            &Machine::default(),
        )
        .unwrap();
    let series: [SeriesSpec; 3] = [
        ("mariadb", "base", &[], "MariaDB 10.11.6", 1000.0),
        (
            "mariadb",
            "bp1g",
            &[("innodb_buffer_pool_size", "1G")],
            "MariaDB 10.11.6",
            1100.0,
        ),
        ("pg", "base", &[], "PostgreSQL 16.3", 800.0),
    ];
    let shape = [(1, 0.4), (2, 0.7), (4, 1.0), (8, 0.8)];
    for (target, variant, settings, server, peak) in series {
        for (cpus, scale) in [("0", 1.0), ("0-1", 1.75)] {
            for (clients, share) in shape {
                for repeat in 1..=2 {
                    let p = P {
                        target,
                        variant,
                        settings,
                        cpus,
                        clients,
                        repeat,
                    };
                    let r = if target == "pg" && cpus == "0" && clients == 8 {
                        skipped(&p, "stopped: below 20 % of peak")
                    } else {
                        // ±1 % between repeats.
                        let wobble = if repeat == 1 { 0.99 } else { 1.01 };
                        let tps = (peak * scale * share * wobble * factor * 4.0).round() / 4.0;
                        finished(&p, server, tps, u64::from(clients == 8))
                    };
                    store.commit_point(id, &r).unwrap();
                }
            }
        }
    }
}

/// Loads a study and pins what changes from run to run (the date, the
/// tool version, the machine, the path), so renderings are stable.
fn load(dir: &Path, name: &str) -> StudyData {
    let mut data = study::load(dir, Some(name)).unwrap();
    data.info.started_unix_s = 1_700_000_000;
    data.info.tool_version = "0.1.0".into();
    data.info.machine = json!({"cpu_model": "Test CPU", "cpus_online": 2, "memory_bytes": 1u64 << 31,
                               "kernel": "6.1", "os": "linux"});
    data.source = "results.db".into();
    data
}

fn new_store(dir: &Dir) -> Store {
    Store::create_or_open(&dir.join(store::FILE_NAME)).unwrap()
}

/// A results directory holding the study "fixture" (see [`fixture`]).
fn stored_fixture() -> Dir {
    let dir = Dir::new();
    let mut s = new_store(&dir);
    fixture(&mut s, "fixture", 1.0);
    dir
}

#[test]
fn text_and_markdown_match_their_snapshots() {
    let dir = stored_fixture();
    let data = load(dir.path(), "fixture");
    let report = study::analyze(&data, None, &Options::default());
    let doc = study::document(&data, &report);
    insta::assert_snapshot!("report_txt", table_text::render(&doc));
    insta::assert_snapshot!("report_md", markdown::render(&doc, Some("report")));
}

#[test]
fn figures_of_the_fixture() {
    let dir = stored_fixture();
    let data = load(dir.path(), "fixture");
    let r = study::analyze(&data, None, &Options::default());
    // One panel per CPU set, one series per target/variant.
    assert_eq!(r.panels.len(), 2);
    let p = &r.panels[0];
    assert_eq!(p.cpus.as_deref(), Some("0"));
    assert_eq!(p.clients, [1, 2, 4, 8]);
    let labels: Vec<&str> = p.series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["mariadb / base", "mariadb / bp1g", "pg / base"]);
    // Peak of mariadb/base on CPU 0: mean of 990 and 1010 at 4 clients.
    let base = &p.series[0];
    assert_eq!(base.peak.unwrap().clients, 4);
    assert_eq!(base.peak.unwrap().value, 1000.0);
    // Sag at 8 clients: (1000 − 800) / 1000.
    assert!((base.sag.unwrap().pct - 20.0).abs() < 1e-9);
    // The skipped point keeps its reason and has no figure.
    let pg8 = &p.series[2].cells[3];
    assert_eq!(pg8.finished, 0);
    assert_eq!(pg8.reasons, ["skipped: stopped: below 20 % of peak"]);
    assert!(pg8.tps.is_none());
    // Ranking: bp1g best, base 9.09 % behind, pg 27.27 %.
    let behind: Vec<String> = p
        .ranking
        .iter()
        .map(|r| format!("{} {:.2}", r.label, r.behind_pct))
        .collect();
    assert_eq!(
        behind,
        [
            "mariadb / bp1g 0.00",
            "mariadb / base 9.09",
            "pg / base 27.27"
        ]
    );
    // CPU scalability: 1750 / 1000.
    let sc = &r.scalability[0];
    assert_eq!(sc.series[0].label, "mariadb / base");
    assert_eq!(sc.series[0].configs[1].vs_half, Some(1.75));
    // Ranked only by the paired comparisons: the repeats' ±1 % wobble is
    // shared by every series of a block, so the ratios are exact.
    assert!(
        r.conclusions.iter().any(|c| c.contains(
            "pg / base has lower peak throughput than mariadb / base: −20.0 % [−20.0, −20.0] (95 % interval, 2 blocks)"
        )),
        "{:?}",
        r.conclusions
    );
    assert!(
        !r.conclusions.iter().any(|c| c.contains("best")),
        "{:?}",
        r.conclusions
    );
    let peak = r
        .paired
        .comparisons
        .iter()
        .find(|c| {
            c.cell == "peak" && c.series == "mariadb / bp1g" && c.cpus.as_deref() == Some("0")
        })
        .unwrap();
    assert_eq!(peak.verdict, dbsweep::stats::paired::Verdict::Better);
    assert!((peak.ratio.unwrap() - 1.1).abs() < 1e-9);
    assert_eq!(peak.blocks, 2);
    // Deadlocks at 8 clients: one per finished repeat.
    assert_eq!(base.errors.get("deadlock"), Some(&2));
    assert_eq!(p.series[2].errors.get("deadlock"), Some(&0));
    // Statement latency at the best series' peak (4 clients), merged over
    // both repeats.
    assert_eq!(p.focus_clients, Some(4));
    let st = &p.statements[0];
    assert_eq!(st.kinds[0].kind, "transaction");
    assert_eq!(st.kinds[0].count, 8);
    assert_eq!(st.kinds.len(), 3);
}

#[test]
fn the_metric_option_changes_the_tables_but_not_the_peaks() {
    let dir = stored_fixture();
    let data = load(dir.path(), "fixture");
    let opts = Options {
        metric: Metric::P95,
        point: Some(2),
    };
    let r = study::analyze(&data, None, &opts);
    assert_eq!(r.panels[0].focus_clients, Some(2));
    let doc = study::document(&data, &r);
    // The conclusions, the comparisons, then the first panel.
    assert_eq!(doc.sections[1].title, "Comparisons");
    let Block::Table(t) = &doc.sections[2].blocks[0] else {
        panic!("first block of a panel is its table")
    };
    assert!(t.caption.starts_with("95th percentile"), "{}", t.caption);
    // p95 = 1000 + 250 × clients µs: 1.25 ms at 1 client.
    assert_eq!(t.rows[0].cells[0].text, "1.25");
    assert_eq!(t.rows[2].cells[3].mark, Mark::Missing);
    assert_eq!(r.panels[0].series[0].peak.unwrap().clients, 4);
}

#[test]
fn json_matches_its_schema_and_holds_every_point() {
    let dir = stored_fixture();
    let out = dir.join("r.json");
    dbsweep(&[
        "report",
        dir.path().to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
    .ok();
    let doc = util::read_json(&out);
    let schema_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/report.schema.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "JSON does not match schema:\n{}",
        errors.join("\n")
    );
    assert_eq!(doc["schema"], "dbsweep-report/1");
    assert_eq!(doc["points"].as_array().unwrap().len(), 48);
    let skipped: Vec<&Value> = doc["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"] == "skipped")
        .collect();
    assert_eq!(skipped.len(), 2);
    assert!(skipped[0]["figures"].is_null());
    assert_eq!(
        doc["scalability"][0]["series"][0]["configs"][1]["vs_half"],
        1.75
    );
    // A comparison with a baseline study validates too.
    let mut s = new_store(&dir);
    fixture(&mut s, "faster", 1.5);
    drop(s);
    let cmp = dir.join("cmp.json");
    dbsweep(&[
        "report",
        dir.path().to_str().unwrap(),
        "--study",
        "faster",
        "--baseline",
        "fixture",
        "--out",
        cmp.to_str().unwrap(),
    ])
    .ok();
    let cmp = util::read_json(&cmp);
    let errors: Vec<String> = validator
        .iter_errors(&cmp)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "comparison does not match schema:\n{}",
        errors.join("\n")
    );
    assert_eq!(cmp["comparison"]["baseline"], "fixture");
    assert_eq!(
        cmp["comparison"]["panels"][0]["series"][0]["cells"][2]["change"]["verdict"],
        "better"
    );
    // The schema is strict: an unknown field is refused.
    let mut bad = doc.clone();
    bad["panels"][0]["surprise"] = json!(1);
    assert!(!validator.is_valid(&bad));
}

#[test]
fn csv_has_points_cells_and_derived_figures() {
    let dir = stored_fixture();
    let r = dbsweep(&[
        "report",
        dir.path().to_str().unwrap(),
        "--format",
        "csv",
        "--out",
        "-",
    ]);
    r.ok();
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "record,panel,workload,cpus,series,clients,repeat,shard,figure,value,n,stddev,ci95,min,max,note"
    );
    assert!(lines.contains(
        &"point,,oltp_read_write,0,pg / base,8,1,,status,,,,,,,skipped: stopped: below 20 % of peak"
    ));
    assert!(lines.contains(&"sag,oltp-read-write-cpus-0,oltp_read_write,0,mariadb / base,8,,,sag_pct,20,,,,,,peak 1000 at 4 clients; 800 at 8 clients"));
    assert!(lines.iter().any(|l| l.starts_with(
        "scalability,,oltp_read_write table-size=1000,2 CPUs (0-1),mariadb / base,,,,vs_half,1.75,"
    )));
    // Cells carry the spread: 990 and 1010 → sd 14.142…
    let cell = lines
        .iter()
        .find(|l| {
            l.starts_with(
                "cell,oltp-read-write-cpus-0,oltp_read_write,0,mariadb / base,4,,,tps,1000,2,14.14",
            )
        })
        .unwrap_or_else(|| panic!("no tps cell in\n{}", r.stdout));
    assert!(cell.contains(",990,1010,"), "{cell}");
}

#[test]
fn markdown_writes_its_charts_next_to_it() {
    let dir = stored_fixture();
    let out = dir.join("blog.md");
    dbsweep(&[
        "report",
        dir.path().to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
    .ok();
    let md = std::fs::read_to_string(&out).unwrap();
    let svgs: Vec<String> = dir
        .files()
        .into_iter()
        .filter(|f| f.ends_with(".svg"))
        .collect();
    assert!(svgs.len() >= 10, "{svgs:?}");
    for f in &svgs {
        assert!(f.starts_with("blog-"), "{f}");
        assert!(md.contains(&format!("]({f})")), "{f} not referenced");
        let svg = std::fs::read_to_string(dir.join(f)).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("<path"), "{f}");
    }
    // Nothing half-written is left.
    assert!(!dir.files().iter().any(|f| f.contains(".tmp-")));
}

#[test]
fn a_parameter_sweep_marks_only_changes_beyond_the_noise() {
    let dir = Dir::new();
    let mut s = new_store(&dir);
    // Stored before dbsweep kept the sweep in the design: read from the
    // stored file.
    let file = "name = \"sweep\"\n[sweep.parameter]\nclients = 16\nbaseline = \"base\"\nvalues = { innodb_spin_wait_delay = [0] }\n";
    let id = s
        .begin_study("sweep", "", file, &Machine::default())
        .unwrap();
    // (variant, tps of each repeat): the baseline 100 ± 1; one setting
    // clearly better, one within the noise, one measured once.
    let variants: [(&str, &[f64]); 4] = [
        ("base", &[99.0, 100.0, 101.0]),
        ("innodb_spin_wait_delay=0", &[109.0, 110.0, 111.0]),
        ("innodb_doublewrite=false", &[100.0, 101.0, 102.0]),
        ("innodb_sync_spin_loops=0", &[90.0]),
    ];
    for (variant, values) in variants {
        let settings: Vec<(&str, &str)> = variant
            .split_once('=')
            .map(|(k, v)| vec![(k, v)])
            .unwrap_or_default();
        for (i, &tps) in values.iter().enumerate() {
            let p = P {
                target: "mariadb",
                variant,
                settings: &settings,
                cpus: "0",
                clients: 16,
                repeat: i as u32 + 1,
            };
            s.commit_point(id, &finished(&p, "MariaDB 10.11.6", tps, 0))
                .unwrap();
        }
    }
    drop(s);
    let data = load(dir.path(), "sweep");
    let r = study::analyze(&data, None, &Options::default());
    let sw = r.panels[0].sweep.as_ref().expect("a sweep table");
    assert_eq!(sw.clients, 16);
    assert!(sw.too_few_repeats);
    let verdicts: Vec<String> = sw
        .rows
        .iter()
        .map(|r| format!("{:?}", r.change.map(|c| c.verdict)))
        .collect();
    assert_eq!(
        verdicts,
        [
            "None",
            "Some(Better)",
            "Some(Within)",
            "Some(TooFewRepeats)"
        ]
    );
    let doc = study::document(&data, &r);
    let table = doc
        .sections
        .iter()
        .flat_map(|s| &s.blocks)
        .find_map(|b| match b {
            Block::Table(t) if t.caption.starts_with("Parameter sweep") => Some(t),
            _ => None,
        })
        .expect("the sweep table");
    let marks: Vec<(String, Mark)> = table
        .rows
        .iter()
        .map(|r| (r.cells[3].text.clone(), r.cells[3].mark))
        .collect();
    assert_eq!(
        marks,
        [
            (String::new(), Mark::None),
            // Repeats that pair (three of each): the ratio block by block.
            ("1.100 [1.098, 1.102]".into(), Mark::Better),
            ("1.010 [1.010, 1.010]".into(), Mark::None),
            // One repeat: no pairs to speak of, the means' difference.
            ("-10.00 % (too few repeats)".into(), Mark::None),
        ]
    );
    let note = |needle: &str| {
        doc.sections
            .iter()
            .flat_map(|s| &s.blocks)
            .any(|b| matches!(b, Block::Note(n) if n.contains(needle)))
    };
    assert!(note("block by block"));
    let text = table_text::render(&doc);
    assert!(text.contains("fewer than two times"), "{text}");
    assert!(r.conclusions.iter().any(|c| c.contains(
        "On mariadb, innodb_spin_wait_delay = 0 helps: 110.00 tps against 100.00 (+10.00 %)"
    )));
}

#[test]
fn baseline_comparison_marks_changes_beyond_the_noise() {
    let dir = Dir::new();
    let mut s = new_store(&dir);
    fixture(&mut s, "old", 1.0);
    // 50 % faster everywhere. With two repeats of ±1 % the 95 %
    // confidence interval of a mean is ±12.7 % (t = 12.71): a 10 % change
    // would be within the noise, 50 % is beyond it.
    fixture(&mut s, "new", 1.5);
    drop(s);
    let data = load(dir.path(), "new");
    let base = load(dir.path(), "old");
    let r = study::analyze(&data, Some(&base), &Options::default());
    let c = r.comparison.as_ref().unwrap();
    assert_eq!(c.baseline, "old");
    let cell = &c.panels[0].series[0].cells[2];
    assert_eq!(cell.clients, 4);
    assert!((cell.change.unwrap().pct.unwrap() - 50.0).abs() < 0.01);
    let doc = study::document(&data, &r);
    let text = table_text::render(&doc);
    assert!(text.contains("Compared with 'old'"), "{text}");
    assert!(text.contains("1500.00 (+50.0 %) +"), "{text}");
    assert!(
        r.conclusions
            .iter()
            .any(|c| c.starts_with("Against old: 23 point(s) better and 0 worse")),
        "{:?}",
        r.conclusions
    );
    // The same through the command line: a study name of the same file.
    let out = dbsweep(&[
        "report",
        dir.path().to_str().unwrap(),
        "--study",
        "new",
        "--baseline",
        "old",
        "--format",
        "text",
    ]);
    out.ok();
    assert!(out.stdout.contains("Compared with 'old'"), "{}", out.stdout);
}

#[test]
fn usage_errors_name_the_problem() {
    let dir = Dir::new();
    let d = dir.path().to_str().unwrap();
    let r = dbsweep(&["report", d]);
    r.expect_status(2);
    assert!(r.stderr.contains("no results database"), "{}", r.stderr);
    let mut s = new_store(&dir);
    fixture(&mut s, "a", 1.0);
    fixture(&mut s, "b", 1.0);
    drop(s);
    let r = dbsweep(&["report", d, "--format", "text"]);
    r.expect_status(2);
    assert!(
        r.stderr.contains("several studies ('a', 'b')"),
        "{}",
        r.stderr
    );
    let r = dbsweep(&["report", d, "--study", "c"]);
    r.expect_status(2);
    assert!(r.stderr.contains("no study 'c'"), "{}", r.stderr);
    let r = dbsweep(&["report", d, "--study", "a", "--baseline", "zzz"]);
    r.expect_status(2);
    assert!(r.stderr.contains("--baseline 'zzz'"), "{}", r.stderr);
    let r = dbsweep(&["report", d, "--study", "a", "--out", "x.pdf"]);
    r.expect_status(2);
    assert!(r.stderr.contains("give --format"), "{}", r.stderr);
    let r = dbsweep(&["report", d, "--study", "a", "--out", "/nonexistent/r.md"]);
    r.expect_status(2);
    assert!(r.stderr.contains("does not exist"), "{}", r.stderr);
    let r = dbsweep(&["report", d, "--study", "a", "--point", "3"]);
    r.expect_status(2);
    assert!(
        r.stderr
            .contains("no point at 3 clients (it has 1, 2, 4, 8)"),
        "{}",
        r.stderr
    );
    // Nothing was written by the refused commands.
    assert_eq!(dir.files(), ["results.db"]);
}
