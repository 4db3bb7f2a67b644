//! The wire: one blocking socket with a read buffer and a write buffer that
//! live as long as the connection, the framing of protocol 3.0 messages, and
//! the loop that reads into the buffer until a [`Response`] (response.rs,
//! which never touches the socket) has consumed a whole response.
//!
//! Reading is done by hand rather than through
//! `postgres_protocol::message::backend::Message::parse`, which moves every
//! message into a reference-counted `Bytes`: here a DataRow is only counted
//! and skipped where it lies in the buffer (or, if it is larger than the
//! buffer, skipped as it streams by), and only the few small messages whose
//! content matters (CommandComplete, ErrorResponse, ReadyForQuery) are looked
//! at. Nothing is allocated unless the server reports an error.

use std::io::{self, Read, Write};
use std::ops::Range;
use std::time::Duration;

use bytes::{Buf, BytesMut};
use postgres_protocol::message::frontend;

use super::response::{self, parse_error, Fed, Response, TextRows};
pub(super) use crate::driver::socket::Stream;
use crate::driver::{DbError, ErrorKind, Outcome};

/// Initial capacity of both buffers: a typical response (a range select of
/// 100 rows is ~14 KiB) arrives in one read, and a COPY chunk fits the write
/// buffer without growing it.
const BUF_SIZE: usize = 96 * 1024;

/// How long saying goodbye may wait for the socket.
const GOODBYE_TIMEOUT: Duration = Duration::from_millis(500);

/// One connection's socket and buffers.
pub(super) struct Wire {
    stream: Stream,
    /// Received bytes; `rbuf[rpos..rend]` are not consumed yet. Its length
    /// is its capacity (zero-filled once), so reads go straight into it.
    rbuf: Vec<u8>,
    rpos: usize,
    rend: usize,
    /// Messages being composed; sent with one write by [`Wire::send`].
    pub(super) out: BytesMut,
    /// Transaction status from the last ReadyForQuery: `I` idle, `T` in a
    /// transaction, `E` in a failed transaction.
    pub(super) status: u8,
    /// Set after an I/O error: where the response stream stands is unknown,
    /// so every later call fails fast instead of misreading it.
    broken: bool,
    /// Once the session is up: say goodbye when the wire goes.
    pub(super) goodbye: bool,
    /// The last non-blocking read found the socket empty (it came back
    /// short, or would block) and no readiness event came since
    /// (`Evented::woken` clears it): bytes that arrive now come with an
    /// event of their own. Never under TLS, whose reads are of records
    /// already taken from the socket.
    pub(super) drained: bool,
}

impl Drop for Wire {
    /// Says goodbye (Terminate), so that the server ends the session
    /// cleanly instead of logging an unexpected EOF. Best effort, never
    /// waiting long: blocking again, with a write timeout.
    fn drop(&mut self) {
        if !self.goodbye || self.broken {
            return;
        }
        let _ = self.stream.set_nonblocking(false);
        let _ = self.stream.set_write_timeout(Some(GOODBYE_TIMEOUT));
        self.out.clear();
        frontend::terminate(&mut self.out);
        let _ = self.stream.write_all(&self.out);
    }
}

impl Wire {
    pub(super) fn new(stream: Stream) -> Wire {
        Wire {
            stream,
            rbuf: vec![0; BUF_SIZE],
            rpos: 0,
            rend: 0,
            out: BytesMut::with_capacity(BUF_SIZE),
            status: b'I',
            broken: false,
            goodbye: false,
            drained: false,
        }
    }

    pub(super) fn stream(&self) -> &Stream {
        &self.stream
    }

    /// The socket itself, to start TLS on it.
    pub(super) fn stream_mut(&mut self) -> &mut Stream {
        &mut self.stream
    }

    /// Sends what `out` holds in one write and empties it.
    pub(super) fn send(&mut self) -> Result<(), DbError> {
        if self.broken {
            self.out.clear();
            return Err(lost_error("the connection was lost earlier"));
        }
        let r = self.stream.write_all(&self.out);
        self.out.clear();
        r.map_err(|e| self.fail(e))
    }

    /// Marks the connection unusable and describes why.
    pub(super) fn fail(&mut self, e: io::Error) -> DbError {
        self.broken = true;
        lost_error(&e.to_string())
    }

    /// Reads until at least `n` unconsumed bytes are buffered, growing the
    /// buffer only for a message larger than it.
    fn fill(&mut self, n: usize) -> io::Result<()> {
        if self.rend - self.rpos >= n {
            return Ok(());
        }
        self.make_room(n);
        while self.rend < n {
            match self.stream.read(&mut self.rbuf[self.rend..]) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection",
                    ))
                }
                Ok(k) => self.rend += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// On a non-blocking socket: writes what the socket takes of `out`;
    /// true once all of it is sent (and `out` empty).
    pub(super) fn send_some(&mut self) -> io::Result<bool> {
        while !self.out.is_empty() {
            match self.stream.write(&self.out) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.out.advance(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        // Under TLS, what the socket took may still be records waiting.
        self.stream.flush_pending()
    }

    /// On a non-blocking socket: reads what has arrived, with room for at
    /// least `need` unconsumed bytes; false when nothing had.
    pub(super) fn read_some(&mut self, need: usize) -> io::Result<bool> {
        self.make_room(need);
        let (k, drained) = self.stream.read_arrived(&mut self.rbuf[self.rend..])?;
        self.rend += k;
        self.drained = drained;
        Ok(k > 0)
    }

    /// Feeds the unconsumed bytes to `response`, consuming what it used;
    /// what it answers goes to `out`. At the response's end, its
    /// transaction status (if it ended at a ReadyForQuery) is the wire's.
    pub(super) fn feed(
        &mut self,
        response: &mut Response,
        rows: &mut Option<&mut TextRows>,
    ) -> io::Result<Fed> {
        let fed = response.feed(&self.rbuf[self.rpos..self.rend], rows, &mut self.out)?;
        match fed {
            Fed::Done { used } => {
                self.rpos += used;
                // A group's statement before its last has no status.
                if let Some(status) = response.status() {
                    self.status = status;
                }
            }
            Fed::More { used, .. } => self.rpos += used,
        }
        Ok(fed)
    }

    pub(super) fn is_broken(&self) -> bool {
        self.broken
    }

    /// Moves the unconsumed bytes to the front, and grows the buffer for
    /// a message of `n` bytes larger than it.
    fn make_room(&mut self, n: usize) {
        // Reads land at the front: a buffer moved back only once full let
        // every connection's reads walk over all of its 96 KiB in time
        // (responses end mid-read), and 1,024 connections' memory grew by
        // megabytes an hour. What is moved is the part of a message
        // already read.
        if self.rpos > 0 {
            self.rbuf.copy_within(self.rpos..self.rend, 0);
            self.rend -= self.rpos;
            self.rpos = 0;
        }
        if n > self.rbuf.len() {
            self.rbuf.resize(n, 0);
        }
    }

    /// Reads the next message's header: its tag and body length.
    pub(super) fn header(&mut self) -> io::Result<(u8, usize)> {
        self.fill(5)?;
        let (tag, len) = response::header(&self.rbuf[self.rpos..self.rpos + 5])?;
        self.rpos += 5;
        Ok((tag, len))
    }

    /// Buffers and consumes a body of `len` bytes; the range indexes
    /// [`Wire::bytes`] until the next read.
    pub(super) fn body(&mut self, len: usize) -> io::Result<Range<usize>> {
        self.fill(len)?;
        let r = self.rpos..self.rpos + len;
        self.rpos += len;
        Ok(r)
    }

    pub(super) fn bytes(&self, r: Range<usize>) -> &[u8] {
        &self.rbuf[r]
    }

    /// Whether the server has sent something (without reading it): during
    /// COPY, that can only be an error, and there is no point streaming on.
    pub(super) fn readable(&self) -> bool {
        if self.rend > self.rpos {
            return true;
        }
        let mut p = libc::pollfd {
            fd: self.stream.raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, zero timeout; poll only writes `revents`.
        let n = unsafe { libc::poll(&mut p, 1, 0) };
        n > 0 && p.revents != 0
    }

    /// Reads the answer to `COPY … FROM STDIN` up to CopyInResponse; an
    /// error (no such table, say) comes with its ReadyForQuery, read too.
    pub(super) fn start_copy(&mut self) -> Result<(), DbError> {
        let mut error = None;
        loop {
            let step = self.header().and_then(|(tag, len)| {
                let r = self.body(len)?;
                Ok((tag, r))
            });
            let (tag, r) = step.map_err(|e| self.fail(e))?;
            match tag {
                b'G' => return Ok(()),
                b'E' => {
                    error.get_or_insert(parse_error(self.bytes(r)));
                }
                b'Z' => {
                    self.status = self.bytes(r).first().copied().unwrap_or(b'I');
                    return Err(error.unwrap_or_else(|| {
                        DbError::new(ErrorKind::Other, "", "the server did not start the COPY")
                    }));
                }
                _ => {}
            }
        }
    }

    /// During COPY FROM STDIN: reads whatever the server has sent so far
    /// without waiting, and returns its error if it reported one. Notices
    /// and parameter changes are skipped and the COPY goes on.
    pub(super) fn copy_error(&mut self) -> Result<Option<DbError>, DbError> {
        while self.readable() {
            let step = self.header().and_then(|(tag, len)| {
                let r = self.body(len)?;
                Ok((tag, r))
            });
            let (tag, r) = step.map_err(|e| self.fail(e))?;
            if tag == b'E' {
                return Ok(Some(parse_error(self.bytes(r))));
            }
        }
        Ok(None)
    }

    /// Reads a response up to and including ReadyForQuery, adding what it
    /// says to `out`: rows counted from DataRow messages, `result_set` set by
    /// a RowDescription (or by `returns_rows`, for Execute, which sends
    /// none), rows affected from CommandComplete tags. With `rows`, DataRow
    /// values are decoded into it as text.
    ///
    /// Returns the first ErrorResponse, if any, once ReadyForQuery has
    /// arrived, so that the connection is ready for the next command.
    pub(super) fn finish(
        &mut self,
        out: &mut Outcome,
        returns_rows: bool,
        rows: Option<&mut TextRows>,
    ) -> Result<(), DbError> {
        let o = self.read(Response::new(returns_rows), rows)?;
        out.rows += o.rows;
        out.affected += o.affected;
        out.result_set |= o.result_set;
        Ok(())
    }

    /// Reads into the buffer until `response` has consumed a whole
    /// response (see [`Wire::finish`]), and returns what it did.
    pub(super) fn read(
        &mut self,
        mut response: Response,
        mut rows: Option<&mut TextRows>,
    ) -> Result<Outcome, DbError> {
        if self.broken {
            return Err(lost_error("the connection was lost earlier"));
        }
        loop {
            let step = match self.feed(&mut response, &mut rows) {
                Ok(Fed::Done { .. }) => return response.end(),
                Ok(Fed::More { need, .. }) => self.answer().and_then(|()| self.fill(need)),
                Err(e) => Err(e),
            };
            if let Err(e) = step {
                let lost = self.fail(e);
                // A FATAL error (e.g. the server shutting down) explains
                // the lost connection better than the EOF that follows.
                return Err(match response.error() {
                    Some(mut err) => {
                        err.kind = ErrorKind::ConnectionLost;
                        err
                    }
                    None => lost,
                });
            }
        }
    }

    /// Sends what a response asked to answer (a CopyFail) before waiting
    /// for the rest of it.
    fn answer(&mut self) -> io::Result<()> {
        if self.out.is_empty() {
            return Ok(());
        }
        let r = self.stream.write_all(&self.out);
        self.out.clear();
        r
    }
}

/// The error of a connection that is gone.
pub(super) fn lost_error(why: &str) -> DbError {
    DbError::new(
        ErrorKind::ConnectionLost,
        "",
        format!("connection to the PostgreSQL server lost: {why}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;

    #[test]
    fn reads_land_at_the_front_when_messages_end_mid_read() {
        use std::io::Write;
        let (a, mut peer) = UnixStream::pair().unwrap();
        let mut wire = Wire::new(Stream::Unix(a));
        // 2,000 messages of 305 bytes, sent so that every read ends 200
        // bytes into the next message, as responses end mid-read under
        // load: the first message and 200 bytes, then after each message
        // read the next 305 bytes.
        let msg = |i: u32| {
            let mut m = vec![b'D'];
            m.extend_from_slice(&304u32.to_be_bytes());
            m.extend((0..300).map(|j| (i as usize + j) as u8));
            m
        };
        let all: Vec<u8> = (0..2_000).flat_map(msg).collect();
        peer.write_all(&all[..505]).unwrap();
        let mut sent = 505;
        let mut furthest = 0;
        for i in 0..2_000u32 {
            let (tag, len) = wire.header().unwrap();
            let r = wire.body(len).unwrap();
            assert_eq!((tag, len), (b'D', 300));
            assert_eq!(wire.bytes(r)[0], i as u8);
            furthest = furthest.max(wire.rend);
            let n = 305.min(all.len() - sent);
            peer.write_all(&all[sent..sent + n]).unwrap();
            sent += n;
        }
        // A read takes what is queued, a message and a piece, to the front
        // of the buffer; moved back only once full, reads walked over all
        // of its 96 KiB.
        assert!(furthest <= 505, "reads reached byte {furthest}");
    }

    #[test]
    fn a_read_says_whether_it_found_the_socket_empty() {
        use std::io::Write;
        let (a, mut peer) = UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let mut wire = Wire::new(Stream::Unix(a));
        assert!(!wire.drained, "nothing read yet: not known");
        // Nothing there: the read would block.
        assert!(!wire.read_some(5).unwrap());
        assert!(wire.drained);
        // Less than the buffer holds: all there was.
        peer.write_all(&[7; 100]).unwrap();
        assert!(wire.read_some(5).unwrap());
        assert!(wire.drained);
        // A full buffer: there may be more.
        let room = wire.rbuf.len() - wire.rend;
        peer.write_all(&vec![7; room + 10]).unwrap();
        assert!(wire.read_some(5).unwrap());
        assert_eq!(wire.rend, wire.rbuf.len());
        assert!(!wire.drained, "a full read left bytes behind");
    }
}
