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

use super::blocks::{client_defs, dict_defs, query_defs, table_defs};
pub use super::blocks::{ClientDef, DictDef, QueryDef, TableDef};
use super::parse::{Expr, MainLine, Pos, SmackError, SmackFile};

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
    let dicts = dict_defs(f, datadir)?;
    let queries = query_defs(f, &dicts)?;
    let clients = client_defs(f, &queries)?;
    let tables = table_defs(f, &clients, datadir)?;
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
