//! The request body schemas of `/openapi.json`, one component per body the
//! server takes, derived from the model's wire schemas and the API's quirks
//! (`monform_model::quirks`) so that a schema accepts what the server
//! accepts and rejects what it rejects (as far as JSON Schema can say: the
//! model's rules across fields and what depends on stored objects are
//! checked after the schema, see `RULES`).
//!
//! Tagged unions (check types, alert channel types) are one component per
//! variant, tied together with `oneOf`/`anyOf` and a `discriminator` with an
//! explicit `mapping`, the form generators and fuzzers handle; creates of
//! checks need no union at all, as each type has its own endpoint.

use monform_model::Kind;
use monform_model::facts::variant_tag;
use monform_model::quirks::{CheckOperation, FREE_FORM_FIELDS, required_free_form, required_on_update};
use monform_model::resources::CheckType;
use monform_model::wire::wire_schemas;
use serde_json::{Map, Value, json};

use crate::routes::Body;

/// What the schemas cannot say, for the document's description.
pub const RULES: &str = "Bodies valid under these schemas are then checked against the model's rules \
across fields (e.g. `frequencyOffset` with `frequency` 0, sub-minute frequencies only for API and TCP checks, \
ICMP packet-loss thresholds, retry limits, maintenance window dates, the length of a snippet's script or an \
agentic prompt), and against the stored objects (references must exist, a check keeps its type, a variable its \
key, a private location its slug, a secret stays secret; an update is merged into the stored object and the \
result must be valid). Those refusals answer 400 too.";

/// The component name of a route's body, and every component it needs
/// (itself included), added to `components`.
pub fn body_schema(body: Body, components: &mut Map<String, Value>) -> Value {
    let name = match body {
        Body::Json { schema, .. } => return schema(),
        Body::Create(kind) if variant_tag(kind).is_some() => union(kind, Form::Create, components),
        Body::Update(kind) if variant_tag(kind).is_some() => union(kind, Form::Update, components),
        Body::Create(kind) => plain(kind, Form::Create, components),
        Body::Update(kind) => plain(kind, Form::Update, components),
        Body::CheckCreate(check_type) => variant(Kind::Check, check_type.as_str(), Form::Create, components),
        Body::CheckUpdate(Some(check_type)) => variant(Kind::Check, check_type.as_str(), Form::Update, components),
        Body::CheckUpdate(None) => generic_check_update(components),
    };
    reference(&name)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Create,
    Update,
}

impl Form {
    fn suffix(self) -> &'static str {
        match self {
            Form::Create => "Create",
            Form::Update => "Update",
        }
    }
}

fn reference(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

/// The model's definition name of a kind (`Group`, `AlertChannel`).
fn kind_name(kind: Kind) -> String {
    let schema = wire_schemas().kind(kind);
    schema["$ref"]
        .as_str()
        .and_then(|r| r.rsplit('/').next())
        .unwrap_or(kind.section())
        .to_owned()
}

/// `MULTI_STEP` as `MultiStep`.
fn pascal(tag: &str) -> String {
    tag.split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + &chars.as_str().to_ascii_lowercase()
            })
        })
        .collect()
}

/// An untagged kind's body.
fn plain(kind: Kind, form: Form, components: &mut Map<String, Value>) -> String {
    let name = format!("{}{}", kind_name(kind), form.suffix());
    if !components.contains_key(&name) {
        let schemas = wire_schemas();
        let schema = shaped(kind, schemas.resolve(schemas.kind(kind)).clone(), form, None);
        components.insert(name.clone(), schema);
    }
    name
}

/// One variant's body (`CheckApiCreate`, `AlertChannelEmailUpdate`).
fn variant(kind: Kind, tag: &str, form: Form, components: &mut Map<String, Value>) -> String {
    let name = format!("{}{}{}", kind_name(kind), pascal(tag), form.suffix());
    if !components.contains_key(&name) {
        let schema = shaped(kind, wire_schemas().variant(kind, tag).clone(), form, Some(tag));
        components.insert(name.clone(), schema);
    }
    name
}

/// The variants of a tagged kind, as its schema's branches name them.
fn tags(kind: Kind) -> Vec<String> {
    let schemas = wire_schemas();
    let Some(tag) = variant_tag(kind) else {
        return Vec::new();
    };
    schemas.resolve(schemas.kind(kind))["oneOf"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|branch| schemas.resolve(branch)["properties"][tag]["const"].as_str())
        .map(str::to_owned)
        .collect()
}

/// A tagged kind's body: one component per variant under a discriminator.
/// A create names its variant (`oneOf`); an update may leave the tag out
/// (the stored object's stays), so several variants may match (`anyOf`).
fn union(kind: Kind, form: Form, components: &mut Map<String, Value>) -> String {
    let name = format!("{}{}", kind_name(kind), form.suffix());
    if !components.contains_key(&name) {
        let schema = tagged(kind, form, components);
        components.insert(name.clone(), schema);
    }
    name
}

fn tagged(kind: Kind, form: Form, components: &mut Map<String, Value>) -> Value {
    let mut branches = Vec::new();
    let mut mapping = Map::new();
    for tag in tags(kind) {
        let name = variant(kind, &tag, form, components);
        mapping.insert(tag, Value::String(format!("#/components/schemas/{name}")));
        branches.push(reference(&name));
    }
    let combinator = match form {
        Form::Create => "oneOf",
        Form::Update => "anyOf",
    };
    json!({
        combinator: branches,
        "discriminator": { "propertyName": variant_tag(kind), "mapping": mapping },
    })
}

/// `PUT /v1/checks/{id}`: any type's update, with the quirk fields it requires.
fn generic_check_update(components: &mut Map<String, Value>) -> String {
    let name = "CheckUpdate".to_owned();
    if !components.contains_key(&name) {
        let mut schema = tagged(Kind::Check, Form::Update, components);
        schema["required"] = json!(required_free_form(CheckOperation::GenericUpdate));
        schema["description"] = json!(
            "The generic check update: the stored check's type applies; `heartbeat` and `script` are required \
             whatever the type (an API quirk)."
        );
        components.insert(name.clone(), schema);
    }
    name
}

/// A kind's (or variant's) wire schema as a create or update body.
fn shaped(kind: Kind, mut schema: Value, form: Form, tag: Option<&str>) -> Value {
    let Some(object) = schema.as_object_mut() else {
        return schema;
    };
    // What a stored object must have: a create sends it, an update may not clear it.
    let mut needed: Vec<String> = object
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_str().map(str::to_owned))
        .collect();
    let mut properties = match object.remove("properties") {
        Some(Value::Object(properties)) => properties,
        _ => Map::new(),
    };
    if kind == Kind::Variable {
        // The key is the variable's id: in the body on create, fixed after.
        properties.insert(
            "key".into(),
            json!({ "type": "string", "pattern": "\\S", "description": "The variable's key (its id); cannot change." }),
        );
        needed.push("key".into());
    }
    wire_only_fields(kind, &mut properties);
    let check_type = tag.and_then(|t| CheckType::ALL.iter().copied().find(|c| c.as_str() == t));
    if kind == Kind::Check {
        free_form_fields(&mut properties, check_type);
    }
    let required: Vec<String> = match form {
        // The endpoint names the check type: the body may leave it out.
        Form::Create => {
            let quirks = check_type.map_or(&[][..], |t| required_free_form(CheckOperation::Create(t)));
            needed
                .iter()
                .filter(|r| *r != "checkType")
                .cloned()
                .chain(quirks.iter().map(|f| (*f).to_owned()))
                .collect()
        }
        // The generic check update's quirk fields are added by its union.
        Form::Update if kind == Kind::Check => Vec::new(),
        Form::Update => required_on_update(kind).iter().map(|f| (*f).to_owned()).collect(),
    };
    if form == Form::Update {
        // Updates are partial and `null` clears a field: fine where the
        // field is optional, else the merged object lacks it (400).
        for (name, property) in properties.iter_mut() {
            if !needed.contains(name) && !accepts_null(property) {
                *property = json!({ "anyOf": [property.take(), { "type": "null" }] });
            }
        }
    }
    object.insert("properties".into(), Value::Object(properties));
    object.insert("additionalProperties".into(), Value::Bool(false));
    if required.is_empty() {
        object.remove("required");
    } else {
        object.insert("required".into(), json!(required));
    }
    schema
}

/// The reference's fields the model does not know and the server takes
/// (`routes::hooks::take_wire_only`): an alert channel's `autoSubscribe`, a
/// status page card's `id` and `statusPageId`.
fn wire_only_fields(kind: Kind, properties: &mut Map<String, Value>) {
    if kind == Kind::AlertChannel {
        properties.insert(
            "autoSubscribe".into(),
            json!({ "type": "boolean", "default": false, "description": "Automatically subscribe newly created checks to this alert channel." }),
        );
    }
    if kind == Kind::StatusPage
        && let Some(items) = properties.get_mut("cards").and_then(|cards| cards.get_mut("items"))
    {
        let schemas = wire_schemas();
        let mut card = schemas.resolve(items).clone();
        if let Some(fields) = card.get_mut("properties").and_then(Value::as_object_mut) {
            for field in ["id", "statusPageId"] {
                fields.insert(
                    field.into(),
                    json!({ "type": "string", "description": "The reference's; accepted and ignored (a card is named by its position)." }),
                );
            }
        }
        *items = card;
    }
}

/// The check quirk fields (`heartbeat`, `script`): any value where the type
/// does not define them; a heartbeat's `pingToken` and `pingUrl` (the
/// service's, echoed back by clients) are accepted and dropped.
fn free_form_fields(properties: &mut Map<String, Value>, check_type: Option<CheckType>) {
    for field in FREE_FORM_FIELDS {
        if !properties.contains_key(*field) {
            properties.insert(
                (*field).to_owned(),
                json!({ "description": "Accepted and stored as sent (an API quirk); any JSON value." }),
            );
        }
    }
    if check_type == Some(CheckType::Heartbeat)
        && let Some(heartbeat) = properties.get_mut("heartbeat")
    {
        let schemas = wire_schemas();
        let mut resolved = schemas.resolve(heartbeat).clone();
        if let Some(fields) = resolved.get_mut("properties").and_then(Value::as_object_mut) {
            for field in ["pingToken", "pingUrl"] {
                fields.insert(
                    field.into(),
                    json!({ "description": "The service's; accepted and ignored." }),
                );
            }
        }
        *heartbeat = resolved;
    }
}

fn accepts_null(schema: &Value) -> bool {
    let annotations_only = schema.as_object().is_some_and(|o| {
        o.keys()
            .all(|k| matches!(k.as_str(), "description" | "default" | "title"))
    });
    match schema.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        _ => {
            annotations_only
                || ["anyOf", "oneOf"]
                    .iter()
                    .any(|k| schema[*k].as_array().is_some_and(|b| b.iter().any(accepts_null)))
        }
    }
}
