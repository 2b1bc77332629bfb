//! The editor's connection over stdin and stdout: an
//! `lsp_server::Connection` (the same channels and `Message`s the server
//! loop uses), whose frames are read here rather than by
//! `Connection::stdio()`. That reader ends the server at the first frame
//! it cannot parse and allocates whatever Content-Length a frame declares
//! (`Content-Length: 99999999999` grew it to 10 GB); this one reads with
//! bounded memory (`frame`), answers a frame it cannot read with a
//! JSON-RPC error whose id is null, tells the editor's log why (never what
//! the frame held), and reads on.
//!
//! Threads as `lsp-server` has them: a reader that stops after `exit` or
//! at the end of input, a writer that stops when every sender of the
//! connection is gone. A null id cannot be an `lsp_server::Response`, so
//! the reader hands skipped frames to the writer on a channel of their own.

mod frame;

use std::io::{self, BufRead, Write};
use std::thread::{self, JoinHandle};

use crossbeam_channel::{Receiver, Sender, bounded, select};
use lsp_server::{Connection, Message, Notification};
use lsp_types::notification::{LogMessage, Notification as _};
use lsp_types::{LogMessageParams, MessageType};

pub use frame::MAX_FRAME;
use frame::{Frame, FrameReader, Skipped};

/// The reader and writer threads of [`stdio`].
pub(crate) struct IoThreads {
    reader: JoinHandle<io::Result<()>>,
    writer: JoinHandle<io::Result<()>>,
}

impl IoThreads {
    /// Waits for the reader (which ends after `exit` or at the end of
    /// input), then for the writer to flush what the server sent.
    pub(crate) fn join(self) -> Result<(), crate::Error> {
        match self.reader.join() {
            Ok(read) => read.map_err(crate::Error::Read)?,
            Err(panic) => std::panic::resume_unwind(panic),
        }
        match self.writer.join() {
            Ok(written) => Ok(written?),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

/// A connection over this process's stdin and stdout.
pub(crate) fn stdio() -> io::Result<(Connection, IoThreads)> {
    // Rendezvous channels, as lsp-server's: a flood of messages (or of bad
    // frames) waits on the editor reading its answers, not in memory.
    let (writer_sender, writer_receiver) = bounded::<Message>(0);
    let (skipped_sender, skipped_receiver) = bounded::<Skipped>(0);
    let (reader_sender, reader_receiver) = bounded::<Message>(0);
    let writer = thread::Builder::new()
        .name("LspServerWriter".to_owned())
        .spawn(move || write_frames(io::stdout().lock(), &writer_receiver, skipped_receiver))?;
    let reader = thread::Builder::new()
        .name("LspServerReader".to_owned())
        .spawn(move || read_frames(io::stdin().lock(), &reader_sender, &skipped_sender))?;
    let connection = Connection {
        sender: writer_sender,
        receiver: reader_receiver,
    };
    Ok((connection, IoThreads { reader, writer }))
}

/// Hands each message read to the server and each skipped frame to the
/// writer, until `exit`, the end of input, or the server has stopped.
fn read_frames(input: impl BufRead, messages: &Sender<Message>, skipped: &Sender<Skipped>) -> io::Result<()> {
    let mut frames = FrameReader::new(input);
    while let Some(frame) = frames.next_frame()? {
        match frame {
            Frame::Message(message) => {
                let exit = matches!(&message, Message::Notification(n) if n.method == "exit");
                // A server that stopped reads nothing more: not an error.
                if messages.send(message).is_err() || exit {
                    return Ok(());
                }
            }
            Frame::Skipped(reason) => {
                if skipped.send(reason).is_err() {
                    return Ok(());
                }
            }
        }
    }
    Ok(())
}

/// Writes the server's messages and the answers to skipped frames until
/// the server's senders are all gone.
fn write_frames(mut out: impl Write, messages: &Receiver<Message>, skipped: Receiver<Skipped>) -> io::Result<()> {
    let mut skipped = skipped;
    loop {
        select! {
            recv(messages) -> message => match message {
                Ok(message) => message.write(&mut out)?,
                Err(_) => break,
            },
            recv(skipped) -> reason => match reason {
                Ok(reason) => write_skipped(&mut out, reason)?,
                // The reader is done; the server may still send.
                Err(_) => skipped = crossbeam_channel::never(),
            },
        }
    }
    for reason in skipped.try_iter() {
        write_skipped(&mut out, reason)?;
    }
    Ok(())
}

/// A line in the editor's log, then (unless the frame was a response) the
/// JSON-RPC error that answers it.
fn write_skipped(out: &mut impl Write, reason: Skipped) -> io::Result<()> {
    let log = LogMessageParams {
        typ: MessageType::WARNING,
        message: format!("monform lsp skipped a message it could not read: {reason}"),
    };
    Message::from(Notification::new(LogMessage::METHOD.into(), log)).write(out)?;
    let Some(code) = reason.code() else {
        return Ok(());
    };
    let answer = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": code, "message": reason.to_string() },
    });
    let text = answer.to_string();
    write!(out, "Content-Length: {}\r\n\r\n{text}", text.len())?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reader and writer over bytes: bad frames between good ones are
    /// answered with id null, the good ones reach the server, `exit` ends.
    #[test]
    fn skipped_frames_are_answered_and_reading_goes_on() {
        let good = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
        let exit = r#"{"jsonrpc":"2.0","method":"exit"}"#;
        let after = r#"{"jsonrpc":"2.0","method":"never-read"}"#;
        let input = format!(
            "Content-Length: 9\r\n\r\n{{\"secret1\
             Content-Type: x\r\n\r\n{{\"secret2\":1}}\
             Content-Length: {}\r\n\r\n{good}\
             Content-Length: {}\r\n\r\n{exit}\
             Content-Length: {}\r\n\r\n{after}",
            good.len(),
            exit.len(),
            after.len()
        );
        let (message_sender, message_receiver) = crossbeam_channel::unbounded();
        let (skipped_sender, skipped_receiver) = crossbeam_channel::unbounded();
        read_frames(input.as_bytes(), &message_sender, &skipped_sender).expect("read");
        drop((message_sender, skipped_sender));
        let methods: Vec<String> = message_receiver
            .iter()
            .map(|m| match m {
                Message::Request(r) => r.method,
                Message::Notification(n) => n.method,
                Message::Response(_) => "response".into(),
            })
            .collect();
        assert_eq!(methods, ["initialize", "exit"]);

        let (writer_sender, writer_receiver) = crossbeam_channel::unbounded::<Message>();
        drop(writer_sender);
        let mut out = Vec::new();
        write_frames(&mut out, &writer_receiver, skipped_receiver).expect("write");
        let out = String::from_utf8(out).expect("UTF-8");
        assert!(!out.contains("secret"), "{out}");
        let answers: Vec<serde_json::Value> = out
            .split("Content-Length: ")
            .filter_map(|frame| frame.split_once("\r\n\r\n"))
            .map(|(_, body)| serde_json::from_str(body).expect("JSON"))
            .collect();
        assert_eq!(answers.len(), 4, "{out}");
        assert_eq!(answers[0]["method"], "window/logMessage");
        assert_eq!(
            answers[1],
            serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "the body is not JSON (line 1, column 9)"}})
        );
        assert_eq!(answers[3]["error"]["message"], "the header has no Content-Length");
    }
}
