//! A loopback webhook receiver: answers 200 to every request and keeps
//! each request (drift reports of `monform reconcile`, Slack messages).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// One request as received.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    /// Header names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body, `Value::Null` when it was not JSON.
    pub body: Value,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == &name.to_ascii_lowercase())
            .map(|(_, value)| value.as_str())
    }
}

/// A loopback HTTP server that answers 200 and keeps each request.
pub struct Receiver {
    pub url: String,
    pub requests: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    pub fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let mut reader = BufReader::new(stream);
                let mut request_line = String::new();
                if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
                    continue;
                }
                let mut parts = request_line.split_whitespace();
                let method = parts.next().unwrap_or_default().to_owned();
                let path = parts.next().unwrap_or_default().to_owned();
                let mut headers = Vec::new();
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some((key, value)) = line.split_once(':') {
                        let key = key.trim().to_ascii_lowercase();
                        if key == "content-length" {
                            length = value.trim().parse().unwrap_or(0);
                        }
                        headers.push((key, value.trim().to_owned()));
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let body = serde_json::from_slice::<Value>(&body).unwrap_or(Value::Null);
                sink.lock().unwrap().push(Received {
                    method,
                    path,
                    headers,
                    body,
                });
                let _ = reader
                    .get_mut()
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
            }
        });
        Receiver { url, requests }
    }

    /// Every request received so far.
    pub fn received(&self) -> Vec<Received> {
        self.requests.lock().unwrap().clone()
    }

    /// The reconciler's WEBHOOK reports (the emulator's own alert notifications have no formatVersion).
    pub fn reports(&self) -> Vec<Value> {
        self.received()
            .into_iter()
            .map(|r| r.body)
            .filter(|b| b.get("formatVersion").is_some())
            .collect()
    }
}
