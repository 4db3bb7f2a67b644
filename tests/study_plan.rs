//! Study files: loading, validation messages, and plan expansion, checked
//! against hand-computed counts. Nothing here runs a benchmark.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use dbsweep::study::{self, load_str, plan, PointKey, Restart, Study, VariantOrigin};

/// Loads study text as if it were `studies/x.toml`.
fn load(text: &str) -> Study {
    load_str(text, Path::new("studies/x.toml")).unwrap_or_else(|e| panic!("{e}"))
}

/// The error message of a study that must not load.
fn error(text: &str) -> String {
    match load_str(text, Path::new("studies/x.toml")) {
        Ok(_) => panic!("loaded, but should not have:\n{text}"),
        Err(e) => e.0,
    }
}

/// `studies/x.toml:LINE:COL:` of the first occurrence of `needle`.
fn at(text: &str, needle: &str) -> String {
    let off = text
        .find(needle)
        .unwrap_or_else(|| panic!("'{needle}' not in text"));
    let line = text[..off].matches('\n').count() + 1;
    let col = off - text[..off].rfind('\n').map_or(0, |i| i + 1) + 1;
    format!("studies/x.toml:{line}:{col}: ")
}

/// Asserts the message starts with the position of `needle`, then `field: `,
/// and contains `words`.
#[track_caller]
fn assert_error(text: &str, needle: &str, field: &str, words: &str) {
    let e = error(text);
    let prefix = format!("{}{field}: ", at(text, needle));
    assert!(
        e.starts_with(&prefix),
        "expected prefix '{prefix}' in:\n{e}"
    );
    assert!(e.contains(words), "expected '{words}' in:\n{e}");
}

/// 2 managed targets × 3 declared variants (one only on `my`) × 2 CPU sets
/// × 2 workloads with different repeats and instances × 3 client counts.
const MATRIX: &str = r#"
name = "matrix"
order = "sequential"
clients = "1,2,4"
cpus = [[0], "0-1"]

[[target]]
name = "my"
server = "mariadb"
settings = { innodb_buffer_pool_size = "256M", innodb_io_capacity = 200 }

[[target]]
name = "pg"
server = "postgres"
settings = { shared_buffers = "256MB" }

[[variant]]
name = "a"
settings = { max_connections = 500 }

[[variant]]
name = "b"
settings = { max_connections = 800 }

[[variant]]
name = "io1000"
settings = { innodb_io_capacity = 1000 }
targets = ["my"]

[[workload]]
name = "oltp_read_only"
options = { table-size = 1000 }
time = 2
repeats = 3

[[workload]]
name = "oltp_point_select"
options = { table-size = 1000 }
time = 2
repeats = 2
instances = 2
"#;

#[test]
fn matrix_expands_to_the_hand_computed_points() {
    let s = load(MATRIX);
    // (target, variant) pairs: my has base, a, b, io1000; pg has base, a, b.
    assert_eq!(s.variants.len(), 4 + 3);
    let names: Vec<_> = s
        .variants
        .iter()
        .map(|v| format!("{}:{}", s.targets[v.target].name, v.name))
        .collect();
    assert_eq!(
        names,
        [
            "my:base",
            "my:a",
            "my:b",
            "my:io1000",
            "pg:base",
            "pg:a",
            "pg:b"
        ]
    );
    let p = plan(&s);
    // Per (pair, CPU set): workload 0 = 3 counts × 3 repeats = 9 points,
    // workload 1 = 3 counts × 2 repeats = 6 points.
    // 7 pairs × 2 CPU sets × (9 + 6) = 210.
    assert_eq!(p.points.len(), 210);
    assert_eq!(p.series.len(), 7 * 2 * 2);
    // restart = per-variant: one start per (pair, CPU set).
    assert_eq!(p.points.iter().filter(|pt| pt.start_server).count(), 14);
    // Workloads 0 and 1 differ in instances, so each (pair, CPU set) loads
    // twice: 14 × 2.
    assert_eq!(p.points.iter().filter(|pt| pt.prepare).count(), 28);
    assert_eq!(
        p.points.iter().filter(|pt| pt.instances == 2).count(),
        7 * 2 * 6
    );

    // Outermost order: target, variant, CPU set; then workload, clients, repeat.
    let first: Vec<String> = p.points[..10].iter().map(|pt| pt.key.to_string()).collect();
    assert_eq!(
        first[0],
        "target=my/variant=base/cpus=0/workload=0:oltp_read_only/clients=1/instances=1/repeat=1"
    );
    assert_eq!(
        first[2],
        "target=my/variant=base/cpus=0/workload=0:oltp_read_only/clients=1/instances=1/repeat=3"
    );
    assert_eq!(
        first[9],
        "target=my/variant=base/cpus=0/workload=1:oltp_point_select/clients=1/instances=2/repeat=1"
    );
    let last = p.points.last().unwrap();
    assert_eq!(
        last.key.to_string(),
        "target=pg/variant=b/cpus=0-1/workload=1:oltp_point_select/clients=4/instances=2/repeat=2"
    );
    // Series hold the points of one (target, variant, cpus, workload);
    // in sequential order, contiguous ones.
    for (i, se) in p.series.iter().enumerate() {
        assert!(
            se.points.windows(2).all(|w| w[1] == w[0] + 1),
            "{:?}",
            se.points
        );
        for pt in se.points.iter().map(|&k| &p.points[k]) {
            assert_eq!(
                (pt.series, pt.target, pt.variant, &pt.cpus, pt.workload),
                (i, se.target, se.variant, &se.cpus, se.workload)
            );
        }
    }
}

#[test]
fn variants_resolve_to_full_settings() {
    let s = load(MATRIX);
    let get = |t: &str, v: &str| {
        s.variants
            .iter()
            .find(|x| s.targets[x.target].name == t && x.name == v)
            .unwrap()
    };
    let pairs = |v: &[(&str, &str)]| {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        get("my", "base").settings,
        pairs(&[
            ("innodb_buffer_pool_size", "256M"),
            ("innodb_io_capacity", "200")
        ])
    );
    // Overrides replace in place, new settings are appended.
    assert_eq!(
        get("my", "io1000").settings,
        pairs(&[
            ("innodb_buffer_pool_size", "256M"),
            ("innodb_io_capacity", "1000")
        ])
    );
    assert_eq!(
        get("pg", "a").settings,
        pairs(&[("shared_buffers", "256MB"), ("max_connections", "500")])
    );
    assert_eq!(
        get("pg", "a").overrides,
        pairs(&[("max_connections", "500")])
    );
    // The runner gets a ready ServerSpec per point.
    let p = plan(&s);
    let pt = p
        .points
        .iter()
        .find(|pt| pt.key.variant == "io1000" && pt.cpus == Some(vec![0, 1]))
        .unwrap();
    let spec = s.server_spec(pt).unwrap();
    assert_eq!(spec.cpus, Some(vec![0, 1]));
    assert_eq!(spec.settings, get("my", "io1000").settings);
    assert_eq!(spec.dir, Path::new("results/matrix/servers/my"));
}

#[test]
fn point_keys_are_unique_stable_and_parse_back() {
    let a = plan(&load(MATRIX));
    let b = plan(&load(MATRIX));
    let keys: Vec<String> = a.points.iter().map(|p| p.key.to_string()).collect();
    let again: Vec<String> = b.points.iter().map(|p| p.key.to_string()).collect();
    assert_eq!(keys, again, "the same file gives the same keys");
    let distinct: BTreeSet<&String> = keys.iter().collect();
    assert_eq!(distinct.len(), keys.len(), "keys are unique");
    for (p, k) in a.points.iter().zip(&keys) {
        assert_eq!(&k.parse::<PointKey>().unwrap(), &p.key);
    }
}

#[test]
fn restart_policies_decide_server_starts() {
    // One CPU set; variant "same" has the base's settings.
    let text = |restart: &str| {
        format!(
            r#"
restart = "{restart}"
order = "sequential"
clients = [1, 2]
[[target]]
server = "mariadb"
settings = {{ max_connections = 100 }}
[[variant]]
name = "same"
settings = {{ max_connections = 100 }}
[[variant]]
name = "more"
settings = {{ max_connections = 200 }}
[[workload]]
name = "oltp_point_select"
time = 1
"#
        )
    };
    let starts = |restart: &str| {
        let s = load(&text(restart));
        plan(&s).points.iter().filter(|p| p.start_server).count()
    };
    // 3 variants × 2 counts = 6 points.
    assert_eq!(starts("never"), 2, "first point and the settings change");
    assert_eq!(starts("per-variant"), 3);
    assert_eq!(starts("per-point"), 6);
    assert_eq!(load(&text("never")).restart, Restart::Never);
}

#[test]
fn data_changing_workloads_reload_as_asked() {
    let s = load(
        r#"
clients = [1, 2]
[[workload]]
name = "oltp_read_only"
time = 1
repeats = 2
[[workload]]
name = "oltp_delete"
time = 1
repeats = 2
[[workload]]
name = "oltp_point_select"
time = 1
[[workload]]
name = "oltp_insert"
time = 1
repeats = 2
reprepare = "per-repeat"
"#,
    );
    let loads: Vec<bool> = plan(&s).points.iter().map(|p| p.prepare).collect();
    assert_eq!(
        loads,
        [
            // read_only: first load, then the data stays.
            true, false, false, false, //
            // delete (per-point by default): before each count's first repeat.
            true, false, true, false, //
            // point_select: same tables, but delete changed them.
            true, false, //
            // insert, per-repeat.
            true, true, true, true,
        ]
    );
    // SQLite by default: no server to start.
    assert!(plan(&s).points.iter().all(|p| !p.start_server));
}

#[test]
fn parameter_sweep_expands_one_setting_at_a_time() {
    let s = load(
        r#"
order = "sequential"
clients = [1, 8]
[[target]]
name = "db"
server = "mariadb"
settings = { innodb_buffer_pool_size = "1G", innodb_io_capacity = 400 }
[[target]]
name = "lite"
sqlite = true
[[workload]]
name = "oltp_read_only"
time = 5
[sweep.parameter]
clients = 64
values = { innodb_buffer_pool_instances = [1, 4, 8], innodb_io_capacity = [200, 1000] }
"#,
    );
    let sweep = s.sweep.as_ref().unwrap();
    assert_eq!((sweep.clients, sweep.baseline.as_str()), (64, "base"));
    // Reports read it back as validated, not from the file.
    let stored = s.stored_design().sweep.unwrap();
    assert_eq!((stored.clients, stored.baseline.as_str()), (64, "base"));
    assert_eq!(sweep.targets, vec![0], "only managed targets are swept");
    let names: Vec<&str> = s.variants_of(0).map(|(_, v)| v.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "base",
            "innodb_buffer_pool_instances=1",
            "innodb_buffer_pool_instances=4",
            "innodb_buffer_pool_instances=8",
            "innodb_io_capacity=200",
            "innodb_io_capacity=1000"
        ]
    );
    let (_, io) = s.variants_of(0).last().unwrap();
    assert_eq!(
        io.origin,
        VariantOrigin::Sweep {
            setting: "innodb_io_capacity".into(),
            value: "1000".into()
        }
    );
    assert_eq!(
        io.settings,
        vec![
            ("innodb_buffer_pool_size".to_string(), "1G".to_string()),
            ("innodb_io_capacity".to_string(), "1000".to_string())
        ]
    );
    let p = plan(&s);
    let points: Vec<String> = p
        .points
        .iter()
        .map(|p| format!("{}/{}/{}", p.key.target, p.key.variant, p.clients))
        .collect();
    assert_eq!(
        points,
        [
            // The baseline: its own counts plus the sweep's.
            "db/base/1",
            "db/base/8",
            "db/base/64",
            // Generated variants: the sweep's count only.
            "db/innodb_buffer_pool_instances=1/64",
            "db/innodb_buffer_pool_instances=4/64",
            "db/innodb_buffer_pool_instances=8/64",
            "db/innodb_io_capacity=200/64",
            "db/innodb_io_capacity=1000/64",
            // Not swept: its own counts.
            "lite/base/1",
            "lite/base/8",
        ]
    );
}

#[test]
fn parameter_sweep_from_a_declared_baseline_alone() {
    // No clients anywhere: everything runs at the sweep's count.
    let s = load(
        r#"
order = "sequential"
[[target]]
server = "postgres"
[[variant]]
name = "big"
settings = { shared_buffers = "2GB" }
[[workload]]
name = "oltp_read_write"
time = 5
repeats = 2
[sweep.parameter]
clients = 16
baseline = "big"
values = { work_mem = ["4MB", "64MB"] }
"#,
    );
    let p = plan(&s);
    let points: Vec<String> = p
        .points
        .iter()
        .map(|p| format!("{}/{}/{}", p.key.variant, p.clients, p.repeat))
        .collect();
    assert_eq!(
        points,
        [
            "base/16/1",
            "base/16/2",
            "big/16/1",
            "big/16/2",
            "work_mem=4MB/16/1",
            "work_mem=4MB/16/2",
            "work_mem=64MB/16/1",
            "work_mem=64MB/16/2"
        ]
    );
    let wm = &s.variants[3];
    assert_eq!(
        wm.settings,
        vec![
            ("shared_buffers".to_string(), "2GB".to_string()),
            ("work_mem".to_string(), "64MB".to_string())
        ]
    );
}

#[test]
fn workload_fields_get_study_defaults() {
    let s = load(
        r#"
name = "d"
clients = "pow2 1..8"
[[workload]]
name = "oltp_read_write"
options = { skip-trx = true, tables = 2 }
[[workload]]
name = "oltp_delete"
events = 1000
clients = [3, "10..30 step 10"]
warmup = "1.5s"
report_interval = 0
rand_type = "special"
rand_seed = 7
ignore_errors = "deadlock,duplicate_key"
max_retries = 5
"#,
    );
    assert_eq!(s.out, Path::new("results/d"));
    assert_eq!(s.targets[0].name, "sqlite");
    let [a, b] = &s.workloads[..] else { panic!() };
    assert_eq!(a.clients, [1, 2, 4, 8]);
    assert_eq!(a.time, Some(Duration::from_secs(10)));
    assert_eq!(a.report_interval, Some(Duration::from_secs(1)));
    assert_eq!(a.repeats, study::Repeats::fixed(1));
    assert_eq!(a.reprepare, study::Reprepare::Never);
    assert_eq!(
        a.options,
        vec![
            ("skip-trx".to_string(), "on".to_string()),
            ("tables".to_string(), "2".to_string())
        ]
    );
    assert_eq!(
        a.values.iter().find(|(k, _)| *k == "table-size").unwrap().1,
        "10000"
    );
    assert_eq!(b.clients, [3, 10, 20, 30]);
    assert_eq!((b.time, b.events), (None, Some(1000)));
    assert_eq!(b.warmup, Duration::from_millis(1500));
    assert_eq!(b.report_interval, None);
    assert_eq!(b.rand_seed, Some(7));
    assert_eq!(b.reprepare, study::Reprepare::PerPoint);
    let rc = b.run_config(20, 7);
    assert_eq!(
        (rc.threads, rc.events, rc.max_retries),
        (20, Some(1000), Some(5))
    );
    assert!(rc
        .ignore_errors
        .contains(dbsweep::driver::ErrorKind::DuplicateKey));
}

#[test]
fn unknown_key_is_located() {
    let t = "clients = [1]\n[[workload]]\nname = \"oltp_read_only\"\nrepeatz = 2\n";
    assert_error(
        t,
        "repeatz",
        "workload[0]",
        "unknown key 'repeatz' (did you mean 'repeats'?)",
    );
    let t = "clients = [1]\nthreads = 4\n[[workload]]\nname = \"oltp_read_only\"\n";
    assert_error(
        t,
        "threads",
        "threads",
        "unknown key 'threads'; expected one of: name,",
    );
    let t = "clients = [1]\n[[workload]]\nname = \"oltp_read_only\"\n[stop]\nbelow_peek = 0.2\n";
    assert_error(t, "below_peek", "stop", "did you mean 'below_peak'?");
}

#[test]
fn wrong_type_is_located() {
    let t = "clients = [1]\n[[workload]]\nname = \"oltp_read_only\"\nrepeats = \"two\"\n";
    assert_error(
        t,
        "\"two\"",
        "workload[0].repeats",
        "expected a number of repeats (e.g. 3), or { min = 3, max = 10",
    );
    let t = "clients = [1, 2.5]\n[[workload]]\nname = \"oltp_read_only\"\n";
    assert_error(t, "2.5", "clients[1]", "expected client counts");
    let t = "clients = [1]\ncpus = [0, 1]\n[[target]]\nserver = \"mariadb\"\n[[workload]]\nname = \"oltp_read_only\"\n";
    assert_error(t, "0, 1]", "cpus[0]", "pinning to CPU 0 alone is [0]");
    let t = "clients = [1]\n[[workload]]\nname = \"oltp_read_only\"\ntime = \"10 parsecs\"\n";
    assert_error(t, "\"10 parsecs\"", "workload[0].time", "bad duration");
    let t = "clients = [1]\n[workload]\nname = \"oltp_read_only\"\n";
    assert_error(t, "[workload]", "workload", "write [[workload]]");
}

#[test]
fn empty_or_zero_clients_are_located() {
    let t = "clients = []\n[[workload]]\nname = \"oltp_read_only\"\n";
    assert_error(t, "[]", "clients", "the client list is empty");
    let t = "clients = \"\"\n[[workload]]\nname = \"oltp_read_only\"\n";
    assert_error(t, "\"\"", "clients", "empty client list");
    let t = "[[workload]]\nname = \"oltp_read_only\"\nclients = [4, 0]\n";
    assert_error(t, "0]", "workload[0].clients[1]", "0 is not a client count");
    let t = "[[workload]]\nname = \"oltp_read_only\"\nclients = \"1,10..1\"\n";
    assert_error(t, "\"1,10", "workload[0].clients", "ends below its start");
    let t = "[[workload]]\nname = \"oltp_read_only\"\n";
    assert_error(t, "[[workload]]", "workload[0]", "no client counts");
}

#[test]
fn unknown_workload_is_located() {
    let t = "clients = [1]\n[[workload]]\nname = \"oltp_read_onyl\"\n";
    assert_error(
        t,
        "\"oltp_read_onyl\"",
        "workload[0].name",
        "unknown workload 'oltp_read_onyl' (did you mean 'oltp_read_only'?)",
    );
    let t = "clients = [1]\n[[workload]]\nname = \"linkbench\"\n";
    assert_error(
        t,
        "\"linkbench\"",
        "workload[0].name",
        "built-in workloads are: oltp_read_only,",
    );
}

#[test]
fn unknown_workload_option_is_located() {
    let t = "clients = [1]\n\n[[workload]]\nname = \"oltp_point_select\"\n\n[[workload]]\nname = \"oltp_read_only\"\noptions = { tables = 2, tabel-size = 10000 }\n";
    assert_eq!(
        error(t),
        "studies/x.toml:8:25: workload[1].options: unknown option 'tabel-size' for oltp_read_only (did you mean 'table-size'?)"
    );
    // An option of another workload, and a bad value, as the CLI rejects them.
    let t = "clients = [1]\n[[workload]]\nname = \"oltp_read_only\"\noptions = { delta = 3 }\n";
    assert_error(
        t,
        "delta",
        "workload[0].options",
        "option 'delta' does not apply to oltp_read_only",
    );
    let t = "clients = [1]\n[[workload]]\nname = \"oltp_read_only\"\noptions = { tables = -1 }\n";
    assert_error(
        t,
        "-1",
        "workload[0].options",
        "invalid value '-1' for 'tables'",
    );
    let t = "clients = [1]\n[[workload]]\nname = \"oltp_read_only\"\noptions = { tables = 0 }\n";
    assert_error(t, "{ tables", "workload[0].options", "tables");
}

#[test]
fn unknown_references_are_located() {
    let t = r#"clients = [1]
[[target]]
name = "maria"
server = "mariadb"
[[variant]]
name = "bp8"
settings = { innodb_buffer_pool_instances = 8 }
targets = ["mysql"]
[[workload]]
name = "oltp_read_only"
"#;
    assert_error(
        t,
        "\"mysql\"",
        "variant[0].targets[0]",
        "unknown target 'mysql'; the targets are: maria",
    );
    let t = t.replace("\"mysql\"", "\"mari\"");
    assert_error(
        &t,
        "\"mari\"",
        "variant[0].targets[0]",
        "(did you mean 'maria'?)",
    );
    let t = r#"clients = [1]
[[target]]
server = "mariadb"
[[workload]]
name = "oltp_read_only"
[sweep.parameter]
clients = 8
baseline = "bp9"
values = { innodb_io_capacity = [100] }
"#;
    assert_error(
        t,
        "\"bp9\"",
        "sweep.parameter.baseline",
        "no managed target has the baseline variant 'bp9'",
    );
}

#[test]
fn cpus_on_unmanaged_target_are_located() {
    let t = "clients = [1]\n[[target]]\nurl = \"postgres://u@localhost/db\"\ncpus = [[0]]\n[[workload]]\nname = \"oltp_read_only\"\n";
    assert_error(
        t,
        "[[0]]",
        "target[0].cpus",
        "cpus applies only to a managed server",
    );
    let t = "clients = [1]\ncpus = [[0]]\n[[workload]]\nname = \"oltp_read_only\"\n";
    assert_error(t, "[[0]]", "cpus", "CPU sets pin managed servers");
    let t = "clients = [1]\ncpus = [[0], [4095]]\n[[target]]\nserver = \"postgres\"\n[[workload]]\nname = \"oltp_read_only\"\n";
    assert_error(
        t,
        "[4095]",
        "cpus[1]",
        "CPU 4095 is not available on this machine",
    );
}

#[test]
fn other_mistakes_are_located() {
    let t = "clients = [1]\n[[target]]\nurl = \"postgres://h:notaport/db\"\n[[workload]]\nname = \"oltp_read_only\"\n";
    assert_error(t, "\"postgres:", "target[0].url", "malformed");
    let t = "clients = [1]\n[[target]]\nserver = \"mariadb\"\n[[target]]\nserver = \"mysql\"\n[[workload]]\nname = \"oltp_read_only\"\n";
    assert_error(
        t,
        "[[target]]\nserver = \"mysql\"",
        "target[1]",
        "already used by target[0]",
    );
    let t =
        "clients = [1]\n[[target]]\nserver = \"oracle\"\n[[workload]]\nname = \"oltp_read_only\"\n";
    assert_error(
        t,
        "\"oracle\"",
        "target[0].server",
        "use mariadb or postgres",
    );
    let t = "clients = [1]\n[[target]]\nname = \"x\"\n[[workload]]\nname = \"oltp_read_only\"\n";
    assert_error(t, "[[target]]", "target[0]", "a target needs one of url");
    let t = "clients = [1]\n[[variant]]\nname = \"v\"\n[[workload]]\nname = \"oltp_read_only\"\n";
    assert_error(t, "[[variant]]", "variant[0]", "applies to no target");
    let t = "clients = [1]\n[[target]]\nserver = \"mariadb\"\n[[variant]]\nname = \"base\"\n[[workload]]\nname = \"oltp_read_only\"\n";
    assert_error(t, "\"base\"", "variant[0].name", "reserved");
    let t = "clients = [1]\n[[workload]]\nname = \"oltp_read_only\"\nevents = 0\ntime = 0\n";
    assert_error(t, "[[workload]]", "workload[0]", "the run has no end");
    let t = "clients = [1]\n[[workload]]\nname = \"oltp_read_only\"\n[stop]\nbelow_peak = 1.5\n";
    assert_error(t, "1.5", "stop.below_peak", "between 0 and 1");
    let t = "clients = [1]\n[[target]]\nserver = \"postgres\"\nsettings = { fsync = \"\" }\n[[workload]]\nname = \"oltp_read_only\"\n";
    assert_error(
        t,
        "\"\" }",
        "target[0].settings",
        "PostgreSQL settings need one",
    );
    let t = "clients = [1]\n[[workload]]\nname = \"oltp_read_only\"\nrand_type = \"zipf\"\n";
    assert_error(
        t,
        "\"zipf\"",
        "workload[0].rand_type",
        "expected one of uniform",
    );
    let t = "clients = [1]\n[[workload]]\nname = \"oltp_read_only\"\nreprepare = \"always\"\n";
    assert_error(
        t,
        "\"always\"",
        "workload[0].reprepare",
        "unknown value `always`",
    );
    let t = "clients = [1\n";
    assert!(error(t).starts_with("studies/x.toml:1:"), "{}", error(t));
    assert!(error("clients = [1]\n").contains("no [[workload]]"));
    let e = study::load(Path::new("/no/such/study.toml")).unwrap_err();
    assert!(
        e.0.contains("cannot read study file '/no/such/study.toml'"),
        "{e}"
    );
}

#[test]
fn example_studies_load_and_plan() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("studies");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let s = study::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let p = plan(&s);
        assert!(!p.points.is_empty(), "{}", path.display());
        let text = p.describe(&s);
        assert!(
            text.contains("points: ") && text.contains("series"),
            "{text}"
        );
        seen += 1;
    }
    assert!(seen >= 4, "only {seen} studies in {}", dir.display());

    let quick = study::load(&dir.join("quickstart.toml")).unwrap();
    let p = plan(&quick);
    assert_eq!(p.points.len(), 16);
    assert!(
        p.estimated_duration(&quick) < Duration::from_secs(120),
        "{:?}",
        p.estimated_duration(&quick)
    );
    let seed2 = study::load(&dir.join("seed002-cpus.toml")).unwrap();
    // Two targets and the control's twin, two workloads, two CPU sets,
    // nine client counts, up to five blocks.
    assert_eq!(plan(&seed2).points.len(), 3 * 2 * 2 * 9 * 5);
    // The calibration point, then 10 % … 100 % and 110 %, 120 %.
    let rates = study::load(&dir.join("rate-sweep.toml")).unwrap();
    let keys: Vec<String> = plan(&rates)
        .points
        .iter()
        .map(|p| p.key.to_string())
        .collect();
    assert_eq!(keys.len(), 1 + 12);
    assert!(keys[0].ends_with("repeat=1"), "{}", keys[0]);
    assert!(keys[1].ends_with("repeat=1/rate=10%"), "{}", keys[1]);
    assert!(keys[12].ends_with("repeat=1/rate=120%"), "{}", keys[12]);
}

#[test]
fn dry_run_description_counts_and_estimates() {
    let s = load(MATRIX);
    let p = plan(&s);
    let d = p.describe(&s);
    assert!(
        d.contains("study matrix (studies/x.toml) → results/matrix"),
        "{d}"
    );
    assert!(d.contains("axes: 2 targets, 4 variants (7 target × variant series), 2 CPU sets, 2 workloads, 3 client counts (1,2,4), repeats 2, 3"), "{d}");
    assert!(
        d.contains("points: 210 in 28 series; server starts: 14; data loads: 28"),
        "{d}"
    );
    assert!(d.contains("  [0] my / base / 0 / 0:oltp_read_only: 1,2,4 × 3 = 9 points; 1 server start, 1 data load"), "{d}");
    // 210 points × (2 s + 1 s) + 14 starts × 5 s + 28 loads × (1 s + 1000
    // rows or 2000 rows at 100 000/s).
    let expect = 210.0 * 3.0 + 14.0 * 5.0 + 28.0 + 14.0 * (0.01 + 0.02);
    let got = p.estimated_duration(&s).as_secs_f64();
    assert!((got - expect).abs() < 1e-6, "{got} vs {expect}");
}

#[test]
fn rate_and_user_axes_expand_with_a_calibration_point_first() {
    let s = load(
        r#"
name = "paced"
clients = [2, 4]

[[workload]]
name = "oltp_point_select"
label = "open"
rates = ["25%..75% of peak step 25%", 1000]
arrival = "uniform"
latency_limit = "10ms"
p99_goal = "5ms"
repeats = 2

[[workload]]
name = "oltp_point_select"
label = "users"
users = "100, 1000"
think_time = "exp:1s"
"#,
    );
    let spec = &s.workloads[0].pacing;
    assert!(spec.calibrates());
    assert_eq!(spec.latency_limit, Some(Duration::from_millis(10)));
    assert_eq!(spec.p99_goal, Some(Duration::from_millis(5)));
    let p = plan(&s);
    let keys: Vec<String> = p.points.iter().map(|p| p.key.to_string()).collect();
    // Per client count: the closed-loop calibration point, then each level,
    // each with its repeats.
    let open: Vec<String> = keys
        .iter()
        .filter(|k| k.contains("workload=0:"))
        .map(|k| k.rsplit_once("instances=1/").unwrap().1.to_string())
        .collect();
    let mut want = Vec::new();
    for _ in [2, 4] {
        for level in ["", "/rate=25%", "/rate=50%", "/rate=75%", "/rate=1000"] {
            for r in 1..=2 {
                want.push(format!("repeat={r}{level}"));
            }
        }
    }
    assert_eq!(open, want);
    // Users need no calibration: one point per count and client count.
    let users: Vec<&String> = keys.iter().filter(|k| k.contains("workload=1:")).collect();
    assert_eq!(users.len(), 4);
    assert!(users[0].ends_with("clients=2/instances=1/repeat=1/users=100"));
    for k in &keys {
        assert_eq!(&k.parse::<PointKey>().unwrap().to_string(), k);
    }
}

#[test]
fn pacing_mistakes_are_located() {
    let base = "name = \"x\"\nclients = [4]\n[[workload]]\nname = \"oltp_point_select\"\n";
    for (extra, needle, field, words) in [
        (
            "rates = \"fast\"\n",
            "\"fast\"",
            "workload[0].rates",
            "'fast' is not a number",
        ),
        (
            "rates = [100, 0]\n",
            "0]",
            "workload[0].rates[1]",
            "positive number",
        ),
        (
            "rates = \"10%..100 step 10\"\n",
            "\"10%",
            "workload[0].rates",
            "mix of shares",
        ),
        (
            "users = [2]\n",
            "[2]",
            "workload[0].users",
            "2 users are fewer than 4 clients",
        ),
        (
            "rates = [100]\nusers = [8]\n",
            "[100]",
            "workload[0].rates",
            "give one of them",
        ),
        (
            "rates = [100]\nthink_time = \"fixed:1s\"\n",
            "\"fixed",
            "workload[0].think_time",
            "closed loop",
        ),
        (
            "think_time = \"sometimes\"\n",
            "\"sometimes\"",
            "workload[0].think_time",
            "bad think time",
        ),
        (
            "arrival = \"bursty\"\nrates = [1]\n",
            "\"bursty\"",
            "workload[0].arrival",
            "bursty",
        ),
        (
            "p99_goal = \"5ms\"\n",
            "\"5ms\"",
            "workload[0].p99_goal",
            "give rates",
        ),
        (
            "latency_limit = 0\n",
            "0\n",
            "workload[0].latency_limit",
            "latency limit of 0",
        ),
    ] {
        assert_error(&format!("{base}{extra}"), needle, field, words);
    }
}

#[test]
fn a_url_targets_password_comes_from_the_environment_or_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pw");
    std::fs::write(&file, "fromfile\nignored\n").unwrap();
    let base = "name = \"x\"\nclients = [1]\n[[workload]]\nname = \"oltp_point_select\"\n[[target]]\nurl = \"postgres://sbtest@127.0.0.1:5432/sbtest\"\n";
    let password = |s: &Study| match &s.targets[0].kind {
        study::TargetKind::Url(t) => match &t.kind {
            dbsweep::driver::TargetKind::Postgres(a) => a.password.clone(),
            _ => panic!(),
        },
        _ => panic!(),
    };
    let s = load(&format!("{base}password_file = \"{}\"\n", file.display()));
    assert_eq!(password(&s).as_deref(), Some("fromfile"));
    // SAFETY of the test: the variable's name is this test's own.
    unsafe { std::env::set_var("DBSWEEP_TEST_STUDY_PW", "fromenv") };
    let s = load(&format!("{base}password_env = \"DBSWEEP_TEST_STUDY_PW\"\n"));
    assert_eq!(password(&s).as_deref(), Some("fromenv"));
    let text = format!("{base}password_env = \"DBSWEEP_TEST_NO_SUCH_VAR\"\n");
    assert_error(
        &text,
        "\"DBSWEEP_TEST_NO_SUCH_VAR\"",
        "target[0].password_env",
        "is not set",
    );
    let text = format!("{base}password_file = \"/nonexistent/pw\"\n");
    assert_error(
        &text,
        "\"/nonexistent/pw\"",
        "target[0].password_file",
        "cannot read the password file",
    );
    let text = "name = \"x\"\nclients = [1]\n[[workload]]\nname = \"oltp_point_select\"\n[[target]]\nserver = \"postgres\"\npassword_env = \"X\"\n";
    assert_error(
        text,
        "\"X\"",
        "target[0].password_env",
        "applies to a url target",
    );
}

#[test]
fn versions_of_one_server_are_targets_named_by_their_version() {
    let t = "order = \"sequential\"\nclients = [1]\n[[target]]\nserver = \"postgres\"\nversion = \"9.6\"\n[[target]]\nserver = \"postgres\"\nversion = \"18\"\n[[target]]\nname = \"mine\"\nserver = \"mariadb\"\nversion = \"10.2\"\n[[workload]]\nname = \"oltp_read_only\"\n";
    let s = load(t);
    let names: Vec<&str> = s.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["postgres-9.6", "postgres-18", "mine"]);
    let p = plan(&s);
    let spec = s.server_spec(&p.points[0]).unwrap();
    assert_eq!(spec.version.as_deref(), Some("9.6"));
    assert!(spec.dir.ends_with("servers/postgres-9.6"), "{:?}", spec.dir);
    assert!(spec.binaries.is_none());

    let both = "clients = [1]\n[[target]]\nserver = \"mariadb\"\nversion = \"10.2\"\nbinaries = \"/usr/sbin\"\n[[workload]]\nname = \"oltp_read_only\"\n";
    assert_error(
        both,
        "\"10.2\"",
        "target[0].version",
        "version and binaries exclude each other",
    );
    let bad = "clients = [1]\n[[target]]\nserver = \"postgres\"\nversion = \"nine\"\n[[workload]]\nname = \"oltp_read_only\"\n";
    assert_error(
        bad,
        "\"nine\"",
        "target[0].version",
        "'nine' is not a version",
    );
    let url = "clients = [1]\n[[target]]\nurl = \"postgres://u@h/db\"\nversion = \"9.6\"\n[[workload]]\nname = \"oltp_read_only\"\n";
    assert_error(
        url,
        "\"9.6\"",
        "target[0].version",
        "applies only to a managed server",
    );
}

#[test]
fn client_threads_put_a_workloads_connections_on_event_loops() {
    let text = r#"
name = "loops"
clients = [1, 8]

[[target]]
name = "pg"
server = "postgres"

[[workload]]
name = "oltp_point_select"
time = "5s"
client_threads = 2
"#;
    let s = load(text);
    let w = &s.workloads[0];
    assert_eq!(w.client_threads, Some(2));
    // At most one loop per client.
    assert_eq!(w.run_config(8, 1).client_threads, Some(2));
    assert_eq!(w.run_config(1, 1).client_threads, Some(1));

    let zero = text.replace("client_threads = 2", "client_threads = 0");
    assert_error(
        &zero,
        "0\n",
        "workload[0].client_threads",
        "give at least one event-loop thread",
    );
    let sqlite = text.replace("server = \"postgres\"", "url = \"sqlite://x.db\"");
    let e = error(&sqlite);
    assert!(e.contains("SQLite target has no socket"), "{e}");
}

#[test]
fn a_pipeline_runs_a_workload_on_event_loops_on_postgres_only() {
    let text = r#"
name = "ahead"
clients = [1, 8]

[[target]]
name = "pg"
server = "postgres"

[[workload]]
name = "oltp_read_only"
time = "5s"
pipeline = 8
"#;
    let s = load(text);
    let w = &s.workloads[0];
    assert_eq!(w.pipeline, Some(8));
    let c = w.run_config(8, 1);
    assert_eq!(c.pipeline, Some(8));
    // Loops by default: one per CPU, at most one per client.
    let cpus = std::thread::available_parallelism().unwrap().get();
    assert_eq!(c.client_threads, Some(cpus.min(8)));
    assert_eq!(w.run_config(1, 1).client_threads, Some(1));
    let given = text.replace("pipeline = 8", "pipeline = 8\nclient_threads = 1");
    assert_eq!(
        load(&given).workloads[0].run_config(8, 1).client_threads,
        Some(1)
    );

    let zero = text.replace("pipeline = 8", "pipeline = 0");
    assert_error(
        &zero,
        "0\n",
        "workload[0].pipeline",
        "give at least 1 statement in flight",
    );
    let maria = text.replace("server = \"postgres\"", "server = \"mariadb\"");
    let e = error(&maria);
    assert!(e.contains("PostgreSQL connections only"), "{e}");
}
