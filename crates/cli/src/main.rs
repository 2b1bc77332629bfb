//! The `monform` command. Parses arguments, runs a command, renders its
//! result; the work itself lives in the library crates.
//!
//! # Code map
//!
//! clap arguments, one module per command (`commands/`), connection set-up
//! (`connect.rs`: `--api-url`, `MONFORM_API_URL`, monform.toml; `local` starts
//! the emulator in-process on `connect::local_db`, the database `serve`
//! serves by default; `Connection::target`, the URL as chosen and the
//! account, is what apply records in the state and plan compares with it),
//! rendering (`render/`: miette diagnostics, with `render/findings.rs`
//! summarising many of one rule's findings, the linter's or a policy's, and writing `validate --format json` a
//! diagnostic at a time (`render::Items`; `render::print_json` buffers stdout, which flushes at each newline); plans
//! as human text (`render/plan.rs`), JSON and Markdown (`render/plan/json.rs`, `render/plan/markdown.rs`), with `render/renames.rs` the rename suggestions in all three, `render/lists.rs` lists diffed item by item, `render/shown.rs` what a saved plan keeps for `commands/show.rs` (`monform show PLANFILE`, rendered by the same functions as `plan`); apply progress). stdout carries data,
//! stderr diagnostics and progress. `commands/context.rs` loads the files
//! (`Findings::Show` for validate, plan and apply; `Hide` leaves the linter's
//! findings out of every other command) and opens the state
//! backend monform.toml names (PostgreSQL at `MONFORM_STATE_URL`);
//! `commands/state.rs` has `state list|show|rm|mv|history|migrate`.
//! `commands/test.rs` dispatches: `commands/test/service.rs` runs applied
//! checks in the service's test sessions (`ops::test_selection`,
//! `ops::run_test_sessions`), `commands/test/local.rs` (`test --local`) the
//! files' checks (`ops::local_checks`) here with `monform-runner`; both read
//! `commands/test/args.rs` and neither uses the other; both render the
//! engine's `ops::TestRun` (`render/test.rs`). `commands/status.rs`
//! renders `ops::status`'s `CheckStatus` as it comes (`render/status.rs`,
//! which also writes the JSON shape); `commands/export.rs` and `commands/import.rs`
//! word `ops::export_account` / `find_unmanaged` / `adopt_unmanaged`
//! (`render/export.rs` what both say). Commands do not call each other:
//! what two share is in `context.rs` (loading, the state backend, the split
//! and plan formats, durable writes, signals) or `render/`.
//! `commands/location_keys.rs` creates, lists and revokes a private
//! location's agent keys (the raw key alone on stdout, once).
//! Policies (issue 32): `context::load_policies` loads them for plan and
//! apply (a broken one stops the command at its file:line); validate
//! evaluates them per load (per environment); plan and apply call
//! `ops::check_policies` / `Ready::check_policies` with `--policy-override`,
//! and `render/policy.rs` writes the findings and overrides into the plan's
//! JSON and Markdown. `plan --out` keeps that JSON in the saved plan (key
//! `policy`): `show` prints it (human, JSON, Markdown) and `apply PLANFILE`
//! re-checks the plan with the overrides saved there, refusing new ones. `render/sarif.rs` writes any diagnostics as SARIF 2.1.0
//! or GitHub workflow commands (`validate`, `plan`, `policy test --format
//! sarif|github`); `render/apply_output.rs` is `apply --format json` (a line
//! per event, a result line last, also when the apply never starts) and
//! `--format markdown`. `commands/policy.rs` is `policy test`.
//! `commands/docs.rs` is `monform docs --out DIR`: the docs' reference pages
//! (`docs/src/reference/`) from clap's definition, the model's schema and the
//! diagnostics' table (`monform_config::diagnostic::codes`).
//! `--env` / `MONFORM_ENV` is read once (`context::environment`); every
//! command loads the files for it (`context::load_files`), and those that use
//! the API or a state require one when environments are declared. The
//! binary uses mimalloc as its allocator: loading and planning allocate a great
//! deal from both cores, and glibc's malloc took about a fifth of the time.
//! `main` sets its purge delay per command (`tune_allocator`): 0 for `plan`
//! (freed pages go back at once, or its peak holds them), 10 ms for every
//! other command (the same peaks; at 0 a large apply spent half its CPU in
//! the kernel faulting pages in again).

#[cfg(test)]
mod boundary;
mod commands;
mod connect;
mod exit;
mod format;
mod output;
mod render;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

// Loading and planning allocate a great deal, from both cores: mimalloc
// takes a fifth off the time glibc's malloc needs for a 10,000-check plan.
// `--features system-allocator` leaves it out for heap profilers.
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How soon mimalloc gives freed pages back to the system. `plan` returns
/// them at once: it frees the files' parsed form and the listing's pages
/// while it builds the next thing, and a delay kept both resident (40 MiB
/// of a 100,000-check plan's peak). Every other command waits 10 ms
/// (mimalloc 2's default): giving pages back and faulting them in again
/// cost `validate` 0.3-1.5 s of 3-4 s at 100,000 checks, and a cold apply
/// of 100,000 checks right after a `validate` 73 s of system time (173 s
/// in all, against 106 s and 17 s at 10 ms, the same 449 MiB peak).
/// `MIMALLOC_PURGE_DELAY` in the environment still wins.
fn tune_allocator(command: &Command) {
    #[cfg(not(feature = "system-allocator"))]
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        let delay = if matches!(command, Command::Plan(_)) { 0 } else { 10 };
        // SAFETY: sets an option mimalloc reads under its own locks.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, delay) };
    }
    #[cfg(feature = "system-allocator")]
    let _ = command;
}

/// `mi_option_purge_delay` in mimalloc.h's `mi_option_t` (the sys crate
/// names no constant for it); a test below holds it to its default.
#[cfg(any(test, not(feature = "system-allocator")))]
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

#[derive(Parser)]
#[command(
    name = "monform",
    version,
    about = "Monitoring configuration as code: plan and apply checks, groups, alert channels and more"
)]
struct Cli {
    /// The project folder (holding monform.toml); default: the nearest folder
    /// holding one, from the working folder up (as git and cargo find theirs)
    #[arg(long, global = true)]
    dir: Option<PathBuf>,
    /// The API to talk to (overrides MONFORM_API_URL and monform.toml); `local` runs the bundled emulator
    #[arg(long, global = true)]
    api_url: Option<String>,
    /// The environment to work on (of monform.toml's [environments]); `validate` without it checks every one
    #[arg(long = "env", global = true, env = "MONFORM_ENV", value_name = "NAME")]
    environment: Option<String>,
    /// Requests per window at most (`N/SECS`), or `off`; also MONFORM_RATE_LIMIT. Default: the budget the API states, 600/60 until it does
    #[arg(long, global = true, value_name = "N/SECS|off", value_parser = rate_limit)]
    rate_limit: Option<String>,
    /// When to use colours
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    /// The project folder's path in its repository, for the files named in `--format github`, SARIF, JUnit and
    /// Markdown (e.g. `shop`); default: found from the nearest folder holding `.git`
    #[arg(long, global = true, env = "MONFORM_PATH_PREFIX", value_name = "PATH")]
    path_prefix: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand)]
enum Command {
    /// Start a project here: monform.toml, an example check, schemas (--from-account: adopt the account's)
    Init(commands::init::InitArgs),
    /// Load and check the project's files; no network
    Validate(commands::validate::ValidateArgs),
    /// Show what apply would change
    Plan(commands::plan::PlanArgs),
    /// Show a plan saved by `plan --out FILE`, as `plan` shows it; no network
    Show(commands::show::ShowArgs),
    /// Make the account match the files
    Apply(commands::apply::ApplyArgs),
    /// Delete every object of this project (and nothing else)
    Destroy(commands::apply::DestroyArgs),
    /// Keep the service in sync with the files, each interval (--once: one interval)
    Reconcile(commands::reconcile::ReconcileArgs),
    /// Write the service's changes (drift) back into the files (--check: the diff only)
    Codify(commands::codify::CodifyArgs),
    /// Adopt an existing object (ADDRESS REMOTE_ID), or every unmanaged one (--all-unmanaged)
    Import(commands::import::ImportArgs),
    /// Write every object of the account as a monform project (--out DIR)
    Export(commands::export::ExportArgs),
    /// Write a Terraform project of the service's provider as a monform project adopting its objects
    Migrate(commands::migrate::MigrateArgs),
    /// Write checks for an OpenAPI document's GET operations or a sitemap's pages as a forEach to review
    Generate(commands::generate::GenerateArgs),
    /// Inspect and change the state: list, show, rm, mv, history, migrate
    State(commands::state::StateArgs),
    /// Run the project's applied checks once (a test session) and report; exit 1 if any fails
    Test(commands::test::TestArgs),
    /// The project's checks with success ratio, p95 and last status
    Status(commands::status::StatusArgs),
    /// Service level objectives: status (SLI, error budget, burn rates), export --openslo, import
    Slo(commands::slo::SloArgs),
    /// Exit 1 unless every named SLO has its error budget left and is not burning fast
    Gate(commands::slo::GateArgs),
    /// Keys of a private location (ADDRESS) for its agents: create (printed once), list (masked), revoke
    LocationKeys(commands::location_keys::LocationKeysArgs),
    /// The project's Rego policies: `policy test` runs their test_* rules
    Policy(commands::policy::PolicyArgs),
    /// Trust this project's [api] url with your API key (--revoke, --list)
    Trust(commands::trust::TrustArgs),
    /// Print a JSON Schema: a resource file's, --project, --policy-input, --output COMMAND (its JSON)
    Schema(commands::schema::SchemaArgs),
    /// Write the docs' generated reference pages into --out DIR
    Docs(commands::docs::DocsArgs),
    /// Run the language server for editors (LSP over stdio)
    Lsp,
    /// Run the MCP server for coding agents (over stdio); it applies only plans a person approved
    Mcp,
    /// Approve a plan an agent made (its planHash), so `monform mcp` may apply it
    Approve(commands::mcp::ApproveArgs),
    /// Write a skill for coding agents (SKILL.md and fields.md, from the model) into --out DIR
    AgentSkill(commands::agent_skill::AgentSkillArgs),
    /// Run the monitoring service emulator (HTTP over a SQLite file)
    Serve(commands::serve::ServeArgs),
    /// Run the private-location agent: a private location's checks, from this network
    #[command(after_help = agent_environment())]
    Agent,
}

/// The agent's environment variables, one per line, for its `--help`.
fn agent_environment() -> String {
    let width = monform_agent::config::VARIABLES
        .iter()
        .map(|(name, _)| name.len())
        .max()
        .unwrap_or(0);
    let mut text = String::from("Environment variables:\n");
    for (name, meaning) in monform_agent::config::VARIABLES {
        text.push_str(&format!("  {name:width$}  {meaning}\n"));
    }
    text
}

/// The guide page that explains each command at length: its `--help` is a
/// line, and names this page last.
const GUIDES: &[(&str, &str)] = &[
    ("init", "quickstart.md"),
    ("validate", "plan-apply.md"),
    ("plan", "plan-apply.md"),
    ("show", "plan-apply.md"),
    ("apply", "plan-apply.md"),
    ("destroy", "plan-apply.md"),
    ("reconcile", "drift.md"),
    ("codify", "codify.md"),
    ("import", "migrating.md"),
    ("export", "migrating.md"),
    ("migrate", "migrating.md"),
    ("generate", "migrating.md"),
    ("state", "state.md"),
    ("test", "testing.md"),
    ("status", "status-pages.md"),
    ("slo", "slos.md"),
    ("gate", "slos.md"),
    ("location-keys", "private-locations.md"),
    ("policy", "policies.md"),
    ("trust", "security.md"),
    ("schema", "editors.md"),
    ("docs", "contributing.md"),
    ("lsp", "editors.md"),
    ("mcp", "agents.md"),
    ("approve", "agents.md"),
    ("agent-skill", "agents.md"),
    ("serve", "emulator.md"),
    ("agent", "private-locations.md"),
];

/// `cli`'s subcommands with their guide page named after their help.
fn with_guides(mut cli: clap::Command) -> clap::Command {
    let names: Vec<String> = cli.get_subcommands().map(|c| c.get_name().to_owned()).collect();
    for name in names {
        let Some((_, page)) = GUIDES.iter().find(|(command, _)| *command == name) else {
            continue;
        };
        cli = cli.mut_subcommand(name, |command| {
            let guide = format!("Guide: docs/src/guide/{page}");
            let text = match command.get_after_help() {
                Some(before) => format!("{before}\n{guide}"),
                None => guide,
            };
            command.after_help(text)
        });
    }
    cli
}

/// The global options the agent does not read: hidden from its help, and
/// refused when given (an agent is configured by its environment).
const NOT_FOR_AGENT: [(&str, &str); 3] = [
    ("dir", "--dir"),
    ("environment", "--env"),
    ("rate_limit", "--rate-limit"),
];

/// The command line's definition: `Cli`'s, with the agent's help showing only
/// the options it reads. An option a subcommand defines itself is not
/// propagated to it: the agent gets hidden ones of its own, to refuse them.
fn command() -> clap::Command {
    with_guides(<Cli as clap::CommandFactory>::command()).mut_subcommand("agent", |agent| {
        NOT_FOR_AGENT
            .iter()
            .fold(agent, |agent, (id, flag)| {
                // The parent reads the value (as it reads a global one): same type.
                let parser = match *id {
                    "dir" => clap::value_parser!(PathBuf),
                    _ => clap::value_parser!(String),
                };
                agent.arg(
                    clap::Arg::new(*id)
                        .long(&flag[2..])
                        .hide(true)
                        .value_name("VALUE")
                        .value_parser(parser),
                )
            })
            .arg(
                clap::Arg::new("api_url")
                    .long("api-url")
                    .value_name("URL")
                    .help("The service's URL (overrides MONFORM_API_URL)"),
            )
    })
}

/// Checks `--rate-limit` when parsing, so a typo fails before any work.
fn rate_limit(text: &str) -> Result<String, String> {
    connect::parse_rate_limit(text).map(|_| text.to_owned())
}

/// The nearest folder holding a monform.toml, from the working folder up;
/// the working folder itself when none does (its errors then say so).
fn project_folder() -> PathBuf {
    let here = PathBuf::from(".");
    let Ok(start) = std::env::current_dir() else {
        return here;
    };
    start
        .ancestors()
        .find(|folder| folder.join(monform_config::project::PROJECT_FILE).is_file())
        .map_or(here, |folder| {
            if folder == start {
                PathBuf::from(".")
            } else {
                folder.to_path_buf()
            }
        })
}

/// Terraform's single-dash `-out FILE` and `-out=FILE` after `plan`, as
/// `--out` (clap would read `-out` as the short flags `-o -u -t`).
fn terraform_spellings(args: impl Iterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut after_plan = false;
    args.map(|arg| {
        let text = arg.to_str().unwrap_or_default();
        if text == "plan" {
            after_plan = true;
        }
        match text.strip_prefix("-out") {
            Some(rest) if after_plan && (rest.is_empty() || rest.starts_with('=')) => format!("--out{rest}").into(),
            _ => arg,
        }
    })
    .collect()
}

fn main() -> ExitCode {
    // `monform plan | head` should end quietly, as other Unix tools do,
    // instead of panicking on the closed pipe.
    #[cfg(unix)]
    // SAFETY: restoring the default action of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let matches = command().get_matches_from(terraform_spellings(std::env::args_os()));
    let mut cli = match <Cli as clap::FromArgMatches>::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    tune_allocator(&cli.command);
    if let Some(agent) = matches.subcommand_matches("agent") {
        // Given on the command line, before or after `agent` (MONFORM_ENV in the
        // environment is not a mistake: the agent ignores it).
        let given = |id: &str| {
            [agent, &matches]
                .iter()
                .any(|m| m.value_source(id) == Some(clap::parser::ValueSource::CommandLine))
        };
        if let Some((_, flag)) = NOT_FOR_AGENT.iter().find(|(id, _)| given(id)) {
            eprintln!(
                "error: monform agent does not take {flag}: it is configured by its environment (see `monform agent --help`)"
            );
            return ExitCode::FAILURE;
        }
        if let Some(url) = agent.get_one::<String>("api_url") {
            cli.api_url = Some(url.clone());
        }
    }
    let dir = match (cli.dir.take(), &cli.command) {
        (Some(dir), _) => dir,
        // A project is started where the user is, not in the nearest one.
        (None, Command::Init(_)) => PathBuf::from("."),
        (None, _) => project_folder(),
    };
    let _ = connect::RATE_LIMIT_FLAG.set(cli.rate_limit.clone());
    render::repo_paths::set_prefix_flag(cli.path_prefix.take());
    let all_findings = match &cli.command {
        Command::Validate(args) => args.all_findings,
        Command::Plan(args) => args.all_findings,
        Command::Apply(args) => args.all_findings,
        _ => false,
    };
    let output = render::Output::new(cli.color).with_all_findings(all_findings);
    commands::context::set_environment(cli.environment.clone());
    let code = match cli.command {
        Command::Init(args) => commands::init::run(&dir, cli.api_url.as_deref(), args, &output),
        Command::Validate(args) => commands::validate::run(&dir, &args, &output),
        Command::Plan(args) => commands::plan::run(&dir, cli.api_url.as_deref(), args, &output),
        Command::Show(args) => commands::show::run(&dir, args, &output),
        Command::Apply(args) => commands::apply::run_apply(&dir, cli.api_url.as_deref(), args, &output),
        Command::Destroy(args) => commands::apply::run_destroy(&dir, cli.api_url.as_deref(), args, &output),
        Command::Reconcile(args) => commands::reconcile::run(&dir, cli.api_url.as_deref(), args),
        Command::Codify(args) => commands::codify::run(&dir, cli.api_url.as_deref(), args, &output),
        Command::Import(args) => commands::import::run(&dir, cli.api_url.as_deref(), args, &output),
        Command::Export(args) => commands::export::run(&dir, cli.api_url.as_deref(), args, &output),
        Command::Migrate(args) => commands::migrate::run(cli.api_url.as_deref(), args),
        Command::Generate(args) => commands::generate::run(&dir, args),
        Command::State(args) => commands::state::run(&dir, cli.api_url.as_deref(), args, &output),
        Command::Test(args) => commands::test::run(&dir, cli.api_url.as_deref(), args, &output),
        Command::Status(args) => commands::status::run(&dir, cli.api_url.as_deref(), args, &output),
        Command::Slo(args) => commands::slo::run(&dir, cli.api_url.as_deref(), args, &output),
        Command::Gate(args) => commands::slo::gate(&dir, cli.api_url.as_deref(), args, &output),
        Command::LocationKeys(args) => commands::location_keys::run(&dir, cli.api_url.as_deref(), args, &output),
        Command::Policy(args) => commands::policy::run(&dir, args, &output),
        Command::Schema(args) => commands::schema::run(args),
        Command::Docs(args) => commands::docs::run(args, command()),
        Command::Trust(args) => commands::trust::run(&dir, &args),
        Command::Lsp => commands::lsp::run(),
        Command::Mcp => commands::mcp::run(&dir, cli.api_url.as_deref()),
        Command::Approve(args) => commands::mcp::approve(&dir, &args),
        Command::AgentSkill(args) => commands::agent_skill::run(&args),
        Command::Serve(args) => commands::serve::run(&dir, args),
        Command::Agent => commands::agent::run(cli.api_url.as_deref(), cli.color),
    };
    // The parse cache's entries are written in the background.
    monform_config::settle_cache();
    code
}

#[cfg(test)]
mod allocator {
    #[test]
    fn the_purge_delay_option_is_the_one_mimalloc_names_so() {
        // mimalloc 3's default purge delay is 1000 ms (2's is 10): another
        // option at this index would have another default.
        // SAFETY: reads an option.
        let delay = unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert!(delay == 1000 || delay == 10, "{delay}");
        }
    }
}
