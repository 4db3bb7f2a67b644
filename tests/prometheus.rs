//! `run --prometheus ADDR` and a study's `prometheus = "ADDR"`: a real
//! scrape of `/metrics` over TCP while `dbsweep run` runs on the
//! temporary SQLite database (counters that grow between two scrapes,
//! latency quantiles present and ordered, `# EOF` last, the labels, the
//! machine's CPU and no made-up server CPU); both formats checked by
//! Prometheus's own `promtool check metrics` (the classic one: promtool
//! 2.42 reads no other) and, where Python's prometheus_client is
//! installed, by its strict OpenMetrics parser; a study's points served
//! one after another with their labels; a port already taken refused
//! before anything runs; and the Grafana dashboard naming only metrics
//! the feed serves.

mod util;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use util::servers::free_port;
use util::{dbsweep_in, Dir};

const OPENMETRICS: &str =
    "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5";

/// One scrape's answer.
struct Scrape {
    content_type: String,
    body: String,
}

/// `GET /metrics` on `port` with `accept` (None: no Accept header, as
/// promtool's and curl's requests); None while nothing listens.
fn scrape(port: u16, accept: Option<&str>) -> Option<Scrape> {
    let mut c = TcpStream::connect(("127.0.0.1", port)).ok()?;
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let accept = accept.map_or(String::new(), |a| format!("Accept: {a}\r\n"));
    write!(
        c,
        "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{accept}\r\n"
    )
    .ok()?;
    let mut answer = String::new();
    c.read_to_string(&mut answer).ok()?;
    let (head, body) = answer.split_once("\r\n\r\n")?;
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    let content_type = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Type: "))
        .expect("a content type")
        .to_string();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .expect("a content length")
        .parse()
        .unwrap();
    assert_eq!(length, body.len(), "the body is whole");
    Some(Scrape {
        content_type,
        body: body.to_string(),
    })
}

/// The samples of a body: (name, labels) → value.
type Samples = BTreeMap<(String, BTreeMap<String, String>), f64>;

/// Parses the sample lines (not the comments) of either text format.
fn samples(body: &str) -> Samples {
    let mut out = Samples::new();
    for line in body.lines().filter(|l| !l.starts_with('#')) {
        let (series, value) = line.rsplit_once(' ').expect("NAME VALUE");
        let (name, labels) = match series.split_once('{') {
            Some((n, rest)) => (n, parse_labels(rest.strip_suffix('}').expect("labels end"))),
            None => (series, BTreeMap::new()),
        };
        let v: f64 = value.parse().expect("a number");
        assert!(
            out.insert((name.to_string(), labels), v).is_none(),
            "a series twice: {line}"
        );
    }
    out
}

/// `k="v",k2="v2"` with `\"`, `\\` and `\n` escaped.
fn parse_labels(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut rest = text;
    while !rest.is_empty() {
        let (k, after) = rest.split_once("=\"").expect("k=\"v\"");
        let mut v = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next().expect("a closing quote") {
                (_, '\\') => match chars.next().unwrap().1 {
                    'n' => v.push('\n'),
                    c => v.push(c),
                },
                (i, '"') => break i,
                (_, c) => v.push(c),
            }
        };
        out.insert(k.to_string(), v);
        rest = after[end + 1..].trim_start_matches(',');
    }
    out
}

/// The one value of metric `name` whose labels include `with`.
fn value(s: &Samples, name: &str, with: &[(&str, &str)]) -> Option<f64> {
    let found: Vec<f64> = s
        .iter()
        .filter(|((n, l), _)| {
            n == name
                && with
                    .iter()
                    .all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|(_, v)| *v)
        .collect();
    assert!(found.len() <= 1, "{name} {with:?}: {found:?}");
    found.first().copied()
}

/// Starts `dbsweep` with `args` in `dir`, its output kept.
fn spawn(dir: &Dir, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_dbsweep"))
        .args(args)
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Scrapes until `until` holds of the samples (a minute is a hang's bound).
fn scrape_until(port: u16, accept: Option<&str>, until: impl Fn(&Samples) -> bool) -> Scrape {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(s) = scrape(port, accept) {
            if until(&samples(&s.body)) {
                return s;
            }
        }
        assert!(Instant::now() < deadline, "the feed never got there");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits for `child` and returns (status, stdout, stderr).
fn finish(child: Child) -> (i32, String, String) {
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn measured(s: &Samples) -> bool {
    value(s, "dbsweep_phase", &[("dbsweep_phase", "measured")]) == Some(1.0)
        && value(s, "dbsweep_transactions_total", &[]).is_some_and(|t| t > 0.0)
}

#[test]
fn a_run_is_served_live_while_it_runs() {
    let dir = Dir::new();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let json = dir.join("run.json").display().to_string();
    let child = spawn(
        &dir,
        &[
            "run",
            "oltp_point_select",
            "--threads",
            "2",
            "--time",
            "8",
            "--prometheus",
            &addr,
            "--json",
            &json,
        ],
    );
    // The sampler's figures come a few readings behind the intervals (it
    // puts its readings in order first).
    let first = scrape_until(port, Some(OPENMETRICS), |s| {
        measured(s) && value(s, "dbsweep_machine_cpu_ratio", &[]).is_some()
    });
    assert_eq!(
        first.content_type,
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    );
    assert!(first.body.ends_with("\n# EOF\n"), "{}", first.body);
    assert_eq!(first.body.matches("# EOF").count(), 1);
    let a = samples(&first.body);
    // A second later, another interval has closed.
    std::thread::sleep(Duration::from_millis(1500));
    let second = scrape(port, Some(OPENMETRICS)).expect("still served");
    let b = samples(&second.body);
    let total = |s: &Samples| value(s, "dbsweep_transactions_total", &[]).unwrap();
    assert!(total(&b) > total(&a), "{} then {}", total(&a), total(&b));
    assert!(
        value(&b, "dbsweep_elapsed_seconds", &[]).unwrap()
            > value(&a, "dbsweep_elapsed_seconds", &[]).unwrap()
    );
    for s in [&a, &b] {
        // Every sample names its point: the workload and the target's
        // engine and file, never more.
        for ((name, labels), _) in s.iter().filter(|((n, _), _)| n != "dbsweep_phase") {
            assert_eq!(labels["workload"], "oltp_point_select", "{name}");
            assert!(labels["target"].starts_with("sqlite:///"), "{name}");
        }
        let q: Vec<f64> = ["0.5", "0.95", "0.99", "1"]
            .iter()
            .map(|q| value(s, "dbsweep_latency_seconds", &[("quantile", q)]).expect(q))
            .collect();
        assert!(q[0] > 0.0 && q[0] < 10.0, "{q:?}");
        assert!(q.windows(2).all(|w| w[0] <= w[1]), "{q:?}");
        assert_eq!(value(s, "dbsweep_clients", &[]), Some(2.0));
        assert!(value(s, "dbsweep_transactions_per_second", &[]).unwrap() > 0.0);
        assert_eq!(
            value(s, "dbsweep_errors_total", &[("kind", "deadlock")]),
            Some(0.0)
        );
        let machine = value(s, "dbsweep_machine_cpu_ratio", &[]).expect("the machine's CPU");
        assert!(machine > 0.0 && machine <= 1.0, "{machine}");
        // SQLite runs inside dbsweep: no server CPU, rather than a 0.
        assert!(!s.keys().any(|(n, _)| n.starts_with("dbsweep_server_cpu")));
        // A closed loop offers nothing of its own.
        assert!(!s.keys().any(|(n, _)| n.starts_with("dbsweep_offered")));
    }
    // Without an Accept header that asks for it: the classic format, the
    // same samples.
    let classic = scrape(port, None).expect("still served");
    assert_eq!(
        classic.content_type,
        "text/plain; version=0.0.4; charset=utf-8"
    );
    assert!(!classic.body.contains("# EOF") && !classic.body.contains("# UNIT"));
    assert!(
        samples(&classic.body).contains_key(&("dbsweep_transactions_total".into(), {
            let mut l = BTreeMap::new();
            l.insert("workload".to_string(), "oltp_point_select".to_string());
            l.insert(
                "target".to_string(),
                b.keys()
                    .find(|(n, _)| n == "dbsweep_transactions_total")
                    .unwrap()
                    .1["target"]
                    .clone(),
            );
            l
        }))
    );

    let (status, stdout, stderr) = finish(child);
    assert_eq!(status, 0, "{stdout}\n{stderr}");
    // The feed's intervals are not printed unless asked for.
    assert!(
        !stdout.lines().any(|l| l.starts_with("[ ")),
        "interval lines printed:\n{stdout}"
    );
    let record = util::read_json(&dir.join("run.json"));
    let recorded = record["result"]["transactions"].as_f64().unwrap();
    assert!(total(&b) <= recorded, "{} > {recorded}", total(&b));
    let intervals = record["result"]["intervals"].as_array().unwrap();
    assert!((intervals[0]["duration_s"].as_f64().unwrap() - 1.0).abs() < 0.05);
    // The server is gone with the run.
    assert!(scrape(port, None).is_none());
}

/// A body of each format from a short run with a rate (so the offered
/// load and the schedule lag are there too).
fn bodies() -> (String, String) {
    let dir = Dir::new();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let child = spawn(
        &dir,
        &[
            "run",
            "oltp_point_select",
            "--threads",
            "2",
            "--time",
            "6",
            "--rate",
            "200",
            "--prometheus",
            &addr,
        ],
    );
    let om = scrape_until(port, Some(OPENMETRICS), |s| {
        measured(s)
            && value(s, "dbsweep_offered_transactions_per_second", &[]).is_some()
            && value(s, "dbsweep_client_cpu_ratio", &[]).is_some()
    });
    let classic = scrape(port, None).expect("still served");
    let (status, stdout, stderr) = finish(child);
    assert_eq!(status, 0, "{stdout}\n{stderr}");
    assert!(om.body.contains("dbsweep_schedule_lag_seconds"));
    (om.body, classic.body)
}

/// Runs `program args` with `input` on its standard input: (status, output).
fn pipe(program: &str, args: &[&str], input: &str) -> (i32, String) {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

fn found(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn promtool_and_an_openmetrics_parser_accept_the_feed() {
    let promtool = found("promtool");
    // Debian's python3-prometheus-client is the system Python's, which
    // need not be the first on the PATH.
    let python = ["python3", "/usr/bin/python3"].into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "import prometheus_client.openmetrics.parser"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !promtool && python.is_none() {
        println!("skipped: neither promtool (Debian's prometheus) nor python3's prometheus_client is installed");
        return;
    }
    let (om, classic) = bodies();
    if promtool {
        // `check metrics` lints what it reads: a problem is a line and
        // exit status 3.
        let (status, out) = pipe("promtool", &["check", "metrics"], &classic);
        assert_eq!(status, 0, "promtool:\n{out}\n--- the body\n{classic}");
        assert!(out.trim().is_empty(), "promtool:\n{out}");
    } else {
        println!("promtool skipped: not installed (apt-get install prometheus)");
    }
    if let Some(python) = python {
        // The reference client's OpenMetrics parser: strict about the
        // metadata, the units, `_total`, state sets and `# EOF`.
        let script = "import sys\n\
            from prometheus_client.openmetrics.parser import text_string_to_metric_families as p\n\
            fams = list(p(sys.stdin.read()))\n\
            print(' '.join(sorted(f.name + ':' + f.type + ':' + f.unit for f in fams)))\n";
        let (status, out) = pipe(python, &["-c", script], &om);
        assert_eq!(status, 0, "{out}\n--- the body\n{om}");
        for want in [
            "dbsweep_transactions:counter:",
            "dbsweep_errors:counter:",
            "dbsweep_phase:stateset:",
            "dbsweep_latency_seconds:summary:seconds",
            "dbsweep_machine_cpu_ratio:gauge:ratio",
            "dbsweep_client_cpu_seconds:counter:seconds",
        ] {
            assert!(out.split_whitespace().any(|f| f == want), "{want} in {out}");
        }
    } else {
        println!("OpenMetrics parser skipped: python3's prometheus_client is not installed");
    }
}

#[test]
fn a_port_already_taken_is_refused_before_anything_runs() {
    let dir = Dir::new();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let json = dir.join("run.json").display().to_string();
    let run = dbsweep_in(
        dir.path(),
        &[
            "run",
            "oltp_point_select",
            "--time",
            "1",
            "--prometheus",
            &addr,
            "--json",
            &json,
        ],
    );
    run.expect_status(2);
    assert_eq!(
        run.stderr,
        format!("error: --prometheus {addr}: address already in use; choose another port or stop what listens there\n")
    );
    assert_eq!(run.stdout, "");
    assert!(dir.files().is_empty(), "{:?}", dir.files());

    // A study says which file and key.
    let file = dir.join("feed.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"feed\"\nout = \"out\"\nclients = [1]\nprometheus = \"{addr}\"\n\n\
             [[target]]\nname = \"fake\"\nurl = \"fake://?latency=100us\"\n\n\
             [[workload]]\nname = \"oltp_point_select\"\ntime = 0.5\n"
        ),
    )
    .unwrap();
    let study = dbsweep_in(dir.path(), &["study", &file.display().to_string()]);
    study.expect_status(2);
    assert_eq!(
        study.stderr,
        format!(
            "error: {}: prometheus = \"{addr}\": address already in use; choose another port or stop what listens there\n",
            file.display()
        )
    );
    assert!(!dir.join("out").exists());
    // Not an address: the study file's position and what was expected.
    std::fs::write(
        &file,
        "name = \"feed\"\nclients = [1]\nprometheus = \"9187\"\n\n[[workload]]\nname = \"oltp_point_select\"\n",
    )
    .unwrap();
    let bad = dbsweep_in(dir.path(), &["study", &file.display().to_string()]);
    bad.expect_status(2);
    assert!(bad.stderr.contains("prometheus"), "{}", bad.stderr);
    assert!(bad.stderr.contains("expected HOST:PORT"), "{}", bad.stderr);
    drop(taken);
}

#[test]
fn a_study_serves_each_point_with_its_labels() {
    let dir = Dir::new();
    let port = free_port();
    let file = dir.join("feed.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"feed\"\nout = \"out\"\nclients = [1, 3]\nprometheus = \"127.0.0.1:{port}\"\n\n\
             [[target]]\nname = \"fake\"\nurl = \"fake://?latency=200us\"\n\n\
             [[workload]]\nname = \"oltp_point_select\"\ntime = 2.5\n"
        ),
    )
    .unwrap();
    let child = spawn(&dir, &["study", &file.display().to_string()]);
    let clients = |n: &'static str| {
        move |s: &Samples| {
            measured(s)
                && value(s, "dbsweep_clients", &[("clients", n)]) == n.parse().ok()
                && s.keys().any(|(n, _)| n == "dbsweep_latency_seconds")
        }
    };
    let one = samples(&scrape_until(port, Some(OPENMETRICS), clients("1")).body);
    let three = samples(&scrape_until(port, Some(OPENMETRICS), clients("3")).body);
    for (s, n) in [(&one, "1"), (&three, "3")] {
        let labels: BTreeSet<(String, String)> = s
            .keys()
            .find(|(name, _)| name == "dbsweep_transactions_total")
            .unwrap()
            .1
            .clone()
            .into_iter()
            .collect();
        let want: BTreeSet<(String, String)> = [
            ("workload", "oltp_point_select"),
            ("target", "fake"),
            ("study", "feed"),
            ("study_target", "fake"),
            ("variant", "base"),
            ("clients", n),
            ("repeat", "1"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(labels, want);
    }
    let (status, stdout, stderr) = finish(child);
    assert_eq!(status, 0, "{stdout}\n{stderr}");
}

/// Every family of a feed with every figure, by its sample names.
fn served_names() -> BTreeSet<String> {
    use dbsweep::engine::recorder::Counters;
    use dbsweep::report::run::feed::{Cpu, CpuSeconds, Feed, Last, Phase, Sum};
    use dbsweep::report::run::openmetrics::{render, Format};
    let feed = Feed {
        labels: vec![("workload".into(), "w".into())],
        phase: Phase::Measured,
        totals: Counters::default(),
        latency: Sum::default(),
        lag: Some(Sum::default()),
        last: Some(Last {
            t_s: 1.0,
            clients: 1,
            tps: 1.0,
            offered_per_s: Some(1.0),
            queue: Some(0),
            latency_s: [Some(1.0); 4],
            lag_s: [Some(1.0); 2],
        }),
        cpu: Some(Cpu {
            machine: 0.5,
            client: 0.1,
            server: Some(0.2),
        }),
        cpu_seconds: Some(CpuSeconds {
            machine_busy: 1.0,
            client: 1.0,
            server: Some(1.0),
        }),
    };
    samples(&render(&feed, Format::OpenMetrics))
        .into_keys()
        .map(|(n, _)| n)
        .collect()
}

#[test]
fn the_grafana_dashboard_names_only_metrics_the_feed_serves() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/grafana/dbsweep.json");
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).expect("JSON");
    let mut exprs = Vec::new();
    fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    match (k.as_str(), v) {
                        ("expr" | "query", serde_json::Value::String(s)) => out.push(s.clone()),
                        _ => walk(v, out),
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    walk(&dashboard, &mut exprs);
    let served = served_names();
    let mut named = BTreeSet::new();
    for e in &exprs {
        let mut rest = e.as_str();
        while let Some(i) = rest.find("dbsweep_") {
            let name: String = rest[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            rest = &rest[i + name.len()..];
            named.insert(name);
        }
    }
    for name in &named {
        assert!(served.contains(name), "{name} is not served: {served:?}");
    }
    // The panels the dashboard promises.
    for want in [
        "dbsweep_transactions_per_second",
        "dbsweep_offered_transactions_per_second",
        "dbsweep_latency_seconds",
        "dbsweep_errors_total",
        "dbsweep_machine_cpu_ratio",
        "dbsweep_server_cpu_ratio",
    ] {
        assert!(named.contains(want), "no panel reads {want}");
    }
}
