//! caching_sha2_password's full exchange without TLS: the password (with
//! its NUL) XORed with the login's nonce, encrypted to the server's RSA
//! public key with OAEP (SHA-1, MGF1 with SHA-1), as MySQL's own clients
//! since 8.0.5 do. The key is the file `server-public-key-path` names or,
//! with `get-server-public-key=1`, the one the server sends when asked —
//! which trusts the network not to swap it, hence the mysql client's
//! opt-in, kept here.
//!
//! Only the public-key operation runs here (the `rsa` crate's timing
//! advisory concerns private-key decryption and signing).

use std::path::Path;

use rsa::pkcs1::DecodeRsaPublicKey;
use rsa::pkcs8::DecodePublicKey;
use rsa::{Oaep, RsaPublicKey};

/// The server's public key from PEM text: SubjectPublicKeyInfo (`BEGIN
/// PUBLIC KEY`, what MySQL writes to public_key.pem and sends) or PKCS#1
/// (`BEGIN RSA PUBLIC KEY`).
pub fn parse(pem: &str) -> Result<RsaPublicKey, String> {
    let pem = pem.trim().trim_end_matches('\0');
    RsaPublicKey::from_public_key_pem(pem)
        .or_else(|_| RsaPublicKey::from_pkcs1_pem(pem))
        .map_err(|e| format!("not an RSA public key in PEM ({e})"))
}

/// The key in the file `server-public-key-path` names.
pub fn read(path: &Path) -> Result<RsaPublicKey, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("server-public-key-path={}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("server-public-key-path={}: {e}", path.display()))
}

/// What the client sends: (password NUL) XOR nonce (repeated), encrypted.
pub fn encrypt(password: &[u8], nonce: &[u8], key: &RsaPublicKey) -> Result<Vec<u8>, String> {
    let mut plain: Vec<u8> = password.iter().copied().chain([0]).collect();
    xor_nonce(&mut plain, nonce);
    let mut rng = rsa::rand_core::OsRng;
    key.encrypt(&mut rng, Oaep::new::<sha1::Sha1>(), &plain)
        .map_err(|e| format!("encrypting the password to the server's RSA key: {e}"))
}

/// XORs `bytes` with `nonce` repeated (both ways: the server undoes it so).
fn xor_nonce(bytes: &mut [u8], nonce: &[u8]) {
    for (b, n) in bytes.iter_mut().zip(nonce.iter().cycle()) {
        *b ^= n;
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use rsa::pkcs8::{DecodePrivateKey, EncodePublicKey};
    use rsa::RsaPrivateKey;

    /// A 2048-bit key made once with `openssl genpkey -algorithm RSA` for
    /// these tests (a key is slow to make in a debug build).
    pub const PRIVATE_PEM: &str = include_str!("rsa_test_key.pem");

    pub fn private() -> RsaPrivateKey {
        RsaPrivateKey::from_pkcs8_pem(PRIVATE_PEM).unwrap()
    }

    /// The public half as the server sends it.
    pub fn public_pem() -> String {
        RsaPublicKey::from(&private())
            .to_public_key_pem(rsa::pkcs8::LineEnding::LF)
            .unwrap()
    }

    /// What the server does with the client's message.
    pub fn decrypt(message: &[u8], nonce: &[u8]) -> Vec<u8> {
        let mut plain = private()
            .decrypt(Oaep::new::<sha1::Sha1>(), message)
            .unwrap();
        xor_nonce(&mut plain, nonce);
        plain
    }

    #[test]
    fn the_server_reads_the_password_back() {
        let key = parse(&public_pem()).unwrap();
        let nonce: Vec<u8> = (1..=20).collect();
        let sent = encrypt(b"a longer password than the nonce!", &nonce, &key).unwrap();
        assert_eq!(sent.len(), 256);
        assert_eq!(
            decrypt(&sent, &nonce),
            b"a longer password than the nonce!\0"
        );
        // OAEP is randomised: the same password never looks the same.
        assert_ne!(
            sent,
            encrypt(b"a longer password than the nonce!", &nonce, &key).unwrap()
        );
    }

    #[test]
    fn both_pem_forms_parse_and_others_are_named() {
        use rsa::pkcs1::EncodeRsaPublicKey;
        let pkcs1 = RsaPublicKey::from(&private())
            .to_pkcs1_pem(rsa::pkcs8::LineEnding::LF)
            .unwrap();
        assert!(pkcs1.starts_with("-----BEGIN RSA PUBLIC KEY-----"));
        assert_eq!(parse(&pkcs1).unwrap(), parse(&public_pem()).unwrap());
        let e = parse("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----").unwrap_err();
        assert!(e.starts_with("not an RSA public key in PEM"), "{e}");
        let e = read(Path::new("/nonexistent/key.pem")).unwrap_err();
        assert!(
            e.starts_with("server-public-key-path=/nonexistent/key.pem: "),
            "{e}"
        );
    }
}
