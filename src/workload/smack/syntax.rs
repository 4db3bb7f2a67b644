//! A parsed .smack file: its blocks, their members, the main block's
//! lines, and positions for messages (what `parse` produces and `program`
//! checks).

use std::fmt;
use std::path::PathBuf;

/// A position in a .smack file, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

/// A parse or validation error: `FILE:LINE:COL: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmackError {
    pub file: PathBuf,
    pub pos: Pos,
    pub message: String,
}

impl fmt::Display for SmackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file.display(),
            self.pos.line,
            self.pos.col,
            self.message
        )
    }
}

impl std::error::Error for SmackError {}

/// A value written as `keyword "value";`, with where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub key: String,
    pub value: String,
    pub pos: Pos,
}

/// The kinds of blocks before `main`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    Client,
    Table,
    Dictionary,
    Query,
}

impl BlockKind {
    pub fn name(self) -> &'static str {
        match self {
            BlockKind::Client => "client",
            BlockKind::Table => "table",
            BlockKind::Dictionary => "dictionary",
            BlockKind::Query => "query",
        }
    }

    /// The members each block takes (Super Smack's keywords).
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            BlockKind::Client => &[
                "user",
                "pass",
                "host",
                "db",
                "port",
                "socket",
                "query_barrel",
            ],
            BlockKind::Table => &["client", "create", "min_rows", "data_file", "gen_data_file"],
            BlockKind::Dictionary => &["type", "source_type", "source", "delim", "file_size_equiv"],
            BlockKind::Query => &["query", "type", "has_result_set", "parsed"],
        }
    }
}

/// One `KIND "name" { … }` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub kind: BlockKind,
    pub name: String,
    pub pos: Pos,
    pub members: Vec<Member>,
}

impl Block {
    /// The last value given for `key` (a later line overrides an earlier
    /// one, as in Super Smack).
    pub fn get(&self, key: &str) -> Option<&Member> {
        self.members.iter().rev().find(|m| m.key == key)
    }
}

/// An expression in the main block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    Number(String),
    Str(String),
    /// `$N`: the N-th command-line argument after the file name.
    Arg(usize),
    /// `$name`: a variable assigned earlier in `main`.
    Var(String),
    /// `client::param` or `client::query_type::param`: a figure of a client
    /// whose threads were collected.
    ClientParam(Vec<String>),
    Concat(Vec<Expr>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MainLine {
    Call {
        client: String,
        method: String,
        args: Vec<Expr>,
        pos: Pos,
    },
    Assign {
        var: String,
        value: Expr,
        pos: Pos,
    },
}

/// A parsed .smack file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmackFile {
    pub path: PathBuf,
    pub blocks: Vec<Block>,
    pub main: Vec<MainLine>,
    pub main_pos: Pos,
}

impl SmackFile {
    pub fn block(&self, kind: BlockKind, name: &str) -> Option<&Block> {
        // Super Smack keeps the last definition of a name.
        self.blocks
            .iter()
            .rev()
            .find(|b| b.kind == kind && b.name == name)
    }

    pub fn blocks(&self, kind: BlockKind) -> impl Iterator<Item = &Block> {
        self.blocks.iter().filter(move |b| b.kind == kind)
    }

    pub fn error(&self, pos: Pos, message: impl Into<String>) -> SmackError {
        SmackError {
            file: self.path.clone(),
            pos,
            message: message.into(),
        }
    }
}
