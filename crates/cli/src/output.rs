//! What commands print for programs: each `--format json` is a typed
//! struct (serde `Serialize` and schemars `JsonSchema`) next to the code
//! that fills it, and this list publishes its JSON Schema (`monform schema
//! --output COMMAND`, the reference page `output.md`, and the test that
//! validates every command's real output against it, tests/it/output_schemas.rs).
//!
//! A new command's JSON is one line in [`PUBLISHED`]: its name, and the
//! type it prints (`one`), or prints one of per line (`lines`).

use schemars::{JsonSchema, Schema};

/// One command's published output.
pub struct Published {
    /// As typed after `monform` (`slo status`, `location-keys list`).
    pub words: &'static str,
    /// The name `--output` takes when not the words' (a second output of one command).
    pub named: Option<&'static str>,
    /// The flags that give this output.
    pub flags: &'static str,
    /// JSON lines: each line of stdout is one value of the schema.
    pub lines: bool,
    pub schema: fn() -> Schema,
}

/// `T`'s schema (draft-07, as the resource files' and the policy input's).
fn schema_of<T: JsonSchema>() -> Schema {
    schemars::generate::SchemaSettings::draft07()
        .into_generator()
        .into_root_schema_for::<T>()
}

/// A command printing one JSON document of type `T`.
const fn one<T: JsonSchema>(words: &'static str, flags: &'static str) -> Published {
    Published {
        words,
        named: None,
        flags,
        lines: false,
        schema: schema_of::<T>,
    }
}

/// A command printing JSON lines, each of type `T`.
const fn lines<T: JsonSchema>(words: &'static str, flags: &'static str) -> Published {
    Published {
        words,
        named: None,
        flags,
        lines: true,
        schema: schema_of::<T>,
    }
}

/// `lines`, under another name than the command's words.
const fn lines_named<T: JsonSchema>(named: &'static str, words: &'static str, flags: &'static str) -> Published {
    Published {
        named: Some(named),
        ..lines::<T>(words, flags)
    }
}

/// Every command with a published `--format json`.
pub const PUBLISHED: &[Published] = &[
    one::<crate::commands::validate::Report>("validate", "--format json"),
    one::<crate::render::plan::PlanJson>("plan", "--format json"),
    one::<crate::render::plan::PlanJson>("show", "PLANFILE --format json"),
    lines::<crate::render::apply_output::Line>("apply", "--format json"),
    lines::<crate::render::apply_output::Line>("destroy", "--format json"),
    one::<crate::render::test::Report>("test", "[--local] --format json"),
    one::<crate::render::status::StatusJson>("status", "[ADDRESS...] --format json"),
    one::<crate::render::slo::SloStatusJson>("slo status", "--format json"),
    one::<crate::commands::slo::SloFileJson>("slo export", "--openslo [--out FILE] --format json"),
    one::<crate::commands::slo::SloFileJson>("slo import", "FILE [--out FILE] --format json"),
    one::<crate::commands::slo::GateJson>("gate", "--slo ADDRESS --format json"),
    one::<crate::commands::policy::Report>("policy test", "--format json"),
    one::<crate::commands::location_keys::KeyList>("location-keys list", "ADDRESS --format json"),
    one::<crate::commands::location_keys::CreatedJson>("location-keys create", "ADDRESS --format json"),
    one::<crate::commands::location_keys::RevokedJson>("location-keys revoke", "ADDRESS KEY_ID --format json"),
    one::<crate::commands::state::ListJson>("state list", "--format json"),
    one::<crate::commands::state::EntryJson>("state show", "ADDRESS --format json"),
    one::<crate::commands::state::HistoryJson>("state history", "--format json"),
    one::<crate::commands::state::RemovedJson>("state rm", "ADDRESS --format json"),
    one::<crate::commands::state::MovedJson>("state mv", "OLD NEW --format json"),
    one::<crate::commands::state::MigratedJson>("state migrate", "--to BACKEND --format json"),
    one::<crate::commands::trust::TrustJson>("trust", "[--list or --revoke] --format json"),
    one::<crate::commands::init::InitJson>("init", "[--from-account] --format json"),
    one::<crate::commands::agent_skill::AgentSkillJson>("agent-skill", "--out DIR --format json"),
    one::<crate::commands::docs::DocsJson>("docs", "--out DIR --format json"),
    one::<crate::commands::mcp::ApprovedJson>("approve", "HASH --format json"),
    one::<crate::render::export::ExportJson>("export", "--out DIR --format json"),
    lines::<monform_reconcile::LogLine>("reconcile", "--once --log-format json (standard error)"),
    lines_named::<monform_reconcile::EventLine>("reconcile-events", "reconcile", "--events FILE (each line of FILE)"),
    one::<crate::commands::codify::CodifyJson>("codify", "--format json (with --check, --write or neither)"),
    one::<crate::commands::migrate::MigrateJson>("migrate", "terraform DIR --format json"),
    one::<crate::commands::generate::GenerateJson>("generate", "(openapi SPEC or sitemap URL) --format json"),
    one::<crate::render::export::ImportJson>(
        "import",
        "ADDRESS REMOTE_ID (or --all-unmanaged --out DIR) --format json",
    ),
];

impl Published {
    /// The name `--output` takes: the words joined by `-` (`slo-status`).
    pub fn name(&self) -> String {
        self.named.map_or_else(|| self.words.replace(' ', "-"), str::to_owned)
    }
}

/// The published output of `command` (`slo-status`, or `slo status`).
pub fn find(command: &str) -> Option<&'static Published> {
    let name = command.split_whitespace().collect::<Vec<_>>().join("-");
    PUBLISHED.iter().find(|p| p.name() == name)
}

/// `command`'s schema as pretty JSON, with its `$id`-less title naming it.
pub fn schema_text(published: &Published) -> String {
    let mut schema = (published.schema)();
    let words = published.words;
    let what = if published.lines {
        format!("Each line `monform {words} {}` prints", published.flags)
    } else {
        format!("What `monform {words} {}` prints", published.flags)
    };
    schema.insert("title".into(), format!("monform {words}").into());
    // The type's own description, if any, stays; the command's comes first.
    let description = match schema.get("description").and_then(|d| d.as_str()) {
        // A doc comment's line breaks are not the reader's.
        Some(own) => format!("{what}. {}", own.split_whitespace().collect::<Vec<_>>().join(" ")),
        None => format!("{what}."),
    };
    schema.insert("description".into(), description.into());
    serde_json::to_string_pretty(&schema).unwrap_or_default()
}
