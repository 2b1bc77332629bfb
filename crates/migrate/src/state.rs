//! `terraform show -json`: which remote object each resource instance is
//! (its `id`), its key (`for_each` key or `count` index) and the values the
//! provider recorded, with the paths it marked sensitive.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::MigrateError;

/// One instance of a resource in the state.
#[derive(Debug, Clone)]
pub struct Instance {
    /// The `for_each` key or the `count` index as text; `None` for a
    /// resource that is not repeated.
    pub key: Option<String>,
    /// The provider's id of the remote object.
    pub id: String,
    /// The attributes as the provider recorded them (blocks as lists).
    pub values: Value,
    /// `sensitive_values`: the same shape, `true` where a value is sensitive.
    pub sensitive: Value,
}

/// The state's instances by `(module path, type, name)`; the module path is
/// `module.a.module.b` (empty for the root module).
#[derive(Debug, Default)]
pub struct TfState {
    pub instances: BTreeMap<(String, String, String), Vec<Instance>>,
    /// Instances in modules called with `count` / `for_each`, or of other
    /// providers' resources: listed, not adopted.
    pub others: Vec<String>,
}

impl TfState {
    pub fn parse(text: &str, file: &str) -> Result<TfState, MigrateError> {
        let document: Value = serde_json::from_str(text).map_err(|e| MigrateError::State {
            file: file.to_owned(),
            message: format!("line {}: {e}", e.line()),
        })?;
        if document.get("format_version").is_none() {
            return Err(MigrateError::State {
                file: file.to_owned(),
                message: "not the output of `terraform show -json` (no `format_version`)".into(),
            });
        }
        let mut state = TfState::default();
        if let Some(root) = document.pointer("/values/root_module") {
            state.read_module(root, "");
        }
        Ok(state)
    }

    fn read_module(&mut self, module: &Value, path: &str) {
        for resource in module["resources"].as_array().into_iter().flatten() {
            let address = resource["address"].as_str().unwrap_or_default();
            if resource["mode"].as_str() != Some("managed") {
                continue;
            }
            let kind = resource["type"].as_str().unwrap_or_default();
            let name = resource["name"].as_str().unwrap_or_default();
            if !kind.starts_with("checkly_") || path.contains('[') {
                self.others.push(address.to_owned());
                continue;
            }
            let key = match &resource["index"] {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            };
            let values = resource["values"].clone();
            let id = match &values["id"] {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => String::new(),
            };
            self.instances
                .entry((path.to_owned(), kind.to_owned(), name.to_owned()))
                .or_default()
                .push(Instance {
                    key,
                    id,
                    values,
                    sensitive: resource["sensitive_values"].clone(),
                });
        }
        for child in module["child_modules"].as_array().into_iter().flatten() {
            let address = child["address"].as_str().unwrap_or_default().to_owned();
            self.read_module(child, &address);
        }
    }

    pub fn get(&self, module: &str, kind: &str, name: &str) -> &[Instance] {
        self.instances
            .get(&(module.to_owned(), kind.to_owned(), name.to_owned()))
            .map_or(&[], Vec::as_slice)
    }
}

/// Whether `sensitive_values` marks the attribute path `path` (keys and
/// list indexes) or a value above it.
pub fn marked_sensitive(sensitive: &Value, path: &[String]) -> bool {
    let mut at = sensitive;
    for step in path {
        if at == &Value::Bool(true) {
            return true;
        }
        at = match at {
            Value::Object(map) => match map.get(step) {
                Some(v) => v,
                None => return false,
            },
            Value::Array(items) => match step.parse::<usize>().ok().and_then(|i| items.get(i)) {
                Some(v) => v,
                None => return false,
            },
            _ => return false,
        };
    }
    contains_true(at)
}

fn contains_true(value: &Value) -> bool {
    match value {
        Value::Bool(b) => *b,
        Value::Array(items) => items.iter().any(contains_true),
        Value::Object(map) => map.values().any(contains_true),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_instances_of_root_and_child_modules() {
        let text = r#"{"format_version":"1.0","values":{"root_module":{"resources":[
            {"address":"checkly_check.api[\"users\"]","mode":"managed","type":"checkly_check","name":"api","index":"users","values":{"id":"c-1","name":"A"},"sensitive_values":{}},
            {"address":"data.checkly_static_ips.all","mode":"data","type":"checkly_static_ips","name":"all","values":{}}],
            "child_modules":[{"address":"module.pay","resources":[
            {"address":"module.pay.checkly_check_group.g","mode":"managed","type":"checkly_check_group","name":"g","values":{"id":42},"sensitive_values":{"environment_variable":[{"value":true}]}}]}]}}}"#;
        let state = TfState::parse(text, "show.json").unwrap();
        let api = state.get("", "checkly_check", "api");
        assert_eq!(api[0].key.as_deref(), Some("users"));
        assert_eq!(api[0].id, "c-1");
        let group = &state.get("module.pay", "checkly_check_group", "g")[0];
        assert_eq!(group.id, "42");
        assert!(marked_sensitive(
            &group.sensitive,
            &["environment_variable".into(), "0".into(), "value".into()]
        ));
        assert!(!marked_sensitive(&group.sensitive, &["name".into()]));
    }

    #[test]
    fn other_json_is_refused_with_the_file() {
        let error = TfState::parse("{\"version\": 4}", "terraform.tfstate")
            .unwrap_err()
            .to_string();
        assert!(error.contains("terraform.tfstate"), "{error}");
        assert!(error.contains("terraform show -json"), "{error}");
    }
}
