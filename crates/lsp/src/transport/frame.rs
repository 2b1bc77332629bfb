//! Frames from the editor: `Content-Length: N` header lines, an empty line,
//! N bytes of JSON-RPC. Read with bounded memory whatever the input: a
//! frame's body is at most [`MAX_FRAME`] bytes, a header line at most
//! [`MAX_HEADER_LINE`], and nothing else is kept.
//!
//! A frame that cannot be read is returned as [`Frame::Skipped`] (the
//! caller answers and logs it) and reading goes on:
//!
//! - a bad body (not JSON, not a message) was read to its declared length,
//!   so the next frame starts right after it;
//! - a bad header (no Content-Length, a non-numeric or too large one, a
//!   malformed or too long line) leaves the next frame's start unknown: the
//!   bytes are skipped up to the next `Content-Length: N` line, which is
//!   where reading resumes. That line cannot occur inside a valid JSON body
//!   (a JSON string holds no raw CR or LF, and outside strings JSON has no
//!   such word), so an honest frame over the limit is skipped exactly, and
//!   a lying `Content-Length: 99999999999` costs the bytes up to the next
//!   frame, not 99999999999 of them (draining the declared length would
//!   swallow every later message of a client that lied, and closing would
//!   end the editor's session for one bad frame).

use std::collections::BTreeMap;
use std::io::{self, BufRead, ErrorKind, Read};

use lsp_server::{ErrorCode, Message};
use serde::de::IgnoredAny;

/// The largest body read: far above any real message (a 10 MB file opened
/// in the editor is about 10 MB of JSON), far below what would hurt.
pub const MAX_FRAME: u64 = 64 * 1024 * 1024;

/// The longest header line kept: real ones (`Content-Length: 123`,
/// `Content-Type: application/vscode-jsonrpc; charset=utf-8`) are under 60.
pub(crate) const MAX_HEADER_LINE: usize = 4096;

/// What a read gives.
#[derive(Debug)]
pub(crate) enum Frame {
    Message(Message),
    Skipped(Skipped),
}

/// Why a frame was skipped. The wording never quotes the frame: its bytes
/// are the editor's (or an attacker's), and may hold a document's secrets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Skipped {
    #[error("a header line is longer than {MAX_HEADER_LINE} bytes")]
    LongHeaderLine,
    #[error("a header line is not `Name: value` ended by CRLF")]
    BadHeaderLine,
    #[error("the header has no Content-Length")]
    NoContentLength,
    #[error("the Content-Length is not a number, or is given twice")]
    BadContentLength,
    #[error("the Content-Length {0} is over the limit of {MAX_FRAME} bytes (64 MiB)")]
    TooLarge(u64),
    #[error("the body is not JSON (line {line}, column {column})")]
    NotJson { line: usize, column: usize },
    #[error("the body is JSON but not a JSON-RPC request or notification")]
    NotRequest,
    #[error("the body is a malformed JSON-RPC response")]
    BadResponse,
}

impl Skipped {
    /// The JSON-RPC error code the editor is answered with (id null, as
    /// JSON-RPC 2.0 says when the id cannot be known): Parse error for
    /// bytes that are not a JSON message, Invalid Request for JSON that is
    /// not a request. A response is never answered (two peers answering
    /// each other's malformed answers would never stop).
    pub(crate) fn code(self) -> Option<i32> {
        match self {
            Skipped::NotRequest => Some(ErrorCode::InvalidRequest as i32),
            Skipped::BadResponse => None,
            _ => Some(ErrorCode::ParseError as i32),
        }
    }

    /// Whether the frame's body was read to its end (the next frame starts
    /// right after it), rather than lost with the header.
    fn body_read(self) -> bool {
        matches!(
            self,
            Skipped::NotJson { .. } | Skipped::NotRequest | Skipped::BadResponse
        )
    }
}

/// Reads frames from `input` (stdin, or bytes in a test).
pub(crate) struct FrameReader<R> {
    input: R,
    /// After a bad header: the next frame starts at the next
    /// `Content-Length: N` line, not here.
    lost: bool,
    line: Vec<u8>,
}

enum Line {
    Eof,
    TooLong,
    Read,
}

impl<R: BufRead> FrameReader<R> {
    pub(crate) fn new(input: R) -> FrameReader<R> {
        FrameReader {
            input,
            lost: false,
            line: Vec::new(),
        }
    }

    /// The next frame, or `None` when the editor closed its end (at a frame
    /// boundary or in the middle of one: either way there is no more).
    pub(crate) fn next_frame(&mut self) -> io::Result<Option<Frame>> {
        let mut length = None;
        if std::mem::take(&mut self.lost) {
            match self.resync()? {
                Some(found) => length = Some(found),
                None => return Ok(None),
            }
        }
        Ok(match self.frame(length)? {
            None => None,
            Some(Ok(message)) => Some(Frame::Message(message)),
            Some(Err(skipped)) => {
                self.lost = !skipped.body_read();
                Some(Frame::Skipped(skipped))
            }
        })
    }

    /// One frame, its header's Content-Length already read as `length`
    /// when resynchronised.
    fn frame(&mut self, mut length: Option<u64>) -> io::Result<Option<Result<Message, Skipped>>> {
        if let Some(length) = length
            && length > MAX_FRAME
        {
            return Ok(Some(Err(Skipped::TooLarge(length))));
        }
        loop {
            match self.header_line()? {
                Line::Eof => return Ok(None),
                Line::TooLong => return Ok(Some(Err(Skipped::LongHeaderLine))),
                Line::Read => {}
            }
            let Some(line) = self.line.strip_suffix(b"\r\n") else {
                return Ok(Some(Err(Skipped::BadHeaderLine)));
            };
            if line.is_empty() {
                break;
            }
            let Some(colon) = line.iter().position(|&b| b == b':') else {
                return Ok(Some(Err(Skipped::BadHeaderLine)));
            };
            let (name, value) = (&line[..colon], &line[colon + 1..]);
            if name.is_empty() || name.iter().any(|b| b.is_ascii_whitespace()) {
                return Ok(Some(Err(Skipped::BadHeaderLine)));
            }
            if name.eq_ignore_ascii_case(b"content-length") {
                let Some(value) = parse_length(value).filter(|_| length.is_none()) else {
                    return Ok(Some(Err(Skipped::BadContentLength)));
                };
                // Refused here, before the rest of the header: the editor
                // hears of it at once, and nothing is sized by it.
                if value > MAX_FRAME {
                    return Ok(Some(Err(Skipped::TooLarge(value))));
                }
                length = Some(value);
            }
            // Other headers (Content-Type) change nothing: UTF-8 JSON is all LSP has.
        }
        let Some(length) = length else {
            return Ok(Some(Err(Skipped::NoContentLength)));
        };
        // At most MAX_FRAME; the pages are touched only as bytes arrive.
        let mut body = Vec::with_capacity(usize::try_from(length).unwrap_or(0));
        (&mut self.input).take(length).read_to_end(&mut body)?;
        if body.len() as u64 != length {
            return Ok(None);
        }
        Ok(Some(parse(&body)))
    }

    /// Reads one line, up to and including its `\n`, into `self.line`;
    /// stops at [`MAX_HEADER_LINE`] bytes without reading on (the rest is
    /// skipped by [`resync`](Self::resync)).
    fn header_line(&mut self) -> io::Result<Line> {
        self.line.clear();
        loop {
            let available = fill_buf(&mut self.input)?;
            if available.is_empty() {
                return Ok(Line::Eof);
            }
            let end = available.iter().position(|&b| b == b'\n').map(|at| at + 1);
            let take = end.unwrap_or(available.len());
            if self.line.len() + take > MAX_HEADER_LINE {
                return Ok(Line::TooLong);
            }
            self.line.extend_from_slice(&available[..take]);
            self.input.consume(take);
            if end.is_some() {
                return Ok(Line::Read);
            }
        }
    }

    /// Skips bytes up to and including the next `Content-Length: N` line
    /// (any case, spaces around N), and returns N; `None` at the end of
    /// input. Byte by byte through the reader's buffer: nothing is kept.
    fn resync(&mut self) -> io::Result<Option<u64>> {
        let mut state = Scan::Name(0);
        loop {
            let available = fill_buf(&mut self.input)?;
            if available.is_empty() {
                return Ok(None);
            }
            let mut used = 0;
            for &byte in available {
                used += 1;
                state = state.step(byte);
                if let Scan::Found(length) = state {
                    self.input.consume(used);
                    return Ok(Some(length));
                }
            }
            self.input.consume(used);
        }
    }
}

/// `fill_buf`, retried when a signal interrupts it (as `read_line` does).
fn fill_buf<R: BufRead>(input: &mut R) -> io::Result<&[u8]> {
    loop {
        match input.fill_buf() {
            Err(error) if error.kind() == ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
            Ok(_) => break,
        }
    }
    // Asked again rather than returned from the loop (which the borrow
    // checker refuses): a filled buffer is handed back without a read.
    input.fill_buf()
}

/// A Content-Length's value: ASCII digits between optional spaces. Too
/// many digits saturate, to be refused as too large, not as non-numeric.
fn parse_length(value: &[u8]) -> Option<u64> {
    let digits = value.trim_ascii();
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        digits
            .iter()
            .fold(0u64, |n, &d| n.saturating_mul(10).saturating_add(u64::from(d - b'0'))),
    )
}

fn parse(body: &[u8]) -> Result<Message, Skipped> {
    let error = match serde_json::from_slice::<Message>(body) {
        // A request whose method is not a string reads as a response with
        // neither result nor error (serde's untagged enum ignores the
        // method), which the server would drop unanswered: refused as an
        // invalid request instead, so the editor hears of it.
        Ok(Message::Response(response))
            if response.result.is_none() && response.error.is_none() && keys(body).contains_key("method") =>
        {
            return Err(Skipped::NotRequest);
        }
        Ok(message) => return Ok(message),
        Err(error) => error,
    };
    if error.is_syntax() || error.is_eof() || error.is_io() {
        return Err(Skipped::NotJson {
            line: error.line(),
            column: error.column(),
        });
    }
    // Valid JSON that is not a message: a response (no method, a result or
    // an error) is not answered. Only the keys are kept to tell.
    let keys = keys(body);
    if !keys.contains_key("method") && (keys.contains_key("result") || keys.contains_key("error")) {
        return Err(Skipped::BadResponse);
    }
    Err(Skipped::NotRequest)
}

/// The keys of a JSON object (none for anything else), values unkept.
fn keys(body: &[u8]) -> BTreeMap<String, IgnoredAny> {
    serde_json::from_slice(body).unwrap_or_default()
}

/// Where [`FrameReader::resync`] is in `content-length: N\r\n`.
#[derive(Clone, Copy)]
enum Scan {
    /// This many bytes of `content-length:` matched.
    Name(usize),
    Space,
    Digits(u64),
    TrailingSpace(u64),
    Cr(u64),
    Found(u64),
}

const NAME: &[u8] = b"content-length:";

impl Scan {
    fn step(self, byte: u8) -> Scan {
        let lower = byte.to_ascii_lowercase();
        match self {
            Scan::Name(matched) if lower == NAME[matched] => {
                if matched + 1 == NAME.len() {
                    Scan::Space
                } else {
                    Scan::Name(matched + 1)
                }
            }
            Scan::Space if byte == b' ' || byte == b'\t' => Scan::Space,
            Scan::Space if byte.is_ascii_digit() => Scan::Digits(u64::from(byte - b'0')),
            Scan::Digits(n) if byte.is_ascii_digit() => {
                Scan::Digits(n.saturating_mul(10).saturating_add(u64::from(byte - b'0')))
            }
            Scan::Digits(n) | Scan::TrailingSpace(n) if byte == b' ' || byte == b'\t' => Scan::TrailingSpace(n),
            Scan::Digits(n) | Scan::TrailingSpace(n) if byte == b'\r' => Scan::Cr(n),
            Scan::Cr(n) if byte == b'\n' => Scan::Found(n),
            // A mismatch may start the name again: `c` occurs only first
            // in it, so no longer partial match can be lost.
            _ if lower == NAME[0] => Scan::Name(1),
            _ => Scan::Name(0),
        }
    }
}

#[cfg(test)]
mod tests;
