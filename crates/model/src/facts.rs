//! Field facts: which fields of a kind are references, secrets, sets,
//! replace-on-change or monform-only. Read once from the generated schema's
//! extensions, so they are declared on the types and nowhere else.

use std::sync::LazyLock;

use serde_json::Value;

use crate::schema::{Schemas, schemas};
use crate::tree::Tree;
use crate::{FieldPath, Kind};

/// A step of a field pattern: a key, or every element of a list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Step {
    Key(String),
    Each,
}

/// A field pattern such as `cards[].services`.
pub type Pattern = Vec<Step>;

/// How a reference is written on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireShape {
    /// The remote id (or a list of them).
    Id,
    /// `[{alertChannelId, activated}]`.
    Subscriptions,
    /// `[{id}]`.
    IdObjects,
}

/// A field that names another resource.
#[derive(Debug, Clone, PartialEq)]
pub struct RefField {
    /// Where the field's parent object is.
    pub parent: Pattern,
    /// The field name in files.
    pub name: String,
    /// The field name in the API.
    pub wire_name: String,
    pub shape: WireShape,
    pub target: Kind,
    pub many: bool,
    /// May also name an object that exists only remotely.
    pub soft: bool,
}

/// The facts of one kind (and one variant, for tagged kinds).
#[derive(Debug, Default, Clone)]
pub struct Facts {
    pub refs: Vec<RefField>,
    pub sensitive: Vec<Pattern>,
    /// Sensitive when a sibling boolean (e.g. `secret`) is true: (field, sibling).
    pub sensitive_if: Vec<(Pattern, String)>,
    /// Sensitive when a sibling string names a credential (a header's
    /// `key`: `sensitive::is_credential_name`): (field, sibling).
    pub sensitive_named: Vec<(Pattern, String)>,
    pub sets: Vec<Pattern>,
    pub replace: Vec<Pattern>,
    pub meta: Vec<Pattern>,
    pub scripts: Vec<Pattern>,
    /// Fields that identify an object of a kind without ownership tags.
    pub natural_key: Vec<Pattern>,
    /// Fields the service keeps unique per account (natural keys included).
    pub unique: Vec<Pattern>,
    /// Every field of the kind (variant), at every depth: what the model
    /// knows, as opposed to what a service adds of its own.
    pub fields: Vec<Pattern>,
}

/// Every kind's facts, and every variant's of a tagged kind (its own
/// facts under "").
static ALL_FACTS: LazyLock<Vec<(Kind, String, Facts)>> = LazyLock::new(|| {
    let schemas = schemas();
    let mut all = Vec::new();
    for &kind in Kind::ALL {
        let variants = std::iter::once(String::new()).chain(variants(schemas, kind));
        for variant in variants {
            let mut facts = Facts::default();
            collect(schemas, schemas.variant(kind, &variant), &Vec::new(), &mut facts, 0);
            all.push((kind, variant, facts));
        }
    }
    all
});

/// The top-level fields of `kind`'s objects, in the API's form, that can
/// hold a reference (in any variant), and the variant's tag: all a reader
/// of an object's references needs of it.
pub fn reference_roots(kind: Kind) -> &'static [&'static str] {
    static ROOTS: LazyLock<Vec<(Kind, Vec<&'static str>)>> = LazyLock::new(|| {
        Kind::ALL
            .iter()
            .map(|&kind| {
                let mut roots: Vec<&'static str> = variant_tag(kind).into_iter().collect();
                let refs = ALL_FACTS
                    .iter()
                    .filter(|(k, _, _)| *k == kind)
                    .flat_map(|(_, _, f)| &f.refs);
                for field in refs {
                    let root = match field.parent.first() {
                        Some(Step::Key(key)) => key.as_str(),
                        _ => field.wire_name.as_str(),
                    };
                    if !roots.contains(&root) {
                        roots.push(root);
                    }
                }
                (kind, roots)
            })
            .collect()
    });
    ROOTS
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(&[], |(_, roots)| roots.as_slice())
}

/// The facts of `kind` for the variant `value` is (by its `checkType` or `type`).
/// Every kind's and variant's facts are read once, up front: this is asked
/// several times per resource in a plan, from every thread.
pub fn facts(kind: Kind, value: &Value) -> &'static Facts {
    facts_in(&crate::tree::Json, kind, value)
}

/// [`facts`] of a value in any form.
pub fn facts_in<T: Tree>(form: &T, kind: Kind, value: &T::Node) -> &'static Facts {
    let variant = variant_tag(kind)
        .and_then(|tag| form.as_str(form.get(value, tag)?))
        .unwrap_or_default();
    let known = |wanted: &str| ALL_FACTS.iter().find(|(k, v, _)| *k == kind && v == wanted);
    // An unknown variant has the kind's facts, as the schema of a variant it does not name.
    known(variant)
        .or_else(|| known(""))
        .map(|(_, _, facts)| facts)
        .unwrap_or_else(|| {
            static NONE: LazyLock<Facts> = LazyLock::new(Facts::default);
            &NONE
        })
}

/// The variants of a tagged kind, as its schema's branches name them.
fn variants(schemas: &Schemas, kind: Kind) -> Vec<String> {
    let Some(tag) = variant_tag(kind) else {
        return Vec::new();
    };
    let schema = schemas.resolve(schemas.kind(kind));
    schema
        .get("oneOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|branch| schemas.resolve(branch)["properties"][tag]["const"].as_str())
        .map(str::to_owned)
        .collect()
}

/// The discriminator value of a tagged kind, or "" for the others.
pub fn variant_of(kind: Kind, value: &Value) -> String {
    let Some(tag) = variant_tag(kind) else {
        return String::new();
    };
    value.get(tag).and_then(Value::as_str).unwrap_or_default().to_owned()
}

/// The field naming the variant of a tagged kind.
pub fn variant_tag(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::Check => Some("checkType"),
        Kind::AlertChannel => Some("type"),
        _ => None,
    }
}

fn collect(schemas: &Schemas, schema: &Value, at: &Pattern, facts: &mut Facts, depth: usize) {
    if depth > 16 {
        return;
    }
    let schema = schemas.resolve(schema);
    for key in ["anyOf", "oneOf"] {
        for alternative in schema.get(key).and_then(Value::as_array).into_iter().flatten() {
            if alternative.get("x-script").is_none() {
                collect(schemas, alternative, at, facts, depth + 1);
            }
        }
    }
    if let Some(items) = schema.get("items") {
        let mut each = at.clone();
        each.push(Step::Each);
        collect(schemas, items, &each, facts, depth + 1);
    }
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, property) in properties {
        let mut path = at.clone();
        path.push(Step::Key(name.clone()));
        let flag = |key: &str| property.get(key).and_then(Value::as_bool).unwrap_or(false);
        if !facts.fields.contains(&path) {
            facts.fields.push(path.clone());
        }
        if let Some(target) = property
            .get("x-ref")
            .and_then(Value::as_str)
            .and_then(Kind::from_section)
        {
            let shape = match property.get("x-wire-shape").and_then(Value::as_str) {
                Some("subscriptions") => WireShape::Subscriptions,
                Some("id-objects") => WireShape::IdObjects,
                _ => WireShape::Id,
            };
            let many = type_includes(property, "array");
            facts.refs.push(RefField {
                parent: at.clone(),
                name: name.clone(),
                wire_name: property
                    .get("x-wire")
                    .and_then(Value::as_str)
                    .unwrap_or(name)
                    .to_owned(),
                shape,
                target,
                many,
                soft: flag("x-ref-soft"),
            });
        }
        if flag("x-sensitive") {
            facts.sensitive.push(path.clone());
        }
        if let Some(sibling) = property.get("x-sensitive-if").and_then(Value::as_str) {
            facts.sensitive_if.push((path.clone(), sibling.to_owned()));
        }
        if let Some(sibling) = property.get("x-sensitive-if-named").and_then(Value::as_str) {
            facts.sensitive_named.push((path.clone(), sibling.to_owned()));
        }
        if flag("x-set") {
            facts.sets.push(path.clone());
        }
        if flag("x-replace") {
            facts.replace.push(path.clone());
        }
        if flag("x-natural-key") {
            facts.natural_key.push(path.clone());
            facts.unique.push(path.clone());
        }
        if flag("x-unique") {
            facts.unique.push(path.clone());
        }
        if flag("x-meta") {
            facts.meta.push(path.clone());
        }
        let is_script = |s: &Value| schemas.resolve(s).get("x-script").is_some();
        let alternatives = property.get("anyOf").and_then(Value::as_array).into_iter().flatten();
        if is_script(property) || alternatives.clone().any(is_script) {
            facts.scripts.push(path.clone());
        }
        collect(schemas, property, &path, facts, depth + 1);
    }
}

fn type_includes(schema: &Value, name: &str) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == name,
        Some(Value::Array(ts)) => ts.iter().any(|t| t == name),
        _ => false,
    }
}

/// Every concrete path in `value` that `pattern` matches.
pub fn expand(pattern: &[Step], value: &Value) -> Vec<FieldPath> {
    expand_in(&crate::tree::Json, pattern, value)
}

/// [`expand`] in a value of any form.
pub fn expand_in<T: Tree>(form: &T, pattern: &[Step], value: &T::Node) -> Vec<FieldPath> {
    let mut found = Vec::new();
    expand_into(form, pattern, value, FieldPath::root(), &mut found);
    found
}

fn expand_into<T: Tree>(form: &T, pattern: &[Step], value: &T::Node, at: FieldPath, found: &mut Vec<FieldPath>) {
    match pattern.split_first() {
        None => found.push(at),
        Some((Step::Key(key), rest)) => {
            if let Some(child) = form.get(value, key) {
                expand_into(form, rest, child, at.key(key), found);
            }
        }
        Some((Step::Each, rest)) => {
            for i in 0..form.items_len(value).unwrap_or(0) {
                if let Some(item) = form.item(value, i) {
                    expand_into(form, rest, item, at.index(i), found);
                }
            }
        }
    }
}

/// Does the concrete `path` match `pattern`?
pub fn matches(pattern: &Pattern, path: &FieldPath) -> bool {
    use crate::Segment;
    pattern.len() == path.segments().len()
        && pattern
            .iter()
            .zip(path.segments())
            .all(|(step, segment)| match (step, segment) {
                (Step::Key(k), Segment::Key(s)) => k == s,
                (Step::Each, Segment::Index(_)) => true,
                _ => false,
            })
}

/// The kind a list field of `kind` references, when it is a list of
/// references (`alertChannels` of a check: alert channels).
pub fn reference_target(kind: Kind, path: &str) -> Option<Kind> {
    let path = FieldPath::parse(path);
    facts(kind, &Value::Null)
        .refs
        .iter()
        .filter(|r| r.many)
        .find(|r| {
            let mut pattern = r.parent.clone();
            pattern.push(Step::Key(r.name.clone()));
            matches(&pattern, &path)
        })
        .map(|r| r.target)
}

/// The natural key of an object (file or API form) of a kind identified by
/// one: the kind's variant tag, if any, and the key fields' values.
pub fn natural_key(kind: Kind, value: &Value) -> Option<String> {
    let facts = facts(kind, value);
    let mut parts: Vec<String> = Vec::new();
    let variant = variant_of(kind, value);
    if !variant.is_empty() {
        parts.push(variant);
    }
    for pattern in &facts.natural_key {
        for current in expand(pattern, value).iter().filter_map(|path| path.get(value)) {
            parts.push(current.as_str().map_or_else(|| current.to_string(), str::to_owned));
        }
    }
    (parts.len() > usize::from(!variant_of(kind, value).is_empty())).then(|| parts.join(":"))
}

/// The values of a value's unique fields, as (field, value) pairs.
pub fn unique_values(kind: Kind, value: &Value) -> Vec<(String, Value)> {
    let facts = facts(kind, value);
    let mut found = Vec::new();
    for pattern in &facts.unique {
        for path in expand(pattern, value) {
            if let Some(current) = path.get(value).filter(|v| !v.is_null()) {
                found.push((path.to_string(), current.clone()));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A body's references read from its reference roots alone are the
    /// references of the whole body, in every variant that has some.
    #[test]
    fn reference_roots_hold_every_reference() {
        let bodies = [
            (
                Kind::Check,
                json!({
                    "checkType": "API", "name": "a", "groupId": 4, "privateLocations": ["office"],
                    "setupSnippetId": 9, "tearDownSnippetId": 10, "tags": ["x"],
                    "alertChannelSubscriptions": [{ "alertChannelId": 7, "activated": true }],
                    "request": { "method": "GET", "url": "https://example.com" },
                }),
            ),
            (
                Kind::Check,
                json!({ "checkType": "BROWSER", "groupId": 4, "privateLocations": ["lab"] }),
            ),
            (
                Kind::Group,
                json!({
                    "name": "g", "privateLocations": ["p"], "setupSnippetId": 1,
                    "alertChannelSubscriptions": [{ "alertChannelId": 2 }],
                }),
            ),
            (
                Kind::StatusPage,
                json!({ "name": "s", "cards": [{ "name": "c", "services": [{ "id": "svc" }] }] }),
            ),
        ];
        for (kind, body) in bodies {
            let text = body.to_string();
            let picked = Value::Object(crate::pick::pick(&text, reference_roots(kind)));
            let whole = crate::wire::referenced_ids(kind, &body);
            assert!(!whole.is_empty(), "{kind:?}: {body}");
            assert_eq!(crate::wire::referenced_ids(kind, &picked), whole, "{kind:?}");
        }
        assert!(reference_roots(Kind::Check).contains(&"checkType"));
        assert!(reference_roots(Kind::Variable).is_empty());
    }

    #[test]
    fn natural_keys() {
        let email = json!({"type": "EMAIL", "config": {"address": "a@b.c"}});
        assert_eq!(natural_key(Kind::AlertChannel, &email).as_deref(), Some("EMAIL:a@b.c"));
        assert_eq!(
            natural_key(Kind::Snippet, &json!({"name": "Login"})).as_deref(),
            Some("Login")
        );
        assert_eq!(
            natural_key(Kind::PrivateLocation, &json!({"slugName": "office"})).as_deref(),
            Some("office")
        );
        assert_eq!(
            natural_key(Kind::Check, &json!({"checkType": "API", "name": "x"})),
            None
        );
    }

    #[test]
    fn check_facts_come_from_the_types() {
        let facts = facts(Kind::Check, &json!({"checkType": "API"}));
        let names: Vec<(&str, &str)> = facts
            .refs
            .iter()
            .map(|r| (r.name.as_str(), r.wire_name.as_str()))
            .collect();
        for expected in [
            ("group", "groupId"),
            ("alertChannels", "alertChannelSubscriptions"),
            ("setupSnippet", "setupSnippetId"),
            ("service", "serviceId"),
        ] {
            assert!(names.contains(&expected), "{expected:?} in {names:?}");
        }
        assert!(facts.sets.contains(&vec![Step::Key("tags".into())]));
        assert!(facts.meta.contains(&vec![Step::Key("preventDestroy".into())]));
        assert!(facts.sensitive.contains(&vec![
            Step::Key("request".into()),
            Step::Key("basicAuth".into()),
            Step::Key("password".into())
        ]));
        assert!(facts.scripts.contains(&vec![Step::Key("localSetupScript".into())]));
    }

    #[test]
    fn nested_references_have_patterns() {
        let facts = facts(Kind::StatusPage, &json!({}));
        let card = facts.refs.iter().find(|r| r.name == "services").unwrap();
        assert_eq!(card.parent, vec![Step::Key("cards".into()), Step::Each]);
        assert_eq!(card.shape, WireShape::IdObjects);
        let value = json!({"cards": [{"services": ["a"]}, {"services": []}]});
        assert_eq!(expand(&[Step::Key("cards".into()), Step::Each], &value).len(), 2);
    }

    #[test]
    fn variable_value_is_sensitive_if_secret() {
        let facts = facts(Kind::Variable, &json!({}));
        assert_eq!(
            facts.sensitive_if,
            vec![(vec![Step::Key("value".into())], "secret".to_owned())]
        );
        assert!(facts.replace.contains(&vec![Step::Key("secret".into())]));
    }
}
