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
//! JSON lines, one object each, written and flushed as they happen,
//! through gzip (`zcat FILE` shows them):
//!
//! ```text
//! {"header":{"format":"dbsweep-series/2","run":{…the record without its result…}}}
//! {"interval":{…one result.intervals entry, histograms included…}}
//! {"sample":{…one result.metrics.samples entry…}}
//! ```
//!
//! Intervals and samples interleave in the order they closed. An
//! interval's histograms keep their count, min, max and sum, and their
//! buckets as compact text (`compact.rs`: about 3 bytes a bucket, against
//! about 14 as `[low_ns, count]` pairs); gzip then takes out what repeats
//! from line to line (the keys, the samples' names). A day of one-second
//! intervals and metrics samples so takes tens of megabytes, not hundreds.
//!
//! Each line is flushed with a sync flush: the stream up to it
//! decompresses whole without the gzip trailer, which only a finished
//! file has. A line cut short (the process was killed while writing it)
//! ends the file for a reader; every line before it is whole.
//!
//! Format `dbsweep-series/1` (plain JSON lines, buckets as pairs) is read
//! as well.

use std::borrow::Cow;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What a series holds, and how its lines in a series file are told apart
/// and read (the record's intervals and samples: `spool.rs`).
pub trait Spooled: Clone + Serialize + DeserializeOwned {
    /// How its lines begin: serde_json writes the tag first, so a reader
    /// skips the other kinds' lines without parsing them.
    const PREFIX: &'static str;
    /// One of its lines, parsed.
    fn parse(line: &str) -> Result<Self, String>;
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
        Ok(text(&self.path)?
            .split(b'\n')
            .map_while(|l| l.ok().and_then(|b| String::from_utf8(b).ok())))
    }
}

/// A series file's text: its gzip stream decompressed (format /2), or its
/// plain lines (format /1), told apart by gzip's magic bytes.
pub(super) fn text(path: &Path) -> std::io::Result<Box<dyn BufRead + Send>> {
    let mut file = BufReader::new(File::open(path)?);
    if file.fill_buf()?.starts_with(&[0x1f, 0x8b]) {
        Ok(Box::new(BufReader::new(flate2::bufread::GzDecoder::new(
            file,
        ))))
    } else {
        Ok(Box::new(file))
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
                    Ok(lines) => {
                        Box::new(lines.filter(|l| l.starts_with(T::PREFIX)).take(*len).map(
                            move |l| {
                                T::parse(&l)
                                    .map(Cow::Owned)
                                    .map_err(|e| format!("{path}: {e}"))
                            },
                        ))
                    }
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
