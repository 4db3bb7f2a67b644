//! A checked .smack file: every name resolved, every number parsed, the
//! main block turned into one plan per client — all before anything
//! connects, so a typo costs no table load. Errors carry the file, line and
//! column of the member or call at fault.
//!
//! The main block runs as in Super Smack: `c.init()` starts client `c`
//! (Super Smack forked a process for it), and from there the lines naming
//! `c` are its plan, run in order; several initialised clients run
//! concurrently. Lines naming a client that is never initialised do
//! nothing, as in Super Smack. Assignments (`$x = …;`) are evaluated in
//! order as the file is read.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::dict::{DictType, Source};
use super::parse::{Block, BlockKind, Expr, MainLine, Pos, SmackError, SmackFile};
use super::script;

/// A client block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientDef {
    pub name: String,
    pub user: String,
    pub pass: String,
    pub host: String,
    pub db: String,
    pub port: Option<u16>,
    pub socket: Option<String>,
    /// (shots, query name), fired in order each round.
    pub barrel: Vec<(u32, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DictDef {
    pub name: String,
    pub kind: DictType,
    pub source: Source,
    pub delim: Option<String>,
    pub file_size_equiv: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryDef {
    pub name: String,
    pub text: String,
    /// The reporting group; the query's name when the block has no `type`.
    pub kind: String,
    pub has_result_set: bool,
    pub parsed: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableDef {
    pub client: String,
    pub spec: super::table::TableSpec,
}

/// Text to print: literal pieces and client figures read when printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Lit(String),
    /// `client::param` or `client::type::param`.
    Figure(Vec<String>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    SetRounds(u64),
    CreateThreads(usize),
    Connect,
    Unload,
    Collect,
    Disconnect,
    Sleep(Duration),
    Print(Vec<Piece>),
    Query(String),
}

/// What one initialised client does, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub client: String,
    pub steps: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    pub path: PathBuf,
    pub clients: HashMap<String, ClientDef>,
    pub tables: Vec<TableDef>,
    pub dicts: Vec<DictDef>,
    pub queries: HashMap<String, QueryDef>,
    pub plans: Vec<Plan>,
}

/// Checks `f` with command-line arguments `args` (`args[0]` is `$1`);
/// relative data paths resolve against `datadir`.
pub fn check(f: &SmackFile, args: &[String], datadir: &Path) -> Result<Program, SmackError> {
    let member = |b: &Block, key: &str| b.get(key).map(|m| (m.value.clone(), m.pos));
    let number = |b: &Block, key: &str| -> Result<Option<u64>, SmackError> {
        match b.get(key) {
            None => Ok(None),
            Some(m) => m.value.trim().parse::<u64>().map(Some).map_err(|_| {
                f.error(
                    m.pos,
                    format!(
                        "{key} \"{}\" is not a number: expected digits, e.g. {key} \"1000\";",
                        m.value
                    ),
                )
            }),
        }
    };
    let data_path = |p: &str| {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            datadir.join(p)
        }
    };

    // Dictionaries.
    let mut dicts: Vec<DictDef> = Vec::new();
    for b in f.blocks(BlockKind::Dictionary) {
        let kind = match member(b, "type") {
            None => DictType::Rand,
            Some((t, pos)) => match t.as_str() {
                "rand" => DictType::Rand,
                "seq" => DictType::Seq,
                "unique" => DictType::Unique,
                _ => {
                    return Err(f.error(
                        pos,
                        format!("unknown dictionary type \"{t}\": expected rand, seq or unique"),
                    ))
                }
            },
        };
        let source_text = member(b, "source").map(|(s, _)| s);
        let source = match member(b, "source_type") {
            None if kind == DictType::Unique && source_text.is_none() => Source::Template("%d".into()),
            None => {
                return Err(f.error(
                    b.pos,
                    format!("dictionary \"{}\" has no source_type: add source_type \"file\", \"list\" or \"template\";", b.name),
                ))
            }
            Some((t, pos)) => {
                let src = source_text.clone().ok_or_else(|| {
                    f.error(b.pos, format!("dictionary \"{}\" has no source: add source \"…\";", b.name))
                })?;
                match t.as_str() {
                    "file" => Source::File(data_path(&src)),
                    "list" => Source::List(src),
                    "template" => {
                        if kind != DictType::Unique {
                            return Err(f.error(
                                pos,
                                "source_type \"template\" works only with type \"unique\"",
                            ));
                        }
                        Source::Template(src)
                    }
                    _ => {
                        return Err(f.error(
                            pos,
                            format!("unknown source_type \"{t}\": expected file, list or template"),
                        ))
                    }
                }
            }
        };
        let def = DictDef {
            name: b.name.clone(),
            kind,
            source,
            delim: member(b, "delim").map(|(d, _)| d),
            file_size_equiv: number(b, "file_size_equiv")?,
        };
        dicts.retain(|d| d.name != def.name);
        dicts.push(def);
    }

    // Queries.
    let mut queries = HashMap::new();
    for b in f.blocks(BlockKind::Query) {
        let (text, qpos) = member(b, "query").ok_or_else(|| {
            f.error(
                b.pos,
                format!(
                    "query \"{}\" has no query text: add query \"SELECT …\";",
                    b.name
                ),
            )
        })?;
        let yes = |key: &str| member(b, key).is_some_and(|(v, _)| v.starts_with(['y', 'Y']));
        let parsed = yes("parsed");
        if parsed {
            let vars = script::variables(&text)
                .map_err(|e| f.error(qpos, format!("query \"{}\": {e}", b.name)))?;
            for v in vars {
                if !dicts.iter().any(|d| d.name == v) {
                    return Err(f.error(
                        qpos,
                        format!(
                            "query \"{}\" uses ${v}, but no dictionary \"{v}\" is defined",
                            b.name
                        ),
                    ));
                }
            }
        }
        queries.insert(
            b.name.clone(),
            QueryDef {
                name: b.name.clone(),
                text,
                kind: member(b, "type").map_or_else(|| b.name.clone(), |(t, _)| t),
                has_result_set: yes("has_result_set"),
                parsed,
            },
        );
    }

    // Clients.
    let mut clients = HashMap::new();
    for b in f.blocks(BlockKind::Client) {
        let s = |k: &str| member(b, k).map(|(v, _)| v);
        let port = match number(b, "port")? {
            None => None,
            Some(p) => Some(u16::try_from(p).map_err(|_| {
                f.error(
                    b.get("port").unwrap().pos,
                    format!("port {p} is out of range"),
                )
            })?),
        }
        .filter(|&p| p != 0);
        let mut barrel = Vec::new();
        if let Some(m) = b.get("query_barrel") {
            let words: Vec<&str> = m.value.split_whitespace().collect();
            let mut it = words.iter();
            while let Some(w) = it.next() {
                if w.starts_with('-') {
                    return Err(f.error(
                        m.pos,
                        format!("query_barrel \"{}\": sleeps in a barrel ({w}) are not supported by dbsweep; remove them (dbsweep runs clients back to back, as a benchmark should)", m.value),
                    ));
                }
                let shots: u32 = w.parse().map_err(|_| {
                    f.error(
                        m.pos,
                        format!("query_barrel \"{}\": expected a number of shots before a query name, found '{w}' (e.g. \"2 select_by_username 1 update_by_username\")", m.value),
                    )
                })?;
                let q = it.next().ok_or_else(|| {
                    f.error(
                        m.pos,
                        format!(
                            "query_barrel \"{}\": {shots} shots of what? a query name must follow",
                            m.value
                        ),
                    )
                })?;
                if !queries.contains_key(*q) {
                    return Err(f.error(
                        m.pos,
                        format!("query_barrel names query \"{q}\", which is not defined (define query \"{q}\" {{ … }})"),
                    ));
                }
                barrel.push((shots, q.to_string()));
            }
        }
        clients.insert(
            b.name.clone(),
            ClientDef {
                name: b.name.clone(),
                user: s("user").unwrap_or_default(),
                pass: s("pass").unwrap_or_default(),
                host: s("host").unwrap_or_else(|| "localhost".into()),
                db: s("db").unwrap_or_else(|| "test".into()),
                port,
                socket: s("socket").filter(|s| !s.is_empty()),
                barrel,
            },
        );
    }

    // Tables.
    let mut tables = Vec::new();
    for b in f.blocks(BlockKind::Table) {
        let (client, cpos) = member(b, "client").ok_or_else(|| {
            f.error(b.pos, format!("table \"{}\" has no client: add client \"NAME\"; naming the client that creates it", b.name))
        })?;
        if !clients.contains_key(&client) {
            return Err(f.error(
                cpos,
                format!(
                    "table \"{}\" uses client \"{client}\", which is not defined",
                    b.name
                ),
            ));
        }
        let (create, _) = member(b, "create").ok_or_else(|| {
            f.error(
                b.pos,
                format!(
                    "table \"{}\" has no create statement: add create \"create table …\";",
                    b.name
                ),
            )
        })?;
        tables.push(TableDef {
            client,
            spec: super::table::TableSpec {
                name: b.name.clone(),
                create,
                min_rows: number(b, "min_rows")?.unwrap_or(0),
                data_file: member(b, "data_file").map(|(p, _)| data_path(&p)),
                gen_data_file: member(b, "gen_data_file").map(|(c, _)| c),
            },
        });
    }

    let plans = plans(f, args, &clients)?;
    Ok(Program {
        path: f.path.clone(),
        clients,
        tables,
        dicts,
        queries,
        plans,
    })
}

/// Evaluates an expression into pieces (`$N`, variables and constants are
/// resolved now; client figures when printed).
fn eval(
    f: &SmackFile,
    e: &Expr,
    pos: Pos,
    args: &[String],
    vars: &HashMap<String, Vec<Piece>>,
    clients: &HashMap<String, ClientDef>,
) -> Result<Vec<Piece>, SmackError> {
    Ok(match e {
        Expr::Number(n) => vec![Piece::Lit(n.clone())],
        Expr::Str(s) => vec![Piece::Lit(s.clone())],
        Expr::Arg(0) => vec![Piece::Lit(f.path.display().to_string())],
        Expr::Arg(n) => match args.get(n - 1) {
            Some(a) => vec![Piece::Lit(a.clone())],
            None => {
                return Err(f.error(
                    pos,
                    format!(
                        "this line uses ${n}, but {} given after the file name: run `dbsweep smack {} ARG1 ARG2 …` with at least {n}",
                        match args.len() {
                            0 => "no arguments were".to_string(),
                            1 => "only 1 argument was".to_string(),
                            k => format!("only {k} arguments were"),
                        },
                        f.path.display()
                    ),
                ))
            }
        },
        Expr::Var(v) => vars
            .get(v)
            .cloned()
            .ok_or_else(|| f.error(pos, format!("${v} is used before it is assigned ($ {v} = …;)")))?,
        Expr::ClientParam(path) => {
            if !clients.contains_key(&path[0]) {
                return Err(f.error(pos, format!("client \"{}\" is not defined", path[0])));
            }
            let ok = match path.len() {
                2 => ["max_connect_time", "min_connect_time", "avg_connect_time"].contains(&path[1].as_str()),
                3 => ["num_queries", "max_time", "min_time", "q_per_s"].contains(&path[2].as_str()),
                _ => false,
            };
            if !ok {
                return Err(f.error(
                    pos,
                    format!("unknown client figure '{}': expected CLIENT::max_connect_time|min_connect_time|avg_connect_time or CLIENT::QUERY_TYPE::num_queries|max_time|min_time|q_per_s", path.join("::")),
                ));
            }
            vec![Piece::Figure(path.clone())]
        }
        Expr::Concat(parts) => {
            let mut out = Vec::new();
            for p in parts {
                out.extend(eval(f, p, pos, args, vars, clients)?);
            }
            out
        }
    })
}

fn literal(pieces: &[Piece]) -> Option<String> {
    let mut s = String::new();
    for p in pieces {
        match p {
            Piece::Lit(l) => s.push_str(l),
            Piece::Figure(_) => return None,
        }
    }
    Some(s)
}

fn plans(
    f: &SmackFile,
    args: &[String],
    clients: &HashMap<String, ClientDef>,
) -> Result<Vec<Plan>, SmackError> {
    let mut vars: HashMap<String, Vec<Piece>> = HashMap::new();
    let mut plans: Vec<Plan> = Vec::new();
    for line in &f.main {
        let (client, method, margs, pos) = match line {
            MainLine::Assign { var, value, pos } => {
                let v = eval(f, value, *pos, args, &vars, clients)?;
                vars.insert(var.clone(), v);
                continue;
            }
            MainLine::Call {
                client,
                method,
                args: a,
                pos,
            } => (client, method, a, *pos),
        };
        let Some(def) = clients.get(client) else {
            return Err(f.error(
                pos,
                format!("client \"{client}\" is not defined (define client \"{client}\" {{ … }})"),
            ));
        };
        let mut vals = Vec::new();
        for a in margs {
            vals.push(eval(f, a, pos, args, &vars, clients)?);
        }
        let arity = |n: usize| -> Result<(), SmackError> {
            if vals.len() == n {
                Ok(())
            } else {
                Err(f.error(
                    pos,
                    format!(
                        "{client}.{method}() takes {n} argument{}, {} given",
                        if n == 1 { "" } else { "s" },
                        vals.len()
                    ),
                ))
            }
        };
        let int = |i: usize, what: &str| -> Result<u64, SmackError> {
            let s = literal(&vals[i]).unwrap_or_default();
            s.trim().parse::<u64>().map_err(|_| {
                f.error(
                    pos,
                    format!("{client}.{method}(): {what} must be a whole number, got \"{s}\""),
                )
            })
        };
        if method == "init" {
            arity(0)?;
            if plans.iter().any(|p| &p.client == client) {
                return Err(f.error(pos, format!("client \"{client}\" is initialised twice")));
            }
            plans.push(Plan {
                client: client.clone(),
                steps: Vec::new(),
            });
            continue;
        }
        let step = match method.as_str() {
            "set_num_rounds" => {
                arity(1)?;
                Step::SetRounds(int(0, "the number of rounds")?)
            }
            "create_threads" => {
                arity(1)?;
                let n = int(0, "the number of threads")?;
                if n == 0 {
                    return Err(f.error(pos, format!("{client}.create_threads(0): at least 1 thread is needed")));
                }
                Step::CreateThreads(n as usize)
            }
            "connect" => {
                arity(0)?;
                Step::Connect
            }
            "unload_query_barrel" => {
                arity(0)?;
                if def.barrel.is_empty() {
                    return Err(f.error(pos, format!("client \"{client}\" has no query_barrel to unload: add query_barrel \"1 QUERY\"; to its block")));
                }
                Step::Unload
            }
            "collect_threads" => {
                arity(0)?;
                Step::Collect
            }
            "disconnect" => {
                arity(0)?;
                Step::Disconnect
            }
            "sleep" => {
                arity(2)?;
                let s = int(0, "the seconds")?;
                let ms = int(1, "the milliseconds")?;
                Step::Sleep(Duration::from_secs(s) + Duration::from_millis(ms))
            }
            "print" => {
                arity(1)?;
                Step::Print(vals[0].clone())
            }
            "query" => {
                arity(1)?;
                Step::Query(literal(&vals[0]).ok_or_else(|| {
                    f.error(pos, format!("{client}.query(): the query must be text"))
                })?)
            }
            other => {
                return Err(f.error(
                    pos,
                    format!("unknown method '{other}' for client \"{client}\": expected init, set_num_rounds, create_threads, connect, unload_query_barrel, collect_threads, disconnect, sleep, print or query"),
                ))
            }
        };
        let Some(plan) = plans.iter_mut().find(|p| &p.client == client) else {
            // Super Smack ignores a client's lines before its init().
            continue;
        };
        if step == Step::Unload && !plan.steps.iter().any(|s| matches!(s, Step::SetRounds(_))) {
            return Err(f.error(pos, format!("{client}.unload_query_barrel() before {client}.set_num_rounds(N): say how many rounds each thread runs")));
        }
        plan.steps.push(step);
    }
    if !plans.iter().any(|p| p.steps.contains(&Step::Unload)) {
        return Err(f.error(
            f.main_pos,
            "main runs no queries: no initialised client calls unload_query_barrel() (expected e.g. c.init(); c.set_num_rounds($2); c.create_threads($1); c.connect(); c.unload_query_barrel(); c.collect_threads(); c.disconnect();)",
        ));
    }
    Ok(plans)
}

#[cfg(test)]
mod tests {
    use super::*;
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
}
