//! The machine-readable run result: the run record as JSON, in the format
//! documented in `docs/json.md` and fixed by `schema/run.schema.json`
//! (generated from the record's types), with the figures this layer
//! derives from it filled in ([`complete`]).

use super::Exporter;
use crate::record::{self, Run};

pub struct Json;

impl Exporter for Json {
    fn render(&self, r: &Run) -> anyhow::Result<Vec<u8>> {
        let mut r = r.clone();
        complete(&mut r);
        record::to_vec(&r)
    }
}

/// Fills the figures of the record's JSON that the report layer derives
/// from the rest of the record — TPC-C's results (`result.tpcc`) — with
/// the code every report states them with. Whatever `r` carried there
/// before (a record read back, a shard's) is replaced.
pub fn complete(r: &mut Run) {
    r.result.tpcc = super::tpcc::record(r);
}
