//! Dictionaries: where a query's `$name` values come from.
//!
//! - `type`: `rand` (a uniform draw each time), `seq` (the words in order,
//!   round-robin; each client starts at the first word, as each of Super
//!   Smack's forked clients did) or `unique` (a printf-style template filled
//!   with an incrementing id).
//! - `source_type`: `file` (one word per line), `list` (comma-separated, `\,`
//!   for a comma in a word) or `template` (only for `unique`).
//! - `delim`: keep the part of each line before the first occurrence of
//!   this character.
//! - `file_size_equiv`: keep only every k-th line, k = file size in bytes ÷
//!   the value (at least 1), counting lines from 1 — Super Smack's way of
//!   spanning a large key range with few words in memory.
//!
//! Deliberate differences from Super Smack 1.3, where its behaviour is a
//! bug: a `list`'s last word is kept (1.3 dropped it) and `\,` escapes a
//! comma (1.3 kept the backslash); a `unique` dictionary's counter is shared
//! by all clients so its values really are unique (1.3's forked clients each
//! counted from 0 and produced the same values).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::rand::Rng;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DictType {
    Rand,
    Seq,
    Unique,
}

/// A loaded dictionary, shared by all clients.
#[derive(Debug)]
pub struct Dictionary {
    pub name: String,
    pub kind: DictType,
    words: Vec<String>,
    /// For `unique`: the template split around its one field.
    template: Option<Template>,
    next_id: AtomicU64,
}

/// Where a dictionary's words come from, before loading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    File(PathBuf),
    List(String),
    Template(String),
}

impl Dictionary {
    /// Builds a dictionary; file sources are read here. `delim` is the
    /// member's value (only its first character counts, as in Super Smack).
    pub fn load(
        name: &str,
        kind: DictType,
        source: &Source,
        delim: Option<&str>,
        file_size_equiv: Option<u64>,
    ) -> Result<Dictionary, String> {
        let delim = delim.and_then(|d| d.chars().next());
        let mut template = None;
        let words = match source {
            Source::File(path) => load_file(name, path, delim, file_size_equiv)?,
            Source::List(list) => split_list(list)
                .into_iter()
                .map(|w| cut(&w, delim).to_string())
                .collect(),
            Source::Template(t) => {
                if kind != DictType::Unique {
                    return Err(format!(
                        "dictionary '{name}': source_type \"template\" works only with type \"unique\""
                    ));
                }
                template =
                    Some(Template::parse(t).map_err(|e| format!("dictionary '{name}': {e}"))?);
                Vec::new()
            }
        };
        if kind == DictType::Unique && template.is_none() {
            // A unique dictionary without a template counts with "%d".
            template = Some(Template::parse("%d").expect("valid"));
        }
        if kind != DictType::Unique && words.is_empty() {
            let from = match source {
                Source::File(p) => format!("file '{}'", p.display()),
                _ => "its source".into(),
            };
            return Err(format!(
                "dictionary '{name}' has no words: {from} is empty (or file_size_equiv skipped every line)"
            ));
        }
        Ok(Dictionary {
            name: name.to_string(),
            kind,
            words,
            template,
            next_id: AtomicU64::new(0),
        })
    }

    pub fn len(&self) -> usize {
        self.words.len()
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    pub fn words(&self) -> &[String] {
        &self.words
    }
}

/// One client's view of a dictionary: its own cursor and random stream.
pub struct DictCursor {
    dict: Arc<Dictionary>,
    pos: usize,
}

impl DictCursor {
    pub fn new(dict: Arc<Dictionary>) -> DictCursor {
        DictCursor { dict, pos: 0 }
    }

    /// Appends the next value to `out`.
    pub fn draw(&mut self, rng: &mut Rng, out: &mut String) {
        let d = &*self.dict;
        match d.kind {
            DictType::Rand => {
                let i = rng.uniform(0, (d.words.len() - 1) as u32) as usize;
                out.push_str(&d.words[i]);
            }
            DictType::Seq => {
                out.push_str(&d.words[self.pos]);
                self.pos = (self.pos + 1) % d.words.len();
            }
            DictType::Unique => {
                let id = d.next_id.fetch_add(1, Ordering::Relaxed);
                d.template
                    .as_ref()
                    .expect("unique has a template")
                    .fill(id, out);
            }
        }
    }
}

/// The part of `line` before the first `delim`.
fn cut(line: &str, delim: Option<char>) -> &str {
    match delim {
        Some(d) => line.split(d).next().unwrap_or(""),
        None => line,
    }
}

fn load_file(
    name: &str,
    path: &Path,
    delim: Option<char>,
    file_size_equiv: Option<u64>,
) -> Result<Vec<String>, String> {
    let bytes = std::fs::read(path)
        .map_err(|e| format!("dictionary '{name}': cannot read '{}': {e}", path.display()))?;
    let step = match file_size_equiv {
        Some(eq) if eq > 0 => (bytes.len() as u64 / eq).max(1),
        _ => 1,
    };
    let text = String::from_utf8_lossy(&bytes);
    Ok(text
        .lines()
        .enumerate()
        .filter(|(i, _)| (*i as u64 + 1) % step == 0)
        .map(|(_, l)| cut(l, delim).to_string())
        .collect())
}

/// Splits a `list` source at unescaped commas; `\,` is a comma and `\\` a
/// backslash inside a word.
fn split_list(list: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut chars = list.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(n) => cur.push(n),
                None => cur.push('\\'),
            },
            ',' => words.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    words.push(cur);
    words
}

/// A `unique` dictionary's template: text around one printf-style integer
/// field (`%d`, `%05d`, `%x`, `%-8u`, …). As in Super Smack, the template is
/// cut before a second field.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Template {
    before: String,
    after: String,
    spec: Option<IntSpec>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct IntSpec {
    left: bool,
    zero: bool,
    plus: bool,
    width: usize,
    hex: Option<bool>, // Some(upper)
}

impl Template {
    fn parse(t: &str) -> Result<Template, String> {
        let mut before = String::new();
        let mut after = String::new();
        let mut spec = None;
        let mut chars = t.chars().peekable();
        while let Some(c) = chars.next() {
            let out = if spec.is_some() {
                &mut after
            } else {
                &mut before
            };
            if c != '%' {
                out.push(c);
                continue;
            }
            if chars.peek() == Some(&'%') {
                chars.next();
                out.push('%');
                continue;
            }
            if spec.is_some() {
                // A second field: Super Smack cuts the template here.
                break;
            }
            let mut s = IntSpec {
                left: false,
                zero: false,
                plus: false,
                width: 0,
                hex: None,
            };
            loop {
                match chars.peek() {
                    Some('-') => s.left = true,
                    Some('0') => s.zero = true,
                    Some('+') => s.plus = true,
                    Some(' ') | Some('#') => {}
                    _ => break,
                }
                chars.next();
            }
            while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                s.width = s.width * 10 + d as usize;
                chars.next();
            }
            // Length modifiers are accepted and ignored.
            while matches!(chars.peek(), Some('l' | 'h' | 'q' | 'j' | 'z')) {
                chars.next();
            }
            match chars.next() {
                Some('d' | 'i' | 'u') => {}
                Some('x') => s.hex = Some(false),
                Some('X') => s.hex = Some(true),
                other => {
                    return Err(format!(
                        "template '{t}': '%{}' is not an integer field: use %d (or %u, %x, with flags and a width, e.g. %08d)",
                        other.map(String::from).unwrap_or_default()
                    ))
                }
            }
            spec = Some(s);
        }
        Ok(Template {
            before,
            after,
            spec,
        })
    }

    fn fill(&self, id: u64, out: &mut String) {
        out.push_str(&self.before);
        if let Some(s) = self.spec {
            let digits = match s.hex {
                None if s.plus => format!("+{id}"),
                None => id.to_string(),
                Some(false) => format!("{id:x}"),
                Some(true) => format!("{id:X}"),
            };
            let pad = s.width.saturating_sub(digits.len());
            if s.left {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n(' ', pad));
            } else if s.zero {
                let (sign, rest) = digits.split_at(usize::from(digits.starts_with('+')));
                out.push_str(sign);
                out.extend(std::iter::repeat_n('0', pad));
                out.push_str(rest);
            } else {
                out.extend(std::iter::repeat_n(' ', pad));
                out.push_str(&digits);
            }
        }
        out.push_str(&self.after);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draws(d: Dictionary, n: usize, seed: u64) -> Vec<String> {
        let d = Arc::new(d);
        let mut c = DictCursor::new(d);
        let mut rng = Rng::new(seed);
        (0..n)
            .map(|_| {
                let mut s = String::new();
                c.draw(&mut rng, &mut s);
                s
            })
            .collect()
    }

    #[test]
    fn list_keeps_the_last_word_and_escaped_commas() {
        let d = Dictionary::load(
            "l",
            DictType::Seq,
            &Source::List("a,b\\,c,d".into()),
            None,
            None,
        )
        .unwrap();
        assert_eq!(d.words(), ["a", "b,c", "d"]);
        assert_eq!(draws(d, 5, 1), ["a", "b,c", "d", "a", "b,c"]);
    }

    #[test]
    fn rand_draws_uniformly_from_every_word() {
        let d = Dictionary::load(
            "r",
            DictType::Rand,
            &Source::List("x,y,z".into()),
            None,
            None,
        )
        .unwrap();
        let v = draws(d, 3000, 5);
        for w in ["x", "y", "z"] {
            let n = v.iter().filter(|s| *s == w).count();
            assert!((800..1200).contains(&n), "{w}: {n}");
        }
    }

    #[test]
    fn file_with_delim_and_file_size_equiv_keeps_every_kth_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("w.dat");
        // 100 lines of 10 bytes each = 1000 bytes; equiv 100 → every 10th.
        let text: String = (1..=100).map(|i| format!("w{i:03},xxxx\n")).collect();
        assert_eq!(text.len(), 1000);
        std::fs::write(&p, text).unwrap();
        let d = Dictionary::load(
            "w",
            DictType::Seq,
            &Source::File(p.clone()),
            Some(","),
            Some(100),
        )
        .unwrap();
        let expect: Vec<String> = (1..=10).map(|i| format!("w{:03}", i * 10)).collect();
        assert_eq!(d.words(), expect.as_slice());
        // Equiv larger than the file: every line.
        let d =
            Dictionary::load("w", DictType::Seq, &Source::File(p), Some(","), Some(5000)).unwrap();
        assert_eq!(d.len(), 100);
        assert_eq!(d.words()[0], "w001");
    }

    #[test]
    fn missing_file_names_it() {
        let e = Dictionary::load(
            "w",
            DictType::Rand,
            &Source::File("/no/such/words.dat".into()),
            None,
            None,
        )
        .unwrap_err();
        assert!(e.contains("cannot read '/no/such/words.dat'"), "{e}");
    }

    #[test]
    fn unique_fills_templates_with_a_shared_counter() {
        let d = Dictionary::load(
            "u",
            DictType::Unique,
            &Source::Template("user_%05d@x%%".into()),
            None,
            None,
        )
        .unwrap();
        let d = Arc::new(d);
        let mut a = DictCursor::new(d.clone());
        let mut b = DictCursor::new(d);
        let mut rng = Rng::new(1);
        let mut s = String::new();
        a.draw(&mut rng, &mut s);
        s.push(' ');
        b.draw(&mut rng, &mut s);
        assert_eq!(s, "user_00000@x% user_00001@x%");
        let t = |tpl: &str, id| {
            let mut s = String::new();
            Template::parse(tpl).unwrap().fill(id, &mut s);
            s
        };
        assert_eq!(t("%d", 42), "42");
        assert_eq!(t("[%-4d]", 7), "[7   ]");
        assert_eq!(t("[%4d]", 7), "[   7]");
        assert_eq!(t("%x-%X", 255), "ff-");
        assert_eq!(t("k%dz%d", 3), "k3z");
        assert!(Template::parse("%s")
            .unwrap_err()
            .contains("not an integer field"));
        let d =
            Dictionary::load("u", DictType::Unique, &Source::List("a".into()), None, None).unwrap();
        assert_eq!(draws(d, 2, 1), ["0", "1"]);
    }

    #[test]
    fn template_needs_unique() {
        let e = Dictionary::load(
            "t",
            DictType::Rand,
            &Source::Template("%d".into()),
            None,
            None,
        )
        .unwrap_err();
        assert!(e.contains("works only with type \"unique\""));
    }
}
