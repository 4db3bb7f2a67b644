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
//! `never` is the infinity these give: `collapse("A") == never` holds
//! when A stays above half its peak over every count measured.
//!
//! Comparisons: `>`, `<`, `>=`, `<=`, `==`, `!=`, and `~` (about equal:
//! within 5 % of the larger side, [`NOISE_BAND`]; for shares in `_pct`,
//! within 2 percentage points, [`POINTS_BAND`]). A number may multiply a term (`0.5 * peak("A")` for a seed's
//! "half"); comparisons join with `and` (a claim about "both" or "their"
//! checks every series it names) and `or`. The parser is `expr`; every
//! verdict comes with its margin ([`Margin`]). A statement is evaluated on
//! any [`Curves`]: the seed's published data, and the study's measured
//! series mapped to the seed's names; a term without its data makes the
//! statement *not measurable*, with why.

pub use crate::study::repro::expr::{parse, Cmp, Func, ParseError, Statement, Term};

/// The band of `~`: two figures are "about" the same within 5 % of the
/// larger — a seed's "about 150 %" or a rounded figure, and the noise of
/// one run on a shared machine.
pub const NOISE_BAND: f64 = 0.05;

/// The band of `~` between shares of a whole (a metric in `_pct`: "about
/// 95 %" of the CPU): 2 percentage points, not 5 % of the figure — 99.7 %
/// busy is saturation, not "about 95 %".
pub const POINTS_BAND: f64 = 2.0;

/// The band of `~` for `lhs ~ rhs` with values `x`, `y`: percentage points
/// where either side is a share (its metric ends in `_pct`), else
/// [`NOISE_BAND`] of the larger.
pub fn about_band(lhs: &Term, rhs: &Term, x: f64, y: f64) -> f64 {
    fn share(t: &Term) -> bool {
        match t {
            Term::Times(_, t) => share(t),
            Term::Call { metric, .. } => metric.as_deref().is_some_and(|m| m.ends_with("_pct")),
            Term::Num(_) => false,
        }
    }
    if share(lhs) || share(rhs) {
        POINTS_BAND
    } else {
        NOISE_BAND * x.abs().max(y.abs())
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
    let (func, series, n, workload, cpus, metric) = match t {
        Term::Num(v) if v.is_infinite() => return Ok((*v, "never".into())),
        Term::Num(v) => return Ok((*v, format!("{v}"))),
        Term::Times(k, t) => {
            let (v, why) = eval(t, d)?;
            return Ok((k * v, format!("{k} × {why}")));
        }
        Term::Call {
            func,
            series,
            n,
            workload,
            cpus,
            metric,
        } => (func, series, n, workload, cpus, metric),
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
                        format!(
                            "{} = {x} (below half of its peak, {pv:.2} at {px})",
                            name("collapse")
                        ),
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
        Func::Slower | Func::Rank => against_the_best(
            *func,
            series,
            metric,
            workload.as_deref(),
            cpus.as_deref(),
            d,
        ),
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

/// `slower(S)` (% below the best series' peak) or `rank(S)` (1 for the
/// highest peak), over every series `d` has on the same curve.
fn against_the_best(
    func: Func,
    series: &str,
    metric: &str,
    workload: Option<&str>,
    cpus: Option<&str>,
    d: &dyn Curves,
) -> Eval {
    let curve = |s: &str, m: &str, c: Option<&str>| d.curve(s, m, workload, c);
    let name = |f: &str| format!("{f}({series})");
    let mine = peak_of(&curve(series, metric, cpus)?)
        .ok_or_else(|| format!("{series}: no values"))?
        .1;
    let mut peaks: Vec<(String, f64)> = d
        .series()
        .into_iter()
        .filter_map(|s| {
            let c = curve(&s, metric, cpus).ok()?;
            Some((s, peak_of(&c)?.1))
        })
        .collect();
    peaks.sort_by(|a, b| b.1.total_cmp(&a.1));
    let (best, top) = peaks.first().cloned().unwrap_or((series.to_string(), mine));
    if func == Func::Slower {
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

/// A statement's verdict on one data set.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "verdict", content = "why")]
pub enum Verdict {
    Holds(String),
    DoesNotHold(String),
    /// Measured, but the blocks' interval decides neither way
    /// (`judged.rs`).
    Inconclusive(String),
    NotMeasurable(String),
}

impl Verdict {
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Holds(_) => "holds",
            Verdict::DoesNotHold(_) => "does not hold",
            Verdict::Inconclusive(_) => "inconclusive",
            Verdict::NotMeasurable(_) => "not measurable here",
        }
    }

    pub fn why(&self) -> &str {
        match self {
            Verdict::Holds(w)
            | Verdict::DoesNotHold(w)
            | Verdict::Inconclusive(w)
            | Verdict::NotMeasurable(w) => w,
        }
    }
}

/// Evaluates `s` on `d`.
pub fn verdict(s: &Statement, d: &dyn Curves) -> Verdict {
    check(s, d).0
}

/// How far a statement is from failing: for each comparison the distance
/// between its sides in the direction it asks for, in the compared
/// figure's units and as a share of the larger side (%); for `and` the
/// weakest part's, for `or` the strongest's. Negative when it does not
/// hold; infinite where a side is (a series that never collapses).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Margin {
    pub abs: f64,
    pub pct: f64,
}

impl Margin {
    /// "by 12.3 (4.5 %)", or "by any amount" for an infinite margin.
    pub fn describe(&self) -> String {
        if self.abs.is_infinite() {
            "by any amount (one side is infinitely far)".into()
        } else {
            format!("by {:.3} ({:.1} %)", self.abs.abs(), self.pct.abs())
        }
    }
}

/// Evaluates `s` on `d`: its verdict and, where both sides were measured,
/// its margin.
pub fn check(s: &Statement, d: &dyn Curves) -> (Verdict, Option<Margin>) {
    match s {
        Statement::Compare { lhs, cmp, rhs } => compare(lhs, *cmp, rhs, d),
        Statement::All(parts) | Statement::Any(parts) => {
            let all = matches!(s, Statement::All(_));
            let results: Vec<(Verdict, Option<Margin>)> =
                parts.iter().map(|p| check(p, d)).collect();
            // A definite part decides where it can: one failing part fails
            // `and`, one holding part holds `or`, whatever else is missing;
            // the reasons given are then the deciding parts'.
            let deciding = |want_holds: bool, v: &Verdict| {
                matches!(v, Verdict::Holds(_)) == want_holds
                    && !matches!(v, Verdict::NotMeasurable(_))
            };
            let decided = |want_holds: bool| results.iter().any(|(v, _)| deciding(want_holds, v));
            let why_of = |keep: &dyn Fn(&Verdict) -> bool| {
                results
                    .iter()
                    .filter(|(v, _)| keep(v))
                    .map(|(v, _)| v.why().to_string())
                    .collect::<Vec<_>>()
                    .join(if all { " and " } else { " or " })
            };
            let why = why_of(&|_| true);
            let margins = results.iter().filter_map(|r| r.1);
            let margin = if all {
                margins.min_by(|a, b| a.pct.total_cmp(&b.pct))
            } else {
                margins.max_by(|a, b| a.pct.total_cmp(&b.pct))
            };
            if all && decided(false) {
                return (
                    Verdict::DoesNotHold(why_of(&|v| deciding(false, v))),
                    margin,
                );
            }
            if !all && decided(true) {
                return (Verdict::Holds(why_of(&|v| deciding(true, v))), margin);
            }
            if let Some((v, _)) = results
                .iter()
                .find(|(v, _)| matches!(v, Verdict::NotMeasurable(_)))
            {
                return (Verdict::NotMeasurable(v.why().to_string()), None);
            }
            let v = if all {
                Verdict::Holds(why)
            } else {
                Verdict::DoesNotHold(why)
            };
            (v, margin)
        }
    }
}

fn compare(lhs: &Term, cmp: Cmp, rhs: &Term, d: &dyn Curves) -> (Verdict, Option<Margin>) {
    let (a, b) = match (eval(lhs, d), eval(rhs, d)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return (Verdict::NotMeasurable(e), None),
    };
    let band = about_band(lhs, rhs, a.0, b.0);
    let (x, y) = (a.0, b.0);
    // The margin's sign says whether it holds; equality asks for none.
    let abs = match cmp {
        Cmp::Gt | Cmp::Ge => x - y,
        Cmp::Lt | Cmp::Le => y - x,
        Cmp::Eq => -(x - y).abs(),
        Cmp::Ne => (x - y).abs(),
        Cmp::About => band - (x - y).abs(),
    };
    let holds = match cmp {
        Cmp::Gt => x > y,
        Cmp::Lt => x < y,
        Cmp::Ge => x >= y,
        Cmp::Le => x <= y,
        Cmp::Eq => x == y,
        Cmp::Ne => x != y,
        Cmp::About => (x - y).abs() <= band,
    };
    let scale = x.abs().max(y.abs());
    // Infinitely far (`never`): equal infinities hold by any amount.
    let abs = match (abs.is_nan(), holds) {
        (true, true) => f64::INFINITY,
        (true, false) => f64::NEG_INFINITY,
        _ => abs,
    };
    let pct = if abs.is_infinite() {
        abs
    } else if scale > 0.0 {
        abs / scale * 100.0
    } else {
        0.0
    };
    let sym = match cmp {
        Cmp::Gt => ">",
        Cmp::Lt => "<",
        Cmp::Ge => ">=",
        Cmp::Le => "<=",
        Cmp::Eq => "==",
        Cmp::Ne => "!=",
        Cmp::About => "~",
    };
    let why = if matches!(rhs, Term::Num(_)) {
        format!("{} {sym} {}", a.1, b.1)
    } else {
        format!("{}; {}", a.1, b.1)
    };
    let margin = Some(Margin { abs, pct });
    if holds {
        (Verdict::Holds(why), margin)
    } else {
        (Verdict::DoesNotHold(why), margin)
    }
}

#[cfg(test)]
#[path = "statement_tests.rs"]
mod tests;
