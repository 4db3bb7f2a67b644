//! The machine-readable run result: the run record as JSON, in the format
//! documented in `docs/json.md` and fixed by `schema/run.schema.json`
//! (generated from the record's types).

use super::Exporter;
use crate::record::{self, Run};

pub struct Json;

impl Exporter for Json {
    fn render(&self, r: &Run) -> anyhow::Result<Vec<u8>> {
        record::to_vec(r)
    }
}
