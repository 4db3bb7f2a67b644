//! The Super Smack lexer: tokens with their positions. Comments run from
//! `//` or `#` to the end of the line; strings are in double quotes and may
//! span lines (see `parse` for the escapes).

use std::path::Path;

use super::syntax::{Pos, SmackError};

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Ident(String),
    Number(String),
    Str(String),
    Punct(&'static str),
    Eof,
}

impl Tok {
    pub(super) fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("'{s}'"),
            Tok::Number(s) => format!("number {s}"),
            Tok::Str(_) => "a string".into(),
            Tok::Punct(p) => format!("'{p}'"),
            Tok::Eof => "the end of the file".into(),
        }
    }
}

pub(super) struct Lexer<'a> {
    src: &'a [u8],
    i: usize,
    line: u32,
    col: u32,
    file: &'a Path,
}

impl<'a> Lexer<'a> {
    /// A lexer of `src`, the text of the file at `file` (for messages).
    pub(super) fn new(file: &'a Path, src: &'a str) -> Lexer<'a> {
        Lexer {
            src: src.as_bytes(),
            i: 0,
            line: 1,
            col: 1,
            file,
        }
    }

    pub(super) fn err(&self, pos: Pos, message: impl Into<String>) -> SmackError {
        SmackError {
            file: self.file.to_path_buf(),
            pos,
            message: message.into(),
        }
    }

    pub(super) fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            col: self.col,
        }
    }

    pub(super) fn bump(&mut self) -> Option<u8> {
        let c = *self.src.get(self.i)?;
        self.i += 1;
        if c == b'\n' {
            self.line += 1;
            self.col = 1;
        } else if c & 0xC0 != 0x80 {
            // Columns count characters, not UTF-8 continuation bytes.
            self.col += 1;
        }
        Some(c)
    }

    pub(super) fn peek(&self, k: usize) -> Option<u8> {
        self.src.get(self.i + k).copied()
    }

    pub(super) fn tokens(mut self) -> Result<Vec<(Tok, Pos)>, SmackError> {
        let mut out = Vec::new();
        loop {
            // Whitespace and comments.
            match self.peek(0) {
                Some(c) if c.is_ascii_whitespace() => {
                    self.bump();
                    continue;
                }
                Some(b'#') => {
                    self.skip_comment();
                    continue;
                }
                Some(b'/') if self.peek(1) == Some(b'/') => {
                    self.skip_comment();
                    continue;
                }
                _ => {}
            }
            let pos = self.pos();
            let Some(c) = self.peek(0) else {
                out.push((Tok::Eof, pos));
                return Ok(out);
            };
            let tok = if c.is_ascii_alphabetic() {
                let start = self.i;
                while self
                    .peek(0)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
                {
                    self.bump();
                }
                Tok::Ident(String::from_utf8_lossy(&self.src[start..self.i]).into_owned())
            } else if c.is_ascii_digit() {
                let start = self.i;
                while self.peek(0).is_some_and(|c| c.is_ascii_digit()) {
                    self.bump();
                }
                Tok::Number(String::from_utf8_lossy(&self.src[start..self.i]).into_owned())
            } else if c == b'"' {
                self.bump();
                Tok::Str(self.string(pos)?)
            } else if c == b':' && self.peek(1) == Some(b':') {
                self.bump();
                self.bump();
                Tok::Punct("::")
            } else {
                let p = match c {
                    b'{' => "{",
                    b'}' => "}",
                    b'(' => "(",
                    b')' => ")",
                    b';' => ";",
                    b'.' => ".",
                    b',' => ",",
                    b'$' => "$",
                    b'=' => "=",
                    _ => {
                        let ch = std::str::from_utf8(&self.src[self.i..])
                            .ok()
                            .and_then(|s| s.chars().next())
                            .unwrap_or(c as char);
                        return Err(self.err(
                            pos,
                            format!("unexpected character '{ch}': expected a block (client, table, dictionary, query, main), a keyword, a \"string\", or one of {{ }} ( ) ; . , $ = ::"),
                        ));
                    }
                };
                self.bump();
                Tok::Punct(p)
            };
            out.push((tok, pos));
        }
    }

    pub(super) fn skip_comment(&mut self) {
        while let Some(c) = self.bump() {
            if c == b'\n' {
                break;
            }
        }
    }

    /// The rest of a string whose opening quote is at `start`.
    pub(super) fn string(&mut self, start: Pos) -> Result<String, SmackError> {
        let mut out = Vec::new();
        loop {
            match self.bump() {
                None => {
                    return Err(self.err(
                        start,
                        "unterminated string: no closing '\"' before the end of the file",
                    ))
                }
                Some(b'"') => break,
                Some(b'\\') => match self.bump() {
                    Some(c @ (b'\\' | b'"' | b'\n')) => out.push(c),
                    // Super Smack drops other escaped characters.
                    Some(_) => {}
                    None => {
                        return Err(self.err(
                            start,
                            "unterminated string: no closing '\"' before the end of the file",
                        ))
                    }
                },
                Some(c) => out.push(c),
            }
        }
        String::from_utf8(out).map_err(|_| self.err(start, "string is not valid UTF-8"))
    }
}
