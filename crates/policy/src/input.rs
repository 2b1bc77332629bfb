//! The policies' `input`, documented by [`crate::schema::input_schema`]:
//!
//! - `resources`: every resource of the files after `forEach`, the
//!   environment and `[defaults]`, a check as it runs after its group,
//!   each with `address`, `kind` (its section), `id`, `file`, `line` and
//!   `fields` (the files' field names) and `ownFields` (the fields a group
//!   can override that the resource's own entry writes);
//! - `project`: the name (the environment's ownership scope when one is
//!   chosen) and the environments monform.toml declares;
//! - `environment`: the chosen one, or null;
//! - `plan` (plan and apply only, added by the engine): the plan's changes.
//!
//! Secrets never enter it: every value is masked by
//! `monform_model::sensitive::mask`, the rule the plan's outputs use.

use std::collections::HashMap;

use monform_config::source::{FileId, Sources};
use monform_config::{Desired, Project};
use monform_model::effective::effective;
use monform_model::sensitive::mask;
use monform_model::{Address, Kind};
use serde_json::{Value, json};

/// `input` without `plan`: what `validate` evaluates.
pub fn files(desired: &Desired, project: &Project, sources: &Sources) -> Value {
    json!({
        "resources": resources(desired, sources),
        "project": {
            "name": project.name,
            "environments": project.environment_names(),
        },
        "environment": project.environment,
    })
}

/// Every resource as the policies see it, in address order.
pub fn resources(desired: &Desired, sources: &Sources) -> Vec<Value> {
    let mut lines = Lines::default();
    desired
        .resources
        .values()
        .map(|resource| {
            let kind = resource.address.kind;
            let own = mask(kind, &resource.resource.to_json(), &resource.sensitive);
            // A check as it runs: what its group imposes and merges applied.
            let fields = match kind {
                Kind::Check => {
                    let group = own["group"]
                        .as_str()
                        .and_then(|id| desired.resources.get(&Address::new(Kind::Group, id)))
                        .map(|g| mask(Kind::Group, &g.resource.to_json(), &g.sensitive));
                    effective(&own, group.as_ref())
                }
                _ => own,
            };
            let file = sources.get(resource.span.file);
            json!({
                "address": resource.address.to_string(),
                "kind": kind.section(),
                "id": resource.address.id,
                "file": file.name,
                "line": lines.line(sources, resource.span.file, resource.span.start),
                "fields": fields,
                // What a group would override, where the entry writes it itself.
                "ownFields": resource.own_fields.iter().map(|(name, _)| *name).collect::<Vec<_>>(),
            })
        })
        .collect()
}

/// 1-based lines from each file's line starts, computed once: 100,000
/// resources in one file must not each scan it from the start.
#[derive(Default)]
pub(crate) struct Lines {
    starts: HashMap<FileId, Vec<usize>>,
}

impl Lines {
    pub(crate) fn line(&mut self, sources: &Sources, file: FileId, offset: usize) -> usize {
        let starts = self.starts.entry(file).or_insert_with(|| {
            std::iter::once(0)
                .chain(sources.get(file).text.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        });
        starts.partition_point(|&start| start <= offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_run_after_their_group_with_secrets_masked() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("monform.toml"),
            "[project]\nname = \"p\"\n[defaults]\nfrequency = 10\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("m.yaml"),
            "checks:\n  api:\n    checkType: API\n    name: A\n    group: g\n    request:\n      method: GET\n      url: https://example.com\n      headers: [{ key: Authorization, value: Bearer hunter2 }]\ngroups:\n  g:\n    name: G\n    concurrency: 1\n    locations: [us-east-1]\n    tags: [team]\nvariables:\n  TOKEN: { value: s3cret, secret: true }\n",
        )
        .unwrap();
        let loaded = monform_config::load(dir.path(), &|_: &str| None);
        assert!(loaded.is_ok(), "{:?}", loaded.diagnostics);
        let project = loaded.project.clone().unwrap();
        let input = files(&loaded.desired, &project, &loaded.sources);
        let text = input.to_string();
        assert!(!text.contains("hunter2") && !text.contains("s3cret"), "{text}");
        let api = &input["resources"][0];
        assert_eq!(api["address"], "checks.api");
        assert_eq!((api["file"].as_str(), api["line"].as_u64()), (Some("m.yaml"), Some(2)));
        assert_eq!(api["fields"]["locations"], json!(["us-east-1"]));
        assert_eq!(api["fields"]["frequency"], 10);
        assert_eq!(api["fields"]["tags"], json!(["team"]));
        assert_eq!(input["project"]["name"], "p");
        let schema = jsonschema::draft7::new(&crate::schema::input_schema()).unwrap();
        let errors: Vec<String> = schema.iter_errors(&input).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{errors:?}");
    }
}
