//! A run's time series — its intervals and its metrics samples — as the
//! record holds them: in memory (a record read back, a merge of shards, a
//! test), or in the *series file* the run appended each one to as it
//! closed, read back one line at a time whenever the series is walked or
//! written out. A six-hour run's record so never holds six hours of
//! intervals in memory, and a run killed in its fourth hour leaves the
//! intervals it had closed on disk. Both forms serialize to the same JSON
//! array, so the run document does not know which one it came from.
//!
//! # The series file
//!
//! JSON lines, one object each, written and flushed as they happen:
//!
//! ```text
//! {"header":{"format":"dbsweep-series/1","run":{…the record without its result…}}}
//! {"interval":{…one result.intervals entry, histograms included…}}
//! {"sample":{…one result.metrics.samples entry…}}
//! ```
//!
//! Intervals and samples interleave in the order they closed. A line cut
//! short (the process was killed while writing it) ends the file for a
//! reader; every line before it is whole.

use std::borrow::Cow;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::metrics::Sample;
use super::outcome::Interval;
use super::run::{Machine, Random, Settings, TargetInfo, Tool, WorkloadInfo};

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

/// What a series holds, and how its lines in a series file are told apart.
pub trait Spooled: Clone + Serialize + DeserializeOwned {
    /// How its lines begin: serde_json writes the tag first, so a reader
    /// skips the other kinds' lines without parsing them.
    const PREFIX: &'static str;
    fn from_line(line: Line) -> Option<Self>;
}

impl Spooled for Interval {
    const PREFIX: &'static str = "{\"interval\":";
    fn from_line(line: Line) -> Option<Self> {
        match line {
            Line::Interval(i) => Some(*i),
            _ => None,
        }
    }
}

impl Spooled for Sample {
    const PREFIX: &'static str = "{\"sample\":";
    fn from_line(line: Line) -> Option<Self> {
        match line {
            Line::Sample(s) => Some(*s),
            _ => None,
        }
    }
}

/// A series file on disk, removed when the last series reading it is
/// dropped if it was only ever a spool (a temporary file, or a sidecar
/// whose record has been written).
#[derive(Debug)]
pub struct SeriesFile {
    path: PathBuf,
    remove: std::sync::atomic::AtomicBool,
}

impl SeriesFile {
    /// A series file at `path`; `remove`: delete it once nothing reads it.
    pub fn new(path: PathBuf, remove: bool) -> Arc<SeriesFile> {
        Arc::new(SeriesFile {
            path,
            remove: std::sync::atomic::AtomicBool::new(remove),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Delete the file once nothing reads it (its record is safely
    /// written elsewhere), or keep it after all.
    pub fn remove_when_dropped(&self, remove: bool) {
        self.remove
            .store(remove, std::sync::atomic::Ordering::Relaxed);
    }

    /// Every whole line of the file, in order; reading stops at a line
    /// that cannot be read or parsed (a kill mid-write cuts the last one).
    pub fn lines(&self) -> std::io::Result<impl Iterator<Item = String>> {
        let reader = BufReader::new(File::open(&self.path)?);
        Ok(reader
            .split(b'\n')
            .map_while(|l| l.ok().and_then(|b| String::from_utf8(b).ok())))
    }
}

impl Drop for SeriesFile {
    fn drop(&mut self) {
        if self.remove.load(std::sync::atomic::Ordering::Relaxed) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A run's intervals or samples; see the module docs.
#[derive(Clone)]
pub struct Series<T> {
    repr: Repr<T>,
}

#[derive(Clone)]
enum Repr<T> {
    Memory(Vec<T>),
    File { file: Arc<SeriesFile>, len: usize },
}

impl<T> Default for Series<T> {
    fn default() -> Self {
        Series {
            repr: Repr::Memory(Vec::new()),
        }
    }
}

impl<T> From<Vec<T>> for Series<T> {
    fn from(v: Vec<T>) -> Self {
        Series {
            repr: Repr::Memory(v),
        }
    }
}

impl<T: Spooled> Series<T> {
    /// The `len` entries of kind `T` in `file`.
    pub fn in_file(file: Arc<SeriesFile>, len: usize) -> Series<T> {
        Series {
            repr: Repr::File { file, len },
        }
    }

    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Memory(v) => v.len(),
            Repr::File { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries in order: borrowed from memory, or read from the file
    /// one at a time. A file that can no longer be read yields what it
    /// still has (`try_iter` says why it stopped).
    pub fn iter(&self) -> Box<dyn Iterator<Item = Cow<'_, T>> + '_> {
        Box::new(self.try_iter().map_while(Result::ok))
    }

    /// As [`Series::iter`], with the reason a file's entry could not be read.
    pub fn try_iter(&self) -> Box<dyn Iterator<Item = Result<Cow<'_, T>, String>> + '_> {
        match &self.repr {
            Repr::Memory(v) => Box::new(v.iter().map(|t| Ok(Cow::Borrowed(t)))),
            Repr::File { file, len } => {
                let path = file.path().display().to_string();
                match file.lines() {
                    Ok(lines) => Box::new(
                        lines
                            .filter(|l| l.starts_with(T::PREFIX))
                            .take(*len)
                            .map(move |l| match serde_json::from_str::<Line>(&l) {
                                Ok(line) => T::from_line(line)
                                    .map(Cow::Owned)
                                    .ok_or_else(|| format!("{path}: a line of another kind")),
                                Err(e) => Err(format!("{path}: {e}")),
                            }),
                    ),
                    Err(e) => Box::new(std::iter::once(Err(format!("{path}: {e}")))),
                }
            }
        }
    }

    /// Every entry, in memory.
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().map(Cow::into_owned).collect()
    }

    /// The entries held in memory, to change in place; `None` for a series
    /// in a file (whose entries were complete when they were written).
    pub fn as_mut_slice(&mut self) -> Option<&mut [T]> {
        match &mut self.repr {
            Repr::Memory(v) => Some(v),
            Repr::File { .. } => None,
        }
    }

    /// The series file behind it, if it is in one.
    pub fn file(&self) -> Option<&Arc<SeriesFile>> {
        match &self.repr {
            Repr::Memory(_) => None,
            Repr::File { file, .. } => Some(file),
        }
    }

    /// Moves the entries into memory (a record about to be kept past the
    /// life of its series file).
    pub fn load(&mut self) {
        if let Repr::File { .. } = self.repr {
            self.repr = Repr::Memory(self.to_vec());
        }
    }
}

impl<T: Spooled + fmt::Debug> fmt::Debug for Series<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Memory(v) => v.fmt(f),
            Repr::File { file, len } => {
                write!(f, "Series({len} in {})", file.path().display())
            }
        }
    }
}

impl<T: Spooled + PartialEq> PartialEq for Series<T> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().zip(other.iter()).all(|(a, b)| a == b)
    }
}

impl<T: Spooled> Serialize for Series<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut seq = s.serialize_seq(Some(self.len()))?;
        let mut n = 0;
        for t in self.try_iter() {
            seq.serialize_element(&*t.map_err(S::Error::custom)?)?;
            n += 1;
        }
        if n != self.len() {
            let path = self.file().map(|f| f.path().display().to_string());
            return Err(S::Error::custom(format!(
                "{}: {n} of {} entries could be read back",
                path.unwrap_or_default(),
                self.len()
            )));
        }
        seq.end()
    }
}

impl<'de, T: Spooled> Deserialize<'de> for Series<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<T>::deserialize(d).map(Series::from)
    }
}

impl<T: JsonSchema> JsonSchema for Series<T> {
    fn schema_name() -> Cow<'static, str> {
        Vec::<T>::schema_name()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Vec::<T>::json_schema(generator)
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
