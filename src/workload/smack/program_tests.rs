//! Tests of `program.rs` (kept apart so the module itself stays short).

use super::*;
use crate::workload::smack::dict::Source;
use crate::workload::smack::parse::parse;

const HEAD: &str = r#"
client "c" { user "u"; host "h"; db "d"; port "3307"; query_barrel "2 sel 1 upd"; }
dictionary "w" { type "seq"; source_type "list"; source "a,b"; }
query "sel" { query "select '$w'"; type "select_index"; has_result_set "y"; parsed "y"; }
query "upd" { query "update t set x = 1"; parsed "n"; }
"#;
const MAIN: &str = "main { c.init(); c.set_num_rounds($2); c.create_threads($1); c.connect(); c.unload_query_barrel(); c.collect_threads(); c.disconnect(); }";

fn check_src(src: &str, args: &[&str]) -> Result<Program, String> {
    let f = parse(Path::new("x.smack"), src).map_err(|e| e.to_string())?;
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    check(&f, &args, Path::new("/data")).map_err(|e| e.to_string())
}

#[test]
fn builds_the_plan_of_each_client() {
    let p = check_src(&format!("{HEAD}{MAIN}"), &["4", "100"]).unwrap();
    let c = &p.clients["c"];
    assert_eq!(c.port, Some(3307));
    assert_eq!(
        c.barrel,
        vec![(2, "sel".to_string()), (1, "upd".to_string())]
    );
    assert_eq!(
        p.queries["upd"].kind, "upd",
        "type defaults to the query name"
    );
    assert!(p.queries["sel"].has_result_set);
    assert_eq!(
        p.plans,
        vec![Plan {
            client: "c".into(),
            steps: vec![
                Step::SetRounds(100),
                Step::CreateThreads(4),
                Step::Connect,
                Step::Unload,
                Step::Collect,
                Step::Disconnect
            ]
        }]
    );
}

#[test]
fn files_resolve_against_the_data_directory() {
    let src = format!("{HEAD}dictionary \"f\" {{ source_type \"file\"; source \"words.dat\"; }}\ndictionary \"g\" {{ source_type \"file\"; source \"/abs/w.dat\"; }}\ntable \"t\" {{ client \"c\"; create \"create table t (a int)\"; min_rows \"5\"; data_file \"t.dat\"; }}\n{MAIN}");
    let p = check_src(&src, &["1", "1"]).unwrap();
    assert_eq!(p.dicts[1].source, Source::File("/data/words.dat".into()));
    assert_eq!(p.dicts[2].source, Source::File("/abs/w.dat".into()));
    assert_eq!(
        p.tables[0].spec.data_file,
        Some(PathBuf::from("/data/t.dat"))
    );
    assert_eq!(p.tables[0].spec.min_rows, 5);
}

#[test]
fn variables_prints_and_figures() {
    let src = format!("{HEAD}main {{ $r = $2 . \"0\"; c.init(); c.set_num_rounds($r); c.unload_query_barrel(); c.collect_threads(); c.print(\"qps=\" . c::select_index::q_per_s); c.sleep(0, 5); }}");
    let p = check_src(&src, &["1", "3"]).unwrap();
    let steps = &p.plans[0].steps;
    assert_eq!(steps[0], Step::SetRounds(30));
    assert_eq!(
        steps[3],
        Step::Print(vec![
            Piece::Lit("qps=".into()),
            Piece::Figure(vec!["c".into(), "select_index".into(), "q_per_s".into()])
        ])
    );
    assert_eq!(steps[4], Step::Sleep(Duration::from_millis(5)));
}

#[test]
fn undefined_names_and_bad_values_are_errors_before_running() {
    let e = |src: String, args: &[&str]| check_src(&src, args).unwrap_err();
    assert_eq!(
        e(
            format!("{HEAD}query \"q\" {{ query \"select '$nope'\"; parsed \"y\"; }}\n{MAIN}"),
            &["1", "1"]
        ),
        "x.smack:6:13: query \"q\" uses $nope, but no dictionary \"nope\" is defined"
    );
    assert_eq!(
        e(format!("client \"k\" {{ query_barrel \"1 missing\"; }}\n{MAIN}"), &["1", "1"]),
        "x.smack:1:14: query_barrel names query \"missing\", which is not defined (define query \"missing\" { … })"
    );
    assert_eq!(
        e(format!("{HEAD}main {{ z.init(); }}"), &[]),
        "x.smack:6:8: client \"z\" is not defined (define client \"z\" { … })"
    );
    assert_eq!(
        e(format!("{HEAD}{MAIN}"), &["4"]),
        "x.smack:6:18: this line uses $2, but only 1 argument was given after the file name: run `dbsweep smack x.smack ARG1 ARG2 …` with at least 2"
    );
    assert_eq!(
        e(format!("{HEAD}{MAIN}"), &["4", "many"]),
        "x.smack:6:18: c.set_num_rounds(): the number of rounds must be a whole number, got \"many\""
    );
    assert_eq!(
        e(format!("{HEAD}table \"t\" {{ client \"nobody\"; create \"create table t (a int)\"; }}\n{MAIN}"), &["1", "1"]),
        "x.smack:6:13: table \"t\" uses client \"nobody\", which is not defined"
    );
    assert_eq!(
        e(format!("{HEAD}dictionary \"d\" {{ type \"random\"; source_type \"list\"; source \"a\"; }}\n{MAIN}"), &["1", "1"]),
        "x.smack:6:18: unknown dictionary type \"random\": expected rand, seq or unique"
    );
    assert_eq!(
        e(format!("{HEAD}main {{ c.init(); c.fly(); }}"), &[]),
        "x.smack:6:18: unknown method 'fly' for client \"c\": expected init, set_num_rounds, create_threads, connect, unload_query_barrel, collect_threads, disconnect, sleep, print or query"
    );
    assert_eq!(
        e(format!("{HEAD}main {{ c.init(); c.unload_query_barrel(); }}"), &[]),
        "x.smack:6:18: c.unload_query_barrel() before c.set_num_rounds(N): say how many rounds each thread runs"
    );
    assert!(e(format!("{HEAD}main {{ c.init(); }}"), &[]).contains("main runs no queries"));
    assert_eq!(
        e(format!("client \"k\" {{ query_barrel \"-0.5\"; }}\n{MAIN}"), &[]),
        "x.smack:1:14: query_barrel \"-0.5\": sleeps in a barrel (-0.5) are not supported by dbsweep; remove them (dbsweep runs clients back to back, as a benchmark should)"
    );
    assert_eq!(
        e(format!("{HEAD}main {{ c.init(); c.print($x); }}"), &[]),
        "x.smack:6:18: $x is used before it is assigned ($ x = …;)"
    );
    assert_eq!(
        e(
            format!("{HEAD}main {{ c.init(); c.create_threads(1, 2); }}"),
            &[]
        ),
        "x.smack:6:18: c.create_threads() takes 1 argument, 2 given"
    );
}
