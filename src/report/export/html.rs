//! HTML: the run's or the study's document as one self-contained page.

use super::{Exporter, Output, Study};
use crate::record::Run;
use crate::report::doc::html;
use crate::report::run::document;

pub struct Html;

impl Exporter for Html {
    fn run(&self, run: &Run) -> anyhow::Result<Output> {
        Ok(html::render(&document::build(run)).into())
    }

    fn study(&self, s: &Study<'_>) -> anyhow::Result<Output> {
        Ok(html::render(s.doc).into())
    }
}
