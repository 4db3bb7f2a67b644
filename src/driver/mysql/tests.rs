//! Unit tests of the MySQL driver, against a fake server on a socket pair:
//! login variants, metadata caching, error classification.

use super::auth::{CACHING_SHA2, NATIVE};
use super::response::{decode_text_row, parse_ok};
use super::*;

#[test]
fn classifies_server_errors() {
    let mut p = vec![0xFF];
    p.extend_from_slice(&1213u16.to_le_bytes());
    p.extend_from_slice(b"#40001Deadlock found when trying to get lock");
    let e = parse_err(&p);
    assert_eq!(e.kind, ErrorKind::Deadlock);
    assert_eq!(e.code, "1213");
    assert_eq!(e.message, "Deadlock found when trying to get lock");
    for (code, kind) in [
        (1205, ErrorKind::LockTimeout),
        (1062, ErrorKind::DuplicateKey),
        (1020, ErrorKind::Serialization),
        (2013, ErrorKind::ConnectionLost),
        (1146, ErrorKind::Other),
    ] {
        assert_eq!(classify(code), kind, "{code}");
    }
}

#[test]
fn parses_ok_packets() {
    // Affected 300 (0xFC prefix), insert id 0, status 0x0002.
    assert_eq!(
        parse_ok(&[0, 0xFC, 0x2C, 0x01, 0, 2, 0, 0, 0]),
        Some((300, 2))
    );
    assert_eq!(parse_ok(&[0]), None);
}

#[test]
fn decodes_text_rows() {
    let row = decode_text_row(&[2, b'4', b'2', 0xFB, 0], 3).unwrap();
    assert_eq!(row, [Some("42".to_string()), None, Some(String::new())]);
    assert!(decode_text_row(&[5, b'x'], 1).is_none());
}

/// A scripted server on a unix socket or TCP port: `script` runs on the
/// server's end of the first connection.
fn fake_server(
    tcp: bool,
    script: impl FnOnce(&mut Io) + Send + 'static,
) -> (ServerAddr, std::thread::JoinHandle<()>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut addr = ServerAddr {
        host: "127.0.0.1".into(),
        port: 0,
        user: "bench".into(),
        password: Some("pw".into()),
        database: "db".into(),
        socket: None,
        ps_mode: PsMode::Prepared,
        tls: Default::default(),
    };
    let accept: Box<dyn FnOnce() -> Stream + Send> = if tcp {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        addr.port = l.local_addr().unwrap().port();
        Box::new(move || Stream::Tcp(l.accept().unwrap().0))
    } else {
        let path = dir.path().join("fake.sock");
        let l = std::os::unix::net::UnixListener::bind(&path).unwrap();
        addr.socket = Some(path);
        Box::new(move || Stream::Unix(l.accept().unwrap().0))
    };
    let h = std::thread::spawn(move || script(&mut Io::new(accept())));
    (addr, h, dir)
}

fn put(io: &mut Io, payload: &[u8]) {
    io.begin_packet();
    io.wbuf.extend_from_slice(payload);
    io.send().unwrap();
}

fn get(io: &mut Io) -> Vec<u8> {
    let r = io.read_packet().unwrap();
    io.payload(r).to_vec()
}

/// A Handshake v10 offering `caps` and `plugin`.
fn greeting(caps: u32, plugin: &str, nonce: &[u8; 20]) -> Vec<u8> {
    mariadb_greeting(caps, 0, plugin, nonce)
}

/// A Handshake v10 offering `caps`, MariaDB's extended capabilities
/// `ext` (read only when `caps` lacks CLIENT_LONG_PASSWORD), and `plugin`.
fn mariadb_greeting(caps: u32, ext: u32, plugin: &str, nonce: &[u8; 20]) -> Vec<u8> {
    let mut p = vec![10];
    p.extend_from_slice(b"8.0.36-fake\0");
    p.extend_from_slice(&1u32.to_le_bytes());
    p.extend_from_slice(&nonce[..8]);
    p.push(0);
    p.extend_from_slice(&(caps as u16).to_le_bytes());
    p.push(45);
    p.extend_from_slice(&2u16.to_le_bytes());
    p.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
    p.push(21);
    p.extend_from_slice(&[0; 6]);
    p.extend_from_slice(&ext.to_le_bytes());
    p.extend_from_slice(&nonce[8..]);
    p.push(0);
    p.extend_from_slice(plugin.as_bytes());
    p.push(0);
    p
}

/// The auth data and plugin name of a HandshakeResponse41 (with
/// length-encoded auth data and a database).
fn login_fields(p: &[u8]) -> (u32, Vec<u8>, String) {
    let caps = u32_at(p, 0);
    let mut pos = 32 + p[32..].iter().position(|&b| b == 0).unwrap() + 1;
    let auth = lenenc_str(p, &mut pos).unwrap().unwrap().to_vec();
    pos += p[pos..].iter().position(|&b| b == 0).unwrap() + 1;
    let end = pos + p[pos..].iter().position(|&b| b == 0).unwrap();
    (
        caps,
        auth,
        String::from_utf8_lossy(&p[pos..end]).into_owned(),
    )
}

const EOF: &[u8] = &[0xFE, 0, 0, 2, 0];
const OK: &[u8] = &[0, 0, 0, 2, 0, 0, 0];

/// Without DEPRECATE_EOF (old servers), through an auth switch to
/// caching_sha2_password and its full authentication over a socket:
/// what MariaDB 10.11 cannot exercise.
#[test]
fn speaks_to_a_server_without_deprecate_eof_and_with_caching_sha2() {
    // The server offers CLIENT_FOUND_ROWS, which the client must decline.
    let caps = (auth::WANTED | 1 << 1) & !CLIENT_DEPRECATE_EOF;
    let (addr, server, _dir) = fake_server(false, move |io| {
        let n1 = [1u8; 20];
        put(io, &greeting(caps, CACHING_SHA2, &n1));
        let (client_caps, data, plugin) = login_fields(&get(io));
        assert_eq!(client_caps & CLIENT_DEPRECATE_EOF, 0);
        assert_eq!(client_caps & 1 << 1, 0, "CLIENT_FOUND_ROWS");
        assert_eq!(plugin, CACHING_SHA2);
        assert_eq!(data, auth::sha2_scramble(b"pw", &n1));
        // Switch plugins (same one, new nonce), then ask for the
        // password itself.
        let n2 = [2u8; 20];
        let mut switch = vec![0xFE];
        switch.extend_from_slice(b"caching_sha2_password\0");
        switch.extend_from_slice(&n2);
        switch.push(0);
        put(io, &switch);
        assert_eq!(get(io), auth::sha2_scramble(b"pw", &n2));
        put(io, &[1, 4]);
        assert_eq!(get(io), b"pw\0");
        put(io, OK);

        // A text result set: 2 columns, 3 rows.
        assert_eq!(get(io), b"\x03SELECT a, b FROM t");
        for p in [
            &[2][..],
            b"def-a",
            b"def-b",
            EOF,
            b"\x011\xFB",
            b"\x012\x01x",
            b"\x013\x00",
            EOF,
        ] {
            put(io, p);
        }
        assert_eq!(get(io), b"\x03UPDATE t SET a = 1");
        put(io, &[0, 5, 0, 2, 0, 0, 0]);

        // Prepare (1 parameter, 1 column) and execute: 2 binary rows.
        assert_eq!(get(io), b"\x16SELECT ?");
        for p in [
            &[0, 7, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0][..],
            b"param",
            EOF,
            &coldef(0x01),
            EOF,
        ] {
            put(io, p);
        }
        let mut exec = vec![0x17, 7, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, TYPE_LONGLONG, 0];
        exec.extend_from_slice(&5i64.to_le_bytes());
        assert_eq!(get(io), exec);
        for p in [&[1][..], &coldef(0x01), EOF, &[0, 0, 1], &[0, 0, 2], EOF] {
            put(io, p);
        }
        assert_eq!(get(io), [COM_QUIT]);
    });
    let mut c = MyConnection::open(&addr).unwrap();
    assert_eq!(c.caps & CLIENT_DEPRECATE_EOF, 0);
    let o = c.execute_sql("SELECT a, b FROM t").unwrap();
    assert_eq!((o.result_set, o.rows), (true, 3));
    assert_eq!(c.execute_sql("UPDATE t SET a = 1").unwrap().affected, 5);
    c.prepare_all(&["SELECT ?".to_string()]).unwrap();
    let o = c.execute(0, &[Value::Int(5)]).unwrap();
    assert_eq!((o.result_set, o.rows), (true, 2));
    drop(c);
    server.join().unwrap();
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

/// MariaDB 10.6+: result-set metadata skipped while unchanged
/// (CACHE_METADATA), parameter types sent only when they change.
#[test]
fn skips_cached_metadata_and_unchanged_parameter_types() {
    let caps = auth::WANTED & !auth::CLIENT_LONG_PASSWORD;
    let ext = auth::MARIADB_CLIENT_CACHE_METADATA | auth::MARIADB_CLIENT_STMT_BULK_OPERATIONS;
    let (addr, server, _dir) = fake_server(false, move |io| {
        put(io, &mariadb_greeting(caps, ext, NATIVE, &[5; 20]));
        let login = get(io);
        // MariaDB's extended capabilities: the last 4 of the 23 filler
        // bytes after capabilities, max packet size and charset.
        assert_eq!(u32_at(&login, 28), ext);
        put(io, OK);
        const DONE: &[u8] = &[0xFE, 0, 0, 2, 0, 0, 0];

        // Prepare: 1 parameter, 1 column (DEPRECATE_EOF: no EOFs).
        assert_eq!(get(io), b"\x16SELECT ?");
        for p in [
            &[0, 7, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0][..],
            b"param",
            &coldef(0x01),
        ] {
            put(io, p);
        }
        let head = [0x17, 7, 0, 0, 0, 0, 1, 0, 0, 0];
        // First execution: types follow; the server sends metadata.
        let mut exec = head.to_vec();
        exec.extend_from_slice(&[0, 1, TYPE_LONGLONG, 0]);
        exec.extend_from_slice(&5i64.to_le_bytes());
        assert_eq!(get(io), exec);
        for p in [&[1, 1][..], &coldef(0x01), &[0, 0, 1], DONE] {
            put(io, p);
        }
        // Same type: no types, and the server skips the metadata.
        let mut exec = head.to_vec();
        exec.extend_from_slice(&[0, 0]);
        exec.extend_from_slice(&6i64.to_le_bytes());
        assert_eq!(get(io), exec);
        for p in [&[1, 0][..], &[0, 0, 0xFF], &[0, 0, 2], DONE] {
            put(io, p);
        }
        // NULL: the null bitmap, and types again.
        let mut exec = head.to_vec();
        exec.extend_from_slice(&[1, 1, TYPE_NULL, 0]);
        assert_eq!(get(io), exec);
        for p in [&[1, 0][..], &[0, 2], DONE] {
            put(io, p);
        }
        assert_eq!(get(io), [COM_QUIT]);
    });
    let mut c = MyConnection::open(&addr).unwrap();
    assert_eq!(c.ext_caps, ext);
    c.prepare_all(&["SELECT ?".to_string()]).unwrap();
    let rows = |c: &mut MyConnection, v: Value| {
        let o = c.execute(0, &[v]).unwrap();
        assert!(o.result_set);
        o.rows
    };
    assert_eq!(rows(&mut c, Value::Int(5)), 1);
    // Without metadata the rows decode by the prepare's column types (a
    // signed TINYINT here).
    let mut f = Fetch::new(&[crate::driver::Col::Int], 5);
    let o = c.execute_fetch(0, &[Value::Int(6)], &mut f).unwrap();
    assert_eq!((o.result_set, o.rows), (true, 2));
    assert_eq!((f.int(0, 0), f.int(1, 0)), (Some(-1), Some(2)));
    assert_eq!(rows(&mut c, Value::Null), 1);
    drop(c);
    server.join().unwrap();
}

#[test]
fn full_caching_sha2_authentication_over_tcp_fails_with_advice() {
    let (addr, server, _dir) = fake_server(true, |io| {
        put(io, &greeting(auth::WANTED, CACHING_SHA2, &[3; 20]));
        get(io);
        put(io, &[1, 4]);
        // The client hangs up instead of sending the password in clear.
        assert!(io.read_packet().is_err());
    });
    let e = MyConnection::open(&addr).err().unwrap();
    assert!(e.message.contains("caching_sha2_password"), "{e}");
    assert!(e.message.contains("unix socket"), "{e}");
    assert!(e.message.contains("ssl-mode=REQUIRED"), "{e}");
    assert!(e.message.contains("user 'bench' at 127.0.0.1:"), "{e}");
    server.join().unwrap();
}

#[test]
fn unknown_plugins_are_named() {
    let (addr, server, _dir) = fake_server(false, |io| {
        put(io, &greeting(auth::WANTED, "auth_gssapi_client", &[4; 20]));
        let (_, data, plugin) = login_fields(&get(io));
        // The client answers as mysql_native_password instead.
        assert_eq!(plugin, NATIVE);
        assert_eq!(data, auth::native_scramble(b"pw", &[4; 20]));
        put(io, b"\xFEauth_gssapi_client\0abcdefghijklmnopqrst\0");
        let _ = io.read_packet();
    });
    let e = MyConnection::open(&addr).err().unwrap();
    assert!(e.message.contains("'auth_gssapi_client'"), "{e}");
    server.join().unwrap();
}

/// caching_sha2_password's full exchange over plain TCP with
/// `get-server-public-key=1`: the client asks for the key (2), the server
/// sends its PEM, the client answers with the password encrypted to it —
/// what a MySQL 8.4 / 9.x server does, which no server here speaks.
#[test]
fn full_caching_sha2_authentication_by_the_servers_rsa_key() {
    let nonce = [7u8; 20];
    let (mut addr, server, _dir) = fake_server(true, move |io| {
        put(io, &greeting(auth::WANTED, CACHING_SHA2, &nonce));
        let (_, data, _) = login_fields(&get(io));
        assert_eq!(data, auth::sha2_scramble(b"pw", &nonce));
        put(io, &[1, 4]);
        assert_eq!(get(io), [2], "asks for the key");
        let mut key = vec![1];
        key.extend_from_slice(rsa_key::tests::public_pem().as_bytes());
        put(io, &key);
        let sent = get(io);
        assert_eq!(sent.len(), 256, "one RSA-2048 block");
        assert_eq!(rsa_key::tests::decrypt(&sent, &nonce), b"pw\0");
        put(io, OK);
        assert_eq!(get(io), [COM_QUIT]);
    });
    addr.tls.get_server_public_key = true;
    drop(MyConnection::open(&addr).unwrap());
    server.join().unwrap();
}

/// The same with the key from a file (`server-public-key-path`): no
/// request, the encrypted password at once; a file that holds no key is
/// named in the message.
#[test]
fn full_caching_sha2_authentication_by_a_key_file() {
    let nonce = [9u8; 20];
    let (mut addr, server, dir) = fake_server(true, move |io| {
        put(io, &greeting(auth::WANTED, CACHING_SHA2, &nonce));
        get(io);
        put(io, &[1, 4]);
        assert_eq!(rsa_key::tests::decrypt(&get(io), &nonce), b"pw\0");
        put(io, OK);
        assert_eq!(get(io), [COM_QUIT]);
    });
    let file = dir.path().join("public_key.pem");
    std::fs::write(&file, rsa_key::tests::public_pem()).unwrap();
    addr.tls.server_public_key = Some(file.clone());
    drop(MyConnection::open(&addr).unwrap());
    server.join().unwrap();

    let (mut addr, server, dir) = fake_server(true, move |io| {
        put(io, &greeting(auth::WANTED, CACHING_SHA2, &[1; 20]));
        get(io);
        put(io, &[1, 4]);
        assert!(io.read_packet().is_err(), "nothing sent");
    });
    let file = dir.path().join("not_a_key.pem");
    std::fs::write(&file, "hello").unwrap();
    addr.tls.server_public_key = Some(file);
    let e = MyConnection::open(&addr).err().unwrap();
    assert!(e.message.contains("server-public-key-path="), "{e}");
    assert!(e.message.contains("not an RSA public key in PEM"), "{e}");
    server.join().unwrap();
}
