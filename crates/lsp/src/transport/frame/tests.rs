//! Each bad shape of frame, then a good message after it that is still read.

use std::io::{BufReader, Cursor, Read};

use super::*;

const GOOD: &str = r#"{"jsonrpc":"2.0","id":7,"method":"textDocument/hover","params":{}}"#;

fn framed(body: &str) -> String {
    format!("Content-Length: {}\r\n\r\n{body}", body.len())
}

/// Everything `input` gives, to the end.
fn frames(input: impl BufRead) -> Vec<Frame> {
    let mut reader = FrameReader::new(input);
    let mut frames = Vec::new();
    while let Some(frame) = reader.next_frame().expect("in-memory input reads") {
        frames.push(frame);
        assert!(frames.len() < 100, "no progress");
    }
    frames
}

/// `bad`, then a good hover request: one frame skipped for `reason`, the
/// request read whole.
fn check(bad: impl AsRef<[u8]>, reason: Skipped) {
    let bad = bad.as_ref();
    let input = [bad, framed(GOOD).as_bytes()].concat();
    let frames = frames(input.as_slice());
    assert!(
        matches!(frames.as_slice(), [Frame::Skipped(r), Frame::Message(Message::Request(request))]
            if *r == reason && request.method == "textDocument/hover" && request.id == 7.into()),
        "{}: {frames:#?}",
        String::from_utf8_lossy(bad)
    );
}

#[test]
fn good_messages_are_read_in_turn() {
    let exit = r#"{"jsonrpc":"2.0","method":"exit"}"#;
    // A response to the server's request, its result null.
    let answer = r#"{"jsonrpc":"2.0","id":"a","result":null}"#;
    let input = format!(
        "{}{}content-length:{}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{exit}",
        framed(GOOD),
        framed(answer),
        exit.len()
    );
    let frames = frames(input.as_bytes());
    assert!(
        matches!(frames.as_slice(), [
            Frame::Message(Message::Request(_)),
            Frame::Message(Message::Response(_)),
            Frame::Message(Message::Notification(n)),
        ] if n.method == "exit"),
        "{frames:#?}"
    );
}

#[test]
fn a_body_that_is_not_json_is_skipped() {
    check(
        framed("{\"jsonrpc\": \"2.0\", "),
        Skipped::NotJson { line: 1, column: 19 },
    );
    check(framed("not json"), Skipped::NotJson { line: 1, column: 2 });
    // JSON is UTF-8.
    check(
        b"Content-Length: 3\r\n\r\n\"\xff\"",
        Skipped::NotJson { line: 1, column: 2 },
    );
}

#[test]
fn json_that_is_not_a_message_is_skipped() {
    check(framed("[1, 2, 3]"), Skipped::NotRequest);
    check(framed(r#"{"jsonrpc":"2.0","id":1,"method":42}"#), Skipped::NotRequest);
    check(framed("{}"), Skipped::NotRequest);
    // Not answered: a response.
    let response = framed(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"?"}}"#);
    check(response, Skipped::BadResponse);
    assert_eq!(Skipped::BadResponse.code(), None);
    assert_eq!(Skipped::NotRequest.code(), Some(-32600));
    assert_eq!(Skipped::NoContentLength.code(), Some(-32700));
}

#[test]
fn a_header_without_content_length_is_skipped_with_its_body() {
    check(
        "Content-Type: application/vscode-jsonrpc\r\n\r\n{\"a\": 1}",
        Skipped::NoContentLength,
    );
    // A stray empty line is a header without Content-Length.
    check("\r\n", Skipped::NoContentLength);
    // The body's own text names the header, escaped as JSON must: not a frame.
    check(
        "Content-Type: x\r\n\r\n{\"text\": \"Content-Length: 5\\r\\n\\r\\nhello\"}",
        Skipped::NoContentLength,
    );
}

#[test]
fn a_content_length_that_is_not_a_number_is_skipped() {
    check("Content-Length: twelve\r\n\r\n{\"a\": 1}", Skipped::BadContentLength);
    check("Content-Length: -1\r\n\r\n", Skipped::BadContentLength);
    check("Content-Length: \r\n\r\n{}", Skipped::BadContentLength);
    check(
        "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
        Skipped::BadContentLength,
    );
}

#[test]
fn malformed_header_lines_are_skipped() {
    check("Content-Length 2\r\n\r\n{}", Skipped::BadHeaderLine);
    check("Content-Length: 2\n\n{}", Skipped::BadHeaderLine);
    check(": 2\r\n\r\n{}", Skipped::BadHeaderLine);
}

#[test]
fn a_content_length_over_the_limit_is_refused_unread() {
    // The body is not there: what follows is the next frame, found again.
    check(
        "Content-Length: 99999999999\r\n\r\n{\"jsonrpc\":",
        Skipped::TooLarge(99_999_999_999),
    );
    check(
        format!("Content-Length: {}\r\n\r\n", MAX_FRAME + 1),
        Skipped::TooLarge(MAX_FRAME + 1),
    );
    // Digits past u64 saturate: too large, not "not a number".
    check(
        "Content-Length: 123456789012345678901234567890\r\n\r\n",
        Skipped::TooLarge(u64::MAX),
    );
}

/// An honest frame over the limit is skipped exactly, however large,
/// without keeping it (its bytes are made as they are read).
#[test]
fn a_real_frame_over_the_limit_is_skipped_to_its_end() {
    let start = r#"{"jsonrpc":"2.0","method":"x","params":""#;
    let head = format!("Content-Length: {}\r\n\r\n{start}", MAX_FRAME + 1);
    // The body: `start`, the filler, `"}`.
    let filler = MAX_FRAME + 1 - start.len() as u64 - 2;
    let tail = format!("\"}}{}", framed(GOOD));
    let input = Cursor::new(head)
        .chain(std::io::repeat(b'a').take(filler))
        .chain(Cursor::new(tail));
    let frames = frames(BufReader::new(input));
    assert!(
        matches!(
            frames.as_slice(),
            [
                Frame::Skipped(Skipped::TooLarge(_)),
                Frame::Message(Message::Request(_))
            ]
        ),
        "{frames:#?}"
    );
}

#[test]
fn a_header_line_is_bounded() {
    let long = format!("X-Padding: {}\r\n\r\n{{}}", "a".repeat(1 << 20));
    check(long, Skipped::LongHeaderLine);
    // Without a line end at all, through a small buffer: the line kept stays small.
    let input = BufReader::with_capacity(64, Cursor::new(format!("{}{}", "b".repeat(1 << 20), framed(GOOD))));
    let mut reader = FrameReader::new(input);
    assert!(matches!(
        reader.next_frame().expect("read"),
        Some(Frame::Skipped(Skipped::LongHeaderLine))
    ));
    assert!(
        reader.line.capacity() <= 2 * MAX_HEADER_LINE,
        "{}",
        reader.line.capacity()
    );
    assert!(matches!(reader.next_frame().expect("read"), Some(Frame::Message(_))));
    assert!(reader.next_frame().expect("read").is_none());
}

#[test]
fn the_end_of_input_ends_reading_wherever_it_comes() {
    assert!(frames(&b""[..]).is_empty());
    // In a header, in a body, while skipping.
    assert!(frames(&b"Content-Len"[..]).is_empty());
    assert!(frames(&b"Content-Length: 10\r\n\r\n{}"[..]).is_empty());
    let skipped = frames(&b"Content-Length: x\r\n\r\n{}Content-Length: 2"[..]);
    assert!(
        matches!(skipped.as_slice(), [Frame::Skipped(Skipped::BadContentLength)]),
        "{skipped:#?}"
    );
}

#[test]
fn what_is_skipped_is_never_quoted() {
    for reason in [
        Skipped::NotJson { line: 1, column: 2 },
        Skipped::NotRequest,
        Skipped::BadHeaderLine,
        Skipped::TooLarge(99_999_999_999),
    ] {
        let text = reason.to_string();
        assert!(!text.contains('"') && !text.contains('{'), "{text}");
    }
}
