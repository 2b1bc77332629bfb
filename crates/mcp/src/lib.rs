//! `monform mcp` (issue 51): a Model Context Protocol server over stdio,
//! so a coding agent can validate, plan, explain and write a monform
//! project, and apply only what a person approved.
//!
//! Built on the engine's operations like every other front end
//! (`ops::open`, `ops::validate`, `ops::revalidate`, `ops::plan`,
//! `ops::prepare_apply` and `ops::execute`, `ops::status`,
//! `ops::local_checks`, `ops::find_unmanaged_for`, codify, the
//! policies): nothing of the CLI's wiring is copied.
//!
//! The SDK is `rmcp`, the official Rust SDK of the protocol (the
//! modelcontextprotocol organisation's `rust-sdk`): maintained with the
//! specification, it negotiates the revisions this server offers
//! (2025-06-18, 2025-11-25, 2026-07-28: structured tool output and
//! titles), frames JSON-RPC over stdio, and needs no HTTP stack
//! (`default-features = false`, `server` and `transport-io` only). The
//! handler is written by hand (`ServerHandler`), not with its macros: the
//! tools' names and schemas are data here, listed once in `server.rs`.
//!
//! Modules:
//! - `server`: the handler, the tools' list and input schemas, the
//!   resources (the project's files as the loader lists them, the JSON
//!   Schemas) and the two prompts;
//! - `files`: `validate`, and `write_file` (inside the root, resource files
//!   only, validated before writing, refused with the diagnostics, the diff):
//!   the one path of every write;
//! - `add_check`: a URL, API, TCP, DNS or ICMP check from a few arguments,
//!   added to a file through `files`' path;
//! - `history`: the calls that change something, in the state's history;
//! - `plans`: `plan` (saved by hash) and `apply` (approved out of band,
//!   still current, the policies');
//! - `facts`: `explain`, `schema`, `status`, `test_local`,
//!   `import_preview`, `codify_check`, `policy_test`;
//! - [`approvals`]: saved plans by hash and the approvals file, which
//!   `monform approve` writes and the server only reads;
//! - `project`: opening the project for a tool; `reply`: answers, their
//!   diagnostics and the scrub of the server's credentials.

use std::path::PathBuf;

use monform_engine::ops::{LocalService, OpenEnv};
use rmcp::ServiceExt;

mod add_check;
pub mod approvals;
mod facts;
mod files;
mod history;
mod plans;
mod project;
mod reply;
mod server;

/// The tools the server offers, each with its one-line description, in
/// the order it lists them (`monform agent-skill` writes them into the skill).
pub fn tools() -> impl Iterator<Item = (&'static str, &'static str)> {
    server::TOOLS.iter().map(|(name, description, _)| (*name, *description))
}

/// What the server serves, as the CLI read it at start.
pub struct Config {
    /// The project root (holding monform.toml).
    pub dir: PathBuf,
    /// `--env`.
    pub environment: Option<String>,
    /// The server's environment, read once (`OpenEnv::read`).
    pub env: OpenEnv,
    /// `--api-url`.
    pub api_url: Option<String>,
    /// Starts the bundled emulator for `url = "local"`.
    pub local: Option<&'static dyn LocalService>,
    /// The approvals file ([`approvals::approvals_path`]), or why there is none.
    pub approvals: Result<PathBuf, String>,
    /// Who runs the server (`user@host`), for the history.
    pub user: String,
}

impl Config {
    /// The credentials the server holds, scrubbed from every answer.
    fn secrets(&self) -> Vec<String> {
        let mut secrets: Vec<String> = [&self.env.api_key, &self.env.state_url]
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        // The state URL's password alone too (an error may quote it).
        if let Some(url) = &self.env.state_url
            && let Some((before, _)) = url.split_once('@')
            && let Some((_, password)) = before.rsplit_once(':')
            && !password.starts_with("//")
        {
            secrets.push(password.to_owned());
        }
        secrets
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot start the server's runtime: {0}")]
    Runtime(std::io::Error),
    #[error("the MCP session did not start: {0}")]
    Start(String),
    #[error("the MCP session ended badly: {0}")]
    Session(String),
}

/// Serves the project over stdin and stdout until the client closes them.
pub fn run_stdio(config: Config) -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(Error::Runtime)?;
    runtime.block_on(async {
        let service = server::Monform::new(config)
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| Error::Start(e.to_string()))?;
        service.waiting().await.map_err(|e| Error::Session(e.to_string()))?;
        Ok(())
    })
}
