//! Validation of how a study compares its series: `order`, `baseline`,
//! `control`, `equivalence` and `seed` (docs/study.md, "Comparisons"),
//! and the design as the store keeps it for reports ([`DesignSpec`]).

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::load::{Loader, R};
use super::model::*;
use super::raw::*;

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

impl Study {
    /// How the study compares its series, as the store keeps it for
    /// reports: series by (target, variant) name, the sweep as validated.
    pub fn stored_design(&self) -> DesignSpec {
        let series = |v: usize| {
            let v = &self.variants[v];
            (self.targets[v.target].name.clone(), v.name.clone())
        };
        let d = &self.design;
        DesignSpec {
            order: d.order.name().to_string(),
            baseline: series(d.baseline),
            baselines: d.baselines.iter().map(|&b| series(b)).collect(),
            control: d.control.map(series),
            equivalence: d.equivalence,
            seed: d.seed,
            sweep: self.sweep.as_ref().map(|s| SweepSpec {
                baseline: s.baseline.clone(),
                clients: s.clients,
            }),
        }
    }
}

/// The equivalence margin where a study gives none: ±2 %.
pub const DEFAULT_EQUIVALENCE: f64 = 0.02;

/// How a study compares its series, as the study runner stored it: what
/// the report's paired comparisons are made against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DesignSpec {
    /// `interleaved` or `sequential`.
    pub order: String,
    /// The series every other is compared with: (target, variant) as the
    /// points store them.
    pub baseline: (String, String),
    /// One baseline per server kind (`baseline = ["A", "B"]`): each series
    /// is compared with its own kind's; empty with one baseline.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub baselines: Vec<(String, String)>,
    /// The series measured twice per block; its second measurement is
    /// stored as the target `NAME (again)`.
    pub control: Option<(String, String)>,
    /// A ratio whose interval lies within 1 ± this is "no difference".
    pub equivalence: f64,
    /// What seeded the order of the blocks.
    pub seed: u64,
    /// The `[sweep.parameter]` as validated, where the study has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepSpec>,
}

/// A parameter sweep as reports show it: the variant every generated one
/// changes one setting of, and the client count they all run at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepSpec {
    pub baseline: String,
    pub clients: u32,
}

/// What the control's second measurement is named: its series' target
/// followed by this.
pub const AGAIN: &str = " (again)";
