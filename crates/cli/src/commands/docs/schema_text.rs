//! A JSON Schema (draft-07, as monform generates them) read into the rows
//! of a reference table: each field's type, default, limits, allowed
//! values and description. The resource files', monform.toml's and the
//! policy input's pages all read their schema through this one reader, so
//! the pages say what the validator checks.

use serde_json::{Map, Value};

/// One field of a table.
pub struct Row {
    /// The field's name, or a dotted path into nested objects.
    pub name: String,
    pub ty: String,
    pub required: bool,
    pub default: Option<String>,
    /// Limits, each a short phrase.
    pub limits: Vec<String>,
    /// The values allowed, when the field is an enumeration.
    pub values: Vec<String>,
    /// Whether a whole-value `${...}` substitution may stand for it.
    pub substitution: bool,
    pub description: String,
}

/// What a field's schema says, once substitutions and `null` are set aside.
struct Facts {
    ty: String,
    default: Option<String>,
    limits: Vec<String>,
    values: Vec<String>,
    substitution: bool,
    description: Option<String>,
    /// The field's own object, when its properties are written inline.
    inline_object: Option<Value>,
}

impl Facts {
    fn new(description: Option<String>) -> Facts {
        Facts {
            ty: String::new(),
            default: None,
            limits: Vec::new(),
            values: Vec::new(),
            substitution: false,
            description,
            inline_object: None,
        }
    }
}

/// Reads schemas whose `$ref`s point into `root`'s `definitions`.
pub struct Reader<'a> {
    pub root: &'a Value,
    /// How a link to a definition is written (`types.md#name`), or `None`
    /// to write the definition's name alone.
    pub link: fn(&str) -> Option<String>,
}

impl<'a> Reader<'a> {
    /// Whether a definition is an enumeration (written out where it is
    /// used, never on a page of its own).
    pub fn is_enumeration(&self, definition: &'a Value) -> bool {
        let (alternatives, _) = self.essential(definition);
        matches!(alternatives.as_slice(), [only] if only.get("enum").is_some())
    }

    /// The definition a `$ref` names.
    pub fn definition(&self, reference: &str) -> Option<&'a Value> {
        let name = reference.rsplit('/').next()?;
        self.root.get("definitions")?.get(name)
    }

    fn resolve(&self, schema: &'a Value) -> &'a Value {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(reference) => self.definition(reference).unwrap_or(schema),
            None => schema,
        }
    }

    /// The rows of an object schema's properties; nested objects without a
    /// definition of their own are written as `outer.inner` rows below
    /// theirs (and `outer[].inner` inside lists).
    pub fn rows(&self, object: &Value) -> Vec<Row> {
        let mut rows = Vec::new();
        self.rows_into(object, "", &mut rows, 0);
        rows
    }

    fn rows_into(&self, object: &Value, prefix: &str, rows: &mut Vec<Row>, depth: usize) {
        let object = self.resolve(object);
        let required: Vec<&str> = object
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let Some(properties) = object.get("properties").and_then(Value::as_object) else {
            return;
        };
        for (name, schema) in properties {
            let facts = self.facts(schema);
            let path = format!("{prefix}{name}");
            let description = facts.description.clone().unwrap_or_default();
            rows.push(Row {
                name: path.clone(),
                ty: facts.ty,
                required: required.contains(&name.as_str()),
                default: facts.default,
                limits: facts.limits,
                values: facts.values,
                substitution: facts.substitution,
                description: one_line(&description),
            });
            // Inline objects (no definition of their own) are spelled out
            // below their field, a few levels at most.
            if let Some(inner) = facts.inline_object
                && depth < 4
            {
                let list = schema.get("type").and_then(Value::as_str) == Some("array");
                let prefix = if list { format!("{path}[].") } else { format!("{path}.") };
                self.rows_into(&inner, &prefix, rows, depth + 1);
            }
        }
    }

    /// A schema set aside from what only editors need: `${...}`
    /// substitutions and `null` alternatives.
    fn essential(&self, schema: &'a Value) -> (Vec<&'a Value>, bool) {
        let mut substitution = false;
        let alternatives: Vec<&Value> = match schema.get("anyOf").and_then(Value::as_array) {
            Some(list) => list
                .iter()
                .filter(|s| {
                    let is_substitution = s.get("type").and_then(Value::as_str) == Some("string")
                        && s.get("pattern")
                            .and_then(Value::as_str)
                            .is_some_and(|p| p.contains("\\$\\{"))
                        && s.get("enum").is_none();
                    substitution |= is_substitution;
                    !is_substitution && s.get("type").and_then(Value::as_str) != Some("null")
                })
                .collect(),
            None => vec![schema],
        };
        (alternatives, substitution)
    }

    fn facts(&self, schema: &'a Value) -> Facts {
        let (alternatives, substitution) = self.essential(schema);
        let mut facts = Facts::new(schema.get("description").and_then(Value::as_str).map(str::to_owned));
        facts.default = schema.get("default").map(value_text);
        facts.substitution = substitution;
        let mut types = Vec::new();
        for alternative in &alternatives {
            types.push(self.type_of(alternative, &mut facts));
        }
        facts.ty = types.join(" or ");
        if facts.ty.is_empty() {
            facts.ty = "any".to_owned();
        }
        facts
    }

    /// The type of one alternative, its limits and default added to `facts`.
    fn type_of(&self, schema: &'a Value, facts: &mut Facts) -> String {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let name = reference.rsplit('/').next().unwrap_or(reference);
            if facts.description.is_none() {
                facts.description = self
                    .definition(reference)
                    .and_then(|d| d.get("description"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
            }
            // An enumeration is written out where it is used.
            if let Some(definition) = self.definition(reference) {
                let (alternatives, _) = self.essential(definition);
                if let [only] = alternatives.as_slice()
                    && only.get("enum").is_some()
                {
                    return self.type_of(only, facts);
                }
            }
            return match (self.link)(name) {
                Some(link) => format!("[{name}]({link})"),
                None => name.to_owned(),
            };
        }
        if facts.default.is_none() {
            facts.default = schema.get("default").map(value_text);
        }
        if facts.description.is_none() {
            facts.description = schema.get("description").and_then(Value::as_str).map(str::to_owned);
        }
        limits(schema, &mut facts.limits);
        if schema.get("x-sensitive").is_some() {
            facts.limits.push("sensitive: never printed".to_owned());
        }
        if let Some(section) = schema.get("x-ref").and_then(Value::as_str) {
            let soft = if schema.get("x-ref-soft").is_some() {
                " (or an existing object's slug)"
            } else {
                ""
            };
            facts.limits.push(format!("a logical id of `{section}`{soft}"));
        }
        if schema.get("x-replace").is_some() {
            facts.limits.push("a change replaces the object".to_owned());
        }
        if schema.get("x-meta").is_some() {
            facts.limits.push("monform only, never sent".to_owned());
        }
        if schema.get("x-script").is_some() {
            return "string or `{ file: PATH }`".to_owned();
        }
        if let Some(value) = schema.get("const") {
            return format!("`{}`", value_text(value));
        }
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            facts.values = values.iter().map(|v| format!("`{}`", value_text(v))).collect();
            let base = base_type(schema);
            return if base.is_empty() { "string".to_owned() } else { base };
        }
        if let Some(branches) = schema
            .get("oneOf")
            .or_else(|| schema.get("anyOf"))
            .and_then(Value::as_array)
        {
            let mut inner = Facts::new(Some(String::new()));
            let words: Vec<String> = branches
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"))
                .map(|b| self.type_of(b, &mut inner))
                .collect();
            return words.join(" or ");
        }
        let base = base_type(schema);
        match base.as_str() {
            "array" => {
                let items = schema
                    .get("items")
                    .map_or_else(|| "any".to_owned(), |items| self.type_of(items, facts));
                if let Some(items) = schema.get("items")
                    && items.get("properties").is_some()
                {
                    facts.inline_object = Some(items.clone());
                }
                if schema.get("x-set").is_some() {
                    facts.limits.push("compared as a set".to_owned());
                }
                format!("list of {items}")
            }
            "object" => {
                if schema.get("properties").is_some() {
                    facts.inline_object = Some(schema.clone());
                    return "object".to_owned();
                }
                match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) | None => "object".to_owned(),
                    Some(Value::Bool(true)) => "map".to_owned(),
                    Some(values) => {
                        let mut inner = Facts::new(Some(String::new()));
                        let value = self.type_of(values, &mut inner);
                        if values.get("properties").is_some() {
                            facts.inline_object = Some(values.clone());
                        }
                        format!("map of {value}")
                    }
                }
            }
            _ => base,
        }
    }
}

/// The JSON type of a schema, `null` left out.
fn base_type(schema: &Value) -> String {
    match schema.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(types)) => {
            let words: Vec<&str> = types
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect();
            words.join(" or ")
        }
        _ if schema.get("allOf").is_some() => schema["allOf"]
            .as_array()
            .and_then(|all| all.first())
            .map(base_type)
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// The keywords that bound a value, as phrases.
fn limits(schema: &Value, out: &mut Vec<String>) {
    let number = |key: &str| schema.get(key).map(value_text);
    let mut push = |text: String| {
        if !out.contains(&text) {
            out.push(text);
        }
    };
    match (number("minimum"), number("maximum")) {
        (Some(min), Some(max)) => push(format!("{min} to {max}")),
        (Some(min), None) if min != "0" => push(format!("at least {min}")),
        (None, Some(max)) => push(format!("at most {max}")),
        _ => {}
    }
    if let Some(min) = number("exclusiveMinimum") {
        push(format!("more than {min}"));
    }
    match (number("minLength"), number("maxLength")) {
        (Some(min), Some(max)) => push(format!("{min} to {max} characters")),
        (Some(min), None) if min != "0" => push(format!("at least {min} character{}", plural(&min))),
        (None, Some(max)) => push(format!("at most {max} characters")),
        _ => {}
    }
    match (number("minItems"), number("maxItems")) {
        (Some(min), Some(max)) => push(format!("{min} to {max} items")),
        (Some(min), None) if min != "0" => push(format!("at least {min} item{}", plural(&min))),
        (None, Some(max)) => push(format!("at most {max} items")),
        _ => {}
    }
    if schema.get("uniqueItems") == Some(&Value::Bool(true)) {
        push("no duplicates".to_owned());
    }
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
        push(format!("matches `{pattern}`"));
    }
    for part in schema.get("allOf").and_then(Value::as_array).into_iter().flatten() {
        limits(part, out);
    }
    if let Some(names) = schema
        .get("propertyNames")
        .and_then(|p| p.get("pattern"))
        .and_then(Value::as_str)
    {
        out.push(format!("keys match `{names}`"));
    }
}

fn plural(count: &str) -> &'static str {
    if count == "1" { "" } else { "s" }
}

/// A JSON value as the files would write it.
pub fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Text on one line (a table cell): `|` escaped, and `<` outside code
/// spans, so `<name>` reads as text, not an HTML tag.
pub fn one_line(text: &str) -> String {
    let joined = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|");
    let mut out = String::with_capacity(joined.len());
    let mut in_code = false;
    for c in joined.chars() {
        match c {
            '`' => in_code = !in_code,
            '<' if !in_code => out.push('\\'),
            _ => {}
        }
        out.push(c);
    }
    out
}

/// A Markdown table of `rows`: the field, its type, and what it means
/// with its default, allowed values and limits.
pub fn table(rows: &[Row]) -> String {
    if rows.is_empty() {
        return "No fields.\n".to_owned();
    }
    let mut out = String::from("| field | type | description |\n|---|---|---|\n");
    for row in rows {
        let required = if row.required { " (required)" } else { "" };
        let substitution = if row.substitution { " or `${...}`" } else { "" };
        let mut about = vec![row.description.clone()];
        if let Some(default) = &row.default {
            about.push(format!("Default: `{}`.", one_line(default)));
        }
        if !row.values.is_empty() {
            about.push(format!("One of {}.", row.values.join(", ")));
        }
        if !row.limits.is_empty() {
            let notes = one_line(&row.limits.join("; "));
            let mut chars = notes.chars();
            let first = chars
                .next()
                .map(|c| c.to_uppercase().collect::<String>())
                .unwrap_or_default();
            about.push(format!("{first}{}.", chars.as_str()));
        }
        about.retain(|a| !a.is_empty());
        out.push_str(&format!(
            "| `{}`{required} | {}{substitution} | {} |\n",
            row.name,
            one_line(&row.ty),
            about.join(" ")
        ));
    }
    out
}

/// The properties of an object schema, by name.
pub fn properties(schema: &Value) -> Option<&Map<String, Value>> {
    schema.get("properties").and_then(Value::as_object)
}
