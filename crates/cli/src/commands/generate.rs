//! `monform generate openapi SPEC` and `monform generate sitemap URL|FILE`:
//! monitors from a document, written into the project as code to review
//! (`generated/ID.yaml`, a `forEach` definition, and its data file
//! `generated/data/ID.yaml`), never objects in the account. What to
//! generate is `monform-generate`'s; this module reads or fetches the
//! document, writes the files and says what changed. A definition that
//! differs from what would be written (edited by hand) is left alone and
//! the difference shown, unless `--force`.
//!
//! Documents given as URLs are fetched here with reqwest (a user's
//! command, not the service: `api` is the service's client), with timeouts,
//! a size limit and no redirect to another host.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use monform_engine::durable;
use monform_generate::project::{self, DataChange, DefinitionChange};
use monform_generate::{Generated, ids, openapi, sitemap};

use super::context::{Stop, finish};

#[derive(Args)]
pub struct GenerateArgs {
    #[command(subcommand)]
    what: What,
}

#[derive(Subcommand)]
enum What {
    /// An API check per operation of an OpenAPI 3.x document (JSON or YAML; a file or an http(s) URL)
    Openapi(OpenApiArgs),
    /// A URL check per page of a sitemap or sitemap index (a file or an http(s) URL)
    Sitemap(SitemapArgs),
}

#[derive(Args)]
struct OpenApiArgs {
    /// The document: a file path or an http(s) URL
    #[arg(value_name = "SPEC")]
    spec: String,
    /// The URL the paths are appended to (default: the document's first server, else the origin SPEC was fetched from)
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// The methods of the operations that become checks, comma-separated
    #[arg(long, value_name = "GET", value_delimiter = ',', default_value = "GET", value_parser = ["GET", "HEAD"], ignore_case = true)]
    operations: Vec<String>,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
struct SitemapArgs {
    /// The sitemap: a file path or an http(s) URL (index files are followed on its host only)
    #[arg(value_name = "URL|FILE")]
    source: String,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
struct Common {
    /// The definition's logical id (default: from the document's title, or the site's host)
    #[arg(long, value_name = "ID")]
    id: Option<String>,
    /// Overwrite the definition even when it was edited by hand
    #[arg(long)]
    force: bool,
    /// Output: human (on standard error), or json on standard output: the files written and how they changed,
    /// what has no check (`monform schema --output generate`)
    #[arg(long, value_enum, default_value_t = super::export::ExportFormat::Human)]
    format: super::export::ExportFormat,
}

/// `generate --format json`: the definition's address, the two files
/// and what happened to each, and what has no check.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "Generate")]
pub struct GenerateJson {
    /// The `forEach` definition's address, `checks.ID`.
    address: String,
    /// `API` (openapi) or `URL` (sitemap).
    check_type: String,
    /// The checks it makes: one per item of the data file.
    checks: usize,
    /// The document, as given.
    source: String,
    data: DataFileJson,
    definition: DefinitionFileJson,
    /// Operations or URLs with no check, and why.
    skipped: Vec<SkippedJson>,
    /// What to add by hand (credentials, headers).
    notes: Vec<String>,
}

/// The data file (`generated/data/ID.yaml`): its items' keys by change.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct DataFileJson {
    /// Relative to the project folder.
    path: String,
    /// `written` (a new file), `updated` or `unchanged`.
    change: &'static str,
    added: Vec<String>,
    changed: Vec<String>,
    removed: Vec<String>,
}

/// The definition file (`generated/ID.yaml`).
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct DefinitionFileJson {
    /// Relative to the project folder.
    path: String,
    /// `written`, `unchanged`, `overwritten` (`--force`) or `edited`: edited
    /// by hand and left as it is.
    change: &'static str,
    /// `edited`: the unified diff from the file to what generate would write.
    #[serde(skip_serializing_if = "Option::is_none")]
    diff: Option<String>,
}

/// An operation or URL with no check.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct SkippedJson {
    what: String,
    reason: String,
}

/// A document this size at most (an OpenAPI document or one sitemap
/// file; sitemaps.org's own limit is 50 MiB).
const MAX_BYTES: u64 = 50 * 1024 * 1024;

pub fn run(dir: &Path, args: GenerateArgs) -> ExitCode {
    finish(Ok(generate(dir, args)))
}

fn generate(dir: &Path, args: GenerateArgs) -> Result<ExitCode, Stop> {
    if !dir.join(monform_config::project::PROJECT_FILE).is_file() {
        return Err(Stop::Message(format!(
            "no monform.toml in {}: generate writes into a project\n\nhint: run it in a project, or start one with `monform init`",
            dir.display()
        )));
    }
    let client = client()?;
    let (generated, common, origin) = match args.what {
        What::Openapi(args) => {
            let (text, fetched_from) = read(&client, dir, &args.spec)?;
            let spec = openapi::read(&text, &args.spec).map_err(|e| e.to_string())?;
            let options = openapi::Options {
                base_url: args.base_url,
                methods: args.operations.iter().map(|m| m.to_ascii_uppercase()).collect(),
                fetched_from,
            };
            let generated = openapi::generate(&spec, &options, &args.spec).map_err(|e| e.to_string())?;
            (generated, args.common, args.spec)
        }
        What::Sitemap(args) => {
            let (text, fetched_from) = read(&client, dir, &args.source)?;
            let first = sitemap::parse(&text, &args.source).map_err(|e| e.to_string())?;
            let mut fetch = |url: &url::Url| fetch(&client, url).map(|(text, _)| text);
            let collected = sitemap::collect(first, fetched_from.as_ref(), &mut fetch, sitemap::Limits::default());
            (sitemap::generate(&collected), args.common, args.source)
        }
    };
    write(dir, &generated, &common, &origin)
}

/// The document's text, and the URL it came from when it was fetched.
fn read(client: &reqwest::blocking::Client, dir: &Path, given: &str) -> Result<(String, Option<url::Url>), Stop> {
    if given.starts_with("http://") || given.starts_with("https://") {
        let url = url::Url::parse(given).map_err(|e| format!("{given}: {e}"))?;
        let (text, at) = fetch(client, &url).map_err(|e| format!("{given}: {e}"))?;
        return Ok((text, Some(at)));
    }
    // A relative path is the user's, from where they are (as every
    // command-line path); the project folder only when it is not there.
    let path = PathBuf::from(given);
    let path = if path.exists() || path.is_absolute() {
        path
    } else {
        dir.join(given)
    };
    let yaml = path.extension().is_some_and(|e| e == "yaml" || e == "yml");
    let inside = |p: &Path| std::path::absolute(p).ok();
    if yaml
        && inside(&path)
            .zip(inside(dir))
            .is_some_and(|(file, project)| file.starts_with(project))
    {
        eprintln!(
            "warning: {} is inside the project: monform reads every YAML file there as a resource file, so `validate` will reject it\n\nhint: keep the document outside the project, or name the resource files in monform.toml's [project] include\n",
            path.display()
        );
    }
    let file = std::fs::File::open(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(Stop::Message(format!(
            "{}: larger than {} MiB",
            path.display(),
            MAX_BYTES >> 20
        )));
    }
    let text = String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8 text", path.display()))?;
    Ok((text, None))
}

fn client() -> Result<reqwest::blocking::Client, String> {
    monform_http::blocking()
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(60))
        // A redirect stays on the host asked (a sitemap is never followed
        // to another), five at most.
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            let same = attempt.previous().first().map(|first| first.host_str()) == Some(attempt.url().host_str());
            if attempt.previous().len() >= 5 || !same {
                attempt.stop()
            } else {
                attempt.follow()
            }
        }))
        .user_agent(concat!("monform/", env!("CARGO_PKG_VERSION"), " (generate)"))
        .build()
        .map_err(|e| format!("cannot start the HTTP client: {e}"))
}

/// GETs `url`: its text (at most [`MAX_BYTES`]) and the URL it ended at.
fn fetch(client: &reqwest::blocking::Client, url: &url::Url) -> Result<(String, url::Url), String> {
    let response = client.get(url.as_str()).send().map_err(|e| e.to_string())?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("answered {status}"));
    }
    let at = response.url().clone();
    let mut bytes = Vec::new();
    response
        .take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(format!("larger than {} MiB", MAX_BYTES >> 20));
    }
    let text = String::from_utf8(bytes).map_err(|_| "not UTF-8 text (a gzipped sitemap is not read)".to_owned())?;
    Ok((text, at))
}

/// Writes the data file and (unless edited by hand) the definition, and
/// says what it did.
fn write(dir: &Path, generated: &Generated, common: &Common, origin: &str) -> Result<ExitCode, Stop> {
    let id = common.id.clone().unwrap_or_else(|| generated.suggested_id.clone());
    if !ids::is_valid(&id) {
        return Err(Stop::Message(format!(
            "--id {id}: not a logical id (letters, digits, - and _, starting with a letter or digit, at most 64)"
        )));
    }
    let kind = match generated.source {
        monform_generate::Source::OpenApi => "API check",
        monform_generate::Source::Sitemap => "URL check",
    };
    if generated.items.is_empty() {
        print_skipped(generated);
        return Err(Stop::Message(format!(
            "{origin}: nothing to generate (no operation or page made a check); nothing written"
        )));
    }
    let files = project::files(generated, &id);
    let existing = |path: &str| std::fs::read_to_string(dir.join(path)).ok();
    let data_change = project::compare_data(existing(&files.data_path).as_deref(), generated, &files.data);
    let definition_change = project::compare_definition(
        existing(&files.definition_path).as_deref(),
        &files.definition,
        &files.definition_path,
    );
    let overwrite = common.force && matches!(definition_change, DefinitionChange::Edited { .. });
    if !data_change.unchanged {
        save(dir, &files.data_path, &files.data)?;
    }
    if matches!(definition_change, DefinitionChange::Create) || overwrite {
        save(dir, &files.definition_path, &files.definition)?;
    }
    let count = generated.items.len();
    if common.format == super::export::ExportFormat::Json {
        crate::render::print_json(&GenerateJson {
            address: format!("checks.{id}"),
            check_type: match generated.source {
                monform_generate::Source::OpenApi => "API",
                monform_generate::Source::Sitemap => "URL",
            }
            .to_owned(),
            checks: count,
            source: origin.to_owned(),
            data: DataFileJson {
                path: files.data_path.clone(),
                change: if data_change.new_file {
                    "written"
                } else if data_change.unchanged {
                    "unchanged"
                } else {
                    "updated"
                },
                added: data_change.added.clone(),
                changed: data_change.changed.clone(),
                removed: data_change.removed.clone(),
            },
            definition: DefinitionFileJson {
                path: files.definition_path.clone(),
                change: match &definition_change {
                    DefinitionChange::Create => "written",
                    DefinitionChange::Unchanged => "unchanged",
                    DefinitionChange::Edited { .. } if overwrite => "overwritten",
                    DefinitionChange::Edited { .. } => "edited",
                },
                diff: match &definition_change {
                    DefinitionChange::Edited { diff } if !overwrite => Some(diff.clone()),
                    _ => None,
                },
            },
            skipped: generated
                .skipped
                .iter()
                .map(|s| SkippedJson {
                    what: s.what.clone(),
                    reason: s.reason.clone(),
                })
                .collect(),
            notes: generated.notes.clone(),
        });
        return Ok(ExitCode::SUCCESS);
    }
    let plural = if count == 1 { "" } else { "s" };
    eprintln!("checks.{id}: {count} {kind}{plural} from {origin}");
    eprintln!("  {}: {}", files.data_path, describe(&data_change));
    match &definition_change {
        DefinitionChange::Create => eprintln!("  {}: written (the forEach definition)", files.definition_path),
        DefinitionChange::Unchanged => eprintln!("  {}: unchanged", files.definition_path),
        DefinitionChange::Edited { .. } if overwrite => {
            eprintln!("  {}: overwritten (--force)", files.definition_path);
        }
        DefinitionChange::Edited { diff } => {
            eprintln!(
                "  {}: edited by hand, left as it is; generating would change it so:\n{diff}",
                files.definition_path
            );
            eprintln!("hint: keep your edits, or pass --force to write the generated definition");
        }
    }
    print_skipped(generated);
    for note in &generated.notes {
        eprintln!("note: {note}");
    }
    eprintln!("\nReview the files, then `monform plan`: nothing is created until you apply.");
    Ok(ExitCode::SUCCESS)
}

/// What has no check, and why (also in the data file's header).
fn print_skipped(generated: &Generated) {
    if generated.skipped.is_empty() {
        return;
    }
    let what = match generated.source {
        monform_generate::Source::OpenApi => "operation",
        monform_generate::Source::Sitemap => "URL",
    };
    let count = generated.skipped.len();
    let plural = if count == 1 { "" } else { "s" };
    eprintln!("No check for {count} {what}{plural} (the reason):");
    for skipped in &generated.skipped {
        eprintln!("  {}: {}", skipped.what, skipped.reason);
    }
}

fn describe(change: &DataChange) -> String {
    if change.new_file {
        return format!("written ({} items)", change.added.len());
    }
    if change.unchanged {
        return "unchanged".to_owned();
    }
    let list = |keys: &[String]| {
        if keys.len() <= 5 {
            keys.join(", ")
        } else {
            format!("{}, and {} more", keys[..5].join(", "), keys.len() - 5)
        }
    };
    let mut parts = Vec::new();
    for (keys, verb) in [
        (&change.added, "added"),
        (&change.changed, "changed"),
        (&change.removed, "removed"),
    ] {
        if !keys.is_empty() {
            parts.push(format!("{} {verb} ({})", keys.len(), list(keys)));
        }
    }
    if parts.is_empty() {
        // Only comments (what was skipped, the title) differ.
        parts.push("rewritten (the same items)".to_owned());
    }
    format!("updated: {}", parts.join(", "))
}

fn save(dir: &Path, relative: &str, text: &str) -> Result<(), Stop> {
    let path = dir.join(relative);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    durable::write(&path, text.as_bytes()).map_err(|e| Stop::Message(format!("cannot write {}: {e}", path.display())))
}
