//! Where the API key may go: **the one rule** every front end asks before
//! a request carries the key (issue 43). A project's files are untrusted
//! input (a cloned repository, a pull request), so the URL they name is
//! not enough: the key goes only to a URL the user chose.
//!
//! - `local`, the bundled emulator in-process (it has a key of its own);
//! - `--api-url` or `MONFORM_API_URL`: the user's command line or
//!   environment;
//! - `[api] url` of the user's configuration (`config.toml` in the user's
//!   monform folder, [`user_config_dir`]);
//! - the project's `[api] url` when it is that same URL, or when the user
//!   trusted this project folder with this URL (`monform trust`,
//!   [`super::trust_project`]): the trust is for the pair, so a changed
//!   URL asks again, as VS Code's Workspace Trust and direnv's `allow` do.
//!
//! Whatever the source, plain `http://` only to this machine
//! ([`monform_api::check_destination`]). monform has no built-in service
//! URL: one is always given by one of the above.
//!
//! Nothing here reads the process environment: the front end passes what
//! it read (the flag, the variable, the user's folder), so an engine
//! opening projects for several callers decides for each with its inputs.

use std::fmt;
use std::path::{Path, PathBuf};

use monform_api::{Unfit, check_destination};
use monform_config::Project;
use monform_config::project::PROJECT_FILE;
use monform_config::source::Span;

use super::trust_ops::{self, LOCAL, TrustError, USER_CONFIG_FILE, same_url};

/// The user's monform folder: `$XDG_CONFIG_HOME/monform`, else
/// `$HOME/.config/monform` (the XDG rule: a relative `XDG_CONFIG_HOME` is
/// ignored); `None` without either. `env` reads a variable of the caller's
/// environment.
pub fn user_config_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |name: &str| env(name).filter(|value| !value.is_empty()).map(PathBuf::from);
    if let Some(config) = set("XDG_CONFIG_HOME").filter(|path| path.is_absolute()) {
        return Some(config.join("monform"));
    }
    set("HOME").map(|home| home.join(".config").join("monform"))
}

/// `[api] url` of monform.toml (the selected environment's) and where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectUrl {
    pub url: String,
    pub span: Option<Span>,
}

impl ProjectUrl {
    pub fn of(project: &Project) -> Option<ProjectUrl> {
        Some(ProjectUrl {
            url: project.api_url.clone()?,
            span: project.api_url_span,
        })
    }
}

/// What a front end read, to decide where the key may go.
#[derive(Debug, Clone, Copy)]
pub struct AccessRequest<'a> {
    /// The project's folder (where monform.toml is).
    pub root: &'a Path,
    /// `--api-url`.
    pub flag: Option<&'a str>,
    /// `MONFORM_API_URL` (empty counts as unset).
    pub env_url: Option<&'a str>,
    pub project_url: Option<&'a ProjectUrl>,
    /// The user's monform folder ([`user_config_dir`]); `None`: no user
    /// configuration and no trusted projects.
    pub user_dir: Option<&'a Path>,
}

/// Where the URL came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlSource {
    Flag,
    Environment,
    /// The user's `config.toml`.
    UserConfig(PathBuf),
    /// monform.toml, at this line when known.
    Project {
        file: PathBuf,
        line: Option<usize>,
    },
}

impl fmt::Display for UrlSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlSource::Flag => f.write_str("--api-url"),
            UrlSource::Environment => f.write_str("MONFORM_API_URL"),
            UrlSource::UserConfig(path) => write!(f, "{}", path.display()),
            UrlSource::Project { file, line: Some(line) } => write!(f, "{}:{line}", file.display()),
            UrlSource::Project { file, line: None } => write!(f, "{}", file.display()),
        }
    }
}

/// Why the key may go to the URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chosen {
    /// `local`: the in-process emulator, with its own key.
    Local,
    /// The user gave it (`--api-url`, `MONFORM_API_URL`, their `config.toml`).
    ByUser,
    /// The project's URL is the one of the user's `config.toml`.
    SameAsUserConfig(PathBuf),
    /// The user trusted this project with this URL (the record's file).
    Trusted(PathBuf),
}

/// The API a front end may send the key to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// As written (a trailing `/` kept).
    pub url: String,
    pub source: UrlSource,
    pub chosen: Chosen,
}

impl Access {
    pub fn is_local(&self) -> bool {
        self.chosen == Chosen::Local
    }
}

/// Why no request may carry the key.
#[derive(Debug, thiserror::Error)]
pub enum AccessRefusal {
    #[error("no API URL")]
    NoUrl,
    /// The project names a URL the user never chose.
    #[error("{from} names the API at {url}, which you have not trusted with your API key")]
    Untrusted { url: String, from: UrlSource },
    #[error("{unfit} (from {from})")]
    Unfit { unfit: Unfit, from: UrlSource },
    /// The user's configuration or trust record cannot be read.
    #[error("{0}")]
    UserFiles(#[from] TrustError),
}

/// Decides where the key may go; see the module's documentation.
pub fn choose_api(request: &AccessRequest<'_>) -> Result<Access, AccessRefusal> {
    choose_with_text(request, None)
}

/// [`choose_api`], with monform.toml's text as the loader read it (to
/// name the line of `[api] url` without reading the file again).
pub(crate) fn choose_with_text(
    request: &AccessRequest<'_>,
    project_text: Option<&str>,
) -> Result<Access, AccessRefusal> {
    let given = |url: Option<&str>| url.filter(|url| !url.is_empty()).map(str::to_owned);
    if let Some(url) = given(request.flag) {
        return by_user(url, UrlSource::Flag);
    }
    if let Some(url) = given(request.env_url) {
        return by_user(url, UrlSource::Environment);
    }
    let user_url = || -> Result<Option<(String, PathBuf)>, TrustError> {
        let Some(dir) = request.user_dir else {
            return Ok(None);
        };
        Ok(trust_ops::user_api_url(dir)?.map(|url| (url, dir.join(USER_CONFIG_FILE))))
    };
    let Some(project_url) = request.project_url else {
        return match user_url()? {
            Some((url, path)) => by_user(url, UrlSource::UserConfig(path)),
            None => Err(AccessRefusal::NoUrl),
        };
    };
    let url = project_url.url.clone();
    let source = match project_text {
        Some(text) => source_in(request.root, project_url.span, text.as_bytes()),
        None => project_source(request.root, project_url.span),
    };
    if url == LOCAL {
        return Ok(Access {
            url,
            source,
            chosen: Chosen::Local,
        });
    }
    if let Err(unfit) = check_destination(&url) {
        return Err(AccessRefusal::Unfit { unfit, from: source });
    }
    if let Some((user, path)) = user_url()?
        && same_url(&user, &url)
    {
        return Ok(Access {
            url,
            source,
            chosen: Chosen::SameAsUserConfig(path),
        });
    }
    if let Some(dir) = request.user_dir
        && trust_ops::is_trusted(dir, request.root, &url)?
    {
        return Ok(Access {
            url,
            source,
            chosen: Chosen::Trusted(dir.join(trust_ops::TRUST_FILE)),
        });
    }
    Err(AccessRefusal::Untrusted { url, from: source })
}

fn by_user(url: String, source: UrlSource) -> Result<Access, AccessRefusal> {
    if url == LOCAL {
        return Ok(Access {
            url,
            source,
            chosen: Chosen::Local,
        });
    }
    match check_destination(&url) {
        Ok(()) => Ok(Access {
            url,
            source,
            chosen: Chosen::ByUser,
        }),
        Err(unfit) => Err(AccessRefusal::Unfit { unfit, from: source }),
    }
}

/// monform.toml in `root`, at the line of `span` (the loader keeps the
/// span; the line is counted in the file as it is on disk).
pub fn project_source(root: &Path, span: Option<Span>) -> UrlSource {
    let text = span.and_then(|_| std::fs::read(root.join(PROJECT_FILE)).ok());
    source_in(root, span, text.as_deref().unwrap_or_default())
}

/// monform.toml in `root`, at the line of `span` in `text`.
fn source_in(root: &Path, span: Option<Span>, text: &[u8]) -> UrlSource {
    let line = span.and_then(|span| {
        let before = text.get(..span.start)?;
        Some(before.iter().filter(|&&b| b == b'\n').count() + 1)
    });
    UrlSource::Project {
        file: root.join(PROJECT_FILE),
        line,
    }
}

#[cfg(test)]
mod tests;
