//! The byte stream under both network drivers: a TCP socket, a unix domain
//! socket, or TLS over TCP (tls.rs sets it up). Both drivers' buffers and
//! framing sit on top of it, blocking or non-blocking alike.
//!
//! TLS is driven by hand over rustls's `ClientConnection` rather than
//! through `rustls::StreamOwned`, because an event loop needs two things
//! that adapter does not give: a read that says WouldBlock only once both
//! the decrypted data and the socket are drained (the socket is watched
//! edge-triggered), and a way to know that written bytes are still
//! encrypted records waiting for the socket ([`Stream::flush_pending`]),
//! since a write that took them is not yet a write that sent them.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// A connected socket.
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<TlsStream>),
}

/// TLS over a TCP socket, after its handshake.
pub struct TlsStream {
    pub(crate) conn: rustls::ClientConnection,
    pub(crate) sock: TcpStream,
}

impl Stream {
    /// Another handle of the same socket, enough to shut it down from
    /// another thread (for TLS, the TCP socket under it: shutting that down
    /// is what wakes a reader, and nothing else is done with the handle).
    pub fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
            Stream::Tls(t) => Stream::Tcp(t.sock.try_clone()?),
        })
    }

    /// Shuts both directions down: a read blocked on any handle of this
    /// socket returns at once.
    pub fn shutdown(&self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.shutdown(Shutdown::Both),
            Stream::Unix(s) => s.shutdown(Shutdown::Both),
            Stream::Tls(t) => t.sock.shutdown(Shutdown::Both),
        }
    }

    /// Bounds how long a read may wait (None: forever).
    pub fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(t),
            Stream::Unix(s) => s.set_read_timeout(t),
            Stream::Tls(x) => x.sock.set_read_timeout(t),
        }
    }

    /// Bounds how long a write may wait (None: forever).
    pub fn set_write_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_write_timeout(t),
            Stream::Unix(s) => s.set_write_timeout(t),
            Stream::Tls(x) => x.sock.set_write_timeout(t),
        }
    }

    /// Makes reads and writes return WouldBlock instead of waiting (for an
    /// event loop), or wait again.
    pub fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_nonblocking(on),
            Stream::Unix(s) => s.set_nonblocking(on),
            Stream::Tls(t) => t.sock.set_nonblocking(on),
        }
    }

    pub fn raw_fd(&self) -> RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tls(t) => t.sock.as_raw_fd(),
        }
    }

    /// Whether this is a unix domain socket (MySQL sends a cleartext
    /// password over one, as over TLS: nobody else can read it).
    pub fn is_unix(&self) -> bool {
        matches!(self, Stream::Unix(_))
    }

    /// The TLS connection, when there is one (its version, cipher and the
    /// server's certificate).
    pub fn tls(&self) -> Option<&rustls::ClientConnection> {
        match self {
            Stream::Tls(t) => Some(&t.conn),
            _ => None,
        }
    }

    /// On a non-blocking socket: reads what has arrived into `buf`, and
    /// says whether that was all the socket held — a read that would
    /// block, or came back short (never known under TLS, whose session may
    /// hold records already taken from the socket). Ok((0, _)): nothing
    /// had arrived; the end of the stream is an error (the server closed
    /// the connection).
    pub fn read_arrived(&mut self, buf: &mut [u8]) -> io::Result<(usize, bool)> {
        let plain = !matches!(self, Stream::Tls(_));
        loop {
            match self.read(buf) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection",
                    ))
                }
                Ok(n) => return Ok((n, plain && n < buf.len())),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok((0, plain)),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Sends encrypted records a write left waiting for the socket; true
    /// once none is left (always, without TLS). Blocking sockets wait.
    pub fn flush_pending(&mut self) -> io::Result<bool> {
        match self {
            Stream::Tls(t) => match t.flush_tls() {
                Ok(()) => Ok(true),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
                Err(e) => Err(e),
            },
            _ => Ok(true),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(t) => t.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(t) => t.write(buf),
        }
    }

    /// Writes all of `buf` and, under TLS, sends every record of it.
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.write_all(buf),
            Stream::Unix(s) => s.write_all(buf),
            Stream::Tls(t) => {
                let mut rest = buf;
                while !rest.is_empty() {
                    match t.write(rest) {
                        Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                        Ok(n) => rest = &rest[n..],
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
                    }
                }
                t.flush_tls()
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.flush_pending().map(|_| ())
    }
}

impl TlsStream {
    /// Reads decrypted bytes; WouldBlock (on a non-blocking socket) only
    /// when none is buffered and the socket has nothing more.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.conn.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            // Records the session itself owes the server (a key update's
            // answer, an alert) go first; a full socket does not stop a read.
            match self.flush_tls() {
                Err(e) if e.kind() != io::ErrorKind::WouldBlock => return Err(e),
                _ => {}
            }
            let n = self.conn.read_tls(&mut self.sock)?;
            let state = self.conn.process_new_packets().map_err(|e| {
                // Send the alert that says why, if the socket takes it.
                let _ = self.conn.write_tls(&mut self.sock);
                io::Error::new(io::ErrorKind::InvalidData, format!("TLS: {e}"))
            })?;
            if n == 0 && state.plaintext_bytes_to_read() == 0 {
                // The peer closed: Ok(0) after its close_notify, or
                // UnexpectedEof without one, from the reader.
                return self.conn.reader().read(buf);
            }
        }
    }

    /// Takes bytes to encrypt: WouldBlock when earlier records still wait
    /// for a full socket (so the caller waits for it to drain); the records
    /// of this write may be left waiting ([`Stream::flush_pending`]).
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.flush_tls()?;
        let n = self.conn.writer().write(buf)?;
        match self.flush_tls() {
            Err(e) if e.kind() != io::ErrorKind::WouldBlock => Err(e),
            _ => Ok(n),
        }
    }

    /// Sends the records waiting for the socket.
    pub(crate) fn flush_tls(&mut self) -> io::Result<()> {
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut self.sock) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl Drop for TlsStream {
    /// Says close_notify, so the server sees a clean end of the session;
    /// without waiting, whatever state the socket is in.
    fn drop(&mut self) {
        self.conn.send_close_notify();
        if self.sock.set_nonblocking(true).is_ok() {
            let _ = self.flush_tls();
        }
    }
}
