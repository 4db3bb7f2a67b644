//! One run as the tidy CSV of every report (`report::csv`): its `point`
//! lines, as a study's point would have them.

use crate::record::Run;
use crate::report::csv::{point_lines, to_csv, Line};

/// One run file (`dbsweep report RUN.json --format csv`) in the study
/// report's columns: its `point` lines, as a study's point would have
/// them (`series` is the target, `repeat` empty, `note` the stop reason;
/// a queued run's offered and achieved rates too).
pub fn render(run: &Run) -> String {
    let m = crate::store::extract(run).metrics;
    let base = Line {
        record: "point",
        workload: run.workload.name.clone(),
        series: run.target.url.clone(),
        clients: run.run.threads.to_string(),
        note: run.result.stop_reason.name().to_string(),
        ..Line::default()
    };
    let mut lines = Vec::new();
    let queued = run
        .result
        .pacing
        .as_ref()
        .is_some_and(|p| p.offered.is_some());
    point_lines(&base, &m, queued, Some(run), &mut lines);
    to_csv(lines)
}
