//! A generated project: resources of every kind drawn from the model's
//! schema, each valid under the model's validator (shape and cross-field
//! rules), references only to resources of the project, natural keys and
//! unique fields unique; written as YAML, TOML and JSON-in-YAML files in
//! several folders.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use monform_model::facts::{natural_key, unique_values};
use monform_model::schema::schemas;
use monform_model::{Kind, Segment};
use serde_json::{Map, Value};

use super::random::Rng;
use super::values::{Draw, SCRIPT_CONTENT};

/// How a resource file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Yaml,
    Toml,
    /// JSON, which is YAML, in a `.yaml` file.
    Json,
}

/// The files resources are written to.
pub const FILES: &[(&str, Format)] = &[
    ("monitors/web.yaml", Format::Yaml),
    ("monitors/infra.toml", Format::Toml),
    ("shared.yaml", Format::Json),
    ("pages/more/status.yml", Format::Yaml),
    ("groups.toml", Format::Toml),
];

/// One resource of a project.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub kind: Kind,
    pub id: String,
    /// The files' form; a script in a file is `{ file, __content }`.
    pub body: Value,
    /// Index into [`FILES`].
    pub file: usize,
}

impl Entry {
    /// `section.id`, as plans name it.
    pub fn address(&self) -> String {
        format!("{}.{}", self.kind.section(), self.id)
    }

    /// The body with every script inline, as the validator reads it.
    pub fn inline(&self) -> Value {
        inline_scripts(&self.body)
    }
}

/// A project drawn from one seed.
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    pub name: String,
    pub entries: Vec<Entry>,
    /// `[defaults]` of monform.toml: check fields every check without its
    /// own value gets.
    pub defaults: Map<String, Value>,
    /// Scripts put in files so far (file names stay unique across edits).
    pub scripts: usize,
}

/// How big a generated project is.
#[derive(Debug, Clone, Copy)]
pub struct Size {
    /// At most this many checks.
    pub checks: usize,
    /// At most this many resources of every other kind.
    pub others: usize,
    /// The probability of drawing an optional field (at the top level).
    pub optional: f64,
}

impl Default for Size {
    fn default() -> Size {
        Size {
            checks: 6,
            others: 2,
            optional: 0.5,
        }
    }
}

impl Project {
    /// A valid project drawn from `seed`, and the schema fields it drew.
    pub fn generate(seed: u64, size: Size) -> (Project, BTreeSet<String>) {
        let mut rng = Rng::new(seed);
        let mut seen = BTreeSet::new();
        let mut project = Project {
            name: "zero-diff".into(),
            entries: Vec::new(),
            defaults: Map::new(),
            scripts: 0,
        };
        for kind in kinds_in_reference_order() {
            let max = if kind == Kind::Check { size.checks } else { size.others };
            let count = rng.between(0, max as i64) as usize;
            for n in 0..count {
                let id = logical_id(kind, n);
                let file = rng.below(FILES.len());
                if let Some(mut body) = project.draw_valid(kind, &id, &mut rng, &mut seen, size.optional) {
                    fit_to_format(&mut body, file);
                    project.entries.push(Entry { kind, id, body, file });
                }
            }
        }
        if rng.chance(0.4) {
            project.draw_defaults(&mut rng, &mut seen);
        }
        (project, seen)
    }

    /// A few of the fields every check type has, as `[defaults]`, each
    /// kept only when every check of the project stays valid with it.
    fn draw_defaults(&mut self, rng: &mut Rng, seen: &mut BTreeSet<String>) {
        let common = schemas().check_common_fields();
        let types: Vec<&str> = schemas().resolve(schemas().kind(Kind::Check))["oneOf"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(super::values::variant_name)
            .collect();
        let ids = self.ids();
        for _ in 0..1 + rng.below(4) {
            let field = *rng.pick(&common);
            let variant_name: &str = types[rng.below(types.len())];
            let variant = schemas().variant(Kind::Check, variant_name);
            let Some(property) = variant["properties"].get(field) else {
                continue;
            };
            let mut drawn = BTreeSet::new();
            let mut draw = Draw {
                rng,
                ids: &ids,
                seen: &mut drawn,
                scripts: &mut self.scripts,
                optional: 0.5,
            };
            let Some(value) = draw.value(property, "", field, 1) else {
                continue;
            };
            let previous = self.defaults.insert(field.to_owned(), value);
            let valid = self
                .entries
                .iter()
                .filter(|e| e.kind == Kind::Check)
                .all(|e| monform_model::validate_resource(Kind::Check, &self.merged(e.kind, &e.body)).is_ok());
            if valid {
                seen.insert(format!("[defaults].{field}"));
            } else {
                match previous {
                    Some(previous) => self.defaults.insert(field.to_owned(), previous),
                    None => self.defaults.remove(field),
                };
            }
        }
    }

    /// What the loader reads for a resource of `kind` written as `body`:
    /// scripts inline, and for a check the `[defaults]` it does not set
    /// itself (but no public `locations` for a check with private ones,
    /// as the loader has it).
    pub fn merged(&self, kind: Kind, body: &Value) -> Value {
        let mut merged = inline_scripts(body);
        if kind != Kind::Check {
            return merged;
        }
        let private = merged
            .get("privateLocations")
            .and_then(Value::as_array)
            .is_some_and(|l| !l.is_empty());
        if let Value::Object(map) = &mut merged {
            for (field, value) in &self.defaults {
                let kept_out = private && field == "locations";
                if !kept_out && !map.contains_key(field) {
                    map.insert(field.clone(), inline_scripts(value));
                }
            }
        }
        merged
    }

    /// The logical ids of the project by section.
    pub fn ids(&self) -> BTreeMap<&'static str, Vec<String>> {
        let mut ids: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
        for entry in &self.entries {
            ids.entry(entry.kind.section()).or_default().push(entry.id.clone());
        }
        ids
    }

    /// A resource of `kind` valid in this project, or `None` after enough tries.
    pub(crate) fn draw_valid(
        &mut self,
        kind: Kind,
        id: &str,
        rng: &mut Rng,
        seen: &mut BTreeSet<String>,
        optional: f64,
    ) -> Option<Value> {
        let ids = self.ids();
        for _ in 0..30 {
            let mut drawn = BTreeSet::new();
            let mut draw = Draw {
                rng,
                ids: &ids,
                seen: &mut drawn,
                scripts: &mut self.scripts,
                optional,
            };
            let Some(body) = draw.value(schemas().kind(kind), "", "", 0) else {
                continue;
            };
            let Some(body) = repair(kind, body) else { continue };
            if self.clashes(kind, id, &body) {
                continue;
            }
            seen.extend(drawn);
            return Some(body);
        }
        None
    }

    /// Whether `body` would share a natural key or a unique field's value
    /// with another resource of its kind.
    pub fn clashes(&self, kind: Kind, id: &str, body: &Value) -> bool {
        let body = inline_scripts(body);
        let key = natural_key(kind, &body);
        let unique = unique_values(kind, &body);
        self.entries
            .iter()
            .filter(|e| e.kind == kind && e.id != id)
            .any(|other| {
                let other = other.inline();
                (key.is_some() && natural_key(kind, &other) == key)
                    || unique_values(kind, &other).iter().any(|u| unique.contains(u))
            })
    }

    /// Writes the project into `root` (its previous files removed,
    /// `.monform/` kept).
    pub fn write(&self, root: &Path) -> std::io::Result<()> {
        for entry in std::fs::read_dir(root)? {
            let entry = entry?;
            if entry.file_name() == ".monform" {
                continue;
            }
            if entry.file_type()?.is_dir() {
                std::fs::remove_dir_all(entry.path())?;
            } else {
                std::fs::remove_file(entry.path())?;
            }
        }
        let mut manifest = format!("[project]\nname = \"{}\"\n\n[state]\nbackend = \"local\"\n", self.name);
        if !self.defaults.is_empty() {
            let mut defaults = Value::Object(self.defaults.clone());
            place_scripts(&mut defaults, Path::new(""), root)?;
            let table = toml::Value::Table([("defaults".to_owned(), to_toml(&defaults))].into_iter().collect());
            manifest.push('\n');
            manifest.push_str(&toml::to_string(&table).map_err(std::io::Error::other)?);
        }
        std::fs::write(root.join("monform.toml"), manifest)?;
        let mut files: BTreeMap<usize, Map<String, Value>> = BTreeMap::new();
        for entry in &self.entries {
            let folder = Path::new(FILES[entry.file].0).parent().unwrap_or(Path::new(""));
            let mut body = entry.body.clone();
            place_scripts(&mut body, folder, root)?;
            let document = files.entry(entry.file).or_default();
            let section = document
                .entry(entry.kind.section().to_owned())
                .or_insert_with(|| Value::Object(Map::new()));
            section[entry.id.as_str()] = body;
        }
        for (file, document) in files {
            let (name, format) = FILES[file];
            let path = root.join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            let document = Value::Object(document);
            let text = match format {
                Format::Toml => toml::to_string(&to_toml(&document)).map_err(std::io::Error::other)?,
                Format::Json => serde_json::to_string_pretty(&document)?,
                Format::Yaml => serde_saphyr::to_string(&document).map_err(std::io::Error::other)?,
            };
            std::fs::write(path, text)?;
        }
        Ok(())
    }
}

/// `checks-0`, `VAR_0`...: a variable's logical id is its key.
fn logical_id(kind: Kind, n: usize) -> String {
    match kind {
        Kind::Variable => format!("VAR_{n}"),
        _ => format!("{}-{n}", kind.section()),
    }
}

/// The kinds, each after the kinds its references name (read from the
/// schema's `x-ref`s), so a resource is drawn when its targets exist.
/// Local kinds (`slos`) are left out: the service never holds them, so
/// they cannot differ from it, and the loader's rules across resources
/// (members that exist, can fail, run often enough) are not the schema's.
/// Left out, they draw nothing, and a seed draws the projects it drew
/// before they existed.
pub fn kinds_in_reference_order() -> Vec<Kind> {
    let targets: Vec<(Kind, BTreeSet<String>)> = Kind::ALL
        .iter()
        .filter(|k| !k.is_local())
        .map(|&kind| {
            let mut found = BTreeSet::new();
            collect_refs(schemas().kind(kind), &mut found, &mut BTreeSet::new());
            found.remove(kind.section());
            (kind, found)
        })
        .collect();
    let mut order: Vec<Kind> = Vec::new();
    while order.len() < targets.len() {
        let before = order.len();
        for (kind, wants) in &targets {
            if !order.contains(kind) && wants.iter().all(|w| order.iter().any(|k| k.section() == w)) {
                order.push(*kind);
            }
        }
        if order.len() == before {
            // A circle of references: the rest in the model's order.
            order.extend(
                targets
                    .iter()
                    .map(|(k, _)| *k)
                    .filter(|k| !order.contains(k))
                    .collect::<Vec<_>>(),
            );
        }
    }
    order
}

fn collect_refs(schema: &Value, found: &mut BTreeSet<String>, visited: &mut BTreeSet<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get("$ref") {
                if visited.insert(reference.clone()) {
                    collect_refs(schemas().resolve(schema), found, visited);
                }
                return;
            }
            if let Some(Value::String(section)) = map.get("x-ref") {
                found.insert(section.clone());
            }
            map.values().for_each(|v| collect_refs(v, found, visited));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, found, visited)),
        _ => {}
    }
}

/// `body` made valid under the model's rules by leaving out the optional
/// fields they name (the schema cannot say that `endsAt` follows
/// `startsAt`); `None` when a required field is at fault.
pub fn repair(kind: Kind, mut body: Value) -> Option<Value> {
    for _ in 0..16 {
        let violations = match monform_model::validate_resource(kind, &inline_scripts(&body)) {
            Ok(_) => return Some(body),
            Err(violations) => violations,
        };
        let before = violations.len();
        let mut fixed = false;
        'violations: for violation in &violations {
            let segments = violation.path.segments();
            for depth in (1..=segments.len()).rev() {
                let mut candidate = body.clone();
                if !remove_at(&mut candidate, &segments[..depth]) {
                    continue;
                }
                match monform_model::validate_resource(kind, &inline_scripts(&candidate)) {
                    Ok(_) => return Some(candidate),
                    Err(after) if after.len() < before && after.iter().all(|v| v.missing_field().is_none()) => {
                        body = candidate;
                        fixed = true;
                        break 'violations;
                    }
                    Err(_) => {}
                }
            }
        }
        if !fixed {
            return None;
        }
    }
    None
}

/// Removes the field or list item at `segments`; false when nothing is there.
pub fn remove_at(value: &mut Value, segments: &[Segment]) -> bool {
    let Some((last, parent)) = segments.split_last() else {
        return false;
    };
    let Some(parent) = pointer_mut(value, parent) else {
        return false;
    };
    match (last, parent) {
        (Segment::Key(key), Value::Object(map)) => map.remove(key).is_some(),
        (Segment::Index(i), Value::Array(items)) if *i < items.len() => {
            items.remove(*i);
            true
        }
        _ => false,
    }
}

/// The value at `segments`, mutably.
pub fn pointer_mut<'v>(value: &'v mut Value, segments: &[Segment]) -> Option<&'v mut Value> {
    let mut current = value;
    for segment in segments {
        current = match (segment, current) {
            (Segment::Key(key), Value::Object(map)) => map.get_mut(key)?,
            (Segment::Index(i), Value::Array(items)) => items.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(current)
}

/// `body` as it reads back from `FILES[file]`: TOML has no null, so a
/// field written null there is left out (which, unlike null, lets a
/// `[defaults]` value in).
pub fn fit_to_format(body: &mut Value, file: usize) {
    if FILES[file].1 != Format::Toml {
        return;
    }
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.retain(|_, v| !v.is_null());
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(body);
}

/// `value` with every `{ file, __content }` script replaced by its content.
pub fn inline_scripts(value: &Value) -> Value {
    match value {
        Value::Object(map) => match map.get(SCRIPT_CONTENT) {
            Some(content) => content.clone(),
            None => Value::Object(map.iter().map(|(k, v)| (k.clone(), inline_scripts(v))).collect()),
        },
        Value::Array(items) => Value::Array(items.iter().map(inline_scripts).collect()),
        other => other.clone(),
    }
}

/// Writes each `{ file, __content }` script under `root` and points
/// `file` at it from `folder`.
fn place_scripts(value: &mut Value, folder: &Path, root: &Path) -> std::io::Result<()> {
    match value {
        Value::Object(map) => {
            if let (Some(Value::String(file)), Some(Value::String(content))) =
                (map.get("file"), map.get(SCRIPT_CONTENT))
            {
                let path = root.join(file);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::write(&path, content)?;
                let relative = format!("{}{file}", "../".repeat(folder.components().count()));
                map.remove(SCRIPT_CONTENT);
                map.insert("file".into(), Value::String(relative));
                return Ok(());
            }
            for v in map.values_mut() {
                place_scripts(v, folder, root)?;
            }
        }
        Value::Array(items) => {
            for v in items {
                place_scripts(v, folder, root)?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn to_toml(value: &Value) -> toml::Value {
    match value {
        Value::Bool(b) => toml::Value::Boolean(*b),
        Value::Number(n) => n
            .as_i64()
            .map_or_else(|| toml::Value::Float(n.as_f64().unwrap_or(0.0)), toml::Value::Integer),
        Value::String(s) => toml::Value::String(s.clone()),
        Value::Array(items) => toml::Value::Array(items.iter().map(to_toml).collect()),
        // TOML has no null: a field written null is left out, which says the same.
        Value::Object(map) => toml::Value::Table(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), to_toml(v)))
                .collect(),
        ),
        Value::Null => toml::Value::String(String::new()),
    }
}

/// The files of a project folder, each with its text, for failure messages.
pub fn files_of(root: &Path) -> String {
    let mut out = String::new();
    let mut stack = vec![root.to_path_buf()];
    let mut files = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.file_name().is_some_and(|n| n == ".monform") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let shown = path.strip_prefix(root).unwrap_or(&path).display().to_string();
        out.push_str(&format!("--- {shown}\n{text}\n"));
    }
    out
}
