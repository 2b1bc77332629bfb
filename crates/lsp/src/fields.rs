//! The resource model as the editor needs it: the fields of a map at a
//! path, a field's schema, enum values, reference targets. Read from the
//! model's published JSON Schema (`monform_model::schema::document_text`,
//! the document editors get, with `forEach`, `forEachFile` and
//! `environments`), never from a list of its own.

use std::sync::LazyLock;

use monform_model::Kind;
use monform_model::facts::variant_tag;
use serde_json::Value;

static DOCUMENT: LazyLock<Value> =
    LazyLock::new(|| serde_json::from_str(&monform_model::schema::document_text()).unwrap_or(Value::Null));

/// The schema document of a resource file.
pub fn document() -> &'static Value {
    &DOCUMENT
}

fn resolve(mut schema: &Value) -> &Value {
    while let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.rsplit('/').next().unwrap_or_default();
        match document()["definitions"].get(name) {
            Some(target) => schema = target,
            None => break,
        }
    }
    schema
}

/// The alternatives a schema allows (`anyOf`, `oneOf` flattened), those of
/// another variant than `variant` left out.
fn branches<'a>(schema: &'a Value, variant: Option<&str>, out: &mut Vec<&'a Value>) {
    let schema = resolve(schema);
    let alternatives = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array);
    match alternatives {
        Some(list) => {
            for branch in list {
                branches(branch, variant, out);
            }
        }
        None => {
            let other = variant.is_some_and(|variant| {
                schema["properties"]
                    .as_object()
                    .into_iter()
                    .flat_map(|p| p.values())
                    .any(|p| p.get("const").and_then(Value::as_str).is_some_and(|c| c != variant))
            });
            if !other {
                out.push(schema);
            }
        }
    }
}

/// A place in the schema: the schemas a field may have there (one per
/// variant when the resource names none yet) and the resource's variant.
#[derive(Clone)]
pub struct At<'a> {
    pub schemas: Vec<&'a Value>,
    pub variant: Option<&'a str>,
}

/// The schema of a resource of `section` (`checks`) or of an entry of a
/// declaration list (`moved`), for the variant named in its text.
pub fn root<'a>(section: &str, variant: Option<&'a str>) -> Option<At<'a>> {
    let property = &document()["properties"][section];
    let schema = property
        .get("additionalProperties")
        .filter(|s| s.is_object())
        .or_else(|| property.get("items"))?;
    Some(At {
        schemas: vec![schema],
        variant,
    })
}

/// The kind of a section.
pub fn kind(section: &str) -> Option<Kind> {
    Kind::from_section(section)
}

/// The variant a resource's text names (`checkType: API`, `type = "EMAIL"`).
pub fn variant_in(kind: Kind, block: &str) -> Option<String> {
    let tag = variant_tag(kind)?;
    block.lines().find_map(|line| {
        let at = line.find(tag)?;
        let rest = line[at + tag.len()..].trim_start().strip_prefix([':', '='])?;
        let value: String = rest
            .trim_start()
            .trim_start_matches(['"', '\''])
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        (!value.is_empty()).then_some(value)
    })
}

impl<'a> At<'a> {
    pub fn one(schema: &'a Value, variant: Option<&'a str>) -> At<'a> {
        At {
            schemas: vec![schema],
            variant,
        }
    }

    fn all(&self) -> Vec<&'a Value> {
        let mut out = Vec::new();
        for schema in &self.schemas {
            branches(schema, self.variant, &mut out);
        }
        out
    }

    /// One step down: a field (`[]` is an item of a list).
    pub fn step(&self, key: &str) -> Option<At<'a>> {
        let mut found: Vec<&'a Value> = Vec::new();
        for branch in self.all() {
            let next = if key == "[]" {
                branch.get("items")
            } else {
                branch.get("properties").and_then(|p| p.get(key))
            };
            if let Some(next) = next
                && !found.contains(&next)
            {
                found.push(next);
            }
        }
        (!found.is_empty()).then_some(At {
            schemas: found,
            variant: self.variant,
        })
    }

    pub fn path(self, keys: &[String]) -> Option<At<'a>> {
        keys.iter().try_fold(self, |at, key| at.step(key))
    }

    /// The fields of the map here, each once, in the schema's order.
    pub fn fields(&self) -> Vec<(&'a str, &'a Value)> {
        let mut fields: Vec<(&'a str, &'a Value)> = Vec::new();
        for branch in self.all() {
            for (name, schema) in branch["properties"].as_object().into_iter().flatten() {
                if !fields.iter().any(|(n, _)| n == name) {
                    fields.push((name, schema));
                }
            }
        }
        fields
    }

    /// The values allowed here (enums and constants; true and false),
    /// those of a list's items for a list.
    pub fn values(&self) -> Vec<Value> {
        let mut values: Vec<Value> = Vec::new();
        let mut add = |value: &Value| {
            if !values.contains(value) {
                values.push(value.clone());
            }
        };
        for branch in self.all() {
            if let Some(items) = branch.get("items") {
                for value in At::one(items, self.variant).values() {
                    add(&value);
                }
            }
            for value in branch.get("enum").and_then(Value::as_array).into_iter().flatten() {
                add(value);
            }
            if let Some(constant) = branch.get("const") {
                add(constant);
            }
            if branch["type"] == "boolean" {
                add(&Value::Bool(true));
                add(&Value::Bool(false));
            }
        }
        values
    }

    /// The section a reference field names (`x-ref`).
    pub fn reference(&self) -> Option<&'a str> {
        self.keyword("x-ref").and_then(Value::as_str)
    }

    /// A keyword of the schema here or of one of its alternatives.
    pub fn keyword(&self, name: &str) -> Option<&'a Value> {
        self.schemas
            .iter()
            .find_map(|s| resolve(s).get(name))
            .or_else(|| self.all().into_iter().find_map(|b| b.get(name)))
    }

    /// The type in words (`integer`, `string or null`, `list of string`).
    pub fn type_name(&self) -> String {
        let mut names: Vec<String> = Vec::new();
        for branch in self.all() {
            let types: Vec<&str> = match &branch["type"] {
                Value::String(t) => vec![t.as_str()],
                Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
                _ if branch.get("properties").is_some() => vec!["object"],
                _ => Vec::new(),
            };
            for t in types {
                // `${...}` alternatives are substitutions, not a type of their own.
                if t == "string"
                    && branch
                        .get("pattern")
                        .and_then(Value::as_str)
                        .is_some_and(|p| p.contains("\\$\\{"))
                {
                    continue;
                }
                let name = if t == "array" {
                    let items = branch
                        .get("items")
                        .map(|items| At::one(items, self.variant).type_name());
                    format!("list of {}", items.unwrap_or_else(|| "values".into()))
                } else {
                    t.to_owned()
                };
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        names.join(" or ")
    }

    /// Description, type, default and limits, as Markdown.
    pub fn documentation(&self, name: &str) -> String {
        let mut text = format!("**{name}**: {}", self.type_name());
        if let Some(description) = self.keyword("description").and_then(Value::as_str) {
            text.push_str("\n\n");
            text.push_str(description);
        }
        let mut facts: Vec<String> = Vec::new();
        if let Some(default) = self.keyword("default") {
            facts.push(format!("default: `{default}`"));
        }
        for (keyword, words) in [
            ("minimum", "at least"),
            ("maximum", "at most"),
            ("minLength", "length at least"),
            ("maxLength", "length at most"),
            ("minItems", "items at least"),
            ("maxItems", "items at most"),
        ] {
            if let Some(limit) = self.keyword(keyword) {
                facts.push(format!("{words} {limit}"));
            }
        }
        let values = self.values();
        if !values.is_empty() && values.len() <= 30 && !values.iter().all(Value::is_boolean) {
            let shown: Vec<String> = values.iter().map(|v| format!("`{}`", plain(v))).collect();
            facts.push(format!("one of {}", shown.join(", ")));
        }
        if let Some(section) = self.reference() {
            facts.push(format!("names a logical id of `{section}`"));
        }
        if !facts.is_empty() {
            text.push_str("\n\n");
            text.push_str(&facts.join("; "));
        }
        text
    }
}

/// A value as written in a file (strings without quotes).
pub fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
