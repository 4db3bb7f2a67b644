//! The event loops' wait: Linux epoll, sockets watched edge-triggered,
//! with a timeout in nanoseconds (`epoll_pwait2`, Linux 5.11) and an
//! eventfd another thread wakes it with. Written here on `libc` rather
//! than through `mio`, because mio's wait counts whole milliseconds: a
//! loop then slept on a timerfd (`util::alarm`) for its next arrival,
//! arming it and reading it away — 0.81 system calls per round trip of
//! DBT-1 at 20,000 users, a sixth of the loop's (bench/README.md
//! "Syscalls per round trip"). With a precise timeout the timer is the
//! wait itself. Where `epoll_pwait2` is missing (an older kernel, a
//! sandbox that refuses it) the wait falls back to `epoll_wait`, its
//! timeout rounded up to the millisecond, and [`Epoll::precise`] says so:
//! the loop keeps its timerfd then.
//!
//! A timeout wakes with the thread's timer slack (50 µs by default) on
//! top, so a loop thread sets its slack to a nanosecond
//! ([`precise_timers`]): an open-loop arrival starts on time.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// An epoll instance.
pub struct Epoll {
    fd: OwnedFd,
    /// Whether `epoll_pwait2` answered: waits are in nanoseconds.
    precise: bool,
}

/// The events one wait returned: each the token its descriptor was
/// watched with.
pub struct Events {
    buf: Vec<libc::epoll_event>,
    len: usize,
}

impl Events {
    pub fn with_capacity(n: usize) -> Events {
        Events {
            buf: vec![libc::epoll_event { events: 0, u64: 0 }; n.max(1)],
            len: 0,
        }
    }

    /// The tokens of the descriptors that became ready.
    pub fn tokens(&self) -> impl Iterator<Item = u64> + '_ {
        self.buf[..self.len].iter().map(|e| e.u64)
    }

    /// Where a wait writes its events, and how many fit.
    fn room(&mut self) -> (*mut libc::epoll_event, libc::c_int) {
        self.len = 0;
        let max = self.buf.len().min(i32::MAX as usize) as libc::c_int;
        (self.buf.as_mut_ptr(), max)
    }

    /// A wait returned `n`: that many events, or -1 and its error.
    fn filled(&mut self, n: libc::c_int) -> io::Result<()> {
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        self.len = n as usize;
        Ok(())
    }
}

impl Epoll {
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: plain system call; the descriptor it returns is ours.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut ep = Epoll { fd, precise: true };
        // Asked once, with a wait that ends at once: missing from the
        // kernel (before 5.11), or refused by a sandbox's filter.
        let mut probe = Events::with_capacity(1);
        if let Err(e) = ep.pwait2(&mut probe, Duration::ZERO) {
            ep.precise = !matches!(e.raw_os_error(), Some(libc::ENOSYS) | Some(libc::EPERM));
        }
        Ok(ep)
    }

    /// Watches `fd` for reading (and `writable`: writing), edge-triggered:
    /// an event each time data arrives (or room frees), whether or not the
    /// earlier data was read. Its events carry `token`.
    pub fn watch(&self, fd: RawFd, token: u64, writable: bool) -> io::Result<()> {
        let mut flags = libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLET;
        if writable {
            flags |= libc::EPOLLOUT;
        }
        let mut ev = libc::epoll_event {
            events: flags as u32,
            u64: token,
        };
        // SAFETY: a valid epoll descriptor and event.
        let r = unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Whether waits end on their timeout to the nanosecond (else they
    /// end up to a millisecond after it).
    pub fn precise(&self) -> bool {
        self.precise
    }

    /// Waits until a watched descriptor is ready or `timeout` passes.
    pub fn wait(&mut self, events: &mut Events, timeout: Duration) -> io::Result<()> {
        if self.precise {
            return self.pwait2(events, timeout);
        }
        let (ptr, max) = events.room();
        // Rounded up: a wait never ends before its timeout.
        let ms = timeout.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as libc::c_int;
        // SAFETY: `ptr` has room for `max` events.
        let n = unsafe { libc::epoll_wait(self.fd.as_raw_fd(), ptr, max, ms) };
        events.filled(n)
    }

    /// `epoll_pwait2`: the wait with a timeout in nanoseconds.
    fn pwait2(&self, events: &mut Events, timeout: Duration) -> io::Result<()> {
        let (ptr, max) = events.room();
        let ts = libc::timespec {
            tv_sec: timeout.as_secs().min(i64::MAX as u64) as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        // SAFETY: `ptr` has room for `max` events; a valid timespec; no
        // signal mask.
        let n = unsafe {
            libc::syscall(
                libc::SYS_epoll_pwait2,
                self.fd.as_raw_fd(),
                ptr,
                max,
                &ts as *const libc::timespec,
                std::ptr::null::<libc::sigset_t>(),
                0usize,
            )
        };
        events.filled(n as libc::c_int)
    }
}

/// Wakes an [`Epoll`]'s wait from another thread: an eventfd it watches.
pub struct Waker {
    fd: OwnedFd,
}

impl Waker {
    /// A waker whose wakes reach `epoll` as events carrying `token`.
    pub fn new(epoll: &Epoll, token: u64) -> io::Result<Waker> {
        // SAFETY: plain system call; the descriptor it returns is ours.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        epoll.watch(fd.as_raw_fd(), token, false)?;
        Ok(Waker { fd })
    }

    /// Wakes the wait (or the next one).
    pub fn wake(&self) {
        let one = 1u64.to_ne_bytes();
        // SAFETY: writes 8 bytes from an 8-byte buffer. A counter full
        // (EAGAIN) is already a wake pending.
        let _ = unsafe { libc::write(self.fd.as_raw_fd(), one.as_ptr().cast(), 8) };
    }

    /// Reads the wakes away (the loop saw one), so the counter never
    /// fills.
    pub fn clear(&self) {
        let mut n = [0u8; 8];
        // SAFETY: reads at most 8 bytes into an 8-byte buffer; EAGAIN
        // (nothing to read) changes nothing.
        let _ = unsafe { libc::read(self.fd.as_raw_fd(), n.as_mut_ptr().cast(), 8) };
    }
}

/// Sets the calling thread's timer slack to a nanosecond, so that its
/// waits' timeouts end when they are due rather than up to 50 µs after.
pub fn precise_timers() {
    // SAFETY: plain system call on the calling thread; a failure leaves
    // the default slack.
    let one_ns: libc::c_ulong = 1;
    let _ = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, one_ns, 0, 0, 0) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;
    use std::time::Instant;

    /// The running kernel's (major, minor).
    fn kernel() -> (u32, u32) {
        let r = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
        let mut v = r
            .split(|c: char| !c.is_ascii_digit())
            .map(|x| x.parse().unwrap_or(0));
        (v.next().unwrap_or(0), v.next().unwrap_or(0))
    }

    #[test]
    fn a_timeout_ends_the_wait_at_its_instant_never_before() {
        precise_timers();
        let mut ep = Epoll::new().unwrap();
        let mut events = Events::with_capacity(4);
        let mut took = Vec::new();
        for _ in 0..20 {
            let t = Instant::now();
            ep.wait(&mut events, Duration::from_micros(300)).unwrap();
            took.push(t.elapsed());
            assert_eq!(events.tokens().count(), 0);
        }
        assert!(
            took.iter().all(|&t| t >= Duration::from_micros(300)),
            "woke early: {took:?}"
        );
        if kernel() >= (5, 11) {
            assert!(ep.precise(), "Linux 5.11 and later have epoll_pwait2");
            // Not rounded up to the millisecond, which every wait would
            // then take at least.
            let fastest = took.iter().min().unwrap();
            assert!(*fastest < Duration::from_millis(1), "{took:?}");
        }
    }

    #[test]
    fn without_epoll_pwait2_a_timeout_is_rounded_up_never_down() {
        let mut ep = Epoll::new().unwrap();
        ep.precise = false;
        let mut events = Events::with_capacity(4);
        for _ in 0..5 {
            let t = Instant::now();
            ep.wait(&mut events, Duration::from_micros(300)).unwrap();
            let took = t.elapsed();
            assert!(took >= Duration::from_millis(1), "not rounded up: {took:?}");
        }
        assert!(!ep.precise());
    }

    #[test]
    fn each_arrival_is_an_event_whether_or_not_earlier_bytes_were_read() {
        let mut ep = Epoll::new().unwrap();
        let (mut a, mut b) = UnixStream::pair().unwrap();
        b.set_nonblocking(true).unwrap();
        ep.watch(b.as_raw_fd(), 7, true).unwrap();
        let mut events = Events::with_capacity(4);
        ep.wait(&mut events, Duration::ZERO).unwrap();
        assert_eq!(events.tokens().collect::<Vec<_>>(), [7], "writable at once");
        ep.wait(&mut events, Duration::ZERO).unwrap();
        assert_eq!(events.tokens().count(), 0, "an edge is reported once");
        a.write_all(b"one").unwrap();
        ep.wait(&mut events, Duration::from_secs(1)).unwrap();
        assert_eq!(events.tokens().collect::<Vec<_>>(), [7]);
        // Not read: a second arrival is an event of its own. The event
        // loops rely on it (a client waits without reading first when its
        // socket was found empty and no event came since).
        a.write_all(b"two").unwrap();
        ep.wait(&mut events, Duration::from_secs(1)).unwrap();
        assert_eq!(events.tokens().collect::<Vec<_>>(), [7]);
        let mut buf = [0u8; 16];
        assert_eq!(b.read(&mut buf).unwrap(), 6);
    }

    #[test]
    fn a_wake_from_another_thread_ends_the_wait_and_clears() {
        let mut ep = Epoll::new().unwrap();
        let w = std::sync::Arc::new(Waker::new(&ep, 3).unwrap());
        let w2 = w.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            w2.wake();
        });
        let mut events = Events::with_capacity(4);
        let start = Instant::now();
        ep.wait(&mut events, Duration::from_secs(10)).unwrap();
        assert!(start.elapsed() < Duration::from_secs(5));
        assert_eq!(events.tokens().collect::<Vec<_>>(), [3]);
        w.clear();
        t.join().unwrap();
        ep.wait(&mut events, Duration::ZERO).unwrap();
        assert_eq!(events.tokens().count(), 0);
    }
}
