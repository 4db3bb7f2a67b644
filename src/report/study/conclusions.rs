//! What the report says in words: the [`conclusions`] (ranking, sag,
//! collapse, scalability, sweep and comparison as sentences) and the
//! header [`facts`] (study, machine, servers, workloads, settings).

use std::collections::BTreeSet;
use std::fmt::Write;

use super::names::{
    cpus_label, distinct, finished, panel_title, point_label, several_cpus, show_variant,
    workload_title,
};
use super::usage::bound_sentence;
use super::{Metric, Report, StudyData};
use crate::report::study::analysis::{Scaling, Verdict};
use crate::util::civil::utc_minutes as utc;

/// The report's sentences: per panel the ranking (seed 002's "X is slower
/// than the best by Y %"), sag and collapse; the CPU scalability; the
/// parameter sweep's significant changes; the comparison's.
pub(super) fn conclusions(r: &Report) -> Vec<String> {
    let several = several_cpus(&r.panels);
    // The paired comparisons first: the noise floor, then each series
    // against the baseline — the only rankings the report makes.
    let mut out = super::compared::sentences(r);
    for p in &r.panels {
        // Throughput in the workload's own unit (DBT-1's BT/s, …).
        let unit = super::unit(&p.workload_name);
        let tp = if r.metric == Metric::Qps {
            "qps"
        } else {
            unit.short
        };
        // One paragraph per panel: each series' peak (the ranking is the
        // paired comparisons').
        let mut said: Vec<String> = Vec::new();
        let title = super::names::workload_title(
            &p.workload,
            &p.options.clone().into_iter().collect::<Vec<_>>(),
        );
        for s in &p.series {
            let Some(peak) = s.peak else { continue };
            let name = if p.series.len() > 1 {
                s.label.clone()
            } else {
                "It".to_string()
            };
            let mut line = format!(
                "{name} peaks at {:.2} {tp} with {} client{}",
                peak.value,
                peak.clients,
                plural(peak.clients as usize)
            );
            let judged = r
                .paired
                .sags
                .iter()
                .find(|j| j.workload == title && j.cpus == p.cpus && j.series == s.label);
            match (s.sag, judged) {
                (Some(g), _) if g.last.clients == peak.clients && p.clients.len() > 1 => {
                    line.push_str(", the most it was measured with: it may rise further")
                }
                // The fall from the peak, only where its blocks decide it.
                (Some(g), Some(j)) if g.last.clients != peak.clients => {
                    line.push_str(&super::compared::sag_words(j, r.paired.equivalence));
                }
                _ => {}
            }
            if let Some(c) = s.collapse {
                let _ = write!(
                    line,
                    "; it collapses below half its peak at {} clients ({:.2} {tp})",
                    c.clients, c.value
                );
            }
            line.push('.');
            said.push(line);
        }
        let set = cpus_label(&p.cpus);
        said.extend(p.series.iter().filter_map(|s| bound_sentence(s, &set)));
        if let Some(sw) = &p.sweep {
            for row in sw.rows.iter() {
                let Some(c) = row.change else { continue };
                let pct = c.pct.map_or(String::new(), |p| format!(" ({p:+.2} %)"));
                let word = match c.verdict {
                    Verdict::Better => "helps",
                    Verdict::Worse => "hurts",
                    _ => continue,
                };
                said.push(format!(
                    "On {}, {} = {} {word}: {:.2} {} against {:.2}{pct}, beyond the repeat noise.",
                    row.target_label, row.setting, row.value, c.value, unit.short, c.baseline
                ));
            }
            if !sw.rows.iter().any(|r| {
                r.change
                    .is_some_and(|c| matches!(c.verdict, Verdict::Better | Verdict::Worse))
            }) {
                said.push(format!(
                    "No setting of the parameter sweep changes throughput beyond the repeat noise{}.",
                    if sw.too_few_repeats {
                        " (some values have fewer than two repeats: their noise is unknown)"
                    } else {
                        ""
                    }
                ));
            }
        }
        if !said.is_empty() {
            out.push(format!("{}: {}", panel_title(p, several), said.join(" ")));
        }
    }
    for sc in &r.scalability {
        // Each series' factor in the study's order: listed, not ranked
        // (a factor of means carries no interval to rank by).
        let factors: Vec<(&str, f64, &Scaling, &Scaling)> = sc
            .series
            .iter()
            .filter_map(|s| {
                let last = s.configs.last()?;
                Some((s.label.as_str(), last.vs_fewest?, last, s.configs.first()?))
            })
            .collect();
        if let Some((_, _, last, first)) = factors.first() {
            let mut line = format!(
                "{}: CPU scalability, the peak on {} over the peak on {}:",
                sc.workload, last.label, first.label
            );
            for (label, f, _, _) in &factors {
                let _ = write!(line, " {label} {f:.2};");
            }
            line.pop();
            line.push('.');
            out.push(line);
        }
    }
    if let Some(c) = &r.comparison {
        let (mut better, mut worse, mut within, mut unknown) = (0, 0, 0, 0);
        for cell in c
            .panels
            .iter()
            .flat_map(|p| &p.series)
            .flat_map(|s| &s.cells)
            .filter_map(|c| c.change)
        {
            match cell.verdict {
                Verdict::Better => better += 1,
                Verdict::Worse => worse += 1,
                Verdict::Within => within += 1,
                Verdict::TooFewRepeats => unknown += 1,
            }
        }
        out.push(format!(
            "Against {}: {better} point(s) better and {worse} worse beyond the repeat noise, {within} within it{}.",
            c.baseline,
            if unknown > 0 {
                format!(", {unknown} with too few repeats to judge")
            } else {
                String::new()
            }
        ));
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The header facts: study, machine, servers, workloads, what differs
/// between variants.
pub(super) fn facts(data: &StudyData, r: &Report) -> Vec<(String, String)> {
    let mut f: Vec<(String, String)> = Vec::new();
    let s = &r.study;
    f.push((
        "Study".into(),
        if s.description.is_empty() {
            s.name.clone()
        } else {
            format!("{} — {}", s.name, s.description)
        },
    ));
    f.push((
        "Measured".into(),
        format!(
            "from {} with dbsweep {}{}",
            utc(s.started_unix_s),
            s.tool_version,
            if s.sessions > 1 {
                format!(" ({} sessions: resumed)", s.sessions)
            } else {
                String::new()
            }
        ),
    ));
    machine_facts(r, &mut f);
    server_facts(data, r, &mut f);
    tls_facts(data, &mut f);
    axes_facts(data, r, &mut f);
    setting_facts(data, &mut f);
    f
}

/// The machine (and every machine, where the study ran on several).
fn machine_facts(r: &Report, f: &mut Vec<(String, String)>) {
    let s = &r.study;
    let m = &s.machine;
    let get = |k: &str| m.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
    let mut machine = get("cpu_model");
    if let Some(n) = m.get("cpus_online").and_then(|v| v.as_u64()) {
        let _ = write!(machine, ", {n} CPUs");
    }
    if let Some(b) = m
        .get("memory_bytes")
        .and_then(|v| v.as_u64())
        .filter(|&b| b > 0)
    {
        let _ = write!(machine, ", {:.1} GiB", b as f64 / (1u64 << 30) as f64);
    }
    if !get("kernel").is_empty() {
        let _ = write!(machine, ", {} {}", get("os"), get("kernel"));
    }
    f.push((
        "Machine".into(),
        machine.trim_start_matches(", ").to_string(),
    ));
    // A study resumed or continued elsewhere: every machine with its
    // points (two are never paired in a comparison).
    if r.paired.machines.len() > 1 {
        f.push((
            "Machines (points never paired across them)".into(),
            r.paired
                .machines
                .iter()
                .map(|m| {
                    format!(
                        "{}: {} points{}",
                        m.machine,
                        m.points,
                        match (m.first_unix_s, m.last_unix_s) {
                            (Some(a), Some(b)) => format!(", {} to {}", utc(a), utc(b)),
                            _ => String::new(),
                        }
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
        ));
    }
}

/// The order, and the servers and programs that served the points.
fn server_facts(data: &StudyData, r: &Report, f: &mut Vec<(String, String)>) {
    if let Some(o) = &r.paired.order {
        f.push((
            "Order".into(),
            format!(
                "{o}; no difference within ±{} %",
                r.paired.equivalence * 100.0
            ),
        ));
    }
    let servers = distinct(data.points.iter().chain(&data.paced).filter_map(|p| {
        let t = &p.row.target;
        // A target the report names by its release: the study file's
        // name beside it, so the two can be matched.
        let name = match data.target_label(t) {
            label if label == t => t.clone(),
            label => format!("{label} (target {t})"),
        };
        p.metrics
            .as_ref()
            .map(|m| format!("{name}: {}", m.server_version))
    }));
    if !servers.is_empty() {
        f.push(("Servers".into(), servers.join("; ")));
    }
    // The programs dbsweep started, in their own words.
    let programs: Vec<String> = data
        .servers
        .iter()
        .flat_map(|s| {
            s.version_lines
                .iter()
                .map(move |l| format!("{}: {l}", s.label))
        })
        .collect();
    if !programs.is_empty() {
        f.push(("Server programs (--version)".into(), programs.join("; ")));
    }
}

/// Whether each series' connections were encrypted, as every point's
/// driver recorded it (the `tls` or `dbsweep.tls` setting: TLS's version
/// and cipher, or `off`): said when any was, and flagged when the series differ, since a
/// comparison of an encrypted series with a plain one measures TLS's cost
/// too (MariaDB 11.4 serves TLS by default, and a client preferring TLS
/// takes it; a study once read half 11.4's throughput as the release's).
fn tls_facts(data: &StudyData, f: &mut Vec<(String, String)>) {
    let points = || data.points.iter().chain(&data.paced);
    let with_variant = show_variant(points());
    let per_series = distinct(points().filter_map(|p| {
        // MySQL's driver names it `tls`, PostgreSQL's `dbsweep.tls` (beside
        // the server's own `ssl`).
        let (_, tls) = p
            .row
            .settings
            .iter()
            .find(|(n, _)| n == "tls" || n == "dbsweep.tls")?;
        Some((point_label(data, p, with_variant), tls.clone()))
    }));
    let values = distinct(per_series.iter().map(|(_, v)| v.as_str()));
    let text = match values.as_slice() {
        [] | ["off"] => return,
        [one] => format!("every series: {one}"),
        _ => {
            let each: Vec<String> = per_series
                .iter()
                .map(|(s, v)| format!("{s}: {v}"))
                .collect();
            format!(
                "{} — the series differ: a comparison of an encrypted series with a plain one measures TLS's cost too",
                each.join("; ")
            )
        }
    };
    f.push(("Encryption (TLS)".into(), text));
}

/// The workloads, client counts, load levels, CPU sets, repeats and windows.
fn axes_facts(data: &StudyData, r: &Report, f: &mut Vec<(String, String)>) {
    let s = &r.study;
    let workloads = distinct(data.points.iter().chain(&data.paced).map(|p| {
        let w = workload_title(&p.row.workload_label, &p.row.workload_options);
        if p.row.workload_label == p.row.workload {
            w
        } else {
            format!("{w} ({})", p.row.workload)
        }
    }));
    f.push(("Workloads".into(), workloads.join("; ")));
    let mut clients = distinct(data.points.iter().chain(&data.paced).map(|p| p.row.clients));
    clients.sort_unstable();
    f.push((
        "Clients".into(),
        clients
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    ));
    let mut levels = distinct(
        (data.paced.iter())
            .filter(|p| !super::searched::is_probe(p))
            .filter_map(|p| p.row.load_level.clone()),
    );
    if data.paced.iter().any(super::searched::is_probe) {
        levels.push("a search for the highest sustained rate (rates = \"find\")".into());
    }
    if !levels.is_empty() {
        f.push(("Load levels".into(), levels.join(", ")));
    }
    let cpus = distinct(
        data.points
            .iter()
            .chain(&data.paced)
            .map(|p| p.row.cpus.clone()),
    );
    if cpus.iter().any(Option::is_some) {
        f.push((
            "Server CPU sets".into(),
            cpus.iter().map(cpus_label).collect::<Vec<_>>().join("; "),
        ));
    }
    let repeats = data
        .points
        .iter()
        .chain(&data.paced)
        .map(|p| p.row.repeat)
        .max()
        .unwrap_or(0);
    let windows = distinct(
        data.points
            .iter()
            .chain(&data.paced)
            .filter_map(|p| finished(p).map(|m| format!("{:.0} s", m.measured_s))),
    );
    // Runs that end on a count (rounds, events) have windows of every
    // length: a range says it better than a list.
    let window = match windows.len() {
        0 => "-".to_string(),
        1..=3 => windows.join(", "),
        _ => {
            let secs = data
                .points
                .iter()
                .chain(&data.paced)
                .filter_map(|p| finished(p).map(|m| m.measured_s));
            let (lo, hi) = secs.fold((f64::INFINITY, 0f64), |(lo, hi), x| (lo.min(x), hi.max(x)));
            format!("{lo:.1}–{hi:.1} s")
        }
    };
    f.push((
        "Repeats".into(),
        format!("up to {repeats} per point; measured window {window}"),
    ));
    f.push((
        "Points".into(),
        format!(
            "{} finished, {} skipped, {} failed",
            s.points_finished, s.points_skipped, s.points_failed
        ),
    ));
}

/// The settings that differ between a target's variants.
fn setting_facts(data: &StudyData, f: &mut Vec<(String, String)>) {
    // Settings that differ between the variants of a target.
    let targets = distinct(
        data.points
            .iter()
            .chain(&data.paced)
            .map(|p| p.row.target.clone()),
    );
    for t in targets {
        let variants = distinct(
            data.points
                .iter()
                .chain(&data.paced)
                .filter(|p| p.row.target == t)
                .map(|p| (p.row.variant.clone(), p.row.variant_settings.clone())),
        );
        if variants.len() < 2 {
            continue;
        }
        let keys: BTreeSet<&String> = variants
            .iter()
            .flat_map(|(_, s)| s.iter().map(|(k, _)| k))
            .collect();
        let differing: Vec<&String> = keys
            .into_iter()
            .filter(|k| {
                distinct(
                    variants
                        .iter()
                        .map(|(_, s)| s.iter().find(|(n, _)| n == *k).map(|(_, v)| v.clone())),
                )
                .len()
                    > 1
            })
            .collect();
        let text = variants
            .iter()
            .map(|(name, s)| {
                let vals: Vec<String> = differing
                    .iter()
                    .map(|k| {
                        let v = s
                            .iter()
                            .find(|(n, _)| n == *k)
                            .map_or("(default)", |(_, v)| v.as_str());
                        format!("{k} = {v}")
                    })
                    .collect();
                format!("{name}: {}", vals.join(", "))
            })
            .collect::<Vec<_>>()
            .join("; ");
        f.push((
            format!("Settings that differ ({})", data.target_label(&t)),
            text,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_in_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(1_700_000_000), "2023-11-14 22:13 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00 UTC");
    }
}
