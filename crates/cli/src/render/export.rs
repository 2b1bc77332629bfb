//! What `export` and `import --all-unmanaged` say about the project they
//! wrote (standard error: the files are the data).

use std::path::Path;

use monform_api::Remote;
use monform_engine::ops::{Exported, Unmanaged, include_name};

/// The warnings of the export, how many objects went into how many files,
/// and the environment variables the files need.
pub fn report(out: &Path, exported: &Exported, verb: &str) {
    for warning in &exported.warnings {
        eprintln!("warning: {warning}");
    }
    let files = exported.files.keys().filter(|f| f.ends_with(".yaml")).count();
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    eprintln!(
        "{verb} {} into {} in {}",
        plural(exported.objects.len(), "object", "objects"),
        plural(files, "resource file", "resource files"),
        out.display()
    );
    if !exported.folded.is_empty() {
        let items: usize = exported.folded.iter().map(|f| f.items).sum();
        eprintln!(
            "Folded {} into {} (forEach): {} definitions in all",
            plural(items, "object", "objects"),
            plural(exported.folded.len(), "definition", "definitions"),
            exported.definitions()
        );
    }
    if !exported.defaults.is_empty() {
        let fields: Vec<&str> = exported.defaults.keys().map(String::as_str).collect();
        eprintln!(
            "The checks' shared values are monform.toml's [defaults]: {}",
            fields.join(", ")
        );
    }
    // The files' `$schema` comments name these, relative to each file.
    eprintln!(
        "Editors' JSON Schemas: {} (`monform schema` and `monform schema --project` print them again)",
        out.join("schema").display()
    );
    if !exported.service_references.is_empty() {
        eprintln!(
            "Kept as written ({{{{NAME}}}}: the service fills in its own variable when the check runs; no secret to set here):"
        );
        for (address, field) in &exported.service_references {
            eprintln!("  {address} {field}");
        }
    }
    if !exported.env.is_empty() {
        eprintln!(
            "Set these environment variables (secrets; listed in {}):",
            out.join("ENVIRONMENT.md").display()
        );
        for var in &exported.env {
            eprintln!("  {}  ({} {})", var.name, var.address, var.field);
        }
    }
}

/// `export --format json`: what was written where (the files are the data;
/// never a secret's value, only the variables to set).
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "Export")]
pub struct ExportJson {
    /// The folder written.
    pub out: String,
    /// Every file written, relative to `out`.
    pub files: Vec<String>,
    /// The addresses of the objects exported.
    pub objects: Vec<String>,
    /// Objects folded into `forEach` definitions, and how many definitions in all.
    pub folded_objects: usize,
    pub definitions: usize,
    /// The checks' shared values written as monform.toml's `[defaults]`.
    pub defaults: Vec<String>,
    /// The environment variables the files need (secrets), as ENVIRONMENT.md lists them.
    pub env: Vec<EnvJson>,
    pub warnings: Vec<String>,
}

/// An environment variable a written file reads (`${env:NAME}`).
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct EnvJson {
    pub name: String,
    pub address: String,
    /// The field path inside the resource, e.g. `value`.
    pub field: String,
}

/// What [`report`] says, for programs.
pub fn report_json(out: &Path, exported: &Exported) -> ExportJson {
    ExportJson {
        out: out.display().to_string(),
        files: exported.files.keys().cloned().collect(),
        objects: exported.objects.keys().map(ToString::to_string).collect(),
        folded_objects: exported.folded.iter().map(|f| f.items).sum(),
        definitions: exported.definitions(),
        defaults: exported.defaults.keys().cloned().collect(),
        env: exported
            .env
            .iter()
            .map(|var| EnvJson {
                name: var.name.clone(),
                address: var.address.to_string(),
                field: var.field.clone(),
            })
            .collect(),
        warnings: exported.warnings.clone(),
    }
}

/// `import --format json`: the objects adopted and, with `--all-unmanaged`,
/// the project written (as export's) and what was left out.
#[derive(serde::Serialize, schemars::JsonSchema, Default)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "Import")]
pub struct ImportJson {
    /// The objects adopted into the project's state.
    pub adopted: Vec<AdoptedJson>,
    /// `--all-unmanaged`: the new project's files, as `export --format json` reports them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written: Option<ExportJson>,
    /// `--all-unmanaged`: the new project's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// `--all-unmanaged`: where the new project's state is, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_at: Option<String>,
    /// Written to the files but not adopted: the ownership tag could not be
    /// written (each can be imported later; the command exits 1).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_adopted: Vec<NotAdoptedJson>,
    /// `--all-unmanaged`: objects of other projects (kinds without tags), a count.
    #[serde(default)]
    pub others: usize,
    /// `--all-unmanaged`: objects whose owner cannot be told, left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<UnknownJson>,
}

/// An object adopted under an address of the files.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdoptedJson {
    pub address: String,
    /// The service's id (a variable's key).
    pub remote_id: String,
}

/// An object written to the files but not adopted, and why.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NotAdoptedJson {
    pub address: String,
    pub remote_id: String,
    pub error: String,
}

/// An object whose owner cannot be told: `include` is the `--include`
/// value that would adopt it anyway.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct UnknownJson {
    pub include: String,
    pub name: String,
    /// Why its owner cannot be told, in words.
    pub owner: String,
}

/// [`ImportJson`]'s left-out fields from what `find_unmanaged` found.
pub fn left_out_json(found: &Unmanaged, json: &mut ImportJson) {
    json.others = found.others;
    json.unknown = found
        .unknown
        .iter()
        .map(|(remote, owner)| UnknownJson {
            include: include_name(remote),
            name: name(remote),
            owner: owner.describe(),
        })
        .collect();
}

/// What `import --all-unmanaged` leaves out: other projects' objects (a
/// count) and those whose owner cannot be told (each, with the flags that
/// would adopt them).
pub fn left_out(found: &Unmanaged) {
    if found.others > 0 {
        eprintln!(
            "note: {} objects of kinds without tags belong to other projects (their ownership records, or used by them alone): left out",
            found.others
        );
    }
    if found.unknown.is_empty() {
        return;
    }
    eprintln!(
        "warning: {} objects whose owner cannot be told are left out:",
        found.unknown.len()
    );
    for (remote, owner) in &found.unknown {
        eprintln!("  {} ({:?}) {}", include_name(remote), name(remote), owner.describe());
    }
    let flags: Vec<String> = found
        .unknown
        .iter()
        .map(|(r, _)| format!("--include {}", include_name(r)))
        .collect();
    eprintln!(
        "  to adopt them anyway (only if no other project manages them), run the import again with {}",
        flags.join(" ")
    );
}

fn name(remote: &Remote) -> String {
    let name = remote.field("name");
    name.as_ref().and_then(|n| n.as_str()).unwrap_or(&remote.id).to_owned()
}
