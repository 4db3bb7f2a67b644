//! A run's clients released at an instant chosen elsewhere: the hook a
//! worker of a distributed run (`dbsweep worker`) gives the engine so that
//! every shard starts together.
//!
//! The engine connects its clients and builds its queues as usual, then —
//! just before the gate that releases the clients opens — calls the hook.
//! The hook says the run is ready (to whoever coordinates it: `run
//! --nodes`' coordinator) and returns the wall-clock instant to release
//! at, already corrected to this machine's clock; [`Release::wait`] sleeps until then, at a real-time
//! priority where allowed. The last quarter millisecond is spun rather
//! than slept, because a sleeping thread wakes late by the scheduler's
//! slack and the shards' start skew is measured in milliseconds.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// Says the run is ready and returns when to release it (this machine's
/// wall clock). An error ends the run before any client starts; the
/// clients' threads stay parked at the gate with their connections until
/// the process exits, which a worker does at once.
type Hook = dyn Fn() -> anyhow::Result<SystemTime> + Send + Sync;

/// The hook of a coordinated start (see the module's documentation).
#[derive(Clone)]
pub struct Release(Arc<Hook>);

impl Release {
    pub fn new(hook: impl Fn() -> anyhow::Result<SystemTime> + Send + Sync + 'static) -> Release {
        Release(Arc::new(hook))
    }

    /// Calls the hook, then waits until the instant it returned (at once
    /// when that has passed). Returns how late the wait ended after the
    /// instant, by this machine's wall clock.
    pub fn wait(&self) -> anyhow::Result<Duration> {
        let at = (self.0)()?;
        // At a real-time priority where allowed, kept after the wait: the
        // engine's timekeeper (this one) takes it next anyway and
        // returns to normal when the run ends. On a loaded machine an
        // ordinary thread was measured waking, or being preempted right
        // after its wait, 10 ms late: half the skew a coordinated start
        // may have.
        crate::util::priority::realtime_thread();
        // The wall clock is read once; the wait itself runs on the
        // monotonic clock, which an NTP step cannot move.
        let remaining = at
            .duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO);
        let until = Instant::now() + remaining;
        // Short: shards sharing a machine spin side by side, and at a
        // real-time priority a spinner keeps its core from the others.
        let slack = Duration::from_micros(250);
        if remaining > slack {
            std::thread::sleep(remaining - slack);
        }
        while Instant::now() < until {
            std::hint::spin_loop();
        }
        Ok(SystemTime::now()
            .duration_since(at)
            .unwrap_or(Duration::ZERO))
    }
}

impl std::fmt::Debug for Release {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Release(hook)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tests::{config, run_fake, TestWorkload};
    use crate::engine::{Connect, RunConfig};
    use std::sync::atomic::AtomicBool;
    use std::time::UNIX_EPOCH;

    // How close to its instant a release comes on an idle or a busy
    // machine is a figure (bench/nodes.py's start skew); these tests hold
    // the behaviour: never before the instant, and after it by less than
    // the wait itself, which only a hang exceeds.

    #[test]
    fn the_engine_releases_its_clients_at_the_instant_the_hook_returns() {
        let lead = Duration::from_secs(1);
        let at = SystemTime::now() + lead;
        let cfg = RunConfig {
            rounds: Some(3),
            release: Some(Release::new(move || Ok(at))),
            ..config(2)
        };
        let r = run_fake("fake://?latency=1ms", &cfg);
        // The record keeps whole microseconds (truncated): a release in the
        // instant's own microsecond reads up to 1 µs before it.
        let released = UNIX_EPOCH + Duration::from_micros(r.released_unix_us + 1);
        let late = released
            .duration_since(at)
            .expect("released before the instant");
        assert!(late < lead, "released {late:?} late");
        assert_eq!(r.counters.transactions, 6);
    }

    #[test]
    fn a_hook_that_fails_ends_the_run_before_any_client_starts() {
        let cfg = RunConfig {
            rounds: Some(3),
            release: Some(Release::new(|| anyhow::bail!("called off"))),
            ..config(2)
        };
        let target = crate::driver::Target::parse("fake://").unwrap();
        let connect: Connect = Arc::new(move || crate::driver::connect(&target));
        let never = AtomicBool::new(false);
        let e = crate::engine::run(&TestWorkload::new(), connect, &cfg, &never, &mut |_| {})
            .expect_err("the hook's error ends the run");
        assert_eq!(e.to_string(), "called off");
    }

    #[test]
    fn waits_until_the_instant_and_not_much_longer() {
        let lead = Duration::from_millis(500);
        let at = SystemTime::now() + lead;
        let late = Release::new(move || Ok(at)).wait().unwrap();
        let now = SystemTime::now();
        assert!(now >= at, "released before the instant");
        // What it says of its lateness is the wall clock's.
        assert!(late <= now.duration_since(at).unwrap(), "{late:?}");
        assert!(late < lead, "released {late:?} late");
    }

    #[test]
    fn a_past_instant_releases_at_once_and_an_error_is_passed_on() {
        // An hour ago: waiting for it (as if it were ahead) would take an
        // hour, which no busy machine is mistaken for.
        let started = Instant::now();
        let past = SystemTime::now() - Duration::from_secs(3600);
        let late = Release::new(move || Ok(past)).wait().unwrap();
        assert!(late >= Duration::from_secs(3600), "{late:?}");
        assert!(started.elapsed() < Duration::from_secs(60));
        let e = Release::new(|| anyhow::bail!("coordinator gone"))
            .wait()
            .unwrap_err();
        assert_eq!(e.to_string(), "coordinator gone");
    }
}
