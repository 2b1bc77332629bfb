//! `monform trust`: the user says that this project's `[api] url` may
//! receive their API key (the files alone cannot: `ops::choose_api`). The
//! record is the project's folder and that URL, in the user's monform
//! folder (`trusted.toml`); a changed URL must be trusted again.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use monform_engine::ops::{self, ProjectUrl, TrustRecord, Trusted};

use super::context::{Stop, environment, finish};

#[derive(Args)]
pub struct TrustArgs {
    /// Forget every URL trusted for this project (the editor and the CLI then refuse its URL again)
    #[arg(long, conflicts_with = "list")]
    revoke: bool,
    /// List every trusted project folder and URL
    #[arg(long)]
    list: bool,
    /// Output: for people, or json (`monform schema --output trust`)
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

use crate::format::HumanOrJson as Format;

/// `trust [--list | --revoke] --format json`: what is trusted, or what
/// changed, by `result`.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(tag = "result", rename_all = "camelCase")]
#[schemars(rename = "Trust")]
pub enum TrustJson {
    /// `--list`: every trusted project folder and URL.
    #[serde(rename_all = "camelCase")]
    List {
        /// The user's trust file.
        file: String,
        trusted: Vec<RecordJson>,
    },
    /// `--revoke`: the records removed (none: the folder was not trusted).
    #[serde(rename_all = "camelCase")]
    Revoked {
        /// The user's trust file.
        file: String,
        revoked: Vec<RecordJson>,
    },
    /// The project's URL is trusted now (or was already).
    #[serde(rename_all = "camelCase")]
    Trusted {
        /// The user's trust file, where the record is.
        file: String,
        record: RecordJson,
        /// It was trusted already: nothing changed.
        already: bool,
        /// Where monform.toml names the URL (`FILE:LINE`).
        source: String,
    },
    /// monform.toml names `local`, the bundled emulator: it needs no trust.
    #[serde(rename_all = "camelCase")]
    Local { source: String },
    /// monform.toml names no API URL: nothing to trust.
    NoUrl,
}

/// One project folder trusted with one URL.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct RecordJson {
    /// The project's folder, canonical.
    path: String,
    url: String,
    /// When it was trusted (RFC 3339, UTC).
    at: String,
}

impl From<&TrustRecord> for RecordJson {
    fn from(record: &TrustRecord) -> RecordJson {
        RecordJson {
            path: record.path.display().to_string(),
            url: record.url.clone(),
            at: record.at.clone(),
        }
    }
}

pub fn run(dir: &Path, args: &TrustArgs) -> ExitCode {
    finish(Ok(trust(dir, args)))
}

fn trust(dir: &Path, args: &TrustArgs) -> Result<ExitCode, Stop> {
    let env = |name: &str| std::env::var(name).ok();
    let user_dir =
        ops::user_config_dir(&env).ok_or("cannot find your monform folder: set HOME or XDG_CONFIG_HOME".to_owned())?;
    let file = user_dir.join(ops::TRUST_FILE);
    let json = args.format == Format::Json;
    let print = |report: TrustJson| {
        crate::render::print_json(&report);
        Ok(ExitCode::SUCCESS)
    };
    let named = file.display().to_string();
    if args.list {
        let records = ops::trusted_projects(&user_dir).map_err(|e| e.to_string())?;
        if json {
            let trusted = records.iter().map(RecordJson::from).collect();
            return print(TrustJson::List { file: named, trusted });
        }
        if records.is_empty() {
            println!("no trusted projects ({})", file.display());
        }
        for record in records {
            println!("{}", line(&record));
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.revoke {
        let removed = ops::revoke_trust(&user_dir, dir).map_err(|e| e.to_string())?;
        if json {
            let revoked = removed.iter().map(RecordJson::from).collect();
            return print(TrustJson::Revoked { file: named, revoked });
        }
        if removed.is_empty() {
            println!("{} was not trusted with any API URL", dir.display());
        }
        for record in removed {
            println!("revoked: {} (in {})", line(&record), file.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let project = monform_config::load_project(dir, &env, environment()).ok_or_else(|| {
        format!(
            "{} does not load\n\nhint: run `monform validate` to see why",
            dir.join(monform_config::project::PROJECT_FILE).display()
        )
    })?;
    let Some(url) = ProjectUrl::of(&project) else {
        if json {
            return print(TrustJson::NoUrl);
        }
        println!("monform.toml names no API URL: nothing to trust");
        return Ok(ExitCode::SUCCESS);
    };
    let source = ops::project_source(dir, url.span);
    let trusted = ops::trust_project(&user_dir, dir, &url.url).map_err(|e| format!("{e} (from {source})"))?;
    if json {
        return print(match trusted {
            Trusted::Local => TrustJson::Local {
                source: source.to_string(),
            },
            Trusted::Recorded { record, file, already } => TrustJson::Trusted {
                file: file.display().to_string(),
                record: RecordJson::from(&record),
                already,
                source: source.to_string(),
            },
        });
    }
    match trusted {
        Trusted::Local => println!("{source} names `local`, the bundled emulator: it needs no trust"),
        Trusted::Recorded { record, file, already } => {
            let what = if already { "already trusted" } else { "trusted" };
            println!("{what}: {} ({source})", line(&record));
            println!("recorded in {}; `monform trust --revoke` undoes it", file.display());
            println!(
                "monform now sends your API key to {} when it runs on this project, the editor's live facts included",
                record.url
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn line(record: &TrustRecord) -> String {
    format!("{} with {}, since {}", record.path.display(), record.url, record.at)
}
