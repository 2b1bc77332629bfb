//! The MCP handler: the tools' list and their input schemas, each call
//! dispatched to its module, the resources (the project's files, the
//! JSON Schemas) and the prompts.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    Implementation, ListPromptsResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams, Prompt,
    PromptArgument, PromptMessage, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, Role, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
#[cfg(test)]
use serde_json::json;
use serde_json::{Map, Value};

use crate::reply::{Reply, Scrub};
use crate::{Config, add_check, facts, files, plans};

pub struct Monform {
    config: Arc<Config>,
    scrub: Scrub,
}

impl Monform {
    pub fn new(config: Config) -> Monform {
        let scrub = Scrub::new(config.secrets());
        Monform {
            config: Arc::new(config),
            scrub,
        }
    }
}

/// The tools, their descriptions and input schemas, in the order listed.
pub const TOOLS: &[(&str, &str, &str)] = &[
    (
        "validate",
        "Check the project's files as `monform validate` does: every diagnostic with file, line, column, code and fix.",
        r#"{"type":"object","properties":{}}"#,
    ),
    (
        "plan",
        "Compare the files with the service: the JSON plan (secrets masked) and a summary; the plan is saved and its planHash returned for a person to approve.",
        r#"{"type":"object","properties":{}}"#,
    ),
    (
        "apply",
        "Apply a saved plan by its planHash, only once a person approved it (`monform approve HASH` in a terminal) and only if it is still current; the project's policies judge it. Destroy is not offered.",
        r#"{"type":"object","properties":{"planHash":{"type":"string","description":"the planHash the plan tool returned"}},"required":["planHash"]}"#,
    ),
    (
        "write_file",
        "Write one monform resource file (YAML or TOML) inside the project root; validated first: refused with the diagnostics when it would not validate. Returns the diff.",
        r#"{"type":"object","properties":{"path":{"type":"string","description":"relative to the project root, e.g. checks/web.yaml"},"content":{"type":"string","description":"the whole new text of the file"}},"required":["path","content"]}"#,
    ),
    (
        "add_check",
        "Add one URL, API, TCP, DNS or ICMP check to a monform file (default: where the project's checks are), through write_file's rules: validated with the whole project first, refused with the diagnostics when invalid. Returns the diff.",
        r#"{"type":"object","properties":{"checkType":{"type":"string","enum":["URL","API","TCP","DNS","ICMP"]},"name":{"type":"string","description":"the check's name, e.g. Shop home"},"url":{"type":"string","description":"URL and API checks: the URL requested"},"target":{"type":"string","description":"TCP: host:port; DNS: the name queried (A record); ICMP: the host"},"id":{"type":"string","description":"the logical id (default: from the name)"},"file":{"type":"string","description":"the file, relative to the project root (default: where most checks are, or checks.yaml)"},"frequency":{"type":"integer","description":"minutes between runs"},"locations":{"type":"array","items":{"type":"string"}}},"required":["checkType","name"]}"#,
    ),
    (
        "explain",
        "One address (e.g. checks.homepage): where it is written, its value and effective value after defaults and its group (secrets masked), live facts and its last results.",
        r#"{"type":"object","properties":{"address":{"type":"string"}},"required":["address"]}"#,
    ),
    (
        "schema",
        "A kind's fields (e.g. checks) or a check type's (checkType, e.g. URL) with types, defaults and limits, from monform's model.",
        r#"{"type":"object","properties":{"kind":{"type":"string","description":"a section: checks, groups, alertChannels..."},"checkType":{"type":"string","description":"URL, API, TCP, BROWSER..."}}}"#,
    ),
    (
        "test_local",
        "Run the project's checks (or one address) once on this machine, as `monform test --local`: status, the failed assertions, the failing line and the artifacts' paths.",
        r#"{"type":"object","properties":{"address":{"type":"string","description":"one check; default: every check"}}}"#,
    ),
    (
        "status",
        "The applied checks' success ratio, p95/p99 and last status over the last 24 hours, and how many are failing, degraded or passing (as `monform status`); with addresses, only those checks, each one's latest result read.",
        r#"{"type":"object","properties":{"addresses":{"type":"array","items":{"type":"string"},"description":"only these checks, e.g. [\"checks.homepage\"]; default: every applied check"}}}"#,
    ),
    (
        "import_preview",
        "The account's objects no project manages, as the files and `import` entries that would adopt them (nothing is written).",
        r#"{"type":"object","properties":{}}"#,
    ),
    (
        "codify_check",
        "Changes made in the service outside monform (drift), as the diff of the files that would take them (nothing is written).",
        r#"{"type":"object","properties":{}}"#,
    ),
    (
        "policy_test",
        "Run the project's Rego policies' test_* rules, as `monform policy test`.",
        r#"{"type":"object","properties":{}}"#,
    ),
];

/// The tools that only read (an annotation clients show).
const READ_ONLY: &[&str] = &[
    "validate",
    "explain",
    "schema",
    "status",
    "import_preview",
    "codify_check",
    "policy_test",
];

fn tools() -> Vec<Tool> {
    TOOLS
        .iter()
        .map(|(name, description, schema)| {
            let schema: Map<String, Value> = serde_json::from_str(schema).unwrap_or_default();
            let mut annotations = ToolAnnotations::new();
            annotations.read_only_hint = Some(READ_ONLY.contains(name));
            annotations.destructive_hint = Some(*name == "apply");
            Tool::new(*name, *description, schema).with_annotations(annotations)
        })
        .collect()
}

/// A string argument.
fn text<'a>(arguments: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    arguments.get(name).and_then(Value::as_str)
}

/// Runs the tool `name`; `None` when there is no such tool.
async fn call(config: &Config, name: &str, arguments: &Map<String, Value>, client: &str) -> Option<Reply> {
    let missing = |what: &str| Reply::refused(format!("`{what}` is required"));
    Some(match name {
        "validate" => files::validate(config),
        "plan" => plans::plan(config, client).await,
        "apply" => match text(arguments, "planHash") {
            Some(hash) => plans::apply(config, client, hash).await,
            None => missing("planHash"),
        },
        "write_file" => match (text(arguments, "path"), text(arguments, "content")) {
            (Some(path), Some(content)) => files::write_file(config, client, path, content),
            (None, _) => missing("path"),
            (_, None) => missing("content"),
        },
        "add_check" => match (text(arguments, "checkType"), text(arguments, "name")) {
            (Some(check_type), Some(name)) => {
                let args = add_check::AddCheck {
                    check_type,
                    name,
                    url: text(arguments, "url"),
                    target: text(arguments, "target"),
                    id: text(arguments, "id"),
                    file: text(arguments, "file"),
                    frequency: arguments.get("frequency"),
                    locations: arguments.get("locations"),
                };
                add_check::add_check(config, client, &args)
            }
            (None, _) => missing("checkType"),
            (_, None) => missing("name"),
        },
        "explain" => match text(arguments, "address") {
            Some(address) => facts::explain(config, address).await,
            None => missing("address"),
        },
        "schema" => facts::schema(text(arguments, "kind"), text(arguments, "checkType")),
        "test_local" => facts::test_local(config, text(arguments, "address")).await,
        "status" => {
            let addresses: Vec<String> = match arguments.get("addresses") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => match items.iter().map(|i| i.as_str().map(str::to_owned)).collect() {
                    Some(addresses) => addresses,
                    None => return Some(Reply::refused("`addresses` is a list of addresses (strings)")),
                },
                Some(_) => return Some(Reply::refused("`addresses` is a list of addresses (strings)")),
            };
            facts::status(config, &addresses).await
        }
        "import_preview" => facts::import_preview(config).await,
        "codify_check" => facts::codify_check(config).await,
        "policy_test" => facts::policy_test(config),
        _ => return None,
    })
}

const SCHEMA_URI: &str = "monform://schema/resource-file.json";
const PROJECT_SCHEMA_URI: &str = "monform://schema/monform.toml.json";
const FILE_PREFIX: &str = "monform://files/";

impl Monform {
    fn client_name(context: &RequestContext<RoleServer>) -> String {
        context
            .peer
            .peer_info()
            .map(|info| format!("{} {}", info.client_info.name, info.client_info.version))
            .unwrap_or_else(|| "unknown client".to_owned())
    }

    /// The project's files as the loader lists them (its `include`).
    fn file_names(&self) -> Vec<String> {
        let findings = monform_engine::ops::validate(&monform_engine::ops::OpenRequest {
            environment: self.config.environment.as_deref(),
            findings: false,
            ..monform_engine::ops::OpenRequest::new(&self.config.dir, &self.config.env)
        });
        findings.sources().iter().map(|file| file.name.clone()).collect()
    }
}

const ADD_CHECK: &str = "add_check_for_url";
const WHY_FAILING: &str = "why_is_this_check_failing";

fn prompt_argument(name: &str, description: &str) -> PromptArgument {
    let mut argument = PromptArgument::new(name);
    argument.description = Some(description.to_owned());
    argument.required = Some(true);
    argument
}

impl ServerHandler for Monform {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_prompts()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("monform", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "monform manages monitoring checks as code. Work in this order: validate; change files with write_file \
                 (refused while invalid); plan (returns planHash); ask the person to run `monform approve HASH` in a \
                 terminal after reviewing the plan; then apply with that planHash. You cannot approve plans, override \
                 policies or destroy. Secrets are never shown: they come from environment variables.",
            )
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        // The 2025-06-18 revision or later (structured tool output).
        std::borrow::Cow::Owned(vec![
            ProtocolVersion::V_2025_06_18,
            ProtocolVersion::V_2025_11_25,
            ProtocolVersion::V_2026_07_28,
        ])
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let client = Self::client_name(&context);
        let arguments = request.arguments.unwrap_or_default();
        let (config, name) = (self.config.clone(), request.name.to_string());
        // On a blocking thread of its own, driven by the runtime's handle:
        // the protocol loop keeps answering (pings, cancellations) while a
        // plan or an apply runs, and the engine's futures need not be Send.
        let handle = tokio::runtime::Handle::current();
        let ran = tokio::task::spawn_blocking(move || {
            handle.block_on(async move { call(&config, &name, &arguments, &client).await })
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("the tool stopped: {e}"), None))?;
        match ran {
            Some(reply) => Ok(reply.into_result(&self.scrub).into()),
            None => Err(ErrorData::invalid_params(
                format!("no tool named `{}`", request.name),
                None,
            )),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let mut resources = vec![
            Resource::new(SCHEMA_URI, "resource-file.schema.json")
                .with_description("The JSON Schema of a monform resource file, from the model")
                .with_mime_type("application/schema+json"),
            Resource::new(PROJECT_SCHEMA_URI, "monform.schema.json")
                .with_description("The JSON Schema of monform.toml")
                .with_mime_type("application/schema+json"),
        ];
        for name in self.file_names() {
            let mime = match name.ends_with(".toml") {
                true => "application/toml",
                false => "application/yaml",
            };
            resources.push(Resource::new(format!("{FILE_PREFIX}{name}"), name).with_mime_type(mime));
        }
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let text = match uri.as_str() {
            SCHEMA_URI => monform_model::schema::document_text(),
            PROJECT_SCHEMA_URI => monform_config::project_schema::project_schema_text(),
            other => {
                let Some(name) = other.strip_prefix(FILE_PREFIX) else {
                    return Err(ErrorData::resource_not_found(format!("no resource {uri}"), None));
                };
                // Only a file the loader reads: never another path of the disk.
                if !self.file_names().iter().any(|known| known == name) {
                    return Err(ErrorData::resource_not_found(
                        format!("{name} is not a file of the project"),
                        None,
                    ));
                }
                std::fs::read_to_string(self.config.dir.join(name))
                    .map_err(|e| ErrorData::resource_not_found(format!("{name}: {e}"), None))?
            }
        };
        let text = self.scrub.text(&text);
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, uri)]).into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let mut add = Prompt::new(
            ADD_CHECK,
            Some("Add a check for URL: write a URL check for it, validated, then plan"),
            Some(vec![prompt_argument("url", "the URL to monitor")]),
        );
        add.title = Some("add a check for URL".to_owned());
        let mut why = Prompt::new(
            WHY_FAILING,
            Some("Why is this check failing: its last results, a local run and its definition"),
            Some(vec![prompt_argument("address", "the check, e.g. checks.homepage")]),
        );
        why.title = Some("why is this check failing".to_owned());
        Ok(ListPromptsResult::with_all_items(vec![add, why]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        let argument = |name: &str| text(&arguments, name).map(str::to_owned);
        let message = match request.name.as_str() {
            ADD_CHECK => {
                let url = argument("url").ok_or_else(|| ErrorData::invalid_params("`url` is required", None))?;
                format!(
                    "Add a monform check for {url}. First call `schema` with checkType URL for the fields and limits, and \
                     read the project's files (resources) to follow their layout and [defaults]. Add a URL check with a \
                     STATUS_CODE assertion in the file where similar checks live, with `write_file` (it validates; fix \
                     what it reports). Then call `plan` and show me the summary and the planHash: I approve it with \
                     `monform approve HASH` before anything is applied."
                )
            }
            WHY_FAILING => {
                let address =
                    argument("address").ok_or_else(|| ErrorData::invalid_params("`address` is required", None))?;
                format!(
                    "Find out why {address} is failing. Call `explain` with address {address} for its definition, \
                     effective settings and last results, then `test_local` with the same address to run it here and \
                     see the failing assertion and line. Explain the cause; if the check itself is wrong (not the \
                     site), propose the fix with `write_file` and `plan`."
                )
            }
            other => return Err(ErrorData::invalid_params(format!("no prompt named `{other}`"), None)),
        };
        let result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, message)]);
        Ok(result.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_an_object_input_schema() {
        let tools = tools();
        assert_eq!(tools.len(), TOOLS.len());
        for tool in &tools {
            assert_eq!(tool.input_schema.get("type"), Some(&json!("object")), "{}", tool.name);
        }
    }
}
