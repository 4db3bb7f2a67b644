//! The blocks before `main` checked into definitions: dictionaries,
//! queries, clients and tables, every number parsed and every name each
//! one uses resolved. A kind of block may name only kinds checked before
//! it: queries use dictionaries, clients fire queries, tables are created
//! by clients.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::dict::{DictType, Source};
use super::parse::{Block, BlockKind, Member, Pos, SmackError, SmackFile};
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

/// A member's value and where it was written.
fn member(b: &Block, key: &str) -> Option<(String, Pos)> {
    b.get(key).map(|m| (m.value.clone(), m.pos))
}

/// A member that must be a number, if given.
fn number(f: &SmackFile, b: &Block, key: &str) -> Result<Option<u64>, SmackError> {
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
}

/// A data file's path; a relative one is under `datadir`.
fn data_path(datadir: &Path, p: &str) -> PathBuf {
    let p = Path::new(p);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        datadir.join(p)
    }
}

/// The dictionaries; of two of one name, the later.
pub(super) fn dict_defs(f: &SmackFile, datadir: &Path) -> Result<Vec<DictDef>, SmackError> {
    let mut dicts: Vec<DictDef> = Vec::new();
    for b in f.blocks(BlockKind::Dictionary) {
        let kind = dict_type(f, b)?;
        let def = DictDef {
            name: b.name.clone(),
            kind,
            source: dict_source(f, b, kind, datadir)?,
            delim: member(b, "delim").map(|(d, _)| d),
            file_size_equiv: number(f, b, "file_size_equiv")?,
        };
        dicts.retain(|d| d.name != def.name);
        dicts.push(def);
    }
    Ok(dicts)
}

/// A dictionary's `type`: rand unless given.
fn dict_type(f: &SmackFile, b: &Block) -> Result<DictType, SmackError> {
    Ok(match member(b, "type") {
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
    })
}

/// Where a dictionary's words come from (`source_type` and `source`); a
/// unique dictionary without either numbers its words.
fn dict_source(
    f: &SmackFile,
    b: &Block,
    kind: DictType,
    datadir: &Path,
) -> Result<Source, SmackError> {
    let source_text = member(b, "source").map(|(s, _)| s);
    Ok(match member(b, "source_type") {
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
                "file" => Source::File(data_path(datadir, &src)),
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
    })
}

/// The queries by name; a parsed query's variables must be dictionaries.
pub(super) fn query_defs(
    f: &SmackFile,
    dicts: &[DictDef],
) -> Result<HashMap<String, QueryDef>, SmackError> {
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
    Ok(queries)
}

/// The clients by name, with Super Smack's defaults for what they omit.
pub(super) fn client_defs(
    f: &SmackFile,
    queries: &HashMap<String, QueryDef>,
) -> Result<HashMap<String, ClientDef>, SmackError> {
    let mut clients = HashMap::new();
    for b in f.blocks(BlockKind::Client) {
        let s = |k: &str| member(b, k).map(|(v, _)| v);
        let port = match number(f, b, "port")? {
            None => None,
            Some(p) => Some(u16::try_from(p).map_err(|_| {
                f.error(
                    b.get("port").unwrap().pos,
                    format!("port {p} is out of range"),
                )
            })?),
        }
        .filter(|&p| p != 0);
        let barrel = match b.get("query_barrel") {
            Some(m) => barrel(f, m, queries)?,
            None => Vec::new(),
        };
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
    Ok(clients)
}

/// A client's `query_barrel`: shots and query names, in turn.
fn barrel(
    f: &SmackFile,
    m: &Member,
    queries: &HashMap<String, QueryDef>,
) -> Result<Vec<(u32, String)>, SmackError> {
    let mut barrel = Vec::new();
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
    Ok(barrel)
}

/// The tables, each created by a defined client.
pub(super) fn table_defs(
    f: &SmackFile,
    clients: &HashMap<String, ClientDef>,
    datadir: &Path,
) -> Result<Vec<TableDef>, SmackError> {
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
                min_rows: number(f, b, "min_rows")?.unwrap_or(0),
                data_file: member(b, "data_file").map(|(p, _)| data_path(datadir, &p)),
                gen_data_file: member(b, "gen_data_file").map(|(c, _)| c),
            },
        });
    }
    Ok(tables)
}
