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
pub fn add(codified: &mut Codified, root: &Path, exported: &Exported) -> Result<(), String> {
    for (relative, text) in &exported.files {
        let name = format!("{FOLDER}/{relative}");
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
