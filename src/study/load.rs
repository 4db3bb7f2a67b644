//! Reading and validating a study file: TOML into the raw structs (syntax,
//! unknown keys, types), then meaning (defaults, references between
//! targets, variants and the sweep, the workload registry, the machine's
//! CPUs) into a [`Study`]. The first problem found is returned as a
//! [`UsageError`] naming `FILE:LINE:COL`, the field and what was expected,
//! before anything runs.
//!
//! The checks live with what they check: `targets.rs`, `variants.rs` (and
//! the parameter sweep), `workloads.rs`; each adds methods to [`Loader`].

use std::path::{Path, PathBuf};

use toml::Spanned;

use super::locate::Source;
use super::model::*;
use super::raw::*;
use super::stop::{ErrorRates, ALL_KINDS};
use crate::driver::ErrorKind;
use crate::server::merge_settings;
use crate::UsageError;

/// Reads, parses and validates the study file at `path`.
pub fn load(path: &Path) -> Result<Study, UsageError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| UsageError(format!("cannot read study file '{}': {e}", path.display())))?;
    load_str(&text, path)
}

/// Parses and validates study text; `path` names it in messages and gives
/// the default study name (its file stem).
pub fn load_str(text: &str, path: &Path) -> Result<Study, UsageError> {
    let src = Source { path, text };
    let raw: RawStudy = toml::from_str(text).map_err(|e| src.toml_error(&e))?;
    Loader {
        src: &src,
        cpus: machine_cpus(),
    }
    .study(raw)
}

/// CPUs this process may pin servers to: its affinity mask, else the
/// kernel's online list, else 0..N.
fn machine_cpus() -> Vec<usize> {
    crate::server::affinity(std::process::id())
        .ok()
        .or_else(|| {
            let online = std::fs::read_to_string("/sys/devices/system/cpu/online").ok()?;
            crate::server::parse_cpu_list(online.trim()).ok()
        })
        .unwrap_or_else(|| (0..crate::metrics::cpu::available_cpus()).collect())
}

/// A declared `[[variant]]`: name, overrides, and the targets it applies to.
pub(super) type Declared = (String, Vec<(String, String)>, Vec<usize>);

/// Validation state: the source for error positions, and the machine.
pub(super) struct Loader<'a> {
    pub src: &'a Source<'a>,
    /// CPUs that exist for `cpus` sets to name.
    pub cpus: Vec<usize>,
}

pub(super) type R<T> = Result<T, UsageError>;

impl Loader<'_> {
    /// The whole study: names and defaults, then targets, variants, the
    /// sweep, workloads and stop rules, in that order (later parts refer to
    /// earlier ones).
    pub(super) fn study(&self, raw: RawStudy) -> R<Study> {
        let name = match &raw.name {
            Some(n) => {
                check_file_name(n.get_ref()).map_err(|m| self.src.at(n, "name", m))?;
                n.get_ref().clone()
            }
            None => {
                let stem = self.src.path.file_stem().map(|s| s.to_string_lossy());
                let stem = stem.unwrap_or_default().to_string();
                check_file_name(&stem).map_err(|m| {
                    self.src.error(
                        None,
                        "name",
                        format!("the file name gives no usable study name ({m}): set name = \"…\""),
                    )
                })?;
                stem
            }
        };
        let out = raw.out.as_ref().map_or_else(
            || PathBuf::from("results").join(&name),
            |o| PathBuf::from(o.get_ref()),
        );
        let targets = self.targets(&raw, &out)?;
        let mut variants = Vec::new();
        let declared = self.declared_variants(&raw, &targets)?;
        for (t, target) in targets.iter().enumerate() {
            let base = target
                .managed()
                .map(|m| m.settings.clone())
                .unwrap_or_default();
            variants.push(VariantSpec {
                name: "base".into(),
                target: t,
                overrides: Vec::new(),
                settings: base.clone(),
                origin: VariantOrigin::Base,
            });
            for (i, (vname, overrides, applies)) in declared.iter().enumerate() {
                if applies.contains(&t) {
                    variants.push(VariantSpec {
                        name: vname.clone(),
                        target: t,
                        overrides: overrides.clone(),
                        settings: merge_settings(
                            target.managed().map(|m| m.kind),
                            &base,
                            overrides,
                        ),
                        origin: VariantOrigin::Declared(i),
                    });
                }
            }
        }
        let sweep = match &raw.sweep.parameter {
            Some(p) => Some(self.parameter_sweep(p, &targets, &mut variants)?),
            None => None,
        };
        // Regroup so each target's variants are contiguous, in the order
        // base, declared, generated: the plan walks them in this order.
        variants.sort_by_key(|v| v.target);
        let workloads = self.workloads(&raw, &targets, sweep.is_some())?;
        let dir = self.src.path.parent().unwrap_or(Path::new("."));
        let read = |name: &str| -> Result<String, String> {
            let path = dir.join(name);
            std::fs::read_to_string(&path).map_err(|e| {
                format!(
                    "cannot read {}: {e} (the path is relative to the study file)",
                    path.display()
                )
            })
        };
        let (reproduction, references) =
            self.reproduction(&raw, Some((&targets, &variants)), &read)?;
        let design = self.design(&raw, &name, &targets, &variants)?;
        let study = Study {
            source: self.src.path.to_path_buf(),
            name,
            description: raw.description.trim().to_string(),
            out,
            targets,
            variants,
            workloads,
            restart: raw.restart.unwrap_or_default(),
            metrics: self.metrics(&raw)?,
            prometheus: self.prometheus(&raw)?,
            profile: raw.profile.unwrap_or(false),
            stop: self.stop(&raw.stop)?,
            sweep,
            references,
            reproduction,
            design,
        };
        self.check_nodes(&raw, &study)?;
        let profiled = (study.workloads.iter()).any(|w| w.profile.unwrap_or(study.profile));
        if profiled && study.metrics.is_none() {
            return Err(self.src.error(
                None,
                "profile",
                "profiles are taken beside the metrics, and metrics = false: drop metrics = false, or profile",
            ));
        }
        Ok(study)
    }

    /// `metrics` and `metrics_interval`: sampling on by default, every
    /// second; an interval of 0 is refused.
    pub(super) fn metrics(&self, raw: &RawStudy) -> R<Option<std::time::Duration>> {
        let interval = match &raw.metrics_interval {
            Some(i) if i.get_ref().0.is_zero() => {
                return Err(self.src.at(
                    i,
                    "metrics_interval",
                    "an interval of 0: give a duration such as \"1s\", or metrics = false to sample nothing",
                ))
            }
            Some(i) => i.get_ref().0,
            None => std::time::Duration::from_secs(1),
        };
        Ok(raw.metrics.unwrap_or(true).then_some(interval))
    }

    /// `prometheus = "HOST:PORT"`: where the points are served live.
    pub(super) fn prometheus(&self, raw: &RawStudy) -> R<Option<std::net::SocketAddr>> {
        raw.prometheus
            .as_ref()
            .map(|p| {
                crate::util::http::parse_listen(p.get_ref())
                    .map_err(|why| self.src.at(p, "prometheus", why))
            })
            .transpose()
    }

    /// `[stop]`: fractions in range, a non-zero timeout.
    pub(super) fn stop(&self, s: &RawStop) -> R<StopRules> {
        if let Some(b) = &s.below_peak {
            if !(*b.get_ref() > 0.0 && *b.get_ref() < 1.0) {
                return Err(self.src.at(
                    b,
                    "stop.below_peak",
                    "expected a fraction of the peak between 0 and 1, e.g. 0.2",
                ));
            }
        }
        if let Some(m) = &s.max_failed_rate {
            if !(0.0..=1.0).contains(m.get_ref()) {
                return Err(self.src.at(
                    m,
                    "stop.max_failed_rate",
                    "expected a fraction of transactions between 0 and 1, e.g. 0.05",
                ));
            }
        }
        if let Some(t) = &s.point_timeout {
            if t.get_ref().0.is_zero() {
                return Err(self.src.at(
                    t,
                    "stop.point_timeout",
                    "a timeout of 0: give a duration such as \"10m\", or leave it out",
                ));
            }
        }
        Ok(StopRules {
            below_peak: s.below_peak.as_ref().map(|b| *b.get_ref()),
            max_failed_rate: s.max_failed_rate.as_ref().map(|m| *m.get_ref()),
            max_error_rate: match &s.max_error_rate {
                Some(t) => self.error_rates(t)?,
                None => Default::default(),
            },
            point_timeout: s.point_timeout.as_ref().map(|t| t.get_ref().0),
        })
    }
}

impl Loader<'_> {
    /// `[stop] max_error_rate`: a table of error kind (or `all`) = limit
    /// per transaction, each a number ≥ 0.
    pub(super) fn error_rates(&self, t: &Spanned<Ordered<f64>>) -> R<ErrorRates> {
        let field = "stop.max_error_rate";
        let mut out = ErrorRates::default();
        if t.get_ref().0.is_empty() {
            return Err(self.src.at(
                t,
                field,
                "an empty table: give limits per error kind, e.g. { deadlock = 0.01 }",
            ));
        }
        for (k, v) in &t.get_ref().0 {
            let name = k.get_ref();
            let limit = *v.get_ref();
            if !(limit.is_finite() && limit >= 0.0) {
                return Err(self.src.at(
                    v,
                    &format!("{field}.{name}"),
                    "expected errors per transaction: a number ≥ 0, e.g. 0.01",
                ));
            }
            let slot = if name == ALL_KINDS {
                &mut out.all
            } else {
                match ErrorKind::from_name(name) {
                    Some(kind) => &mut out.per_kind[kind.index()],
                    None => {
                        return Err(self.src.at(
                            k,
                            field,
                            format!(
                                "unknown error kind '{name}': expected {ALL_KINDS} or one of {}",
                                ErrorKind::ALL.map(|k| k.name()).join(", ")
                            ),
                        ))
                    }
                }
            };
            *slot = Some(limit);
        }
        Ok(out)
    }
}

/// Study and target names become directory names.
pub(super) fn check_file_name(s: &str) -> Result<(), String> {
    let ok = !s.is_empty()
        && s != "."
        && s != ".."
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "bad name '{s}': use letters, digits, '_', '-' or '.' (it names a directory)"
        ))
    }
}
