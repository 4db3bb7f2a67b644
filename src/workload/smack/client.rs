//! One client block of a checked program as a workload: its query barrel
//! compiled for a dialect ([`barrel`]), and the options a run record
//! states for it ([`record_options`]).

use std::collections::HashMap;
use std::sync::Arc;

use crate::driver::{Dialect, StmtId};
use crate::UsageError;

use super::dict::Dictionary;
use super::program::Program;
use super::script::{self, BarrelQuery, SmackWorkload};

/// The workload of client `client`: its barrel's queries, compiled for
/// `dialect`, drawing from `dicts` (the program's dictionaries, loaded, in
/// the program's order). One round fires the whole barrel.
pub fn barrel(
    program: &Program,
    client: &str,
    dicts: &[Arc<Dictionary>],
    dialect: Dialect,
) -> Result<SmackWorkload, UsageError> {
    let c = &program.clients[client];
    let mut queries: Vec<BarrelQuery> = Vec::new();
    let mut round: Vec<StmtId> = Vec::new();
    let names: Vec<&str> = dicts.iter().map(|d| d.name.as_str()).collect();
    for (shots, qname) in &c.barrel {
        let id = match queries.iter().position(|q| &q.name == qname) {
            Some(i) => i,
            None => {
                let q = &program.queries[qname];
                let compiled = script::compile(&q.text, q.parsed, dialect, &|n| {
                    names.iter().position(|d| *d == n)
                })
                .map_err(|e| {
                    UsageError(format!(
                        "{}: query \"{qname}\": {e}",
                        program.path.display()
                    ))
                })?;
                queries.push(BarrelQuery {
                    name: qname.clone(),
                    kind: q.kind.clone(),
                    compiled,
                });
                queries.len() - 1
            }
        };
        round.extend(std::iter::repeat_n(id, *shots as usize));
    }
    Ok(SmackWorkload::new(queries, round, dicts.to_vec()))
}

/// What a run record states as the workload's options for client
/// `client`: the file, the client, the command-line arguments, the query
/// barrel, and each query's text and type.
pub fn record_options(program: &Program, client: &str, args: &[String]) -> Vec<(String, String)> {
    let c = &program.clients[client];
    let mut v = vec![
        ("file".to_string(), program.path.display().to_string()),
        ("client".to_string(), client.to_string()),
        ("args".to_string(), args.join(" ")),
        (
            "query_barrel".to_string(),
            c.barrel
                .iter()
                .map(|(n, q)| format!("{n} {q}"))
                .collect::<Vec<_>>()
                .join(" "),
        ),
    ];
    let kinds: HashMap<&str, &str> = c
        .barrel
        .iter()
        .map(|(_, q)| (q.as_str(), program.queries[q].kind.as_str()))
        .collect();
    let mut k: Vec<_> = kinds.into_iter().collect();
    k.sort();
    for (q, t) in k {
        v.push((format!("query.{q}"), program.queries[q].text.clone()));
        v.push((format!("type.{q}"), t.to_string()));
    }
    v
}

/// The statement types of client `client`'s barrel, one per shot (Super
/// Smack's report lists each type that the barrel fires).
pub fn barrel_types<'a>(program: &'a Program, client: &str) -> Vec<&'a str> {
    program.clients[client]
        .barrel
        .iter()
        .map(|(_, q)| program.queries[q].kind.as_str())
        .collect()
}
