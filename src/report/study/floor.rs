//! The study's noise floors: the control (`control = "NAME"`, measured
//! twice in every block) compared with itself, once in throughput — does
//! the design hold? — and once in p99 latency — can the p99 verdicts be
//! read? A tail moves with what a mean hides (a server warming up, the
//! order within a block), so it gets its own floor, and its failing marks
//! the p99 verdicts only.
//!
//! Each 95 % interval misses 1 time in 20, so over many cells a control
//! differs from itself somewhere by chance alone: a floor fails only when
//! more of its comparisons differ than chance makes in 1 % of studies.

use std::collections::BTreeMap;

use super::pairs::{NoiseFloor, Paired, PairedComparison, CONTROL_FAILS_BELOW};
use crate::stats::paired::binomial_at_least;

/// The floor of one metric from the control's comparisons with itself;
/// None when it has none of that metric.
pub fn noise_floor(control: &[PairedComparison], metric: &'static str) -> Option<NoiseFloor> {
    let mine: Vec<&PairedComparison> = control.iter().filter(|c| c.metric == metric).collect();
    let first = mine.first()?;
    let mut verdicts = BTreeMap::new();
    for c in &mine {
        *verdicts.entry(c.verdict.name()).or_insert(0) += 1;
    }
    let widest = mine
        .iter()
        .filter_map(|c| Some((c.ci_high? - c.ci_low?) / 2.0))
        .fold(None, |w: Option<f64>, h| Some(w.map_or(h, |w| w.max(h))));
    let failed_at: Vec<String> = mine
        .iter()
        .filter(|c| c.verdict.decided())
        .map(|c| {
            let cpus = c.cpus.as_ref().map(|x| format!(" cpus={x}"));
            let cpus = cpus.unwrap_or_default();
            format!("{}{cpus} {} ({})", c.workload, c.cell, c.difference_text())
        })
        .collect();
    let tested = mine.iter().filter(|c| c.ci_low.is_some()).count();
    let by_chance = binomial_at_least(tested, failed_at.len(), 0.05);
    Some(NoiseFloor {
        metric,
        series: first.baseline.clone(),
        again: first.series.clone(),
        comparisons: mine.len(),
        widest_half_width: widest,
        verdicts,
        failed: !failed_at.is_empty() && by_chance < CONTROL_FAILS_BELOW,
        failed_at,
        tested,
        by_chance,
    })
}

/// The floors in words, throughput first: what the report opens its
/// conclusions and its "Comparisons" section with.
pub fn sentences(p: &Paired) -> Vec<String> {
    let mut out = Vec::new();
    out.extend(p.noise_floor.as_ref().map(throughput_sentence));
    out.extend(p.latency_noise_floor.as_ref().map(latency_sentence));
    out
}

/// "N comparisons (k equivalent, …; the widest interval ±x %)" and the
/// chance of the differing ones.
fn counted(n: &NoiseFloor) -> (String, String) {
    let widest = n.widest_half_width.map_or("no interval yet".into(), |w| {
        format!("the widest interval ±{:.1} %", w * 100.0)
    });
    let counts: Vec<String> = n
        .verdicts
        .iter()
        .map(|(v, k)| format!("{k} {}", v.replace('_', " ")))
        .collect();
    let chance = format!(
        "{} of {} with an interval; chance alone makes {} or more {:.0} % of the time",
        n.failed_at.len(),
        n.tested,
        n.failed_at.len(),
        n.by_chance * 100.0
    );
    (format!("{}; {widest}", counts.join(", ")), chance)
}

fn throughput_sentence(n: &NoiseFloor) -> String {
    let (counts, chance) = counted(n);
    let (s, k, at) = (&n.series, n.comparisons, n.failed_at.join("; "));
    if n.failed {
        format!("The design has failed: {s} measured twice in every block came out different from itself at {at} ({chance}) — order effects or a server warming up. Every other verdict of this study is unreliable.")
    } else if n.failed_at.is_empty() {
        format!("Noise floor: {s} measured twice in every block compares with itself in {k} throughput comparisons ({counts}): the design holds.")
    } else {
        format!("Noise floor: {s} measured twice in every block compares with itself in {k} throughput comparisons ({counts}); it differed from itself at {at} ({chance}), no more than 95 % intervals miss by chance: the design holds, and any one verdict of this study may be such a miss.")
    }
}

fn latency_sentence(n: &NoiseFloor) -> String {
    let (counts, chance) = counted(n);
    let (s, k, at) = (&n.series, n.comparisons, n.failed_at.join("; "));
    if n.failed {
        format!("The p99 latency of {s} came out different from itself at {at} ({chance}): every p99 verdict of this study is unreliable (a tail shows a server warming up or the order within a block before a mean does).")
    } else if n.failed_at.is_empty() {
        format!("Its p99 latency compares with itself in {k} comparisons ({counts}): the p99 verdicts can be read.")
    } else {
        format!("Its p99 latency compares with itself in {k} comparisons ({counts}); it differed from itself at {at} ({chance}), no more than chance: any one p99 verdict may be such a miss.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::paired::Verdict;

    fn cell(clients: u32, metric: &'static str, verdict: Verdict) -> PairedComparison {
        PairedComparison {
            series: "a (again)".into(),
            baseline: "a".into(),
            workload: "w".into(),
            cpus: None,
            clients: Some(clients),
            rate: None,
            cell: format!("clients={clients}"),
            metric,
            ratio: Some(1.0),
            ci_low: Some(0.97),
            ci_high: Some(1.03),
            blocks: 5,
            verdict,
            per_block: Vec::new(),
        }
    }

    /// Nineteen cells of `metric`, the first `differing` of them `worse`.
    fn cells(metric: &'static str, differing: usize) -> Vec<PairedComparison> {
        (0..19)
            .map(|i| {
                let v = if i < differing {
                    Verdict::Worse
                } else {
                    Verdict::Inconclusive
                };
                cell(i as u32 + 1, metric, v)
            })
            .collect()
    }

    #[test]
    fn a_control_fails_the_design_only_past_what_chance_makes() {
        let floor = |differing: usize| noise_floor(&cells("tps", differing), "tps").unwrap();
        // One or two of nineteen 95 % intervals missing is chance (62 %
        // and 25 % of studies): the design holds, the cells are named.
        for k in [1, 2] {
            let f = floor(k);
            assert_eq!((f.failed_at.len(), f.tested), (k, 19));
            assert!(!f.failed && f.by_chance > 0.2, "{f:?}");
        }
        // Five of nineteen: 0.3 % by chance, so the design failed.
        let f = floor(5);
        assert!(f.failed && f.by_chance < 0.01, "{f:?}");
        assert!(!floor(0).failed);
    }

    #[test]
    fn the_p99_floor_is_judged_apart_and_fails_only_the_p99_verdicts() {
        // Throughput holds everywhere; the tail differs in five cells.
        let mut control = cells("tps", 0);
        control.extend(cells("p99", 5));
        control.extend(cells("p95", 19));
        let p = Paired {
            noise_floor: noise_floor(&control, "tps"),
            latency_noise_floor: noise_floor(&control, "p99"),
            ..Paired::default()
        };
        let (t, l) = (
            p.noise_floor.as_ref().unwrap(),
            p.latency_noise_floor.as_ref().unwrap(),
        );
        assert_eq!((t.metric, t.comparisons, t.failed), ("tps", 19, false));
        assert_eq!((l.metric, l.comparisons, l.failed_at.len()), ("p99", 19, 5));
        assert!(l.failed, "{l:?}");
        let said = sentences(&p);
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said[0].ends_with("the design holds."), "{}", said[0]);
        assert!(
            said[1].contains("every p99 verdict of this study is unreliable")
                && !said[1].contains("Every other verdict"),
            "{}",
            said[1]
        );
        // No p99 comparisons (a study whose points carry no latency): no
        // floor and no sentence for it.
        assert!(noise_floor(&cells("tps", 0), "p99").is_none());
    }
}
