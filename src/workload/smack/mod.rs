//! Super Smack: run `.smack` files unmodified (`dbsweep smack FILE ARGS…`).
//!
//! Super Smack 1.3 (MySQL AB, 2000–2004) is unmaintained and no longer
//! builds; its users still have .smack files. A .smack file is a small
//! program: `client`, `table`, `dictionary` and `query` blocks, then a
//! `main` block that tells each client to fork N threads, connect, fire its
//! query barrel for R rounds and report. dbsweep reads the same files and
//! runs them through its own engine, so every query is timed with a
//! monotonic clock into exact histograms. This module describes a file;
//! `dbsweep smack` (`commands::smack`) runs its main block.
//!
//! - [`parse`]: the language: a parser over the lexer's tokens (`lex`)
//!   into a file's syntax tree (`syntax`), with positions for messages.
//! - [`program`]: checks a parsed file and turns it into per-client plans
//!   before anything connects (undefined names are errors here); `blocks`
//!   checks the blocks before `main`.
//! - [`dict`]: dictionaries (`$name` values).
//! - [`gen_data`]: Super Smack's `gen-data` data generator, built in.
//! - [`table`]: table blocks (create, min_rows, data files, bulk load).
//! - [`script`]: a client's query barrel as a [`crate::workload::Workload`].
//! - [`client`]: one client block's query barrel as a workload, and what
//!   its run record states.
//! - [`builtin`]: seed 000's Member / Record / Result tables and its three
//!   tests as built-in workloads (`smack_select`, `smack_update`, `smack_oltp`).
//!
//! docs/smack.md describes the command and every difference from Super
//! Smack 1.3.

mod blocks;
pub mod builtin;
pub mod client;
pub mod dict;
pub mod gen_data;
mod lex;
pub mod parse;
pub mod program;
pub mod script;
mod syntax;
pub mod table;
