//! `--include-unmanaged`: objects made in the service that no project
//! owns, written as new resource files with `import` entries, so the
//! next apply adopts them into this project (the ownership rules are the
//! engine's, `ops::find_unmanaged_for`, as for `import --all-unmanaged`).

use std::path::Path;

use monform_engine::ops::Exported;
use monform_model::Address;

use crate::{Codified, FileChange};

/// The folder, below the project root, the new files go to.
pub const FOLDER: &str = "unmanaged";

/// Adds the exported objects' files to `codified`, each resource file
/// with an `import` entry per object. Refuses to replace a file.
/// `include` is monform.toml's `[project] include`: a new file it would
/// not read is refused, as the next apply would not adopt its objects.
pub fn add(codified: &mut Codified, root: &Path, include: &[String], exported: &Exported) -> Result<(), String> {
    for (relative, text) in &exported.files {
        let name = format!("{FOLDER}/{relative}");
        if !monform_config::included(include, &name) {
            return Err(format!(
                "{name} would not be read: monform.toml's [project] include does not match it (add \"{FOLDER}/**\" to include)"
            ));
        }
        let path = root.join(&name);
        if path.exists() {
            return Err(format!(
                "{name} already exists: move it (or its objects) into the project first"
            ));
        }
        let mut text = text.clone();
        let section = relative.strip_suffix(".yaml").filter(|s| !s.contains('/'));
        let imports: Vec<(&Address, &str)> = exported
            .objects
            .iter()
            .filter(|(address, _)| Some(address.kind.section()) == section)
            .map(|(address, remote)| (address, remote.id.as_str()))
            .collect();
        if !imports.is_empty() {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str("\n# Made in the service, owned by no project: the next apply adopts them.\nimport:\n");
            for (address, id) in &imports {
                let id = serde_json::to_string(id).unwrap_or_default();
                text.push_str(&format!("  - {{ to: {address}, id: {id} }}\n"));
                codified
                    .adopted
                    .push(((*address).clone(), id.trim_matches('"').to_owned()));
            }
        }
        codified.files.push(FileChange {
            name,
            path,
            before: String::new(),
            after: text,
            new: true,
        });
    }
    for env in &exported.env {
        codified.notes.push(format!(
            "{}.{} is a secret: the files read it from ${{env:{}}}; set it before the next plan",
            env.address, env.field, env.name
        ));
    }
    for warning in &exported.warnings {
        codified.notes.push(warning.clone());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exported() -> Exported {
        let mut exported = Exported::default();
        exported.files.insert(
            "snippets.yaml".into(),
            "snippets:\n  s: { name: S, script: x }\n".into(),
        );
        exported
    }

    #[test]
    fn a_file_the_include_patterns_leave_out_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let include = vec!["monitors/**".to_owned()];
        let error = add(&mut Codified::default(), root.path(), &include, &exported()).unwrap_err();
        assert!(error.contains("unmanaged/snippets.yaml would not be read"), "{error}");
        let mut codified = Codified::default();
        let include = vec!["monitors/**".to_owned(), "unmanaged/**".to_owned()];
        add(&mut codified, root.path(), &include, &exported()).unwrap();
        add(&mut Codified::default(), root.path(), &[], &exported()).unwrap();
        assert_eq!(codified.files.len(), 1);
    }
}
