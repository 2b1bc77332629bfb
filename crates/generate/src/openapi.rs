//! An OpenAPI 3.x document as API checks: one per operation of the chosen
//! methods (GET by default), its URL from the base URL and the path with
//! path parameters filled from the document's examples, the success
//! status asserted, and what the response's JSON Schema says that the
//! service's assertions can say (`schema.rs`).

mod schema;

use std::collections::{BTreeMap, BTreeSet};

use oas3::Spec;
use oas3::spec::{ObjectOrReference, Operation, Parameter, ParameterIn};
use serde_json::{Map, Value, json};

use crate::{GenerateError, Generated, Item, Skipped, Source, ids};

/// How to read the document.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--base-url`: wins over the document's `servers`.
    pub base_url: Option<String>,
    /// Upper-case HTTP methods; empty: GET.
    pub methods: Vec<String>,
    /// The URL the document was fetched from, if it was: a relative server
    /// URL is read against it, and without servers its origin is the base.
    pub fetched_from: Option<url::Url>,
}

/// The methods a monitor may call: they send no body and change nothing.
pub const METHODS: &[&str] = &["GET", "HEAD"];

/// Reads `text` (JSON or YAML) as an OpenAPI 3.x document; `origin` names
/// it in errors (a path or URL).
pub fn read(text: &str, origin: &str) -> Result<Spec, GenerateError> {
    let syntax = |message: String| GenerateError::Syntax {
        origin: origin.to_owned(),
        message,
    };
    let mut value: Value = if text.trim_start().starts_with('{') {
        serde_json::from_str(text).map_err(|e| syntax(e.to_string()))?
    } else {
        serde_saphyr::from_str(text).map_err(|e| syntax(e.to_string()))?
    };
    let not = |message: String| GenerateError::NotOpenApi {
        origin: origin.to_owned(),
        message,
    };
    let version = match value.get("openapi").and_then(Value::as_str) {
        Some(v) if v.starts_with("3.") => v.to_owned(),
        Some(v) => return Err(not(format!("`openapi: {v}` (3.0 and 3.1 are read)"))),
        None if value.get("swagger").is_some() => {
            return Err(not("a Swagger 2.0 document (convert it to OpenAPI 3 first)".into()));
        }
        None => return Err(not("no `openapi` field".into())),
    };
    if version.starts_with("3.0") {
        upgrade_schemas(&mut value);
    }
    serde_json::from_value(value).map_err(|e| not(e.to_string()))
}

/// 3.0's schema forms that 3.1 dropped, rewritten as 3.1 says them (oas3
/// reads 3.1): `nullable: true` as a `"null"` type, boolean
/// `exclusiveMinimum`/`exclusiveMaximum` as the bound itself. Walks the
/// whole document: only schemas have these keys.
fn upgrade_schemas(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::Bool(nullable)) = map.remove("nullable")
                && nullable
                && let Some(Value::String(t)) = map.get("type").cloned()
            {
                map.insert("type".into(), json!([t, "null"]));
            }
            for (flag, bound) in [("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")] {
                if let Some(Value::Bool(exclusive)) = map.get(flag).cloned() {
                    map.remove(flag);
                    if exclusive && let Some(limit) = map.remove(bound) {
                        map.insert(flag.into(), limit);
                    }
                }
            }
            map.values_mut().for_each(upgrade_schemas);
        }
        Value::Array(items) => items.iter_mut().for_each(upgrade_schemas),
        _ => {}
    }
}

/// The checks of `spec`; `origin` names the document in errors.
pub fn generate(spec: &Spec, options: &Options, origin: &str) -> Result<Generated, GenerateError> {
    let base = base_url(spec, options, origin)?;
    let methods: BTreeSet<String> = if options.methods.is_empty() {
        BTreeSet::from(["GET".to_owned()])
    } else {
        options.methods.iter().map(|m| m.to_ascii_uppercase()).collect()
    };
    let mut wanted = Vec::new();
    let mut rows = BTreeMap::new();
    let mut skipped = Vec::new();
    let mut headers = BTreeSet::new();
    let mut secured = BTreeSet::new();
    for (path, method, operation) in spec.operations() {
        let method = method.as_str().to_owned();
        if !methods.contains(&method) {
            continue;
        }
        let what = match &operation.operation_id {
            Some(id) => format!("{method} {path} ({id})"),
            None => format!("{method} {path}"),
        };
        let made = match operation_row(spec, &path, &method, operation, &base, &mut headers) {
            Ok(made) => made,
            Err(reason) => {
                skipped.push(Skipped { what, reason });
                continue;
            }
        };
        let key = match &operation.operation_id {
            Some(id) => ids::slug(id, "operation"),
            None => ids::slug(&format!("{} {path}", method.to_ascii_lowercase()), "operation"),
        };
        // The source a key collision is settled by: stable across runs.
        let source = format!("{method} {path}");
        for requirement in operation.security.iter().chain(&spec.security) {
            secured.extend(requirement.0.keys().cloned());
        }
        wanted.push((key, source.clone()));
        rows.insert(source, made);
    }
    let mut items: Vec<Item> = ids::unique(wanted)
        .into_iter()
        .filter_map(|(key, source)| {
            let fields = rows.remove(&source)?;
            Some(Item { key, fields })
        })
        .collect();
    items.sort_by(|a, b| a.key.cmp(&b.key));
    skipped.sort();
    let mut notes = Vec::new();
    if !secured.is_empty() {
        notes.push(format!(
            "the document asks for credentials ({}): add the header to the definition's request, e.g. `headers: [{{ key: Authorization, value: \"Bearer {{{{API_TOKEN}}}}\" }}]` with API_TOKEN a secret variable",
            secured.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    if !headers.is_empty() {
        notes.push(format!(
            "required request headers the document gives no value for: {} (add them to the definition's request.headers)",
            headers.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    let title = format!("{} {}", spec.info.title.trim(), spec.info.version.trim());
    Ok(Generated {
        source: Source::OpenApi,
        title: title.trim().to_owned(),
        suggested_id: ids::slug(&spec.info.title.to_ascii_lowercase(), "api"),
        items,
        skipped,
        notes,
    })
}

/// The base URL without a trailing `/`: `--base-url`, else the first
/// server (its variables at their defaults; a relative one read against
/// the URL the document came from), else that URL's origin.
fn base_url(spec: &Spec, options: &Options, origin: &str) -> Result<String, GenerateError> {
    if let Some(given) = &options.base_url {
        let url = url::Url::parse(given).map_err(|e| GenerateError::BadBaseUrl(given.clone(), e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(GenerateError::BadBaseUrl(
                given.clone(),
                "not an http or https URL".into(),
            ));
        }
        return Ok(given.trim_end_matches('/').to_owned());
    }
    if let Some(server) = spec.servers.first() {
        let mut text = server.url.clone();
        for (name, variable) in &server.variables {
            text = text.replace(&format!("{{{name}}}"), &variable.default);
        }
        let parsed = match url::Url::parse(&text) {
            Ok(url) => Some(url),
            Err(_) => options.fetched_from.as_ref().and_then(|from| from.join(&text).ok()),
        };
        if let Some(url) = parsed.filter(|u| matches!(u.scheme(), "http" | "https")) {
            return Ok(url.as_str().trim_end_matches('/').to_owned());
        }
    }
    match &options.fetched_from {
        Some(from) => Ok(from.origin().ascii_serialization()),
        None => Err(GenerateError::NoBaseUrl {
            origin: origin.to_owned(),
        }),
    }
}

/// The row of one operation, or why it has none. Required headers without
/// a value go to `headers` (the check is still made: the user adds them).
fn operation_row(
    spec: &Spec,
    path: &str,
    method: &str,
    operation: &Operation,
    base: &str,
    headers: &mut BTreeSet<String>,
) -> Result<Map<String, Value>, String> {
    let parameters = parameters(spec, path, operation)?;
    let mut url_path = path.to_owned();
    let mut query = Vec::new();
    for parameter in &parameters {
        let required = parameter.required.unwrap_or(false) || parameter.location == ParameterIn::Path;
        match parameter.location {
            ParameterIn::Path => {
                let Some(value) = example(spec, parameter) else {
                    return Err(format!("path parameter `{}` has no example", parameter.name));
                };
                url_path = url_path.replace(&format!("{{{}}}", parameter.name), &encode(&value));
            }
            ParameterIn::Query if required => {
                let Some(value) = example(spec, parameter) else {
                    return Err(format!("required query parameter `{}` has no example", parameter.name));
                };
                query.push(format!("{}={}", encode(&parameter.name), encode(&value)));
            }
            ParameterIn::Header | ParameterIn::Cookie if required => {
                let name = parameter.name.to_ascii_lowercase();
                if !matches!(name.as_str(), "accept" | "content-type" | "authorization") {
                    let prefix = if parameter.location == ParameterIn::Cookie {
                        "cookie "
                    } else {
                        ""
                    };
                    headers.insert(format!("{prefix}{}", parameter.name));
                }
            }
            _ => {}
        }
    }
    if let Some(left) = url_path.split('{').nth(1).and_then(|rest| rest.split('}').next()) {
        return Err(format!("path parameter `{left}` is not described"));
    }
    let (status, body) = success(spec, operation);
    let mut assertions = vec![json!({ "source": "STATUS_CODE", "comparison": "EQUALS", "target": status })];
    if let Some(schema) = body.filter(|_| method != "HEAD") {
        assertions.extend(schema::assertions(spec, &schema));
    }
    let shown = if query.is_empty() {
        url_path.clone()
    } else {
        format!("{url_path}?{}", query.join("&"))
    };
    let mut row = Map::new();
    row.insert("name".into(), Value::String(format!("{method} {shown}")));
    row.insert("method".into(), Value::String(method.to_owned()));
    row.insert("url".into(), Value::String(format!("{base}{shown}")));
    row.insert("assertions".into(), Value::Array(assertions));
    Ok(row)
}

/// The operation's parameters and its path's, resolved; the operation's
/// win over the path's of the same name and place (as the spec says).
fn parameters(spec: &Spec, path: &str, operation: &Operation) -> Result<Vec<Parameter>, String> {
    let resolve =
        |p: &ObjectOrReference<Parameter>| p.resolve(spec).map_err(|e| format!("a parameter cannot be read: {e}"));
    let mut out: Vec<Parameter> = operation.parameters.iter().map(resolve).collect::<Result<_, _>>()?;
    let item = spec.paths.as_ref().and_then(|paths| paths.get(path));
    for shared in item.map(|i| i.parameters.as_slice()).unwrap_or_default() {
        let shared = resolve(shared)?;
        if !out
            .iter()
            .any(|p| p.name == shared.name && p.location == shared.location)
        {
            out.push(shared);
        }
    }
    Ok(out)
}

/// A parameter's example as URL text: `example`, the first of `examples`,
/// or its schema's `example` / first `examples`.
fn example(spec: &Spec, parameter: &Parameter) -> Option<String> {
    let value = parameter
        .example
        .clone()
        .or_else(|| {
            parameter
                .examples
                .values()
                .find_map(|e| e.resolve(spec).ok().and_then(|e| e.value))
        })
        .or_else(|| {
            let schema = schema::object(spec, parameter.schema.as_ref()?)?;
            schema.example.clone().or_else(|| schema.examples.first().cloned())
        })?;
    match value {
        Value::String(text) => Some(text),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Percent-encodes all but RFC 3986's unreserved characters.
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The success status to assert (the lowest 2xx the operation names;
/// `2XX` is 200, none is 200) and its JSON body's schema, if any.
fn success(spec: &Spec, operation: &Operation) -> (String, Option<oas3::spec::Schema>) {
    let responses = operation.responses(spec);
    let mut codes: Vec<(u16, &String)> = responses
        .keys()
        .filter_map(|code| match code.as_str() {
            "2XX" | "2xx" => Some((200, code)),
            _ => code
                .parse::<u16>()
                .ok()
                .filter(|c| (200..300).contains(c))
                .map(|c| (c, code)),
        })
        .collect();
    codes.sort();
    let Some((status, name)) = codes.first() else {
        return ("200".into(), None);
    };
    let body = responses.get(*name).and_then(|response| {
        response
            .content
            .iter()
            .find(|(media, _)| {
                let media = media.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
                media == "application/json" || media.ends_with("+json")
            })
            .and_then(|(_, media)| media.schema.clone())
    });
    // 204 and HEAD have no body to assert on.
    (status.to_string(), body.filter(|_| *status != 204))
}

#[cfg(test)]
mod tests;
