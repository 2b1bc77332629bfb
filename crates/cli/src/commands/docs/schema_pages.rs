//! The reference pages read from JSON Schemas: every kind and check type
//! (the resource file's schema, as `schema/resource-file.schema.json`),
//! monform.toml (`schema/monform.schema.json`) and the policies' input.

use serde_json::Value;

use super::schema_text::{Reader, one_line, properties, table};
use super::{GENERATED, Page};

/// A definition's anchor on the shared types page, as mdBook makes it from
/// a `## Name` heading.
fn type_link(name: &str) -> Option<String> {
    Some(format!("types.md#{}", name.to_lowercase()))
}

fn no_link(_: &str) -> Option<String> {
    None
}

/// The resource files' pages: an index, one page per section, the
/// declarations (`moved`, `import`, `removed`) and the shared types.
pub fn resource_pages() -> Vec<Page> {
    let document: Value =
        serde_json::from_str(&monform_model::schema::document_text()).expect("the model's schema document is JSON");
    let reader = Reader {
        root: &document,
        link: type_link,
    };
    let mut pages = Vec::new();
    let mut index = format!(
        "# Resource files\n\n{GENERATED}\n\nA resource file (YAML or TOML) holds sections, each a map from a logical id to a resource, \
         and three lists of declarations. Every field below is checked by `monform validate`; editors read the same \
         rules from `schema/resource-file.schema.json`.\n\n| section | what it holds |\n|---|---|\n"
    );
    let mut roots = Vec::new();
    for &kind in monform_model::Kind::ALL {
        let section = kind.section();
        let entry = &document["properties"][section];
        let Some(definition_name) = entry["additionalProperties"]["$ref"]
            .as_str()
            .and_then(|r| r.rsplit('/').next())
        else {
            continue;
        };
        roots.push(definition_name.to_owned());
        let definition = &document["definitions"][definition_name];
        let about = definition["description"]
            .as_str()
            .or_else(|| entry["description"].as_str())
            .unwrap_or_default();
        index.push_str(&format!("| [{section}]({section}.md) | {} |\n", one_line(about)));
        pages.push(Page {
            path: format!("resources/{section}.md"),
            text: section_page(&reader, section, entry, definition),
        });
    }
    index.push_str("| [moved, import, removed](declarations.md) | declarations: renames, adoptions, hand-overs |\n");
    index.push_str(
        "\nTypes several fields share (requests, assertions, alert settings...) are on [Shared types](types.md).\n",
    );
    pages.push(Page {
        path: "resources/index.md".to_owned(),
        text: index,
    });
    pages.push(Page {
        path: "resources/declarations.md".to_owned(),
        text: declarations_page(&reader, &document),
    });
    pages.push(Page {
        path: "resources/types.md".to_owned(),
        text: types_page(&reader, &document, &roots),
    });
    pages
}

fn section_page(reader: &Reader, section: &str, entry: &Value, definition: &Value) -> String {
    let mut out = format!("# {section}\n\n{GENERATED}\n\n");
    if let Some(about) = definition["description"].as_str() {
        out.push_str(&format!("{}\n\n", about.trim()));
    }
    if let Some(pattern) = entry["propertyNames"]["pattern"].as_str() {
        out.push_str(&format!(
            "Written as `{section}: {{ ID: {{ ... }} }}`; a logical id matches `{pattern}`. A type `... or \
             ${{...}}` takes a whole-value substitution (`${{var:NAME}}`, `${{env:NAME}}`, `${{each.value.X}}`) too.\n\n"
        ));
    }
    let Some(variants) = definition["oneOf"].as_array() else {
        out.push_str(&table(&reader.rows(definition)));
        return out;
    };
    // A tagged kind: the fields every variant shares, then each variant's own.
    let tag = variants
        .first()
        .and_then(properties)
        .and_then(|p| p.iter().find(|(_, s)| s.get("const").is_some()).map(|(k, _)| k.clone()))
        .unwrap_or_default();
    let shared: Vec<String> = properties(&variants[0])
        .map(|first| {
            first
                .iter()
                .filter(|(name, schema)| {
                    **name != tag
                        && variants
                            .iter()
                            .all(|v| properties(v).and_then(|p| p.get(*name)) == Some(*schema))
                })
                .map(|(name, _)| name.clone())
                .collect()
        })
        .unwrap_or_default();
    let mut common = variants[0].clone();
    retain_properties(&mut common, |name| shared.iter().any(|s| s == name));
    out.push_str(&format!(
        "## Fields of every `{tag}`\n\n{}\n",
        table(&reader.rows(&common))
    ));
    for variant in variants {
        let value = properties(variant)
            .and_then(|p| p.get(&tag))
            .and_then(|t| t.get("const"))
            .and_then(Value::as_str)
            .unwrap_or("?");
        let mut own = variant.clone();
        retain_properties(&mut own, |name| !shared.iter().any(|s| s == name) && name != tag);
        out.push_str(&format!(
            "## {value}\n\n`{tag}: {value}`: the fields above, and these.\n\n{}\n",
            table(&reader.rows(&own))
        ));
    }
    out
}

/// Keeps the properties (and the required names) `keep` says.
fn retain_properties(schema: &mut Value, keep: impl Fn(&str) -> bool) {
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        props.retain(|name, _| keep(name));
    }
    if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|name| name.as_str().is_some_and(&keep));
    }
}

fn declarations_page(reader: &Reader, document: &Value) -> String {
    let mut out = format!(
        "# moved, import, removed\n\n{GENERATED}\n\nTop-level lists of any resource file, reviewed in the plan like any change \
         ([the guide](../../guide/refactoring.md)).\n\n"
    );
    for name in ["moved", "import", "removed"] {
        let list = &document["properties"][name];
        out.push_str(&format!("## {name}\n\n"));
        if let Some(about) = list["description"].as_str() {
            out.push_str(&format!("{}\n\n", about.trim()));
        }
        out.push_str(&format!("Each entry:\n\n{}\n", table(&reader.rows(&list["items"]))));
    }
    out
}

fn types_page(reader: &Reader, document: &Value, roots: &[String]) -> String {
    let mut out = format!(
        "# Shared types\n\n{GENERATED}\n\nThe objects fields of several kinds share, by the model's name for them.\n\n"
    );
    let Some(definitions) = document["definitions"].as_object() else {
        return out;
    };
    // The definitions the kinds reach through `$ref`s (a check type's body
    // is written inline in `Check`, so its own definition is not listed).
    let mut reached: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    let mut todo: Vec<&Value> = roots.iter().filter_map(|r| definitions.get(r)).collect();
    while let Some(schema) = todo.pop() {
        references(schema, &mut |name| {
            if reached.insert(name.to_owned())
                && let Some(definition) = definitions.get(name)
            {
                todo.push(definition);
            }
        });
    }
    let names: Vec<&String> = reached
        .iter()
        .filter(|n| !roots.contains(n))
        .filter(|n| definitions.get(*n).is_some_and(|d| !reader.is_enumeration(d)))
        .collect();
    for name in names {
        let definition = &definitions[name];
        out.push_str(&format!("## {name}\n\n"));
        if let Some(about) = definition["description"].as_str() {
            out.push_str(&format!("{}\n\n", about.trim()));
        }
        if properties(definition).is_some() {
            out.push_str(&table(&reader.rows(definition)));
        } else {
            // An enumeration or a choice of shapes: one row says it.
            let wrapper = serde_json::json!({ "properties": { "(value)": definition } });
            let rows = reader.rows(&wrapper);
            if let Some(row) = rows.first() {
                out.push_str(&format!("A value: {}", one_line(&row.ty)));
                if !row.values.is_empty() {
                    out.push_str(&format!(", one of {}", row.values.join(", ")));
                }
                if !row.limits.is_empty() {
                    out.push_str(&format!(" ({})", one_line(&row.limits.join("; "))));
                }
                out.push_str(".\n");
            }
        }
        out.push('\n');
    }
    out
}

/// monform.toml: each table and its keys.
pub fn project_page() -> Page {
    let schema: Value = serde_json::from_str(&monform_config::project_schema::project_schema_text())
        .expect("the project schema is JSON");
    let reader = Reader {
        root: &schema,
        link: no_link,
    };
    let mut out = format!(
        "# monform.toml\n\n{GENERATED}\n\nThe project file, at the project's root. Editors read the same rules from \
         `schema/monform.schema.json` (Taplo: `#:schema schema/monform.schema.json`).\n\n"
    );
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (name, table_schema) in properties(&schema).into_iter().flatten() {
        let must = if required.contains(&name.as_str()) {
            " (required)"
        } else {
            ""
        };
        out.push_str(&format!("## [{name}]{must}\n\n"));
        if let Some(about) = table_schema["description"].as_str() {
            out.push_str(&format!("{}\n\n", about.trim()));
        }
        if properties(table_schema).is_some() {
            out.push_str(&table(&reader.rows(table_schema)));
        } else if let Some(each) = table_schema.get("additionalProperties").filter(|v| v.is_object()) {
            if properties(each).is_some() {
                out.push_str(&format!("Each `[{name}.NAME]` table:\n\n{}", table(&reader.rows(each))));
            } else {
                out.push_str("Any keys.\n");
            }
        } else {
            out.push_str("Any keys.\n");
        }
        out.push('\n');
    }
    Page {
        path: "project-file.md".to_owned(),
        text: out,
    }
}

/// The input every Rego policy gets.
pub fn policy_input_page() -> Page {
    let schema = monform_policy::schema::input_schema();
    let reader = Reader {
        root: &schema,
        link: no_link,
    };
    let about = schema["description"].as_str().unwrap_or_default().trim().to_owned();
    let text = format!(
        "# Policy input\n\n{GENERATED}\n\n{about}\n\n`monform schema --policy-input` prints the JSON Schema this page is \
         made from. Writing policies: [the guide](../guide/policies.md).\n\n{}",
        table(&reader.rows(&schema))
    );
    Page {
        path: "policy-input.md".to_owned(),
        text,
    }
}

/// Calls `found` with the name of every `$ref` inside `schema`.
fn references(schema: &Value, found: &mut impl FnMut(&str)) {
    match schema {
        Value::Object(map) => {
            if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                found(reference.rsplit('/').next().unwrap_or(reference));
            }
            for value in map.values() {
                references(value, found);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| references(item, found)),
        _ => {}
    }
}
