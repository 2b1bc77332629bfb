//! `monform schema`: the JSON Schema of a resource file.

use std::process::ExitCode;

pub fn run() -> ExitCode {
    print!("{}", monform_model::schema::document_text());
    ExitCode::SUCCESS
}
