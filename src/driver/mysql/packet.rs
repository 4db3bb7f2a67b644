//! Packets over a blocking byte stream, with one reusable read buffer and
//! one reusable write buffer.
//!
//! Reading: the socket is read in chunks as large as the free part of the
//! buffer (a page to start with, doubling: [`READ_BUF`]), and what was
//! read is fed to the framing ([`Frames`], which never touches the socket)
//! or to a response ([`Response`](super::response::Response)) where it
//! lies, so a whole result set of a typical OLTP statement costs one
//! `read`. This file only fills the buffer when they ask for more.
//! Writing: a command is built in the write buffer behind a 4-byte gap for
//! the header, which is filled in just before the one `write`; a payload
//! of 2^24 - 1 bytes or more is split into packets of that size and a
//! shorter (possibly empty) one.

use std::io::{self, Read, Write};
use std::ops::Range;
#[cfg(test)]
use std::os::unix::net::UnixStream;

use super::frame::{Frame, Frames, MAX_PAYLOAD};
pub use crate::driver::socket::Stream;

/// Initial size of the read buffer: one page, which holds a point select's
/// answer. A read that fills it doubles it, up to [`READ_GROWN`], so larger
/// answers (a range select's 100 rows of ~125 bytes) soon take one `read`.
/// Memory a connection is what limits 10,000 of them: with a 64 KiB read
/// and a 16 KiB write buffer a connection was 19.2 KB resident, now 12.4.
const READ_BUF: usize = 4 * 1024;

/// The read buffer's largest size by doubling (a single larger packet
/// grows it further, for as long as it is read).
const READ_GROWN: usize = 64 * 1024;

/// Initial capacity of the write buffer: a statement's execution, or a
/// query of a few kilobytes (a longer one grows it).
const WRITE_BUF: usize = 4 * 1024;

/// Buffers that grew beyond this for one large packet are shrunk back once
/// it is done, so that a single 16 MiB value does not pin 32 MiB per
/// connection for the rest of the run.
const KEEP: usize = 4 << 20;

/// The framed connection: the socket, its buffers and the sequence id.
pub struct Io {
    stream: Stream,
    /// Received bytes; `rbuf[start..end]` is not consumed yet. Its length is
    /// its usable size (kept initialised so that reads need no `unsafe`).
    rbuf: Vec<u8>,
    start: usize,
    end: usize,
    /// The packet being built: 4 bytes reserved for the header, then the
    /// payload. Callers append the payload directly.
    pub wbuf: Vec<u8>,
    /// Sequence id of the next packet, sent or received. Each command starts
    /// at 0; both sides then count up across the exchange.
    seq: u8,
    /// How much of the sealed write buffer a non-blocking socket took.
    sent: usize,
    /// The last non-blocking read found the socket empty (it came back
    /// short, or would block) and no readiness event came since
    /// (`Evented::woken` clears it): bytes that arrive now come with an
    /// event of their own. Never under TLS, whose reads are of records
    /// already taken from the socket.
    pub drained: bool,
}

impl Io {
    pub fn new(stream: Stream) -> Io {
        Io {
            stream,
            rbuf: vec![0; READ_BUF],
            start: 0,
            end: 0,
            wbuf: Vec::with_capacity(WRITE_BUF),
            seq: 0,
            sent: 0,
            drained: false,
        }
    }

    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// The socket itself, to start TLS on it.
    pub fn stream_mut(&mut self) -> &mut Stream {
        &mut self.stream
    }

    /// Starts a new packet in the write buffer (continuing the exchange's
    /// sequence ids).
    #[inline]
    pub fn begin_packet(&mut self) {
        self.wbuf.clear();
        self.wbuf.extend_from_slice(&[0; 4]);
    }

    /// Starts a new command: sequence ids restart at 0.
    #[inline]
    pub fn begin_command(&mut self, command: u8) {
        self.seq = 0;
        if self.wbuf.capacity() > KEEP {
            self.wbuf = Vec::with_capacity(WRITE_BUF);
        }
        self.begin_packet();
        self.wbuf.push(command);
    }

    /// Sends the packet in the write buffer with one `write`.
    #[inline]
    pub fn send(&mut self) -> io::Result<()> {
        self.seal();
        self.stream.write_all(&self.wbuf)
    }

    /// Fills in the header of the packet in the write buffer, which is
    /// then ready to go as it lies, and resets what was sent of it
    /// ([`send_some`](Self::send_some)). A payload of 2^24 - 1 bytes or
    /// more becomes a series of maximal packets and a final shorter
    /// (possibly empty) one.
    #[inline]
    pub fn seal(&mut self) {
        self.sent = 0;
        let len = self.wbuf.len() - 4;
        if len >= MAX_PAYLOAD {
            return self.seal_split();
        }
        self.wbuf[..4].copy_from_slice(&header(len, self.seq));
        self.seq = self.seq.wrapping_add(1);
    }

    /// [`seal`](Self::seal) for a payload that needs continuations: the
    /// packets are laid out anew, each behind its header (a copy, but of
    /// a payload this large only).
    #[cold]
    fn seal_split(&mut self) {
        let payload = &self.wbuf[4..];
        let mut out = Vec::with_capacity(payload.len() + 4 * (payload.len() / MAX_PAYLOAD + 1));
        let mut chunks = payload.chunks(MAX_PAYLOAD);
        loop {
            let chunk = chunks.next().unwrap_or(&[]);
            out.extend_from_slice(&header(chunk.len(), self.seq));
            out.extend_from_slice(chunk);
            self.seq = self.seq.wrapping_add(1);
            if chunk.len() < MAX_PAYLOAD {
                break;
            }
        }
        self.wbuf = out;
    }

    /// On a non-blocking socket: writes what the socket takes of the
    /// sealed packet; true once all of it is sent.
    pub fn send_some(&mut self) -> io::Result<bool> {
        while self.sent < self.wbuf.len() {
            match self.stream.write(&self.wbuf[self.sent..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        // Under TLS, what the socket took may still be records waiting.
        self.stream.flush_pending()
    }

    /// Reads the next packet and returns where its payload lies in the read
    /// buffer ([`Io::payload`]). The range stays valid until the next read.
    pub fn read_packet(&mut self) -> io::Result<Range<usize>> {
        let mut frames = Frames::default();
        loop {
            match frames.next(self.buffered(), |_, _| true) {
                Frame::Whole { used, payload } => {
                    let len = payload.len();
                    self.start += used;
                    self.seq = frames.next_seq();
                    let joined = frames.take_joined();
                    if joined.is_empty() {
                        return Ok(self.start - len..self.start);
                    }
                    return Ok(self.hold(joined));
                }
                Frame::More { used, need } => {
                    self.start += used;
                    self.fill(need)?;
                }
                // Never: every payload is wanted whole.
                Frame::Passed { used, .. } => self.start += used,
            }
        }
    }

    /// Puts a payload joined from continued packets at the front of the
    /// read buffer, before the bytes buffered after it, so that it is read
    /// where every other payload is; returns where it lies.
    #[cold]
    fn hold(&mut self, mut joined: Vec<u8>) -> Range<usize> {
        let len = joined.len();
        joined.extend_from_slice(&self.rbuf[self.start..self.end]);
        self.start = len;
        self.end = joined.len();
        joined.resize(joined.len().next_power_of_two(), 0);
        self.rbuf = joined;
        0..len
    }

    /// The bytes received and not consumed yet.
    #[inline]
    pub fn buffered(&self) -> &[u8] {
        &self.rbuf[self.start..self.end]
    }

    /// Consumes the first `n` buffered bytes.
    #[inline]
    pub fn consume(&mut self, n: usize) {
        self.start += n;
    }

    /// Sets the sequence id of the next packet sent (the one after the
    /// last packet a response consumed).
    #[inline]
    pub fn set_seq(&mut self, seq: u8) {
        self.seq = seq;
    }

    /// Ensures `need` bytes are buffered from `start`, moving the buffered
    /// bytes to the front before reading more, and growing the buffer when
    /// they would not fit. An I/O error, or the end of the stream, is the
    /// connection lost.
    pub fn fill(&mut self, need: usize) -> io::Result<()> {
        if self.end - self.start >= need {
            return Ok(());
        }
        self.make_room(need);
        while self.end - self.start < need {
            match self.stream.read(&mut self.rbuf[self.end..]) {
                Ok(0) => return Err(closed()),
                Ok(n) => self.read_into(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// On a non-blocking socket: reads what has arrived, with room for at
    /// least `need` unconsumed bytes; false when nothing had.
    pub fn read_some(&mut self, need: usize) -> io::Result<bool> {
        self.make_room(need);
        let (n, drained) = self.stream.read_arrived(&mut self.rbuf[self.end..])?;
        self.drained = drained;
        if n > 0 {
            self.read_into(n);
        }
        Ok(n > 0)
    }

    /// `n` bytes were read after the buffered ones. When they filled the
    /// buffer, more were likely waiting: it doubles, up to [`READ_GROWN`].
    #[inline]
    fn read_into(&mut self, n: usize) {
        self.end += n;
        let len = self.rbuf.len();
        if self.end == len && len < READ_GROWN {
            self.rbuf.resize(len * 2, 0);
        }
    }

    /// Moves the buffered bytes to the front, and grows the buffer when
    /// `need` bytes would not fit, so that a read lands after them.
    fn make_room(&mut self, need: usize) {
        if self.start == self.end {
            // Nothing buffered: a buffer that grew for one large packet
            // is given back rather than kept for the rest of the run.
            self.start = 0;
            self.end = 0;
            if self.rbuf.len() > KEEP {
                self.rbuf = vec![0; READ_BUF];
            }
        }
        // Reads land at the front: a buffer moved back only once full let
        // every connection's reads walk over all of its pages in time, and
        // a thousand connections' memory grew by megabytes an hour. What is
        // moved is the part of a packet already read.
        if self.start > 0 {
            self.rbuf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if need > self.rbuf.len() {
            self.rbuf.resize(need.next_power_of_two(), 0);
        }
    }

    /// The bytes of a payload returned by [`Io::read_packet`].
    #[inline]
    pub fn payload(&self, r: Range<usize>) -> &[u8] {
        &self.rbuf[r]
    }
}

/// A packet's header: the payload's length and the sequence id.
#[inline]
fn header(len: usize, seq: u8) -> [u8; 4] {
    [len as u8, (len >> 8) as u8, (len >> 16) as u8, seq]
}

/// The end of the stream where a response was expected.
#[cold]
fn closed() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "the server closed the connection",
    )
}

/// Reads a length-encoded integer at `*pos`, advancing it; None if the bytes
/// run out or the prefix is not an integer (0xFB is NULL, 0xFF an error).
pub fn lenenc(p: &[u8], pos: &mut usize) -> Option<u64> {
    let first = *p.get(*pos)?;
    let (n, width) = match first {
        0..=0xFA => (u64::from(first), 0),
        0xFC => (0, 2),
        0xFD => (0, 3),
        0xFE => (0, 8),
        _ => return None,
    };
    *pos += 1;
    if width == 0 {
        return Some(n);
    }
    let bytes = p.get(*pos..*pos + width)?;
    *pos += width;
    Some(
        bytes
            .iter()
            .rev()
            .fold(0u64, |acc, &b| acc << 8 | u64::from(b)),
    )
}

/// Reads a length-encoded string at `*pos`; `Some(None)` is SQL NULL.
pub fn lenenc_str<'a>(p: &'a [u8], pos: &mut usize) -> Option<Option<&'a [u8]>> {
    if p.get(*pos) == Some(&0xFB) {
        *pos += 1;
        return Some(None);
    }
    let n = lenenc(p, pos)? as usize;
    let s = p.get(*pos..*pos + n)?;
    *pos += n;
    Some(Some(s))
}

/// Appends a length-encoded integer.
#[inline]
pub fn put_lenenc(out: &mut Vec<u8>, n: u64) {
    if n < 0xFB {
        out.push(n as u8);
    } else if n < 1 << 16 {
        out.push(0xFC);
        out.extend_from_slice(&(n as u16).to_le_bytes());
    } else if n < 1 << 24 {
        out.push(0xFD);
        out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
    } else {
        out.push(0xFE);
        out.extend_from_slice(&n.to_le_bytes());
    }
}

/// A little-endian u16 at `pos` (0 if out of range: callers treat short
/// packets as having the field unset).
pub fn u16_at(p: &[u8], pos: usize) -> u16 {
    p.get(pos..pos + 2)
        .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]))
}

/// A little-endian u32 at `pos` (0 if out of range).
pub fn u32_at(p: &[u8], pos: usize) -> u32 {
    p.get(pos..pos + 4)
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_round_trips() {
        for n in [
            0u64,
            1,
            250,
            251,
            65535,
            65536,
            (1 << 24) - 1,
            1 << 24,
            u64::MAX,
        ] {
            let mut b = Vec::new();
            put_lenenc(&mut b, n);
            let mut pos = 0;
            assert_eq!(lenenc(&b, &mut pos), Some(n), "{n}");
            assert_eq!(pos, b.len());
        }
        let mut pos = 0;
        assert_eq!(lenenc(&[0xFC, 1], &mut pos), None);
        let mut pos = 0;
        assert_eq!(lenenc_str(&[0xFB], &mut pos), Some(None));
        let mut pos = 0;
        assert_eq!(
            lenenc_str(&[2, b'h', b'i', 9], &mut pos),
            Some(Some(&b"hi"[..]))
        );
        assert_eq!(pos, 3);
    }

    /// A pair of connected unix sockets: `Io` on one end, raw bytes on the other.
    fn pair() -> (Io, UnixStream) {
        let (a, b) = UnixStream::pair().unwrap();
        (Io::new(Stream::Unix(a)), b)
    }

    #[test]
    fn a_read_says_whether_it_found_the_socket_empty() {
        let (mut io, mut peer) = pair();
        io.stream().set_nonblocking(true).unwrap();
        assert!(!io.drained, "nothing read yet: not known");
        assert!(!io.read_some(4).unwrap());
        assert!(io.drained, "the read would block");
        peer.write_all(&[7; 100]).unwrap();
        assert!(io.read_some(4).unwrap());
        assert!(io.drained, "less than the buffer holds: all there was");
        io.consume(100);
        let room = io.rbuf.len();
        peer.write_all(&vec![7; room + 10]).unwrap();
        assert!(io.read_some(4).unwrap());
        assert!(!io.drained, "a full read left bytes behind");
    }

    #[test]
    fn reads_packets_split_and_joined_across_reads() {
        let (mut io, mut peer) = pair();
        // Two packets in one write, then one arriving byte by byte.
        peer.write_all(&[3, 0, 0, 1, b'a', b'b', b'c', 0, 0, 0, 2])
            .unwrap();
        let r = io.read_packet().unwrap();
        assert_eq!(io.payload(r), b"abc");
        let r = io.read_packet().unwrap();
        assert_eq!(io.payload(r), b"");
        let t = std::thread::spawn(move || {
            for b in [2u8, 0, 0, 3, b'x', b'y'] {
                peer.write_all(&[b]).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            peer
        });
        let r = io.read_packet().unwrap();
        assert_eq!(io.payload(r), b"xy");
        assert_eq!(io.seq, 4);
        drop(t.join().unwrap());
        assert_eq!(
            io.read_packet().unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
    }

    #[test]
    fn reads_land_at_the_front_when_packets_end_mid_read() {
        let (mut io, mut peer) = pair();
        // 2,000 packets of 304 bytes, sent so that every read ends 200
        // bytes into the next packet (see the PostgreSQL driver's test).
        let all: Vec<u8> = (0..2_000u32)
            .flat_map(|i| {
                let mut p = vec![44, 1, 0, i as u8];
                p.extend((0..300).map(|j| (i as usize + j) as u8));
                p
            })
            .collect();
        peer.write_all(&all[..504]).unwrap();
        let mut sent = 504;
        let mut furthest = 0;
        for i in 0..2_000u32 {
            let r = io.read_packet().unwrap();
            assert_eq!(r.len(), 300);
            assert_eq!(io.payload(r)[0], i as u8);
            furthest = furthest.max(io.end);
            let n = 304.min(all.len() - sent);
            peer.write_all(&all[sent..sent + n]).unwrap();
            sent += n;
        }
        assert!(furthest <= 504, "reads reached byte {furthest}");
    }

    #[test]
    fn the_read_buffer_stays_a_page_for_small_answers_and_doubles_for_large_ones() {
        let (mut io, mut peer) = pair();
        for i in 0..100u8 {
            peer.write_all(&[3, 0, 0, i, b'a', b'b', b'c']).unwrap();
            let r = io.read_packet().unwrap();
            assert_eq!(io.payload(r), b"abc");
        }
        assert_eq!(io.rbuf.len(), READ_BUF);
        // 100 rows of 125 bytes at once: full reads double it.
        let rows: Vec<u8> = (0..100u32)
            .flat_map(|i| {
                let mut p = vec![125, 0, 0, i as u8];
                p.extend((0..125).map(|j| (i as usize + j) as u8));
                p
            })
            .collect();
        for _ in 0..3 {
            peer.write_all(&rows).unwrap();
            for i in 0..100u32 {
                let r = io.read_packet().unwrap();
                assert_eq!(io.payload(r)[0], i as u8);
            }
        }
        assert!(io.rbuf.len() > rows.len(), "grew to {}", io.rbuf.len());
        assert!(io.rbuf.len() <= READ_GROWN);
    }

    #[test]
    fn joins_and_splits_payloads_of_16_mib_and_more() {
        let (mut io, peer) = pair();
        let mut peer_io = Io::new(Stream::Unix(peer));
        // Exactly MAX_PAYLOAD bytes: a full packet and an empty one; then
        // MAX_PAYLOAD + 10 bytes, then a short packet after them.
        let sizes = [MAX_PAYLOAD, MAX_PAYLOAD + 10, 5];
        let writer = std::thread::spawn(move || {
            for (i, n) in sizes.into_iter().enumerate() {
                peer_io.begin_packet();
                peer_io
                    .wbuf
                    .extend((0..n).map(|j| (j % 251) as u8 ^ i as u8));
                peer_io.send().unwrap();
            }
            peer_io
        });
        for (i, n) in sizes.into_iter().enumerate() {
            let r = io.read_packet().unwrap();
            let p = io.payload(r);
            assert_eq!(p.len(), n);
            assert!(p
                .iter()
                .enumerate()
                .all(|(j, &b)| b == (j % 251) as u8 ^ i as u8));
        }
        // 2 packets, then 2, then 1: sequence ids 0..=4.
        assert_eq!(io.seq, 5);
        drop(writer.join().unwrap());
    }
}
