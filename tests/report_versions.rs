//! Versions in study reports: a results database holding a study of two
//! releases of each server (MariaDB 10.2.11 and 10.11.6, PostgreSQL 9.6.24
//! and 15.10 — the last one under a name of the study's own), with the
//! `--version` lines of the programs that served them, rendered in every
//! format. Each table, legend, ranking ("slower than the best by") and
//! CSV record names the release that ran; each header lists the programs'
//! `--version` lines; the JSON lists both, valid against its schema. A
//! comparison with a baseline run on an older build keeps the series
//! together and names both releases.

mod util;

use std::path::Path;

use dbsweep::record::Machine;
use dbsweep::report::study::{self, Options};
use dbsweep::store::{self, PointRow, PointStatus, Store, StudyId};
use serde_json::{json, Value};

use util::{dbsweep, Dir};

/// (target, kind, version over the connection, `--version` line, peak tps).
type Target<'a> = (&'a str, &'a str, &'a str, &'a str, f64);

const TARGETS: [Target; 4] = [
    (
        "mariadb-10.2",
        "mariadb",
        "10.2.11-MariaDB",
        "mysqld Ver 10.2.11-MariaDB for Linux on x86_64 (MariaDB Server)",
        1000.0,
    ),
    (
        "mariadb-10.11",
        "mariadb",
        "10.11.6-MariaDB-0+deb12u1",
        "mariadbd Ver 10.11.6-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)",
        800.0,
    ),
    (
        "postgres-9.6",
        "postgres",
        "PostgreSQL 9.6.24",
        "postgres (PostgreSQL) 9.6.24",
        900.0,
    ),
    (
        "pg15",
        "postgres",
        "PostgreSQL 15.10 (Debian 15.10-0+deb12u1)",
        "postgres (PostgreSQL) 15.10 (Debian 15.10-0+deb12u1)",
        700.0,
    ),
];

/// What the report must call each target, in order.
const LABELS: [&str; 4] = [
    "mariadb 10.2.11",
    "mariadb 10.11.6",
    "postgres 9.6.24",
    "pg15 (postgres 15.10)",
];

/// A finished run's document with round figures.
fn run_doc(server: &str, dialect: &str, tps: f64) -> Value {
    let n = (tps * 10.0) as u64;
    json!({
        "schema": "dbsweep-run/2",
        "tool": {"name": "dbsweep", "version": "0.1.0"},
        "started_unix_s": 1_700_000_000u64,
        "workload": {"name": "oltp_read_write", "options": {"table-size": "1000", "tables": "1"}},
        "target": {"url": "x://h", "dialect": dialect, "server_version": server, "settings": {}},
        "random": {"type": "uniform", "seed": 1, "spec_iter": 12, "spec_pct": 1.0,
                   "spec_res": 75.0, "pareto_h": 0.2, "zipfian_exp": 0.8},
        "run": {"threads": 4, "time_s": 10.0, "events": null, "rounds": null, "warmup_s": 1.0,
                "report_interval_s": 1.0, "max_retries": null, "ignore_errors": [], "grace_s": 5.0},
        "machine": {"hostname": "h", "cpu_model": "cpu", "cpus_online": 2, "cpus_available": 2,
                    "memory_bytes": 1024, "kernel": "6.1", "os": "linux"},
        "result": {
            "stop_reason": "time", "fatal_error": null, "measured_s": 10.0,
            "transactions": n, "tps": tps,
            "queries": {"read": n * 14, "write": n * 4, "other": n * 2, "total": n * 20},
            "qps": tps * 20.0,
            "failed_transactions": 0, "retries": 0, "ignored_errors": 0,
            "reconnects": 0, "abandoned": 0,
            "errors": {"deadlock": 0, "lock_timeout": 0, "serialization": 0,
                       "duplicate_key": 0, "connection_lost": 0, "other": 0},
            "latency": {"count": n, "min_us": 100.0, "avg_us": 900.5, "max_us": 25000.0,
                        "sum_us": n as f64 * 900.5,
                        "percentiles": [{"p": 50, "us": 800.0}, {"p": 95, "us": 2000.0},
                                        {"p": 99, "us": 4000.0}]},
            "statements": [],
            "fairness": {"events_avg": 100.0, "events_stddev": 0.0,
                         "time_avg_s": 9.75, "time_stddev_s": 0.0},
            "client_cpu": {"user_s": 1.5, "system_s": 0.5, "us_per_transaction": 10.0,
                           "us_per_query": 0.5, "share_of_machine": 0.125, "cpus": 2},
            "intervals": []
        }
    })
}

/// Stores study `name`: every target at 1, 2 and 4 clients (throughput
/// rising to its peak at 4), its program's `--version` line, and
/// `version` over the connection (`replace` swaps one target's for
/// another, as a rebuilt server would report). Every point's connections
/// are plain but target `encrypted`'s, which recorded TLS 1.3.
fn study(
    store: &mut Store,
    name: &str,
    replace: Option<(&str, &str)>,
    encrypted: Option<&str>,
) -> StudyId {
    let id = store
        .begin_study(
            name,
            "two releases of each server",
            "name = \"x\"\n",
            &Machine::default(),
        )
        .unwrap();
    for (target, kind, version, line, peak) in TARGETS {
        let (version, line) = match replace {
            Some((t, v)) if t == target => (v, line.replace(version, v)),
            _ => (version, line.to_string()),
        };
        store.save_server_build(id, target, &line).unwrap();
        let dialect = if kind == "postgres" {
            "postgres"
        } else {
            "mysql"
        };
        for (clients, share) in [(1, 0.5), (2, 0.75), (4, 1.0)] {
            let run = dbsweep::record::from_value(run_doc(version, dialect, peak * share)).unwrap();
            let row = PointRow {
                key: format!("target={target}/variant=base/workload=0:oltp_read_write/clients={clients}/instances=1/repeat=1"),
                target: target.into(),
                target_kind: kind.into(),
                target_url: format!("x://{target}"),
                variant: "base".into(),
                variant_settings: Vec::new(),
                cpus: None,
                workload: "oltp_read_write".into(),
                workload_label: "oltp_read_write".into(),
                workload_options: vec![("table-size".into(), "1000".into())],
                clients,
                instances: 1,
                load_level: None,
                repeat: 1,
                status: PointStatus::Finished,
                reason: None,
                run: Some(run),
                settings: vec![(
                    if kind == "postgres" { "dbsweep.tls" } else { "tls" }.into(),
                    if encrypted == Some(target) {
                        TLS13.into()
                    } else {
                        "off".into()
                    },
                )],
                restart_s: None,
            };
            store.commit_point(id, &row).unwrap();
        }
    }
    id
}

const TLS13: &str = "TLSv1.3 TLS13_AES_256_GCM_SHA384";

/// A results directory holding the study "versions".
fn stored() -> Dir {
    let dir = Dir::new();
    let mut s = Store::create_or_open(&dir.join(store::FILE_NAME)).unwrap();
    study(&mut s, "versions", None, None);
    dir
}

fn report(dir: &Path, format: &str, out: &str) -> String {
    let path = dir.join(out);
    dbsweep(&[
        "report",
        dir.to_str().unwrap(),
        "--study",
        "versions",
        "--format",
        format,
        "--out",
        path.to_str().unwrap(),
    ])
    .ok();
    std::fs::read_to_string(path).unwrap()
}

/// Each release's name and each program's line are in `text`.
fn assert_names_versions(format: &str, text: &str) {
    for label in LABELS {
        assert!(text.contains(label), "{format}: no '{label}' in\n{text}");
    }
    for (_, _, _, line, _) in TARGETS {
        assert!(text.contains(line), "{format}: no '{line}' in\n{text}");
    }
}

#[test]
fn series_rankings_and_the_header_name_each_release() {
    let dir = stored();
    let data = study::load(dir.path(), Some("versions")).unwrap();
    let r = study::analyze(&data, None, &Options::default());
    let labels: Vec<&str> = r.panels[0]
        .series
        .iter()
        .map(|s| s.label.as_str())
        .collect();
    assert_eq!(labels, LABELS);
    let servers: Vec<(&str, Option<&str>)> = r
        .study
        .servers
        .iter()
        .map(|s| (s.target.as_str(), s.release.as_deref()))
        .collect();
    assert_eq!(
        servers,
        [
            ("mariadb-10.2", Some("mariadb 10.2.11")),
            ("mariadb-10.11", Some("mariadb 10.11.6")),
            ("postgres-9.6", Some("postgres 9.6.24")),
            ("pg15", Some("postgres 15.10")),
        ]
    );
    // The comparisons name each release; one repeat has no interval, so
    // nothing is ranked.
    let text = r.conclusions.join("\n");
    assert!(
        text.contains("mariadb 10.11.6 against mariadb 10.2.11: peak throughput measured in one block, without an interval: no ranking."),
        "{text}"
    );
    assert!(
        text.contains("pg15 (postgres 15.10) against mariadb 10.2.11:"),
        "{text}"
    );
    assert!(!text.contains("slower than the best"), "{text}");
    assert!(
        text.contains("mariadb 10.2.11 peaks at 1000.00 tps with 4 clients"),
        "{text}"
    );
    // The header: the study file's name beside the release, and each
    // program's line.
    let doc = study::document(&data, &r);
    let facts: Vec<(String, String)> = doc.facts.clone();
    let servers = &facts.iter().find(|(k, _)| k == "Servers").unwrap().1;
    assert!(
        servers.contains("mariadb 10.2.11 (target mariadb-10.2): 10.2.11-MariaDB"),
        "{servers}"
    );
    let programs = &facts
        .iter()
        .find(|(k, _)| k == "Server programs (--version)")
        .unwrap()
        .1;
    assert!(
        programs.contains("postgres 9.6.24: postgres (PostgreSQL) 9.6.24;"),
        "{programs}"
    );
    // Every connection plain: nothing to say about encryption.
    assert!(
        !facts.iter().any(|(k, _)| k == "Encryption (TLS)"),
        "{facts:?}"
    );
}

#[test]
fn a_series_whose_connections_were_encrypted_is_named_in_the_header() {
    let dir = Dir::new();
    let mut s = Store::create_or_open(&dir.join(store::FILE_NAME)).unwrap();
    study(&mut s, "versions", None, Some("mariadb-10.11"));
    drop(s);
    let data = study::load(dir.path(), Some("versions")).unwrap();
    let r = study::analyze(&data, None, &Options::default());
    let doc = study::document(&data, &r);
    let (_, tls) = doc
        .facts
        .iter()
        .find(|(k, _)| k == "Encryption (TLS)")
        .expect("an encryption fact");
    assert!(tls.contains(&format!("mariadb 10.11.6: {TLS13}")), "{tls}");
    assert!(tls.contains("mariadb 10.2.11: off"), "{tls}");
    assert!(tls.contains("postgres 9.6.24: off"), "{tls}");
    assert!(tls.contains("the series differ"), "{tls}");
    // In the rendered report too.
    let text = report(dir.path(), "text", "report.txt");
    assert!(text.contains("the series differ"), "{text}");
}

#[test]
fn every_format_names_the_releases_and_lists_the_programs() {
    let dir = stored();
    assert_names_versions("text", &report(dir.path(), "text", "report.txt"));
    assert_names_versions("html", &report(dir.path(), "html", "report.html"));
    let md = report(dir.path(), "md", "report.md");
    assert_names_versions("md", &md);
    // The charts' legends, beside the Markdown.
    let legends = dir
        .files()
        .into_iter()
        .filter(|f| f.ends_with("throughput.svg"))
        .map(|f| std::fs::read_to_string(dir.join(&f)).unwrap())
        .collect::<Vec<_>>();
    assert!(!legends.is_empty(), "{:?}", dir.files());
    for svg in &legends {
        for label in LABELS {
            assert!(svg.contains(label), "no '{label}' in a chart:\n{svg}");
        }
    }

    let csv = report(dir.path(), "csv", "report.csv");
    let lines: Vec<&str> = csv.lines().collect();
    for line in [
        "server,,,,mariadb 10.2.11,,,,release,,,,,,,mariadb 10.2.11",
        "server,,,,mariadb 10.2.11,,,,server_version,,,,,,,10.2.11-MariaDB",
        "server,,,,mariadb 10.2.11,,,,version_line,,,,,,,mysqld Ver 10.2.11-MariaDB for Linux on x86_64 (MariaDB Server)",
        "server,,,,pg15 (postgres 15.10),,,,version_line,,,,,,,postgres (PostgreSQL) 15.10 (Debian 15.10-0+deb12u1)",
        "point,,oltp_read_write,,postgres 9.6.24 / base,4,1,,tps,900,,,,,,finished",
        "peak,oltp-read-write,oltp_read_write,,mariadb 10.11.6,4,,,tps,800,,,,,,",
        "rank,oltp-read-write,oltp_read_write,,postgres 9.6.24,,,,behind_best_pct,10,,,,,,peak 900",
    ] {
        assert!(lines.contains(&line), "no {line} in\n{csv}");
    }

    let json_text = report(dir.path(), "json", "report.json");
    let doc: Value = serde_json::from_str(&json_text).unwrap();
    let schema: Value =
        util::read_json(&Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/report.schema.json"));
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert_eq!(
        doc["study"]["servers"][0],
        json!({
            "target": "mariadb-10.2",
            "label": "mariadb 10.2.11",
            "release": "mariadb 10.2.11",
            "server_version": "10.2.11-MariaDB",
            "version_lines": ["mysqld Ver 10.2.11-MariaDB for Linux on x86_64 (MariaDB Server)"]
        })
    );
    let series: Vec<&str> = doc["panels"][0]["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(series, LABELS);
}

#[test]
fn a_baseline_on_another_build_keeps_each_series_and_names_both_releases() {
    let dir = stored();
    let mut s = Store::open_existing(&dir.join(store::FILE_NAME)).unwrap();
    study(
        &mut s,
        "rebuilt",
        Some(("mariadb-10.2", "10.2.12-MariaDB")),
        None,
    );
    drop(s);
    let rebuilt = study::load(dir.path(), Some("rebuilt")).unwrap();
    let before = study::load(dir.path(), Some("versions")).unwrap();
    let r = study::analyze(&rebuilt, Some(&before), &Options::default());
    let c = r.comparison.expect("a comparison");
    let labels: Vec<&str> = c.panels[0]
        .series
        .iter()
        .map(|s| s.label.as_str())
        .collect();
    assert_eq!(
        labels,
        [
            "mariadb 10.2.12 (baseline: mariadb 10.2.11)",
            "mariadb 10.11.6",
            "postgres 9.6.24",
            "pg15 (postgres 15.10)"
        ]
    );
    // The same figures, so every cell compares (and none changed).
    let cells = &c.panels[0].series[0].cells;
    assert_eq!(cells.len(), 3);
    assert!(cells
        .iter()
        .all(|c| c.baseline == c.value && c.value.is_some()));
}

#[test]
fn one_server_of_each_kind_keeps_the_names_the_study_gives() {
    // MariaDB beside PostgreSQL compares servers, not releases: the
    // report says "mariadb" as the study does; the header has the
    // releases.
    let dir = Dir::new();
    let mut s = Store::create_or_open(&dir.join(store::FILE_NAME)).unwrap();
    let id = s
        .begin_study("two", "", "name = \"two\"\n", &Machine::default())
        .unwrap();
    for (target, kind, version) in [
        ("mariadb", "mariadb", "10.11.6-MariaDB"),
        ("postgres", "postgres", "PostgreSQL 15.10"),
    ] {
        let dialect = if kind == "postgres" {
            "postgres"
        } else {
            "mysql"
        };
        let run = dbsweep::record::from_value(run_doc(version, dialect, 100.0)).unwrap();
        s.commit_point(
            id,
            &PointRow {
                key: format!("target={target}/clients=1"),
                target: target.into(),
                target_kind: kind.into(),
                target_url: "x://h".into(),
                variant: "base".into(),
                variant_settings: Vec::new(),
                cpus: None,
                workload: "oltp_read_write".into(),
                workload_label: "oltp_read_write".into(),
                workload_options: Vec::new(),
                clients: 1,
                instances: 1,
                load_level: None,
                repeat: 1,
                status: PointStatus::Finished,
                reason: None,
                run: Some(run),
                settings: Vec::new(),
                restart_s: None,
            },
        )
        .unwrap();
    }
    drop(s);
    let data = study::load(dir.path(), None).unwrap();
    let r = study::analyze(&data, None, &Options::default());
    let labels: Vec<&str> = r.panels[0]
        .series
        .iter()
        .map(|s| s.label.as_str())
        .collect();
    assert_eq!(labels, ["mariadb", "postgres"]);
    assert_eq!(
        r.study.servers[1].release.as_deref(),
        Some("postgres 15.10")
    );
    // No program was started by dbsweep here: no --version line.
    assert!(r.study.servers.iter().all(|s| s.version_lines.is_empty()));
    let doc = study::document(&data, &r);
    assert!(!doc
        .facts
        .iter()
        .any(|(k, _)| k == "Server programs (--version)"));
}
