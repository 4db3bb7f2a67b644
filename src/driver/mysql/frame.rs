//! Packet framing read without the socket (the sans-I/O shape): a
//! [`Frames`] is fed the bytes buffered so far and finds the packets among
//! them. It never reads or waits, so the blocking reader
//! ([`Io`](super::packet::Io)) and a response
//! ([`Response`](super::response::Response)) share it, and the tests feed
//! it byte by byte.
//!
//! Every packet is a 3-byte little-endian payload length, a 1-byte sequence
//! id and the payload; a payload of 2^24 - 1 bytes or more is split into
//! packets of exactly 2^24 - 1 bytes followed by a shorter (possibly empty)
//! one. The caller says of each payload, from its first byte, whether it
//! wants it whole or passed over: a whole payload is handed out where it
//! lies in the caller's buffer (zero-copy), or joined from its packets as
//! they arrive when it continues; a passed payload streams by, so that a
//! row that is only counted never has to fit in the buffer.

/// The largest payload one packet carries; a payload this long continues in
/// the next packet.
pub const MAX_PAYLOAD: usize = 0xFF_FFFF;

/// What the bytes fed to [`Frames::next`] held.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Frame<'a> {
    /// `used` bytes were consumed; to go on, at least `need` bytes must be
    /// buffered after them (more than are).
    More { used: usize, need: usize },
    /// A whole payload; `used` bytes were consumed, up to its end.
    Whole { used: usize, payload: &'a [u8] },
    /// A payload to pass over begins, `first` its first byte (None if it is
    /// empty); `used` bytes were consumed, and the next calls consume the
    /// rest of it before anything else.
    Passed { used: usize, first: Option<u8> },
}

/// The framing state between feeds: the sequence id, and a payload read
/// past the end of what was fed.
#[derive(Debug, Default)]
pub(super) struct Frames {
    /// The sequence id of the last packet whose header was consumed.
    seq: u8,
    /// A payload that continues beyond the bytes fed so far.
    stream: Option<Streaming>,
    /// The payload being joined from continued packets, or the last one
    /// (which the `Whole` just returned borrows): freed at the next call,
    /// so that one large value does not stay with the connection.
    joined: Vec<u8>,
}

/// A payload consumed as it arrives.
#[derive(Debug)]
struct Streaming {
    /// Bytes of the current packet still to come.
    left: usize,
    /// Whether the current packet is a full one, which another continues.
    continued: bool,
    /// Whether the payload is joined (held whole) rather than passed over.
    join: bool,
}

impl Frames {
    /// Consumes `input` up to the next whole payload, the start of the next
    /// payload passed over, or its end. `whole(first, len)` says of a
    /// payload, from its first byte (None if empty) and its first packet's
    /// length, whether it is wanted whole.
    pub(super) fn next<'a>(
        &'a mut self,
        input: &'a [u8],
        whole: impl Fn(Option<u8>, usize) -> bool,
    ) -> Frame<'a> {
        if self.stream.is_none() && self.joined.capacity() > 0 {
            self.joined = Vec::new();
        }
        let mut pos = 0;
        loop {
            if let Some(s) = &mut self.stream {
                loop {
                    let take = s.left.min(input.len() - pos);
                    if s.join {
                        self.joined.extend_from_slice(&input[pos..pos + take]);
                    }
                    pos += take;
                    s.left -= take;
                    if s.left > 0 {
                        return Frame::More { used: pos, need: 1 };
                    }
                    if !s.continued {
                        break;
                    }
                    let Some(h) = input.get(pos..pos + 4) else {
                        return Frame::More { used: pos, need: 4 };
                    };
                    let (len, seq) = header(h);
                    self.seq = seq;
                    pos += 4;
                    s.left = len;
                    s.continued = len == MAX_PAYLOAD;
                }
                let join = s.join;
                self.stream = None;
                if join {
                    return Frame::Whole {
                        used: pos,
                        payload: &self.joined,
                    };
                }
            }
            let rest = &input[pos..];
            let Some(h) = rest.get(..4) else {
                return Frame::More { used: pos, need: 4 };
            };
            let (len, seq) = header(h);
            let first = match (len, rest.get(4)) {
                (0, _) => None,
                (_, Some(&b)) => Some(b),
                (_, None) => return Frame::More { used: pos, need: 5 },
            };
            if !whole(first, len) {
                self.seq = seq;
                if len < MAX_PAYLOAD && 4 + len <= rest.len() {
                    return Frame::Passed {
                        used: pos + 4 + len,
                        first,
                    };
                }
                self.stream = Some(Streaming {
                    left: len,
                    continued: len == MAX_PAYLOAD,
                    join: false,
                });
                return Frame::Passed {
                    used: pos + 4,
                    first,
                };
            }
            if len < MAX_PAYLOAD {
                let Some(payload) = rest.get(4..4 + len) else {
                    return Frame::More {
                        used: pos,
                        need: 4 + len,
                    };
                };
                self.seq = seq;
                return Frame::Whole {
                    used: pos + 4 + len,
                    payload,
                };
            }
            // A payload continued over packets, wanted whole: joined as
            // it arrives, whatever the size of the buffer.
            self.seq = seq;
            pos += 4;
            self.joined = Vec::with_capacity(2 * MAX_PAYLOAD);
            self.stream = Some(Streaming {
                left: len,
                continued: true,
                join: true,
            });
        }
    }

    /// The sequence id that follows the last packet consumed: the next
    /// packet's, sent or received.
    pub(super) fn next_seq(&self) -> u8 {
        self.seq.wrapping_add(1)
    }

    /// The payload the last `Whole` returned, if it was joined from
    /// continued packets (empty otherwise): the caller keeps it.
    pub(super) fn take_joined(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.joined)
    }
}

/// A packet header's payload length and sequence id.
#[inline]
fn header(h: &[u8]) -> (usize, u8) {
    let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
    (len, h[3])
}

/// The packets of `payload` as a server sends it, numbered from `seq`.
#[cfg(test)]
pub(super) fn packets(payload: &[u8], mut seq: u8) -> Vec<u8> {
    let mut out = Vec::new();
    let mut chunks = payload.chunks(MAX_PAYLOAD);
    loop {
        let c = chunks.next().unwrap_or_default();
        out.extend_from_slice(&(c.len() as u32).to_le_bytes()[..3]);
        out.push(seq);
        out.extend_from_slice(c);
        seq = seq.wrapping_add(1);
        if c.len() < MAX_PAYLOAD {
            return out;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What reading a stream of packets came to: each payload as (its
    /// length, or None if passed over; its first byte), the most bytes
    /// ever buffered, and the sequence id after the last packet.
    type Read = (Vec<(Option<usize>, Option<u8>)>, usize, u8);

    /// Feeds `bytes` `chunk` at a time, as a reader does: what was not
    /// consumed stays buffered, and more is read only when asked for.
    fn read_all(bytes: &[u8], chunk: usize, whole: impl Fn(Option<u8>, usize) -> bool) -> Read {
        let mut frames = Frames::default();
        let (mut buf, mut sent, mut held) = (Vec::new(), 0, 0);
        let mut got = Vec::new();
        loop {
            match frames.next(&buf, &whole) {
                Frame::Whole { used, payload } => {
                    got.push((Some(payload.len()), payload.first().copied()));
                    buf.drain(..used);
                }
                Frame::Passed { used, first } => {
                    got.push((None, first));
                    buf.drain(..used);
                }
                Frame::More { used, need } => {
                    buf.drain(..used);
                    assert!(buf.len() < need, "{need} with {} buffered", buf.len());
                    if sent == bytes.len() {
                        assert!(buf.is_empty(), "{} bytes left over", buf.len());
                        return (got, held, frames.next_seq());
                    }
                    while buf.len() < need && sent < bytes.len() {
                        let n = chunk.min(bytes.len() - sent);
                        buf.extend_from_slice(&bytes[sent..sent + n]);
                        sent += n;
                    }
                    held = held.max(buf.len());
                }
            }
        }
    }

    #[test]
    fn small_payloads_whole_or_passed_in_any_pieces() {
        let bytes = [
            packets(b"abc", 1),
            packets(&[], 2),
            packets(&[7; 300], 3),
            packets(b"\xFExyz", 4),
        ]
        .concat();
        for chunk in [1, 2, 3, 7, 4096, bytes.len()] {
            let all = read_all(&bytes, chunk, |_, _| true);
            let want = [(3, b'a'), (0, 0), (300, 7), (4, 0xFE)];
            let want: Vec<_> = want
                .iter()
                .map(|&(n, b)| (Some(n), (n > 0).then_some(b)))
                .collect();
            assert_eq!((all.0, all.2), (want, 5), "{chunk}");
            // Only 0xFE whole: the 300 bytes pass through a few bytes of
            // buffer when the pieces are small.
            let (got, held, _) = read_all(&bytes, chunk, |f, _| f == Some(0xFE));
            assert_eq!(
                got,
                [
                    (None, Some(b'a')),
                    (None, None),
                    (None, Some(7)),
                    (Some(4), Some(0xFE))
                ],
                "{chunk}"
            );
            assert!(held < 8 + chunk, "{chunk}: held {held}");
        }
    }

    #[test]
    fn payloads_of_16_mib_and_more_are_joined_or_passed() {
        let big: Vec<u8> = (0..MAX_PAYLOAD + 10).map(|i| (i % 251) as u8).collect();
        let bytes = [
            packets(&big, 0),
            packets(&big[..MAX_PAYLOAD], 2),
            packets(b"\xFExyz", 4),
        ]
        .concat();
        for chunk in [4096, 65536, bytes.len()] {
            let (got, _, seq) = read_all(&bytes, chunk, |_, _| true);
            let want = [
                (Some(MAX_PAYLOAD + 10), Some(0)),
                (Some(MAX_PAYLOAD), Some(0)),
                (Some(4), Some(0xFE)),
            ];
            assert_eq!((got, seq), (want.to_vec(), 5), "{chunk}");
            // Nothing whole: 32 MiB stream through a buffer of one piece.
            let (got, held, seq) = read_all(&bytes, chunk, |_, _| false);
            let want = [(None, Some(0)), (None, Some(0)), (None, Some(0xFE))];
            assert_eq!((got, seq), (want.to_vec(), 5), "{chunk}");
            assert!(held < 8 + chunk, "{chunk}: held {held}");
        }
    }

    #[test]
    fn a_joined_payload_is_exact_and_freed_after() {
        let big: Vec<u8> = (0..2 * MAX_PAYLOAD + 3).map(|i| (i % 253) as u8).collect();
        let bytes = [packets(&big, 0), packets(b"next", 3)].concat();
        let mut frames = Frames::default();
        let Frame::Whole { used, payload } = frames.next(&bytes, |_, _| true) else {
            panic!("not whole")
        };
        assert_eq!(payload, &big[..]);
        assert_eq!(used, big.len() + 12);
        assert_eq!(frames.next_seq(), 3);
        let next = frames.next(&bytes[used..], |_, _| true);
        assert_eq!(
            next,
            Frame::Whole {
                used: 8,
                payload: b"next"
            }
        );
        assert_eq!(frames.joined.capacity(), 0);
    }
}
