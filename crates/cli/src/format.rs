//! The `--format` shared by commands that print for people or for programs.
//! Below `output` and `commands` both: `output` lists the commands' JSON
//! types, and the commands take this flag.

/// `--format` of a command whose output is for people (standard error)
/// or one JSON document on standard output: housekeeping commands
/// (`state`, `trust`, `init`, `docs`...).
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HumanOrJson {
    Human,
    Json,
}
