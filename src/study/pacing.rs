//! Validation of a workload's pacing keys: the load axis (`rates` or
//! `users`) and what every point of it shares (`arrival`, `latency_limit`,
//! `think_time`, `p99_goal`). The same rules as the command line's
//! `--rate`, `--users` and `--think-time`, each problem located in the file.

use toml::Spanned;

use super::load::{Loader, R};
use super::model::{Level, PacingSpec};
use super::rates;
use super::raw::{RateList, RateTerm, RawWorkload};
use crate::rand::pacing::{Arrival, ThinkTime};

impl Loader<'_> {
    /// The pacing of workload `w` (its field path is `field`) run at the
    /// client counts `clients`.
    pub(super) fn pacing(&self, w: &RawWorkload, field: &str, clients: &[u32]) -> R<PacingSpec> {
        let f = |key: &str| format!("{field}.{key}");
        let mut spec = PacingSpec::default();
        if let Some(a) = &w.arrival {
            spec.arrival =
                Arrival::parse(a.get_ref()).map_err(|m| self.src.at(a, &f("arrival"), m))?;
        }
        spec.latency_limit = w.latency_limit.as_ref().map(|d| d.get_ref().0);
        if let Some(l) = &w.latency_limit {
            if l.get_ref().0.is_zero() {
                return Err(self.src.at(
                    l,
                    &f("latency_limit"),
                    "a latency limit of 0: give a duration such as \"10ms\"",
                ));
            }
        }
        if let Some(g) = &w.p99_goal {
            if g.get_ref().0.is_zero() {
                return Err(self.src.at(
                    g,
                    &f("p99_goal"),
                    "a p99 goal of 0: give a duration such as \"10ms\"",
                ));
            }
            spec.p99_goal = Some(g.get_ref().0);
        }
        if let Some(t) = &w.think_time {
            spec.think_time = Some(
                ThinkTime::parse(t.get_ref()).map_err(|m| self.src.at(t, &f("think_time"), m))?,
            );
        }
        if let Some(r) = &w.ramp_up {
            let v = *r.get_ref();
            if !(v > 0.0 && v.is_finite()) {
                return Err(self.src.at(
                    r,
                    &f("ramp_up"),
                    format!("ramp_up {v}: give a positive number of users started per second"),
                ));
            }
            if w.rates.is_some() {
                return Err(self.src.at(r, &f("ramp_up"), "ramp_up starts users one after another; with rates arrivals come from the schedule: give one of them"));
            }
            spec.ramp_up = Some(v);
        }
        match (&w.rates, &w.users) {
            (Some(r), Some(_)) => {
                return Err(self.src.at(r, &f("rates"), "rates and users are two load axes: an open loop at a rate, or users with think time; give one of them"))
            }
            (Some(r), None) => {
                if let Some(t) = &w.think_time {
                    return Err(self.src.at(t, &f("think_time"), "think time paces a closed loop and rates an open one: give one of them"));
                }
                if let Some(precision) = self.search(r, &f("rates"))? {
                    if w.p99_goal.is_none() {
                        return Err(self.src.at(r, &f("rates"), "rates = \"find\" looks for the highest rate that holds the p99 goal: give p99_goal too (e.g. p99_goal = \"10ms\")"));
                    }
                    spec.search = Some(precision);
                    let probes = crate::stats::bisect::most_probes(precision);
                    spec.levels = (1..=probes).map(Level::Probe).collect();
                } else {
                    spec.levels = self.rates(r, &f("rates"))?;
                }
            }
            (None, Some(u)) => {
                let users = self.clients(u, &f("users"))?;
                let most = clients.iter().max().copied().unwrap_or(0);
                if let Some(&u0) = users.first().filter(|&&u0| u0 < most) {
                    return Err(self.src.at(u, &f("users"), format!("{u0} users are fewer than {most} clients: each connection serves at least one user (lower clients)")));
                }
                spec.levels = users.into_iter().map(Level::Users).collect();
            }
            (None, None) => {}
        }
        if spec.p99_goal.is_some() && spec.levels.is_empty() {
            let g = w.p99_goal.as_ref().unwrap();
            return Err(self.src.at(
                g,
                &f("p99_goal"),
                "a p99 goal judges offered rates: give rates (or users) too",
            ));
        }
        Ok(spec)
    }

    /// `rates = "find"` (or `"find within P%"`): its precision, %; None
    /// for a list of rates. A search is the whole list.
    fn search(&self, r: &Spanned<RateList>, field: &str) -> R<Option<f64>> {
        let terms = &r.get_ref().0;
        let searches = terms.iter().filter_map(|(span, t)| match t {
            RateTerm::Expr(e) => rates::search(e).map(|s| (span, s)),
            RateTerm::Number(_) => None,
        });
        let mut found = None;
        for (span, s) in searches {
            let at = span.clone().unwrap_or(r.span());
            if terms.len() > 1 {
                return Err(self.src.error(
                    Some(at),
                    field,
                    "a search (\"find\") is the whole load axis: give it alone, or a list of rates",
                ));
            }
            found = Some(s.map_err(|m| self.src.error(Some(at), field, m))?);
        }
        Ok(found)
    }

    /// A rate list: numbers and expressions, merged, sorted, distinct.
    fn rates(&self, r: &Spanned<RateList>, field: &str) -> R<Vec<Level>> {
        let mut out = Vec::new();
        for (i, (span, term)) in r.get_ref().0.iter().enumerate() {
            let at = span.clone().unwrap_or(r.span());
            let f = if span.is_some() {
                format!("{field}[{i}]")
            } else {
                field.to_string()
            };
            let levels = match term {
                RateTerm::Number(v) => rates::rate(*v).map(|l| vec![l]),
                RateTerm::Expr(e) => rates::parse(e),
            };
            out.extend(levels.map_err(|m| self.src.error(Some(at), &f, m))?);
        }
        rates::normalize(out).map_err(|m| self.src.at(r, field, m))
    }
}
