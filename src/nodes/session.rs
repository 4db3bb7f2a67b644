//! The coordinator's side of the protocol: a thread per worker connection
//! answering pings and passing on what the worker says, and the loop that
//! waits until every shard is ready, sends the one start instant, and
//! collects every shard's record or why it has none — on Ctrl-C after
//! asking every running shard to stop early (`Interrupt`).

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::launcher::Launched;
use super::protocol::{self, Reader, ToCoordinator, ToWorker, Writer};
use crate::engine::spec::PointSpec;
use crate::record;

/// A worker silent this long (it beats every second) is lost.
pub const SILENCE: Duration = Duration::from_secs(10);
/// How long the coordinator waits for every worker to be ready.
const READY_WITHIN: Duration = Duration::from_secs(10 * 60);
/// The start is this far ahead of the moment the last worker was ready
/// (plus the longest ping round trip), so every worker has it in time.
const START_LEAD: Duration = Duration::from_millis(200);

/// What became of one shard.
#[derive(Debug, Default)]
pub struct ShardState {
    /// The node its worker reported.
    pub node: Option<String>,
    /// Its clock minus the coordinator's, and the round trip that was
    /// read from, µs.
    pub clock: Option<(i64, i64)>,
    writer: Option<Writer>,
    pub end: Option<End>,
}

/// How a shard ended.
#[derive(Debug)]
pub enum End {
    Done(Box<record::Run>),
    /// Why it has no record; `usage`: the worker refused bad input.
    Failed {
        why: String,
        usage: bool,
    },
}

/// How the session ended.
pub struct Outcome {
    pub shards: Vec<ShardState>,
    /// The start instant, µs since the Unix epoch by this clock; None when
    /// the run never started, `why_not` says why.
    pub start_us: Option<i64>,
    pub why_not: Option<String>,
}

enum Event {
    Hello(usize, String),
    Ready(usize, i64, i64, Writer),
    Done(usize, Box<record::Run>),
    Failed(usize, String, bool),
}

/// Takes workers on from `listener` for the `n` shards of `spec`, starts
/// them together once all are ready and collects their records; `announce`:
/// say on standard output when the start is sent (`run --nodes`; a study
/// reports its points itself).
pub fn run(
    listener: TcpListener,
    spec: PointSpec,
    n: usize,
    launched: &mut Launched,
    cancel: &AtomicBool,
    announce: bool,
) -> Outcome {
    let (tx, rx) = mpsc::channel();
    let taken = Arc::new(Mutex::new(vec![false; n]));
    let spec = Arc::new(spec);
    let closing = Closing::new(&listener);
    let closed = closing.flag.clone();
    // Accepts until the session ends: a latecomer after every shard is
    // taken is told so. A study runs one session per point, so the
    // listener is closed when the session ends, not when the process does.
    let _ = std::thread::Builder::new()
        .name("coordinator".into())
        .spawn(move || {
            for stream in listener.incoming().flatten() {
                if closed.load(Ordering::SeqCst) {
                    break;
                }
                let (tx, taken, spec) = (tx.clone(), taken.clone(), spec.clone());
                let _ = std::thread::Builder::new()
                    .name("worker-conn".into())
                    .spawn(move || serve(stream, &spec, n, &taken, &tx));
            }
        });
    let mut shards: Vec<ShardState> = (0..n).map(|_| ShardState::default()).collect();
    if let Err(why) = wait_ready(&rx, &mut shards, launched, cancel) {
        for s in &shards {
            if let Some(w) = &s.writer {
                let _ = w.send(&ToWorker::Abort {
                    reason: why.clone(),
                });
            }
        }
        return Outcome {
            shards,
            start_us: None,
            why_not: Some(why),
        };
    }
    let longest_rtt = shards.iter().filter_map(|s| s.clock).map(|c| c.1).max();
    let lead_us = START_LEAD.as_micros() as i64 + longest_rtt.unwrap_or(0);
    let at = protocol::now_us() + lead_us;
    for s in &shards {
        if let Some(w) = &s.writer {
            if let Err(e) = w.send(&ToWorker::Start { at_unix_us: at }) {
                eprintln!("Could not send the start to a worker: {e}");
            }
        }
    }
    if announce {
        println!(
            "All {n} workers ready: they release their clients together in {:.0} ms (Ctrl-C stops them early and reports what they measured)",
            lead_us as f64 / 1e3
        );
        let _ = std::io::Write::flush(&mut std::io::stdout());
    }
    let mut interrupted = false;
    while shards.iter().any(|s| s.end.is_none()) {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(event) => apply(&mut shards, event),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        // Ctrl-C: every shard still running stops early and sends what it
        // measured, which is merged and reported as one process's
        // interrupted run is.
        if !interrupted && cancel.load(Ordering::Relaxed) {
            interrupted = true;
            let running: Vec<&ShardState> = shards.iter().filter(|s| s.end.is_none()).collect();
            eprintln!(
                "Asking {} worker{} to stop and send what they measured.",
                running.len(),
                if running.len() == 1 { "" } else { "s" }
            );
            for s in running {
                if let Some(w) = &s.writer {
                    let _ = w.send(&ToWorker::Interrupt);
                }
            }
        }
    }
    Outcome {
        shards,
        start_us: Some(at),
        why_not: None,
    }
}

/// Stops the accepting thread when dropped: sets its flag, then wakes its
/// `accept` with a connection of its own, so the listener is closed.
struct Closing {
    flag: Arc<AtomicBool>,
    addr: Option<SocketAddr>,
}

impl Closing {
    fn new(listener: &TcpListener) -> Closing {
        // A listener on every address is reached on the loopback.
        let addr = listener.local_addr().ok().map(|mut a| {
            if a.ip().is_unspecified() {
                a.set_ip(match a {
                    SocketAddr::V4(_) => Ipv4Addr::LOCALHOST.into(),
                    SocketAddr::V6(_) => Ipv6Addr::LOCALHOST.into(),
                });
            }
            a
        });
        Closing {
            flag: Arc::new(AtomicBool::new(false)),
            addr,
        }
    }
}

impl Drop for Closing {
    fn drop(&mut self) {
        self.flag.store(true, Ordering::SeqCst);
        if let Some(a) = self.addr {
            let _ = TcpStream::connect_timeout(&a, Duration::from_secs(1));
        }
    }
}

/// Until every shard is ready; or why the run cannot start.
fn wait_ready(
    rx: &Receiver<Event>,
    shards: &mut [ShardState],
    launched: &mut Launched,
    cancel: &AtomicBool,
) -> Result<(), String> {
    let until = Instant::now() + READY_WITHIN;
    while shards.iter().any(|s| s.writer.is_none()) {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(e) => apply(shards, e),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return Err("the listener stopped".into()),
        }
        if let Some((i, s)) = shards.iter().enumerate().find(|(_, s)| s.end.is_some()) {
            let why = match &s.end {
                Some(End::Failed { why, .. }) => why.clone(),
                _ => "it ended before the start".into(),
            };
            return Err(format!("shard {i} failed before the start: {why}"));
        }
        if cancel.load(Ordering::Relaxed) {
            return Err("interrupted (Ctrl-C) before the start".into());
        }
        if let Some(how) = launched.ended() {
            // Workers that connected may still come in; give them a moment.
            std::thread::sleep(Duration::from_millis(500));
            while let Ok(e) = rx.try_recv() {
                apply(shards, e);
            }
            if shards.iter().any(|s| s.writer.is_none()) {
                return Err(format!(
                    "{how} before shard {} was ready (its messages are above)",
                    missing(shards)
                ));
            }
        }
        if Instant::now() >= until {
            return Err(format!(
                "shard {} not ready after {} s: start `dbsweep worker --coordinator HOST:PORT` for each (--launcher external), or check the launcher",
                missing(shards),
                READY_WITHIN.as_secs()
            ));
        }
    }
    Ok(())
}

/// The shards not ready yet, as a list for a message.
fn missing(shards: &[ShardState]) -> String {
    let m: Vec<String> = (0..shards.len())
        .filter(|&i| shards[i].writer.is_none())
        .map(|i| i.to_string())
        .collect();
    m.join(", ")
}

fn apply(shards: &mut [ShardState], event: Event) {
    match event {
        Event::Hello(i, node) => shards[i].node = Some(node),
        Event::Ready(i, offset, rtt, w) => {
            shards[i].clock = Some((offset, rtt));
            shards[i].writer = Some(w);
        }
        Event::Done(i, run) => shards[i].end = Some(End::Done(run)),
        Event::Failed(i, why, usage) => {
            if shards[i].end.is_none() {
                shards[i].end = Some(End::Failed { why, usage });
            }
        }
    }
}

/// One worker's connection, from its hello to its record.
fn serve(
    stream: TcpStream,
    spec: &PointSpec,
    n: usize,
    taken: &Mutex<Vec<bool>>,
    tx: &Sender<Event>,
) {
    let peer = stream
        .peer_addr()
        .map_or("a worker".to_string(), |a| a.to_string());
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(SILENCE));
    let Ok(w) = stream.try_clone() else { return };
    let writer = Writer::new(w);
    let mut reader = Reader::new(stream);
    let (wanted, node) = match reader.recv::<ToCoordinator>() {
        Ok(ToCoordinator::Hello {
            version,
            shard_index,
            node,
            ..
        }) => {
            let ours = env!("CARGO_PKG_VERSION");
            if version != ours {
                refuse(&writer, &peer, &format!("it is dbsweep {version}, this coordinator {ours}: run the same version on every node"));
                return;
            }
            (shard_index, node)
        }
        Ok(other) => {
            eprintln!(
                "Ignored a connection from {peer}: it began with `{}`, not a hello",
                other.what()
            );
            return;
        }
        Err(e) => {
            eprintln!("Ignored a connection from {peer}: {e}");
            return;
        }
    };
    let index = match assign(&mut taken.lock().unwrap_or_else(|p| p.into_inner()), wanted) {
        Ok(i) => i,
        Err(why) => {
            refuse(&writer, &peer, &why);
            return;
        }
    };
    let assign = ToWorker::Assign {
        index,
        count: n,
        run: Box::new(spec.clone()),
    };
    if let Err(e) = writer.send(&assign) {
        let _ = tx.send(Event::Failed(
            index,
            format!("could not send it the run: {e}"),
            false,
        ));
        return;
    }
    let _ = tx.send(Event::Hello(index, node));
    loop {
        let event = match reader.recv::<ToCoordinator>() {
            Ok(ToCoordinator::Ping { worker_us }) => {
                let pong = ToWorker::Pong {
                    worker_us,
                    coordinator_us: protocol::now_us(),
                };
                if writer.send(&pong).is_ok() {
                    continue;
                }
                Event::Failed(
                    index,
                    "its connection failed while measuring its clock".into(),
                    false,
                )
            }
            Ok(ToCoordinator::Beat) => continue,
            Ok(ToCoordinator::Ready {
                clock_offset_us,
                clock_rtt_us,
            }) => {
                let _ = tx.send(Event::Ready(
                    index,
                    clock_offset_us,
                    clock_rtt_us,
                    writer.clone(),
                ));
                continue;
            }
            Ok(ToCoordinator::Done { run, folded }) => {
                Event::Done(index, protocol::with_folded(run, folded))
            }
            Ok(ToCoordinator::Failed { error, usage }) => Event::Failed(index, error, usage),
            Ok(ToCoordinator::Hello { .. }) => {
                Event::Failed(index, "it said hello twice".into(), false)
            }
            Err(e) => Event::Failed(index, protocol::describe(&e, SILENCE.as_secs()), false),
        };
        let _ = tx.send(event);
        return;
    }
}

fn refuse(writer: &Writer, peer: &str, why: &str) {
    eprintln!("Refused a worker from {peer}: {why}");
    let _ = writer.send(&ToWorker::Refused {
        reason: why.to_string(),
    });
}

/// The shard a worker gets: the one it asks for if free, else the lowest
/// free one; or why none.
pub fn assign(taken: &mut [bool], wanted: Option<usize>) -> Result<usize, String> {
    let n = taken.len();
    let i = match wanted {
        Some(i) if i >= n => {
            return Err(format!(
                "it asks for shard {i}, and this run has {n} (0 to {})",
                n - 1
            ))
        }
        Some(i) if taken[i] => return Err(format!("shard {i} is taken by another worker")),
        Some(i) => i,
        None => taken
            .iter()
            .position(|t| !t)
            .ok_or_else(|| format!("all {n} shards are taken"))?,
    };
    taken[i] = true;
    Ok(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_get_the_shard_they_ask_for_or_the_next_free_one() {
        let mut taken = vec![false; 3];
        assert_eq!(assign(&mut taken, Some(1)), Ok(1));
        assert_eq!(assign(&mut taken, None), Ok(0));
        assert_eq!(
            assign(&mut taken, Some(1)),
            Err("shard 1 is taken by another worker".into())
        );
        assert!(assign(&mut taken, Some(3)).unwrap_err().contains("0 to 2"));
        assert_eq!(assign(&mut taken, None), Ok(2));
        assert_eq!(
            assign(&mut taken, None),
            Err("all 3 shards are taken".into())
        );
    }
}
