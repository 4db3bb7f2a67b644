//! A statement judged on a study's blocks, not on the means of its
//! repeats: `holds` and `does not hold` only where the blocks' interval
//! decides, `inconclusive` otherwise.
//!
//! A comparison of two series' figures (`peak("A") < peak("B")`,
//! `value("A", 64) > 0.9 * value("B", 64)`) is a ratio per block — the
//! blocks ran every series once, back to back, so the machine's drift
//! falls on both sides alike — and its interval is Student's t on the log
//! ratios (`stats::paired`). Against the equivalence margin m:
//!
//! | claim | holds | does not hold |
//! |---|---|---|
//! | `A > B` | interval above 1 and not within 1 ± m | interval within 1 ± m ("no difference"), or below 1 |
//! | `A >= B` | interval above 1 − m | interval entirely below 1, reaching below 1 − m |
//! | `A == B` | interval within 1 ± m | interval excludes 1, not within 1 ± m |
//! | `A != B` | interval excludes 1, not within 1 ± m | interval within 1 ± m |
//! | `A ~ B` | interval within 1 ± 5 % | interval entirely outside 1 ± 5 % |
//!
//! (`<` and `<=` mirror `>` and `>=`.) A figure against a number
//! (`scalability("A") > 3`, `slower("A") ~ 40.7`) uses the interval of the
//! figure's mean over the blocks in the same way. Figures that are
//! positions rather than amounts — clients at a peak, a collapse point,
//! `never` — hold where they hold in every block, fail where they fail in
//! every block, and are inconclusive where the blocks disagree. With one
//! block there is no interval: inconclusive.

use super::statement::{about_band, eval, Curves, Verdict, NOISE_BAND};
use crate::stats::paired::{mean_interval, Ratio};
use crate::study::repro::expr::{Cmp, Func, Statement, Term};

/// Judges `st` on the study's `blocks` (each a view of one block, in the
/// same order for every series), with `margin` the equivalence margin.
pub fn judge(st: &Statement, blocks: &[&dyn Curves], margin: f64) -> Verdict {
    match st {
        Statement::Compare { lhs, cmp, rhs } => compare(lhs, *cmp, rhs, blocks, margin),
        Statement::All(parts) | Statement::Any(parts) => {
            let all = matches!(st, Statement::All(_));
            let vs: Vec<Verdict> = parts.iter().map(|p| judge(p, blocks, margin)).collect();
            let holds = |v: &Verdict| matches!(v, Verdict::Holds(_));
            let fails = |v: &Verdict| matches!(v, Verdict::DoesNotHold(_));
            // The reasons of the parts that decide: a failing part alone
            // fails `and`, a holding part alone holds `or`, whatever the
            // others were (one not measurable here among them).
            let why = |keep: &dyn Fn(&Verdict) -> bool| {
                vs.iter()
                    .filter(|v| keep(v))
                    .map(|v| v.why().to_string())
                    .collect::<Vec<_>>()
                    .join(if all { " and " } else { " or " })
            };
            let any = |f: fn(&Verdict) -> bool| vs.iter().any(f);
            if all && any(fails) {
                Verdict::DoesNotHold(why(&fails))
            } else if !all && vs.iter().all(fails) {
                Verdict::DoesNotHold(why(&|_| true))
            } else if all && vs.iter().all(holds) {
                Verdict::Holds(why(&|_| true))
            } else if !all && any(holds) {
                Verdict::Holds(why(&holds))
            } else if let Some(v) = vs.iter().find(|v| matches!(v, Verdict::NotMeasurable(_))) {
                Verdict::NotMeasurable(v.why().to_string())
            } else {
                Verdict::Inconclusive(why(&|_| true))
            }
        }
    }
}

/// Whether a term is a figure of a series (rather than a number).
fn measured(t: &Term) -> bool {
    match t {
        Term::Num(_) => false,
        Term::Times(_, t) => measured(t),
        Term::Call { .. } => true,
    }
}

/// Whether a term is a position on the curve (a client count, a rank),
/// not an amount a ratio or a mean describes.
fn position(t: &Term) -> bool {
    match t {
        Term::Num(_) => false,
        Term::Times(_, t) => position(t),
        Term::Call { func, .. } => matches!(
            func,
            Func::PeakClients | Func::Collapse | Func::FirstDeadlocks | Func::Rank
        ),
    }
}

fn compare(lhs: &Term, cmp: Cmp, rhs: &Term, blocks: &[&dyn Curves], margin: f64) -> Verdict {
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    let mut first_error = None;
    for b in blocks {
        match (eval(lhs, *b), eval(rhs, *b)) {
            (Ok(x), Ok(y)) => {
                xs.push(x.0);
                ys.push(y.0);
            }
            // A block without one side (a series stopped early there):
            // not paired.
            (Err(e), _) | (_, Err(e)) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if xs.is_empty() {
        return Verdict::NotMeasurable(
            first_error.unwrap_or_else(|| "no block measured both sides".into()),
        );
    }
    if position(lhs) || position(rhs) {
        return agreement(&xs, &ys, cmp);
    }
    let amounts = |v: &[f64]| v.iter().all(|x| x.is_finite() && *x > 0.0);
    if measured(lhs) && measured(rhs) && amounts(&xs) && amounts(&ys) {
        let pairs: Vec<(f64, f64)> = xs.iter().copied().zip(ys.iter().copied()).collect();
        let r = Ratio::of(&pairs).expect("positive pairs");
        return ratio_verdict(&r, cmp, margin);
    }
    if !measured(rhs) && xs.iter().all(|x| x.is_finite()) {
        let y = ys[0];
        let (m, ci) = mean_interval(&xs).expect("values");
        let band = about_band(lhs, rhs, m, y);
        return number_verdict(m, ci, cmp, y, xs.len(), band);
    }
    agreement(&xs, &ys, cmp)
}

/// "ratio 0.93, interval 0.90–0.96 over 5 blocks".
fn describe(r: &Ratio) -> String {
    match r.ci {
        Some((lo, hi)) => format!(
            "ratio {:.3}, 95 % interval {lo:.3}–{hi:.3} over {} blocks",
            r.ratio, r.blocks
        ),
        None => format!("ratio {:.3} in one block: no interval", r.ratio),
    }
}

fn ratio_verdict(r: &Ratio, cmp: Cmp, margin: f64) -> Verdict {
    let why = describe(r);
    let Some((lo, hi)) = r.ci else {
        return Verdict::Inconclusive(why);
    };
    let within = |m: f64| lo >= 1.0 - m && hi <= 1.0 + m;
    let none = format!("{why}: no difference within ±{} %", margin * 100.0);
    let (above, below) = (lo > 1.0, hi < 1.0);
    let v = match cmp {
        Cmp::Gt | Cmp::Lt => {
            let (yes, no) = if cmp == Cmp::Gt {
                (above, below)
            } else {
                (below, above)
            };
            if within(margin) {
                return Verdict::DoesNotHold(none);
            }
            decide(yes, no)
        }
        Cmp::Ge | Cmp::Le => {
            let (yes, no) = if cmp == Cmp::Ge {
                (lo >= 1.0 - margin, below && lo < 1.0 - margin)
            } else {
                (hi <= 1.0 + margin, above && hi > 1.0 + margin)
            };
            decide(yes, no)
        }
        Cmp::Eq => {
            if within(margin) {
                return Verdict::Holds(none);
            }
            decide(false, above || below)
        }
        Cmp::Ne => {
            if within(margin) {
                return Verdict::DoesNotHold(none);
            }
            decide(above || below, false)
        }
        Cmp::About => decide(
            within(NOISE_BAND),
            lo > 1.0 + NOISE_BAND || hi < 1.0 - NOISE_BAND,
        ),
    };
    v(why)
}

/// The verdict a decision makes: holds, does not hold, or neither.
fn decide(yes: bool, no: bool) -> fn(String) -> Verdict {
    match (yes, no) {
        (true, false) => Verdict::Holds,
        (false, true) => Verdict::DoesNotHold,
        _ => Verdict::Inconclusive,
    }
}

fn number_verdict(
    m: f64,
    ci: Option<(f64, f64)>,
    cmp: Cmp,
    y: f64,
    n: usize,
    band: f64,
) -> Verdict {
    let Some((lo, hi)) = ci else {
        return Verdict::Inconclusive(format!("{m:.3} in one block against {y}: no interval"));
    };
    let why = format!("mean {m:.3}, 95 % interval {lo:.3}–{hi:.3} over {n} blocks, against {y}");
    let v = match cmp {
        Cmp::Gt | Cmp::Ge => decide(lo > y || (cmp == Cmp::Ge && lo >= y), hi < y),
        Cmp::Lt | Cmp::Le => decide(hi < y || (cmp == Cmp::Le && hi <= y), lo > y),
        Cmp::About => decide(
            lo >= y - band && hi <= y + band,
            lo > y + band || hi < y - band,
        ),
        Cmp::Eq => decide(lo == y && hi == y, lo > y || hi < y),
        Cmp::Ne => decide(lo > y || hi < y, lo == y && hi == y),
    };
    v(why)
}

/// Positions and `never`: decided where every block agrees.
fn agreement(xs: &[f64], ys: &[f64], cmp: Cmp) -> Verdict {
    let holds = |x: f64, y: f64| match cmp {
        Cmp::Gt => x > y,
        Cmp::Lt => x < y,
        Cmp::Ge => x >= y,
        Cmp::Le => x <= y,
        Cmp::Eq => x == y,
        Cmp::Ne => x != y,
        Cmp::About => (x - y).abs() <= NOISE_BAND * x.abs().max(y.abs()),
    };
    let n = xs.len();
    let held = xs.iter().zip(ys).filter(|(x, y)| holds(**x, **y)).count();
    let why = format!("in {held} of {n} blocks");
    if n < 2 {
        Verdict::Inconclusive(format!("{why}: one block, no interval"))
    } else if held == n {
        Verdict::Holds(why)
    } else if held == 0 {
        Verdict::DoesNotHold(why)
    } else {
        Verdict::Inconclusive(format!("{why}: the blocks disagree"))
    }
}

#[cfg(test)]
mod tests {
    use super::super::published::RefCurves;
    use super::*;
    use crate::study::repro::expr::parse;
    use crate::study::repro::published as reference;

    /// Judges `check` on blocks where A and B measured these (tps at 1
    /// and 2 clients: A's pairs, B's pairs).
    fn judged(check: &str, blocks: &[([f64; 2], [f64; 2])]) -> Verdict {
        let data: Vec<_> = blocks
            .iter()
            .map(|(a, b)| {
                let csv = format!(
                    "series,clients,metric,value\nA,1,tps,{}\nA,2,tps,{}\nB,1,tps,{}\nB,2,tps,{}\n",
                    a[0], a[1], b[0], b[1]
                );
                reference::parse("r.csv", &csv).unwrap()
            })
            .collect();
        let curves: Vec<RefCurves<'_>> = data
            .iter()
            .map(|d| RefCurves {
                data: d,
                metric: "tps".into(),
            })
            .collect();
        let views: Vec<&dyn Curves> = curves.iter().map(|c| c as &dyn Curves).collect();
        judge(&parse(check).unwrap(), &views, 0.02)
    }

    fn label(v: &Verdict) -> &'static str {
        v.label()
    }

    #[test]
    fn a_lead_in_most_blocks_but_not_all_is_inconclusive_not_narrowly_held() {
        // A ahead by 10 % and 4 %, behind by 3 %: the mean holds, the
        // interval does not decide.
        let b = [
            ([110.0, 1.0], [100.0, 1.0]),
            ([104.0, 1.0], [100.0, 1.0]),
            ([97.0, 1.0], [100.0, 1.0]),
        ];
        let v = judged(r#"peak("A") > peak("B")"#, &b);
        assert_eq!(label(&v), "inconclusive", "{v:?}");
        assert!(v.why().contains("over 3 blocks"), "{v:?}");
    }

    #[test]
    fn a_steady_lead_holds_and_a_steady_tie_is_no_difference() {
        let lead = [
            ([110.0, 1.0], [100.0, 1.0]),
            ([220.0, 1.0], [200.0, 1.0]),
            ([108.0, 1.0], [100.0, 1.0]),
        ];
        assert_eq!(label(&judged(r#"peak("A") > peak("B")"#, &lead)), "holds");
        assert_eq!(
            label(&judged(r#"peak("A") < peak("B")"#, &lead)),
            "does not hold"
        );
        assert_eq!(label(&judged(r#"peak("A") != peak("B")"#, &lead)), "holds");
        // The same server against itself, the machine drifting 30 %
        // between blocks: no difference, whichever way it is claimed.
        let tie = [
            ([100.0, 1.0], [100.5, 1.0]),
            ([130.0, 1.0], [129.8, 1.0]),
            ([90.0, 1.0], [90.3, 1.0]),
        ];
        let v = judged(r#"peak("A") < peak("B")"#, &tie);
        assert_eq!(label(&v), "does not hold");
        assert!(v.why().contains("no difference within ±2 %"), "{v:?}");
        assert_eq!(label(&judged(r#"peak("A") == peak("B")"#, &tie)), "holds");
        assert_eq!(label(&judged(r#"peak("A") >= peak("B")"#, &tie)), "holds");
        assert_eq!(label(&judged(r#"peak("A") ~ peak("B")"#, &tie)), "holds");
    }

    #[test]
    fn a_failing_part_decides_and_gives_its_reason_alone() {
        // A behind B in every block; C is no series here. `and` fails on
        // A's part, and says why in A's words only, not C's.
        let behind = [
            ([90.0, 1.0], [100.0, 1.0]),
            ([180.0, 1.0], [200.0, 1.0]),
            ([88.0, 1.0], [100.0, 1.0]),
        ];
        let v = judged(r#"peak("C") > 1 and peak("A") > peak("B")"#, &behind);
        assert_eq!(label(&v), "does not hold", "{v:?}");
        assert!(v.why().contains("over 3 blocks"), "{v:?}");
        assert!(!v.why().contains("C:"), "{v:?}");
        // `or`: the holding part alone.
        let v = judged(r#"peak("C") > 1 or peak("B") > peak("A")"#, &behind);
        assert_eq!(label(&v), "holds", "{v:?}");
        assert!(!v.why().contains(" or "), "{v:?}");
        // Undecided: every part's reason, the missing one's included.
        let v = judged(r#"peak("C") > 1 and peak("B") > peak("A")"#, &behind);
        assert_eq!(label(&v), "not measurable here", "{v:?}");
        assert!(v.why().contains("C"), "{v:?}");
    }

    #[test]
    fn one_block_has_no_interval_and_positions_need_every_block() {
        let one = [([110.0, 1.0], [100.0, 1.0])];
        assert_eq!(
            label(&judged(r#"peak("A") > peak("B")"#, &one)),
            "inconclusive"
        );
        // Clients at the peak: a position, decided by agreement.
        let b = [([1.0, 2.0], [1.0, 2.0]), ([1.0, 2.0], [2.0, 1.0])];
        assert_eq!(label(&judged(r#"peak_clients("A") == 2"#, &b)), "holds");
        let v = judged(r#"peak_clients("A") == peak_clients("B")"#, &b);
        assert_eq!(label(&v), "inconclusive", "{v:?}");
        assert!(v.why().contains("in 1 of 2 blocks"), "{v:?}");
    }

    #[test]
    fn a_figure_against_a_number_uses_its_interval() {
        let b = [
            ([50.0, 1.0], [100.0, 1.0]),
            ([52.0, 1.0], [100.0, 1.0]),
            ([49.0, 1.0], [100.0, 1.0]),
        ];
        assert_eq!(label(&judged(r#"peak("A") < 60"#, &b)), "holds");
        assert_eq!(label(&judged(r#"peak("A") > 60"#, &b)), "does not hold");
        assert_eq!(label(&judged(r#"peak("A") > 50"#, &b)), "inconclusive");
        // `and` fails with a failing part, `or` holds with a holding one.
        assert_eq!(
            label(&judged(r#"peak("A") < 60 and peak("A") > 60"#, &b)),
            "does not hold"
        );
        assert_eq!(
            label(&judged(r#"peak("A") > 50 or peak("A") < 60"#, &b)),
            "holds"
        );
        assert_eq!(
            label(&judged(r#"peak("A") > 50 and peak("A") < 60"#, &b)),
            "inconclusive"
        );
        let v = judged(r#"peak("Z") > 1"#, &b);
        assert_eq!(label(&v), "not measurable here", "{v:?}");
    }
}
