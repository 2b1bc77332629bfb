//! Errors that say which request failed and why.

use std::time::Duration;

use serde_json::{Map, Value};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The API answered with an error status.
    #[error("{} {} failed: {} {}: {}{}", .0.method, .0.path, .0.status, .0.reason, .0.message, format_attributes(&.0.attributes))]
    Status(Box<StatusError>),
    /// No answer: connection refused, reset or dropped, or a timeout.
    #[error("{method} {path} failed: {detail}")]
    Transport {
        method: String,
        path: String,
        detail: String,
        connect: bool,
    },
    /// An answer that is not what the API documents.
    #[error("{method} {path}: unexpected response: {detail}")]
    Decode {
        method: String,
        path: String,
        detail: String,
    },
    /// Configuration that makes requests impossible (bad URL, missing key).
    #[error("{0}")]
    Config(String),
}

/// What an error response said.
#[derive(Debug)]
pub struct StatusError {
    pub method: String,
    pub path: String,
    pub status: u16,
    pub reason: String,
    pub message: String,
    pub attributes: Map<String, Value>,
    /// `Retry-After` on 429 and 503.
    pub retry_after: Option<Duration>,
}

fn format_attributes(attributes: &Map<String, Value>) -> String {
    if attributes.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = attributes
        .iter()
        .map(|(k, v)| format!("{k}: {}", v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
        .collect();
    format!(" ({})", parts.join("; "))
}

impl Error {
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Status(e) => Some(e.status),
            _ => None,
        }
    }

    /// Worth trying again: rate limited, a server error, or no answer.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Status(e) => e.status == 429 || e.status == 408 || e.status >= 500,
            Error::Transport { .. } => true,
            _ => false,
        }
    }

    /// The request certainly had no effect (refused before it was sent, or rate limited).
    pub fn certainly_not_applied(&self) -> bool {
        match self {
            Error::Status(e) => e.status == 429 || (400..500).contains(&e.status),
            Error::Transport { connect, .. } => *connect,
            _ => false,
        }
    }

    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::Status(e) => e.retry_after,
            _ => None,
        }
    }
}
