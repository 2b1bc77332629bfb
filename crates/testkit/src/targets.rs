//! Loopback targets for checks and agents to call: plain threads, so
//! blocking tests need no runtime. Each records what it received.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// A port nothing listens on (bound, then released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("a free port")
        .local_addr()
        .expect("its address")
        .port()
}

/// What an [`HttpTarget`] answers.
pub struct Reply {
    /// The status line's rest, e.g. `200 OK`.
    pub status: &'static str,
    pub content_type: &'static str,
    pub body: String,
}

impl Reply {
    pub fn new(status: &'static str, content_type: &'static str, body: impl Into<String>) -> Reply {
        Reply {
            status,
            content_type,
            body: body.into(),
        }
    }
}

type Handler = dyn Fn(&str) -> Reply + Send + Sync;

/// An HTTP/1.1 server on `127.0.0.1`: one thread per connection, one
/// request per connection. The handler gets the request's head (request
/// line and headers, as sent) and may sleep to be slow.
pub struct HttpTarget {
    pub port: u16,
    requests: Arc<Mutex<Vec<String>>>,
}

impl HttpTarget {
    pub fn start(handler: impl Fn(&str) -> Reply + Send + Sync + 'static) -> HttpTarget {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().expect("its address").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        let handler: Arc<Handler> = Arc::new(handler);
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                let (seen, handler) = (Arc::clone(&seen), Arc::clone(&handler));
                std::thread::spawn(move || {
                    let head = read_head(&mut stream);
                    if let Ok(mut seen) = seen.lock() {
                        seen.push(head.clone());
                    }
                    let reply = handler(&head);
                    let _ = write!(
                        stream,
                        "HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                        reply.status,
                        reply.content_type,
                        reply.body.len(),
                        reply.body
                    );
                });
            }
        });
        HttpTarget { port, requests }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The heads of the requests received so far, in order.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }

    pub fn count(&self) -> usize {
        self.requests.lock().map(|r| r.len()).unwrap_or_default()
    }
}

/// The request line and headers, up to the blank line (a body is not read).
fn read_head(stream: &mut impl Read) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// The path of a request head (`/` when there is none).
pub fn path_of(head: &str) -> &str {
    head.split_whitespace().nth(1).unwrap_or("/")
}

/// A TCP server on `127.0.0.1` answering `reply` to whatever it reads,
/// then closing; returns its port.
pub fn tcp_target(reply: &'static [u8]) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().expect("its address").port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut buffer = [0u8; 64];
            let _ = stream.read(&mut buffer);
            let _ = stream.write_all(reply);
        }
    });
    port
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpStream;

    fn get(port: u16, path: &str) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(stream, "GET {path} HTTP/1.1\r\nHost: t\r\nX-Test: yes\r\n\r\n").unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        response
    }

    #[test]
    fn the_http_target_answers_by_path_and_records_each_head() {
        let target = HttpTarget::start(|head| match path_of(head) {
            "/ok" => Reply::new("200 OK", "application/json", r#"{"ok":true}"#),
            _ => Reply::new("404 Not Found", "text/plain", "no"),
        });
        let ok = get(target.port, "/ok");
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(ok.ends_with("\r\n\r\n{\"ok\":true}"), "{ok}");
        assert!(get(target.port, "/other").starts_with("HTTP/1.1 404"));
        let heads = target.requests();
        assert_eq!(heads.len(), 2);
        assert!(heads[0].starts_with("GET /ok HTTP/1.1\r\n") && heads[0].contains("X-Test: yes"));
        assert_eq!(target.url(), format!("http://127.0.0.1:{}", target.port));
    }

    #[test]
    fn the_tcp_target_answers_its_reply() {
        let port = tcp_target(b"pong");
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.write_all(b"ping").unwrap();
        let mut reply = String::new();
        stream.read_to_string(&mut reply).unwrap();
        assert_eq!(reply, "pong");
        assert_ne!(free_port(), 0);
    }
}
