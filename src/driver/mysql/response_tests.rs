use super::*;
use crate::driver::mysql::frame::packets;
use crate::driver::{Col, ErrorKind, Value};

// Capabilities: DEPRECATE_EOF, MariaDB's CACHE_METADATA.
const DEPRECATE: u32 = 1;
const CACHE: u32 = 2;

/// The pieces every response is fed in, besides whole.
const PIECES: [usize; 5] = [1, 2, 3, 7, 4096];

// Column types.
const LONG: u8 = 0x03;
const DOUBLE: u8 = 0x05;
const LONGLONG: u8 = 0x08;
const VAR_STRING: u8 = 0xFD;

/// A response of these payloads, numbered from 1 (the command was 0).
fn response(payloads: &[Vec<u8>]) -> Vec<u8> {
    let mut seq = 1u8;
    let mut out = Vec::new();
    for p in payloads {
        out.extend_from_slice(&packets(p, seq));
        seq = seq.wrapping_add((p.len() / MAX_PAYLOAD + 1) as u8);
    }
    out
}

fn lenenc_of(n: u64) -> Vec<u8> {
    let mut b = Vec::new();
    crate::driver::mysql::packet::put_lenenc(&mut b, n);
    b
}

fn ok(affected: u64, status: u16) -> Vec<u8> {
    [
        &[0][..],
        &lenenc_of(affected),
        &[0],
        &status.to_le_bytes(),
        &[0, 0],
    ]
    .concat()
}

/// The end of rows: EOF (status at byte 3), or with DEPRECATE_EOF an OK
/// packet with the 0xFE header.
fn end(deprecate: bool, status: u16) -> Vec<u8> {
    match deprecate {
        true => [&[0xFE, 0, 0][..], &status.to_le_bytes(), &[0, 0]].concat(),
        false => [&[0xFE, 0, 0][..], &status.to_le_bytes()].concat(),
    }
}

fn err(code: u16, message: &str) -> Vec<u8> {
    [
        &[0xFF][..],
        &code.to_le_bytes(),
        b"#40001",
        message.as_bytes(),
    ]
    .concat()
}

/// A column definition (ColumnDefinition41) of type `ty`.
fn coldef(ty: u8) -> Vec<u8> {
    let mut p = Vec::new();
    for name in ["def", "db", "t", "t", "c", "c"] {
        p.push(name.len() as u8);
        p.extend_from_slice(name.as_bytes());
    }
    p.push(0x0c);
    p.extend_from_slice(&63u16.to_le_bytes());
    p.extend_from_slice(&4u32.to_le_bytes());
    p.extend_from_slice(&[ty, 0, 0, 0, 0, 0]);
    p
}

fn text_row(values: &[Option<&[u8]>]) -> Vec<u8> {
    let mut p = Vec::new();
    for v in values {
        match v {
            Some(v) => {
                p.extend_from_slice(&lenenc_of(v.len() as u64));
                p.extend_from_slice(v);
            }
            None => p.push(0xFB),
        }
    }
    p
}

/// A binary row: header, NULL bitmap (offset 2), values already encoded.
fn binary_row(values: &[Option<&[u8]>]) -> Vec<u8> {
    let mut bitmap = vec![0u8; (values.len() + 9) / 8];
    for (i, v) in values.iter().enumerate() {
        if v.is_none() {
            bitmap[(i + 2) / 8] |= 1 << ((i + 2) % 8);
        }
    }
    let mut p = vec![0];
    p.extend_from_slice(&bitmap);
    p.extend(values.iter().flatten().flat_map(|v| v.iter()));
    p
}

/// What the caller keeps.
#[derive(Clone)]
enum How {
    Count,
    Text,
    /// A prepared statement's columns, and the types fetched if any.
    Binary(Vec<ColumnType>, Option<Vec<Col>>),
}

/// What a response fed in pieces came to.
#[derive(Debug)]
struct Reading {
    end: Result<Outcome, String>,
    status: Option<u16>,
    next_seq: u8,
    rows: Rows,
    fetched: Vec<Value>,
    columns: Vec<ColumnType>,
    /// The sequence id of each empty packet sent to a request for a file.
    replies: Vec<u8>,
    /// The most bytes the reader ever had to hold unconsumed.
    held: usize,
    /// Bytes left after the response (the next one's).
    left: usize,
}

impl Reading {
    /// Everything but how much was held, which depends on the pieces.
    fn said(&self) -> String {
        let Reading { held: _, .. } = self;
        format!(
            "{:?} {:?} {} {:?} {:?} {:?} {:?} {}",
            self.end,
            self.status,
            self.next_seq,
            self.rows,
            self.fetched,
            self.columns,
            self.replies,
            self.left
        )
    }
}

/// Feeds `bytes` to a new response `chunk` bytes at a time, as a reader
/// does: what the response did not consume stays buffered, and more is
/// read only when it asks for more than is buffered. Malformed input and a
/// response that ends early are errors.
fn drive(bytes: &[u8], chunk: usize, caps: u32, how: &How) -> Result<Reading, String> {
    let mut r = Response::new(caps & DEPRECATE != 0, caps & CACHE != 0);
    let mut rows = Rows::new();
    let (mut columns, mut fetch) = match how {
        How::Binary(c, f) => (c.clone(), f.as_ref().map(|t| Fetch::new(t, 2))),
        _ => (Vec::new(), None),
    };
    let mut buf: Vec<u8> = Vec::new();
    let (mut sent, mut held, mut replies) = (0, 0, Vec::new());
    loop {
        let mut keep = match how {
            How::Count => Keep::Count,
            How::Text => Keep::Text(&mut rows),
            How::Binary(..) => Keep::Binary {
                columns: &mut columns,
                fetch: fetch.as_mut(),
            },
        };
        match r
            .feed(&buf, &mut keep)
            .map_err(|Malformed(m)| m.to_string())?
        {
            Fed::Done { used } => {
                buf.drain(..used);
                break;
            }
            Fed::Reply { used } => {
                buf.drain(..used);
                replies.push(r.next_seq());
            }
            Fed::More { used, need } => {
                buf.drain(..used);
                assert!(buf.len() < need, "{need} bytes with {} buffered", buf.len());
                while buf.len() < need {
                    if sent == bytes.len() {
                        return Err("the response ended early".into());
                    }
                    let n = chunk.min(bytes.len() - sent);
                    buf.extend_from_slice(&bytes[sent..sent + n]);
                    sent += n;
                }
                held = held.max(buf.len());
            }
        }
    }
    Ok(Reading {
        status: r.status(),
        next_seq: r.next_seq(),
        end: r
            .end()
            .map_err(|e| format!("{} {:?} {}", e.code, e.kind, e.message)),
        rows,
        fetched: fetch.map(|f| f.values).unwrap_or_default(),
        columns,
        replies,
        held,
        left: buf.len() + bytes.len() - sent,
    })
}

/// Drives `bytes` whole and in every piece size: each comes to the same.
fn every_piece(bytes: &[u8], caps: u32, how: &How) -> Reading {
    let whole = drive(bytes, bytes.len(), caps, how).unwrap();
    for chunk in PIECES {
        let fed = drive(bytes, chunk, caps, how).unwrap();
        assert_eq!(fed.said(), whole.said(), "in pieces of {chunk}");
    }
    whole
}

/// A text result set of two columns and three rows, one of them 200 KB,
/// followed by the start of the next response.
fn text_result(deprecate: bool) -> Vec<u8> {
    let big = vec![b'x'; 200_000];
    let mut payloads = vec![vec![2], coldef(LONG), coldef(VAR_STRING)];
    if !deprecate {
        payloads.push(end(false, 0));
    }
    payloads.extend([
        text_row(&[Some(b"1"), None]),
        text_row(&[Some(b"2"), Some(&big)]),
        text_row(&[Some(b"3"), Some(b"")]),
        end(deprecate, 0x0002),
    ]);
    [response(&payloads), vec![7, 0, 0, 0]].concat()
}

#[test]
fn a_result_set_in_any_pieces_comes_to_the_same() {
    for deprecate in [true, false] {
        let caps = if deprecate { DEPRECATE } else { 0 };
        let bytes = text_result(deprecate);
        let got = every_piece(&bytes, caps, &How::Count);
        let o = got.end.as_ref().unwrap();
        assert_eq!((o.rows, o.affected, o.result_set), (3, 0, true));
        assert_eq!((got.status, got.left), (Some(2), 4));
        assert_eq!(got.next_seq, if deprecate { 8 } else { 9 });
        for chunk in PIECES {
            // Rows only counted pass through: the 200 KB row is never
            // held whole, whatever the pieces.
            let held = drive(&bytes, chunk, caps, &How::Count).unwrap().held;
            assert!(held < 64 + chunk, "{chunk}: held {held}");
        }
        let kept = every_piece(&bytes, caps, &How::Text);
        assert_eq!(kept.rows.len(), 3);
        assert_eq!(kept.rows[0], [Some("1".to_string()), None]);
        assert_eq!(kept.rows[1][1].as_ref().map(String::len), Some(200_000));
        assert_eq!(kept.rows[2], [Some("3".to_string()), Some(String::new())]);
    }
}

#[test]
fn several_results_add_up_and_an_error_ends_them() {
    const MORE: u16 = SERVER_MORE_RESULTS_EXISTS;
    // A multi-statement text: an UPDATE, a SELECT, an INSERT.
    let bytes = response(&[
        ok(3, MORE | 2),
        vec![1],
        coldef(LONG),
        text_row(&[Some(b"7")]),
        text_row(&[Some(b"8")]),
        end(true, MORE | 2),
        ok(2, 0x0002),
    ]);
    let got = every_piece(&bytes, DEPRECATE, &How::Text);
    let o = got.end.unwrap();
    assert_eq!((o.rows, o.affected, o.result_set), (2, 5, true));
    assert_eq!(got.rows, [[Some("7".to_string())], [Some("8".to_string())]]);
    assert_eq!((got.status, got.next_seq), (Some(2), 8));
    // An error in the second statement ends the response: the first
    // statement's status stands.
    let bytes = response(&[ok(1, MORE | 1), err(1213, "Deadlock found")]);
    let got = every_piece(&bytes, DEPRECATE, &How::Count);
    assert_eq!(got.end.unwrap_err(), "1213 Deadlock Deadlock found");
    assert_eq!((got.status, got.next_seq), (Some(MORE | 1), 3));
}

#[test]
fn errors_are_classified_first_or_among_the_rows() {
    for (code, kind) in [
        (1213, ErrorKind::Deadlock),
        (1205, ErrorKind::LockTimeout),
        (1062, ErrorKind::DuplicateKey),
        (1927, ErrorKind::ConnectionLost),
        (1969, ErrorKind::Timeout),
        (3024, ErrorKind::Timeout),
        (1146, ErrorKind::Other),
    ] {
        let bytes = response(&[err(code, "no")]);
        let got = every_piece(&bytes, DEPRECATE, &How::Count);
        assert_eq!(got.end.unwrap_err(), format!("{code} {kind:?} no"));
        assert_eq!(got.status, None);
    }
    // A query killed while its rows stream: the rows before count for
    // nothing, and the ERR ends the response.
    let bytes = response(&[
        vec![1],
        coldef(LONG),
        text_row(&[Some(b"1")]),
        err(1317, "Query execution was interrupted"),
    ]);
    let got = every_piece(&bytes, DEPRECATE, &How::Text);
    assert_eq!(
        got.end.unwrap_err(),
        "1317 Other Query execution was interrupted"
    );
    assert_eq!((got.rows.len(), got.left), (1, 0));
}

#[test]
fn rows_of_16_mib_and_more_stream_by_or_decode_whole() {
    // One text column of 17 MiB: its length prefix is 0xFE, as an EOF's
    // header, but the row is longer than an EOF can be. Then a row of
    // exactly one full packet and its empty continuation.
    let big: Vec<u8> = (0..17 << 20).map(|i| b'a' + (i % 26) as u8).collect();
    let edge = vec![b'y'; MAX_PAYLOAD - 4];
    let bytes = response(&[
        vec![1],
        coldef(VAR_STRING),
        text_row(&[Some(&big)]),
        text_row(&[Some(&edge)]),
        text_row(&[Some(b"z")]),
        end(true, 0),
    ]);
    assert_eq!(text_row(&[Some(&big)])[0], 0xFE);
    let whole = drive(&bytes, bytes.len(), DEPRECATE, &How::Count).unwrap();
    assert_eq!(whole.end.as_ref().unwrap().rows, 3);
    // 1 + 1 + 2 + 2 + 1 + 1 packets, numbered from 1.
    assert_eq!(whole.next_seq, 9);
    // Debug builds take a while over 34 MiB byte by byte: 7 and up.
    for chunk in [7, 4096] {
        let fed = drive(&bytes, chunk, DEPRECATE, &How::Count).unwrap();
        assert_eq!(fed.said(), whole.said(), "{chunk}");
        assert!(fed.held < 64 + chunk, "{chunk}: held {}", fed.held);
    }
    for chunk in [4096, bytes.len()] {
        let kept = drive(&bytes, chunk, DEPRECATE, &How::Text).unwrap();
        assert_eq!(kept.rows.len(), 3);
        assert!(kept.rows[0][0].as_deref().map(str::as_bytes) == Some(&big[..]));
        assert_eq!(kept.rows[1][0].as_ref().map(String::len), Some(edge.len()));
        assert_eq!(kept.rows[2][0].as_deref(), Some("z"));
        // Joined as they arrive: the buffer holds pieces, not the rows.
        assert!(kept.held < 64 + chunk, "{chunk}: held {}", kept.held);
    }
}

/// The answer to a COM_STMT_EXECUTE: three columns (BIGINT, VARCHAR,
/// DOUBLE), their definitions unless `cached`, three rows.
fn binary_result(cached: bool) -> Vec<u8> {
    let mut payloads = vec![vec![3, u8::from(!cached)]];
    if !cached {
        payloads.extend([coldef(LONGLONG), coldef(VAR_STRING), coldef(DOUBLE)]);
    }
    payloads.extend([
        binary_row(&[Some(&(-5i64).to_le_bytes()), Some(b"\x03abc"), None]),
        binary_row(&[None, Some(b"\x00"), Some(&0.5f64.to_le_bytes())]),
        binary_row(&[Some(&9i64.to_le_bytes()), None, None]),
        end(true, 0),
    ]);
    response(&payloads)
}

fn col(ty: u8) -> ColumnType {
    ColumnType {
        ty,
        unsigned: false,
        decimals: 0,
    }
}

#[test]
fn binary_rows_decode_across_pieces_by_the_columns_sent() {
    let caps = DEPRECATE | CACHE;
    let types = vec![col(LONGLONG), col(VAR_STRING), col(DOUBLE)];
    // The prepare said other columns; the execution's definitions win.
    let fetch = Some(vec![Col::Int, Col::Text, Col::Float]);
    let how = How::Binary(vec![col(LONG)], fetch.clone());
    let got = every_piece(&binary_result(false), caps, &how);
    let o = got.end.as_ref().unwrap();
    assert_eq!((o.rows, o.result_set), (3, true));
    assert_eq!(got.columns, types);
    // Two rows kept of three.
    assert_eq!(
        got.fetched,
        [
            Value::Int(-5),
            Value::Text("abc".into()),
            Value::Null,
            Value::Null,
            Value::Text(String::new()),
            Value::Float(0.5)
        ]
    );
    // Definitions skipped (CACHE_METADATA): the statement's columns.
    let how = How::Binary(types.clone(), fetch.clone());
    let cached = every_piece(&binary_result(true), caps, &how);
    assert_eq!(
        (cached.end, cached.fetched, cached.columns, cached.next_seq),
        (got.end, got.fetched, got.columns, 6)
    );
    // Without the statement's columns they cannot decode.
    let how = How::Binary(vec![col(LONG)], fetch);
    let e = drive(&binary_result(true), 3, caps, &how).unwrap_err();
    assert!(e.contains("other columns"), "{e}");
}

#[test]
fn definitions_sent_to_an_execution_that_counts_become_the_statements() {
    let types = vec![col(LONGLONG), col(VAR_STRING), col(DOUBLE)];
    let stale = vec![col(LONG)];
    // With CACHE_METADATA the server sends changed definitions once: they
    // are the statement's from then on, for a fetch without them.
    let how = How::Binary(stale.clone(), None);
    let got = every_piece(&binary_result(false), DEPRECATE | CACHE, &how);
    assert_eq!((got.end.unwrap().rows, got.columns), (3, types));
    assert!(got.fetched.is_empty());
    // Without it every execution brings them: counted, they pass by.
    let got = every_piece(&binary_result(false), DEPRECATE, &how);
    assert_eq!((got.end.unwrap().rows, got.columns), (3, stale));
}

#[test]
fn a_request_for_a_file_gets_an_empty_one() {
    // LOAD DATA LOCAL in a statement dbsweep did not load with: the
    // request (seq 1), the client's empty packet (seq 2), the server's OK.
    let bytes = [packets(b"\xFB/etc/passwd", 1), packets(&ok(0, 2), 3)].concat();
    let got = every_piece(&bytes, DEPRECATE, &How::Count);
    assert_eq!(got.replies, [2]);
    assert_eq!((got.end.unwrap().affected, got.next_seq), (0, 4));
}

#[test]
fn malformed_packets_are_errors() {
    let c = DEPRECATE;
    for (payloads, want) in [
        (vec![vec![]], "empty packet"),
        (vec![vec![0, 0xFC, 1]], "bad OK packet"),
        (vec![vec![0xFC, 1]], "bad column count"),
        (vec![vec![1], coldef(LONG), vec![5, b'x']], "bad row"),
    ] {
        let bytes = response(&payloads);
        for chunk in [1, bytes.len()] {
            assert_eq!(drive(&bytes, chunk, c, &How::Text).unwrap_err(), want);
        }
    }
    let how = How::Binary(vec![col(LONG)], Some(vec![Col::Int]));
    let bytes = response(&[vec![1, 1], vec![3, b'd']]);
    let e = drive(&bytes, 2, c | CACHE, &how).unwrap_err();
    assert_eq!(e, "bad column definition");
    let bytes = response(&[vec![1, 0], vec![0, 0, 1, 2]]);
    assert_eq!(
        drive(&bytes, 2, c | CACHE, &how).unwrap_err(),
        "bad binary row"
    );
}

#[test]
fn any_corruption_is_an_answer_not_a_panic() {
    let caps = DEPRECATE | CACHE;
    let fetch = Some(vec![Col::Int, Col::Text, Col::Float]);
    let cases = [
        (binary_result(false), How::Binary(vec![col(LONG)], fetch)),
        (text_result(true)[..300].to_vec(), How::Text),
        (text_result(false)[..300].to_vec(), How::Count),
    ];
    for (bytes, how) in cases {
        for i in 0..bytes.len() {
            for b in [0x00, 0x01, 0x7F, 0xFB, 0xFC, 0xFE, 0xFF] {
                let mut bad = bytes.clone();
                bad[i] = b;
                let _ = drive(&bad, 5, caps, &how);
                let _ = drive(&bad[..i], 3, caps, &how);
            }
        }
    }
}
