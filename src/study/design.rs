//! Validation of how a study compares its series: `order`, `baseline`,
//! `control`, `equivalence` and `seed` (docs/study.md, "Comparisons").

use toml::Spanned;

use super::load::{Loader, R};
use super::model::*;
use super::raw::*;

use crate::report::study::spec::DEFAULT_EQUIVALENCE;

impl Loader<'_> {
    /// The study's [`Design`]: names resolved to series, the order's
    /// default (interleaved with two or more series or a control), the
    /// margin checked.
    pub(super) fn design(
        &self,
        raw: &RawStudy,
        name: &str,
        targets: &[TargetSpec],
        variants: &[VariantSpec],
    ) -> R<Design> {
        let series = |s: &Option<Spanned<String>>, field: &str| -> R<Option<usize>> {
            s.as_ref()
                .map(|n| {
                    resolve(n.get_ref(), targets, variants).map_err(|m| self.src.at(n, field, m))
                })
                .transpose()
        };
        let mut baselines = Vec::new();
        if let Some(b) = &raw.baseline {
            if b.get_ref().0.is_empty() {
                return Err(self.src.at(
                    b,
                    "baseline",
                    "an empty list: name a series, or leave baseline out for the first",
                ));
            }
            for n in &b.get_ref().0 {
                let i = resolve(n, targets, variants).map_err(|m| self.src.at(b, "baseline", m))?;
                let kind = |i: usize| targets[variants[i].target].dialect();
                if let Some(&other) = baselines.iter().find(|&&o| kind(o) == kind(i)) {
                    let name = |v: usize| {
                        format!("{}/{}", targets[variants[v].target].name, variants[v].name)
                    };
                    return Err(self.src.at(
                        b,
                        "baseline",
                        format!("two baselines of one kind of server ({} and {}): give at most one per server kind", name(other), name(i)),
                    ));
                }
                baselines.push(i);
            }
        }
        let baseline = baselines.first().copied().unwrap_or(0);
        if baselines.len() < 2 {
            baselines.clear();
        }
        let control = series(&raw.control, "control")?;
        let order = match &raw.order {
            Some(o) => match o.get_ref().as_str() {
                "interleaved" => Order::Interleaved,
                "sequential" => Order::Sequential,
                other => {
                    return Err(self.src.at(
                        o,
                        "order",
                        format!("unknown order '{other}': expected \"interleaved\" (every series once per block, shuffled) or \"sequential\" (target after target)"),
                    ))
                }
            },
            None if variants.len() >= 2 || control.is_some() => Order::Interleaved,
            None => Order::Sequential,
        };
        if let (Some(c), Order::Sequential) = (&raw.control, order) {
            return Err(self.src.at(
                c,
                "control",
                "a control is measured twice in every block, and a sequential study has no blocks: remove control or set order = \"interleaved\"",
            ));
        }
        let equivalence = match &raw.equivalence {
            Some(e) if e.get_ref().0 <= 0.0 => {
                return Err(self.src.at(
                    e,
                    "equivalence",
                    "a margin of 0 calls nothing equivalent: give the difference that counts as none, e.g. equivalence = \"2%\"",
                ))
            }
            Some(e) => e.get_ref().0,
            None => DEFAULT_EQUIVALENCE,
        };
        Ok(Design {
            order,
            baseline,
            baselines,
            control,
            equivalence,
            seed: raw.seed.unwrap_or_else(|| name_seed(name)),
        })
    }
}

/// A series named in the file: `"TARGET"` (its base variant),
/// `"TARGET/VARIANT"`, or `"VARIANT"` when one target has it; Err says
/// which names there are.
pub fn resolve(
    name: &str,
    targets: &[TargetSpec],
    variants: &[VariantSpec],
) -> Result<usize, String> {
    let full = |v: &VariantSpec| format!("{}/{}", targets[v.target].name, v.name);
    if let Some(i) = variants.iter().position(|v| full(v) == name) {
        return Ok(i);
    }
    if let Some(t) = targets.iter().position(|t| t.name == name) {
        if let Some(i) = variants
            .iter()
            .position(|v| v.target == t && v.name == "base")
        {
            return Ok(i);
        }
    }
    let by_variant: Vec<usize> = (0..variants.len())
        .filter(|&i| variants[i].name == name)
        .collect();
    match by_variant.as_slice() {
        [i] => Ok(*i),
        [] => Err(format!(
            "no series '{name}': name a target or TARGET/VARIANT, one of {}",
            variants
                .iter()
                .map(|v| format!("\"{}\"", full(v)))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        several => Err(format!(
            "'{name}' is a variant of {} targets: name one as TARGET/VARIANT ({})",
            several.len(),
            several
                .iter()
                .map(|&i| format!("\"{}\"", full(&variants[i])))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// A seed from the study's name (FNV-1a): the same file orders its blocks
/// the same way every time it runs, and a resume finds the order it began.
fn name_seed(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
