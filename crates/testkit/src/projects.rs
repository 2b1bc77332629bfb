//! Projects generated from the resource model, for the zero-spurious-diff
//! property (issue 45): [`Project::generate`] draws a valid project of
//! every kind from the model's JSON Schema (`monform_model::schema`), every
//! check type, optional fields drawn or left out, defaults written or left
//! out, sets in any order, references between the project's resources,
//! scripts inline or in files; [`Project::write`] writes it as YAML, TOML
//! and JSON files; [`edit`] makes one random edit and says what a plan
//! must show for it ([`Expect`]). [`all_fields`] lists the schema's fields,
//! so a run can say which it never drew.
//!
//! Seeds: [`case_seed`] derives each case's seed from the run's, so
//! `MONFORM_TEST_SEED=<run seed>` and the case number replay one case.

mod edits;
mod project;
mod random;
mod values;

pub use edits::{Edit, Expect, edit, meaning};
pub use project::{Entry, FILES, Format, Project, Size, files_of, inline_scripts};
pub use random::Rng;
pub use values::all_fields;

/// The seed of case `case` of a run seeded with `seed`.
pub fn case_seed(seed: u64, case: u64) -> u64 {
    Rng::case_seed(seed, case)
}
