//! `monform schema`: the JSON Schema of a resource file, or of monform.toml.

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct SchemaArgs {
    /// Print the schema of monform.toml instead
    #[arg(long)]
    pub project: bool,
}

pub fn run(args: SchemaArgs) -> ExitCode {
    if args.project {
        print!("{}", monform_config::project_schema::project_schema_text());
    } else {
        print!("{}", monform_model::schema::document_text());
    }
    ExitCode::SUCCESS
}
