//! JSON: a run as its record (`docs/json.md`, `schema/run.schema.json`,
//! generated from the record's types); a study as `dbsweep-report/1`
//! (`docs/report.md`, `schema/report.schema.json`).

use super::{Exporter, Output, Study};
use crate::record::{self, Run};
use crate::report::study;

pub struct Json;

impl Exporter for Json {
    fn run(&self, r: &Run) -> anyhow::Result<Output> {
        Ok(record::to_vec(r)?.into())
    }

    fn study(&self, s: &Study<'_>) -> anyhow::Result<Output> {
        Ok(study::json::render(s.data, s.report)?.into())
    }
}
