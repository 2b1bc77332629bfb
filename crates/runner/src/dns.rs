//! DNS checks: one query over UDP or TCP to `nameServer:port` (default: the
//! first `nameserver` of `/etc/resolv.conf`, port 53), with assertions on
//! RESPONSE_CODE, TEXT_ANSWER, JSON_ANSWER and RESPONSE_TIME. Messages are
//! built and read by hickory-proto; the exchange itself (one datagram, or
//! one length-prefixed message over TCP, RFC 1035 4.2) is a few lines of
//! tokio, so no resolver with caches and retries of its own gets between
//! the check and the name server it names.
//!
//! Choices: RESPONSE_CODE is the code's name (NOERROR, NXDOMAIN, ...);
//! TEXT_ANSWER is one line per answer, `name ttl IN TYPE data`, as dig
//! prints it; JSON_ANSWER is `{Status, Answer: [{name, type, TTL, data}]}`
//! as DNS-over-HTTPS JSON APIs answer (paths like `$.Answer[0].data`).
//! Without a RESPONSE_CODE assertion, a code other than NOERROR fails the run.

use std::str::FromStr;
use std::time::Instant;

use hickory_proto::op::{Message, Query};
use hickory_proto::rr::{Name, RData, Record, RecordType};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UdpSocket};

use super::{Probe, assertions};

/// The record types a DNS check may ask for (the model's `recordType`).
const QUERIED: [RecordType; 8] = [
    RecordType::A,
    RecordType::NS,
    RecordType::CNAME,
    RecordType::SOA,
    RecordType::MX,
    RecordType::TXT,
    RecordType::AAAA,
    RecordType::HTTPS,
];

fn type_name(rtype: RecordType) -> String {
    match rtype {
        RecordType::Unknown(code) => format!("TYPE{code}"),
        known => known.to_string(),
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

/// The query message for `name` and `rtype` (recursion desired, a random
/// id) and its id.
fn query(name: &str, rtype: RecordType) -> Result<(u16, Vec<u8>), String> {
    let name = Name::from_str(name).map_err(|e| format!("`{name}` is not a domain name: {e}"))?;
    let mut message = Message::query();
    message.metadata.recursion_desired = true;
    message.add_query(Query::query(name, rtype));
    let bytes = message
        .to_vec()
        .map_err(|e| format!("cannot write the DNS query: {e}"))?;
    Ok((message.metadata.id, bytes))
}

/// A parsed answer: the response code and the answer records.
#[derive(Debug, Clone, PartialEq)]
struct Answer {
    rcode: u16,
    /// (name, type, ttl, data)
    records: Vec<(String, RecordType, u32, String)>,
}

fn data_text(record: &Record) -> String {
    match &record.data {
        // Types hickory does not know: their bytes, as hex.
        RData::Unknown { rdata, .. } => rdata.anything.iter().map(|b| format!("{b:02x}")).collect(),
        data => data.to_string(),
    }
}

fn parse(raw: &[u8], id: u16) -> Result<Answer, String> {
    let message = Message::from_vec(raw).map_err(|e| e.to_string())?;
    if message.metadata.id != id {
        return Err("the DNS answer does not match the query id".to_owned());
    }
    Ok(Answer {
        rcode: u16::from(message.metadata.response_code),
        records: message
            .answers
            .iter()
            .map(|r| (r.name.to_string(), r.record_type(), r.ttl, data_text(r)))
            .collect(),
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
    let Some(rtype) = RecordType::from_str(kind).ok().filter(|t| QUERIED.contains(t)) else {
        return Probe::error(format!("`{kind}` is not a record type the runner queries"));
    };
    let Some(server) = request["nameServer"]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .or_else(system_name_server)
    else {
        return Probe::error("no name server: set request.nameServer (none in /etc/resolv.conf)");
    };
    let port = request["port"]
        .as_u64()
        .and_then(|p| u16::try_from(p).ok())
        .unwrap_or(53);
    let tcp = request["protocol"] == "TCP";
    let (id, message) = match query(name, rtype) {
        Ok(m) => m,
        Err(e) => return Probe::error(e),
    };
    let started = Instant::now();
    let raw = match exchange(&server, port, tcp, &message).await {
        Ok(raw) => raw,
        Err(e) => return Probe::error(format!("DNS query to {server}:{port} failed: {e}")),
    };
    let elapsed = started.elapsed().as_secs_f64() * 1000.0;
    let answer = match parse(&raw, id) {
        Ok(a) => a,
        Err(e) => return Probe::error(format!("bad DNS answer from {server}:{port}: {e}")),
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
        "Answer": answer.records.iter().map(|(n, t, ttl, d)| json!({ "name": n, "type": u16::from(*t), "TTL": ttl, "data": d })).collect::<Vec<_>>(),
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
