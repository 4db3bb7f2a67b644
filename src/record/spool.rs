//! The series file's lines: its header (the record's parts known when a
//! run starts), its intervals and metrics samples; writing them as they
//! close ([`SeriesWriter`]) and reading a whole file back ([`read_file`]).
//! The format is in `series.rs`, whose [`Series`] reads them lazily.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::metrics::Sample;
use super::outcome::Interval;
use super::run::{Machine, Random, Settings, TargetInfo, Tool, WorkloadInfo};
use super::series::{Series, SeriesFile, Spooled};

/// The series file's format and version (its header's `format`).
pub const SERIES_FORMAT: &str = "dbsweep-series/1";

/// What a series file says about its run before the run has a result: the
/// run document's parts that are known when it starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// [`SERIES_FORMAT`].
    pub format: String,
    pub tool: Tool,
    pub started_unix_s: u64,
    pub workload: WorkloadInfo,
    pub target: TargetInfo,
    pub random: Random,
    pub run: Settings,
    pub machine: Machine,
}

/// One line of a series file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Line {
    Header(Box<Header>),
    Interval(Box<Interval>),
    Sample(Box<Sample>),
}

impl Spooled for Interval {
    const PREFIX: &'static str = "{\"interval\":";
    fn parse(line: &str) -> Result<Self, String> {
        match serde_json::from_str::<Line>(line).map_err(|e| e.to_string())? {
            Line::Interval(i) => Ok(*i),
            _ => Err("a line of another kind".into()),
        }
    }
}

impl Spooled for Sample {
    const PREFIX: &'static str = "{\"sample\":";
    fn parse(line: &str) -> Result<Self, String> {
        match serde_json::from_str::<Line>(line).map_err(|e| e.to_string())? {
            Line::Sample(s) => Ok(*s),
            _ => Err("a line of another kind".into()),
        }
    }
}

/// Reads a series file whole: its header, intervals and samples, up to
/// the first line that cannot be read (where a killed run stopped
/// writing). Fails when the file cannot be opened or does not begin with
/// a header of a readable format.
pub fn read_file(path: &Path) -> anyhow::Result<(Header, Vec<Interval>, Vec<Sample>)> {
    use anyhow::Context;
    let reader = BufReader::new(
        File::open(path).with_context(|| format!("Could not open '{}'", path.display()))?,
    );
    let mut lines = reader.split(b'\n');
    let first = lines
        .next()
        .transpose()?
        .with_context(|| format!("'{}' is empty", path.display()))?;
    let header = match serde_json::from_slice::<Line>(&first) {
        Ok(Line::Header(h)) if h.format == SERIES_FORMAT => *h,
        Ok(Line::Header(h)) => anyhow::bail!(
            "'{}' is a series file of format '{}'; this dbsweep reads {SERIES_FORMAT}",
            path.display(),
            h.format
        ),
        _ => anyhow::bail!(
            "'{}' is not a dbsweep series file (its first line is not a {SERIES_FORMAT} header)",
            path.display()
        ),
    };
    let mut intervals = Vec::new();
    let mut samples = Vec::new();
    for line in lines {
        let Ok(bytes) = line else { break };
        match serde_json::from_slice::<Line>(&bytes) {
            Ok(Line::Interval(i)) => intervals.push(*i),
            Ok(Line::Sample(s)) => samples.push(*s),
            Ok(Line::Header(_)) | Err(_) => break,
        }
    }
    Ok((header, intervals, samples))
}

/// One line to write, borrowed.
#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum LineRef<'a> {
    Header(&'a Header),
    Interval(&'a Interval),
    Sample(&'a Sample),
}

/// Appends a run's series to its file as each entry closes; shared by the
/// threads that make them (the engine's coordinator its intervals, the
/// sampler its samples). Each line is flushed as it is written, so a
/// killed run leaves every closed entry readable.
///
/// Writing never fails the run: the first error stops the file there, and
/// [`SeriesWriter::error`] says what the series lacks and why.
pub struct SeriesWriter {
    file: Arc<SeriesFile>,
    out: std::sync::Mutex<Writing>,
}

struct Writing {
    w: Option<std::io::BufWriter<File>>,
    intervals: usize,
    samples: usize,
    error: Option<String>,
}

impl SeriesWriter {
    /// Creates (or truncates) `file` and writes its header.
    pub fn create(file: Arc<SeriesFile>, header: &Header) -> std::io::Result<SeriesWriter> {
        let w = std::io::BufWriter::new(File::create(file.path())?);
        let writer = SeriesWriter {
            file,
            out: std::sync::Mutex::new(Writing {
                w: Some(w),
                intervals: 0,
                samples: 0,
                error: None,
            }),
        };
        writer.write(&LineRef::Header(header));
        match writer.error() {
            Some(e) => Err(std::io::Error::other(e)),
            None => Ok(writer),
        }
    }

    pub fn file(&self) -> &Arc<SeriesFile> {
        &self.file
    }

    /// Appends one interval.
    pub fn interval(&self, i: &Interval) {
        if self.write(&LineRef::Interval(i)) {
            self.out.lock().unwrap().intervals += 1;
        }
    }

    /// Appends one metrics sample.
    pub fn sample(&self, s: &Sample) {
        if self.write(&LineRef::Sample(s)) {
            self.out.lock().unwrap().samples += 1;
        }
    }

    /// The intervals written so far, read back from the file.
    pub fn intervals(&self) -> Series<Interval> {
        Series::in_file(self.file.clone(), self.out.lock().unwrap().intervals)
    }

    /// The samples written so far, read back from the file.
    pub fn samples(&self) -> Series<Sample> {
        Series::in_file(self.file.clone(), self.out.lock().unwrap().samples)
    }

    /// Why the file stopped short, if it did.
    pub fn error(&self) -> Option<String> {
        self.out.lock().unwrap().error.clone()
    }

    /// Writes one line and flushes it; false if it is not in the file.
    fn write(&self, line: &LineRef<'_>) -> bool {
        use std::io::Write;
        let mut text = match serde_json::to_vec(line) {
            Ok(t) => t,
            Err(e) => {
                self.fail(e.to_string());
                return false;
            }
        };
        text.push(b'\n');
        let mut out = self.out.lock().unwrap();
        let Some(w) = out.w.as_mut() else {
            return false;
        };
        if let Err(e) = w.write_all(&text).and_then(|_| w.flush()) {
            out.w = None;
            out.error = Some(format!(
                "could not write '{}': {e}",
                self.file.path().display()
            ));
            return false;
        }
        true
    }

    fn fail(&self, why: String) {
        let mut out = self.out.lock().unwrap();
        out.w = None;
        out.error.get_or_insert(why);
    }
}
