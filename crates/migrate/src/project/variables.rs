//! `checkly_environment_variable` resources as monform variables.

use std::collections::BTreeMap;

use monform_model::Kind;
use serde_json::{Map, Value};

use super::{Assembled, address, fall_back, held_fingerprints, lifecycle, output_file, secrets, unmapped_note};
use crate::convert::Definition;
use crate::expr::Repeat;
use crate::mapping::{Refs, map_resource};
use crate::state::Instance;
use crate::{Import, Note};

/// `checkly_environment_variable`: monform's variables take no `forEach`
/// (the logical id is the key), so a repeated one is written per instance
/// from the state. `raw` are `instances` with the state's secrets (for
/// their fingerprints only).
pub(super) fn variables(
    definition: &Definition,
    instances: &[Instance],
    raw: &[Instance],
    refs: &Refs,
    out: &mut Assembled,
) {
    let output = output_file(&definition.source_file);
    // (key, value, the index of its instance)
    let mut entries: Vec<(String, Map<String, Value>, Option<usize>)> = Vec::new();
    let key_of = |values: &Value| values.get("key").and_then(Value::as_str).map(str::to_owned);
    if definition.repeat == Repeat::None {
        let key = definition
            .body
            .get("key")
            .and_then(Value::as_str)
            .filter(|k| !k.contains("${"))
            .map(str::to_owned)
            .or_else(|| instances.first().and_then(|i| key_of(&i.values)));
        let Some(key) = key else {
            out.notes.push(Note::new(
                definition.place.clone(),
                format!("{}: its key is not known: not migrated", address(definition)),
            ));
            return;
        };
        let mapped = map_resource(&definition.tf_type, &definition.body, refs);
        for unmapped in &mapped.unmapped {
            out.notes.push(unmapped_note(definition, unmapped));
        }
        let mut body = definition.body.clone();
        let mut for_each = None;
        let mut notes = Vec::new();
        fall_back(definition, instances, &mut body, &mut for_each, &mut notes);
        out.notes.extend(notes);
        entries.push((
            key,
            map_resource(&definition.tf_type, &body, refs).value,
            (!instances.is_empty()).then_some(0),
        ));
    } else {
        if instances.is_empty() {
            out.notes.push(Note::new(
                definition.place.clone(),
                format!("{}: monform's variables take no forEach and the state has no instances: not migrated; write each variable by hand", address(definition)),
            ));
            return;
        }
        out.notes.push(Note::new(
            definition.place.clone(),
            format!("{}: monform's variables take no forEach (the key is the logical id): written once per instance, from the state", address(definition)),
        ));
        for (n, instance) in instances.iter().enumerate() {
            let Some(values) = instance.values.as_object() else {
                continue;
            };
            let Some(key) = key_of(&instance.values) else { continue };
            entries.push((key, map_resource(&definition.tf_type, values, refs).value, Some(n)));
        }
    }
    let object_value = |object: &Map<String, Value>| Value::Object(object.clone());
    for (key, value, instance) in entries {
        if !monform_model::is_valid_logical_id(&key) {
            out.notes.push(Note::new(
                definition.place.clone(),
                format!("variable `{key}`: not a valid logical id, and monform's variable key is its logical id: not migrated"),
            ));
            continue;
        }
        let shown = Definition {
            id: key.clone(),
            tf_type: definition.tf_type.clone(),
            tf_name: definition.tf_name.clone(),
            module: definition.module.clone(),
            kind: definition.kind,
            place: definition.place.clone(),
            source_file: definition.source_file.clone(),
            repeat: Repeat::None,
            for_each: None,
            body: Map::new(),
            lines: BTreeMap::new(),
            failed: Vec::new(),
            prevent_destroy: definition.prevent_destroy,
            ignore_changes: Vec::new(),
        };
        let mut value = Value::Object(value);
        // A secret variable's value: the model's rule makes it sensitive by its `secret` flag.
        secrets(&shown, &mut value, out);
        let Value::Object(mut object) = value else { continue };
        if definition.prevent_destroy {
            object.insert("preventDestroy".into(), Value::Bool(true));
        }
        lifecycle(definition, &mut object);
        if let Some(n) = instance
            && instances.get(n).is_some_and(|i| !i.id.is_empty())
        {
            let held = raw
                .get(n)
                .and_then(|i| i.values.as_object())
                .map(|values| Value::Object(map_resource(&definition.tf_type, values, refs).value))
                .unwrap_or_default();
            out.imports.push(Import {
                to: format!("variables.{key}"),
                id: key.clone(),
                secret_fingerprints: held_fingerprints(Kind::Variable, &object_value(&object), &held),
            });
        }
        out.definitions += 1;
        out.files
            .entry(output.clone())
            .or_default()
            .entry(Kind::Variable)
            .or_default()
            .insert(key, Value::Object(object));
    }
}
