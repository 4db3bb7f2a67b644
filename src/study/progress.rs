//! A study run's live progress: an overall bar with the point being
//! measured and its throughput on a terminal, one plain line per finished
//! point otherwise.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::model::Study;
use super::plan::Point;
use crate::server::format_cpu_list;

/// Live progress: an overall bar on a terminal, plain lines otherwise.
pub(super) struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    pub(super) fn new(total: usize, done: usize) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("[{bar:30}] {pos}/{len} points, eta {eta}  {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.set_position(done as u64);
        Progress { bar: Some(bar) }
    }

    pub(super) fn current(&self, what: &str) {
        if let Some(b) = &self.bar {
            b.set_message(what.to_string());
        }
    }

    pub(super) fn live(&self, what: &str, tps: f64) {
        if let Some(b) = &self.bar {
            b.set_message(format!("{what}: {tps:.0} tps"));
        }
    }

    /// One point is done: a line above the bar, or a plain log line.
    pub(super) fn done(&self, line: &str) {
        match &self.bar {
            Some(b) => {
                b.println(line);
                b.inc(1);
            }
            None => eprintln!("{line}"),
        }
    }

    /// `n` points of the plan are not needed (their cell was precise
    /// enough, or a search had its answer): the total shrinks, and `line`
    /// says why.
    pub(super) fn not_needed(&self, n: usize, line: Option<&str>) {
        match &self.bar {
            Some(b) => {
                if let Some(line) = line {
                    b.println(line);
                }
                b.set_length(b.length().unwrap_or(0).saturating_sub(n as u64));
            }
            None => {
                if let Some(line) = line {
                    eprintln!("{line}");
                }
            }
        }
    }

    pub(super) fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// How progress lines name a point.
pub(super) fn describe_point(study: &Study, p: &Point) -> String {
    format!(
        "{} {} cpus={} {} clients={}{}{} repeat {}{}",
        p.key.target,
        study.variants[p.variant].name,
        p.cpus.as_deref().map_or("all".into(), format_cpu_list),
        study.workloads[p.workload].label,
        p.clients,
        if p.instances > 1 {
            format!("×{}", p.instances)
        } else {
            String::new()
        },
        p.level.map_or(String::new(), |l| format!(" {}", l.key())),
        p.repeat,
        study
            .nodes(p.target, p.workload)
            .map_or(String::new(), |n| match n.count {
                1 => " on 1 node".to_string(),
                c => format!(" on {c} nodes"),
            })
    )
}
