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
