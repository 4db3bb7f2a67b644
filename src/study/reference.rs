//! Validation of a study's `[[reference]]` and `[[conclusion]]` tables:
//! published figures read from CSV beside the study file, the mapping of
//! the study's series onto the published ones, and the publication's
//! conclusions as statements (`report::study::statement`), each problem
//! located in the study file or the CSV file.
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
//! text = "MySQL 5.0 / InnoDB shows the best result"
//! check = 'rank("MySQL 5.0.7, InnoDB", workload="special") == 1'
//! ```

use super::load::{Loader, R};
use super::model::{ReferenceFile, TargetSpec, VariantSpec};
use super::raw::{RawConclusion, RawReference, RawStudy};
use crate::report::study::reference::{self, METRICS};
use crate::report::study::statement;

impl Loader<'_> {
    /// The study's reference files, checked with their mappings and the
    /// conclusions' statements.
    pub(super) fn references(
        &self,
        raw: &RawStudy,
        targets: &[TargetSpec],
        variants: &[VariantSpec],
    ) -> R<Vec<ReferenceFile>> {
        let mut out = Vec::new();
        for (i, r) in raw.references.iter().enumerate() {
            let f = |k: &str| format!("reference[{i}].{k}");
            let r: &RawReference = r.get_ref();
            if r.label.as_deref().is_some_and(|l| l.trim().is_empty()) {
                return Err(self.src.at(
                    &r.file,
                    &f("label"),
                    "an empty label: name the source, or leave label out",
                ));
            }
            let name = r.file.get_ref();
            let dir = self.src.path.parent().unwrap_or(std::path::Path::new("."));
            let path = dir.join(name);
            let text = std::fs::read_to_string(&path).map_err(|e| {
                self.src.at(
                    &r.file,
                    &f("file"),
                    format!(
                        "cannot read {}: {e} (the path is relative to the study file)",
                        path.display()
                    ),
                )
            })?;
            let data =
                reference::parse(&path.display().to_string(), &text).map_err(crate::UsageError)?;
            let known: Vec<&str> = data.series();
            if let Some(m) = &r.metric {
                let m = m.get_ref();
                if !METRICS.contains(&m.as_str()) {
                    return Err(self.src.at(
                        r.metric.as_ref().unwrap(),
                        &f("metric"),
                        format!(
                            "unknown metric '{m}': expected one of {}",
                            METRICS.join(", ")
                        ),
                    ));
                }
                if !data.metrics().contains(m.as_str()) {
                    return Err(self.src.at(
                        r.metric.as_ref().unwrap(),
                        &f("metric"),
                        format!(
                            "{} has no '{m}' values (it has {}): give one of those",
                            path.display(),
                            data.metrics().into_iter().collect::<Vec<_>>().join(", ")
                        ),
                    ));
                }
            }
            if let Some(map) = &r.map {
                for (ours, theirs) in &map.get_ref().0 {
                    let o = ours.get_ref();
                    let (t, v) = o.split_once('/').unwrap_or((o.as_str(), "base"));
                    let ti = targets.iter().position(|x| x.name == t).ok_or_else(|| {
                        let names: Vec<&str> = targets.iter().map(|x| x.name.as_str()).collect();
                        self.src.at(
                            ours,
                            &f("map"),
                            format!("'{o}': no target '{t}' (targets: {})", names.join(", ")),
                        )
                    })?;
                    if !variants.iter().any(|x| x.target == ti && x.name == v) {
                        return Err(self.src.at(
                            ours,
                            &f("map"),
                            format!("'{o}': target '{t}' has no variant '{v}'"),
                        ));
                    }
                    if !known.contains(&theirs.get_ref().as_str()) {
                        return Err(self.src.at(
                            theirs,
                            &f("map"),
                            format!(
                                "'{}' is not a series of {} (its series: {})",
                                theirs.get_ref(),
                                path.display(),
                                known.join(", ")
                            ),
                        ));
                    }
                }
            }
            if let Some(cpus) = &r.cpus {
                let theirs = data.cpus();
                for (_, c) in &cpus.get_ref().0 {
                    if !theirs.contains(&c.get_ref().as_str()) {
                        return Err(self.src.at(
                            c,
                            &f("cpus"),
                            format!(
                                "'{}' is not a CPU configuration of {} (it has: {})",
                                c.get_ref(),
                                path.display(),
                                theirs.join(", ")
                            ),
                        ));
                    }
                }
            }
            out.push(ReferenceFile {
                file: name.clone(),
                text,
            });
        }
        for (i, c) in raw.conclusions.iter().enumerate() {
            let c: &RawConclusion = c.get_ref();
            if c.text.trim().is_empty() {
                return Err(self.src.at(
                    &c.check,
                    &format!("conclusion[{i}].text"),
                    "give the publication's wording of the conclusion",
                ));
            }
            if out.is_empty() {
                return Err(self.src.at(
                    &c.check,
                    &format!("conclusion[{i}]"),
                    "a conclusion is checked against a [[reference]]: give one",
                ));
            }
            // The statement's position: after the string's opening quote.
            let quote = self.src.text[c.check.span()]
                .chars()
                .next()
                .map_or(1, char::len_utf8);
            let (offset, msg) = match statement::parse(c.check.get_ref()) {
                Ok(_) => continue,
                Err(e) => e,
            };
            let start = c.check.span().start + quote + offset;
            return Err(self.src.error(
                Some(start..start + 1),
                &format!("conclusion[{i}].check"),
                msg,
            ));
        }
        Ok(out)
    }
}
