//! Which process listens on a local port or unix socket: the listening
//! socket's inode from `/proc/net/tcp`, `tcp6` or `unix`, then the process
//! that holds a descriptor on `socket:[INODE]` (`/proc/PID/fd`). A server
//! given by URL is measured only if found this way; nothing is guessed.

use std::net::Ipv6Addr;
use std::path::Path;

use crate::driver::{Target, TargetKind};

/// TCP state LISTEN in `/proc/net/tcp*`.
const TCP_LISTEN: &str = "0A";

/// `__SO_ACCEPTCON`: a listening unix socket in `/proc/net/unix`.
const UNIX_LISTENING: u32 = 0x0001_0000;

/// The inodes of sockets listening on `port` on a loopback or wildcard
/// address, from the text of `/proc/net/tcp` or `/proc/net/tcp6`.
pub fn tcp_listeners(text: &str, port: u16) -> Vec<u64> {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_ascii_whitespace().collect();
            let (addr, p) = f.get(1)?.split_once(':')?;
            if f.get(3)? != &TCP_LISTEN || u16::from_str_radix(p, 16).ok()? != port {
                return None;
            }
            local(addr).then(|| f.get(9)?.parse().ok())?
        })
        .collect()
}

/// A `/proc/net/tcp*` address (hex, in the kernel's byte order) that a
/// client on this machine reaches: loopback or the wildcard.
fn local(hex: &str) -> bool {
    match hex.len() {
        8 => {
            // One little-endian u32 on the machines this runs on.
            let Ok(v) = u32::from_str_radix(hex, 16) else {
                return false;
            };
            let ip = std::net::Ipv4Addr::from(v.swap_bytes());
            ip.is_loopback() || ip.is_unspecified()
        }
        32 => {
            // Four little-endian u32s.
            let mut bytes = [0u8; 16];
            for i in 0..4 {
                let Ok(w) = u32::from_str_radix(&hex[i * 8..i * 8 + 8], 16) else {
                    return false;
                };
                bytes[i * 4..i * 4 + 4].copy_from_slice(&w.swap_bytes().to_be_bytes());
            }
            let ip = Ipv6Addr::from(bytes);
            ip.is_loopback()
                || ip.is_unspecified()
                || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        _ => false,
    }
}

/// The inodes of unix sockets listening at `path`, from the text of
/// `/proc/net/unix`.
pub fn unix_listeners(text: &str, path: &Path) -> Vec<u64> {
    unix_listeners_where(text, |p| p == path)
}

/// The inodes of unix sockets listening at a path `wanted` accepts (a
/// PostgreSQL socket `.s.PGSQL.PORT` in whatever directory).
pub fn unix_listeners_where(text: &str, wanted: impl Fn(&Path) -> bool) -> Vec<u64> {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_ascii_whitespace().collect();
            let flags = u32::from_str_radix(f.get(3)?, 16).ok()?;
            let p = f.get(7)?;
            (flags & UNIX_LISTENING != 0 && wanted(Path::new(p))).then(|| f.get(6)?.parse().ok())?
        })
        .collect()
}

/// The processes under `proc` holding a descriptor on one of `inodes`,
/// lowest pid first. Processes whose descriptors cannot be read (another
/// user's, without root) are not seen.
pub fn holders(proc: &Path, inodes: &[u64]) -> Vec<u32> {
    if inodes.is_empty() {
        return Vec::new();
    }
    let wanted: Vec<String> = inodes.iter().map(|i| format!("socket:[{i}]")).collect();
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir(proc) else {
        return out;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(e.path().join("fd")) else {
            continue;
        };
        let holds = fds.flatten().any(|fd| {
            std::fs::read_link(fd.path())
                .ok()
                .and_then(|t| t.to_str().map(|s| wanted.iter().any(|w| w == s)))
                .unwrap_or(false)
        });
        if holds {
            out.push(pid);
        }
    }
    out.sort_unstable();
    out
}

/// The process listening where `target` connects, if it runs on this
/// machine and can be seen: (pid, how it was found), or why not.
pub fn find_listener(proc: &Path, target: &Target) -> Result<(u32, String), String> {
    // A PostgreSQL socket may be given as its directory.
    let (addr, socket) = match &target.kind {
        TargetKind::Mysql(a) => (a, a.socket.clone()),
        TargetKind::Postgres(a) => (a, a.postgres_socket()),
        _ => return Err("not a server on the network".into()),
    };
    let (inodes, how) = match &socket {
        Some(path) => {
            let text = std::fs::read_to_string(proc.join("net/unix"))
                .map_err(|e| format!("cannot read /proc/net/unix: {e}"))?;
            (
                unix_listeners(&text, path),
                format!("listening on {}", path.display()),
            )
        }
        None => {
            let local = matches!(
                addr.host.as_str(),
                "127.0.0.1" | "localhost" | "::1" | "[::1]"
            ) || addr.host.starts_with("127.");
            if !local {
                return Err(format!(
                    "the server is at {}, not on this machine's loopback: its processes cannot be measured from here",
                    addr.host
                ));
            }
            let mut inodes = Vec::new();
            for f in ["net/tcp", "net/tcp6"] {
                if let Ok(text) = std::fs::read_to_string(proc.join(f)) {
                    inodes.extend(tcp_listeners(&text, addr.port));
                }
            }
            (inodes, format!("listening on {}:{}", addr.host, addr.port))
        }
    };
    if inodes.is_empty() {
        return Err(format!(
            "no listening socket found for {} on this machine",
            how.trim_start_matches("listening on ")
        ));
    }
    match holders(proc, &inodes).first() {
        Some(&pid) => Ok((pid, how)),
        None => Err(format!(
            "the process {how} could not be seen (another user's, and dbsweep is not root)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let p = format!("{}/tests/fixtures/proc/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
    }

    #[test]
    fn finds_tcp_listeners_on_local_addresses() {
        let v4 = fixture("net-tcp");
        assert_eq!(
            tcp_listeners(&v4, 3306),
            [123456],
            "not the established one"
        );
        assert_eq!(tcp_listeners(&v4, 8080), [222222], "the wildcard counts");
        assert!(tcp_listeners(&v4, 5432).is_empty());
        assert_eq!(tcp_listeners(&fixture("net-tcp6"), 5432), [654321]);
    }

    #[test]
    fn remote_addresses_are_not_local() {
        assert!(local("0100007F") && local("00000000"));
        assert!(!local("0101A8C0")); // 192.168.1.1
        assert!(local("00000000000000000000000001000000")); // ::1
        assert!(local("0000000000000000FFFF00000100007F")); // ::ffff:127.0.0.1
        assert!(!local("0000000000000000FFFF00000101A8C0"));
    }

    #[test]
    fn finds_unix_listeners_by_path() {
        let u = fixture("net-unix");
        assert_eq!(
            unix_listeners(&u, Path::new("/tmp/dbsweep-mysql/mysqld.sock")),
            [777001],
            "the connected one is not listening"
        );
        assert!(unix_listeners(&u, Path::new("/tmp/other.sock")).is_empty());
    }

    #[test]
    fn finds_the_process_holding_a_socket() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let text = std::fs::read_to_string("/proc/net/tcp").unwrap();
        let inodes = tcp_listeners(&text, port);
        assert_eq!(inodes.len(), 1, "{port}");
        assert_eq!(holders(Path::new("/proc"), &inodes), [std::process::id()]);
    }

    #[test]
    fn a_postgres_socket_given_as_its_directory_is_found() {
        let dir = std::env::temp_dir().join(format!("dbsweep-sock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(".s.PGSQL.6543");
        let _ = std::fs::remove_file(&file);
        let _l = std::os::unix::net::UnixListener::bind(&file).unwrap();
        let url = format!("postgres://u:p@localhost:6543/db?socket={}", dir.display());
        let target = Target::parse(&url).unwrap();
        let found = find_listener(Path::new("/proc"), &target);
        std::fs::remove_dir_all(&dir).unwrap();
        let (pid, how) = found.unwrap();
        assert_eq!(pid, std::process::id());
        assert!(how.ends_with(".s.PGSQL.6543"), "{how}");
    }
}
