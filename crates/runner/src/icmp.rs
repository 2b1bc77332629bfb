//! ICMP checks: `pingCount` echo requests over an unprivileged ICMP socket
//! (`SOCK_DGRAM`, allowed when the process's group is inside
//! `net.ipv4.ping_group_range`). Where the kernel refuses one, the run is
//! an error that says so (no raw sockets, no external `ping`).
//!
//! Choices: pings go one after the other, each waiting at most 1 s; the
//! response time is the average latency of the answered pings; LATENCY
//! assertions read `property` avg (default), min or max; JSON_RESPONSE
//! paths read `{packetLoss, sent, received, latency: {avg, min, max}}`.
//! Packet loss is judged against the check's thresholds (see `runner`).

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Probe, assertions};

const PER_PING: Duration = Duration::from_secs(1);

fn checksum(packet: &[u8]) -> u16 {
    let mut sum = 0u32;
    for pair in packet.chunks(2) {
        let word = u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]);
        sum += u32::from(word);
    }
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// An unprivileged ICMP echo socket for `ip`'s family.
fn ping_socket(ip: IpAddr) -> std::io::Result<tokio::net::UdpSocket> {
    use std::os::fd::FromRawFd;
    let (domain, protocol) = match ip {
        IpAddr::V4(_) => (libc::AF_INET, libc::IPPROTO_ICMP),
        IpAddr::V6(_) => (libc::AF_INET6, libc::IPPROTO_ICMPV6),
    };
    // SAFETY: socket(2) has no memory-safety preconditions; the descriptor
    // it returns (checked below) is owned by the UdpSocket from here on.
    let fd = unsafe {
        libc::socket(
            domain,
            libc::SOCK_DGRAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            protocol,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh, valid descriptor nobody else owns.
    let socket = unsafe { std::net::UdpSocket::from_raw_fd(fd) };
    tokio::net::UdpSocket::from_std(socket)
}

pub async fn probe(check: &Value) -> Probe {
    let request = &check["request"];
    let host = request["hostname"].as_str().unwrap_or_default();
    let count = request["pingCount"].as_u64().unwrap_or(10).clamp(1, 50) as u16;
    let want_v6 = request["ipFamily"] == "IPv6";
    let error = |message: String| Probe {
        error: Some(message),
        ..Probe::default()
    };
    let addresses: Vec<SocketAddr> = match tokio::net::lookup_host((host, 0)).await {
        Ok(found) => found.collect(),
        Err(e) => return error(format!("cannot resolve {host}: {e}")),
    };
    let Some(ip) = addresses
        .iter()
        .map(SocketAddr::ip)
        .find(|ip| ip.is_ipv6() == want_v6)
        .or_else(|| addresses.first().map(SocketAddr::ip))
    else {
        return error(format!("{host} has no address"));
    };
    let socket = match ping_socket(ip) {
        Ok(s) => s,
        Err(e) => {
            return error(format!(
                "cannot open an unprivileged ICMP socket ({e}); the kernel allows them only to groups \
                 inside net.ipv4.ping_group_range, e.g. `sysctl -w net.ipv4.ping_group_range=\"0 2147483647\"`"
            ));
        }
    };
    if let Err(e) = socket.connect(SocketAddr::new(ip, 0)).await {
        return error(format!("cannot reach {ip}: {e}"));
    }
    let echo_type = if ip.is_ipv6() { 128u8 } else { 8u8 };
    let mut latencies = Vec::new();
    let mut buffer = [0u8; 1500];
    for sequence in 0..count {
        let mut packet = vec![echo_type, 0, 0, 0, 0, 0];
        packet.extend_from_slice(&sequence.to_be_bytes());
        packet.extend_from_slice(b"monform-runner");
        let sum = checksum(&packet);
        packet[2..4].copy_from_slice(&sum.to_be_bytes());
        let sent = Instant::now();
        if let Err(e) = socket.send(&packet).await {
            return error(format!("cannot send a ping to {ip}: {e}"));
        }
        let deadline = tokio::time::Instant::now() + PER_PING;
        loop {
            match tokio::time::timeout_at(deadline, socket.recv(&mut buffer)).await {
                Ok(Ok(n)) if n >= 8 && buffer[6..8] == sequence.to_be_bytes() => {
                    latencies.push(sent.elapsed().as_secs_f64() * 1000.0);
                    break;
                }
                Ok(Ok(_)) => continue,
                Ok(Err(_)) | Err(_) => break,
            }
        }
    }
    let received = latencies.len();
    let loss = 100.0 * f64::from(count - received as u16) / f64::from(count);
    let round = |x: f64| (x * 1000.0).round() / 1000.0;
    let (avg, min, max) = if received == 0 {
        (None, None, None)
    } else {
        let sum: f64 = latencies.iter().sum();
        (
            Some(round(sum / received as f64)),
            latencies.iter().copied().reduce(f64::min).map(round),
            latencies.iter().copied().reduce(f64::max).map(round),
        )
    };
    let document = json!({
        "hostname": host, "address": ip.to_string(), "sent": count, "received": received,
        "packetLoss": loss, "latency": { "avg": avg, "min": min, "max": max },
    });
    let results = assertions::evaluate(&request["assertions"], |source, property| match source {
        "LATENCY" => match property {
            "min" => min.map(|v| json!(v)),
            "max" => max.map(|v| json!(v)),
            _ => avg.map(|v| json!(v)),
        },
        "JSON_RESPONSE" => assertions::json_path(&document, property),
        _ => None,
    });
    Probe {
        response_time: avg.unwrap_or(0.0),
        packet_loss: Some(loss),
        details: document,
        assertions: results,
        ..Probe::default()
    }
}
