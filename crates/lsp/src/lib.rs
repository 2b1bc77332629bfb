//! The language server behind `monform lsp`: the project's own rules in
//! the editor, over its unsaved text.
//!
//! It speaks LSP 3.17 over stdio with **`lsp-server`**, the transport
//! rust-analyzer is built on: a synchronous loop over crossbeam channels,
//! no async runtime. The work here is synchronous too (the loader is
//! CPU-bound, parallel with rayon), so a loop that owns the documents and
//! hands loads to one worker thread is all the server needs; a
//! tower-style async framework would put a runtime and `Send` futures
//! around code that never awaits. `lsp-types` (0.95, whose URIs are
//! `url::Url` with file-path conversion) gives the messages.
//!
//! - `documents`: the open documents' text (full or incremental sync) and
//!   positions (UTF-16) both ways;
//! - `analysis`: the project (the folder holding `monform.toml`) loaded by
//!   `monform_config` with the unsaved text in place of the disk's, and
//!   every diagnostic `validate` gives, by file;
//! - `server`: the loop, debounced loads on a worker thread;
//! - `transport`: stdin and stdout as an `lsp_server::Connection`, read
//!   with bounded memory; a frame it cannot read is answered with a
//!   JSON-RPC error and skipped, not the end of the server.
//!
//! The CLI's `monform lsp` only calls [`run_stdio`]; the benchmark serves
//! an in-memory connection with [`serve`].

mod actions;
mod analysis;
mod completion;
mod cursor;
mod documents;
mod features;
mod fields;
mod hover;
mod index;
mod live;
mod navigate;
mod rename;
mod server;
mod transport;

pub use transport::MAX_FRAME;

use lsp_types::{
    ServerCapabilities, TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions,
};

/// Why the server stopped.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the editor's connection failed: {0}")]
    Protocol(#[from] lsp_server::ProtocolError),
    #[error("the editor closed the connection")]
    Disconnected,
    #[error("malformed message: {0}")]
    Params(#[from] serde_json::Error),
    #[error("unknown method {0}")]
    UnknownMethod(String),
    #[error("{0}")]
    Refused(String),
    #[error("cannot write to the editor: {0}")]
    Io(#[from] std::io::Error),
    #[error("cannot read from the editor: {0}")]
    Read(std::io::Error),
}

/// What the server can do, as told to the editor in `initialize`.
pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::INCREMENTAL),
            save: Some(TextDocumentSyncSaveOptions::Supported(true)),
            ..TextDocumentSyncOptions::default()
        })),
        ..features::capabilities()
    }
}

/// How the server loads projects.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// The environment to load (`--env`, `MONFORM_ENV`); without one, each
    /// environment the project declares, as `monform validate` does.
    pub environment: Option<String>,
}

/// Serves one editor over standard input and output until it says `exit`
/// (or closes its end). A frame it cannot read (no Content-Length, over
/// [`MAX_FRAME`] bytes, not a JSON-RPC message) is answered with an error
/// and skipped.
pub fn run_stdio(config: Config) -> Result<(), Error> {
    let (connection, io_threads) = transport::stdio()?;
    serve(&connection, config)?;
    drop(connection);
    io_threads.join()?;
    Ok(())
}

/// Serves one editor over `connection` (stdio, or in memory for the
/// benchmark): the `initialize` handshake, then every message until `exit`.
pub fn serve(connection: &lsp_server::Connection, config: Config) -> Result<(), Error> {
    let capabilities = serde_json::to_value(capabilities())?;
    connection.initialize(capabilities)?;
    server::Server::new(connection, config).run()
}
