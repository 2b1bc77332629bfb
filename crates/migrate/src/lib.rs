//! `monform migrate terraform`: a Terraform project of the service's
//! provider (checkly/checkly) as a monform project whose first plan adopts
//! every object the Terraform state holds, with no create, delete or
//! replace. No network: the files in, the files out.
//!
//! # Code map
//!
//! - `tf.rs`: one module folder read with hcl-edit (a real HCL parser,
//!   with spans): resources, variables, locals, outputs, module calls,
//!   `terraform.tfvars`; each with its file and line.
//! - `expr.rs`: a Terraform expression as a monform value (`var.X` is
//!   `${var:X}`, `each.value.path` is `${each.value.path}`, `count.index`
//!   is `${each.key}`, a resource's `.id` its logical id, `file()` read);
//!   the rest (conditionals, operators, most functions) says why not.
//! - `convert.rs`: the module tree (local `source = "./..."` calls
//!   followed), logical ids, scopes, `for_each` / `count` as `forEach`,
//!   literal variables and locals as `[vars]` (`convert/names.rs`), bodies
//!   in the provider's shape with the line of every attribute.
//! - `state.rs`: `terraform show -json`: each instance's id, key, values
//!   and sensitive marks.
//! - `mapping.rs`: provider attributes to the model's fields, the names
//!   derived from the model's schema (`skip_ssl` is `skipSSL`,
//!   `assertion` blocks are `assertions`, `group_id` is `group`).
//! - `project.rs`: each definition completed from the state where the
//!   provider's defaults are not monform's, untranslatable values taken
//!   from the state (and listed), secrets as `${env:NAME}` by export's
//!   rule (`project/secrets.rs`), one `import` entry per instance; a
//!   check's fields its group imposes left out; `checkly_environment_variable`
//!   written per key (`project/variables.rs`: variables take no `forEach`).
//! - here: the files of the project (resource YAML, `imports.yaml`,
//!   monform.toml with `[vars]`, ENVIRONMENT.md, MIGRATION.md, the editors'
//!   schemas) and the report.
//!
//! **Invariant:** no secret is written: a value the model's rule or the
//! state calls sensitive, or a sensitive Terraform variable, is
//! `${env:NAME}` in the files and named (never valued) in ENVIRONMENT.md.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

mod convert;
mod expr;
mod mapping;
mod project;
mod state;
mod tf;

pub use tf::Place;

/// Why a migration does not go on.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    #[error("{}: {error}", path.display())]
    Read { path: PathBuf, error: std::io::Error },
    #[error("{file}:{line}: {message}")]
    Parse { file: String, line: usize, message: String },
    #[error("{file}: {message}")]
    State { file: String, message: String },
    #[error("{}: no `*.tf` files", path.display())]
    NoConfiguration { path: PathBuf },
    #[error("{}: already holds a monform.toml; choose another --out", path.display())]
    OutExists { path: PathBuf },
    #[error("{}: {error}", path.display())]
    Write { path: PathBuf, error: std::io::Error },
}

/// Something the migration did not translate, or translated with a
/// caveat, at its place in the Terraform files.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Note {
    pub place: Option<Place>,
    pub message: String,
}

impl Note {
    pub fn new(place: Place, message: impl Into<String>) -> Note {
        Note {
            place: Some(place),
            message: message.into(),
        }
    }

    pub fn unplaced(message: impl Into<String>) -> Note {
        Note {
            place: None,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.place {
            Some(place) => write!(f, "{place}: {}", self.message),
            None => write!(f, "(state): {}", self.message),
        }
    }
}

/// An environment variable the written files name (a secret).
#[derive(Debug, Clone, PartialEq)]
pub struct EnvNeed {
    pub name: String,
    /// What it holds: a resource's field or a Terraform variable.
    pub what: String,
}

/// An `import` entry: adopt remote object `id` as `to`.
#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    pub to: String,
    pub id: String,
    /// Field path to the salted fingerprint of the secret the object holds
    /// by the Terraform state (never the value): the first plan compares
    /// the files' secret with it instead of showing it as to be set.
    pub secret_fingerprints: BTreeMap<String, String>,
}

/// What to migrate.
#[derive(Debug, Clone)]
pub struct Options {
    /// The Terraform root module's folder.
    pub dir: PathBuf,
    /// `terraform show -json` output.
    pub state: Option<PathBuf>,
    /// The new project's name.
    pub project: String,
    /// `[api] url` of the new project, if any.
    pub api_url: Option<String>,
}

/// A migrated project: its files (relative path to text) and the report.
#[derive(Debug)]
pub struct Migration {
    pub files: BTreeMap<String, String>,
    pub notes: Vec<Note>,
    pub env: Vec<EnvNeed>,
    pub imports: Vec<Import>,
    /// Definitions written (a `forEach` counts once).
    pub definitions: usize,
    pub vars: usize,
}

/// The project's name from the Terraform folder's: letters, digits, `-`, `_`.
pub fn default_project_name(dir: &Path) -> String {
    let name = dir
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if name.trim_matches('-').is_empty() {
        "terraform".into()
    } else {
        name
    }
}

/// Reads the configuration (and the state) and builds the project.
pub fn migrate(options: &Options) -> Result<Migration, MigrateError> {
    let has_tf = std::fs::read_dir(&options.dir)
        .map_err(|error| MigrateError::Read {
            path: options.dir.clone(),
            error,
        })?
        .filter_map(Result::ok)
        .any(|e| e.file_name().to_string_lossy().ends_with(".tf"));
    if !has_tf {
        return Err(MigrateError::NoConfiguration {
            path: options.dir.clone(),
        });
    }
    let state = match &options.state {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|error| MigrateError::Read {
                path: path.clone(),
                error,
            })?;
            Some(state::TfState::parse(&text, &path.display().to_string())?)
        }
        None => None,
    };
    let walked = convert::walk(&options.dir)?;
    let assembled = project::assemble(&walked, state.as_ref());
    let mut notes = walked.notes.clone();
    notes.extend(assembled.notes.iter().cloned());
    if state.is_none() {
        notes.push(Note::unplaced(
            "no --state: no import entries are written, so the first plan would create every object; pass `terraform show -json` output",
        ));
    }
    notes.sort();
    notes.dedup();
    let mut vars = walked.vars.clone();
    for name in &assembled.secret_vars {
        if vars.remove(name).is_some() {
            notes.push(Note::unplaced(format!(
                "[vars] `{name}` held a value used in a secret field: left out of monform.toml (the field reads an environment variable instead)"
            )));
        }
    }
    let mut env = walked
        .env
        .iter()
        .map(|(name, what)| EnvNeed {
            name: name.clone(),
            what: what.clone(),
        })
        .collect::<Vec<_>>();
    for need in &assembled.env {
        if !env.iter().any(|e| e.name == need.name) {
            env.push(need.clone());
        }
    }
    let mut files = BTreeMap::new();
    for (file, sections) in &assembled.files {
        files.insert(file.clone(), resource_file(file, sections));
    }
    for (path, text) in &assembled.scripts {
        files.insert(path.clone(), text.clone());
    }
    if !assembled.imports.is_empty() {
        files.insert("imports.yaml".into(), imports_file(&assembled.imports));
    }
    files.insert(
        "monform.toml".into(),
        project_toml(&options.project, options.api_url.as_deref(), &vars),
    );
    if !env.is_empty() {
        files.insert("ENVIRONMENT.md".into(), environment_markdown(&env));
    }
    let migration = Migration {
        files,
        notes,
        env,
        imports: assembled.imports,
        definitions: assembled.definitions,
        vars: vars.len(),
    };
    let report = migration_markdown(&migration, &options.dir);
    let mut migration = migration;
    migration.files.insert("MIGRATION.md".into(), report);
    Ok(migration)
}

/// Writes the project into `out` (created; refused when it holds a
/// monform.toml), with the editors' JSON Schemas its files name.
pub fn write(out: &Path, migration: &Migration) -> Result<(), MigrateError> {
    if out.join("monform.toml").exists() {
        return Err(MigrateError::OutExists { path: out.to_owned() });
    }
    let schemas = [
        (
            "schema/resource-file.schema.json".to_owned(),
            monform_model::schema::document_text(),
        ),
        (
            "schema/monform.schema.json".to_owned(),
            monform_config::project_schema::project_schema_text(),
        ),
    ];
    for (relative, text) in migration
        .files
        .iter()
        .map(|(p, t)| (p.clone(), t.clone()))
        .chain(schemas)
    {
        let path = out.join(&relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|error| MigrateError::Write {
                path: parent.to_owned(),
                error,
            })?;
        }
        std::fs::write(&path, text).map_err(|error| MigrateError::Write { path, error })?;
    }
    Ok(())
}

fn resource_file(file: &str, sections: &BTreeMap<monform_model::Kind, Map<String, Value>>) -> String {
    let up = "../".repeat(file.matches('/').count());
    let mut document = Map::new();
    for (kind, entries) in sections {
        document.insert(kind.section().to_owned(), Value::Object(entries.clone()));
    }
    let source = format!("{}.tf", file.strip_suffix(".yaml").unwrap_or(file));
    let body = serde_saphyr::to_string(&Value::Object(document)).unwrap_or_default();
    format!(
        "# yaml-language-server: $schema={up}schema/resource-file.schema.json\n# Migrated from {source} by `monform migrate terraform`.\n{body}"
    )
}

fn imports_file(imports: &[Import]) -> String {
    let entries: Vec<Value> = imports
        .iter()
        .map(|i| {
            let mut entry = serde_json::json!({ "to": i.to, "id": i.id });
            if !i.secret_fingerprints.is_empty() {
                entry["secretFingerprints"] = serde_json::json!(i.secret_fingerprints);
            }
            entry
        })
        .collect();
    let body = serde_saphyr::to_string(&serde_json::json!({ "import": entries })).unwrap_or_default();
    format!(
        "# yaml-language-server: $schema=schema/resource-file.schema.json\n# The objects Terraform's state holds, adopted by the first `monform apply`\n# (then `terraform state rm` them so Terraform forgets them without deleting them).\n# Once applied the entries are no-ops and may stay.\n{body}"
    )
}

fn project_toml(project: &str, api_url: Option<&str>, vars: &Map<String, Value>) -> String {
    let mut text = format!(
        "#:schema schema/monform.schema.json\n[project]\nname = \"{}\"\n",
        project.replace(['"', '\\'], "")
    );
    if let Some(url) = api_url.filter(|u| *u != "local") {
        text.push_str(&format!("\n[api]\nurl = \"{}\"\n", url.replace(['"', '\\'], "")));
    }
    if !vars.is_empty() {
        let mut table = toml::Table::new();
        for (name, value) in vars {
            if let Some(value) = to_toml(value) {
                table.insert(name.clone(), value);
            }
        }
        let mut wrapper = toml::Table::new();
        wrapper.insert("vars".into(), toml::Value::Table(table));
        text.push_str("\n# Terraform variables and locals with literal values.\n");
        text.push_str(&toml::to_string(&wrapper).unwrap_or_default());
    }
    text
}

fn to_toml(value: &Value) -> Option<toml::Value> {
    Some(match value {
        Value::Null => return None,
        Value::Bool(b) => toml::Value::Boolean(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => toml::Value::Integer(i),
            None => toml::Value::Float(n.as_f64()?),
        },
        Value::String(s) => toml::Value::String(s.clone()),
        Value::Array(items) => toml::Value::Array(items.iter().filter_map(to_toml).collect()),
        Value::Object(map) => {
            toml::Value::Table(map.iter().filter_map(|(k, v)| Some((k.clone(), to_toml(v)?))).collect())
        }
    })
}

fn environment_markdown(env: &[EnvNeed]) -> String {
    let mut text = String::from(
        "# Environment variables\n\nThe migrated files name these secrets as `${env:NAME}` (their values were never written); set them before `monform validate`, `plan` or `apply`.\n\n| variable | holds |\n|---|---|\n",
    );
    for need in env {
        text.push_str(&format!("| `{}` | {} |\n", need.name, need.what));
    }
    text
}

fn migration_markdown(migration: &Migration, dir: &Path) -> String {
    let mut text = format!(
        "# Migration from Terraform\n\nWritten by `monform migrate terraform {}`: {} definitions, {} objects to import, {} [vars].\n\n",
        dir.display(),
        migration.definitions,
        migration.imports.len(),
        migration.vars
    );
    text.push_str("## Next steps\n\n1. Set the environment variables of ENVIRONMENT.md (if any).\n2. Review the notes below and edit the files where they say so.\n3. `monform plan`: every object is imported, none created, deleted or replaced.\n4. `monform apply`, then `terraform state rm` each migrated address so Terraform forgets the objects without deleting them.\n\n");
    text.push_str("## What was not translated as written\n\n");
    if migration.notes.is_empty() {
        text.push_str("Nothing: every resource, variable and local translated.\n");
    }
    for note in &migration.notes {
        let place = note
            .place
            .as_ref()
            .map_or_else(|| "(state)".to_owned(), ToString::to_string);
        text.push_str(&format!("- `{place}`: {}\n", note.message));
    }
    text
}

/// The report printed after a migration.
pub fn report(migration: &Migration, out: &Path) -> String {
    let mut text = format!(
        "Migrated {} definitions ({} objects to import, {} [vars]) into {}\n",
        migration.definitions,
        migration.imports.len(),
        migration.vars,
        out.display()
    );
    if !migration.notes.is_empty() {
        text.push_str(&format!(
            "\nNot translated as written ({}; also in MIGRATION.md):\n",
            migration.notes.len()
        ));
        for note in &migration.notes {
            text.push_str(&format!("  {note}\n"));
        }
    }
    if !migration.env.is_empty() {
        text.push_str("\nSet these environment variables (secrets, never written; see ENVIRONMENT.md):\n");
        for need in &migration.env {
            text.push_str(&format!("  {}  {}\n", need.name, need.what));
        }
    }
    text.push_str(&format!(
        "\nNext: `monform --dir {} plan` shows the imports and nothing to create, delete or replace.\n",
        out.display()
    ));
    text
}

#[cfg(test)]
mod tests;
