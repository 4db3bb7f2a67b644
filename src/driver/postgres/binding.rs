//! SCRAM channel binding's `tls-server-end-point` (RFC 5929 section 4.1):
//! the hash of the server's certificate, computed with the hash of the
//! certificate's own signature algorithm, SHA-256 in place of MD5 and
//! SHA-1. PostgreSQL's SCRAM-SHA-256-PLUS binds the password exchange to it,
//! so a man in the middle holding another certificate cannot relay it.
//!
//! Only the certificate's `signatureAlgorithm` is needed, so it is read
//! with a few lines of DER rather than a full X.509 parser.

use sha2::{Digest, Sha224, Sha256, Sha384, Sha512};

/// The hash for the certificate (DER), or None when its signature
/// algorithm has no single hash (Ed25519, RSA-PSS, unknown): as
/// PostgreSQL's server, which cannot bind those either.
pub(super) fn server_end_point(der: &[u8]) -> Option<Vec<u8>> {
    // Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signature }
    let (0x30, cert, _) = tlv(der)? else {
        return None;
    };
    let (0x30, _, rest) = tlv(cert)? else {
        return None;
    };
    // AlgorithmIdentifier ::= SEQUENCE { algorithm OBJECT IDENTIFIER, … }
    let (0x30, alg, _) = tlv(rest)? else {
        return None;
    };
    let (0x06, oid, _) = tlv(alg)? else {
        return None;
    };
    const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01];
    const ECDSA_SHA2: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03];
    const ECDSA_SHA1: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x01];
    let hash = match oid {
        // md5WithRSA, sha1WithRSA, sha256WithRSA; ecdsa-with-SHA1/256
        [p @ .., 4 | 5 | 11] if p == RSA => Sha256::digest(der).to_vec(),
        [p @ .., 2] if p == ECDSA_SHA2 => Sha256::digest(der).to_vec(),
        o if o == ECDSA_SHA1 => Sha256::digest(der).to_vec(),
        [p @ .., 12] if p == RSA => Sha384::digest(der).to_vec(),
        [p @ .., 3] if p == ECDSA_SHA2 => Sha384::digest(der).to_vec(),
        [p @ .., 13] if p == RSA => Sha512::digest(der).to_vec(),
        [p @ .., 4] if p == ECDSA_SHA2 => Sha512::digest(der).to_vec(),
        [p @ .., 14] if p == RSA => Sha224::digest(der).to_vec(),
        [p @ .., 1] if p == ECDSA_SHA2 => Sha224::digest(der).to_vec(),
        _ => return None,
    };
    Some(hash)
}

/// One DER element: its tag, its content and what follows it.
fn tlv(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let tag = *b.first()?;
    let first = *b.get(1)?;
    let (len, head) = if first < 0x80 {
        (usize::from(first), 2)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 {
            return None;
        }
        let len = b
            .get(2..2 + n)?
            .iter()
            .fold(0usize, |acc, &x| (acc << 8) | usize::from(x));
        (len, 2 + n)
    };
    let content = b.get(head..head.checked_add(len)?)?;
    Some((tag, content, &b[head + len..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ecdsa_sha256_certificate_binds_with_the_sha256_of_its_der() {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let der = cert.der().to_vec();
        assert_eq!(
            server_end_point(&der).unwrap(),
            Sha256::digest(&der).to_vec()
        );
    }

    #[test]
    fn an_ecdsa_sha384_certificate_binds_with_sha384_and_ed25519_not_at_all() {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P384_SHA384).unwrap();
        let params = rcgen::CertificateParams::new(vec!["localhost".into()]).unwrap();
        let der = params.self_signed(&key).unwrap().der().to_vec();
        assert_eq!(
            server_end_point(&der).unwrap(),
            Sha384::digest(&der).to_vec()
        );
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).unwrap();
        let der = params.self_signed(&key).unwrap().der().to_vec();
        assert_eq!(server_end_point(&der), None);
    }

    #[test]
    fn truncated_or_foreign_bytes_are_no_certificate() {
        assert_eq!(server_end_point(&[]), None);
        assert_eq!(server_end_point(&[0x30, 0x82, 0xff]), None);
        assert_eq!(server_end_point(&[0x04, 0x01, 0x00]), None);
        // A long-form length past the end of the input.
        assert_eq!(tlv(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff]), None);
    }
}
