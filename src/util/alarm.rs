//! A timer with nanosecond resolution that an epoll loop waits on: a
//! Linux timerfd. epoll's own timeout counts whole milliseconds (mio
//! rounds a wait up to the next one), so a loop that slept until its next
//! arrival woke up to a millisecond late — at 10 % load half a millisecond
//! on every open-loop transaction's latency, which counts from the
//! intended start. Written here on `libc` (already a dependency): three
//! calls, where a crate would bring a second copy of the system bindings.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

/// A one-shot timer; its descriptor becomes readable when it rings.
pub struct Alarm {
    fd: OwnedFd,
    /// The instant it is set for, until it rings or is set again.
    armed: Option<Instant>,
}

impl Alarm {
    pub fn new() -> io::Result<Alarm> {
        // SAFETY: plain system call; the descriptor it returns is ours.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Alarm { fd, armed: None })
    }

    /// Sets it to ring at `at` (`now` is the caller's reading of the
    /// clock), unless it is set for that instant already.
    pub fn set(&mut self, at: Instant, now: Instant) -> io::Result<()> {
        if self.armed == Some(at) {
            return Ok(());
        }
        // A zero value would disarm it: ring at once instead.
        let d = at
            .saturating_duration_since(now)
            .max(Duration::from_nanos(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: d.as_secs() as libc::time_t,
                tv_nsec: d.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: a valid timerfd and a valid itimerspec; the old value is
        // not asked for.
        let r =
            unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        self.armed = Some(at);
        Ok(())
    }

    /// It rang: reads the ring away, so the next one is seen.
    pub fn clear(&mut self) {
        let mut ticks = [0u8; 8];
        // SAFETY: reads at most 8 bytes into an 8-byte buffer; a timerfd
        // with nothing to read fails with EAGAIN, which changes nothing.
        let _ = unsafe { libc::read(self.fd.as_raw_fd(), ticks.as_mut_ptr().cast(), 8) };
        self.armed = None;
    }

    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Waits until `fd` is readable or `ms` pass; true if it became so.
    fn readable(fd: RawFd, ms: i32) -> bool {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut p, 1, ms) == 1 }
    }

    #[test]
    fn it_rings_at_its_instant_never_before_and_once_read_is_quiet() {
        let mut a = Alarm::new().unwrap();
        assert!(!readable(a.raw_fd(), 0));
        for _ in 0..20 {
            let now = Instant::now();
            let at = now + Duration::from_micros(300);
            a.set(at, now).unwrap();
            assert!(readable(a.raw_fd(), 1000), "it never rang");
            assert!(Instant::now() >= at, "it rang early");
            a.clear();
            assert!(!readable(a.raw_fd(), 0), "the ring was not read away");
        }
    }

    #[test]
    fn an_instant_past_rings_at_once() {
        let mut a = Alarm::new().unwrap();
        let now = Instant::now();
        a.set(now - Duration::from_millis(5), now).unwrap();
        assert!(readable(a.raw_fd(), 100));
    }
}
