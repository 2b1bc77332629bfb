//! The JSON Schema (draft-07) of a resource file, generated from the types in
//! `resources`. Editors use it through `schema/`; `validate` walks it.

use std::sync::OnceLock;

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::validate::compiled::Compiled;
use crate::{Kind, LOGICAL_ID_PATTERN};

/// Where the published schema lives, for `$id` and editor headers.
pub const SCHEMA_ID: &str = "https://monform.dev/schema/resource-file.json";

/// The schema of a resource file, with `definitions` for every type.
pub struct Schemas {
    root: Value,
    /// For the validator, built at its first use.
    compiled: OnceLock<Compiled>,
}

impl Schemas {
    pub(crate) fn from_document(root: Value) -> Schemas {
        Schemas {
            root,
            compiled: OnceLock::new(),
        }
    }

    pub(crate) fn compiled(&self) -> &Compiled {
        self.compiled.get_or_init(|| Compiled::new(&self.root))
    }

    /// The whole document, as written to `schema/resource-file.schema.json`.
    pub fn document(&self) -> &Value {
        &self.root
    }

    /// The schema of one resource of `kind` (a `$ref`).
    pub fn kind(&self, kind: Kind) -> &Value {
        crate::definitions::kind_schema(&self.root, kind)
    }

    /// Fields every check type has: what `[defaults]` may set.
    pub fn check_common_fields(&self) -> Vec<&str> {
        let branches = self.resolve(self.kind(Kind::Check))["oneOf"].as_array();
        let mut fields: Vec<&str> = Vec::new();
        for (i, branch) in branches.into_iter().flatten().enumerate() {
            let names: Vec<&str> = branch["properties"]
                .as_object()
                .into_iter()
                .flat_map(|p| p.keys().map(String::as_str))
                .collect();
            if i == 0 {
                fields = names;
            } else {
                fields.retain(|f| names.contains(f));
            }
        }
        fields.retain(|f| *f != "checkType" && *f != "name");
        fields
    }

    /// The schema of one variant of a tagged kind (a check type, an alert
    /// channel type); the kind's schema itself for untagged kinds.
    pub fn variant(&self, kind: Kind, variant: &str) -> &Value {
        let schema = self.resolve(self.kind(kind));
        let Some(branches) = schema.get("oneOf").and_then(Value::as_array) else {
            return schema;
        };
        branches
            .iter()
            .map(|b| self.resolve(b))
            .find(|b| {
                b["properties"].as_object().is_some_and(|props| {
                    props
                        .values()
                        .any(|p| p.get("const").and_then(Value::as_str) == Some(variant))
                })
            })
            .unwrap_or(schema)
    }

    /// Follows `$ref`s until a schema with content.
    pub fn resolve<'a>(&'a self, schema: &'a Value) -> &'a Value {
        crate::definitions::resolve(&self.root, schema)
    }
}

/// The schemas, generated once per process.
pub fn schemas() -> &'static Schemas {
    static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
    SCHEMAS.get_or_init(|| Schemas::from_document(generate()))
}

/// The schema document for editors, as written to
/// `schema/resource-file.schema.json`: the validator's, plus what the loader
/// takes off a definition before validating it (`forEach`, `forEachFile`,
/// `environments`) and substitutions where a number, boolean or enumerated
/// string goes. The validator's own document stays without them: the API's
/// schemas are derived from it.
pub fn document_text() -> String {
    let mut document = schemas().document().clone();
    if let Some(definitions) = document.get_mut("definitions") {
        accept_substitutions(definitions);
    }
    for &kind in Kind::ALL {
        let name = document["properties"][kind.section()]["additionalProperties"]["$ref"]
            .as_str()
            .and_then(|r| r.rsplit('/').next())
            .map(str::to_owned);
        if let Some(Value::Object(definition)) = name.and_then(|n| document["definitions"].get_mut(&n)) {
            add_expansion_fields(definition);
        }
    }
    let mut text = serde_json::to_string_pretty(&document).unwrap_or_default();
    text.push('\n');
    text
}

/// A whole-scalar substitution (`${each.value.frequency}`, `${var:x:-5}`).
const WHOLE_SUBSTITUTION: &str = r"^\$\{.+\}$";
/// A string with a substitution in it.
const ANY_SUBSTITUTION: &str = r"\$\{[^}]+\}";

/// Numbers and booleans also take a whole-scalar substitution; enumerated or
/// patterned strings any string with a substitution in it.
fn accept_substitutions(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.values_mut().for_each(accept_substitutions);
            let pattern = match map.get("type").and_then(Value::as_str) {
                Some("integer" | "number" | "boolean") => WHOLE_SUBSTITUTION,
                Some("string") if map.contains_key("enum") || map.contains_key("pattern") => ANY_SUBSTITUTION,
                _ => return,
            };
            let description = map.remove("description");
            let original = Value::Object(std::mem::take(map));
            map.insert(
                "anyOf".into(),
                json!([original, { "type": "string", "pattern": pattern }]),
            );
            if let Some(description) = description {
                map.insert("description".into(), description);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(accept_substitutions),
        _ => {}
    }
}

/// `forEach`, `forEachFile` and `environments` on a resource (each branch
/// of a tagged one).
fn add_expansion_fields(definition: &mut Map<String, Value>) {
    if let Some(Value::Array(branches)) = definition.get_mut("oneOf") {
        for branch in branches {
            if let Value::Object(branch) = branch {
                add_expansion_fields(branch);
            }
        }
        return;
    }
    let Some(Value::Object(properties)) = definition.get_mut("properties") else {
        return;
    };
    properties.insert(
        "forEach".into(),
        json!({
            "description": "One resource per item, addressed `section.id[key]`: a map (key: value), a list of strings (key = value), \"${var:NAME}\" naming such a list or map in [vars] (per environment), or { file: PATH } a CSV, JSON or YAML data file whose rows are the items (key: the `key` column or field, else the first). ${each.key}, ${each.value} and ${each.value.PATH} in any string.",
            "anyOf": [
                { "type": "object", "propertyNames": { "pattern": LOGICAL_ID_PATTERN } },
                { "type": "array", "items": { "type": "string", "pattern": LOGICAL_ID_PATTERN } },
                { "type": "string", "pattern": "^\\$\\{var:[^}]+\\}$" },
                {
                    "type": "object",
                    "properties": { "file": { "type": "string", "pattern": "\\.(csv|json|ya?ml)$" } },
                    "required": ["file"],
                    "additionalProperties": false,
                },
            ],
        }),
    );
    properties.insert(
        "forEachFile".into(),
        json!({
            "description": "One resource per file matching this glob (relative to this file, sorted): ${each.key} is the file name without extensions, ${each.value} its path relative to this file.",
            "type": "string",
            "minLength": 1,
        }),
    );
    properties.insert(
        "environments".into(),
        json!({
            "description": "The environments (of monform.toml's [environments]) this resource exists in; all when absent.",
            "type": "array",
            "items": { "type": "string" },
            "uniqueItems": true,
        }),
    );
}

/// The `moved`, `import` and `removed` lists (read by the loader's
/// `declare` module, not typed resources).
fn declarations(properties: &mut Map<String, Value>) {
    let id = LOGICAL_ID_PATTERN.trim_start_matches('^').trim_end_matches('$');
    let sections: Vec<&str> = Kind::ALL.iter().map(|k| k.section()).collect();
    let address = json!({
        "type": "string",
        "description": "An address: section.logical-id, or section.logical-id[key] for a forEach item.",
        "pattern": format!(r"^({})\.{id}(\[{id}\])?$", sections.join("|")),
    });
    let environments = json!({
        "description": "The environments (of monform.toml's [environments]) this entry applies to; all when absent. A `moved` or `import` entry applies only where its `to` resource exists anyway.",
        "type": "array",
        "items": { "type": "string" },
        "uniqueItems": true,
    });
    let list = |description: &str, mut fields: Value, required: &[&str]| {
        if let Some(fields) = fields.as_object_mut() {
            fields.insert("environments".into(), environments.clone());
        }
        json!({
            "type": "array",
            "description": description,
            "items": {
                "type": "object",
                "additionalProperties": false,
                "required": required,
                "properties": fields,
            },
        })
    };
    properties.insert(
        "moved".into(),
        list(
            "Renames: the object at `from` is now the resource at `to` (kept, not recreated). An entry whose `from` no longer exists is a no-op.",
            json!({ "from": address, "to": address }),
            &["from", "to"],
        ),
    );
    properties.insert(
        "import".into(),
        list(
            "Adopt an existing object (its remote `id`) as the resource at `to`, which the files must define (an environment whose files leave it out skips the entry).",
            json!({
                "to": address,
                "id": { "type": "string", "minLength": 1 },
                "secretFingerprints": {
                    "type": "object",
                    "description": "Field path to the salted fingerprint (`salt:digest`) of the secret the object holds now, as `monform migrate` read it (never the value): until the first apply records its own, a secret of the files with that fingerprint is not shown as to be set.",
                    "additionalProperties": { "type": "string", "pattern": "^[0-9a-fA-F]{1,64}:[0-9a-fA-F]{1,64}$" },
                },
            }),
            &["to", "id"],
        ),
    );
    properties.insert(
        "removed".into(),
        list(
            "Stop managing the object at `from`, which the files no longer define: `destroy: false` keeps it in the service; `destroy: true` (the default) deletes it.",
            json!({ "from": address, "destroy": { "type": "boolean", "default": true } }),
            &["from"],
        ),
    );
}

fn generate() -> Value {
    let mut generator = SchemaSettings::draft07().into_generator();
    let mut properties = Map::new();
    for &kind in Kind::ALL {
        let item = kind.schema(&mut generator).to_value();
        properties.insert(
            kind.section().to_owned(),
            json!({
                "type": "object",
                "description": format!("{} by logical id.", kind.section()),
                "propertyNames": { "pattern": LOGICAL_ID_PATTERN },
                "additionalProperties": item,
            }),
        );
    }
    declarations(&mut properties);
    let mut definitions = Value::Object(generator.take_definitions(true));
    merge_all_of(&mut definitions);
    let lookup = definitions.clone();
    inline_ref_siblings(&mut definitions, &lookup);
    close_objects(&mut definitions);
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": SCHEMA_ID,
        "title": "monform resource file",
        "type": "object",
        "additionalProperties": false,
        "properties": properties,
        "definitions": definitions,
    })
}

/// schemars expresses `#[serde(flatten)]` and `$ref` siblings with `allOf`;
/// with `additionalProperties: false` that rejects valid documents in
/// standard validators. Merge such `allOf`s into one object schema.
fn merge_all_of(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for child in map.values_mut() {
                merge_all_of(child);
            }
            if let Some(Value::Array(parts)) = map.remove("allOf") {
                for part in parts {
                    if let Value::Object(part) = part {
                        merge_object(map, part);
                    }
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(merge_all_of),
        _ => {}
    }
}

/// `{"$ref": X, "properties": {"checkType": {"const": ..}}}` (an internally
/// tagged variant) becomes X's schema with the tag merged in, because draft-07
/// ignores the siblings of `$ref`.
fn inline_ref_siblings(value: &mut Value, definitions: &Value) {
    match value {
        Value::Object(map) => {
            for child in map.values_mut() {
                inline_ref_siblings(child, definitions);
            }
            if map.len() > 1 && map.contains_key("$ref") {
                let reference = map.remove("$ref");
                let name = reference
                    .as_ref()
                    .and_then(Value::as_str)
                    .and_then(|r| r.rsplit('/').next());
                if let Some(Value::Object(target)) = name.and_then(|n| definitions.get(n)) {
                    let mut target = target.clone();
                    if let Some(Value::Object(props)) = map.remove("properties") {
                        // The tag goes first, as users write it.
                        let mut merged: Map<String, Value> = props;
                        if let Some(Value::Object(rest)) = target.remove("properties") {
                            merged.extend(rest);
                        }
                        target.insert("properties".into(), Value::Object(merged));
                    }
                    merge_object(&mut target, std::mem::take(map));
                    *map = target;
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| inline_ref_siblings(v, definitions)),
        _ => {}
    }
}

/// Every object schema with properties rejects unknown fields, so that a typo
/// is an error (with a suggestion) rather than silently ignored.
fn close_objects(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            map.values_mut().for_each(close_objects);
        }
        Value::Array(items) => items.iter_mut().for_each(close_objects),
        _ => {}
    }
}

fn merge_object(into: &mut Map<String, Value>, from: Map<String, Value>) {
    for (key, value) in from {
        match (key.as_str(), into.get_mut(&key), value) {
            ("properties", Some(Value::Object(existing)), Value::Object(new)) => existing.extend(new),
            ("required", Some(Value::Array(existing)), Value::Array(new)) => {
                for r in new {
                    if !existing.contains(&r) {
                        existing.push(r);
                    }
                }
            }
            (_, Some(_), _) => {}
            (_, None, value) => {
                into.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_editors_schema_has_expansion_fields_and_substitutions() {
        let document: Value = serde_json::from_str(&document_text()).unwrap();
        let check = &document["definitions"]["Check"]["oneOf"][0]["properties"];
        for field in ["forEach", "forEachFile", "environments"] {
            assert!(check.get(field).is_some(), "{field}");
        }
        assert_eq!(check["frequency"]["anyOf"][1]["pattern"], WHOLE_SUBSTITUTION);
        // The validator's own document (and so the API's) has neither.
        let validator = &schemas().document()["definitions"]["Check"]["oneOf"][0]["properties"];
        assert!(validator.get("forEach").is_none());
        assert!(validator["frequency"].get("anyOf").is_none());
    }
}
