//! The series file's lines: its header (the record's parts known when a
//! run starts), its intervals and metrics samples; writing them as they
//! close ([`SeriesWriter`]) and reading a whole file back ([`read_file`]).
//! The format is in `series.rs`, whose [`Series`] reads them lazily.

use std::fs::File;
use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

use flate2::write::GzEncoder;
use serde::{Deserialize, Serialize};

use super::compact;
use super::histogram::Histogram;
use super::metrics::Sample;
use super::outcome::Interval;
use super::run::{Machine, Random, Settings, TargetInfo, Tool, WorkloadInfo};
use super::series::{self, Series, SeriesFile, Spooled};

/// The series file's format and version (its header's `format`).
pub const SERIES_FORMAT: &str = "dbsweep-series/2";

/// Every format this version reads: `/1` (plain JSON lines, histogram
/// buckets as pairs) and [`SERIES_FORMAT`].
pub const SERIES_READABLE: [&str; 2] = ["dbsweep-series/1", SERIES_FORMAT];

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

/// One line of a series file, read.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Line {
    Header(Box<Header>),
    Interval(Box<IntervalLine>),
    Sample(Box<Sample>),
}

/// An interval as a series file's line (and the results store's row)
/// holds it: the record's, its histograms' buckets as compact text
/// (`compact.rs`, format /2) — or, read from format /1, as pairs.
#[derive(Serialize, Deserialize)]
struct IntervalLine {
    /// Every field but the histograms (`None` here).
    #[serde(flatten)]
    interval: Interval,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    histogram: Option<LineHistogram>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lag_histogram: Option<LineHistogram>,
}

/// [`Histogram`] with its buckets in either form.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LineHistogram {
    count: u64,
    min: Option<u64>,
    max: Option<u64>,
    sum: u128,
    buckets: Buckets,
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Buckets {
    Text(String),
    Pairs(Vec<[u64; 2]>),
}

impl IntervalLine {
    fn new(i: &Interval) -> IntervalLine {
        let compact = |h: &Option<Histogram>| {
            h.as_ref().map(|h| LineHistogram {
                count: h.count,
                min: h.min,
                max: h.max,
                sum: h.sum,
                buckets: Buckets::Text(compact::encode(&h.buckets)),
            })
        };
        IntervalLine {
            histogram: compact(&i.histogram),
            lag_histogram: compact(&i.lag_histogram),
            interval: Interval {
                histogram: None,
                lag_histogram: None,
                ..i.clone()
            },
        }
    }

    fn into_interval(self) -> Result<Interval, String> {
        let full = |h: Option<LineHistogram>| -> Result<Option<Histogram>, String> {
            let Some(h) = h else { return Ok(None) };
            Ok(Some(Histogram {
                count: h.count,
                min: h.min,
                max: h.max,
                sum: h.sum,
                buckets: match h.buckets {
                    Buckets::Text(t) => compact::decode(&t)?,
                    Buckets::Pairs(p) => p,
                },
            }))
        };
        Ok(Interval {
            histogram: full(self.histogram)?,
            lag_histogram: full(self.lag_histogram)?,
            ..self.interval
        })
    }
}

/// `i` as one line of compact JSON, its histograms' buckets as compact
/// text: what the results store keeps of an interval.
pub fn interval_json(i: &Interval) -> serde_json::Result<String> {
    serde_json::to_string(&IntervalLine::new(i))
}

/// An interval from [`interval_json`]'s text, or from the record's form
/// (buckets as pairs).
pub fn interval_from_json(text: &str) -> Result<Interval, String> {
    serde_json::from_str::<IntervalLine>(text)
        .map_err(|e| e.to_string())?
        .into_interval()
}

impl Spooled for Interval {
    const PREFIX: &'static str = "{\"interval\":";
    fn parse(line: &str) -> Result<Self, String> {
        match serde_json::from_str::<Line>(line).map_err(|e| e.to_string())? {
            Line::Interval(i) => i.into_interval(),
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
    let reader =
        series::text(path).with_context(|| format!("Could not open '{}'", path.display()))?;
    let mut lines = reader.split(b'\n');
    let first = lines
        .next()
        .transpose()?
        .with_context(|| format!("'{}' is empty", path.display()))?;
    let header = match serde_json::from_slice::<Line>(&first) {
        Ok(Line::Header(h)) if SERIES_READABLE.contains(&h.format.as_str()) => *h,
        Ok(Line::Header(h)) => anyhow::bail!(
            "'{}' is a series file of format '{}'; this dbsweep reads {}",
            path.display(),
            h.format,
            SERIES_READABLE.join(" and ")
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
            Ok(Line::Interval(i)) => match i.into_interval() {
                Ok(i) => intervals.push(i),
                Err(_) => break,
            },
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
    Interval(&'a IntervalLine),
    Sample(&'a Sample),
}

/// Appends a run's series to its file as each entry closes; shared by the
/// threads that make them (the engine's timekeeper its intervals, the
/// sampler its samples). The lines go through gzip, each flushed (a sync
/// flush: the stream so far decompresses whole) as it is written, so a
/// killed run leaves every closed entry readable.
///
/// Writing never fails the run: the first error stops the file there, and
/// [`SeriesWriter::error`] says what the series lacks and why.
pub struct SeriesWriter {
    file: Arc<SeriesFile>,
    out: std::sync::Mutex<Writing>,
}

struct Writing {
    w: Option<GzEncoder<File>>,
    intervals: usize,
    samples: usize,
    error: Option<String>,
}

impl SeriesWriter {
    /// Creates (or truncates) `file` and writes its header.
    pub fn create(file: Arc<SeriesFile>, header: &Header) -> std::io::Result<SeriesWriter> {
        let w = GzEncoder::new(File::create(file.path())?, flate2::Compression::default());
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
        if self.write(&LineRef::Interval(&IntervalLine::new(i))) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Run;

    fn interval() -> Interval {
        let mut i = Run::sample().result.intervals.to_vec().remove(0);
        i.histogram = Some(Histogram {
            count: 4,
            min: Some(67_108_864),
            max: Some(67_305_500),
            // Above u64: the sum is a u128 and stays exact.
            sum: u128::from(u64::MAX) + 7,
            buckets: vec![[67_108_864, 1], [67_174_400, 1], [67_305_472, 2]],
        });
        i.lag_histogram = Some(Histogram {
            count: 0,
            min: None,
            max: None,
            sum: 0,
            buckets: vec![],
        });
        i.offered_per_s = Some(99.5);
        i.queue = Some(3);
        i
    }

    #[test]
    fn an_interval_line_keeps_its_buckets_as_compact_text_and_reads_back_exactly() {
        let i = interval();
        let text = interval_json(&i).unwrap();
        assert!(text.contains(r#""buckets":"67108864,1,2x2""#), "{text}");
        assert!(text.contains(r#""sum":18446744073709551622"#), "{text}");
        assert_eq!(interval_from_json(&text).unwrap(), i);
        // The record's own form (buckets as pairs) reads too: format /1
        // lines, and the store's rows of before.
        let record = serde_json::to_string(&i).unwrap();
        assert!(record.contains("[[67108864,1],"), "{record}");
        assert_eq!(interval_from_json(&record).unwrap(), i);
        // As a line of the file.
        let line = format!("{{\"interval\":{text}}}");
        assert_eq!(<Interval as Spooled>::parse(&line).unwrap(), i);
        // Buckets that are not compact text are refused, naming them.
        let bad = text.replace("67108864,1,2x2", "67108864,1,two");
        let e = interval_from_json(&bad).unwrap_err();
        assert!(e.contains("'two'"), "{e}");
    }

    #[test]
    fn a_series_file_of_format_1_still_reads() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/series/v1.series.jsonl");
        let (header, intervals, samples) = read_file(&path).unwrap();
        assert_eq!(header.format, "dbsweep-series/1");
        assert!(intervals.len() >= 2, "{} intervals", intervals.len());
        assert!(!samples.is_empty());
        // Every interval's histogram is the file's pairs, as written.
        let text = std::fs::read_to_string(&path).unwrap();
        let written: Vec<serde_json::Value> = text
            .lines()
            .filter(|l| l.starts_with("{\"interval\":"))
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        for (i, w) in intervals.iter().zip(&written) {
            let pairs: Vec<[u64; 2]> =
                serde_json::from_value(w["interval"]["histogram"]["buckets"].clone()).unwrap();
            assert_eq!(i.histogram.as_ref().unwrap().buckets, pairs);
            assert!(!pairs.is_empty());
        }
        // And lazily, as a record's series.
        let file = SeriesFile::new(path, false);
        let lazy: Series<Interval> = Series::in_file(file, intervals.len());
        assert_eq!(lazy.to_vec(), intervals);
    }
}
