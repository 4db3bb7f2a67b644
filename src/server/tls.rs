//! TLS for a managed server (`tls = true` in a study, `server start --tls`):
//! a throw-away CA and a server certificate for the loopback names (and a
//! client certificate for clients that send one), made once in the
//! server's directory (`tls/`) with rcgen, the settings that
//! make each engine serve them, and the URL parameters under which a client
//! verifies them (verify-full / VERIFY_IDENTITY against that CA), so TLS
//! against plain is a variant like any setting.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType, PKCS_ECDSA_P256_SHA256,
};

use super::process::OsUser;
use super::settings::normalize;
use super::{ServerError, ServerKind};

/// The files of a server's TLS.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct TlsFiles {
    /// The CA that signed the server's certificate: what clients trust.
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl TlsFiles {
    fn in_dir(dir: &Path) -> TlsFiles {
        let tls = dir.join("tls");
        TlsFiles {
            ca: tls.join("ca.crt"),
            cert: tls.join("server.crt"),
            key: tls.join("server.key"),
        }
    }
}

/// The server's TLS files in `dir/tls/`, made when missing: a CA, and a
/// certificate it signed for localhost, 127.0.0.1 and ::1 (ECDSA P-256
/// with SHA-256, which PostgreSQL can bind SCRAM channels to). The key
/// is the server's OS user's, readable by it alone (PostgreSQL refuses a
/// key others can read).
pub(super) fn ensure(dir: &Path, owner: Option<&OsUser>) -> Result<TlsFiles, ServerError> {
    let files = TlsFiles::in_dir(dir);
    if files.ca.is_file() && files.cert.is_file() && files.key.is_file() {
        return Ok(files);
    }
    let tls_dir = files.ca.parent().expect("in tls/");
    super::state::own_dir(tls_dir, owner, 0o755)?;
    let failed = |e: rcgen::Error| ServerError::BadInput(format!("making TLS certificates: {e}"));
    let ca_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).map_err(failed)?;
    let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(failed)?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    ca.distinguished_name = name("dbsweep throw-away CA");
    let ca_cert = ca.self_signed(&ca_key).map_err(failed)?;
    let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).map_err(failed)?;
    let mut server = CertificateParams::new(vec!["localhost".to_string()]).map_err(failed)?;
    server.distinguished_name = name("localhost");
    server
        .subject_alt_names
        .push(SanType::IpAddress([127, 0, 0, 1].into()));
    server
        .subject_alt_names
        .push(SanType::IpAddress(std::net::Ipv6Addr::LOCALHOST.into()));
    let issuer = Issuer::new(ca, ca_key);
    let cert = server.signed_by(&key, &issuer).map_err(failed)?;
    // A client certificate the CA signed too, dbsweep's user's: for
    // clients that send one (sslcert / ssl-cert; sysbench's --mysql-ssl
    // always does), which MariaDB checks against the CA.
    let client_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).map_err(failed)?;
    let mut client = CertificateParams::new(Vec::<String>::new()).map_err(failed)?;
    client.distinguished_name = name("sbtest");
    let client_cert = client.signed_by(&client_key, &issuer).map_err(failed)?;
    let tls = |n: &str| tls_dir.join(n);
    write(&tls("client.crt"), &client_cert.pem(), 0o644, None)?;
    write(&tls("client.key"), &client_key.serialize_pem(), 0o600, None)?;
    write(&files.ca, &ca_cert.pem(), 0o644, owner)?;
    write(&files.cert, &cert.pem(), 0o644, owner)?;
    write(&files.key, &key.serialize_pem(), 0o600, owner)?;
    Ok(files)
}

fn name(common: &str) -> DistinguishedName {
    let mut n = DistinguishedName::new();
    n.push(DnType::CommonName, common);
    n
}

fn write(path: &Path, text: &str, mode: u32, owner: Option<&OsUser>) -> Result<(), ServerError> {
    let context = || format!("writing {}", path.display());
    // The mode first, then the content: a key is never readable by others.
    let tmp = path.with_extension("tmp");
    fs::write(&tmp, "").map_err(|e| ServerError::io(context(), e))?;
    fs::set_permissions(&tmp, fs::Permissions::from_mode(mode))
        .map_err(|e| ServerError::io(context(), e))?;
    fs::write(&tmp, text).map_err(|e| ServerError::io(context(), e))?;
    if let Some(u) = owner {
        std::os::unix::fs::chown(&tmp, Some(u.uid), Some(u.gid))
            .map_err(|e| ServerError::io(context(), e))?;
    }
    fs::rename(&tmp, path).map_err(|e| ServerError::io(context(), e))
}

/// The settings that make the engine serve the files.
pub(super) fn settings(kind: ServerKind, f: &TlsFiles) -> Vec<(String, String)> {
    let p = |p: &Path| p.display().to_string();
    let pairs: Vec<(&str, String)> = match kind {
        ServerKind::Postgres => vec![
            ("ssl", "on".into()),
            ("ssl_cert_file", p(&f.cert)),
            ("ssl_key_file", p(&f.key)),
        ],
        ServerKind::Mariadb => vec![
            ("ssl_ca", p(&f.ca)),
            ("ssl_cert", p(&f.cert)),
            ("ssl_key", p(&f.key)),
        ],
    };
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// Whether the user's own settings turn the server's TLS off (how a
/// variant compares TLS with plain on a `tls = true` target): PostgreSQL's
/// `ssl = off`, MariaDB's `ssl = 0` or `skip-ssl`.
pub(super) fn turned_off(kind: ServerKind, user: &[(String, String)]) -> bool {
    let off = |v: &str| {
        matches!(
            v.to_ascii_lowercase().as_str(),
            "off" | "false" | "0" | "no"
        )
    };
    user.iter().any(|(n, v)| match kind {
        ServerKind::Postgres => n == "ssl" && off(v),
        ServerKind::Mariadb => {
            let n = normalize(kind, n);
            n == "skip_ssl" || (n == "ssl" && off(v))
        }
    })
}

/// What keeps a managed server without `tls` plain, unless the user's own
/// settings speak of TLS: MariaDB from 11.4 serves TLS by default with a
/// certificate it makes itself, and a client that prefers TLS (dbsweep's
/// default, as the mysql client's) then encrypts every statement — half the
/// read-only throughput of the same build in plain, measured — where the
/// older builds it is compared with run plain. PostgreSQL's `ssl` is off
/// by default.
pub(super) fn plain(
    kind: ServerKind,
    user: &[(String, String)],
) -> Vec<(&'static str, &'static str)> {
    let speaks_of_tls = |n: &str| {
        let n = normalize(kind, n);
        n == "ssl" || n == "skip_ssl" || n.starts_with("ssl_")
    };
    match kind {
        ServerKind::Mariadb if !user.iter().any(|(n, _)| speaks_of_tls(n)) => {
            vec![("skip-ssl", "")]
        }
        _ => Vec::new(),
    }
}

/// The URL query under which a client verifies the server against the CA.
pub(super) fn url_query(kind: ServerKind, f: &TlsFiles) -> String {
    let ca: String =
        url::form_urlencoded::byte_serialize(f.ca.as_os_str().as_encoded_bytes()).collect();
    match kind {
        ServerKind::Postgres => format!("sslmode=verify-full&sslrootcert={ca}"),
        ServerKind::Mariadb => format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn makes_a_ca_and_a_loopback_certificate_once_with_a_private_key() {
        let t = tempfile::tempdir().unwrap();
        let f = ensure(t.path(), None).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&f.key), 0o600);
        assert_eq!(mode(&f.cert), 0o644);
        let cert = fs::read_to_string(&f.cert).unwrap();
        assert!(cert.starts_with("-----BEGIN CERTIFICATE-----"));
        // Kept: a second start serves the same certificate.
        assert_eq!(ensure(t.path(), None).unwrap(), f);
        assert_eq!(fs::read_to_string(&f.cert).unwrap(), cert);
        let q = url_query(ServerKind::Postgres, &f);
        assert!(q.starts_with("sslmode=verify-full&sslrootcert=%2F"), "{q}");
        let s = settings(ServerKind::Mariadb, &f);
        assert_eq!(s[2], ("ssl_key".to_string(), f.key.display().to_string()));
    }

    #[test]
    fn a_variant_turns_tls_off_with_the_engines_own_setting() {
        let set = |n: &str, v: &str| vec![(n.to_string(), v.to_string())];
        assert!(turned_off(ServerKind::Postgres, &set("ssl", "off")));
        assert!(!turned_off(ServerKind::Postgres, &set("ssl", "on")));
        assert!(turned_off(ServerKind::Mariadb, &set("skip_ssl", "")));
        assert!(turned_off(ServerKind::Mariadb, &set("ssl", "0")));
        assert!(!turned_off(
            ServerKind::Mariadb,
            &set("max_connections", "0")
        ));
    }

    #[test]
    fn a_mariadb_without_tls_is_kept_plain_unless_the_user_speaks_of_tls() {
        let set = |n: &str, v: &str| vec![(n.to_string(), v.to_string())];
        assert_eq!(plain(ServerKind::Mariadb, &[]), [("skip-ssl", "")]);
        assert_eq!(
            plain(ServerKind::Mariadb, &set("max_connections", "10")),
            [("skip-ssl", "")]
        );
        // The user's own certificate, or their own word on TLS, wins.
        assert!(plain(ServerKind::Mariadb, &set("ssl_cert", "/c.pem")).is_empty());
        assert!(plain(ServerKind::Mariadb, &set("ssl", "1")).is_empty());
        assert!(plain(ServerKind::Mariadb, &set("skip_ssl", "")).is_empty());
        assert!(plain(ServerKind::Postgres, &[]).is_empty());
    }
}
