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

use std::collections::{BTreeMap, HashMap};

use monform_config::source::{FileId, Sources};
use monform_config::{Desired, Project};
use monform_model::Kind;
use monform_model::effective::into_effective;
use monform_model::sensitive::{into_masked, mask};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde_json::{Value, json};

/// The policies' `input` in the interpreter's own values: converted once
/// and shared by every rule (and every thread) that reads it; adding
/// `plan` copies only the top-level object.
#[derive(Debug, Clone, PartialEq)]
pub struct Input(pub(crate) regorus::Value);

impl Input {
    /// An input given as JSON (tests, `with` a plan added by hand).
    pub fn from_json(value: Value) -> Input {
        Input(regorus::Value::from(value))
    }

    /// This input with `key` (e.g. `plan`) set to `value`.
    pub fn with(&self, key: &str, value: Value) -> Input {
        let mut input = self.0.clone();
        if let Ok(object) = input.as_object_mut() {
            object.insert(regorus::Value::from(key), regorus::Value::from(value));
        }
        Input(input)
    }

    /// The input as JSON (for its schema and for reading it back).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(&self.0).unwrap_or(Value::Null)
    }
}

impl From<Value> for Input {
    fn from(value: Value) -> Input {
        Input::from_json(value)
    }
}

/// `input` without `plan`: what `validate` evaluates.
pub fn files(desired: &Desired, project: &Project, sources: &Sources) -> Input {
    let head = json!({
        "project": {
            "name": project.name,
            "environments": project.environment_names(),
        },
        "environment": project.environment,
    });
    let resources = regorus::Value::from(resources(desired, sources));
    let mut input = regorus::Value::from(head);
    if let Ok(object) = input.as_object_mut() {
        object.insert(regorus::Value::from("resources"), resources);
    }
    Input(input)
}

/// Every resource as the policies see it, in address order, already in
/// the interpreter's values: each is built and converted on its own
/// (spread over the cores), so 100,000 checks never sit in memory twice
/// as one JSON document and one converted copy.
pub fn resources(desired: &Desired, sources: &Sources) -> Vec<regorus::Value> {
    // A group's masked fields, once per group rather than once per check.
    let groups: HashMap<&str, Value> = desired
        .resources
        .values()
        .filter(|g| g.address.kind == Kind::Group)
        .map(|g| {
            (
                g.address.id.as_str(),
                mask(Kind::Group, &g.resource.to_json(), &g.sensitive),
            )
        })
        .collect();
    // Each file's name once, shared by its resources' `file`.
    let file_names: Vec<regorus::Value> = sources.iter().map(|f| regorus::Value::from(f.name.as_str())).collect();
    let mut lines = Lines::default();
    // Line numbers first, in one pass: they need each file's line starts.
    let located: Vec<_> = desired
        .resources
        .values()
        .map(|resource| {
            let line = lines.line(sources, resource.span.file, resource.span.start);
            (resource, line)
        })
        .collect();
    located
        .into_par_iter()
        .with_min_len(256)
        .map_init(Convert::default, |convert, (resource, line)| {
            let kind = resource.address.kind;
            // Owned all the way (no copy of a value nobody reads again):
            // masking and the group's merge copied each resource twice.
            let own = into_masked(kind, resource.resource.to_json(), &resource.sensitive);
            // A check as it runs: what its group imposes and merges applied.
            let fields = match kind {
                Kind::Check => {
                    let group = own["group"].as_str().and_then(|id| groups.get(id));
                    into_effective(own, group)
                }
                _ => own,
            };
            // A resource's span is always in a file of `sources`.
            let file = file_names[resource.span.file as usize].clone();
            // What a group would override, where the entry writes it itself.
            let own_fields = resource
                .own_fields
                .iter()
                .map(|(name, _)| convert.key(name))
                .collect::<Vec<_>>();
            let entries = [
                ("address", regorus::Value::from(resource.address.to_string())),
                ("kind", convert.key(kind.section())),
                ("id", regorus::Value::from(resource.address.id.as_str())),
                ("file", file),
                ("line", regorus::Value::from(line)),
                ("fields", convert.value(fields)),
                ("ownFields", regorus::Value::from(own_fields)),
            ];
            let object: BTreeMap<regorus::Value, regorus::Value> = entries
                .into_iter()
                .map(|(key, value)| (convert.key(key), value))
                .collect();
            regorus::Value::from(object)
        })
        .collect()
}

/// JSON to the interpreter's values as `regorus::Value::from` converts
/// it (numbers as serde_json reads them), without the deserializer and
/// with each object key allocated once: 100,000 resources share a few
/// dozen keys instead of holding two million copies.
#[derive(Default)]
pub(crate) struct Convert {
    /// Object keys and short texts, each allocated once. Looked up once per
    /// field of every resource: FxHash, not SipHash.
    shared: FxHashMap<String, regorus::Value>,
}

/// Short texts (locations, tags, methods, units) repeat across resources:
/// each is allocated once and shared, as keys are. Memory fresh from the
/// system costs more than the lookup (page faults were a third of the
/// input's time): at 100,000 checks the input is 30 MiB smaller and input
/// plus evaluation about a tenth faster. Texts are added only while fewer
/// than `SHARED_TEXTS` are kept, so names and URLs (unique, mostly longer
/// than `SHARED_TEXT_LEN`) cannot grow the table without bound.
const SHARED_TEXTS: usize = 4096;
const SHARED_TEXT_LEN: usize = 32;

impl Convert {
    pub(crate) fn key(&mut self, key: &str) -> regorus::Value {
        self.share(key, usize::MAX)
    }

    /// `text` as the value already made for it, or a new one, kept for the
    /// next time while fewer than `limit` are kept.
    fn share(&mut self, text: &str, limit: usize) -> regorus::Value {
        if let Some(known) = self.shared.get(text) {
            return known.clone();
        }
        let value = regorus::Value::from(text);
        if self.shared.len() < limit {
            self.shared.insert(text.to_owned(), value.clone());
        }
        value
    }

    pub(crate) fn value(&mut self, value: Value) -> regorus::Value {
        match value {
            Value::Null => regorus::Value::Null,
            Value::Bool(b) => regorus::Value::from(b),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => regorus::Value::from(u),
                (None, Some(i), _) => regorus::Value::from(i),
                (None, None, Some(f)) if f.is_finite() => regorus::Value::from(f),
                // serde_json holds no other number; as `from`, undefined.
                _ => regorus::Value::Undefined,
            },
            Value::String(text) if text.len() <= SHARED_TEXT_LEN => self.share(&text, SHARED_TEXTS),
            Value::String(text) => regorus::Value::from(text),
            Value::Array(items) => regorus::Value::from(items.into_iter().map(|v| self.value(v)).collect::<Vec<_>>()),
            Value::Object(map) => {
                let object: BTreeMap<regorus::Value, regorus::Value> =
                    map.into_iter().map(|(k, v)| (self.key(&k), self.value(v))).collect();
                regorus::Value::from(object)
            }
        }
    }
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
        let input = files(&loaded.desired, &project, &loaded.sources).to_json();
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

    #[test]
    fn the_converter_gives_what_regorus_reads_from_json() {
        let value = json!({"a": [1, -2, 2.5, u64::MAX, "x", null, true], "b": {"c": {}, "d": []}, "": "empty key"});
        let mut convert = Convert::default();
        assert_eq!(convert.value(value.clone()), regorus::Value::from(value));
    }
}
