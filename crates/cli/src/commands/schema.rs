//! `monform schema`: the JSON Schema of a resource file, of monform.toml,
//! of the policies' input, or of a command's `--format json` (`--output`).

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct SchemaArgs {
    /// Print the schema of monform.toml instead
    #[arg(long)]
    pub project: bool,
    /// Print the schema of the input Rego policies get instead
    #[arg(long, conflicts_with = "project")]
    pub policy_input: bool,
    /// Print the schema of COMMAND's `--format json` output instead (`plan`, `policy-test`...);
    /// without COMMAND, list the commands that have one
    #[arg(
        long,
        value_name = "COMMAND",
        num_args = 0..=1,
        default_missing_value = "",
        conflicts_with_all = ["project", "policy_input"]
    )]
    pub output: Option<String>,
}

pub fn run(args: SchemaArgs) -> ExitCode {
    if let Some(command) = &args.output {
        return output(command);
    }
    if args.policy_input {
        crate::render::print_json(&monform_policy::schema::input_schema());
    } else if args.project {
        print!("{}", monform_config::project_schema::project_schema_text());
    } else {
        print!("{}", monform_model::schema::document_text());
    }
    ExitCode::SUCCESS
}

/// `--output COMMAND`: its schema; without one (or an unknown one), the
/// commands that have one, on stdout when asked, with an error when not found.
fn output(command: &str) -> ExitCode {
    if let Some(published) = crate::output::find(command) {
        println!("{}", crate::output::schema_text(published));
        return ExitCode::SUCCESS;
    }
    let list: String = crate::output::PUBLISHED
        .iter()
        .map(|p| {
            let lines = if p.lines { " (JSON lines)" } else { "" };
            format!("  {:<20} monform {} {}{lines}\n", p.name(), p.words, p.flags)
        })
        .collect();
    if command.is_empty() {
        print!("Commands with a published --format json (monform schema --output COMMAND):\n{list}");
        return ExitCode::SUCCESS;
    }
    eprintln!(
        "error: no published output for `{command}`; the commands that have one:\n{list}\nhint: monform schema --output COMMAND, e.g. monform schema --output plan"
    );
    crate::exit::code(crate::exit::USAGE)
}
