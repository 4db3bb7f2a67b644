//! Connection targets as URLs: `sqlite://PATH` (and the hidden `fake://`).
//!
//! Parsing is strict: a malformed URL is a usage error naming the URL and the
//! form that was expected.

use std::path::PathBuf;
use std::time::Duration;

use super::fake::FakeScript;

/// Where to connect. `display` is safe to print and store (no password).
#[derive(Debug, Clone)]
pub struct Target {
    pub display: String,
    pub kind: TargetKind,
}

#[derive(Debug, Clone)]
pub enum TargetKind {
    /// `pragmas` come from the URL's query (`sqlite://x.db?synchronous=full`)
    /// and are applied on every connection, like a server's settings.
    Sqlite {
        path: PathBuf,
        pragmas: Vec<(String, String)>,
        /// How transactions start: `deferred` (SQLite's default, what a plain
        /// BEGIN does), `immediate` or `exclusive` (`?begin=immediate`).
        begin: &'static str,
    },
    Fake(FakeScript),
}

impl Target {
    pub fn sqlite(path: PathBuf) -> Target {
        Target {
            display: format!("sqlite://{}", path.display()),
            kind: TargetKind::Sqlite {
                path,
                pragmas: Vec::new(),
                begin: "deferred",
            },
        }
    }

    pub fn dialect(&self) -> super::Dialect {
        match self.kind {
            TargetKind::Sqlite { .. } | TargetKind::Fake(_) => super::Dialect::Sqlite,
        }
    }

    /// Parses a target URL.
    pub fn parse(url: &str) -> Result<Target, String> {
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(format!(
                "malformed database URL '{url}': expected SCHEME://…, e.g. sqlite://bench.db"
            ));
        };
        match scheme {
            "sqlite" | "sqlite3" => {
                if rest.is_empty() {
                    return Err(format!(
                        "malformed database URL '{url}': no file path; use sqlite://PATH, e.g. sqlite://bench.db or sqlite:///tmp/bench.db"
                    ));
                }
                let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
                let mut target = Target::sqlite(PathBuf::from(path));
                if let TargetKind::Sqlite { pragmas, begin, .. } = &mut target.kind {
                    *pragmas = parse_pragmas(query).map_err(|e| format!("{url}: {e}"))?;
                    if let Some(i) = pragmas.iter().position(|(k, _)| k == "begin") {
                        let (_, mode) = pragmas.remove(i);
                        *begin = match mode.to_ascii_lowercase().as_str() {
                            "deferred" => "deferred",
                            "immediate" => "immediate",
                            "exclusive" => "exclusive",
                            _ => {
                                return Err(format!(
                                    "{url}: begin={mode} is not a transaction mode: use deferred, immediate or exclusive"
                                ))
                            }
                        };
                    }
                }
                target.display = url.to_string();
                Ok(target)
            }
            "fake" => Ok(Target {
                display: url.to_string(),
                kind: TargetKind::Fake(parse_fake(rest).map_err(|e| format!("{url}: {e}"))?),
            }),
            other => Err(format!(
                "unsupported database URL scheme '{other}' in '{url}': this build supports sqlite://PATH"
            )),
        }
    }
}

/// `name=value&…` pairs, each becoming `PRAGMA name=value`. Names and values
/// are restricted to identifier characters so nothing can be injected.
fn parse_pragmas(query: &str) -> Result<Vec<(String, String)>, String> {
    let ok = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| match pair.split_once('=') {
            Some((k, v)) if ok(k) && ok(v) => Ok((k.to_ascii_lowercase(), v.to_string())),
            _ => Err(format!(
                "bad SQLite setting '{pair}': expected PRAGMA name=value, e.g. ?synchronous=full"
            )),
        })
        .collect()
}

/// `fake://?latency=100us,2ms&error_every=10:deadlock&hang_after=50&rows=1`
fn parse_fake(rest: &str) -> Result<FakeScript, String> {
    let query = rest.trim_start_matches('/').trim_start_matches('?');
    let mut script = FakeScript::default();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| format!("fake option '{pair}' needs a value"))?;
        match k {
            "latency" => {
                script.latencies = v
                    .split(',')
                    .map(parse_duration)
                    .collect::<Result<Vec<_>, _>>()?;
            }
            "error_every" => {
                let (n, kind) = v
                    .split_once(':')
                    .ok_or_else(|| format!("error_every expects N:KIND, got '{v}'"))?;
                let n: u64 = n.parse().map_err(|_| format!("bad count '{n}'"))?;
                let kind = super::ErrorKind::from_name(kind)
                    .ok_or_else(|| format!("unknown error kind '{kind}'"))?;
                script.error_every = Some((n, kind));
            }
            "hang_after" => {
                script.hang_after = Some(v.parse().map_err(|_| format!("bad count '{v}'"))?)
            }
            "rows" => script.rows = v.parse().map_err(|_| format!("bad row count '{v}'"))?,
            _ => return Err(format!("unknown fake option '{k}'")),
        }
    }
    Ok(script)
}

/// Parses `250us`, `2ms`, `1s`, `500ns`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map(|i| s.split_at(i))
        .unwrap_or((s, "s"));
    let n: f64 = num
        .parse()
        .map_err(|_| format!("bad duration '{s}': expected e.g. 250us, 2ms, 1.5s"))?;
    let secs = match unit {
        "ns" => n / 1e9,
        "us" | "µs" => n / 1e6,
        "ms" => n / 1e3,
        "s" => n,
        _ => return Err(format!("bad duration unit in '{s}': use ns, us, ms or s")),
    };
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sqlite_paths() {
        let t = Target::parse("sqlite://bench.db").unwrap();
        assert!(
            matches!(t.kind, TargetKind::Sqlite { ref path, .. } if path == &PathBuf::from("bench.db"))
        );
        let t = Target::parse("sqlite:///tmp/x.db?synchronous=full&cache_size=-64000").unwrap();
        let TargetKind::Sqlite {
            path,
            pragmas,
            begin,
        } = t.kind
        else {
            panic!()
        };
        assert_eq!(begin, "deferred");
        assert_eq!(path, PathBuf::from("/tmp/x.db"));
        assert_eq!(
            pragmas,
            vec![
                ("synchronous".into(), "full".into()),
                ("cache_size".into(), "-64000".into())
            ]
        );
        assert!(Target::parse("sqlite://x.db?a=1;drop").is_err());
        let t = Target::parse("sqlite://x.db?begin=immediate").unwrap();
        assert!(
            matches!(t.kind, TargetKind::Sqlite { begin: "immediate", ref pragmas, .. } if pragmas.is_empty())
        );
        assert!(Target::parse("sqlite://x.db?begin=later").is_err());
    }

    #[test]
    fn rejects_malformed_urls() {
        assert!(Target::parse("bench.db")
            .unwrap_err()
            .contains("expected SCHEME://"));
        assert!(Target::parse("sqlite://")
            .unwrap_err()
            .contains("no file path"));
        assert!(Target::parse("oracle://x")
            .unwrap_err()
            .contains("unsupported"));
    }

    #[test]
    fn parses_fake_scripts() {
        let t =
            Target::parse("fake://?latency=100us,2ms&error_every=10:deadlock&hang_after=5&rows=3")
                .unwrap();
        let TargetKind::Fake(s) = t.kind else {
            panic!()
        };
        assert_eq!(
            s.latencies,
            vec![Duration::from_micros(100), Duration::from_millis(2)]
        );
        assert_eq!(
            s.error_every,
            Some((10, crate::driver::ErrorKind::Deadlock))
        );
        assert_eq!(s.hang_after, Some(5));
        assert_eq!(s.rows, 3);
        assert!(Target::parse("fake://?bogus=1").is_err());
    }

    #[test]
    fn parses_durations() {
        assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("3").unwrap(), Duration::from_secs(3));
        assert!(parse_duration("3 parsecs").is_err());
    }
}
