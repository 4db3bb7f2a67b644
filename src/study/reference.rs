//! Validation of what a study reproduces — its `[[reference]]`,
//! `[[conclusion]]` and `[[deviation]]` tables — into one typed
//! [`ReproSpec`]: published figures read from CSV beside the study file
//! (parsed once, here), the mapping of the study's series onto the
//! published ones, the publication's conclusions with its own words and
//! where they are, each problem located in the study file or the CSV file.
//!
//! ```toml
//! [[reference]]
//! file = "seed002-published.csv"   # next to the study file
//! label = "seed 002 (2005)"
//! metric = "tps"
//! map = { "mariadb/base" = "MySQL 5.0.7, InnoDB" }
//! cpus = { "0" = "1CPU", "0-1" = "2CPU HT" }
//!
//! [[conclusion]]
//! text = "InnoDB shows the best result"
//! quote = "MySQL 5.0.7 / InnoDB shows the best result"   # the seed's words
//! source = "002_627061879cd10a86.txt:24"                  # where they are
//! check = 'rank("MySQL 5.0.7, InnoDB", workload="special") == 1'
//!
//! [[conclusion]]                      # what cannot be checked here
//! text = "Oracle scales best"
//! quote = "…"
//! source = "…"
//! measurable = false
//! reason = "Oracle cannot run here"
//!
//! [[deviation]]
//! what = "CPUs"
//! seed = "4 × Xeon 2 GHz with hyper-threading"
//! ours = "2 vCPUs"
//! why = "this machine"
//! ```
//!
//! A conclusion without `quote` is the study's own observation: reports
//! show it apart from the publication's. A quoted statement compares only
//! with numbers its quote says (or none), so no threshold is chosen after
//! the numbers are known.

use super::design::SweepSpec;
use super::load::{Loader, R};
use super::locate::Source;
use super::model::{ReferenceFile, TargetSpec, VariantSpec};
use super::raw::{RawConclusion, RawDeviation, RawReference, RawStudy};
use super::repro::expr as statement;
use super::repro::published::{self as reference, METRICS};
use super::repro::{self as spec, ConclusionSpec, Deviation, RefSpec, ReproSpec};
use super::variants::DEFAULT_SWEEP_BASELINE;
use crate::UsageError;

/// The study's targets and variants, to check `map` keys and the series a
/// reference-less statement names against.
pub(super) type Series<'a> = (&'a [TargetSpec], &'a [VariantSpec]);

/// Reads a reference file by the name the study gives it.
pub(super) type Read<'a> = &'a dyn Fn(&str) -> Result<String, String>;

impl Loader<'_> {
    /// What the study reproduces, checked, and the reference files as read
    /// (stored with the study, so reports render where the files are not).
    pub(super) fn reproduction(
        &self,
        raw: &RawStudy,
        series: Option<Series<'_>>,
        read: Read<'_>,
    ) -> R<(ReproSpec, Vec<ReferenceFile>)> {
        let mut spec = ReproSpec::default();
        let mut files = Vec::new();
        for (i, r) in raw.references.iter().enumerate() {
            let (rs, text) = self.reference(i, r, series, read)?;
            if let Some(text) = text {
                files.push(ReferenceFile {
                    file: rs.file.clone(),
                    text,
                });
            }
            spec.references.push(rs);
        }
        for (i, c) in raw.conclusions.iter().enumerate() {
            let c = self.conclusion(i, c, &spec.references, series)?;
            spec.conclusions.push(c);
        }
        for (i, d) in raw.deviations.iter().enumerate() {
            let f = |k: &str| format!("deviation[{i}].{k}");
            let d: &RawDeviation = d.get_ref();
            for (k, v) in [
                ("what", &d.what),
                ("seed", &d.seed),
                ("ours", &d.ours),
                ("why", &d.why),
            ] {
                if v.get_ref().trim().is_empty() {
                    return Err(self.src.at(
                        v,
                        &f(k),
                        "empty: a deviation says what differs, what the publication ran, what this study runs, and why",
                    ));
                }
            }
            spec.deviations.push(Deviation {
                what: d.what.get_ref().trim().to_string(),
                seed: d.seed.get_ref().trim().to_string(),
                ours: d.ours.get_ref().trim().to_string(),
                why: d.why.get_ref().trim().to_string(),
            });
        }
        Ok((spec, files))
    }

    fn reference(
        &self,
        i: usize,
        whole: &toml::Spanned<RawReference>,
        series: Option<Series<'_>>,
        read: Read<'_>,
    ) -> R<(RefSpec, Option<String>)> {
        let f = |k: &str| format!("reference[{i}].{k}");
        let r = whole.get_ref();
        if r.label.as_deref().is_some_and(|l| l.trim().is_empty()) {
            return Err(self.src.at(
                whole,
                &f("label"),
                "an empty label: name the source, or leave label out",
            ));
        }
        // Without a file: a publication that printed no numbers, whose
        // series the study's still stand for (its conclusions are checked
        // on ours only).
        let (name, text, data) = match &r.file {
            Some(file) => {
                let name = file.get_ref().clone();
                let text = read(&name).map_err(|e| self.src.at(file, &f("file"), e))?;
                let data = reference::parse(&name, &text).map_err(UsageError)?;
                (name, Some(text), data)
            }
            None => {
                if r.map.as_ref().is_none_or(|m| m.get_ref().0.is_empty()) {
                    return Err(self.src.at(
                        whole,
                        &f("file"),
                        "no file and no map: give the CSV file of published figures, or (for a publication without numbers) the map of this study's series onto its names",
                    ));
                }
                (String::new(), None, Default::default())
            }
        };
        let numbers = text.is_some();
        let known: Vec<&str> = data.series();
        let metric = match &r.metric {
            None => "tps".to_string(),
            Some(m) if !numbers => m.get_ref().clone(),
            Some(m) => {
                let v = m.get_ref();
                if !METRICS.contains(&v.as_str()) {
                    return Err(self.src.at(
                        m,
                        &f("metric"),
                        format!(
                            "unknown metric '{v}': expected one of {}",
                            METRICS.join(", ")
                        ),
                    ));
                }
                if !data.metrics().contains(v.as_str()) {
                    return Err(self.src.at(
                        m,
                        &f("metric"),
                        format!(
                            "{name} has no '{v}' values (it has {}): give one of those",
                            data.metrics().into_iter().collect::<Vec<_>>().join(", ")
                        ),
                    ));
                }
                v.clone()
            }
        };
        let mut map = Vec::new();
        if let Some(m) = &r.map {
            for (ours, theirs) in &m.get_ref().0 {
                let o = ours.get_ref();
                if let Some(s) = series {
                    self.our_series(o, s)
                        .map_err(|e| self.src.at(ours, &f("map"), format!("'{o}': {e}")))?;
                }
                if numbers && !known.contains(&theirs.get_ref().as_str()) {
                    return Err(self.src.at(
                        theirs,
                        &f("map"),
                        format!(
                            "'{}' is not a series of {name} (its series: {})",
                            theirs.get_ref(),
                            known.join(", ")
                        ),
                    ));
                }
                map.push((o.clone(), theirs.get_ref().clone()));
            }
        }
        let mut cpus = Vec::new();
        if let Some(c) = &r.cpus {
            let theirs = data.cpus();
            for (ours, t) in &c.get_ref().0 {
                if numbers && !theirs.contains(&t.get_ref().as_str()) {
                    return Err(self.src.at(
                        t,
                        &f("cpus"),
                        format!(
                            "'{}' is not a CPU configuration of {name} (it has: {})",
                            t.get_ref(),
                            theirs.join(", ")
                        ),
                    ));
                }
                cpus.push((ours.get_ref().clone(), t.get_ref().clone()));
            }
        }
        Ok((
            RefSpec {
                file: name,
                label: r.label.clone(),
                metric,
                map,
                cpus,
                data,
            },
            text,
        ))
    }

    /// `target/variant` (or `target`, its base) names a series of the study.
    fn our_series(&self, o: &str, (targets, variants): Series<'_>) -> Result<(), String> {
        let (t, v) = o.split_once('/').unwrap_or((o, "base"));
        let ti = targets.iter().position(|x| x.name == t).ok_or_else(|| {
            let names: Vec<&str> = targets.iter().map(|x| x.name.as_str()).collect();
            format!("no target '{t}' (targets: {})", names.join(", "))
        })?;
        if !variants.iter().any(|x| x.target == ti && x.name == v) {
            return Err(format!("target '{t}' has no variant '{v}'"));
        }
        Ok(())
    }

    fn conclusion(
        &self,
        i: usize,
        c: &toml::Spanned<RawConclusion>,
        refs: &[RefSpec],
        series: Option<Series<'_>>,
    ) -> R<ConclusionSpec> {
        let at = |k: &str, msg: String| self.src.at(c, &format!("conclusion[{i}].{k}"), msg);
        let c = c.get_ref();
        if c.text.trim().is_empty() {
            return Err(at("text", "give the conclusion's wording".into()));
        }
        let quote = c.quote.as_ref().map(|q| q.get_ref().trim().to_string());
        let source = match (&quote, &c.source) {
            (Some(q), _) if q.is_empty() => {
                return Err(at(
                    "quote",
                    "an empty quote: give the publication's sentence, or leave quote out for an observation of ours".into(),
                ))
            }
            (Some(_), None) => {
                return Err(at(
                    "source",
                    "a quote needs its source: the publication's file and line, e.g. source = \"002_seed.txt:24\"".into(),
                ))
            }
            (None, Some(s)) => {
                return Err(self.src.at(
                    s,
                    &format!("conclusion[{i}].source"),
                    "a source without a quote: give the sentence it points to as quote",
                ))
            }
            (Some(_), Some(s)) => {
                let v = s.get_ref();
                let ok = v
                    .rsplit_once(':')
                    .is_some_and(|(f, l)| !f.is_empty() && l.parse::<u32>().is_ok_and(|l| l > 0));
                if !ok {
                    return Err(self.src.at(
                        s,
                        &format!("conclusion[{i}].source"),
                        format!("'{v}': give FILE:LINE, e.g. \"002_seed.txt:24\""),
                    ));
                }
                Some(v.clone())
            }
            (None, None) => None,
        };
        let reason = c.reason.as_ref().map(|r| r.get_ref().trim().to_string());
        let (check, unmeasurable) = match (&c.check, c.measurable.as_ref().map(|m| *m.get_ref())) {
            (Some(_), Some(false)) => {
                return Err(at(
                    "measurable",
                    "measurable = false with a check: give one or the other".into(),
                ))
            }
            (_, Some(true)) => {
                return Err(at(
                    "measurable",
                    "measurable = true is the default: leave it out and give check".into(),
                ))
            }
            (None, None) => {
                return Err(at(
                    "check",
                    "no check: give the statement that checks it, or measurable = false with the reason".into(),
                ))
            }
            (None, Some(false)) => match &reason {
                Some(r) if !r.is_empty() => (None, reason.clone()),
                _ => {
                    return Err(at(
                        "reason",
                        "measurable = false needs its reason: another OS, a product that cannot run here, …".into(),
                    ))
                }
            },
            (Some(check), None) => {
                if reason.is_some() {
                    return Err(at(
                        "reason",
                        "a reason is for measurable = false: leave it out".into(),
                    ));
                }
                self.statement(i, check, quote.as_deref(), refs, series)?;
                (Some(check.get_ref().clone()), None)
            }
        };
        Ok(ConclusionSpec {
            text: c.text.trim().to_string(),
            quote,
            source,
            check,
            unmeasurable,
        })
    }

    /// A statement parses, names series there are, and — when it is the
    /// publication's — compares with its numbers only.
    fn statement(
        &self,
        i: usize,
        check: &toml::Spanned<String>,
        quote: Option<&str>,
        refs: &[RefSpec],
        series: Option<Series<'_>>,
    ) -> R<()> {
        let field = format!("conclusion[{i}].check");
        // The statement's position: after the string's opening quote.
        let open = self.src.text[check.span()]
            .chars()
            .next()
            .map_or(1, char::len_utf8);
        let st = statement::parse(check.get_ref()).map_err(|(offset, msg)| {
            let start = check.span().start + open + offset;
            self.src.error(Some(start..start + 1), &field, msg)
        })?;
        for s in st.series() {
            let known = match refs.first() {
                Some(r) => {
                    r.data.series().contains(&s.as_str()) || r.map.iter().any(|(_, t)| *t == s)
                }
                None => match series {
                    Some(ss) => self.our_series(&s, ss).is_ok(),
                    None => true,
                },
            };
            if !known {
                let names = match refs.first() {
                    Some(r) if r.file.is_empty() => format!(
                        "the series the reference maps: {}",
                        r.map.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                    Some(r) => format!("the series of {}: {}", r.file, r.data.series().join(", ")),
                    None => "without a [[reference]], statements name the study's series as target/variant".into(),
                };
                return Err(self
                    .src
                    .at(check, &field, format!("no series '{s}' ({names})")));
            }
        }
        if let Some(q) = quote {
            let foreign = spec::foreign_numbers(&st, q);
            if let Some(n) = foreign.first() {
                return Err(self.src.at(
                    check,
                    &field,
                    format!(
                        "{n} is not a number of the publication's words: compare without a number (<, >, ~), or with one the quote says"
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The `[sweep.parameter]` of a study stored before dbsweep kept it in
/// the design: read from the stored study file with the loader's default
/// baseline (its other checks passed when the study ran). None where the
/// file has none, or no longer reads.
pub fn stored_sweep(file_text: &str) -> Option<SweepSpec> {
    let raw: RawStudy = toml::from_str(file_text).ok()?;
    let p = raw.sweep.parameter?.into_inner();
    Some(SweepSpec {
        baseline: p
            .baseline
            .map_or(DEFAULT_SWEEP_BASELINE.to_string(), |b| b.into_inner()),
        clients: p.clients.into_inner(),
    })
}

/// The reproduction of a study stored before dbsweep kept it: read from
/// the stored study file and its stored reference files with the same
/// checks (but the targets', which describe the machine it ran on).
pub fn stored_reproduction(
    file_text: &str,
    references: &[(String, String)],
) -> Result<ReproSpec, UsageError> {
    let path = std::path::Path::new("(stored study file)");
    let src = Source {
        path,
        text: file_text,
    };
    let raw: RawStudy = toml::from_str(file_text).map_err(|e| src.toml_error(&e))?;
    let read = |name: &str| -> Result<String, String> {
        references
            .iter()
            .find(|(f, _)| f == name)
            .map(|(_, t)| t.clone())
            .ok_or_else(|| {
                format!(
                    "the results database does not hold {name}: give it with --reference {name}"
                )
            })
    };
    let loader = Loader {
        src: &src,
        cpus: Vec::new(),
    };
    Ok(loader.reproduction(&raw, None, &read)?.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_files_sweep_with_the_loaders_default_baseline() {
        let file = "name = \"s\"\n[sweep.parameter]\nclients = 16\nvalues = { x = [1] }\n";
        let s = stored_sweep(file).unwrap();
        assert_eq!((s.baseline.as_str(), s.clients), ("base", 16));
        let named = file.replace("clients = 16", "clients = 8\nbaseline = \"b\"");
        let s = stored_sweep(&named).unwrap();
        assert_eq!((s.baseline.as_str(), s.clients), ("b", 8));
        assert!(stored_sweep("name = \"x\"\n").is_none());
    }
}
