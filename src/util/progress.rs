//! Progress of long operations (loading data): the [`Progress`] sink
//! workloads report to, and [`Bar`], an indicatif bar on a terminal.

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
