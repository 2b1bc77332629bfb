//! `monform mcp`: the Model Context Protocol server over stdio
//! (`monform_mcp`), for coding agents; and `monform approve HASH`, a
//! person's approval of a plan an agent made, which the server only reads.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use monform_mcp::approvals;

/// Who runs this, as the state's history names it (`user@host`).
fn user(env: &monform_engine::ops::OpenEnv, command: &str) -> String {
    monform_engine::Actor::of_user(command, env.user.clone()).by
}

/// The approvals file: `MONFORM_APPROVALS`, or the user's monform folder's.
fn approvals_path(env: &monform_engine::ops::OpenEnv) -> Result<std::path::PathBuf, approvals::ApprovalError> {
    let named = std::env::var(approvals::APPROVALS_VARIABLE).ok();
    approvals::approvals_path(named.as_deref(), env.user_dir.as_deref())
}

pub fn run(dir: &Path, api_url: Option<&str>) -> ExitCode {
    let env = super::context::open_env();
    let config = monform_mcp::Config {
        dir: dir.to_path_buf(),
        environment: super::context::environment().map(str::to_owned),
        approvals: approvals_path(&env).map_err(|e| e.to_string()),
        user: user(&env, "monform mcp"),
        env,
        api_url: api_url.map(str::to_owned),
        local: Some(&crate::connect::Emulator),
    };
    match monform_mcp::run_stdio(config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // stdout is the protocol's: the client logs stderr.
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

#[derive(Args)]
pub struct ApproveArgs {
    /// The planHash an agent's `plan` returned (at least its first 8 digits)
    #[arg(value_name = "HASH")]
    hash: String,
    /// Output: human, or json (`monform schema --output approve`)
    #[arg(long, value_enum, default_value_t = ApproveFormat::Human)]
    format: ApproveFormat,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ApproveFormat {
    Human,
    Json,
}

/// `approve HASH --format json`: the plan approved.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "Approved")]
pub struct ApprovedJson {
    /// The plan's whole hash.
    plan_hash: String,
    project: String,
    environment: Option<String>,
    /// What the plan changes.
    changes: Vec<ApprovedChange>,
    /// The approvals file the approval was recorded in.
    approvals: String,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct ApprovedChange {
    address: String,
    action: monform_engine::Action,
}

pub fn approve(dir: &Path, args: &ApproveArgs) -> ExitCode {
    let env = super::context::open_env();
    let result = approvals::find_plan(dir, &args.hash).and_then(|hash| {
        let path = approvals_path(&env)?;
        let plan = approvals::approve(&path, dir, &hash, &user(&env, "monform approve"))?;
        Ok((hash, plan, path))
    });
    let (hash, plan, path) = match result {
        Ok(approved) => approved,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    if args.format == ApproveFormat::Json {
        crate::render::print_json(&ApprovedJson {
            plan_hash: hash.to_string(),
            project: plan.project.clone(),
            environment: plan.environment.clone(),
            changes: plan
                .changes
                .iter()
                .map(|c| ApprovedChange {
                    address: c.address.to_string(),
                    action: c.action,
                })
                .collect(),
            approvals: path.display().to_string(),
        });
        return ExitCode::SUCCESS;
    }
    let environment = plan
        .environment
        .as_deref()
        .map(|e| format!(", environment {e}"))
        .unwrap_or_default();
    println!("Approved plan {hash} of project {}{environment}:", plan.project);
    if plan.changes.is_empty() {
        println!("  no changes");
    }
    for change in &plan.changes {
        println!("  {} {}", format!("{:?}", change.action).to_lowercase(), change.address);
    }
    eprintln!(
        "\nThe agent may now apply it (once: an apply changes the state, and the plan is then stale).\nRecorded in {}.",
        path.display()
    );
    ExitCode::SUCCESS
}
