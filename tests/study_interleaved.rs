//! How a study compares its series: the interleaved order (cells, blocks
//! shuffled from the seed, the control's twin), its keys (`order`,
//! `baseline`, `control`, `equivalence`, `repeats = { min, max,
//! precision }`) and the messages bad values get. Nothing here runs a
//! benchmark.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use dbsweep::study::{load_str, plan, Order, Plan, Repeats, Study};

fn load(text: &str) -> Study {
    load_str(text, Path::new("studies/x.toml")).unwrap_or_else(|e| panic!("{e}"))
}

fn error(text: &str) -> String {
    match load_str(text, Path::new("studies/x.toml")) {
        Ok(_) => panic!("loaded, but should not have:\n{text}"),
        Err(e) => e.0,
    }
}

/// Two PostgreSQL targets and a MariaDB one, two client counts.
const THREE: &str = r#"
name = "three"
clients = [1, 4]

[[target]]
name = "pg15"
server = "postgres"

[[target]]
name = "pg16"
server = "postgres"

[[target]]
name = "maria"
server = "mariadb"

[[workload]]
name = "oltp_point_select"
repeats = 4
"#;

/// The series (target as stored / variant) of each block of each cell.
fn blocks(p: &Plan) -> Vec<Vec<Vec<String>>> {
    p.cells
        .iter()
        .map(|c| {
            c.blocks
                .iter()
                .map(|b| {
                    p.points[b.clone()]
                        .iter()
                        .map(|pt| format!("{}/{}", pt.key.target, pt.key.variant))
                        .collect()
                })
                .collect()
        })
        .collect()
}

#[test]
fn two_or_more_series_interleave_by_default_one_runs_in_sequence() {
    let s = load(THREE);
    assert_eq!(s.design.order, Order::Interleaved);
    assert_eq!(s.design.baseline, 0, "the first series");
    assert_eq!(s.design.control, None);
    assert!((s.design.equivalence - 0.02).abs() < 1e-12);
    let one = load("clients = [1]\n[[workload]]\nname = \"oltp_point_select\"\n");
    assert_eq!(one.design.order, Order::Sequential);
}

#[test]
fn every_block_runs_every_series_once_in_a_shuffled_order() {
    let s = load(THREE);
    let p = plan(&s);
    // One cell per client count, four blocks of three points each.
    assert_eq!(p.cells.len(), 2);
    assert_eq!(p.points.len(), 2 * 4 * 3);
    let b = blocks(&p);
    let all: BTreeSet<String> = ["pg15/base", "pg16/base", "maria/base"]
        .map(String::from)
        .into();
    let mut orders = BTreeSet::new();
    for (c, cell) in b.iter().enumerate() {
        assert_eq!(cell.len(), 4, "cell {c}");
        for (k, block) in cell.iter().enumerate() {
            let set: BTreeSet<String> = block.iter().cloned().collect();
            assert_eq!(set, all, "cell {c} block {k}: {block:?}");
            orders.insert(block.clone());
            // A block is its points' repeat.
            for i in p.cells[c].blocks[k].clone() {
                assert_eq!(p.points[i].repeat, k as u32 + 1);
                assert_eq!(p.points[i].cell, c);
            }
        }
        // Cells go up the client counts; a cell's points are contiguous.
        assert_eq!(p.points[p.cells[c].points().start].clients, [1, 4][c]);
    }
    assert!(orders.len() > 1, "the order is shuffled: {orders:?}");
    // The same file gives the same order; another seed another.
    assert_eq!(blocks(&plan(&load(THREE))), b);
    let other = load(&THREE.replace("clients = [1, 4]", "clients = [1, 4]\nseed = 99"));
    assert_ne!(blocks(&plan(&other)), b);
}

#[test]
fn the_keys_are_the_sequential_orders_and_each_server_starts_once() {
    let s = load(THREE);
    let inter = plan(&s);
    let seq = plan(&load(&format!("order = \"sequential\"\n{THREE}")));
    let keys =
        |p: &Plan| -> BTreeSet<String> { p.points.iter().map(|x| x.key.to_string()).collect() };
    assert_eq!(keys(&inter), keys(&seq));
    assert_eq!(
        seq.cells.len(),
        3 * 2,
        "a sequential cell is one series' repeats"
    );
    // All servers stay up: each starts at its first point only, and the
    // data loads once per target.
    let starts: Vec<&str> = inter
        .points
        .iter()
        .filter(|x| x.start_server)
        .map(|x| x.key.target.as_str())
        .collect();
    assert_eq!(starts.len(), 3, "{starts:?}");
    assert_eq!(inter.points.iter().filter(|x| x.prepare).count(), 3);
    // A series' points, in run order, go up the client counts.
    for se in &inter.series {
        let clients: Vec<u32> = se.points.iter().map(|&i| inter.points[i].clients).collect();
        assert_eq!(clients, [1, 1, 1, 1, 4, 4, 4, 4]);
    }
}

#[test]
fn variants_of_one_target_restart_it_inside_the_block() {
    let s = load(
        r#"
clients = [1]
[[target]]
name = "pg"
server = "postgres"
[[variant]]
name = "small"
settings = { shared_buffers = "64MB" }
[[workload]]
name = "oltp_point_select"
repeats = 3
"#,
    );
    assert_eq!(s.design.order, Order::Interleaved);
    let p = plan(&s);
    // Every switch between base and small restarts the one server; a
    // block that begins with the variant the last ended with does not.
    let mut last: Option<&str> = None;
    for x in &p.points {
        let v = x.key.variant.as_str();
        assert_eq!(x.start_server, last != Some(v), "{}", x.key);
        last = Some(v);
    }
}

#[test]
fn a_control_runs_twice_in_every_block_under_a_name_of_its_own() {
    let s = load(&THREE.replace(
        "clients = [1, 4]",
        "clients = [1, 4]\ncontrol = \"pg15\"\nbaseline = \"pg16\"\nequivalence = \"1.5%\"",
    ));
    assert_eq!(s.design.control, Some(0));
    assert_eq!(s.design.baseline, 1);
    assert!((s.design.equivalence - 0.015).abs() < 1e-12);
    let p = plan(&s);
    for cell in blocks(&p) {
        for block in cell {
            let mut sorted = block.clone();
            sorted.sort();
            assert_eq!(
                sorted,
                ["maria/base", "pg15 (again)/base", "pg15/base", "pg16/base"],
                "{block:?}"
            );
        }
    }
    // The twin is the same server: no start of its own beyond the first.
    let again: Vec<_> = p.points.iter().filter(|x| x.again).collect();
    assert_eq!(again.len(), 8);
    assert!(again.iter().all(|x| x.target == 0));
    assert!(p.points.iter().filter(|x| x.start_server).count() <= 4);
    let d = p.describe(&s);
    assert!(d.contains("order: interleaved (2 cells"), "{d}");
    assert!(
        d.contains("baseline pg16/base; control pg15/base (twice per block); equivalence ±1.5 %"),
        "{d}"
    );
    assert!(
        d.contains("pg15 (again) / base / all / 0:oltp_point_select"),
        "{d}"
    );
}

#[test]
fn repeats_until_precise_plan_the_most_and_estimate_the_range() {
    let s = load(&THREE.replace(
        "repeats = 4",
        "repeats = { min = 3, max = 10, precision = \"3%\" }\ntime = 5",
    ));
    let w = &s.workloads[0];
    assert_eq!(
        w.repeats,
        Repeats {
            min: 3,
            max: 10,
            precision: Some(0.03)
        }
    );
    let p = plan(&s);
    assert!(p.cells.iter().all(|c| c.blocks.len() == 10));
    let (least, most) = (p.estimated_duration_min(&s), p.estimated_duration(&s));
    assert!(least < most);
    // 3 of 10 blocks: the points' part of the estimate is 3/10.
    let per_point = 5.0 + 1.0;
    assert!((most.as_secs_f64() - least.as_secs_f64() - 2.0 * 3.0 * 7.0 * per_point).abs() < 1e-6);
    let d = p.describe(&s);
    assert!(d.contains("repeats 3–10 (until ±3 %)"), "{d}");
    assert!(
        d.contains("(as the repeats' precision is reached early or late)"),
        "{d}"
    );
    // A study-wide default, which a workload's own repeats override.
    let s = load(&THREE.replace("repeats = 4", "").replace(
        "clients = [1, 4]",
        "clients = [1, 4]\nrepeats = { max = 6, precision = 2 }",
    ));
    assert_eq!(
        s.workloads[0].repeats,
        Repeats {
            min: 2,
            max: 6,
            precision: Some(0.02)
        }
    );
}

#[test]
fn bad_comparison_keys_are_refused_with_the_fix() {
    let with =
        |extra: &str| THREE.replace("clients = [1, 4]", &format!("clients = [1, 4]\n{extra}"));
    let e = error(&with("baseline = \"pg14\""));
    assert!(
        e.starts_with("studies/x.toml:4:12: baseline: no series 'pg14'"),
        "{e}"
    );
    assert!(
        e.contains("\"pg15/base\", \"pg16/base\", \"maria/base\""),
        "{e}"
    );
    let e = error(&with("control = \"nope\""));
    assert!(e.contains("control: no series 'nope'"), "{e}");
    let e = error(&with("order = \"random\""));
    assert!(e.contains("order: unknown order 'random'"), "{e}");
    let e = error(&with("order = \"sequential\"\ncontrol = \"pg15\""));
    assert!(
        e.contains("control: a control is measured twice in every block"),
        "{e}"
    );
    let e = error(&with("equivalence = \"0%\""));
    assert!(e.contains("equivalence: a margin of 0"), "{e}");
    let e = error(&THREE.replace(
        "repeats = 4",
        "repeats = { min = 3, max = 10, precision = \"0%\" }",
    ));
    assert!(
        e.contains("workload[0].repeats: a precision of 0 is never reached"),
        "{e}"
    );
    let e = error(&THREE.replace(
        "repeats = 4",
        "repeats = { min = 5, max = 3, precision = \"3%\" }",
    ));
    assert!(
        e.contains("workload[0].repeats: max = 3 is below min = 5: give max ≥ min"),
        "{e}"
    );
    let e = error(&THREE.replace("repeats = 4", "repeats = 0"));
    assert!(
        e.contains("repeats = 0: each point runs at least once"),
        "{e}"
    );
    let e = error(&THREE.replace("repeats = 4", "repeats = { max = 5 }"));
    assert!(e.contains("missing field `precision`"), "{e}");
    // A variant's name is enough where one target has it.
    let v = r#"
clients = [1]
baseline = "tuned"
[[target]]
name = "a"
server = "postgres"
[[target]]
name = "b"
server = "postgres"
[[variant]]
name = "tuned"
targets = ["b"]
settings = { work_mem = "8MB" }
[[workload]]
name = "oltp_point_select"
"#;
    let s = load(v);
    let base = &s.variants[s.design.baseline];
    assert_eq!((base.target, base.name.as_str()), (1, "tuned"));
    let e = error(&v.replace("targets = [\"b\"]\n", ""));
    assert!(e.contains("'tuned' is a variant of 2 targets: name one as TARGET/VARIANT (\"a/tuned\", \"b/tuned\")"), "{e}");
}

#[test]
fn cells_hold_what_a_workload_sweeps() {
    // Rates: the calibration level, then each rate, every one a cell.
    let s = load(
        r#"
clients = [2]
[[target]]
name = "x"
sqlite = true
[[target]]
name = "y"
sqlite = true
[[workload]]
name = "oltp_point_select"
rates = ["50%", 100]
repeats = 2
"#,
    );
    let p = plan(&s);
    let levels: Vec<Option<String>> = p
        .cells
        .iter()
        .map(|c| p.points[c.points().start].key.level.clone())
        .collect();
    assert_eq!(
        levels,
        [None, Some("rate=50%".into()), Some("rate=100".into())]
    );
    let mut per_cell: BTreeMap<usize, usize> = BTreeMap::new();
    for x in &p.points {
        *per_cell.entry(x.cell).or_default() += 1;
    }
    assert!(per_cell.values().all(|&n| n == 4), "{per_cell:?}");
}

#[test]
fn a_ramp_up_needs_users_as_on_the_command_line() {
    let e = error("clients = [1]\n[[workload]]\nname = \"oltp_point_select\"\nramp_up = 10\n");
    assert!(
        e.contains("workload[0].ramp_up: ramp_up starts emulated users one after another, and this workload has none"),
        "{e}"
    );
    // TPC-C's terminals are users of its own; DBT-1's come with eus.
    load("clients = [1]\n[[workload]]\nname = \"tpcc\"\noptions = { warehouses = 1 }\nramp_up = 10\n");
    load("clients = [1]\n[[workload]]\nname = \"dbt1\"\neus = [10]\nramp_up = 10\n");
}
