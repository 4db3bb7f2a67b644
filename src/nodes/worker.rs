//! `dbsweep worker --coordinator HOST:PORT`: one shard of a coordinated
//! run. It connects, is given the run's options and its shard, measures
//! its clock against the coordinator's, connects its clients, says it is
//! ready, releases them at the coordinator's instant (corrected by the
//! offset, through the engine's release hook) and sends its record back.
//! It prints nothing on stdout; the coordinator reports.
//! (`commands::nodes::worker` is the verb's glue: its exit status.)

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, UNIX_EPOCH};

use super::protocol::{self, Reader, Round, ToCoordinator, ToWorker, Writer, PINGS};
use crate::engine::point;
use crate::engine::release::Release;
use crate::engine::spec::PointSpec;
use crate::engine::Shard;
use crate::record::{self, StopReason};
use crate::UsageError;

/// `dbsweep worker`.
pub struct WorkerRequest {
    /// The coordinator's `HOST:PORT`.
    pub coordinator: String,
    /// `--shard-index`; None: from the environment, else the coordinator's
    /// choice.
    pub shard_index: Option<usize>,
}

/// How long a worker keeps trying to reach its coordinator: a Kubernetes
/// Job's pods may start minutes before the coordinator's (its image pulled
/// last).
const CONNECT_FOR: Duration = Duration::from_secs(5 * 60);
/// How long a worker waits for the start once ready; the coordinator gives
/// up on workers that are not ready sooner than this.
const START_WITHIN: Duration = Duration::from_secs(15 * 60);

/// Runs the shard the coordinator of `req` assigns, and sends it its
/// record; how the shard's run stopped. `cancel_flag` installs the Ctrl-C
/// handler, once the coordinator has answered.
pub fn work(
    req: &WorkerRequest,
    cancel_flag: impl FnOnce() -> Arc<AtomicBool>,
) -> anyhow::Result<StopReason> {
    let wanted = match req.shard_index {
        Some(i) => Some(i),
        None => index_from_env(|k| std::env::var(k).ok())?,
    };
    let stream = connect(&req.coordinator)?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(START_WITHIN))?;
    let writer = Writer::new(stream.try_clone()?);
    let mut reader = Reader::new(stream);
    writer.send(&ToCoordinator::Hello {
        version: env!("CARGO_PKG_VERSION").into(),
        shard_index: wanted,
        node: node_name(),
        pid: std::process::id(),
    })?;
    let (index, count, run) = match reader.recv::<ToWorker>()? {
        ToWorker::Assign { index, count, run } => (index, count, run),
        ToWorker::Refused { reason } => {
            return Err(UsageError(format!(
                "the coordinator at {} refused this worker: {reason}",
                req.coordinator
            ))
            .into())
        }
        other => anyhow::bail!("the coordinator sent `{}` instead of a shard", other.what()),
    };
    let _beat = Heartbeat::start(writer.clone());
    let clock = measure_clock(&writer, &mut reader)?;
    let shard = Shard::new(index, count)
        .ok_or_else(|| anyhow::anyhow!("the coordinator assigned shard {index} of {count}"))?;
    let cancel = cancel_flag();
    let release = release_hook(writer.clone(), reader, clock, cancel.clone());
    let outcome = run_shard(*run, shard, release, &cancel);
    // The run is over: the coordinator closing its connection from here
    // on is no news to `listen`.
    cancel.store(true, Ordering::SeqCst);
    match outcome {
        Ok(record) => {
            let stop = record.result.stop_reason;
            writer.send(&ToCoordinator::Done {
                folded: protocol::folded_of(&record),
                run: Box::new(record),
            })?;
            Ok(stop)
        }
        Err(e) => {
            let _ = writer.send(&ToCoordinator::Failed {
                error: format!("{e:#}"),
                usage: e.is::<UsageError>(),
            });
            Err(e)
        }
    }
}

/// The shard a worker asks for when `--shard-index` is not given: a
/// Kubernetes Indexed Job's `JOB_COMPLETION_INDEX`, else Slurm's
/// `SLURM_PROCID`, else none (the coordinator's next free one).
pub fn index_from_env(env: impl Fn(&str) -> Option<String>) -> Result<Option<usize>, UsageError> {
    for name in ["JOB_COMPLETION_INDEX", "SLURM_PROCID"] {
        if let Some(v) = env(name) {
            return v.trim().parse().map(Some).map_err(|_| {
                UsageError(format!(
                    "{name}={v} is not a shard index: expected a number from 0 (or give --shard-index I)"
                ))
            });
        }
    }
    Ok(None)
}

/// The name the report shows for this worker's machine: Slurm's name for
/// the node (several nodes may share a host, as in a test), else the
/// hostname.
fn node_name() -> String {
    std::env::var("SLURMD_NODENAME")
        .ok()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .map(|h| h.trim().to_string())
                .unwrap_or_else(|_| "unknown".into())
        })
}

/// Connects to `addr`, trying again for [`CONNECT_FOR`] while it refuses.
fn connect(addr: &str) -> anyhow::Result<TcpStream> {
    let until = Instant::now() + CONNECT_FOR;
    loop {
        match TcpStream::connect(addr) {
            Ok(s) => return Ok(s),
            Err(e) if Instant::now() < until => {
                if e.kind() == std::io::ErrorKind::InvalidInput {
                    return Err(UsageError(format!(
                        "--coordinator {addr}: {e} (expected HOST:PORT, as `run --nodes` printed it)"
                    ))
                    .into());
                }
                std::thread::sleep(Duration::from_millis(250));
            }
            Err(e) => {
                return Err(UsageError(format!(
                    "cannot reach the coordinator at {addr} after {} s: {e} (is `dbsweep run --nodes` running there, and the port open?)",
                    CONNECT_FOR.as_secs()
                ))
                .into())
            }
        }
    }
}

/// The clock offset (this machine's minus the coordinator's) and the round
/// trip it was read from, µs, from [`PINGS`] round trips.
fn measure_clock(writer: &Writer, reader: &mut Reader) -> anyhow::Result<Round> {
    let mut rounds = Vec::with_capacity(PINGS);
    for _ in 0..PINGS {
        let sent_us = protocol::now_us();
        writer.send(&ToCoordinator::Ping { worker_us: sent_us })?;
        match reader.recv::<ToWorker>()? {
            ToWorker::Pong {
                worker_us,
                coordinator_us,
            } if worker_us == sent_us => rounds.push(Round {
                sent_us,
                answered_us: coordinator_us,
                received_us: protocol::now_us(),
            }),
            other => anyhow::bail!(
                "the coordinator sent `{}` instead of a clock reading",
                other.what()
            ),
        }
    }
    Ok(protocol::best(&rounds).expect("PINGS > 0"))
}

/// The engine's release hook: says the worker is ready once its clients
/// are connected, waits for the start instant and turns it into this
/// machine's clock; from then on, [`listen`] stops the run early through
/// `cancel` when the coordinator asks, or is gone.
fn release_hook(writer: Writer, reader: Reader, clock: Round, cancel: Arc<AtomicBool>) -> Release {
    let reader = Mutex::new(Some(reader));
    let offset = clock.offset_us();
    Release::new(move || {
        writer.send(&ToCoordinator::Ready {
            clock_offset_us: offset,
            clock_rtt_us: clock.rtt_us(),
        })?;
        let mut reader = reader
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .ok_or_else(|| anyhow::anyhow!("the run was released twice"))?;
        match reader.recv::<ToWorker>()? {
            ToWorker::Start { at_unix_us } => {
                let local = u64::try_from(at_unix_us + offset).unwrap_or(0);
                let cancel = cancel.clone();
                let _ = std::thread::Builder::new()
                    .name("coordinator-listen".into())
                    .spawn(move || listen(reader, &cancel));
                Ok(UNIX_EPOCH + Duration::from_micros(local))
            }
            ToWorker::Abort { reason } => {
                anyhow::bail!("the coordinator called the run off: {reason}")
            }
            other => anyhow::bail!(
                "the coordinator sent `{}` instead of the start",
                other.what()
            ),
        }
    })
}

/// What the coordinator says once the run has started: `Interrupt`
/// (Ctrl-C there) stops this shard early, as Ctrl-C here would, and so does
/// its connection closing — a coordinator that is gone takes no record, so
/// running on would only load the database. A read that times out is a
/// long run's silence, not an end.
fn listen(mut reader: Reader, cancel: &AtomicBool) {
    loop {
        match reader.recv::<ToWorker>() {
            Ok(ToWorker::Interrupt) => {
                eprintln!("Interrupted by the coordinator: finishing in-flight transactions and sending what was measured.");
                cancel.store(true, Ordering::SeqCst);
            }
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => {
                if !cancel.swap(true, Ordering::SeqCst) {
                    eprintln!("The coordinator's connection ended ({e}): stopping this shard.");
                }
                return;
            }
        }
    }
}

/// Runs `shard` of `spec` as `dbsweep run --shard` would, released by
/// `release`; the coordinator has checked the data and resolved the
/// options (the stop condition included).
fn run_shard(
    mut spec: PointSpec,
    shard: Shard,
    release: Release,
    cancel: &AtomicBool,
) -> anyhow::Result<record::Run> {
    let w = spec.build()?;
    spec.config.shard = Some(shard);
    spec.config.release = Some(release);
    let instances = [w.as_ref()];
    point::execute(&spec.point(&instances), cancel, &mut |_| {})
}

/// A thread that sends [`ToCoordinator::Beat`] every second until dropped,
/// so the coordinator can tell a lost worker from a busy one.
struct Heartbeat(Arc<AtomicBool>);

impl Heartbeat {
    fn start(writer: Writer) -> Heartbeat {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let _ = std::thread::Builder::new()
            .name("heartbeat".into())
            .spawn(move || {
                while !s.load(Ordering::Relaxed) {
                    if writer.send(&ToCoordinator::Beat).is_err() {
                        return;
                    }
                    std::thread::sleep(Duration::from_secs(1));
                }
            });
        Heartbeat(stop)
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shard_index_comes_from_the_schedulers_variables() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(index_from_env(env(&[])), Ok(None));
        assert_eq!(
            index_from_env(env(&[("JOB_COMPLETION_INDEX", "2"), ("SLURM_PROCID", "0")])),
            Ok(Some(2))
        );
        assert_eq!(index_from_env(env(&[("SLURM_PROCID", "1")])), Ok(Some(1)));
        let e = index_from_env(env(&[("JOB_COMPLETION_INDEX", "x")])).unwrap_err();
        assert!(e.0.contains("JOB_COMPLETION_INDEX=x") && e.0.contains("--shard-index"));
    }
}
