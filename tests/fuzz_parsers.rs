//! The parsers of user input never crash and never hang: the `.smack`
//! parser, the study-file loader, the database URL parser and Super
//! Smack's gen-data formats, fed the committed examples (and Super Smack's
//! stock files, where CI has them in `../shared`) mutated at random and
//! random bytes. Each input must end in a value or an error, within ten
//! seconds (a hang's bound: a parse takes milliseconds). CI runs a few hundred cases per parser (seconds);
//! `scripts/fuzz` runs a long campaign (`DBSWEEP_FUZZ_CASES`).

mod util;

use std::path::{Path, PathBuf};
use std::sync::{mpsc, OnceLock};
use std::time::Duration;

use dbsweep::driver::Target;
use dbsweep::study::load_str;
use dbsweep::workload::smack::gen_data::Format;
use dbsweep::workload::smack::parse::parse as parse_smack;
use proptest::prelude::*;
use util::shared_dir;

/// Cases per parser: `DBSWEEP_FUZZ_CASES`, default 300.
fn cases() -> u32 {
    std::env::var("DBSWEEP_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file ending in `ext` under `dir`.
fn examples(dir: &Path, ext: &str) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == ext))
                .filter_map(|p| std::fs::read_to_string(p).ok())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The project's `.smack` files (tests/fixtures/smack/) and Super Smack's
/// stock ones where `../shared` has them; read once (the skip line too).
fn smack_examples() -> &'static [String] {
    static EXAMPLES: OnceLock<Vec<String>> = OnceLock::new();
    EXAMPLES.get_or_init(|| {
        let mut v = examples(&root().join("tests/fixtures/smack"), "smack");
        assert!(!v.is_empty(), "no .smack files in tests/fixtures/smack");
        if let Some(dir) = shared_dir("testdata/smack", "the stock .smack files as fuzzing seeds") {
            v.extend(examples(&dir, "smack"));
        }
        v
    })
}

fn study_examples() -> Vec<String> {
    examples(&root().join("studies"), "toml")
}

const URLS: &[&str] = &[
    "sqlite:///tmp/x.db?synchronous=full&begin=immediate",
    "postgres://sbtest:s3cret@127.0.0.1:5432/sbtest?ps_mode=disable",
    "mysql://sbtest@localhost/sbtest?socket=/run/mysqld/mysqld.sock&defaults-file=/nonexistent",
    "mariadb://u:p%40ss@[::1]:3306/db",
    "fake://?latency=250us&stall_at=1s:1s",
];

const FORMATS: &[&str] = &["%10-20s,%n,%d", "%s%s%s", "abc%5n", "%1-255s|%d\\n"];

/// Applies `ops` (position, kind, byte) to `seed`: replace, insert or
/// delete one byte each; the result is read as text, lossily.
fn mutate(seed: &str, ops: &[(usize, u8, u8)]) -> String {
    let mut b = seed.as_bytes().to_vec();
    for &(pos, kind, byte) in ops {
        let i = if b.is_empty() { 0 } else { pos % (b.len() + 1) };
        match kind % 3 {
            0 if i < b.len() => b[i] = byte,
            1 => b.insert(i, byte),
            _ if i < b.len() => {
                b.remove(i);
            }
            _ => b.push(byte),
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

/// Runs `f` on `input` in a thread: a panic or ten seconds without an
/// answer (a hang: a parse takes milliseconds, even on a busy machine)
/// fails the case (the thread of a hang is left behind).
fn answers(input: String, f: fn(&str)) -> Result<(), String> {
    let (tx, rx) = mpsc::channel();
    let shown = input.chars().take(300).collect::<String>();
    std::thread::spawn(move || {
        let ok = std::panic::catch_unwind(|| f(&input)).is_ok();
        let _ = tx.send(ok);
    });
    match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(true) => Ok(()),
        Ok(false) => Err(format!("panicked on {shown:?}")),
        Err(_) => Err(format!("no answer within ten seconds on {shown:?}")),
    }
}

fn smack(text: &str) {
    let _ = parse_smack(Path::new("fuzz.smack"), text);
}

fn study(text: &str) {
    let _ = load_str(text, Path::new("studies/fuzz.toml"));
}

fn url(text: &str) {
    let _ = Target::parse(text);
}

fn format(text: &str) {
    let _ = Format::parse(text);
}

/// Mutation operations: up to 24 single-byte edits.
fn ops() -> impl Strategy<Value = Vec<(usize, u8, u8)>> {
    proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..24)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn smack_files_mutated(i in any::<usize>(), ops in ops()) {
        let seeds = smack_examples();
        let r = answers(mutate(&seeds[i % seeds.len()], &ops), smack);
        prop_assert!(r.is_ok(), "{:?}", r);
    }

    #[test]
    fn study_files_mutated(i in any::<usize>(), ops in ops()) {
        let seeds = study_examples();
        let text = mutate(&seeds[i % seeds.len()], &ops);
        let r = answers(text, study);
        prop_assert!(r.is_ok(), "{:?}", r);
    }

    #[test]
    fn urls_and_formats_mutated(i in any::<usize>(), ops in ops()) {
        let r = answers(mutate(URLS[i % URLS.len()], &ops), url);
        prop_assert!(r.is_ok(), "{:?}", r);
        let r = answers(mutate(FORMATS[i % FORMATS.len()], &ops), format);
        prop_assert!(r.is_ok(), "{:?}", r);
    }

    #[test]
    fn random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        for f in [smack, study, url, format] {
            let r = answers(text.clone(), f);
            prop_assert!(r.is_ok(), "{:?}", r);
        }
    }
}
