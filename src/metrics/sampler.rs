//! The sampler: a thread beside a run that reads the machine (`/proc`),
//! the server's processes, dbsweep's own process and the server's counters
//! over SQL every interval, plus readings the engine asks for at the
//! moments that bound the run (clients released, measured window begins,
//! run ends). Readings become samples as they come (`timeline`), each
//! handed to the run's series file (or kept, without one), so sampling a
//! six-hour run keeps no more than a six-minute one; [`Sampler::finish`]
//! builds the record's [`Metrics`]: the time series, the warmup's and the
//! window's totals, the derived figures, and what could not be measured.
//!
//! Nothing here can fail a run: a source that cannot be read becomes a gap
//! with its reason.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::proc::{self, process, sockets};
use super::profile::Profiler;
use super::sql::Monitor;
use super::timeline::{self, Mark, Snap, Timeline};
use crate::driver::Target;
use crate::record::metrics::{Gap, Metrics, Sample, ServerProcess};
use crate::record::spool::SeriesWriter;
use crate::record::Series;

/// What to sample.
#[derive(Debug, Clone)]
pub struct Options {
    /// Time between periodic readings.
    pub interval: Duration,
    /// Where the server's processes are.
    pub server: ServerRef,
    /// Where to read the server's counters over SQL (SQLite: none).
    pub target: Target,
    /// The `/proc` directory (`/proc` but in tests).
    pub proc: PathBuf,
    /// Counts the workload reads from the database at the window's start
    /// and end (`Workload::window_counts`): (name, SQL).
    pub counts: super::counts::Queries,
    /// Also shown each sample as it is made (a live feed); None: nobody.
    pub tap: Option<Tap>,
    /// On-CPU profiles of the server and the client over the measured
    /// window (`run --profile`); None: none.
    pub profile: Option<super::profile::Settings>,
}

/// Something shown each sample as the sampler makes it, on the sampler's
/// thread: it must return at once.
#[derive(Clone)]
pub struct Tap(pub Arc<dyn Fn(&Sample) + Send + Sync>);

impl std::fmt::Debug for Tap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tap")
    }
}

/// How the server's processes are found.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerRef {
    /// A server dbsweep started: its main process.
    Pid(u32),
    /// SQLite: the server runs inside the client.
    Embedded,
    /// A server given by URL: the process listening on its port or socket,
    /// if it runs on this machine and can be seen.
    Listening,
    /// Another process samples this server — a coordinated run's first
    /// shard, as the server is one: N shards each reading its processes
    /// and views would cost the server N times (at 1,024 connections a
    /// reading walks a thousand backends). The text says where, for the
    /// record's gaps; the machine and the client are still sampled here.
    Elsewhere(String),
}

/// CPU time of the calling thread so far, ns: what a reading cost the
/// machine, whatever else competed for it (the wall time of a reading
/// grows with the load; its CPU time does not).
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec, which `ts` is.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Wait events are sampled up to this many times per interval
/// (PostgreSQL): once with the interval's reading, and in between as
/// [`extra_waits`] says.
const WAIT_SAMPLES_PER_INTERVAL: u32 = 10;

/// The wait-event readings to take between two periodic readings, after
/// an interval in which the machine's CPUs were `busy` (0 to 1): none
/// below a quarter busy, all nine from three quarters, in proportion
/// between. Sessions wait on each other only when they compete; with CPUs
/// to spare a reading shows them running or waiting for their client,
/// which the interval's own reading already samples over a run's many
/// intervals, and each extra one is a query, a wake-up and a CPU taken
/// from a connection about to start a transaction (its schedule lag).
fn extra_waits(busy: Option<f64>) -> u32 {
    let most = WAIT_SAMPLES_PER_INTERVAL - 1;
    let Some(busy) = busy else {
        return most;
    };
    let share = ((busy - 0.25) / 0.5).clamp(0.0, 1.0);
    (share * f64::from(most)).round() as u32
}

/// Whether tick `k` (1 to 9) of an interval takes one of its `extra`
/// wait readings: spread evenly over the interval.
fn waits_at(k: u32, extra: u32) -> bool {
    let most = WAIT_SAMPLES_PER_INTERVAL - 1;
    k * extra / most != (k - 1) * extra / most
}

struct Inner {
    proc: PathBuf,
    tick_s: f64,
    page_bytes: u64,
    server_pid: Option<u32>,
    /// A pooler in front of the server, read with it.
    pooler_pid: Option<u32>,
    client_pid: u32,
    monitor: Mutex<Option<Monitor>>,
    /// The readings so far, turned into samples as they come.
    timeline: Mutex<Timeline>,
    /// CPU spent reading, ns.
    cpu_ns: AtomicU64,
    /// The workload's counts and their readings at the window's start and
    /// end.
    counter: Mutex<super::counts::Counter>,
    counted: Mutex<[Vec<Option<f64>>; 2]>,
    stop: Mutex<bool>,
    wake: Condvar,
    gaps: Mutex<Vec<Gap>>,
}

impl Inner {
    /// Reads every source now and adds the reading to the timeline (as a
    /// bound of the run if `mark` says so); how loaded the machine was
    /// since the reading before it.
    fn snap(&self, mark: Option<Mark>) -> timeline::Load {
        let at = Instant::now();
        let cpu_before = thread_cpu_ns();
        let machine = match proc::read_machine(&self.proc) {
            Ok((m, gaps)) => {
                for (what, why) in gaps {
                    self.gap(&what, why);
                }
                Some(m)
            }
            Err(e) => {
                self.gap("machine", e);
                None
            }
        };
        let roots: Vec<u32> = self
            .server_pid
            .into_iter()
            .chain(self.pooler_pid)
            .chain([self.client_pid])
            .collect();
        let mut trees = process::read_trees(&self.proc, &roots, self.page_bytes, self.tick_s);
        let client = trees.pop().flatten();
        let pooler = self.pooler_pid.and_then(|_| trees.pop().flatten());
        let mut server = trees.pop().flatten();
        if let (Some(s), Some(p)) = (&mut server, &pooler) {
            s.add(p);
        }
        let sql = self.monitor.lock().unwrap().as_mut().map(|m| {
            let r = m.read();
            for (what, why) in &r.gaps {
                self.gap(what, why.clone());
            }
            r
        });
        let took = at.elapsed();
        self.charge(cpu_before);
        let snap = Snap {
            at,
            took,
            machine,
            server,
            client,
            sql,
        };
        self.timeline.lock().unwrap().push(snap, mark)
    }

    /// Adds the CPU this thread used since `cpu_before` to the readings' cost.
    fn charge(&self, cpu_before: u64) {
        self.cpu_ns.fetch_add(
            thread_cpu_ns().saturating_sub(cpu_before),
            Ordering::Relaxed,
        );
    }

    /// Reads the workload's counts at the window's start (`at` 0) or end
    /// (1), after that moment's reading of the server's counters.
    fn count(&self, at: usize) {
        let mut counter = self.counter.lock().unwrap();
        if counter.is_empty() {
            return;
        }
        let cpu_before = thread_cpu_ns();
        let v = counter.read();
        drop(counter);
        self.charge(cpu_before);
        self.counted.lock().unwrap()[at] = v;
    }

    /// Samples the wait events alone (PostgreSQL).
    fn sample_waits(&self) {
        let cpu_before = thread_cpu_ns();
        let r = self
            .monitor
            .lock()
            .unwrap()
            .as_mut()
            .and_then(|m| m.read_waits());
        if let Some(r) = r {
            self.timeline.lock().unwrap().push_waits(Instant::now(), r);
        }
        self.charge(cpu_before);
    }

    /// Notes a gap once.
    fn gap(&self, what: &str, why: String) {
        let mut gaps = self.gaps.lock().unwrap();
        if !gaps.iter().any(|g| g.what == what) {
            gaps.push(Gap {
                what: what.to_string(),
                why,
            });
        }
    }
}

/// A running sampler; see the module docs.
pub struct Sampler {
    inner: Arc<Inner>,
    interval: Duration,
    server_how: String,
    thread: Option<JoinHandle<()>>,
    series: Option<Arc<SeriesWriter>>,
    /// The samples, without a series file.
    kept: Arc<Mutex<Vec<Sample>>>,
    /// Profiles being taken, switched on over the measured window.
    profiler: Mutex<Option<Profiler>>,
}

impl Sampler {
    /// Finds the server's processes, opens the monitoring connection, takes
    /// a first reading and starts the periodic ones. Each sample goes to
    /// `series` as it is made (the run's series file), or is kept in memory
    /// without one.
    pub fn start(opts: &Options, series: Option<Arc<SeriesWriter>>) -> Sampler {
        let mut gaps = Vec::new();
        let (server_pid, pooler_pid, server_how) = find_server(opts, &mut gaps);
        let elsewhere = matches!(opts.server, ServerRef::Elsewhere(_));
        let connected = if elsewhere {
            Err(server_how.clone())
        } else {
            Monitor::connect(&opts.target)
        };
        let monitor = match connected {
            Ok(m) => Some(m),
            Err(why) => {
                gaps.push(Gap {
                    what: "server counters".into(),
                    why,
                });
                None
            }
        };
        let counts_statements = monitor.as_ref().map_or(&[][..], |m| m.counts_statements());
        let kept = Arc::new(Mutex::new(Vec::new()));
        let tap = opts.tap.clone();
        let show = move |s: &Sample| {
            if let Some(Tap(t)) = &tap {
                t(s);
            }
        };
        let sink: timeline::Sink = match &series {
            Some(w) => {
                let w = w.clone();
                Box::new(move |s: Sample| {
                    show(&s);
                    w.sample(&s)
                })
            }
            None => {
                let kept = kept.clone();
                Box::new(move |s: Sample| {
                    show(&s);
                    kept.lock().unwrap().push(s)
                })
            }
        };
        let tick_s = proc::tick_s();
        let timeline = Timeline::new(
            timeline::Units {
                tick_s,
                counts_statements,
            },
            sink,
        );
        let inner = Arc::new(Inner {
            proc: opts.proc.clone(),
            tick_s,
            page_bytes: proc::page_bytes(),
            server_pid,
            pooler_pid,
            client_pid: std::process::id(),
            monitor: Mutex::new(monitor),
            timeline: Mutex::new(timeline),
            cpu_ns: AtomicU64::new(0),
            counter: Mutex::new(super::counts::Counter::connect(
                &opts.target,
                if elsewhere {
                    Vec::new()
                } else {
                    opts.counts.clone()
                },
            )),
            counted: Mutex::new([Vec::new(), Vec::new()]),
            stop: Mutex::new(false),
            wake: Condvar::new(),
            gaps: Mutex::new(gaps),
        });
        let profiler = opts.profile.as_ref().and_then(|settings| {
            Profiler::start(settings, inner.server_pid)
                .map_err(|why| inner.gap("profile", why))
                .ok()
        });
        inner.snap(None);
        let interval = opts.interval.max(Duration::from_millis(10));
        let tick = interval / WAIT_SAMPLES_PER_INTERVAL;
        let thread = {
            let inner = inner.clone();
            std::thread::Builder::new()
                .name("metrics".into())
                .spawn(move || {
                    // Real-time only while the machine is saturated (see
                    // `saturated`): then an ordinary thread's reading waits
                    // seconds behind the load; with room to spare a
                    // real-time reading would take a CPU from a connection
                    // about to start a transaction, and show in its lag.
                    crate::util::priority::background_thread();
                    let mut realtime = false;
                    let mut next = Instant::now() + interval;
                    // Ticks since the last periodic reading, and how many
                    // of them read the wait events.
                    let (mut k, mut extra) = (0, extra_waits(None));
                    let mut stop = inner.stop.lock().unwrap();
                    loop {
                        let now = Instant::now();
                        let wait = tick.min(next.saturating_duration_since(now));
                        let (s, _) = inner.wake.wait_timeout(stop, wait).unwrap();
                        stop = s;
                        if *stop {
                            break;
                        }
                        drop(stop);
                        if Instant::now() >= next {
                            let load = inner.snap(None);
                            next += interval;
                            (k, extra) = (0, extra_waits(load.busy));
                            if load.saturated != realtime {
                                realtime =
                                    load.saturated && crate::util::priority::realtime_thread();
                                if !realtime {
                                    crate::util::priority::background_thread();
                                }
                            }
                        } else {
                            k = (k + 1).min(WAIT_SAMPLES_PER_INTERVAL - 1);
                            if waits_at(k, extra) {
                                inner.sample_waits();
                            }
                        }
                        stop = inner.stop.lock().unwrap();
                    }
                })
                .ok()
        };
        Sampler {
            inner,
            interval,
            server_how,
            thread,
            series,
            kept,
            profiler: Mutex::new(profiler),
        }
    }

    /// The clients were released (the run's time 0): a reading now;
    /// `measuring` when the measured window begins at once (no warmup).
    ///
    /// The bounding readings are taken on the caller's thread (the engine's
    /// timekeeper, real-time where allowed, so on time under any load),
    /// each when asked: never queued behind the sampler thread's queries.
    pub fn released(&self, measuring: bool) {
        self.inner.snap(Some(Mark::Released { measuring }));
        if measuring {
            self.profiling(true);
            self.inner.count(0);
        }
    }

    /// The measured window begins: a reading now.
    pub fn measure_start(&self) {
        self.inner.snap(Some(Mark::MeasureStart));
        self.profiling(true);
        self.inner.count(0);
    }

    /// Profiles sample (the measured window) or not.
    fn profiling(&self, on: bool) {
        if let Some(p) = self.profiler.lock().unwrap().as_mut() {
            p.sampling(on);
        }
    }

    /// The run ended: a reading now (the engine lets the clients close
    /// their connections after it).
    pub fn end(&self) {
        self.profiling(false);
        self.inner.snap(Some(Mark::End));
        self.inner.count(1);
    }

    /// Stops sampling and builds the record's metrics; `transactions` and
    /// `queries` are the measured window's, for the per-transaction
    /// figures.
    pub fn finish(mut self, transactions: u64, queries: u64) -> Metrics {
        *self.inner.stop.lock().unwrap() = true;
        self.inner.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let profiles = match self.profiler.lock().unwrap().take() {
            Some(p) => {
                let (profiles, notes) = p.finish();
                for (what, why) in notes {
                    self.inner.gap(&what, why);
                }
                profiles
            }
            None => Vec::new(),
        };
        let mut timeline = self.inner.timeline.lock().unwrap();
        timeline.flush();
        let (window, warmup) = timeline.totals().unwrap_or_default();
        let mut gaps = std::mem::take(&mut *self.inner.gaps.lock().unwrap());
        let semaphores: Vec<String> = [&timeline.start, &timeline.end]
            .into_iter()
            .filter_map(|s| s.as_ref()?.sql.as_ref()?.semaphores.clone())
            .collect();
        if self.inner.server_pid.is_none() && !gaps.iter().any(|g| g.what == "server process") {
            gaps.push(Gap {
                what: "server process".into(),
                why: self.server_how.clone(),
            });
        }
        let figures = super::figures::derive(&window, transactions, queries, &mut gaps);
        let samples = match &self.series {
            Some(w) => w.samples(),
            None => Series::from(std::mem::take(&mut *self.kept.lock().unwrap())),
        };
        let window_counts = {
            let counter = self.inner.counter.lock().unwrap();
            let counted = self.inner.counted.lock().unwrap();
            let counts = counter.window(&counted[0], &counted[1]);
            if !counter.is_empty() && counts.len() < counted[0].len().max(1) {
                gaps.push(Gap {
                    what: "the workload's counts of its own work in the database".into(),
                    why: counter
                        .why_not
                        .clone()
                        .unwrap_or_else(|| "not read at both ends of the window".into()),
                });
            }
            counts
        };
        Metrics {
            interval_s: self.interval.as_secs_f64(),
            readings: timeline.readings,
            reading_ms_avg: timeline.took_ms_sum / timeline.readings.max(1) as f64,
            reading_ms_max: timeline.took_ms_max,
            sampling_cpu_s: Some(self.inner.cpu_ns.load(Ordering::Relaxed) as f64 / 1e9),
            server_process: ServerProcess {
                pid: self.inner.server_pid,
                how: self.server_how.clone(),
            },
            warmup,
            window,
            figures,
            samples,
            gaps,
            innodb_semaphores: semaphores,
            window_counts,
            merged: None,
            profiles,
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        *self.inner.stop.lock().unwrap() = true;
        self.inner.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The server's main process, a pooler's in front of it, and how they were
/// found (or why not, also as a gap).
fn find_server(opts: &Options, gaps: &mut Vec<Gap>) -> (Option<u32>, Option<u32>, String) {
    match &opts.server {
        ServerRef::Pid(pid) => (Some(*pid), None, "managed".to_string()),
        ServerRef::Embedded => (
            None,
            None,
            "embedded: SQLite runs in the client".to_string(),
        ),
        ServerRef::Elsewhere(why) => (None, None, why.clone()),
        ServerRef::Listening => match sockets::find_listener(&opts.proc, &opts.target) {
            Ok((pid, how)) => match super::pooled::behind(&opts.proc, &opts.target, pid) {
                Some((Some(db), note)) => (Some(db), Some(pid), format!("{how}: {note}")),
                Some((None, note)) => (Some(pid), None, format!("{how}: {note}")),
                None => (Some(pid), None, how),
            },
            Err(why) => {
                gaps.push(Gap {
                    what: "server process".into(),
                    why: why.clone(),
                });
                (None, None, why)
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_readings_follow_the_machines_load() {
        assert_eq!(extra_waits(Some(0.1)), 0);
        assert_eq!(extra_waits(Some(0.25)), 0);
        assert_eq!(extra_waits(Some(0.5)), 5);
        assert_eq!(extra_waits(Some(0.75)), 9);
        assert_eq!(extra_waits(Some(1.0)), 9);
        // Unknown (no /proc/stat): as before, every tick.
        assert_eq!(extra_waits(None), 9);
    }

    #[test]
    fn an_intervals_wait_readings_are_spread_over_its_ticks() {
        for extra in 0..=9 {
            let at: Vec<u32> = (1..=9).filter(|&k| waits_at(k, extra)).collect();
            assert_eq!(at.len() as u32, extra, "{extra}: {at:?}");
        }
        let at: Vec<u32> = (1..=9).filter(|&k| waits_at(k, 3)).collect();
        assert_eq!(at, [3, 6, 9]);
    }
}
