//! The live feed of `run --prometheus ADDR` and a study's `prometheus =
//! "ADDR"`: an HTTP listener (`util::http`, bound before the run starts)
//! serving `/metrics`, and the watcher the engine tells of each point as
//! it runs (`engine::live`). The watcher copies a few figures into the
//! shared [`Feed`] under a mutex once per interval and per sample; a
//! scrape clones the feed and renders it (`report::run::openmetrics`)
//! on the listener's thread, so the run's hot path never sees a scrape.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use crate::engine::live::{Live, Watch};
use crate::engine::IntervalSample;
use crate::record::metrics::Sample;
use crate::report::run::feed::Feed;
use crate::report::run::openmetrics::{render, Format};
use crate::util::http::{Page, Request, Server};
use crate::UsageError;

/// A bound feed; it stops serving when dropped.
pub struct Prometheus {
    feed: Arc<Mutex<Feed>>,
    server: Server,
}

/// The engine's side: updates the feed.
struct Watcher(Arc<Mutex<Feed>>);

impl Watch for Watcher {
    fn begin(&self, labels: &[(String, String)]) {
        self.0.lock().unwrap().begin(labels);
    }

    fn interval(&self, s: &IntervalSample) {
        self.0.lock().unwrap().interval(s);
    }

    fn sample(&self, s: &Sample) {
        self.0.lock().unwrap().sample(s);
    }

    fn end(&self) {
        self.0.lock().unwrap().end();
    }
}

/// The interval of a run's samples when the feed needs them and no
/// `--report-interval` was asked for.
pub const FEED_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

impl Prometheus {
    /// Binds `addr` and serves the feed there. `option` is how the user
    /// named the address (`--prometheus 127.0.0.1:9187`, or the study
    /// file's key), for the one line that says why it cannot be bound.
    pub fn bind(addr: SocketAddr, option: &str) -> Result<Prometheus, UsageError> {
        let feed = Arc::new(Mutex::new(Feed::default()));
        let served = feed.clone();
        let handler = Box::new(move |r: &Request| page(&served, r));
        let server = Server::bind(addr, handler).map_err(|e| UsageError(bind_error(option, &e)))?;
        Ok(Prometheus { feed, server })
    }

    /// Where it listens.
    pub fn local_addr(&self) -> SocketAddr {
        self.server.local_addr()
    }

    /// A point's watcher with `labels` beyond its workload and target.
    pub fn live(&self, labels: Vec<(String, String)>) -> Live {
        Live {
            watch: Arc::new(Watcher(self.feed.clone())),
            labels,
        }
    }
}

/// What a request gets: the feed at `/metrics` in the format it accepts,
/// a line pointing there at `/`.
fn page(feed: &Mutex<Feed>, r: &Request) -> Option<Page> {
    match r.path.as_str() {
        "/metrics" => {
            let format = Format::from_accept(&r.accept);
            let snapshot = feed.lock().unwrap().clone();
            Some(Page {
                content_type: format.content_type().into(),
                body: render(&snapshot, format).into_bytes(),
            })
        }
        "/" => Some(Page {
            content_type: "text/plain; charset=utf-8".into(),
            body: b"dbsweep's live feed: /metrics (OpenMetrics, or Prometheus's text format)\n"
                .to_vec(),
        }),
        _ => None,
    }
}

/// The line that says why `option`'s address could not be bound, and
/// what to do.
fn bind_error(option: &str, e: &std::io::Error) -> String {
    use std::io::ErrorKind::*;
    let fix = match e.kind() {
        AddrInUse => "address already in use; choose another port or stop what listens there",
        AddrNotAvailable => {
            "not an address of this machine; give one of its own (127.0.0.1:PORT, or :PORT for every interface)"
        }
        PermissionDenied => {
            "permission denied; choose a port above 1023 (exporters use 9100 and up, e.g. 9187)"
        }
        _ => "",
    };
    if fix.is_empty() {
        format!("{option}: cannot listen there ({e}); choose another address")
    } else {
        format!("{option}: {fix}")
    }
}
