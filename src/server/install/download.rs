//! Fetching from the repository: small texts (metadata, checksums) and the
//! jar itself, streamed into a file with a progress bar and hashed on the
//! way, then checked against the strongest checksum the repository
//! publishes beside it (`.sha512`, `.sha256`, then `.sha1`).
//!
//! Every failure is the user's to fix (a network that does not reach the
//! repository, a download cut short, a file that is not what was
//! published), so each is a [`ServerError::BadInput`] naming the URL and
//! the way around it: `--from FILE`.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use sha1::Sha1;
use sha2::{Digest, Sha256, Sha512};
use ureq::tls::{RootCerts, TlsConfig};

use crate::server::ServerError;
use crate::util::progress::ByteBar;

/// How long connecting, and then each silence of the server, may last
/// before the download is given up: a stalled repository is reported
/// instead of hanging the command.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);
const READ_TIMEOUT: Duration = Duration::from_secs(60);
/// How long one body (a jar of up to ~100 MB) may take to arrive.
const BODY_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// The advice every network failure ends with.
pub fn offline_advice(jar_url: &str) -> String {
    format!(
        "download {jar_url} on a machine that reaches it and install from the file with `--from FILE`"
    )
}

fn agent() -> &'static ureq::Agent {
    static AGENT: OnceLock<ureq::Agent> = OnceLock::new();
    AGENT.get_or_init(|| {
        ureq::Agent::config_builder()
            .timeout_connect(Some(CONNECT_TIMEOUT))
            .timeout_recv_response(Some(READ_TIMEOUT))
            // A whole build, even over a slow link; a stalled one ends.
            .timeout_recv_body(Some(BODY_TIMEOUT))
            // Statuses are answers here (a 404 checksum file means "not
            // published"), not errors.
            .http_status_as_error(false)
            // The system's trust store: a TLS-inspecting proxy's CA that the
            // machine trusts is trusted here too.
            .tls_config(
                TlsConfig::builder()
                    .root_certs(RootCerts::PlatformVerifier)
                    .build(),
            )
            .build()
            .into()
    })
}

/// What a GET answered.
enum Got {
    Found(ureq::http::Response<ureq::Body>),
    NotFound,
}

fn get(url: &str, advice: &str) -> Result<Got, ServerError> {
    let resp = agent().get(url).call().map_err(|e| {
        ServerError::BadInput(format!(
            "cannot reach {url} ({e}): check the network, or {advice}"
        ))
    })?;
    match resp.status().as_u16() {
        200 => Ok(Got::Found(resp)),
        404 => Ok(Got::NotFound),
        s => Err(ServerError::BadInput(format!(
            "{url} answered HTTP {s}: try again later, or {advice}"
        ))),
    }
}

/// A small text (metadata, a checksum file); None if the server has none
/// (404).
pub fn text(url: &str, advice: &str) -> Result<Option<String>, ServerError> {
    match get(url, advice)? {
        Got::NotFound => Ok(None),
        Got::Found(mut resp) => resp.body_mut().read_to_string().map(Some).map_err(|e| {
            ServerError::BadInput(format!(
                "reading {url} failed ({e}): check the network, or {advice}"
            ))
        }),
    }
}

/// A checksum algorithm Maven publishes, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algo {
    Sha512,
    Sha256,
    Sha1,
}

impl Algo {
    pub const STRONGEST_FIRST: [Algo; 3] = [Algo::Sha512, Algo::Sha256, Algo::Sha1];

    /// The checksum file's extension and the algorithm's name.
    pub fn ext(self) -> &'static str {
        match self {
            Algo::Sha512 => "sha512",
            Algo::Sha256 => "sha256",
            Algo::Sha1 => "sha1",
        }
    }

    fn hex_len(self) -> usize {
        match self {
            Algo::Sha512 => 128,
            Algo::Sha256 => 64,
            Algo::Sha1 => 40,
        }
    }
}

/// A published checksum: the algorithm and its lowercase hex digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checksum {
    pub algo: Algo,
    pub hex: String,
}

/// Parses a checksum file (`HEX` or `HEX  file-name`).
pub fn parse_checksum(algo: Algo, text: &str) -> Option<Checksum> {
    let hex = text.split_whitespace().next()?.to_ascii_lowercase();
    (hex.len() == algo.hex_len() && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then_some(Checksum { algo, hex })
}

/// The strongest checksum published beside `url`.
pub fn published_checksum(url: &str, advice: &str) -> Result<Checksum, ServerError> {
    for algo in Algo::STRONGEST_FIRST {
        let sum_url = format!("{url}.{}", algo.ext());
        if let Some(text) = text(&sum_url, advice)? {
            return parse_checksum(algo, &text).ok_or_else(|| {
                ServerError::BadInput(format!(
                    "{sum_url} does not hold a {} checksum: the repository is not one dbsweep can verify against; {advice}",
                    algo.ext()
                ))
            });
        }
    }
    Err(ServerError::BadInput(format!(
        "the repository publishes no checksum (.sha512, .sha256 or .sha1) beside {url}, so the download cannot be verified: {advice}"
    )))
}

/// A hasher for one algorithm.
pub enum Hasher {
    Sha512(Sha512),
    Sha256(Sha256),
    Sha1(Sha1),
}

impl Hasher {
    pub fn new(algo: Algo) -> Hasher {
        match algo {
            Algo::Sha512 => Hasher::Sha512(Sha512::new()),
            Algo::Sha256 => Hasher::Sha256(Sha256::new()),
            Algo::Sha1 => Hasher::Sha1(Sha1::new()),
        }
    }

    pub fn update(&mut self, data: &[u8]) {
        match self {
            Hasher::Sha512(h) => h.update(data),
            Hasher::Sha256(h) => h.update(data),
            Hasher::Sha1(h) => h.update(data),
        }
    }

    pub fn hex(self) -> String {
        let bytes: Vec<u8> = match self {
            Hasher::Sha512(h) => h.finalize().to_vec(),
            Hasher::Sha256(h) => h.finalize().to_vec(),
            Hasher::Sha1(h) => h.finalize().to_vec(),
        };
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The digest of a file on disk.
pub fn file_digest(path: &Path, algo: Algo) -> io::Result<String> {
    let mut f = File::open(path)?;
    let mut h = Hasher::new(algo);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            return Ok(h.hex());
        }
        h.update(&buf[..n]);
    }
}

/// Checks a digest against the published one.
pub fn verify(what: &str, sum: &Checksum, actual: &str, advice: &str) -> Result<(), ServerError> {
    if actual == sum.hex {
        Ok(())
    } else {
        Err(ServerError::BadInput(format!(
            "checksum mismatch for {what}: its {} is {actual}, the repository publishes {}; nothing was installed. Try again (a proxy or a broken transfer may have changed it), or {advice}",
            sum.algo.ext(),
            sum.hex
        )))
    }
}

/// Downloads `url` into `to`, with a progress bar on a terminal, and checks
/// it against `sum`.
pub fn fetch(url: &str, to: &Path, sum: &Checksum, advice: &str) -> Result<u64, ServerError> {
    let Got::Found(resp) = get(url, advice)? else {
        return Err(ServerError::BadInput(format!(
            "{url} is not in the repository (HTTP 404), although its metadata lists it: try again later, or {advice}"
        )));
    };
    let length: Option<u64> = resp
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    let name = url.rsplit('/').next().unwrap_or(url);
    let bar = ByteBar::new(&format!("Downloading {name}"), length);
    let mut body = resp.into_body().into_reader();
    let file =
        File::create(to).map_err(|e| ServerError::io(format!("creating {}", to.display()), e))?;
    let mut out = BufWriter::new(file);
    let mut hasher = Hasher::new(sum.algo);
    let mut buf = vec![0u8; 1 << 16];
    let mut got: u64 = 0;
    let broke_off = |got: u64, e: &dyn std::fmt::Display| {
        ServerError::BadInput(format!(
            "the download of {url} broke off after {got}{} bytes ({e}): try again, or {advice}",
            length.map(|l| format!(" of {l}")).unwrap_or_default()
        ))
    };
    loop {
        let n = match body.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                bar.abandon();
                return Err(broke_off(got, &e));
            }
        };
        hasher.update(&buf[..n]);
        out.write_all(&buf[..n])
            .map_err(|e| ServerError::io(format!("writing {}", to.display()), e))?;
        got += n as u64;
        bar.set(got);
    }
    bar.finish();
    out.flush()
        .map_err(|e| ServerError::io(format!("writing {}", to.display()), e))?;
    if let Some(l) = length.filter(|&l| l != got) {
        return Err(broke_off(got, &format!("the server announced {l}")));
    }
    verify(url, sum, &hasher.hex(), advice)?;
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_files_parse() {
        let sha1 = "a9993e364706816aba3e25717850c26c9cd0d89d";
        assert_eq!(
            parse_checksum(Algo::Sha1, &format!("{}  x.jar\n", sha1.to_uppercase())),
            Some(Checksum {
                algo: Algo::Sha1,
                hex: sha1.to_string()
            })
        );
        assert_eq!(parse_checksum(Algo::Sha256, sha1), None);
        assert_eq!(parse_checksum(Algo::Sha1, "<html>"), None);
    }

    #[test]
    fn hashers_match_known_digests() {
        let mut h = Hasher::new(Algo::Sha1);
        h.update(b"abc");
        assert_eq!(h.hex(), "a9993e364706816aba3e25717850c26c9cd0d89d");
        let mut h = Hasher::new(Algo::Sha256);
        h.update(b"abc");
        assert_eq!(
            h.hex(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
