//! `monform show PLANFILE`: a saved plan (`plan --out`) rendered as `plan`
//! renders it, for a reviewer who has the file and not the account, with
//! the policies' findings and overrides it was planned with.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::Value;

use super::context::PlanFormat as Format;
use crate::render::Output;
use crate::render::plan::{Style, human, json, markdown_in};
use crate::render::policy;
use crate::render::repo_paths::RepoPaths;
use crate::render::shown::{KEY, POLICY_KEY, Shown};

#[derive(Args)]
pub struct ShowArgs {
    /// A plan saved by `monform plan --out FILE`
    #[arg(value_name = "PLANFILE")]
    plan: PathBuf,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

const HINT: &str = "hint: save a plan with `monform plan --out FILE`, then `monform show FILE`";

/// What a saved plan holds for `show`.
struct Read {
    plan: monform_engine::Plan,
    environment: Option<String>,
    /// The policies' part (findings and overrides), if the project has policies.
    policy: Option<Value>,
}

/// The plan in the file, or why there is none.
fn read(path: &std::path::Path) -> Result<Read, String> {
    let shown_path = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {shown_path}: {e}"))?;
    let mut file: Value =
        serde_json::from_str(&text).map_err(|e| format!("{shown_path} is not a saved plan (not JSON: {e})"))?;
    let saved: monform_engine::SavedPlan =
        serde_json::from_value(file.clone()).map_err(|e| format!("{shown_path} is not a saved plan ({e})"))?;
    let shown = file
        .get_mut(KEY)
        .map(Value::take)
        .ok_or_else(|| format!("{shown_path} was saved by a monform too old to show it"))?;
    let shown: Shown =
        serde_json::from_value(shown).map_err(|e| format!("the plan in {shown_path} cannot be read: {e}"))?;
    // The engine's own record; plans saved before it kept one have it in `shown` only.
    let environment = saved
        .environment
        .clone()
        .or_else(|| shown.environment().map(str::to_owned));
    let plan = shown
        .plan(saved.project, saved.state_serial)
        .map_err(|e| format!("the plan in {shown_path} cannot be read: {e}"))?;
    let policy = file.get_mut(POLICY_KEY).map(Value::take);
    Ok(Read {
        plan,
        environment,
        policy,
    })
}

/// `dir`: the project folder, which names the policies' files in Markdown
/// from the repository's root.
pub fn run(dir: &std::path::Path, args: ShowArgs, output: &Output) -> ExitCode {
    let Read {
        plan,
        environment,
        policy,
    } = match read(&args.plan) {
        Ok(read) => read,
        Err(message) => {
            eprintln!("error: {message}\n\n{HINT}");
            return ExitCode::FAILURE;
        }
    };
    match args.format {
        Format::Human => {
            let header = environment
                .as_deref()
                .map(|e| format!("Project {}, environment {e}\n\n", plan.project))
                .unwrap_or_default();
            let style = Style {
                color: output.stdout_color(),
            };
            let policy = policy.as_ref().map(policy::human_of).unwrap_or_default();
            print!("{header}{}{policy}", human(&plan, style));
        }
        Format::Json => {
            let mut json = json(&plan);
            json.environment = environment;
            json.policy = policy;
            crate::render::print_json(&json);
        }
        Format::Markdown => print!(
            "{}{}",
            markdown_in(&plan, environment.as_deref()),
            policy
                .as_ref()
                .map(|p| policy::markdown_of(p, &RepoPaths::for_project(dir)))
                .unwrap_or_default()
        ),
    }
    ExitCode::SUCCESS
}
