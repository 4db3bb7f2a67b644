//! The coordinator's and the workers' messages: one JSON document per
//! line over TCP, one enum for each direction, and the clock arithmetic of
//! the pings.
//!
//! A worker's session, in order:
//! ```text
//! worker                                   coordinator
//!   Hello {version, shard_index?, node} ──►
//!                                      ◄── Assign {index, count, run}   (or Refused {reason})
//!   Beat, every second from here on    ──►  (10 s of silence: the shard is lost)
//!   Ping {worker_us}                   ──►
//!                                      ◄── Pong {worker_us, coordinator_us}   (× PINGS)
//!   … connects its clients …
//!   Ready {clock_offset_us, clock_rtt_us} ──►
//!                                      ◄── Start {at_unix_us}   (or Abort {reason})
//!   … releases its clients at the instant, runs its shard …
//!                                      ◄── Interrupt   (Ctrl-C at the coordinator)
//!   … stops early, as Ctrl-C would …
//!   Done {run, folded}  (or Failed {error}) ──►
//! ```
//! `run` is the point's [`PointSpec`] as the coordinator resolved it (the
//! same for every worker: the shard is `index` of `count`), so a worker
//! never parses options of its own.

use std::io::{self, BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::engine::spec::PointSpec;
use crate::record;

/// Round trips a worker makes to measure its clock offset; the one with
/// the shortest round trip is kept.
pub const PINGS: usize = 16;

/// What a worker says to its coordinator.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToCoordinator {
    /// The first message: who the worker is and which shard it wants.
    Hello {
        /// dbsweep's version: a coordinator refuses another (their records
        /// would not merge).
        version: String,
        /// `--shard-index`, `JOB_COMPLETION_INDEX` or `SLURM_PROCID`;
        /// None: the next free shard.
        shard_index: Option<usize>,
        /// The scheduler's name for the node (Slurm's), else the hostname.
        node: String,
        pid: u32,
    },
    /// A clock reading to be answered with the coordinator's.
    Ping { worker_us: i64 },
    /// Its clients are connected and their statements prepared; its clock
    /// minus the coordinator's, and the round trip that was read from.
    Ready {
        clock_offset_us: i64,
        clock_rtt_us: i64,
    },
    /// Still alive (every second, also while the shard runs).
    Beat,
    /// The shard's record, and its profiles' folded stacks in their order
    /// (not part of a record: see [`record::profile::Profile`]).
    Done {
        run: Box<record::Run>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        folded: Vec<Option<String>>,
    },
    /// Why the shard could not run; `usage`: bad input (exit status 2).
    Failed { error: String, usage: bool },
}

/// What a coordinator says to a worker.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToWorker {
    /// Run shard `index` of `count` of `run`.
    Assign {
        index: usize,
        count: usize,
        run: Box<PointSpec>,
    },
    /// Not taken on (another version, a shard already taken, …).
    Refused {
        reason: String,
    },
    Pong {
        worker_us: i64,
        coordinator_us: i64,
    },
    /// Release the clients at this instant, µs since the Unix epoch by the
    /// coordinator's clock.
    Start {
        at_unix_us: i64,
    },
    /// The run will not start (another shard failed, or Ctrl-C).
    Abort {
        reason: String,
    },
    /// Stop the started run early (Ctrl-C at the coordinator): finish
    /// the transactions in flight and send the record of what was
    /// measured, as `run` does on Ctrl-C.
    Interrupt,
}

impl ToCoordinator {
    /// The message's name, for a message about one that came out of turn
    /// (not its content: a record can be megabytes).
    pub fn what(&self) -> &'static str {
        match self {
            ToCoordinator::Hello { .. } => "hello",
            ToCoordinator::Ping { .. } => "ping",
            ToCoordinator::Ready { .. } => "ready",
            ToCoordinator::Beat => "beat",
            ToCoordinator::Done { .. } => "done",
            ToCoordinator::Failed { .. } => "failed",
        }
    }
}

impl ToWorker {
    /// The message's name (not its content: the run's options hold the
    /// database's password).
    pub fn what(&self) -> &'static str {
        match self {
            ToWorker::Assign { .. } => "assign",
            ToWorker::Refused { .. } => "refused",
            ToWorker::Pong { .. } => "pong",
            ToWorker::Start { .. } => "start",
            ToWorker::Abort { .. } => "abort",
            ToWorker::Interrupt => "interrupt",
        }
    }
}

/// The folded stacks of `run`'s profiles, in their order, for
/// [`ToCoordinator::Done`].
pub fn folded_of(run: &record::Run) -> Vec<Option<String>> {
    run.profiles().map(|p| p.folded.clone()).collect()
}

/// `run`'s profiles their folded stacks back, as [`folded_of`] sent them.
pub fn with_folded(mut run: Box<record::Run>, folded: Vec<Option<String>>) -> Box<record::Run> {
    for (p, f) in run.profiles_mut().zip(folded) {
        p.folded = f;
    }
    run
}

/// Now, µs since the Unix epoch, by this machine's wall clock.
pub fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

/// One ping: the worker's clock when it sent it and when the answer came
/// back, and the coordinator's clock when it answered.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Round {
    pub sent_us: i64,
    pub answered_us: i64,
    pub received_us: i64,
}

impl Round {
    pub fn rtt_us(&self) -> i64 {
        self.received_us - self.sent_us
    }

    /// The worker's clock minus the coordinator's, assuming the answer was
    /// read halfway through the round trip (NTP's assumption: the error is
    /// at most half the round trip, less the coordinator's own delay).
    pub fn offset_us(&self) -> i64 {
        (self.sent_us + self.received_us).div_euclid(2) - self.answered_us
    }
}

/// The round with the shortest round trip: the least room for the two
/// directions' delays to differ, so the best estimate of the offset.
pub fn best(rounds: &[Round]) -> Option<Round> {
    rounds.iter().copied().min_by_key(Round::rtt_us)
}

/// The reading half of a connection: one message per line.
pub struct Reader {
    inner: BufReader<TcpStream>,
    line: String,
}

impl Reader {
    pub fn new(stream: TcpStream) -> Reader {
        Reader {
            inner: BufReader::new(stream),
            line: String::new(),
        }
    }

    /// The next message; `UnexpectedEof` when the peer closed the
    /// connection, `InvalidData` for a line that is not one.
    pub fn recv<T: DeserializeOwned>(&mut self) -> io::Result<T> {
        self.line.clear();
        if self.inner.read_line(&mut self.line)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed",
            ));
        }
        serde_json::from_str(&self.line).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }
}

/// The writing half of a connection, shared by whoever sends on it (a
/// worker's heartbeat and its run).
#[derive(Clone, Debug)]
pub struct Writer(Arc<Mutex<TcpStream>>);

impl Writer {
    pub fn new(stream: TcpStream) -> Writer {
        Writer(Arc::new(Mutex::new(stream)))
    }

    /// Sends `msg` as one line, whole (the lock keeps lines apart).
    pub fn send<T: Serialize>(&self, msg: &T) -> io::Result<()> {
        let mut line = serde_json::to_vec(msg)?;
        line.push(b'\n');
        let mut stream = self.0.lock().unwrap_or_else(|p| p.into_inner());
        stream.write_all(&line)?;
        stream.flush()
    }
}

/// What a failed read means for a shard, in a sentence for the report.
pub fn describe(e: &io::Error, silence_s: u64) -> String {
    match e.kind() {
        io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset => {
            "its connection closed before it sent its record (the worker was killed, or its node lost)".into()
        }
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => format!(
            "silent for {silence_s} s, heartbeats included (its node lost, or the network cut)"
        ),
        io::ErrorKind::InvalidData => format!("sent a message this coordinator cannot read: {e}"),
        _ => format!("its connection failed: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offset_is_read_from_the_shortest_round_trip() {
        // The worker's clock runs 5 ms ahead. The first answer came back
        // slowly on its way home, the second promptly both ways.
        let rounds = [
            Round {
                sent_us: 1_000_000,
                answered_us: 995_100,
                received_us: 1_004_000,
            },
            Round {
                sent_us: 1_010_000,
                answered_us: 1_005_100,
                received_us: 1_010_200,
            },
        ];
        let b = best(&rounds).unwrap();
        assert_eq!(b.rtt_us(), 200);
        assert_eq!(b.offset_us(), 5_000);
        // The slow round alone would have been 2 ms off.
        assert_eq!(rounds[0].offset_us(), 6_900);
        assert_eq!(best(&[]), None);
    }

    #[test]
    fn messages_travel_as_one_line_each() {
        let msg = ToWorker::Start {
            at_unix_us: 1_700_000_000_000_000,
        };
        let text = serde_json::to_string(&msg).unwrap();
        assert_eq!(text, r#"{"start":{"at_unix_us":1700000000000000}}"#);
        let back: ToCoordinator = serde_json::from_str(r#""beat""#).unwrap();
        assert!(matches!(back, ToCoordinator::Beat));
        let text = serde_json::to_string(&ToWorker::Interrupt).unwrap();
        assert_eq!(text, r#""interrupt""#);
    }
}
