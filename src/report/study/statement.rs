//! A seed's conclusions as checkable statements, and their verdicts.
//!
//! A statement compares two terms: `slower("Oracle 10g") ~ 40.7`,
//! `peak_clients("M4-L2.6-G2.3", workload="select") > peak_clients("M5-F4-L",
//! workload="select")`, `scalability("MySQL 5.0.7, InnoDB") > 3`. A term is
//! a number or a function of a series (named as the reference names it),
//! with optional `workload=`, `cpus=`, `metric=` (default: the reference's)
//! selecting the curve:
//!
//! | function | value |
//! |---|---|
//! | `peak(S)` | the curve's highest value |
//! | `peak_clients(S)` | the clients (or users) at it |
//! | `value(S, N)` | the value at N |
//! | `sag(S, N)` | % below the peak at N (default: the highest N measured) |
//! | `collapse(S)` | the first N after the peak below half of it (never: infinity) |
//! | `scalability(S)` | peak on the last CPU configuration / peak on the first |
//! | `slower(S)` | % below the best series' peak (same workload and CPUs) |
//! | `rank(S)` | 1 for the highest peak, 2 for the next … |
//! | `deadlocks(S, N)` | deadlocks per second at N |
//! | `first_deadlocks(S)` | the lowest N with any deadlock (none measured: infinity) |
//!
//! Comparisons: `>`, `<`, `>=`, `<=`, `==`, `!=`, and `~` (equal within
//! 0.5 %, for numbers a seed prints rounded). A statement is evaluated on
//! any [`Curves`]: the seed's published data, and the study's measured
//! series mapped to the seed's names; a term without its data makes the
//! statement *not measurable*, with why.

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

#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    pub lhs: Term,
    pub cmp: Cmp,
    pub rhs: Term,
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
    let lhs = term(&mut lx)?;
    lx.skip_ws();
    let at = lx.pos;
    let rest = &s[at..];
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
    let rhs = term(&mut lx)?;
    lx.skip_ws();
    if lx.pos < s.len() {
        return Err((
            lx.pos,
            format!("unexpected '{}' after the statement", &s[lx.pos..]),
        ));
    }
    Ok(Statement { lhs, cmp, rhs })
}

fn term(lx: &mut Lexer<'_>) -> Result<Term, ParseError> {
    match lx.peek() {
        Some(c) if c.is_ascii_digit() || c == '-' || c == '.' => lx.number().map(Term::Num),
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

/// What a statement's data come from: curves (x, value) of named series.
pub trait Curves {
    /// The curve of `series` for `metric`, on `workload` (None: the only
    /// one) and CPU configuration `cpus` (None: the largest); Err: why not.
    fn curve(
        &self,
        series: &str,
        metric: &str,
        workload: Option<&str>,
        cpus: Option<&str>,
    ) -> Result<Vec<(u32, f64)>, String>;
    /// The series' CPU configurations, fewest CPUs first.
    fn cpus(&self, series: &str) -> Vec<String>;
    /// Every series that can be compared (for `slower` and `rank`).
    fn series(&self) -> Vec<String>;
    /// The default metric.
    fn metric(&self) -> &str;
}

/// A term's value and how it was found, or why it could not be.
pub type Eval = Result<(f64, String), String>;

fn peak_of(c: &[(u32, f64)]) -> Option<(u32, f64)> {
    c.iter().copied().fold(None, |best, p| match best {
        Some(b) if b.1 >= p.1 => Some(b),
        _ => Some(p),
    })
}

/// Evaluates one term on `d`.
pub fn eval(t: &Term, d: &dyn Curves) -> Eval {
    let Term::Call {
        func,
        series,
        n,
        workload,
        cpus,
        metric,
    } = t
    else {
        let Term::Num(v) = t else { unreachable!() };
        return Ok((*v, format!("{v}")));
    };
    let metric = metric.as_deref().unwrap_or(d.metric());
    let curve = |s: &str, m: &str, c: Option<&str>| d.curve(s, m, workload.as_deref(), c);
    let name = |f: &str| format!("{f}({series})");
    match func {
        Func::Peak | Func::PeakClients => {
            let c = curve(series, metric, cpus.as_deref())?;
            let (x, v) = peak_of(&c).ok_or_else(|| format!("{series}: no values"))?;
            Ok(if *func == Func::Peak {
                (v, format!("peak {v:.2} at {x}"))
            } else {
                (f64::from(x), format!("peak {v:.2} at {x}"))
            })
        }
        Func::Value | Func::Deadlocks => {
            let m = if *func == Func::Deadlocks {
                "deadlocks_per_s"
            } else {
                metric
            };
            let c = curve(series, m, cpus.as_deref())?;
            let n = n.expect("checked by the parser");
            c.iter()
                .find(|p| p.0 == n)
                .map(|p| (p.1, format!("{} {:.2} at {n}", name(m), p.1)))
                .ok_or_else(|| format!("{series}: no {m} at {n}"))
        }
        Func::Sag => {
            let c = curve(series, metric, cpus.as_deref())?;
            let (px, pv) = peak_of(&c).ok_or_else(|| format!("{series}: no values"))?;
            let at = match n {
                Some(n) => c.iter().find(|p| p.0 == *n).copied(),
                None => c.iter().max_by_key(|p| p.0).copied(),
            }
            .ok_or_else(|| format!("{series}: no value at {}", n.unwrap_or(0)))?;
            let sag = (pv - at.1) / pv * 100.0;
            Ok((
                sag,
                format!(
                    "{} = {sag:.2} % (peak {pv:.2} at {px}, {:.2} at {})",
                    name("sag"),
                    at.1,
                    at.0
                ),
            ))
        }
        Func::Collapse => {
            let c = curve(series, metric, cpus.as_deref())?;
            let (px, pv) = peak_of(&c).ok_or_else(|| format!("{series}: no values"))?;
            // Never: infinitely far, so `collapse(S) <= 300` does not hold.
            let last = c.iter().map(|p| p.0).max().unwrap_or(px);
            Ok(c.iter()
                .filter(|p| p.0 > px && p.1 < pv / 2.0)
                .map(|p| p.0)
                .min()
                .map(|x| {
                    (
                        f64::from(x),
                        format!("below half of the peak ({pv:.2} at {px}) from {x}"),
                    )
                })
                .unwrap_or((
                    f64::INFINITY,
                    format!("{series} never falls below half of its peak ({pv:.2} at {px}) up to {last}"),
                )))
        }
        Func::Scalability => {
            // A series without data says why first.
            d.curve(series, metric, workload.as_deref(), None)?;
            let sets = d.cpus(series);
            let (Some(first), Some(last)) = (sets.first(), sets.last()) else {
                return Err(format!("{series}: no CPU configurations"));
            };
            if first == last {
                return Err(format!("{series}: one CPU configuration only ({first})"));
            }
            let p = |c: &str| -> Result<f64, String> {
                Ok(peak_of(&curve(series, metric, Some(c))?)
                    .ok_or("no values")?
                    .1)
            };
            let (a, b) = (p(first)?, p(last)?);
            Ok((
                b / a,
                format!(
                    "{} = {b:.2} ({last}) / {a:.2} ({first}) = {:.2}",
                    name("scalability"),
                    b / a
                ),
            ))
        }
        Func::Slower | Func::Rank => {
            let mine = peak_of(&curve(series, metric, cpus.as_deref())?)
                .ok_or_else(|| format!("{series}: no values"))?
                .1;
            let mut peaks: Vec<(String, f64)> = d
                .series()
                .into_iter()
                .filter_map(|s| {
                    let c = curve(&s, metric, cpus.as_deref()).ok()?;
                    Some((s, peak_of(&c)?.1))
                })
                .collect();
            peaks.sort_by(|a, b| b.1.total_cmp(&a.1));
            let (best, top) = peaks.first().cloned().unwrap_or((series.clone(), mine));
            if *func == Func::Slower {
                let v = (top - mine) / top * 100.0;
                Ok((
                    v,
                    format!(
                        "{} = {v:.2} % (peak {mine:.2}; best {best} {top:.2})",
                        name("slower")
                    ),
                ))
            } else {
                let r = 1 + peaks.iter().filter(|p| p.1 > mine).count();
                let order: Vec<String> = peaks.iter().map(|(s, v)| format!("{s} {v:.2}")).collect();
                Ok((
                    r as f64,
                    format!(
                        "{} = {r} of {} ({})",
                        name("rank"),
                        peaks.len(),
                        order.join(" > ")
                    ),
                ))
            }
        }
        Func::FirstDeadlocks => {
            let c = curve(series, "deadlocks_per_s", cpus.as_deref())?;
            let last = c.iter().map(|p| p.0).max().unwrap_or(0);
            Ok(c.iter()
                .filter(|p| p.1 > 0.0)
                .map(|p| p.0)
                .min()
                .map(|x| (f64::from(x), format!("first deadlocks at {x}")))
                .unwrap_or((
                    f64::INFINITY,
                    format!("{series}: no deadlock at any count up to {last}"),
                )))
        }
    }
}

/// A statement's verdict on one data set.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "verdict", content = "why")]
pub enum Verdict {
    Holds(String),
    DoesNotHold(String),
    NotMeasurable(String),
}

impl Verdict {
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Holds(_) => "holds",
            Verdict::DoesNotHold(_) => "does not hold",
            Verdict::NotMeasurable(_) => "not measurable here",
        }
    }

    pub fn why(&self) -> &str {
        match self {
            Verdict::Holds(w) | Verdict::DoesNotHold(w) | Verdict::NotMeasurable(w) => w,
        }
    }
}

/// Evaluates `s` on `d`.
pub fn verdict(s: &Statement, d: &dyn Curves) -> Verdict {
    let (a, b) = match (eval(&s.lhs, d), eval(&s.rhs, d)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return Verdict::NotMeasurable(e),
    };
    let holds = match s.cmp {
        Cmp::Gt => a.0 > b.0,
        Cmp::Lt => a.0 < b.0,
        Cmp::Ge => a.0 >= b.0,
        Cmp::Le => a.0 <= b.0,
        Cmp::Eq => a.0 == b.0,
        Cmp::Ne => a.0 != b.0,
        Cmp::About => (a.0 - b.0).abs() <= (0.005 * b.0.abs()).max(0.01),
    };
    let sym = match s.cmp {
        Cmp::Gt => ">",
        Cmp::Lt => "<",
        Cmp::Ge => ">=",
        Cmp::Le => "<=",
        Cmp::Eq => "==",
        Cmp::Ne => "!=",
        Cmp::About => "~",
    };
    let why = if matches!(s.rhs, Term::Num(_)) {
        format!("{} {sym} {}", a.1, b.1)
    } else {
        format!("{}; {}", a.1, b.1)
    };
    if holds {
        Verdict::Holds(why)
    } else {
        Verdict::DoesNotHold(why)
    }
}

#[cfg(test)]
#[path = "statement_tests.rs"]
mod tests;
