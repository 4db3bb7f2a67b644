//! TLS against real servers the test starts with `dbsweep server start
//! --tls` (a throw-away CA and certificate in the server's directory): every
//! sslmode / ssl-mode that applies, SCRAM channel binding, a workload on
//! threads and on event loops over TLS, and what a wrong CA, a server
//! without TLS and a direct negotiation an old server cannot answer say.

mod util;

use std::io::{Read, Write};
use std::net::TcpListener;

use dbsweep::driver::{self, Target};
use util::{dbsweep, read_json, Dir, Server};

/// `url` with its query replaced by `query`.
fn with_query(url: &str, query: &str) -> String {
    let base = url.split('?').next().unwrap();
    if query.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{query}")
    }
}

/// The CA file the server's URL names (URL-encoded, as in the URL).
fn ca_param(url: &str) -> String {
    let query = url.split_once('?').expect("a TLS URL has a query").1;
    query
        .split('&')
        .find_map(|p| {
            p.split_once('=')
                .filter(|(k, _)| k.contains("rootcert") || *k == "ssl-ca")
        })
        .map(|(_, v)| v.to_string())
        .expect("the URL names its CA")
}

/// The connection's TLS as its record names it ("off" or "TLSv1.3 …"), and
/// the answer to `sql`.
fn connect(url: &str, setting: &str, sql: &str) -> Result<(String, String), String> {
    let t = Target::parse(url)?;
    let mut c = driver::connect(&t).map_err(|e| e.message)?;
    let info = c.server_info().map_err(|e| e.message)?;
    let tls = info
        .settings
        .iter()
        .find(|(k, _)| k == setting)
        .map(|(_, v)| v.clone())
        .expect("the TLS setting is recorded");
    let rows = c.query_text(sql).map_err(|e| e.message)?;
    let answer = rows
        .first()
        .and_then(|r| r.last().cloned().flatten())
        .unwrap_or_default();
    Ok((tls, answer))
}

/// A workload over `url` on threads and on one event loop: both run and
/// record TLS.
fn run_both_ways(s: &Server, setting: &str) {
    let dir = Dir::new();
    let db = ["--db", s.url.as_str(), "--table-size", "200"];
    let mut prepare = vec!["prepare", "oltp_point_select"];
    prepare.extend_from_slice(&db);
    dbsweep(&prepare).ok();
    for (i, extra) in [&[][..], &["--client-threads", "1"][..]].iter().enumerate() {
        let json = dir.join(&format!("run{i}.json")).display().to_string();
        let mut args = vec!["run", "oltp_point_select", "--threads", "4", "--time", "2"];
        args.extend_from_slice(&db);
        args.extend_from_slice(&["--json", json.as_str()]);
        args.extend_from_slice(extra);
        dbsweep(&args).ok();
        let doc = read_json(std::path::Path::new(&json));
        let r = &doc["result"];
        assert_eq!(r["fatal_error"], serde_json::Value::Null, "{extra:?}");
        assert!(r["transactions"].as_u64().unwrap() > 100, "{extra:?}: {r}");
        let errors = util::record::errors_total(r);
        assert_eq!(errors, 0, "{extra:?}: {r}");
        let tls = doc["target"]["settings"][setting].as_str().unwrap();
        assert!(tls.starts_with("TLSv1."), "{extra:?}: {tls}");
    }
}

#[test]
fn postgres_over_tls_in_every_sslmode_with_channel_binding() {
    let s = Server::start("postgres", &["--tls"]);
    assert!(
        s.url.contains("sslmode=verify-full&sslrootcert="),
        "{}",
        s.url
    );
    let ca = ca_param(&s.url);
    let sql = "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()";
    let (tls, ssl) = connect(&s.url, "dbsweep.tls", sql).unwrap();
    assert!(tls.starts_with("TLSv1.3 TLS13_"), "{tls}");
    assert_eq!(ssl, "t");
    for (query, encrypted) in [
        ("sslmode=disable", false),
        // allow: without TLS first, and the server takes it.
        ("sslmode=allow", false),
        ("", true),
        ("sslmode=prefer", true),
        ("sslmode=require", true),
        (&format!("sslmode=verify-ca&sslrootcert={ca}"), true),
        (
            &format!("sslmode=verify-full&sslrootcert={ca}&channel_binding=require"),
            true,
        ),
    ] {
        let (tls, ssl) = connect(&with_query(&s.url, query), "dbsweep.tls", sql).unwrap();
        assert_eq!(ssl, if encrypted { "t" } else { "f" }, "{query}");
        assert_eq!(tls == "off", !encrypted, "{query}: {tls}");
    }
    // The certificate names localhost too.
    let by_name = s.url.replace("127.0.0.1", "localhost");
    assert_eq!(connect(&by_name, "dbsweep.tls", sql).unwrap().1, "t");

    // A CA that did not sign the certificate.
    let other = Dir::new();
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let other_ca = other.join("other-ca.crt");
    std::fs::write(&other_ca, params.self_signed(&key).unwrap().pem()).unwrap();
    let wrong = with_query(
        &s.url,
        &format!("sslmode=verify-full&sslrootcert={}", other_ca.display()),
    );
    let e = connect(&wrong, "dbsweep.tls", sql).unwrap_err();
    assert!(e.contains("not signed by the CAs in"), "{e}");
    assert!(!e.contains("sbtest:"), "no password in: {e}");

    // Direct negotiation: only PostgreSQL 17 and later answer it.
    let direct = with_query(
        &s.url,
        &format!("sslmode=verify-full&sslrootcert={ca}&sslnegotiation=direct"),
    );
    let version: u32 = connect(&s.url, "dbsweep.tls", "SHOW server_version_num")
        .unwrap()
        .1
        .parse()
        .unwrap();
    match connect(&direct, "dbsweep.tls", sql) {
        Ok((_, ssl)) => assert!(version >= 170000 && ssl == "t"),
        Err(e) => assert!(version < 170000 && e.contains("PostgreSQL 17"), "{e}"),
    }
    // The command line: exit status 2, one message.
    let r = dbsweep(&["run", "oltp_point_select", "--db", &wrong, "--time", "1"]);
    r.expect_status(2);
    assert!(r.stderr.contains("sslrootcert"), "{}", r.stderr);

    run_both_ways(&s, "dbsweep.tls");
}

#[test]
fn mariadb_over_tls_in_every_ssl_mode() {
    let s = Server::start("mariadb", &["--tls"]);
    assert!(
        s.url.contains("ssl-mode=VERIFY_IDENTITY&ssl-ca="),
        "{}",
        s.url
    );
    let ca = ca_param(&s.url);
    let client = ca.replace("ca.crt", "client");
    let sql = "SHOW SESSION STATUS LIKE 'Ssl_version'";
    let (tls, version) = connect(&s.url, "tls", sql).unwrap();
    assert!(tls.starts_with("TLSv1."), "{tls}");
    assert!(
        tls.starts_with(&version),
        "{tls} against the server's {version}"
    );
    for (query, encrypted) in [
        ("ssl-mode=DISABLED", false),
        ("", true),
        ("ssl-mode=PREFERRED", true),
        ("ssl_mode=required", true),
        (&format!("ssl-mode=VERIFY_CA&ssl-ca={ca}"), true),
        // The client certificate the server's CA signed (MariaDB checks it).
        (
            &format!(
                "ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}&ssl-cert={client}.crt&ssl-key={client}.key"
            ),
            true,
        ),
    ] {
        let (tls, version) = connect(&with_query(&s.url, query), "tls", sql).unwrap();
        assert_eq!(version.is_empty(), !encrypted, "{query}: {version}");
        assert_eq!(tls == "off", !encrypted, "{query}: {tls}");
    }
    run_both_ways(&s, "tls");

    // Key material never leaves: a run with a client key, and one whose
    // key is not its certificate's, print and record its path only.
    let dir = Dir::new();
    let key_path = url::form_urlencoded::parse(format!("k={client}.key").as_bytes())
        .next()
        .unwrap()
        .1
        .into_owned();
    let key = std::fs::read_to_string(&key_path).unwrap();
    let body: Vec<&str> = key.lines().filter(|l| !l.starts_with("-----")).collect();
    let json = dir.join("key.json").display().to_string();
    let with_key = with_query(
        &s.url,
        &format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}&ssl-cert={client}.crt&ssl-key={client}.key"),
    );
    let ok = dbsweep(&[
        "run",
        "oltp_point_select",
        "--db",
        &with_key,
        "--table-size",
        "200",
        "--time",
        "1",
        "--json",
        &json,
    ]);
    ok.ok();
    let wrong = with_query(
        &s.url,
        &format!("ssl-mode=REQUIRED&ssl-cert={ca}&ssl-key={client}.key"),
    );
    let bad = dbsweep(&["run", "oltp_point_select", "--db", &wrong, "--time", "1"]);
    bad.expect_status(2);
    assert!(
        bad.stderr
            .contains("give the key that belongs to the certificate"),
        "{}",
        bad.stderr
    );
    let record = std::fs::read_to_string(&json).unwrap();
    for text in [&ok.stdout, &ok.stderr, &bad.stdout, &bad.stderr, &record] {
        for line in &body {
            assert!(!text.contains(line), "key material in output: {text}");
        }
        assert!(!text.contains("PRIVATE KEY"), "{text}");
    }
}

/// A server that answers an SSLRequest with 'N' (no TLS here).
#[test]
fn sslmode_require_against_a_server_without_tls_says_so() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut c, _) = l.accept().unwrap();
        let mut req = [0u8; 8];
        c.read_exact(&mut req).unwrap();
        assert_eq!(&req[4..], &80877103u32.to_be_bytes());
        c.write_all(b"N").unwrap();
    });
    let url = format!("postgres://u:p@127.0.0.1:{port}/d?sslmode=require");
    let e = connect(&url, "dbsweep.tls", "SELECT 1").unwrap_err();
    assert!(
        e.contains("does not accept TLS connections (sslmode=require)"),
        "{e}"
    );
    server.join().unwrap();
}

/// A MariaDB greeting without CLIENT_SSL.
#[test]
fn ssl_mode_required_against_a_server_without_tls_says_so() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut c, _) = l.accept().unwrap();
        // Handshake v10: capabilities with 4.1 and secure connection, no SSL.
        let caps: u32 = (1 << 9) | (1 << 15) | (1 << 19) | 1;
        let mut p = vec![10];
        p.extend_from_slice(b"10.11.0-MariaDB\0");
        p.extend_from_slice(&7u32.to_le_bytes());
        p.extend_from_slice(b"abcdefgh\0");
        p.extend_from_slice(&(caps as u16).to_le_bytes());
        p.push(45);
        p.extend_from_slice(&2u16.to_le_bytes());
        p.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
        p.push(21);
        p.extend_from_slice(&[0; 10]);
        p.extend_from_slice(b"ijklmnopqrst\0");
        p.extend_from_slice(b"mysql_native_password\0");
        let mut packet = (p.len() as u32).to_le_bytes()[..3].to_vec();
        packet.push(0);
        packet.extend_from_slice(&p);
        c.write_all(&packet).unwrap();
        let mut rest = Vec::new();
        let _ = c.read_to_end(&mut rest);
    });
    let url = format!("mysql://u:p@127.0.0.1:{port}/d?ssl-mode=REQUIRED");
    let e = connect(&url, "tls", "SELECT 1").unwrap_err();
    assert!(e.contains("does not offer TLS (ssl-mode=REQUIRED)"), "{e}");
    server.join().unwrap();
}

/// A study's managed target with `tls = true`, and a variant that turns
/// the server's TLS off with PostgreSQL's own setting: each point's record
/// names what its connections ran.
#[test]
fn tls_against_plain_is_a_variant_of_a_tls_target() {
    let dir = Dir::new();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        dir.join("tls.toml"),
        r#"
out = "out"

[[target]]
name = "pg"
server = "postgres"
tls = true

[[variant]]
name = "plain"
settings = { ssl = "off" }

[[workload]]
name = "oltp_point_select"
options = { table-size = 200 }
clients = [2]
time = 0.5
"#,
    )
    .unwrap();
    util::dbsweep_in(dir.path(), &["study", "tls.toml"]).ok();
    let db = rusqlite::Connection::open(dir.join("out/results.db")).unwrap();
    let mut q = db
        .prepare(
            "SELECT p.variant, s.value FROM point p JOIN point_setting s ON s.point_id = p.id \
             WHERE s.name = 'dbsweep.tls' ORDER BY p.variant",
        )
        .unwrap();
    let rows: Vec<(String, String)> = q
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0].0, "base");
    assert!(rows[0].1.starts_with("TLSv1.3"), "{rows:?}");
    assert_eq!(rows[1], ("plain".to_string(), "off".to_string()));
}
