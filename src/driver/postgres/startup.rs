//! Opening a session: the socket (TCP or unix domain), the StartupMessage,
//! authentication (trust, cleartext password, MD5, SCRAM-SHA-256), and the
//! parameters the server reports before its first ReadyForQuery.
//!
//! Every failure names where and as whom we tried to connect, and carries
//! the server's own message or the operating system's error.

use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use bytes::{BufMut, BytesMut};
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, ScramSha256, SCRAM_SHA_256};
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;

use super::response::{classify, parse_error};
use super::wire::{Stream, Wire};
use crate::driver::tls::{self, ChannelBinding as Binding, TlsMode};
use crate::driver::{DbError, DbResult, ErrorKind, ServerAddr};

/// How long to wait for a TCP connection to be accepted.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the server may take over each step of the handshake: a server
/// that accepts connections but never answers must not hang the caller.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);

/// Where the server listens, as opened: what a CancelRequest must reach.
#[derive(Debug, Clone)]
pub(super) enum Place {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

impl Place {
    /// Opens a new connection to the same place (for CancelRequest).
    pub(super) fn open(&self, timeout: Duration) -> std::io::Result<Stream> {
        Ok(match self {
            Place::Tcp(addr) => {
                let s = TcpStream::connect_timeout(addr, timeout)?;
                s.set_nodelay(true)?;
                Stream::Tcp(s)
            }
            Place::Unix(path) => Stream::Unix(UnixStream::connect(path)?),
        })
    }
}

/// A session, ready for its first command.
pub(super) struct Session {
    pub wire: Wire,
    pub place: Place,
    /// BackendKeyData: the backend's process id and secret, for CancelRequest.
    pub key: Option<(i32, i32)>,
    /// The `server_version` parameter reported at startup.
    pub server_version: String,
}

/// `at HOST:PORT` or `at socket PATH`, then user and database: the start of
/// every connection error message.
fn target(a: &ServerAddr, socket: Option<&PathBuf>) -> String {
    let place = match socket {
        Some(p) => format!("socket {}", p.display()),
        None => format!("{}:{}", a.host, a.port),
    };
    format!(
        "cannot connect to PostgreSQL at {place} as user '{}', database '{}'",
        a.user, a.database
    )
}

/// Connects the socket: TCP_NODELAY (statements are single small writes
/// waiting for their answer; Nagle would hold them back), every resolved
/// address tried in turn.
fn open(a: &ServerAddr, socket: Option<&PathBuf>) -> std::io::Result<(Stream, Place)> {
    if let Some(path) = socket {
        let s = UnixStream::connect(path)?;
        return Ok((Stream::Unix(s), Place::Unix(path.clone())));
    }
    let mut last = None;
    for addr in (a.host.as_str(), a.port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
            Ok(s) => {
                s.set_nodelay(true)?;
                return Ok((Stream::Tcp(s), Place::Tcp(addr)));
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("host name '{}' resolves to no address", a.host),
        )
    }))
}

/// Opens a session to `a`, with TLS as its options say (over TCP only:
/// never over a unix socket, as libpq).
pub(super) fn connect(a: &ServerAddr) -> DbResult<Session> {
    let socket = a.postgres_socket();
    let mode = if socket.is_some() {
        TlsMode::Disable
    } else {
        a.tls.mode
    };
    match mode {
        TlsMode::Disable => attempt(a, socket, Tls::Off),
        // Without first; with TLS when the server refuses that session.
        TlsMode::Allow => match attempt(a, socket.clone(), Tls::Off) {
            Err(e) if !e.code.is_empty() => attempt(a, socket, Tls::Must),
            r => r,
        },
        TlsMode::Prefer => attempt(a, socket, Tls::Try),
        _ => attempt(a, socket, Tls::Must),
    }
}

/// How one attempt treats TLS.
#[derive(Clone, Copy, PartialEq)]
enum Tls {
    Off,
    /// Asked for; without it when the server has none or the handshake
    /// fails (then on a new connection, as libpq).
    Try,
    Must,
}

/// One connection attempt.
fn attempt(a: &ServerAddr, socket: Option<PathBuf>, tls: Tls) -> DbResult<Session> {
    let target = target(a, socket.as_ref());
    let (stream, place) = open(a, socket.as_ref()).map_err(|e| {
        DbError::new(
            ErrorKind::ConnectionLost,
            "",
            format!("{target}: {e}; is the server running and listening there?"),
        )
    })?;
    stream
        .set_read_timeout(Some(HANDSHAKE_TIMEOUT))
        .and_then(|_| stream.set_write_timeout(Some(HANDSHAKE_TIMEOUT)))
        .map_err(|e| DbError::new(ErrorKind::ConnectionLost, "", format!("{target}: {e}")))?;
    let mut wire = Wire::new(stream);
    if tls != Tls::Off {
        match secure(&mut wire, a) {
            Ok(true) => {}
            Ok(false) if tls == Tls::Try => {}
            Ok(false) => {
                return Err(DbError::new(
                    ErrorKind::Other,
                    "",
                    format!(
                        "{target}: the server does not accept TLS connections (sslmode={}): turn ssl on in its postgresql.conf, or use sslmode=prefer",
                        a.tls.mode.pg_name()
                    ),
                ))
            }
            Err(TlsFailure::Handshake(_)) if tls == Tls::Try => {
                return attempt(a, socket, Tls::Off)
            }
            Err(TlsFailure::Handshake(m)) | Err(TlsFailure::Io(m)) => {
                return Err(DbError::new(ErrorKind::Other, "", format!("{target}: {m}")))
            }
        }
    }
    let (key, server_version) = handshake(&mut wire, a).map_err(|e| DbError {
        message: format!("{target}: {}", e.message),
        ..e
    })?;
    // From now on a statement may legitimately run for hours.
    wire.stream()
        .set_read_timeout(None)
        .and_then(|_| wire.stream().set_write_timeout(None))
        .map_err(|e| DbError::new(ErrorKind::ConnectionLost, "", format!("{target}: {e}")))?;
    Ok(Session {
        wire,
        place,
        key,
        server_version,
    })
}

enum TlsFailure {
    /// The socket failed before the handshake.
    Io(String),
    Handshake(String),
}

/// Starts TLS: an SSLRequest and its answer, then the handshake; or,
/// with `sslnegotiation=direct`, the handshake at once with the ALPN
/// protocol `postgresql`. False when the server answers that it has none.
fn secure(wire: &mut Wire, a: &ServerAddr) -> Result<bool, TlsFailure> {
    use std::io::{Read, Write};
    const ALPN: &[u8] = b"postgresql";
    let stream = wire.stream_mut();
    if !a.tls.direct {
        let io = |e: std::io::Error| TlsFailure::Io(format!("asking for TLS: {e}"));
        // SSLRequest: length 8, the code 1234.5679.
        let mut req = [0u8; 8];
        req[..4].copy_from_slice(&8u32.to_be_bytes());
        req[4..].copy_from_slice(&80877103u32.to_be_bytes());
        stream.write_all(&req).map_err(io)?;
        // One byte, read alone: anything the server sent after its 'S'
        // would be bytes no TLS protected (CVE-2021-23222).
        let mut answer = [0u8; 1];
        stream.read_exact(&mut answer).map_err(io)?;
        match answer[0] {
            b'S' => {}
            b'N' => return Ok(false),
            other => {
                return Err(TlsFailure::Io(format!(
                    "unexpected answer {:?} to an SSLRequest: is this a PostgreSQL server?",
                    other as char
                )))
            }
        }
    }
    let alpn = a.tls.direct.then_some(ALPN);
    tls::upgrade(stream, &a.host, &a.tls, alpn).map_err(|m| {
        TlsFailure::Handshake(if a.tls.direct {
            format!("{m} (sslnegotiation=direct needs PostgreSQL 17 or later; leave it out for older servers)")
        } else {
            m
        })
    })?;
    if a.tls.direct && stream.tls().and_then(|c| c.alpn_protocol()) != Some(ALPN) {
        return Err(TlsFailure::Handshake(
            "the server did not accept the ALPN protocol 'postgresql' (sslnegotiation=direct needs PostgreSQL 17 or later)".into(),
        ));
    }
    Ok(true)
}

/// Sends the StartupMessage and answers authentication requests until the
/// first ReadyForQuery. Returns the cancel key and the server version.
fn handshake(wire: &mut Wire, a: &ServerAddr) -> DbResult<(Option<(i32, i32)>, String)> {
    let params = [
        ("user", a.user.as_str()),
        ("database", a.database.as_str()),
        ("application_name", "dbsweep"),
        // Text values are exchanged as UTF-8 whatever the database's encoding.
        ("client_encoding", "UTF8"),
    ];
    frontend::startup_message(params, &mut wire.out).map_err(other)?;
    wire.send()?;

    let cert = wire
        .stream()
        .tls()
        .and_then(|c| c.peer_certificates()?.first());
    let mut auth = Auth {
        scram: None,
        encrypted: wire.stream().tls().is_some(),
        end_point: cert.and_then(|c| super::binding::server_end_point(c)),
        bound: false,
    };
    let mut key = None;
    let mut version = String::new();
    loop {
        let (tag, len) = wire.header().map_err(|e| wire.fail(e))?;
        let body = wire.body(len).map_err(|e| wire.fail(e))?;
        match tag {
            b'R' => {
                // Rebuild the message for postgres-protocol's parser, which
                // knows every authentication request's layout.
                let mut m = BytesMut::with_capacity(len + 5);
                m.put_u8(tag);
                m.put_u32(len as u32 + 4);
                m.put_slice(wire.bytes(body));
                let msg = Message::parse(&mut m)
                    .map_err(other)?
                    .ok_or_else(|| protocol("truncated authentication request"))?;
                let reply = authenticate(msg, a, &mut auth, &mut wire.out)?;
                if reply {
                    wire.send()?;
                }
            }
            b'K' => {
                let b = wire.bytes(body);
                if b.len() == 8 {
                    let pid = i32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                    let secret = i32::from_be_bytes([b[4], b[5], b[6], b[7]]);
                    key = Some((pid, secret));
                }
            }
            b'S' => {
                let mut parts = wire.bytes(body).split(|&c| c == 0);
                if parts.next() == Some(b"server_version") {
                    version =
                        String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
                }
            }
            b'E' => {
                let mut e = parse_error(wire.bytes(body));
                // The server ends the session after any startup error; only
                // "not now" (starting up, too many connections…) is worth
                // retrying, which is what ConnectionLost tells the engine.
                // Wrong passwords and missing databases are not.
                e.kind = classify(&e.code, false);
                if e.code == "53300" {
                    e.kind = ErrorKind::ConnectionLost;
                }
                return Err(e);
            }
            b'Z' => return Ok((key, version)),
            // NoticeResponse, NegotiateProtocolVersion: nothing to do.
            _ => {}
        }
    }
}

/// Where authentication stands.
struct Auth {
    scram: Option<ScramSha256>,
    /// The session runs over TLS.
    encrypted: bool,
    /// tls-server-end-point: the hash of the server's certificate, when
    /// its signature algorithm names one.
    end_point: Option<Vec<u8>>,
    /// SCRAM-SHA-256-PLUS was chosen: the exchange binds to the TLS session.
    bound: bool,
}

/// Answers one authentication request into `out`; false when there is
/// nothing to send (AuthenticationOk, SASL final).
fn authenticate(
    msg: Message,
    a: &ServerAddr,
    auth: &mut Auth,
    out: &mut BytesMut,
) -> DbResult<bool> {
    let scram = &mut auth.scram;
    let password = || {
        a.password.as_deref().ok_or_else(|| {
            DbError::new(
                ErrorKind::Other,
                "",
                "the server asks for a password and the URL has none: \
                 use postgres://USER:PASSWORD@HOST:PORT/DB",
            )
        })
    };
    match msg {
        Message::AuthenticationOk if a.tls.channel_binding == Binding::Require && !auth.bound => {
            Err(DbError::new(
                ErrorKind::Other,
                "",
                "channel_binding=require, but the server let the session in without channel binding \
                 (it needs scram-sha-256 in pg_hba.conf, over TLS): fix pg_hba.conf or use channel_binding=prefer",
            ))
        }
        Message::AuthenticationOk => Ok(false),
        Message::AuthenticationCleartextPassword => {
            frontend::password_message(password()?.as_bytes(), out).map_err(other)?;
            Ok(true)
        }
        Message::AuthenticationMd5Password(body) => {
            let hash = md5_hash(a.user.as_bytes(), password()?.as_bytes(), body.salt());
            frontend::password_message(hash.as_bytes(), out).map_err(other)?;
            Ok(true)
        }
        Message::AuthenticationSasl(body) => {
            let mut mechanisms = body.mechanisms();
            let mut offered = Vec::new();
            while let Some(m) =
                fallible_iterator::FallibleIterator::next(&mut mechanisms).map_err(other)?
            {
                offered.push(m.to_string());
            }
            const PLUS: &str = "SCRAM-SHA-256-PLUS";
            let plus = match (&auth.end_point, a.tls.channel_binding) {
                (Some(ep), Binding::Prefer | Binding::Require)
                    if auth.encrypted && offered.iter().any(|m| m == PLUS) =>
                {
                    Some(ep.clone())
                }
                _ => None,
            };
            if plus.is_none() && a.tls.channel_binding == Binding::Require {
                return Err(DbError::new(
                    ErrorKind::Other,
                    "",
                    format!(
                        "channel_binding=require, but {}: use TLS with a certificate signed with SHA-256 or stronger, or channel_binding=prefer",
                        if !auth.encrypted {
                            "the session is not encrypted"
                        } else if auth.end_point.is_none() {
                            "the server's certificate has no hash for channel binding (signed with Ed25519 or RSA-PSS)"
                        } else {
                            "the server does not offer SCRAM-SHA-256-PLUS"
                        }
                    ),
                ));
            }
            if plus.is_none() && !offered.iter().any(|m| m == SCRAM_SHA_256) {
                return Err(DbError::new(
                    ErrorKind::Other,
                    "",
                    format!(
                        "the server offers SASL mechanisms {} and dbsweep speaks only {SCRAM_SHA_256} and {PLUS}",
                        offered.join(", ")
                    ),
                ));
            }
            // As libpq: bound to the TLS session when both can; "y" (the
            // client could, the server did not offer it) over TLS when the
            // server did not offer it — a server that did would read "y" as
            // a downgrade — and "n" otherwise.
            let offers_plus = offered.iter().any(|m| m == PLUS);
            let (mechanism, binding) = match plus {
                Some(ep) => (PLUS, ChannelBinding::tls_server_end_point(ep)),
                None if auth.encrypted && !offers_plus => {
                    (SCRAM_SHA_256, ChannelBinding::unrequested())
                }
                None => (SCRAM_SHA_256, ChannelBinding::unsupported()),
            };
            auth.bound = mechanism == PLUS;
            let s = ScramSha256::new(password()?.as_bytes(), binding);
            frontend::sasl_initial_response(mechanism, s.message(), out).map_err(other)?;
            *scram = Some(s);
            Ok(true)
        }
        Message::AuthenticationSaslContinue(body) => {
            let s = scram
                .as_mut()
                .ok_or_else(|| protocol("SASL continue before start"))?;
            s.update(body.data()).map_err(scram_error)?;
            frontend::sasl_response(s.message(), out).map_err(other)?;
            Ok(true)
        }
        Message::AuthenticationSaslFinal(body) => {
            // Verifies the server's signature: it knows the password too.
            let s = scram
                .as_mut()
                .ok_or_else(|| protocol("SASL final before start"))?;
            s.finish(body.data()).map_err(scram_error)?;
            Ok(false)
        }
        _ => Err(DbError::new(
            ErrorKind::Other,
            "",
            "the server asks for an authentication method dbsweep does not support \
             (Kerberos, GSSAPI, SSPI or SCM credentials); use scram-sha-256, md5, \
             password or trust in pg_hba.conf",
        )),
    }
}

fn other(e: std::io::Error) -> DbError {
    DbError::new(ErrorKind::Other, "", e.to_string())
}

fn protocol(what: &str) -> DbError {
    DbError::new(ErrorKind::Other, "", format!("protocol error: {what}"))
}

fn scram_error(e: std::io::Error) -> DbError {
    DbError::new(
        ErrorKind::Other,
        "",
        format!("SCRAM-SHA-256 authentication failed: {e}"),
    )
}
