use super::*;

/// One backend message: its tag, length and body.
fn msg(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![tag];
    m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
    m.extend_from_slice(body);
    m
}

/// A DataRow of text values (None: NULL).
fn data_row(values: &[Option<&[u8]>]) -> Vec<u8> {
    let mut b = (values.len() as u16).to_be_bytes().to_vec();
    for v in values {
        match v {
            Some(v) => {
                b.extend_from_slice(&(v.len() as i32).to_be_bytes());
                b.extend_from_slice(v);
            }
            None => b.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    msg(b'D', &b)
}

fn complete(tag: &str) -> Vec<u8> {
    msg(b'C', format!("{tag}\0").as_bytes())
}

fn ready(status: u8) -> Vec<u8> {
    msg(b'Z', &[status])
}

/// What a response fed in pieces came to.
#[derive(Debug)]
struct Reading {
    end: Result<Outcome, String>,
    status: u8,
    rows: Vec<Vec<Option<String>>>,
    reply: Vec<u8>,
    /// The most bytes the reader ever had to hold unconsumed.
    held: usize,
    /// Bytes left after the response (the next one's).
    left: usize,
}

/// Feeds `bytes` to a new response `chunk` bytes at a time, as a reader
/// does: what the response did not consume stays buffered, and more is
/// read only when it asks for more than is buffered.
fn drive(bytes: &[u8], chunk: usize, returns_rows: bool, keep: bool) -> Reading {
    let mut r = Response::new(returns_rows);
    let mut rows = TextRows::new();
    let mut reply = BytesMut::new();
    let mut buf: Vec<u8> = Vec::new();
    let (mut sent, mut held) = (0, 0);
    loop {
        let mut kept = keep.then_some(&mut rows);
        let fed = r.feed(&buf, &mut kept, &mut reply).unwrap();
        match fed {
            Fed::Done { used } => {
                buf.drain(..used);
                break;
            }
            Fed::More { used, need } => {
                buf.drain(..used);
                assert!(
                    buf.len() < need,
                    "asked for {need} bytes with {} buffered",
                    buf.len()
                );
                while buf.len() < need {
                    assert!(sent < bytes.len(), "the response ended early");
                    let n = chunk.min(bytes.len() - sent);
                    buf.extend_from_slice(&bytes[sent..sent + n]);
                    sent += n;
                }
                held = held.max(buf.len());
            }
        }
    }
    Reading {
        status: r.status().unwrap(),
        end: r
            .end()
            .map_err(|e| format!("{} {:?} {}", e.code, e.kind, e.message)),
        rows: rows.into_strings(),
        reply: reply.to_vec(),
        held,
        left: buf.len() + bytes.len() - sent,
    }
}

/// A response to a select of three rows, one of them 200 KB, in a
/// transaction, followed by the start of the next response.
fn select_response() -> Vec<u8> {
    let big = vec![b'x'; 200_000];
    [
        msg(b'2', &[]),
        data_row(&[Some(b"1"), None]),
        data_row(&[Some(&big), Some(b"b")]),
        data_row(&[Some(b"3"), Some(b"c")]),
        complete("SELECT 3"),
        ready(b'T'),
        msg(b'2', &[]),
    ]
    .concat()
}

#[test]
fn a_response_in_any_pieces_comes_to_the_same() {
    let bytes = select_response();
    let whole = drive(&bytes, bytes.len(), true, false);
    let o = whole.end.as_ref().unwrap();
    assert_eq!((o.rows, o.affected, o.result_set), (3, 0, true));
    assert_eq!((whole.status, whole.left), (b'T', 5));
    for chunk in [1, 2, 3, 4, 5, 6, 7, 13, 100, 4096, 65536] {
        let fed = drive(&bytes, chunk, true, false);
        assert_eq!(
            format!("{:?}", fed.end),
            format!("{:?}", whole.end),
            "{chunk}"
        );
        assert_eq!((fed.status, fed.left), (b'T', 5), "{chunk}");
        // Rows only counted pass through: the 200 KB row is never held
        // whole, whatever the pieces.
        assert!(fed.held < 64 + chunk, "{chunk}: held {}", fed.held);
    }
}

#[test]
fn kept_rows_decode_whole_across_pieces() {
    let bytes = select_response();
    for chunk in [1, 7, 65536, bytes.len()] {
        let fed = drive(&bytes, chunk, true, true);
        assert_eq!(fed.rows.len(), 3);
        assert_eq!(fed.rows[0], vec![Some("1".to_string()), None]);
        assert_eq!(fed.rows[1][0].as_ref().map(String::len), Some(200_000));
        assert_eq!(fed.rows[2], vec![Some("3".into()), Some("c".into())]);
        assert_eq!(fed.end.unwrap().rows, 3);
    }
}

#[test]
fn counts_come_from_the_tags_and_the_first_error_waits_for_ready() {
    // Simple protocol, two statements: a RowDescription makes a result
    // set, whose SELECT count is rows, not rows affected.
    let bytes = [
        msg(
            b'T',
            b"\0\x01c\0\0\0\0\0\0\0\0\0\0\x17\0\x04\xff\xff\xff\xff\0\0",
        ),
        data_row(&[Some(b"7")]),
        complete("SELECT 1"),
        complete("UPDATE 4"),
        complete("INSERT 0 5"),
        ready(b'I'),
    ]
    .concat();
    for chunk in [1, 3, bytes.len()] {
        let fed = drive(&bytes, chunk, false, false);
        let o = fed.end.unwrap();
        assert_eq!((o.rows, o.affected, o.result_set), (1, 9, true));
    }
    // An error, then a second one, then ReadyForQuery in a failed
    // transaction: the first error, once the response has ended.
    let err = |code: &str, m: &str| {
        msg(
            b'E',
            format!("SERROR\0VERROR\0C{code}\0M{m}\0\0").as_bytes(),
        )
    };
    let bytes = [
        err("40P01", "deadlock detected"),
        err("25P02", "current transaction is aborted"),
        ready(b'E'),
    ]
    .concat();
    for chunk in [1, 4, bytes.len()] {
        let fed = drive(&bytes, chunk, false, false);
        assert_eq!(fed.status, b'E');
        assert_eq!(fed.end.unwrap_err(), "40P01 Deadlock deadlock detected");
    }
}

#[test]
fn a_copy_in_is_refused_and_a_malformed_length_is_an_error() {
    let bytes = [
        msg(b'G', &[0, 0, 0]),
        msg(b'E', b"SERROR\0C57014\0MCOPY from stdin failed\0\0"),
        ready(b'I'),
    ]
    .concat();
    let fed = drive(&bytes, 2, false, false);
    assert_eq!(fed.reply[0], b'f', "a CopyFail is sent back");
    assert!(fed.end.unwrap_err().contains("COPY from stdin failed"));

    let mut r = Response::new(false);
    let e = r
        .feed(&[b'C', 0, 0, 0, 3], &mut None, &mut BytesMut::new())
        .unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::InvalidData);
    let bad_row = msg(b'D', &[0, 2, 0, 0, 0, 9, b'x']);
    let mut rows = TextRows::new();
    let mut r = Response::new(true);
    let e = r
        .feed(&bad_row, &mut Some(&mut rows), &mut BytesMut::new())
        .unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::InvalidData);
}

#[test]
fn error_fields_are_parsed_and_classified() {
    let body = b"SERROR\0VERROR\0C40P01\0Mdeadlock detected\0DProcess 1 waits.\0\0";
    let e = parse_error(body);
    assert_eq!(e.kind, ErrorKind::Deadlock);
    assert_eq!(e.code, "40P01");
    assert_eq!(e.message, "deadlock detected (Process 1 waits.)");

    let e = parse_error(b"SFATAL\0VFATAL\0C28P01\0Mpassword authentication failed\0\0");
    assert_eq!(
        (e.kind, e.code.as_str()),
        (ErrorKind::ConnectionLost, "28P01")
    );
    let e = parse_error(b"SFEHLER\0C23505\0Mdoppelt\0Hfix it\0\0");
    assert_eq!(e.kind, ErrorKind::DuplicateKey);
    assert_eq!(e.message, "doppelt; hint: fix it");
    // A lost prepared statement points at the pooler that lost it.
    let e = parse_error(b"SERROR\0VERROR\0C26000\0Mprepared statement \"s3\" does not exist\0\0");
    assert!(
        e.message.starts_with(
            "prepared statement \"s3\" does not exist; hint: a pooler in transaction mode"
        ) && e.message.ends_with("--db-ps-mode=disable"),
        "{}",
        e.message
    );
    // Truncated input still yields an error rather than a panic.
    let e = parse_error(b"C55P03\0Mlock timeout");
    assert_eq!(
        (e.kind, e.message.as_str()),
        (ErrorKind::LockTimeout, "lock timeout")
    );
}

#[test]
fn sqlstates_map_to_kinds() {
    assert_eq!(classify("40001", false), ErrorKind::Serialization);
    assert_eq!(classify("08006", false), ErrorKind::ConnectionLost);
    assert_eq!(classify("57P01", true), ErrorKind::ConnectionLost);
    assert_eq!(classify("57014", false), ErrorKind::Timeout);
    assert_eq!(classify("42P01", false), ErrorKind::Other);
    assert_eq!(classify("40P01", true), ErrorKind::Deadlock);
}

#[test]
fn data_rows_decode_to_text() {
    let body = [0, 2, 0, 0, 0, 2, b'4', b'2', 0xff, 0xff, 0xff, 0xff];
    let mut rows = TextRows::new();
    rows.push(&body).unwrap();
    // Not UTF-8: kept with the bad byte replaced; an empty value is not NULL.
    rows.push(&[0, 3, 0, 0, 0, 2, b'a', 0xc3, 0, 0, 0, 0, 0, 0, 0, 1, b'z'])
        .unwrap();
    assert_eq!(
        (rows.len(), rows.cell(0, 0), rows.cell(0, 1)),
        (2, Some("42"), None)
    );
    assert_eq!(rows.cell(0, 2), None, "past the row's end");
    assert_eq!(
        (rows.cell(1, 0), rows.cell(1, 1), rows.cell(1, 2)),
        (Some("a\u{fffd}"), Some(""), Some("z"))
    );
    assert!(rows.push(&body[..7]).is_err());
    // Cleared for the next response, its buffers kept.
    rows.clear();
    rows.push(&body).unwrap();
    assert_eq!(
        rows.into_strings(),
        vec![vec![Some("42".to_string()), None]]
    );
}
