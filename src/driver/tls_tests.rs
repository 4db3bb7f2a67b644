//! TLS options as both engines' clients spell them, and the handshake
//! against a rustls server on loopback with certificates made here: what
//! each mode checks, and what a wrong name, an expired certificate and a
//! key that is not the certificate's say.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};

use super::*;

#[test]
fn libpq_and_mysql_spellings_and_environment() {
    let mut o = TlsOptions::default();
    assert_eq!(o.mode, TlsMode::Prefer, "libpq's and mysql's default");
    assert!(o.set_pg("sslmode", "verify-full").unwrap());
    assert!(o.set_pg("sslrootcert", "/ca.pem").unwrap());
    assert!(!o.set_pg("socket", "/x").unwrap());
    assert_eq!(
        (o.mode, o.root_cert.clone()),
        (TlsMode::VerifyFull, Some("/ca.pem".into()))
    );
    assert!(o.set_pg("sslrootcert", "system").unwrap());
    assert_eq!(o.root_cert, None, "the system's store");
    assert!(o
        .set_pg("sslmode", "verify_full")
        .unwrap_err()
        .contains("verify-full"));
    let mut m = TlsOptions::default();
    assert!(m.set_mysql("ssl_mode", "verify_identity").unwrap());
    assert!(m.set_mysql("ssl-ca", "/ca.pem").unwrap());
    assert_eq!(m.mode, TlsMode::VerifyFull);
    assert!(m
        .set_mysql("ssl-mode", "ON")
        .unwrap_err()
        .contains("VERIFY_IDENTITY"));
    // The mysql client's RSA key options ride along (option files too).
    assert!(m.set_mysql("get_server_public_key", "1").unwrap());
    assert!(m.set_mysql("server-public-key-path", "/k.pem").unwrap());
    assert!(m.get_server_public_key);
    assert_eq!(m.server_public_key.as_deref(), Some(Path::new("/k.pem")));
    assert!(m
        .set_mysql("get-server-public-key", "maybe")
        .unwrap_err()
        .contains("expected 1 or 0"));
    assert!(!TlsOptions::default()
        .set_pg("get-server-public-key", "1")
        .unwrap());
    let env = |k: &str| match k {
        "PGSSLMODE" => Some("require".to_string()),
        "PGCHANNELBINDING" => Some("require".to_string()),
        _ => None,
    };
    let e = TlsOptions::pg_env(&env).unwrap();
    assert_eq!(
        (e.mode, e.channel_binding),
        (TlsMode::Require, ChannelBinding::Require)
    );
    let bad = |k: &str| (k == "PGSSLMODE").then(|| "sometimes".to_string());
    assert!(TlsOptions::pg_env(&bad)
        .unwrap_err()
        .starts_with("PGSSLMODE: sslmode=sometimes"));
}

#[test]
fn inconsistent_options_are_refused_before_connecting() {
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("c.pem");
    std::fs::write(&file, "x").unwrap();
    let check = |f: &dyn Fn(&mut TlsOptions)| {
        let mut o = TlsOptions::default();
        f(&mut o);
        o.check()
    };
    assert!(check(&|o| o.cert = Some(file.clone()))
        .unwrap_err()
        .contains("sslkey"));
    assert!(check(&|o| o.direct = true)
        .unwrap_err()
        .contains("sslnegotiation=direct needs"));
    assert!(check(&|o| {
        o.mode = TlsMode::Disable;
        o.channel_binding = ChannelBinding::Require;
    })
    .unwrap_err()
    .contains("channel_binding=require needs TLS"));
    let missing = check(&|o| o.root_cert = Some(t.path().join("none.pem"))).unwrap_err();
    assert!(missing.contains("none.pem: no such file"), "{missing}");
    assert!(check(&|o| {
        o.cert = Some(file.clone());
        o.key = Some(file.clone());
    })
    .is_ok());
}

/// A CA, and a server certificate it signed for `names`.
struct Pki {
    dir: tempfile::TempDir,
    ca: PathBuf,
    chain: Vec<rustls::pki_types::CertificateDer<'static>>,
    key: rustls::pki_types::PrivateKeyDer<'static>,
}

fn pki(names: &[&str], expired: bool) -> Pki {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let mut params =
        CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
    if expired {
        params.not_before = rcgen::date_time_ymd(2020, 1, 1);
        params.not_after = rcgen::date_time_ymd(2021, 1, 1);
    }
    let cert = params.signed_by(&key, &Issuer::new(ca, ca_key)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca_path = dir.path().join("ca.pem");
    std::fs::write(&ca_path, ca_cert.pem()).unwrap();
    Pki {
        ca: ca_path,
        chain: vec![cert.der().clone()],
        key: rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        dir,
    }
}

/// A TLS echo server for one connection; its port.
fn serve(p: &Pki) -> u16 {
    let config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(p.chain.clone(), p.key.clone_key())
        .unwrap();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let (sock, _) = l.accept().unwrap();
        let conn = rustls::ServerConnection::new(Arc::new(config)).unwrap();
        let mut s = rustls::StreamOwned::new(conn, sock);
        let mut buf = [0u8; 5];
        // A client that refused the certificate ends it here.
        if s.read_exact(&mut buf).is_ok() {
            let _ = s.write_all(&buf);
            let _ = s.flush();
        }
    });
    port
}

/// Connects to a fresh echo server as `host` and says hello.
fn hello(p: &Pki, host: &str, opts: &TlsOptions) -> Result<Vec<u8>, String> {
    let port = serve(p);
    let sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut s = connect(sock, host, opts, None)?;
    assert!(
        describe(&s).starts_with("TLSv1.3 TLS13_"),
        "{}",
        describe(&s)
    );
    s.write_all(b"hello").unwrap();
    let mut back = vec![0u8; 5];
    s.read_exact(&mut back).unwrap();
    Ok(back)
}

fn opts(mode: TlsMode, ca: Option<&PathBuf>) -> TlsOptions {
    TlsOptions {
        mode,
        root_cert: ca.cloned(),
        ..TlsOptions::default()
    }
}

#[test]
fn verify_full_checks_the_name_verify_ca_the_signer_and_require_nothing() {
    let p = pki(&["db.example"], false);
    let full = opts(TlsMode::VerifyFull, Some(&p.ca));
    assert_eq!(hello(&p, "db.example", &full).unwrap(), b"hello");
    let e = hello(&p, "127.0.0.1", &full).unwrap_err();
    assert!(e.contains("not valid for the host"), "{e}");
    assert!(e.contains("verify-ca"), "the fix is named: {e}");
    let ca = opts(TlsMode::VerifyCa, Some(&p.ca));
    assert_eq!(hello(&p, "127.0.0.1", &ca).unwrap(), b"hello");
    let other = pki(&["db.example"], false);
    let e = hello(
        &p,
        "db.example",
        &opts(TlsMode::VerifyFull, Some(&other.ca)),
    )
    .unwrap_err();
    assert!(
        e.contains(&format!("not signed by the CAs in {}", other.ca.display())),
        "{e}"
    );
    assert_eq!(
        hello(&p, "127.0.0.1", &opts(TlsMode::Require, None)).unwrap(),
        b"hello"
    );
    drop(p.dir);
}

#[test]
fn an_expired_certificate_fails_a_verifying_mode_only() {
    let p = pki(&["localhost"], true);
    let e = hello(&p, "localhost", &opts(TlsMode::VerifyCa, Some(&p.ca))).unwrap_err();
    assert!(e.contains("has expired"), "{e}");
    assert!(hello(&p, "localhost", &opts(TlsMode::Require, None)).is_ok());
}

#[test]
fn a_client_key_that_is_not_the_certificates_is_named() {
    let p = pki(&["localhost"], false);
    let other = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["client".to_string()])
        .unwrap()
        .self_signed(&KeyPair::generate().unwrap())
        .unwrap();
    let cert_file = p.dir.path().join("client.crt");
    let key_file = p.dir.path().join("client.key");
    std::fs::write(&cert_file, cert.pem()).unwrap();
    std::fs::write(&key_file, other.serialize_pem()).unwrap();
    let o = TlsOptions {
        cert: Some(cert_file),
        key: Some(key_file.clone()),
        ..opts(TlsMode::Require, None)
    };
    let e = client_config(&o, None).unwrap_err();
    assert!(
        e.contains("give the key that belongs to the certificate"),
        "{e}"
    );
    assert!(e.contains("client.key"), "{e}");
    std::fs::write(&key_file, "not a key").unwrap();
    let e = client_config(&o, None).unwrap_err();
    assert!(e.contains("not a PEM private key"), "{e}");
    // No key material in either message.
    assert!(!e.contains("BEGIN"));
}

#[test]
fn a_non_blocking_stream_says_would_block_only_when_drained() {
    let p = pki(&["localhost"], false);
    let port = serve(&p);
    let sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut s = connect(sock, "localhost", &opts(TlsMode::Require, None), None).unwrap();
    s.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 16];
    let e = s.read(&mut buf).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock);
    assert_eq!(s.write(b"hel").unwrap(), 3);
    assert_eq!(s.write(b"lo").unwrap(), 2);
    while !s.flush_pending().unwrap() {}
    let mut got = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while got.len() < 5 && std::time::Instant::now() < deadline {
        match s.read(&mut buf) {
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(1))
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(got, b"hello");
}
