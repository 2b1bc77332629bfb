//! The JSON Schema of the policies' `input` (`monform schema
//! --policy-input`), draft-07 like the project's other schemas. A test
//! checks a real input against it, so it cannot drift from `input.rs`.

use serde_json::{Value, json};

pub fn input_schema() -> Value {
    let sensitive =
        "Secret values (secret variables, credential headers, non-public ${env:} text) are the string \"(sensitive)\".";
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "monform policy input",
        "description": "The `input` of every Rego policy monform evaluates (packages under `monform.`; rules `deny`, `warn`, `violation`). `plan` is present for `monform plan` and `monform apply` only.",
        "type": "object",
        "required": ["resources", "project", "environment"],
        "additionalProperties": false,
        "properties": {
            "resources": {
                "type": "array",
                "description": format!("Every resource of the files after forEach, the environment and [defaults]; a check as it runs after its group. {sensitive}"),
                "items": {
                    "type": "object",
                    "required": ["address", "kind", "id", "file", "line", "fields", "ownFields"],
                    "additionalProperties": false,
                    "properties": {
                        "address": { "type": "string", "description": "`<section>.<logical-id>`, e.g. `checks.home` or `checks.api[eu]`." },
                        "kind": { "type": "string", "description": "The section: checks, groups, snippets, variables, alertChannels, ..." },
                        "id": { "type": "string", "description": "The logical id." },
                        "file": { "type": "string", "description": "The file that declares it, relative to the project root." },
                        "line": { "type": "integer", "minimum": 1, "description": "The line of its logical id in that file." },
                        "fields": { "type": "object", "description": "Its fields by the files' names (camelCase, references as logical ids)." },
                        "ownFields": { "type": "array", "items": { "type": "string" }, "description": "The fields a group can override (locations, privateLocations, runtimeId, alertSettings, retryStrategy) that its own entry writes, not [defaults]." },
                    },
                },
            },
            "project": {
                "type": "object",
                "required": ["name", "environments"],
                "additionalProperties": false,
                "properties": {
                    "name": { "type": "string", "description": "The ownership scope (the environment's when one is chosen)." },
                    "environments": { "type": "array", "items": { "type": "string" }, "description": "The environments monform.toml declares." },
                },
            },
            "environment": { "type": ["string", "null"], "description": "The environment chosen with --env or MONFORM_ENV." },
            "plan": plan_schema(sensitive),
        },
    })
}

/// `input.plan`: the JSON plan's changes.
fn plan_schema(sensitive: &str) -> Value {
    json!({
        "type": "object",
        "required": ["summary", "changes"],
        "additionalProperties": false,
        "properties": {
            "summary": { "type": "object", "additionalProperties": { "type": "integer" } },
            "changes": {
                "type": "array",
                "description": "Every change but no-ops, as in `plan --format json`.",
                "items": {
                    "type": "object",
                    "required": ["address", "action", "reason", "drift", "fields"],
                    "additionalProperties": false,
                    "properties": {
                        "address": { "type": "string" },
                        "action": { "enum": ["create", "update", "delete", "replace", "move", "import", "forget"] },
                        "remoteId": { "type": ["string", "null"] },
                        "from": { "type": "string", "description": "The address it moves from." },
                        "reason": { "type": "string" },
                        "drift": { "type": "boolean", "description": "Whether the change reverts a change made outside monform." },
                        "tags": { "type": "array", "items": { "type": "string" }, "description": "The service's tags of the object (ownership tags left out): for deletes, what the object was." },
                        "fields": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["path", "before", "after", "sensitive", "drift"],
                                "additionalProperties": false,
                                "properties": {
                                    "path": { "type": "string" },
                                    "before": { "description": sensitive },
                                    "after": { "description": sensitive },
                                    "sensitive": { "type": "boolean" },
                                    "drift": { "type": "boolean" },
                                    "conflict": conflict_schema(),
                                },
                            },
                        },
                    },
                },
            },
        },
    })
}

/// A field's conflict (issue 45): its own function, as one `json!` it
/// passes the macro's recursion limit.
fn conflict_schema() -> Value {
    json!({
        "type": "object",
        "description": "Changed both in the files and in the service since the last apply: applying overwrites the service's change. Absent when it is not a conflict.",
        "required": ["applied", "service", "files"],
        "additionalProperties": false,
        "properties": {
            "applied": { "description": "What monform last applied; null when the state keeps only its fingerprint (text, lists)." },
            "service": { "description": "What the service holds (masked as `before`); null when it is never returned (a secret)." },
            "files": { "description": "What the files say (masked as `after`)." },
        },
    })
}
