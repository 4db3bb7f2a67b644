//! Validation of `[[variant]]`s and the `[sweep.parameter]` that generates
//! more of them.

use toml::Spanned;

use super::load::{Declared, Loader, R};
use super::locate::suggest;
use super::model::*;
use super::raw::*;
use crate::server::{merge_settings, setting_key};

impl Loader<'_> {
    /// The declared `[[variant]]`s, in file order.
    pub(super) fn declared_variants(
        &self,
        raw: &RawStudy,
        targets: &[TargetSpec],
    ) -> R<Vec<Declared>> {
        let managed: Vec<usize> = (0..targets.len())
            .filter(|&t| targets[t].managed().is_some())
            .collect();
        let mut out: Vec<Declared> = Vec::new();
        for (i, sv) in raw.variants.iter().enumerate() {
            let v = sv.get_ref();
            let field = format!("variant[{i}]");
            let name = v.name.get_ref();
            check_variant_name(name)
                .map_err(|m| self.src.at(&v.name, &format!("{field}.name"), m))?;
            if name == "base" {
                return Err(self.src.at(&v.name, &format!("{field}.name"), "'base' is reserved for each target's own settings, which always run; put base settings in the target's settings, or name this variant differently"));
            }
            if let Some(j) = out.iter().position(|(n, _, _)| n == name) {
                return Err(self.src.at(
                    &v.name,
                    &format!("{field}.name"),
                    format!("the name '{name}' is already used by variant[{j}]"),
                ));
            }
            let applies = match &v.targets {
                None => managed.clone(),
                Some(list) => self.target_refs(
                    list,
                    targets,
                    &format!("{field}.targets"),
                    "variants change a managed server's settings",
                )?,
            };
            if applies.is_empty() {
                return Err(self.src.at(sv, &field, "this variant applies to no target: variants change a managed server's settings, and the study has no [[target]] with server = \"mariadb\" or \"postgres\""));
            }
            let overrides = self.settings(&v.settings, &format!("{field}.settings"), None)?;
            for &t in &applies {
                let kind = targets[t].managed().map(|m| m.kind);
                for (k, val) in &v.settings.0 {
                    self.setting(
                        k,
                        val.get_ref().0.as_str(),
                        val.span(),
                        &format!("{field}.settings"),
                        kind,
                    )?;
                }
            }
            out.push((name.clone(), overrides, applies));
        }
        Ok(out)
    }

    /// Resolves target names to indexes; each must be a managed target.
    pub(super) fn target_refs(
        &self,
        list: &Spanned<Vec<Spanned<String>>>,
        targets: &[TargetSpec],
        field: &str,
        why: &str,
    ) -> R<Vec<usize>> {
        if list.get_ref().is_empty() {
            return Err(self.src.at(list, field, "an empty list: name at least one target, or leave targets out for every managed target"));
        }
        let mut out = Vec::new();
        for (i, n) in list.get_ref().iter().enumerate() {
            let f = format!("{field}[{i}]");
            let Some(t) = targets.iter().position(|t| &t.name == n.get_ref()) else {
                let names: Vec<&str> = targets.iter().map(|t| t.name.as_str()).collect();
                let hint = suggest(n.get_ref(), &names, "the targets are");
                return Err(self
                    .src
                    .at(n, &f, format!("unknown target '{}'{hint}", n.get_ref())));
            };
            if targets[t].managed().is_none() {
                return Err(self.src.at(
                    n,
                    &f,
                    format!("target '{}' is not a managed server: {why}", n.get_ref()),
                ));
            }
            if out.contains(&t) {
                return Err(self
                    .src
                    .at(n, &f, format!("target '{}' is named twice", n.get_ref())));
            }
            out.push(t);
        }
        Ok(out)
    }

    /// Validates `[sweep.parameter]` and appends its generated variants.
    pub(super) fn parameter_sweep(
        &self,
        sp: &Spanned<RawParameterSweep>,
        targets: &[TargetSpec],
        variants: &mut Vec<VariantSpec>,
    ) -> R<ParameterSweep> {
        let p = sp.get_ref();
        let field = "sweep.parameter";
        let clients = *p.clients.get_ref();
        if clients == 0 {
            return Err(self.src.at(
                &p.clients,
                &format!("{field}.clients"),
                "a client count of 0: every point needs at least 1 client",
            ));
        }
        let baseline = p
            .baseline
            .as_ref()
            .map_or(DEFAULT_SWEEP_BASELINE, |b| b.get_ref().as_str())
            .to_string();
        let has_baseline = |t: usize| variants.iter().any(|v| v.target == t && v.name == baseline);
        let swept = match &p.targets {
            Some(list) => {
                let ts = self.target_refs(
                    list,
                    targets,
                    &format!("{field}.targets"),
                    "a parameter sweep changes a managed server's settings",
                )?;
                if let Some(&t) = ts.iter().find(|&&t| !has_baseline(t)) {
                    let at = p.baseline.as_ref().map_or(list.span(), |b| b.span());
                    return Err(self.src.error(
                        Some(at),
                        &format!("{field}.baseline"),
                        format!("target '{}' has no variant '{baseline}'", targets[t].name),
                    ));
                }
                ts
            }
            None => (0..targets.len())
                .filter(|&t| targets[t].managed().is_some() && has_baseline(t))
                .collect(),
        };
        if swept.is_empty() {
            let msg = if targets.iter().any(|t| t.managed().is_some()) {
                let mut names: Vec<&str> = variants
                    .iter()
                    .filter(|v| targets[v.target].managed().is_some())
                    .map(|v| v.name.as_str())
                    .collect();
                names.sort_unstable();
                names.dedup();
                let hint = suggest(&baseline, &names, "the variants are");
                format!("no managed target has the baseline variant '{baseline}'{hint}")
            } else {
                "a parameter sweep changes a managed server's settings, and the study has no [[target]] with server = \"mariadb\" or \"postgres\"".to_string()
            };
            let at = p.baseline.as_ref().map_or(sp.span(), |b| b.span());
            return Err(self.src.error(Some(at), &format!("{field}.baseline"), msg));
        }
        let vfield = format!("{field}.values");
        if p.values.get_ref().0.is_empty() {
            return Err(self.src.at(
                &p.values,
                &vfield,
                "no setting to vary: give e.g. values = { innodb_io_capacity = [200, 1000] }",
            ));
        }
        let mut values = Vec::new();
        for (k, list) in &p.values.get_ref().0 {
            let f = format!("{vfield}.{}", k.get_ref());
            if list.get_ref().is_empty() {
                return Err(self
                    .src
                    .at(list, &f, "an empty list: give the values to try"));
            }
            let mut vals = Vec::new();
            for (i, v) in list.get_ref().iter().enumerate() {
                for &t in &swept {
                    self.setting(
                        k,
                        &v.get_ref().0,
                        v.span(),
                        &f,
                        targets[t].managed().map(|m| m.kind),
                    )?;
                }
                let vname = format!("{}={}", k.get_ref(), v.get_ref().0);
                for &t in &swept {
                    if variants.iter().any(|x| x.target == t && x.name == vname) {
                        return Err(self.src.at(
                            v,
                            &format!("{f}[{i}]"),
                            format!(
                                "variant '{vname}' would exist twice on target '{}'",
                                targets[t].name
                            ),
                        ));
                    }
                    let base = variants
                        .iter()
                        .find(|x| x.target == t && x.name == baseline)
                        .expect("checked above")
                        .clone();
                    let overrides = vec![(k.get_ref().clone(), v.get_ref().0.clone())];
                    // What it changes from the target's settings: the
                    // baseline's overrides, this one setting replaced.
                    let kind = targets[t].managed().map(|m| m.kind);
                    let mut all = base.overrides.clone();
                    all.retain(|(n, _)| setting_key(kind, n) != setting_key(kind, k.get_ref()));
                    all.extend(overrides.iter().cloned());
                    variants.push(VariantSpec {
                        name: vname.clone(),
                        target: t,
                        settings: merge_settings(
                            targets[t].managed().map(|m| m.kind),
                            &base.settings,
                            &overrides,
                        ),
                        overrides: all,
                        origin: VariantOrigin::Sweep {
                            setting: k.get_ref().clone(),
                            value: v.get_ref().0.clone(),
                        },
                    });
                }
                vals.push(v.get_ref().0.clone());
            }
            values.push((k.get_ref().clone(), vals));
        }
        Ok(ParameterSweep {
            clients,
            baseline,
            targets: swept,
            values,
        })
    }
}

/// The variant a `[sweep.parameter]` changes one setting of, unless it
/// names another.
pub(super) const DEFAULT_SWEEP_BASELINE: &str = "base";

/// Variant names appear in point keys and reports: any printable text.
pub(super) fn check_variant_name(s: &str) -> Result<(), String> {
    if s.trim().is_empty() || s.chars().any(char::is_control) {
        Err(format!(
            "bad variant name '{s}': use printable text, e.g. \"bp8\""
        ))
    } else {
        Ok(())
    }
}
