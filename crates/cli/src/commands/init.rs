//! `monform init`: start a project in the working folder (or `--dir`):
//! monform.toml against the bundled emulator, an example check, the
//! schemas for editors and `.monform/` in `.gitignore` (`ops::init_project`);
//! `--from-account`: the account's unmanaged objects instead, adopted as
//! `import --all-unmanaged` adopts them. Never over an existing project.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use monform_engine::ops::{self, GitIgnore, InitRefusal, Refusal};

use super::context::{Split, Stop, block_on, finish};
use super::import::Report;
use crate::render::Output;
use crate::render::export::ImportJson;

#[derive(Args)]
pub struct InitArgs {
    /// The project's name (default: the folder's, with what a name cannot hold made `-`)
    #[arg(long)]
    name: Option<String>,
    /// Adopt every object of the account no project owns into the new project (as `import --all-unmanaged`),
    /// instead of writing an example; the API from --api-url or MONFORM_API_URL, with MONFORM_API_KEY and
    /// MONFORM_ACCOUNT_ID
    #[arg(long)]
    from_account: bool,
    /// How to split the resource files (with --from-account)
    #[arg(long, value_enum, default_value_t = Split::Kind, requires = "from_account")]
    split_by: Split,
    /// Also adopt this object whose owner cannot be told, as SECTION:ID (with --from-account; repeatable)
    #[arg(long, value_name = "SECTION:ID", requires = "from_account")]
    include: Vec<String>,
    /// Output: for people (standard error), or json on standard output (`monform schema --output init`)
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

use crate::format::HumanOrJson as Format;

/// `init --format json`: the project started.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "Init")]
pub struct InitJson {
    /// The project's name (monform.toml's).
    name: String,
    /// The project's folder, absolute.
    dir: String,
    /// The files written, relative to `dir`, in the order written (without
    /// `--from-account`: monform.toml, the example, the schemas).
    written: Vec<String>,
    /// What became of `.gitignore`, which keeps `.monform/` (the state and
    /// its cache) out of git: `created`, `added` (to the file there) or
    /// `alreadyIgnored`; null when the command stopped before (an object not
    /// adopted: it exits 1).
    gitignore: Option<GitIgnoreJson>,
    /// `--from-account`: the objects adopted and the files written, as
    /// `import --format json` reports them.
    #[serde(skip_serializing_if = "Option::is_none")]
    from_account: Option<ImportJson>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
enum GitIgnoreJson {
    Created,
    Added,
    AlreadyIgnored,
}

impl From<GitIgnore> for GitIgnoreJson {
    fn from(gitignore: GitIgnore) -> GitIgnoreJson {
        match gitignore {
            GitIgnore::Created => GitIgnoreJson::Created,
            GitIgnore::Added => GitIgnoreJson::Added,
            GitIgnore::AlreadyIgnored => GitIgnoreJson::AlreadyIgnored,
        }
    }
}

/// `dir`: `--dir`, else the working folder (not the nearest project: a
/// project is started where the user is).
pub fn run(given: &Path, api_url: Option<&str>, args: InitArgs, output: &Output) -> ExitCode {
    // Named in full in what is said, whatever the user typed.
    let folder = std::path::absolute(given).unwrap_or_else(|_| given.to_owned());
    let dir = folder.as_path();
    let name = match ops::init_name(dir, args.name.as_deref()).and_then(|name| {
        ops::check_init(dir)?;
        Ok(name)
    }) {
        Ok(name) => name,
        Err(refusal) => return finish(Ok(Err(refused(&refusal)))),
    };
    let json = args.format == Format::Json;
    let report = |gitignore: Option<GitIgnore>, written: Vec<String>, from_account: Option<ImportJson>| {
        crate::render::print_json(&InitJson {
            name: name.clone(),
            dir: dir.display().to_string(),
            written,
            gitignore: gitignore.map(GitIgnoreJson::from),
            from_account,
        });
    };
    if args.from_account {
        let mut adopted_json = None;
        let options = super::import::AllOptions {
            split: args.split_by,
            // One entry per object: a first project to read, as export's
            // `--fold none` (export and import fold by default).
            fold: super::context::FoldArg::None,
            name: Some(&name),
            include: &args.include,
            report: match json {
                true => Report::Into(&mut adopted_json),
                false => Report::Words,
            },
        };
        let adopted = block_on(super::import::import_all(dir, api_url, dir, options, output));
        if !matches!(adopted, Ok(Ok(_))) {
            // Adopted in part: what was, before the error.
            if adopted_json.is_some() {
                report(None, Vec::new(), adopted_json);
            }
            return finish(adopted);
        }
        return finish(Ok(ops::ignore_state(dir)
            .map(|gitignore| {
                if json {
                    report(Some(gitignore), Vec::new(), adopted_json);
                } else {
                    say_gitignore(gitignore);
                    next_steps(given);
                }
                ExitCode::SUCCESS
            })
            .map_err(|refusal| refused(&refusal))));
    }
    match ops::init_project(dir, &name) {
        Ok(done) if json => {
            report(Some(done.gitignore), done.written, None);
            ExitCode::SUCCESS
        }
        Ok(done) => {
            eprintln!("Started project `{}` in {}:", done.name, dir.display());
            for file in &done.written {
                eprintln!("  {file}");
            }
            say_gitignore(done.gitignore);
            next_steps(given);
            ExitCode::SUCCESS
        }
        Err(refusal) => finish(Ok(Err(refused(&refusal)))),
    }
}

fn say_gitignore(gitignore: GitIgnore) {
    match gitignore {
        GitIgnore::Created => eprintln!("  .gitignore (keeps .monform/, the state and its cache, out of git)"),
        GitIgnore::Added => eprintln!("  .gitignore: .monform/ added (the state and its cache stay out of git)"),
        GitIgnore::AlreadyIgnored => {}
    }
}

/// The commands to run next, with `--dir` as the user gave it (if at all).
fn next_steps(given: &Path) {
    let text = given.display().to_string();
    let at = match text.as_str() {
        "." => String::new(),
        plain if plain.chars().all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c)) => format!(" --dir {plain}"),
        spaced => format!(" --dir '{}'", spaced.replace('\'', r"'\''")),
    };
    eprintln!("\nNext: `monform{at} validate` checks the files, `monform{at} plan` shows what apply would do.");
}

/// A refusal in this command's words, with the next step.
fn refused(refusal: &Refusal) -> Stop {
    let hint = match refusal {
        Refusal::Init(InitRefusal::Exists(_)) => {
            "\n\nhint: this folder is a project already: `monform validate` checks it, or start one in another folder"
        }
        Refusal::Init(InitRefusal::NoName(_) | InitRefusal::BadName(_)) => {
            "\n\nhint: name it with --name NAME (letters, digits, - and _)"
        }
        Refusal::Init(InitRefusal::FileExists(_)) => "\n\nhint: move it away, or start the project in an empty folder",
        _ => "",
    };
    Stop::Message(format!("{refusal}{hint}"))
}
