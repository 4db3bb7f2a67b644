//! The layers only look down. Every module under `src/` belongs to the
//! layer of its top folder, and may use only its own layer and those below
//! (docs/architecture.md):
//!
//! ```text
//! cli → commands → report → study → nodes → store → engine → workload, server
//!     → driver, rand, stats, metrics → record, util
//! ```
//!
//! This test reads every `crate::…` path in `src/` (in `use` items,
//! grouped ones included, and in code) and fails on each that reaches up,
//! naming the file, the line and the rule. It also fails when sibling
//! modules of one folder import each other in a cycle: within a layer the
//! parts of a folder look one way too.
//!
//! Within `report`, the rooms look one way too (`REPORT_ROOMS`): charts,
//! the document, the tidy CSV, then a run's and a study's reports (which
//! never use each other), then the exporters of every format.

use std::collections::{BTreeMap, BTreeSet};
mod util;

use std::path::Path;

use util::rust_files;

/// The layers from the bottom up; modules of one entry share a layer.
const LAYERS: &[&[&str]] = &[
    &["record", "util"],
    &["driver", "rand", "stats", "metrics"],
    &["workload", "server"],
    &["engine"],
    &["store"],
    &["nodes"],
    &["study"],
    &["report"],
    &["commands"],
    &["cli"],
];

/// Items of the crate root every layer may use (lib.rs).
const ROOT_ITEMS: &[&str] = &["UsageError"];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn order() -> String {
    LAYERS
        .iter()
        .rev()
        .map(|l| l.join("/"))
        .collect::<Vec<_>>()
        .join(" → ")
}

/// The source with comments blanked (line numbers kept): doc links and
/// prose may name any module.
fn code_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            let t = l.trim_start();
            if t.starts_with("//") {
                String::new()
            } else {
                // A trailing comment; `://` in a string (URLs) is not one.
                match l.find(" // ") {
                    Some(i) => l[..i].to_string(),
                    None => l.to_string(),
                }
            }
        })
        .collect()
}

/// Every `(line, path)` a file names, as lists of segments after the root
/// (`crate::a::b` → `["a", "b"]`), with `use crate::{a::x, b}` groups
/// expanded to each member.
fn crate_paths(lines: &[String]) -> Vec<(usize, Vec<String>)> {
    let text: String = lines.join("\n");
    let bytes = text.as_bytes();
    let line_at = |i: usize| text[..i].matches('\n').count() + 1;
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(off) = text[i..].find("crate::") {
        let start = i + off;
        i = start + "crate::".len();
        // `dbsweep::crate::`-like or identifier-embedded matches are not paths.
        if start > 0 {
            let prev = bytes[start - 1];
            if prev.is_ascii_alphanumeric() || prev == b'_' {
                continue;
            }
        }
        expand(&text, i, Vec::new(), line_at(start), &mut out);
    }
    out
}

/// Reads the path continuing at `i` after `prefix::`, expanding groups.
fn expand(
    text: &str,
    mut i: usize,
    prefix: Vec<String>,
    line: usize,
    out: &mut Vec<(usize, Vec<String>)>,
) {
    let b = text.as_bytes();
    let ident = |i: usize| {
        let end = text[i..]
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(text.len(), |e| i + e);
        (&text[i..end], end)
    };
    let mut path = prefix;
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i < b.len() && b[i] == b'{' {
            // A group: each member is a path of its own.
            let mut depth = 0;
            let mut member_start = i + 1;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            expand_member(text, member_start, j, &path, line, out);
                            return;
                        }
                    }
                    b',' if depth == 1 => {
                        expand_member(text, member_start, j, &path, line, out);
                        member_start = j + 1;
                    }
                    _ => {}
                }
                j += 1;
            }
            return;
        }
        let (name, end) = ident(i);
        if name.is_empty() {
            break;
        }
        path.push(name.to_string());
        i = end;
        if text[i..].starts_with("::") {
            i += 2;
        } else {
            break;
        }
    }
    if !path.is_empty() {
        out.push((line, path));
    }
}

fn expand_member(
    text: &str,
    from: usize,
    to: usize,
    prefix: &[String],
    line: usize,
    out: &mut Vec<(usize, Vec<String>)>,
) {
    let member = text[from..to].trim();
    if member.is_empty() || member == "self" {
        if member == "self" && !prefix.is_empty() {
            out.push((line, prefix.to_vec()));
        }
        return;
    }
    // Parse the member as a path of its own inside this text slice.
    let mut sub = Vec::new();
    expand(&text[..to], from, prefix.to_vec(), line, &mut sub);
    out.extend(sub);
}

/// The module path of a file under src/: `src/report/study/figures.rs` →
/// `["report", "study", "figures"]`; `mod.rs` names its folder.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

#[test]
fn modules_import_only_from_their_layer_or_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut problems = Vec::new();
    let mut checked = 0;
    for file in &files {
        let module = module_of(&src, file);
        let Some(top) = module.first() else { continue };
        if top == "lib" || top == "main" {
            continue;
        }
        let Some(own) = layer_of(top) else {
            problems.push(format!(
                "{}: module '{top}' has no layer: add it to LAYERS in tests/layers.rs and to docs/architecture.md",
                file.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for (line, path) in crate_paths(&code_lines(&text)) {
            checked += 1;
            let target = &path[0];
            if ROOT_ITEMS.contains(&target.as_str()) {
                continue;
            }
            match layer_of(target) {
                Some(l) if l <= own => {}
                Some(l) => problems.push(format!(
                    "src/{}:{line}: {top} (layer {own}) uses crate::{}, which is {target} (layer {l}), above it; \
                     a module may use only its own layer and those below ({})",
                    file.strip_prefix(&src).unwrap().display(),
                    path.join("::"),
                    order()
                )),
                None => problems.push(format!(
                    "src/{}:{line}: crate::{} names no layer",
                    file.strip_prefix(&src).unwrap().display(),
                    path.join("::")
                )),
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} paths found: is the scanner broken?"
    );
    assert!(
        problems.is_empty(),
        "{} import(s) reach up a layer:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Per module of a folder: the siblings it uses, each with a line.
type Edges = BTreeMap<String, BTreeSet<(String, usize)>>;

/// Per folder, sibling modules `a` and `b` where `a` uses `b`: through
/// `super::b`, or through `crate::folder::b`.
fn sibling_edges(src: &Path) -> BTreeMap<Vec<String>, Edges> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    // folder → module → {(sibling it uses, line)}
    let mut graph: BTreeMap<Vec<String>, Edges> = BTreeMap::new();
    let mut children: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let m = module_of(src, file);
        if let Some((last, parent)) = m.split_last() {
            children
                .entry(parent.to_vec())
                .or_default()
                .insert(last.clone());
        }
    }
    for file in &files {
        let m = module_of(src, file);
        let Some((me, parent)) = m.split_last() else {
            continue;
        };
        let siblings = &children[parent];
        // A mod.rs's `super::` is its folder's parent: not a sibling.
        let is_folder = file.file_name().is_some_and(|n| n == "mod.rs");
        let text = std::fs::read_to_string(file).unwrap();
        let lines = code_lines(&text);
        let mut uses = Vec::new();
        for (n, l) in lines.iter().enumerate() {
            let mut rest = l.as_str();
            while let Some(i) = rest.find("super::") {
                let after = &rest[i + 7..];
                let name: String = after
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() && !is_folder {
                    uses.push((name, n + 1));
                }
                // `use super::{a, b}`: each member.
                if after.starts_with('{') && !is_folder {
                    let group = &after[1..after.find('}').unwrap_or(after.len())];
                    for member in group.split(',') {
                        let name: String = member
                            .trim()
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        if !name.is_empty() {
                            uses.push((name, n + 1));
                        }
                    }
                }
                rest = &rest[i + 7..];
            }
        }
        for (line, path) in crate_paths(&lines) {
            if path.len() > parent.len() && path[..parent.len()] == *parent {
                uses.push((path[parent.len()].clone(), line));
            }
        }
        for (name, line) in uses {
            if &name != me && siblings.contains(&name) {
                graph
                    .entry(parent.to_vec())
                    .or_default()
                    .entry(me.clone())
                    .or_default()
                    .insert((name, line));
            }
        }
    }
    graph
}

#[test]
fn sibling_modules_do_not_import_each_other_in_a_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut problems = Vec::new();
    for (folder, edges) in sibling_edges(&src) {
        // Depth-first search for a cycle, reporting one per folder.
        let names: Vec<&String> = edges.keys().collect();
        for start in names {
            let mut stack = vec![(start.clone(), vec![start.clone()])];
            let mut found = None;
            while let Some((at, path)) = stack.pop() {
                for (next, _) in edges.get(&at).into_iter().flatten() {
                    if next == start {
                        found = Some(path.clone());
                        break;
                    }
                    if !path.contains(next) {
                        let mut p = path.clone();
                        p.push(next.clone());
                        stack.push((next.clone(), p));
                    }
                }
                if found.is_some() {
                    break;
                }
            }
            if let Some(cycle) = found {
                let dir = if folder.is_empty() {
                    "src".to_string()
                } else {
                    format!("src/{}", folder.join("/"))
                };
                let mut lines = Vec::new();
                for w in cycle.iter().zip(cycle.iter().cycle().skip(1)) {
                    let line = edges[w.0].iter().find(|(n, _)| n == w.1).map(|(_, l)| *l);
                    lines.push(format!("{} → {} (line {})", w.0, w.1, line.unwrap_or(0)));
                }
                problems.push(format!("{dir}: {}", lines.join(", ")));
                break;
            }
        }
    }
    assert!(
        problems.is_empty(),
        "sibling modules import each other in a cycle (move what both need into a module both use):\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_scanner_reads_grouped_and_inline_paths() {
    let lines = code_lines(
        "use crate::a::{b, c::{d, e}};\n// crate::hidden\nlet x = crate::f::g(); // crate::no\nuse crate::{h, i::j};",
    );
    let paths: Vec<String> = crate_paths(&lines)
        .into_iter()
        .map(|(l, p)| format!("{l}:{}", p.join("::")))
        .collect();
    assert_eq!(
        paths,
        [
            "1:a::b",
            "1:a::c::d",
            "1:a::c::e",
            "3:f::g",
            "4:h",
            "4:i::j"
        ]
    );
}

/// The rooms of the report layer from the bottom up (docs/architecture.md):
/// each may use only itself and the rooms before it, and the rooms of one
/// entry do not use each other (a run's report and a study's share only
/// what lies below both).
const REPORT_ROOMS: &[&[&str]] = &[
    &["plot"],
    &["doc"],
    &["csv", "dist"],
    &["run", "study", "results"],
    &["export"],
];

/// `text` with every `super::` made absolute for the module `module` of a
/// file (a mod.rs's module is its folder, so `super` is one up either way).
fn absolute_supers(text: &str, module: &[String]) -> String {
    let own = module.len();
    let up = |n: usize| -> String {
        let keep = own.saturating_sub(n);
        let mut p = vec!["crate".to_string()];
        p.extend(module[..keep].iter().cloned());
        p.join("::") + "::"
    };
    text.replace("super::super::", &up(2))
        .replace("super::", &up(1))
}

#[test]
fn the_report_rooms_look_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join("report"), &mut files);
    files.sort();
    let room_of = |name: &str| REPORT_ROOMS.iter().position(|r| r.contains(&name));
    let mut problems = Vec::new();
    let mut checked = 0;
    for file in &files {
        let module = module_of(&src, file);
        let Some(own) = module.get(1) else { continue };
        let Some(mine) = room_of(own) else {
            problems.push(format!(
                "{}: report::{own} is in no room: add it to REPORT_ROOMS in tests/layers.rs and to docs/architecture.md",
                file.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        let text = absolute_supers(&code_lines(&text).join("\n"), &module);
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        for (line, path) in crate_paths(&lines) {
            if path.len() < 2 || path[0] != "report" || path[1] == *own {
                continue;
            }
            checked += 1;
            let Some(theirs) = room_of(&path[1]) else {
                continue;
            };
            if theirs >= mine {
                problems.push(format!(
                    "src/{}:{line}: report::{own} uses crate::{}: a room may use only the rooms before it ({})",
                    file.strip_prefix(&src).unwrap().display(),
                    path.join("::"),
                    REPORT_ROOMS
                        .iter()
                        .map(|r| r.join("/"))
                        .collect::<Vec<_>>()
                        .join(" → ")
                ));
            }
        }
    }
    assert!(
        checked > 30,
        "only {checked} paths between rooms: is the scanner broken?"
    );
    assert!(
        problems.is_empty(),
        "{} use(s) between the report's rooms go the wrong way:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
