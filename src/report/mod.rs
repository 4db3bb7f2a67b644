//! Renderers of results, in rooms by what they render; each room uses
//! only the rooms before it (tests/layers.rs holds this):
//!
//! - [`plot`]: charts as data ([`plot::chart`]) and as SVG or PNG.
//! - [`doc`]: the format-neutral document — a title, facts, sections of
//!   paragraphs, tables and charts — and its HTML, Markdown and text
//!   renderers.
//! - [`csv`]: the tidy CSV table every report writes, one figure a line.
//! - [`dist`]: what `dbsweep dist` prints (a distribution's draws).
//! - [`run`]: one run, from its record ([`crate::record::Run`]), where
//!   every figure was derived once when it was measured: the text summary,
//!   the live lines, the run's document and its sections, Super Smack's
//!   barrel report.
//! - [`study`]: a study, from its stored results: the analysis, the
//!   document, the study's CSV and JSON.
//! - [`results`]: what `dbsweep results` prints: every stored point and
//!   the summaries of repeats, as a table or CSV.
//! - [`export`]: every format (HTML, Markdown, text, CSV, JSON) behind one
//!   [`export::Exporter`], for a run and for a study, so a command asks
//!   for a format and never matches on one.

pub mod csv;
pub mod dist;
pub mod doc;
pub mod export;
pub mod plot;
pub mod results;
pub mod run;
pub mod study;
