//! A loopback webhook receiver: answers 200 to every request and keeps
//! each JSON body (drift reports of `monform reconcile`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// A loopback HTTP server that answers 200 and keeps each JSON body.
pub struct Receiver {
    pub url: String,
    pub bodies: Arc<Mutex<Vec<Value>>>,
}

impl Receiver {
    pub fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&bodies);
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let mut reader = BufReader::new(stream);
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = value.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                if let Ok(value) = serde_json::from_slice::<Value>(&body) {
                    sink.lock().unwrap().push(value);
                }
                let _ = reader
                    .get_mut()
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
            }
        });
        Receiver { url, bodies }
    }

    /// The reconciler's reports (the emulator's own alert notifications have no formatVersion).
    pub fn reports(&self) -> Vec<Value> {
        let bodies = self.bodies.lock().unwrap();
        bodies
            .iter()
            .filter(|b| b.get("formatVersion").is_some())
            .cloned()
            .collect()
    }
}
