//! The JSON Schema (draft-07) of `monform.toml`, for editors (Taplo,
//! `#:schema ../schema/monform.schema.json`). The sections and keys are
//! project.rs's own lists (a test keeps them in step); `[defaults]` takes
//! the check fields of the resource schema.

use crate::interpolate::NAME_PATTERN as ENV_NAME;
use monform_model::LOGICAL_ID_PATTERN;
use monform_model::schema::schemas;
use serde_json::{Value, json};

/// Where the published schema lives, for `$id`.
pub const PROJECT_SCHEMA_ID: &str = "https://monform.dev/schema/monform.json";

/// The document as written to `schema/monform.schema.json`.
pub fn project_schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&project_schema()).unwrap_or_default();
    text.push('\n');
    text
}

fn project_schema() -> Value {
    let defaults = schemas().check_common_fields();
    let api = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "url": { "type": "string", "description": "The API's base URL, or \"local\" for the bundled emulator. MONFORM_API_URL and --api-url override it." },
        },
    });
    let vars = json!({
        "type": "object",
        "description": "Values for ${var:NAME} in resource files; any TOML value (a whole-value substitution keeps its type).",
        "propertyNames": { "pattern": ENV_NAME },
    });
    let defaults = json!({
        "type": "object",
        "description": "Merged into every check that does not set the field.",
        "propertyNames": { "enum": defaults },
    });
    let name = json!({ "type": "string", "pattern": LOGICAL_ID_PATTERN });
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": PROJECT_SCHEMA_ID,
        "title": "monform.toml",
        "type": "object",
        "additionalProperties": false,
        "required": ["project"],
        "properties": {
            "project": {
                "type": "object",
                "additionalProperties": false,
                "required": ["name"],
                "properties": {
                    "name": { "description": "Ownership scope: stable and unique per account.", "allOf": [name] },
                    "include": { "type": "array", "items": { "type": "string" }, "description": "Glob patterns of resource files; default every YAML and TOML file." },
                    "allow-paths": { "type": "array", "items": { "type": "string" }, "description": "Folders outside the project (relative to its root) that `{ file }` scripts, forEachFile globs and symbolic links may read. Every other path must resolve inside the project." },
                    "secret-env": { "type": "array", "items": { "type": "string", "pattern": ENV_NAME }, "description": "Environment variables ${env:} may never read, besides MONFORM_API_KEY, MONFORM_AGENT_KEY and MONFORM_STATE_URL." },
                    "public-env": { "type": "array", "items": { "type": "string", "pattern": ENV_NAME }, "description": "Environment variables whose values plans may show; every other ${env:} value is sensitive." },
                    "pass-env": { "type": "array", "items": { "type": "string", "pattern": ENV_NAME }, "description": "Variables of monform's environment `test --local` may use, directly or through ${env:}: it gives them to the files' scripts (and a PLAYWRIGHT check's testCommand) besides PATH, LANG, LC_ALL and TZ (a proxy, NODE_EXTRA_CA_CERTS...), and runs no check whose values read another with ${env:} (public-env aside). Scripts get nothing else of monform's environment; never MONFORM_API_KEY, MONFORM_AGENT_KEY, MONFORM_STATE_URL or a secret-env name." },
                },
            },
            "api": api,
            "defaults": defaults,
            "state": {
                "type": "object",
                "additionalProperties": false,
                "properties": { "backend": { "enum": ["local", "postgres"] } },
            },
            "vars": vars,
            "lint": {
                "type": "object",
                "additionalProperties": false,
                "description": "How loud each finding and note of validate, plan and apply is: \"error\" fails them, \"warn\" shows it, \"note\" shows it in validate only, \"off\" silences it.",
                "properties": {
                    "unrouted-checks": { "enum": crate::project::LintLevel::NAMES, "description": "Activated, unmuted checks whose failure alerts reach no channel. Default \"warn\"." },
                    "ignored-fields": { "enum": crate::project::LintLevel::NAMES, "description": "A check's own fields its group overrides. Default \"warn\"." },
                    "global-alert-settings": { "enum": crate::project::LintLevel::NAMES, "description": "Routed checks that alert by the account's global alert settings, which monform cannot read. Default \"note\" (said by validate only)." },
                    "shared-objects": { "enum": crate::project::LintLevel::NAMES, "description": "Environments in one account (the same API URL) claiming one variable, snippet, alert channel, status page, status page service or private location, which only one project can own; found by validate across the environments. Default \"error\"; \"off\" when the environments use different accounts." },
                },
            },
            "budget": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "max-runs-per-month": { "type": "integer", "minimum": 0, "description": "A plan whose checks would run more often than this in 30 days fails." },
                },
            },
            "policy": {
                "type": "object",
                "additionalProperties": false,
                "description": "The Rego policies validate, plan and apply evaluate (issue 32).",
                "properties": {
                    "paths": { "type": "array", "items": { "type": "string" }, "description": "Folders (every *.rego below them) or .rego files, inside the project. Default [\"policies\"]." },
                    "max-instructions": { "type": "integer", "minimum": 1, "description": "Instructions one rule's evaluation may run on regorus's virtual machine before it is stopped (an error naming the policy). Default 100000000." },
                    "timeout": { "type": "string", "pattern": "^([0-9]+[smh])+$", "description": "Wall time one rule's evaluation may take, on the virtual machine or the interpreter, before it is stopped (an error naming the policy): \"10s\", \"1m\". Default \"10s\"." },
                },
            },
            "reconcile": {
                "type": "object",
                "additionalProperties": false,
                "description": "What `monform reconcile` does.",
                "properties": {
                    "interval": { "type": "string", "pattern": "^([0-9]+[smh])+$", "description": "How often the service is compared with the files (\"30s\", \"5m\", \"1h\"). Default \"5m\"." },
                    "drift": { "enum": ["revert", "notify", "ignore", "codify"], "description": "The drift policy of a resource whose lifecycle sets none. Default \"notify\"." },
                    "apply-changes": { "type": "boolean", "description": "true: a change in the files is applied by the reconciler; false (default): only reported." },
                    "notify": { "type": "array", "items": { "type": "string", "pattern": LOGICAL_ID_PATTERN }, "description": "Logical ids of this project's WEBHOOK and SLACK alert channels that get drift reports." },
                    "request-share": { "type": "string", "pattern": "^ *[0-9.]+ *% *$", "description": "The share of the API key's rate limit the reconciler's reads may use, above 0% and at most 100% (\"10%\", \"2.5%\"); it slows down, and spreads a sweep of the account over several intervals, to stay within it, and waits while other clients of the key leave less than its share. Default \"25%\"." },
                },
            },
            "environments": {
                "type": "object",
                "description": "Select one with --env NAME or MONFORM_ENV.",
                "propertyNames": { "pattern": LOGICAL_ID_PATTERN },
                "additionalProperties": {
                    "type": "object",
                    "additionalProperties": false,
                    "properties": {
                        "project": { "description": "Ownership scope; default \"<name>-<environment>\".", "allOf": [name] },
                        "vars": vars,
                        "defaults": defaults,
                        "api": api,
                    },
                },
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::{ENVIRONMENT_KEYS, SECTIONS};

    fn keys(value: &Value) -> Vec<&str> {
        let mut keys: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        keys
    }

    /// The schema lists exactly the sections and keys monform.toml's reader takes.
    #[test]
    fn the_schema_follows_the_reader() {
        let schema = project_schema();
        let mut sections: Vec<&str> = SECTIONS.iter().map(|(name, _)| *name).collect();
        sections.sort_unstable();
        assert_eq!(keys(&schema["properties"]), sections);
        for (section, fields) in SECTIONS.iter().filter(|(_, fields)| !fields.is_empty()) {
            let mut fields = fields.to_vec();
            fields.sort_unstable();
            assert_eq!(keys(&schema["properties"][section]["properties"]), fields, "{section}");
        }
        let mut environment = ENVIRONMENT_KEYS.to_vec();
        environment.sort_unstable();
        assert_eq!(
            keys(&schema["properties"]["environments"]["additionalProperties"]["properties"]),
            environment
        );
    }
}
