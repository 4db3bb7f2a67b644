//! An on-CPU profile taken beside a run (`run --profile`): which process
//! it sampled, how, the CPU time its samples stand for, the figures read from its
//! stacks, and where its folded stacks are kept.
//!
//! The folded stacks themselves (Brendan Gregg's format: one line per
//! distinct stack, `root;caller;…;leaf NANOSECONDS`) are not in the record:
//! they go to a file beside the run's JSON (`file`) and into the results
//! database with the point, compressed. While the run's own process still
//! holds them (its report, its store) they ride along in `folded`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One process tree's on-CPU profile over the measured window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Whose: `server` (the server's process tree) or `client` (dbsweep's
    /// own process, where SQLite runs too).
    pub role: String,
    /// Samples per second of each thread's CPU time (perf's `-F`).
    #[schemars(range(min = 1))]
    pub hz: u32,
    /// How stacks were walked: `fp` (frame pointers) or `dwarf`.
    pub call_graph: String,
    /// The CPU time the samples stand for, seconds (each sample counts
    /// the CPU time since the one before it, as perf's period says; the
    /// folded stacks count nanoseconds).
    #[schemars(range(min = 0))]
    pub cpu_s: f64,
    /// Share of the samples whose innermost frame is in the kernel.
    #[schemars(range(min = 0, max = 1))]
    pub kernel_share: f64,
    /// Share of the samples whose innermost frame has no symbol (a
    /// stripped build, or code perf could not name).
    #[schemars(range(min = 0, max = 1))]
    pub unnamed_share: f64,
    /// The functions most often on the CPU themselves (the innermost
    /// frame), the most first.
    pub top: Vec<TopFunction>,
    /// The folded stacks' file, beside the run's JSON (gzip); absent when
    /// the record was not written to a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The folded stacks, while the process that took them holds them.
    #[serde(skip)]
    #[schemars(skip)]
    pub folded: Option<String>,
}

impl Profile {
    /// The folded stacks as they are kept (beside the JSON, in results.db):
    /// gzip, a tenth of the text; None when this process does not hold them.
    pub fn folded_gz(&self) -> Option<std::io::Result<Vec<u8>>> {
        use std::io::Write;
        let folded = self.folded.as_ref()?;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        Some(gz.write_all(folded.as_bytes()).and_then(|()| gz.finish()))
    }

    /// Takes the folded stacks back from their gzip ([`Profile::folded_gz`]).
    pub fn set_folded_gz(&mut self, gz: &[u8]) -> std::io::Result<()> {
        use std::io::Read;
        let mut text = String::new();
        flate2::read::GzDecoder::new(gz).read_to_string(&mut text)?;
        self.folded = Some(text);
        Ok(())
    }
}

/// A function's share of a profile's samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopFunction {
    pub function: String,
    /// Share of the samples with it as the innermost frame.
    #[schemars(range(min = 0, max = 1))]
    pub self_share: f64,
    /// Share of the samples with it anywhere on the stack.
    #[schemars(range(min = 0, max = 1))]
    pub total_share: f64,
}
