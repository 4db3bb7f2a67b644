//! The language of a reproduction's statements: the syntax tree and its
//! parser (`report::study::statement` evaluates it).
//!
//! ```text
//! statement  := all ("or" all)*
//! all        := comparison ("and" comparison)*
//! comparison := product (">" | "<" | ">=" | "<=" | "==" | "!=" | "~") product
//! product    := NUMBER "*" term | term
//! term       := NUMBER | "never" | FUNC "(" "\"series\"" ["," COUNT] ["," key "=" "\"value\""]* ")"
//! ```
//!
//! A number in a statement is a threshold; a seed's conclusion may only
//! compare with numbers of its own words (`study::repro` holds a
//! quoted statement to that).

/// A function of a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    Peak,
    PeakClients,
    Value,
    Sag,
    Collapse,
    Scalability,
    Slower,
    Rank,
    Deadlocks,
    FirstDeadlocks,
}

const FUNCS: [(&str, Func); 10] = [
    ("peak", Func::Peak),
    ("peak_clients", Func::PeakClients),
    ("value", Func::Value),
    ("sag", Func::Sag),
    ("collapse", Func::Collapse),
    ("scalability", Func::Scalability),
    ("slower", Func::Slower),
    ("rank", Func::Rank),
    ("deadlocks", Func::Deadlocks),
    ("first_deadlocks", Func::FirstDeadlocks),
];

#[derive(Debug, Clone, PartialEq)]
pub enum Term {
    Num(f64),
    /// A number times a term: `0.5 * peak("A")` for a seed's "half".
    Times(f64, Box<Term>),
    Call {
        func: Func,
        series: String,
        n: Option<u32>,
        workload: Option<String>,
        cpus: Option<String>,
        metric: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Gt,
    Lt,
    Ge,
    Le,
    Eq,
    Ne,
    About,
}

/// A statement: one comparison, or several joined by `and` (all must
/// hold) or `or` (one must). `and` binds tighter than `or`.
#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    Compare {
        lhs: Box<Term>,
        cmp: Cmp,
        rhs: Box<Term>,
    },
    All(Vec<Statement>),
    Any(Vec<Statement>),
}

impl Statement {
    /// The literal numbers it compares with: thresholds and factors (not
    /// the client counts that place a value on its curve).
    pub fn numbers(&self) -> Vec<f64> {
        fn of(t: &Term, out: &mut Vec<f64>) {
            match t {
                Term::Num(v) if v.is_finite() => out.push(*v),
                Term::Num(_) => {}
                Term::Times(k, t) => {
                    out.push(*k);
                    of(t, out)
                }
                Term::Call { .. } => {}
            }
        }
        let mut out = Vec::new();
        self.each(&mut |lhs, _, rhs| {
            of(lhs, &mut out);
            of(rhs, &mut out);
        });
        out
    }

    /// The series it names, in order, once each.
    pub fn series(&self) -> Vec<String> {
        fn of(t: &Term, out: &mut Vec<String>) {
            match t {
                Term::Num(_) => {}
                Term::Times(_, t) => of(t, out),
                Term::Call { series, .. } => {
                    if !out.contains(series) {
                        out.push(series.clone())
                    }
                }
            }
        }
        let mut out = Vec::new();
        self.each(&mut |lhs, _, rhs| {
            of(lhs, &mut out);
            of(rhs, &mut out);
        });
        out
    }

    /// Calls `f` on every comparison.
    pub fn each(&self, f: &mut dyn FnMut(&Term, Cmp, &Term)) {
        match self {
            Statement::Compare { lhs, cmp, rhs } => f(lhs, *cmp, rhs),
            Statement::All(v) | Statement::Any(v) => v.iter().for_each(|s| s.each(f)),
        }
    }
}

/// A parse error: the byte offset in the statement and what is wrong.
pub type ParseError = (usize, String);

struct Lexer<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Lexer<'a> {
    fn skip_ws(&mut self) {
        while self.s[self.pos..].starts_with(char::is_whitespace) {
            self.pos += self.s[self.pos..].chars().next().map_or(1, char::len_utf8);
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.s[self.pos..].chars().next()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char, what: &str) -> Result<(), ParseError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err((self.pos, format!("expected {what}")))
        }
    }

    /// Eats `kw` when it is the next whole word.
    fn keyword(&mut self, kw: &str) -> bool {
        self.skip_ws();
        let rest = &self.s[self.pos..];
        let whole = rest.starts_with(kw)
            && !rest[kw.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
        if whole {
            self.pos += kw.len();
        }
        whole
    }

    fn word(&mut self) -> Option<(usize, &'a str)> {
        self.skip_ws();
        let start = self.pos;
        let len = self.s[start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(self.s.len() - start);
        let s: &'a str = self.s;
        (len > 0).then(|| {
            self.pos += len;
            (start, &s[start..start + len])
        })
    }

    fn string(&mut self) -> Result<String, ParseError> {
        self.skip_ws();
        let start = self.pos;
        if !self.eat('"') {
            return Err((start, "expected a quoted name".into()));
        }
        match self.s[self.pos..].find('"') {
            Some(end) => {
                let v = self.s[self.pos..self.pos + end].to_string();
                self.pos += end + 1;
                Ok(v)
            }
            None => Err((start, "unterminated string: a closing \" is missing".into())),
        }
    }

    fn number(&mut self) -> Result<f64, ParseError> {
        self.skip_ws();
        let start = self.pos;
        let len = self.s[start..]
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
            .unwrap_or(self.s.len() - start);
        self.s[start..start + len]
            .parse()
            .inspect(|_| self.pos += len)
            .map_err(|_| {
                (
                    start,
                    "expected a number or a function such as peak(\"…\")".into(),
                )
            })
    }
}

/// Parses one statement.
pub fn parse(s: &str) -> Result<Statement, ParseError> {
    let mut lx = Lexer { s, pos: 0 };
    let st = any(&mut lx)?;
    lx.skip_ws();
    if lx.pos < s.len() {
        return Err((
            lx.pos,
            format!("unexpected '{}' after the statement", &s[lx.pos..]),
        ));
    }
    Ok(st)
}

/// `all ('or' all)*`
fn any(lx: &mut Lexer<'_>) -> Result<Statement, ParseError> {
    let mut parts = vec![all(lx)?];
    while lx.keyword("or") {
        parts.push(all(lx)?);
    }
    Ok(if parts.len() == 1 {
        parts.pop().expect("one part")
    } else {
        Statement::Any(parts)
    })
}

/// `comparison ('and' comparison)*`
fn all(lx: &mut Lexer<'_>) -> Result<Statement, ParseError> {
    let mut parts = vec![comparison(lx)?];
    while lx.keyword("and") {
        parts.push(comparison(lx)?);
    }
    Ok(if parts.len() == 1 {
        parts.pop().expect("one part")
    } else {
        Statement::All(parts)
    })
}

fn comparison(lx: &mut Lexer<'_>) -> Result<Statement, ParseError> {
    let lhs = product(lx)?;
    lx.skip_ws();
    let at = lx.pos;
    let rest = &lx.s[at..];
    let (cmp, len) = [
        (">=", Cmp::Ge),
        ("<=", Cmp::Le),
        ("==", Cmp::Eq),
        ("!=", Cmp::Ne),
        (">", Cmp::Gt),
        ("<", Cmp::Lt),
        ("~", Cmp::About),
    ]
    .iter()
    .find(|(t, _)| rest.starts_with(t))
    .map(|(t, c)| (*c, t.len()))
    .ok_or((
        at,
        "expected a comparison: >, <, >=, <=, ==, != or ~".to_string(),
    ))?;
    lx.pos += len;
    let rhs = product(lx)?;
    Ok(Statement::Compare {
        lhs: Box::new(lhs),
        cmp,
        rhs: Box::new(rhs),
    })
}

/// `NUMBER '*' term`, or a term.
fn product(lx: &mut Lexer<'_>) -> Result<Term, ParseError> {
    let t = term(lx)?;
    match t {
        Term::Num(k) if lx.eat('*') => {
            let at = lx.pos;
            match term(lx)? {
                Term::Num(_) => Err((
                    at,
                    "a number times a number: write the product as one number".into(),
                )),
                t => Ok(Term::Times(k, Box::new(t))),
            }
        }
        t => Ok(t),
    }
}

fn term(lx: &mut Lexer<'_>) -> Result<Term, ParseError> {
    match lx.peek() {
        Some(c) if c.is_ascii_digit() || c == '-' || c == '.' => lx.number().map(Term::Num),
        // What `collapse` and `first_deadlocks` give when it never
        // happens on the measured range: infinitely far.
        _ if lx.keyword("never") => Ok(Term::Num(f64::INFINITY)),
        _ => {
            let Some((at, name)) = lx.word() else {
                return Err((
                    lx.pos,
                    "expected a number or a function such as peak(\"…\")".into(),
                ));
            };
            let func = FUNCS
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, f)| *f)
                .ok_or((
                    at,
                    format!(
                        "unknown function '{name}': the functions are {}",
                        FUNCS.map(|(n, _)| n).join(", ")
                    ),
                ))?;
            lx.expect('(', "( after the function's name")?;
            let series = lx.string()?;
            let (mut n, mut workload, mut cpus, mut metric) = (None, None, None, None);
            while lx.eat(',') {
                match lx.peek() {
                    Some(c) if c.is_ascii_digit() => {
                        let at = lx.pos;
                        let v = lx.number()?;
                        if v < 0.0 || v.fract() != 0.0 {
                            return Err((at, "a client count is a whole number".into()));
                        }
                        n = Some(v as u32);
                    }
                    _ => {
                        let Some((at, key)) = lx.word() else {
                            return Err((
                                lx.pos,
                                "expected a count or workload=, cpus=, metric=".into(),
                            ));
                        };
                        let key = key.to_string();
                        lx.expect('=', "= after the argument's name")?;
                        let v = lx.string()?;
                        match key.as_str() {
                            "workload" => workload = Some(v),
                            "cpus" => cpus = Some(v),
                            "metric" => metric = Some(v),
                            _ => {
                                return Err((
                                    at,
                                    format!(
                                    "unknown argument '{key}': give workload=, cpus= or metric="
                                ),
                                ))
                            }
                        }
                    }
                }
            }
            lx.expect(')', ") closing the function's arguments")?;
            if matches!(func, Func::Value | Func::Deadlocks) && n.is_none() {
                return Err((
                    at,
                    format!("{name}(…) needs a client count: {name}(\"{series}\", 8)"),
                ));
            }
            Ok(Term::Call {
                func,
                series,
                n,
                workload,
                cpus,
                metric,
            })
        }
    }
}
