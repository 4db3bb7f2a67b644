//! Connections an event loop drives, for the tests that drive them by
//! hand: opened and prepared as a blocking connection, then evented; a
//! wait on the socket as the loop would; the same request on a blocking
//! connection, to compare with.

use std::os::fd::RawFd;

use dbsweep::driver::evented::{Evented, Request, Wait};
use dbsweep::driver::{self, Connection, DbResult, Fetch, Outcome, PsMode, Target};

pub fn conn(url: &str, mode: PsMode) -> Box<dyn Connection> {
    let mut t = Target::parse(url).unwrap();
    t.set_ps_mode(mode);
    driver::connect(&t).unwrap()
}

pub fn evented(url: &str, mode: PsMode, sql: &[String]) -> Box<dyn Evented> {
    let mut c = conn(url, mode);
    c.prepare_all(sql).unwrap();
    match c.into_evented() {
        Ok(e) => e,
        Err(_) => panic!("{url}: the connection has no evented form"),
    }
}

/// Waits (at most 10 s) until `fd` is as `w` says (or readable: a
/// connection that waits to write also reads).
pub fn wait(fd: RawFd, w: Wait) {
    let events = match w {
        Wait::Readable => libc::POLLIN,
        Wait::Writable => libc::POLLIN | libc::POLLOUT,
    };
    let mut p = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    // SAFETY: one valid pollfd; poll writes only its `revents`.
    let n = unsafe { libc::poll(&mut p, 1, 10_000) };
    assert!(n == 1, "the socket never became {w:?}");
}

/// The same request on the blocking connection.
pub fn blocking(
    c: &mut dyn Connection,
    req: Request<'_>,
    fetch: Option<&mut Fetch>,
) -> DbResult<Outcome> {
    match req {
        Request::Begin { writes } => c.begin(writes),
        Request::Commit => c.commit(),
        Request::Rollback => c.rollback(),
        Request::Exec(id, p) => c.execute(id, p),
        Request::Batch(id, p, rows) => c.execute_batch(id, p, rows),
        Request::Fetch(id, p) => c.execute_fetch(id, p, fetch.unwrap()),
    }
}

/// What a result comes to, errors by kind and code.
pub fn shape(r: &DbResult<Outcome>) -> String {
    match r {
        Ok(o) => format!("{o:?}"),
        Err(e) => format!("{:?} {}", e.kind, e.code),
    }
}
