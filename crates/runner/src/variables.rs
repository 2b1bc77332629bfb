//! The variables a run sees and the secrets masked in what it reports.

use std::collections::HashMap;

use serde_json::Value;

use crate::outcome::{Outcome, from_record, to_record};

/// Variables by key, later insertions winning, and the values of the
/// secret ones (masked as `*****` in outcomes).
#[derive(Debug, Clone, Default)]
pub struct Variables {
    values: HashMap<String, String>,
    secrets: Vec<String>,
}

impl Variables {
    pub fn new() -> Variables {
        Variables::default()
    }

    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<String>, secret: bool) {
        let value = value.into();
        if secret && !value.is_empty() {
            self.secrets.push(value.clone());
        }
        self.values.insert(key.into(), value);
    }

    /// Adds `[{key, value, secret}]` entries (the API form of variables
    /// and of `environmentVariables`); entries without a key or value are
    /// skipped.
    pub fn extend_from_api(&mut self, entries: impl IntoIterator<Item = impl std::borrow::Borrow<Value>>) {
        for entry in entries {
            let entry = entry.borrow();
            if let (Some(key), Some(value)) = (entry["key"].as_str(), entry["value"].as_str()) {
                self.insert(key, value, entry["secret"] == true);
            }
        }
    }

    /// Account-level `variables` (API form), then the check's own
    /// `environmentVariables` (its group's applied), later ones winning.
    pub fn for_check(account: impl IntoIterator<Item = Value>, check: &Value) -> Variables {
        let mut out = Variables::new();
        out.extend_from_api(account);
        out.extend_from_api(check["environmentVariables"].as_array().into_iter().flatten());
        out
    }

    pub fn values(&self) -> &HashMap<String, String> {
        &self.values
    }

    /// `outcome` with every secret value in its strings replaced by `*****`.
    pub(crate) fn mask(&self, outcome: Outcome) -> Outcome {
        if self.secrets.is_empty() {
            return outcome;
        }
        let mut reported = to_record(&outcome);
        mask(&mut reported, &self.secrets);
        from_record(&reported).unwrap_or(outcome)
    }
}

fn mask(value: &mut Value, secrets: &[String]) {
    match value {
        Value::String(text) => {
            for secret in secrets {
                if text.contains(secret.as_str()) {
                    *text = text.replace(secret.as_str(), "*****");
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| mask(v, secrets)),
        Value::Object(map) => map.values_mut().for_each(|v| mask(v, secrets)),
        _ => {}
    }
}

/// Replaces `{{KEY}}` (spaces inside the braces allowed) with the variable's
/// value in every string of `value`; unknown names are left as they are.
pub fn substitute(value: &mut Value, variables: &HashMap<String, String>) {
    match value {
        Value::String(text) if text.contains("{{") => {
            let mut out = String::with_capacity(text.len());
            let mut rest = text.as_str();
            while let Some(open) = rest.find("{{") {
                let Some(close) = rest[open..].find("}}") else { break };
                let name = rest[open + 2..open + close].trim();
                out.push_str(&rest[..open]);
                match variables.get(name) {
                    Some(v) => out.push_str(v),
                    None => out.push_str(&rest[open..open + close + 2]),
                }
                rest = &rest[open + close + 2..];
            }
            out.push_str(rest);
            *text = out;
        }
        Value::Array(items) => items.iter_mut().for_each(|v| substitute(v, variables)),
        Value::Object(map) => map.values_mut().for_each(|v| substitute(v, variables)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::errored;
    use serde_json::json;

    #[test]
    fn variables_are_substituted() {
        let variables = HashMap::from([("HOST".to_owned(), "127.0.0.1".to_owned())]);
        let mut request = json!({"url": "http://{{HOST}}/{{ HOST }}/{{NOPE}}", "headers": [{"value": "{{HOST}}"}]});
        substitute(&mut request, &variables);
        assert_eq!(request["url"], "http://127.0.0.1/127.0.0.1/{{NOPE}}");
        assert_eq!(request["headers"][0]["value"], "127.0.0.1");
    }

    #[test]
    fn check_variables_win_and_secrets_are_masked() {
        let check = json!({"environmentVariables": [{"key": "TOKEN", "value": "s3cret", "secret": true}]});
        let variables = Variables::for_check([json!({"key": "TOKEN", "value": "open"})], &check);
        assert_eq!(variables.values()["TOKEN"], "s3cret");
        let masked = variables.mask(errored("sent s3cret to the target"));
        assert_eq!(masked.error.as_deref(), Some("sent ***** to the target"));
    }
}
