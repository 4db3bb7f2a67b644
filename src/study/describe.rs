//! What a plan costs and holds, as `--dry-run` prints it: the estimated
//! wall time (the longest, and the shortest when repeats stop once
//! precise) and one line per axis, the design, the stop rules and every
//! series.

use std::collections::BTreeSet;
use std::time::Duration;

use super::model::{Order, Study, WorkloadSpec};
use super::plan::{
    again_name, rows, Plan, Point, Series, LOAD_OVERHEAD, LOAD_ROWS_PER_SEC, POINT_OVERHEAD,
    SERVER_START,
};
use crate::server::format_cpu_list;
use crate::util::duration;

impl Plan {
    /// Upper estimate of the study's wall time, before stop rules skip any
    /// point: per point its warmup and measured time plus
    /// [`POINT_OVERHEAD`], plus [`SERVER_START`] per server (re)start, plus
    /// per data load [`LOAD_OVERHEAD`] and its rows at [`LOAD_ROWS_PER_SEC`].
    /// Points that end on events or rounds count no run time (it is not
    /// known in advance); [`Plan::describe`] says how many there are.
    pub fn estimated_duration(&self, study: &Study) -> Duration {
        self.points.iter().map(|p| point_estimate(study, p)).sum()
    }

    /// The same estimate when every cell stops at its workload's
    /// `repeats.min` blocks: the shortest a study with a `precision` can
    /// take (equal to [`Plan::estimated_duration`] without one).
    pub fn estimated_duration_min(&self, study: &Study) -> Duration {
        self.points
            .iter()
            .filter(|p| p.repeat <= study.workloads[p.workload].repeats.min)
            .map(|p| point_estimate(study, p))
            .sum()
    }

    /// What `--dry-run` prints: the study, counts per axis, the number of
    /// points, server starts and data loads, the estimated duration, then
    /// one line per series.
    pub fn describe(&self, study: &Study) -> String {
        let mut lines = vec![format!(
            "study {} ({}) → {}",
            study.name,
            study.source.display(),
            study.out.display()
        )];
        lines.extend(study.description.lines().map(|l| format!("  {l}")));
        lines.push(self.axes_line(study));
        lines.push(self.design_line(study));
        lines.push(self.points_line());
        lines.push(self.estimate_line(study));
        lines.push(stop_line(study));
        for wl in &study.workloads {
            if let Some(precision) = wl.pacing.search {
                lines.push(format!(
                    "search: {}: in every block a closed-loop calibration point, then at most {} probes bisecting to the highest rate that holds p99 ≤ {} within {precision} % of its peak (probes a search does not need are not run: the counts below are the most)",
                    wl.label,
                    wl.pacing.levels.len(),
                    wl.pacing
                        .p99_goal
                        .map_or("?".into(), |g| format!("{} ms", crate::util::units::ms_ms(g.as_secs_f64() * 1e3))),
                ));
            }
        }
        lines.push("series (target / variant / cpus / workload: clients × repeats):".into());
        for (i, se) in self.series.iter().enumerate() {
            lines.push(self.series_line(study, i, se));
        }
        lines.join("\n") + "\n"
    }

    /// How many targets, variants, CPU sets, workloads, client counts and
    /// repeats the points span.
    fn axes_line(&self, study: &Study) -> String {
        let used =
            |f: fn(&Point) -> String| -> BTreeSet<String> { self.points.iter().map(f).collect() };
        // Variants by name: one variant applied to several targets is one.
        let variants: BTreeSet<&str> = self
            .points
            .iter()
            .map(|p| study.variants[p.variant].name.as_str())
            .collect();
        let variants = variants.len();
        let pairs = used(|p| format!("{}/{}", p.target, p.variant)).len();
        let cpus = used(|p| format!("{:?}", p.cpus)).len();
        let workloads = used(|p| p.workload.to_string()).len();
        let counts: BTreeSet<u32> = self.points.iter().map(|p| p.clients).collect();
        let repeats: BTreeSet<String> = self
            .series
            .iter()
            .map(|s| describe_repeats(&study.workloads[s.workload]))
            .collect();
        format!(
            "axes: {} target{}, {variants} variant{} ({pairs} target × variant series), {cpus} CPU set{}, {workloads} workload{}, {} client count{} ({}), repeats {}",
            study.targets.len(),
            plural(study.targets.len()),
            plural(variants),
            plural(cpus),
            plural(workloads),
            counts.len(),
            plural(counts.len()),
            compact(&counts.iter().copied().collect::<Vec<_>>()),
            repeats.into_iter().collect::<Vec<_>>().join(", "),
        )
    }

    /// The order, baseline(s), control and equivalence margin.
    fn design_line(&self, study: &Study) -> String {
        let d = &study.design;
        let name = |v: usize| {
            let v = &study.variants[v];
            format!("{}/{}", study.targets[v.target].name, v.name)
        };
        format!(
            "order: {}{}; baseline {}{}; equivalence ±{} %",
            d.order.name(),
            if d.order == Order::Interleaved {
                format!(
                    " ({} cells, blocks shuffled from seed {})",
                    self.cells.len(),
                    d.seed
                )
            } else {
                String::new()
            },
            if d.baselines.is_empty() {
                name(d.baseline)
            } else {
                d.baselines
                    .iter()
                    .map(|&b| name(b))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            d.control.map_or(String::new(), |c| format!(
                "; control {} (twice per block)",
                name(c)
            )),
            d.equivalence * 100.0
        )
    }

    /// Points, series, server starts and data loads.
    fn points_line(&self) -> String {
        let starts = self.points.iter().filter(|p| p.start_server).count();
        let loads = self.points.iter().filter(|p| p.prepare).count();
        format!(
            "points: {} in {} series; server starts: {starts}; data loads: {loads}",
            self.points.len(),
            self.series.len()
        )
    }

    /// The estimated wall time, with what it assumes.
    fn estimate_line(&self, study: &Study) -> String {
        let open = self
            .points
            .iter()
            .filter(|p| study.workloads[p.workload].time.is_none())
            .count();
        let open = if open > 0 {
            format!(", not counting the run time of {open} points that end on events or rounds")
        } else {
            String::new()
        };
        let (least, most) = (
            self.estimated_duration_min(study),
            self.estimated_duration(study),
        );
        let range = if least == most {
            format!("{} at most", duration::format(most))
        } else {
            format!(
                "{} to {} (as the repeats' precision is reached early or late)",
                duration::format(least),
                duration::format(most)
            )
        };
        format!(
            "estimated duration: {range}{open} (per point {}s overhead, {}s per server start, data loads at {} rows/s)",
            POINT_OVERHEAD.as_secs(),
            SERVER_START.as_secs(),
            LOAD_ROWS_PER_SEC as u64
        )
    }

    /// Series `i`: its axes, clients × repeats, and what it starts.
    fn series_line(&self, study: &Study, i: usize, se: &Series) -> String {
        let wl = &study.workloads[se.workload];
        let pts: Vec<&Point> = se.points.iter().map(|&i| &self.points[i]).collect();
        let mut notes = Vec::new();
        let starts = pts.iter().filter(|p| p.start_server).count();
        if starts > 0 {
            notes.push(format!("{starts} server start{}", plural(starts)));
        }
        let loads = pts.iter().filter(|p| p.prepare).count();
        if loads > 0 {
            notes.push(format!("{loads} data load{}", plural(loads)));
        }
        if wl.instances > 1 {
            notes.push(format!("{} instances", wl.instances));
        }
        if let Some(n) = study.nodes(se.target, se.workload) {
            let count = n.count;
            notes.push(format!(
                "{count} node{} ({})",
                plural(count),
                n.launcher.name()
            ));
        }
        let label = if wl.label != wl.name {
            format!(" ({})", wl.label)
        } else {
            String::new()
        };
        let target = &study.targets[se.target].name;
        format!(
            "  [{i}] {} / {} / {} / {}:{}{label}: {} × {} = {} point{}{}",
            if se.again {
                again_name(target)
            } else {
                target.clone()
            },
            study.variants[se.variant].name,
            se.cpus.as_deref().map_or("all".into(), format_cpu_list),
            se.workload,
            wl.name,
            compact(&se.clients),
            describe_repeats(wl),
            pts.len(),
            plural(pts.len()),
            if notes.is_empty() {
                String::new()
            } else {
                format!("; {}", notes.join(", "))
            }
        )
    }
}

/// The study's restart policy and stop rules, as one line.
fn stop_line(study: &Study) -> String {
    let stop = &study.stop;
    let mut rules = Vec::new();
    if let Some(b) = stop.below_peak {
        rules.push(format!("below_peak {b}"));
    }
    if let Some(m) = stop.max_failed_rate {
        rules.push(format!("max_failed_rate {m}"));
    }
    if stop.max_error_rate.is_set() {
        rules.push(format!(
            "max_error_rate {}",
            stop.max_error_rate.describe().join(", ")
        ));
    }
    if let Some(t) = stop.point_timeout {
        rules.push(format!("point_timeout {}", duration::format(t)));
    }
    format!(
        "restart: {}; stop rules: {}",
        study.restart.name(),
        if rules.is_empty() {
            "none".to_string()
        } else {
            rules.join(", ")
        }
    )
}

/// One point's share of [`Plan::estimated_duration`].
fn point_estimate(study: &Study, p: &Point) -> Duration {
    let wl = &study.workloads[p.workload];
    // With a ramp-up the window opens once the last user has started.
    let warmup = match (p.level, wl.pacing.ramp_up) {
        (Some(super::model::Level::Users(u)), Some(r)) => wl
            .warmup
            .max(Duration::from_secs_f64(f64::from(u.saturating_sub(1)) / r)),
        _ => wl.warmup,
    };
    let mut d = warmup + wl.time.unwrap_or_default() + POINT_OVERHEAD;
    if p.start_server {
        d += SERVER_START;
    }
    if p.prepare {
        d += LOAD_OVERHEAD + Duration::from_secs_f64(rows(wl) as f64 / LOAD_ROWS_PER_SEC);
    }
    d
}

/// `3`, or `2–10 (until ±3 %)` for repeats with a precision.
fn describe_repeats(wl: &WorkloadSpec) -> String {
    let r = wl.repeats;
    match r.precision {
        None => r.max.to_string(),
        Some(p) => format!("{}–{} (until ±{} %)", r.min, r.max, p * 100.0),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `1,2,4,8`, or for long lists `1,2,3,4,5,…,450,500 (14 counts)`.
fn compact(counts: &[u32]) -> String {
    let join = |c: &[u32]| c.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    if counts.len() <= 12 {
        join(counts)
    } else {
        format!(
            "{},…,{} ({} counts)",
            join(&counts[..5]),
            join(&counts[counts.len() - 2..]),
            counts.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_counts_read_well() {
        assert_eq!(compact(&[1, 2, 4]), "1,2,4");
        assert_eq!(
            compact(&(1..=14).collect::<Vec<_>>()),
            "1,2,3,4,5,…,13,14 (14 counts)"
        );
    }
}
