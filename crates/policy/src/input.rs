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
                ("fields", convert.fields(fields)),
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

/// JSON to the interpreter's values as `regorus::Value::from` converts
/// it (numbers as serde_json reads them), without the deserializer, with
/// each object key allocated once (100,000 resources share a few dozen
/// keys instead of holding two million copies) and each array or object
/// made once per distinct content (`shared`).
#[derive(Default)]
pub(crate) struct Convert {
    /// Object keys and short texts, each allocated once. Looked up once per
    /// field of every resource: FxHash, not SipHash.
    shared: FxHashMap<String, regorus::Value>,
    /// Arrays and objects already made, by a hash of their content.
    trees: FxHashMap<u64, regorus::Value>,
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

/// Arrays and objects repeat across resources even more (a check after
/// its group: the group's locations, its alert channels, tags, retry
/// strategy; an API check's headers and assertions): each distinct one is
/// made once and shared, which took 265 MB of input at 100,000 checks to
/// (see `docs/src/guide/policies.md`). The table is bounded as the texts'
/// is: past `SHARED_TREES` entries it only finds.
const SHARED_TREES: usize = 1 << 16;

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

    /// `value` (an array or an object) as the one already made with the
    /// same content, else `value` itself, kept for the next time. Sharing
    /// is invisible to a policy: values are immutable (regorus copies on
    /// write).
    pub(crate) fn shared(&mut self, value: regorus::Value) -> regorus::Value {
        if !matches!(value, regorus::Value::Array(_) | regorus::Value::Object(_)) {
            return value;
        }
        let mut hasher = rustc_hash::FxHasher::default();
        fingerprint(&value, &mut hasher);
        let hash = std::hash::Hasher::finish(&hasher);
        match self.trees.get(&hash) {
            Some(known) if *known == value => known.clone(),
            Some(_) => value,
            None => {
                if self.trees.len() < SHARED_TREES {
                    self.trees.insert(hash, value.clone());
                }
                value
            }
        }
    }

    /// `value` converted, what it holds shared; `value` itself not (a
    /// resource's fields: its name at least is its own).
    pub(crate) fn fields(&mut self, value: Value) -> regorus::Value {
        self.convert(value).0
    }

    /// `value` converted, and whether it may be shared: not when it holds
    /// a number with a fraction part or exponent (1.0 and 1 are equal in
    /// Rego, so a shared value could print one as the other in a
    /// finding's message).
    fn convert(&mut self, value: Value) -> (regorus::Value, bool) {
        match value {
            Value::Null => (regorus::Value::Null, true),
            Value::Bool(b) => (regorus::Value::from(b), true),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => (regorus::Value::from(u), true),
                (None, Some(i), _) => (regorus::Value::from(i), true),
                (None, None, Some(f)) if f.is_finite() => (regorus::Value::from(f), false),
                // serde_json holds no other number; as `from`, undefined.
                _ => (regorus::Value::Undefined, false),
            },
            Value::String(text) if text.len() <= SHARED_TEXT_LEN => (self.share(&text, SHARED_TEXTS), true),
            Value::String(text) => (regorus::Value::from(text), true),
            Value::Array(items) => {
                let mut shareable = true;
                let items: Vec<regorus::Value> = items
                    .into_iter()
                    .map(|v| {
                        let (item, ok) = self.convert(v);
                        shareable &= ok;
                        if ok { self.shared(item) } else { item }
                    })
                    .collect();
                (regorus::Value::from(items), shareable)
            }
            Value::Object(map) => {
                let mut shareable = true;
                // Sorted into regorus's compact storage at once: a B-tree
                // first (`From<BTreeMap>`) was copied into it again.
                let entries: Vec<(regorus::Value, regorus::Value)> = map
                    .into_iter()
                    .map(|(k, v)| {
                        let (item, ok) = self.convert(v);
                        shareable &= ok;
                        (self.key(&k), if ok { self.shared(item) } else { item })
                    })
                    .collect();
                (regorus::Value::from_entries(entries), shareable)
            }
        }
    }
}

/// A hash of `value`'s content. What it holds was shared before it
/// (`Convert::shared`), so an array or object inside is hashed by its
/// address: two equal values whose parts were shared hash alike (two whose
/// parts were not may not, and are then not shared: never wrong), and a
/// value is hashed in one pass over its own members, not its whole depth.
fn fingerprint(value: &regorus::Value, hasher: &mut rustc_hash::FxHasher) {
    use regorus::Value as R;
    use std::hash::Hash;
    match value {
        R::Null => 0u8.hash(hasher),
        R::Undefined => 1u8.hash(hasher),
        R::Bool(b) => (2u8, b).hash(hasher),
        R::Number(n) => (3u8, n.as_u64(), n.as_i64()).hash(hasher),
        R::String(text) => (4u8, text.as_ref()).hash(hasher),
        R::Array(items) => {
            5u8.hash(hasher);
            items.iter().for_each(|item| member(item, hasher));
        }
        R::Set(items) => {
            6u8.hash(hasher);
            items.iter().for_each(|item| member(item, hasher));
        }
        R::Object(object) => {
            7u8.hash(hasher);
            for (key, item) in object.iter() {
                member(key, hasher);
                member(item, hasher);
            }
        }
    }
}

fn member(value: &regorus::Value, hasher: &mut rustc_hash::FxHasher) {
    use regorus::Value as R;
    use std::hash::Hash;
    match value {
        R::Array(items) => (8u8, regorus::Rc::as_ptr(items) as usize).hash(hasher),
        R::Object(object) => (9u8, regorus::Rc::as_ptr(object) as usize).hash(hasher),
        other => fingerprint(other, hasher),
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
