//! How a diagnostic may quote a value of a resource: the one wording every
//! validation message goes through (the shape check, the rules, the
//! loader's references), so that a sensitive value is named by where it
//! came from (`${env:GITHUB_TOKEN}`), never shown, and no did-you-mean is
//! built from it (issue 43: a pull request's `frequency: ${env:TOKEN}`
//! printed the token in every diagnostic format).
//!
//! A value is sensitive by the rule plans mask by (`sensitive_paths`: a
//! secret variable's value, a credential header...) or because the loader
//! says so (text substituted from a non-public `${env:}`).

use std::sync::OnceLock;

use serde_json::Value;

use super::{mask_url, sensitive_paths};
use crate::{FieldPath, Kind};

/// What a diagnostic names in place of a sensitive value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hidden {
    /// Text substituted from these environment variables (their names).
    Env(Vec<String>),
    /// A secret by the model's rule, or of unknown origin.
    Secret,
}

impl Hidden {
    /// The stand-in for the value: "the value of `${env:GITHUB_TOKEN}`".
    pub fn describe(&self) -> String {
        match self {
            Hidden::Env(names) if !names.is_empty() => {
                let names: Vec<String> = names.iter().map(|n| format!("`${{env:{n}}}`")).collect();
                match names.as_slice() {
                    [one] => format!("the value of {one}"),
                    [init @ .., last] => format!("the value made of {} and {last}", init.join(", ")),
                    [] => unreachable!("not empty"),
                }
            }
            _ => "the sensitive value".to_owned(),
        }
    }
}

/// A value as a message quotes it: "`eu-west-9`", `5`, `true`; a URL with
/// its credentials masked; or, when `hidden`, only where it came from.
/// Every value a validation message words goes through here.
pub fn word(value: &Value, hidden: Option<&Hidden>) -> String {
    if let Some(hidden) = hidden {
        return hidden.describe();
    }
    match value {
        Value::String(text) => format!("`{}`", mask_url(text)),
        Value::Number(_) => value.as_f64().map_or_else(|| value.to_string(), show_number),
        Value::Object(_) | Value::Array(_) => super::mask_urls(value).to_string(),
        other => other.to_string(),
    }
}

/// A number as messages show it: `6`, not `6.0`.
pub fn show_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

/// Which values of one resource are sensitive, for its diagnostics.
pub struct Wording<'a> {
    kind: Kind,
    resource: &'a Value,
    /// The loader's: fields holding text of `${env:}`, and what it read.
    substituted: &'a [(FieldPath, Hidden)],
    /// The model's sensitive paths of the resource, found when a message
    /// first needs them: most resources have nothing wrong to word.
    secrets: OnceLock<Vec<FieldPath>>,
}

impl<'a> Wording<'a> {
    pub fn new(kind: Kind, resource: &'a Value, substituted: &'a [(FieldPath, Hidden)]) -> Wording<'a> {
        Wording {
            kind,
            resource,
            substituted,
            secrets: OnceLock::new(),
        }
    }

    /// How the value at `path` is hidden, if it is: it or a field holding
    /// it is sensitive.
    pub fn hidden(&self, path: &FieldPath) -> Option<Hidden> {
        if let Some((_, hidden)) = self
            .substituted
            .iter()
            .filter(|(at, _)| path.starts_with(at))
            .max_by_key(|(at, _)| at.segments().len())
        {
            return Some(hidden.clone());
        }
        let secrets = self.secrets.get_or_init(|| sensitive_paths(self.kind, self.resource));
        secrets.iter().any(|at| path.starts_with(at)).then_some(Hidden::Secret)
    }

    /// The value at `path` as a message may quote it ([`word`]).
    pub fn value(&self, path: &FieldPath, value: &Value) -> String {
        word(value, self.hidden(path).as_ref())
    }

    /// A did-you-mean built from the value at `path`: never for a hidden
    /// one, whose likeness to a known name would tell something about it.
    pub fn suggest<'n>(&self, path: &FieldPath, given: &str, known: impl Iterator<Item = &'n str>) -> Option<&'n str> {
        if self.hidden(path).is_some() {
            return None;
        }
        crate::suggest::suggest(given, known)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hidden_values_are_named_by_their_origin() {
        let check = json!({"checkType": "API", "name": "a", "frequency": "ghp_1",
            "request": {"url": "https://x?token=t0k", "headers": [{"key": "Authorization", "value": "Bearer hunter2"}]}});
        let substituted = [(FieldPath::parse("frequency"), Hidden::Env(vec!["GITHUB_TOKEN".into()]))];
        let wording = Wording::new(Kind::Check, &check, &substituted);
        let at = |p: &str| {
            let path = FieldPath::parse(p);
            let value = path.get(&check).cloned().unwrap_or_default();
            wording.value(&path, &value)
        };
        assert_eq!(at("frequency"), "the value of `${env:GITHUB_TOKEN}`");
        assert_eq!(at("request.headers[0].value"), "the sensitive value");
        assert_eq!(at("name"), "`a`");
        assert_eq!(at("request.url"), "`https://x?token=(sensitive)`");
        assert_eq!(
            wording.suggest(&FieldPath::parse("frequency"), "ghp_1", ["ghp_2"].into_iter()),
            None
        );
        assert_eq!(
            wording.suggest(&FieldPath::parse("name"), "ghp_1", ["ghp_2"].into_iter()),
            Some("ghp_2")
        );
        assert_eq!(
            Hidden::Env(vec!["A".into(), "B".into(), "C".into()]).describe(),
            "the value made of `${env:A}`, `${env:B}` and `${env:C}`"
        );
    }

    /// Issue 43 item 2: no message of the shape check or the rules quotes a
    /// hidden value, or suggests from it; each names its origin instead.
    #[test]
    fn validation_messages_name_hidden_values_by_origin() {
        let marker = "zq-wording-marker";
        let check = json!({"checkType": "API", "name": "a", "frequency": marker, "locations": [marker],
            "degradedResponseTime": 5, "request": {"method": marker, "url": "https://x"},
            "lifecycle": {"ignoreChanges": [marker]}});
        let substituted: Vec<(FieldPath, Hidden)> = [
            "frequency",
            "locations[0]",
            "request.method",
            "lifecycle.ignoreChanges[0]",
        ]
        .iter()
        .map(|p| (FieldPath::parse(p), Hidden::Env(vec!["MARKER_VAR".into()])))
        .collect();
        let wording = Wording::new(Kind::Check, &check, &substituted);
        let mut violations = crate::check_shape_worded(Kind::Check, &check, &wording).violations;
        violations.extend(crate::rules::check_worded(Kind::Check, &check, &|_| true, &wording));
        assert_eq!(violations.len(), 4, "{violations:?}");
        for violation in &violations {
            let text = format!("{} {:?}", violation.message, violation.help);
            assert!(!text.contains(marker), "{text}");
            assert!(!text.contains("did you mean"), "{text}");
            assert!(text.contains("`${env:MARKER_VAR}`"), "{text}");
        }
        let tag = json!({"checkType": marker, "name": "a"});
        let substituted = [(FieldPath::parse("checkType"), Hidden::Env(vec!["MARKER_VAR".into()]))];
        let shape = crate::check_shape_worded(Kind::Check, &tag, &Wording::new(Kind::Check, &tag, &substituted));
        let text = format!("{:?}", shape.violations);
        assert!(!text.contains(marker) && text.contains("`${env:MARKER_VAR}`"), "{text}");
        // Unmarked, the same values are quoted as they are.
        let plain = crate::check_shape(Kind::Check, &check);
        assert!(format!("{:?}", plain.violations).contains(marker));
    }
}
