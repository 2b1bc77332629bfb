//! A provider resource's attributes (Terraform's shape: snake_case, nested
//! blocks as lists) as a monform resource (the files' shape). The field
//! names come from the model's schema: an attribute maps to the property
//! whose name is the same without `_` and case (`skip_ssl` is `skipSSL`,
//! `custom_css` is `customCSS`), or plural for a repeated block
//! (`assertion` is `assertions`), or without `_id` for a reference
//! (`group_id` is `group`); the few attributes whose shape differs (alert
//! channel subscriptions, an alert channel's type block, status page
//! cards, a DNS name server) are spelt out here. The same mapping reads
//! the HCL (evaluated) and the state.

use monform_model::Kind;
use monform_model::schema::{Schemas, schemas};
use serde_json::{Map, Value};

/// Which monform kind (and check type) a provider resource type is.
pub fn kind_of(tf_type: &str) -> Option<(Kind, Option<&'static str>)> {
    Some(match tf_type {
        "checkly_check" => (Kind::Check, None),
        "checkly_heartbeat_monitor" | "checkly_heartbeat" => (Kind::Check, Some("HEARTBEAT")),
        "checkly_tcp_monitor" | "checkly_tcp_check" => (Kind::Check, Some("TCP")),
        "checkly_url_monitor" => (Kind::Check, Some("URL")),
        "checkly_dns_monitor" => (Kind::Check, Some("DNS")),
        "checkly_icmp_monitor" => (Kind::Check, Some("ICMP")),
        "checkly_check_group" => (Kind::Group, None),
        "checkly_snippet" => (Kind::Snippet, None),
        "checkly_environment_variable" => (Kind::Variable, None),
        "checkly_alert_channel" => (Kind::AlertChannel, None),
        "checkly_maintenance_windows" => (Kind::MaintenanceWindow, None),
        "checkly_status_page" => (Kind::StatusPage, None),
        "checkly_status_page_service" => (Kind::StatusPageService, None),
        "checkly_dashboard" => (Kind::Dashboard, None),
        "checkly_private_location" => (Kind::PrivateLocation, None),
        _ => return None,
    })
}

/// Attributes the provider computes or the service ignores: never mapped,
/// never reported (ids, ping tokens, private location keys, a dashboard's
/// key, the deprecated `ssl_check`).
const COMPUTED: &[&str] = &["id", "ping_token", "keys", "key", "ssl_check"];

/// The alert channel blocks and their types.
const CHANNEL_BLOCKS: &[(&str, &str)] = &[
    ("email", "EMAIL"),
    ("slack", "SLACK"),
    ("slack_app", "SLACK_APP"),
    ("webhook", "WEBHOOK"),
    ("sms", "SMS"),
    ("pagerduty", "PAGERDUTY"),
    ("opsgenie", "OPSGENIE"),
    ("call", "CALL"),
];

/// An attribute the mapping could not place, by its Terraform path.
#[derive(Debug, Clone, PartialEq)]
pub struct Unmapped {
    pub path: Vec<String>,
    pub reason: String,
}

/// How references read: HCL's are logical ids already; the state's are the
/// service's ids, looked up among the migrated objects.
pub struct Refs<'a> {
    pub from_state: bool,
    pub resolve: &'a dyn Fn(Kind, &str) -> Option<String>,
}

#[derive(Debug, Default)]
pub struct Mapped {
    pub value: Map<String, Value>,
    pub unmapped: Vec<Unmapped>,
}

/// Maps one resource's attributes (`tf`, an object) of provider type `tf_type`.
pub fn map_resource(tf_type: &str, tf: &Map<String, Value>, refs: &Refs) -> Mapped {
    let mut out = Mapped::default();
    let Some((kind, fixed)) = kind_of(tf_type) else {
        return out;
    };
    let mut tf = tf.clone();
    let mut head = Map::new();
    let variant = match kind {
        Kind::Check => {
            let check_type = fixed
                .map(str::to_owned)
                .or_else(|| tf.get("type").and_then(Value::as_str).map(str::to_owned))
                .unwrap_or_default();
            tf.remove("type");
            head.insert("checkType".into(), Value::String(check_type.clone()));
            check_type
        }
        Kind::AlertChannel => {
            let mut found = None;
            for (block, channel_type) in CHANNEL_BLOCKS {
                let Some(value) = tf.remove(*block) else { continue };
                let Some(config) = first_object(&value) else { continue };
                if found.is_none() {
                    found = Some(*channel_type);
                    head.insert("type".into(), Value::String((*channel_type).into()));
                    let mut config = config.clone();
                    // A Slack app's channels are a list in the provider, one channel in the service.
                    if let Some(Value::Array(channels)) = config.remove("slack_channels") {
                        if channels.len() > 1 {
                            out.unmapped.push(Unmapped {
                                path: vec![(*block).into(), "0".into(), "slack_channels".into()],
                                reason: "more than one Slack channel (the service's channel has one)".into(),
                            });
                        }
                        if let Some(first) = channels.into_iter().next() {
                            config.insert("channel".into(), first);
                        }
                    }
                    if config.get("webhook_type").is_some_and(|t| !is_empty(t)) {
                        out.unmapped.push(Unmapped {
                            path: vec![(*block).into(), "0".into(), "webhook_type".into()],
                            reason: "the webhook type (monform's webhooks have none)".into(),
                        });
                    }
                    config.remove("webhook_type");
                    tf.insert("config".into(), Value::Object(config));
                }
            }
            found.unwrap_or_default().to_owned()
        }
        Kind::Variable => {
            tf.remove("key");
            String::new()
        }
        _ => String::new(),
    };
    special_shapes(&mut tf, refs, &mut out.unmapped);
    let schemas = schemas();
    let schema = schemas.variant(kind, &variant);
    let mut value = head;
    map_object(
        schemas,
        schema,
        &tf,
        &mut value,
        &mut Vec::new(),
        refs,
        &mut out.unmapped,
    );
    out.value = value;
    out
}

/// Attributes whose shape is not the property's: alert channel
/// subscriptions (a list of logical ids in monform), status page cards'
/// service attachments, a DNS request's name server block.
fn special_shapes(tf: &mut Map<String, Value>, refs: &Refs, unmapped: &mut Vec<Unmapped>) {
    if let Some(Value::Array(subscriptions)) = tf.remove("alert_channel_subscription") {
        let mut channels = Vec::new();
        for (i, subscription) in subscriptions.iter().enumerate() {
            if subscription.get("activated") == Some(&Value::Bool(false)) {
                unmapped.push(Unmapped {
                    path: vec!["alert_channel_subscription".into(), i.to_string(), "activated".into()],
                    reason: "a subscription that is not activated (monform subscribes the channels it lists)".into(),
                });
                continue;
            }
            if let Some(id) = subscription.get("channel_id") {
                let channel = reference(Kind::AlertChannel, id, refs);
                if !channel.is_null() {
                    channels.push(channel);
                }
            }
        }
        if !channels.is_empty() {
            tf.insert("alert_channels".into(), Value::Array(channels));
        }
    }
    if let Some(Value::Array(cards)) = tf.get_mut("card") {
        for card in cards.iter_mut().filter_map(Value::as_object_mut) {
            let services: Vec<Value> = match card.remove("service_attachment") {
                Some(Value::Array(items)) => items
                    .iter()
                    .filter_map(|i| i.get("service_id"))
                    .map(|id| reference(Kind::StatusPageService, id, refs))
                    .collect(),
                _ => Vec::new(),
            };
            card.insert("services".into(), Value::Array(services));
        }
    }
    if let Some(request) = tf.get_mut("request").and_then(first_object_mut)
        && let Some(server) = request.remove("name_server")
    {
        if let Some(server) = first_object(&server) {
            if let Some(host) = server.get("host") {
                request.insert("name_server".into(), host.clone());
            }
            if let Some(port) = server.get("port") {
                request.insert("port".into(), port.clone());
            }
        } else if !is_empty(&server) {
            request.insert("name_server".into(), server);
        }
    }
    if let Some(Value::Array(items)) = tf.get_mut("trigger_incident") {
        for item in items.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(id) = item.remove("service_id") {
                item.insert("service".into(), reference(Kind::StatusPageService, &id, refs));
            }
        }
    }
}

/// A reference: a logical id as written (HCL), or the service's id looked up (state).
fn reference(kind: Kind, value: &Value, refs: &Refs) -> Value {
    if !refs.from_state {
        return value.clone();
    }
    let id = match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        other => return other.clone(),
    };
    // The provider records an unset id as 0 (or ""): no reference.
    if id == "0" || id.is_empty() {
        return Value::Null;
    }
    Value::String((refs.resolve)(kind, &id).unwrap_or(id))
}

fn first_object(value: &Value) -> Option<&Map<String, Value>> {
    match value {
        Value::Array(items) => items.first().and_then(Value::as_object),
        Value::Object(map) => Some(map),
        _ => None,
    }
}

fn first_object_mut(value: &mut Value) -> Option<&mut Map<String, Value>> {
    match value {
        Value::Array(items) => items.first_mut().and_then(Value::as_object_mut),
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// Null, "", an empty list or map: what the state holds for an attribute
/// never set.
pub fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

fn normalized(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The property of `properties` a Terraform attribute is.
fn property_for<'s>(properties: &'s Map<String, Value>, attribute: &str) -> Option<&'s str> {
    let base = normalized(attribute);
    let mut candidates = vec![base.clone(), format!("{base}s")];
    if let Some(stripped) = attribute.strip_suffix("_id") {
        candidates.push(normalized(stripped));
    }
    candidates
        .iter()
        .find_map(|c| properties.keys().find(|p| p.to_lowercase() == *c))
        .map(String::as_str)
}

/// The schema branches a property may take (anyOf / oneOf / `$ref`s resolved).
fn branches<'s>(schemas: &'s Schemas, schema: &'s Value) -> Vec<&'s Value> {
    let schema = schemas.resolve(schema);
    for key in ["anyOf", "oneOf"] {
        if let Some(items) = schema.get(key).and_then(Value::as_array) {
            return items.iter().flat_map(|b| branches(schemas, b)).collect();
        }
    }
    vec![schema]
}

fn has_type(schema: &Value, name: &str) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == name,
        Some(Value::Array(types)) => types.iter().any(|t| t == name),
        _ => name == "object" && schema.get("properties").is_some(),
    }
}

#[allow(clippy::too_many_arguments)]
fn map_object(
    schemas: &Schemas,
    schema: &Value,
    tf: &Map<String, Value>,
    out: &mut Map<String, Value>,
    path: &mut Vec<String>,
    refs: &Refs,
    unmapped: &mut Vec<Unmapped>,
) {
    let empty = Map::new();
    let object = branches(schemas, schema)
        .into_iter()
        .find(|b| has_type(b, "object"))
        .unwrap_or(schema);
    let properties = object.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    for (attribute, value) in tf {
        if COMPUTED.contains(&attribute.as_str()) && path.is_empty() {
            continue;
        }
        path.push(attribute.clone());
        match property_for(properties, attribute) {
            Some(property) => {
                let property_schema = &properties[property];
                if let Some(mapped) = map_value(schemas, property_schema, value, path, refs, unmapped) {
                    out.insert(property.to_owned(), mapped);
                }
            }
            // An attribute the state records unset means nothing: only a set one is worth telling.
            None if is_empty(value) || value == &Value::Bool(false) => {}
            None => unmapped.push(Unmapped {
                path: path.clone(),
                reason: format!("`{attribute}` has no monform field"),
            }),
        }
        path.pop();
    }
}

fn map_value(
    schemas: &Schemas,
    schema: &Value,
    value: &Value,
    path: &mut Vec<String>,
    refs: &Refs,
    unmapped: &mut Vec<Unmapped>,
) -> Option<Value> {
    if value.is_null() {
        return None;
    }
    let options = branches(schemas, schema);
    let is_reference =
        options.iter().any(|b| b.get("x-ref").is_some()) || schemas.resolve(schema).get("x-ref").is_some();
    let target = schemas
        .resolve(schema)
        .get("x-ref")
        .and_then(Value::as_str)
        .and_then(Kind::from_section);
    match value {
        // A substitution keeps its type when it is the whole value.
        Value::String(s) if s.starts_with("${") => Some(value.clone()),
        Value::Array(items) => {
            if let Some(array) = options.iter().find(|b| has_type(b, "array")) {
                let item_schema = array.get("items").cloned().unwrap_or(Value::Bool(true));
                let mut mapped = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    path.push(i.to_string());
                    let item = match (item, target) {
                        (Value::Object(_), _) => map_value(schemas, &item_schema, item, path, refs, unmapped),
                        (_, Some(kind)) => Some(reference(kind, item, refs)),
                        _ => Some(item.clone()),
                    };
                    path.pop();
                    mapped.extend(item.filter(|i| !i.is_null()));
                }
                return Some(Value::Array(mapped));
            }
            // A block of at most one item is the property's object.
            if items.is_empty() {
                return None;
            }
            if let Some(object) = options.iter().find(|b| has_type(b, "object")) {
                path.push("0".into());
                let mapped = map_value(schemas, object, &items[0], path, refs, unmapped);
                path.pop();
                return mapped;
            }
            unmapped.push(Unmapped {
                path: path.clone(),
                reason: "a list where monform has one value".into(),
            });
            None
        }
        // `file()`'s text: placed by the project, as a script file or inline.
        Value::Object(map) if map.contains_key(crate::expr::FILE_MARKER) => Some(value.clone()),
        Value::Object(map) => {
            if let Some(object) = options
                .iter()
                .find(|b| has_type(b, "object") && b.get("properties").is_some())
            {
                let mut out = Map::new();
                map_object(schemas, object, map, &mut out, path, refs, unmapped);
                return Some(Value::Object(out));
            }
            // A Terraform map of headers or query parameters: monform's key/value list,
            // sorted (the provider sends the map in no order the state keeps).
            if options.iter().any(|b| has_type(b, "array")) {
                let mut pairs: Vec<(&String, &Value)> = map.iter().collect();
                pairs.sort_by(|a, b| a.0.cmp(b.0));
                let list = pairs
                    .into_iter()
                    .map(|(k, v)| serde_json::json!({ "key": k, "value": v }))
                    .collect();
                return Some(Value::Array(list));
            }
            unmapped.push(Unmapped {
                path: path.clone(),
                reason: "a map where monform has another shape".into(),
            });
            None
        }
        scalar => match target {
            Some(kind) if is_reference => Some(reference(kind, scalar, refs)).filter(|r| !r.is_null()),
            _ => Some(coerce(&options, scalar)),
        },
    }
}

/// A scalar of the provider's type as the property's (`runtime_id` and
/// assertion targets are strings in monform, numbers in some providers'
/// states).
fn coerce(options: &[&Value], value: &Value) -> Value {
    let wants_string = options.iter().any(|b| has_type(b, "string"))
        && !options.iter().any(|b| has_type(b, "number") || has_type(b, "integer"));
    match value {
        Value::Number(n) if wants_string => Value::String(n.to_string()),
        _ => value.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(tf_type: &str, tf: Value, from_state: bool) -> Mapped {
        let resolve = |kind: Kind, id: &str| -> Option<String> { Some(format!("{}-{id}", kind.section())) };
        let refs = Refs {
            from_state,
            resolve: &resolve,
        };
        map_resource(tf_type, tf.as_object().unwrap(), &refs)
    }

    #[test]
    fn an_api_check_maps_by_the_models_names() {
        let mapped = map(
            "checkly_check",
            json!({
                "name": "API", "type": "API", "activated": true, "frequency": 5, "id": "x",
                "group_id": "main", "setup_snippet_id": "auth", "teardown_snippet_id": null,
                "degraded_response_time": 15000, "locations": ["eu-west-1"],
                "alert_channel_subscription": [{"channel_id": "oncall", "activated": true}],
                "request": [{"url": "https://x", "method": "GET", "skip_ssl": false,
                    "headers": {"b": "2", "a": "1"},
                    "assertion": [{"source": "STATUS_CODE", "comparison": "EQUALS", "target": "200", "property": ""}]}],
                "retry_strategy": [{"type": "FIXED", "base_backoff_seconds": 60, "max_retries": 2, "same_region": true, "only_on": []}],
            }),
            false,
        );
        assert_eq!(mapped.unmapped, vec![]);
        let v = Value::Object(mapped.value);
        assert_eq!(v["checkType"], "API");
        assert_eq!(v["group"], "main");
        assert_eq!(v["setupSnippet"], "auth");
        assert_eq!(v["alertChannels"], json!(["oncall"]));
        assert_eq!(v["degradedResponseTime"], 15000);
        assert_eq!(v["request"]["skipSSL"], false);
        assert_eq!(
            v["request"]["headers"],
            json!([{"key": "a", "value": "1"}, {"key": "b", "value": "2"}])
        );
        assert_eq!(v["request"]["assertions"][0]["target"], "200");
        assert_eq!(v["retryStrategy"]["type"], "FIXED");
        assert!(v.get("id").is_none());
    }

    #[test]
    fn state_references_are_looked_up() {
        let mapped = map(
            "checkly_url_monitor",
            json!({"name": "Home", "group_id": 42, "request": [{"url": "https://x", "follow_redirects": true}]}),
            true,
        );
        let v = Value::Object(mapped.value);
        assert_eq!(v["checkType"], "URL");
        assert_eq!(v["group"], "groups-42");
    }

    #[test]
    fn alert_channels_take_their_type_from_the_block() {
        let mapped = map(
            "checkly_alert_channel",
            json!({"webhook": [{"name": "Ops", "url": "https://h", "method": "POST", "webhook_secret": "s", "headers": {}, "webhook_type": null}],
                   "send_recovery": true, "ssl_expiry_threshold": 30, "email": []}),
            false,
        );
        let v = Value::Object(mapped.value);
        assert_eq!(v["type"], "WEBHOOK");
        assert_eq!(v["config"]["webhookSecret"], "s");
        assert_eq!(v["sendRecovery"], true);
    }

    #[test]
    fn dashboards_and_status_pages() {
        let v = Value::Object(
            map(
                "checkly_dashboard",
                json!({"header": "Ops", "custom_url": "ops", "custom_css": "", "show_p95": true, "key": "k", "description": "note"}),
                false,
            )
            .value,
        );
        assert_eq!(v["customCSS"], "");
        assert_eq!(v["showP95"], true);
        let mapped = map(
            "checkly_status_page",
            json!({"name": "S", "url": "acme", "card": [{"name": "API", "service_attachment": [{"service_id": "api"}]}]}),
            false,
        );
        assert_eq!(
            Value::Object(mapped.value)["cards"],
            json!([{"name": "API", "services": ["api"]}])
        );
    }

    #[test]
    fn an_attribute_without_a_field_is_reported() {
        let mapped = map(
            "checkly_dashboard",
            json!({"header": "Ops", "custom_url": "ops", "description": "note"}),
            false,
        );
        assert_eq!(mapped.unmapped[0].path, vec!["description".to_owned()]);
    }
}
