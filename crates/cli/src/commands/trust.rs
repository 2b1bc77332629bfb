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
}

pub fn run(dir: &Path, args: &TrustArgs) -> ExitCode {
    finish(Ok(trust(dir, args)))
}

fn trust(dir: &Path, args: &TrustArgs) -> Result<ExitCode, Stop> {
    let env = |name: &str| std::env::var(name).ok();
    let user_dir =
        ops::user_config_dir(&env).ok_or("cannot find your monform folder: set HOME or XDG_CONFIG_HOME".to_owned())?;
    let file = user_dir.join(ops::TRUST_FILE);
    if args.list {
        let records = ops::trusted_projects(&user_dir).map_err(|e| e.to_string())?;
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
        println!("monform.toml names no API URL: nothing to trust");
        return Ok(ExitCode::SUCCESS);
    };
    let source = ops::project_source(dir, url.span);
    match ops::trust_project(&user_dir, dir, &url.url).map_err(|e| format!("{e} (from {source})"))? {
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
