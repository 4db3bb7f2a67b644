//! Markdown: the run's or the study's document, each chart an SVG file
//! beside it named after the report's file stem (none on standard output).

use super::{Exporter, Output, Study};
use crate::record::Run;
use crate::report::doc::{markdown, Doc};
use crate::report::run::document;

pub struct Markdown {
    /// The report's file stem; None on standard output.
    pub stem: Option<String>,
}

impl Markdown {
    fn of(&self, doc: &Doc) -> Output {
        let stem = self.stem.as_deref();
        Output {
            report: markdown::render(doc, stem).into_bytes(),
            beside: stem
                .map(|stem| markdown::charts(doc, stem))
                .unwrap_or_default()
                .into_iter()
                .map(|(name, svg)| (name, svg.into_bytes()))
                .collect(),
        }
    }
}

impl Exporter for Markdown {
    fn run(&self, run: &Run) -> anyhow::Result<Output> {
        Ok(self.of(&document::build(run)))
    }

    fn study(&self, s: &Study<'_>) -> anyhow::Result<Output> {
        Ok(self.of(s.doc))
    }
}
