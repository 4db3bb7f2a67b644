//! A tiny HTTP/1.1 server for pages that are read, not written: one
//! listener thread, one request per connection, `GET` and `HEAD` only. It
//! serves the live feed of `run --prometheus` and a study's `prometheus =
//! "ADDR"`, which a scraper reads once every few seconds.
//!
//! std's sockets rather than a web framework: a scrape is one small
//! request, served in turn, and the feed must cost the run nothing — no
//! runtime, no pool of threads, nothing to wake between scrapes (the
//! thread sleeps in `accept`). The listener is bound by [`Server::bind`]
//! before anything else of the run starts, so a port already taken is bad
//! input, said before any work.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// What a handler is asked: the request's path (without its query) and
/// its `Accept` header (empty when absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub path: String,
    pub accept: String,
}

/// What a handler answers: a page, or `None` for "not found".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub content_type: String,
    pub body: Vec<u8>,
}

/// Answers a request; called on the server's thread.
pub type Handler = Box<dyn Fn(&Request) -> Option<Page> + Send>;

/// How long a client may take to send its request or read the answer
/// before the server moves on to the next one.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(5);

/// The most a request's line and headers may hold.
const MAX_HEAD: usize = 16 * 1024;

/// A running server; stopped when dropped.
pub struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Binds `addr` and serves `handler` from a thread of its own, at a
    /// background priority. Fails as binding fails (the address taken,
    /// not this machine's, a port that needs privileges).
    pub fn bind(addr: SocketAddr, handler: Handler) -> io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("http".into())
                .spawn(move || {
                    super::priority::background_thread();
                    for conn in listener.incoming() {
                        if stop.load(Ordering::Acquire) {
                            break;
                        }
                        if let Ok(conn) = conn {
                            // A client that misbehaves loses its answer,
                            // never the server.
                            let _ = serve(conn, &handler);
                        }
                    }
                })?
        };
        Ok(Server {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// Where it listens (with the port the system chose for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // Wakes the thread from `accept`: it sees the flag and ends.
        let mut wake = self.addr;
        if wake.ip().is_unspecified() {
            wake.set_ip(match wake {
                SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            });
        }
        if TcpStream::connect_timeout(&wake, Duration::from_secs(1)).is_ok() {
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }
}

/// Parses an address to listen on as people write it: `HOST:PORT` (an
/// IP address or a name this machine resolves, such as `localhost`), or
/// `:PORT` for every interface. The error says what was expected.
pub fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    let expected = "expected HOST:PORT, e.g. 127.0.0.1:9187 (or :9187 for every interface)";
    let text = text.trim();
    if let Some(port) = text.strip_prefix(':') {
        return port
            .parse::<u16>()
            .map(|p| SocketAddr::from(([0, 0, 0, 0], p)))
            .map_err(|_| format!("'{port}' is not a port number: {expected}"));
    }
    if let Ok(a) = text.parse::<SocketAddr>() {
        return Ok(a);
    }
    let Some((host, port)) = text.rsplit_once(':') else {
        return Err(format!("no port in '{text}': {expected}"));
    };
    let Ok(port) = port.parse::<u16>() else {
        return Err(format!("'{port}' is not a port number: {expected}"));
    };
    // `localhost` resolves to ::1 and 127.0.0.1: the IPv4 one, which
    // every scraper's `localhost` reaches.
    let all: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve '{host}': {e}; {expected}"))?
        .collect();
    all.iter()
        .find(|a| a.is_ipv4())
        .or(all.first())
        .copied()
        .ok_or_else(|| format!("'{host}' resolves to no address; {expected}"))
}

/// Reads one request from `conn` and answers it.
fn serve(mut conn: TcpStream, handler: &Handler) -> io::Result<()> {
    conn.set_read_timeout(Some(CLIENT_TIMEOUT))?;
    conn.set_write_timeout(Some(CLIENT_TIMEOUT))?;
    let head = read_head(&mut conn)?;
    let answer = answer(&head, handler);
    conn.write_all(&answer)?;
    conn.flush()
}

/// The request's line and headers, up to the blank line.
fn read_head(conn: &mut TcpStream) -> io::Result<String> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && !buf.windows(2).any(|w| w == b"\n\n") {
        let n = conn.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() > MAX_HEAD {
            break;
        }
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// The whole response to a request's head: status line, headers, body.
pub fn answer(head: &str, handler: &Handler) -> Vec<u8> {
    let mut lines = head.lines();
    let mut first = lines.next().unwrap_or("").split_whitespace();
    let (method, target) = (first.next().unwrap_or(""), first.next().unwrap_or(""));
    let accept = lines
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_once(':'))
        .filter(|(k, _)| k.trim().eq_ignore_ascii_case("accept"))
        .map(|(_, v)| v.trim().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let text = "text/plain; charset=utf-8";
    let (status, page) = match method {
        "GET" | "HEAD" => {
            let path = target.split('?').next().unwrap_or("").to_string();
            match handler(&Request { path, accept }) {
                Some(p) => ("200 OK", p),
                None => ("404 Not Found", plain(text, "Not found: try /metrics\n")),
            }
        }
        "" => ("400 Bad Request", plain(text, "Bad request\n")),
        _ => (
            "405 Method Not Allowed",
            plain(text, "Only GET and HEAD are served\n"),
        ),
    };
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n{}\r\n",
        page.content_type,
        page.body.len(),
        if status.starts_with("405") {
            "Allow: GET, HEAD\r\n"
        } else {
            ""
        }
    )
    .into_bytes();
    if method != "HEAD" {
        out.extend_from_slice(&page.body);
    }
    out
}

fn plain(content_type: &str, body: &str) -> Page {
    Page {
        content_type: content_type.into(),
        body: body.as_bytes().to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hello() -> Handler {
        Box::new(|r: &Request| {
            (r.path == "/metrics").then(|| Page {
                content_type: "text/plain".into(),
                body: format!("accept={}\n", r.accept).into_bytes(),
            })
        })
    }

    #[test]
    fn answers_get_head_and_refuses_the_rest() {
        let h = hello();
        let get = String::from_utf8(answer(
            "GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nAccept: text/plain\r\n\r\n",
            &h,
        ))
        .unwrap();
        assert!(get.starts_with("HTTP/1.1 200 OK\r\n"), "{get}");
        assert!(get.contains("Content-Length: 18\r\n"), "{get}");
        assert!(get.ends_with("\r\n\r\naccept=text/plain\n"), "{get}");
        let head = String::from_utf8(answer("HEAD /metrics HTTP/1.1\r\n\r\n", &h)).unwrap();
        assert!(head.contains("Content-Length: 8\r\n"), "{head}");
        assert!(head.ends_with("\r\n\r\n"), "{head}");
        let missing = String::from_utf8(answer("GET /x HTTP/1.1\r\n\r\n", &h)).unwrap();
        assert!(missing.starts_with("HTTP/1.1 404 "), "{missing}");
        let post = String::from_utf8(answer("POST /metrics HTTP/1.1\r\n\r\n", &h)).unwrap();
        assert!(post.starts_with("HTTP/1.1 405 "), "{post}");
        assert!(post.contains("Allow: GET, HEAD\r\n"), "{post}");
    }

    #[test]
    fn listen_addresses_as_people_write_them() {
        assert_eq!(
            parse_listen("127.0.0.1:9187").unwrap(),
            "127.0.0.1:9187".parse().unwrap()
        );
        assert_eq!(
            parse_listen(":9187").unwrap(),
            "0.0.0.0:9187".parse().unwrap()
        );
        assert_eq!(
            parse_listen("[::1]:9187").unwrap(),
            "[::1]:9187".parse().unwrap()
        );
        assert_eq!(
            parse_listen("localhost:9187").unwrap(),
            "127.0.0.1:9187".parse().unwrap()
        );
        assert!(parse_listen("9187").unwrap_err().contains("no port"));
        assert!(parse_listen("127.0.0.1:http")
            .unwrap_err()
            .contains("not a port number"));
        assert!(parse_listen(":70000").unwrap_err().contains("port"));
    }

    #[test]
    fn serves_over_tcp_and_stops_when_dropped() {
        let server = Server::bind("127.0.0.1:0".parse().unwrap(), hello()).unwrap();
        let addr = server.local_addr();
        let mut c = TcpStream::connect(addr).unwrap();
        c.write_all(b"GET /metrics HTTP/1.1\r\nAccept: application/openmetrics-text\r\n\r\n")
            .unwrap();
        let mut got = String::new();
        c.read_to_string(&mut got).unwrap();
        assert!(
            got.ends_with("accept=application/openmetrics-text\n"),
            "{got}"
        );
        // A taken port is refused while it serves.
        let taken = Server::bind(addr, hello()).err().unwrap();
        assert_eq!(taken.kind(), io::ErrorKind::AddrInUse);
        drop(server);
        assert!(TcpStream::connect(addr).is_err());
    }
}
