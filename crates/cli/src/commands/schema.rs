//! `monform schema`: the JSON Schema of a resource file, or of monform.toml.

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct SchemaArgs {
    /// Print the schema of monform.toml instead
    #[arg(long)]
    pub project: bool,
    /// Print the schema of the input Rego policies get instead
    #[arg(long, conflicts_with = "project")]
    pub policy_input: bool,
}

pub fn run(args: SchemaArgs) -> ExitCode {
    if args.policy_input {
        crate::render::print_json(&monform_policy::schema::input_schema());
    } else if args.project {
        print!("{}", monform_config::project_schema::project_schema_text());
    } else {
        print!("{}", monform_model::schema::document_text());
    }
    ExitCode::SUCCESS
}
