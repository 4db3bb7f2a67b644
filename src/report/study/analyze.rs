//! [`analyze`]: a study's stored points → its [`Report`]: the panels with
//! their cells and series (`figures`), the comparisons across series
//! (`comparisons`) and the sentences that sum it up (`conclusions`).

use super::comparisons::{compare, scalability};
use super::conclusions::conclusions;
use super::figures::panels;
use super::model::{Report, StudyFacts, SCHEMA_ID};
use super::offered;
use super::{Options, StudyData};
use crate::store::PointStatus;

/// Derives every figure of `data`; with `baseline`, compares it cell by cell.
pub fn analyze(data: &StudyData, baseline: Option<&StudyData>, opts: &Options) -> Report {
    let panels = panels(data, opts);
    let scalability = scalability(data, &panels);
    let comparison = baseline.map(|b| compare(&panels, b, opts));
    let count = |s: PointStatus| {
        data.points
            .iter()
            .chain(&data.paced)
            .filter(|p| p.row.status == s)
            .count()
    };
    let mut report = Report {
        schema: SCHEMA_ID,
        study: StudyFacts {
            name: data.info.name.clone(),
            description: data.info.description.clone(),
            source: data.source.clone(),
            started_unix_s: data.info.started_unix_s,
            tool_version: data.info.tool_version.clone(),
            sessions: data.info.sessions,
            machine: data.info.machine.clone(),
            points_finished: count(PointStatus::Finished),
            points_skipped: count(PointStatus::Skipped),
            points_failed: count(PointStatus::Failed),
            servers: data.servers.clone(),
        },
        metric: opts.metric,
        panels,
        offered: offered::load_panels(data),
        searched: super::searched::panels(data),
        scalability,
        comparison,
        paired: super::paired::analyze(data),
        conclusions: Vec::new(),
        reproduction: super::reproduce::reproduction(data),
    };
    report.conclusions = conclusions(&report);
    for p in &report.offered {
        report.conclusions.extend(offered::conclusions(p));
    }
    if let Some(r) = &report.reproduction {
        report.conclusions.extend(super::reproduce::sentences(r));
    }
    report
}
