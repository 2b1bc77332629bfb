//! `monform generate openapi|sitemap`: monitors from an OpenAPI 3.x
//! document or a sitemap, written as code to review: one `forEach`
//! definition and its data file, never objects in the account.
//!
//! # Code map
//!
//! - `openapi.rs`: the document read (JSON or YAML; 3.0's `nullable` and
//!   boolean `exclusiveMinimum` rewritten into 3.1's so `oas3` reads both),
//!   one item per operation of the chosen methods: its URL (path parameters
//!   filled from the document's examples, else the operation is skipped with
//!   the reason), the success status, and `openapi/schema.rs`'s assertions.
//! - `openapi/schema.rs`: what the response's JSON Schema says that the
//!   service's assertions can say (`JSON_BODY` with `NOT_NULL`, `HAS_KEY`,
//!   `EQUALS`, `GREATER_THAN`, `LESS_THAN`, `NOT_EMPTY`); references followed a
//!   bounded number of times.
//! - `sitemap.rs`: `<urlset>` and `<sitemapindex>` (roxmltree), index files
//!   followed through a fetch function the caller gives (bounded depth,
//!   files and pages; never to another host), one item per page.
//! - `ids.rs`: logical ids from what the document names (operationId,
//!   method and path, a page's path), so a changed document is a small diff.
//! - `project.rs`: the definition's and the data file's text (sorted,
//!   deterministic) and what writing them again would change.
//!
//! No network and no file I/O here: the caller reads the document, fetches
//! and writes (the CLI's `commands/generate.rs`).

pub mod ids;
pub mod openapi;
pub mod project;
pub mod sitemap;

use serde_json::{Map, Value};

/// What `generate` makes of a document: the items of one `forEach`
/// definition, and what it left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    pub source: Source,
    /// The document's title and version (OpenAPI) or the site's host
    /// (sitemap), for the data file's header.
    pub title: String,
    /// The definition's logical id unless `--id` names one.
    pub suggested_id: String,
    /// Sorted by key; each row's first field is `key`.
    pub items: Vec<Item>,
    /// What has no item, sorted, each with the reason.
    pub skipped: Vec<Skipped>,
    /// What the user has to add by hand (credentials, headers).
    pub notes: Vec<String>,
}

/// The kind of document, which decides the check type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// API checks (method, URL, status and JSON body assertions).
    OpenApi,
    /// URL checks (URL, status).
    Sitemap,
}

impl Source {
    pub fn command(self) -> &'static str {
        match self {
            Source::OpenApi => "openapi",
            Source::Sitemap => "sitemap",
        }
    }
}

/// One row of the data file: one check.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub key: String,
    /// The row's fields after `key`, in the order written.
    pub fields: Map<String, Value>,
}

/// An operation or page with no check, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Skipped {
    /// `GET /v1/checks/{id} (getCheck)`, or a URL.
    pub what: String,
    pub reason: String,
}

/// Why a document cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    #[error("{origin}: not a JSON or YAML document: {message}")]
    Syntax { origin: String, message: String },
    #[error("{origin}: not an OpenAPI 3.x document: {message}")]
    NotOpenApi { origin: String, message: String },
    #[error(
        "{origin}: the document names no absolute server URL (`servers`): pass --base-url, e.g. --base-url https://api.example.com"
    )]
    NoBaseUrl { origin: String },
    #[error("--base-url {0}: {1}")]
    BadBaseUrl(String, String),
    #[error("{origin}: not a sitemap: {message}")]
    NotSitemap { origin: String, message: String },
}
