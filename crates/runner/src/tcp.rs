//! TCP checks: connect to `hostname:port`, send `data` if given, read the
//! answer, and assert on RESPONSE_DATA and RESPONSE_TIME.
//!
//! Choices: the answer is read only when `data` is sent or an assertion
//! looks at RESPONSE_DATA; reading stops at end of stream, after 64 KiB, or
//! 200 ms after the last byte (the wait for the first byte is bounded only
//! by maxResponseTime). The response time is connect plus exchange.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{Probe, assertions};

const READ_LIMIT: usize = 64 * 1024;
const IDLE: Duration = Duration::from_millis(200);

pub async fn probe(check: &Value) -> Probe {
    let request = &check["request"];
    let host = request["hostname"].as_str().unwrap_or_default();
    let port = request["port"].as_u64().unwrap_or(0);
    let Ok(port) = u16::try_from(port) else {
        return Probe {
            error: Some(format!("{port} is not a TCP port")),
            ..Probe::default()
        };
    };
    let data = request["data"].as_str().filter(|d| !d.is_empty());
    let reads = data.is_some()
        || request["assertions"]
            .as_array()
            .is_some_and(|l| l.iter().any(|a| a["source"] == "RESPONSE_DATA"));
    let started = Instant::now();
    let mut stream = match TcpStream::connect((host, port)).await {
        Ok(s) => s,
        Err(e) => {
            return Probe {
                error: Some(format!("cannot connect to {host}:{port}: {e}")),
                ..Probe::default()
            };
        }
    };
    let mut received = Vec::new();
    if let Some(data) = data
        && let Err(e) = stream.write_all(data.as_bytes()).await
    {
        return Probe {
            error: Some(format!("cannot send to {host}:{port}: {e}")),
            ..Probe::default()
        };
    }
    if reads {
        let mut buffer = [0u8; 4096];
        loop {
            let read = if received.is_empty() {
                Ok(stream.read(&mut buffer).await)
            } else {
                tokio::time::timeout(IDLE, stream.read(&mut buffer)).await
            };
            match read {
                Ok(Ok(0)) | Err(_) => break,
                Ok(Ok(n)) => {
                    received.extend_from_slice(&buffer[..n]);
                    if received.len() >= READ_LIMIT {
                        break;
                    }
                }
                Ok(Err(e)) => {
                    return Probe {
                        error: Some(format!("reading from {host}:{port} failed: {e}")),
                        ..Probe::default()
                    };
                }
            }
        }
    }
    let elapsed = started.elapsed().as_secs_f64() * 1000.0;
    let text = String::from_utf8_lossy(&received).into_owned();
    let results = assertions::evaluate(&request["assertions"], |source, _| match source {
        "RESPONSE_DATA" => Some(json!(text)),
        "RESPONSE_TIME" => Some(json!((elapsed * 100.0).round() / 100.0)),
        _ => None,
    });
    Probe {
        response_time: elapsed,
        details: json!({ "hostname": host, "port": port, "responseData": text }),
        assertions: results,
        ..Probe::default()
    }
}
