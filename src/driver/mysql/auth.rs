//! The connection phase: the server's Handshake v10, the client's
//! HandshakeResponse41, and the password scrambles of the authentication
//! plugins dbsweep speaks.
//!
//! Plugins: `mysql_native_password` (MariaDB's default; SHA-1 scramble),
//! MariaDB's `client_ed25519` (a signature of its nonce) and
//! `caching_sha2_password` (MySQL 8's default; SHA-256 scramble). The latter
//! has a fast path when the server has the account's password cached; on a
//! cache miss it wants the clear password, which dbsweep sends only over a
//! unix socket or TLS, or encrypted to the server's RSA key
//! (`server-public-key-path`, `get-server-public-key=1`: see `rsa_key`);
//! otherwise the login fails with a message saying what to do. TLS starts
//! after the greeting, when the options ask for it and the server offers it.

use sha1::{Digest, Sha1};
use sha2::Sha256;

use super::packet::u16_at;
use super::response::parse_ok;
use super::{rsa_key, MyConnection};
use crate::driver::tls::{self, TlsMode};
use crate::driver::{DbError, DbResult, ErrorKind, ServerAddr};

// Capability flags (the lower 32 bits of the protocol's 64).
pub const CLIENT_LONG_PASSWORD: u32 = 1;
pub const CLIENT_LONG_FLAG: u32 = 1 << 2;
pub const CLIENT_CONNECT_WITH_DB: u32 = 1 << 3;
pub const CLIENT_LOCAL_FILES: u32 = 1 << 7;
pub const CLIENT_PROTOCOL_41: u32 = 1 << 9;
pub const CLIENT_SSL: u32 = 1 << 11;
pub const CLIENT_TRANSACTIONS: u32 = 1 << 13;
pub const CLIENT_SECURE_CONNECTION: u32 = 1 << 15;
pub const CLIENT_MULTI_RESULTS: u32 = 1 << 17;
pub const CLIENT_PS_MULTI_RESULTS: u32 = 1 << 18;
pub const CLIENT_PLUGIN_AUTH: u32 = 1 << 19;
pub const CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA: u32 = 1 << 21;
pub const CLIENT_DEPRECATE_EOF: u32 = 1 << 24;

/// What dbsweep asks for; the connection uses the intersection with what
/// the server offers. CLIENT_FOUND_ROWS stays off, as in sysbench: an
/// UPDATE's affected rows are the rows it changed, not those it matched.
/// CLIENT_MULTI_STATEMENTS stays off too: one statement per query.
pub const WANTED: u32 = CLIENT_LONG_PASSWORD
    | CLIENT_LONG_FLAG
    | CLIENT_CONNECT_WITH_DB
    | CLIENT_LOCAL_FILES
    | CLIENT_PROTOCOL_41
    | CLIENT_TRANSACTIONS
    | CLIENT_SECURE_CONNECTION
    | CLIENT_MULTI_RESULTS
    | CLIENT_PS_MULTI_RESULTS
    | CLIENT_PLUGIN_AUTH
    | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
    | CLIENT_DEPRECATE_EOF;

/// MariaDB's extended capability (bit 34, i.e. bit 2 of the extended
/// flags) for COM_STMT_BULK_EXECUTE.
pub const MARIADB_CLIENT_STMT_BULK_OPERATIONS: u32 = 1 << 2;

/// MariaDB's extended capability (bit 36; MariaDB 10.6+) to skip a prepared
/// statement's result-set metadata on each execution while it is unchanged:
/// the column count packet then carries a flag saying whether the column
/// definitions follow.
pub const MARIADB_CLIENT_CACHE_METADATA: u32 = 1 << 4;

/// utf8mb4_general_ci: 4-byte UTF-8, known to MariaDB and MySQL alike.
pub const CHARSET_UTF8MB4: u8 = 45;

/// Largest packet the client announces it accepts (the protocol's maximum).
const MAX_PACKET: u32 = 1 << 30;

pub const NATIVE: &str = "mysql_native_password";
pub const CACHING_SHA2: &str = "caching_sha2_password";
pub const ED25519: &str = "client_ed25519";

/// The fields of the server's greeting that the client needs.
#[derive(Debug)]
pub struct Handshake {
    pub server_version: String,
    pub capabilities: u32,
    /// MariaDB's extended capabilities (bits 32..64 of its capability
    /// flags), 0 from MySQL.
    pub ext_capabilities: u32,
    /// The nonce the password is scrambled with (20 bytes).
    pub nonce: Vec<u8>,
    /// The plugin the server expects first (`mysql_native_password` if it
    /// does not say).
    pub plugin: String,
}

impl Handshake {
    /// Parses a Handshake v10 payload.
    pub fn parse(p: &[u8]) -> Result<Handshake, String> {
        let bad = || "malformed handshake from the server".to_string();
        if p.first() != Some(&10) {
            return Err(format!(
                "the server speaks protocol version {} (expected 10): is this a MySQL or MariaDB server?",
                p.first().copied().unwrap_or(0)
            ));
        }
        let nul = p[1..].iter().position(|&b| b == 0).ok_or_else(bad)? + 1;
        let server_version = String::from_utf8_lossy(&p[1..nul]).into_owned();
        let mut pos = nul + 1;
        // Connection id (4), nonce part 1 (8), filler (1), capabilities (2).
        let fixed = p.get(pos..pos + 4 + 8 + 1 + 2).ok_or_else(bad)?;
        let mut nonce = fixed[4..12].to_vec();
        let mut capabilities = u32::from(u16_at(fixed, 13));
        pos += 15;
        let mut plugin = NATIVE.to_string();
        let mut ext_capabilities = 0;
        // Charset (1), status (2), upper capabilities (2), auth data length
        // (1), reserved (10): present in every server of the last 20 years.
        if let Some(rest) = p.get(pos..pos + 16) {
            capabilities |= u32::from(u16_at(rest, 3)) << 16;
            if capabilities & CLIENT_LONG_PASSWORD == 0 {
                // MariaDB (which leaves this "CLIENT_MYSQL" bit off): the
                // last 4 of the 10 reserved bytes.
                ext_capabilities =
                    u32::from(u16_at(rest, 12)) | (u32::from(u16_at(rest, 14)) << 16);
            }
            let data_len = usize::from(rest[5]);
            pos += 16;
            if capabilities & CLIENT_SECURE_CONNECTION != 0 {
                // Part 2 is max(13, len - 8) bytes, the last of them a NUL.
                let n = data_len.saturating_sub(8).max(13);
                let part2 = p.get(pos..pos + n).ok_or_else(bad)?;
                nonce.extend_from_slice(&part2[..n - 1]);
                pos += n;
            }
            if capabilities & CLIENT_PLUGIN_AUTH != 0 {
                if let Some(rest) = p.get(pos..) {
                    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
                    if end > 0 {
                        plugin = String::from_utf8_lossy(&rest[..end]).into_owned();
                    }
                }
            }
        }
        Ok(Handshake {
            server_version,
            capabilities,
            ext_capabilities,
            nonce,
            plugin,
        })
    }
}

/// Appends the fixed first 32 bytes of a HandshakeResponse41 to `out`:
/// alone, with CLIENT_SSL, they are the SSLRequest that starts TLS.
pub fn put_request_head(out: &mut Vec<u8>, caps: u32, ext_caps: u32) {
    out.extend_from_slice(&caps.to_le_bytes());
    out.extend_from_slice(&MAX_PACKET.to_le_bytes());
    out.push(CHARSET_UTF8MB4);
    out.extend_from_slice(&[0; 19]);
    out.extend_from_slice(&ext_caps.to_le_bytes());
}

/// Appends a HandshakeResponse41 payload to `out`.
pub fn put_response(
    out: &mut Vec<u8>,
    caps: u32,
    ext_caps: u32,
    user: &str,
    auth: &[u8],
    database: &str,
    plugin: &str,
) {
    put_request_head(out, caps, ext_caps);
    out.extend_from_slice(user.as_bytes());
    out.push(0);
    if caps & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
        super::packet::put_lenenc(out, auth.len() as u64);
    } else {
        out.push(auth.len() as u8);
    }
    out.extend_from_slice(auth);
    if caps & CLIENT_CONNECT_WITH_DB != 0 {
        out.extend_from_slice(database.as_bytes());
        out.push(0);
    }
    if caps & CLIENT_PLUGIN_AUTH != 0 {
        out.extend_from_slice(plugin.as_bytes());
        out.push(0);
    }
}

/// The authentication data `plugin` sends first for `password`, or None if
/// dbsweep does not speak that plugin. An empty password is sent as empty
/// data, as every client does.
pub fn scramble(plugin: &str, password: &str, nonce: &[u8]) -> Option<Vec<u8>> {
    if plugin == ED25519 {
        // Its own 32-byte nonce comes with the switch to it; the greeting's
        // 20 bytes are answered as mysql_native_password, to be switched.
        return (nonce.len() >= 32)
            .then(|| ed25519_sign(password.as_bytes(), &nonce[..32]).to_vec());
    }
    // Servers may append a NUL to the nonce; the scramble uses 20 bytes.
    let nonce = &nonce[..nonce.len().min(20)];
    match plugin {
        _ if password.is_empty() && (plugin == NATIVE || plugin == CACHING_SHA2) => {
            Some(Vec::new())
        }
        NATIVE => Some(native_scramble(password.as_bytes(), nonce).to_vec()),
        CACHING_SHA2 => Some(sha2_scramble(password.as_bytes(), nonce).to_vec()),
        _ => None,
    }
}

/// `mysql_native_password`: SHA1(password) XOR SHA1(nonce, SHA1(SHA1(password))).
pub fn native_scramble(password: &[u8], nonce: &[u8]) -> [u8; 20] {
    let h1: [u8; 20] = Sha1::digest(password).into();
    let h2: [u8; 20] = Sha1::digest(h1).into();
    let mut h = Sha1::new();
    h.update(nonce);
    h.update(h2);
    let h3: [u8; 20] = h.finalize().into();
    std::array::from_fn(|i| h1[i] ^ h3[i])
}

/// `caching_sha2_password`:
/// SHA256(password) XOR SHA256(SHA256(SHA256(password)), nonce).
pub fn sha2_scramble(password: &[u8], nonce: &[u8]) -> [u8; 32] {
    let h1: [u8; 32] = Sha256::digest(password).into();
    let h2: [u8; 32] = Sha256::digest(h1).into();
    let mut h = Sha256::new();
    h.update(h2);
    h.update(nonce);
    let h3: [u8; 32] = h.finalize().into();
    std::array::from_fn(|i| h1[i] ^ h3[i])
}

/// MariaDB's `client_ed25519`: an Ed25519 signature of the nonce whose
/// expanded secret key is SHA-512 of the password itself (not of a 32-byte
/// seed, as in RFC 8032): the server keeps only the public key.
pub fn ed25519_sign(password: &[u8], nonce: &[u8]) -> [u8; 64] {
    use ed25519_dalek::hazmat::{raw_sign, ExpandedSecretKey};
    let expanded: [u8; 64] = sha2::Sha512::digest(password).into();
    let esk = ExpandedSecretKey::from_bytes(&expanded);
    let public = ed25519_dalek::VerifyingKey::from(&esk);
    raw_sign::<sha2::Sha512>(&esk, nonce, &public).to_bytes()
}

impl MyConnection {
    /// The connection phase: greeting, login packet, then as many rounds of
    /// plugin switching or extra authentication data as the server wants.
    pub(super) fn login(&mut self, a: &ServerAddr) -> DbResult<()> {
        let r = self.read()?;
        let p = self.io.payload(r.clone());
        if p.first() == Some(&0xFF) {
            return Err(self.server_error(r));
        }
        let hs = Handshake::parse(p).map_err(|m| self.malformed(&m))?;
        let needed = CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION;
        if hs.capabilities & needed != needed {
            return Err(DbError::new(
                ErrorKind::Other,
                "",
                format!(
                    "server {} is too old: it does not speak the 4.1 protocol",
                    hs.server_version
                ),
            ));
        }
        self.caps = WANTED & hs.capabilities;
        self.ext_caps = (MARIADB_CLIENT_STMT_BULK_OPERATIONS | MARIADB_CLIENT_CACHE_METADATA)
            & hs.ext_capabilities;
        if a.database.is_empty() {
            self.caps &= !CLIENT_CONNECT_WITH_DB;
        }
        self.start_tls(a, &hs)?;
        let password = a.password.as_deref().unwrap_or("");
        let unsupported = |plugin: &str| {
            DbError::new(
                ErrorKind::Other,
                "2059",
                format!(
                    "the account uses the authentication plugin '{plugin}', which dbsweep does not speak; \
                     use mysql_native_password, e.g. ALTER USER '{}'@'%' IDENTIFIED WITH mysql_native_password BY '…' \
                     (MariaDB: IDENTIFIED VIA mysql_native_password USING PASSWORD('…'))",
                    a.user
                ),
            )
        };
        // Answer the server's plugin if dbsweep speaks it; otherwise answer
        // as mysql_native_password and let the server switch.
        let mut plugin = hs.plugin.clone();
        let data = match scramble(&plugin, password, &hs.nonce) {
            Some(d) => d,
            None => {
                plugin = NATIVE.to_string();
                scramble(NATIVE, password, &hs.nonce).expect("native is supported")
            }
        };
        self.io.begin_packet();
        put_response(
            &mut self.io.wbuf,
            self.caps,
            self.ext_caps,
            &a.user,
            &data,
            &a.database,
            &plugin,
        );
        self.send()?;
        // The nonce of the plugin answering now: the greeting's, or an
        // auth switch's.
        let mut nonce = hs.nonce.clone();
        loop {
            let r = self.read()?;
            let p = self.io.payload(r.clone());
            match p.first() {
                Some(0x00) => {
                    if let Some((_, status)) = parse_ok(p) {
                        self.status = status;
                    }
                    return Ok(());
                }
                Some(0xFF) => return Err(self.server_error(r)),
                Some(0xFE) if p.len() == 1 => return Err(unsupported("mysql_old_password")),
                Some(0xFE) => {
                    // AuthSwitchRequest: plugin name, NUL, the new nonce.
                    let body = &p[1..];
                    let nul = body.iter().position(|&b| b == 0).unwrap_or(body.len());
                    plugin = String::from_utf8_lossy(&body[..nul]).into_owned();
                    nonce = body.get(nul + 1..).unwrap_or(&[]).to_vec();
                    let data = scramble(&plugin, password, &nonce)
                        .ok_or_else(|| unsupported(&plugin))?;
                    self.io.begin_packet();
                    self.io.wbuf.extend_from_slice(&data);
                    self.send()?;
                }
                Some(0x01) if plugin == CACHING_SHA2 => match p.get(1) {
                    // Fast authentication succeeded; the OK packet follows.
                    Some(3) => {}
                    // Full authentication: the server wants the password
                    // itself, safe to send only over a local socket or TLS.
                    Some(4) if self.io.stream().is_unix() || self.io.stream().tls().is_some() => {
                        self.io.begin_packet();
                        self.io.wbuf.extend_from_slice(password.as_bytes());
                        self.io.wbuf.push(0);
                        self.send()?;
                    }
                    // Over plain TCP: encrypted to the server's RSA key,
                    // when the options name it or let the server send it.
                    Some(4) if a.tls.server_public_key.is_some() || a.tls.get_server_public_key => {
                        let key = match &a.tls.server_public_key {
                            Some(path) => rsa_key::read(path),
                            None => self.ask_public_key(),
                        }
                        .map_err(|m| DbError::new(ErrorKind::Other, "2061", m))?;
                        let sent = rsa_key::encrypt(password.as_bytes(), &nonce, &key)
                            .map_err(|m| DbError::new(ErrorKind::Other, "2061", m))?;
                        self.io.begin_packet();
                        self.io.wbuf.extend_from_slice(&sent);
                        self.send()?;
                    }
                    Some(4) => {
                        return Err(DbError::new(
                            ErrorKind::Other,
                            "2061",
                            "the server wants a full caching_sha2_password exchange (the password is not \
                             in its cache), which needs TLS or the server's RSA key: connect with TLS \
                             (ssl-mode=REQUIRED, the server started with ssl_cert and ssl_key), or give \
                             its key (server-public-key-path=FILE, or get-server-public-key=1 to ask the \
                             server for it), or connect once through the unix socket \
                             (?socket=/path/mysqld.sock) to fill the cache"
                                .to_string(),
                        ))
                    }
                    _ => return Err(self.malformed("unexpected caching_sha2_password message")),
                },
                _ => return Err(self.malformed("unexpected packet during authentication")),
            }
        }
    }
}

impl MyConnection {
    /// Asks the server for its RSA public key (caching_sha2_password's
    /// request 2) and reads the PEM it sends.
    fn ask_public_key(&mut self) -> Result<rsa::RsaPublicKey, String> {
        self.io.begin_packet();
        self.io.wbuf.push(2);
        self.send().map_err(|e| e.message)?;
        let r = self.read().map_err(|e| e.message)?;
        let p = self.io.payload(r);
        match p.split_first() {
            Some((1, pem)) => rsa_key::parse(&String::from_utf8_lossy(pem))
                .map_err(|e| format!("the server's RSA key: {e}")),
            _ => Err(
                "the server sent no RSA public key when asked (is caching_sha2_password's key pair configured?)"
                    .into(),
            ),
        }
    }

    /// Starts TLS after the server's greeting, as the options say: an
    /// SSLRequest (the response's first 32 bytes with CLIENT_SSL), then the
    /// handshake; the login goes on inside it. Never over a unix socket.
    fn start_tls(&mut self, a: &ServerAddr, hs: &Handshake) -> DbResult<()> {
        let mode = a.tls.mode;
        if mode == TlsMode::Disable || self.io.stream().is_unix() {
            return Ok(());
        }
        if hs.capabilities & CLIENT_SSL == 0 {
            if mode.required() {
                return Err(DbError::new(
                    ErrorKind::Other,
                    CR_SSL_CONNECTION_ERROR,
                    format!(
                        "server {} does not offer TLS (ssl-mode={}): start it with ssl_cert and ssl_key \
                         (tls = true on a managed server), or use ssl-mode=PREFERRED",
                        hs.server_version,
                        mode.mysql_name()
                    ),
                ));
            }
            return Ok(());
        }
        self.caps |= CLIENT_SSL;
        self.io.begin_packet();
        put_request_head(&mut self.io.wbuf, self.caps, self.ext_caps);
        self.send()?;
        tls::upgrade(self.io.stream_mut(), &a.host, &a.tls, None)
            .map_err(|m| DbError::new(ErrorKind::Other, CR_SSL_CONNECTION_ERROR, m))
    }
}

/// The client's error for a failed TLS connection.
const CR_SSL_CONNECTION_ERROR: &str = "2026";

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    /// Expected values computed independently with Python's hashlib.
    #[test]
    fn scrambles_match_reference_values() {
        let nonce: Vec<u8> = (1..=20).collect();
        assert_eq!(
            hex(&native_scramble(b"secret", &nonce)),
            "b32bb3a583e1340c0a1108d58b1be49781ad8c2f"
        );
        assert_eq!(
            hex(&sha2_scramble(b"secret", &nonce)),
            "746ebe205d56a0707acb3e796e834e0dd7b1d61743b26bd5202c7a623230c7c9"
        );
        let mut with_nul = nonce.clone();
        with_nul.push(0);
        assert_eq!(
            scramble(NATIVE, "secret", &with_nul).unwrap(),
            native_scramble(b"secret", &nonce)
        );
        assert_eq!(scramble(NATIVE, "", &nonce).unwrap(), Vec::<u8>::new());
        // Only with its own 32-byte nonce.
        assert!(scramble(ED25519, "x", &nonce).is_none());
    }

    #[test]
    fn an_ed25519_signature_verifies_under_the_passwords_public_key() {
        use ed25519_dalek::hazmat::ExpandedSecretKey;
        let nonce: Vec<u8> = (0..32).collect();
        let sig = ed25519_sign(b"secret", &nonce);
        let expanded: [u8; 64] = sha2::Sha512::digest(b"secret").into();
        let public = ed25519_dalek::VerifyingKey::from(&ExpandedSecretKey::from_bytes(&expanded));
        let signature = ed25519_dalek::Signature::from_bytes(&sig);
        assert!(public.verify_strict(&nonce, &signature).is_ok());
        assert!(public.verify_strict(&nonce[1..], &signature).is_err());
        // Deterministic, as Ed25519: the server could not tell otherwise.
        assert_eq!(ed25519_sign(b"secret", &nonce), sig);
        assert_ne!(ed25519_sign(b"other", &nonce), sig);
        assert_eq!(scramble(ED25519, "secret", &nonce).unwrap(), sig.to_vec());
    }

    #[test]
    fn parses_a_mariadb_greeting() {
        // Captured shape of MariaDB 10.11's Handshake v10.
        let mut p = vec![10];
        p.extend_from_slice(b"5.5.5-10.11.19-MariaDB\0");
        p.extend_from_slice(&7u32.to_le_bytes());
        p.extend_from_slice(b"abcdefgh\0");
        let caps = WANTED | 1 << 1;
        p.extend_from_slice(&(caps as u16).to_le_bytes());
        p.push(45);
        p.extend_from_slice(&2u16.to_le_bytes());
        p.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
        p.push(21);
        p.extend_from_slice(&[0; 10]);
        p.extend_from_slice(b"ijklmnopqrst\0");
        p.extend_from_slice(b"mysql_native_password\0");
        let h = Handshake::parse(&p).unwrap();
        assert_eq!(h.server_version, "5.5.5-10.11.19-MariaDB");
        assert_eq!(h.capabilities, caps);
        assert_eq!(h.nonce, b"abcdefghijklmnopqrst");
        assert_eq!(h.plugin, NATIVE);
        assert!(Handshake::parse(&[9, 0])
            .unwrap_err()
            .contains("protocol version 9"));
    }
}
