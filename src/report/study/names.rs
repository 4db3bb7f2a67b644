//! How the study report names and groups things: which points count
//! (finished ones), the panel a point belongs to, series and panel
//! titles, CPU sets, workload titles.

use std::fmt::Write;

use super::model::Panel;
use super::{Metric, Options};
use crate::report::study::analysis;
use crate::store::{Metrics, PointStatus, StoredPoint};

/// What tells the machine a point ran on: the stored fingerprint, or one
/// made from its run document (a point stored before dbsweep kept it).
pub fn machine_of(p: &StoredPoint) -> String {
    match p.metrics.as_ref().map(|m| m.machine.as_str()) {
        Some(m) if !m.is_empty() => m.to_string(),
        _ => p
            .row
            .run
            .as_ref()
            .map(|r| crate::store::machine_fingerprint(&r.machine))
            .unwrap_or_default(),
    }
}

pub(super) fn finished(p: &StoredPoint) -> Option<&Metrics> {
    (p.row.status == PointStatus::Finished)
        .then_some(p.metrics.as_ref())
        .flatten()
}

/// `(workload label, options, cpus)`: what a panel is.
pub(super) type PanelKey = (String, Vec<(String, String)>, Option<String>);

pub(super) fn panel_key(p: &StoredPoint) -> PanelKey {
    (
        p.row.workload_label.clone(),
        p.row.workload_options.clone(),
        p.row.cpus.clone(),
    )
}

/// Distinct values in order of first appearance.
pub(super) fn distinct<T: PartialEq + Clone>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// Whether series need their variant in their label: some target of the
/// study has more than one.
pub(super) fn show_variant<'a>(points: impl IntoIterator<Item = &'a StoredPoint>) -> bool {
    let pairs = distinct(
        points
            .into_iter()
            .map(|p| (p.row.target.clone(), p.row.variant.clone())),
    );
    let targets = distinct(pairs.iter().map(|(t, _)| t.clone()));
    pairs.len() > targets.len()
}

/// A point's series label: its target as the report calls it, its
/// variant where the study shows variants, its instances.
pub(super) fn point_label(data: &super::StudyData, p: &StoredPoint, with_variant: bool) -> String {
    series_label(
        data.target_label(&p.row.target),
        &p.row.variant,
        p.row.instances,
        with_variant,
    )
}

pub(super) fn series_label(
    target: &str,
    variant: &str,
    instances: u32,
    with_variant: bool,
) -> String {
    let mut s = if with_variant {
        format!("{target} / {variant}")
    } else {
        target.to_string()
    };
    if instances != 1 {
        let _ = write!(s, " ×{instances}");
    }
    s
}

pub(super) fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

pub(super) fn cpus_label(cpus: &Option<String>) -> String {
    match cpus {
        None => "all CPUs".to_string(),
        Some(set) => match analysis::cpu_count(set) {
            Some(1) => format!("1 CPU ({set})"),
            Some(n) => format!("{n} CPUs ({set})"),
            None => format!("CPUs {set}"),
        },
    }
}

pub(super) fn workload_title(label: &str, options: &[(String, String)]) -> String {
    let mut s = label.to_string();
    for (k, v) in options {
        let _ = write!(s, " {k}={v}");
    }
    s
}

pub(super) fn panel_title(p: &Panel, several_cpus: bool) -> String {
    let w = workload_title(
        &p.workload,
        &p.options.clone().into_iter().collect::<Vec<_>>(),
    );
    if several_cpus {
        format!("{w}, {}", cpus_label(&p.cpus))
    } else {
        w
    }
}

pub(super) fn several_cpus(panels: &[Panel]) -> bool {
    distinct(panels.iter().map(|p| p.cpus.clone())).len() > 1
}

/// The throughput metric peaks and rankings are over.
pub(super) fn throughput(opts: &Options) -> Metric {
    if opts.metric == Metric::Qps {
        Metric::Qps
    } else {
        Metric::Tps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_labels() {
        assert_eq!(
            slug("oltp_read_only tables=1 cpus 0-1"),
            "oltp-read-only-tables-1-cpus-0-1"
        );
        assert_eq!(cpus_label(&Some("0".into())), "1 CPU (0)");
        assert_eq!(cpus_label(&Some("0-3".into())), "4 CPUs (0-3)");
        assert_eq!(cpus_label(&None), "all CPUs");
    }
}
