//! A .smack client as a [`Workload`]: its query barrel is one "transaction"
//! (no BEGIN/COMMIT, each query autocommits as in Super Smack), its queries
//! are the statements, and each `$dictionary` in a query becomes a bound
//! parameter so the driver quotes and escapes the value for the target's
//! dialect.
//!
//! How a `$name` turns into a parameter:
//! - `'$name'` (the variable is the whole quoted literal): the literal is
//!   replaced by one text parameter;
//! - `'user_$id@x'` (the variable inside a larger literal): the literal is
//!   replaced by one text parameter holding the concatenated value;
//! - `$name` outside quotes: one parameter, an integer if the drawn value is
//!   one (so `where id = $id` compares numbers), else text.
//!
//! Each occurrence is its own draw, as in Super Smack. Outside variables,
//! Super Smack's query preprocessing drops a backslash and keeps the
//! character after it (`\$` is a literal dollar); so does this one.

use std::sync::Arc;

use crate::driver::{Dialect, StmtId, Value};
use crate::rand::Rng;
use crate::util::progress::Progress;
use crate::workload::{ClientScript, Connector, Op, OptionValues, StatementDef, Workload};

use super::dict::{DictCursor, Dictionary};

/// Where one bound parameter's value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Param {
    /// A whole quoted literal: one draw, as text.
    Whole(usize),
    /// An unquoted variable: one draw, an integer if it parses as one.
    Bare(usize),
    /// A quoted literal with variables inside: literal text and draws.
    Concat(Vec<Part>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    Text(String),
    Dict(usize),
}

/// A query ready to prepare: SQL with placeholders and its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    pub sql: String,
    pub params: Vec<Param>,
}

enum Item {
    Char(char),
    Var(String),
}

/// Super Smack's preprocessing of a parsed query: backslash escapes and
/// `$name` variables (letters, digits and `_`).
fn scan(text: &str) -> Result<Vec<Item>, String> {
    let mut items = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    items.push(Item::Char(n));
                }
            }
            '$' => {
                let mut name = String::new();
                while let Some(&n) = chars.peek() {
                    if n.is_ascii_alphanumeric() || n == '_' {
                        name.push(n);
                        chars.next();
                    } else {
                        break;
                    }
                }
                if name.is_empty() {
                    return Err(
                        "'$' is not followed by a dictionary name (write \\$ for a literal dollar sign)"
                            .into(),
                    );
                }
                items.push(Item::Var(name));
            }
            c => items.push(Item::Char(c)),
        }
    }
    Ok(items)
}

/// The names of the dictionaries a parsed query uses, in order.
pub fn variables(text: &str) -> Result<Vec<String>, String> {
    Ok(scan(text)?
        .into_iter()
        .filter_map(|i| match i {
            Item::Var(v) => Some(v),
            Item::Char(_) => None,
        })
        .collect())
}

/// Turns a query's text into SQL with placeholders for `dialect`.
/// `dict` maps a dictionary name to its index (names were checked before).
pub fn compile(
    text: &str,
    parsed: bool,
    dialect: Dialect,
    dict: &dyn Fn(&str) -> Option<usize>,
) -> Result<Compiled, String> {
    if !parsed {
        return Ok(Compiled {
            sql: text.to_string(),
            params: Vec::new(),
        });
    }
    let items = scan(text)?;
    let lookup = |name: &str| {
        dict(name).ok_or_else(|| format!("no dictionary named \"{name}\" (used as ${name})"))
    };
    let mut sql = String::with_capacity(text.len());
    let mut params = Vec::new();
    let placeholder = |sql: &mut String, n: usize| match dialect {
        Dialect::Postgres => {
            sql.push('$');
            sql.push_str(&n.to_string());
        }
        _ => sql.push('?'),
    };
    let mut i = 0;
    while i < items.len() {
        match &items[i] {
            Item::Var(v) => {
                params.push(Param::Bare(lookup(v)?));
                placeholder(&mut sql, params.len());
                i += 1;
            }
            Item::Char(q @ ('\'' | '"')) => {
                // A quoted literal: find its end, honouring doubled quotes
                // and (MySQL's) backslash escapes.
                let q = *q;
                let mut parts: Vec<Part> = Vec::new();
                let mut raw = String::new();
                raw.push(q);
                let mut j = i + 1;
                let mut closed = false;
                let push_text = |parts: &mut Vec<Part>, c: char| match parts.last_mut() {
                    Some(Part::Text(t)) => t.push(c),
                    _ => parts.push(Part::Text(c.to_string())),
                };
                while j < items.len() {
                    match &items[j] {
                        Item::Var(v) => {
                            parts.push(Part::Dict(lookup(v)?));
                            raw.push('$');
                            raw.push_str(v);
                        }
                        Item::Char('\\') if dialect == Dialect::Mysql => {
                            raw.push('\\');
                            if let Some(Item::Char(n)) = items.get(j + 1) {
                                raw.push(*n);
                                push_text(&mut parts, unescape_mysql(*n));
                                j += 1;
                            }
                        }
                        Item::Char(c) if *c == q => {
                            if matches!(items.get(j + 1), Some(Item::Char(n)) if *n == q) {
                                raw.push(q);
                                raw.push(q);
                                push_text(&mut parts, q);
                                j += 2;
                                continue;
                            }
                            raw.push(q);
                            closed = true;
                            j += 1;
                            break;
                        }
                        Item::Char(c) => {
                            raw.push(*c);
                            push_text(&mut parts, *c);
                        }
                    }
                    j += 1;
                }
                if !closed {
                    return Err(format!("unterminated {q}…{q} literal in the query"));
                }
                let has_var = parts.iter().any(|p| matches!(p, Part::Dict(_)));
                if !has_var {
                    sql.push_str(&raw);
                } else {
                    let p = match parts.as_slice() {
                        [Part::Dict(d)] => Param::Whole(*d),
                        _ => Param::Concat(parts),
                    };
                    params.push(p);
                    placeholder(&mut sql, params.len());
                }
                i = j;
            }
            Item::Char(c) => {
                sql.push(*c);
                i += 1;
            }
        }
    }
    Ok(Compiled { sql, params })
}

/// The character a MySQL string escape `\c` stands for.
fn unescape_mysql(c: char) -> char {
    match c {
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        '0' => '\0',
        'Z' => '\x1a',
        other => other,
    }
}

/// One query of the barrel, compiled.
#[derive(Debug, Clone)]
pub struct BarrelQuery {
    pub name: String,
    /// The reporting group (the query's `type`).
    pub kind: String,
    pub compiled: Compiled,
}

struct Inner {
    queries: Vec<BarrelQuery>,
    /// The statements of one round, in order (shots expanded).
    round: Vec<StmtId>,
    dicts: Vec<Arc<Dictionary>>,
}

/// One .smack client's workload.
pub struct SmackWorkload {
    inner: Arc<Inner>,
    statements: Vec<StatementDef>,
    options: OptionValues,
}

impl SmackWorkload {
    /// `queries` are the distinct queries of the barrel; `round` lists the
    /// index into `queries` of each query fired in one round.
    pub fn new(queries: Vec<BarrelQuery>, round: Vec<StmtId>, dicts: Vec<Arc<Dictionary>>) -> Self {
        let statements = queries
            .iter()
            .map(|q| StatementDef {
                kind: q.kind.clone().into(),
                sql: q.compiled.sql.clone(),
            })
            .collect();
        SmackWorkload {
            inner: Arc::new(Inner {
                queries,
                round,
                dicts,
            }),
            statements,
            options: OptionValues::default(),
        }
    }

    /// Queries fired per round.
    pub fn per_round(&self) -> usize {
        self.inner.round.len()
    }
}

impl Workload for SmackWorkload {
    fn name(&self) -> &'static str {
        "smack"
    }

    fn statements(&self) -> &[StatementDef] {
        &self.statements
    }

    /// A .smack file's tables are set up by its table blocks before the run
    /// (see `table.rs`); there is nothing else to prepare.
    fn prepare(&self, _: Connector<'_>, _: usize, _: &dyn Progress) -> anyhow::Result<()> {
        Ok(())
    }

    fn cleanup(&self, _: &mut dyn crate::driver::Connection) -> anyhow::Result<()> {
        Ok(())
    }

    fn check_prepared(&self, _: &mut dyn crate::driver::Connection) -> anyhow::Result<()> {
        Ok(())
    }

    fn client(&self, _id: usize, _clients: usize, rng: Rng) -> Box<dyn ClientScript> {
        let inner = self.inner.clone();
        let cursors = inner
            .dicts
            .iter()
            .map(|d| DictCursor::new(d.clone()))
            .collect();
        let params = inner
            .queries
            .iter()
            .map(|q| vec![Value::Null; q.compiled.params.len()])
            .collect();
        Box::new(Script {
            inner,
            cursors,
            rng,
            pos: 0,
            params,
            scratch: String::new(),
        })
    }

    fn options(&self) -> &OptionValues {
        &self.options
    }
}

struct Script {
    inner: Arc<Inner>,
    cursors: Vec<DictCursor>,
    rng: Rng,
    pos: usize,
    /// Per query, its parameter buffer (reused every round).
    params: Vec<Vec<Value>>,
    scratch: String,
}

impl ClientScript for Script {
    fn start(&mut self) {
        self.pos = 0;
    }

    fn next(&mut self) -> Option<Op<'_>> {
        let id = *self.inner.round.get(self.pos)?;
        self.pos += 1;
        let q = &self.inner.queries[id];
        for (slot, p) in self.params[id].iter_mut().zip(&q.compiled.params) {
            let s = &mut self.scratch;
            s.clear();
            match p {
                Param::Whole(d) => {
                    self.cursors[*d].draw(&mut self.rng, s);
                    slot.set_text(s);
                }
                Param::Bare(d) => {
                    self.cursors[*d].draw(&mut self.rng, s);
                    match s.parse::<i64>() {
                        Ok(n) => *slot = Value::Int(n),
                        Err(_) => slot.set_text(s),
                    }
                }
                Param::Concat(parts) => {
                    for part in parts {
                        match part {
                            Part::Text(t) => s.push_str(t),
                            Part::Dict(d) => self.cursors[*d].draw(&mut self.rng, s),
                        }
                    }
                    slot.set_text(s);
                }
            }
        }
        Some(Op::Exec(id, &self.params[id]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(text: &str, dialect: Dialect) -> Compiled {
        let dicts = ["word", "id"];
        compile(text, true, dialect, &|n| dicts.iter().position(|d| *d == n)).unwrap()
    }

    #[test]
    fn whole_literals_become_one_text_parameter() {
        let q = c(
            "select * from http_auth where username = '$word'",
            Dialect::Mysql,
        );
        assert_eq!(q.sql, "select * from http_auth where username = ?");
        assert_eq!(q.params, vec![Param::Whole(0)]);
        let q = c(
            "update t set pass='$word' where username = '$word'",
            Dialect::Postgres,
        );
        assert_eq!(q.sql, "update t set pass=$1 where username = $2");
        assert_eq!(q.params, vec![Param::Whole(0), Param::Whole(0)]);
    }

    #[test]
    fn bare_and_embedded_variables() {
        let q = c(
            "select * from t where id = $id and n = 'user_$id@x' and s = 'it''s'",
            Dialect::Sqlite,
        );
        assert_eq!(
            q.sql,
            "select * from t where id = ? and n = ? and s = 'it''s'"
        );
        assert_eq!(
            q.params,
            vec![
                Param::Bare(1),
                Param::Concat(vec![
                    Part::Text("user_".into()),
                    Part::Dict(1),
                    Part::Text("@x".into())
                ])
            ]
        );
        // Doubled quotes and MySQL escapes inside a literal with a variable.
        let q = c("select 'a''$word\\\\n'", Dialect::Mysql);
        assert_eq!(
            q.params,
            vec![Param::Concat(vec![
                Part::Text("a'".into()),
                Part::Dict(0),
                Part::Text("\n".into())
            ])]
        );
    }

    #[test]
    fn backslash_escapes_and_errors() {
        let q = c("select '\\$5' , \\$x", Dialect::Mysql);
        assert_eq!(q.sql, "select '$5' , $x");
        assert!(q.params.is_empty());
        let dicts = ["word"];
        let f = |n: &str| dicts.iter().position(|d| *d == n);
        assert_eq!(
            compile("select '$nope'", true, Dialect::Mysql, &f).unwrap_err(),
            "no dictionary named \"nope\" (used as $nope)"
        );
        assert!(compile("select $ 1", true, Dialect::Mysql, &f)
            .unwrap_err()
            .contains("not followed by a dictionary name"));
        assert!(compile("select '$word", true, Dialect::Mysql, &f)
            .unwrap_err()
            .contains("unterminated"));
        // Not parsed: sent as written.
        let q = compile("select '$word'", false, Dialect::Mysql, &f).unwrap();
        assert_eq!(q.sql, "select '$word'");
        assert_eq!(variables("a $x b '$y_1'").unwrap(), vec!["x", "y_1"]);
    }

    #[test]
    fn script_yields_the_barrel_with_fresh_draws() {
        use super::super::dict::{DictType, Source};
        let words = Arc::new(
            Dictionary::load(
                "word",
                DictType::Seq,
                &Source::List("a,b,c".into()),
                None,
                None,
            )
            .unwrap(),
        );
        let ids = Arc::new(
            Dictionary::load("id", DictType::Seq, &Source::List("7,x".into()), None, None).unwrap(),
        );
        let q0 = BarrelQuery {
            name: "sel".into(),
            kind: "select_index".into(),
            compiled: c("select '$word' where id = $id", Dialect::Sqlite),
        };
        let q1 = BarrelQuery {
            name: "upd".into(),
            kind: "update_index".into(),
            compiled: c("update t set p='$word' where u='$word'", Dialect::Sqlite),
        };
        let w = SmackWorkload::new(vec![q0, q1], vec![0, 0, 1], vec![words, ids]);
        assert_eq!(w.per_round(), 3);
        assert_eq!(w.statements()[1].kind, "update_index");
        let mut s = w.client(0, 1, Rng::new(1));
        let mut seen = Vec::new();
        for _ in 0..2 {
            s.start();
            while let Some(op) = s.next() {
                match op {
                    Op::Exec(id, p) => seen.push((id, p.to_vec())),
                    _ => panic!("no BEGIN/COMMIT in a barrel"),
                }
            }
        }
        let t = |s: &str| Value::Text(s.into());
        assert_eq!(
            seen,
            vec![
                (0, vec![t("a"), Value::Int(7)]),
                (0, vec![t("b"), t("x")]),
                (1, vec![t("c"), t("a")]),
                (0, vec![t("b"), Value::Int(7)]),
                (0, vec![t("c"), t("x")]),
                (1, vec![t("a"), t("b")]),
            ]
        );
    }
}
