//! What a tool answers: a JSON object, as `structuredContent` and as its
//! text, or a refusal (`isError`) with its reason and diagnostics; every
//! answer passes [`Scrub`] last, so no credential the server holds can
//! reach the agent even through an error message.

use monform_config::source::Sources;
use monform_config::{Diagnostic, Severity};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

/// A tool's answer before it is scrubbed and sent.
pub enum Reply {
    Done(Value),
    /// The tool ran and said no (a refusal, invalid files): `reason` in
    /// words, then whatever helps (`diagnostics`, `hint`).
    Refused {
        reason: String,
        details: Value,
    },
}

impl Reply {
    pub fn refused(reason: impl Into<String>) -> Reply {
        Reply::Refused {
            reason: reason.into(),
            details: json!({}),
        }
    }

    pub fn refused_with(reason: impl Into<String>, details: Value) -> Reply {
        Reply::Refused {
            reason: reason.into(),
            details,
        }
    }

    /// The reason of a refusal (for the call log), `None` when done.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Reply::Done(_) => None,
            Reply::Refused { reason, .. } => Some(reason),
        }
    }

    pub fn into_result(self, scrub: &Scrub) -> CallToolResult {
        let (value, error) = match self {
            Reply::Done(value) => (value, false),
            Reply::Refused { reason, details } => {
                let mut value = json!({"refused": true, "reason": reason});
                if let (Some(object), Value::Object(details)) = (value.as_object_mut(), details) {
                    object.extend(details);
                }
                (value, true)
            }
        };
        let text = scrub.text(&serde_json::to_string_pretty(&value).unwrap_or_default());
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text.clone()));
        let mut result = match error {
            true => CallToolResult::error(vec![ContentBlock::text(text)]),
            false => CallToolResult::success(vec![ContentBlock::text(text)]),
        };
        result.structured_content = Some(value);
        result
    }
}

/// The credentials the server holds (the API key, the state's URL and its
/// password), replaced wherever they would appear in an answer.
#[derive(Clone, Default)]
pub struct Scrub {
    secrets: Vec<String>,
}

impl Scrub {
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Scrub {
        let mut secrets: Vec<String> = secrets.into_iter().filter(|s| s.len() >= 4).collect();
        // Longest first: a URL before the password inside it.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        Scrub { secrets }
    }

    pub fn text(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for secret in &self.secrets {
            // As JSON escapes it too: a secret with a quote or backslash.
            let escaped = serde_json::to_string(secret).unwrap_or_default();
            let escaped = escaped.trim_matches('"');
            for form in [secret.as_str(), escaped] {
                if text.contains(form) {
                    text = text.replace(form, "(secret)");
                }
            }
        }
        text
    }
}

/// A diagnostic as the tools give it: file, line, column, code, message
/// and the fix (`help`), as `validate --format json` names them.
pub fn diagnostic(d: &Diagnostic, sources: &Sources) -> Value {
    let mut value = json!({
        "severity": match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        },
        "code": d.code,
        "message": d.message,
    });
    if let Some(span) = d.span
        && (span.file as usize) < sources.len()
    {
        let file = sources.get(span.file);
        let (line, column) = file.line_col(span.start);
        value["file"] = json!(file.name);
        value["line"] = json!(line);
        value["column"] = json!(column);
    }
    if !d.label.is_empty() {
        value["label"] = json!(d.label);
    }
    if let Some(help) = &d.help {
        value["fix"] = json!(help);
    }
    value
}

/// Where a span points: `file:line`.
pub fn place(span: monform_config::source::Span, sources: &Sources) -> Option<(String, usize)> {
    ((span.file as usize) < sources.len()).then(|| {
        let file = sources.get(span.file);
        (file.name.clone(), file.line_col(span.start).0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_scrubbed_in_plain_and_json_escaped_text() {
        let scrub = Scrub::new(["key-\"1234".to_owned(), "ab".to_owned()]);
        let text = serde_json::to_string(&json!({"m": "bad key key-\"1234 here"})).unwrap();
        let scrubbed = scrub.text(&text);
        assert!(!scrubbed.contains("1234"), "{scrubbed}");
        assert!(scrubbed.contains("(secret)"));
        // Too short to be a credential: left alone.
        assert_eq!(scrub.text("ab"), "ab");
    }
}
