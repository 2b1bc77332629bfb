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
//! - `analysis`: the project (the folder holding `monform.toml`) validated
//!   by `ops::validate` with the unsaved text in place of the disk's:
//!   every diagnostic `validate` gives, policies included, by file;
//! - `server`: the loop, debounced validations on a worker thread, each
//!   from the one before (`ops::revalidate`: the files changed, and the
//!   cross-file rules where they read them);
//! - `transport`: stdin and stdout as an `lsp_server::Connection`, read
//!   with bounded memory; a frame it cannot read is answered with a
//!   JSON-RPC error and skipped, not the end of the server.
//!
//! The CLI's `monform lsp` only calls [`run_stdio`]; [`serve`] serves any
//! connection (an in-memory one in a test); the benchmark runs the binary.
//!
//! # Code map
//!
//! The language server behind `monform lsp` (issue 31): LSP 3.17 over stdio
//! with `lsp-server` (rust-analyzer's transport: a synchronous loop over
//! crossbeam channels; the loader is synchronous and CPU-bound, so an async
//! framework would only add a runtime around code that never awaits) and
//! `lsp-types` 0.95 (URIs as `url::Url`, with file-path conversion).
//!
//! - `documents.rs`: the open documents' unsaved text (full or incremental
//!   sync) and positions both ways (LSP's UTF-16 columns, the loader's bytes).
//! - `analysis.rs`: a project (the nearest folder above a file holding
//!   `monform.toml`) validated by `monform_engine::ops::validate`, the one
//!   composition `monform validate` renders too: the open documents' text
//!   in place of the disk's, the files not typed in taken from the parse
//!   cache `monform` keeps (`.monform/cache/`); every environment, each
//!   finding once (named after the environments it is limited to), then
//!   `shared::shared_objects` across them; the linter; the Rego policies'
//!   findings and the policies that do not load. Every diagnostic at its
//!   range with its code, help (also in `data.help`) and related places,
//!   by file, in `validate --format json`'s order; every file loaded gets
//!   a list, empty when clean, so fixed problems clear.
//!   A keystroke is `ops::revalidate` from the analysis before it
//!   (`Analysis::reload`): the file typed in read again and the cross-file
//!   rules re-run where they read it (`monform_config::reload_file`; the
//!   linter on the file's checks and on the checks reading a group or
//!   channel of it that changed, the others' findings kept), the whole
//!   project validated again only when the engine cannot tell (an id
//!   another file reads, monform.toml, environments, policies...).
//! - `server.rs`: the loop. A change makes its project's validation due
//!   after a 30 ms pause in typing (`DEBOUNCE`), with the files changed
//!   since; validations run on one worker thread, one per project at a
//!   time, and the analysis goes with the job (brought up to date in place:
//!   at 100,000 checks a copy is hundreds of MB); a request waits for the
//!   running one. Its diagnostics are published to the open documents
//!   first (the one typed in), then to each closed file whose list changed
//!   (a file closed unsaved is read from the disk again; a save validates
//!   the whole project, reading files changed outside the editor).
//!   `crates/bench/src/lsp.rs` drives the real binary over stdio at
//!   100,000 checks in 1,000 files: open, keystroke, completion, rename,
//!   memory. A request needing positions waits for a change not yet
//!   validated, so it never reads an older text's spans.
//!
//! - `cursor.rs`: where the cursor is in YAML or TOML being typed (keys
//!   from the root, `[]` for a list item, key or value, flow collections,
//!   the resource's text), read from the lines around it: text being typed
//!   rarely parses.
//! - `fields.rs`: the model's published schema (`document_text`, with
//!   `forEach`, `forEachFile` and `environments`) walked by path and variant
//!   (`checkType`, an alert channel's `type`; every variant's fields while
//!   the resource names none): fields, enum values, `x-ref` targets, and a
//!   field's description, type, default and limits in Markdown.
//! - `completion.rs`: field names, enum values, logical ids of an `x-ref`
//!   field's section (with their `name`), addresses in `moved`/`import`/
//!   `removed`, `${var:` names (never their values), `${each.` members (the
//!   first `forEach` item's fields).
//! - `index.rs`: every occurrence of a logical id (definitions, references,
//!   declarations), narrowed to the id's characters, kept by file (a
//!   keystroke finds its file's again, the others stay); `navigate.rs`:
//!   definition (ids, `{ file: }` scripts inside the project, `${var:}`
//!   entries), references, document and workspace symbols.
//!
//! - `hover.rs`: a field's documentation (`fields.rs`); on a reference, the
//!   target's summary (address, type, name unless it holds a non-public
//!   `${env:}` value, where it is defined, how often it is referenced); on a
//!   definition, also the live facts. `live.rs`: the cache of live facts
//!   (remote id, what the next apply would do, drifted field paths, the last
//!   result's status and time), refreshed on a thread of its own after a load
//!   without errors, at most every 5 s per project, when `MONFORM_API_KEY`
//!   is set: the project opened through `ops::open` (its state, its API by
//!   the engine's rule with the account and rate limit; `local` is not
//!   started from an editor) over the same text, then `ops::plan` and
//!   `ops::status` (and the client's latest result for its time). The
//!   server reads no variable itself: the CLI passes them (`Config::env`).
//!   A PostgreSQL state's error is not shown (it may name the URL). Hover
//!   reads the cache and never waits; it keeps no value, so no secret can
//!   reach the editor.
//!
//! - `rename.rs`: a logical id renamed in one workspace edit: its
//!   definition and every reference in every file, and `{ from: OLD, to:
//!   NEW }` added to the `moved` list of the definition's file (a new item
//!   at the list's indentation, or a new `moved:` / `[[moved]]` at the end).
//!   A `forEach` definition is moved whole (the loader's `moved` moves every
//!   item). Existing `moved`/`import`/`removed` entries naming the old
//!   address are left: a `moved` leading to it chains on to the new one.
//!   Refused: an invalid id, or one the section already defines.
//!
//! - `actions.rs`: code actions. The did-you-mean fix of any diagnostic
//!   whose help (`data.help`) suggests a name (a quoted key or value keeps
//!   its quotes); on a resource the plan takes for a renamed one (the live
//!   facts keep `Plan::suggested_moves`), the `moved` entry `rename.rs`
//!   writes; on a field the live facts say drifted, the field added to the
//!   resource's `lifecycle.ignoreChanges` (into an existing flow list, or a
//!   `lifecycle` line under the resource; not offered for a flow-style
//!   resource or a `lifecycle` block it cannot extend safely).
//!
//! Tested end to end in `tests/it/lsp.rs` (and `lsp_live.rs`, against the
//! emulator; `lsp_validate.rs`: the diagnostics equal `validate --format
//! json`'s on the examples and on projects with policies): the real `monform lsp` over stdio, spoken to by
//! `tests/it/common/lsp.rs` (a small JSON-RPC client on `lsp-server`'s
//! framing and `lsp-types`' messages).
//!
//! `transport.rs` and `transport/frame.rs`: the editor's frames read with
//! bounded memory (64 MiB a message, 4 KiB a header line); one it cannot read
//! is answered with a JSON-RPC error (`id: null`) and skipped to the next
//! `Content-Length`, the server reading on.
//!
//! **Architecture invariant:** the loader is the only judge: the server
//! holds no rule of its own about the files; what it says comes from
//! `ops::validate` (over `monform_config`, `monform_model` and
//! `monform_policy`), and it opens a project for the service only through
//! `ops::open` (it builds no `Session`, resolves no credential or state).

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
use monform_engine::ops::OpenEnv;

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
#[derive(Debug, Clone)]
pub struct Config {
    /// The environment to load (`--env`, `MONFORM_ENV`); without one, each
    /// environment the project declares, as `monform validate` does.
    pub environment: Option<String>,
    /// What the front end read of its environment: the files' `${env:}`
    /// values, and for live facts the API key, account, URL, rate limit
    /// and state URL. The server reads no variable itself.
    pub env: OpenEnv,
}

impl Default for Config {
    /// No environment chosen, no variable set (no live facts).
    fn default() -> Config {
        Config {
            environment: None,
            env: OpenEnv::empty(),
        }
    }
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
