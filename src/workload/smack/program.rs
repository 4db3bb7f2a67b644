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
#[path = "program_tests.rs"]
mod tests;
