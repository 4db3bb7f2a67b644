//! Text: a run's report in sysbench's sections; a study's document as
//! aligned tables.

use super::{Exporter, Output, Study};
use crate::record::Run;
use crate::report::doc;
use crate::report::run::text;

pub struct Text;

impl Exporter for Text {
    fn run(&self, run: &Run) -> anyhow::Result<Output> {
        Ok(text::report(run).into())
    }

    fn study(&self, s: &Study<'_>) -> anyhow::Result<Output> {
        Ok(doc::text::render(s.doc).into())
    }
}
