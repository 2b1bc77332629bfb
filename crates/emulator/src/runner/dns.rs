//! DNS checks: one query (written here, RFC 1035) over UDP or TCP to
//! `nameServer:port` (default: the first `nameserver` of
//! `/etc/resolv.conf`, port 53), with assertions on RESPONSE_CODE,
//! TEXT_ANSWER, JSON_ANSWER and RESPONSE_TIME.
//!
//! Choices: RESPONSE_CODE is the code's name (NOERROR, NXDOMAIN, ...);
//! TEXT_ANSWER is one line per answer, `name ttl IN TYPE data`, as dig
//! prints it; JSON_ANSWER is `{Status, Answer: [{name, type, TTL, data}]}`
//! as DNS-over-HTTPS JSON APIs answer (paths like `$.Answer[0].data`).
//! Without a RESPONSE_CODE assertion, a code other than NOERROR fails the run.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::time::Instant;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UdpSocket};

use super::{Probe, assertions};

fn record_type(name: &str) -> Option<u16> {
    Some(match name {
        "A" => 1,
        "NS" => 2,
        "CNAME" => 5,
        "SOA" => 6,
        "MX" => 15,
        "TXT" => 16,
        "AAAA" => 28,
        "HTTPS" => 65,
        _ => return None,
    })
}

fn type_name(code: u16) -> String {
    match code {
        1 => "A".into(),
        2 => "NS".into(),
        5 => "CNAME".into(),
        6 => "SOA".into(),
        15 => "MX".into(),
        16 => "TXT".into(),
        28 => "AAAA".into(),
        65 => "HTTPS".into(),
        other => format!("TYPE{other}"),
    }
}

fn rcode_name(code: u16) -> String {
    match code {
        0 => "NOERROR".into(),
        1 => "FORMERR".into(),
        2 => "SERVFAIL".into(),
        3 => "NXDOMAIN".into(),
        4 => "NOTIMP".into(),
        5 => "REFUSED".into(),
        other => format!("RCODE{other}"),
    }
}

/// The query message for `name` and `qtype`.
pub fn query(id: u16, name: &str, qtype: u16) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.trim_end_matches('.').split('.').filter(|l| !l.is_empty()) {
        if label.len() > 63 {
            return Err(format!("`{label}` is longer than 63 characters"));
        }
        out.push(label.len() as u8);
        out.extend_from_slice(label.as_bytes());
    }
    out.push(0);
    out.extend_from_slice(&qtype.to_be_bytes());
    out.extend_from_slice(&1u16.to_be_bytes());
    Ok(out)
}

fn u16_at(message: &[u8], at: usize) -> Result<u16, String> {
    message
        .get(at..at + 2)
        .map(|b| u16::from_be_bytes([b[0], b[1]]))
        .ok_or_else(|| "truncated DNS message".to_owned())
}

/// Reads a (possibly compressed) name at `at`; returns it and the offset after it.
fn name_at(message: &[u8], mut at: usize) -> Result<(String, usize), String> {
    let mut labels = Vec::new();
    let mut end = None;
    for _ in 0..128 {
        let len = *message.get(at).ok_or("truncated DNS name")? as usize;
        if len == 0 {
            return Ok((
                if labels.is_empty() {
                    ".".to_owned()
                } else {
                    labels.join(".") + "."
                },
                end.unwrap_or(at + 1),
            ));
        }
        if len & 0xC0 == 0xC0 {
            let pointer = (u16_at(message, at)? & 0x3FFF) as usize;
            end.get_or_insert(at + 2);
            at = pointer;
            continue;
        }
        let label = message.get(at + 1..at + 1 + len).ok_or("truncated DNS label")?;
        labels.push(String::from_utf8_lossy(label).into_owned());
        at += 1 + len;
    }
    Err("DNS name compression loops".to_owned())
}

fn rdata_text(message: &[u8], rtype: u16, start: usize, len: usize) -> Result<String, String> {
    let data = message.get(start..start + len).ok_or("truncated DNS record")?;
    Ok(match (rtype, len) {
        (1, 4) => Ipv4Addr::new(data[0], data[1], data[2], data[3]).to_string(),
        (28, 16) => {
            let mut octets = [0u8; 16];
            octets.copy_from_slice(data);
            Ipv6Addr::from(octets).to_string()
        }
        (2 | 5, _) => name_at(message, start)?.0,
        (15, _) => format!("{} {}", u16_at(message, start)?, name_at(message, start + 2)?.0),
        (16, _) => {
            let mut text = String::new();
            let mut i = 0;
            while i < data.len() {
                let n = data[i] as usize;
                text.push_str(&String::from_utf8_lossy(data.get(i + 1..i + 1 + n).unwrap_or_default()));
                i += 1 + n;
            }
            text
        }
        (6, _) => {
            let (mname, next) = name_at(message, start)?;
            let (rname, next) = name_at(message, next)?;
            let numbers: Vec<String> = (0..5)
                .map(|i| {
                    message
                        .get(next + 4 * i..next + 4 * i + 4)
                        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]).to_string())
                        .unwrap_or_default()
                })
                .collect();
            format!("{mname} {rname} {}", numbers.join(" "))
        }
        _ => data.iter().map(|b| format!("{b:02x}")).collect(),
    })
}

/// A parsed answer: the response code and the answer records.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub rcode: u16,
    /// (name, type, ttl, data)
    pub records: Vec<(String, u16, u32, String)>,
}

pub fn parse(message: &[u8], id: u16) -> Result<Answer, String> {
    if u16_at(message, 0)? != id {
        return Err("the DNS answer does not match the query id".to_owned());
    }
    let flags = u16_at(message, 2)?;
    let questions = u16_at(message, 4)?;
    let answers = u16_at(message, 6)?;
    let mut at = 12;
    for _ in 0..questions {
        at = name_at(message, at)?.1 + 4;
    }
    let mut records = Vec::new();
    for _ in 0..answers {
        let (name, next) = name_at(message, at)?;
        let rtype = u16_at(message, next)?;
        let ttl = message
            .get(next + 4..next + 8)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
            .ok_or("truncated DNS record")?;
        let len = u16_at(message, next + 8)? as usize;
        let data = rdata_text(message, rtype, next + 10, len)?;
        records.push((name, rtype, ttl, data));
        at = next + 10 + len;
    }
    Ok(Answer {
        rcode: flags & 0x000F,
        records,
    })
}

fn system_name_server() -> Option<String> {
    let text = std::fs::read_to_string("/etc/resolv.conf").ok()?;
    text.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        (words.next() == Some("nameserver")).then(|| words.next().map(str::to_owned))?
    })
}

async fn exchange(server: &str, port: u16, tcp: bool, message: &[u8]) -> std::io::Result<Vec<u8>> {
    let address = if server.contains(':') && !server.starts_with('[') {
        format!("[{server}]:{port}")
    } else {
        format!("{server}:{port}")
    };
    if tcp {
        let mut stream = TcpStream::connect(&address).await?;
        stream.write_all(&(message.len() as u16).to_be_bytes()).await?;
        stream.write_all(message).await?;
        let mut len = [0u8; 2];
        stream.read_exact(&mut len).await?;
        let mut answer = vec![0u8; u16::from_be_bytes(len) as usize];
        stream.read_exact(&mut answer).await?;
        Ok(answer)
    } else {
        let bind = if address.starts_with('[') {
            "[::]:0"
        } else {
            "0.0.0.0:0"
        };
        let socket = UdpSocket::bind(bind).await?;
        socket.connect(&address).await?;
        socket.send(message).await?;
        let mut buffer = vec![0u8; 4096];
        let n = socket.recv(&mut buffer).await?;
        buffer.truncate(n);
        Ok(buffer)
    }
}

pub async fn probe(check: &Value) -> Probe {
    let request = &check["request"];
    let name = request["query"].as_str().unwrap_or_default();
    let kind = request["recordType"].as_str().unwrap_or("A");
    let error = |message: String| Probe {
        error: Some(message),
        ..Probe::default()
    };
    let Some(qtype) = record_type(kind) else {
        return error(format!("`{kind}` is not a record type the runner queries"));
    };
    let Some(server) = request["nameServer"]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .or_else(system_name_server)
    else {
        return error("no name server: set request.nameServer (none in /etc/resolv.conf)".to_owned());
    };
    let port = request["port"]
        .as_u64()
        .and_then(|p| u16::try_from(p).ok())
        .unwrap_or(53);
    let tcp = request["protocol"] == "TCP";
    let id = (uuid::Uuid::new_v4().as_u128() & 0xFFFF) as u16;
    let message = match query(id, name, qtype) {
        Ok(m) => m,
        Err(e) => return error(e),
    };
    let started = Instant::now();
    let raw = match exchange(&server, port, tcp, &message).await {
        Ok(raw) => raw,
        Err(e) => return error(format!("DNS query to {server}:{port} failed: {e}")),
    };
    let elapsed = started.elapsed().as_secs_f64() * 1000.0;
    let answer = match parse(&raw, id) {
        Ok(a) => a,
        Err(e) => return error(format!("bad DNS answer from {server}:{port}: {e}")),
    };
    let code = rcode_name(answer.rcode);
    let text = answer
        .records
        .iter()
        .map(|(n, t, ttl, d)| format!("{n} {ttl} IN {} {d}", type_name(*t)))
        .collect::<Vec<_>>()
        .join("\n");
    let document = json!({
        "Status": answer.rcode,
        "Answer": answer.records.iter().map(|(n, t, ttl, d)| json!({ "name": n, "type": t, "TTL": ttl, "data": d })).collect::<Vec<_>>(),
    });
    let results = assertions::evaluate(&request["assertions"], |source, property| match source {
        "RESPONSE_CODE" => Some(json!(code)),
        "TEXT_ANSWER" => Some(json!(text)),
        "JSON_ANSWER" => assertions::json_path(&document, property),
        "RESPONSE_TIME" => Some(json!((elapsed * 100.0).round() / 100.0)),
        _ => None,
    });
    let asserts_code = results.iter().any(|a| a.source == "RESPONSE_CODE");
    Probe {
        response_time: elapsed,
        failure: (answer.rcode != 0 && !asserts_code).then(|| format!("{name} {kind}: {code}")),
        details: json!({ "nameServer": server, "port": port, "responseCode": code, "textAnswer": text, "answer": document }),
        assertions: results,
        ..Probe::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_and_answers_round_trip() {
        let mut message = query(7, "example.com", 1).unwrap();
        message[2] |= 0x80;
        message[7] = 1;
        message.extend_from_slice(&[0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 10, 0, 0, 1]);
        let answer = parse(&message, 7).unwrap();
        assert_eq!(answer.rcode, 0);
        assert_eq!(
            answer.records,
            vec![("example.com.".to_owned(), 1, 60, "10.0.0.1".to_owned())]
        );
        assert!(parse(&message, 8).is_err());
    }
}
