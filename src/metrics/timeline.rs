//! The sampler's readings in time order, turned into samples as they
//! come, so a run's metrics cost the same memory in its sixth hour as in
//! its first minute: only the last few readings, the three that bound the
//! run (clients released, measured window begins, run ends) and the
//! running totals of what the monitoring connection ran and saw are kept;
//! each sample goes to its sink (the run's series file) as soon as the
//! reading after it is in.
//!
//! Readings are taken on two threads — the sampler's periodic ones, and
//! the bounding ones on the engine's timekeeper — so one can finish
//! after a reading that began later. A sample is made only once
//! [`KEEP`] later readings are in, which puts every reading in its place
//! first (two readings of one thread never overlap, so a reading is out of
//! place by at most the one or two of the other thread it overlapped).

use std::time::{Duration, Instant};

use super::proc::{machine, process, MachineSnap, TreeSnap};
use super::sql::{self, Reading};
use crate::record::metrics::{Sample, Usage};
use crate::record::OrderedMap;

/// Readings held back before the oldest pair becomes a sample.
const KEEP: usize = 3;

/// One reading of every source.
#[derive(Clone)]
pub(super) struct Snap {
    pub at: Instant,
    /// How long the reading took.
    pub took: Duration,
    pub machine: Option<MachineSnap>,
    pub server: Option<TreeSnap>,
    pub client: Option<TreeSnap>,
    pub sql: Option<Reading>,
}

/// Which bound of the run a reading is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Mark {
    /// The clients were released; `measuring` when the window begins too.
    Released {
        measuring: bool,
    },
    MeasureStart,
    End,
}

/// What the monitoring connection ran, and the wait events it saw, over
/// a stretch of readings: what `Usage` needs beyond two readings' counters.
#[derive(Debug, Clone, Default)]
pub(super) struct Extra {
    pub statements: u64,
    pub waits: OrderedMap<u64>,
    pub wait_samples: u64,
    pub semaphore_waits: OrderedMap<u64>,
    pub semaphore_readings: u64,
}

impl Extra {
    fn add(&mut self, other: &Extra) {
        self.statements += other.statements;
        self.wait_samples += other.wait_samples;
        for (event, n) in other.waits.iter() {
            self.waits.add(event, *n);
        }
        self.semaphore_readings += other.semaphore_readings;
        for (latch, n) in other.semaphore_waits.iter() {
            self.semaphore_waits.add(latch, *n);
        }
    }

    fn add_reading(&mut self, r: &Reading) {
        self.wait_samples += r.wait_samples;
        for (event, n) in &r.waits {
            self.waits.add(event, *n);
        }
        self.semaphore_readings += r.semaphore_readings;
        for (latch, n) in &r.semaphore_waits {
            self.semaphore_waits.add(latch, *n);
        }
    }
}

/// Counts by name, the largest first (ties by name).
fn most_first(counts: &OrderedMap<u64>) -> OrderedMap<u64> {
    let mut sorted = counts.clone();
    sorted.0.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
    sorted
}

/// Where samples go as they are made.
pub(super) type Sink = Box<dyn FnMut(Sample) + Send>;

/// How readings become usage (the clock tick, which SQL counters count
/// statements); fixed for a run.
pub(super) struct Units {
    pub tick_s: f64,
    pub counts_statements: &'static [&'static str],
}

/// See the module docs.
pub(super) struct Timeline {
    units: Units,
    /// Readings not yet the first of a sample's pair, in time order.
    pending: Vec<Snap>,
    /// Wait-event readings (PostgreSQL) not yet in a sample.
    waits: Vec<(Instant, Reading)>,
    pub released: Option<Snap>,
    pub start: Option<Snap>,
    pub end: Option<Snap>,
    /// From the release up to the window's start (or up to the end, when
    /// the window never began), and over the window.
    warmup_extra: Extra,
    window_extra: Extra,
    pub readings: u64,
    pub took_ms_sum: f64,
    pub took_ms_max: f64,
    sink: Sink,
}

impl Timeline {
    pub fn new(units: Units, sink: Sink) -> Timeline {
        Timeline {
            units,
            pending: Vec::new(),
            waits: Vec::new(),
            released: None,
            start: None,
            end: None,
            warmup_extra: Extra::default(),
            window_extra: Extra::default(),
            readings: 0,
            took_ms_sum: 0.0,
            took_ms_max: 0.0,
            sink,
        }
    }

    /// Takes a reading in (a bound of the run if `mark` says so); how
    /// loaded the machine was since the reading before it.
    pub fn push(&mut self, snap: Snap, mark: Option<Mark>) -> Load {
        self.readings += 1;
        let took = snap.took.as_secs_f64() * 1e3;
        self.took_ms_sum += took;
        self.took_ms_max = self.took_ms_max.max(took);
        match mark {
            Some(Mark::Released { measuring }) => {
                self.released = Some(snap.clone());
                if measuring {
                    self.start = Some(snap.clone());
                }
            }
            Some(Mark::MeasureStart) => self.start = Some(snap.clone()),
            Some(Mark::End) => self.end = Some(snap.clone()),
            None => {}
        }
        let at = snap.at;
        let pos = self.pending.partition_point(|s| s.at <= at);
        let load = match (pos.checked_sub(1).map(|i| &self.pending[i]), &snap.machine) {
            (Some(prev), Some(cur)) => prev.machine.as_ref().map_or(Load::default(), |p| Load {
                saturated: saturated(p, cur),
                busy: busy(p, cur),
            }),
            _ => Load::default(),
        };
        self.pending.insert(pos, snap);
        while self.pending.len() > KEEP {
            self.pair();
        }
        load
    }

    /// Keeps a wait-event reading for the sample it falls in.
    pub fn push_waits(&mut self, at: Instant, r: Reading) {
        self.waits.push((at, r));
    }

    /// Makes the sample of the two oldest pending readings and lets the
    /// older go.
    fn pair(&mut self) {
        let a = self.pending.remove(0);
        let b = &self.pending[0];
        // The monitor's statements from `a`'s reading up to `b`'s, and the
        // wait-event readings after `a` up to `b`.
        let mut extra = Extra {
            statements: a.sql.as_ref().map_or(0, |r| r.statements),
            ..Extra::default()
        };
        if let Some(r) = &b.sql {
            extra.add_reading(r);
        }
        let mut kept = Vec::new();
        for (at, r) in self.waits.drain(..) {
            if at <= b.at {
                if at > a.at {
                    extra.statements += r.statements;
                    extra.add_reading(&r);
                }
            } else {
                kept.push((at, r));
            }
        }
        self.waits = kept;
        let before_end = self.end.as_ref().is_none_or(|e| b.at <= e.at);
        let after_release = self.released.as_ref().is_some_and(|r| a.at >= r.at);
        let in_window = self.start.as_ref().is_some_and(|s| a.at >= s.at);
        if after_release && before_end {
            if in_window {
                self.window_extra.add(&extra);
            } else {
                self.warmup_extra.add(&extra);
            }
        }
        let Some(released) = &self.released else {
            return;
        };
        if b.at <= released.at || self.end.as_ref().is_some_and(|e| a.at >= e.at) {
            return;
        }
        let sample = Sample {
            t_s: b.at.duration_since(released.at).as_secs_f64(),
            warmup: !in_window,
            usage: self.usage(&a, b, &extra),
        };
        (self.sink)(sample);
    }

    /// Makes the samples still held back: the run is over.
    pub fn flush(&mut self) {
        while self.pending.len() > 1 {
            self.pair();
        }
    }

    /// The measured window's usage (from its start, or from the release
    /// when it never began, to the end) and the warmup's, if there was one.
    /// Call after [`Timeline::flush`].
    pub fn totals(&self) -> Option<(Usage, Option<Usage>)> {
        let released = self.released.as_ref()?;
        let end = self.end.as_ref().or(self.pending.last())?;
        Some(match &self.start {
            Some(start) => {
                let warmup = (start.at > released.at)
                    .then(|| self.usage(released, start, &self.warmup_extra));
                (self.usage(start, end, &self.window_extra), warmup)
            }
            None => (self.usage(released, end, &self.warmup_extra), None),
        })
    }

    /// What happened between readings `a` and `b`, with what the monitor
    /// ran and saw in between.
    fn usage(&self, a: &Snap, b: &Snap, extra: &Extra) -> Usage {
        let tick = self.units.tick_s;
        let mut u = Usage {
            duration_s: b.at.saturating_duration_since(a.at).as_secs_f64(),
            ..Usage::default()
        };
        if let (Some(ma), Some(mb)) = (&a.machine, &b.machine) {
            u.cpu = machine::cpu_delta(&ma.cpu, &mb.cpu, tick);
            u.per_cpu = ma
                .per_cpu
                .iter()
                .zip(&mb.per_cpu)
                .map(|(x, y)| machine::cpu_delta(x, y, tick))
                .collect();
            u.context_switches = mb.context_switches.saturating_sub(ma.context_switches);
            u.procs_running = mb.procs_running;
            u.procs_blocked = mb.procs_blocked;
            u.memory = mb.memory;
            u.disks = machine::disk_delta(&ma.disks, &mb.disks);
            u.network = machine::net_delta(&ma.network, &mb.network);
        }
        if let (Some(x), Some(y)) = (&a.server, &b.server) {
            u.server = Some(process::delta(x, y, tick));
        }
        if let (Some(x), Some(y)) = (&a.client, &b.client) {
            u.client = process::delta(x, y, tick);
        }
        u.monitor_statements = extra.statements;
        if let (Some(ra), Some(rb)) = (&a.sql, &b.sql) {
            u.sql = sql::delta(ra, rb, extra.statements, self.units.counts_statements);
        }
        u.wait_samples = extra.wait_samples;
        u.waits = most_first(&extra.waits);
        u.semaphore_readings = extra.semaphore_readings;
        u.semaphore_waits = most_first(&extra.semaphore_waits);
        u
    }
}

/// How loaded the machine was between two readings.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Load {
    /// See [`saturated`].
    pub saturated: bool,
    /// The share of the CPUs' time not idle, 0 to 1; None when unknown.
    pub busy: Option<f64>,
}

/// The CPU time from `prev` to `cur`, in all and idle (idle and iowait).
fn cpu_time(prev: &MachineSnap, cur: &MachineSnap) -> (u64, u64) {
    let total = cur
        .cpu
        .iter()
        .sum::<u64>()
        .saturating_sub(prev.cpu.iter().sum());
    let idle = (cur.cpu[3] + cur.cpu[4]).saturating_sub(prev.cpu[3] + prev.cpu[4]);
    (total, idle.min(total))
}

/// The share of the CPUs' time not idle (nor waiting for I/O) from `prev`
/// to `cur`.
pub(super) fn busy(prev: &MachineSnap, cur: &MachineSnap) -> Option<f64> {
    let (total, idle) = cpu_time(prev, cur);
    (total > 0).then(|| 1.0 - idle as f64 / total as f64)
}

/// Whether the machine was saturated from `prev` to `cur`: more runnable
/// threads than CPUs now (`procs_running` counts the reader itself), or at
/// most 10 % of the CPU time idle (idle and iowait) in between.
pub(super) fn saturated(prev: &MachineSnap, cur: &MachineSnap) -> bool {
    let cpus = cur.per_cpu.len().max(1) as u64;
    let (total, idle) = cpu_time(prev, cur);
    cur.procs_running > cpus + 1 || (total > 0 && idle * 10 <= total)
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    fn snap(at: Instant, statements: u64) -> Snap {
        Snap {
            at,
            took: Duration::from_millis(1),
            machine: None,
            server: None,
            client: None,
            sql: Some(Reading {
                statements,
                ..Reading::default()
            }),
        }
    }

    fn timeline() -> (Timeline, Arc<Mutex<Vec<Sample>>>) {
        let out = Arc::new(Mutex::new(Vec::new()));
        let sink = {
            let out = out.clone();
            Box::new(move |s: Sample| out.lock().unwrap().push(s))
        };
        let units = Units {
            tick_s: 0.01,
            counts_statements: &[],
        };
        (Timeline::new(units, sink), out)
    }

    #[test]
    fn readings_out_of_order_become_samples_in_order_and_add_up() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let (mut tl, out) = timeline();
        tl.push(snap(at(0), 1), None);
        tl.push(snap(at(100), 1), Some(Mark::Released { measuring: false }));
        tl.push(snap(at(200), 1), None);
        // The window's start was read on the other thread: it began before
        // the periodic reading at 300 ms but finished after it.
        tl.push(snap(at(300), 1), None);
        tl.push(snap(at(250), 1), Some(Mark::MeasureStart));
        for ms in [400, 500, 600] {
            tl.push(snap(at(ms), 1), None);
        }
        tl.push_waits(
            at(550),
            Reading {
                statements: 5,
                ..Reading::default()
            },
        );
        tl.push(snap(at(650), 1), Some(Mark::End));
        tl.push(snap(at(700), 1), None);
        tl.flush();
        let samples = out.lock().unwrap().clone();
        let ts: Vec<f64> = samples.iter().map(|s| (s.t_s * 1e3).round()).collect();
        // From the release on, up to the first reading after the end.
        assert_eq!(ts, vec![100.0, 150.0, 200.0, 300.0, 400.0, 500.0, 550.0]);
        let warmup: Vec<bool> = samples.iter().map(|s| s.warmup).collect();
        assert_eq!(warmup, vec![true, true, false, false, false, false, false]);
        let (window, before) = tl.totals().unwrap();
        // The window's readings from its start up to the end, one
        // statement each (250, 300, 400, 500, 600), and the wait reading's 5.
        assert_eq!(window.monitor_statements, 10);
        assert_eq!(before.unwrap().monitor_statements, 2);
        assert!((window.duration_s - 0.4).abs() < 1e-9);
    }

    #[test]
    fn a_long_run_keeps_a_few_readings_whatever_its_length() {
        let t0 = Instant::now();
        let (mut tl, out) = timeline();
        tl.push(snap(t0, 1), Some(Mark::Released { measuring: true }));
        for i in 1..=10_000u64 {
            let at = t0 + Duration::from_millis(i);
            tl.push(snap(at, 1), None);
            tl.push_waits(at, Reading::default());
            assert!(tl.pending.len() <= KEEP);
            assert!(tl.waits.len() <= KEEP + 1);
        }
        assert_eq!(out.lock().unwrap().len(), 10_000 - KEEP + 1);
        tl.flush();
        assert_eq!(out.lock().unwrap().len(), 10_000);
    }
}
