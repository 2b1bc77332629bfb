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
//!
//! A resource with no secret by that rule (`holds_secrets_in`: most) is
//! made straight from its serde form into the interpreter's values
//! (`serialize`) and a check merged with its group there
//! (`monform_model::effective::into_effective_in` on the `rego` form): no
//! JSON value between. One with a secret goes through JSON (masked, merged,
//! converted by `convert`); both give equal values (`both_ways` tests it).

use std::collections::{BTreeMap, HashMap};

use monform_config::source::{FileId, Sources};
use monform_config::{Desired, DesiredResource, Project};
use monform_model::Kind;
use monform_model::effective::{into_effective, into_effective_in};
use monform_model::sensitive::{holds_secrets_in, into_masked, mask};
use monform_model::tree::{Json, Tree};
use rayon::prelude::*;
use serde_json::{Value, json};

#[cfg(test)]
mod both_ways;
mod convert;
mod rego;
mod serialize;

pub(crate) use convert::Convert;
use rego::Rego;

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
    files_at(desired, &Places::of(desired, project, sources))
}

/// What the input needs besides the resources themselves: the project's
/// names and where each resource is written. Taken when the policies are
/// loaded (it needs the files' text for the lines), so that the input
/// itself is built only when it is evaluated: a plan builds it after the
/// account's objects are freed, and frees it before it renders (at
/// 100,000 checks the input is a fifth of a GB, the account's objects
/// as much again).
#[derive(Debug, Clone, Default)]
pub struct Places {
    project: Value,
    environment: Value,
    /// Each file's name, by `FileId`.
    file_names: Vec<String>,
    /// Each resource's (span start, 1-based line), in the order of
    /// `Desired::resources`.
    lines: Vec<(usize, u32)>,
}

impl Places {
    pub fn of(desired: &Desired, project: &Project, sources: &Sources) -> Places {
        let mut lines = Lines::default();
        Places {
            project: json!({
                "name": project.name,
                "environments": project.environment_names(),
            }),
            environment: json!(project.environment),
            file_names: sources.iter().map(|f| f.name.clone()).collect(),
            lines: desired
                .resources
                .values()
                .map(|r| {
                    let line = lines.line(sources, r.span.file, r.span.start);
                    (r.span.start, u32::try_from(line).unwrap_or(u32::MAX))
                })
                .collect(),
        }
    }

    /// The input of no resource (a destroy's: none of them runs after it).
    pub fn without_resources(&self) -> Input {
        self.input(Vec::new())
    }

    fn input(&self, resources: Vec<regorus::Value>) -> Input {
        let entries = [
            ("project", regorus::Value::from(self.project.clone())),
            ("environment", regorus::Value::from(self.environment.clone())),
            ("resources", regorus::Value::from(resources)),
        ];
        let object: BTreeMap<regorus::Value, regorus::Value> =
            entries.into_iter().map(|(k, v)| (regorus::Value::from(k), v)).collect();
        Input(regorus::Value::from(object))
    }
}

/// `input` without `plan`, from `desired` as it was when `places` was
/// taken of it.
pub fn files_at(desired: &Desired, places: &Places) -> Input {
    places.input(resources(desired, places))
}

/// Every resource as the policies see it, in address order, already in
/// the interpreter's values: each is built and converted on its own
/// (spread over the cores), so 100,000 checks never sit in memory twice
/// as one JSON document and one converted copy.
fn resources(desired: &Desired, places: &Places) -> Vec<regorus::Value> {
    // A group's masked fields, once per group rather than once per check:
    // as JSON (for the checks built through JSON) and converted.
    let mut convert = Convert::default();
    let groups: HashMap<&str, (Value, regorus::Value)> = desired
        .resources
        .values()
        .filter(|g| g.address.kind == Kind::Group)
        .map(|g| {
            let json = mask(Kind::Group, &g.resource.to_json(), &g.sensitive);
            let converted = convert.fields(json.clone());
            (g.address.id.as_str(), (json, converted))
        })
        .collect();
    drop(convert);
    // Each file's name once, shared by its resources' `file`.
    let file_names: Vec<regorus::Value> = places
        .file_names
        .iter()
        .map(|f| regorus::Value::from(f.as_str()))
        .collect();
    let located: Vec<_> = desired.resources.values().enumerate().collect();
    located
        .into_par_iter()
        .with_min_len(256)
        .map_init(Convert::default, |convert, (index, resource)| {
            let kind = resource.address.kind;
            let fields = direct(convert, resource, &groups).unwrap_or_else(|| through_json(convert, resource, &groups));
            // A resource's span is always in a file of the sources; the
            // places were taken of this `desired` (checked by its start).
            let file = file_names
                .get(resource.span.file as usize)
                .cloned()
                .unwrap_or(regorus::Value::Null);
            let line = match places.lines.get(index) {
                Some(&(start, line)) if start == resource.span.start => regorus::Value::from(u64::from(line)),
                _ => regorus::Value::Null,
            };
            // What a group would override, where the entry writes it itself.
            let own_fields = resource
                .own_fields
                .iter()
                .map(|(name, _)| convert.key(name))
                .collect::<Vec<_>>();
            // In key order: made in regorus's compact storage at once.
            let entries = [
                ("address", regorus::Value::from(resource.address.to_string())),
                ("fields", fields),
                ("file", file),
                ("id", regorus::Value::from(resource.address.id.as_str())),
                ("kind", convert.key(kind.section())),
                ("line", line),
                ("ownFields", convert.shared(regorus::Value::from(own_fields))),
            ];
            regorus::Value::from_entries(
                entries
                    .into_iter()
                    .map(|(key, value)| (convert.key(key), value))
                    .collect(),
            )
        })
        .collect()
}

/// The group a check names, if it is in one.
fn group_of<'g, T>(
    form: &impl Tree<Node = T>,
    fields: &T,
    groups: &'g HashMap<&str, (Value, regorus::Value)>,
) -> Option<&'g (Value, regorus::Value)> {
    form.get(fields, "group")
        .and_then(|id| form.as_str(id))
        .and_then(|id| groups.get(id))
}

/// A resource's `fields` made straight from its serde form, for one that
/// holds no secret (most): as it runs, a check after its group (the
/// model's merge, on the interpreter's values). `None` for one with a
/// secret: masking is done on JSON ([`through_json`]).
fn direct(
    convert: &mut Convert,
    resource: &DesiredResource,
    groups: &HashMap<&str, (Value, regorus::Value)>,
) -> Option<regorus::Value> {
    if !resource.sensitive.is_empty() {
        return None;
    }
    let kind = resource.address.kind;
    let own = serialize::to_regorus(convert, &*resource.resource).ok()?;
    let mut form = Rego(convert);
    if holds_secrets_in(&form, kind, &own, &resource.sensitive) {
        return None;
    }
    if kind != Kind::Check {
        return Some(own);
    }
    match group_of(&form, &own, groups) {
        Some((_, group)) => Some(into_effective_in(&mut form, own, Some(group))),
        None => Some(own),
    }
}

/// A resource's `fields` through JSON: masked (`into_masked`), a check
/// after its group, then converted.
fn through_json(
    convert: &mut Convert,
    resource: &DesiredResource,
    groups: &HashMap<&str, (Value, regorus::Value)>,
) -> regorus::Value {
    let kind = resource.address.kind;
    // Owned all the way (no copy of a value nobody reads again).
    let own = into_masked(kind, resource.resource.to_json(), &resource.sensitive);
    let fields = match kind {
        Kind::Check => {
            let group = group_of(&Json, &own, groups).map(|(json, _)| json);
            into_effective(own, group)
        }
        _ => own,
    };
    convert.fields(fields)
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
    fn equal_arrays_and_objects_are_made_once_and_fractions_never_shared() {
        let mut convert = Convert::default();
        let of = |value: &regorus::Value, key: &str| value[key].clone();
        let a = convert.fields(json!({"locations": ["eu-west-1"], "retry": {"max": 2}, "limit": {"loss": 10.5}}));
        let b = convert.fields(json!({"locations": ["eu-west-1"], "retry": {"max": 2}, "limit": {"loss": 10.5}}));
        let same = |x: &regorus::Value, y: &regorus::Value| match (x, y) {
            (regorus::Value::Array(x), regorus::Value::Array(y)) => regorus::Rc::ptr_eq(x, y),
            (regorus::Value::Object(x), regorus::Value::Object(y)) => regorus::Rc::ptr_eq(x, y),
            _ => false,
        };
        assert!(same(&of(&a, "locations"), &of(&b, "locations")));
        assert!(same(&of(&a, "retry"), &of(&b, "retry")));
        // 10.5 could be shared; a value holding 1.0 could print as 1.
        assert!(!same(&of(&a, "limit"), &of(&b, "limit")));
        // The fields themselves are each resource's own.
        assert!(!same(&a, &b));
        assert_eq!(a, b);
        // Equal in Rego, not the same text: each keeps its own.
        let one = convert.fields(json!({"x": [1]}));
        let float = convert.fields(json!({"x": [1.0]}));
        assert!(!same(&of(&one, "x"), &of(&float, "x")));
    }

    #[test]
    fn the_converter_gives_what_regorus_reads_from_json() {
        let value = json!({"a": [1, -2, 2.5, u64::MAX, "x", null, true], "b": {"c": {}, "d": []}, "": "empty key"});
        let mut convert = Convert::default();
        assert_eq!(convert.fields(value.clone()), regorus::Value::from(value));
    }
}
