//! The page on what commands print for programs: each published
//! `--format json` (from `crate::output::PUBLISHED`, its fields from its
//! JSON Schema) and the exit-code table (from `crate::exit::TABLE`).

use serde_json::Value;

use super::schema_text::{Reader, one_line, table};
use super::{GENERATED, Page};

fn no_link(_: &str) -> Option<String> {
    None
}

/// The property a tagged enum's variants are told apart by (`type`,
/// `kind`, `result`): the one each variant fixes to a constant.
fn tag_of(variant: &Value) -> Option<(&str, &str)> {
    variant["properties"].as_object()?.iter().find_map(|(name, property)| {
        let value = property["const"]
            .as_str()
            .or_else(|| property["enum"].as_array().filter(|e| e.len() == 1)?[0].as_str())?;
        Some((name.as_str(), value))
    })
}

/// A tagged enum's variants: each by its tag's value, with its own fields.
/// `more`: the variants' fields come on top of the fields above.
fn variant_table(variants: &[Value], more: bool) -> String {
    let tag = variants.first().and_then(tag_of).map_or("type", |(name, _)| name);
    let lead = if more {
        format!("\nAnd by `{tag}`, the fields of each:\n\n")
    } else {
        String::new()
    };
    let mut text = format!("{lead}| `{tag}` | its fields | what it says |\n|---|---|---|\n");
    for variant in variants {
        let (_, value) = tag_of(variant).unwrap_or_default();
        let fields: Vec<String> = variant["properties"]
            .as_object()
            .map(|p| p.keys().filter(|k| *k != tag).map(|k| format!("`{k}`")).collect())
            .unwrap_or_default();
        let about = variant["description"].as_str().unwrap_or_default();
        text.push_str(&format!(
            "| `{value}` | {} | {} |\n",
            fields.join(", "),
            one_line(about)
        ));
    }
    text
}

pub fn output_page() -> Page {
    let mut text = format!(
        "# Output for programs\n\n{GENERATED}\n\n\
         Every command that reports has `--format json`: stdout carries the JSON alone (progress and \
         diagnostics go to stderr), its shape is published as a JSON Schema (draft-07) that \
         `monform schema --output COMMAND` prints, and a test validates each command's real output \
         against it. A field's meaning changes only with a new `formatVersion` (the plan's) or a new \
         field. Using them in CI: [the guide](../guide/ci.md).\n\n\
         | command | output | schema |\n|---|---|---|\n"
    );
    let published = crate::output::PUBLISHED;
    for p in published {
        let words = p.words;
        let shape = if p.lines {
            "JSON lines: one object per line"
        } else {
            "one JSON document"
        };
        text.push_str(&format!(
            "| [`monform {words} {}`](#{}) | {shape} | `monform schema --output {}` |\n",
            p.flags,
            p.name(),
            p.name()
        ));
    }
    for p in published {
        let schema: Value = serde_json::from_str(&crate::output::schema_text(p)).unwrap_or_default();
        let reader = Reader {
            root: &schema,
            link: no_link,
        };
        let about = schema["description"].as_str().unwrap_or_default();
        text.push_str(&format!("\n## {}\n\n{}\n\n", p.name(), one_line(about)));
        let rows = reader.rows(&schema);
        if !rows.is_empty() {
            text.push_str(&table(&rows));
        }
        if let Some(variants) = schema["oneOf"].as_array() {
            text.push_str(&variant_table(variants, !rows.is_empty()));
        } else if rows.is_empty()
            && let Some(items) = schema["items"].as_object()
        {
            text.push_str("A list; each item:\n\n");
            text.push_str(&table(&reader.rows(&Value::Object(items.clone()))));
        }
    }
    text.push_str(&format!(
        "\n## Exit codes\n\nEach command's codes, declared once in the code (`crates/cli/src/exit.rs`) \
         and checked against real runs by a test.\n\n{}",
        crate::exit::markdown()
    ));
    Page {
        path: "output.md".to_owned(),
        text,
    }
}
