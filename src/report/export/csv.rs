//! CSV: the tidy table of every report (`report::csv`), a run's `point`
//! lines or a study's every record.

use super::{Exporter, Output, Study};
use crate::record::Run;
use crate::report::{run, study};

pub struct Csv;

impl Exporter for Csv {
    fn run(&self, r: &Run) -> anyhow::Result<Output> {
        Ok(run::csv::render(r).into())
    }

    fn study(&self, s: &Study<'_>) -> anyhow::Result<Output> {
        Ok(study::csv::render(s.data, s.report).into())
    }
}
