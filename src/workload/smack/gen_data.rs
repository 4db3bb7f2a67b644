//! Super Smack's `gen-data`: rows of random data in a small format language,
//! built in so that the stock .smack files' `gen_data_file "gen-data …"`
//! works with no external program (`dbsweep gen-data -n N -f FORMAT`).
//!
//! The format, as Super Smack 1.3's gen-data.c reads it: every character is
//! copied, except `%` which starts a field `%[MIN-][MAX]C`:
//! - `s`: a string of lowercase letters `a`–`y` (gen-data draws
//!   `'a' + rand() % ('z' - 'a')`, so `z` never appears);
//! - `n`: the row number (1, 2, …), right-aligned in the width;
//! - `d`: a random integer in [0, 2^31 − 1] (glibc's `RAND_MAX`),
//!   right-aligned in the width;
//! - `%%`: a literal `%`.
//!
//! The width, as gen-data.c computes it (its help text promises more than
//! its code does): `%12-12s` is exactly 12; `%5-10s` is drawn from [5, 10)
//! (the upper bound excluded: `min + rand() % (max - min)`); a lone `%12s`
//! is a range too, [0, 12); no width is 0. For numbers the width is the
//! `printf` field width (space-padded, never truncating); a string of width
//! 0 or over 256 is 256 letters long (so a bare `%s` is 256 letters). This
//! is why the stock files write `%12-12s` for a fixed width. Each row ends
//! with a newline.
//!
//! The random values come from dbsweep's seeded generator, so the output is
//! deterministic for a seed (gen-data used the C library's unseeded
//! `rand()`; its exact values are not reproducible across C libraries).

use std::io::Write;

use crate::rand::Rng;

/// gen-data's `MAX_STR_WIDTH`.
const MAX_STR_WIDTH: u32 = 256;
/// glibc's `RAND_MAX`, the range of gen-data's `%d`.
const RAND_MAX: u32 = 0x7fff_ffff;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conv {
    Str,
    RowNum,
    Int,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Lit(String),
    Field { min: u32, max: u32, conv: Conv },
}

/// A parsed gen-data format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format {
    pieces: Vec<Piece>,
}

impl Format {
    /// Parses `fmt`; errors name the offending character and its offset.
    pub fn parse(fmt: &str) -> Result<Format, String> {
        let mut pieces = Vec::new();
        let mut lit = String::new();
        let mut chars = fmt.char_indices();
        while let Some((_, c)) = chars.next() {
            if c != '%' {
                lit.push(c);
                continue;
            }
            let (mut min, mut width) = (0u32, 0u32);
            loop {
                let Some((i, c)) = chars.next() else {
                    return Err(format!(
                        "gen-data format '{fmt}' ends inside a '%' field: expected s, n, d or %"
                    ));
                };
                let conv = match c {
                    '%' => {
                        lit.push('%');
                        break;
                    }
                    '-' => {
                        min = width;
                        width = 0;
                        continue;
                    }
                    's' => Conv::Str,
                    'n' => Conv::RowNum,
                    'd' => Conv::Int,
                    d if d.is_ascii_digit() => {
                        width = width
                            .checked_mul(10)
                            .and_then(|w| w.checked_add(d as u32 - '0' as u32))
                            .ok_or_else(|| format!("gen-data format '{fmt}': field width too large"))?;
                        continue;
                    }
                    other => {
                        return Err(format!(
                            "gen-data format '{fmt}': '{other}' at offset {i} is not a field type: expected s (letters), n (row number), d (random integer) or %"
                        ))
                    }
                };
                if !lit.is_empty() {
                    pieces.push(Piece::Lit(std::mem::take(&mut lit)));
                }
                pieces.push(Piece::Field {
                    min,
                    max: width,
                    conv,
                });
                break;
            }
        }
        if !lit.is_empty() {
            pieces.push(Piece::Lit(lit));
        }
        Ok(Format { pieces })
    }

    /// Appends row number `row` (from 1) to `out`, with its newline.
    pub fn row(&self, row: u64, rng: &mut Rng, out: &mut String) {
        use std::fmt::Write as _;
        for p in &self.pieces {
            match p {
                Piece::Lit(s) => out.push_str(s),
                Piece::Field { min, max, conv } => {
                    let width = width(*min, *max, rng) as usize;
                    match conv {
                        Conv::RowNum => {
                            let _ = write!(out, "{row:>width$}");
                        }
                        Conv::Int => {
                            let v = rng.uniform(0, RAND_MAX);
                            let _ = write!(out, "{v:>width$}");
                        }
                        Conv::Str => {
                            let n = if width == 0 || width > MAX_STR_WIDTH as usize {
                                MAX_STR_WIDTH as usize
                            } else {
                                width
                            };
                            for _ in 0..n {
                                out.push(char::from(b'a' + rng.uniform(0, 24) as u8));
                            }
                        }
                    }
                }
            }
        }
        out.push('\n');
    }
}

/// gen-data's `get_width`: no maximum → the minimum; equal bounds → that
/// width; otherwise a draw from [min, max).
fn width(min: u32, max: u32, rng: &mut Rng) -> u32 {
    if max == 0 {
        min
    } else if min == max {
        max
    } else {
        let (lo, hi) = if min < max { (min, max) } else { (max, min) };
        rng.uniform(lo, hi - 1)
    }
}

/// Writes `rows` rows of `format` to `out`.
pub fn generate(format: &Format, rows: u64, seed: u64, out: &mut dyn Write) -> std::io::Result<()> {
    let mut rng = Rng::new(seed);
    let mut buf = String::with_capacity(64 * 1024);
    for row in 1..=rows {
        format.row(row, &mut rng, &mut buf);
        if buf.len() >= 60 * 1024 {
            out.write_all(buf.as_bytes())?;
            buf.clear();
        }
    }
    out.write_all(buf.as_bytes())?;
    out.flush()
}

/// A `gen-data` command line as written in a `gen_data_file` member:
/// `gen-data -n N -f FORMAT` (also `--num-rows=N`, `--format=FMT`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenDataCommand {
    pub rows: u64,
    pub format: String,
}

impl GenDataCommand {
    /// Recognises a built-in gen-data invocation: the program is `gen-data`
    /// (or a path ending in `/gen-data`) and nothing but its options
    /// follows — no pipes or redirections. Returns None for any other
    /// command (it then runs through the shell); an error if it is gen-data
    /// with bad options.
    pub fn recognise(cmd: &str) -> Result<Option<GenDataCommand>, String> {
        let Some(words) = shell_words(cmd) else {
            return Ok(None);
        };
        let Some(prog) = words.first() else {
            return Ok(None);
        };
        if prog != "gen-data" && !prog.ends_with("/gen-data") {
            return Ok(None);
        }
        let mut rows = None;
        let mut format = None;
        let mut it = words[1..].iter();
        while let Some(w) = it.next() {
            let (key, inline) = match w.split_once('=') {
                Some((k, v)) if k.starts_with("--") => (k, Some(v.to_string())),
                _ => (w.as_str(), None),
            };
            let mut value = |name: &str| -> Result<String, String> {
                match &inline {
                    Some(v) => Ok(v.clone()),
                    None => it
                        .next()
                        .cloned()
                        .ok_or_else(|| format!("'{cmd}': {name} needs a value")),
                }
            };
            match key {
                "-n" | "--num-rows" => {
                    let v = value(key)?;
                    rows = Some(
                        v.parse::<u64>()
                            .map_err(|_| format!("'{cmd}': {key} {v} is not a number of rows"))?,
                    );
                }
                "-f" | "--format" => format = Some(value(key)?),
                other if other.starts_with("-n") && other.len() > 2 => {
                    rows = Some(
                        other[2..]
                            .parse::<u64>()
                            .map_err(|_| format!("'{cmd}': {other} is not a number of rows"))?,
                    );
                }
                other if other.starts_with("-f") && other.len() > 2 => {
                    format = Some(other[2..].to_string())
                }
                other => {
                    return Err(format!(
                        "'{cmd}': gen-data does not take '{other}': expected -n N -f FORMAT"
                    ))
                }
            }
        }
        match (rows, format) {
            (Some(rows), Some(format)) if rows > 0 => Ok(Some(GenDataCommand { rows, format })),
            _ => Err(format!(
                "'{cmd}': gen-data needs both -n N (N ≥ 1) and -f FORMAT"
            )),
        }
    }
}

/// Splits a command line into words as `sh` would for simple commands:
/// whitespace separates, '…' and "…" quote, backslash escapes. None if it
/// uses anything a plain word list cannot express (pipes, redirections,
/// `;`, `&`, `$`, backquotes), so that such commands go to the shell.
fn shell_words(cmd: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => cur.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => cur.push(chars.next()?),
                        '$' | '`' => return None,
                        c => cur.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                cur.push(chars.next()?);
            }
            '|' | '>' | '<' | ';' | '&' | '$' | '`' | '(' | ')' => return None,
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(fmt: &str, n: u64, seed: u64) -> Vec<String> {
        let f = Format::parse(fmt).unwrap();
        let mut out = Vec::new();
        generate(&f, n, seed, &mut out).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(s.ends_with('\n'));
        s.lines().map(str::to_string).collect()
    }

    #[test]
    fn stock_format_has_exact_widths_letters_and_row_numbers() {
        let lines = rows("%12-12s%n,%25-25s,%n,%d", 1000, 7);
        assert_eq!(lines.len(), 1000);
        for (i, l) in lines.iter().enumerate() {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 4, "{l}");
            let row = (i + 1).to_string();
            // 12 letters, then the row number with no padding.
            assert_eq!(f[0].len(), 12 + row.len(), "{l}");
            assert!(
                f[0][..12].bytes().all(|b| (b'a'..=b'y').contains(&b)),
                "{l}"
            );
            assert_eq!(&f[0][12..], row);
            assert_eq!(f[1].len(), 25);
            assert!(f[1].bytes().all(|b| (b'a'..=b'y').contains(&b)));
            assert_eq!(f[2], row);
            let d: u64 = f[3].parse().unwrap();
            assert!(d <= RAND_MAX as u64);
        }
        // Every letter a..y shows up, z never.
        let all: String = lines.concat();
        for c in b'a'..=b'y' {
            assert!(all.as_bytes().contains(&c), "letter {}", c as char);
        }
        assert!(!all.contains('z'));
    }

    #[test]
    fn ranges_exclude_the_upper_bound_and_numbers_are_right_aligned() {
        let mut widths = std::collections::BTreeSet::new();
        for l in rows("%3-6s|%5-5n|%12-12d|%%|%4s", 500, 3) {
            let f: Vec<&str> = l.split('|').collect();
            assert!((3..6).contains(&f[0].len()), "{l}");
            widths.insert(f[0].len());
            assert_eq!(f[1].len(), 5);
            assert!(f[1].trim_start().parse::<u64>().is_ok());
            assert_eq!(f[2].len(), 12, "{l}");
            assert_eq!(f[3], "%");
            // A lone width is a range from 0, and 0 letters means 256.
            assert!(f[4].len() < 4 || f[4].len() == 256, "{l}");
        }
        assert_eq!(widths.into_iter().collect::<Vec<_>>(), vec![3, 4, 5]);
        assert_eq!(rows("x%4-4n", 2, 1), vec!["x   1", "x   2"]);
        assert_eq!(rows("%n", 1, 1), vec!["1"]);
        // No width: 256 letters, as gen-data's MAX_STR_WIDTH.
        assert_eq!(rows("%s", 1, 1)[0].len(), 256);
        assert_eq!(rows("%300-300s", 1, 1)[0].len(), 256);
    }

    #[test]
    fn output_is_deterministic_per_seed() {
        assert_eq!(rows("%8s,%d", 20, 1), rows("%8s,%d", 20, 1));
        assert_ne!(rows("%8s,%d", 20, 1), rows("%8s,%d", 20, 2));
    }

    #[test]
    fn bad_formats_name_the_problem() {
        assert!(Format::parse("%12q")
            .unwrap_err()
            .contains("'q' at offset 3 is not a field type"));
        assert!(Format::parse("abc%12")
            .unwrap_err()
            .contains("ends inside a '%' field"));
    }

    #[test]
    fn recognises_gen_data_commands() {
        assert_eq!(
            GenDataCommand::recognise("gen-data -n 90000 -f %12-12s%n,%25-25s,%n,%d").unwrap(),
            Some(GenDataCommand {
                rows: 90000,
                format: "%12-12s%n,%25-25s,%n,%d".into()
            })
        );
        assert_eq!(
            GenDataCommand::recognise("/usr/local/bin/gen-data --num-rows=5 --format='%s x'")
                .unwrap(),
            Some(GenDataCommand {
                rows: 5,
                format: "%s x".into()
            })
        );
        assert_eq!(
            GenDataCommand::recognise("gen-data -n 5 -f %d | sort").unwrap(),
            None
        );
        assert_eq!(GenDataCommand::recognise("perl make.pl").unwrap(), None);
        assert!(GenDataCommand::recognise("gen-data -n 5")
            .unwrap_err()
            .contains("needs both -n N"));
        assert!(GenDataCommand::recognise("gen-data -n x -f %d")
            .unwrap_err()
            .contains("not a number of rows"));
    }
}
