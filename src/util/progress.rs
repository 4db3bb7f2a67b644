//! Progress of long operations: the [`Progress`] sink workloads report to
//! while loading data, [`Bar`], an indicatif bar on a terminal, and
//! [`ByteBar`], the same for a download.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Shows how far a long operation (loading data) has come.
pub trait Progress: Sync {
    /// Starts a phase of `total` units (rows).
    fn start(&self, what: &str, total: u64);
    fn inc(&self, n: u64);
    fn finish(&self);
}

/// A progress sink that shows nothing.
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _what: &str, _total: u64) {}
    fn inc(&self, _n: u64) {}
    fn finish(&self) {}
}

/// An indicatif bar on stderr when it is a terminal; silent otherwise.
pub struct Bar {
    bar: ProgressBar,
}

impl Bar {
    pub fn new() -> Bar {
        let bar = ProgressBar::hidden();
        if std::io::stderr().is_terminal() {
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        Bar { bar }
    }
}

impl Default for Bar {
    fn default() -> Self {
        Bar::new()
    }
}

impl Progress for Bar {
    fn start(&self, what: &str, total: u64) {
        self.bar.set_length(total);
        self.bar.set_position(0);
        self.bar.set_style(
            ProgressStyle::with_template(
                "{msg} [{bar:40}] {human_pos}/{human_len} rows ({per_sec}, eta {eta})",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        self.bar.set_message(what.to_string());
    }

    fn inc(&self, n: u64) {
        self.bar.inc(n);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// A download's bar in bytes on stderr when it is a terminal; silent
/// otherwise. Without a known length it counts bytes and their rate.
pub struct ByteBar {
    bar: ProgressBar,
}

impl ByteBar {
    pub fn new(what: &str, total: Option<u64>) -> ByteBar {
        let bar = ProgressBar::hidden();
        if std::io::stderr().is_terminal() {
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        let template = match total {
            Some(t) => {
                bar.set_length(t);
                "{msg} [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, eta {eta})"
            }
            None => "{msg} {bytes} ({bytes_per_sec})",
        };
        bar.set_style(
            ProgressStyle::with_template(template)
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.set_message(what.to_string());
        ByteBar { bar }
    }

    /// Bytes so far.
    pub fn set(&self, bytes: u64) {
        self.bar.set_position(bytes);
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    /// Leaves the bar where it stopped, for a download that failed.
    pub fn abandon(&self) {
        self.bar.abandon();
    }
}
