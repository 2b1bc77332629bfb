//! The reconciler's log on standard error: `text` (a line a person reads)
//! or `json` (one object a line, for log shippers: `--log-format json`).

use serde_json::{Map, Value};

/// One line of `--log-format json` (published: `monform schema --output
/// reconcile`): when, how bad, what, and the fields of that message.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "ReconcileLogLine")]
pub struct LogLine {
    /// RFC 3339, UTC.
    pub time: String,
    pub level: Level,
    /// What happened, in words (the text format's line).
    pub message: String,
    /// The message's own fields (`error`, `address`, `addresses`, `project`...).
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Info,
    Warn,
    Error,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

#[derive(Debug, Clone, Copy)]
pub struct Log {
    pub format: LogFormat,
}

impl Log {
    pub fn info(&self, message: &str, fields: Value) {
        self.line(Level::Info, message, fields);
    }

    pub fn warn(&self, message: &str, fields: Value) {
        self.line(Level::Warn, message, fields);
    }

    pub fn error(&self, message: &str, fields: Value) {
        self.line(Level::Error, message, fields);
    }

    fn line(&self, level: Level, message: &str, fields: Value) {
        match self.format {
            LogFormat::Json => {
                let line = LogLine {
                    time: crate::report::now(),
                    level,
                    message: message.to_owned(),
                    fields: match fields {
                        Value::Object(fields) => fields,
                        _ => Map::new(),
                    },
                };
                eprintln!("{}", serde_json::to_string(&line).unwrap_or_default());
            }
            LogFormat::Text => {
                let extra = match fields {
                    Value::Object(fields) if !fields.is_empty() => {
                        let parts: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={}", plain(v))).collect();
                        format!(" ({})", parts.join(", "))
                    }
                    _ => String::new(),
                };
                let prefix = match level {
                    Level::Info => "",
                    Level::Warn => "warn: ",
                    Level::Error => "error: ",
                };
                eprintln!("{prefix}{message}{extra}");
            }
        }
    }
}

fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
