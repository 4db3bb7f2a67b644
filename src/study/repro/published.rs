//! Published figures as data: another source's results (a seed study's
//! tables) read from CSV, to be shown beside a study's own — never mixed
//! into its analysis — and compared with it in shape.
//!
//! One value per row, with a header naming the columns (any order):
//!
//! | column | |
//! |---|---|
//! | `series` | the published series' name, e.g. `MySQL 5.0.7, InnoDB` (required) |
//! | `metric` | one of [`METRICS`] (required) |
//! | `value` | a number (required) |
//! | `clients` | the client (thread, connection) count |
//! | `users` | emulated users (DBT-1's EUs) |
//! | `cpus` | the CPU configuration, a label (`1CPU`, `4CPU HT`); list them in rising order |
//! | `workload` | the workload or test, matched with the study's workload labels |
//! | `variant` | anything else that tells rows apart |
//! | `unit`, `source` | free text: where the number comes from |
//!
//! A problem is reported with the file, line and column it is at.

use std::collections::BTreeSet;

/// The metrics a reference may give.
pub const METRICS: [&str; 10] = [
    "tps",
    "qps",
    "bts",
    "deadlocks_per_s",
    "avg_ms",
    "p95_ms",
    "max_ms",
    "cpu_busy_pct",
    "cpu_set_busy_pct",
    "semaphore_os_waits_per_txn",
];

/// One published value.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RefPoint {
    pub series: String,
    pub metric: String,
    pub value: f64,
    pub clients: Option<u32>,
    pub users: Option<u32>,
    pub cpus: Option<String>,
    pub workload: Option<String>,
    pub variant: Option<String>,
    pub unit: Option<String>,
    pub source: Option<String>,
}

impl RefPoint {
    /// The point's position on the load axis: clients, else users.
    pub fn x(&self) -> Option<u32> {
        self.clients.or(self.users)
    }
}

/// A reference file's values, in file order.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RefData {
    /// The file as named (for messages and labels).
    pub file: String,
    pub points: Vec<RefPoint>,
}

impl RefData {
    /// The series names, in order of first appearance.
    pub fn series(&self) -> Vec<&str> {
        let mut seen = BTreeSet::new();
        self.points
            .iter()
            .map(|p| p.series.as_str())
            .filter(|s| seen.insert(*s))
            .collect()
    }

    /// The CPU configurations, in order of first appearance (rising).
    pub fn cpus(&self) -> Vec<&str> {
        let mut seen = BTreeSet::new();
        self.points
            .iter()
            .filter_map(|p| p.cpus.as_deref())
            .filter(|s| seen.insert(*s))
            .collect()
    }

    /// The metrics present.
    pub fn metrics(&self) -> BTreeSet<&str> {
        self.points.iter().map(|p| p.metric.as_str()).collect()
    }
}

const COLUMNS: [&str; 10] = [
    "series", "metric", "value", "clients", "users", "cpus", "workload", "variant", "unit",
    "source",
];

/// Parses a reference CSV; `file` names it in messages
/// (`FILE:LINE:COLUMN: problem`).
pub fn parse(file: &str, text: &str) -> Result<RefData, String> {
    let mut r = csv::ReaderBuilder::new()
        .flexible(true)
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_reader(text.as_bytes());
    let at = |line: u64, col: usize| format!("{file}:{line}:{col}");
    let header = r
        .headers()
        .map_err(|e| format!("{file}:1:1: not CSV: {e}"))?
        .clone();
    let header_line = header.position().map_or(1, |p| p.line()).max(1);
    let mut index = [None; COLUMNS.len()];
    let mut col = 1;
    for (i, h) in header.iter().enumerate() {
        match COLUMNS.iter().position(|c| *c == h) {
            Some(k) if index[k].is_some() => {
                return Err(format!(
                    "{}: column '{h}' appears twice",
                    at(header_line, col)
                ))
            }
            Some(k) => index[k] = Some(i),
            None => {
                return Err(format!(
                    "{}: unknown column '{h}': the columns are {}",
                    at(header_line, col),
                    COLUMNS.join(", ")
                ))
            }
        }
        col += h.chars().count() + 1;
    }
    for (k, name) in COLUMNS.iter().enumerate().take(3) {
        if index[k].is_none() {
            return Err(format!(
                "{}: no '{name}' column: a reference needs series, metric and value",
                at(header_line, 1)
            ));
        }
    }
    let mut points = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            format!("{}: {e}", at(line, 1))
        })?;
        let line = rec.position().map_or(0, |p| p.line());
        // The column of field i: its start in the line.
        let column = |i: usize| -> usize {
            1 + (0..i)
                .map(|j| rec.get(j).map_or(0, |f| f.chars().count() + 1))
                .sum::<usize>()
        };
        let get = |k: usize| -> Option<(&str, usize)> {
            let i = index[k]?;
            rec.get(i).filter(|v| !v.is_empty()).map(|v| (v, column(i)))
        };
        let text = |k: usize| get(k).map(|(v, _)| v.to_string());
        let count = |k: usize| -> Result<Option<u32>, String> {
            match get(k) {
                None => Ok(None),
                Some((v, c)) => v.parse::<u32>().map(Some).map_err(|_| {
                    format!(
                        "{}: {} '{v}' is not a whole number",
                        at(line, c),
                        COLUMNS[k]
                    )
                }),
            }
        };
        let Some((series, _)) = get(0) else {
            return Err(format!("{}: the row has no series", at(line, 1)));
        };
        let (metric, mcol) =
            get(1).ok_or_else(|| format!("{}: the row has no metric", at(line, 1)))?;
        if !METRICS.contains(&metric) {
            return Err(format!(
                "{}: unknown metric '{metric}': expected one of {}",
                at(line, mcol),
                METRICS.join(", ")
            ));
        }
        let (value, vcol) =
            get(2).ok_or_else(|| format!("{}: the row has no value", at(line, 1)))?;
        let value = value
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("{}: value '{value}' is not a number", at(line, vcol)))?;
        let point = RefPoint {
            series: series.to_string(),
            metric: metric.to_string(),
            value,
            clients: count(3)?,
            users: count(4)?,
            cpus: text(5),
            workload: text(6),
            variant: text(7),
            unit: text(8),
            source: text(9),
        };
        if point.x().is_none() && point.cpus.is_none() {
            return Err(format!(
                "{}: the row has neither clients, users nor cpus: nothing to place it on",
                at(line, 1)
            ));
        }
        points.push(point);
    }
    if points.is_empty() {
        return Err(format!("{file}: no rows"));
    }
    Ok(RefData {
        file: file.to_string(),
        points,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_read_with_their_axes() {
        let text = "series,workload,cpus,clients,metric,value,unit,source\n\
                    \"MySQL 5.0.7, InnoDB\",special,4CPU HT,1,tps,305.31,tx/s,seed 002\n\
                    # a comment\n\
                    PostgreSQL 8,special,4CPU HT,1,tps,248.59,,\n";
        let d = parse("r.csv", text).unwrap();
        assert_eq!(d.points.len(), 2);
        assert_eq!(d.points[0].series, "MySQL 5.0.7, InnoDB");
        assert_eq!(d.points[0].clients, Some(1));
        assert_eq!(d.points[1].unit, None);
        assert_eq!(d.series(), ["MySQL 5.0.7, InnoDB", "PostgreSQL 8"]);
        assert_eq!(d.cpus(), ["4CPU HT"]);
    }

    #[test]
    fn problems_name_file_line_and_column() {
        for (text, want) in [
            (
                "series,metric,value,clients\nA,tps,12x,1\n",
                "r.csv:2:7: value '12x' is not a number",
            ),
            (
                "series,metric,value,clients\nA,tps,12,one\n",
                "r.csv:2:10: clients 'one' is not a whole number",
            ),
            (
                "series,metric,value,clients\nA,tpm,12,1\n",
                "r.csv:2:3: unknown metric 'tpm'",
            ),
            (
                "series,metric,value,colour\n",
                "r.csv:1:21: unknown column 'colour'",
            ),
            (
                "series,value,clients\nA,1,1\n",
                "r.csv:1:1: no 'metric' column",
            ),
            (
                "series,metric,value\nA,tps,1\n",
                "r.csv:2:1: the row has neither clients",
            ),
            ("series,metric,value,clients\n", "r.csv: no rows"),
        ] {
            let e = parse("r.csv", text).unwrap_err();
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
    }
}
