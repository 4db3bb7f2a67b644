//! No file a reader cannot hold in mind: every file under `src/` stays
//! within 600 lines and every function within 150 (rustfmt's layout: a
//! function runs from its `fn` line to the `}` at its indentation).
//!
//! The files and functions still over are listed below with their size
//! today, so the list can only shrink: one that grows, a new one over the
//! limit, and a listed one now within it (take it off the list) all fail,
//! each named with its size.

use std::collections::BTreeMap;
mod util;

use std::path::Path;

use util::rust_files;

const MAX_FILE_LINES: usize = 600;
const MAX_FN_LINES: usize = 150;

/// Files over the limit today: (path under src/, lines).
const FILES_OVER: &[(&str, usize)] = &[];

/// Functions over the limit today: (path under src/ :: name, lines).
const FNS_OVER: &[(&str, usize)] = &[];

/// The name of the function a line declares, with its indentation.
fn fn_name(line: &str) -> Option<(&str, &str)> {
    let t = line.trim_start();
    let indent = &line[..line.len() - t.len()];
    let mut rest = t;
    if let Some(r) = rest.strip_prefix("pub") {
        rest = r.trim_start();
        if rest.starts_with('(') {
            rest = rest[rest.find(')')? + 1..].trim_start();
        }
    }
    for q in ["const ", "async ", "unsafe "] {
        rest = rest.strip_prefix(q).unwrap_or(rest);
    }
    let rest = rest.strip_prefix("fn ")?;
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    Some((indent, &rest[..end]))
}

/// Every function with a body in `text`: (name, lines from `fn` to `}`).
fn functions(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some((indent, name)) = fn_name(l) else {
            continue;
        };
        // The signature ends at the first line ending in `{` (a body), `;`
        // (a declaration) or `}` (a body on one line).
        let Some(open) = (i..lines.len()).find(|&j| {
            let t = lines[j].trim_end();
            t.ends_with('{') || t.ends_with(';') || t.ends_with('}')
        }) else {
            continue;
        };
        if !lines[open].trim_end().ends_with('{') {
            continue;
        }
        let close = format!("{indent}}}");
        if let Some(end) = (open + 1..lines.len()).find(|&k| lines[k] == close) {
            out.push((name.to_string(), end - i + 1));
        }
    }
    out
}

#[test]
fn files_and_functions_stay_readable() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut file_sizes = BTreeMap::new();
    let mut fn_sizes = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(f).unwrap();
        file_sizes.insert(rel.clone(), text.lines().count());
        for (name, n) in functions(&text) {
            let key = format!("{rel}::{name}");
            // Two functions of one name in a file: the longer counts.
            let e = fn_sizes.entry(key).or_insert(0);
            *e = (*e).max(n);
        }
    }
    let mut problems = Vec::new();
    let mut check = |what: &str, sizes: &BTreeMap<String, usize>, listed: &[(&str, usize)], max| {
        for (k, &n) in sizes {
            match listed.iter().find(|(p, _)| p == k) {
                None if n > max => problems.push(format!(
                    "{what} {k}: {n} lines, over {max}: split it by what its parts do"
                )),
                Some(&(_, was)) if n > was => problems.push(format!(
                    "{what} {k}: {n} lines, grown from {was} (over {max}): split it rather than grow it"
                )),
                Some(_) if n <= max => problems.push(format!(
                    "{what} {k}: {n} lines, within {max} now: take it off the list in tests/sizes.rs"
                )),
                _ => {}
            }
        }
        for (k, _) in listed {
            if !sizes.contains_key(*k) {
                problems.push(format!(
                    "{what} {k} is listed in tests/sizes.rs but gone: take it off the list"
                ));
            }
        }
    };
    check("file", &file_sizes, FILES_OVER, MAX_FILE_LINES);
    check("function", &fn_sizes, FNS_OVER, MAX_FN_LINES);
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn functions_are_measured_from_fn_to_their_closing_brace() {
    let text = "pub(crate) fn a(\n    x: u32,\n) -> u32 {\n    x\n}\n\ntrait T {\n    fn d(&self);\n    fn e(&self) {\n        1;\n    }\n}\nconst fn f() {}\nfn g() {\n}\n";
    let got = functions(text);
    assert_eq!(
        got,
        vec![
            ("a".to_string(), 5),
            ("e".to_string(), 3),
            ("g".to_string(), 2)
        ]
    );
}
