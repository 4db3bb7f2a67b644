//! TLS for the network drivers, spelled as each engine's own client spells
//! it: libpq's `sslmode` (disable, allow, prefer, require, verify-ca,
//! verify-full), `sslrootcert`, `sslcert`, `sslkey`, `sslnegotiation` and
//! `channel_binding`; the mysql client's `ssl-mode` (DISABLED, PREFERRED,
//! REQUIRED, VERIFY_CA, VERIFY_IDENTITY), `ssl-ca`, `ssl-cert`, `ssl-key`.
//! Both default to trying TLS and going on without it when the server has
//! none, as libpq and the mysql client do.
//!
//! The handshake is rustls's (with ring, which the tree already builds for
//! HTTPS). Certificates are checked against `sslrootcert` / `ssl-ca` when
//! given, else the system's trust store; `require` and `REQUIRED` encrypt
//! without checking (libpq's `require` with an `sslrootcert` checks the
//! chain), verify-ca checks the chain and not the name, and
//! verify-full / VERIFY_IDENTITY both. One client configuration is built
//! per set of options and shared by every connection of the process.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

use super::socket::{Stream, TlsStream};

/// How much TLS a connection asks for, weakest first.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub enum TlsMode {
    /// Never.
    Disable,
    /// Without first; with, if the server refuses a session without it
    /// (PostgreSQL only).
    Allow,
    /// With, if the server offers it; without otherwise.
    #[default]
    Prefer,
    /// Always, without checking the certificate.
    Require,
    /// Always, with a certificate signed by a trusted CA.
    VerifyCa,
    /// Always, with a trusted certificate for the host connected to.
    VerifyFull,
}

/// SCRAM channel binding over TLS (libpq's `channel_binding`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub enum ChannelBinding {
    Disable,
    /// When the session is encrypted and the server offers it.
    #[default]
    Prefer,
    /// Always: a session without it fails.
    Require,
}

/// A connection's TLS options, as its URL and environment gave them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct TlsOptions {
    pub mode: TlsMode,
    /// The CAs to trust (PEM); None: the system's trust store.
    pub root_cert: Option<PathBuf>,
    /// A client certificate (PEM chain) and its key.
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    /// PostgreSQL 17's direct negotiation: TLS from the first byte, with
    /// the ALPN protocol `postgresql`, instead of an SSLRequest.
    pub direct: bool,
    pub channel_binding: ChannelBinding,
    /// MySQL without TLS: the server's RSA public key for
    /// caching_sha2_password's full exchange (`server-public-key-path`),
    /// or leave to ask the server for it (`get-server-public-key`).
    #[serde(default)]
    pub server_public_key: Option<PathBuf>,
    #[serde(default)]
    pub get_server_public_key: bool,
}

impl TlsMode {
    /// libpq's name.
    pub fn parse_pg(v: &str) -> Option<TlsMode> {
        Some(match v {
            "disable" => TlsMode::Disable,
            "allow" => TlsMode::Allow,
            "prefer" => TlsMode::Prefer,
            "require" => TlsMode::Require,
            "verify-ca" => TlsMode::VerifyCa,
            "verify-full" => TlsMode::VerifyFull,
            _ => return None,
        })
    }

    /// The mysql client's name (any case).
    pub fn parse_mysql(v: &str) -> Option<TlsMode> {
        Some(match v.to_ascii_uppercase().as_str() {
            "DISABLED" => TlsMode::Disable,
            "PREFERRED" => TlsMode::Prefer,
            "REQUIRED" => TlsMode::Require,
            "VERIFY_CA" => TlsMode::VerifyCa,
            "VERIFY_IDENTITY" => TlsMode::VerifyFull,
            _ => return None,
        })
    }

    /// libpq's name, for messages.
    pub fn pg_name(self) -> &'static str {
        match self {
            TlsMode::Disable => "disable",
            TlsMode::Allow => "allow",
            TlsMode::Prefer => "prefer",
            TlsMode::Require => "require",
            TlsMode::VerifyCa => "verify-ca",
            TlsMode::VerifyFull => "verify-full",
        }
    }

    /// The mysql client's name, for messages (`allow` is libpq's only).
    pub fn mysql_name(self) -> &'static str {
        match self {
            TlsMode::Disable => "DISABLED",
            TlsMode::Allow | TlsMode::Prefer => "PREFERRED",
            TlsMode::Require => "REQUIRED",
            TlsMode::VerifyCa => "VERIFY_CA",
            TlsMode::VerifyFull => "VERIFY_IDENTITY",
        }
    }

    /// A session without TLS is an error.
    pub fn required(self) -> bool {
        self >= TlsMode::Require
    }
}

impl TlsOptions {
    /// Takes one of libpq's TLS parameters; false when `key` is not one.
    pub fn set_pg(&mut self, key: &str, v: &str) -> Result<bool, String> {
        match key {
            "sslmode" => {
                self.mode = TlsMode::parse_pg(v).ok_or_else(|| {
                    format!("sslmode={v}: expected disable, allow, prefer, require, verify-ca or verify-full")
                })?
            }
            "sslrootcert" => self.root_cert = (v != "system").then(|| PathBuf::from(v)),
            "sslcert" => self.cert = Some(PathBuf::from(v)),
            "sslkey" => self.key = Some(PathBuf::from(v)),
            "sslnegotiation" => {
                self.direct = match v {
                    "postgres" => false,
                    "direct" => true,
                    _ => return Err(format!("sslnegotiation={v}: expected postgres or direct")),
                }
            }
            "channel_binding" => {
                self.channel_binding = match v {
                    "disable" => ChannelBinding::Disable,
                    "prefer" => ChannelBinding::Prefer,
                    "require" => ChannelBinding::Require,
                    _ => {
                        return Err(format!(
                            "channel_binding={v}: expected disable, prefer or require"
                        ))
                    }
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Takes one of the mysql client's TLS options (`ssl-mode` or
    /// `ssl_mode`) or its RSA key options (`server-public-key-path`,
    /// `get-server-public-key`); false when `key` is not one.
    pub fn set_mysql(&mut self, key: &str, v: &str) -> Result<bool, String> {
        match key.replace('_', "-").as_str() {
            "ssl-mode" => {
                self.mode = TlsMode::parse_mysql(v).ok_or_else(|| {
                    format!("ssl-mode={v}: expected DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY")
                })?
            }
            "ssl-ca" => self.root_cert = Some(PathBuf::from(v)),
            "ssl-cert" => self.cert = Some(PathBuf::from(v)),
            "ssl-key" => self.key = Some(PathBuf::from(v)),
            // Not TLS, but the other way the mysql client protects a
            // password on the wire: an RSA key.
            "server-public-key-path" => self.server_public_key = Some(PathBuf::from(v)),
            "get-server-public-key" => {
                self.get_server_public_key = match v.to_ascii_lowercase().as_str() {
                    "" | "1" | "true" | "on" | "yes" => true,
                    "0" | "false" | "off" | "no" => false,
                    _ => return Err(format!("get-server-public-key={v}: expected 1 or 0")),
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// libpq's environment variables, for what the URL does not say.
    pub fn pg_env(env: &dyn Fn(&str) -> Option<String>) -> Result<TlsOptions, String> {
        let mut o = TlsOptions::default();
        for (var, key) in [
            ("PGSSLMODE", "sslmode"),
            ("PGSSLROOTCERT", "sslrootcert"),
            ("PGSSLCERT", "sslcert"),
            ("PGSSLKEY", "sslkey"),
            ("PGSSLNEGOTIATION", "sslnegotiation"),
            ("PGCHANNELBINDING", "channel_binding"),
        ] {
            if let Some(v) = env(var).filter(|v| !v.is_empty()) {
                o.set_pg(key, &v).map_err(|e| format!("{var}: {e}"))?;
            }
        }
        Ok(o)
    }

    /// What is inconsistent among the options, as libpq and the mysql
    /// client refuse it; checked when the URL is read.
    pub fn check(&self) -> Result<(), String> {
        if self.cert.is_some() != self.key.is_some() {
            return Err("a client certificate needs its key and a key its certificate: give both sslcert and sslkey (ssl-cert and ssl-key)".into());
        }
        if self.direct && !self.mode.required() {
            return Err("sslnegotiation=direct needs sslmode=require, verify-ca or verify-full (a server that does not speak TLS cannot answer it)".into());
        }
        if self.channel_binding == ChannelBinding::Require && self.mode == TlsMode::Disable {
            return Err("channel_binding=require needs TLS: drop sslmode=disable".into());
        }
        for p in [&self.root_cert, &self.cert, &self.key]
            .into_iter()
            .flatten()
        {
            if !p.is_file() {
                return Err(format!(
                    "{}: no such file (a TLS certificate or key)",
                    p.display()
                ));
            }
        }
        Ok(())
    }
}

/// Runs the TLS handshake over `sock` (blocking, within the socket's
/// timeouts). `host` is the name the certificate must carry under
/// verify-full; `alpn` is offered when given.
pub fn connect(
    sock: TcpStream,
    host: &str,
    opts: &TlsOptions,
    alpn: Option<&[u8]>,
) -> Result<Stream, String> {
    let config = client_config(opts, alpn)?;
    let name = ServerName::try_from(host.to_string())
        .map_err(|_| format!("'{host}' is not a host name TLS can check"))?;
    let conn = rustls::ClientConnection::new(config, name).map_err(|e| e.to_string())?;
    let mut t = TlsStream { conn, sock };
    while t.conn.is_handshaking() {
        if let Err(e) = t.conn.complete_io(&mut t.sock) {
            return Err(handshake_error(e, opts));
        }
    }
    Ok(Stream::Tls(Box::new(t)))
}

/// Replaces a TCP stream with TLS over the same socket (through a second
/// handle of it, so the stream is untouched when the handshake fails).
pub fn upgrade(
    stream: &mut Stream,
    host: &str,
    opts: &TlsOptions,
    alpn: Option<&[u8]>,
) -> Result<(), String> {
    let Stream::Tcp(s) = stream else {
        return Err("TLS runs over TCP only, not over a unix socket".into());
    };
    let sock = s.try_clone().map_err(|e| e.to_string())?;
    *stream = connect(sock, host, opts, alpn)?;
    Ok(())
}

/// What the handshake failing means, and what to do about it.
fn handshake_error(e: std::io::Error, opts: &TlsOptions) -> String {
    let Some(tls) = e.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>()) else {
        return format!("TLS handshake failed: {e}");
    };
    let roots = match &opts.root_cert {
        Some(p) => format!("the CAs in {}", p.display()),
        None => "the system's trusted CAs".to_string(),
    };
    match tls {
        rustls::Error::InvalidCertificate(c) => match c {
            CertificateError::UnknownIssuer | CertificateError::BadSignature => format!(
                "the server's certificate is not signed by {roots}: give the CA that signed it (sslrootcert=FILE or ssl-ca=FILE), or use sslmode=require / ssl-mode=REQUIRED to encrypt without checking"
            ),
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                "the server's certificate is not valid for the host connected to (verify-full / VERIFY_IDENTITY checks the name): connect by a name the certificate lists, or use verify-ca / VERIFY_CA".to_string()
            }
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                "the server's certificate has expired: renew it on the server".to_string()
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                "the server's certificate is not valid yet (is the clock right?)".to_string()
            }
            other => format!("the server's certificate was rejected: {other:?}"),
        },
        rustls::Error::AlertReceived(a) => format!(
            "the server ended the TLS handshake ({a:?}); if it asks for a client certificate, give sslcert and sslkey (ssl-cert and ssl-key)"
        ),
        other => format!("TLS handshake failed: {other}"),
    }
}

/// The process's client configuration for these options (built once).
fn client_config(opts: &TlsOptions, alpn: Option<&[u8]>) -> Result<Arc<ClientConfig>, String> {
    type Cache = Mutex<Vec<((TlsOptions, Option<Vec<u8>>), Arc<ClientConfig>)>>;
    static CONFIGS: OnceLock<Cache> = OnceLock::new();
    let key = (opts.clone(), alpn.map(<[u8]>::to_vec));
    let cache = CONFIGS.get_or_init(Default::default);
    if let Some((_, c)) = cache.lock().unwrap().iter().find(|(k, _)| *k == key) {
        return Ok(c.clone());
    }
    let c = Arc::new(build_config(opts, alpn)?);
    cache.lock().unwrap().push((key, c.clone()));
    Ok(c)
}

fn provider() -> Arc<CryptoProvider> {
    static P: OnceLock<Arc<CryptoProvider>> = OnceLock::new();
    P.get_or_init(|| Arc::new(rustls::crypto::ring::default_provider()))
        .clone()
}

fn build_config(opts: &TlsOptions, alpn: Option<&[u8]>) -> Result<ClientConfig, String> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    // Without a CA file, require / REQUIRED check nothing (libpq with no
    // root.crt, the mysql client); with one, require checks the chain as
    // libpq does. The system's store is read only for a mode that verifies.
    let verify = opts.mode >= TlsMode::VerifyCa
        || (opts.root_cert.is_some() && opts.mode == TlsMode::Require);
    let chain = if verify {
        let roots = Arc::new(roots(opts.root_cert.as_deref())?);
        let inner = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
            .build()
            .map_err(|e| format!("TLS trust store: {e}"))?;
        Some((inner, opts.mode == TlsMode::VerifyFull))
    } else {
        None
    };
    let verifier = Arc::new(Verifier {
        chain,
        provider: provider.clone(),
    });
    let builder = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let mut config = match (&opts.cert, &opts.key) {
        (Some(cert), Some(key)) => {
            let chain = CertificateDer::pem_file_iter(cert)
                .and_then(|i| i.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("{}: not a PEM certificate: {e}", cert.display()))?;
            let key_der = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| format!("{}: not a PEM private key: {e}", key.display()))?;
            builder.with_client_auth_cert(chain, key_der).map_err(|e| {
                format!(
                    "client certificate {} and key {}: {e}; give the key that belongs to the certificate",
                    cert.display(),
                    key.display()
                )
            })?
        }
        _ => builder.with_no_client_auth(),
    };
    if let Some(p) = alpn {
        config.alpn_protocols = vec![p.to_vec()];
    }
    Ok(config)
}

/// The CAs in `file`, or the system's.
fn roots(file: Option<&Path>) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    match file {
        Some(f) => {
            let certs = CertificateDer::pem_file_iter(f)
                .and_then(|i| i.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("{}: not a PEM certificate file: {e}", f.display()))?;
            if certs.is_empty() {
                return Err(format!("{}: holds no certificate", f.display()));
            }
            for c in certs {
                store.add(c).map_err(|e| {
                    format!("{}: a CA certificate rustls cannot use: {e}", f.display())
                })?;
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            store.add_parsable_certificates(found.certs);
            if store.is_empty() {
                return Err("the system's trust store holds no CA (install ca-certificates), and no sslrootcert / ssl-ca was given".into());
            }
        }
    }
    Ok(store)
}

/// What a mode checks of the server's certificate: the chain against
/// trusted CAs and, under verify-full, the name; nothing under require /
/// REQUIRED without a CA file. The handshake's own signatures are checked
/// in every mode.
#[derive(Debug)]
struct Verifier {
    /// The CAs' verifier, and whether the name counts; None: no check.
    chain: Option<(Arc<WebPkiServerVerifier>, bool)>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some((inner, names)) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match inner.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !names => Ok(ServerCertVerified::assertion()),
            r => r,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// "TLSv1.3 TLS13_AES_256_GCM_SHA384": the session's version and cipher,
/// for the record; "off" without TLS.
pub fn describe(stream: &Stream) -> String {
    let Some(c) = stream.tls() else {
        return "off".to_string();
    };
    let version = match c.protocol_version() {
        Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3".to_string(),
        Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2".to_string(),
        Some(v) => format!("{v:?}"),
        None => "TLS".to_string(),
    };
    match c.negotiated_cipher_suite() {
        Some(s) => format!("{version} {:?}", s.suite()),
        None => version,
    }
}

#[cfg(test)]
#[path = "tls_tests.rs"]
mod tests;
