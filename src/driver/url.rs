//! Connection targets as URLs: `sqlite://PATH`,
//! `postgres://user:pass@host:port/db`, `mysql://user:pass@host:port/db`
//! (`?socket=/path` for a unix socket), and the hidden `fake://`.
//!
//! Parsing is strict: a malformed URL is a usage error naming the URL and the
//! form that was expected.

#[cfg(test)]
use std::path::Path;
use std::path::PathBuf;

use super::fake::FakeScript;

/// Where to connect. `display` is safe to print and store (no password).
/// Serialisable for a distributed run's workers, which connect where the
/// coordinator was told to (the password, if any, travels with it).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Target {
    pub display: String,
    pub kind: TargetKind,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum TargetKind {
    /// `pragmas` come from the URL's query (`sqlite://x.db?synchronous=full`)
    /// and are applied on every connection, like a server's settings.
    Sqlite {
        path: PathBuf,
        pragmas: Vec<(String, String)>,
        /// How every transaction starts when the URL says
        /// (`?begin=deferred|immediate|exclusive`); None: by what the
        /// transaction does — `immediate` for one that writes (writers queue
        /// on the busy handler instead of failing to upgrade their lock),
        /// `deferred` for a reading one (readers stay concurrent under WAL).
        #[serde(with = "begin_mode")]
        begin: BeginMode,
    },
    Postgres(ServerAddr),
    Mysql(ServerAddr),
    Fake(FakeScript),
}

/// Statement protocol: server-side prepared statements, or plain text with
/// literals formatted by the client (sysbench's `--db-ps-mode disable`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum PsMode {
    #[default]
    Prepared,
    Disable,
}

/// Where a PostgreSQL or MySQL/MariaDB server listens, and who to log in as.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ServerAddr {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: Option<String>,
    pub database: String,
    /// A unix socket: for MySQL the socket file; for PostgreSQL the socket
    /// file or the directory holding `.s.PGSQL.PORT`.
    pub socket: Option<PathBuf>,
    pub ps_mode: PsMode,
    /// TLS over TCP (never over a unix socket, as libpq and the mysql
    /// client): `sslmode` and its kin, or `ssl-mode` and its kin.
    #[serde(default)]
    pub tls: super::tls::TlsOptions,
}

/// SQLite's transaction mode: one of the URL's three names. Spelled as an
/// alias so that serde's derive does not take `&'static str` for a string
/// borrowed from the input (`begin_mode` reads it back as owned text).
pub type BeginMode = Option<&'static str>;

/// SQLite's `begin` mode as text, read back into one of the three static
/// names the URL parser gives (the field is `&'static str`).
mod begin_mode {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(mode: &super::BeginMode, s: S) -> Result<S::Ok, S::Error> {
        mode.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<super::BeginMode, D::Error> {
        let Some(mode) = Option::<String>::deserialize(d)? else {
            return Ok(None);
        };
        ["deferred", "immediate", "exclusive"]
            .into_iter()
            .find(|m| *m == mode)
            .map(Some)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown transaction mode {mode}")))
    }
}

impl ServerAddr {
    /// PostgreSQL's unix socket: `socket` itself if it is a file, or
    /// `.s.PGSQL.PORT` inside it if it is a directory (as libpq's
    /// `host=/dir`).
    pub fn postgres_socket(&self) -> Option<PathBuf> {
        let s = self.socket.as_ref()?;
        Some(if s.is_dir() {
            s.join(format!(".s.PGSQL.{}", self.port))
        } else {
            s.clone()
        })
    }

    /// `user@host:port` (or the socket), for messages.
    pub fn describe(&self) -> String {
        match &self.socket {
            Some(s) => format!("user '{}' at socket {}", self.user, s.display()),
            None => format!("user '{}' at {}:{}", self.user, self.host, self.port),
        }
    }
}

impl Target {
    /// File descriptors one connection holds, and what it is: an SQLite
    /// connection its database, WAL and shared-memory files; a server
    /// connection its socket, and on a thread of its own (not `on_loops`)
    /// the copy of it that the deadline's interrupter shuts down.
    pub fn descriptors_per_connection(&self, on_loops: bool) -> (u64, &'static str) {
        let socket = if on_loops { 1 } else { 2 };
        match self.kind {
            TargetKind::Sqlite { .. } => (3, "SQLite"),
            TargetKind::Postgres(_) => (socket, "PostgreSQL"),
            TargetKind::Mysql(_) => (socket, "MySQL"),
            TargetKind::Fake(_) => (0, "fake"),
        }
    }

    pub fn sqlite(path: PathBuf) -> Target {
        Target {
            display: format!("sqlite://{}", path.display()),
            kind: TargetKind::Sqlite {
                path,
                pragmas: Vec::new(),
                begin: None,
            },
        }
    }

    pub fn dialect(&self) -> super::Dialect {
        match self.kind {
            TargetKind::Sqlite { .. } | TargetKind::Fake(_) => super::Dialect::Sqlite,
            TargetKind::Postgres(_) => super::Dialect::Postgres,
            TargetKind::Mysql(_) => super::Dialect::Mysql,
        }
    }

    /// Sets the statement protocol (`--db-ps-mode`); no effect on SQLite.
    pub fn set_ps_mode(&mut self, mode: PsMode) {
        if let TargetKind::Postgres(a) | TargetKind::Mysql(a) = &mut self.kind {
            a.ps_mode = mode;
        }
    }

    /// Parses a target URL with `--db-ps-mode`: the URL's own ps_mode
    /// wins unless the option asks for text mode.
    pub fn parse_with(url: &str, mode: PsMode) -> Result<Target, String> {
        let mut t = Target::parse(url)?;
        if mode == PsMode::Disable {
            t.set_ps_mode(mode);
        }
        Ok(t)
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
                            "deferred" => Some("deferred"),
                            "immediate" => Some("immediate"),
                            "exclusive" => Some("exclusive"),
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
            "postgres" | "postgresql" => parse_server(url, 5432, "postgres").map(|(a, display)| Target {
                display,
                kind: TargetKind::Postgres(a),
            }),
            "mysql" | "mariadb" => parse_server(url, 3306, "mysql").map(|(a, display)| Target {
                display,
                kind: TargetKind::Mysql(a),
            }),
            other => Err(format!(
                "unsupported database URL scheme '{other}' in '{}': use sqlite://PATH, postgres://USER:PASS@HOST:PORT/DB or mysql://USER:PASS@HOST:PORT/DB",
                crate::util::secrets::redact_text(url)
            )),
        }
    }
}

/// Parses a server URL into its address and a printable form without the
/// password. Defaults: host 127.0.0.1, the engine's port, user and database
/// `sbtest` (sysbench's).
fn parse_server(
    raw: &str,
    default_port: u16,
    scheme: &str,
) -> Result<(ServerAddr, String), String> {
    let form = format!("{scheme}://USER:PASS@HOST:PORT/DB");
    // Messages name the URL without its password.
    let shown_raw = crate::util::secrets::redact_text(raw);
    let u = url::Url::parse(raw)
        .map_err(|e| format!("malformed database URL '{shown_raw}': {e}; expected {form}"))?;
    let decode = |s: &str| {
        url::form_urlencoded::parse(s.as_bytes())
            .next()
            .map(|(k, v)| {
                if v.is_empty() {
                    k.into_owned()
                } else {
                    format!("{k}={v}")
                }
            })
            .unwrap_or_default()
    };
    let host = u
        .host_str()
        .unwrap_or("")
        .trim_matches(['[', ']'])
        .to_string();
    let mut addr = ServerAddr {
        host: if host.is_empty() { "127.0.0.1".into() } else { host },
        port: u.port().unwrap_or(default_port),
        user: if u.username().is_empty() { "sbtest".into() } else { decode(u.username()) },
        password: u.password().map(decode),
        database: match u.path().trim_start_matches('/') {
            "" => "sbtest".into(),
            db if db.contains('/') => {
                return Err(format!("malformed database URL '{shown_raw}': database name '{db}' contains '/'; expected {form}"))
            }
            db => decode(db),
        },
        socket: None,
        ps_mode: PsMode::Prepared,
        tls: Default::default(),
    };
    let sources = super::passwords::Sources::process();
    if scheme != "mysql" {
        // libpq's environment, for what the URL does not say.
        addr.tls = super::tls::TlsOptions::pg_env(sources.env)?;
    }
    let mut defaults_file = None;
    let mut url_tls = Vec::new();
    for (k, v) in u.query_pairs() {
        let tls_key = if scheme == "mysql" {
            addr.tls.set_mysql(&k, &v)
        } else {
            addr.tls.set_pg(&k, &v)
        }
        .map_err(|e| format!("{shown_raw}: {e}"))?;
        if tls_key {
            url_tls.push((k.into_owned(), v.into_owned()));
            continue;
        }
        match k.as_ref() {
            "socket" | "host" if v.starts_with('/') => addr.socket = Some(PathBuf::from(v.as_ref())),
            "defaults-file" | "defaults_file" if scheme == "mysql" => {
                defaults_file = Some(PathBuf::from(v.as_ref()))
            }
            "ps_mode" | "db-ps-mode" => {
                addr.ps_mode = match v.as_ref() {
                    "auto" | "prepared" => PsMode::Prepared,
                    "disable" => PsMode::Disable,
                    _ => return Err(format!("{shown_raw}: ps_mode={v}: expected auto or disable")),
                }
            }
            _ => {
                return Err(format!(
                    "unknown parameter '{k}' in database URL '{shown_raw}': known are socket=/PATH, ps_mode=auto|disable, {}",
                    if scheme == "mysql" {
                        "ssl-mode, ssl-ca, ssl-cert, ssl-key, server-public-key-path, get-server-public-key and defaults-file=PATH"
                    } else {
                        "sslmode, sslrootcert, sslcert, sslkey, sslnegotiation and channel_binding"
                    }
                ))
            }
        }
    }
    if let Some(file) = defaults_file.as_deref().filter(|_| scheme == "mysql") {
        // The option file's [client] TLS options, then the URL's again:
        // the URL wins, as the command line over the file for mysql.
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("{shown_raw}: option file {}: {e}", file.display()))?;
        for (k, v) in super::passwords::option_file_client(&text) {
            addr.tls
                .set_mysql(&k, &v)
                .map_err(|e| format!("{shown_raw}: option file {}: {e}", file.display()))?;
        }
        for (k, v) in &url_tls {
            addr.tls
                .set_mysql(k, v)
                .map_err(|e| format!("{shown_raw}: {e}"))?;
        }
    }
    addr.tls.check().map_err(|e| format!("{shown_raw}: {e}"))?;
    // No password in the URL: the engines' own ways of giving one.
    if addr.password.is_none() {
        addr.password = if scheme == "mysql" {
            super::passwords::mysql(&sources, defaults_file.as_deref())
        } else {
            let host = if addr.socket.is_some() {
                "localhost"
            } else {
                addr.host.as_str()
            };
            super::passwords::postgres(&sources, host, addr.port, &addr.database, &addr.user)
        }
        .map_err(|e| format!("{shown_raw}: {e}"))?;
    }
    let mut shown = u.clone();
    if shown.password().is_some() {
        let _ = shown.set_password(Some("***"));
    }
    Ok((addr, shown.to_string()))
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

/// `fake://?latency=100us,2ms&error_every=10:deadlock&hang_after=50&rows=1&stall_at=2s:1s`
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
                    .map(crate::util::duration::parse)
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
            "stall_at" => {
                let (at, len) = v
                    .split_once(':')
                    .ok_or_else(|| format!("stall_at expects AT:LENGTH, got '{v}'"))?;
                script.stall = Some((
                    crate::util::duration::parse(at)?,
                    crate::util::duration::parse(len)?,
                ));
            }
            "drift" => {
                let (f, over) = v.split_once('/').ok_or_else(|| {
                    format!("drift expects FACTORx/DURATION, e.g. 2x/30s, got '{v}'")
                })?;
                let f: f64 = f
                    .trim_end_matches('x')
                    .parse()
                    .ok()
                    .filter(|f: &f64| f.is_finite() && *f > 0.0)
                    .ok_or_else(|| format!("bad drift factor '{f}': a positive number, e.g. 2x"))?;
                script.drift = Some((f, crate::util::duration::parse(over)?));
            }
            "collapse_at" => {
                script.collapse_at = Some(
                    v.parse()
                        .map_err(|_| format!("bad connection count '{v}'"))?,
                )
            }
            _ => return Err(format!("unknown fake option '{k}'")),
        }
    }
    Ok(script)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_threaded_server_connection_counts_its_interrupters_copy_of_the_socket() {
        let pg = Target::parse("postgres://u@127.0.0.1:5432/d").unwrap();
        assert_eq!(pg.descriptors_per_connection(false), (2, "PostgreSQL"));
        assert_eq!(pg.descriptors_per_connection(true), (1, "PostgreSQL"));
        let my = Target::parse("mysql://u@127.0.0.1:3306/d").unwrap();
        assert_eq!(my.descriptors_per_connection(false).0, 2);
        let lite = Target::sqlite("x.db".into());
        assert_eq!(lite.descriptors_per_connection(false).0, 3);
    }

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
        assert_eq!(begin, None, "by what each transaction does");
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
            matches!(t.kind, TargetKind::Sqlite { begin: Some("immediate"), ref pragmas, .. } if pragmas.is_empty())
        );
        assert!(Target::parse("sqlite://x.db?begin=later").is_err());
    }

    #[test]
    fn parses_server_urls() {
        let t = Target::parse("postgres://bob:s%40cret@db.example:6543/bench").unwrap();
        let TargetKind::Postgres(a) = &t.kind else {
            panic!()
        };
        assert_eq!(
            (
                a.host.as_str(),
                a.port,
                a.user.as_str(),
                a.password.as_deref(),
                a.database.as_str()
            ),
            ("db.example", 6543, "bob", Some("s@cret"), "bench")
        );
        assert!(
            !t.display.contains("s%40cret") && t.display.contains("***"),
            "{}",
            t.display
        );
        let t = Target::parse(
            "mysql://root@localhost/sb?socket=/run/mysqld/mysqld.sock&ps_mode=disable",
        )
        .unwrap();
        let TargetKind::Mysql(a) = &t.kind else {
            panic!()
        };
        assert_eq!(a.port, 3306);
        assert_eq!(a.password, None);
        assert_eq!(
            a.socket.as_deref(),
            Some(Path::new("/run/mysqld/mysqld.sock"))
        );
        assert_eq!(a.ps_mode, PsMode::Disable);
        let t = Target::parse("mariadb://127.0.0.1").unwrap();
        let TargetKind::Mysql(a) = &t.kind else {
            panic!()
        };
        assert_eq!((a.user.as_str(), a.database.as_str()), ("sbtest", "sbtest"));
        let t = Target::parse("postgres://h/db?sslmode=require&channel_binding=require").unwrap();
        let TargetKind::Postgres(a) = &t.kind else {
            panic!()
        };
        assert_eq!(a.tls.mode, crate::driver::tls::TlsMode::Require);
        assert!(Target::parse("postgres://h/db?sslmode=sometimes")
            .unwrap_err()
            .contains("sslmode=sometimes: expected disable"));
        assert!(Target::parse("postgres://h/db?ssl-mode=REQUIRED")
            .unwrap_err()
            .contains("unknown parameter 'ssl-mode'"));
        assert!(Target::parse("mysql://h/db?sslmode=require")
            .unwrap_err()
            .contains("known are socket=/PATH, ps_mode=auto|disable, ssl-mode"));
        assert!(Target::parse("postgres://h:notaport/db")
            .unwrap_err()
            .contains("malformed"));
    }

    #[test]
    fn the_option_files_tls_options_yield_to_the_urls() {
        let t = tempfile::tempdir().unwrap();
        let ca = t.path().join("ca.pem");
        std::fs::write(&ca, "").unwrap();
        let cnf = t.path().join("my.cnf");
        let text = format!(
            "[client]\nssl-mode = VERIFY_CA\nssl_ca = \"{}\"\n",
            ca.display()
        );
        std::fs::write(&cnf, text).unwrap();
        let url = format!("mysql://u:p@h/d?defaults-file={}", cnf.display());
        let TargetKind::Mysql(a) = Target::parse(&url).unwrap().kind else {
            panic!()
        };
        assert_eq!(
            (a.tls.mode, a.tls.root_cert.as_deref()),
            (crate::driver::tls::TlsMode::VerifyCa, Some(ca.as_path()))
        );
        let TargetKind::Mysql(a) = Target::parse(&format!("{url}&ssl-mode=DISABLED"))
            .unwrap()
            .kind
        else {
            panic!()
        };
        assert_eq!(a.tls.mode, crate::driver::tls::TlsMode::Disable);
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
}
